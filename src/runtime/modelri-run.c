/*
 * Replay (aclmdlRIExecuteAsync) queues fresh copies of the recorded tasks on
 * the replay stream, in capture order. Capture order is a topological order
 * of the recorded graph: tasks of one captured stream keep their order, and a
 * wait is always captured after the record it waits for. So every recorded
 * dependency holds; a wait whose record is inside the instance is satisfied
 * by that order and is not queued again, records are queued again (with new
 * record numbers) so the events still mark progress. The copies reference
 * nothing of the instance: destroying it while replays run is safe.
 *
 * This file is that replay (modelri.h has the structures and the map of the
 * other files): the replay plan, copies of an instance's tasks,
 * aclmdlRIExecuteAsync and aclmdlRIExecute. Models with control steps run
 * as one program task (modelri-label.c), conditional tasks run their branch
 * copies on their worker (modelri-cond.c).
 */
#include "modelri.h"

#include <stdlib.h>
#include <string.h>

/* ---- replay ---------------------------------------------------------------------- */

static void drop_copies_in_place(struct aclsim__task *copies, uint32_t n);

/* ---- the replay plan (what it is: struct plan in modelri.h) ----------------------- */

void aclsim__ri_plan_unref(struct plan *p)
{
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    drop_copies_in_place(p->tasks, p->n);
    free(p);
}

static void plan_run(void *arg)
{
    struct plan *p = arg;
    struct aclsim__stream *s = aclsim__tls_stream;
    for (uint32_t i = 0; i < p->n; i++) {
        /* an abort, reset or finalize discards the rest; so does a failure
         * with ACL_STOP_ON_FAILURE (the stream is stopping) */
        if (s && (atomic_load_explicit(&s->discard, memory_order_acquire) ||
                  atomic_load_explicit(&s->stopping, memory_order_acquire)))
            break;
        aclsim__execute_inline(s, &p->tasks[i]);
    }
    aclsim__ri_plan_unref(p);
}

static void plan_drop(void *arg)
{
    aclsim__ri_plan_unref(arg);
}

static bool inline_kind(const struct ri_task *rt)
{
    const struct aclsim__task *t = &rt->t;
    return !(t->kind == ACLSIM_TASK_RECORD || t->kind == ACLSIM_TASK_WAIT ||
             t->kind == ACLSIM_TASK_CALLBACK ||
             (t->kind == ACLSIM_TASK_SIGNAL && !aclsim__ri_is_value_op(t)));
}

/* The one task of a replay by plan (ri_lock held), or NULL (no *err) when
 * the instance needs a replay task by task. */
static struct aclsim__task *replay_plan(struct aclsim__ri *ri, uint32_t *n, const char *api,
                                        aclError *err)
{
    for (uint32_t i = 0; i < ri->ntasks; i++)
        if (!inline_kind(ri->tasks[i]) && !ri->tasks[i]->internal)
            return NULL;
    if (!ri->plan) {
        uint32_t count = 0;
        struct aclsim__task *copies = aclsim__ri_replay_copies(ri, &count, api, err);
        struct plan *p = *err ? NULL : aclsim__malloc(sizeof *p + count * sizeof p->tasks[0]);
        if (!p) {
            aclsim__ri_drop_copies(copies, 0, count);
            if (!*err)
                *err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory replaying");
            return NULL;
        }
        atomic_init(&p->refs, 1);
        p->n = count;
        memcpy(p->tasks, copies, count * sizeof *copies);
        free(copies);
        ri->plan = p;
    } else {   /* the kernels' binaries may have gone since */
        for (uint32_t i = 0; i < ri->ntasks; i++) {
            const struct ri_task *rt = ri->tasks[i];
            if (rt->t.kind == ACLSIM_TASK_KERNEL && !rt->disabled &&
                aclsim__handle_get(rt->func, ACLSIM_H_FUNC) != rt->t.u.kernel.kernel) {
                *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                                    "kernel %s of task %u was unregistered (its binary unloaded) "
                                    "after it was captured", rt->t.label, rt->seq);
                return NULL;
            }
        }
    }
    struct aclsim__task *task = aclsim__malloc(sizeof *task);
    if (!task) {
        *err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory replaying");
        return NULL;
    }
    atomic_fetch_add(&ri->plan->refs, 1);
    *task = (struct aclsim__task){.kind = ACLSIM_TASK_CALLBACK, .label = "model",
                                  .u.cb = {plan_run, plan_drop, ri->plan}};
    *n = 1;
    return task;
}

/* Copies of ri's tasks for one replay (ri_lock held); *n of them. */
struct aclsim__task *aclsim__ri_replay_copies(const struct aclsim__ri *ri, uint32_t *n,
                                              const char *api, aclError *err)
{
    struct aclsim__task *copies = aclsim__malloc((ri->ntasks ? ri->ntasks : 1) * sizeof *copies);
    *n = 0;
    if (!copies) {
        *err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory replaying");
        return NULL;
    }
    for (uint32_t i = 0; i < ri->ntasks && !*err; i++) {
        const struct ri_task *rt = ri->tasks[i];
        if (rt->disabled || rt->internal ||
            ri->lanes[rt->lane].bind_flag == ACL_MODEL_STREAM_FLAG_DEFAULT)
            continue;
        if (rt->t.kind == ACLSIM_TASK_KERNEL &&
            aclsim__handle_get(rt->func, ACLSIM_H_FUNC) != rt->t.u.kernel.kernel) {
            *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                                "kernel %s of task %u was unregistered (its binary unloaded) "
                                "after it was captured", rt->t.label, rt->seq);
            break;
        }
        if (rt->cond) {
            copies[*n] = rt->t;
            if (!(copies[*n].u.host.arg = aclsim__ri_cond_copy(rt, api, err)))
                break;
        } else if (!aclsim__ri_task_dup(&rt->t, rt->args_size, &copies[*n])) {
            *err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory replaying");
            break;
        }
        (*n)++;
    }
    return copies;
}

static void drop_copies_in_place(struct aclsim__task *copies, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (copies[i].kind == ACLSIM_TASK_HOST_FUNC && copies[i].u.host.fn == aclsim__ri_cond_run)
            aclsim__ri_cond_free(copies[i].u.host.arg);
        else
            aclsim__ri_task_drop(&copies[i]);   /* (a CALLBACK's drop frees its branches) */
    }
}

void aclsim__ri_drop_copies(struct aclsim__task *copies, uint32_t from, uint32_t n)
{
    if (copies)
        drop_copies_in_place(copies + from, n - from);
    free(copies);
}

static void cond_run_once(void *arg)
{
    aclsim__ri_cond_run(arg);
    aclsim__ri_cond_free(arg);
}

static void cond_drop(void *arg)
{
    aclsim__ri_cond_free(arg);
}

/* Queues the copies on s in order; *last: the sequence number of the last. */
static aclError replay_submit(struct aclsim__task *copies, uint32_t n, struct aclsim__sref s,
                              const char *api, uint64_t *last)
{
    aclError err = ACL_SUCCESS;
    uint32_t i = 0;
    aclsim__ri_tls_replaying = true;
    for (; i < n && !err; i++) {
        if (copies[i].kind == ACLSIM_TASK_RECORD) {
            struct aclsim__event *ev = copies[i].u.event.event;
            err = aclsim__event_record_on(ev, s, api);
            aclsim__event_unref(ev);   /* the copy's */
        } else {
            if (aclsim__is_event_wait(&copies[i]))   /* EXTERNAL: the latest record now */
                copies[i].u.sync.value = aclsim__event_latest(copies[i].u.sync.obj);
            if (copies[i].kind == ACLSIM_TASK_HOST_FUNC && copies[i].u.host.fn == aclsim__ri_cond_run)
                copies[i] = (struct aclsim__task){   /* runs once, then frees its branches */
                    .kind = ACLSIM_TASK_CALLBACK, .label = "condition",
                    .u.cb = {cond_run_once, cond_drop, copies[i].u.host.arg}};
            err = aclsim__submit(s, &copies[i], api, NULL);
            if (err)
                break;   /* still ours: dropped below */
        }
    }
    aclsim__ri_tls_replaying = false;
    *last = atomic_load(&s.s->submitted);
    aclsim__ri_drop_copies(copies, i, n);
    return err;
}

/* The checks of both executions; the copies to queue. */
static struct aclsim__task *execute_prepare(aclmdlRI modelRI, struct aclsim__sref *s,
                                            bool sync, uint32_t *n, const char *api,
                                            aclError *err)
{
    struct aclsim__task *copies = NULL;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, err);
    if (!ri) {
    } else if (ri->state == RI_CAPTURING || ri->state == RI_EMPTY || ri->state == RI_BUILDING) {
        *err = aclsim__fail(ACL_ERROR_RT_MODEL_EXECUTE, api,
                            "model runtime instance %u is not ready: %s", ri->id,
                            ri->state == RI_BUILDING ? "its build has not ended (aclmdlRIBuildEnd)"
                            : ri->state == RI_EMPTY ? "this branch has not been captured"
                                                    : "it is still being captured");
    } else if (ri->sub) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "model runtime instance %u is a branch of a conditional task: it runs "
                            "as part of its parent", ri->id);
    } else if (sync && !ri->built) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "aclmdlRIExecute runs built instances (aclmdlRIBuildBegin); a captured "
                            "one runs with aclmdlRIExecuteAsync");
    } else if (aclsim__handle_get(ri->ctx_handle, ACLSIM_H_CONTEXT) != ri->ctx) {
        *err = aclsim__fail(ACL_ERROR_RT_MODEL_CONTEXT, api,
                            "the context model runtime instance %u was made in is gone (destroyed, "
                            "or its device reset)", ri->id);
    } else if (sync) {
        uint32_t head = ri->nlanes;
        for (uint32_t i = 0; i < ri->nlanes; i++)
            if (!ri->lanes[i].gone && ri->lanes[i].bind_flag == ACL_MODEL_STREAM_FLAG_HEAD) {
                head = i;
                break;
            }
        if (head == ri->nlanes)
            *err = aclsim__fail(ACL_ERROR_RT_STREAM_MODEL, api,
                                "model runtime instance %u has no stream bound with "
                                "ACL_MODEL_STREAM_FLAG_HEAD", ri->id);
        else
            *s = (struct aclsim__sref){ri->lanes[head].s, ri->lanes[head].epoch,
                                       ri->lanes[head].handle};
    } else if (s->s->capture && s->s->capture->state == RI_CAPTURING) {
        *err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURED, api,
                            "the stream is being captured: a model runtime instance cannot be "
                            "executed into a capture");
    } else if (__atomic_load_n(&s->s->context, __ATOMIC_RELAXED) != ri->ctx) {
        *err = aclsim__fail(ACL_ERROR_RT_MODEL_CONTEXT, api,
                            "the stream is not in the context of model runtime instance %u", ri->id);
    }
    for (uint32_t i = 0; ri && !*err && ri->built && i < ri->nlanes; i++)
        if (!ri->lanes[i].gone && !ri->lanes[i].ended)
            *err = aclsim__fail(ACL_ERROR_RT_MODEL_EXECUTE, api,
                                "stream %p of model runtime instance %u has no aclmdlRIEndTask",
                                ri->lanes[i].handle, ri->id);
    if (!*err && ri->control) {
        copies = aclsim__ri_program_copy(ri, n, api, err);
    } else if (!*err && (copies = replay_plan(ri, n, api, err))) {
    } else if (!*err) {
        copies = aclsim__ri_replay_copies(ri, n, api, err);
        if (*err) {
            aclsim__ri_drop_copies(copies, 0, *n);
            copies = NULL;
        }
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return copies;
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
    static const char api[] = "aclmdlRIExecuteAsync";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", CAPTURE_FAMILIES, api);
    struct aclsim__sref s;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &s)))
        return err;
    uint32_t n = 0;
    struct aclsim__task *copies = execute_prepare(modelRI, &s, false, &n, api, &err);
    uint64_t last;
    return copies ? replay_submit(copies, n, s, api, &last) : err;
}

aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout)
{
    static const char api[] = "aclmdlRIExecute";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (!err && (timeout < -1 || timeout == 0))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "timeout %d is invalid: -1 (wait forever) or a positive number of "
                           "milliseconds", timeout);
    struct aclsim__context *ctx = NULL;
    if (err || (err = aclsim__current_context(api, &ctx)))
        return err;
    if (aclsim__tls_worker)
        return aclsim__refuse_self_wait(api, "a device worker");
    struct aclsim__sref s = {NULL, 0, NULL};
    uint32_t n = 0;
    struct aclsim__task *copies = execute_prepare(modelRI, &s, true, &n, api, &err);
    uint64_t last;
    if (!copies || (err = replay_submit(copies, n, s, api, &last)))
        return err;
    if (!aclsim__stream_wait(s.s, last, timeout))
        return aclsim__fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, api,
                            "the model runtime instance did not finish within %d ms", timeout);
    return aclsim__stream_report(s, api);
}

