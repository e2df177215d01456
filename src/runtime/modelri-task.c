/*
 * The tasks of a model runtime instance (modelri.h has the structures and
 * the map of the other files): inspection (aclmdlRIGetStreams,
 * aclmdlRIGetTasksByStream, aclmdlRITaskGet*), editing (aclmdlRITaskSetParams,
 * aclmdlRITaskDisable, aclmdlRIUpdate), and task groups, captured as a group
 * and replaced by an update recorded on another stream (the capture hook in
 * modelri-capture.c records such an update). A change drops the instance's
 * replay plan (modelri-run.c), so later replays see it.
 */
#include "modelri.h"

#include <stdlib.h>
#include <string.h>

static struct ri_task *task_get(aclmdlRITask h, const char *api, aclError *err)
{
    struct ri_task *t = aclsim__handle_get(h, ACLSIM_H_RI_TASK);
    if (!t)
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "task %p is not a task of a live model runtime instance (from "
                            "aclmdlRIGetTasksByStream)", h);
    return t;
}

/* ---- inspection and editing ------------------------------------------------------------ */

aclError aclmdlRIGetStreams(aclmdlRI modelRI, aclrtStream *streams, uint32_t *numStreams)
{
    static const char api[] = "aclmdlRIGetStreams";
    aclError err = aclsim__ri_first_checks(NULL, NULL, INSPECT_FAMILIES, api);
    if (!err && (!modelRI || !numStreams))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL",
                           !modelRI ? "modelRI" : "numStreams");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri && streams && *numStreams < ri->nlanes)
        err = aclsim__fail(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, api,
                           "numStreams %u is smaller than the instance's %u streams", *numStreams,
                           ri->nlanes);
    for (uint32_t i = 0; ri && !err && i < ri->nlanes; i++) {
        struct lane *l = &ri->lanes[i];
        if (!l->lref && (l->lref = aclsim__malloc(sizeof *l->lref)))
            *l->lref = (struct lane_ref){ri, i};
        if (l->lref && !l->lhandle)
            l->lhandle = aclsim__handle_new(ACLSIM_H_RI_STREAM, l->lref);
        if (!l->lhandle)
            err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        else if (streams)
            streams[i] = ri->lanes[i].lhandle;
    }
    if (ri && !err)
        *numStreams = ri->nlanes;
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIGetTasksByStream(aclrtStream stream, aclmdlRITask *tasks, uint32_t *numTasks)
{
    static const char api[] = "aclmdlRIGetTasksByStream";
    aclError err = aclsim__ri_first_checks(NULL, NULL, INSPECT_FAMILIES, api);
    if (!err && (!stream || !numTasks))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL",
                           !stream ? "stream" : "numTasks");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct lane_ref *lr = aclsim__handle_get(stream, ACLSIM_H_RI_STREAM);
    struct aclsim__ri *ri = lr ? lr->ri : NULL;
    struct lane *l = lr ? &ri->lanes[lr->lane] : NULL;
    if (!ri)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "stream %p is not a stream of a model runtime instance (from "
                           "aclmdlRIGetStreams)", stream);
    else if (tasks && *numTasks < l->ntasks)
        err = aclsim__fail(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, api,
                           "numTasks %u is smaller than the stream's %u tasks", *numTasks, l->ntasks);
    if (!err) {
        uint32_t lane = lr->lane, k = 0;
        for (uint32_t i = 0; tasks && i < ri->ntasks; i++)
            if (ri->tasks[i]->lane == lane)
                tasks[k++] = ri->tasks[i]->handle;
        *numTasks = l->ntasks;
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

static aclmdlRITaskType type_of(const struct ri_task *rt)
{
    const struct aclsim__task *t = &rt->t;
    if (rt->cond || rt->ctl)
        return ACL_MODEL_RI_TASK_DEFAULT;
    if (t->kind == ACLSIM_TASK_KERNEL)
        return ACL_MODEL_RI_TASK_KERNEL;
    if (t->kind == ACLSIM_TASK_RECORD)
        return ACL_MODEL_RI_TASK_EVENT_RECORD;
    if (aclsim__is_event_wait(t))
        return ACL_MODEL_RI_TASK_EVENT_WAIT;
    if (aclsim__is_event_reset(t))
        return ACL_MODEL_RI_TASK_EVENT_RESET;
    if (aclsim__ri_is_value_op(t))
        return t->kind == ACLSIM_TASK_SIGNAL ? ACL_MODEL_RI_TASK_VALUE_WRITE
                                             : ACL_MODEL_RI_TASK_VALUE_WAIT;
    return ACL_MODEL_RI_TASK_DEFAULT;
}

/* The task of handle (ri_lock held by the caller), with the common checks. */
static struct ri_task *task_call(aclmdlRITask task, const void *out, const char *name,
                                 const char *api, aclError *err)
{
    if ((*err = aclsim__ri_first_checks(NULL, NULL, INSPECT_FAMILIES, api)))
        return NULL;
    if (!task || (name && !out)) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL", !task ? "task" : name);
        return NULL;
    }
    pthread_mutex_lock(&aclsim__ri_lock);
    struct ri_task *rt = task_get(task, api, err);
    if (!rt)
        pthread_mutex_unlock(&aclsim__ri_lock);
    return rt;
}

aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type)
{
    aclError err;
    struct ri_task *rt = task_call(task, type, "type", "aclmdlRITaskGetType", &err);
    if (!rt)
        return err;
    *type = type_of(rt);
    pthread_mutex_unlock(&aclsim__ri_lock);
    return ACL_SUCCESS;
}

aclError aclmdlRITaskGetSeqId(aclmdlRITask task, uint32_t *id)
{
    aclError err;
    struct ri_task *rt = task_call(task, id, "id", "aclmdlRITaskGetSeqId", &err);
    if (!rt)
        return err;
    *id = rt->seq;
    pthread_mutex_unlock(&aclsim__ri_lock);
    return ACL_SUCCESS;
}

static void *group_of(const struct ri_task *rt)
{
    const struct aclsim__ri *ri = rt->ri;
    for (uint32_t i = 0; i < ri->ngroups; i++) {
        const struct group *g = ri->groups[i];
        if (g->lane == rt->lane && rt->seq >= g->first && rt->seq < g->first + g->count)
            return g->handle;
    }
    return NULL;
}

aclError aclmdlRITaskGetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    aclError err;
    struct ri_task *rt = task_call(task, params, "params", "aclmdlRITaskGetParams", &err);
    if (!rt)
        return err;
    memset(params, 0, sizeof *params);
    params->type = type_of(rt);
    params->taskGrp = group_of(rt);
    const struct aclsim__task *t = &rt->t;
    switch (params->type) {
    case ACL_MODEL_RI_TASK_KERNEL: {
        aclmdlRIKernelTaskParams *k = &params->kernelTaskParams;
        k->funcHandle = rt->func;
        k->numBlocks = t->u.kernel.blocks;
        k->isHostArgs = 1;
        if (t->u.kernel.argbuf) {   /* the packed arguments, as aclrtLaunchKernel takes them */
            char *packed = ((void **)t->u.kernel.argbuf)[0];
            k->args = packed;
            k->argsSize = rt->args_size - (size_t)(packed - (char *)t->u.kernel.argbuf);
        }
        break;
    }
    case ACL_MODEL_RI_TASK_EVENT_RECORD:
        params->eventRecordTaskParams.event = aclsim__event_handle(t->u.event.event);
        params->eventRecordTaskParams.eventFlag = aclsim__event_flags(t->u.event.event);
        params->eventRecordTaskParams.recordFlag = aclsim__event_external(t->u.event.event, true);
        break;
    case ACL_MODEL_RI_TASK_EVENT_WAIT:
        params->eventWaitTaskParams.event = aclsim__event_handle(t->u.sync.obj);
        params->eventWaitTaskParams.eventFlag = aclsim__event_flags(t->u.sync.obj);
        params->eventWaitTaskParams.waitFlag = aclsim__event_external(t->u.sync.obj, false);
        break;
    case ACL_MODEL_RI_TASK_EVENT_RESET:
        params->eventResetTaskParams.event = aclsim__event_handle(t->u.sync.obj);
        params->eventResetTaskParams.eventFlag = aclsim__event_flags(t->u.sync.obj);
        break;
    case ACL_MODEL_RI_TASK_VALUE_WRITE:
        params->valueWriteTaskParams.devAddr = t->u.sync.obj;
        params->valueWriteTaskParams.value = t->u.sync.value;
        break;
    case ACL_MODEL_RI_TASK_VALUE_WAIT:
        params->valueWaitTaskParams.devAddr = t->u.sync.obj;
        params->valueWaitTaskParams.value = t->u.sync.value;
        params->valueWaitTaskParams.flag = t->u.sync.mode;
        break;
    default:
        break;
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return ACL_SUCCESS;
}

static bool editable(struct ri_task *rt, const char *api, aclError *err)
{
    if (rt->ri->state == RI_CAPTURED || rt->ri->state == RI_BUILT)
        return true;
    *err = aclsim__fail(ACL_ERROR_RT_MODEL_UPDATE_FAILED, api,
                        "model runtime instance %u is still being captured or built", rt->ri->id);
    return false;
}

/* New kernel parameters take effect at once for later replays (replays
 * already issued run their own copies). */
aclError aclmdlRITaskSetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    static const char api[] = "aclmdlRITaskSetParams";
    aclError err;
    struct ri_task *rt = task_call(task, params, "params", api, &err);
    if (!rt)
        return err;
    struct aclsim__task *t = &rt->t;
    aclmdlRITaskType type = type_of(rt);
    if (!editable(rt, api, &err)) {
    } else if (params->type != type) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "params->type %d differs from the task's type %d", (int)params->type,
                           (int)type);
    } else if (type == ACL_MODEL_RI_TASK_KERNEL) {
        const aclmdlRIKernelTaskParams *k = &params->kernelTaskParams;
        size_t have = t->u.kernel.argbuf
                          ? rt->args_size - (size_t)((char *)((void **)t->u.kernel.argbuf)[0] -
                                                     (char *)t->u.kernel.argbuf)
                          : 0;
        if (k->funcHandle && k->funcHandle != rt->func)
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                               "funcHandle %p is not the task's kernel (%s): aclsim updates the "
                               "arguments and block count of a kernel task", k->funcHandle,
                               t->label);
        else if (k->numBlocks == 0 || k->numBlocks > ACLSIM_MAX_BLOCKS)
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                               "numBlocks %u is out of range: 1 to %u", k->numBlocks,
                               ACLSIM_MAX_BLOCKS);
        else if (have && (!k->args || k->argsSize != have))
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                               "args must hold kernel %s's %zu bytes of packed arguments (as "
                               "aclrtLaunchKernel takes them); argsSize is %zu", t->label, have,
                               k->argsSize);
        if (!err) {
            if (have)
                memcpy(((void **)t->u.kernel.argbuf)[0], k->args, have);
            t->u.kernel.blocks = k->numBlocks;
            aclsim__ri_plan_unref(rt->ri->plan);   /* later replays see the change */
            rt->ri->plan = NULL;
        }
    } else if (type == ACL_MODEL_RI_TASK_VALUE_WRITE || type == ACL_MODEL_RI_TASK_VALUE_WAIT) {
        void *addr = type == ACL_MODEL_RI_TASK_VALUE_WRITE ? params->valueWriteTaskParams.devAddr
                                                           : params->valueWaitTaskParams.devAddr;
        struct aclsim__where w = aclsim__classify(addr);
        if (!addr || ((uintptr_t)addr & 7) || w.kind != ACLSIM_DEVICE ||
            aclsim__check_range(api, "devAddr", addr, 8, w)) {
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                               "devAddr %p is not 8-byte aligned device memory", addr);
        } else if (type == ACL_MODEL_RI_TASK_VALUE_WAIT &&
                   params->valueWaitTaskParams.flag > ACL_STREAM_WAIT_VALUE_NOR) {
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "flag %u is invalid",
                               params->valueWaitTaskParams.flag);
        } else {
            t->u.sync.obj = addr;
            t->u.sync.value = type == ACL_MODEL_RI_TASK_VALUE_WRITE
                                  ? params->valueWriteTaskParams.value
                                  : params->valueWaitTaskParams.value;
            if (type == ACL_MODEL_RI_TASK_VALUE_WAIT)
                t->u.sync.mode = params->valueWaitTaskParams.flag;
            aclsim__ri_plan_unref(rt->ri->plan);
            rt->ri->plan = NULL;
        }
    } else {
        err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                           "aclsim sets the parameters of kernel, value write and value wait "
                           "tasks only (the event of an event task is fixed by the capture)");
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIKernelTaskGetAttribute(aclmdlRITask task, aclrtLaunchKernelAttrId attrId,
                                        aclrtLaunchKernelAttrValue *attrValue)
{
    static const char api[] = "aclmdlRIKernelTaskGetAttribute";
    aclError err;
    struct ri_task *rt = task_call(task, attrValue, "attrValue", api, &err);
    if (!rt)
        return err;
    if (type_of(rt) != ACL_MODEL_RI_TASK_KERNEL)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "the task is not a kernel task");
    else if (attrId == ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE ||
             attrId == ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET ||
             attrId == ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH ||
             (unsigned)attrId < ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE ||
             (unsigned)attrId > ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "attrId %d cannot be queried (ENGINE_TYPE, BLOCKDIM_OFFSET and "
                           "BLOCK_TASK_PREFETCH are not)", (int)attrId);
    else   /* aclsim's launches take no attributes: every one has its default (0) */
        memset(attrValue, 0, sizeof *attrValue);
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRITaskDisable(aclmdlRITask task)
{
    static const char api[] = "aclmdlRITaskDisable";
    aclError err;
    struct ri_task *rt = task_call(task, NULL, NULL, api, &err);
    if (!rt)
        return err;
    if (editable(rt, api, &err))
        rt->disable_pending = true;   /* aclmdlRIUpdate applies it */
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIUpdate(aclmdlRI modelRI)
{
    static const char api[] = "aclmdlRIUpdate";
    aclError err = aclsim__ri_first_checks(NULL, NULL, INSPECT_FAMILIES, api);
    if (!err && !modelRI)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "modelRI is NULL");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri && ri->state != RI_CAPTURED && ri->state != RI_BUILT)
        err = aclsim__fail(ACL_ERROR_RT_MODEL_UPDATE_FAILED, api,
                           "model runtime instance %u is still being captured or built", ri->id);
    for (uint32_t i = 0; ri && !err && i < ri->ntasks; i++)
        if (ri->tasks[i]->disable_pending)
            ri->tasks[i]->disabled = true;
    if (ri && !err) {
        aclsim__ri_plan_unref(ri->plan);
        ri->plan = NULL;
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

/* CANN updates a captured kernel (by task id) to another kernel of a
 * program, or a random-number task, with a device-side task. */
aclError aclrtTaskUpdateAsync(aclrtStream taskStream, uint32_t taskId, aclrtTaskUpdateInfo *info,
                              aclrtStream execStream)
{
    static const char api[] = "aclrtTaskUpdateAsync";
    aclError err = aclsim__ri_first_checks(info, "info", INSPECT_FAMILIES, api);
    if (!err && !taskStream)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "taskStream is NULL");
    if (!err && info->id != ACL_RT_UPDATE_RANDOM_TASK && info->id != ACL_RT_UPDATE_AIC_AIV_TASK)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "info->id %d is invalid", (int)info->id);
    (void)taskId;
    (void)execStream;
    if (err)
        return err;
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "aclsim does not update tasks through device-side descriptors (task ids "
                        "of model streams, kernel entry addresses); update captured tasks with "
                        "aclmdlRITaskSetParams + aclmdlRIUpdate or a task group "
                        "(aclmdlRICaptureTaskUpdateBegin)");
}

/* ---- task groups and their update -------------------------------------------------------- */

aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream)
{
    static const char api[] = "aclmdlRICaptureTaskGrpBegin";
    aclError err = aclsim__ri_first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_capturing(ref, api, &err);
    if (ri && ri->open_group)
        err = aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                           "a task group is open already (aclmdlRICaptureTaskGrpEnd)");
    else if (ri && !(ri->open_group = aclsim__calloc(1, sizeof *ri->open_group)))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    else if (ri) {
        int lane = aclsim__ri_lane_of(ri, ref.s);
        *ri->open_group = (struct group){NULL, ri, (uint32_t)lane, ri->lanes[lane].ntasks, 0};
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle)
{
    static const char api[] = "aclmdlRICaptureTaskGrpEnd";
    aclError err = aclsim__ri_first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    if (!err && !handle)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_capturing(ref, api, &err);
    struct group *g = ri ? ri->open_group : NULL;
    if (ri && (!g || g->lane != (uint32_t)aclsim__ri_lane_of(ri, ref.s)))
        err = aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                           "no task group was begun on this stream (aclmdlRICaptureTaskGrpBegin)");
    else if (ri && (!aclsim__ri_grow((void **)&ri->groups, &ri->cap_groups, ri->ngroups,
                                     sizeof *ri->groups) ||
                    !(g->handle = aclsim__handle_new(ACLSIM_H_TASK_GRP, g))))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    else if (ri) {
        g->count = ri->lanes[g->lane].ntasks - g->first;
        ri->groups[ri->ngroups++] = g;
        ri->open_group = NULL;
        *handle = g->handle;
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle)
{
    static const char api[] = "aclmdlRICaptureTaskUpdateBegin";
    aclError err = aclsim__ri_first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    if (!err && !handle)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct group *g = aclsim__handle_get(handle, ACLSIM_H_TASK_GRP);
    struct updating *u = NULL;
    if (ref.s->capture)
        err = aclsim__fail(ref.s->capture->state == RI_CAPTURING ? ACL_ERROR_RT_STREAM_CAPTURED
                                                                 : ACL_ERROR_RT_STREAM_MODEL, api,
                           "the stream is being captured or bound to a model: use an ordinary "
                           "stream to update a task group");
    else if (!g)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "handle %p is not a task group of a live model runtime instance", handle);
    else if (g->ri->state != RI_CAPTURED)
        err = aclsim__fail(ACL_ERROR_RT_MODEL_UPDATE_FAILED, api,
                           "the task group's instance is still being captured");
    for (struct updating *x = aclsim__ri_updates; !err && x; x = x->next)
        if (x->s == ref.s)
            err = aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                               "the stream is recording an update already");
    if (!err && !(u = aclsim__calloc(1, sizeof *u)))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    if (!err) {
        *u = (struct updating){.s = ref.s, .epoch = ref.epoch, .ghandle = handle,
                               .next = aclsim__ri_updates};
        aclsim__ri_updates = u;
        atomic_fetch_add(&aclsim__captures, 1);
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

/* Replaces the group's tasks by the ones recorded (same number, same kinds). */
static aclError apply_update(struct updating *u, const char *api)
{
    struct group *g = aclsim__handle_get(u->ghandle, ACLSIM_H_TASK_GRP);
    struct aclsim__ri *ri = g ? g->ri : NULL;
    if (u->err)
        return u->err;
    if (!ri)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "the task group's model runtime instance was destroyed");
    if (u->n != g->count)
        return aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                            "%u task(s) were issued, the task group has %u", u->n, g->count);
    struct ri_task *targets[u->n ? u->n : 1];
    uint32_t k = 0;
    for (uint32_t i = 0; i < ri->ntasks && k < u->n; i++) {
        struct ri_task *rt = ri->tasks[i];
        if (rt->lane == g->lane && rt->seq >= g->first && rt->seq < g->first + g->count)
            targets[k++] = rt;
    }
    for (uint32_t i = 0; i < k; i++)
        if (targets[i]->t.kind != u->tasks[i].kind ||
            (u->tasks[i].kind == ACLSIM_TASK_KERNEL &&
             u->tasks[i].u.kernel.kernel != targets[i]->t.u.kernel.kernel))
            return aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                                "task %u of the update is not of the kind of the group's task %u "
                                "(a kernel must be the same kernel)", i, i);
    for (uint32_t i = 0; i < k; i++) {
        aclsim__ri_task_drop(&targets[i]->t);
        targets[i]->t = u->tasks[i];
        if (u->tasks[i].kind == ACLSIM_TASK_KERNEL)
            targets[i]->args_size = u->tasks[i].u.kernel.argbuf ? aclsim__ri_args_size(&u->tasks[i]) : 0;
    }
    u->n = 0;   /* now the instance's */
    aclsim__ri_plan_unref(ri->plan);
    ri->plan = NULL;
    return ACL_SUCCESS;
}

aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream)
{
    static const char api[] = "aclmdlRICaptureTaskUpdateEnd";
    aclError err = aclsim__ri_first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct updating **p = &aclsim__ri_updates;
    while (*p && (*p)->s != ref.s)
        p = &(*p)->next;
    struct updating *u = *p;
    if (!u) {
        err = aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                           "the stream is not recording an update (aclmdlRICaptureTaskUpdateBegin)");
    } else {
        *p = u->next;
        atomic_fetch_sub(&aclsim__captures, 1);
        err = apply_update(u, api);
        for (uint32_t i = 0; i < u->n; i++)
            aclsim__ri_task_drop(&u->tasks[i]);
        free(u->tasks);
        free(u);
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

