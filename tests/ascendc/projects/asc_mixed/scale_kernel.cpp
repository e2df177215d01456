// A .cpp compiled as Ascend C (LANGUAGE ASC): a templated kernel.
#include "kernel_operator.h"
#include "acl/acl.h"

template <typename T, int FACTOR>
__global__ __aicore__ void scale_kernel(GM_ADDR data, uint32_t perBlock)
{
    __gm__ T *d = (__gm__ T *)data + AscendC::GetBlockIdx() * perBlock;
    for (uint32_t i = 0; i < perBlock; i++) {
        d[i] = d[i] * FACTOR;
    }
}

int32_t run_scale(uint32_t blocks, aclrtStream stream, void *data, uint32_t perBlock)
{
    return (int32_t)(scale_kernel<int32_t, 3><<<blocks, nullptr, stream>>>((GM_ADDR)data, perBlock));
}
