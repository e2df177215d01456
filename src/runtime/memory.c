/*
 * Device and page-locked host memory, copies and memset.
 *
 * Every pointer is one of: device d memory (inside device d's heap), page-
 * locked host memory (inside the host heap), or ordinary host memory
 * (anything else). Copies check that `kind` agrees with where the pointers
 * really are and that device and page-locked ranges lie inside one live
 * allocation. Synchronous copies run on the calling thread; asynchronous ones
 * are stream tasks, and with ordinary host memory the call waits for its task.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

struct aclsim__heap aclsim__host_heap;
static pthread_mutex_t host_heap_lock = PTHREAD_MUTEX_INITIALIZER;
static bool host_heap_closed;   /* aclFinalize destroyed it (under host_heap_lock) */

#define PARALLEL_COPY_MIN ((size_t)8 << 20)   /* split larger async copies across workers */

struct aclsim__where aclsim__classify(const void *p)
{
    struct aclsim__device *dev = aclsim__device_of(p);
    if (dev)
        return (struct aclsim__where){ACLSIM_DEVICE, dev};
    if (aclsim__heap_contains(&aclsim__host_heap, p))
        return (struct aclsim__where){ACLSIM_PINNED, NULL};
    if (atomic_load_explicit(&aclsim__ranges_count, memory_order_acquire))
        return aclsim__ranges_classify(p);   /* virtual, managed, registered (ranges.c) */
    return (struct aclsim__where){ACLSIM_HOST, NULL};
}

static struct aclsim__heap *heap_of(struct aclsim__where w)
{
    return w.kind == ACLSIM_DEVICE ? &w.device->heap
           : w.kind == ACLSIM_PINNED ? &aclsim__host_heap : NULL;
}

/* Synchronous copies and sets move bytes on the caller's thread. A device
 * reset or aclFinalize racing them frees or unmaps memory, so they hold the
 * heaps' teardown lock (heap.c) shared from their range checks to the end of
 * the move. A heap destroyed before it was taken means aclFinalize ran:
 * 100001. */
aclError aclsim__hold_heaps(const char *api, struct aclsim__heap_hold *hold, const void *a,
                            const void *b)
{
    hold->n = 0;
    hold->ranges = false;
    const void *ps[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        struct aclsim__where w = ps[i] ? aclsim__classify(ps[i]) : (struct aclsim__where){0};
        /* Reserved, managed, registered memory: the registry's lock (ranges.c),
         * taken before the heaps' teardown lock. */
        if (ps[i] && w.kind != ACLSIM_HOST && !heap_of(w) && !hold->ranges) {
            aclsim__ranges_hold();
            hold->ranges = true;
        }
        struct aclsim__heap *h = ps[i] ? heap_of(w) : NULL;
        if (h)
            hold->h[hold->n++] = h;
    }
    aclsim__heaps_hold();
    for (int i = 0; i < hold->n; i++)
        if (!__atomic_load_n(&hold->h[i]->base, __ATOMIC_ACQUIRE)) {
            aclsim__release_heaps(hold);
            return aclsim__not_initialized(api);
        }
    return ACL_SUCCESS;
}

void aclsim__release_heaps(struct aclsim__heap_hold *hold)
{
    if (hold->n >= 0)
        aclsim__heaps_release();
    hold->n = -1;
    if (hold->ranges)
        aclsim__ranges_unhold();
    hold->ranges = false;
}

void aclsim__describe(const void *p, char *buf, size_t len)
{
    struct aclsim__where w = aclsim__classify(p);
    struct aclsim__heap *h = w.kind == ACLSIM_DEVICE ? &w.device->heap
                             : w.kind == ACLSIM_PINNED ? &aclsim__host_heap : NULL;
    struct aclsim__alloc a;
    if (!h && w.kind != ACLSIM_HOST) {
        aclsim__ranges_describe(p, buf, len);
        return;
    }
    if (!h) {
        snprintf(buf, len, "ordinary host memory");
        return;
    }
    int n = w.kind == ACLSIM_DEVICE ? snprintf(buf, len, "device %d memory", w.device->id)
                                    : snprintf(buf, len, "page-locked host memory");
    bool found = aclsim__heap_find(h, p, &a);
    if (!found && !aclsim__heap_in_window(h, p))
        snprintf(buf + n, len - (size_t)n, " outside any live allocation, and outside the range "
                 "this session allocates from: a pointer from before %s",
                 w.kind == ACLSIM_DEVICE ? "a reset of the device or aclFinalize" : "aclFinalize");
    else if (!found)
        snprintf(buf + n, len - (size_t)n, " outside any live allocation");
    else if (a.kind == ACLSIM_ALLOC_SYMBOL)
        snprintf(buf + n, len - (size_t)n, " (offset %zu of device variable %s, %zu bytes, %s:%d)",
                 (size_t)((uintptr_t)p - a.addr), a.var->name, a.size, a.var->file, a.var->line);
    else
        snprintf(buf + n, len - (size_t)n, " (offset %zu of the %zu-byte allocation at %p)",
                 (size_t)((uintptr_t)p - a.addr), a.size, (void *)a.addr);
}

void aclsim__memory_finalize(void)
{
    pthread_mutex_lock(&host_heap_lock);
    aclsim__heap_destroy(&aclsim__host_heap);
    host_heap_closed = true;   /* until the next aclInit (aclsim__memory_open) */
    pthread_mutex_unlock(&host_heap_lock);
}

void aclsim__memory_open(void)
{
    pthread_mutex_lock(&host_heap_lock);
    host_heap_closed = false;
    pthread_mutex_unlock(&host_heap_lock);
}

/* ---- allocation ------------------------------------------------------------ */

static size_t alignment_for(size_t size) { return size >= 4096 ? 4096 : 64; }

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    static const char api[] = "aclrtMalloc";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_CHECK_SITE(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!devPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    unsigned p = (unsigned)policy;
    if ((p & 0xffu) > ACL_MEM_MALLOC_HUGE1G_ONLY_P2P ||
        (p & ~(0xffu | ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH |
               ACL_MEM_ACCESS_USER_SPACE_READONLY)))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "policy 0x%x is not an aclrtMemMallocPolicy value", p);
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    return err ? err : aclsim__device_alloc(api, ctx, devPtr, size);
}

aclError aclsim__device_alloc(const char *api, struct aclsim__context *ctx, void **devPtr,
                              size_t size)
{
    struct aclsim__heap *h = &aclsim__context_device(ctx)->heap;
    void *ptr = aclsim__heap_alloc(h, size, alignment_for(size), ACLSIM_ALLOC_MALLOC, NULL);
    if (!ptr && (!aclsim__initialized() || !__atomic_load_n(&h->base, __ATOMIC_ACQUIRE)))
        return aclsim__not_initialized(api);   /* aclFinalize destroyed the heap meanwhile */
    if (!ptr) {
        pthread_rwlock_rdlock(&h->lock);
        size_t free_bytes = h->capacity - h->used;
        pthread_rwlock_unlock(&h->lock);
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "device %d cannot allocate %zu bytes: %zu of %zu bytes free",
                            aclsim__context_device(ctx)->id, size, free_bytes, h->capacity);
    }
    *devPtr = ptr;
    return ACL_SUCCESS;
}

aclError aclrtFree(void *devPtr)
{
    static const char api[] = "aclrtFree";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!devPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    struct aclsim__where w = aclsim__classify(devPtr);
    if (w.kind == ACLSIM_DEVICE)
        aclsim__ipc_memory_freed(devPtr);   /* its IPC exports close (ipc.c), also when the
                                             * checker defers the free below */
    aclError err;
    if (ACLSIM_UNLIKELY(aclsim__checking()) && w.kind == ACLSIM_DEVICE &&   /* checker hook */
        aclsim__check_free(api, &w.device->heap, devPtr, ACLSIM_ALLOC_MALLOC, &err))
        return err;
    if (w.kind == ACLSIM_DEVICE && aclsim__heap_free(&w.device->heap, devPtr, ACLSIM_ALLOC_MALLOC))
        return ACL_SUCCESS;
    if (w.kind == ACLSIM_MANAGED && aclsim__managed_free(devPtr))   /* managed.c */
        return ACL_SUCCESS;
    char what[256];
    aclsim__describe(devPtr, what, sizeof what);
    return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                        "devPtr %p is not the start of a live aclrtMalloc allocation: it is %s",
                        devPtr, what);
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    static const char api[] = "aclrtMallocHost";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_CHECK_SITE(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!hostPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "hostPtr is NULL");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    return aclsim__host_alloc(api, hostPtr, size);
}

aclError aclsim__host_alloc(const char *api, void **hostPtr, size_t size)
{
    /* Under host_heap_lock, which aclFinalize takes to destroy the heap: a
     * call racing it either allocates before or finds the session closed. */
    pthread_mutex_lock(&host_heap_lock);
    aclError err = ACL_SUCCESS;
    if (host_heap_closed) {
        pthread_mutex_unlock(&host_heap_lock);
        return aclsim__not_initialized(api);
    }
    if (!aclsim__host_heap.base) {
        /* Page-locked memory can at most be all of RAM. */
        size_t ram = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
        err = aclsim__heap_init(&aclsim__host_heap, ram, api);
    }
    void *p = err ? NULL : aclsim__heap_alloc(&aclsim__host_heap, size, alignment_for(size),
                                              ACLSIM_ALLOC_HOST, NULL);
    pthread_mutex_unlock(&host_heap_lock);
    if (err)
        return err;
    if (!p)
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "cannot allocate %zu bytes of page-locked host memory", size);
    *hostPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFreeHost(void *hostPtr)
{
    static const char api[] = "aclrtFreeHost";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!hostPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "hostPtr is NULL");
    aclError err;
    if (ACLSIM_UNLIKELY(aclsim__checking()) &&   /* checker hook */
        aclsim__heap_contains(&aclsim__host_heap, hostPtr) &&
        aclsim__check_free(api, &aclsim__host_heap, hostPtr, ACLSIM_ALLOC_HOST, &err))
        return err;
    if (aclsim__heap_contains(&aclsim__host_heap, hostPtr) &&
        aclsim__heap_free(&aclsim__host_heap, hostPtr, ACLSIM_ALLOC_HOST))
        return ACL_SUCCESS;
    char what[256];
    aclsim__describe(hostPtr, what, sizeof what);
    return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                        "hostPtr %p is not the start of a live aclrtMallocHost allocation: it is %s",
                        hostPtr, what);
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
{
    static const char api[] = "aclrtGetMemInfo";
    ACLSIM_REQUIRE_INIT(api);
    if (!free || !total)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !free ? "free" : "total");
    if ((unsigned)attr > ACL_MEM_P2P_HUGE1G)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "attr %d is not an aclrtMemAttr value",
                            (int)attr);
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    switch (attr) {
    case ACL_DDR_MEM: case ACL_DDR_MEM_HUGE: case ACL_DDR_MEM_NORMAL:
    case ACL_DDR_MEM_P2P_HUGE: case ACL_DDR_MEM_P2P_NORMAL: {
        /* DDR is the host's memory here. */
        struct sysinfo si;
        sysinfo(&si);
        *total = (size_t)si.totalram * si.mem_unit;
        *free = (size_t)si.freeram * si.mem_unit;
        return ACL_SUCCESS;
    }
    default: {   /* HBM, and the generic ACL_MEM_* kinds: the device's memory */
        struct aclsim__heap *h = &aclsim__context_device(ctx)->heap;
        pthread_rwlock_rdlock(&h->lock);
        *total = h->capacity;
        *free = h->capacity - h->used;
        pthread_rwlock_unlock(&h->lock);
        return ACL_SUCCESS;
    }
    }
}

/* ---- copies ------------------------------------------------------------------ */

static const char *kind_name(int kind)
{
    static const char *const names[] = {
        "ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE", "ACL_MEMCPY_DEVICE_TO_HOST",
        "ACL_MEMCPY_DEVICE_TO_DEVICE", "ACL_MEMCPY_DEFAULT", "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
        "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE", "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE"};
    return kind >= 0 && kind <= 7 ? names[kind] : "?";
}

aclError aclsim__check_range(const char *api, const char *name, const void *p, size_t n,
                             struct aclsim__where w)
{
    struct aclsim__heap *h = w.kind == ACLSIM_DEVICE ? &w.device->heap
                             : w.kind == ACLSIM_PINNED ? &aclsim__host_heap : NULL;
    if (!h)
        return w.kind == ACLSIM_HOST ? ACL_SUCCESS : aclsim__ranges_check(api, name, p, n, w);
    struct aclsim__alloc a;
    if (!aclsim__heap_find(h, p, &a)) {
        char what[256], stale[800] = "";
        aclsim__describe(p, what, sizeof what);
        if (ACLSIM_UNLIKELY(aclsim__checking()))   /* checker hook: what was there */
            aclsim__check_describe_stale(p, stale, sizeof stale);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%s %p is %s (freed, or never allocated)%s", name, p, what, stale);
    }
    size_t room = a.size - (size_t)((uintptr_t)p - a.addr);
    if (n > room) {
        char what[256];
        aclsim__describe(p, what, sizeof what);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%s range of %zu bytes at %p overruns its allocation by %zu bytes: "
                            "%p is %s", name, n, p, n - room, p, what);
    }
    return ACL_SUCCESS;
}

static bool is_host(struct aclsim__where w)
{
    return w.kind == ACLSIM_HOST || w.kind == ACLSIM_PINNED || w.kind == ACLSIM_REGISTERED;
}

aclError aclsim__check_copy(const char *api, void *dst, const void *src, size_t count, int kind,
                           struct aclsim__where *wd, struct aclsim__where *ws)
{
    if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "kind %d is not an aclrtMemcpyKind value", kind);
    *wd = aclsim__classify(dst);
    *ws = aclsim__classify(src);
    const char *bad = NULL;   /* which pointer disagrees with kind */
    bool want_dst_dev, want_src_dev;
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: want_src_dev = false; want_dst_dev = false; break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: want_src_dev = false; want_dst_dev = true; break;
    case ACL_MEMCPY_DEVICE_TO_HOST: want_src_dev = true; want_dst_dev = false; break;
    case ACL_MEMCPY_DEFAULT: want_src_dev = !is_host(*ws); want_dst_dev = !is_host(*wd); break;
    default: want_src_dev = true; want_dst_dev = true; break;
    }
    if (want_src_dev == is_host(*ws) && ws->kind != ACLSIM_MANAGED)   /* managed: both */
        bad = "src";
    else if (want_dst_dev == is_host(*wd) && wd->kind != ACLSIM_MANAGED)
        bad = "dst";
    if (bad) {
        const void *p = bad[0] == 's' ? src : dst;
        char what[256];
        aclsim__describe(p, what, sizeof what);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "kind is %s but %s %p is %s (%s memory expected)", kind_name(kind),
                            bad, p, what, (bad[0] == 's' ? want_src_dev : want_dst_dev)
                                              ? "device" : "host");
    }
    bool devices = wd->device && ws->device;   /* managed memory has none */
    if (devices && kind == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE && wd->device != ws->device)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "kind is %s but src is on device %d and dst on device %d",
                            kind_name(kind), ws->device->id, wd->device->id);
    if (devices && kind == ACL_MEMCPY_INTER_DEVICE_TO_DEVICE && wd->device == ws->device)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "kind is %s but src and dst are both on device %d",
                            kind_name(kind), ws->device->id);
    aclError err = aclsim__check_range(api, "dst", dst, count, *wd);
    if (!err)
        err = aclsim__check_range(api, "src", src, count, *ws);
    if (!err && ACLSIM_UNLIKELY(aclsim__checking()))   /* checker hook: another device's memory */
        err = aclsim__check_devices(api, dst, *wd, src, *ws, kind);
    return err;
}

/* Copies that may overlap (same allocation) must not use memcpy. */
static void copy_bytes(void *dst, const void *src, size_t n)
{
    if ((const char *)dst < (const char *)src + n && (const char *)src < (const char *)dst + n)
        memmove(dst, src, n);
    else
        memcpy(dst, src, n);
}

struct copy_job {
    struct aclsim__job job;
    char *dst;
    const char *src;
    size_t n, chunk;
};

static void copy_chunk(struct aclsim__job *job, uint32_t i)
{
    struct copy_job *c = (struct copy_job *)job;
    size_t off = (size_t)i * c->chunk;
    size_t len = c->n - off < c->chunk ? c->n - off : c->chunk;
    memcpy(c->dst + off, c->src + off, len);
}

void aclsim__execute_copy(struct aclsim__stream *s, void *dst, const void *src, size_t n)
{
    if (n < PARALLEL_COPY_MIN) {   /* (every small copy: nothing else to decide) */
        copy_bytes(dst, src, n);
        return;
    }
    struct aclsim__device *dev = s->device;
    bool overlap = (const char *)dst < (const char *)src + n && (const char *)src < (const char *)dst + n;
    uint32_t cpus = atomic_load_explicit(&aclsim__cpus, memory_order_relaxed);
    uint32_t shares = dev->nworkers < cpus ? dev->nworkers : cpus;
    if (shares < 2 || overlap) {
        copy_bytes(dst, src, n);
        return;
    }
    /* One share per thread that can copy at the same time, each one memcpy
     * call: the call a thread of a split memcpy makes, so glibc chooses the
     * same strategy for it (non-temporal stores from about 100 MiB a call on
     * this machine: 2 MiB chunks lost them at 256 MiB). The host thread
     * waiting on s takes a share as soon as the job is open (THE HELP RULE),
     * so the copy does not wait for a second worker to wake up. */
    size_t chunk = ((n + shares - 1) / shares + 4095) & ~(size_t)4095;
    struct copy_job c = {.dst = dst, .src = src, .n = n, .chunk = chunk};
    c.job.run = copy_chunk;
    c.job.count = (uint32_t)((n + chunk - 1) / chunk);
    c.job.host_stream = s;
    aclsim__run_job(dev, &c.job);
}

/* Queues a copy on s; with ordinary host memory waits for it (CANN semantics). */
aclError aclsim__copy_async(struct aclsim__sref s, void *dst, const void *src, size_t count,
                            bool pageable, const char *label, const char *api)
{
    if (ACLSIM_UNLIKELY(pageable && s.s == aclsim__tls_stream))
        return aclsim__refuse_self_wait(api, "this stream (a copy with ordinary host memory "
                                             "waits for the stream)");
    struct aclsim__task t = {.kind = ACLSIM_TASK_COPY, .bytes = count, .label = label,
                             .u.copy = {dst, src}};
    return aclsim__submit_maybe_wait(s, &t, pageable, "copy", api);
}

aclError aclsim__submit_maybe_wait(struct aclsim__sref s, struct aclsim__task *task, bool wait,
                                   const char *what, const char *api)
{
    /* A waiting caller learns from ran whether its task was done or
     * discarded (stream abort, force reset, aclFinalize). */
    atomic_bool ran = false;
    task->ran = wait ? &ran : NULL;
    uint64_t seq = 0;
    aclError err = aclsim__submit(s, task, api, &seq);
    if (err || !wait)
        return err;
    aclsim__stream_wait(s.s, seq, -1);
    if (!atomic_load_explicit(&ran, memory_order_acquire))
        return aclsim__fail(ACL_ERROR_RT_STREAM_ABORT, api,
                            "the %s of %zu bytes was discarded before it ran: its stream's work "
                            "was discarded (aclrtStreamAbort, aclrtResetDeviceForce or aclFinalize) "
                            "while this call waited", what, task->bytes);
    return ACL_SUCCESS;
}

/* The argument checks both copies start with (count 0 is handled before). */
static aclError check_copy_args(const char *api, const void *dst, size_t destMax,
                                const void *src, size_t count)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!dst || !src)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !dst ? "dst" : "src");
    if (count > destMax)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "count %zu is larger than destMax %zu", count, destMax);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind)
{
    static const char api[] = "aclrtMemcpy";
    if (count == 0)
        return ACL_SUCCESS;
    aclError err = check_copy_args(api, dst, destMax, src, count);
    if (!err)
        err = aclsim__snapshot_check(api);
    if (err)
        return err;
    struct aclsim__context *ctx = NULL;
    err = aclsim__current_context(api, &ctx);
    if (!err)
        err = aclsim__capture_mode_check(api);   /* 107030 during a capture (modelri-capture.c) */
    struct aclsim__heap_hold hold;
    if (err || (err = aclsim__hold_heaps(api, &hold, dst, src)))
        return err;
    struct aclsim__where wd, ws;
    err = aclsim__check_copy(api, dst, src, count, (int)kind, &wd, &ws);
    if (!err)
        err = aclsim__peer_copy_check(api, wd.device, ws.device);
    if (!err) {
        aclError unwritten = ACLSIM_UNLIKELY(aclsim__checking())   /* checker hook */
                                 ? aclsim__check_copy_sync(api, src, count) : ACL_SUCCESS;
        uint64_t trace_start = aclsim__trace_start();   /* TRACE HOOK (with the call below) */
        bool guard = aclsim__memory_write_begin();   /* memory waits (wait.c) */
        copy_bytes(dst, src, count);
        aclsim__memory_write_end(guard);
        if (ACLSIM_UNLIKELY(trace_start))
            aclsim__trace_sync_copy(api, dst, src, count, NULL, trace_start);
        err = unwritten;   /* reported, and copied all the same */
    }
    aclsim__release_heaps(&hold);
    return err;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream)
{
    static const char api[] = "aclrtMemcpyAsync";
    if (count == 0)
        return ACL_SUCCESS;
    aclError err = check_copy_args(api, dst, destMax, src, count);
    if (err)
        return err;
    struct aclsim__sref s;
    err = aclsim__stream_resolve(stream, api, NULL, &s);
    struct aclsim__where wd, ws;
    if (!err)
        err = aclsim__check_copy(api, dst, src, count, (int)kind, &wd, &ws);
    if (err)
        return err;
    bool pageable = wd.kind == ACLSIM_HOST || ws.kind == ACLSIM_HOST;
    return aclsim__copy_async(s, dst, src, count, pageable, NULL, api);
}

static aclError check_memset(const char *api, void *devPtr, size_t maxCount, size_t count,
                             struct aclsim__where *w)
{
    if (!devPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    if (count > maxCount)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "count %zu is larger than maxCount %zu", count, maxCount);
    *w = aclsim__classify(devPtr);
    if (w->kind == ACLSIM_HOST)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "devPtr %p is ordinary host memory (device or aclrtMallocHost "
                            "memory expected)", devPtr);
    aclError err = aclsim__check_range(api, "devPtr", devPtr, count, *w);
    if (!err && ACLSIM_UNLIKELY(aclsim__checking()))   /* checker hook: another device's memory */
        err = aclsim__check_devices(api, devPtr, *w, NULL, (struct aclsim__where){0}, -1);
    return err;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    static const char api[] = "aclrtMemset";
    if (count == 0)
        return ACL_SUCCESS;
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    struct aclsim__heap_hold hold;
    /* 107030 during a capture (modelri-capture.c) */
    aclError err = aclsim__capture_mode_check(api);
    if (err || (err = aclsim__hold_heaps(api, &hold, devPtr, NULL)))
        return err;
    struct aclsim__where w;
    err = check_memset(api, devPtr, maxCount, count, &w);
    if (!err) {
        bool guard = aclsim__memory_write_begin();   /* memory waits (wait.c) */
        memset(devPtr, value, count);
        aclsim__memory_write_end(guard);
    }
    aclsim__release_heaps(&hold);
    return err;
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream)
{
    static const char api[] = "aclrtMemsetAsync";
    if (count == 0)
        return ACL_SUCCESS;
    ACLSIM_REQUIRE_INIT(api);
    struct aclsim__where w;
    aclError err = check_memset(api, devPtr, maxCount, count, &w);
    struct aclsim__sref s;
    if (!err)
        err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (err)
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_MEMSET, .bytes = count,
                             .u.memset = {devPtr, value}};
    return aclsim__submit(s, &t, api, NULL);
}

/* After fork(), in the child (internal.h, THE FORK RULE): new locks, before
 * aclsim__memory_finalize unmaps the inherited page-locked memory. */
void aclsim__memory_forget_after_fork(void)
{
    pthread_mutex_init(&host_heap_lock, NULL);
    aclsim__heap_forget_after_fork(&aclsim__host_heap);
}
