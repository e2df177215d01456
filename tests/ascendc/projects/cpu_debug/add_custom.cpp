// z = x + y per block; the tiling key selects a variant; a poisoned input
// makes the kernel trap, which must fail the program.
#include "kernel_operator.h"

constexpr uint32_t TILE = 128;

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    uint32_t base = AscendC::GetBlockIdx() * TILE;
    __gm__ int16_t *xs = (__gm__ int16_t *)x + base;
    __gm__ int16_t *ys = (__gm__ int16_t *)y + base;
    __gm__ int16_t *zs = (__gm__ int16_t *)z + base;
    int16_t extra = TILING_KEY_IS(2) ? 100 : 0;
    for (uint32_t i = 0; i < TILE; i++) {
        if (xs[i] < 0) {
            trap();
        }
        zs[i] = xs[i] + ys[i] + extra;
    }
}
