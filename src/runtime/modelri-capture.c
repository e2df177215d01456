/*
 * Capture hooks the one place tasks enter a stream (aclsim__submit's
 * ACLSIM_CAPTURE_HOOK): a task submitted to a stream whose `capture` is set
 * is copied into the instance instead of being queued; the copy owns what the
 * task owned (a kernel's argument block, event and notify references). An
 * event recorded under capture and waited for on another stream pulls that
 * stream into the same capture (CANN's cross-stream capture).
 *
 * This file is the capture (modelri.h has the structures and the map of the
 * other files): the hook, the refusals of other calls while a stream is
 * captured, the thread capture modes, and aclmdlRICapture{Begin,End,...}.
 * The instance a capture fills is replayed by modelri-run.c; its task groups
 * (modelri-task.c) and conditional tasks (modelri-cond.c) are captured too.
 */
#include "modelri.h"

#include <stdlib.h>
#include <string.h>

static _Thread_local int tls_mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;   /* exchange mode */

static bool open_state(const struct aclsim__ri *ri)
{
    return ri->state == RI_CAPTURING || ri->state == RI_BUILDING;
}

/* The capture of ri ends (invalidated: its tasks stay until it is
 * destroyed). ri_lock held. */
static void capture_stop(struct aclsim__ri *ri)
{
    for (uint32_t i = 0; i < ri->nlanes; i++)
        aclsim__ri_lane_leave(ri, &ri->lanes[i]);
    if (pthread_equal(ri->thread, pthread_self()))
        aclsim__ri_tls_capturing = MODE_NONE;
}

/* ---- the capture hook ------------------------------------------------------------- */

/* The open instance with a captured record of ev numbered seq, or NULL. */
static struct aclsim__ri *record_owner(const struct aclsim__event *ev, uint64_t seq,
                                       struct ri_task **found)
{
    for (struct aclsim__ri *ri = aclsim__ri_all; ri; ri = ri->next) {
        if (!open_state(ri))
            continue;
        for (uint32_t i = ri->ntasks; i-- > 0;) {
            struct ri_task *rt = ri->tasks[i];
            if (rt->t.kind == ACLSIM_TASK_RECORD && rt->t.u.event.event == ev &&
                (!seq || rt->t.u.event.seq == seq) &&
                !aclsim__event_external(rt->t.u.event.event, true)) {   /* (EXTERNAL: for outside) */
                if (found)
                    *found = rt;
                return ri;
            }
        }
    }
    return NULL;
}

static aclError invalidate(struct aclsim__ri *ri, aclError code, const char *api,
                           const char *why)
{
    ri->invalid = true;
    return aclsim__fail(code, api, "%s; the capture of model runtime instance %u is invalidated "
                        "(aclmdlRICaptureEnd will return 507903)", why, ri->id);
}

/* The mode rules of CANN's implementation: may this thread call a function
 * CANN calls unsafe (synchronous copies) while ctx has captures? */
static bool mode_allows(struct aclsim__context *ctx)
{
    int ctx_mode = MODE_NONE;
    for (struct aclsim__ri *ri = aclsim__ri_all; ri; ri = ri->next)
        if (ri->state == RI_CAPTURING && ri->ctx == ctx &&
            (ctx_mode == MODE_NONE || ri->mode < ctx_mode))
            ctx_mode = ri->mode;
    if (ctx_mode == MODE_NONE || tls_mode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return true;
    if (tls_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        return !(ctx_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
                 aclsim__ri_tls_capturing == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL);
    return !(aclsim__ri_tls_capturing == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
             aclsim__ri_tls_capturing == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL);
}

static aclError mode_refusal(aclError code, const char *api)
{
    return aclsim__fail(code, api,
                        "a stream of the current context is being captured (aclmdlRICaptureBegin) "
                        "and the capture mode forbids this call on this thread (this thread's "
                        "mode: %d; switch to ACL_MODEL_RI_CAPTURE_MODE_RELAXED with "
                        "aclmdlRICaptureThreadExchangeMode); the capture stays valid", tls_mode);
}

/* Records task into ri (ri_lock held). */
aclError aclsim__ri_record_task(struct aclsim__ri *ri, int lane, const struct aclsim__task *task,
                                const char *api, struct aclsim__event **retire,
                                uint64_t *retire_seq)
{
    struct ri_task *rt = aclsim__calloc(1, sizeof *rt);
    if (!rt || !aclsim__ri_grow((void **)&ri->tasks, &ri->cap_tasks, ri->ntasks, sizeof *ri->tasks) ||
        !(rt->handle = aclsim__handle_new(ACLSIM_H_RI_TASK, rt))) {
        free(rt);
        return invalidate(ri, ACL_ERROR_BAD_ALLOC, api, "out of memory capturing a task");
    }
    rt->t = *task;
    rt->t.next = NULL;
    rt->ri = ri;
    rt->lane = (uint32_t)lane;
    rt->seq = ri->lanes[lane].ntasks++;
    if (task->kind == ACLSIM_TASK_KERNEL) {
        rt->func = task->u.kernel.kernel->handle;
        rt->args_size = task->u.kernel.argbuf ? aclsim__ri_args_size(task) : 0;
    } else if (task->kind == ACLSIM_TASK_RECORD) {
        *retire = task->u.event.event;
        *retire_seq = task->u.event.seq;
    } else if (aclsim__is_event_wait(task)) {   /* EXTERNAL: waits at replay for a record outside */
        rt->internal = !aclsim__event_external(task->u.sync.obj, false);
    }
    ri->tasks[ri->ntasks++] = rt;
    return ACL_SUCCESS;
}

/* Checks a task for capture into ri; joins s into the capture of the
 * record it waits for. */
static aclError capture_checks(struct aclsim__ri *ri, const struct aclsim__task *task,
                               const char *api)
{
    if (ri->sub && (task->kind == ACLSIM_TASK_RECORD || task->kind == ACLSIM_TASK_WAIT ||
                    (task->kind == ACLSIM_TASK_SIGNAL && !aclsim__ri_is_value_op(task))))
        return invalidate(ri, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                          "a branch of a conditional task runs inside that task, on its worker: "
                          "event, notify and value waits and records cannot be captured into it");
    switch (task->kind) {
    case ACLSIM_TASK_CALLBACK:
    case ACLSIM_TASK_RANDOM:
    case ACLSIM_TASK_BATCH:
        return invalidate(ri, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                          "this task (a report callback, random-number or batched-copy task) "
                          "cannot be captured in aclsim (its parameters are not kept for replay)");
    case ACLSIM_TASK_RECORD:
        if (!aclsim__event_is_ex(task->u.event.event))
            return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                "events made by aclrtCreateEvent/aclrtCreateEventWithFlag cannot "
                                "be recorded under capture: create them with "
                                "aclrtCreateEventExWithFlag");
        break;
    case ACLSIM_TASK_WAIT:
    case ACLSIM_TASK_SIGNAL:
        if (aclsim__is_event_wait(task))
            break;   /* checked by check_wait; never queued again (replay order covers it) */
        if (aclsim__is_event_reset(task))
            return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                "resetting an event made by aclrtCreateEvent/"
                                "aclrtCreateEventWithFlag cannot be captured");
        if (task->u.sync.ops->release && !task->u.sync.ops->retain)
            return invalidate(ri, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                              "this task cannot be captured in aclsim");
        break;
    default:
        break;
    }
    return ACL_SUCCESS;
}

/* An event wait on a stream of ri (or about to join it): its record must be
 * in ri. */
static aclError check_wait(struct aclsim__ri *ri, const struct aclsim__task *task, const char *api)
{
    struct aclsim__event *ev = task->u.sync.obj;
    if (aclsim__event_external(ev, false))
        return ACL_SUCCESS;   /* ACL_EVENT_WAIT_EXTERNAL: for a record made outside */
    if (!aclsim__event_is_ex(ev))
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "events made by aclrtCreateEvent/aclrtCreateEventWithFlag cannot be "
                            "waited for under capture: create them with aclrtCreateEventExWithFlag");
    struct aclsim__ri *owner = record_owner(ev, task->u.sync.value, NULL);
    if (owner == ri)
        return ACL_SUCCESS;
    if (owner) {
        invalidate(owner, ACL_ERROR_STREAM_CAPTURE_CONFLICT, api, "conflict");
        return invalidate(ri, ACL_ERROR_STREAM_CAPTURE_CONFLICT, api,
                          "the event's record was captured into another model runtime instance");
    }
    return aclsim__fail(ACL_ERROR_RT_CAPTURE_DEPENDENCY, api,
                        "the event wait has no event record in this capture (a record made "
                        "outside the capture cannot be waited for; see "
                        "ACL_EVENT_WAIT_EXTERNAL)");
}

static aclError update_task(struct updating *u, const struct aclsim__task *task, const char *api)
{
    if (u->err)
        return u->err;
    aclError err = ACL_SUCCESS;
    if (task->ran || task->kind == ACLSIM_TASK_RECORD || task->kind == ACLSIM_TASK_WAIT ||
        task->kind == ACLSIM_TASK_SIGNAL || task->kind == ACLSIM_TASK_CALLBACK ||
        task->kind == ACLSIM_TASK_RANDOM || task->kind == ACLSIM_TASK_BATCH)
        err = aclsim__fail(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, api,
                           "only copies, memsets, kernels and host functions can update a task "
                           "group");
    else if (!aclsim__ri_grow((void **)&u->tasks, &u->cap, u->n, sizeof *u->tasks))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory recording a task update");
    if (err)
        return u->err = err;
    u->tasks[u->n] = *task;
    u->tasks[u->n++].next = NULL;
    return ACL_SUCCESS;
}

bool aclsim__capture_task(struct aclsim__sref ref, const struct aclsim__task *task,
                          const char *api, uint64_t *seq_out, aclError *err)
{
    struct aclsim__stream *s = ref.s;
    if (aclsim__ri_tls_replaying)
        return false;
    struct aclsim__event *retire = NULL;
    uint64_t retire_seq = 0;
    pthread_mutex_lock(&aclsim__ri_lock);
    if (atomic_load(&s->epoch) != ref.epoch) {
        pthread_mutex_unlock(&aclsim__ri_lock);
        return false;   /* aclsim__submit refuses it */
    }
    for (struct updating *u = aclsim__ri_updates; u; u = u->next)
        if (u->s == s && u->epoch == ref.epoch) {
            *err = update_task(u, task, api);
            pthread_mutex_unlock(&aclsim__ri_lock);
            return true;
        }
    struct aclsim__ri *ri = s->capture;
    bool joining = false;
    if (!ri && aclsim__is_event_wait(task))
        joining = (ri = record_owner(task->u.sync.obj, task->u.sync.value, NULL)) != NULL &&
                  ri->state == RI_CAPTURING;
    if (!ri || (!joining && s->capture != ri)) {
        if (task->ran && !mode_allows(__atomic_load_n(&s->context, __ATOMIC_RELAXED))) {
            /* A pageable copy becomes a synchronous one: unsafe during a capture. */
            *err = mode_refusal(ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC, api);
            pthread_mutex_unlock(&aclsim__ri_lock);
            return true;
        }
        pthread_mutex_unlock(&aclsim__ri_lock);
        return false;
    }
    *err = ACL_SUCCESS;
    if (joining && !ref.handle) {
        *err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, api,
                            "the default stream cannot be used in a capture (it would join "
                            "through this event wait)");
    } else if (ri->state == RI_BUILT) {
        *err = aclsim__fail(ACL_ERROR_RT_STREAM_MODEL, api,
                            "the stream is bound to model runtime instance %u, whose build has "
                            "ended (aclmdlRIBuildEnd): no more tasks can be added", ri->id);
    } else if (ri->invalid) {
        *err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, api,
                            "the capture of model runtime instance %u was invalidated by an "
                            "earlier error; end it (aclmdlRICaptureEnd) and capture again", ri->id);
    } else if (task->ran) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "a copy with pageable (ordinary) host memory cannot be captured: use "
                            "page-locked memory (aclrtMallocHost)");
    } else if (!(*err = capture_checks(ri, task, api)) &&
               !(aclsim__is_event_wait(task) && (*err = check_wait(ri, task, api)))) {
        int lane = joining ? -1 : aclsim__ri_lane_of(ri, s);
        if (lane < 0) {
            if (!aclsim__ri_add_lane(ri, s, ref.epoch, ref.handle))
                *err = invalidate(ri, ACL_ERROR_BAD_ALLOC, api, "out of memory");
            lane = (int)ri->nlanes - 1;
        }
        if (!*err)
            *err = aclsim__ri_record_task(ri, lane, task, api, &retire, &retire_seq);
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    /* A captured record does not run now: its number is retired at once (a
     * later wait outside the capture does not wait for it). */
    if (retire)
        aclsim__event_complete(retire, retire_seq, false);
    if (seq_out)
        *seq_out = 0;
    return true;
}

bool aclsim__capture_active(struct aclsim__stream *s)
{
    pthread_mutex_lock(&aclsim__ri_lock);
    bool active = s->capture && s->capture->state == RI_CAPTURING;
    pthread_mutex_unlock(&aclsim__ri_lock);
    return active;
}

/* ---- refusals of other calls ----------------------------------------------------------- */

bool aclsim__stream_captured(struct aclsim__stream *s)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&aclsim__captures, memory_order_relaxed)))
        return false;
    pthread_mutex_lock(&aclsim__ri_lock);
    bool captured = s->capture && s->capture->state == RI_CAPTURING;
    pthread_mutex_unlock(&aclsim__ri_lock);
    return captured;
}

aclError aclsim__capture_refuse_stream(struct aclsim__stream *s, const char *api)
{
    if (aclsim__stream_captured(s))
        return aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURED, api,
                            "the stream is being captured into a model runtime instance: it "
                            "cannot be synchronized, queried or destroyed until "
                            "aclmdlRICaptureEnd");
    return ACL_SUCCESS;
}

aclError aclsim__capture_refuse_device(struct aclsim__device *dev, const char *api)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&aclsim__captures, memory_order_relaxed)))
        return ACL_SUCCESS;
    bool captured = false;
    pthread_mutex_lock(&aclsim__ri_lock);
    for (struct aclsim__ri *ri = aclsim__ri_all; ri && !captured; ri = ri->next)
        captured = ri->state == RI_CAPTURING && aclsim__context_device(ri->ctx) == dev;
    pthread_mutex_unlock(&aclsim__ri_lock);
    if (captured)
        return aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURED, api,
                            "a stream of device %d is being captured into a model runtime "
                            "instance: the device cannot be synchronized until "
                            "aclmdlRICaptureEnd", dev->id);
    return ACL_SUCCESS;
}

aclError aclsim__capture_refuse_event(const void *ev, const char *api)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&aclsim__captures, memory_order_relaxed)))
        return ACL_SUCCESS;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = record_owner(ev, 0, NULL);
    bool captured = ri && ri->state == RI_CAPTURING;
    pthread_mutex_unlock(&aclsim__ri_lock);
    if (captured)
        return aclsim__fail(ACL_ERROR_RT_EVENT_CAPTURED, api,
                            "the event was recorded under capture: it cannot be synchronized "
                            "or queried until aclmdlRICaptureEnd");
    return ACL_SUCCESS;
}

aclError aclsim__capture_mode_check(const char *api)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&aclsim__captures, memory_order_relaxed)))
        return ACL_SUCCESS;
    struct aclsim__context *ctx = NULL;
    if (aclsim__current_context(api, &ctx))
        return ACL_SUCCESS;   /* (the caller reports it) */
    pthread_mutex_lock(&aclsim__ri_lock);
    bool ok = mode_allows(ctx);
    pthread_mutex_unlock(&aclsim__ri_lock);
    return ok ? ACL_SUCCESS : mode_refusal(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, api);
}

void aclsim__capture_stream_gone(struct aclsim__stream *s)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&aclsim__captures, memory_order_relaxed)))
        return;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = s->capture;
    if (ri) {
        int lane = aclsim__ri_lane_of(ri, s);
        if (ri->state == RI_CAPTURING) {
            ri->invalid = true;   /* its stream went (device reset, aclFinalize) */
            if (lane == 0)
                capture_stop(ri);
        }
        if (s->capture) {
            s->capture = NULL;
            atomic_fetch_sub(&aclsim__captures, 1);
        }
        if (lane >= 0)
            ri->lanes[lane].gone = true;
    }
    for (struct updating **p = &aclsim__ri_updates; *p; p = &(*p)->next)
        if ((*p)->s == s) {
            struct updating *u = *p;
            *p = u->next;
            free(u->tasks);
            free(u);
            atomic_fetch_sub(&aclsim__captures, 1);
            break;
        }
    pthread_mutex_unlock(&aclsim__ri_lock);
}

/* ---- API: capture begin, info, modes, end ------------------------------------------ */

static aclError bad_mode(int mode, const char *api)
{
    if ((unsigned)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "mode %d is invalid: ACL_MODEL_RI_CAPTURE_MODE_GLOBAL (0), "
                            "THREAD_LOCAL (1) or RELAXED (2)", mode);
    return ACL_SUCCESS;
}

/* The capture a stream is in (ri_lock held), or NULL with 107029. */
struct aclsim__ri *aclsim__ri_capturing(struct aclsim__sref ref, const char *api, aclError *err)
{
    struct aclsim__ri *ri = ref.s->capture;
    if (!ri || ri->state != RI_CAPTURING) {
        *err = aclsim__fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, api,
                            "the stream is not being captured");
        return NULL;
    }
    return ri;
}

static aclError capture_begin(aclrtStream stream, aclmdlRI target, int mode, const char *api)
{
    struct aclsim__sref ref;
    struct aclsim__context *ctx = NULL;
    aclError err = bad_mode(mode, api);
    if (err || (err = aclsim__stream_resolve(stream, api, &ctx, &ref)))
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = NULL;
    if (ref.s->capture)
        err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURED, api,
                           "the stream is already being captured or is bound to a model runtime "
                           "instance");
    else if (target && (ri = aclsim__ri_get(target, api, &err)) && !ri->sub)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "modelRI %u is not a branch of a conditional task (aclmdlRIAddCondTask)",
                           ri->id);
    else if (ri && ri->state != RI_EMPTY)
        err = aclsim__fail(ACL_ERROR_RT_MODEL_CAPTURED, api,
                           "modelRI %u was captured already", ri->id);
    else if (!target && !(ri = aclsim__ri_new(ctx, RI_CAPTURING)))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    if (!err) {
        ri->state = RI_CAPTURING;
        ri->mode = mode;
        ri->thread = pthread_self();
        if (!aclsim__ri_add_lane(ri, ref.s, ref.epoch, ref.handle)) {
            err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
            if (!target)
                aclsim__ri_destroy(ri, NULL, NULL);
            else
                ri->state = RI_EMPTY;
        } else {
            aclsim__ri_tls_capturing = mode;
        }
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
    static const char api[] = "aclmdlRICaptureBegin";
    aclError err = aclsim__ri_first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    return err ? err : capture_begin(stream, NULL, (int)mode, api);
}

aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI, aclmdlRICaptureMode mode)
{
    static const char api[] = "aclmdlRICaptureToModelRIBegin";
    aclError err = aclsim__ri_first_checks(stream, "stream", INSPECT_FAMILIES, api);
    if (!err && !modelRI)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "modelRI is NULL");
    return err ? err : capture_begin(stream, modelRI, (int)mode, api);
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status, aclmdlRI *modelRI)
{
    static const char api[] = "aclmdlRICaptureGetInfo";
    aclError err = aclsim__ri_first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    if (!err && !status && !modelRI)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "status and modelRI are both NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = ref.s->capture;
    if (ri && ri->state != RI_CAPTURING)
        ri = NULL;
    if (status)
        *status = !ri ? ACL_MODEL_RI_CAPTURE_STATUS_NONE
                  : ri->invalid ? ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED
                                : ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    if (modelRI)
        *modelRI = ri ? ri->handle : NULL;
    pthread_mutex_unlock(&aclsim__ri_lock);
    return ACL_SUCCESS;
}

aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)
{
    static const char api[] = "aclmdlRICaptureThreadExchangeMode";
    aclError err = aclsim__ri_first_checks(mode, "mode", CAPTURE_FAMILIES, api);
    if (err || (err = bad_mode((int)*mode, api)))
        return err;
    int old = tls_mode;
    tls_mode = (int)*mode;
    *mode = (aclmdlRICaptureMode)old;
    return ACL_SUCCESS;
}

/* The task before which lane ends: its last task (or NULL). */
static struct ri_task *last_of_lane(const struct aclsim__ri *ri, uint32_t lane)
{
    for (uint32_t i = ri->ntasks; i-- > 0;)
        if (ri->tasks[i]->lane == lane)
            return ri->tasks[i];
    return NULL;
}

/* Lane of the first wait, after the record rt, for that record; -1 if none. */
static int waited_by(const struct aclsim__ri *ri, const struct ri_task *rec)
{
    for (uint32_t i = 0; i < ri->ntasks; i++) {
        const struct ri_task *w = ri->tasks[i];
        if (w->internal && w->t.u.sync.obj == rec->t.u.event.event &&
            w->t.u.sync.value == rec->t.u.event.seq && w->lane != rec->lane)
            return (int)w->lane;
    }
    return -1;
}

/* CANN's end-of-capture checks: every stream pulled in returns to the one
 * that began the capture (its last task is a record that another stream of
 * the capture waits for), and one of them returns to it directly. */
static aclError check_joined(const struct aclsim__ri *ri, const char *api)
{
    bool to_origin = ri->nlanes == 1;
    for (uint32_t l = 1; l < ri->nlanes; l++) {
        struct ri_task *last = last_of_lane(ri, l);
        int by = last && last->t.kind == ACLSIM_TASK_RECORD ? waited_by(ri, last) : -1;
        if (by < 0)
            return aclsim__fail(ACL_ERROR_RT_STREAM_UNJOINED, api,
                                "stream %p joined the capture but its last task is not an event "
                                "record that another captured stream waits for: record an event "
                                "on it and wait for that event on the capturing stream",
                                ri->lanes[l].handle);
        to_origin |= by == 0;
    }
    if (!to_origin)
        return aclsim__fail(ACL_ERROR_RT_STREAM_UNJOINED, api,
                            "no stream that joined the capture returns to the stream that began "
                            "it (wait on it for an event recorded last on them)");
    return ACL_SUCCESS;
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
    static const char api[] = "aclmdlRICaptureEnd";
    aclError err = aclsim__ri_first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    if (!err && !modelRI)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "modelRI is NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    *modelRI = NULL;
    struct destroy_cb *cbs = NULL;
    uint32_t ncbs = 0;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = ref.s->capture;
    if (!ri || ri->state != RI_CAPTURING) {
        err = aclsim__fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, api,
                           "the stream is not being captured (aclmdlRICaptureBegin)");
        ri = NULL;
    } else if (aclsim__ri_lane_of(ri, ref.s) != 0) {
        err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, api,
                           "the capture was not begun on this stream (it joined through an "
                           "event): end it on the stream that began it");
        ri = NULL;
    } else if (ri->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED &&
               !pthread_equal(ri->thread, pthread_self())) {
        err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, api,
                           "the capture was begun on another thread in a mode other than "
                           "ACL_MODEL_RI_CAPTURE_MODE_RELAXED; it is discarded");
    } else if (ri->invalid) {
        err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, api,
                           "the capture was invalidated by an earlier error (see the first "
                           "failing call); it is discarded");
    } else if (ri->open_group) {
        err = aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                           "a task group is still open (aclmdlRICaptureTaskGrpEnd); the capture "
                           "is discarded");
    } else {
        for (struct aclsim__ri *r = aclsim__ri_all; r && !err; r = r->next)
            if (r->parent == ri && r->state != RI_CAPTURED)
                err = aclsim__fail(ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING, api,
                                   "branch %u of a conditional task has not been captured and "
                                   "ended yet; the capture is discarded", r->id);
        if (!err)
            err = check_joined(ri, api);
    }
    if (ri) {
        capture_stop(ri);
        if (err && !ri->sub) {
            aclsim__ri_destroy(ri, &cbs, &ncbs);
        } else if (err) {
            ri->state = RI_EMPTY;   /* a branch: captured again later */
        } else {
            ri->state = RI_CAPTURED;
            *modelRI = ri->handle;
        }
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    for (uint32_t i = 0; i < ncbs; i++)
        cbs[i].fn(cbs[i].data);
    free(cbs);
    return err;
}

