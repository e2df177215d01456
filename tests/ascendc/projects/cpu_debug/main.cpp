// The host program of CANN's CPU-debug samples: GmAlloc, SetKernelMode,
// ICPU_SET_TILING_KEY, ICPU_RUN_KF, GmFree.  `main fail` poisons the input so
// the kernel traps: the program must exit non-zero naming the kernel.
#include <cstdio>
#include <cstring>
#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z);
#endif

int32_t main(int32_t argc, char *argv[])
{
    uint32_t blockDim = 8;
    size_t n = blockDim * 128;
    size_t byteSize = n * sizeof(int16_t);
    int16_t *x = (int16_t *)AscendC::GmAlloc(byteSize);
    int16_t *y = (int16_t *)AscendC::GmAlloc(byteSize);
    int16_t *z = (int16_t *)AscendC::GmAlloc(byteSize);
    for (size_t i = 0; i < n; i++) {
        x[i] = (int16_t)i;
        y[i] = (int16_t)(3 * i);
    }
    bool fail = argc > 1 && std::strcmp(argv[1], "fail") == 0;
    if (fail) {
        x[n - 1] = -1;
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_SET_TILING_KEY(1);
    ICPU_RUN_KF(add_custom, blockDim, (uint8_t *)x, (uint8_t *)y, (uint8_t *)z);
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        if (z[i] != (int16_t)(4 * i)) {
            std::fprintf(stderr, "key 1: z[%zu] = %d, expected %d\n", i, z[i], (int)(4 * i));
            bad = 1;
        }
    }
    ICPU_SET_TILING_KEY(2);
    ICPU_RUN_KF(add_custom, blockDim, (uint8_t *)x, (uint8_t *)y, (uint8_t *)z);
    for (size_t i = 0; i < n && !bad; i++) {
        if (z[i] != (int16_t)(4 * i + 100)) {
            std::fprintf(stderr, "key 2: z[%zu] = %d, expected %d\n", i, z[i], (int)(4 * i + 100));
            bad = 1;
        }
    }
    AscendC::GmFree((void *)x);
    AscendC::GmFree((void *)y);
    AscendC::GmFree((void *)z);
    if (!bad) {
        std::printf("cpu_debug: %zu results correct with both tiling keys\n", n);
    }
    return bad;
}
