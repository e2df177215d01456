/*
 * Ascend's CPU-debug mode (tikicpulib.h): the tiling key ICPU_SET_TILING_KEY
 * selects and kernels read (TILING_KEY_IS). One value per process, as CANN's;
 * atomic, so kernels on worker threads read it without a lock.
 */
#include "internal.h"

#include <stdatomic.h>

static _Atomic uint64_t tiling_key;

void aclsimSetTilingKey(uint64_t key)
{
    atomic_store_explicit(&tiling_key, key, memory_order_release);
}

uint64_t aclsimGetTilingKey(void)
{
    return atomic_load_explicit(&tiling_key, memory_order_acquire);
}
