/*
 * Virtual memory management: reserved address ranges, physical allocations
 * and the mappings between them (CANN's 11-04 chapter). See docs/memory.md.
 *
 * This file: reservations, mappings and their access flags, the lookups and
 * the hooks for ranges.c, the checker's deferred unmaps, memory imported from
 * another process (aclrtIpcMemImportByKey) and aclFinalize; vmm-phys.c:
 * physical memory and its sharing between processes; vmm.h: what they share.
 *
 * A physical allocation is a memfd (real shared memory); mapping it maps the
 * memfd MAP_SHARED at the reserved address, so two mappings of one physical
 * allocation alias. A reservation is PROT_NONE address space; unmapping puts
 * PROT_NONE space back. Access flags are enforced with mprotect (the most
 * permissive flag of any location: host and devices share one page table)
 * and by the range checks of copies and memsets. Device physical memory is
 * charged to its device's heap (aclrtGetMemInfo, 207001 when full).
 *
 * Lifetime: a physical allocation lives while it has user references
 * (aclrtMallocPhysical, aclrtMemRetainAllocationHandle, minus
 * aclrtFreePhysical) or mappings; freed while mapped, it stays usable until
 * its last unmap. Everything is under aclsim__ranges_lock (ranges.h).
 *
 * Checker mode (free-pending, docs/checker.md): an unmap of a mapping that
 * queued work still uses is deferred (the mapping stays, marked unmapping,
 * invisible to lookups) until the last such task is done; so is the release
 * of a reservation whose only mappings are such, and aclrtFreePhysical then
 * is reported too (the memory goes with the deferred unmap).
 */
#include "vmm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct reservation *reservations;

/* ---- lookups (lock held) ---------------------------------------------------------- */

/* (A mapping whose unmap the checker deferred is not there for the API.) */
static struct mapping *mapping_at(struct reservation *r, uintptr_t p)
{
    for (size_t i = 0; i < r->nmaps; i++)
        if (p - r->maps[i].addr < r->maps[i].size && !r->maps[i].unmapping)
            return &r->maps[i];
    return NULL;
}

/* The mapping of r whose deferred unmap starts at p, or NULL. */
static struct mapping *unmapping_at(struct reservation *r, uintptr_t p)
{
    for (size_t i = 0; r && i < r->nmaps; i++)
        if (r->maps[i].addr == p && r->maps[i].unmapping)
            return &r->maps[i];
    return NULL;
}

/* The reservation containing p, or NULL. */
static struct reservation *reservation_of(const void *p)
{
    const struct aclsim__range *r = aclsim__ranges_find(p);
    return r && r->kind == ACLSIM_RANGE_RESERVED ? r->owner : NULL;
}

/* The mapping that starts at p (any reservation), or NULL with a message. */
static struct mapping *mapping_start(const char *api, const char *name, const void *p,
                                     aclError *err)
{
    struct reservation *r = reservation_of(p);
    struct mapping *m = r ? mapping_at(r, (uintptr_t)p) : NULL;
    if (m && m->addr == (uintptr_t)p)
        return m;
    if (unmapping_at(r, (uintptr_t)p)) {   /* checker mode: a second unmap */
        char text[300];
        snprintf(text, sizeof text,
                 "%s %p was already unmapped: that unmap waits for the queued work that still "
                 "uses the mapping", name, p);
        aclsim__check_print("free-pending", text);
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "aclsim check: %s", text);
        return NULL;
    }
    *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "%s %p is not the start of a mapping (aclrtMapMem / aclrtMemMapNoAccess)%s",
                        name, p, !r ? ": it is not in a reserved range" : m ? ": it is inside one"
                                                                            : "");
    return NULL;
}

static int effective_prot(const struct mapping *m)
{
    uint8_t most = 0;
    for (int i = 0; i < LOCATIONS; i++)
        most |= m->access[i];
    return most == ACL_RT_MEM_ACCESS_FLAGS_READWRITE ? PROT_READ | PROT_WRITE
           : most == ACL_RT_MEM_ACCESS_FLAGS_READ    ? PROT_READ
                                                     : PROT_NONE;
}

/* ---- hooks for ranges.c ------------------------------------------------------------ */

struct aclsim__where aclsim__vmm_where(void *reservation, const void *p)
{
    struct reservation *r = reservation;
    struct mapping *m = mapping_at(r, (uintptr_t)p);
    if (m && !m->phys->device)
        return (struct aclsim__where){ACLSIM_REGISTERED, NULL};
    if (!m && r->nmaps)
        m = &r->maps[0];   /* a reservation binds one device's memory */
    return (struct aclsim__where){ACLSIM_VIRTUAL, m ? m->phys->device : NULL};
}

aclError aclsim__vmm_check(const char *api, const char *name, void *reservation, const void *p,
                           size_t n, bool write)
{
    struct reservation *r = reservation;
    uintptr_t at = (uintptr_t)p, end = (uintptr_t)p + n;
    struct mapping *m = mapping_at(r, at);
    if (!m)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%s %p is reserved virtual memory (the range at %p) with no physical "
                            "memory mapped there", name, p, (void *)r->base);
    for (;;) {
        int prot = effective_prot(m);
        if (prot == PROT_NONE || (write && !(prot & PROT_WRITE)))
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "%s range at %p: the mapping at %p is %s (aclrtMemSetAccess)", name,
                                p, (void *)m->addr, prot == PROT_NONE ? "not accessible" : "read-only");
        uintptr_t mend = m->addr + m->size;
        if (end <= mend)
            return ACL_SUCCESS;
        struct mapping *next = mapping_at(r, mend);
        if (!next)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "%s range of %zu bytes at %p runs %zu bytes past the mapped memory "
                                "(the mappings of the reservation at %p end at %p)", name, n, p,
                                (size_t)(end - mend), (void *)r->base, (void *)mend);
        m = next;
    }
}

void aclsim__vmm_describe(void *reservation, const void *p, char *buf, size_t len)
{
    struct reservation *r = reservation;
    struct mapping *m = mapping_at(r, (uintptr_t)p);
    if (!m) {
        snprintf(buf, len, "reserved virtual memory with nothing mapped there (offset %zu of the "
                 "%zu-byte reservation at %p)", (size_t)((uintptr_t)p - r->base), r->size,
                 (void *)r->base);
        return;
    }
    char who[32];
    if (m->phys->device)
        snprintf(who, sizeof who, "device %d", m->phys->device->id);
    else
        snprintf(who, sizeof who, "host");
    snprintf(buf, len, "%s physical memory mapped at %p (offset %zu of the %zu-byte mapping)", who,
             (void *)m->addr, (size_t)((uintptr_t)p - m->addr), m->size);
}

bool aclsim__vmm_range(void *reservation, const void *p, uintptr_t *base, size_t *size,
                       size_t *page)
{
    struct mapping *m = mapping_at(reservation, (uintptr_t)p);
    if (!m)
        return false;
    *base = m->addr;
    *size = m->size;
    *page = m->phys->page;
    return true;
}

/* ---- reservations ----------------------------------------------------------------- */

static aclError refuse_imported(const char *api, const void *p)
{
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "%p is memory imported from another process (aclrtIpcMemImportByKey): "
                        "close it with aclrtIpcMemClose", p);
}

static aclError reserve(const char *api, void **virPtr, size_t size, size_t alignment,
                        void *expectPtr, uint64_t flags, bool no_uc)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!virPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "virPtr is NULL");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    if (flags != 0 && flags != 1)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "flags is %llu (must be 0)",
                            (unsigned long long)flags);
    aclError err = aclsim__soc_check(api, no_uc ? ACLSIM_FAMILIES(A3) : ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    if (alignment != 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "alignment is %zu (reserved, must be 0)", alignment);
    if (no_uc && (size % ACLSIM_1G || !expectPtr))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            size % ACLSIM_1G ? "size %zu is not a multiple of 1 GiB"
                                             : "size %zu: expectPtr is NULL (this function only "
                                               "reserves at an address the caller gives)", size);
    size_t align = size > ACLSIM_1G ? ACLSIM_1G : ACLSIM_2M;
    if (expectPtr && (uintptr_t)expectPtr % align)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "expectPtr %p is not aligned to %zu bytes", expectPtr, align);
    size_t span = aclsim__vmm_round_up(size, ACLSIM_2M);
    struct reservation *r = aclsim__calloc(1, sizeof *r);
    if (!r)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    void *p = span < size ? MAP_FAILED : aclsim__map_aligned(span, align, expectPtr);
    if (p == MAP_FAILED) {
        free(r);
        if (expectPtr)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "cannot reserve %zu bytes at expectPtr %p: the range is in use",
                                size, expectPtr);
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "cannot reserve %zu bytes of address space", size);
    }
    r->base = (uintptr_t)p;
    r->size = span;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    bool ok = aclsim__ranges_add(r->base, span, ACLSIM_RANGE_RESERVED, r);
    if (ok) {
        r->next = reservations;
        reservations = r;
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    if (!ok) {
        munmap(p, span);
        free(r);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    }
    *virPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                uint64_t flags)
{
    return reserve("aclrtReserveMemAddress", virPtr, size, alignment, expectPtr, flags, false);
}

aclError aclrtReserveMemAddressNoUCMemory(void **virPtr, size_t size, size_t alignment,
                                          void *expectPtr, uint64_t flags)
{
    return reserve("aclrtReserveMemAddressNoUCMemory", virPtr, size, alignment, expectPtr, flags,
                   true);
}

static void unlink_reservation(struct reservation *r)
{
    for (struct reservation **pp = &reservations; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
}

/* Gives r's address space back. Lock held for writing. */
static void drop_reservation(struct reservation *r)
{
    aclsim__ranges_remove(r->base);
    unlink_reservation(r);
    munmap((void *)r->base, r->size);
    free(r->maps);
    free(r);
}

/* The release of r, whose remaining mappings are all deferred unmaps
 * (checker mode): deferred with the last of them, and reported. */
static aclError release_unmapping(const char *api, struct reservation *r)
{
    char what[200];
    snprintf(what, sizeof what, "the %zu-byte reserved range at %p (its mapping at %p is unmapped, "
             "deferred)", r->size, (void *)r->base, (void *)r->maps[0].addr);
    aclError err = ACL_SUCCESS;
    r->releasing = true;
    for (size_t i = 0; i < r->nmaps; i++)
        if (aclsim__check_unmap(api, "release", "releases", r->maps[i].addr, what, &err))
            break;
    return err;
}

aclError aclrtReleaseMemAddress(void *virPtr)
{
    static const char api[] = "aclrtReleaseMemAddress";
    aclError err = aclsim__ranges_enter(api, "virPtr", virPtr, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct reservation *r = reservation_of(virPtr);
    size_t live = 0;
    const struct mapping *first = NULL;
    for (size_t i = 0; r && i < r->nmaps; i++)
        if (!r->maps[i].unmapping && !live++)
            first = &r->maps[i];
    if (!r || r->base != (uintptr_t)virPtr || r->releasing) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "virPtr %p is not the start of a reserved range (aclrtReserveMemAddress)%s",
                           virPtr, r && r->releasing ? ": it was released already (aclsim check: "
                           "the release waits for the queued work that still uses it)"
                           : r ? ": it is inside one" : "");
    } else if (r->imported) {
        err = refuse_imported(api, virPtr);
    } else if (live) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "the range at %p still has %zu mapping(s) (the first at %p): unmap them "
                           "with aclrtUnmapMem before releasing it", virPtr, live,
                           (void *)first->addr);
    } else if (r->nmaps) {
        err = release_unmapping(api, r);   /* checker mode: deferred unmaps */
    } else {
        drop_reservation(r);
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

/* ---- mappings --------------------------------------------------------------------- */

/* Maps ph's memory at `at` in r (checked: inside r, overlapping nothing) with
 * these access flags per location, and lists the mapping. Lock held for
 * writing. */
static aclError add_mapping(const char *api, struct reservation *r, uintptr_t at, size_t size,
                            struct phys *ph, const uint8_t access[LOCATIONS])
{
    if (r->nmaps == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4;
        struct mapping *maps = aclsim__realloc(r->maps, cap * sizeof *maps);
        if (!maps)
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
        r->maps = maps;
        r->cap = cap;
    }
    struct mapping m = {.addr = at, .size = size, .phys = ph};
    memcpy(m.access, access, sizeof m.access);
    if (mmap((void *)at, size, effective_prot(&m), MAP_SHARED | MAP_FIXED, ph->fd,
             (off_t)ph->offset) == MAP_FAILED)
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, "cannot map %zu bytes at %p: %s",
                            size, (void *)at, strerror(errno));
    size_t pos = 0;
    while (pos < r->nmaps && r->maps[pos].addr < at)
        pos++;
    memmove(&r->maps[pos + 1], &r->maps[pos], (r->nmaps - pos) * sizeof *r->maps);
    r->maps[pos] = m;
    r->nmaps++;
    ph->maps++;
    return ACL_SUCCESS;
}

static aclError map_mem(const char *api, void *virPtr, size_t size, size_t offset,
                        aclrtDrvMemHandle handle, uint64_t flags, bool access)
{
    aclError err = aclsim__vmm_check_args(api, virPtr, "virPtr", handle, "handle", size, flags);
    if (err)
        return err;
    err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct phys *ph = aclsim__vmm_phys_of(api, handle);
    struct reservation *r = ph ? reservation_of(virPtr) : NULL;
    uintptr_t at = (uintptr_t)virPtr;
    if (!ph) {
        err = ACL_ERROR_RT_INVALID_HANDLE;
    } else if (offset != 0) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "offset is %zu (must be 0)", offset);
    } else if (!r || r->releasing) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "virPtr %p is not in a reserved range (aclrtReserveMemAddress)%s", virPtr,
                           r ? ": it was released (aclsim check: the release waits for queued "
                               "work)" : "");
    } else if (size != ph->size || size % ph->page || at % ph->page) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "size %zu at %p: a mapping covers its whole physical allocation (%zu "
                           "bytes) and starts and ends on its granularity (%zu bytes)", size,
                           virPtr, ph->size, ph->page);
    } else if (size > r->size - (at - r->base)) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "%zu bytes at %p run past the end of the reserved range at %p (%zu bytes)",
                           size, virPtr, (void *)r->base, r->size);
    } else {
        for (size_t i = 0; i < r->nmaps && !err; i++) {
            struct mapping *m = &r->maps[i];
            if (m->addr < at + size && at < m->addr + m->size)
                err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                   "%zu bytes at %p overlap the mapping at %p (%zu bytes): %s",
                                   size, virPtr, (void *)m->addr, m->size,
                                   m->unmapping ? "its unmap waits for the queued work that still "
                                                  "uses it (aclsim check: free-pending); "
                                                  "synchronize first"
                                                : "unmap it first");
            else if (m->phys->device != ph->device)
                err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                   "the reserved range at %p already maps memory of %s %d; one "
                                   "range cannot bind the memory of two locations", (void *)r->base,
                                   m->phys->device ? "device" : "the host",
                                   m->phys->device ? m->phys->device->id : 0);
        }
    }
    if (!err) {
        uint8_t flag = access ? ACL_RT_MEM_ACCESS_FLAGS_READWRITE : ACL_RT_MEM_ACCESS_FLAGS_NONE;
        uint8_t flags_by_location[LOCATIONS];
        memset(flags_by_location, flag, sizeof flags_by_location);
        err = add_mapping(api, r, at, size, ph, flags_by_location);
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                     uint64_t flags)
{
    return map_mem("aclrtMapMem", virPtr, size, offset, handle, flags, true);
}

aclError aclrtMemMapNoAccess(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                             uint64_t flags)
{
    return map_mem("aclrtMemMapNoAccess", virPtr, size, offset, handle, flags, false);
}

/* The checker's description of mapping m, for its reports. */
static void describe_mapping(const struct mapping *m, char *buf, size_t len)
{
    char who[32];
    if (m->phys->device)
        snprintf(who, sizeof who, "device %d", m->phys->device->id);
    else
        snprintf(who, sizeof who, "host");
    char handle[48];
    if (m->phys->handle)
        snprintf(handle, sizeof handle, "handle %p", m->phys->handle);
    else
        snprintf(handle, sizeof handle, "its handle freed");
    snprintf(buf, len, "the %zu-byte mapping at %p (%s physical memory, %s)", m->size,
             (void *)m->addr, who, handle);
}

/* Unmaps m (back to reserved, inaccessible address space) and unlists it;
 * the physical memory goes with its last mapping once its handle is freed.
 * Lock held for writing. */
static void remove_mapping(struct reservation *r, struct mapping *m)
{
    struct phys *ph = m->phys;
    mmap((void *)m->addr, m->size, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    size_t pos = (size_t)(m - r->maps);
    memmove(m, m + 1, (r->nmaps - pos - 1) * sizeof *m);
    r->nmaps--;
    if (--ph->maps == 0 && ph->user_refs == 0)
        aclsim__vmm_destroy_phys(ph);
}

/* aclrtUnmapMem of m, which queued work may still use: true if it does (m
 * stays, marked; *err gets the report's code). Lock held for writing. */
static bool unmap_in_use(const char *api, struct mapping *m, aclError *err)
{
    if (!ACLSIM_UNLIKELY(aclsim__checking()))   /* checker hook */
        return false;
    char what[200];
    describe_mapping(m, what, sizeof what);
    if (!aclsim__check_unmap(api, "unmap", "unmaps", m->addr, what, err))
        return false;
    m->unmapping = true;
    return true;
}

aclError aclrtUnmapMem(void *virPtr)
{
    static const char api[] = "aclrtUnmapMem";
    aclError err = aclsim__ranges_enter(api, "virPtr", virPtr, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct mapping *m = mapping_start(api, "virPtr", virPtr, &err);
    if (m && reservation_of(virPtr)->imported)
        err = refuse_imported(api, virPtr);
    else if (m && !unmap_in_use(api, m, &err))
        remove_mapping(reservation_of(virPtr), m);
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

/* ---- checker mode: unmaps deferred while queued work uses the memory ----------------- */

void aclsim__vmm_each_mapping(const void *p, size_t n,
                              void (*fn)(uintptr_t base, size_t size, void *arg), void *arg)
{
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    struct reservation *r = reservation_of(p);
    uintptr_t at = (uintptr_t)p;
    for (size_t i = 0; r && i < r->nmaps; i++) {
        const struct mapping *m = &r->maps[i];
        if (m->addr < at + n && at < m->addr + m->size)
            fn(m->addr, m->size, arg);
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
}

void aclsim__vmm_unmap_deferred(uintptr_t base)
{
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct reservation *r = reservation_of((const void *)base);
    struct mapping *m = unmapping_at(r, base);
    if (m && !aclsim__check_still_used(base)) {
        remove_mapping(r, m);
        if (r->releasing && r->nmaps == 0)
            drop_reservation(r);
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
}

/* aclrtFreePhysical of ph, still mapped: memory in use if one of its
 * mappings is a deferred unmap (the NPU would free it now; here it goes with
 * that unmap). Lock held for writing. */
aclError aclsim__vmm_free_unmapping(const char *api, struct phys *ph)
{
    for (struct reservation *r = reservations; r; r = r->next)
        for (size_t i = 0; i < r->nmaps; i++) {
            struct mapping *m = &r->maps[i];
            char what[200];
            aclError err;
            if (m->phys != ph || !m->unmapping)
                continue;
            describe_mapping(m, what, sizeof what);
            if (aclsim__check_unmap(api, "free", "frees the physical memory of", m->addr, what,
                                    &err))
                return err;
        }
    return ACL_SUCCESS;
}

/* aclrtMemMapSelectedLink: virPtrDst's reservation gets the physical memory
 * mapped in virPtrSrc's, at the same offsets and with the same access flags
 * (the link, SIO or HCCS, changes the path, not the bytes: one address space
 * here). Atlas A3 only, as CANN's table says. */
aclError aclrtMemMapSelectedLink(void *virPtrDst, size_t size, void *virPtrSrc, uint32_t linkIdx)
{
    static const char api[] = "aclrtMemMapSelectedLink";
    ACLSIM_REQUIRE_INIT(api);
    if (!virPtrDst || !virPtrSrc)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !virPtrDst ? "virPtrDst" : "virPtrSrc");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0: it must be greater than 0");
    if (linkIdx > ACL_RT_MEM_LINK_IDX_1)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "linkIdx %u is invalid: ACL_RT_MEM_LINK_IDX_0 (0, SIO) or "
                            "ACL_RT_MEM_LINK_IDX_1 (1, HCCS)", linkIdx);
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(A3));
    if (err)
        return err;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct reservation *dst = reservation_of(virPtrDst), *src = reservation_of(virPtrSrc);
    const char *bad = NULL;
    if (!dst || dst->base != (uintptr_t)virPtrDst)
        bad = "virPtrDst is not the start of a reserved range (aclrtReserveMemAddress)";
    else if (!src || src->base != (uintptr_t)virPtrSrc)
        bad = "virPtrSrc is not the start of a reserved range (aclrtReserveMemAddress)";
    else if (dst == src)
        bad = "virPtrDst and virPtrSrc are the same reserved range";
    else if (aclsim__vmm_round_up(size, ACLSIM_2M) != dst->size ||
             aclsim__vmm_round_up(size, ACLSIM_2M) != src->size)
        bad = "size must equal the sizes of both reserved ranges";
    else if (src->nmaps == 0)
        bad = "virPtrSrc has no physical memory mapped (aclrtMapMem first)";
    else if (dst->nmaps != 0)
        bad = "virPtrDst already has memory mapped (aclrtUnmapMem it first)";
    if (bad) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s (virPtrDst %p, virPtrSrc %p, size "
                           "%zu)", bad, virPtrDst, virPtrSrc, size);
    } else {
        size_t i = 0;
        for (; i < src->nmaps && !err; i++) {
            struct mapping *m = &src->maps[i];
            if (m->unmapping)   /* (unmapped: its unmap waits for queued work) */
                continue;
            err = add_mapping(api, dst, dst->base + (m->addr - src->base), m->size, m->phys,
                              m->access);
        }
        while (err && dst->nmaps)   /* all or nothing */
            remove_mapping(dst, &dst->maps[dst->nmaps - 1]);
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

/* The access slot of a location, or -1 with 107000. */
static int location_slot(const char *api, const aclrtMemLocation *loc)
{
    if (loc->type == ACL_MEM_LOCATION_TYPE_HOST)
        return 0;
    if (loc->type == ACL_MEM_LOCATION_TYPE_DEVICE && loc->id < aclsim__config()->visible_count)
        return (int)loc->id + 1;
    aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                 "location {type %d, id %u} is not the host or a visible device", (int)loc->type,
                 loc->id);
    return -1;
}

aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count)
{
    static const char api[] = "aclrtMemSetAccess";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    if (!virPtr || !desc || count == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s",
                            !virPtr ? "virPtr is NULL" : !desc ? "desc is NULL" : "count is 0");
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct mapping *m = mapping_start(api, "virPtr", virPtr, &err);
    if (m && m->size != size)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "size %zu is not the size of the mapping at %p (%zu bytes)", size, virPtr,
                           m->size);
    int slots[64];
    for (size_t i = 0; !err && i < count; i++) {
        int f = (int)desc[i].flags;
        int slot = location_slot(api, &desc[i].location);
        if (slot < 0)
            err = ACL_ERROR_RT_PARAM_INVALID;
        else if (f != ACL_RT_MEM_ACCESS_FLAGS_NONE && f != ACL_RT_MEM_ACCESS_FLAGS_READ &&
                 f != ACL_RT_MEM_ACCESS_FLAGS_READWRITE)
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                               "desc[%zu].flags %d is not an aclrtMemAccessFlags value", i, f);
        else if (i < 64)
            slots[i] = slot;
    }
    if (!err && count > 64)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "count %zu is more than 64 locations",
                           count);
    if (!err) {
        for (size_t i = 0; i < count; i++)
            m->access[slots[i]] = (uint8_t)desc[i].flags;
        mprotect(virPtr, m->size, effective_prot(m));
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location, uint64_t *flag)
{
    static const char api[] = "aclrtMemGetAccess";
    ACLSIM_REQUIRE_INIT(api);
    if (!virPtr || !location || !flag)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !virPtr ? "virPtr" : !location ? "location" : "flag");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    struct mapping *m = mapping_start(api, "virPtr", virPtr, &err);
    int slot = m ? location_slot(api, location) : -1;
    if (m && slot < 0)
        err = ACL_ERROR_RT_PARAM_INVALID;
    else if (m)
        *flag = m->access[slot];
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

aclError aclrtMemRetainAllocationHandle(void *virPtr, aclrtDrvMemHandle *handle)
{
    static const char api[] = "aclrtMemRetainAllocationHandle";
    ACLSIM_REQUIRE_INIT(api);
    if (!virPtr || !handle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !virPtr ? "virPtr" : "handle");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct mapping *m = mapping_start(api, "virPtr", virPtr, &err);
    if (m) {
        struct phys *ph = m->phys;
        if (!ph->handle)   /* freed while mapped: a new handle for it */
            ph->handle = aclsim__handle_new(ACLSIM_H_PHYSICAL, ph);
        if (!ph->handle) {
            err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
        } else {
            ph->user_refs++;
            *handle = ph->handle;
        }
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

/* aclFinalize, with the lock held for writing. */
void aclsim__vmm_finalize(void)
{
    while (reservations) {
        struct reservation *r = reservations;
        reservations = r->next;
        munmap((void *)r->base, r->size);
        free(r->maps);
        free(r);
    }
    while (aclsim__vmm_physicals)
        aclsim__vmm_destroy_phys(aclsim__vmm_physicals);
}

/* ---- memory imported from another process (ipc-mem.c) --------------------------------- */

aclError aclsim__vmm_import(const char *api, int fd, uint64_t offset, size_t size,
                           struct aclsim__device *dev, void **base)
{
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    struct phys *ph = own >= 0 ? aclsim__vmm_adopt(own, offset, size, 4096, dev) : NULL;
    struct reservation *r = aclsim__calloc(1, sizeof *r);
    struct mapping *m = aclsim__calloc(1, sizeof *m);
    void *p = ph && r && m ? aclsim__map_aligned(size, 4096, NULL) : MAP_FAILED;
    if (p != MAP_FAILED &&
        mmap(p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, own, (off_t)offset) == MAP_FAILED) {
        munmap(p, size);
        p = MAP_FAILED;
    }
    bool ok = p != MAP_FAILED;
    if (ok) {
        *m = (struct mapping){.addr = (uintptr_t)p, .size = size, .phys = ph};
        memset(m->access, ACL_RT_MEM_ACCESS_FLAGS_READWRITE, sizeof m->access);
        *r = (struct reservation){.base = (uintptr_t)p, .size = size, .maps = m, .nmaps = 1,
                                  .cap = 1, .imported = true};
        ph->maps = 1;
        pthread_rwlock_wrlock(&aclsim__ranges_lock);
        ok = aclsim__ranges_add(r->base, size, ACLSIM_RANGE_RESERVED, r);
        if (ok) {
            r->next = reservations;
            reservations = r;
            aclsim__vmm_list_phys(ph);
        }
        pthread_rwlock_unlock(&aclsim__ranges_lock);
        if (!ok)
            munmap(p, size);
    }
    if (!ok) {
        int e = errno;
        if (own >= 0)
            close(own);
        free(ph);
        free(r);
        free(m);
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "cannot map %zu bytes of another process's memory: %s", size,
                            strerror(e));
    }
    *base = p;
    return ACL_SUCCESS;
}

void aclsim__vmm_unimport(void *base)
{
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct reservation *r = reservation_of(base);
    if (r && r->imported && r->base == (uintptr_t)base) {
        aclsim__ranges_remove(r->base);
        unlink_reservation(r);
        munmap(base, r->size);
        struct phys *ph = r->maps[0].phys;
        if (--ph->maps == 0 && ph->user_refs == 0)
            aclsim__vmm_destroy_phys(ph);
        free(r->maps);
        free(r);
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
}
