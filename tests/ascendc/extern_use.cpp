// extern __gm__ across files (2/2): a declaration, a kernel of this file
// writing the variable defined in extern_def.asc, and the host program.
#include <cstdio>
#include "kernel_operator.h"
#include "acl/acl.h"

extern __gm__ int table[4];
extern __gm__ int c_counter;   /* defined in C with ACLSIM_DEVICE_VAR (extern_c.c) */
extern "C" __global__ __aicore__ void double_table();
extern "C" void c_read_table(int *out);   /* a C kernel (ACLSIM_KERNEL_REGISTER) */

extern "C" __global__ __aicore__ void bump_c()
{
    c_counter += 100;
}

extern "C" __global__ __aicore__ void add_to_table(int v)
{
    table[GetBlockIdx()] += v;
}

int main()
{
    if (aclInit(nullptr) || aclrtSetDevice(0))
        return 1;
    aclrtStream s;
    if (aclrtCreateStream(&s))
        return 2;
    if (double_table<<<4, nullptr, s>>>() || add_to_table<<<4, nullptr, s>>>(10))
        return 3;
    if (aclrtSynchronizeStream(s))
        return 4;
    int got[4];
    if (aclrtMemcpyFromSymbol(got, sizeof got, table, sizeof got, 0, ACL_MEMCPY_DEVICE_TO_HOST))
        return 5;
    for (int i = 0; i < 4; i++)
        if (got[i] != (i + 1) * 2 + 10) {
            std::fprintf(stderr, "table[%d] = %d\n", i, got[i]);
            return 6;
        }
    if (table[0] != 1)   /* the host object is not the device's instance */
        return 7;
    /* the C kernel, launched with <<<>>>, sees the Ascend C code's writes */
    int *dout;
    if (aclrtMalloc((void **)&dout, sizeof got, ACL_MEM_MALLOC_HUGE_FIRST))
        return 10;
    if (bump_c<<<1, nullptr, s>>>() || c_read_table<<<4, nullptr, s>>>(dout) ||
        aclrtSynchronizeStream(s))
        return 11;
    if (aclrtMemcpy(got, sizeof got, dout, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST))
        return 12;
    for (int i = 0; i < 4; i++)
        if (got[i] != (i + 1) * 2 + 10 + 103) {
            std::fprintf(stderr, "c_read_table[%d] = %d\n", i, got[i]);
            return 13;
        }
    aclrtFuncHandle f1, f2;
    if (aclrtGetFuncBySymbol((const void *)&c_read_table, &f1) ||
        aclrtGetFuncBySymbol((const void *)&bump_c, &f2) || f1 == f2)
        return 14;
    aclrtFree(dout);
    /* a second device has its own instance, starting from the initializer */
    if (aclrtSetDevice(1) == ACL_SUCCESS) {
        if (aclrtMemcpyFromSymbol(got, sizeof got, table, sizeof got, 0, ACL_MEMCPY_DEVICE_TO_HOST))
            return 8;
        if (got[2] != 3)
            return 9;
        aclrtResetDevice(1);
    }
    aclrtDestroyStream(s);
    aclrtResetDevice(0);
    aclFinalize();
    std::printf("extern: all checks passed\n");
    return 0;
}
