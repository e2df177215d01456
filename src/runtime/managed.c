/*
 * Managed memory (CANN's unified virtual memory, 11-05): aclrtMemAllocManaged,
 * aclrtMemManagedAdvise, aclrtMemManagedGetAttr(s), aclrtMemManagedPrefetch-
 * (Batch)Async. See docs/memory.md.
 *
 * A managed allocation is ordinary process memory (sizes round up to 2 MiB,
 * 2 MiB aligned), so host code and kernels on every device use the same
 * pointer; there is nothing to migrate. Its bytes are charged to the device
 * current at allocation. Advice and the last prefetch location are kept per
 * 2 MiB page, so a query over pages that disagree answers "invalid" as CANN
 * documents. A prefetch is a stream task (a host-function task) that records
 * where the pages were prefetched to. State is under aclsim__ranges_lock.
 */
#include "ranges.h"

#include <string.h>
#include <sys/mman.h>

struct page {
    bool read_mostly;
    aclrtMemManagedLocation preferred, prefetched;
    uint64_t accessed_by;            /* bit 0 the host, bit d + 1 device d */
};

struct managed {
    struct managed *next;
    uintptr_t base;
    size_t size;                     /* rounded to 2 MiB */
    struct aclsim__device *device;   /* charged */
    uint64_t gen;
    struct page pages[];             /* size / 2 MiB */
};

static struct managed *all;

/* Prefetches queued and not yet run (freed when they run, or at aclFinalize
 * if their stream discarded them). */
struct prefetch {
    struct prefetch *next;
    size_t count;
    struct { uintptr_t ptr; size_t size; aclrtMemManagedLocation loc; } item[];
};
static struct prefetch *pending;

static const unsigned managed_families = ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3);

static void destroy(struct managed *m)
{
    for (struct managed **pp = &all; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    aclsim__ranges_remove(m->base);
    munmap((void *)m->base, m->size);
    aclsim__heap_uncharge(&m->device->heap, ACLSIM_ALLOC_MANAGED, m->size, m->gen);
    free(m);
}

aclError aclrtMemAllocManaged(void **ptr, uint64_t size, uint32_t flag)
{
    static const char api[] = "aclrtMemAllocManaged";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    if (flag != ACL_RT_MEM_ATTACH_GLOBAL)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "flag is %u (must be ACL_RT_MEM_ATTACH_GLOBAL)", flag);
    aclError err = aclsim__soc_check(api, managed_families);
    if (err)
        return err;
    if (size == 0 || size > ((uint64_t)3 << 40))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "size %llu is not in (0, 3 TiB]", (unsigned long long)size);
    struct aclsim__context *ctx = NULL;
    err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    size_t span = (size_t)((size + ACLSIM_2M - 1) / ACLSIM_2M * ACLSIM_2M);
    size_t npages = span / ACLSIM_2M;
    struct managed *m = aclsim__calloc(1, sizeof *m + npages * sizeof m->pages[0]);
    if (!m)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    m->size = span;
    m->device = aclsim__context_device(ctx);
    if (!aclsim__heap_charge(&m->device->heap, ACLSIM_ALLOC_MANAGED, span, &m->gen)) {
        int id = m->device->id;
        free(m);
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "device %d cannot back %zu bytes of managed memory", id, span);
    }
    void *p = aclsim__map_aligned(span, ACLSIM_2M, NULL);
    if (p == MAP_FAILED || mprotect(p, span, PROT_READ | PROT_WRITE) != 0) {
        if (p != MAP_FAILED)
            munmap(p, span);
        aclsim__heap_uncharge(&m->device->heap, ACLSIM_ALLOC_MANAGED, span, m->gen);
        free(m);
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "cannot allocate %zu bytes of managed memory", span);
    }
    m->base = (uintptr_t)p;
    for (size_t i = 0; i < npages; i++)
        m->pages[i].preferred.type = m->pages[i].prefetched.type = ACL_MEM_LOCATIONTYPE_INVALID;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    bool ok = aclsim__ranges_add(m->base, span, ACLSIM_RANGE_MANAGED, m);
    if (ok) {
        m->next = all;
        all = m;
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    if (!ok) {
        munmap(p, span);
        aclsim__heap_uncharge(&m->device->heap, ACLSIM_ALLOC_MANAGED, span, m->gen);
        free(m);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    }
    *ptr = p;
    return ACL_SUCCESS;
}

bool aclsim__managed_free(void *p)
{
    bool ok = false;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    const struct aclsim__range *r = aclsim__ranges_find(p);
    if (r && r->kind == ACLSIM_RANGE_MANAGED && r->base == (uintptr_t)p) {
        destroy(r->owner);
        ok = true;
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return ok;
}

/* The managed allocation holding all of [ptr, ptr + size) (lock held), or NULL
 * with 107000. aligned: ptr and size must be whole 2 MiB pages. */
static struct managed *range_of(const char *api, const char *name, const void *ptr, size_t size,
                                bool aligned)
{
    const struct aclsim__range *r = aclsim__ranges_find(ptr);
    if (!r || r->kind != ACLSIM_RANGE_MANAGED) {
        aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                     "%s %p is not managed memory (aclrtMemAllocManaged)", name, ptr);
        return NULL;
    }
    if (size > r->size - ((uintptr_t)ptr - r->base)) {
        aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                     "%zu bytes at %s %p run past the end of the managed allocation at %p (%zu "
                     "bytes)", size, name, ptr, (void *)r->base, r->size);
        return NULL;
    }
    if (aligned && (size % ACLSIM_2M || ((uintptr_t)ptr - r->base) % ACLSIM_2M)) {
        aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                     "%zu bytes at %s %p are not whole 2 MiB pages of the managed allocation at %p",
                     size, name, ptr, (void *)r->base);
        return NULL;
    }
    return r->owner;
}

/* Page indexes [*first, *last) of [ptr, ptr + size) in m. */
static void pages_of(const struct managed *m, const void *ptr, size_t size, size_t *first,
                     size_t *last)
{
    size_t off = (uintptr_t)ptr - m->base;
    *first = off / ACLSIM_2M;
    *last = (off + size + ACLSIM_2M - 1) / ACLSIM_2M;
}

/* 107000 unless loc is the host or a visible device. */
static aclError check_location(const char *api, const char *name, aclrtMemManagedLocation loc)
{
    switch (loc.type) {
    case ACL_MEM_LOCATIONTYPE_HOST: case ACL_MEM_LOCATIONTYPE_HOST_NUMA:
    case ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT:
        return ACL_SUCCESS;
    case ACL_MEM_LOCATIONTYPE_DEVICE:
        if (loc.id >= 0 && (uint32_t)loc.id < aclsim__config()->visible_count)
            return ACL_SUCCESS;
        break;
    default:
        break;
    }
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "%s {type %d, id %d} is not the host or a visible device", name,
                        (int)loc.type, loc.id);
}

static unsigned location_bit(aclrtMemManagedLocation loc)
{
    return loc.type == ACL_MEM_LOCATIONTYPE_DEVICE ? (unsigned)loc.id + 1 : 0;
}

aclError aclrtMemManagedAdvise(const void *const ptr, uint64_t size, aclrtMemManagedAdviseType advise,
                               aclrtMemManagedLocation location)
{
    static const char api[] = "aclrtMemManagedAdvise";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    aclError err = aclsim__soc_check(api, managed_families);
    if (err)
        return err;
    if ((unsigned)advise > ACL_MEM_ADVISE_UNSET_ACCESSED_BY)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "advise %d is not an aclrtMemManagedAdviseType value", (int)advise);
    bool needs_location = advise == ACL_MEM_ADVISE_SET_PREFERRED_LOCATION ||
                          advise == ACL_MEM_ADVISE_SET_ACCESSED_BY ||
                          advise == ACL_MEM_ADVISE_UNSET_ACCESSED_BY;
    if (needs_location && (err = check_location(api, "location", location)))
        return err;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct managed *m = range_of(api, "ptr", ptr, (size_t)size, true);
    if (!m) {
        err = ACL_ERROR_RT_PARAM_INVALID;
    } else {
        size_t first, last;
        pages_of(m, ptr, (size_t)size, &first, &last);
        for (size_t i = first; i < last; i++) {
            struct page *pg = &m->pages[i];
            switch (advise) {
            case ACL_MEM_ADVISE_SET_READ_MOSTLY: pg->read_mostly = true; break;
            case ACL_MEM_ADVISE_UNSET_READ_MOSTLY: pg->read_mostly = false; break;
            case ACL_MEM_ADVISE_SET_PREFERRED_LOCATION: pg->preferred = location; break;
            case ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
                pg->preferred = (aclrtMemManagedLocation){ACL_MEM_LOCATIONTYPE_INVALID, 0};
                break;
            case ACL_MEM_ADVISE_SET_ACCESSED_BY:
                pg->accessed_by |= (uint64_t)1 << location_bit(location);
                break;
            default: pg->accessed_by &= ~((uint64_t)1 << location_bit(location)); break;
            }
        }
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

/* ---- attributes ------------------------------------------------------------------- */

static bool same_location(aclrtMemManagedLocation a, aclrtMemManagedLocation b)
{
    return a.type == b.type && a.id == b.id;
}

/* One attribute of pages [first, last) of m into data (dataSize bytes). */
static aclError get_attr(const char *api, const struct managed *m, size_t first, size_t last,
                         int attr, void *data, size_t dataSize)
{
    const aclrtMemManagedLocation invalid = {ACL_MEM_LOCATIONTYPE_INVALID, 0};
    aclrtMemManagedLocation loc = invalid;
    bool prefetch = attr >= ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION;
    switch (attr) {
    case ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: {
        if (dataSize != sizeof(int32_t))
            break;
        int32_t all_rm = 1;
        for (size_t i = first; i < last; i++)
            all_rm &= m->pages[i].read_mostly;
        memcpy(data, &all_rm, sizeof all_rm);
        return ACL_SUCCESS;
    }
    case ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
        size_t n = dataSize / sizeof loc;
        if (n == 0 || dataSize % sizeof loc)
            break;
        uint64_t common = ~(uint64_t)0;
        for (size_t i = first; i < last; i++)
            common &= m->pages[i].accessed_by;
        aclrtMemManagedLocation *out = data;
        size_t k = 0;
        for (unsigned b = 0; b <= ACLSIM_MAX_DEVICES && k < n; b++)
            if (common >> b & 1)
                out[k++] = b == 0 ? (aclrtMemManagedLocation){ACL_MEM_LOCATIONTYPE_HOST, 0}
                                  : (aclrtMemManagedLocation){ACL_MEM_LOCATIONTYPE_DEVICE,
                                                              (int32_t)b - 1};
        while (k < n)
            out[k++] = invalid;
        return ACL_SUCCESS;
    }
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID: case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: {
        bool whole = attr == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION ||
                     attr == ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION;
        if (dataSize != (whole ? sizeof loc : sizeof(int32_t)))
            break;
        loc = prefetch ? m->pages[first].prefetched : m->pages[first].preferred;
        for (size_t i = first + 1; i < last; i++)
            if (!same_location(loc, prefetch ? m->pages[i].prefetched : m->pages[i].preferred))
                loc = invalid;   /* the pages disagree */
        bool is_type = attr == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ||
                       attr == ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE;
        int32_t v = is_type ? (int32_t)loc.type : loc.id;
        if (whole)
            memcpy(data, &loc, sizeof loc);
        else
            memcpy(data, &v, sizeof v);
        return ACL_SUCCESS;
    }
    default:
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "attribute %d is not an aclrtMemManagedRangeAttribute value", attr);
    }
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "dataSize %zu does not fit attribute %d (4 bytes for flags, types and ids, "
                        "%zu for a location, a multiple of %zu for ACCESSED_BY)", dataSize, attr,
                        sizeof loc, sizeof loc);
}

static aclError get_attrs(const char *api, const aclrtMemManagedRangeAttribute *attrs, size_t n,
                          const void *ptr, size_t size, void **data, const size_t *sizes)
{
    aclError err = aclsim__soc_check(api, managed_families);
    if (err)
        return err;
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    struct managed *m = range_of(api, "ptr", ptr, size, false);
    if (!m)
        err = ACL_ERROR_RT_PARAM_INVALID;
    size_t first = 0, last = 0;
    if (m)
        pages_of(m, ptr, size, &first, &last);
    for (size_t i = 0; !err && i < n; i++) {
        if (!data[i])
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "data[%zu] is NULL", i);
        else
            err = get_attr(api, m, first, last, (int)attrs[i], data[i], sizes[i]);
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute, const void *ptr, size_t size,
                                void *data, size_t dataSize)
{
    static const char api[] = "aclrtMemManagedGetAttr";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr || !data)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !ptr ? "ptr" : "data");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    return get_attrs(api, &attribute, 1, ptr, size, &data, &dataSize);
}

aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute *attributes, size_t numAttributes,
                                 const void *ptr, size_t size, void **data, size_t *dataSizes)
{
    static const char api[] = "aclrtMemManagedGetAttrs";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr || !attributes || !data || !dataSizes)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !ptr ? "ptr" : !attributes ? "attributes" : !data ? "data" : "dataSizes");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    if (numAttributes == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "numAttributes is 0");
    return get_attrs(api, attributes, numAttributes, ptr, size, data, dataSizes);
}

/* ---- prefetch ----------------------------------------------------------------------- */

/* Takes pf off the pending list (lock held for writing). */
static void unlink_pending(struct prefetch *pf)
{
    for (struct prefetch **pp = &pending; *pp; pp = &(*pp)->next)
        if (*pp == pf) {
            *pp = pf->next;
            return;
        }
}

/* The stream task: records the prefetch location of the pages it covers (of
 * managed allocations still live). */
static void run_prefetch(void *arg)
{
    struct prefetch *pf = arg;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    unlink_pending(pf);
    for (size_t k = 0; k < pf->count; k++) {
        const struct aclsim__range *r = aclsim__ranges_find((void *)pf->item[k].ptr);
        if (!r || r->kind != ACLSIM_RANGE_MANAGED)
            continue;   /* freed meanwhile */
        struct managed *m = r->owner;
        size_t size = pf->item[k].size, room = m->size - (pf->item[k].ptr - m->base);
        size_t first, last;
        pages_of(m, (void *)pf->item[k].ptr, size < room ? size : room, &first, &last);
        for (size_t i = first; i < last; i++)
            m->pages[i].prefetched = pf->item[k].loc;
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    free(pf);
}

/* Checks entry k and queues nothing; 107000 with the entry named. */
static aclError check_prefetch(const char *api, const void *ptr, size_t size,
                               aclrtMemManagedLocation loc)
{
    aclError err = check_location(api, "location", loc);
    if (err)
        return err;
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    if (!range_of(api, "ptr", ptr, size, true))
        err = ACL_ERROR_RT_PARAM_INVALID;
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

static aclError submit_prefetch(const char *api, struct prefetch *pf, aclrtStream stream)
{
    struct aclsim__sref s;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (err) {
        free(pf);
        return err;
    }
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    pf->next = pending;
    pending = pf;
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    struct aclsim__task t = {.kind = ACLSIM_TASK_HOST_FUNC, .label = "prefetch",
                             .u.host = {run_prefetch, pf}};
    err = aclsim__submit(s, &t, api, NULL);
    if (err) {   /* not queued: take it back */
        pthread_rwlock_wrlock(&aclsim__ranges_lock);
        unlink_pending(pf);
        pthread_rwlock_unlock(&aclsim__ranges_lock);
        free(pf);
    }
    return err;
}

aclError aclrtMemManagedPrefetchAsync(const void *ptr, size_t size, aclrtMemManagedLocation location,
                                      uint32_t flags, aclrtStream stream)
{
    static const char api[] = "aclrtMemManagedPrefetchAsync";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    if (flags != 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "flags is %u (reserved, must be 0)", flags);
    aclError err = aclsim__soc_check(api, managed_families);
    if (!err)
        err = check_prefetch(api, ptr, size, location);
    if (err)
        return err;
    struct prefetch *pf = aclsim__malloc(sizeof *pf + sizeof pf->item[0]);
    if (!pf)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    pf->count = 1;
    pf->item[0].ptr = (uintptr_t)ptr;
    pf->item[0].size = size;
    pf->item[0].loc = location;
    return submit_prefetch(api, pf, stream);
}

aclError aclrtMemManagedPrefetchBatchAsync(const void **ptrs, size_t *sizes, size_t count,
                                           aclrtMemManagedLocation *prefetchLocs,
                                           size_t *prefetchLocIdxs, size_t numPrefetchLocs,
                                           uint64_t flags, aclrtStream stream)
{
    static const char api[] = "aclrtMemManagedPrefetchBatchAsync";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptrs || !sizes || !prefetchLocs || !prefetchLocIdxs)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !ptrs ? "ptrs" : !sizes ? "sizes" : !prefetchLocs ? "prefetchLocs"
                                                                               : "prefetchLocIdxs");
    if (count == 0 || numPrefetchLocs == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is 0",
                            count == 0 ? "count" : "numPrefetchLocs");
    if (flags != 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "flags is %llu (reserved, must be 0)",
                            (unsigned long long)flags);
    if (count < numPrefetchLocs)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "count %zu must be greater than or equal to numPrefetchLocs %zu", count,
                            numPrefetchLocs);
    aclError err = aclsim__soc_check(api, managed_families);
    if (err)
        return err;
    for (size_t k = 0; k < numPrefetchLocs; k++)
        if (k == 0 ? prefetchLocIdxs[0] != 0
                   : prefetchLocIdxs[k] <= prefetchLocIdxs[k - 1] || prefetchLocIdxs[k] >= count)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "prefetchLocIdxs[%zu] is %zu: the first must be 0, each larger than "
                                "the one before, all below count %zu", k, prefetchLocIdxs[k], count);
    struct prefetch *pf = aclsim__malloc(sizeof *pf + count * sizeof pf->item[0]);
    if (!pf)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    pf->count = count;
    for (size_t i = 0, k = 0; i < count; i++) {
        while (k + 1 < numPrefetchLocs && i >= prefetchLocIdxs[k + 1])
            k++;
        if (!ptrs[i] || sizes[i] == 0)
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "entry %zu: %s", i,
                               !ptrs[i] ? "ptrs[i] is NULL" : "sizes[i] is 0");
        else
            err = check_prefetch(api, ptrs[i], sizes[i], prefetchLocs[k]);
        if (err) {
            free(pf);
            return err;
        }
        pf->item[i].ptr = (uintptr_t)ptrs[i];
        pf->item[i].size = sizes[i];
        pf->item[i].loc = prefetchLocs[k];
    }
    return submit_prefetch(api, pf, stream);
}

/* aclFinalize, lock held for writing. */
void aclsim__managed_finalize(void)
{
    while (all)
        destroy(all);
    while (pending) {
        struct prefetch *pf = pending;
        pending = pf->next;
        free(pf);
    }
}
