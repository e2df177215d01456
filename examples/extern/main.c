/*
 * aclsim example: a device variable defined in one file and used from another
 * (Ascend C's `-dc` separate-compilation case).
 *
 * table.c defines `lut` and `lookups` with ACLSIM_DEVICE_VAR; this file only
 * sees them through ACLSIM_DEVICE_VAR_EXTERN (lut.h). It uses them
 *   - in a kernel of this file (ACLSIM_DEV(lut), ACLSIM_DEV(lookups)),
 *   - from the host API (aclrtGetSymbolSize/Address, aclrtMemcpyTo/FromSymbol),
 * and launches a kernel of table.c that writes `lut`, then checks that both
 * files saw the same per-device instance. Device 1 keeps its own instance.
 * Prints what it verified; exits 1 on any mismatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "../example-check.h"
#include "lut.h"

#define N 64



/* __global__ __aicore__ void gather(__gm__ const uint8_t *idx, __gm__ float *out)
 * out[i] = lut[idx[i]]; each block counts its lookups in lookups[block]. */
void gather(const uint8_t *idx, float *out)
{
    uint32_t b = aclsimGetBlockIdx(), per = N / aclsimGetBlockNum();
    for (uint32_t i = b * per; i < (b + 1) * per; i++) {
        out[i] = ACLSIM_DEV(lut)[idx[i] % LUT_SIZE];
        ACLSIM_DEV(lookups)[b]++;          /* one writer per element: no race */
    }
}
ACLSIM_KERNEL_REGISTER(gather, const uint8_t *, float *);

int main(void)
{
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream;
    CHECK(aclrtCreateStream(&stream));
    printf("extern example: lut and lookups are defined in table.c, used from main.c\n");

    /* Host API on the extern declaration: the symbol is the C object's address. */
    size_t lut_size, lookups_size;
    CHECK(aclrtGetSymbolSize(lut, &lut_size));
    CHECK(aclrtGetSymbolSize(lookups, &lookups_size));
    verify(lut_size == sizeof(float) * LUT_SIZE && lookups_size == sizeof(uint32_t) * BLOCKS,
           "aclrtGetSymbolSize sees the sizes of table.c's definitions");

    float initial[LUT_SIZE];
    CHECK(aclrtMemcpyFromSymbol(initial, sizeof initial, lut, sizeof initial, 0,
                                ACL_MEMCPY_DEVICE_TO_HOST));
    verify(initial[7] == 7.0f && initial[8] == 0.0f,
           "device 0's instance starts from table.c's initializer {0..7, 0...}");

    /* Write lut[8..15] from this file (offset into the variable). */
    float upper[LUT_SIZE / 2];
    for (int i = 0; i < LUT_SIZE / 2; i++)
        upper[i] = (float)(100 + i);
    CHECK(aclrtMemcpyToSymbol(lut, upper, sizeof upper, sizeof upper, ACL_MEMCPY_HOST_TO_DEVICE));

    /* Kernel of table.c rescales the instance: lut[i] = lut[i] * 2 + i. */
    aclrtFuncHandle rescale, gat;
    CHECK(aclrtGetFuncBySymbol((const void *)&rescale_lut, &rescale));
    CHECK(aclrtGetFuncBySymbol((const void *)&gather, &gat));
    float k = 2.0f;
    void *rescale_args[] = {&k};
    CHECK(aclrtLaunchKernelWithArgsArray(rescale, BLOCKS, stream, NULL, rescale_args));

    /* Kernel of this file reads the same instance (queued after, same stream). */
    uint8_t idx[N];
    for (int i = 0; i < N; i++)
        idx[i] = (uint8_t)((i * 7) % LUT_SIZE);
    void *idx_dev, *out_dev;
    CHECK(aclrtMalloc(&idx_dev, sizeof idx, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&out_dev, sizeof(float) * N, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(idx_dev, sizeof idx, idx, sizeof idx, ACL_MEMCPY_HOST_TO_DEVICE));
    void *gather_args[] = {&idx_dev, &out_dev};
    CHECK(aclrtLaunchKernelWithArgsArray(gat, BLOCKS, stream, NULL, gather_args));
    CHECK(aclrtSynchronizeStream(stream));

    float expect_lut[LUT_SIZE];
    for (int i = 0; i < LUT_SIZE; i++)
        expect_lut[i] = (i < LUT_SIZE / 2 ? (float)i : (float)(100 + i - LUT_SIZE / 2)) * k + (float)i;

    float lut_back[LUT_SIZE];
    CHECK(aclrtMemcpyFromSymbol(lut_back, sizeof lut_back, lut, sizeof lut_back, 0,
                                ACL_MEMCPY_DEFAULT));
    verify(memcmp(lut_back, expect_lut, sizeof lut_back) == 0,
           "table.c's kernel rescaled the values main.c wrote (aclrtMemcpyFromSymbol)");

    float out[N];
    CHECK(aclrtMemcpy(out, sizeof out, out_dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    int gathered_ok = 1;
    for (int i = 0; i < N; i++)
        gathered_ok &= out[i] == expect_lut[idx[i]];
    verify(gathered_ok, "main.c's kernel read the same instance through ACLSIM_DEV(lut)");

    /* The address from aclrtGetSymbolAddress is an ordinary device pointer. */
    void *lookups_dev;
    CHECK(aclrtGetSymbolAddress(lookups, &lookups_dev));
    uint32_t counts[BLOCKS];
    CHECK(aclrtMemcpy(counts, sizeof counts, lookups_dev, sizeof counts,
                      ACL_MEMCPY_DEVICE_TO_HOST));
    int counts_ok = 1;
    for (int b = 0; b < BLOCKS; b++)
        counts_ok &= counts[b] == N / BLOCKS;
    verify(counts_ok, "lookups[] counted by the kernel, read via aclrtGetSymbolAddress + aclrtMemcpy");
    verify(lookups[0] == 0 && lut[8] == 0.0f,
           "the host C objects themselves are untouched (they only hold the initializer)");

    /* Device 1 has its own instances of the same variables. */
    CHECK(aclrtSetDevice(1));
    float lut1[LUT_SIZE];
    CHECK(aclrtMemcpyFromSymbol(lut1, sizeof lut1, lut, sizeof lut1, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    verify(lut1[7] == 7.0f && lut1[8] == 0.0f,
           "device 1's instance of lut still holds the initializer");
    CHECK(aclrtResetDevice(1));

    CHECK(aclrtSetDevice(0));   /* back to device 0's context */
    CHECK(aclrtFree(idx_dev));
    CHECK(aclrtFree(out_dev));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());

    printf("extern example %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
