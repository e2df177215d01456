// Loads out/fatbin/ascendc_kernels/ascendc_kernels.o (or argv[1]), as a CANN
// program loads its device binary, and runs its kernels by name.
#include <cstdio>
#include <cstdlib>
#include "acl/acl.h"

#define CHECK(x)                                                                          \
    do {                                                                                  \
        aclError r_ = (x);                                                                \
        if (r_ != ACL_SUCCESS) {                                                          \
            std::fprintf(stderr, "%s:%d: %s = %d %s\n", __FILE__, __LINE__, #x, (int)r_,  \
                         aclGetRecentErrMsg());                                           \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "out/fatbin/ascendc_kernels/ascendc_kernels.o";
    const uint32_t blocks = 16;
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream;
    CHECK(aclrtCreateStream(&stream));
    aclrtBinHandle bin;
    CHECK(aclrtBinaryLoadFromFile(path, nullptr, &bin));
    aclrtFuncHandle fill, add;
    CHECK(aclrtBinaryGetFunction(bin, "fill_index", &fill));
    CHECK(aclrtBinaryGetFunction(bin, "add_value", &add));
    void *step;
    size_t stepSize;
    CHECK(aclrtBinaryGetGlobal(bin, "g_step", &step, &stepSize));
    int32_t ten = 10;
    CHECK(aclrtMemcpy(step, stepSize, &ten, sizeof ten, ACL_MEMCPY_HOST_TO_DEVICE));

    void *data;
    CHECK(aclrtMalloc(&data, blocks * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    void *fillArgs[] = {&data};
    CHECK(aclrtLaunchKernelWithArgsArray(fill, blocks, stream, nullptr, fillArgs));
    int32_t value = 5;
    void *addArgs[] = {&data, &value};
    CHECK(aclrtLaunchKernelWithArgsArray(add, blocks, stream, nullptr, addArgs));
    CHECK(aclrtSynchronizeStream(stream));
    int32_t host[blocks];
    CHECK(aclrtMemcpy(host, sizeof host, data, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
    int bad = 0;
    for (uint32_t i = 0; i < blocks; i++) {
        if (host[i] != (int32_t)i * 10 + 5) {
            std::fprintf(stderr, "data[%u] = %d, expected %d\n", i, host[i], (int32_t)i * 10 + 5);
            bad = 1;
        }
    }
    CHECK(aclrtFree(data));
    CHECK(aclrtBinaryUnLoad(bin));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    if (!bad) {
        std::printf("fatbin: %u results correct\n", blocks);
    }
    return bad;
}
