/*
 * Stream-ordered memory pools (CANN chapter 11-10, acl/acl_rt_memory_soma.h).
 *
 * A pool hands out blocks of its device's memory (heap allocations of kind
 * ACLSIM_ALLOC_POOL, sizes rounded up to 2 MiB). aclrtMemPoolMallocAsync
 * returns its address at once; aclrtMemPoolFreeAsync gives the block back to
 * the pool at once but queues a task on its stream that marks the block idle
 * when the stream reaches it: until then the work queued before the free may
 * still use it. A block given back is *cached*: it keeps its memory and can be
 * handed out again, to
 *  - an allocation on the stream that freed it (stream order makes that safe),
 *  - with REUSE_FOLLOW_EVENT_DEPENDENCIES, an allocation on a stream that has
 *    queued a wait for an event recorded on the freeing stream after the free,
 *  - with REUSE_ALLOW_OPPORTUNISTIC, any allocation once the free has run,
 *  - with REUSE_ALLOW_INTERNAL_DEPENDENCIES, any allocation: the runtime then
 *    queues on the allocating stream a wait for the free to have run.
 * The closest size wins. Cached memory goes back to the device only when idle
 * (its free ran): at aclrtMemPoolTrimTo, at a synchronize while the pool's
 * idle memory exceeds ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, or when an
 * allocation needs room. aclrtMemPoolFreeAsync of aclrtMalloc memory frees it
 * when the stream reaches the free, as CANN does.
 *
 * One lock (pools_lock) guards every pool, block and the dependency tables.
 * Lock order: pools_lock -> stream locks (submitting), pools_lock -> heap
 * locks. The tasks' signal functions take pools_lock on the worker.
 */
#include "internal.h"
#include "acl/acl_rt_memory_soma.h"

#include <stdlib.h>
#include <string.h>

#define POOL_SOCS ACLSIM_FAMILIES(A2)
#define BLOCK_ALIGN ((size_t)2 << 20)   /* CANN's DEVICE_POOL_MIN_BLOCK_SIZE */

struct pool;
struct block {
    struct block *next;
    struct pool *pool;
    char *addr;
    size_t size;
    bool busy;
    /* While cached: the stream that freed it (and its epoch) and the
     * sequence number of the free task there. */
    struct aclsim__stream *stream;
    uint32_t epoch;
    uint64_t free_seq;
    uint64_t free_gen;               /* frees so far (under pools_lock) */
    _Atomic uint64_t ran_gen;        /* frees whose task ran (or was discarded) */
};

struct pool {
    struct pool *next;
    void *handle;                    /* NULL once destroyed */
    struct aclsim__device *device;
    size_t max;
    size_t reserved, used, reserved_high, used_high;
    uint64_t threshold;
    uint32_t reuse_event, reuse_opportunistic, reuse_internal;
    struct block *blocks;
};

static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool *pools;           /* live pools, and destroyed ones with pending frees */
static atomic_uint npools;           /* live pools: the hooks' fast path */

/* ---- event dependencies --------------------------------------------------- */

struct stream_id { struct aclsim__stream *s; uint32_t epoch; };
struct record_note { const void *event; struct stream_id on; uint64_t seq, recno; };
struct dep_note { struct stream_id waiter, on; uint64_t seq; };
#define NOTES_MAX 4096   /* beyond this the older half is forgotten (less reuse, never unsafe) */
static struct record_note *records;
static size_t nrecords, cap_records;
static struct dep_note *deps;
static size_t ndeps, cap_deps;

/* A stream as the call resolved it (a struct recycled since has a new epoch). */
static struct stream_id id_of(struct aclsim__sref s)
{
    return (struct stream_id){s.s, s.epoch};
}

static bool same_stream(struct stream_id a, struct stream_id b)
{
    return a.s == b.s && a.epoch == b.epoch;
}

/* Makes room for one more note in an array of n (cap) of size sz. */
static bool note_room(void **arr, size_t *n, size_t *cap, size_t sz)
{
    if (*n >= NOTES_MAX) {
        memmove(*arr, (char *)*arr + (*n / 2) * sz, (*n - *n / 2) * sz);
        *n -= *n / 2;
    }
    if (*n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 32;
    void *p = aclsim__realloc(*arr, ncap * sz);
    if (!p)
        return false;   /* the note is lost: no reuse through it */
    *arr = p;
    *cap = ncap;
    return true;
}

void aclsim__mempool_note_record(const void *event_handle, struct aclsim__sref s, uint64_t seq,
                                 uint64_t recno)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&npools, memory_order_relaxed)))
        return;
    struct record_note r = {event_handle, id_of(s), seq, recno};
    pthread_mutex_lock(&pools_lock);
    size_t i = 0;
    while (i < nrecords && records[i].event != event_handle)
        i++;
    if (i < nrecords)
        records[i] = r;
    else if (note_room((void **)&records, &nrecords, &cap_records, sizeof *records))
        records[nrecords++] = r;
    pthread_mutex_unlock(&pools_lock);
}

void aclsim__mempool_note_wait(struct aclsim__sref s, const void *event_handle, uint64_t recno)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&npools, memory_order_relaxed)))
        return;
    struct stream_id waiter = id_of(s);
    pthread_mutex_lock(&pools_lock);
    for (size_t i = 0; i < nrecords; i++) {
        if (records[i].event != event_handle || records[i].recno != recno)
            continue;   /* another record than the one waited for: learn nothing */
        struct dep_note d = {waiter, records[i].on, records[i].seq};
        size_t j = 0;
        while (j < ndeps && !(same_stream(deps[j].waiter, waiter) && same_stream(deps[j].on, d.on)))
            j++;
        if (j < ndeps) {
            if (deps[j].seq < d.seq)
                deps[j].seq = d.seq;
        } else if (note_room((void **)&deps, &ndeps, &cap_deps, sizeof *deps)) {
            deps[ndeps++] = d;
        }
        break;
    }
    pthread_mutex_unlock(&pools_lock);
}

/* Whether waiter has queued a wait for a record queued on `on` after its
 * task seq. Under pools_lock. */
static bool waited_after(struct stream_id waiter, struct stream_id on, uint64_t seq)
{
    for (size_t j = 0; j < ndeps; j++)
        if (same_stream(deps[j].waiter, waiter) && same_stream(deps[j].on, on))
            return deps[j].seq > seq;
    return false;
}

/* ---- blocks ------------------------------------------------------------------ */

static bool idle(struct block *b)
{
    return !b->busy && atomic_load_explicit(&b->ran_gen, memory_order_acquire) == b->free_gen;
}

static void unlink_block(struct pool *p, struct block *b)
{
    struct block **pp = &p->blocks;
    while (*pp != b)
        pp = &(*pp)->next;
    *pp = b->next;
}

/* Gives an idle cached block's memory back to the device. Under pools_lock. */
static void release_block(struct pool *p, struct block *b)
{
    unlink_block(p, b);
    p->reserved -= b->size;
    aclsim__heap_free(&p->device->heap, b->addr, ACLSIM_ALLOC_POOL);
    free(b);
}

/* Releases idle cached blocks, smallest first, while keep says more must
 * go (reserved > keep, or the idle bytes > keep with idle_only). */
static void release_idle(struct pool *p, size_t keep, bool idle_only)
{
    for (;;) {
        size_t over = idle_only ? p->reserved - p->used : p->reserved;
        if (over <= keep)
            return;
        struct block *best = NULL;
        for (struct block *b = p->blocks; b; b = b->next)
            if (idle(b) && (!best || b->size < best->size))
                best = b;
        if (!best)
            return;
        release_block(p, best);
    }
}

static void free_pool(struct pool *p)
{
    struct pool **pp = &pools;
    while (*pp != p)
        pp = &(*pp)->next;
    *pp = p->next;
    free(p);
}

/* The free task: the stream reached aclrtMemPoolFreeAsync (or discarded it:
 * the work before it is over either way). */
static void free_reached(struct aclsim__task *t, bool discarded)
{
    (void)discarded;
    struct block *b = t->u.sync.obj;
    pthread_mutex_lock(&pools_lock);
    bool guard = aclsim__memory_write_begin();   /* internal-dependency waits look again */
    atomic_store_explicit(&b->ran_gen, t->u.sync.value, memory_order_release);
    aclsim__memory_write_end(guard);
    struct pool *p = b->pool;
    if (!p->handle && idle(b)) {   /* the pool was destroyed meanwhile */
        release_block(p, b);
        if (!p->blocks)
            free_pool(p);
    }
    pthread_mutex_unlock(&pools_lock);
}

static const struct aclsim__wait_ops free_ops = {.what = "a memory pool free",
                                                 .signal = free_reached};

/* An allocation reusing a block another stream freed without a dependency
 * (REUSE_ALLOW_INTERNAL_DEPENDENCIES): its stream waits for that free. */
static bool reuse_poll(struct aclsim__task *t)
{
    const struct block *b = t->u.sync.obj;
    return atomic_load_explicit(&b->ran_gen, memory_order_acquire) >= t->u.sync.value;
}

static bool reuse_ready(struct aclsim__task *t) { return aclsim__memory_check(t); }

static bool reuse_park(struct aclsim__task *t, struct aclsim__stream *s)
{
    if (aclsim__memory_check(t))
        return false;
    s->state = ACLSIM_STREAM_PARKED;   /* the watcher's list holds it */
    return true;
}

static const struct aclsim__wait_ops reuse_ops = {.what = "a memory pool free on another stream",
                                                  .ready = reuse_ready, .park = reuse_park,
                                                  .poll = reuse_poll};

/* aclrtMemPoolFreeAsync of ordinary aclrtMalloc memory: freed when reached. */
static void malloc_free_reached(struct aclsim__task *t, bool discarded)
{
    (void)discarded;
    aclsim__heap_free(t->u.sync.obj, (void *)(uintptr_t)t->u.sync.value, ACLSIM_ALLOC_MALLOC);
}

static const struct aclsim__wait_ops malloc_free_ops = {.what = "an aclrtMalloc free",
                                                        .signal = malloc_free_reached};

/* ---- API ------------------------------------------------------------------------ */

static aclError first_checks(const char *api, const void *pool)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!pool)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "memPool is NULL");
    return aclsim__soc_check(api, POOL_SOCS);
}

/* The live pool of handle, under pools_lock (held on success only); code is
 * the error for a handle that is not one (CANN's differ per function). */
static struct pool *lock_pool(const void *handle, aclError code, const char *api, aclError *err)
{
    pthread_mutex_lock(&pools_lock);
    struct pool *p = aclsim__handle_get(handle, ACLSIM_H_MEMPOOL);
    if (p)
        return p;
    pthread_mutex_unlock(&pools_lock);
    *err = aclsim__fail(code, api,
                        "memPool %p is not a live memory pool (destroyed, its device reset, or "
                        "never created with aclrtMemPoolCreate)", handle);
    return NULL;
}

aclError aclrtMemPoolCreate(aclrtMemPool *memPool, const aclrtMemPoolProps *poolProps)
{
    static const char api[] = "aclrtMemPoolCreate";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!memPool || !poolProps)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !memPool ? "memPool" : "poolProps");
    if (poolProps->allocType != ACL_MEM_ALLOCATION_TYPE_PINNED)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "poolProps->allocType %d is invalid: only "
                            "ACL_MEM_ALLOCATION_TYPE_PINNED (0)", (int)poolProps->allocType);
    if (poolProps->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "poolProps->location.type %d is invalid: only "
                            "ACL_MEM_LOCATION_TYPE_DEVICE (1)", (int)poolProps->location.type);
    for (size_t i = 0; i < sizeof poolProps->reserved; i++)
        if (poolProps->reserved[i])
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "poolProps->reserved is reserved and must be all zero "
                                "(byte %zu is %u)", i, poolProps->reserved[i]);
    aclError err = aclsim__soc_check(api, POOL_SOCS);
    if (err)
        return err;
    if (poolProps->handleType != ACL_MEM_HANDLE_TYPE_NONE)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "poolProps->handleType %d: shareable pools are not simulated (aclsim "
                            "has no inter-process memory); use ACL_MEM_HANDLE_TYPE_NONE (0)",
                            (int)poolProps->handleType);
    struct aclsim__context *ctx = NULL;
    if ((err = aclsim__current_context(api, &ctx)))
        return err;
    int32_t id = (int32_t)poolProps->location.id;
    if (poolProps->location.id > INT32_MAX || (err = aclsim__device_check_id(id, api)))
        return err ? err : aclsim__fail(ACL_ERROR_RT_INVALID_DEVICEID, api,
                                        "poolProps->location.id %u is not a device id",
                                        poolProps->location.id);
    struct aclsim__device *dev = &aclsim__devices[id];
    size_t total = aclsim__config()->device_memory, max = poolProps->maxSize;
    if (max == 0)
        max = total / BLOCK_ALIGN * BLOCK_ALIGN;   /* CANN: all of the device, rounded down */
    else if (max > SIZE_MAX - (BLOCK_ALIGN - 1) || (max = (max + BLOCK_ALIGN - 1) / BLOCK_ALIGN *
                                                          BLOCK_ALIGN) > total)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "poolProps->maxSize %zu rounded up to 2 MiB exceeds device %d's "
                            "memory of %zu bytes", poolProps->maxSize, id, total);
    struct pool *p = aclsim__calloc(1, sizeof *p);
    if (!p)
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, "out of host memory");
    p->device = dev;
    p->max = max;
    /* Under pools_lock: a device closing clears `open` before its pools go
     * (aclsim__mempools_device_closing), so a pool is never left behind. */
    pthread_mutex_lock(&pools_lock);
    if (!atomic_load(&dev->open))
        err = aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                           "device %d is not open: call aclrtSetDevice(%d) first", id, id);
    else if (!(p->handle = aclsim__handle_new(ACLSIM_H_MEMPOOL, p)))
        err = aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, "out of host memory");
    if (!err) {
        p->next = pools;
        pools = p;
        atomic_fetch_add(&npools, 1);
        *memPool = p->handle;
    }
    pthread_mutex_unlock(&pools_lock);
    if (err)
        free(p);
    return err;
}

/* Takes p's handle away (under pools_lock): its idle blocks go back to the
 * device; blocks whose free has not run yet go when it runs. */
static void retire_pool(struct pool *p)
{
    aclsim__handle_free(p->handle);
    p->handle = NULL;
    if (atomic_fetch_sub(&npools, 1) == 1) {   /* the last pool: the notes start afresh */
        free(records);
        free(deps);
        records = NULL;
        deps = NULL;
        nrecords = cap_records = ndeps = cap_deps = 0;
    }
    for (struct block *b = p->blocks, *next; b; b = next) {
        next = b->next;
        if (idle(b))
            release_block(p, b);
    }
    if (!p->blocks)
        free_pool(p);
}

aclError aclrtMemPoolDestroy(const aclrtMemPool memPool)
{
    static const char api[] = "aclrtMemPoolDestroy";
    aclError err = first_checks(api, memPool);
    if (err)
        return err;
    ACLSIM_SNAPSHOT_GATE(api);
    struct pool *p = lock_pool(memPool, ACL_ERROR_RT_INTERNAL_ERROR, api, &err);
    if (!p)
        return err;
    size_t busy = 0;
    for (struct block *b = p->blocks; b; b = b->next)
        busy += b->busy;
    if (busy) {
        size_t used = p->used;
        pthread_mutex_unlock(&pools_lock);
        return aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                            "memPool %p still has %zu allocations in use (%zu bytes): free them "
                            "with aclrtMemPoolFreeAsync first", memPool, busy, used);
    }
    retire_pool(p);
    pthread_mutex_unlock(&pools_lock);
    return ACL_SUCCESS;
}

static const char *attr_name(aclrtMemPoolAttr attr)
{
    switch (attr) {
    case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES: return "REUSE_FOLLOW_EVENT_DEPENDENCIES";
    case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC: return "REUSE_ALLOW_OPPORTUNISTIC";
    case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES: return "REUSE_ALLOW_INTERNAL_DEPENDENCIES";
    case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD: return "ATTR_RELEASE_THRESHOLD";
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT: return "ATTR_RESERVED_MEM_CURRENT";
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH: return "ATTR_RESERVED_MEM_HIGH";
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT: return "ATTR_USED_MEM_CURRENT";
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH: return "ATTR_USED_MEM_HIGH";
    default: return NULL;
    }
}

/* The checks both attribute calls share; on success pools_lock is held. */
static struct pool *attr_checks(aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value,
                                const char *api, aclError *err)
{
    if ((*err = first_checks(api, memPool)))
        return NULL;
    if (!value) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "value is NULL");
        return NULL;
    }
    struct pool *p = lock_pool(memPool, ACL_ERROR_RT_PARAM_INVALID, api, err);
    if (p && !attr_name(attr)) {
        pthread_mutex_unlock(&pools_lock);
        *err = aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                            "attr %d is not an aclrtMemPoolAttr value (1..8)", (int)attr);
        return NULL;
    }
    return p;
}

aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value)
{
    static const char api[] = "aclrtMemPoolSetAttr";
    aclError err;
    struct pool *p = attr_checks(memPool, attr, value, api, &err);
    if (!p)
        return err;
    uint32_t flag = 0;
    uint64_t v = 0;
    if (attr <= ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES)
        flag = *(const uint32_t *)value ? 1 : 0;
    else
        v = *(const uint64_t *)value;
    switch (attr) {
    case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES: p->reuse_event = flag; break;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC: p->reuse_opportunistic = flag; break;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES: p->reuse_internal = flag; break;
    case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD:
        if (v > p->max) {
            err = aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                               "the release threshold %llu exceeds the pool's size of %zu bytes",
                               (unsigned long long)v, p->max);
            break;
        }
        p->threshold = v;
        break;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH:
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH:
        if (v != 0) {
            err = aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                               "%s can only be reset, to 0 (value %llu)", attr_name(attr),
                               (unsigned long long)v);
            break;
        }
        if (attr == ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH)
            p->used_high = 0;
        else
            p->reserved_high = 0;
        break;
    default:   /* the two current figures */
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s(%d) is read-only",
                           attr_name(attr), (int)attr);
        break;
    }
    pthread_mutex_unlock(&pools_lock);
    return err;
}

aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value)
{
    static const char api[] = "aclrtMemPoolGetAttr";
    aclError err;
    struct pool *p = attr_checks(memPool, attr, value, api, &err);
    if (!p)
        return err;
    switch (attr) {
    case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES: *(uint32_t *)value = p->reuse_event; break;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC: *(uint32_t *)value = p->reuse_opportunistic; break;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *(uint32_t *)value = p->reuse_internal; break;
    case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD: *(uint64_t *)value = p->threshold; break;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT: *(uint64_t *)value = p->reserved; break;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH: *(uint64_t *)value = p->reserved_high; break;
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT: *(uint64_t *)value = p->used; break;
    default: *(uint64_t *)value = p->used_high; break;
    }
    pthread_mutex_unlock(&pools_lock);
    return ACL_SUCCESS;
}

/* The memory and the stream that orders its allocation or free must be of one
 * device: a reset of the device then drains every task that refers to it. */
static aclError same_device(const struct aclsim__device *mem, struct aclsim__context *ctx,
                            const char *api)
{
    const struct aclsim__device *dev = aclsim__context_device(ctx);   /* the stream's */
    if (dev == mem)
        return ACL_SUCCESS;
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "the memory is device %d's but the stream is device %d's: order its "
                        "allocation and free on a stream of device %d", mem->id, dev->id, mem->id);
}

enum reuse { REUSE_NONE, REUSE_SAFE, REUSE_WAIT };

/* How an allocation on stream s may reuse cached block b. */
static enum reuse reusable(const struct pool *p, struct block *b, struct stream_id s)
{
    struct stream_id freer = {b->stream, b->epoch};
    if (same_stream(freer, s) || (p->reuse_opportunistic && idle(b)))
        return REUSE_SAFE;
    if (p->reuse_event && waited_after(s, freer, b->free_seq))
        return REUSE_SAFE;
    if (p->reuse_internal)
        return idle(b) ? REUSE_SAFE : REUSE_WAIT;
    return REUSE_NONE;
}

static void count_use(struct pool *p, size_t size)
{
    p->used += size;
    if (p->used > p->used_high)
        p->used_high = p->used;
    if (p->reserved > p->reserved_high)
        p->reserved_high = p->reserved;
}

/* A new block of size bytes, or NULL with *err set. Under pools_lock. */
static struct block *new_block(struct pool *p, size_t size, const char *api, aclError *err)
{
    if (size <= p->max && p->max - p->reserved < size)
        release_idle(p, p->max - size, false);   /* idle cached memory makes room first */
    if (size > p->max || p->max - p->reserved < size) {
        *err = aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                            "memPool %p is full: %zu more bytes do not fit its maxSize of %zu "
                            "(%zu reserved, %zu in use)", p->handle, size, p->max, p->reserved,
                            p->used);
        return NULL;
    }
    struct block *b = aclsim__calloc(1, sizeof *b);
    if (!b) {
        *err = aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, "out of host memory");
        return NULL;
    }
    struct aclsim__heap *h = &p->device->heap;
    b->addr = aclsim__heap_alloc(h, size, BLOCK_ALIGN, ACLSIM_ALLOC_POOL, NULL);
    if (!b->addr) {
        release_idle(p, 0, true);
        b->addr = aclsim__heap_alloc(h, size, BLOCK_ALIGN, ACLSIM_ALLOC_POOL, NULL);
    }
    if (!b->addr) {
        free(b);
        *err = aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "device %d cannot back %zu more bytes of memPool %p: its memory is "
                            "full", p->device->id, size, p->handle);
        return NULL;
    }
    b->pool = p;
    b->size = size;
    b->next = p->blocks;
    p->blocks = b;
    p->reserved += size;
    return b;
}

aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool memPool, aclrtStream stream)
{
    static const char api[] = "aclrtMemPoolMallocAsync";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr || !memPool || !stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !ptr ? "ptr" : !memPool ? "memPool" : "stream");
    if (size == 0)
        return ACL_SUCCESS;   /* as CANN: nothing allocated, *ptr untouched */
    aclError err = aclsim__soc_check(api, POOL_SOCS);
    if (err)
        return err;
    ACLSIM_SNAPSHOT_GATE(api);
    struct aclsim__sref s;
    struct aclsim__context *ctx = NULL;   /* the stream's: checked to be the current one */
    if ((err = aclsim__stream_resolve(stream, api, &ctx, &s)))
        return err;
    if (size > SIZE_MAX - (BLOCK_ALIGN - 1))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "size %zu overflows when rounded "
                            "up to 2 MiB", size);
    size_t need = (size + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
    struct pool *p = lock_pool(memPool, ACL_ERROR_RT_INTERNAL_ERROR, api, &err);
    if (!p)
        return err;
    if ((err = same_device(p->device, ctx, api))) {
        pthread_mutex_unlock(&pools_lock);
        return err;
    }
    struct stream_id me = id_of(s);
    struct block *best = NULL;
    enum reuse how = REUSE_NONE;
    /* The closest size; then a reuse that needs no wait; then the lowest address. */
    for (struct block *b = p->blocks; b; b = b->next) {
        if (b->busy || b->size < need || (best && b->size > best->size))
            continue;
        enum reuse r = reusable(p, b, me);
        if (r != REUSE_NONE &&
            (!best || b->size < best->size || r < how || (r == how && b->addr < best->addr))) {
            best = b;
            how = r;
        }
    }
    if (best && how == REUSE_WAIT) {
        struct aclsim__task t = {.kind = ACLSIM_TASK_WAIT,
                                 .u.sync = {.ops = &reuse_ops, .obj = best,
                                            .value = best->free_gen}};
        if ((err = aclsim__submit(s, &t, api, NULL))) {
            pthread_mutex_unlock(&pools_lock);
            return err;
        }
    }
    if (!best && !(best = new_block(p, need, api, &err))) {
        pthread_mutex_unlock(&pools_lock);
        return err;
    }
    best->busy = true;
    count_use(p, best->size);
    *ptr = best->addr;
    pthread_mutex_unlock(&pools_lock);
    return ACL_SUCCESS;
}

/* The block of a live pool that contains addr, or NULL. Under pools_lock. */
static struct block *block_at(const void *addr, struct pool **owner)
{
    for (struct pool *p = pools; p; p = p->next)
        for (struct block *b = p->handle ? p->blocks : NULL; b; b = b->next)
            if ((const char *)addr >= b->addr && (const char *)addr < b->addr + b->size) {
                *owner = p;
                return b;
            }
    return NULL;
}

/* aclrtMalloc memory given to aclrtMemPoolFreeAsync: freed in stream order. */
static aclError free_malloc_async(void *ptr, struct aclsim__sref s, struct aclsim__context *ctx,
                                  const char *api)
{
    struct aclsim__where w = aclsim__classify(ptr);
    struct aclsim__alloc a;
    if (w.kind != ACLSIM_DEVICE || !aclsim__heap_find(&w.device->heap, ptr, &a) ||
        a.addr != (uintptr_t)ptr || a.kind != ACLSIM_ALLOC_MALLOC) {
        char what[256];
        aclsim__describe(ptr, what, sizeof what);
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "ptr %p is neither the start of a memory pool allocation nor of an "
                            "aclrtMalloc allocation: it is %s", ptr, what);
    }
    aclError err = same_device(w.device, ctx, api);
    if (err)
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_SIGNAL, .bytes = a.size,
                             .u.sync = {.ops = &malloc_free_ops, .obj = &w.device->heap,
                                        .value = (uintptr_t)ptr}};
    return aclsim__submit(s, &t, api, NULL);
}

aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream)
{
    static const char api[] = "aclrtMemPoolFreeAsync";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    aclError err = aclsim__soc_check(api, POOL_SOCS);
    if (err)
        return err;
    ACLSIM_SNAPSHOT_GATE(api);
    if (!stream)   /* CANN checks the stream itself here: no default stream */
        return aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                            "stream is NULL: aclrtMemPoolFreeAsync needs a stream");
    struct aclsim__sref s;
    struct aclsim__context *ctx = NULL;   /* the stream's: checked to be the current one */
    if ((err = aclsim__stream_resolve(stream, api, &ctx, &s)))
        return err;
    pthread_mutex_lock(&pools_lock);
    struct pool *p = NULL;
    struct block *b = block_at(ptr, &p);
    if (!b) {
        pthread_mutex_unlock(&pools_lock);
        return free_malloc_async(ptr, s, ctx, api);
    }
    if (!b->busy || b->addr != (char *)ptr || (err = same_device(p->device, ctx, api))) {
        pthread_mutex_unlock(&pools_lock);
        return err ? err : aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "ptr %p is not the start of a live memory pool allocation (%s the "
                            "%zu-byte block at %p)", ptr, !b->busy ? "already freed:" : "inside",
                            b->size, (void *)b->addr);
    }
    struct aclsim__task t = {.kind = ACLSIM_TASK_SIGNAL, .bytes = b->size,
                             .u.sync = {.ops = &free_ops, .obj = b, .value = b->free_gen + 1}};
    uint64_t seq = 0;
    if ((err = aclsim__submit(s, &t, api, &seq))) {
        pthread_mutex_unlock(&pools_lock);
        return err;
    }
    b->busy = false;
    b->free_gen++;
    struct stream_id me = id_of(s);
    b->stream = me.s;
    b->epoch = me.epoch;
    b->free_seq = seq;
    p->used -= b->size;
    pthread_mutex_unlock(&pools_lock);
    return ACL_SUCCESS;
}

aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep)
{
    static const char api[] = "aclrtMemPoolTrimTo";
    aclError err = first_checks(api, memPool);
    if (err)
        return err;
    ACLSIM_SNAPSHOT_GATE(api);
    struct pool *p = lock_pool(memPool, ACL_ERROR_RT_INTERNAL_ERROR, api, &err);
    if (!p)
        return err;
    if (minBytesToKeep > p->max)
        err = aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                           "minBytesToKeep %zu exceeds the pool's size of %zu bytes",
                           minBytesToKeep, p->max);
    else if (minBytesToKeep < p->used)
        err = aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                           "minBytesToKeep %zu is less than the %zu bytes in use",
                           minBytesToKeep, p->used);
    else
        release_idle(p, minBytesToKeep, false);
    pthread_mutex_unlock(&pools_lock);
    return err;
}

/* ---- hooks ------------------------------------------------------------------------ */

void aclsim__mempools_after_sync(struct aclsim__device *dev)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&npools, memory_order_relaxed)))
        return;
    pthread_mutex_lock(&pools_lock);
    for (struct pool *p = pools; p; p = p->next)
        if (p->device == dev && p->handle)
            release_idle(p, p->threshold, true);
    pthread_mutex_unlock(&pools_lock);
}

void aclsim__mempools_device_closing(struct aclsim__device *dev)
{
    pthread_mutex_lock(&pools_lock);
    /* The device's streams have drained: every free has run or was discarded. */
    for (struct pool *p = pools, *next; p; p = next) {
        next = p->next;
        if (p->device != dev)
            continue;
        for (struct block *b = p->blocks; b; b = b->next)
            b->busy = false;   /* the reset takes the memory anyway */
        if (p->handle)
            retire_pool(p);
        else {
            while (p->blocks)
                release_block(p, p->blocks);
            free_pool(p);
        }
    }
    pthread_mutex_unlock(&pools_lock);
}

void aclsim__mempools_forget_after_fork(void)
{
    pthread_mutex_init(&pools_lock, NULL);
    while (pools) {
        struct pool *p = pools;
        pools = p->next;
        while (p->blocks) {
            struct block *b = p->blocks;
            p->blocks = b->next;
            free(b);
        }
        if (p->handle)
            aclsim__handle_free(p->handle);   /* 107000 / 507899 from now on */
        free(p);   /* the memory went with the inherited heaps */
    }
    atomic_store(&npools, 0);
    free(records);
    free(deps);
    records = NULL;
    deps = NULL;
    nrecords = cap_records = ndeps = cap_deps = 0;
}
