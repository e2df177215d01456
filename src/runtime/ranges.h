/*
 * Private to ranges.c, vmm.c and vmm-phys.c (vmm.h), hostreg.c and
 * managed.c: the registry of address ranges that are not in a heap
 * (reserved virtual ranges, managed allocations, registered host memory) and
 * the hooks the three owners give the registry. See docs/memory.md.
 *
 * One rwlock (aclsim__ranges_lock) guards the registry and every owner's
 * state: classify and range checks read, the API calls that change state
 * write. Lock order: ranges_lock -> handle table lock (physical handles)
 * and ranges_lock -> heap.lock (charges), ranges_lock -> check.c's use lock (checker
 * mode: queued work per mapping, deferred unmaps); nothing else is taken under it.
 */
#ifndef ACLSIM_RANGES_H
#define ACLSIM_RANGES_H

#include "internal.h"

#include <stdlib.h>

enum aclsim__range_kind { ACLSIM_RANGE_RESERVED, ACLSIM_RANGE_MANAGED, ACLSIM_RANGE_REGISTERED };

struct aclsim__range {
    uintptr_t base;
    size_t size;
    uint8_t kind;            /* enum aclsim__range_kind */
    void *owner;             /* struct reservation / managed / registration */
};

extern pthread_rwlock_t aclsim__ranges_lock;

#define ACLSIM_2M ((size_t)2 << 20)
#define ACLSIM_1G ((size_t)1 << 30)

/* The start of the calls that take one pointer: 100001 before aclInit,
 * 100000 when p (called name) is NULL, then the product check. */
static inline aclError aclsim__ranges_enter(const char *api, const char *name, const void *p,
                                            unsigned families)
{
    if (ACLSIM_UNLIKELY(!aclsim__initialized()))
        return aclsim__not_initialized(api);
    if (!p)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
    return aclsim__soc_check(api, families);
}

/* With the lock held for writing: false when out of memory. */
bool aclsim__ranges_add(uintptr_t base, size_t size, int kind, void *owner);
void aclsim__ranges_remove(uintptr_t base);
/* With the lock held: the range containing p, or NULL. */
const struct aclsim__range *aclsim__ranges_find(const void *p);
/* With the lock held: whether any range overlaps [base, base + size). */
bool aclsim__ranges_overlap(uintptr_t base, size_t size);

/* size bytes of PROT_NONE address space aligned to align (a power of two),
 * or MAP_FAILED. at: the address wanted (MAP_FIXED_NOREPLACE), or NULL. */
void *aclsim__map_aligned(size_t size, size_t align, void *at);

/* Hooks, called with the lock held (read at least). */
struct aclsim__where aclsim__vmm_where(void *reservation, const void *p);
aclError aclsim__vmm_check(const char *api, const char *name, void *reservation, const void *p,
                           size_t n, bool write);
void aclsim__vmm_describe(void *reservation, const void *p, char *buf, size_t len);
/* The mapping holding p: its start, size and page size; false if none. */
bool aclsim__vmm_range(void *reservation, const void *p, uintptr_t *base, size_t *size,
                       size_t *page);
/* aclFinalize (lock held for writing). */
void aclsim__vmm_finalize(void);
void aclsim__managed_finalize(void);
void aclsim__hostreg_finalize(void);

#endif /* ACLSIM_RANGES_H */
