/*
 * Model runtime instances (CANN's aclmdlRI, "ACL graphs"): capture the work
 * issued to streams into an instance, or build one on persistent streams,
 * then replay it any number of times.
 *
 * This file holds the instances themselves: the state shared by the
 * modelri-*.c files (one lock, the list of instances, the streams recording
 * a task update), the small helpers they share, creation and destruction,
 * names, ids and destroy callbacks, readable dumps, aclFinalize and the fork
 * handler. The private structures and the map of the other files are in
 * modelri.h.
 */
#include "modelri.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_uint aclsim__captures;
pthread_mutex_t aclsim__ri_lock = PTHREAD_MUTEX_INITIALIZER;
struct aclsim__ri *aclsim__ri_all;
struct updating *aclsim__ri_updates;
static uint32_t next_id;
_Thread_local int aclsim__ri_tls_capturing = MODE_NONE;   /* mode of the capture this thread began */
_Thread_local bool aclsim__ri_tls_replaying;              /* submitting a replay's copies */

/* ---- small helpers ---------------------------------------------------------- */

bool aclsim__ri_grow(void **arr, uint32_t *cap, uint32_t n, size_t size)
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

/* The instance of handle h (ri_lock held), or NULL with 107000 / 100000. */
struct aclsim__ri *aclsim__ri_get(aclmdlRI h, const char *api, aclError *err)
{
    struct aclsim__ri *ri = aclsim__handle_get(h, ACLSIM_H_MODEL_RI);
    if (!ri)
        *err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "modelRI %p is not a live model runtime instance (destroyed, or "
                            "never created)", h);
    return ri;
}

int aclsim__ri_lane_of(const struct aclsim__ri *ri, const struct aclsim__stream *s)
{
    for (uint32_t i = 0; i < ri->nlanes; i++)
        if (ri->lanes[i].s == s && !ri->lanes[i].gone)
            return (int)i;
    return -1;
}

/* Frees what a recorded (or copied) task owns. */
void aclsim__ri_task_drop(struct aclsim__task *t)
{
    aclsim__discard_tasks(t);   /* (t->next is NULL) */
}

/* Makes *copy own its own share of what t owns (kernel argument block,
 * references). false if out of memory. */
bool aclsim__ri_task_dup(const struct aclsim__task *t, size_t args_size, struct aclsim__task *copy)
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
size_t aclsim__ri_args_size(const struct aclsim__task *t)
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

bool aclsim__ri_is_value_op(const struct aclsim__task *t)
{
    /* memop.c's tasks (aclrtValueWrite / aclrtValueWait) */
    return (t->kind == ACLSIM_TASK_WAIT || t->kind == ACLSIM_TASK_SIGNAL) &&
           strcmp(t->u.sync.ops->what, "a memory value") == 0;
}

/* ---- instances ------------------------------------------------------------------ */

struct aclsim__ri *aclsim__ri_new(struct aclsim__context *ctx, enum ri_state state)
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
    ri->next = aclsim__ri_all;
    if (aclsim__ri_all)
        aclsim__ri_all->prev = ri;
    aclsim__ri_all = ri;
    return ri;
}

/* l's stream leaves ri (it may be captured into another instance by now). */
void aclsim__ri_lane_leave(struct aclsim__ri *ri, struct lane *l)
{
    if (!l->gone && l->s->capture == ri) {
        l->s->capture = NULL;
        atomic_fetch_sub(&aclsim__captures, 1);
    }
}

bool aclsim__ri_add_lane(struct aclsim__ri *ri, struct aclsim__stream *s, uint32_t epoch,
                         const void *handle)
{
    if (!aclsim__ri_grow((void **)&ri->lanes, &ri->cap_lanes, ri->nlanes, sizeof *ri->lanes))
        return false;
    ri->lanes[ri->nlanes++] = (struct lane){.s = s, .epoch = epoch, .handle = (void *)handle};
    s->capture = ri;
    atomic_fetch_add(&aclsim__captures, 1);
    return true;
}

static void ri_free(struct aclsim__ri *ri);

/* Destroys ri and its branches (ri_lock held); the destroy callbacks are
 * copied to *cbs for the caller to call without the lock. */
void aclsim__ri_destroy(struct aclsim__ri *ri, struct destroy_cb **cbs, uint32_t *ncbs)
{
    for (uint32_t i = 0; i < ri->nlanes; i++)
        aclsim__ri_lane_leave(ri, &ri->lanes[i]);
    if (ri->state == RI_CAPTURING && aclsim__ri_tls_capturing != MODE_NONE &&
        pthread_equal(ri->thread, pthread_self()))
        aclsim__ri_tls_capturing = MODE_NONE;
    for (struct aclsim__ri *r = aclsim__ri_all; r;) {   /* its branches (conditional tasks) */
        if (r->parent == ri) {
            aclsim__ri_destroy(r, NULL, NULL);
            r = aclsim__ri_all;
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
        aclsim__ri_all = ri->next;
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
            aclsim__ri_task_drop(&rt->t);
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
    aclsim__ri_plan_unref(ri->plan);
    free(ri->open_group);
    free(ri->groups);
    free(ri->conds);
    free(ri->tasks);
    free(ri->lanes);
    free(ri->cbs);
    free(ri);
}

void aclsim__modelri_finalize(void)
{
    pthread_mutex_lock(&aclsim__ri_lock);
    while (aclsim__ri_all) {
        struct aclsim__ri *ri = aclsim__ri_all;
        while (ri->parent)
            ri = ri->parent;
        aclsim__ri_destroy(ri, NULL, NULL);
    }
    aclsim__ri_labels_finalize();
    pthread_mutex_unlock(&aclsim__ri_lock);
}

/* ---- API: shared steps, destruction ------------------------------------------------ */

/* init, the NULL argument (100000), CANN's product table (207000). */
aclError aclsim__ri_first_checks(const void *arg, const char *name, unsigned socs, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (name && !arg)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
    return aclsim__soc_check(api, socs);
}

aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
    static const char api[] = "aclmdlRIDestroy";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (err)
        return err;
    struct destroy_cb *cbs = NULL;
    uint32_t ncbs = 0;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri && ri->sub)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "model runtime instance %u is a branch of a conditional task: it is "
                           "destroyed with its parent", ri->id);
    else if (ri && ri->state == RI_CAPTURING)
        err = aclsim__fail(ACL_ERROR_RT_STREAM_CAPTURED, api,
                           "model runtime instance %u is being captured: end the capture first "
                           "(aclmdlRICaptureEnd)", ri->id);
    else if (ri)
        aclsim__ri_destroy(ri, &cbs, &ncbs);
    pthread_mutex_unlock(&aclsim__ri_lock);
    for (uint32_t i = 0; i < ncbs; i++)   /* on this thread, without locks */
        cbs[i].fn(cbs[i].data);
    free(cbs);
    return err;
}

/* ---- names, ids, callbacks ------------------------------------------------------------ */

aclError aclmdlRISetName(aclmdlRI modelRI, const char *name)
{
    static const char api[] = "aclmdlRISetName";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (!err && !name)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "name is NULL");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri)
        snprintf(ri->name, sizeof ri->name, "%s", name);   /* CANN keeps 512 bytes */
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char *name)
{
    static const char api[] = "aclmdlRIGetName";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", ACLSIM_ALL_BUT_IPV, api);
    if (!err && !name)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "name is NULL");
    if (!err && maxLen == 0)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "maxLen is 0");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri)
        snprintf(name, maxLen, "%s", ri->name);
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)
{
    static const char api[] = "aclmdlRIGetId";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", CAPTURE_FAMILIES, api);
    if (!err && !modelRIId)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "modelRIId is NULL");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri)
        *modelRIId = ri->id;
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIDestroyRegisterCallback(aclmdlRI modelRI, aclrtCallback func, void *userData)
{
    static const char api[] = "aclmdlRIDestroyRegisterCallback";
    aclError err = aclsim__ri_first_checks(NULL, NULL, ACLSIM_ALL_BUT_IPV, api);
    if (!err && (!modelRI || !func))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL", !modelRI ? "modelRI" : "func");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri && !aclsim__ri_grow((void **)&ri->cbs, &ri->cap_cbs, ri->ncbs, sizeof *ri->cbs))
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    else if (ri)
        ri->cbs[ri->ncbs++] = (struct destroy_cb){func, userData};
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIDestroyUnregisterCallback(aclmdlRI modelRI, aclrtCallback func)
{
    static const char api[] = "aclmdlRIDestroyUnregisterCallback";
    aclError err = aclsim__ri_first_checks(NULL, NULL, ACLSIM_ALL_BUT_IPV, api);
    if (!err && (!modelRI || !func))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL", !modelRI ? "modelRI" : "func");
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
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
    pthread_mutex_unlock(&aclsim__ri_lock);
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
    if (aclsim__ri_is_value_op(&rt->t))
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
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", CAPTURE_FAMILIES, api);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
    if (ri)
        dump(stdout, ri, false, false);
    fflush(stdout);
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags)
{
    static const char api[] = "aclmdlRIDebugJsonPrint";
    aclError err = aclsim__ri_first_checks(modelRI, "modelRI", CAPTURE_FAMILIES, api);
    if (!err && !path)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "path is NULL");
    if (!err && flags > ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "flags %u is invalid: ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY (0) or "
                           "VERBOSE (1)", flags);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = aclsim__ri_get(modelRI, api, &err);
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
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
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
        if (copies[i].kind == ACLSIM_TASK_HOST_FUNC && copies[i].u.host.fn == aclsim__ri_cond_run)
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
    pthread_mutex_init(&aclsim__ri_lock, NULL);
    for (struct aclsim__ri *ri = aclsim__ri_all; ri; ri = ri->next) {
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
    while (aclsim__ri_all) {
        struct aclsim__ri *ri = aclsim__ri_all;
        aclsim__ri_all = ri->next;
        aclsim__handle_free(ri->handle);
        ri_free(ri);
    }
    while (aclsim__ri_updates) {
        struct updating *u = aclsim__ri_updates;
        aclsim__ri_updates = u->next;
        forget_copies(u->tasks, u->n);
        free(u->tasks);
        free(u);
    }
    aclsim__ri_labels_finalize();
    atomic_store(&aclsim__captures, 0);
}
