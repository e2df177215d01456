/*
 * Model runtime instances built on persistent streams (modelri.h has the
 * structures and the map of the other files): aclmdlRIBuildBegin, binding
 * and unbinding streams, aclmdlRIEndTask, aclmdlRIBuildEnd,
 * aclrtPersistentTaskClean and aclmdlRIAbort. The tasks issued to a bound
 * stream are recorded by the capture hook (modelri-capture.c); labels and
 * stream activation add control steps (modelri-label.c); aclmdlRIExecute runs
 * the model (modelri-run.c).
 */
#include "modelri.h"

#include <stdlib.h>

/* ---- explicit build on persistent streams ---------------------------------------------- */

aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag)
{
    static const char api[] = "aclmdlRIBuildBegin";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (!err && flag != 0)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "flag %u is reserved and must be 0", flag);
    struct aclsim__context *ctx = NULL;
    if (err || (err = aclsim__current_context(api, &ctx)))
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_new(ctx, RI_BUILDING);
    if (ri) {
        ri->built = true;
        *modelRI = ri->handle;
    } else {
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

/* The instance and the stream of a build call (ri_lock taken on success). */
static struct aclsim__ri *build_call(aclmdlRI modelRI, aclrtStream stream, struct aclsim__sref *ref,
                                     const char *api, aclError *err)
{
    if ((*err = aclsim__ri_first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api)))
        return NULL;
    if (!stream) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "stream is NULL (the default stream cannot be bound to a model)");
        return NULL;
    }
    if ((*err = aclsim__stream_resolve(stream, api, NULL, ref)))
        return NULL;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, err);
    if (ri && !ri->built) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "model runtime instance %u was captured, not built with "
                            "aclmdlRIBuildBegin", ri->id);
        ri = NULL;
    }
    if (!ri)
        pthread_mutex_unlock(&aclsim__ri_lock);
    return ri;
}

aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream, uint32_t flag)
{
    static const char api[] = "aclmdlRIBindStream";
    struct aclsim__sref ref;
    aclError err;
    struct aclsim__ri *ri = build_call(modelRI, stream, &ref, api, &err);
    if (!ri)
        return err;
    if (flag != ACL_MODEL_STREAM_FLAG_HEAD && flag != ACL_MODEL_STREAM_FLAG_DEFAULT)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "flag 0x%x is invalid: ACL_MODEL_STREAM_FLAG_HEAD (0) or "
                           "ACL_MODEL_STREAM_FLAG_DEFAULT (0x7FFFFFFF)", flag);
    else if (!(__atomic_load_n(&ref.s->flags, __ATOMIC_RELAXED) & ACL_STREAM_PERSISTENT))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "stream %p was not created with ACL_STREAM_PERSISTENT "
                           "(aclrtCreateStreamWithConfig)", stream);
    else if (ref.s->capture)
        err = aclsim__fail(ACL_ERROR_RT_STREAM_MODEL, api,
                           "stream %p is bound to a model runtime instance already", stream);
    else if (ri->state != RI_BUILDING)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "the build of model runtime instance %u has ended", ri->id);
    else if (!aclsim__ri_add_lane(ri, ref.s, ref.epoch, stream))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    else
        ri->lanes[ri->nlanes - 1].bind_flag = flag;
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

/* The lane of ref.s in ri (ri_lock held), or -1 with 107005. */
static int bound_lane(struct aclsim__ri *ri, struct aclsim__sref ref, const char *api, aclError *err)
{
    int lane = ref.s->capture == ri ? aclsim__ri_lane_of(ri, ref.s) : -1;
    if (lane < 0)
        *err = aclsim__fail(ACL_ERROR_RT_STREAM_MODEL, api,
                            "stream %p is not bound to model runtime instance %u", ref.handle,
                            ri->id);
    return lane;
}

aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream)
{
    static const char api[] = "aclmdlRIEndTask";
    struct aclsim__sref ref;
    aclError err;
    struct aclsim__ri *ri = build_call(modelRI, stream, &ref, api, &err);
    if (!ri)
        return err;
    int lane = bound_lane(ri, ref, api, &err);
    if (lane >= 0)
        ri->lanes[lane].ended = true;
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve)
{
    static const char api[] = "aclmdlRIBuildEnd";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (!err && reserve)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "reserve is reserved and must be NULL");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri && (!ri->built || ri->state != RI_BUILDING))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "model runtime instance %u is not being built", ri->id);
    else if (ri)
        ri->state = RI_BUILT;
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream)
{
    static const char api[] = "aclmdlRIUnbindStream";
    struct aclsim__sref ref;
    aclError err;
    struct aclsim__ri *ri = build_call(modelRI, stream, &ref, api, &err);
    if (!ri)
        return err;
    int lane = bound_lane(ri, ref, api, &err);
    if (lane >= 0) {
        aclsim__ri_lane_leave(ri, &ri->lanes[lane]);
        ri->lanes[lane].gone = true;   /* its tasks stay, replayed on the HEAD stream */
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclrtPersistentTaskClean(aclrtStream stream)
{
    static const char api[] = "aclrtPersistentTaskClean";
    aclError err = aclsim__ri_first_checks(stream, "stream", ACLSIM_ALL_BUT_IPV, api);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    if (!(__atomic_load_n(&ref.s->flags, __ATOMIC_RELAXED) & ACL_STREAM_PERSISTENT))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "stream %p was not created with ACL_STREAM_PERSISTENT", stream);
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = ref.s->capture;
    int lane = ri ? aclsim__ri_lane_of(ri, ref.s) : -1;
    if (ri && ri->state != RI_BUILDING) {
        err = aclsim__fail(ACL_ERROR_RT_MODEL_RUNNING, api,
                           "the build of model runtime instance %u has ended: its tasks stay",
                           ri->id);
    } else if (lane >= 0) {   /* drops the tasks the stream recorded */
        uint32_t k = 0;
        for (uint32_t i = 0; i < ri->ntasks; i++) {
            struct ri_task *rt = ri->tasks[i];
            if (rt->lane != (uint32_t)lane) {
                ri->tasks[k++] = rt;
                continue;
            }
            aclsim__handle_free(rt->handle);
            aclsim__ri_task_drop(&rt->t);
            free(rt);
        }
        ri->ntasks = k;
        aclsim__ri_plan_unref(ri->plan);
        ri->plan = NULL;
        ri->lanes[lane].ntasks = 0;
        ri->lanes[lane].ended = false;
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIAbort(aclmdlRI modelRI)
{
    static const char api[] = "aclmdlRIAbort";
    aclError err = aclsim__ri_first_checks(NULL, NULL, ACLSIM_ALL_BUT_IPV, api);
    if (!err && !modelRI)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "modelRI is NULL");
    if (err)
        return err;
    struct aclsim__sref heads[16];
    uint32_t nheads = 0;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri && !ri->built)
        err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                           "aclmdlRIAbort does not support captured instances (ACL graphs), as "
                           "CANN");
    else if (ri && ri->state != RI_BUILT)
        err = aclsim__fail(ACL_ERROR_RT_MODEL_EXECUTE, api,
                           "model runtime instance %u has not been built", ri->id);
    for (uint32_t i = 0; ri && !err && i < ri->nlanes && nheads < 16; i++)
        if (!ri->lanes[i].gone)
            heads[nheads++] = (struct aclsim__sref){ri->lanes[i].s, ri->lanes[i].epoch,
                                                    ri->lanes[i].handle};
    pthread_mutex_unlock(&aclsim__ri_lock);
    /* aclmdlRIExecute runs a built instance on its bound streams: what has
     * not started there is discarded. */
    for (uint32_t i = 0; i < nheads; i++)
        (void)aclsim__stream_abort(heads[i]);
    return err;
}

