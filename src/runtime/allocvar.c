/*
 * Allocation variants (issue 10): aclrtMallocAlign32, aclrtMallocCached,
 * aclrtMallocWithCfg, aclrtMallocForTaskScheduler, aclrtMallocHostWithCfg,
 * the cache maintenance calls aclrtMemFlush / aclrtMemInvalidate, and the
 * frees that wait for queued work first (aclrtFreeWithDevSync,
 * aclrtFreeHostWithDevSync).
 *
 * Every device variant hands out ordinary aclrtMalloc memory of the current
 * device (freed by aclrtFree or aclrtFreeWithDevSync); the host variant
 * hands out aclrtMallocHost memory. CPU memory is coherent, so the cache
 * calls check their arguments as CANN does and then have nothing to do.
 * See docs/memory-copies.md.
 */
#include "internal.h"

#include <stdio.h>

/* The checks every device variant starts with. CANN takes any policy value
 * here (an unknown one means "huge pages from 2 MiB, else normal pages"), so
 * policy is not checked. */
static aclError check_alloc(const char *api, void **ptr, const char *name, uint64_t size,
                            unsigned families)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__snapshot_check(api);
    if (err)
        return err;
    if (!ptr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    if (size > SIZE_MAX - 64)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size %llu is too large",
                            (unsigned long long)size);
    return aclsim__soc_check(api, families);
}

static aclError device_alloc(const char *api, void **devPtr, size_t size)
{
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    return err ? err : aclsim__device_alloc(api, ctx, devPtr, size);
}

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    static const char api[] = "aclrtMallocAlign32";
    (void)policy;
    ACLSIM_CHECK_SITE(api);
    aclError err = check_alloc(api, devPtr, "devPtr", size, 0x7fu);
    /* The usable size is size rounded up to 32 bytes (and no more). */
    return err ? err : device_alloc(api, devPtr, (size + 31) & ~(size_t)31);
}

aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    static const char api[] = "aclrtMallocCached";
    (void)policy;
    ACLSIM_CHECK_SITE(api);
    aclError err = check_alloc(api, devPtr, "devPtr", size, ACLSIM_ALL_BUT_IPV);
    return err ? err : device_alloc(api, devPtr, size);
}

/* The checks of an aclrtMallocConfig: attrs present when numAttrs says so,
 * known attribute kinds, a device id that is the current device's, vaFlag 0
 * or 1 and only for host memory. */
static aclError check_cfg(const char *api, const aclrtMallocConfig *cfg, bool host)
{
    if (!cfg)
        return ACL_SUCCESS;
    if (cfg->numAttrs != 0 && !cfg->attrs)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "cfg->attrs is NULL but cfg->numAttrs is %zu", cfg->numAttrs);
    for (size_t i = 0; i < cfg->numAttrs; i++) {
        const aclrtMallocAttribute *a = &cfg->attrs[i];
        switch (a->attr) {
        case ACL_RT_MEM_ATTR_RSV:
        case ACL_RT_MEM_ATTR_MODULE_ID:
            break;
        case ACL_RT_MEM_ATTR_DEVICE_ID: {
            int32_t cur = -1;
            aclError err = aclrtGetDevice(&cur);
            if (err)
                return err;
            if (a->value.deviceId != (uint32_t)cur)
                return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                    "cfg->attrs[%zu] asks for device %u but the current device "
                                    "is %d", i, a->value.deviceId, cur);
            break;
        }
        case ACL_RT_MEM_ATTR_VA_FLAG:
            if (!host)
                return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                    "cfg->attrs[%zu]: ACL_RT_MEM_ATTR_VA_FLAG applies to "
                                    "aclrtMallocHostWithCfg only", i);
            if (a->value.vaFlag > 1)
                return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                    "cfg->attrs[%zu]: vaFlag %u is neither 0 nor 1", i,
                                    a->value.vaFlag);
            if (a->value.vaFlag) {
                aclError err = aclsim__soc_check(api,
                                                 ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3));
                if (err)
                    return err;
            }
            break;
        default:
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "cfg->attrs[%zu].attr %d is not an aclrtMallocAttrType value", i,
                                (int)a->attr);
        }
    }
    return ACL_SUCCESS;
}

static aclError malloc_with_cfg(const char *api, void **devPtr, size_t size,
                                aclrtMallocConfig *cfg)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!devPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    if (cfg && cfg->numAttrs != 0 && !cfg->attrs)   /* CANN checks this before size */
        return check_cfg(api, cfg, false);
    aclError err = check_alloc(api, devPtr, "devPtr", size, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = check_cfg(api, cfg, false);
    return err ? err : device_alloc(api, devPtr, size);
}

aclError aclrtMallocWithCfg(void **devPtr, size_t size, aclrtMemMallocPolicy policy,
                            aclrtMallocConfig *cfg)
{
    (void)policy;
    ACLSIM_CHECK_SITE("aclrtMallocWithCfg");
    return malloc_with_cfg("aclrtMallocWithCfg", devPtr, size, cfg);
}

/* The task scheduler runs on the host's CPU here: its memory is device memory. */
aclError aclrtMallocForTaskScheduler(void **devPtr, size_t size, aclrtMemMallocPolicy policy,
                                     aclrtMallocConfig *cfg)
{
    (void)policy;
    ACLSIM_CHECK_SITE("aclrtMallocForTaskScheduler");
    return malloc_with_cfg("aclrtMallocForTaskScheduler", devPtr, size, cfg);
}

aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg)
{
    static const char api[] = "aclrtMallocHostWithCfg";
    ACLSIM_CHECK_SITE(api);
    aclError err = check_alloc(api, ptr, "ptr", size, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = check_cfg(api, cfg, true);
    return err ? err : aclsim__host_alloc(api, ptr, (size_t)size);
}

/* ---- cache maintenance ------------------------------------------------------ */

/* CPU caches are coherent with memory: after CANN's checks (and a range check
 * for memory aclsim knows), there is nothing to flush or invalidate. */
static aclError cache_op(const char *api, void *devPtr, size_t size)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!devPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    return err ? err : aclsim__check_range(api, "devPtr", devPtr, size, aclsim__classify(devPtr));
}

aclError aclrtMemFlush(void *devPtr, size_t size)
{
    return cache_op("aclrtMemFlush", devPtr, size);
}

aclError aclrtMemInvalidate(void *devPtr, size_t size)
{
    return cache_op("aclrtMemInvalidate", devPtr, size);
}

/* ---- frees after a device synchronisation ----------------------------------- */

/* Waits for everything queued so far on dev (or, with NULL, on every open
 * device). */
static aclError sync_devices(const char *api, struct aclsim__device *dev)
{
    for (uint32_t d = 0; d < ACLSIM_MAX_DEVICES; d++) {
        struct aclsim__device *x = &aclsim__devices[d];
        if ((dev && x != dev) || !atomic_load(&x->open))
            continue;
        aclError err = aclsim__device_synchronize(x, api);
        if (err)
            return err;
    }
    return ACL_SUCCESS;
}

static aclError not_freed(const char *api, const char *name, void *p, const char *by)
{
    char what[256];
    aclsim__describe(p, what, sizeof what);
    return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                        "%s %p is not the start of a live %s allocation: it is %s", name, p, by,
                        what);
}

aclError aclrtFreeWithDevSync(void *devPtr)
{
    static const char api[] = "aclrtFreeWithDevSync";
    ACLSIM_REQUIRE_INIT(api);
    if (!devPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__snapshot_check(api);
    if (err)
        return err;
    struct aclsim__where w = aclsim__classify(devPtr);
    struct aclsim__alloc a;
    if (w.kind != ACLSIM_DEVICE || !aclsim__heap_find(&w.device->heap, devPtr, &a) ||
        a.addr != (uintptr_t)devPtr || a.kind != ACLSIM_ALLOC_MALLOC)
        return not_freed(api, "devPtr", devPtr, "aclrtMalloc");
    /* The device whose memory it is: work queued there may use it. */
    if ((err = sync_devices(api, w.device)))
        return err;
    if (!aclsim__heap_free(&w.device->heap, devPtr, ACLSIM_ALLOC_MALLOC))
        return not_freed(api, "devPtr", devPtr, "aclrtMalloc");   /* freed meanwhile */
    return ACL_SUCCESS;
}

aclError aclrtFreeHostWithDevSync(void *hostPtr)
{
    static const char api[] = "aclrtFreeHostWithDevSync";
    ACLSIM_REQUIRE_INIT(api);
    if (!hostPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "hostPtr is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__snapshot_check(api);
    if (err)
        return err;
    struct aclsim__alloc a;
    if (!aclsim__heap_contains(&aclsim__host_heap, hostPtr) ||
        !aclsim__heap_find(&aclsim__host_heap, hostPtr, &a) || a.addr != (uintptr_t)hostPtr ||
        a.kind != ACLSIM_ALLOC_HOST)
        return not_freed(api, "hostPtr", hostPtr, "aclrtMallocHost");
    /* Page-locked memory may be used by work on any device. */
    if ((err = sync_devices(api, NULL)))
        return err;
    if (!aclsim__heap_free(&aclsim__host_heap, hostPtr, ACLSIM_ALLOC_HOST))
        return not_freed(api, "hostPtr", hostPtr, "aclrtMallocHost");
    return ACL_SUCCESS;
}
