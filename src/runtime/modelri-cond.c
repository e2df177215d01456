/*
 * Conditional tasks of captured model runtime instances (modelri.h has the
 * structures and the map of the other files): condition handles, the task
 * that holds the branches (instances of their own, captured with
 * aclmdlRICaptureToModelRIBegin in modelri-capture.c), its copy for one
 * replay (modelri-run.c) and its run on the worker that reaches it.
 */
#include "modelri.h"

#include <stdlib.h>

/* ---- conditional tasks ------------------------------------------------------------------- */

aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t defaultLaunchValue,
                                  aclmdlRICondHandleFlag flag, aclmdlRICondHandle *handle)
{
    static const char api[] = "aclmdlRICondHandleCreate";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", INSPECT_FAMILIES, api);
    if (!err && !handle)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    if (!err && (unsigned)flag > ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "flag %d is invalid: 0 or ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT (1)",
                           (int)flag);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    struct cond *c = NULL;
    void *mem = NULL;
    if (ri && ri->built)
        err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                           "model runtime instance %u is built, not captured (an ACL graph)", ri->id);
    else if (ri && (!aclsim__ri_grow((void **)&ri->conds, &ri->cap_conds, ri->nconds, sizeof *ri->conds) ||
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
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle, uint64_t **ptr)
{
    static const char api[] = "aclmdlRICondHandleGetCondPtr";
    aclError err = aclsim__ri_first_checks(handle, "handle", INSPECT_FAMILIES, api);
    if (!err && !ptr)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct cond *c = aclsim__handle_get(handle, ACLSIM_H_RI_COND);
    if (c)
        *ptr = c->ptr;
    else
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "handle %p is not a condition handle of a live model runtime instance",
                           handle);
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream, uint32_t flags)
{
    static const char api[] = "aclmdlRIAddCondTask";
    aclError err = aclsim__ri_first_checks(stream, "stream", INSPECT_FAMILIES, api);
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
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_capturing(ref, api, &err);
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
        struct aclsim__ri *b = aclsim__ri_new(ri->ctx, RI_EMPTY);
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
                                 .u.host = {aclsim__ri_cond_run, NULL}};
        struct aclsim__event *none = NULL;
        uint64_t none_seq = 0;
        if (!(err = aclsim__ri_record_task(ri, aclsim__ri_lane_of(ri, ref.s), &t, api, &none, &none_seq))) {
            ri->tasks[ri->ntasks - 1]->cond = ct;
            for (uint32_t i = 0; i < ct->n; i++)
                params.modelRIArray[i] = ct->branches[i]->handle;
            ct = NULL;
        }
    }
    if (ct) {   /* failed: the branches made go */
        for (uint32_t i = 0; i < ct->n; i++)
            aclsim__ri_destroy(ct->branches[i], NULL, NULL);
        free(ct->branches);
        free(ct);
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

void aclsim__ri_cond_free(struct cond_run *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++)
        aclsim__ri_drop_copies(c->br[i].tasks, 0, c->br[i].n);
    free(c);
}

struct cond_run *aclsim__ri_cond_copy(const struct ri_task *rt, const char *api, aclError *err)
{
    const struct cond_task *ct = rt->cond;
    struct cond_run *c = aclsim__calloc(1, sizeof *c + ct->n * sizeof c->br[0]);
    if (!c) {
        *err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory replaying");
        return NULL;
    }
    *c = (struct cond_run){ct->c->ptr, ct->c->def, ct->c->assign_default, ct->type, 0};
    for (uint32_t i = 0; i < ct->n; i++) {
        c->br[i].tasks = aclsim__ri_replay_copies(ct->branches[i], &c->br[i].n, api, err);
        c->n++;
        if (*err) {
            aclsim__ri_cond_free(c);
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
void aclsim__ri_cond_run(void *arg)
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
