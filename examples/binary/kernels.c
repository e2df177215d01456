/*
 * The "operator binary" of the binary example: built as a shared object
 * (libbinary_kernels.so, a CMake MODULE, not linked to libascendcl) and
 * loaded at run time by main.c with aclrtBinaryLoadFromFile.
 *
 * Loading it runs the registration constructors of its device variables and
 * kernels; unloading it (aclrtBinaryUnLoad -> dlclose) unregisters them.
 * aclrtBinaryGetFunction / aclrtBinaryGetGlobal look names up with dlsym, so
 * kernels and variables meant to be found by name need external linkage
 * (no `static`, no hidden visibility).
 */
#include <stdint.h>

#include "aclsim/aclsim.h"

/* __gm__ float coeffs[4] = {1, 0, 0, 0};   y = c0 + c1 x + c2 x^2 + c3 x^3 */
ACLSIM_DEVICE_VAR(float, coeffs, [4]) = {1, 0, 0, 0};
/* __gm__ uint32_t launches;   how many times poly ran on this device */
ACLSIM_DEVICE_VAR(uint32_t, launches, );

/* __global__ __aicore__ void poly(__gm__ const float *x, __gm__ float *y, uint32_t n) */
void poly(const float *x, float *y, uint32_t n)
{
    const float *c = ACLSIM_DEV(coeffs);
    uint32_t blocks = aclsimGetBlockNum(), b = aclsimGetBlockIdx();
    uint32_t per = (n + blocks - 1) / blocks;
    for (uint32_t i = b * per; i < n && i < (b + 1) * per; i++)
        y[i] = c[0] + x[i] * (c[1] + x[i] * (c[2] + x[i] * c[3]));
    if (b == 0)
        ACLSIM_DEV(launches)++;   /* a single writer: block 0 */
}
ACLSIM_KERNEL_REGISTER(poly, const float *, float *, uint32_t);
