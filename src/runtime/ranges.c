/*
 * The registry of address ranges outside the heaps (reserved virtual ranges,
 * managed allocations, registered host memory), and unified addressing:
 * aclrtPointerGetAttributes, aclrtMemGetAddressRange, aclrtCheckMemType for
 * every kind of pointer aclsim hands out. See docs/memory.md.
 *
 * The registry is a sorted array of non-overlapping ranges under
 * aclsim__ranges_lock (ranges.h); aclsim__ranges_count lets classify skip
 * it while it is empty.
 */
#include "ranges.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

pthread_rwlock_t aclsim__ranges_lock = PTHREAD_RWLOCK_INITIALIZER;
atomic_size_t aclsim__ranges_count;

static struct aclsim__range *ranges;
static size_t nranges, cap_ranges;

/* Index of the first range whose base is above p. */
static size_t upper(uintptr_t p)
{
    size_t lo = 0, hi = nranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ranges[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool aclsim__ranges_add(uintptr_t base, size_t size, int kind, void *owner)
{
    if (nranges == cap_ranges) {
        size_t cap = cap_ranges ? cap_ranges * 2 : 16;
        struct aclsim__range *r = aclsim__realloc(ranges, cap * sizeof *r);
        if (!r)
            return false;
        ranges = r;
        cap_ranges = cap;
    }
    size_t pos = upper(base);
    memmove(&ranges[pos + 1], &ranges[pos], (nranges - pos) * sizeof *ranges);
    ranges[pos] = (struct aclsim__range){base, size, (uint8_t)kind, owner};
    nranges++;
    atomic_store_explicit(&aclsim__ranges_count, nranges, memory_order_release);
    return true;
}

void aclsim__ranges_remove(uintptr_t base)
{
    size_t pos = upper(base);
    if (pos == 0 || ranges[pos - 1].base != base)
        return;
    memmove(&ranges[pos - 1], &ranges[pos], (nranges - pos) * sizeof *ranges);
    nranges--;
    atomic_store_explicit(&aclsim__ranges_count, nranges, memory_order_release);
}

const struct aclsim__range *aclsim__ranges_find(const void *p)
{
    size_t pos = upper((uintptr_t)p);
    if (pos == 0)
        return NULL;
    const struct aclsim__range *r = &ranges[pos - 1];
    return (uintptr_t)p - r->base < r->size ? r : NULL;
}

bool aclsim__ranges_overlap(uintptr_t base, size_t size)
{
    size_t pos = upper(base);
    if (pos > 0 && base - ranges[pos - 1].base < ranges[pos - 1].size)
        return true;
    return pos < nranges && ranges[pos].base - base < size;
}

void *aclsim__map_aligned(size_t size, size_t align, void *at)
{
    if (at) {
        void *p = mmap(at, size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (p != MAP_FAILED && p != at) {   /* an old kernel ignored the flag */
            munmap(p, size);
            return MAP_FAILED;
        }
        return p;
    }
    char *p = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return MAP_FAILED;
    uintptr_t start = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
    if (start > (uintptr_t)p)
        munmap(p, start - (uintptr_t)p);
    size_t tail = (size_t)((uintptr_t)p + size + align - (start + size));
    if (tail)
        munmap((void *)(start + size), tail);
    return (void *)start;
}

/* ---- classify, range checks, messages -------------------------------------------- */

struct aclsim__where aclsim__ranges_classify(const void *p)
{
    struct aclsim__where w = {ACLSIM_HOST, NULL};
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    const struct aclsim__range *r = aclsim__ranges_find(p);
    if (r && r->kind == ACLSIM_RANGE_RESERVED)
        w = aclsim__vmm_where(r->owner, p);
    else if (r)
        w.kind = r->kind == ACLSIM_RANGE_MANAGED ? ACLSIM_MANAGED : ACLSIM_REGISTERED;
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return w;
}

static const char *range_name(int kind)
{
    return kind == ACLSIM_RANGE_MANAGED ? "managed memory" : "registered host memory";
}

aclError aclsim__ranges_check(const char *api, const char *name, const void *p, size_t n,
                              struct aclsim__where w)
{
    (void)w;
    aclError err = ACL_SUCCESS;
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    const struct aclsim__range *r = aclsim__ranges_find(p);
    if (!r) {
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           "%s %p is no longer in reserved, managed or registered memory", name, p);
    } else if (r->kind == ACLSIM_RANGE_RESERVED) {
        err = aclsim__vmm_check(api, name, r->owner, p, n, strcmp(name, "src") != 0);
    } else {
        size_t room = r->size - ((uintptr_t)p - r->base);
        if (n > room)
            err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                               "%s range of %zu bytes at %p overruns the %zu bytes of %s at %p by "
                               "%zu bytes", name, n, p, r->size, range_name(r->kind),
                               (void *)r->base, n - room);
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

void aclsim__ranges_describe(const void *p, char *buf, size_t len)
{
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    const struct aclsim__range *r = aclsim__ranges_find(p);
    if (!r)
        snprintf(buf, len, "ordinary host memory");
    else if (r->kind == ACLSIM_RANGE_RESERVED)
        aclsim__vmm_describe(r->owner, p, buf, len);
    else
        snprintf(buf, len, "%s (offset %zu of the %zu bytes at %p)", range_name(r->kind),
                 (size_t)((uintptr_t)p - r->base), r->size, (void *)r->base);
    pthread_rwlock_unlock(&aclsim__ranges_lock);
}

void aclsim__ranges_finalize(void)
{
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    aclsim__vmm_finalize();
    aclsim__managed_finalize();
    aclsim__hostreg_finalize();
    free(ranges);
    ranges = NULL;
    nranges = cap_ranges = 0;
    atomic_store_explicit(&aclsim__ranges_count, 0, memory_order_release);
    pthread_rwlock_unlock(&aclsim__ranges_lock);
}

void aclsim__ranges_hold(void) { pthread_rwlock_rdlock(&aclsim__ranges_lock); }
void aclsim__ranges_unhold(void) { pthread_rwlock_unlock(&aclsim__ranges_lock); }

void aclsim__ranges_forget_after_fork(void)
{
    pthread_rwlock_init(&aclsim__ranges_lock, NULL);
}

/* ---- unified addressing ---------------------------------------------------------- */

/* The block holding p (base, size, page size) and its location; false for
 * ordinary host memory and addresses outside any live block. */
static bool block_of(const void *p, struct aclsim__where w, uintptr_t *base, size_t *size,
                     size_t *page)
{
    struct aclsim__heap *h = w.kind == ACLSIM_DEVICE ? &w.device->heap
                             : w.kind == ACLSIM_PINNED ? &aclsim__host_heap : NULL;
    if (h) {
        struct aclsim__alloc a;
        if (!aclsim__heap_find(h, p, &a))
            return false;
        *base = a.addr;
        *size = a.size;
        *page = w.kind == ACLSIM_DEVICE && a.span >= ((size_t)1 << 20) ? ACLSIM_2M : 4096;
        return true;
    }
    if (w.kind == ACLSIM_HOST)
        return false;
    bool found = false;
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    const struct aclsim__range *r = aclsim__ranges_find(p);
    if (r && r->kind == ACLSIM_RANGE_RESERVED) {
        found = aclsim__vmm_range(r->owner, p, base, size, page);
    } else if (r) {
        *base = r->base;
        *size = r->size;
        *page = r->kind == ACLSIM_RANGE_MANAGED ? ACLSIM_2M : 4096;
        found = true;
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return found;
}

aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{
    static const char api[] = "aclrtPointerGetAttributes";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr || !attributes)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !ptr ? "ptr" : "attributes");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    struct aclsim__where w = aclsim__classify(ptr);
    uintptr_t base;
    size_t size, page = 4096;
    if (!block_of(ptr, w, &base, &size, &page))
        page = w.kind == ACLSIM_HOST ? 4096 : ACLSIM_2M;
    aclrtPtrAttributes a;
    memset(&a, 0, sizeof a);
    switch (w.kind) {
    case ACLSIM_DEVICE: case ACLSIM_VIRTUAL:
        a.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        a.location.id = w.device ? (uint32_t)w.device->id : 0;
        break;
    case ACLSIM_PINNED: case ACLSIM_REGISTERED:
        a.location.type = ACL_MEM_LOCATION_TYPE_HOST;
        break;
    case ACLSIM_MANAGED:
        a.location.type = ACL_MEM_LOCATION_TYPE_MANAGED;
        break;
    default:
        a.location.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
        break;
    }
    a.pageSize = (uint32_t)page;
    *attributes = a;
    return ACL_SUCCESS;
}

aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t *psize)
{
    static const char api[] = "aclrtMemGetAddressRange";
    aclError err = aclsim__ranges_enter(api, "ptr", ptr, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    struct aclsim__where w = aclsim__classify(ptr);
    uintptr_t base;
    size_t size, page;
    if (!block_of(ptr, w, &base, &size, &page)) {
        char what[256];
        aclsim__describe(ptr, what, sizeof what);
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "ptr %p is not in a live block of memory allocated, mapped or "
                            "registered through the runtime: it is %s", ptr, what);
    }
    if (pbase)
        *pbase = (void *)base;
    if (psize)
        *psize = size;
    return ACL_SUCCESS;
}

aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType, uint32_t *checkResult,
                           uint32_t reserve)
{
    static const char api[] = "aclrtCheckMemType";
    ACLSIM_REQUIRE_INIT(api);
    if (!addrList || !checkResult)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !addrList ? "addrList" : "checkResult");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    const uint32_t known = ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP | ACL_RT_MEM_TYPE_RSVD;
    if (size == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "size is 0");
    if (reserve != 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "reserve is %u (must be 0)", reserve);
    if (memType == 0 || (memType & ~known))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "memType 0x%x is not a combination of ACL_RT_MEM_TYPE_DEV, "
                            "ACL_RT_MEM_TYPE_DVPP and ACL_RT_MEM_TYPE_RSVD", memType);
    uint32_t match = 1;
    for (uint32_t i = 0; i < size && match; i++) {
        struct aclsim__where w = aclsim__classify(addrList[i]);
        struct aclsim__alloc a;
        uint32_t type = 0;   /* aclsim has no DVPP memory */
        if (w.kind == ACLSIM_DEVICE && aclsim__heap_find(&w.device->heap, addrList[i], &a))
            type = ACL_RT_MEM_TYPE_DEV;
        else if (w.kind == ACLSIM_VIRTUAL)
            type = ACL_RT_MEM_TYPE_RSVD;
        match = (type & memType) != 0;
    }
    *checkResult = match;
    return ACL_SUCCESS;
}
