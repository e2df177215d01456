/*
 * Batched and indirect copies (issue 10): aclrtMemcpyBatch / BatchV2 (at
 * once, on the caller's thread), aclrtMemcpyBatchAsync / BatchAsyncV2 (one
 * stream task for the whole batch), aclrtMemcpyAsyncWithOffset (the base
 * pointers are read from device memory when the task runs),
 * aclrtMemcpyAsyncWithCondition (the deprecated twin of aclrtMemcpyAsync) and
 * copy descriptors (aclrtGetMemcpyDescSize, aclrtSetMemcpyDesc,
 * aclrtMemcpyAsyncWithDesc: the descriptor in device memory is read when the
 * task runs).
 *
 * A batch copies host to device or device to host only, each entry checked
 * against the attributes (aclrtMemcpyBatchAttr) that apply to it; the first
 * entry that fails those checks is reported in *failIndex (SIZE_MAX for an
 * error that concerns no entry). An asynchronous batch with ordinary
 * (pageable) host memory waits for its task, as CANN synchronises the stream
 * for such entries. See docs/memory-copies.md.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the task ---------------------------------------------------------------------- */

enum entry_kind { DIRECT, INDIRECT, DESC };

/* What an ACLSIM_TASK_BATCH task owns. */
struct batch {
    size_t n;
    struct aclsim__device *device;   /* INDIRECT, DESC: whose memory the pointers must be */
    struct batch_entry {
        uint8_t kind;                /* enum entry_kind */
        void *dst;                   /* DIRECT: the bytes; INDIRECT: where the base pointer is; DESC: the descriptor */
        const void *src;
        size_t size, dst_off, src_off;   /* INDIRECT: offsets added to the base pointers */
    } e[];
};

/* A copy descriptor in device memory (aclrtSetMemcpyDesc). */
#define DESC_MAGIC 0x44435041u   /* "APCD" */
struct memcpy_desc {
    uint64_t src, dst, count;
    uint32_t magic;
    int32_t device;
};

/* Whether [p, p + n) lies inside one live allocation of dev. */
static bool inside(struct aclsim__device *dev, const void *p, size_t n)
{
    struct aclsim__alloc a;
    if (!aclsim__heap_contains(&dev->heap, p) || !aclsim__heap_find(&dev->heap, p, &a))
        return false;
    return n <= a.size - ((uintptr_t)p - a.addr);
}

static void run_entry(struct aclsim__device *dev, const struct batch_entry *e)
{
    void *dst = e->dst;
    const void *src = e->src;
    size_t size = e->size;
    if (e->kind == INDIRECT) {
        char *d, *s;
        memcpy(&d, e->dst, sizeof d);
        memcpy(&s, e->src, sizeof s);
        dst = d + e->dst_off;
        src = s + e->src_off;
    } else if (e->kind == DESC) {
        struct memcpy_desc md;
        memcpy(&md, e->dst, sizeof md);
        if (md.magic != DESC_MAGIC) {
            aclsim__log(ACLSIM_LOG_ERROR, "aclrtMemcpyAsyncWithDesc: the descriptor at %p was "
                        "overwritten before the copy ran; nothing copied", e->dst);
            return;
        }
        dst = (void *)(uintptr_t)md.dst;
        src = (const void *)(uintptr_t)md.src;
        size = (size_t)md.count;
    }
    /* Pointers read from device memory are only known now: copy only
     * between live allocations of the device. */
    if (e->kind != DIRECT && (!inside(dev, dst, size) || !inside(dev, src, size))) {
        aclsim__log(ACLSIM_LOG_ERROR, "%s: the copy of %zu bytes from %p to %p leaves device %d's "
                    "live allocations; nothing copied", e->kind == DESC ? "aclrtMemcpyAsyncWithDesc"
                    : "aclrtMemcpyAsyncWithOffset", size, src, dst, dev->id);
        return;
    }
    memmove(dst, src, size);
}

void aclsim__execute_batch(struct aclsim__task *t)
{
    const struct batch *b = t->u.batch.data;
    for (size_t i = 0; i < b->n; i++)
        run_entry(b->device, &b->e[i]);
}

static struct batch *batch_new(const char *api, size_t n, struct aclsim__device *dev)
{
    struct batch *b = aclsim__malloc(sizeof *b + n * sizeof b->e[0]);
    if (!b) {
        aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        return NULL;
    }
    b->n = n;
    b->device = dev;
    return b;
}

/* Queues b (owned by the task from then on) on s; waits for it with wait. */
static aclError batch_submit(struct aclsim__sref s, struct batch *b, size_t bytes, bool wait,
                             const char *api)
{
    if (wait && s.s == aclsim__tls_stream) {
        free(b);
        return aclsim__refuse_self_wait(api, "this stream (a copy with ordinary host memory "
                                             "waits for the stream)");
    }
    struct aclsim__task t = {.kind = ACLSIM_TASK_BATCH, .bytes = bytes, .u.batch = {b}};
    aclError err = aclsim__submit_maybe_wait(s, &t, wait, "copy", api);
    /* Refused: b is still ours. (Discarded after it was queued, 107023: the
     * executor freed it with the task.) */
    if (err && err != ACL_ERROR_RT_STREAM_ABORT)
        free(b);
    return err;
}

/* ---- batches ------------------------------------------------------------------------- */

static void set_fail(size_t *failIndex, size_t i)
{
    if (failIndex)
        *failIndex = i;
}

static const char *location_name(int type)
{
    switch (type) {
    case ACL_MEM_LOCATION_TYPE_HOST: return "ACL_MEM_LOCATION_TYPE_HOST";
    case ACL_MEM_LOCATION_TYPE_DEVICE: return "ACL_MEM_LOCATION_TYPE_DEVICE";
    case ACL_MEM_LOCATION_TYPE_UNREGISTERED: return "ACL_MEM_LOCATION_TYPE_UNREGISTERED";
    case ACL_MEM_LOCATION_TYPE_MANAGED: return "ACL_MEM_LOCATION_TYPE_MANAGED";
    case ACL_MEM_LOCATION_TYPE_HOST_NUMA: return "ACL_MEM_LOCATION_TYPE_HOST_NUMA";
    default: return "an unknown location type";
    }
}

/* One side of entry i against the location its attribute gives: host
 * memory (page-locked, registered or not) for HOST / HOST_NUMA, device id's
 * memory (allocated, or mapped into a reservation) for DEVICE, managed
 * memory for MANAGED. *have gets the actual location type. */
static aclError check_side(const char *api, size_t i, const char *side, const void *p,
                           const aclrtMemLocation *loc, int *have)
{
    struct aclsim__where w = aclsim__classify(p);
    bool dev = w.kind == ACLSIM_DEVICE || w.kind == ACLSIM_VIRTUAL;
    int want = loc->type == ACL_MEM_LOCATION_TYPE_HOST_NUMA ? ACL_MEM_LOCATION_TYPE_HOST : (int)loc->type;
    *have = dev ? ACL_MEM_LOCATION_TYPE_DEVICE
          : w.kind == ACLSIM_MANAGED ? ACL_MEM_LOCATION_TYPE_MANAGED : ACL_MEM_LOCATION_TYPE_HOST;
    if (want == *have && (!dev || (w.device && (uint32_t)w.device->id == loc->id)))
        return ACL_SUCCESS;
    char what[256];
    aclsim__describe(p, what, sizeof what);
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "entry %zu: %s %p is %s, but its attributes say %s (id %u)", i, side, p, what,
                        location_name((int)loc->type), loc->id);
}

static bool all_zero(const size_t *sizes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (sizes[i])
            return false;
    return true;
}

#define BATCH_FAMILIES (ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A5))

/* The checks of every batch form. On success *pageable tells whether any
 * entry has ordinary host memory and *total the bytes to move (0: nothing
 * to do). */
static aclError check_batch(const char *api, void **dsts, size_t *destMaxs, void **srcs,
                            size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs,
                            size_t *attrsIndexes, size_t numAttrs, size_t *failIndex, bool async,
                            bool *pageable, size_t *total)
{
    /* CANN's ACL layer: these leave *failIndex alone. */
    *pageable = false;
    *total = 0;
    if (!sizes)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "sizes is NULL");
    if (numBatches == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "numBatches is 0");
    if (all_zero(sizes, numBatches)) {   /* nothing to move, nothing else checked */
        set_fail(failIndex, SIZE_MAX);
        return ACL_SUCCESS;
    }
    const char *null = !dsts ? "dsts" : !destMaxs ? "destMaxs" : !srcs ? "srcs" : !attrs ? "attrs"
                     : !attrsIndexes ? "attrsIndexes" : NULL;
    if (null)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", null);
    for (size_t i = 0; i < numBatches; i++)
        if (destMaxs[i] < sizes[i])
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "the copy size %zu at index %zu exceeds the size %zu of its "
                                "destination (destMaxs)", sizes[i], i, destMaxs[i]);
    for (size_t k = 0; k < numAttrs; k++)
        for (size_t j = 0; j < sizeof attrs[k].rsv; j++)
            if (attrs[k].rsv[j])
                return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "attrs[%zu].rsv must be 0", k);
    /* The runtime's checks: *failIndex is SIZE_MAX unless an entry fails. */
    set_fail(failIndex, SIZE_MAX);
    if (numAttrs == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "numAttrs is 0");
    if (numAttrs > numBatches)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "numAttrs %zu is larger than numBatches %zu", numAttrs, numBatches);
    if (attrsIndexes[0] != 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "attrsIndexes[0] is %zu, not 0",
                            attrsIndexes[0]);
    for (size_t k = 1; k < numAttrs; k++) {
        if (attrsIndexes[k] <= attrsIndexes[k - 1])
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "attrsIndexes[%zu] (%zu) is not greater than attrsIndexes[%zu] (%zu)",
                                k, attrsIndexes[k], k - 1, attrsIndexes[k - 1]);
        if (attrsIndexes[k] >= numBatches)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "attrsIndexes[%zu] (%zu) is not less than numBatches %zu", k,
                                attrsIndexes[k], numBatches);
    }
    size_t k = 0;
    for (size_t i = 0; i < numBatches; i++) {
        if (k + 1 < numAttrs && i >= attrsIndexes[k + 1])
            k++;
        if (sizes[i] == 0 && !async)
            continue;   /* nothing to move */
        aclError err = ACL_SUCCESS;
        int dst_loc = -1, src_loc = -1;
        if (sizes[i] == 0)
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "entry %zu: size is 0", i);
        else if (!dsts[i] || !srcs[i])
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "entry %zu: %s is NULL", i,
                               !dsts[i] ? "dsts[i]" : "srcs[i]");
        if (!err)
            err = check_side(api, i, "dst", dsts[i], &attrs[k].dstLoc, &dst_loc);
        if (!err)
            err = check_side(api, i, "src", srcs[i], &attrs[k].srcLoc, &src_loc);
        if (!err && dst_loc == src_loc)
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                               "entry %zu copies %s: only host-to-device and device-to-host "
                               "copies are supported in a batch", i,
                               dst_loc == ACL_MEM_LOCATION_TYPE_DEVICE ? "device to device"
                               : dst_loc == ACL_MEM_LOCATION_TYPE_HOST ? "host to host"
                               : "managed to managed");
        if (!err)
            err = aclsim__check_range(api, "dst", dsts[i], sizes[i], aclsim__classify(dsts[i]));
        if (!err)
            err = aclsim__check_range(api, "src", srcs[i], sizes[i], aclsim__classify(srcs[i]));
        if (err) {
            set_fail(failIndex, i);
            return err;
        }
        *pageable |= aclsim__classify(dsts[i]).kind == ACLSIM_HOST ||
                     aclsim__classify(srcs[i]).kind == ACLSIM_HOST;
        *total += sizes[i];
    }
    return aclsim__soc_check(api, BATCH_FAMILIES);
}

static aclError batch_sync(const char *api, void **dsts, size_t *destMaxs, void **srcs,
                           size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs,
                           size_t *attrsIndexes, size_t numAttrs, size_t *failIndex)
{
    ACLSIM_REQUIRE_INIT(api);
    bool pageable;
    size_t total;
    aclError err = check_batch(api, dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes,
                               numAttrs, failIndex, false, &pageable, &total);
    if (err || !total)
        return err;
    struct aclsim__context *ctx = NULL;
    if (!(err = aclsim__snapshot_check(api)))
        err = aclsim__current_context(api, &ctx);
    /* At once, like aclrtMemcpy: each entry checked again and moved under
     * the read locks of its heaps. */
    for (size_t i = 0; !err && i < numBatches; i++) {
        if (!sizes[i])
            continue;
        struct aclsim__heap_hold hold;
        if ((err = aclsim__hold_heaps(api, &hold, dsts[i], srcs[i])))
            break;
        err = aclsim__check_range(api, "dst", dsts[i], sizes[i], aclsim__classify(dsts[i]));
        if (!err)
            err = aclsim__check_range(api, "src", srcs[i], sizes[i], aclsim__classify(srcs[i]));
        if (!err)
            memmove(dsts[i], srcs[i], sizes[i]);
        else
            set_fail(failIndex, i);
        aclsim__release_heaps(&hold);
    }
    return err;
}

static aclError batch_async(const char *api, void **dsts, size_t *destMaxs, void **srcs,
                            size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs,
                            size_t *attrsIndexes, size_t numAttrs, size_t *failIndex,
                            aclrtStream stream)
{
    ACLSIM_REQUIRE_INIT(api);
    bool pageable;
    size_t total;
    aclError err = check_batch(api, dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes,
                               numAttrs, failIndex, true, &pageable, &total);
    if (err || !total)
        return err;
    struct aclsim__sref s;
    if ((err = aclsim__stream_resolve(stream, api, NULL, &s)))
        return err;
    struct batch *b = batch_new(api, numBatches, s.s->device);
    if (!b)
        return ACL_ERROR_BAD_ALLOC;
    for (size_t i = 0; i < numBatches; i++)
        b->e[i] = (struct batch_entry){.kind = DIRECT, .dst = dsts[i], .src = srcs[i], .size = sizes[i]};
    return batch_submit(s, b, total, pageable, api);
}

aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                          aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs,
                          size_t *failIndex)
{
    static const char api[] = "aclrtMemcpyBatch";
    ACLSIM_REQUIRE_INIT(api);
    if (!failIndex)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "failIndex is NULL");
    return batch_sync(api, dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs,
                      failIndex);
}

aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                            aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs)
{
    return batch_sync("aclrtMemcpyBatchV2", dsts, destMaxs, srcs, sizes, numBatches, attrs,
                      attrsIndexes, numAttrs, NULL);
}

aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                               size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                               size_t numAttrs, size_t *failIndex, aclrtStream stream)
{
    static const char api[] = "aclrtMemcpyBatchAsync";
    ACLSIM_REQUIRE_INIT(api);
    if (!failIndex)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "failIndex is NULL");
    return batch_async(api, dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs,
                       failIndex, stream);
}

aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                                 size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                                 size_t numAttrs, aclrtStream stream)
{
    return batch_async("aclrtMemcpyBatchAsyncV2", dsts, destMaxs, srcs, sizes, numBatches, attrs,
                       attrsIndexes, numAttrs, NULL, stream);
}

/* ---- one copy through pointers in device memory --------------------------------------- */

aclError aclsim__check_on_device(const char *api, const char *name, const void *p, size_t n,
                                 struct aclsim__device *dev)
{
    struct aclsim__where w = aclsim__classify(p);
    /* aclrtMalloc memory, or physical memory of dev mapped into a reservation */
    if ((w.kind != ACLSIM_DEVICE && w.kind != ACLSIM_VIRTUAL) || w.device != dev) {
        char what[256];
        aclsim__describe(p, what, sizeof what);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%s %p is %s: it must be memory of the stream's device %d", name, p,
                            what, dev->id);
    }
    return aclsim__check_range(api, name, p, n, w);
}

static aclError inner_d2d_only(const char *api, aclrtMemcpyKind kind, aclError code)
{
    if (kind == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
        return ACL_SUCCESS;
    return aclsim__fail(code, api, "kind %d is not supported: only ACL_MEMCPY_INNER_DEVICE_TO_DEVICE "
                        "(6)", (int)kind);
}

aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax, size_t dstDataOffset, const void **src,
                                    size_t count, size_t srcDataOffset, aclrtMemcpyKind kind,
                                    aclrtStream stream)
{
    static const char api[] = "aclrtMemcpyAsyncWithOffset";
    ACLSIM_REQUIRE_INIT(api);
    if (count == 0)
        return ACL_SUCCESS;
    aclError err = inner_d2d_only(api, kind, ACL_ERROR_RT_PARAM_INVALID);
    if (!err && (!dst || !src))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL", !dst ? "dst" : "src");
    if (!err && count > destMax)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "count %zu is larger than destMax %zu",
                           count, destMax);
    if (!err)
        err = aclsim__soc_check(api, BATCH_FAMILIES | ACLSIM_FAMILIES(TRAINING));
    struct aclsim__sref s;
    if (!err)
        err = aclsim__stream_resolve(stream, api, NULL, &s);
    /* dst and src are the device locations that hold the base pointers. */
    if (!err)
        err = aclsim__check_on_device(api, "dst", dst, sizeof(void *), s.s->device);
    if (!err)
        err = aclsim__check_on_device(api, "src", src, sizeof(void *), s.s->device);
    if (err)
        return err;
    struct batch *b = batch_new(api, 1, s.s->device);
    if (!b)
        return ACL_ERROR_BAD_ALLOC;
    b->e[0] = (struct batch_entry){.kind = INDIRECT, .dst = dst, .src = src, .size = count,
                                   .dst_off = dstDataOffset, .src_off = srcDataOffset};
    return batch_submit(s, b, count, false, api);
}

aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax, const void *src, size_t count,
                                       aclrtMemcpyKind kind, aclrtStream stream)
{
    static const char api[] = "aclrtMemcpyAsyncWithCondition";
    ACLSIM_REQUIRE_INIT(api);
    if (count == 0)
        return ACL_SUCCESS;
    if (!dst || !src)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !dst ? "dst" : "src");
    if (count > destMax)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "count %zu is larger than destMax %zu",
                            count, destMax);
    if (kind == ACL_MEMCPY_HOST_TO_HOST)   /* separate host and device (CANN's EP form) */
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "asynchronous host-to-host copies are not supported");
    struct aclsim__sref s;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &s);
    struct aclsim__where wd, ws;
    if (!err)
        err = aclsim__check_copy(api, dst, src, count, (int)kind, &wd, &ws);
    if (err)
        return err;
    bool pageable = wd.kind == ACLSIM_HOST || ws.kind == ACLSIM_HOST;
    if (pageable && s.s == aclsim__tls_stream)
        return aclsim__refuse_self_wait(api, "this stream (a copy with ordinary host memory "
                                             "waits for the stream)");
    return aclsim__copy_async(s, dst, src, count, pageable, NULL, api);
}

/* ---- copy descriptors ------------------------------------------------------------------ */

#define DESC_FAMILIES (BATCH_FAMILIES | ACLSIM_FAMILIES(EDGE))

static size_t desc_size(void)
{
    return aclsim__soc_current()->family == ACLSIM_FAMILY_A5 ? 64 : 32;
}

static aclError check_kind_value(const char *api, aclrtMemcpyKind kind)
{
    if ((unsigned)kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "kind %d is not an aclrtMemcpyKind value",
                            (int)kind);
    return ACL_SUCCESS;
}

aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t *descSize)
{
    static const char api[] = "aclrtGetMemcpyDescSize";
    ACLSIM_REQUIRE_INIT(api);
    if (!descSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "descSize is NULL");
    aclError err = check_kind_value(api, kind);
    if (!err)
        err = aclsim__soc_check(api, DESC_FAMILIES);
    if (!err)
        err = inner_d2d_only(api, kind, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    if (!err)
        *descSize = desc_size();
    return err;
}

aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void *srcAddr, void *dstAddr, size_t count,
                            void *config)
{
    static const char api[] = "aclrtSetMemcpyDesc";
    ACLSIM_REQUIRE_INIT(api);
    if (!desc)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "desc is NULL");
    aclError err = check_kind_value(api, kind);
    if (err)
        return err;
    if (!srcAddr || !dstAddr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !srcAddr ? "srcAddr" : "dstAddr");
    if (count == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "count is 0");
    if (config)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "config is reserved and must be NULL");
    if ((err = aclsim__soc_check(api, DESC_FAMILIES)) ||
        (err = inner_d2d_only(api, kind, ACL_ERROR_RT_FEATURE_NOT_SUPPORT)))
        return err;
    if (count > (4ull << 30))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "count %zu exceeds 4 GiB", count);
    if ((uintptr_t)desc % 64)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "desc %p is not 64-byte aligned", desc);
    struct aclsim__where wdesc = aclsim__classify(desc), wd = aclsim__classify(dstAddr),
                         ws = aclsim__classify(srcAddr);
    if (wdesc.kind != ACLSIM_DEVICE)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "desc %p is not device memory", desc);
    if (wd.kind != ACLSIM_DEVICE || ws.kind != ACLSIM_DEVICE || wd.device != ws.device)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "dstAddr and srcAddr must be memory of one device for "
                            "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE");
    if ((err = aclsim__check_range(api, "dstAddr", dstAddr, count, wd)) ||
        (err = aclsim__check_range(api, "srcAddr", srcAddr, count, ws)))
        return err;
    struct memcpy_desc md = {(uintptr_t)srcAddr, (uintptr_t)dstAddr, count, DESC_MAGIC, wd.device->id};
    struct aclsim__heap_hold hold;
    if ((err = aclsim__hold_heaps(api, &hold, desc, NULL)))
        return err;
    err = aclsim__check_range(api, "desc", desc, desc_size(), aclsim__classify(desc));
    if (!err)
        memcpy(desc, &md, sizeof md);
    aclsim__release_heaps(&hold);
    return err;
}

aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind, aclrtStream stream)
{
    static const char api[] = "aclrtMemcpyAsyncWithDesc";
    ACLSIM_REQUIRE_INIT(api);
    if (!desc)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "desc is NULL");
    aclError err = check_kind_value(api, kind);
    if (err)
        return err;
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    if ((err = aclsim__soc_check(api, DESC_FAMILIES)) ||
        (err = inner_d2d_only(api, kind, ACL_ERROR_RT_FEATURE_NOT_SUPPORT)))
        return err;
    struct aclsim__sref s;
    if ((err = aclsim__stream_resolve(stream, api, NULL, &s)) ||
        (err = aclsim__check_on_device(api, "desc", desc, desc_size(), s.s->device)))
        return err;
    struct memcpy_desc md;
    memcpy(&md, desc, sizeof md);
    if (md.magic != DESC_MAGIC)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "desc %p holds no copy descriptor (set it with aclrtSetMemcpyDesc)", desc);
    if (md.device != s.s->device->id)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "the descriptor copies on device %d but the stream is on device %d",
                            md.device, s.s->device->id);
    struct batch *b = batch_new(api, 1, s.s->device);
    if (!b)
        return ACL_ERROR_BAD_ALLOC;
    b->e[0] = (struct batch_entry){.kind = DESC, .dst = desc};
    return batch_submit(s, b, (size_t)md.count, false, api);
}
