/*
 * Virtual memory management (docs/memory.md): what its files share.
 *
 *   vmm.c       reservations, mappings and their access flags, the lookups
 *               and the hooks for ranges.c, the checker's deferred unmaps,
 *               memory imported from another process (ipc-mem.c), aclFinalize
 *   vmm-phys.c  physical memory (aclrtMallocPhysical, aclrtFreePhysical,
 *               granularity, properties) and its sharing between processes
 *               (ipc-share.c)
 *
 * The design and the lifetimes are described at the top of vmm.c. Everything
 * here is under aclsim__ranges_lock (ranges.h).
 */
#ifndef ACLSIM_VMM_H
#define ACLSIM_VMM_H

#include "internal.h"
#include "ranges.h"

struct phys {
    struct phys *next;                 /* every live physical allocation */
    void *handle;                      /* NULL while it has no user reference */
    int fd;
    size_t size, span;                 /* as requested; as backed and charged */
    size_t page;                       /* allocation granularity */
    aclrtPhysicalMemProp prop;
    struct aclsim__device *device;     /* location DEVICE; NULL for host memory */
    uint64_t gen;                      /* heap generation of the charge */
    uint32_t user_refs, maps;
    uint64_t offset;                   /* where mappings start in fd (IPC imports) */
    bool imported;                     /* another process's memory (ipc.c): not charged */
};

#define LOCATIONS (ACLSIM_MAX_DEVICES + 1)   /* [0] host, [d + 1] device d */

struct mapping {
    uintptr_t addr;
    size_t size;
    struct phys *phys;
    uint8_t access[LOCATIONS];         /* aclrtMemAccessFlags per location */
    bool unmapping;                    /* unmapped, deferred by the checker (check.c) */
};

struct reservation {
    struct reservation *next;
    uintptr_t base;
    size_t size;
    struct mapping *maps;              /* sorted by address, non-overlapping */
    size_t nmaps, cap;
    bool imported;                     /* aclrtIpcMemImportByKey's: closed by ipc.c only */
    bool releasing;                    /* released, deferred with its last unmap (checker) */
};

static inline size_t aclsim__vmm_round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* vmm-phys.c */
/* Every live physical allocation (the list of struct phys.next). */
extern struct phys *aclsim__vmm_physicals;
/* Lists ph among them (lock held for writing). */
void aclsim__vmm_list_phys(struct phys *ph);
/* Unlists ph, frees its handle, closes its memfd, uncharges it. Lock held for writing. */
void aclsim__vmm_destroy_phys(struct phys *ph);
/* CANN's argument checks of aclrtMallocPhysical and the map calls. */
aclError aclsim__vmm_check_args(const char *api, const void *a, const char *an, const void *b,
                                const char *bn, size_t size, uint64_t flags);
/* The live physical allocation of handle (lock held), or NULL with 107017. */
struct phys *aclsim__vmm_phys_of(const char *api, aclrtDrvMemHandle handle);
/* A physical allocation of dev's memory backed by fd from offset (not listed). */
struct phys *aclsim__vmm_adopt(int fd, uint64_t offset, size_t size, size_t page,
                               struct aclsim__device *dev);

/* vmm.c */
/* aclrtFreePhysical of ph, still mapped (checker mode): its deferred unmaps. */
aclError aclsim__vmm_free_unmapping(const char *api, struct phys *ph);

#endif /* ACLSIM_VMM_H */
