/*
 * Cache maintenance operations (issue 10): aclrtCmoAsync,
 * aclrtCmoAsyncWithBarrier, aclrtCmoWaitBarrier, aclrtCmoGetDescSize,
 * aclrtCmoSetDesc, aclrtCmoAsyncWithDesc and aclrtDeviceL2CacheFlush.
 *
 * CPU memory is coherent: there is no cache to prefetch into, write back,
 * invalidate or flush. Every call checks its arguments as CANN does (and,
 * beyond CANN, that the memory is the stream's device memory), and the
 * asynchronous ones queue a task that has no effect but keeps its place in
 * the stream's order (work after it waits for work before it, events recorded
 * after it complete after it). See docs/memory-copies.md.
 */
#include "internal.h"

#include <string.h>

#define CMO_FAMILIES (ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A5))

static const char *cmo_name(int type)
{
    static const char *const names[] = {"ACL_RT_CMO_TYPE_PREFETCH", "ACL_RT_CMO_TYPE_WRITEBACK",
                                        "ACL_RT_CMO_TYPE_INVALID", "ACL_RT_CMO_TYPE_FLUSH"};
    return type >= 0 && type <= ACL_RT_CMO_TYPE_FLUSH ? names[type] : "?";
}

static aclError check_cmo_type(const char *api, aclrtCmoType type, aclError code)
{
    if ((unsigned)type <= ACL_RT_CMO_TYPE_FLUSH)
        return ACL_SUCCESS;
    return aclsim__fail(code, api, "cmoType %d is not an aclrtCmoType value (0..3)", (int)type);
}

/* Queues the no-op task that stands for a cache operation. */
static aclError queue_cmo(struct aclsim__sref s, size_t bytes, const char *api)
{
    struct aclsim__task t = {.kind = ACLSIM_TASK_CMO, .bytes = bytes};
    return aclsim__submit(s, &t, api, NULL);
}

/* src, size on the stream's device; then the task. */
static aclError cmo_on_stream(const char *api, void *src, size_t size, aclrtStream stream)
{
    struct aclsim__sref s;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (!err)
        err = aclsim__check_on_device(api, "src", src, size, s.s->device);
    return err ? err : queue_cmo(s, size, api);
}

aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType, aclrtStream stream)
{
    static const char api[] = "aclrtCmoAsync";
    ACLSIM_REQUIRE_INIT(api);
    if (!src)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "src is NULL");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    aclError err = aclsim__soc_check(api, CMO_FAMILIES);
    if (!err)
        err = check_cmo_type(api, cmoType, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    return err ? err : cmo_on_stream(api, src, size, stream);
}

aclError aclrtCmoAsyncWithBarrier(void *src, size_t size, aclrtCmoType cmoType, uint32_t barrierId,
                                  aclrtStream stream)
{
    static const char api[] = "aclrtCmoAsyncWithBarrier";
    ACLSIM_REQUIRE_INIT(api);
    if (!src)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "src is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(EDGE));
    if (err)
        return err;
    if (size == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "size is 0");
    if ((err = check_cmo_type(api, cmoType, ACL_ERROR_RT_FEATURE_NOT_SUPPORT)))
        return err;
    /* An invalidation carries a barrier id > 0 (for aclrtCmoWaitBarrier);
     * the other operations carry 0. */
    if (cmoType == ACL_RT_CMO_TYPE_INVALID && barrierId == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "barrierId must be greater than 0 for ACL_RT_CMO_TYPE_INVALID");
    if (cmoType != ACL_RT_CMO_TYPE_INVALID && barrierId != 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "barrierId must be 0 for %s, not %u",
                            cmo_name(cmoType), barrierId);
    return cmo_on_stream(api, src, size, stream);
}

aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo *taskInfo, aclrtStream stream, uint32_t flag)
{
    static const char api[] = "aclrtCmoWaitBarrier";
    ACLSIM_REQUIRE_INIT(api);
    if (!taskInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "taskInfo is NULL");
    if (taskInfo->barrierNum == 0 || taskInfo->barrierNum > ACL_RT_CMO_MAX_BARRIER_NUM)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "taskInfo->barrierNum %zu is not in (0, %u]", taskInfo->barrierNum,
                            ACL_RT_CMO_MAX_BARRIER_NUM);
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(EDGE));
    if (err)
        return err;
    if (flag != 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "flag is reserved and must be 0, not %u", flag);
    for (size_t i = 0; i < taskInfo->barrierNum; i++) {
        if (taskInfo->cmoInfo[i].cmoType != ACL_RT_CMO_TYPE_INVALID)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "taskInfo->cmoInfo[%zu].cmoType is %s: only ACL_RT_CMO_TYPE_INVALID "
                                "has barriers", i, cmo_name(taskInfo->cmoInfo[i].cmoType));
        if (taskInfo->cmoInfo[i].barrierId == 0)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "taskInfo->cmoInfo[%zu].barrierId is 0", i);
    }
    /* The invalidations it waits for were queued before it on this stream:
     * stream order already makes it wait for them. */
    struct aclsim__sref s;
    if ((err = aclsim__stream_resolve(stream, api, NULL, &s)))
        return err;
    return queue_cmo(s, 0, api);
}

/* ---- descriptors ------------------------------------------------------------------- */

/* CANN's descriptor layout (rtCmoAddrInfo, 32 bytes; 64 on Ascend 950). */
struct cmo_desc {
    uint32_t resv0, resv1;
    uint16_t num_outer, num_inner;
    uint32_t len_inner;
    uint64_t src;
    uint32_t stride_outer, stride_inner;
};
_Static_assert(sizeof(struct cmo_desc) == 32, "rtCmoAddrInfo is 32 bytes");

static size_t cmo_desc_size(void)
{
    return aclsim__soc_current()->family == ACLSIM_FAMILY_A5 ? 64 : sizeof(struct cmo_desc);
}

aclError aclrtCmoGetDescSize(size_t *size)
{
    static const char api[] = "aclrtCmoGetDescSize";
    ACLSIM_REQUIRE_INIT(api);
    if (!size)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "size is NULL");
    aclError err = aclsim__soc_check(api, CMO_FAMILIES);
    if (!err)
        *size = cmo_desc_size();
    return err;
}

aclError aclrtCmoSetDesc(void *cmoDesc, void *src, size_t size)
{
    static const char api[] = "aclrtCmoSetDesc";
    ACLSIM_REQUIRE_INIT(api);
    if (!cmoDesc || !src)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL", !cmoDesc ? "cmoDesc" : "src");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "size is 0");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__soc_check(api, CMO_FAMILIES);
    if (!err)
        err = aclsim__current_context(api, &ctx);
    struct aclsim__device *dev = err ? NULL : aclsim__context_device(ctx);
    if (!err)
        err = aclsim__check_on_device(api, "src", src, size, dev);
    struct aclsim__heap_hold hold;
    if (err || (err = aclsim__hold_heaps(api, &hold, cmoDesc, NULL)))
        return err;
    err = aclsim__check_on_device(api, "cmoDesc", cmoDesc, cmo_desc_size(), dev);
    if (!err) {
        struct cmo_desc d = {.num_outer = 1, .num_inner = 1, .len_inner = (uint32_t)size,
                             .src = (uintptr_t)src};
        memset(cmoDesc, 0, cmo_desc_size());
        memcpy(cmoDesc, &d, sizeof d);
    }
    aclsim__release_heaps(&hold);
    return err;
}

aclError aclrtCmoAsyncWithDesc(void *cmoDesc, aclrtCmoType cmoType, aclrtStream stream, const void *reserve)
{
    static const char api[] = "aclrtCmoAsyncWithDesc";
    ACLSIM_REQUIRE_INIT(api);
    if (reserve)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "reserve must be NULL");
    if (!cmoDesc)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "cmoDesc is NULL");
    aclError err = aclsim__soc_check(api, CMO_FAMILIES);
    if (!err)
        err = check_cmo_type(api, cmoType, ACL_ERROR_RT_PARAM_INVALID);
    if (!err && (uintptr_t)cmoDesc % 64)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "cmoDesc %p is not 64-byte aligned", cmoDesc);
    struct aclsim__sref s;
    if (!err)
        err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (!err)
        err = aclsim__check_on_device(api, "cmoDesc", cmoDesc, cmo_desc_size(), s.s->device);
    if (err)
        return err;
    struct cmo_desc d;
    memcpy(&d, cmoDesc, sizeof d);
    if (!d.src || !d.len_inner)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "cmoDesc %p holds no cache operation (set it with aclrtCmoSetDesc)", cmoDesc);
    return queue_cmo(s, d.len_inner, api);
}

/* ---- L2 cache ------------------------------------------------------------------------ */

aclError aclrtDeviceL2CacheFlush(void *rsv)
{
    static const char api[] = "aclrtDeviceL2CacheFlush";
    ACLSIM_REQUIRE_INIT(api);
    if (rsv)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "rsv must be NULL");
    struct aclsim__context *ctx = NULL;
    return aclsim__current_context(api, &ctx);   /* the current device's L2: nothing to flush */
}
