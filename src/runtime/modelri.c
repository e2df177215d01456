/*
 * Model runtime instances (CANN's aclmdlRI, "ACL graphs"): capture the work
 * issued to streams into an instance, or build one on persistent streams,
 * then replay it any number of times.
 *
 * Capture hooks the one place tasks enter a stream (aclsim__submit's
 * ACLSIM_CAPTURE_HOOK): a task submitted to a stream whose `capture` is set
 * is copied into the instance instead of being queued; the copy owns what the
 * task owned (a kernel's argument block, event and notify references). An
 * event recorded under capture and waited for on another stream pulls that
 * stream into the same capture (CANN's cross-stream capture).
 *
 * Replay (aclmdlRIExecuteAsync) queues fresh copies of the recorded tasks on
 * the replay stream, in capture order. Capture order is a topological order
 * of the recorded graph: tasks of one captured stream keep their order, and a
 * wait is always captured after the record it waits for. So every recorded
 * dependency holds; a wait whose record is inside the instance is satisfied
 * by that order and is not queued again, records are queued again (with new
 * record numbers) so the events still mark progress. The copies reference
 * nothing of the instance: destroying it while replays run is safe.
 *
 * Locking: one mutex (ri_lock) guards every instance, every stream's
 * `capture` field and the thread-independent capture state. It is taken
 * before a stream's lock is ever needed (the hook runs before aclsim__submit
 * locks the stream) and nothing is submitted while it is held. Event and
 * notify locks may be taken under it (record retirement), never the reverse.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAPTURE_FAMILIES (ACLSIM_A5_A3_A2 | ACLSIM_FAMILIES(INFERENCE))
#define INSPECT_FAMILIES ACLSIM_A5_A3_A2
#define NAME_MAX_LEN 512
#define MODE_NONE (-1)

enum ri_state { RI_EMPTY /* sub-graph not captured yet */, RI_CAPTURING, RI_CAPTURED,
                RI_BUILDING, RI_BUILT };

struct ri_task {
    struct aclsim__task t;      /* the recorded task: owns its resources */
    struct aclsim__ri *ri;
    void *handle;               /* aclmdlRITask */
    uint32_t lane, seq;         /* its stream in the instance, its index there */
    bool disabled, disable_pending;   /* aclmdlRITaskDisable, applied by aclmdlRIUpdate */
    bool internal;              /* a wait whose record is in the instance */
    void *func;                 /* kernel: the function handle it was launched with */
    size_t args_size;           /* kernel: packed argument bytes */
    struct cond_task *cond;     /* a conditional task (then t is a host function) */
    struct ctl *ctl;            /* a control step of a built model (likewise) */
};

/* Control steps of a built model: labels, label switches, stream activation. */
enum ctl_op { CTL_LABEL, CTL_SWITCH_LABEL, CTL_ACTIVE, CTL_SWITCH_STREAM };
struct ctl {
    int op;
    uint32_t target;            /* ACTIVE, SWITCH_STREAM: the lane started */
    void *left, *right;         /* SWITCH_STREAM: the values compared */
    int cond, dtype;
    void *ptr;                  /* SWITCH_LABEL: the uint32 index */
    void *list;                 /* SWITCH_LABEL: the label list's handle */
};

struct lane {
    struct aclsim__stream *s;
    uint32_t epoch;
    void *handle;               /* the user's stream handle */
    uint32_t ntasks;
    bool gone;                  /* the stream was destroyed */
    bool ended;                 /* aclmdlRIEndTask */
    uint32_t bind_flag;
    void *lhandle;              /* its handle for aclmdlRIGetStreams (made on demand) */
    struct lane_ref *lref;      /* what lhandle names */
};
struct lane_ref { struct aclsim__ri *ri; uint32_t lane; };

struct destroy_cb { aclrtCallback fn; void *data; };

struct cond {
    void *handle;               /* aclmdlRICondHandle */
    struct aclsim__ri *ri;
    uint64_t *ptr;              /* 8 bytes of device memory */
    uint32_t def;
    bool assign_default;
};

struct cond_task { struct cond *c; int type; uint32_t n; struct aclsim__ri **branches; };

struct group { void *handle; struct aclsim__ri *ri; uint32_t lane, first, count; };

struct aclsim__ri {
    void *handle;
    uint32_t id;
    enum ri_state state;
    bool built;                 /* aclmdlRIBuildBegin, not a capture */
    bool invalid;               /* the capture was invalidated */
    bool sub;                   /* a branch of a conditional task */
    bool control;               /* has control steps: runs as one program task */
    struct plan *plan;          /* the replay plan, while valid (replay_plan) */
    struct aclsim__ri *parent;
    struct aclsim__context *ctx;
    void *ctx_handle;
    int mode;                   /* capture mode */
    pthread_t thread;           /* that began the capture */
    char name[NAME_MAX_LEN + 1];
    struct lane *lanes;
    uint32_t nlanes, cap_lanes;
    struct ri_task **tasks;     /* capture order */
    uint32_t ntasks, cap_tasks;
    struct destroy_cb *cbs;
    uint32_t ncbs, cap_cbs;
    struct cond **conds;
    uint32_t nconds, cap_conds;
    struct group **groups;
    uint32_t ngroups, cap_groups;
    struct group *open_group;   /* between TaskGrpBegin and TaskGrpEnd */
    struct aclsim__ri *next, *prev;   /* every instance */
};

/* Streams recording a task update (aclmdlRICaptureTaskUpdateBegin). */
struct updating {
    struct aclsim__stream *s;
    uint32_t epoch;
    void *ghandle;               /* the task group's handle */
    struct aclsim__task *tasks;  /* the new tasks, in order */
    uint32_t n, cap;
    aclError err;                /* the first refused task */
    struct updating *next;
};

atomic_uint aclsim__captures;
static pthread_mutex_t ri_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__ri *all_ri;
static struct updating *updates;
static uint32_t next_id;
static _Thread_local int tls_mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;   /* exchange mode */
static _Thread_local int tls_capturing = MODE_NONE;   /* mode of the capture this thread began */
static _Thread_local bool tls_replaying;              /* submitting a replay's copies */

/* ---- small helpers ---------------------------------------------------------- */

static bool grow(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
    if (n < *cap)
        return true;
    uint32_t nc = *cap ? *cap * 2 : 8;
    void *p = aclsim__realloc(*arr, nc * size);
    if (!p)
        return false;
    *arr = p;
    *cap = nc;
    return true;
}

static bool open_state(const struct aclsim__ri *ri)
{
    return ri->state == RI_CAPTURING || ri->state == RI_BUILDING;
}

/* The instance of handle h (ri_lock held), or NULL with 107000 / 100000. */
static struct aclsim__ri *ri_get(aclmdlRI h, const char *api, aclError *err)
{
    struct aclsim__ri *ri = aclsim__handle_get(h, ACLSIM_H_MODEL_RI);
    if (!ri)
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "modelRI %p is not a live model runtime instance (destroyed, or "
                            "never created)", h);
    return ri;
}

static struct ri_task *task_get(aclmdlRITask h, const char *api, aclError *err)
{
    struct ri_task *t = aclsim__handle_get(h, ACLSIM_H_RI_TASK);
    if (!t)
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "task %p is not a task of a live model runtime instance (from "
                            "aclmdlRIGetTasksByStream)", h);
    return t;
}

static int lane_of(const struct aclsim__ri *ri, const struct aclsim__stream *s)
{
    for (uint32_t i = 0; i < ri->nlanes; i++)
        if (ri->lanes[i].s == s && !ri->lanes[i].gone)
            return (int)i;
    return -1;
}

/* Frees what a recorded (or copied) task owns. */
static void task_drop(struct aclsim__task *t)
{
    aclsim__discard_tasks(t);   /* (t->next is NULL) */
}

/* Makes *copy own its own share of what t owns (kernel argument block,
 * references). false if out of memory. */
static bool task_dup(const struct aclsim__task *t, size_t args_size, struct aclsim__task *copy)
{
    *copy = *t;
    copy->next = NULL;
    copy->ran = NULL;
    if (t->kind == ACLSIM_TASK_KERNEL && t->u.kernel.argbuf) {
        const aclsimKernel *k = t->u.kernel.kernel;
        char *old = t->u.kernel.argbuf;
        char *buf = aclsim__aligned_alloc(64, (args_size + 63) & ~(size_t)63);
        if (!buf)
            return false;
        memcpy(buf, old, args_size);
        for (uint32_t i = 0; i < k->num_params; i++)
            ((void **)buf)[i] = buf + ((char *)((void **)old)[i] - old);
        copy->u.kernel.argbuf = buf;
    } else if (t->kind == ACLSIM_TASK_RECORD) {
        aclsim__event_ref(t->u.event.event);
    } else if ((t->kind == ACLSIM_TASK_WAIT || t->kind == ACLSIM_TASK_SIGNAL) &&
               t->u.sync.ops->retain) {
        t->u.sync.ops->retain(copy);
    }
    return true;
}

/* Bytes of a kernel task's argument block (pointer table and values). */
static size_t args_block_size(const struct aclsim__task *t)
{
    const aclsimKernel *k = t->u.kernel.kernel;
    char *buf = t->u.kernel.argbuf;
    size_t end = k->num_params * sizeof(void *) + 1;
    for (uint32_t i = 0; i < k->num_params; i++) {
        size_t e = (size_t)((char *)((void **)buf)[i] - buf) + k->param_size[i];
        if (e > end)
            end = e;
    }
    return end;
}

/* ---- instances ------------------------------------------------------------------ */

static struct aclsim__ri *ri_new(struct aclsim__context *ctx, enum ri_state state)
{
    struct aclsim__ri *ri = aclsim__calloc(1, sizeof *ri);
    if (!ri)
        return NULL;
    if (!(ri->handle = aclsim__handle_new(ACLSIM_H_MODEL_RI, ri))) {
        free(ri);
        return NULL;
    }
    ri->state = state;
    ri->ctx = ctx;
    ri->ctx_handle = ctx->handle;
    ri->id = next_id++;
    ri->mode = MODE_NONE;
    ri->next = all_ri;
    if (all_ri)
        all_ri->prev = ri;
    all_ri = ri;
    return ri;
}

/* l's stream leaves ri (it may be captured into another instance by now). */
static void lane_leave(struct aclsim__ri *ri, struct lane *l)
{
    if (!l->gone && l->s->capture == ri) {
        l->s->capture = NULL;
        atomic_fetch_sub(&aclsim__captures, 1);
    }
}

static bool add_lane(struct aclsim__ri *ri, struct aclsim__stream *s, uint32_t epoch,
                     const void *handle)
{
    if (!grow((void **)&ri->lanes, &ri->cap_lanes, ri->nlanes, sizeof *ri->lanes))
        return false;
    ri->lanes[ri->nlanes++] = (struct lane){.s = s, .epoch = epoch, .handle = (void *)handle};
    s->capture = ri;
    atomic_fetch_add(&aclsim__captures, 1);
    return true;
}

static void ri_free(struct aclsim__ri *ri);
struct plan;
static void plan_unref(struct plan *p);

/* Destroys ri and its branches (ri_lock held); the destroy callbacks are
 * copied to *cbs for the caller to call without the lock. */
static void ri_destroy(struct aclsim__ri *ri, struct destroy_cb **cbs, uint32_t *ncbs)
{
    for (uint32_t i = 0; i < ri->nlanes; i++)
        lane_leave(ri, &ri->lanes[i]);
    if (ri->state == RI_CAPTURING && tls_capturing != MODE_NONE && pthread_equal(ri->thread, pthread_self()))
        tls_capturing = MODE_NONE;
    for (struct aclsim__ri *r = all_ri; r;) {   /* its branches (conditional tasks) */
        if (r->parent == ri) {
            ri_destroy(r, NULL, NULL);
            r = all_ri;
        } else {
            r = r->next;
        }
    }
    if (cbs) {
        *cbs = ri->cbs;
        *ncbs = ri->ncbs;
        ri->cbs = NULL;
    }
    aclsim__handle_free(ri->handle);
    if (ri->prev)
        ri->prev->next = ri->next;
    else
        all_ri = ri->next;
    if (ri->next)
        ri->next->prev = ri->prev;
    ri_free(ri);
}

static void ri_free(struct aclsim__ri *ri)
{
    for (uint32_t i = 0; i < ri->ntasks; i++) {
        struct ri_task *rt = ri->tasks[i];
        aclsim__handle_free(rt->handle);
        if (rt->ctl) {
            free(rt->ctl);
        } else if (!rt->cond) {
            task_drop(&rt->t);
        } else {
            free(rt->cond->branches);
            free(rt->cond);
        }
        free(rt);
    }
    for (uint32_t i = 0; i < ri->nconds; i++) {
        struct cond *c = ri->conds[i];
        aclsim__handle_free(c->handle);   /* (its 8 bytes go with the device's memory) */
        free(c);
    }
    for (uint32_t i = 0; i < ri->nlanes; i++) {
        if (ri->lanes[i].lhandle)
            aclsim__handle_free(ri->lanes[i].lhandle);
        free(ri->lanes[i].lref);
    }
    for (uint32_t i = 0; i < ri->ngroups; i++) {
        aclsim__handle_free(ri->groups[i]->handle);
        free(ri->groups[i]);
    }
    plan_unref(ri->plan);
    free(ri->open_group);
    free(ri->groups);
    free(ri->conds);
    free(ri->tasks);
    free(ri->lanes);
    free(ri->cbs);
    free(ri);
}

/* The capture of ri ends (invalidated: its tasks stay until it is
 * destroyed). ri_lock held. */
static void capture_stop(struct aclsim__ri *ri)
{
    for (uint32_t i = 0; i < ri->nlanes; i++)
        lane_leave(ri, &ri->lanes[i]);
    if (pthread_equal(ri->thread, pthread_self()))
        tls_capturing = MODE_NONE;
}

static bool is_value_op(const struct aclsim__task *t);

/* ---- the capture hook ------------------------------------------------------------- */

/* The open instance with a captured record of ev numbered seq, or NULL. */
static struct aclsim__ri *record_owner(const struct aclsim__event *ev, uint64_t seq,
                                       struct ri_task **found)
{
    for (struct aclsim__ri *ri = all_ri; ri; ri = ri->next) {
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
    for (struct aclsim__ri *ri = all_ri; ri; ri = ri->next)
        if (ri->state == RI_CAPTURING && ri->ctx == ctx &&
            (ctx_mode == MODE_NONE || ri->mode < ctx_mode))
            ctx_mode = ri->mode;
    if (ctx_mode == MODE_NONE || tls_mode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return true;
    if (tls_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        return !(ctx_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
                 tls_capturing == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL);
    return !(tls_capturing == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
             tls_capturing == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL);
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
static aclError record_task(struct aclsim__ri *ri, int lane, const struct aclsim__task *task,
                            const char *api, struct aclsim__event **retire, uint64_t *retire_seq)
{
    struct ri_task *rt = aclsim__calloc(1, sizeof *rt);
    if (!rt || !grow((void **)&ri->tasks, &ri->cap_tasks, ri->ntasks, sizeof *ri->tasks) ||
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
        rt->args_size = task->u.kernel.argbuf ? args_block_size(task) : 0;
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
                    (task->kind == ACLSIM_TASK_SIGNAL && !is_value_op(task))))
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
    else if (!grow((void **)&u->tasks, &u->cap, u->n, sizeof *u->tasks))
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
    if (tls_replaying)
        return false;
    struct aclsim__event *retire = NULL;
    uint64_t retire_seq = 0;
    pthread_mutex_lock(&ri_lock);
    if (atomic_load(&s->epoch) != ref.epoch) {
        pthread_mutex_unlock(&ri_lock);
        return false;   /* aclsim__submit refuses it */
    }
    for (struct updating *u = updates; u; u = u->next)
        if (u->s == s && u->epoch == ref.epoch) {
            *err = update_task(u, task, api);
            pthread_mutex_unlock(&ri_lock);
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
            pthread_mutex_unlock(&ri_lock);
            return true;
        }
        pthread_mutex_unlock(&ri_lock);
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
        int lane = joining ? -1 : lane_of(ri, s);
        if (lane < 0) {
            if (!add_lane(ri, s, ref.epoch, ref.handle))
                *err = invalidate(ri, ACL_ERROR_BAD_ALLOC, api, "out of memory");
            lane = (int)ri->nlanes - 1;
        }
        if (!*err)
            *err = record_task(ri, lane, task, api, &retire, &retire_seq);
    }
    pthread_mutex_unlock(&ri_lock);
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
    pthread_mutex_lock(&ri_lock);
    bool active = s->capture && s->capture->state == RI_CAPTURING;
    pthread_mutex_unlock(&ri_lock);
    return active;
}

/* ---- refusals of other calls ----------------------------------------------------------- */

aclError aclsim__capture_refuse_stream(struct aclsim__stream *s, const char *api)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&aclsim__captures, memory_order_relaxed)))
        return ACL_SUCCESS;
    pthread_mutex_lock(&ri_lock);
    bool captured = s->capture && s->capture->state == RI_CAPTURING;
    pthread_mutex_unlock(&ri_lock);
    if (captured)
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
    pthread_mutex_lock(&ri_lock);
    for (struct aclsim__ri *ri = all_ri; ri && !captured; ri = ri->next)
        captured = ri->state == RI_CAPTURING && aclsim__context_device(ri->ctx) == dev;
    pthread_mutex_unlock(&ri_lock);
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
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = record_owner(ev, 0, NULL);
    bool captured = ri && ri->state == RI_CAPTURING;
    pthread_mutex_unlock(&ri_lock);
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
    pthread_mutex_lock(&ri_lock);
    bool ok = mode_allows(ctx);
    pthread_mutex_unlock(&ri_lock);
    return ok ? ACL_SUCCESS : mode_refusal(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, api);
}

void aclsim__capture_stream_gone(struct aclsim__stream *s)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&aclsim__captures, memory_order_relaxed)))
        return;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = s->capture;
    if (ri) {
        int lane = lane_of(ri, s);
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
    for (struct updating **p = &updates; *p; p = &(*p)->next)
        if ((*p)->s == s) {
            struct updating *u = *p;
            *p = u->next;
            free(u->tasks);
            free(u);
            atomic_fetch_sub(&aclsim__captures, 1);
            break;
        }
    pthread_mutex_unlock(&ri_lock);
}

static void labels_finalize(void);

void aclsim__modelri_finalize(void)
{
    pthread_mutex_lock(&ri_lock);
    while (all_ri) {
        struct aclsim__ri *ri = all_ri;
        while (ri->parent)
            ri = ri->parent;
        ri_destroy(ri, NULL, NULL);
    }
    labels_finalize();
    pthread_mutex_unlock(&ri_lock);
}

/* ---- API: shared steps ------------------------------------------------------------ */

/* init, the NULL argument (100000), CANN's product table (207000). */
static aclError first_checks(const void *arg, const char *name, unsigned socs, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (name && !arg)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
    return aclsim__soc_check(api, socs);
}

static aclError bad_mode(int mode, const char *api)
{
    if ((unsigned)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "mode %d is invalid: ACL_MODEL_RI_CAPTURE_MODE_GLOBAL (0), "
                            "THREAD_LOCAL (1) or RELAXED (2)", mode);
    return ACL_SUCCESS;
}

static aclError capture_begin(aclrtStream stream, aclmdlRI target, int mode, const char *api)
{
    struct aclsim__sref ref;
    struct aclsim__context *ctx = NULL;
    aclError err = bad_mode(mode, api);
    if (err || (err = aclsim__stream_resolve(stream, api, &ctx, &ref)))
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = NULL;
    if (ref.s->capture)
        err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURED, api,
                           "the stream is already being captured or is bound to a model runtime "
                           "instance");
    else if (target && (ri = ri_get(target, api, &err)) && !ri->sub)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "modelRI %u is not a branch of a conditional task (aclmdlRIAddCondTask)",
                           ri->id);
    else if (ri && ri->state != RI_EMPTY)
        err = aclsim__fail(ACL_ERROR_RT_MODEL_CAPTURED, api,
                           "modelRI %u was captured already", ri->id);
    else if (!target && !(ri = ri_new(ctx, RI_CAPTURING)))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    if (!err) {
        ri->state = RI_CAPTURING;
        ri->mode = mode;
        ri->thread = pthread_self();
        if (!add_lane(ri, ref.s, ref.epoch, ref.handle)) {
            err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
            if (!target)
                ri_destroy(ri, NULL, NULL);
            else
                ri->state = RI_EMPTY;
        } else {
            tls_capturing = mode;
        }
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
    static const char api[] = "aclmdlRICaptureBegin";
    aclError err = first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    return err ? err : capture_begin(stream, NULL, (int)mode, api);
}

aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI, aclmdlRICaptureMode mode)
{
    static const char api[] = "aclmdlRICaptureToModelRIBegin";
    aclError err = first_checks(stream, "stream", INSPECT_FAMILIES, api);
    if (!err && !modelRI)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "modelRI is NULL");
    return err ? err : capture_begin(stream, modelRI, (int)mode, api);
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status, aclmdlRI *modelRI)
{
    static const char api[] = "aclmdlRICaptureGetInfo";
    aclError err = first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    if (!err && !status && !modelRI)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "status and modelRI are both NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ref.s->capture;
    if (ri && ri->state != RI_CAPTURING)
        ri = NULL;
    if (status)
        *status = !ri ? ACL_MODEL_RI_CAPTURE_STATUS_NONE
                  : ri->invalid ? ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED
                                : ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    if (modelRI)
        *modelRI = ri ? ri->handle : NULL;
    pthread_mutex_unlock(&ri_lock);
    return ACL_SUCCESS;
}

aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)
{
    static const char api[] = "aclmdlRICaptureThreadExchangeMode";
    aclError err = first_checks(mode, "mode", CAPTURE_FAMILIES, api);
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
    aclError err = first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    if (!err && !modelRI)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "modelRI is NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    *modelRI = NULL;
    struct destroy_cb *cbs = NULL;
    uint32_t ncbs = 0;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ref.s->capture;
    if (!ri || ri->state != RI_CAPTURING) {
        err = aclsim__fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, api,
                           "the stream is not being captured (aclmdlRICaptureBegin)");
        ri = NULL;
    } else if (lane_of(ri, ref.s) != 0) {
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
        for (struct aclsim__ri *r = all_ri; r && !err; r = r->next)
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
            ri_destroy(ri, &cbs, &ncbs);
        } else if (err) {
            ri->state = RI_EMPTY;   /* a branch: captured again later */
        } else {
            ri->state = RI_CAPTURED;
            *modelRI = ri->handle;
        }
    }
    pthread_mutex_unlock(&ri_lock);
    for (uint32_t i = 0; i < ncbs; i++)
        cbs[i].fn(cbs[i].data);
    free(cbs);
    return err;
}

/* ---- replay ---------------------------------------------------------------------- */

static struct aclsim__task *program_copy(const struct aclsim__ri *ri, uint32_t *n,
                                         const char *api, aclError *err);
struct cond_run;
static void cond_run(void *arg);
static void cond_free(struct cond_run *c);
static void drop_copies(struct aclsim__task *copies, uint32_t from, uint32_t n);
static void drop_copies_in_place(struct aclsim__task *copies, uint32_t n);
static struct cond_run *cond_copy(const struct ri_task *rt, const char *api, aclError *err);

/* ---- the replay plan --------------------------------------------------------------------
 * When every task of an instance can run on a worker without parking (no
 * event, notify or value waits, no event records), a replay is one task: it
 * runs the plan's tasks one after the other, in place. The plan is an
 * immutable copy of the instance's tasks, made at the first replay after a
 * change and shared (counted) by the replays and the instance, so a replay
 * costs one submission whatever the number of tasks. */
struct plan { atomic_uint refs; uint32_t n; struct aclsim__task tasks[]; };

static void plan_unref(struct plan *p)
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
    plan_unref(p);
}

static void plan_drop(void *arg)
{
    plan_unref(arg);
}

static bool inline_kind(const struct ri_task *rt)
{
    const struct aclsim__task *t = &rt->t;
    return !(t->kind == ACLSIM_TASK_RECORD || t->kind == ACLSIM_TASK_WAIT ||
             t->kind == ACLSIM_TASK_CALLBACK || (t->kind == ACLSIM_TASK_SIGNAL && !is_value_op(t)));
}

static struct aclsim__task *replay_copies(const struct aclsim__ri *ri, uint32_t *n,
                                          const char *api, aclError *err);

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
        struct aclsim__task *copies = replay_copies(ri, &count, api, err);
        struct plan *p = *err ? NULL : aclsim__malloc(sizeof *p + count * sizeof p->tasks[0]);
        if (!p) {
            drop_copies(copies, 0, count);
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
static struct aclsim__task *replay_copies(const struct aclsim__ri *ri, uint32_t *n,
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
            if (!(copies[*n].u.host.arg = cond_copy(rt, api, err)))
                break;
        } else if (!task_dup(&rt->t, rt->args_size, &copies[*n])) {
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
        if (copies[i].kind == ACLSIM_TASK_HOST_FUNC && copies[i].u.host.fn == cond_run)
            cond_free(copies[i].u.host.arg);
        else
            task_drop(&copies[i]);   /* (a CALLBACK's drop frees its branches) */
    }
}

static void drop_copies(struct aclsim__task *copies, uint32_t from, uint32_t n)
{
    if (copies)
        drop_copies_in_place(copies + from, n - from);
    free(copies);
}

static void cond_run_once(void *arg)
{
    cond_run(arg);
    cond_free(arg);
}

static void cond_drop(void *arg)
{
    cond_free(arg);
}

/* Queues the copies on s in order; *last: the sequence number of the last. */
static aclError replay_submit(struct aclsim__task *copies, uint32_t n, struct aclsim__sref s,
                              const char *api, uint64_t *last)
{
    aclError err = ACL_SUCCESS;
    uint32_t i = 0;
    tls_replaying = true;
    for (; i < n && !err; i++) {
        if (copies[i].kind == ACLSIM_TASK_RECORD) {
            struct aclsim__event *ev = copies[i].u.event.event;
            err = aclsim__event_record_on(ev, s, api);
            aclsim__event_unref(ev);   /* the copy's */
        } else {
            if (aclsim__is_event_wait(&copies[i]))   /* EXTERNAL: the latest record now */
                copies[i].u.sync.value = aclsim__event_latest(copies[i].u.sync.obj);
            if (copies[i].kind == ACLSIM_TASK_HOST_FUNC && copies[i].u.host.fn == cond_run)
                copies[i] = (struct aclsim__task){   /* runs once, then frees its branches */
                    .kind = ACLSIM_TASK_CALLBACK, .label = "condition",
                    .u.cb = {cond_run_once, cond_drop, copies[i].u.host.arg}};
            err = aclsim__submit(s, &copies[i], api, NULL);
            if (err)
                break;   /* still ours: dropped below */
        }
    }
    tls_replaying = false;
    *last = atomic_load(&s.s->submitted);
    drop_copies(copies, i, n);
    return err;
}

/* The checks of both executions; the copies to queue. */
static struct aclsim__task *execute_prepare(aclmdlRI modelRI, struct aclsim__sref *s,
                                            bool sync, uint32_t *n, const char *api,
                                            aclError *err)
{
    struct aclsim__task *copies = NULL;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, err);
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
        copies = program_copy(ri, n, api, err);
    } else if (!*err && (copies = replay_plan(ri, n, api, err))) {
    } else if (!*err) {
        copies = replay_copies(ri, n, api, err);
        if (*err) {
            drop_copies(copies, 0, *n);
            copies = NULL;
        }
    }
    pthread_mutex_unlock(&ri_lock);
    return copies;
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
    static const char api[] = "aclmdlRIExecuteAsync";
    aclError err = first_checks(modelRI, "modelRI", CAPTURE_FAMILIES, api);
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
    aclError err = first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
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

aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
    static const char api[] = "aclmdlRIDestroy";
    aclError err = first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (err)
        return err;
    struct destroy_cb *cbs = NULL;
    uint32_t ncbs = 0;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    if (ri && ri->sub)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "model runtime instance %u is a branch of a conditional task: it is "
                           "destroyed with its parent", ri->id);
    else if (ri && ri->state == RI_CAPTURING)
        err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURED, api,
                           "model runtime instance %u is being captured: end the capture first "
                           "(aclmdlRICaptureEnd)", ri->id);
    else if (ri)
        ri_destroy(ri, &cbs, &ncbs);
    pthread_mutex_unlock(&ri_lock);
    for (uint32_t i = 0; i < ncbs; i++)   /* on this thread, without locks */
        cbs[i].fn(cbs[i].data);
    free(cbs);
    return err;
}

/* ---- names, ids, callbacks ------------------------------------------------------------ */

aclError aclmdlRISetName(aclmdlRI modelRI, const char *name)
{
    static const char api[] = "aclmdlRISetName";
    aclError err = first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (!err && !name)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "name is NULL");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    if (ri)
        snprintf(ri->name, sizeof ri->name, "%s", name);   /* CANN keeps 512 bytes */
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char *name)
{
    static const char api[] = "aclmdlRIGetName";
    aclError err = first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (!err && !name)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "name is NULL");
    if (!err && maxLen == 0)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "maxLen is 0");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    if (ri)
        snprintf(name, maxLen, "%s", ri->name);
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)
{
    static const char api[] = "aclmdlRIGetId";
    aclError err = first_checks(modelRI, "modelRI", CAPTURE_FAMILIES, api);
    if (!err && !modelRIId)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "modelRIId is NULL");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    if (ri)
        *modelRIId = ri->id;
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIDestroyRegisterCallback(aclmdlRI modelRI, aclrtCallback func, void *userData)
{
    static const char api[] = "aclmdlRIDestroyRegisterCallback";
    aclError err = first_checks(NULL, NULL, ACLSIM_ALL_BUT_IPV, api);
    if (!err && (!modelRI || !func))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL", !modelRI ? "modelRI" : "func");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    if (ri && !grow((void **)&ri->cbs, &ri->cap_cbs, ri->ncbs, sizeof *ri->cbs))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    else if (ri)
        ri->cbs[ri->ncbs++] = (struct destroy_cb){func, userData};
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIDestroyUnregisterCallback(aclmdlRI modelRI, aclrtCallback func)
{
    static const char api[] = "aclmdlRIDestroyUnregisterCallback";
    aclError err = first_checks(NULL, NULL, ACLSIM_ALL_BUT_IPV, api);
    if (!err && (!modelRI || !func))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL", !modelRI ? "modelRI" : "func");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    bool found = false;
    for (uint32_t i = 0; ri && i < ri->ncbs; i++)
        if (ri->cbs[i].fn == func) {
            memmove(&ri->cbs[i], &ri->cbs[i + 1], (ri->ncbs - i - 1) * sizeof *ri->cbs);
            ri->ncbs--;
            found = true;
            break;
        }
    if (ri && !found)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "func %p is not registered on model runtime instance %u",
                           (void *)func, ri->id);
    pthread_mutex_unlock(&ri_lock);
    return err;
}

/* ---- inspection and editing ------------------------------------------------------------ */

aclError aclmdlRIGetStreams(aclmdlRI modelRI, aclrtStream *streams, uint32_t *numStreams)
{
    static const char api[] = "aclmdlRIGetStreams";
    aclError err = first_checks(NULL, NULL, INSPECT_FAMILIES, api);
    if (!err && (!modelRI || !numStreams))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL",
                           !modelRI ? "modelRI" : "numStreams");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
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
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIGetTasksByStream(aclrtStream stream, aclmdlRITask *tasks, uint32_t *numTasks)
{
    static const char api[] = "aclmdlRIGetTasksByStream";
    aclError err = first_checks(NULL, NULL, INSPECT_FAMILIES, api);
    if (!err && (!stream || !numTasks))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL",
                           !stream ? "stream" : "numTasks");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
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
    pthread_mutex_unlock(&ri_lock);
    return err;
}

static bool is_value_op(const struct aclsim__task *t)
{
    /* memop.c's tasks (aclrtValueWrite / aclrtValueWait) */
    return (t->kind == ACLSIM_TASK_WAIT || t->kind == ACLSIM_TASK_SIGNAL) &&
           strcmp(t->u.sync.ops->what, "a memory value") == 0;
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
    if (is_value_op(t))
        return t->kind == ACLSIM_TASK_SIGNAL ? ACL_MODEL_RI_TASK_VALUE_WRITE
                                             : ACL_MODEL_RI_TASK_VALUE_WAIT;
    return ACL_MODEL_RI_TASK_DEFAULT;
}

/* The task of handle (ri_lock held by the caller), with the common checks. */
static struct ri_task *task_call(aclmdlRITask task, const void *out, const char *name,
                                 const char *api, aclError *err)
{
    if ((*err = first_checks(NULL, NULL, INSPECT_FAMILIES, api)))
        return NULL;
    if (!task || (name && !out)) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL", !task ? "task" : name);
        return NULL;
    }
    pthread_mutex_lock(&ri_lock);
    struct ri_task *rt = task_get(task, api, err);
    if (!rt)
        pthread_mutex_unlock(&ri_lock);
    return rt;
}

aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type)
{
    aclError err;
    struct ri_task *rt = task_call(task, type, "type", "aclmdlRITaskGetType", &err);
    if (!rt)
        return err;
    *type = type_of(rt);
    pthread_mutex_unlock(&ri_lock);
    return ACL_SUCCESS;
}

aclError aclmdlRITaskGetSeqId(aclmdlRITask task, uint32_t *id)
{
    aclError err;
    struct ri_task *rt = task_call(task, id, "id", "aclmdlRITaskGetSeqId", &err);
    if (!rt)
        return err;
    *id = rt->seq;
    pthread_mutex_unlock(&ri_lock);
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
    pthread_mutex_unlock(&ri_lock);
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
            plan_unref(rt->ri->plan);   /* later replays see the change */
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
            plan_unref(rt->ri->plan);
            rt->ri->plan = NULL;
        }
    } else {
        err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                           "aclsim sets the parameters of kernel, value write and value wait "
                           "tasks only (the event of an event task is fixed by the capture)");
    }
    pthread_mutex_unlock(&ri_lock);
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
    pthread_mutex_unlock(&ri_lock);
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
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIUpdate(aclmdlRI modelRI)
{
    static const char api[] = "aclmdlRIUpdate";
    aclError err = first_checks(NULL, NULL, INSPECT_FAMILIES, api);
    if (!err && !modelRI)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "modelRI is NULL");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    if (ri && ri->state != RI_CAPTURED && ri->state != RI_BUILT)
        err = aclsim__fail(ACL_ERROR_RT_MODEL_UPDATE_FAILED, api,
                           "model runtime instance %u is still being captured or built", ri->id);
    for (uint32_t i = 0; ri && !err && i < ri->ntasks; i++)
        if (ri->tasks[i]->disable_pending)
            ri->tasks[i]->disabled = true;
    if (ri && !err) {
        plan_unref(ri->plan);
        ri->plan = NULL;
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

/* ---- explicit build on persistent streams ---------------------------------------------- */

aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag)
{
    static const char api[] = "aclmdlRIBuildBegin";
    aclError err = first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (!err && flag != 0)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "flag %u is reserved and must be 0", flag);
    struct aclsim__context *ctx = NULL;
    if (err || (err = aclsim__current_context(api, &ctx)))
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_new(ctx, RI_BUILDING);
    if (ri) {
        ri->built = true;
        *modelRI = ri->handle;
    } else {
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

/* The instance and the stream of a build call (ri_lock taken on success). */
static struct aclsim__ri *build_call(aclmdlRI modelRI, aclrtStream stream, struct aclsim__sref *ref,
                                     const char *api, aclError *err)
{
    if ((*err = first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api)))
        return NULL;
    if (!stream) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "stream is NULL (the default stream cannot be bound to a model)");
        return NULL;
    }
    if ((*err = aclsim__stream_resolve(stream, api, NULL, ref)))
        return NULL;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, err);
    if (ri && !ri->built) {
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "model runtime instance %u was captured, not built with "
                            "aclmdlRIBuildBegin", ri->id);
        ri = NULL;
    }
    if (!ri)
        pthread_mutex_unlock(&ri_lock);
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
    else if (!add_lane(ri, ref.s, ref.epoch, stream))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    else
        ri->lanes[ri->nlanes - 1].bind_flag = flag;
    pthread_mutex_unlock(&ri_lock);
    return err;
}

/* The lane of ref.s in ri (ri_lock held), or -1 with 107005. */
static int bound_lane(struct aclsim__ri *ri, struct aclsim__sref ref, const char *api, aclError *err)
{
    int lane = ref.s->capture == ri ? lane_of(ri, ref.s) : -1;
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
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve)
{
    static const char api[] = "aclmdlRIBuildEnd";
    aclError err = first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (!err && reserve)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "reserve is reserved and must be NULL");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    if (ri && (!ri->built || ri->state != RI_BUILDING))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "model runtime instance %u is not being built", ri->id);
    else if (ri)
        ri->state = RI_BUILT;
    pthread_mutex_unlock(&ri_lock);
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
        lane_leave(ri, &ri->lanes[lane]);
        ri->lanes[lane].gone = true;   /* its tasks stay, replayed on the HEAD stream */
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclrtPersistentTaskClean(aclrtStream stream)
{
    static const char api[] = "aclrtPersistentTaskClean";
    aclError err = first_checks(stream, "stream", ACLSIM_ALL_BUT_IPV, api);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    if (!(__atomic_load_n(&ref.s->flags, __ATOMIC_RELAXED) & ACL_STREAM_PERSISTENT))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "stream %p was not created with ACL_STREAM_PERSISTENT", stream);
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ref.s->capture;
    int lane = ri ? lane_of(ri, ref.s) : -1;
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
            task_drop(&rt->t);
            free(rt);
        }
        ri->ntasks = k;
        plan_unref(ri->plan);
        ri->plan = NULL;
        ri->lanes[lane].ntasks = 0;
        ri->lanes[lane].ended = false;
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIAbort(aclmdlRI modelRI)
{
    static const char api[] = "aclmdlRIAbort";
    aclError err = first_checks(NULL, NULL, ACLSIM_ALL_BUT_IPV, api);
    if (!err && !modelRI)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "modelRI is NULL");
    if (err)
        return err;
    struct aclsim__sref heads[16];
    uint32_t nheads = 0;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
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
    pthread_mutex_unlock(&ri_lock);
    /* aclmdlRIExecute runs a built instance on its bound streams: what has
     * not started there is discarded. */
    for (uint32_t i = 0; i < nheads; i++)
        (void)aclsim__stream_abort(heads[i]);
    return err;
}

/* CANN updates a captured kernel (by task id) to another kernel of a
 * program, or a random-number task, with a device-side task. */
aclError aclrtTaskUpdateAsync(aclrtStream taskStream, uint32_t taskId, aclrtTaskUpdateInfo *info,
                              aclrtStream execStream)
{
    static const char api[] = "aclrtTaskUpdateAsync";
    aclError err = first_checks(info, "info", INSPECT_FAMILIES, api);
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

/* The capture a stream is in (ri_lock held), or NULL with 107029. */
static struct aclsim__ri *capturing(struct aclsim__sref ref, const char *api, aclError *err)
{
    struct aclsim__ri *ri = ref.s->capture;
    if (!ri || ri->state != RI_CAPTURING) {
        *err = aclsim__fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, api,
                            "the stream is not being captured");
        return NULL;
    }
    return ri;
}

aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream)
{
    static const char api[] = "aclmdlRICaptureTaskGrpBegin";
    aclError err = first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = capturing(ref, api, &err);
    if (ri && ri->open_group)
        err = aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                           "a task group is open already (aclmdlRICaptureTaskGrpEnd)");
    else if (ri && !(ri->open_group = aclsim__calloc(1, sizeof *ri->open_group)))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    else if (ri) {
        int lane = lane_of(ri, ref.s);
        *ri->open_group = (struct group){NULL, ri, (uint32_t)lane, ri->lanes[lane].ntasks, 0};
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle)
{
    static const char api[] = "aclmdlRICaptureTaskGrpEnd";
    aclError err = first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    if (!err && !handle)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = capturing(ref, api, &err);
    struct group *g = ri ? ri->open_group : NULL;
    if (ri && (!g || g->lane != (uint32_t)lane_of(ri, ref.s)))
        err = aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                           "no task group was begun on this stream (aclmdlRICaptureTaskGrpBegin)");
    else if (ri && (!grow((void **)&ri->groups, &ri->cap_groups, ri->ngroups, sizeof *ri->groups) ||
                    !(g->handle = aclsim__handle_new(ACLSIM_H_TASK_GRP, g))))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    else if (ri) {
        g->count = ri->lanes[g->lane].ntasks - g->first;
        ri->groups[ri->ngroups++] = g;
        ri->open_group = NULL;
        *handle = g->handle;
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle)
{
    static const char api[] = "aclmdlRICaptureTaskUpdateBegin";
    aclError err = first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    if (!err && !handle)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&ri_lock);
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
    for (struct updating *x = updates; !err && x; x = x->next)
        if (x->s == ref.s)
            err = aclsim__fail(ACL_ERROR_STREAM_TASK_GROUP_STATUS, api,
                               "the stream is recording an update already");
    if (!err && !(u = aclsim__calloc(1, sizeof *u)))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    if (!err) {
        *u = (struct updating){.s = ref.s, .epoch = ref.epoch, .ghandle = handle, .next = updates};
        updates = u;
        atomic_fetch_add(&aclsim__captures, 1);
    }
    pthread_mutex_unlock(&ri_lock);
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
        task_drop(&targets[i]->t);
        targets[i]->t = u->tasks[i];
        if (u->tasks[i].kind == ACLSIM_TASK_KERNEL)
            targets[i]->args_size = u->tasks[i].u.kernel.argbuf ? args_block_size(&u->tasks[i]) : 0;
    }
    u->n = 0;   /* now the instance's */
    plan_unref(ri->plan);
    ri->plan = NULL;
    return ACL_SUCCESS;
}

aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream)
{
    static const char api[] = "aclmdlRICaptureTaskUpdateEnd";
    aclError err = first_checks(stream, "stream", CAPTURE_FAMILIES, api);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&ri_lock);
    struct updating **p = &updates;
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
            task_drop(&u->tasks[i]);
        free(u->tasks);
        free(u);
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

/* ---- readable dumps ------------------------------------------------------------------------ */

static const char *kind_name(const struct ri_task *rt)
{
    static const char *const names[] = {"COPY", "MEMSET", "KERNEL", "HOST_FUNC", "EVENT_RECORD",
                                        "WAIT", "OVERFLOW", "COPY2D", "MEMSET32", "SIGNAL",
                                        "REDUCE", "RANDOM", "BATCH", "CMO", "CALLBACK"};
    static const char *const ctl_names[] = {"LABEL_SET", "LABEL_SWITCH_BY_INDEX", "STREAM_ACTIVE",
                                            "STREAM_SWITCH"};
    if (rt->cond)
        return "CONDITION";
    if (rt->ctl)
        return ctl_names[rt->ctl->op];
    if (aclsim__is_event_wait(&rt->t))
        return "EVENT_WAIT";
    if (aclsim__is_event_reset(&rt->t))
        return "EVENT_RESET";
    if (is_value_op(&rt->t))
        return rt->t.kind == ACLSIM_TASK_WAIT ? "VALUE_WAIT" : "VALUE_WRITE";
    return rt->t.kind < sizeof names / sizeof *names ? names[rt->t.kind] : "TASK";
}

static void dump(FILE *f, const struct aclsim__ri *ri, bool json, bool verbose)
{
    int dev = aclsim__context_device(ri->ctx)->id;
    if (json) {
        fprintf(f, "{\"modelId\":%u,\"name\":\"", ri->id);
        for (const char *c = ri->name; *c; c++)   /* a JSON string */
            fprintf(f, (unsigned char)*c < 0x20 ? "\\u%04x" : *c == '"' || *c == '\\' ? "\\%c" : "%c",
                    (unsigned char)*c);
        fprintf(f, "\",\"deviceId\":%d,\"kind\":\"%s\",\"streams\":[", dev,
                ri->built ? "built" : "captured");
    }
    else
        fprintf(f, "model runtime instance %u \"%s\" (device %d, %s, %u stream(s), %u task(s))\n",
                ri->id, ri->name, dev, ri->built ? "built" : "captured", ri->nlanes, ri->ntasks);
    for (uint32_t l = 0; l < ri->nlanes; l++) {
        if (json)
            fprintf(f, "%s{\"streamId\":%u,\"tasks\":[", l ? "," : "", l);
        else
            fprintf(f, "  stream %u (%p)\n", l, ri->lanes[l].handle);
        bool first = true;
        for (uint32_t i = 0; i < ri->ntasks; i++) {
            const struct ri_task *rt = ri->tasks[i];
            if (rt->lane != l)
                continue;
            if (json) {
                fprintf(f, "%s{\"taskId\":%u,\"order\":%u,\"taskType\":\"%s\",\"bytes\":%zu",
                        first ? "" : ",", rt->seq, i, kind_name(rt), rt->t.bytes);
                if (rt->t.label)
                    fprintf(f, ",\"name\":\"%s\"", rt->t.label);
                if (rt->t.kind == ACLSIM_TASK_KERNEL)
                    fprintf(f, ",\"numBlocks\":%u", rt->t.u.kernel.blocks);
                if (rt->disabled)
                    fprintf(f, ",\"disabled\":true");
                if (verbose && rt->t.kind == ACLSIM_TASK_KERNEL && rt->t.u.kernel.argbuf) {
                    const unsigned char *a = ((void **)rt->t.u.kernel.argbuf)[0];
                    size_t n = rt->args_size - (size_t)((const char *)a - (char *)rt->t.u.kernel.argbuf);
                    fprintf(f, ",\"args\":\"");
                    for (size_t b = 0; b < n; b++)
                        fprintf(f, "%02x", a[b]);
                    fprintf(f, "\"");
                }
                fprintf(f, "}");
            } else {
                fprintf(f, "    task %u: %s%s%s%s (%zu bytes)%s\n", rt->seq, kind_name(rt),
                        rt->t.label ? " " : "", rt->t.label ? rt->t.label : "",
                        rt->internal ? " (waits inside the instance)" : "", rt->t.bytes,
                        rt->disabled ? " disabled" : "");
            }
            first = false;
        }
        if (json)
            fprintf(f, "]}");
    }
    if (json)
        fprintf(f, "]}\n");
}

aclError aclmdlRIDebugPrint(aclmdlRI modelRI)
{
    static const char api[] = "aclmdlRIDebugPrint";
    aclError err = first_checks(modelRI, "modelRI", CAPTURE_FAMILIES, api);
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    if (ri)
        dump(stdout, ri, false, false);
    fflush(stdout);
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags)
{
    static const char api[] = "aclmdlRIDebugJsonPrint";
    aclError err = first_checks(modelRI, "modelRI", CAPTURE_FAMILIES, api);
    if (!err && !path)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "path is NULL");
    if (!err && flags > ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "flags %u is invalid: ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY (0) or "
                           "VERBOSE (1)", flags);
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    FILE *f = ri ? fopen(path, "w") : NULL;
    if (ri && !f)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "cannot write %s: %s", path,
                           strerror(errno));
    if (f) {
        dump(f, ri, true, flags == ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE);
        if (fclose(f))
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "cannot write %s: %s", path,
                               strerror(errno));
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

/* ---- conditional tasks ------------------------------------------------------------------- */

aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t defaultLaunchValue,
                                  aclmdlRICondHandleFlag flag, aclmdlRICondHandle *handle)
{
    static const char api[] = "aclmdlRICondHandleCreate";
    aclError err = first_checks(modelRI, "modelRI", INSPECT_FAMILIES, api);
    if (!err && !handle)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    if (!err && (unsigned)flag > ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "flag %d is invalid: 0 or ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT (1)",
                           (int)flag);
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ri_get(modelRI, api, &err);
    struct cond *c = NULL;
    void *mem = NULL;
    if (ri && ri->built)
        err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                           "model runtime instance %u is built, not captured (an ACL graph)", ri->id);
    else if (ri && (!grow((void **)&ri->conds, &ri->cap_conds, ri->nconds, sizeof *ri->conds) ||
                    !(c = aclsim__calloc(1, sizeof *c))))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    else if (ri)
        err = aclsim__device_alloc(api, ri->ctx, &mem, sizeof(uint64_t));
    if (c && !err && !(c->handle = aclsim__handle_new(ACLSIM_H_RI_COND, c)))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    if (!err) {
        c->ri = ri;
        c->ptr = mem;
        c->def = defaultLaunchValue;
        c->assign_default = flag == ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT;
        __atomic_store_n(c->ptr, (uint64_t)defaultLaunchValue, __ATOMIC_RELAXED);
        ri->conds[ri->nconds++] = c;
        *handle = c->handle;
    } else {
        free(c);
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle, uint64_t **ptr)
{
    static const char api[] = "aclmdlRICondHandleGetCondPtr";
    aclError err = first_checks(handle, "handle", INSPECT_FAMILIES, api);
    if (!err && !ptr)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct cond *c = aclsim__handle_get(handle, ACLSIM_H_RI_COND);
    if (c)
        *ptr = c->ptr;
    else
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "handle %p is not a condition handle of a live model runtime instance",
                           handle);
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream, uint32_t flags)
{
    static const char api[] = "aclmdlRIAddCondTask";
    aclError err = first_checks(stream, "stream", INSPECT_FAMILIES, api);
    if (!err && (unsigned)params.type > ACL_MODEL_RI_COND_TYPE_SWITCH)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "params.type %d is invalid: IF (0), WHILE (1) or SWITCH (2)", (int)params.type);
    else if (!err && flags)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "flags is reserved and must be 0");
    else if (!err && (!params.handle || !params.modelRIArray))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "params.%s is NULL",
                           !params.handle ? "handle" : "modelRIArray");
    else if (!err && (params.size == 0 || params.size > 1024 ||
                      (params.type == ACL_MODEL_RI_COND_TYPE_IF && params.size > 2) ||
                      (params.type == ACL_MODEL_RI_COND_TYPE_WHILE && params.size != 1)))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "params.size %u is invalid for this type (IF: 1 or 2, WHILE: 1, "
                           "SWITCH: 1 or more)", params.size);
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = capturing(ref, api, &err);
    struct cond *c = aclsim__handle_get(params.handle, ACLSIM_H_RI_COND);
    struct cond_task *ct = NULL;
    if (ri && (!c || c->ri != ri))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "params.handle is not a condition handle of the instance this stream "
                           "is captured into");
    else if (ri && ri->invalid)
        err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, api,
                           "the capture was invalidated by an earlier error");
    else if (ri && (!(ct = aclsim__calloc(1, sizeof *ct)) ||
                    !(ct->branches = aclsim__calloc(params.size, sizeof *ct->branches))))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    for (uint32_t i = 0; ri && !err && i < params.size; i++) {
        struct aclsim__ri *b = ri_new(ri->ctx, RI_EMPTY);
        if (!b) {
            err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
            break;
        }
        b->sub = true;
        b->parent = ri;
        ct->branches[ct->n++] = b;
    }
    if (ri && !err) {
        ct->c = c;
        ct->type = (int)params.type;
        struct aclsim__task t = {.kind = ACLSIM_TASK_HOST_FUNC, .label = "condition",
                                 .u.host = {cond_run, NULL}};
        struct aclsim__event *none = NULL;
        uint64_t none_seq = 0;
        if (!(err = record_task(ri, lane_of(ri, ref.s), &t, api, &none, &none_seq))) {
            ri->tasks[ri->ntasks - 1]->cond = ct;
            for (uint32_t i = 0; i < ct->n; i++)
                params.modelRIArray[i] = ct->branches[i]->handle;
            ct = NULL;
        }
    }
    if (ct) {   /* failed: the branches made go */
        for (uint32_t i = 0; i < ct->n; i++)
            ri_destroy(ct->branches[i], NULL, NULL);
        free(ct->branches);
        free(ct);
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

/* What one replay's conditional task owns: its branches' task copies. */
struct cond_run {
    uint64_t *ptr;
    uint64_t def;
    bool assign;
    int type;
    uint32_t n;
    struct branch { struct aclsim__task *tasks; uint32_t n; } br[];
};

static void cond_free(struct cond_run *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++)
        drop_copies(c->br[i].tasks, 0, c->br[i].n);
    free(c);
}

static struct cond_run *cond_copy(const struct ri_task *rt, const char *api, aclError *err)
{
    const struct cond_task *ct = rt->cond;
    struct cond_run *c = aclsim__calloc(1, sizeof *c + ct->n * sizeof c->br[0]);
    if (!c) {
        *err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory replaying");
        return NULL;
    }
    *c = (struct cond_run){ct->c->ptr, ct->c->def, ct->c->assign_default, ct->type, 0};
    for (uint32_t i = 0; i < ct->n; i++) {
        c->br[i].tasks = replay_copies(ct->branches[i], &c->br[i].n, api, err);
        c->n++;
        if (*err) {
            cond_free(c);
            return NULL;
        }
    }
    return c;
}

static void run_branch(struct branch *b)
{
    for (uint32_t i = 0; i < b->n; i++)
        aclsim__execute_inline(aclsim__tls_stream, &b->tasks[i]);
}

/* The conditional task, on the worker that reached it: IF runs the first
 * branch when the value is not zero, else the second (if any); WHILE runs
 * its branch as long as the value (read before each round) is not zero;
 * SWITCH runs the branch at the value's index (none past the last). */
static void cond_run(void *arg)
{
    struct cond_run *c = arg;
    struct aclsim__stream *s = aclsim__tls_stream;
    if (!c)
        return;
    if (c->assign)
        __atomic_store_n(c->ptr, c->def, __ATOMIC_RELAXED);
    uint64_t v = __atomic_load_n(c->ptr, __ATOMIC_ACQUIRE);
    if (c->type == ACL_MODEL_RI_COND_TYPE_IF) {
        if (v)
            run_branch(&c->br[0]);
        else if (c->n > 1)
            run_branch(&c->br[1]);
    } else if (c->type == ACL_MODEL_RI_COND_TYPE_WHILE) {
        while (__atomic_load_n(c->ptr, __ATOMIC_ACQUIRE) &&
               !(s && atomic_load_explicit(&s->discard, memory_order_acquire)))
            run_branch(&c->br[0]);
    } else if (v < c->n) {
        run_branch(&c->br[v]);
    }
}

/* ---- labels and stream activation: control steps of built models ------------------------------- */

#define LABELS_MAX 65535u   /* per process (CANN) */

struct label {
    struct label *next, *prev;  /* every label (aclFinalize frees them) */
    void *handle;
    uint32_t ri_id;             /* the model it is set in (ids are not reused), */
    uint32_t lane, pos;         /* its stream there and its step; */
    bool set;                   /* once aclrtSetLabel ran */
};
struct label_list { struct label_list *next, *prev; void *handle; uint32_t n; void **labels; };
static uint32_t nlabels;
static struct label *all_labels;
static struct label_list *all_lists;

#define LINK(head, x)                \
    do {                             \
        (x)->prev = NULL;            \
        (x)->next = (head);          \
        if (head)                    \
            (head)->prev = (x);      \
        (head) = (x);                \
    } while (0)
#define UNLINK(head, x)                      \
    do {                                     \
        if ((x)->prev)                       \
            (x)->prev->next = (x)->next;     \
        else                                 \
            (head) = (x)->next;              \
        if ((x)->next)                       \
            (x)->next->prev = (x)->prev;     \
    } while (0)

/* Records a control step on the building model ref.s is bound to. */
static aclError add_step(struct aclsim__sref ref, const struct ctl *c, const char *api,
                         struct aclsim__ri **out, uint32_t *lane_out, uint32_t *pos_out)
{
    struct aclsim__ri *ri = ref.s->capture;
    int lane = ri && ri->built ? lane_of(ri, ref.s) : -1;
    if (lane < 0)
        return aclsim__fail(ACL_ERROR_RT_STREAM_MODEL, api,
                            "stream %p is not bound to a model (aclmdlRIBindStream)", ref.handle);
    if (ri->state != RI_BUILDING)
        return aclsim__fail(ACL_ERROR_RT_STREAM_MODEL, api,
                            "the build of model runtime instance %u has ended", ri->id);
    struct ctl *copy = aclsim__malloc(sizeof *copy);
    if (!copy)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    *copy = *c;
    struct aclsim__task t = {.kind = ACLSIM_TASK_HOST_FUNC, .label = "control"};
    struct aclsim__event *none = NULL;
    uint64_t none_seq = 0;
    uint32_t pos = ri->lanes[lane].ntasks;
    aclError err = record_task(ri, lane, &t, api, &none, &none_seq);
    if (err) {
        free(copy);
        return err;
    }
    ri->tasks[ri->ntasks - 1]->ctl = copy;
    ri->control = true;
    if (out)
        *out = ri;
    if (lane_out)
        *lane_out = (uint32_t)lane;
    if (pos_out)
        *pos_out = pos;
    return ACL_SUCCESS;
}

aclError aclrtCreateLabel(aclrtLabel *label)
{
    static const char api[] = "aclrtCreateLabel";
    aclError err = first_checks(label, "label", ACLSIM_ALL_BUT_IPV, api);
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct label *l = NULL;
    if (nlabels >= LABELS_MAX)
        err = aclsim__fail(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, api,
                           "the process has %u labels, CANN's maximum", LABELS_MAX);
    else if (!(l = aclsim__calloc(1, sizeof *l)) || !(l->handle = aclsim__handle_new(ACLSIM_H_LABEL, l)))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    if (!err) {
        nlabels++;
        LINK(all_labels, l);
        *label = l->handle;
    } else {
        free(l);
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclrtDestroyLabel(aclrtLabel label)
{
    static const char api[] = "aclrtDestroyLabel";
    aclError err = first_checks(label, "label", ACLSIM_ALL_BUT_IPV, api);
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct label *l = aclsim__handle_get(label, ACLSIM_H_LABEL);
    if (!l) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "label %p is not a live label", label);
    } else {
        aclsim__handle_free(label);
        UNLINK(all_labels, l);
        free(l);
        nlabels--;
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream)
{
    static const char api[] = "aclrtSetLabel";
    aclError err = first_checks(label, "label", ACLSIM_ALL_BUT_IPV, api);
    if (!err && !stream)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&ri_lock);
    struct label *l = aclsim__handle_get(label, ACLSIM_H_LABEL);
    struct aclsim__ri *ri = NULL;
    uint32_t lane = 0, pos = 0;
    if (!l)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "label %p is not a live label", label);
    else if (l->set)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "label %p is set already", label);
    else if (!(err = add_step(ref, &(struct ctl){.op = CTL_LABEL}, api, &ri, &lane, &pos)))
        *l = (struct label){l->next, l->prev, l->handle, ri->id, lane, pos, true};
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclrtCreateLabelList(aclrtLabel *labels, size_t num, aclrtLabelList *labelList)
{
    static const char api[] = "aclrtCreateLabelList";
    aclError err = first_checks(labels, "labels", ACLSIM_ALL_BUT_IPV, api);
    if (!err && !labelList)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "labelList is NULL");
    if (!err && (num == 0 || num > LABELS_MAX))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "num %zu is out of range: 1 to %u",
                           num, LABELS_MAX);
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    for (size_t i = 0; i < num && !err; i++)
        if (!aclsim__handle_get(labels[i], ACLSIM_H_LABEL))
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                               "labels[%zu] (%p) is not a live label", i, labels[i]);
    struct label_list *ll = NULL;
    if (!err && (!(ll = aclsim__calloc(1, sizeof *ll)) ||
                 !(ll->labels = aclsim__malloc(num * sizeof *ll->labels)) ||
                 !(ll->handle = aclsim__handle_new(ACLSIM_H_LABEL_LIST, ll))))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    if (!err) {
        memcpy(ll->labels, labels, num * sizeof *ll->labels);
        ll->n = (uint32_t)num;
        LINK(all_lists, ll);
        *labelList = ll->handle;
    } else if (ll) {
        free(ll->labels);
        free(ll);
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclrtDestroyLabelList(aclrtLabelList labelList)
{
    static const char api[] = "aclrtDestroyLabelList";
    aclError err = first_checks(labelList, "labelList", ACLSIM_ALL_BUT_IPV, api);
    if (err)
        return err;
    pthread_mutex_lock(&ri_lock);
    struct label_list *ll = aclsim__handle_get(labelList, ACLSIM_H_LABEL_LIST);
    if (!ll) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "labelList %p is not a live label list",
                           labelList);
    } else {
        aclsim__handle_free(labelList);
        UNLINK(all_lists, ll);
        free(ll->labels);
        free(ll);
    }
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclrtSwitchLabelByIndex(void *ptr, uint32_t maxValue, aclrtLabelList labelList,
                                 aclrtStream stream)
{
    static const char api[] = "aclrtSwitchLabelByIndex";
    aclError err = first_checks(ptr, "ptr", ACLSIM_ALL_BUT_IPV, api);
    if (!err && (!labelList || !stream))
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                           !labelList ? "labelList" : "stream");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    struct aclsim__where w = aclsim__classify(ptr);
    if (w.kind != ACLSIM_DEVICE || ((uintptr_t)ptr & 3) ||
        aclsim__check_range(api, "ptr", ptr, sizeof(uint32_t), w))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "ptr %p is not 4 bytes of device memory (the uint32 label index)", ptr);
    pthread_mutex_lock(&ri_lock);
    struct label_list *ll = aclsim__handle_get(labelList, ACLSIM_H_LABEL_LIST);
    if (!ll)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "labelList %p is not a live label list",
                           labelList);
    else if (maxValue != ll->n)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "maxValue %u is not the number of labels in the list (%u)", maxValue,
                           ll->n);
    else
        err = add_step(ref, &(struct ctl){.op = CTL_SWITCH_LABEL, .ptr = ptr, .list = labelList},
                       api, NULL, NULL, NULL);
    pthread_mutex_unlock(&ri_lock);
    return err;
}

aclError aclsim__modelri_stream_control(int op, aclrtStream target, void *left, int cond,
                                        void *right, int dtype, aclrtStream stream,
                                        const char *api)
{
    struct aclsim__sref ref, tref;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &ref);
    if (err || (err = aclsim__stream_resolve(target, api, NULL, &tref)))
        return err;
    pthread_mutex_lock(&ri_lock);
    struct aclsim__ri *ri = ref.s->capture;
    int t = ri && ri->built && tref.s->capture == ri ? lane_of(ri, tref.s) : -1;
    if (ri && ri->built && t < 0)
        err = aclsim__fail(ACL_ERROR_RT_STREAM_MODEL, api,
                           "%s %p is not bound to the model stream %p is bound to",
                           op ? "trueStream" : "activeStream", target, stream);
    else
        err = add_step(ref, &(struct ctl){.op = op ? CTL_SWITCH_STREAM : CTL_ACTIVE,
                                          .target = (uint32_t)t, .left = left, .right = right,
                                          .cond = cond, .dtype = dtype},
                       api, NULL, NULL, NULL);
    pthread_mutex_unlock(&ri_lock);
    return err;
}

/* One replay of a model with control steps: every stream's steps, run by
 * one task on its worker (stream activation runs the activated stream
 * there and then goes on; a label switch goes on at the label, and the
 * switching stream's later steps do not run). */
struct step { struct aclsim__task t; struct ctl c; bool is_ctl; uint32_t ntargets;
              struct { uint32_t lane, pos; } *targets; };
struct program { uint32_t nlanes; struct plane { struct step *steps; uint32_t n; bool head; } lanes[]; };

static void program_free(void *arg)
{
    struct program *p = arg;
    for (uint32_t l = 0; l < p->nlanes; l++) {
        for (uint32_t i = 0; i < p->lanes[l].n; i++) {
            struct step *st = &p->lanes[l].steps[i];
            if (st->is_ctl)
                free(st->targets);
            else if (st->t.kind == ACLSIM_TASK_HOST_FUNC && st->t.u.host.fn == cond_run)
                cond_free(st->t.u.host.arg);
            else
                task_drop(&st->t);
        }
        free(p->lanes[l].steps);
    }
    free(p);
}

static bool compare(const struct ctl *c)
{
    int64_t l = c->dtype == ACL_RT_SWITCH_INT64 ? __atomic_load_n((int64_t *)c->left, __ATOMIC_ACQUIRE)
                                               : __atomic_load_n((int32_t *)c->left, __ATOMIC_ACQUIRE);
    int64_t r = c->dtype == ACL_RT_SWITCH_INT64 ? __atomic_load_n((int64_t *)c->right, __ATOMIC_ACQUIRE)
                                               : __atomic_load_n((int32_t *)c->right, __ATOMIC_ACQUIRE);
    switch (c->cond) {
    case ACL_RT_EQUAL: return l == r;
    case ACL_RT_NOT_EQUAL: return l != r;
    case ACL_RT_GREATER: return l > r;
    case ACL_RT_GREATER_OR_EQUAL: return l >= r;
    case ACL_RT_LESS: return l < r;
    default: return l <= r;
    }
}

static void run_lane(struct program *p, uint32_t lane, uint32_t pos, int depth)
{
    struct aclsim__stream *s = aclsim__tls_stream;
    while (pos < p->lanes[lane].n) {
        if (s && atomic_load_explicit(&s->discard, memory_order_acquire))
            return;   /* aborted, reset or finalized */
        struct step *st = &p->lanes[lane].steps[pos++];
        if (!st->is_ctl) {
            aclsim__execute_inline(s, &st->t);
        } else if (st->c.op == CTL_SWITCH_LABEL) {
            uint32_t idx = __atomic_load_n((uint32_t *)st->c.ptr, __ATOMIC_ACQUIRE);
            if (idx >= st->ntargets)
                idx = st->ntargets - 1;   /* past the last: the last (CANN) */
            lane = st->targets[idx].lane;
            pos = st->targets[idx].pos;
        } else if ((st->c.op == CTL_ACTIVE || (st->c.op == CTL_SWITCH_STREAM && compare(&st->c))) &&
                   depth < 64) {
            run_lane(p, st->c.target, 0, depth + 1);
        }
    }
}

static void program_run_once(void *arg)
{
    struct program *p = arg;
    for (uint32_t l = 0; l < p->nlanes; l++)
        if (p->lanes[l].head)
            run_lane(p, l, 0, 0);
    program_free(p);
}

static struct aclsim__task *program_copy(const struct aclsim__ri *ri, uint32_t *n,
                                         const char *api, aclError *err)
{
    struct program *p = aclsim__calloc(1, sizeof *p + ri->nlanes * sizeof p->lanes[0]);
    struct aclsim__task *task = aclsim__malloc(sizeof *task);
    *n = 0;
    if (!p || !task) {
        free(p);
        free(task);
        *err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory replaying");
        return NULL;
    }
    p->nlanes = ri->nlanes;
    for (uint32_t l = 0; l < ri->nlanes && !*err; l++) {
        p->lanes[l].head = ri->lanes[l].bind_flag == ACL_MODEL_STREAM_FLAG_HEAD;
        if (!(p->lanes[l].steps = aclsim__calloc(ri->lanes[l].ntasks + 1, sizeof(struct step))))
            *err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory replaying");
    }
    for (uint32_t i = 0; i < ri->ntasks && !*err; i++) {
        const struct ri_task *rt = ri->tasks[i];
        struct plane *pl = &p->lanes[rt->lane];
        struct step *st = &pl->steps[pl->n];
        const struct aclsim__task *t = &rt->t;
        if (rt->ctl) {
            st->is_ctl = true;
            st->c = *rt->ctl;
            struct label_list *ll = st->c.op == CTL_SWITCH_LABEL
                                        ? aclsim__handle_get(st->c.list, ACLSIM_H_LABEL_LIST) : NULL;
            if (st->c.op == CTL_SWITCH_LABEL &&
                (!ll || !(st->targets = aclsim__malloc(ll->n * sizeof *st->targets)))) {
                *err = aclsim__fail(ll ? ACL_ERROR_BAD_ALLOC : ACL_ERROR_RT_MODEL_EXECUTE, api,
                                    "the label list of a label switch of model runtime instance "
                                    "%u was destroyed", ri->id);
                break;
            }
            for (uint32_t k = 0; ll && k < ll->n; k++) {
                struct label *lb = aclsim__handle_get(ll->labels[k], ACLSIM_H_LABEL);
                if (!lb || !lb->set || lb->ri_id != ri->id) {
                    *err = aclsim__fail(ACL_ERROR_RT_MODEL_EXECUTE, api,
                                        "label %u of a label switch of model runtime instance %u "
                                        "is destroyed or not set in that model", k, ri->id);
                    break;
                }
                st->targets[st->ntargets].lane = lb->lane;
                st->targets[st->ntargets++].pos = lb->pos;
            }
        } else if (t->kind == ACLSIM_TASK_RECORD || t->kind == ACLSIM_TASK_WAIT ||
                   t->kind == ACLSIM_TASK_CALLBACK ||
                   (t->kind == ACLSIM_TASK_SIGNAL && !is_value_op(t))) {
            *err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                "a model with labels or stream activation runs inside one task on "
                                "its worker: event, notify and value waits and records cannot be "
                                "part of it (task %u of stream %u)", rt->seq, rt->lane);
        } else if (rt->disabled) {
            st->is_ctl = true;
            st->c.op = CTL_LABEL;   /* keeps the positions of labels */
        } else if (rt->cond) {
            st->t = rt->t;
            if (!(st->t.u.host.arg = cond_copy(rt, api, err)))
                break;
        } else if (!task_dup(t, rt->args_size, &st->t)) {
            *err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory replaying");
        }
        if (!*err)
            pl->n++;
        else if (st->is_ctl)
            free(st->targets);   /* (a step not counted is not freed by program_free) */
    }
    if (*err) {
        program_free(p);
        free(task);
        return NULL;
    }
    *task = (struct aclsim__task){.kind = ACLSIM_TASK_CALLBACK, .label = "model",
                                  .u.cb = {program_run_once, program_free, p}};
    *n = 1;
    return task;
}

/* aclFinalize (ri_lock held): the labels and lists the program left. */
static void labels_finalize(void)
{
    while (all_labels) {
        struct label *l = all_labels;
        all_labels = l->next;
        aclsim__handle_free(l->handle);
        free(l);
    }
    while (all_lists) {
        struct label_list *ll = all_lists;
        all_lists = ll->next;
        aclsim__handle_free(ll->handle);
        free(ll->labels);
        free(ll);
    }
    nlabels = 0;
}

/* ---- after fork(), in the child (THE FORK RULE) ------------------------------------------------ */

/* Frees a task's own memory only: the events and notifies it references are
 * forgotten by their modules. */
static void forget_task(struct aclsim__task *t)
{
    if (t->kind == ACLSIM_TASK_KERNEL)
        free(t->u.kernel.argbuf);
}

static void forget_cond(struct cond_run *c);

static void forget_copies(struct aclsim__task *copies, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (copies[i].kind == ACLSIM_TASK_HOST_FUNC && copies[i].u.host.fn == cond_run)
            forget_cond(copies[i].u.host.arg);
        else
            forget_task(&copies[i]);
    }
}

static void forget_cond(struct cond_run *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++) {
        forget_copies(c->br[i].tasks, c->br[i].n);
        free(c->br[i].tasks);
    }
    free(c);
}

/* Before the events and notifies forget theirs: every instance, plan, label
 * and update of the parent's session goes, without touching the objects
 * its tasks reference. */
void aclsim__modelri_forget_after_fork(void)
{
    pthread_mutex_init(&ri_lock, NULL);
    for (struct aclsim__ri *ri = all_ri; ri; ri = ri->next) {
        for (uint32_t i = 0; i < ri->nlanes; i++)   /* stream structs are never freed */
            if (!ri->lanes[i].gone && ri->lanes[i].s->capture == ri)
                ri->lanes[i].s->capture = NULL;
        for (uint32_t i = 0; i < ri->ntasks; i++) {
            struct ri_task *rt = ri->tasks[i];
            if (!rt->ctl && !rt->cond)
                forget_task(&rt->t);
            rt->t.kind = ACLSIM_TASK_CMO;   /* nothing left to drop */
        }
        if (ri->plan && atomic_fetch_sub(&ri->plan->refs, 1) == 1) {
            forget_copies(ri->plan->tasks, ri->plan->n);
            free(ri->plan);
        }
        ri->plan = NULL;
    }
    while (all_ri) {
        struct aclsim__ri *ri = all_ri;
        all_ri = ri->next;
        aclsim__handle_free(ri->handle);
        ri_free(ri);
    }
    while (updates) {
        struct updating *u = updates;
        updates = u->next;
        forget_copies(u->tasks, u->n);
        free(u->tasks);
        free(u);
    }
    labels_finalize();
    atomic_store(&aclsim__captures, 0);
}
