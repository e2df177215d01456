/*
 * Labels and stream activation (modelri.h has the structures and the map of
 * the other files): the control steps of models built on persistent streams
 * (modelri-build.c), i.e. labels and label lists, aclrtSwitchLabelByIndex,
 * aclrtActiveStream / aclrtSwitchStream (stream-control.c calls in), and the
 * program that runs such a model as one task on its worker at each replay
 * (modelri-run.c asks for it).
 */
#include "modelri.h"

#include <stdlib.h>
#include <string.h>

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
    int lane = ri && ri->built ? aclsim__ri_lane_of(ri, ref.s) : -1;
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
    aclError err = aclsim__ri_record_task(ri, lane, &t, api, &none, &none_seq);
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
    aclError err = aclsim__ri_first_checks(label, "label", ACLSIM_ALL_BUT_IPV, api);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
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
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclrtDestroyLabel(aclrtLabel label)
{
    static const char api[] = "aclrtDestroyLabel";
    aclError err = aclsim__ri_first_checks(label, "label", ACLSIM_ALL_BUT_IPV, api);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct label *l = aclsim__handle_get(label, ACLSIM_H_LABEL);
    if (!l) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "label %p is not a live label", label);
    } else {
        aclsim__handle_free(label);
        UNLINK(all_labels, l);
        free(l);
        nlabels--;
    }
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream)
{
    static const char api[] = "aclrtSetLabel";
    aclError err = aclsim__ri_first_checks(label, "label", ACLSIM_ALL_BUT_IPV, api);
    if (!err && !stream)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    struct aclsim__sref ref;
    if (err || (err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
    struct label *l = aclsim__handle_get(label, ACLSIM_H_LABEL);
    struct aclsim__ri *ri = NULL;
    uint32_t lane = 0, pos = 0;
    if (!l)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "label %p is not a live label", label);
    else if (l->set)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "label %p is set already", label);
    else if (!(err = add_step(ref, &(struct ctl){.op = CTL_LABEL}, api, &ri, &lane, &pos)))
        *l = (struct label){l->next, l->prev, l->handle, ri->id, lane, pos, true};
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclrtCreateLabelList(aclrtLabel *labels, size_t num, aclrtLabelList *labelList)
{
    static const char api[] = "aclrtCreateLabelList";
    aclError err = aclsim__ri_first_checks(labels, "labels", ACLSIM_ALL_BUT_IPV, api);
    if (!err && !labelList)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "labelList is NULL");
    if (!err && (num == 0 || num > LABELS_MAX))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "num %zu is out of range: 1 to %u",
                           num, LABELS_MAX);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
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
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclrtDestroyLabelList(aclrtLabelList labelList)
{
    static const char api[] = "aclrtDestroyLabelList";
    aclError err = aclsim__ri_first_checks(labelList, "labelList", ACLSIM_ALL_BUT_IPV, api);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__ri_lock);
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
    pthread_mutex_unlock(&aclsim__ri_lock);
    return err;
}

aclError aclrtSwitchLabelByIndex(void *ptr, uint32_t maxValue, aclrtLabelList labelList,
                                 aclrtStream stream)
{
    static const char api[] = "aclrtSwitchLabelByIndex";
    aclError err = aclsim__ri_first_checks(ptr, "ptr", ACLSIM_ALL_BUT_IPV, api);
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
    pthread_mutex_lock(&aclsim__ri_lock);
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
    pthread_mutex_unlock(&aclsim__ri_lock);
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
    pthread_mutex_lock(&aclsim__ri_lock);
    struct aclsim__ri *ri = ref.s->capture;
    int t = ri && ri->built && tref.s->capture == ri ? aclsim__ri_lane_of(ri, tref.s) : -1;
    if (ri && ri->built && t < 0)
        err = aclsim__fail(ACL_ERROR_RT_STREAM_MODEL, api,
                           "%s %p is not bound to the model stream %p is bound to",
                           op ? "trueStream" : "activeStream", target, stream);
    else
        err = add_step(ref, &(struct ctl){.op = op ? CTL_SWITCH_STREAM : CTL_ACTIVE,
                                          .target = (uint32_t)t, .left = left, .right = right,
                                          .cond = cond, .dtype = dtype},
                       api, NULL, NULL, NULL);
    pthread_mutex_unlock(&aclsim__ri_lock);
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
            else if (st->t.kind == ACLSIM_TASK_HOST_FUNC && st->t.u.host.fn == aclsim__ri_cond_run)
                aclsim__ri_cond_free(st->t.u.host.arg);
            else
                aclsim__ri_task_drop(&st->t);
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

struct aclsim__task *aclsim__ri_program_copy(const struct aclsim__ri *ri, uint32_t *n,
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
                   (t->kind == ACLSIM_TASK_SIGNAL && !aclsim__ri_is_value_op(t))) {
            *err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                "a model with labels or stream activation runs inside one task on "
                                "its worker: event, notify and value waits and records cannot be "
                                "part of it (task %u of stream %u)", rt->seq, rt->lane);
        } else if (rt->disabled) {
            st->is_ctl = true;
            st->c.op = CTL_LABEL;   /* keeps the positions of labels */
        } else if (rt->cond) {
            st->t = rt->t;
            if (!(st->t.u.host.arg = aclsim__ri_cond_copy(rt, api, err)))
                break;
        } else if (!aclsim__ri_task_dup(t, rt->args_size, &st->t)) {
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
void aclsim__ri_labels_finalize(void)
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

