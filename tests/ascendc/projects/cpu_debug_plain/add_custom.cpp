// z = x + y, compiled by the plain C++ compiler in CPU-debug mode.
#include "kernel_operator.h"

constexpr uint32_t TILE = 64;

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    uint32_t base = AscendC::GetBlockIdx() * TILE;
    for (uint32_t i = 0; i < TILE; i++) {
        ((__gm__ float *)z)[base + i] = ((__gm__ float *)x)[base + i] + ((__gm__ float *)y)[base + i];
    }
}
