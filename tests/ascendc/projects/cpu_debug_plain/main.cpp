// CANN's CPU-debug host code: __CCE_KT_TEST__ selects it in older samples.
#include <cstdio>
#ifndef __CCE_KT_TEST__
#include "acl/acl.h"
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z);
#endif

int32_t main(int32_t argc, char *argv[])
{
    (void)argc;
    (void)argv;
    uint32_t blockDim = 8;
    size_t n = blockDim * 64;
    float *x = (float *)AscendC::GmAlloc(n * sizeof(float));
    float *y = (float *)AscendC::GmAlloc(n * sizeof(float));
    float *z = (float *)AscendC::GmAlloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)i;
        y[i] = 0.5f;
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(add_custom, blockDim, (uint8_t *)x, (uint8_t *)y, (uint8_t *)z);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad |= z[i] != (float)i + 0.5f;
    }
    AscendC::GmFree((void *)x);
    AscendC::GmFree((void *)y);
    AscendC::GmFree((void *)z);
    std::printf("cpu_debug_plain: %s\n", bad ? "WRONG" : "correct");
    return bad;
}
