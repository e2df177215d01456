/*
 * A heap is a reserved range of address space with a first-fit allocator and
 * a sorted table of live allocations, so that any pointer inside the range can
 * be mapped to its allocation in O(log n). Device memory is one heap per
 * device; page-locked host memory (aclrtMallocHost) is one more heap.
 *
 * The range is reserved PROT_NONE (costs no memory) and made read-write from
 * its start as allocations reach further ("committed"); large frees hand their
 * pages back with MADV_DONTNEED.
 *
 * THE SESSION WINDOWS. Each session of a heap (from its init or a reset to
 * the next reset or destroy) allocates in a window of the range, as large as
 * the heap, and the range holds three windows. The next session's window
 * starts right after the hull of the addresses the ended session used (the
 * last session that used any), or at the range's start when that does not
 * fit: one of the two gaps beside a hull of at most one window always holds
 * a window. A pointer kept from the session that just ended (another thread
 * reset the device, or finalized and initialized the runtime) is thus
 * outside every allocation of the next session, instead of inside another
 * thread's new one: aclrtFree of it is refused rather than freeing that
 * allocation, and a copy to it is refused rather than writing there. Windows
 * move on through the range session by session, so pointers from older
 * sessions are mostly outside too, until the windows come round again.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIN_SPAN 64u
#define COMMIT_STEP ((size_t)2 << 20)
#define RELEASE_MIN ((size_t)1 << 20)
#define WINDOWS 3u   /* windows the range holds (THE SESSION WINDOWS) */

static size_t round_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

/* Hands the pages of [p, p + n) back to the system: a shared heap's pages
 * belong to its memfd, which MADV_DONTNEED would not free. */
static void give_back(const struct aclsim__heap *h, void *p, size_t n)
{
    madvise(p, n, h->fd >= 0 || h->alias ? MADV_REMOVE : MADV_DONTNEED);
}

/* Synchronous copies and sets hold this shared while they check and move
 * bytes (aclsim__hold_heaps); a reset or destroy of any heap takes it
 * exclusively first, so it never frees or unmaps memory under them. One lock
 * for all heaps, always taken before any heap's own lock. */
static pthread_rwlock_t teardown_lock = PTHREAD_RWLOCK_INITIALIZER;

void aclsim__heaps_hold(void) { pthread_rwlock_rdlock(&teardown_lock); }
void aclsim__heaps_release(void) { pthread_rwlock_unlock(&teardown_lock); }

/* Reserves reserve bytes of address space for h (see aclsim__heap_init);
 * MAP_FAILED if it cannot. */
static void *reserve_range(struct aclsim__heap *h, size_t reserve, int *fd_out, int *alias_fd_out,
                           char **alias_out)
{
    int fd = -1, alias_fd = -1;
    char *alias = NULL;
    void *base = MAP_FAILED;
    if (h->shareable) {
        /* Device memory another process may map (ipc.c): a sparse memfd as
         * large as the range, never inherited by fork() children (they
         * cannot use it, and must not write the parent's memory). */
        fd = memfd_create("aclsim-device-memory", MFD_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, (off_t)reserve) == 0)
            base = mmap(NULL, reserve, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd, 0);
        if (base != MAP_FAILED) {
            madvise(base, reserve, MADV_DONTFORK);
        } else if (fd >= 0) {
            close(fd);
            fd = -1;
        }
    } else {
        /* Checker mode, early-host-access: page-locked memory mapped twice. */
        if (ACLSIM_CHECKING(ACLSIM_CHECK_EARLY_HOST) && h == &aclsim__host_heap &&   /* checker hook */
            (alias_fd = memfd_create("aclsim-page-locked", MFD_CLOEXEC)) >= 0 &&
            (ftruncate(alias_fd, (off_t)reserve) != 0 ||
             (alias = mmap(NULL, reserve, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                           alias_fd, 0)) == MAP_FAILED)) {
            alias = NULL;   /* (then checked without it: no protection) */
            close(alias_fd);
            alias_fd = -1;
        }
        base = mmap(NULL, reserve, PROT_NONE,
                    alias_fd >= 0 ? MAP_SHARED | MAP_NORESERVE
                                  : MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, alias_fd, 0);
        if (base == MAP_FAILED && alias) {
            munmap(alias, reserve);
            close(alias_fd);
            alias = NULL;
            alias_fd = -1;
        }
    }
    *fd_out = fd;
    *alias_fd_out = alias_fd;
    *alias_out = alias;
    return base;
}

struct aclsim__span aclsim__device_span = {UINTPTR_MAX, 0};

/* Widens the span of device heap ranges to cover [lo, hi) (internal.h). */
static void widen_device_span(uintptr_t lo, uintptr_t hi)
{
    uintptr_t cur = atomic_load_explicit(&aclsim__device_span.lo, memory_order_relaxed);
    while (lo < cur && !atomic_compare_exchange_weak_explicit(&aclsim__device_span.lo, &cur, lo,
                                                              memory_order_relaxed,
                                                              memory_order_relaxed))
        ;
    cur = atomic_load_explicit(&aclsim__device_span.hi, memory_order_relaxed);
    while (hi > cur && !atomic_compare_exchange_weak_explicit(&aclsim__device_span.hi, &cur, hi,
                                                              memory_order_relaxed,
                                                              memory_order_relaxed))
        ;
}

/* Gives back what reserve_range made. */
static void unreserve_range(void *base, size_t reserve, int fd, char *alias, int alias_fd)
{
    munmap(base, reserve);
    if (fd >= 0)
        close(fd);
    if (alias) {
        munmap(alias, reserve);
        close(alias_fd);
    }
}

/* The window of h's next session (THE SESSION WINDOWS) in the range from
 * base, under its lock: after the hull the ended session used (kept as the
 * one to avoid; an empty hull keeps the older one), else at base. */
static void next_window(struct aclsim__heap *h, char *base)
{
    if (h->hull_lo < h->hull_hi) {
        h->avoid_lo = h->hull_lo;
        h->avoid_hi = h->hull_hi;
    }
    h->hull_lo = UINTPTR_MAX;
    h->hull_hi = 0;
    uintptr_t start = (uintptr_t)base, end = start + h->reserved;
    uintptr_t after = round_up(h->avoid_hi, 4096);
    if (h->avoid_hi > start && h->avoid_lo < end && after <= end && end - after >= h->window_size)
        start = after;   /* (else [base, avoid_lo) holds the window, or the hull is elsewhere) */
    __atomic_store_n(&h->window, start, __ATOMIC_RELAXED);
}

aclError aclsim__heap_init(struct aclsim__heap *h, size_t capacity, const char *api)
{
    if (__atomic_load_n(&h->base, __ATOMIC_ACQUIRE)) {
        if (h->capacity == capacity)
            return ACL_SUCCESS;   /* kept from before (see aclsim__heap_reset) */
        aclsim__heap_destroy(h);
    }
    /* Checker mode: room for guard zones, and for next fit to go a long
     * way before it wraps around. */
    size_t window = capacity;
    if (ACLSIM_UNLIKELY(aclsim__checking()) && capacity <= SIZE_MAX / 4)   /* checker hook */
        window = capacity + capacity / 2;
    window = round_up(window, 4096);
    /* The session windows; one window only if that much address space
     * cannot be had. */
    size_t reserve = window <= SIZE_MAX / WINDOWS ? window * WINDOWS : window;
    int fd = -1, alias_fd = -1;
    char *alias = NULL;
    void *base = reserve_range(h, reserve, &fd, &alias_fd, &alias);
    if (base == MAP_FAILED && reserve != window)
        base = reserve_range(h, reserve = window, &fd, &alias_fd, &alias);
    if (base == MAP_FAILED)
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "cannot reserve %zu bytes of address space", capacity);
    struct aclsim__extent *extents = aclsim__malloc(sizeof *extents * 8);
    if (!extents) {
        unreserve_range(base, reserve, fd, alias, alias_fd);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    }
    if (!h->lock_ready) {   /* once per process (see the top of this file) */
        pthread_rwlock_init(&h->lock, NULL);
        h->lock_ready = true;
    }
    /* Under the lock: a call of an earlier session may still look at the
     * (empty) heap. base and capacity are also read without it by
     * aclsim__heap_contains: written atomically, capacity before base. */
    pthread_rwlock_wrlock(&h->lock);
    h->generation++;
    h->used = h->committed = 0;
    memset(h->used_by_kind, 0, sizeof h->used_by_kind);
    memset(h->peak_by_kind, 0, sizeof h->peak_by_kind);
    h->allocs = NULL;
    h->nallocs = h->cap_allocs = 0;
    __atomic_store_n(&h->capacity, capacity, __ATOMIC_RELAXED);
    __atomic_store_n(&h->reserved, reserve, __ATOMIC_RELAXED);
    __atomic_store_n(&h->alias, alias, __ATOMIC_RELEASE);   /* (read without the lock) */
    h->alias_fd = alias_fd;
    h->free = extents;
    h->cap_free = 8;
    h->nfree = 1;
    h->fd = fd;
    __atomic_store_n(&h->window_size, window, __ATOMIC_RELAXED);
    if (h->shareable)   /* a device heap: aclsim__device_of's span covers it first */
        widen_device_span((uintptr_t)base, (uintptr_t)base + reserve);
    next_window(h, base);   /* (before base is published) */
    h->free[0] = (struct aclsim__extent){h->window, window};
    __atomic_store_n(&h->base, (char *)base, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&h->lock);
    return ACL_SUCCESS;
}

void aclsim__heap_reset(struct aclsim__heap *h)
{
    if (!__atomic_load_n(&h->base, __ATOMIC_ACQUIRE))
        return;
    pthread_rwlock_wrlock(&teardown_lock);
    pthread_rwlock_wrlock(&h->lock);
    for (size_t i = 0; i < h->nallocs; i++)
        if (ACLSIM_UNLIKELY(h->allocs[i].lead))   /* checker hook */
            aclsim__check_forget(h, &h->allocs[i], "discarded by a reset of its device");
    if (h->committed) {
        give_back(h, (void *)h->window, h->committed);
        mprotect((void *)h->window, h->committed, PROT_NONE);
    }
    h->committed = 0;
    next_window(h, h->base);
    h->generation++;
    h->used = 0;
    memset(h->used_by_kind, 0, sizeof h->used_by_kind);
    memset(h->peak_by_kind, 0, sizeof h->peak_by_kind);
    h->nallocs = 0;
    atomic_fetch_add_explicit(&h->frees, 1, memory_order_release);
    h->nfree = 1;
    h->free[0] = (struct aclsim__extent){h->window, h->window_size};
    pthread_rwlock_unlock(&h->lock);
    pthread_rwlock_unlock(&teardown_lock);
}

void aclsim__heap_destroy(struct aclsim__heap *h)
{
    if (!__atomic_load_n(&h->base, __ATOMIC_ACQUIRE))
        return;
    pthread_rwlock_wrlock(&teardown_lock);
    pthread_rwlock_wrlock(&h->lock);
    char *base = h->base;
    if (base) {
        __atomic_store_n(&h->base, NULL, __ATOMIC_RELEASE);
        atomic_fetch_add_explicit(&h->frees, 1, memory_order_release);
        char *alias = h->alias;
        __atomic_store_n(&h->alias, NULL, __ATOMIC_RELEASE);
        unreserve_range(base, h->reserved, h->fd, alias, h->alias_fd);
        h->fd = h->alias_fd = -1;
        free(h->allocs);
        free(h->free);
        h->allocs = NULL;
        h->free = NULL;
        h->nallocs = h->cap_allocs = h->nfree = h->cap_free = 0;
        h->used = h->committed = 0;
        h->generation++;
        h->cursor = 0;
        memset(h->used_by_kind, 0, sizeof h->used_by_kind);
    }
    pthread_rwlock_unlock(&h->lock);
    pthread_rwlock_unlock(&teardown_lock);
}

static bool grow(void **array, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = aclsim__realloc(*array, n * elem);
    if (!p)
        return false;
    *array = p;
    *cap = n;
    return true;
}

/* Index of the first allocation with addr > p. */
static size_t upper_bound(const struct aclsim__heap *h, uintptr_t p)
{
    size_t lo = 0, hi = h->nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->allocs[mid].addr <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void *aclsim__heap_alloc(struct aclsim__heap *h, size_t size, size_t align, int kind,
                         const aclsimVar *var)
{
    if (align < MIN_SPAN)
        align = MIN_SPAN;
    if (size > __atomic_load_n(&h->capacity, __ATOMIC_RELAXED))
        return NULL;
    size_t span = round_up(size ? size : 1, MIN_SPAN);
    /* Checker mode (check.c): guard zones before and after, and next fit. */
    size_t lead = 0;
    const char *site_api = NULL;
    const void *site = NULL;
    if (ACLSIM_UNLIKELY(aclsim__checking())) {   /* checker hook */
        bool paged = __atomic_load_n(&h->alias, __ATOMIC_ACQUIRE) != NULL;
        if (paged && align < 4096)   /* pages of its own, to protect (check-host.c) */
            align = 4096;
        lead = aclsim__check_lead(align);
        span = round_up(lead + size + ACLSIM_CHECK_TAIL, paged ? 4096 : MIN_SPAN);
        if (span < size)
            return NULL;
        site_api = aclsim__tls_site_api;
        site = aclsim__tls_site;
        aclsim__tls_site_api = NULL;
        aclsim__tls_site = NULL;
    }
    void *result = NULL;
    pthread_rwlock_wrlock(&h->lock);
    size_t charge = lead ? round_up(size ? size : 1, MIN_SPAN) : span;   /* guards are free */
    if (!h->base ||   /* destroyed meanwhile (aclFinalize) */
        h->used + charge > h->capacity ||
        !grow((void **)&h->allocs, &h->cap_allocs, h->nallocs + 1, sizeof *h->allocs) ||
        /* Free extents are maximal, so there is at most one between two
         * allocations: room for nallocs + 2 means frees never need memory. */
        !grow((void **)&h->free, &h->cap_free, h->nallocs + 2, sizeof *h->free))
        goto out;
    /* With guard zones (checker mode) the search starts at the cursor:
     * first the extents at or after it, then from the start. */
    size_t first = 0;
    if (lead)
        while (first < h->nfree && h->free[first].addr + h->free[first].size <= h->cursor)
            first++;
    /* (The extent holding the cursor is looked at twice: from the cursor,
     * and at the end from its start.) */
    for (size_t k = 0; k < h->nfree + (lead && h->nfree ? 1 : 0); k++) {
        size_t i = (first + k) % h->nfree;
        struct aclsim__extent e = h->free[i];
        uintptr_t from = e.addr;
        if (lead && k == 0 && h->cursor > e.addr && h->cursor < e.addr + e.size)
            from = h->cursor;
        uintptr_t a = round_up(from, align);
        if (a < e.addr || a - e.addr > e.size || e.size - (a - e.addr) < span)
            continue;
        size_t end = (a + span) - h->window;   /* (free extents lie in the window) */
        if (end > h->committed) {
            size_t want = round_up(end, COMMIT_STEP);
            if (want > h->window_size)
                want = h->window_size;
            if (mprotect((char *)h->window + h->committed, want - h->committed,
                         PROT_READ | PROT_WRITE))
                goto out;
            h->committed = want;
        }
        /* Split e into [e.addr, a) and [a + span, e.end). */
        uintptr_t tail = a + span, e_end = e.addr + e.size;
        if (a > e.addr && tail < e_end) {
            memmove(&h->free[i + 2], &h->free[i + 1], (h->nfree - i - 1) * sizeof *h->free);
            h->free[i] = (struct aclsim__extent){e.addr, a - e.addr};
            h->free[i + 1] = (struct aclsim__extent){tail, e_end - tail};
            h->nfree++;
        } else if (a > e.addr) {
            h->free[i].size = a - e.addr;
        } else if (tail < e_end) {
            h->free[i] = (struct aclsim__extent){tail, e_end - tail};
        } else {
            memmove(&h->free[i], &h->free[i + 1], (h->nfree - i - 1) * sizeof *h->free);
            h->nfree--;
        }
        size_t pos = upper_bound(h, a + lead);
        memmove(&h->allocs[pos + 1], &h->allocs[pos], (h->nallocs - pos) * sizeof *h->allocs);
        h->allocs[pos] = (struct aclsim__alloc){a + lead, size, span, (uint8_t)kind, var,
                                                (uint32_t)lead, site_api, site};
        h->nallocs++;
        if (a < h->hull_lo)   /* the session's hull (THE SESSION WINDOWS) */
            h->hull_lo = a;
        if (a + span > h->hull_hi)
            h->hull_hi = a + span;
        if (lead) {
            h->cursor = a + span;
            aclsim__check_poison(&h->allocs[pos]);
        }
        h->used += charge;
        h->used_by_kind[kind] += charge;
        if (h->used_by_kind[kind] > h->peak_by_kind[kind])
            h->peak_by_kind[kind] = h->used_by_kind[kind];
        result = (void *)(a + lead);
        break;
    }
out:
    pthread_rwlock_unlock(&h->lock);
    return result;
}

/* Returns [addr, addr + size) to the free extents, merging neighbours. */
static void release_extent(struct aclsim__heap *h, uintptr_t addr, size_t size)
{
    size_t lo = 0, hi = h->nfree;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->free[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool merge_prev = lo > 0 && h->free[lo - 1].addr + h->free[lo - 1].size == addr;
    bool merge_next = lo < h->nfree && addr + size == h->free[lo].addr;
    if (merge_prev && merge_next) {
        h->free[lo - 1].size += size + h->free[lo].size;
        memmove(&h->free[lo], &h->free[lo + 1], (h->nfree - lo - 1) * sizeof *h->free);
        h->nfree--;
    } else if (merge_prev) {
        h->free[lo - 1].size += size;
    } else if (merge_next) {
        h->free[lo].addr = addr;
        h->free[lo].size += size;
    } else {
        /* Room is guaranteed: alloc keeps cap_free >= nallocs + 1. */
        memmove(&h->free[lo + 1], &h->free[lo], (h->nfree - lo) * sizeof *h->free);
        h->free[lo] = (struct aclsim__extent){addr, size};
        h->nfree++;
    }
}

bool aclsim__heap_charge(struct aclsim__heap *h, int kind, size_t bytes, uint64_t *gen)
{
    if (!__atomic_load_n(&h->base, __ATOMIC_ACQUIRE))
        return false;
    bool ok = false;
    pthread_rwlock_wrlock(&h->lock);
    if (h->base && bytes <= h->capacity - h->used) {
        h->used += bytes;
        h->used_by_kind[kind] += bytes;
        if (h->used_by_kind[kind] > h->peak_by_kind[kind])
            h->peak_by_kind[kind] = h->used_by_kind[kind];
        *gen = h->generation;
        ok = true;
    }
    pthread_rwlock_unlock(&h->lock);
    return ok;
}

void aclsim__heap_uncharge(struct aclsim__heap *h, int kind, size_t bytes, uint64_t gen)
{
    if (!h->lock_ready)
        return;
    pthread_rwlock_wrlock(&h->lock);
    if (h->generation == gen && h->base) {   /* not reset or destroyed since */
        h->used -= bytes;
        h->used_by_kind[kind] -= bytes;
    }
    pthread_rwlock_unlock(&h->lock);
}

void aclsim__heap_usage(struct aclsim__heap *h, int kind, size_t *used, size_t *peak)
{
    *used = *peak = 0;
    if (!__atomic_load_n(&h->base, __ATOMIC_ACQUIRE))
        return;
    pthread_rwlock_rdlock(&h->lock);
    *used = h->used_by_kind[kind];
    *peak = h->peak_by_kind[kind];
    pthread_rwlock_unlock(&h->lock);
}

bool aclsim__heap_free(struct aclsim__heap *h, void *p, int kind)
{
    bool ok = false;
    pthread_rwlock_wrlock(&h->lock);
    size_t pos = upper_bound(h, (uintptr_t)p);
    if (pos > 0 && h->allocs[pos - 1].addr == (uintptr_t)p && h->allocs[pos - 1].kind == kind) {
        struct aclsim__alloc a = h->allocs[pos - 1];
        memmove(&h->allocs[pos - 1], &h->allocs[pos], (h->nallocs - pos) * sizeof *h->allocs);
        h->nallocs--;
        size_t charge = a.lead ? round_up(a.size ? a.size : 1, MIN_SPAN) : a.span;
        h->used -= charge;
        h->used_by_kind[a.kind] -= charge;
        atomic_fetch_add_explicit(&h->frees, 1, memory_order_release);
        uintptr_t start = a.addr - a.lead;   /* the guard zone's start (checker mode) */
        if (ACLSIM_UNLIKELY(a.lead))   /* checker hook */
            aclsim__check_forget(h, &a, "freed");
        if (a.span >= RELEASE_MIN || a.lead) {
            uintptr_t from = round_up(start, 4096), to = (start + a.span) & ~(uintptr_t)4095;
            if (to > from)
                give_back(h, (void *)from, to - from);
        }
        release_extent(h, start, a.span);
        ok = true;
    }
    pthread_rwlock_unlock(&h->lock);
    return ok;
}

void aclsim__heap_visit(struct aclsim__heap *h, void (*visit)(const struct aclsim__alloc *a,
                                                              void *arg), void *arg)
{
    /* base is published (release) after the lock was created: once it was
     * seen, the lock exists (and is never destroyed). */
    if (!__atomic_load_n(&h->base, __ATOMIC_ACQUIRE))
        return;
    pthread_rwlock_rdlock(&h->lock);
    for (size_t i = 0; i < h->nallocs; i++)
        visit(&h->allocs[i], arg);
    pthread_rwlock_unlock(&h->lock);
}

/* The allocations this thread found last, valid while their heap has had no free
 * since (frees counts them): repeated copies from one buffer, the common case,
 * then take no lock. */
static _Thread_local struct found {
    const struct aclsim__heap *heap;
    uint64_t frees;
    struct aclsim__alloc alloc;
} last_found[2];   /* two: a copy looks up its destination and its source */
static _Thread_local unsigned last_found_next;

bool aclsim__heap_find(struct aclsim__heap *h, const void *p, struct aclsim__alloc *out)
{
    uint64_t frees = atomic_load_explicit(&h->frees, memory_order_acquire);
    for (int i = 0; i < 2; i++) {
        const struct found *f = &last_found[i];
        if (f->heap == h && f->frees == frees && (uintptr_t)p - f->alloc.addr < f->alloc.size) {
            *out = f->alloc;
            return true;
        }
    }
    bool found = false;
    pthread_rwlock_rdlock(&h->lock);
    size_t pos = upper_bound(h, (uintptr_t)p);
    if (pos > 0) {
        const struct aclsim__alloc *a = &h->allocs[pos - 1];
        if ((uintptr_t)p - a->addr < a->size) {
            *out = *a;
            found = true;
        }
    }
    pthread_rwlock_unlock(&h->lock);
    if (found) {
        struct found *f = &last_found[last_found_next++ & 1];
        f->heap = h;
        f->frees = frees;
        f->alloc = *out;
    }
    return found;
}

/* Right after fork(), in the child: a shareable heap's range was not
 * inherited (MADV_DONTFORK), so the hole is filled at once with reserved,
 * inaccessible private space, before anything else can be mapped there
 * (aclsim__heap_destroy unmaps the range later), and the memfd is closed. */
void aclsim__heap_unshare_after_fork(struct aclsim__heap *h)
{
    if (!h->base || h->fd < 0)
        return;
    mmap(h->base, h->reserved, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    close(h->fd);
    h->fd = -1;
    h->committed = 0;
}

/* After fork(), in the child (internal.h, THE FORK RULE): a new lock, so
 * that the heap can be reset or destroyed. */
void aclsim__heap_forget_after_fork(struct aclsim__heap *h)
{
    if (h->lock_ready)
        pthread_rwlock_init(&h->lock, NULL);
    pthread_rwlock_init(&teardown_lock, NULL);
}
