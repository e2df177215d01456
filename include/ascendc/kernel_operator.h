/*
 * Ascend C's kernel_operator.h for aclsim: the basic layer (qualifiers,
 * GM_ADDR, __NPU_ARCH__, block indices, printf, assert, trap, dcci, half,
 * bfloat16_t). See aclsim_ascendc.h and docs/ascendc.md.
 */
#ifndef ACLSIM_KERNEL_OPERATOR_H
#define ACLSIM_KERNEL_OPERATOR_H

#include "aclsim_ascendc.h"
#include "aclsim_tiling_key.h"   /* TILING_KEY_IS */
#include "aclsim_vector.h"       /* TPipe, TQue, DataCopy, Add, ... */

#endif /* ACLSIM_KERNEL_OPERATOR_H */
