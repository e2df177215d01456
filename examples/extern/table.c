/*
 * The defining file. Including lut.h here as well is fine: the EXTERN
 * declarations and the definitions below agree.
 */
#include "lut.h"

/* __gm__ float lut[LUT_SIZE] = {0, 1, 2, 3, 4, 5, 6, 7}; */
ACLSIM_DEVICE_VAR(float, lut, [LUT_SIZE]) = {0, 1, 2, 3, 4, 5, 6, 7};
/* __gm__ uint32_t lookups[BLOCKS];  (no initializer: zero) */
ACLSIM_DEVICE_VAR(uint32_t, lookups, [BLOCKS]);

/* __global__ __aicore__ void rescale_lut(float k): one block per quarter. */
void rescale_lut(float k)
{
    uint32_t per = LUT_SIZE / aclsimGetBlockNum();
    uint32_t first = aclsimGetBlockIdx() * per;
    for (uint32_t i = first; i < first + per; i++)
        ACLSIM_DEV(lut)[i] = ACLSIM_DEV(lut)[i] * k + (float)i;
}
ACLSIM_KERNEL_REGISTER(rescale_lut, float);
