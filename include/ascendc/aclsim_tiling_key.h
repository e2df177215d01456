/*
 * TILING_KEY_IS(key) in kernels: true when the process's tiling key is key.
 * The key is set by ICPU_SET_TILING_KEY (tikicpulib.h, CPU-debug mode) or
 * aclsimSetTilingKey; 0 until set. Included by kernel_operator.h.
 */
#ifndef ACLSIM_ASCENDC_TILING_KEY_H
#define ACLSIM_ASCENDC_TILING_KEY_H

#include <stdint.h>
#include "aclsim/aclsim.h"

#ifndef TILING_KEY_IS
#define TILING_KEY_IS(key) (aclsimGetTilingKey() == (uint64_t)(key))
#endif

#endif /* ACLSIM_ASCENDC_TILING_KEY_H */
