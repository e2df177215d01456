/*
 * Kernels: what the files of the concept share.
 *
 *   kernel.c        the registry of kernel descriptors, aclrtGetFuncBySymbol,
 *                   launches (configurations, argument blocks, the launch
 *                   functions, Ascend C's <<<>>>), fork
 *   kernel-block.c  running a launch: blocks, their schedulers, the SyncAll
 *                   barrier, traps, and the calls a running block makes
 *                   (block index, block memory, printf, warnings)
 *   kernel-query.c  function queries (parameters, dynamic UB, name, address,
 *                   size, attributes)
 *
 * Locks: the registry's (kernels.lock) is kernel.c's alone; each launch's
 * SyncAll barrier has its own (bar_lock, kernel-block.c).
 */
#ifndef ACLSIM_KERNEL_H
#define ACLSIM_KERNEL_H

#include "internal.h"

/* The families where an attribute means something (CANN's reference). */
#define INFERENCE_ONLY ACLSIM_FAMILIES(INFERENCE)
#define A5_ONLY ACLSIM_FAMILIES(A5)

/* kernel.c */
/* The kernel of an aclrtFuncHandle argument, or (by_function: a `void *func`
 * argument) of a kernel function itself; NULL if none. */
const aclsimKernel *aclsim__kernel_arg(const void *func, bool by_function);
/* 107017 for func, neither a live kernel handle nor a registered function. */
aclError aclsim__kernel_dead_func(const void *func, const char *api);

#endif /* ACLSIM_KERNEL_H */
