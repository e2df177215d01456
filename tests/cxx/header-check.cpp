// The public headers from C++: acl/acl.h, acl/acl_rt_api.h and aclsim/aclsim.h
// compile as C++11, and CANN's C++ template overloads of the six symbol
// functions (acl/acl_rt_api.h) work when given the variable itself.
//
// Built as the ctest test header_cxx_check, linked with libascendcl only (no
// cmocka, no test helpers): failures are counted and make main() return 1.
//
// Two kinds of device variables: ordinary C++ globals registered by hand with
// aclsimRegisterVar, and ones defined with the macros (ACLSIM_DEVICE_VAR,
// ACLSIM_DEVICE_VAR_EXTERN, ACLSIM_DEV and ACLSIM_KERNEL_REGISTER compile and
// work as C++; only ACLSIM_DEVICE_VAR_STATIC is C only).
#include "acl/acl.h"
#include "acl/acl_dump.h"
#include "acl/acl_platform.h"
#include "acl/acl_prof.h"
#include "acl/acl_rt_allocator.h"
#include "acl/acl_rt_memory_soma.h"
#include "acl/acl_rt_api.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "aclsim/aclsim.h"
#include "mstx/ms_tools_ext.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int failures = 0;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                                \
        }                                                                              \
    } while (0)

#define CHECK_RC(expr, want)                                                           \
    do {                                                                               \
        aclError rc_ = (expr);                                                         \
        if (rc_ != (want)) {                                                           \
            const char *m_ = aclGetRecentErrMsg();                                     \
            std::fprintf(stderr, "%s:%d: %s returned %d, expected %d (%s)\n", __FILE__,  \
                         __LINE__, #expr, rc_, (int)(want), m_ ? m_ : "no message");    \
            ++failures;                                                                \
        }                                                                              \
    } while (0)

#define CHECK_OK(expr) CHECK_RC(expr, ACL_SUCCESS)

struct Pair {
    int a;
    double b;
};

}  // namespace

// Device variables (external linkage, as Ascend C's __gm__ globals).
int cxx_scalar = 5;
float cxx_array[8] = {1.0f, 2.0f, 3.0f};
Pair cxx_struct = {7, 1.5};

// Through the macros, in C++.
ACLSIM_DEVICE_VAR(int, cxx_macro_var, [4]) = {1, 2, 3, 4};
ACLSIM_DEVICE_VAR_EXTERN(int, cxx_macro_var, [4]);
void cxx_macro_kernel(int k) { ACLSIM_DEV(cxx_macro_var)[aclsimGetBlockIdx()] += k; }
ACLSIM_KERNEL_REGISTER(cxx_macro_kernel, int);

namespace {

aclsimVar var_scalar, var_array, var_struct;

void describe(aclsimVar &v, const void *symbol, size_t size, size_t align, const char *name,
              int line)
{
    std::memset(&v, 0, sizeof v);
    v.symbol = symbol;
    v.size = size;
    v.align = align;
    v.name = name;
    v.file = __FILE__;
    v.line = line;
    v.instance[ACLSIM_HOST_SLOT] = const_cast<void *>(symbol);
}

void check_scalar()
{
    size_t size = 0;
    CHECK_OK(aclrtGetSymbolSize(cxx_scalar, &size));   // template: passes &cxx_scalar
    CHECK(size == sizeof(int));

    void *viaTemplate = nullptr, *viaC = nullptr;
    CHECK_OK(aclrtGetSymbolAddress(cxx_scalar, &viaTemplate));
    CHECK_OK(aclrtGetSymbolAddress(static_cast<const void *>(&cxx_scalar), &viaC));
    CHECK(viaTemplate != nullptr);
    CHECK(viaTemplate == viaC);
    CHECK(viaTemplate != static_cast<void *>(&cxx_scalar));   // device memory, not the global

    int v = 0;
    CHECK_OK(aclrtMemcpyFromSymbol(&v, sizeof v, cxx_scalar, sizeof v, 0,
                                   ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(v == 5);   // the initial value
    int w = 123;
    CHECK_OK(aclrtMemcpyToSymbol(cxx_scalar, &w, sizeof w, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    v = 0;
    CHECK_OK(aclrtMemcpy(&v, sizeof v, viaC, sizeof v, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(v == 123);
    CHECK(cxx_scalar == 5);   // the host object is not the device instance

    // The template takes the address of whatever it is given: a pointer
    // variable is not the device variable (CANN behaves the same way).
    int *pointer = &cxx_scalar;
    CHECK_RC(aclrtGetSymbolSize(pointer, &size), ACL_ERROR_RT_INVALID_SYMBOL);
    CHECK(aclGetRecentErrMsg() != nullptr);
    // ... while an explicit const void * selects the C function.
    CHECK_OK(aclrtGetSymbolSize(static_cast<const void *>(pointer), &size));
    CHECK(size == sizeof(int));
}

void check_array()
{
    size_t size = 0;
    CHECK_OK(aclrtGetSymbolSize(cxx_array, &size));
    CHECK(size == sizeof cxx_array);

    float in[8] = {10, 20, 30, 40, 50, 60, 70, 80};
    CHECK_OK(aclrtMemcpyToSymbol(cxx_array, in, sizeof in, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    float out[8] = {0};
    CHECK_OK(aclrtMemcpyFromSymbol(out, sizeof out, cxx_array, sizeof out, 0,
                                   ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(std::memcmp(in, out, sizeof in) == 0);
    // offset and count are in bytes
    float two[2] = {-1, -2};
    CHECK_OK(aclrtMemcpyToSymbol(cxx_array, two, sizeof two, 6 * sizeof(float),
                                 ACL_MEMCPY_DEFAULT));
    float tail[2] = {0, 0};
    CHECK_OK(aclrtMemcpyFromSymbol(tail, sizeof tail, cxx_array, sizeof tail, 6 * sizeof(float),
                                   ACL_MEMCPY_DEFAULT));
    CHECK(tail[0] == -1 && tail[1] == -2);
    CHECK(cxx_array[0] == 1.0f && cxx_array[6] == 0.0f);
    // the checks of the C functions apply through the templates
    CHECK_RC(aclrtMemcpyToSymbol(cxx_array, in, sizeof in, 4, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
    CHECK_RC(aclrtMemcpyFromSymbol(out, sizeof out, cxx_array, sizeof out, 0,
                                   ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
    CHECK_OK(aclrtMemcpyToSymbol(cxx_array, nullptr, 0, 0, ACL_MEMCPY_HOST_TO_DEVICE));
}

void check_struct_async()
{
    aclrtStream stream = nullptr;
    CHECK_OK(aclrtCreateStream(&stream));
    Pair *pinned = nullptr;
    CHECK_OK(aclrtMallocHost(reinterpret_cast<void **>(&pinned), 2 * sizeof(Pair)));
    if (!pinned)
        return;
    pinned[0].a = 41;
    pinned[0].b = 2.25;
    pinned[1].a = 0;
    pinned[1].b = 0;
    CHECK_OK(aclrtMemcpyToSymbolAsync(cxx_struct, &pinned[0], sizeof(Pair), 0,
                                      ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK_OK(aclrtMemcpyFromSymbolAsync(&pinned[1], sizeof(Pair), cxx_struct, sizeof(Pair), 0,
                                        ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_OK(aclrtSynchronizeStream(stream));
    CHECK(pinned[1].a == 41 && pinned[1].b == 2.25);

    // pageable host memory on the default stream
    Pair local = {0, 0};
    CHECK_OK(aclrtMemcpyFromSymbolAsync(&local, sizeof local, cxx_struct, sizeof local, 0,
                                        ACL_MEMCPY_DEFAULT, nullptr));
    CHECK_OK(aclrtSynchronizeStream(nullptr));
    CHECK(local.a == 41 && local.b == 2.25);
    CHECK(cxx_struct.a == 7);

    CHECK_OK(aclrtFreeHost(pinned));
    CHECK_OK(aclrtDestroyStream(stream));
}

void check_per_device()
{
    aclrtContext ctx0 = nullptr;
    CHECK_OK(aclrtGetCurrentContext(&ctx0));
    void *on0 = nullptr, *on1 = nullptr;
    CHECK_OK(aclrtGetSymbolAddress(cxx_array, &on0));
    CHECK_OK(aclrtSetDevice(1));
    CHECK_OK(aclrtGetSymbolAddress(cxx_array, &on1));
    CHECK(on0 != on1);
    float first = 0;
    CHECK_OK(aclrtMemcpyFromSymbol(&first, sizeof first, cxx_array, sizeof first, 0,
                                   ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(first == 1.0f);   // device 1 starts from the initializer
    CHECK_OK(aclrtResetDevice(1));
    CHECK_OK(aclrtSetCurrentContext(ctx0));
}

void check_macros()
{
    size_t size = 0;
    CHECK_OK(aclrtGetSymbolSize(cxx_macro_var, &size));
    CHECK(size == sizeof cxx_macro_var);
    aclrtFuncHandle f = nullptr;
    CHECK_OK(aclrtGetFuncBySymbol(reinterpret_cast<const void *>(&cxx_macro_kernel), &f));
    int k = 10;
    void *args[] = {&k};
    CHECK_OK(aclrtLaunchKernelWithArgsArray(f, 4, nullptr, nullptr, args));
    CHECK_OK(aclrtSynchronizeStream(nullptr));
    int got[4] = {0, 0, 0, 0};
    CHECK_OK(aclrtMemcpyFromSymbol(got, sizeof got, cxx_macro_var, sizeof got, 0,
                                   ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(got[0] == 11 && got[1] == 12 && got[2] == 13 && got[3] == 14);
    CHECK(cxx_macro_var[0] == 1);   // the host object is untouched
}

// acl_tdt.h and acl_tdt_queue.h from C++: the enum is a type of its own
// name (as in CANN's C++-only header), and a dataset round-trips.
void check_tdt()
{
    acltdtTensorType type = ACL_TENSOR_DATA_TENSOR;
    int64_t dims[1] = {2};
    int32_t data[2] = {5, 6};
    acltdtDataset *ds = acltdtCreateDataset();
    acltdtDataItem *item = acltdtCreateDataItem(type, dims, 1, ACL_INT32, data, sizeof data);
    CHECK_OK(acltdtAddDataItem(ds, item));
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "cxx", 2);
    CHECK(ch != nullptr);
    CHECK_OK(acltdtSendTensor(ch, ds, 0));
    acltdtDataset *got = acltdtCreateDataset();
    CHECK_OK(acltdtReceiveTensor(ch, got, 0));
    const int32_t *back = static_cast<const int32_t *>(acltdtGetDataAddrFromItem(acltdtGetDataItem(got, 0)));
    CHECK(back != nullptr && back[0] == 5 && back[1] == 6);
    CHECK_OK(acltdtDestroyChannel(ch));
    CHECK_OK(acltdtDestroyDataset(got));
    CHECK_OK(acltdtDestroyDataItem(item));
    CHECK_OK(acltdtDestroyDataset(ds));
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    uint32_t qid = 0;
    CHECK_OK(acltdtCreateQueue(attr, &qid));
    CHECK_OK(acltdtDestroyQueue(qid));
    CHECK_OK(acltdtDestroyQueueAttr(attr));
}

}  // namespace

int main()
{
    // acl/acl_prof.h and mstx/ms_tools_ext.h link from C++ (docs/tracing.md)
    CHECK(aclprofStr2Id("MatMul") == aclprofStr2Id("MatMul"));
    CHECK(mstxRangeStartA("off", nullptr) == MSTX_INVALID_ID);
    // acl/acl_dump.h links from C++ (docs/dump.md)
    CHECK(acldumpGetPath(DATA_DUMP) == nullptr);
    describe(var_scalar, &cxx_scalar, sizeof cxx_scalar, alignof(int), "cxx_scalar", __LINE__);
    describe(var_array, cxx_array, sizeof cxx_array, alignof(float), "cxx_array", __LINE__);
    describe(var_struct, &cxx_struct, sizeof cxx_struct, alignof(Pair), "cxx_struct", __LINE__);
    aclsimRegisterVar(&var_scalar);
    aclsimRegisterVar(&var_array);
    aclsimRegisterVar(&var_struct);

    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    CHECK_OK(aclInit(nullptr));
    CHECK_OK(aclrtSetDevice(0));
    if (failures == 0) {
        check_scalar();
        check_array();
        check_struct_async();
        check_per_device();
        check_macros();
        check_tdt();

        // unregistered: no longer a symbol
        aclsimUnregisterVar(&var_scalar);
        size_t size = 0;
        CHECK_RC(aclrtGetSymbolSize(cxx_scalar, &size), ACL_ERROR_RT_INVALID_SYMBOL);
    }
    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclFinalize());
    aclsimUnregisterVar(&var_array);
    aclsimUnregisterVar(&var_struct);

    if (failures) {
        std::fprintf(stderr, "header_cxx_check: %d check(s) failed\n", failures);
        return 1;
    }
    std::printf("header_cxx_check: all checks passed\n");
    return 0;
}
