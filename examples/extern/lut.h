/*
 * What table.c shares with main.c: the Ascend C `-dc` case, where one file
 * defines `__gm__ float lut[16];` and another declares it
 * `extern __gm__ float lut[16];`.
 */
#ifndef EXAMPLE_EXTERN_LUT_H
#define EXAMPLE_EXTERN_LUT_H

#include <stdint.h>

#include "aclsim/aclsim.h"

#define LUT_SIZE 16
#define BLOCKS 4

/* extern __gm__ float lut[LUT_SIZE];   defined in table.c */
ACLSIM_DEVICE_VAR_EXTERN(float, lut, [LUT_SIZE]);
/* extern __gm__ uint32_t lookups[BLOCKS];   defined in table.c */
ACLSIM_DEVICE_VAR_EXTERN(uint32_t, lookups, [BLOCKS]);

/* A kernel defined (and registered) in table.c: lut[i] = lut[i] * k + i. */
void rescale_lut(float k);

#endif
