// Kernels of a binary loaded with aclrtBinaryLoadFromFile.
#include "kernel_operator.h"

__gm__ int32_t g_step = 1;

extern "C" __global__ __aicore__ void fill_index(GM_ADDR out)
{
    uint32_t i = AscendC::GetBlockIdx();
    ((__gm__ int32_t *)out)[i] = (int32_t)i * g_step;
}

extern "C" __global__ __aicore__ void add_value(GM_ADDR data, int32_t value)
{
    ((__gm__ int32_t *)data)[AscendC::GetBlockIdx()] += value;
}
