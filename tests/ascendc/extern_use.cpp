// extern __gm__ across files (2/2): a declaration, a kernel of this file
// writing the variable defined in extern_def.asc, and the host program.
#include <cstdio>
#include "kernel_operator.h"
#include "acl/acl.h"

extern __gm__ int table[4];
extern "C" __global__ __aicore__ void double_table();

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
