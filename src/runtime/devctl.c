/*
 * Device control: process- and context-level settings, device limits, device
 * and stream resource limits, the default context's state, task-scheduler
 * selection and device utilization.
 *
 * Resource limits (cube/vector cores) take effect: a kernel launched while a
 * limit is in force runs its blocks on at most that many workers at once
 * (aclsim's workers stand for the device's cores), so a limit of 1 runs the
 * blocks one after another. Priority, as CANN documents: the limit of a stream
 * the calling thread uses (aclrtUseStreamResInCurrentThread) > the process's
 * limit for the device (aclrtSetDeviceResLimit) > the hardware's (the SoC
 * table).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- system parameters ----------------------------------------------------- */

#define NOPTS 4
static _Atomic int64_t sys_param[NOPTS];   /* process level; default 0 */

static aclError check_opt(const char *api, aclSysParamOpt opt, int64_t value, bool setting)
{
    if ((unsigned)opt >= NOPTS)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "opt %d is not an aclSysParamOpt value (0..3)", (int)opt);
    int64_t max = opt == ACL_OPT_DETERMINISTIC ? 3 : 1;
    if (setting && (value < 0 || value > max))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "value %lld is invalid for opt %d: 0..%lld", (long long)value,
                            (int)opt, (long long)max);
    return ACL_SUCCESS;
}

aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    static const char api[] = "aclrtSetSysParamOpt";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err && !(err = check_opt(api, opt, value, true)))
        atomic_store(&sys_param[opt], value);
    return err;
}

aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    static const char api[] = "aclrtGetSysParamOpt";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err && !(err = check_opt(api, opt, 0, false)))
        *value = atomic_load(&sys_param[opt]);
    return err;
}

aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    static const char api[] = "aclrtCtxSetSysParamOpt";
    ACLSIM_REQUIRE_INIT(api);
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = check_opt(api, opt, value, true);
    if (!err)
        err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    pthread_mutex_lock(&ctx->lock);
    ctx->sys_param[opt] = value;
    ctx->sys_param_set |= (uint8_t)(1u << opt);
    pthread_mutex_unlock(&ctx->lock);
    return ACL_SUCCESS;
}

aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    static const char api[] = "aclrtCtxGetSysParamOpt";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = check_opt(api, opt, 0, false);
    if (!err)
        err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    pthread_mutex_lock(&ctx->lock);
    bool set = ctx->sys_param_set & (1u << opt);
    int64_t v = ctx->sys_param[opt];
    pthread_mutex_unlock(&ctx->lock);
    /* CANN: context parameters have no default; reading an unset one fails. */
    if (!set)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "opt %d has not been set in the current context "
                            "(aclrtCtxSetSysParamOpt first)", (int)opt);
    *value = v;
    return ACL_SUCCESS;
}

/* ---- device limits (process-wide, shared by all devices) ---------------------- */

#define NLIMITS 5
static size_t limits[NLIMITS] = {1152, 1024, 32768, 32768, 2097152};   /* CANN's defaults */

static size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

/* 207000 unless the SoC supports that limit: SIMD ones on A2/A3/950, SIMT
 * ones on the 950 only. */
static aclError limit_supported(const char *api, aclrtDeviceLimit limit)
{
    if ((unsigned)limit >= NLIMITS)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "limit %d is not an aclrtDeviceLimit value (0..4)", (int)limit);
    bool simd = limit == ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE ||
                limit == ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE;
    return aclsim__soc_check(api, simd ? ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3) |
                                             ACLSIM_FAMILIES(A5)
                                       : ACLSIM_FAMILIES(A5));
}

aclError aclrtDeviceSetLimit(aclrtDeviceLimit limit, size_t value)
{
    static const char api[] = "aclrtDeviceSetLimit";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = limit_supported(api, limit);
    if (err)
        return err;
    /* CANN applies the limits through device 0, so it must be visible. */
    int32_t user = -1;
    for (uint32_t u = 0; u < aclsim__config()->visible_count && user < 0; u++)
        if (aclsim__config()->visible[u] == 0)
            user = (int32_t)u;
    if (user < 0)
        return aclsim__fail(ACL_ERROR_RT_INVALID_DEVICEID, api,
                            "device 0 is not visible (ASCEND_RT_VISIBLE_DEVICES): device limits "
                            "are set through it");
    size_t v = value, lo = 0, hi = SIZE_MAX;
    switch (limit) {
    case ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE:
    case ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE:
        v = round_up(value, 128);
        break;
    case ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE:
        hi = aclsim__soc_current()->family == ACLSIM_FAMILY_A5 ? 131072 : 196608;
        v = value <= 32768 ? 32768 : round_up(value, 16384);
        break;
    case ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE:
        lo = 1024, hi = 64u << 20;
        v = round_up(value, 8);
        break;
    case ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE:
        lo = 1u << 20, hi = 64u << 20;
        v = round_up(value, 8);
        break;
    }
    if (value < lo || v > hi)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "value %zu is out of range for limit %d: %zu..%zu bytes", value,
                            (int)limit, lo, hi);
    pthread_mutex_lock(&lock);
    bool both_zero = (limit == ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE &&
                      limits[ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE] == 0 && v == 0) ||
                     (limit == ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE &&
                      limits[ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE] == 0 && v == 0);
    if (!both_zero)
        limits[limit] = v;
    pthread_mutex_unlock(&lock);
    if (both_zero)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "the SIMT stack and divergence stack sizes cannot both be 0");
    return ACL_SUCCESS;
}

aclError aclrtDeviceGetLimit(aclrtDeviceLimit limit, size_t *value)
{
    static const char api[] = "aclrtDeviceGetLimit";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    aclError err = limit_supported(api, limit);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    size_t v = limits[limit];
    pthread_mutex_unlock(&lock);
    /* The SIMT stack is per thread: the device reserves it for a warp of 32. */
    *value = limit == ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE ? v * 32 : v;
    return ACL_SUCCESS;
}

/* ---- resource limits --------------------------------------------------------- */

#define NRES 2   /* cube cores, vector cores */
static uint32_t dev_limit[ACLSIM_MAX_DEVICES][NRES];   /* 0: not set (under lock) */
/* Set once any device or stream limit has been set: until then launches pay
 * nothing for limits (no lock). */
static atomic_bool any_limit;

/* Stream limits, keyed by the stream's struct and epoch so that a destroyed
 * (recycled) stream's entry never applies to its successor. */
struct stream_limit { struct aclsim__stream *s; uint32_t epoch; uint32_t limit[NRES]; };
static struct stream_limit *stream_limits;
static size_t nstream_limits, cap_stream_limits;

/* The stream whose limits this thread uses (aclrtUseStreamResInCurrentThread). */
static _Thread_local struct aclsim__stream *tls_use;
static _Thread_local uint32_t tls_use_epoch;

static uint32_t hardware(aclrtDevResLimitType type)
{
    const struct aclsim__soc *soc = aclsim__soc_current();
    return type == ACL_RT_DEV_RES_CUBE_CORE ? soc->aicore : soc->vector;
}

static aclError check_type(const char *api, aclrtDevResLimitType type)
{
    if ((unsigned)type >= NRES)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "type %d is not an aclrtDevResLimitType value (0 cube, 1 vector)",
                            (int)type);
    return aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
}

static aclError check_limit(const char *api, aclrtDevResLimitType type, uint32_t value)
{
    if (value == 0 || value > hardware(type))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "value %u is out of range: 1..%u %s cores on %s", value,
                            hardware(type), type == ACL_RT_DEV_RES_CUBE_CORE ? "cube" : "vector",
                            aclsim__soc_current()->name);
    return ACL_SUCCESS;
}

/* Caller holds lock. NULL when the stream has no limits of its own. */
static struct stream_limit *find_stream(struct aclsim__stream *s, uint32_t epoch, bool create)
{
    size_t keep = 0;
    struct stream_limit *found = NULL;
    for (size_t i = 0; i < nstream_limits; i++) {   /* drops entries of dead streams */
        struct stream_limit *e = &stream_limits[i];
        if (atomic_load(&e->s->epoch) != e->epoch)
            continue;
        stream_limits[keep] = *e;
        if (e->s == s && e->epoch == epoch)
            found = &stream_limits[keep];
        keep++;
    }
    nstream_limits = keep;
    if (found || !create)
        return found;
    if (nstream_limits == cap_stream_limits) {
        size_t cap = cap_stream_limits ? cap_stream_limits * 2 : 8;
        struct stream_limit *bigger = aclsim__realloc(stream_limits, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        stream_limits = bigger;
        cap_stream_limits = cap;
    }
    found = &stream_limits[nstream_limits++];
    *found = (struct stream_limit){s, epoch, {0, 0}};
    return found;
}

/* The shared checks of the stream-level calls: runtime, product, stream. */
static aclError stream_for_limits(const char *api, aclrtStream stream, struct aclsim__sref *ref)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    return err ? err : aclsim__stream_resolve(stream, api, NULL, ref);
}

aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value)
{
    static const char api[] = "aclrtGetDeviceResLimit";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    aclError err = check_type(api, type);
    if (!err)
        err = aclsim__device_check_id(deviceId, api);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    uint32_t v = dev_limit[deviceId][type];
    pthread_mutex_unlock(&lock);
    *value = v ? v : hardware(type);
    return ACL_SUCCESS;
}

aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value)
{
    static const char api[] = "aclrtSetDeviceResLimit";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_type(api, type);
    if (!err)
        err = aclsim__device_check_id(deviceId, api);
    if (!err)
        err = check_limit(api, type, value);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    dev_limit[deviceId][type] = value;
    atomic_store(&any_limit, true);
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

aclError aclrtResetDeviceResLimit(int32_t deviceId)
{
    static const char api[] = "aclrtResetDeviceResLimit";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__device_check_id(deviceId, api);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    memset(dev_limit[deviceId], 0, sizeof dev_limit[deviceId]);
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

/* A stream's effective limit: its own, else the process's for its device,
 * else the hardware's. Caller holds lock. */
static uint32_t stream_effective(struct aclsim__stream *s, uint32_t epoch, aclrtDevResLimitType type)
{
    struct stream_limit *e = find_stream(s, epoch, false);
    if (e && e->limit[type])
        return e->limit[type];
    uint32_t d = dev_limit[s->device->id][type];
    return d ? d : hardware(type);
}

aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t *value)
{
    static const char api[] = "aclrtGetStreamResLimit";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    struct aclsim__sref ref;
    aclError err = check_type(api, type);
    if (!err)
        err = aclsim__stream_resolve(stream, api, NULL, &ref);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    *value = stream_effective(ref.s, ref.epoch, type);
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t value)
{
    static const char api[] = "aclrtSetStreamResLimit";
    ACLSIM_REQUIRE_INIT(api);
    struct aclsim__sref ref;
    aclError err = check_type(api, type);
    if (!err)
        err = check_limit(api, type, value);
    if (!err)
        err = aclsim__stream_resolve(stream, api, NULL, &ref);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    struct stream_limit *e = find_stream(ref.s, ref.epoch, true);
    if (e)
        e->limit[type] = value;
    atomic_store(&any_limit, true);
    pthread_mutex_unlock(&lock);
    return e ? ACL_SUCCESS : aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
}

aclError aclrtResetStreamResLimit(aclrtStream stream)
{
    static const char api[] = "aclrtResetStreamResLimit";
    struct aclsim__sref ref;
    aclError err = stream_for_limits(api, stream, &ref);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    struct stream_limit *e = find_stream(ref.s, ref.epoch, false);
    if (e)
        memset(e->limit, 0, sizeof e->limit);
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

aclError aclrtUseStreamResInCurrentThread(aclrtStream stream)
{
    static const char api[] = "aclrtUseStreamResInCurrentThread";
    struct aclsim__sref ref;
    aclError err = stream_for_limits(api, stream, &ref);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    bool has = find_stream(ref.s, ref.epoch, false) != NULL;
    pthread_mutex_unlock(&lock);
    if (!has)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stream %p has no resource limits of its own (aclrtSetStreamResLimit "
                            "first)", stream);
    tls_use = ref.s;
    tls_use_epoch = ref.epoch;
    return ACL_SUCCESS;
}

aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream)
{
    static const char api[] = "aclrtUnuseStreamResInCurrentThread";
    struct aclsim__sref ref;
    aclError err = stream_for_limits(api, stream, &ref);
    if (err)
        return err;
    if (tls_use == ref.s && tls_use_epoch == ref.epoch)
        tls_use = NULL;
    return ACL_SUCCESS;
}

/* The calling thread's limit for type on dev (0: the stream it uses is gone). */
static uint32_t thread_limit(const struct aclsim__device *dev, aclrtDevResLimitType type)
{
    uint32_t v = 0;
    pthread_mutex_lock(&lock);
    if (tls_use && atomic_load(&tls_use->epoch) == tls_use_epoch && tls_use->device == dev) {
        struct stream_limit *e = find_stream(tls_use, tls_use_epoch, false);
        v = e ? e->limit[type] : 0;
    }
    if (!v)
        v = dev_limit[dev->id][type];
    pthread_mutex_unlock(&lock);
    return v ? v : hardware(type);
}

aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value)
{
    static const char api[] = "aclrtGetResInCurrentThread";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = check_type(api, type);
    if (!err)
        err = aclsim__current_context(api, &ctx);
    if (!err)
        *value = thread_limit(aclsim__context_device(ctx), type);
    return err;
}

uint32_t aclsim__kernel_core_limit(const struct aclsim__device *dev)
{
    /* A kernel runs on AI Cores: the cube limit governs (the vector limit
     * where the SoC has no separate cube cores does not arise here). */
    if (!atomic_load_explicit(&any_limit, memory_order_acquire))
        return 0;
    uint32_t limit = thread_limit(dev, ACL_RT_DEV_RES_CUBE_CORE);
    return limit >= hardware(ACL_RT_DEV_RES_CUBE_CORE) ? 0 : limit;
}

void aclsim__devctl_finalize(void)
{
    pthread_mutex_lock(&lock);
    memset(dev_limit, 0, sizeof dev_limit);
    nstream_limits = 0;
    atomic_store(&any_limit, false);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < NOPTS; i++)
        atomic_store(&sys_param[i], 0);
}

/* ---- contexts, task schedulers, utilization --------------------------------- */

aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t *flags, int32_t *active)
{
    static const char api[] = "aclrtGetPrimaryCtxState";
    ACLSIM_REQUIRE_INIT(api);
    if (!active)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "active is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__device_check_id(deviceId, api);
    if (err)
        return err;
    if (flags)
        *flags = 0;   /* reserved */
    pthread_mutex_lock(&aclsim__rt.lock);
    const struct aclsim__device *dev = &aclsim__devices[deviceId];
    *active = atomic_load(&dev->open) && !dev->closing && dev->default_ctx;
    pthread_mutex_unlock(&aclsim__rt.lock);
    return ACL_SUCCESS;
}

static _Thread_local aclrtTsId tls_ts = ACL_TS_ID_AICORE;

aclError aclrtSetTsDevice(aclrtTsId tsId)
{
    static const char api[] = "aclrtSetTsDevice";
    ACLSIM_REQUIRE_INIT(api);
    if (tsId != ACL_TS_ID_AICORE && tsId != ACL_TS_ID_AIVECTOR)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "tsId %d is invalid: ACL_TS_ID_AICORE (0) or ACL_TS_ID_AIVECTOR (1)",
                            (int)tsId);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    /* aclsim's devices have one task scheduler (the executor): as on an AI
     * processor without a vector scheduler, AIVECTOR selects the AI Core one. */
    tls_ts = tsId;
    return ACL_SUCCESS;
}

/* Per device: the busy time and clock at the previous query. */
static struct { uint64_t busy, at; uint32_t session; } util[ACLSIM_MAX_DEVICES];

aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo)
{
    static const char api[] = "aclrtGetDeviceUtilizationRate";
    ACLSIM_REQUIRE_INIT(api);
    if (!utilizationInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "utilizationInfo is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__device_check_id(deviceId, api);
    if (err)
        return err;
    if (utilizationInfo->utilizationExtend)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "utilizationInfo->utilizationExtend is reserved and must be NULL");
    struct aclsim__device *dev = &aclsim__devices[deviceId];
    int32_t pct = 0;
    pthread_mutex_lock(&lock);
    uint64_t now = aclsim__now_ns(), busy = atomic_load(&dev->kernel_busy_ns);
    if (util[deviceId].at && busy >= util[deviceId].busy && now > util[deviceId].at) {
        /* Kernel time over the interval since the previous query, per worker. */
        uint32_t workers = aclsim__config()->workers ? aclsim__config()->workers : 1;
        double share = (double)(busy - util[deviceId].busy) /
                       ((double)(now - util[deviceId].at) * workers);
        pct = share >= 1 ? 100 : (int32_t)(share * 100 + 0.5);
    }
    util[deviceId].busy = busy;
    util[deviceId].at = now;
    pthread_mutex_unlock(&lock);
    utilizationInfo->cubeUtilization = pct;
    utilizationInfo->vectorUtilization = aclsim__soc_current()->vector ? pct : -1;
    utilizationInfo->aicpuUtilization = 0;     /* aclsim runs no AI CPU tasks */
    utilizationInfo->memoryUtilization = -1;   /* CANN: not supported, -1 */
    return ACL_SUCCESS;
}

/* After fork(), in the child (internal.h, THE FORK RULE). */
void aclsim__devctl_forget_after_fork(void)
{
    pthread_mutex_init(&lock, NULL);
}
