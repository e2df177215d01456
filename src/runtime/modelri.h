/*
 * Model runtime instances (CANN's aclmdlRI, "ACL graphs"): the private
 * structures and helpers shared by the files of the concept. An instance is
 * captured from the work issued to streams, or built on persistent streams,
 * then replayed any number of times.
 *
 *   modelri.c          the instances themselves: the shared state and lock,
 *                      small helpers, creation and destruction, names, ids,
 *                      destroy callbacks, readable dumps, aclFinalize, fork
 *   modelri-capture.c  capture: the hook in aclsim__submit, the refusals of
 *                      other calls during a capture, capture begin/end, modes
 *   modelri-run.c      replay: the plan, copies of the recorded tasks,
 *                      aclmdlRIExecuteAsync / aclmdlRIExecute
 *   modelri-task.c     the tasks of an instance: inspection, editing, task
 *                      groups and their update
 *   modelri-cond.c     conditional tasks (IF, WHILE, SWITCH over branches)
 *   modelri-build.c    models built on persistent streams (bind, end, abort)
 *   modelri-label.c    labels and stream activation: the control steps of
 *                      built models and the program that runs them
 *
 * Locking: one mutex (aclsim__ri_lock, "ri_lock" in comments) guards every
 * instance, every stream's `capture` field and the thread-independent capture
 * state. It is taken before a stream's lock is ever needed (the hook runs before aclsim__submit
 * locks the stream) and nothing is submitted while it is held. Event and
 * notify locks may be taken under it (record retirement), never the reverse.
 */
#ifndef ACLSIM_MODELRI_H
#define ACLSIM_MODELRI_H

#include "internal.h"

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

/* ---- the replay plan --------------------------------------------------------------------
 * When every task of an instance can run on a worker without parking (no
 * event, notify or value waits, no event records), a replay is one task: it
 * runs the plan's tasks one after the other, in place. The plan is an
 * immutable copy of the instance's tasks, made at the first replay after a
 * change and shared (counted) by the replays and the instance, so a replay
 * costs one submission whatever the number of tasks. */
struct plan { atomic_uint refs; uint32_t n; struct aclsim__task tasks[]; };

/* What one replay's conditional task owns: its branches' task copies. */
struct cond_run {
    uint64_t *ptr;
    uint64_t def;
    bool assign;
    int type;
    uint32_t n;
    struct branch { struct aclsim__task *tasks; uint32_t n; } br[];
};

extern pthread_mutex_t aclsim__ri_lock;
extern struct aclsim__ri *aclsim__ri_all;        /* every instance */
extern struct updating *aclsim__ri_updates;      /* streams recording a task update */
extern _Thread_local int aclsim__ri_tls_capturing;   /* mode of the capture this thread began */
extern _Thread_local bool aclsim__ri_tls_replaying;  /* submitting a replay's copies */

/* modelri.c */
bool aclsim__ri_grow(void **arr, uint32_t *cap, uint32_t n, size_t size);
/* The instance of handle h (ri_lock held), or NULL with 107000 / 100000. */
struct aclsim__ri *aclsim__ri_get(aclmdlRI h, const char *api, aclError *err);
int aclsim__ri_lane_of(const struct aclsim__ri *ri, const struct aclsim__stream *s);
/* Frees what a recorded (or copied) task owns. */
void aclsim__ri_task_drop(struct aclsim__task *t);
/* Makes *copy own its own share of what t owns (kernel argument block,
 * references). false if out of memory. */
bool aclsim__ri_task_dup(const struct aclsim__task *t, size_t args_size, struct aclsim__task *copy);
/* Bytes of a kernel task's argument block (pointer table and values). */
size_t aclsim__ri_args_size(const struct aclsim__task *t);
/* memop.c's tasks (aclrtValueWrite / aclrtValueWait). */
bool aclsim__ri_is_value_op(const struct aclsim__task *t);
struct aclsim__ri *aclsim__ri_new(struct aclsim__context *ctx, enum ri_state state);
/* l's stream leaves ri (it may be captured into another instance by now). */
void aclsim__ri_lane_leave(struct aclsim__ri *ri, struct lane *l);
bool aclsim__ri_add_lane(struct aclsim__ri *ri, struct aclsim__stream *s, uint32_t epoch,
                         const void *handle);
/* Destroys ri and its branches (ri_lock held); the destroy callbacks are
 * copied to *cbs for the caller to call without the lock. */
void aclsim__ri_destroy(struct aclsim__ri *ri, struct destroy_cb **cbs, uint32_t *ncbs);
/* init, the NULL argument (100000), CANN's product table (207000). */
aclError aclsim__ri_first_checks(const void *arg, const char *name, unsigned socs, const char *api);

/* modelri-capture.c */
/* Records task into ri (ri_lock held). */
aclError aclsim__ri_record_task(struct aclsim__ri *ri, int lane, const struct aclsim__task *task,
                                const char *api, struct aclsim__event **retire,
                                uint64_t *retire_seq);
/* The capture a stream is in (ri_lock held), or NULL with 107029. */
struct aclsim__ri *aclsim__ri_capturing(struct aclsim__sref ref, const char *api, aclError *err);

/* modelri-run.c */
void aclsim__ri_plan_unref(struct plan *p);
/* Copies of ri's tasks for one replay (ri_lock held); *n of them. */
struct aclsim__task *aclsim__ri_replay_copies(const struct aclsim__ri *ri, uint32_t *n,
                                              const char *api, aclError *err);
void aclsim__ri_drop_copies(struct aclsim__task *copies, uint32_t from, uint32_t n);

/* modelri-cond.c */
/* The conditional task, on the worker that reached it (its host function). */
void aclsim__ri_cond_run(void *arg);
void aclsim__ri_cond_free(struct cond_run *c);
struct cond_run *aclsim__ri_cond_copy(const struct ri_task *rt, const char *api, aclError *err);

/* modelri-label.c */
/* The one task of a replay of a model with control steps (ri_lock held). */
struct aclsim__task *aclsim__ri_program_copy(const struct aclsim__ri *ri, uint32_t *n,
                                             const char *api, aclError *err);
/* aclFinalize (ri_lock held): the labels and lists the program left. */
void aclsim__ri_labels_finalize(void);

#endif /* ACLSIM_MODELRI_H */
