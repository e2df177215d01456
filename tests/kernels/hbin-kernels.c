/*
 * Kernel binary used by tests/test-binary.c (helper "hbin"): built into
 * libaclsim_test_kernels.so and loaded with aclrtBinaryLoadFromFile.
 *
 * Device variables with external linkage (so aclrtBinaryGetGlobal finds them
 * by name) and kernels registered with ACLSIM_KERNEL_REGISTER that use them
 * through ACLSIM_DEV. Everything is prefixed hbin_ because other helpers'
 * kernel files are linked into the same shared object.
 *
 * test-binary.c repeats hbin_point and the initial values below; keep both in
 * step.
 */
#include <stdint.h>

#include "aclsim/aclsim.h"

typedef struct hbin_point {
    int32_t x;
    int64_t y;
    double z;
} hbin_point;

/* A scalar, an array and a struct, each with an initializer. */
ACLSIM_DEVICE_VAR(int32_t, hbin_counter, ) = 7;
ACLSIM_DEVICE_VAR(float, hbin_table, [64]) = {1.0f, 2.0f, 3.0f};
ACLSIM_DEVICE_VAR(hbin_point, hbin_origin, ) = {3, -4, 0.5};

/* hbin_counter += delta (block 0 only, so any block count gives one add). */
void hbin_bump(int32_t delta)
{
    if (aclsimGetBlockIdx() == 0)
        ACLSIM_DEV(hbin_counter) += delta;
}
ACLSIM_KERNEL_REGISTER(hbin_bump, int32_t);

/* One block per element: out[i] = hbin_table[i] * k, then hbin_table[i] += 1. */
void hbin_table_scale(float *out, float k)
{
    uint32_t i = aclsimGetBlockIdx();
    if (i < 64) {
        out[i] = ACLSIM_DEV(hbin_table)[i] * k;
        ACLSIM_DEV(hbin_table)[i] += 1.0f;
    }
}
ACLSIM_KERNEL_REGISTER(hbin_table_scale, float *, float);

/* *out = hbin_origin, then hbin_origin.x += 1 (block 0 only). */
void hbin_read_origin(hbin_point *out)
{
    if (aclsimGetBlockIdx() == 0) {
        *out = ACLSIM_DEV(hbin_origin);
        ACLSIM_DEV(hbin_origin).x += 1;
    }
}
ACLSIM_KERNEL_REGISTER(hbin_read_origin, hbin_point *);

/* out[0..2] = addresses of this device's instances of the three variables. */
void hbin_report_addresses(uint64_t *out)
{
    if (aclsimGetBlockIdx() == 0) {
        out[0] = (uint64_t)(uintptr_t)&ACLSIM_DEV(hbin_counter);
        out[1] = (uint64_t)(uintptr_t)ACLSIM_DEV(hbin_table);
        out[2] = (uint64_t)(uintptr_t)&ACLSIM_DEV(hbin_origin);
    }
}
ACLSIM_KERNEL_REGISTER(hbin_report_addresses, uint64_t *);

/* No parameters, touches nothing. */
void hbin_nop(void)
{
}
ACLSIM_KERNEL_REGISTER(hbin_nop, void);
