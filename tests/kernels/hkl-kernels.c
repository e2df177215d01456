/*
 * Kernels of the kernel binary used by tests/test-kernel-launch.c (helper
 * "hkl"), loaded from memory (aclrtBinaryLoadFromData, aclrtBinaryLoad).
 */
#include <stdint.h>
#include <string.h>

#include "aclsim/aclsim.h"

/* out[block] = value + step[0] * block (step may be a placeholder). */
void hkl_fill(int32_t *out, int32_t value, const int64_t *step)
{
    uint32_t i = aclsimGetBlockIdx();
    out[i] = value + (int32_t)step[0] * (int32_t)i;
}
ACLSIM_KERNEL_REGISTER(hkl_fill, int32_t *, int32_t, const int64_t *);

/* Traps when asked to (for the binary's exception callback). */
void hkl_trap(int32_t trap)
{
    if (trap)
        aclsimTrap("hkl_trap was asked to trap");
}
ACLSIM_KERNEL_REGISTER(hkl_trap, int32_t);

/* An AI CPU kernel (aclrtRegisterCpuFunc): its arguments packed tight, the
 * last one a placeholder. A negative a fails it (returns 7). */
struct hkl_cpu_args {
    int32_t *out;
    int32_t a, b;
    const int64_t *extra;
};

uint32_t hkl_cpu_add(void *args)
{
    struct hkl_cpu_args p;
    memcpy(&p, args, sizeof p);
    if (p.a < 0)
        return 7;
    *p.out = p.a + p.b + (int32_t)p.extra[0];
    return 0;
}
