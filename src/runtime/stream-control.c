/*
 * The stream API beyond create/destroy/synchronize: configured creation
 * (aclrtCreateStreamWithConfig, aclrtCreateStreamV2 and its config handles),
 * queries (id, flags, priority, status, attributes, available streams),
 * aclrtStreamAbort, the stream state callbacks, device synchronization with
 * a timeout, and the model-stream functions (aclrtActiveStream,
 * aclrtSwitchStream: steps of a built model, modelri-label.c).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define PRIORITY_GREATEST 0   /* CANN's RT_STREAM_GREATEST_PRIORITY */
#define PRIORITY_LEAST 7      /* RT_STREAM_LEAST_PRIORITY */

/* Flags a stream can be created with in aclsim: the others need a model
 * (ACL_STREAM_PERSISTENT), AI CPU scheduling (ACL_STREAM_CPU_SCHEDULE) or
 * device-side launches (ACL_STREAM_DEVICE_USE_ONLY), none of which exists. */
#define FLAGS_KNOWN (ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC | ACL_STREAM_PERSISTENT | \
                     ACL_STREAM_HUGE | ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY)
/* Ascend 950, Atlas A3 and A2: the products some stream functions need. */
#define NEWEST (ACLSIM_FAMILIES(A5) | ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A2))

#define FLAGS_UNSIMULATED (ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY)

uint32_t aclsim__streams_max(void)
{
    /* CANN's aclrtCreateStream constraints: streams per device, by product. */
    switch (aclsim__soc_current()->family) {
    case ACLSIM_FAMILY_EDGE: return 512;
    case ACLSIM_FAMILY_INFERENCE: return 1024;
    case ACLSIM_FAMILY_TRAINING: return 2048;
    default: return 1984;   /* 950, A3, A2 (IPV350: not documented; ours) */
    }
}

uint32_t aclsim__streams_live(struct aclsim__device *dev)
{
    return atomic_load(&dev->nstreams);
}

/* ---- stream state callbacks (aclrtRegStreamStateCallback) ----------------- */

struct state_cb {
    struct state_cb *next;        /* sorted by name, as CANN's map */
    char *name;
    aclrtStreamStateCallback fn;
    void *args;
};
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static struct state_cb *state_cbs;
static atomic_uint nstate_cbs;

void aclsim__stream_state_notify(void *handle, bool create)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&nstate_cbs, memory_order_acquire)) || !handle)
        return;
    /* Copy the list: callbacks run without the lock (they may register). */
    pthread_mutex_lock(&state_lock);
    size_t n = 0;
    for (struct state_cb *c = state_cbs; c; c = c->next)
        n++;
    struct state_cb *copy = n ? aclsim__calloc(n, sizeof *copy) : NULL;
    size_t i = 0;
    for (struct state_cb *c = state_cbs; c && copy; c = c->next)
        copy[i++] = *c;
    pthread_mutex_unlock(&state_lock);
    if (n && !copy) {
        aclsim__log(ACLSIM_LOG_ERROR, "out of memory calling the stream state callbacks");
        return;
    }
    for (size_t k = 0; k < i; k++)
        copy[k].fn(handle, create ? ACL_RT_STREAM_STATE_CREATE_POST : ACL_RT_STREAM_STATE_DESTROY_PRE,
                   copy[k].args);
    free(copy);
}

/* fork() child: the registrations stay (they belong to the process). */
void aclsim__stream_state_forget_after_fork(void)
{
    pthread_mutex_init(&state_lock, NULL);
}

void *aclsim__stream_announce(struct aclsim__stream *s)
{
    __atomic_store_n(&s->announced, true, __ATOMIC_RELEASE);
    return s->handle;
}

aclError aclrtRegStreamStateCallback(const char *regName, aclrtStreamStateCallback callback,
                                     void *args)
{
    static const char api[] = "aclrtRegStreamStateCallback";
    ACLSIM_REQUIRE_INIT(api);
    if (!regName)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "regName is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    pthread_mutex_lock(&state_lock);
    struct state_cb **p = &state_cbs;
    while (*p && strcmp((*p)->name, regName) < 0)
        p = &(*p)->next;
    bool exists = *p && strcmp((*p)->name, regName) == 0;
    if (!callback) {
        if (exists) {   /* unregister (an unknown name is fine, as CANN) */
            struct state_cb *c = *p;
            *p = c->next;
            free(c->name);
            free(c);
            atomic_fetch_sub(&nstate_cbs, 1);
        }
    } else if (exists) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "regName \"%s\" is registered already (register each name once; "
                           "NULL callback unregisters)", regName);
    } else {
        struct state_cb *c = aclsim__calloc(1, sizeof *c);
        char *name = aclsim__strdup(regName);
        if (!c || !name) {
            free(c);
            free(name);
            err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory registering a callback");
        } else {
            *c = (struct state_cb){*p, name, callback, args};
            *p = c;
            atomic_fetch_add(&nstate_cbs, 1);
        }
    }
    pthread_mutex_unlock(&state_lock);
    return err;
}

/* ---- creation with a configuration ------------------------------------------- */

/* Checks flags; the priority is clamped into CANN's range, as CANN does. */
static aclError configured_create(aclrtStream *stream, uint64_t flag, uint32_t priority,
                                  const char *api)
{
    if (flag & FLAGS_UNSIMULATED)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "flag 0x%llx asks for a %s stream, which aclsim cannot simulate "
                            "(no AI CPU scheduling or device-side launches)",
                            (unsigned long long)flag,
                            (flag & ACL_STREAM_CPU_SCHEDULE) ? "CPU-schedule" : "device-use-only");
    /* Unknown bits make an ordinary stream (CANN: "other values create the
     * same stream as aclrtCreateStream"); aclrtStreamGetFlags reports the known ones. */
    uint32_t flags = (uint32_t)(flag & FLAGS_KNOWN);
    if (priority > PRIORITY_LEAST)
        priority = PRIORITY_LEAST;
    return aclsim__create_stream_api(stream, flags, priority, api);
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)
{
    static const char api[] = "aclrtCreateStreamWithConfig";
    ACLSIM_REQUIRE_INIT(api);
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    return err ? err : configured_create(stream, flag, priority, api);
}

/* Stream config handles and aclrtCreateStreamV2: IPV350 only (CANN's table). */
aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void)
{
    static const char api[] = "aclrtCreateStreamConfigHandle";
    if (!aclsim__initialized()) {
        aclsim__fail(ACL_ERROR_UNINITIALIZE, api,
                     "the runtime is not initialized (call aclInit first); returning NULL");
        return NULL;
    }
    if (aclsim__soc_check(api, ACLSIM_FAMILIES(IPV)))
        return NULL;
    aclrtStreamConfigHandle *h = aclsim__calloc(1, sizeof *h);
    if (!h)
        aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory; returning NULL");
    return h;
}

aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle)
{
    static const char api[] = "aclrtDestroyStreamConfigHandle";
    ACLSIM_REQUIRE_INIT(api);
    if (!handle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(IPV));
    if (!err)
        free(handle);
    return err;
}

aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle, aclrtStreamConfigAttr attr,
                                 const void *attrValue, size_t valueSize)
{
    static const char api[] = "aclrtSetStreamConfigOpt";
    ACLSIM_REQUIRE_INIT(api);
    if (!handle || !attrValue)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            handle ? "attrValue" : "handle");
    static const struct { const char *name; size_t size; } attrs[] = {
        [ACL_RT_STREAM_WORK_ADDR_PTR] = {"ACL_RT_STREAM_WORK_ADDR_PTR", sizeof(void *)},
        [ACL_RT_STREAM_WORK_SIZE] = {"ACL_RT_STREAM_WORK_SIZE", sizeof(size_t)},
        [ACL_RT_STREAM_FLAG] = {"ACL_RT_STREAM_FLAG", sizeof(size_t)},
        [ACL_RT_STREAM_PRIORITY] = {"ACL_RT_STREAM_PRIORITY", sizeof(uint32_t)},
    };
    if ((unsigned)attr >= sizeof attrs / sizeof attrs[0])
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "attr %d is invalid: ACL_RT_STREAM_WORK_ADDR_PTR (0) .. "
                            "ACL_RT_STREAM_PRIORITY (3)", (int)attr);
    if (valueSize != attrs[attr].size)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "valueSize %zu is invalid for %s: it must be %zu", valueSize,
                            attrs[attr].name, attrs[attr].size);
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(IPV));
    if (err)
        return err;
    switch (attr) {
    case ACL_RT_STREAM_WORK_ADDR_PTR:
        memcpy(&handle->workptr, attrValue, sizeof handle->workptr);
        break;
    case ACL_RT_STREAM_WORK_SIZE:
        memcpy(&handle->workSize, attrValue, sizeof handle->workSize);
        break;
    case ACL_RT_STREAM_FLAG:
        memcpy(&handle->flag, attrValue, sizeof handle->flag);
        break;
    default: {
        uint32_t v;
        memcpy(&v, attrValue, sizeof v);
        if (v > PRIORITY_LEAST)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "priority %u is invalid: %d (greatest) .. %d (least)", v,
                                PRIORITY_GREATEST, PRIORITY_LEAST);
        handle->priority = v;
        break;
    }
    }
    return ACL_SUCCESS;
}

aclError aclrtCreateStreamV2(aclrtStream *stream, const aclrtStreamConfigHandle *handle)
{
    static const char api[] = "aclrtCreateStreamV2";
    ACLSIM_REQUIRE_INIT(api);
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(IPV));
    if (err)
        return err;
    /* NULL handle: the defaults. The model work memory (workptr, workSize)
     * is for model execution, which aclsim does not simulate: kept nowhere. */
    return configured_create(stream, handle ? handle->flag : 0, handle ? handle->priority : 0,
                             api);
}

/* ---- queries ------------------------------------------------------------------- */

/* Resolves stream (NULL: the default stream) and locks it, checking that it
 * is still the stream resolved. On success the caller unlocks ref->s->lock. */
static aclError lock_stream(aclrtStream stream, const char *api, struct aclsim__sref *ref)
{
    aclError err = aclsim__stream_resolve(stream, api, NULL, ref);
    if (err)
        return err;
    pthread_mutex_lock(&ref->s->lock);
    if (ACLSIM_UNLIKELY(ref->s->closed ||
                        atomic_load_explicit(&ref->s->epoch, memory_order_relaxed) != ref->epoch)) {
        pthread_mutex_unlock(&ref->s->lock);
        return stream ? aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                                     "stream %p was destroyed while this call was using it",
                                     stream)
                      : aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                                     "the current context was destroyed while this call was "
                                     "using its default stream");
    }
    return ACL_SUCCESS;
}

enum field { F_ID, F_FLAGS, F_PRIORITY };

static aclError get_field(aclrtStream stream, void *out, enum field f, const char *api,
                          const char *what)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!out)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", what);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    struct aclsim__sref ref;
    if (err || (err = lock_stream(stream, api, &ref)))
        return err;
    struct aclsim__stream *s = ref.s;
    if (f == F_ID)
        *(int32_t *)out = s->id;
    else
        *(uint32_t *)out = f == F_FLAGS ? s->flags : __atomic_load_n(&s->priority, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&s->lock);
    return ACL_SUCCESS;
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)
{
    return get_field(stream, streamId, F_ID, "aclrtStreamGetId", "streamId");
}

aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags)
{
    return get_field(stream, flags, F_FLAGS, "aclrtStreamGetFlags", "flags");
}

aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority)
{
    return get_field(stream, priority, F_PRIORITY, "aclrtStreamGetPriority", "priority");
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
{
    static const char api[] = "aclrtStreamQuery";
    ACLSIM_REQUIRE_INIT(api);
    if (!status)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "status is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)) ||
        (err = aclsim__capture_refuse_stream(ref.s, api)))
        return err;
    /* Every task submitted so far has finished (run or discarded). */
    uint64_t submitted = atomic_load_explicit(&ref.s->submitted, memory_order_acquire);
    uint64_t completed = atomic_load_explicit(&ref.s->completed, memory_order_acquire);
    *status = completed >= submitted ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
    return ACL_SUCCESS;
}

aclError aclrtGetStreamAvailableNum(uint32_t *streamCount)
{
    static const char api[] = "aclrtGetStreamAvailableNum";
    ACLSIM_REQUIRE_INIT(api);
    if (!streamCount)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "streamCount is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    struct aclsim__context *ctx = NULL;
    if (err || (err = aclsim__current_context(api, &ctx)))
        return err;
    uint32_t live = aclsim__streams_live(aclsim__context_device(ctx)), max = aclsim__streams_max();
    *streamCount = live < max ? max - live : 0;
    return ACL_SUCCESS;
}

aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t *greatestPriority)
{
    static const char api[] = "aclrtDeviceGetStreamPriorityRange";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    /* Either may be NULL (CANN fills in the ones given). */
    if (leastPriority)
        *leastPriority = PRIORITY_LEAST;
    if (greatestPriority)
        *greatestPriority = PRIORITY_GREATEST;
    return ACL_SUCCESS;
}

aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream)
{
    static const char api[] = "aclrtCtxGetCurrentDefaultStream";
    ACLSIM_REQUIRE_INIT(api);
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(NULL, api, NULL, &ref)))
        return err;
    *stream = ref.s->handle;
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)
{
    static const char api[] = "aclrtSynchronizeDeviceWithTimeout";
    ACLSIM_REQUIRE_INIT(api);
    if (timeout < -1 || timeout == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "timeout %d is invalid: -1 (wait forever) or a positive number of "
                            "milliseconds", timeout);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    struct aclsim__context *ctx = NULL;
    if (err || (err = aclsim__current_context(api, &ctx)) ||
        (err = aclsim__capture_refuse_device(aclsim__context_device(ctx), api)))
        return err;
    err = aclsim__device_synchronize_timeout(aclsim__context_device(ctx), timeout, api);
    if (!err)
        aclsim__mempools_after_sync(aclsim__context_device(ctx));   /* release threshold */
    return err;
}

/* ---- attributes -------------------------------------------------------------- */

/* NULL (the default stream) is accepted on 950, A3 and A2 only. */
static aclError attr_checks(aclrtStream stream, aclrtStreamAttr attr, aclrtStreamAttrValue *value,
                            const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    if (attr < ACL_STREAM_ATTR_FAILURE_MODE || attr > ACL_STREAM_ATTR_PRIORITY)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stmAttrType %d is invalid: ACL_STREAM_ATTR_FAILURE_MODE (1) .. "
                            "ACL_STREAM_ATTR_PRIORITY (5)", (int)attr);
    if (!stream && !((1u << aclsim__soc_current()->family) &
                     (NEWEST)))
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "the default stream (NULL) is not supported on the configured SoC "
                            "%s: pass a stream", aclsim__config()->soc_name);
    return ACL_SUCCESS;
}

aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                 aclrtStreamAttrValue *value)
{
    static const char api[] = "aclrtSetStreamAttribute";
    aclError err = attr_checks(stream, stmAttrType, value, api);
    if (err)
        return err;
    if (stmAttrType == ACL_STREAM_ATTR_FAILURE_MODE) {
        /* CANN: not for a context's default stream (through this attribute) */
        if (!stream)
            return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                "ACL_STREAM_ATTR_FAILURE_MODE cannot be set on the default stream "
                                "(NULL): pass a stream you created");
        return aclrtSetStreamFailureMode(stream, value->failureMode);   /* failure.c */
    }
    uint32_t v = stmAttrType == ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK ? value->overflowSwitch
                 : stmAttrType == ACL_STREAM_ATTR_USER_CUSTOM_TAG    ? value->userCustomTag
                 : stmAttrType == ACL_STREAM_ATTR_CACHE_OP_INFO      ? value->cacheOpInfoSwitch
                                                                     : value->streamPriority;
    if (stmAttrType == ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK && v > 1)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "overflowSwitch %u is invalid: 0 (off) or 1 (on)", v);
    if (stmAttrType == ACL_STREAM_ATTR_CACHE_OP_INFO && v > 1)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "cacheOpInfoSwitch %u is invalid: 0 (off) or 1 (on)", v);
    if (stmAttrType == ACL_STREAM_ATTR_PRIORITY && v > PRIORITY_LEAST)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "streamPriority %u is invalid: %d (greatest) .. %d (least)", v,
                            PRIORITY_GREATEST, PRIORITY_LEAST);
    struct aclsim__sref ref;
    if ((err = lock_stream(stream, api, &ref)))
        return err;
    struct aclsim__stream *s = ref.s;
    switch (stmAttrType) {
    case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK: atomic_store(&s->overflow_check, v == 1); break;
    case ACL_STREAM_ATTR_USER_CUSTOM_TAG: s->user_tag = v; break;
    case ACL_STREAM_ATTR_CACHE_OP_INFO: s->cache_op_info = v; break;
    default: __atomic_store_n(&s->priority, v, __ATOMIC_RELAXED); break;
    }
    pthread_mutex_unlock(&s->lock);
    return ACL_SUCCESS;
}

aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                 aclrtStreamAttrValue *value)
{
    static const char api[] = "aclrtGetStreamAttribute";
    aclError err = attr_checks(stream, stmAttrType, value, api);
    struct aclsim__sref ref;
    if (err || (err = lock_stream(stream, api, &ref)))
        return err;
    struct aclsim__stream *s = ref.s;
    memset(value, 0, sizeof *value);
    switch (stmAttrType) {
    case ACL_STREAM_ATTR_FAILURE_MODE: value->failureMode = s->failure_mode; break;
    case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK: value->overflowSwitch = atomic_load(&s->overflow_check); break;
    case ACL_STREAM_ATTR_USER_CUSTOM_TAG: value->userCustomTag = s->user_tag; break;
    case ACL_STREAM_ATTR_CACHE_OP_INFO: value->cacheOpInfoSwitch = s->cache_op_info; break;
    default: value->streamPriority = __atomic_load_n(&s->priority, __ATOMIC_RELAXED); break;
    }
    pthread_mutex_unlock(&s->lock);
    return ACL_SUCCESS;
}

/* ---- abort, stop --------------------------------------------------------------- */

aclError aclrtStreamAbort(aclrtStream stream)
{
    static const char api[] = "aclrtStreamAbort";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, NEWEST);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    if (ACLSIM_UNLIKELY(ref.s == aclsim__tls_stream))
        return aclsim__refuse_self_wait(api, "this stream");
    if (!aclsim__stream_abort(ref))
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "stream %p was destroyed while this call was using it", stream);
    return ACL_SUCCESS;
}

aclError aclrtStreamStop(aclrtStream stream)
{
    static const char api[] = "aclrtStreamStop";
    ACLSIM_REQUIRE_INIT(api);
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stream is NULL (the default stream cannot be stopped)");
    aclError err = aclsim__soc_check(api, NEWEST);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    /* Its whole effect is to stop the task running now: a kernel block or a
     * host function on a CPU thread cannot be stopped from outside. */
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "aclsim cannot stop a running task (kernels and host functions run to "
                        "completion on a CPU); aclrtStreamAbort discards the pending ones");
}

/* ---- model streams ------------------------------------------------------------ */

/* Both are steps of a model built on persistent streams (modelri-label.c). */
static const uint32_t model_socs = ACLSIM_FAMILIES(A5) | ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(EDGE) |
                                   ACLSIM_FAMILIES(INFERENCE) | ACLSIM_FAMILIES(TRAINING);

aclError aclrtActiveStream(aclrtStream activeStream, aclrtStream stream)
{
    static const char api[] = "aclrtActiveStream";
    ACLSIM_REQUIRE_INIT(api);
    if (!activeStream || !stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            activeStream ? "stream" : "activeStream");
    aclError err = aclsim__soc_check(api, model_socs);
    if (!err)
        err = aclsim__modelri_stream_control(0, activeStream, NULL, 0, NULL, 0, stream, api);
    return err;
}

aclError aclrtSwitchStream(void *leftValue, aclrtCondition cond, void *rightValue,
                           aclrtCompareDataType dataType, aclrtStream trueStream,
                           aclrtStream falseStream, aclrtStream stream)
{
    static const char api[] = "aclrtSwitchStream";
    ACLSIM_REQUIRE_INIT(api);
    const char *null = !leftValue ? "leftValue" : !rightValue ? "rightValue"
                       : !trueStream ? "trueStream" : !stream ? "stream" : NULL;
    if (null)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", null);
    if (falseStream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "falseStream is a reserved parameter and must be NULL");
    if ((unsigned)cond > ACL_RT_LESS_OR_EQUAL || (unsigned)dataType > ACL_RT_SWITCH_INT64)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s %d is invalid",
                            (unsigned)cond > ACL_RT_LESS_OR_EQUAL ? "cond" : "dataType",
                            (unsigned)cond > ACL_RT_LESS_OR_EQUAL ? (int)cond : (int)dataType);
    aclError err = aclsim__soc_check(api, model_socs);
    if (!err)
        err = aclsim__modelri_stream_control(1, trueStream, leftValue, (int)cond, rightValue,
                                             (int)dataType, stream, api);
    return err;
}
