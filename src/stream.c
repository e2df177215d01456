/*
 * Streams, events and the executor.
 *
 * Each device runs a fixed pool of worker threads. A stream is an in-order
 * queue of tasks; a stream with runnable work sits on its device's ready list,
 * and a worker takes it, runs a batch of its tasks in order, and puts it back
 * if more remain. One worker runs one stream at a time, so order within a
 * stream holds; different streams run concurrently. A stream whose head task
 * waits on an event that has not completed leaves the ready list (PARKED) and
 * occupies no worker until the event's record task runs.
 *
 * Waiting threads (host or worker) spin briefly and then sleep on a condition
 * variable: on a 2-core machine a spinning waiter must not keep a worker from
 * the core it needs.
 */
#include "internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 64            /* tasks a worker runs from one stream before yielding it */
/* Spin budgets, in nanoseconds (a pause instruction takes 10-150 ns
 * depending on the CPU, so counting pauses would not bound the time). */
#define HOST_SPIN_NS 20000      /* a host thread waiting for a stream */
#define WORKER_SPIN_NS 5000    /* an idle worker waiting for work (one per device) */
#define LINGER_NS 10000          /* a worker keeping a drained stream for more tasks */
#define LINGER_BATCH 256

struct aclsim__event {
    void *handle;
    pthread_mutex_t lock;
    pthread_cond_t done;            /* broadcast when a record finishes */
    uint64_t recorded;              /* sequence number of the latest record */
    /* Records finish out of order when they sit on different streams, and a
     * wait must wait for its own record, not for any later one: records
     * 1..done_upto have all finished, and done_after[] lists the finished
     * ones above that (few: only records racing on different streams). */
    uint64_t done_upto;
    uint64_t *done_after;
    uint32_t ndone_after, cap_done_after;
    uint64_t stamp_seq;             /* latest record with a timestamp, and its time */
    struct timespec stamp;
    struct aclsim__stream *waiters; /* PARKED streams; each waits for wait_seq */
    atomic_uint refs;               /* handle + tasks + waiting host threads */
    struct aclsim__event *prev_live, *next_live;   /* live_events, under live_lock */
};

/* Events not yet destroyed: aclFinalize destroys what the program forgot. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__event *live_events;

static void live_unlink(struct aclsim__event *ev)
{
    if (ev->prev_live)
        ev->prev_live->next_live = ev->next_live;
    else
        live_events = ev->next_live;
    if (ev->next_live)
        ev->next_live->prev_live = ev->prev_live;
}

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Bounded polling: pure spinning for the first SPIN_PURE_NS (the common
 * hand-off takes a microsecond or two), then a sched_yield per round, so
 * that a poller sharing a core with the thread it waits for lets that
 * thread run instead of burning the core until its budget is spent. */
#define SPIN_PURE_NS 2000
struct backoff { uint64_t start, end; };

static inline struct backoff backoff_start(uint64_t budget_ns)
{
    uint64_t t = now_ns();
    return (struct backoff){t, t + budget_ns};
}

/* One round of waiting; false once the budget is spent. */
static inline bool backoff_wait(struct backoff *b)
{
    uint64_t t = now_ns();
    if (t >= b->end)
        return false;
    if (t - b->start < SPIN_PURE_NS)
        cpu_relax();
    else
        sched_yield();
    return true;
}

/* The executor's locks are held for a few instructions at a time by a host
 * thread and a worker: spinning briefly before sleeping (glibc's adaptive
 * mutex) avoids a futex round trip per task. */
static void adaptive_mutex_init(pthread_mutex_t *m)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(m, &attr);
    pthread_mutexattr_destroy(&attr);
}

/* ---- the executor ------------------------------------------------------ */

static void schedule(struct aclsim__stream *s)
{
    struct aclsim__device *dev = s->device;
    pthread_mutex_lock(&dev->exec_lock);
    s->next_ready = NULL;
    atomic_fetch_add_explicit(&dev->nready, 1, memory_order_relaxed);
    if (dev->ready_tail)
        dev->ready_tail->next_ready = s;
    else
        dev->ready_head = s;
    dev->ready_tail = s;
    atomic_fetch_add_explicit(&dev->work_hint, 1, memory_order_release);
    if (dev->sleepers)
        pthread_cond_signal(&dev->exec_wake);
    pthread_mutex_unlock(&dev->exec_lock);
}

static void event_unref(struct aclsim__event *ev)
{
    if (atomic_fetch_sub(&ev->refs, 1) == 1) {
        free(ev->done_after);
        pthread_mutex_destroy(&ev->lock);
        pthread_cond_destroy(&ev->done);
        free(ev);
    }
}

/* Whether record seq of ev has finished. Caller holds ev->lock. */
static bool event_reached(const struct aclsim__event *ev, uint64_t seq)
{
    if (seq <= ev->done_upto)
        return true;
    for (uint32_t i = 0; i < ev->ndone_after; i++)
        if (ev->done_after[i] == seq)
            return true;
    return false;
}

/* Marks record seq of ev as finished (stamped with the time when it ran, or
 * unstamped when it was discarded) and wakes what waited for it. */
static void event_complete(struct aclsim__event *ev, uint64_t seq, bool stamp)
{
    struct aclsim__stream *wake = NULL;
    pthread_mutex_lock(&ev->lock);
    if (seq == ev->done_upto + 1) {
        ev->done_upto = seq;
        for (uint32_t i = 0; i < ev->ndone_after;) {   /* absorb what now follows */
            if (ev->done_after[i] == ev->done_upto + 1) {
                ev->done_upto++;
                ev->done_after[i] = ev->done_after[--ev->ndone_after];
                i = 0;
            } else {
                i++;
            }
        }
    } else if (seq > ev->done_upto) {
        if (ev->ndone_after == ev->cap_done_after) {
            uint32_t cap = ev->cap_done_after ? ev->cap_done_after * 2 : 8;
            uint64_t *bigger = aclsim__realloc(ev->done_after, cap * sizeof *bigger);
            if (bigger) {
                ev->done_after = bigger;
                ev->cap_done_after = cap;
            }
        }
        if (ev->ndone_after < ev->cap_done_after)
            ev->done_after[ev->ndone_after++] = seq;
        else   /* out of memory: degrade to "everything up to seq has finished" */
            ev->done_upto = seq;
    }
    if (stamp && seq > ev->stamp_seq) {
        ev->stamp_seq = seq;
        clock_gettime(CLOCK_MONOTONIC, &ev->stamp);
    }
    for (struct aclsim__stream **p = &ev->waiters; *p;) {
        struct aclsim__stream *s = *p;
        if (event_reached(ev, s->wait_seq)) {
            *p = s->next_waiting;
            s->next_waiting = wake;
            wake = s;
        } else {
            p = &s->next_waiting;
        }
    }
    pthread_cond_broadcast(&ev->done);
    pthread_mutex_unlock(&ev->lock);
    while (wake) {
        struct aclsim__stream *s = wake;
        wake = s->next_waiting;
        pthread_mutex_lock(&s->lock);
        s->state = ACLSIM_STREAM_QUEUED;
        pthread_mutex_unlock(&s->lock);
        schedule(s);
    }
}

/* Frees what a task owns; the task itself goes back to the stream's spares. */
static void task_release(struct aclsim__task *t)
{
    if (t->kind == ACLSIM_TASK_KERNEL)
        free(t->u.kernel.argbuf);
    else if (t->kind == ACLSIM_TASK_RECORD || t->kind == ACLSIM_TASK_WAIT)
        event_unref(t->u.event.event);
}

static void execute(struct aclsim__stream *s, struct aclsim__task *t)
{
    switch (t->kind) {
    case ACLSIM_TASK_COPY:
        aclsim__execute_copy(s->device, t->u.copy.dst, t->u.copy.src, t->bytes);
        break;
    case ACLSIM_TASK_MEMSET:
        memset(t->u.memset.dst, t->u.memset.value, t->bytes);
        break;
    case ACLSIM_TASK_KERNEL:
        aclsim__execute_kernel(s->device, t);
        break;
    case ACLSIM_TASK_HOST_FUNC:
        t->u.host.fn(t->u.host.arg);
        break;
    case ACLSIM_TASK_RECORD:
        event_complete(t->u.event.event, t->u.event.seq, true);
        break;
    default:
        break;
    }
}

/* Counts one more task of s as finished (run or discarded) and wakes threads
 * waiting for it. Needs no lock: see aclsim__stream_wait for why no wake-up
 * is lost. */
static void count_done(struct aclsim__stream *s, uint64_t n)
{
    atomic_fetch_add(&s->completed, n);
    if (atomic_load(&s->waiters)) {
        pthread_mutex_lock(&s->lock);
        pthread_cond_broadcast(&s->progress);
        pthread_mutex_unlock(&s->lock);
    }
}

/* Discards tasks that will never run: their resources go, a record counts as
 * reached (nobody may wait forever on it). Called without s->lock. Returns
 * the last task of the list, for recycling. */
static struct aclsim__task *discard_tasks(struct aclsim__task *t)
{
    struct aclsim__task *last = NULL;
    for (; t; t = t->next) {
        if (t->kind == ACLSIM_TASK_RECORD)
            event_complete(t->u.event.event, t->u.event.seq, false);
        task_release(t);
        last = t;
    }
    return last;
}

/* Called with s->lock held and no task queued: keeps the stream for a few
 * microseconds in case its producer is pumping tasks, so that they are
 * claimed in batches (one lock hand-over per batch instead of per task, and
 * no schedule or wake-up). Returns early when a host thread waits on the
 * stream or other work appears on the device. True if tasks arrived. */
static bool linger(struct aclsim__stream *s)
{
    struct aclsim__device *dev = s->device;
    uint64_t seen = atomic_load_explicit(&s->submitted, memory_order_relaxed);
    unsigned hint = atomic_load_explicit(&dev->work_hint, memory_order_relaxed);
    pthread_mutex_unlock(&s->lock);
    for (struct backoff b = backoff_start(LINGER_NS); backoff_wait(&b);) {
        /* Look rarely: every look pulls the producer's cache line over. */
        for (int k = 0; k < 8; k++)
            cpu_relax();
        uint64_t arrived = atomic_load_explicit(&s->submitted, memory_order_relaxed) - seen;
        if (arrived >= LINGER_BATCH || (arrived && atomic_load_explicit(&s->hurry, memory_order_relaxed)) ||
            atomic_load_explicit(&dev->work_hint, memory_order_relaxed) != hint)
            break;
    }
    pthread_mutex_lock(&s->lock);
    return s->head != NULL;
}

/* Tasks run or discarded by a worker, kept as the chain they were queued in
 * (so the worker never writes to them) and handed back to the stream's
 * spares in one splice. */
struct chain { struct aclsim__task *head, *tail; };

static void chain_append(struct chain *c, struct aclsim__task *first, struct aclsim__task *last)
{
    if (c->tail)
        c->tail->next = first;
    else
        c->head = first;
    c->tail = last;
}

/* Runs the tasks of claimed (taken off the queue by this worker) in order,
 * without the stream lock. Stops early at an event wait that is not yet
 * satisfied and returns the tasks from there on (NULL when all ran). The
 * tasks run or discarded go to *done; they are counted as completed. */
static struct aclsim__task *run_claimed(struct aclsim__stream *s, struct aclsim__task *claimed,
                                        struct chain *done)
{
    struct aclsim__task *first = claimed, *prev = NULL, *rest = NULL;
    uint64_t n = 0;
    for (struct aclsim__task *t = claimed; t; prev = t, t = t->next) {
        if (atomic_load_explicit(&s->discard, memory_order_acquire)) {
            /* aclrtDestroyStreamForce: what has not started never will. */
            for (struct aclsim__task *x = t; x; x = x->next)
                n++;
            prev = discard_tasks(t);
            break;
        }
        if (t->kind == ACLSIM_TASK_WAIT) {
            struct aclsim__event *ev = t->u.event.event;
            pthread_mutex_lock(&ev->lock);
            bool ready = event_reached(ev, t->u.event.seq);
            pthread_mutex_unlock(&ev->lock);
            if (!ready) {
                rest = t;
                if (prev)
                    prev->next = NULL;
                break;
            }
        } else {
            /* User code may block on whoever waits for the tasks before it:
             * report those first. (Copies and memsets are counted in bulk.) */
            bool user_code = t->kind == ACLSIM_TASK_HOST_FUNC || t->kind == ACLSIM_TASK_KERNEL;
            if (user_code) {
                if (n) {
                    count_done(s, n);
                    n = 0;
                }
                aclsim__tls_stream = s;   /* lets the runtime refuse waits on itself */
            }
            execute(s, t);
            if (user_code)
                aclsim__tls_stream = NULL;
        }
        task_release(t);
        n++;
    }
    if (prev)
        chain_append(done, first, prev);
    if (n)
        count_done(s, n);
    return rest;
}

/* A worker runs stream s: it claims everything queued with one lock, runs it
 * without the lock, and repeats (up to BATCH tasks, for fairness between
 * streams). A waiting event parks the stream on the event. */
static void run_stream(struct aclsim__stream *s)
{
    struct chain done = {NULL, NULL};
    int budget = BATCH;
    pthread_mutex_lock(&s->lock);
    s->state = ACLSIM_STREAM_RUNNING;
    for (;;) {
        /* The budget only matters when other streams are waiting for a worker. */
        if (budget <= 0) {
            if (atomic_load_explicit(&s->device->nready, memory_order_relaxed))
                break;
            budget = BATCH;
        }
        if (!s->head && !linger(s))
            break;
        struct aclsim__task *claimed = s->head;
        s->head = s->tail = NULL;
        pthread_mutex_unlock(&s->lock);
        for (struct aclsim__task *t = claimed; t; t = t->next)
            budget--;
        struct aclsim__task *rest = run_claimed(s, claimed, &done);
        pthread_mutex_lock(&s->lock);
        if (rest && atomic_load(&s->discard)) {
            /* Force-destroyed while we looked at the event: do not park. */
            pthread_mutex_unlock(&s->lock);
            rest = run_claimed(s, rest, &done);   /* discards them all */
            pthread_mutex_lock(&s->lock);
        }
        if (rest) {
            /* Blocked on an event: the unrun tasks go back in front, in order. */
            struct aclsim__task *last = rest;
            while (last->next)
                last = last->next;
            last->next = s->head;
            if (!s->head)
                s->tail = last;
            s->head = rest;
            struct aclsim__event *ev = rest->u.event.event;
            pthread_mutex_lock(&ev->lock);
            if (!event_reached(ev, rest->u.event.seq)) {
                s->wait_seq = rest->u.event.seq;
                s->next_waiting = ev->waiters;
                ev->waiters = s;
                s->state = ACLSIM_STREAM_PARKED;
                pthread_mutex_unlock(&ev->lock);
                goto out;
            }
            pthread_mutex_unlock(&ev->lock);   /* completed meanwhile: go on */
        }
    }
    if (s->head) {
        s->state = ACLSIM_STREAM_QUEUED;
        if (done.head) {   /* recycle before letting go of the stream */
            done.tail->next = s->spare;
            s->spare = done.head;
        }
        pthread_mutex_unlock(&s->lock);
        schedule(s);
        return;
    }
    s->state = ACLSIM_STREAM_IDLE;
    pthread_cond_broadcast(&s->progress);   /* destroy waits for IDLE */
out:
    if (done.head) {
        done.tail->next = s->spare;
        s->spare = done.head;
    }
    pthread_mutex_unlock(&s->lock);
}

/* A job on dev->jobs that still has unclaimed indices. Caller holds exec_lock. */
static struct aclsim__job *open_job(struct aclsim__device *dev)
{
    for (struct aclsim__job *j = dev->jobs; j; j = j->next_job)
        if (atomic_load_explicit(&j->next, memory_order_relaxed) < j->count)
            return j;
    return NULL;
}

static void work_on(struct aclsim__job *job)
{
    for (;;) {
        uint32_t i = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (i >= job->count)
            break;
        job->run(job, i);
    }
}

_Thread_local bool aclsim__tls_worker;
_Thread_local struct aclsim__device *aclsim__tls_device;
_Thread_local struct aclsim__stream *aclsim__tls_stream;

aclError aclsim__refuse_self_wait(const char *api, const char *what)
{
    return aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                        "called from a host function or kernel running on %s: it would wait "
                        "for itself (do this from a host thread)", what);
}

static void *worker_main(void *arg)
{
    struct aclsim__device *dev = arg;
    aclsim__tls_worker = true;
    aclsim__tls_device = dev;
    pthread_mutex_lock(&dev->exec_lock);
    for (;;) {
        struct aclsim__job *job = open_job(dev);
        if (job) {
            job->helpers++;
            pthread_mutex_unlock(&dev->exec_lock);
            work_on(job);
            pthread_mutex_lock(&dev->exec_lock);
            if (--job->helpers == 0 && !job->listed)
                pthread_cond_signal(&job->idle);
            continue;
        }
        struct aclsim__stream *s = dev->ready_head;
        if (s) {
            dev->ready_head = s->next_ready;
            if (!dev->ready_head)
                dev->ready_tail = NULL;
            atomic_fetch_sub_explicit(&dev->nready, 1, memory_order_relaxed);
            pthread_mutex_unlock(&dev->exec_lock);
            run_stream(s);
            pthread_mutex_lock(&dev->exec_lock);
            continue;
        }
        if (dev->stop)
            break;
        /* One idle worker per device polls briefly for new work before paying
         * for a sleep and a wake-up; the others sleep at once, so that idle
         * workers never crowd out a host thread on a small machine. */
        if (!dev->spinner) {
            unsigned hint = atomic_load_explicit(&dev->work_hint, memory_order_acquire);
            dev->spinner = true;
            pthread_mutex_unlock(&dev->exec_lock);
            for (struct backoff b = backoff_start(WORKER_SPIN_NS);
                 atomic_load_explicit(&dev->work_hint, memory_order_acquire) == hint &&
                 backoff_wait(&b);)
                ;
            pthread_mutex_lock(&dev->exec_lock);
            dev->spinner = false;
            if (atomic_load_explicit(&dev->work_hint, memory_order_acquire) != hint || dev->stop)
                continue;
        }
        dev->sleepers++;
        pthread_cond_wait(&dev->exec_wake, &dev->exec_lock);
        dev->sleepers--;
    }
    pthread_mutex_unlock(&dev->exec_lock);
    return NULL;
}

aclError aclsim__executor_start(struct aclsim__device *dev, uint32_t nworkers, const char *api)
{
    adaptive_mutex_init(&dev->exec_lock);
    pthread_cond_init(&dev->exec_wake, NULL);
    dev->ready_head = dev->ready_tail = NULL;
    atomic_store(&dev->nready, 0);
    dev->jobs = NULL;
    dev->sleepers = 0;
    dev->stop = false;
    dev->workers = aclsim__calloc(nworkers, sizeof *dev->workers);
    dev->nworkers = 0;
    if (!dev->workers)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory starting device %d", dev->id);
    for (uint32_t i = 0; i < nworkers; i++) {
        int rc = pthread_create(&dev->workers[i], NULL, worker_main, dev);
        if (rc) {
            aclsim__executor_stop(dev);
            return aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                                "cannot start worker thread %u of device %d: %s", i, dev->id,
                                strerror(rc));
        }
        dev->nworkers++;
    }
    return ACL_SUCCESS;
}

void aclsim__executor_stop(struct aclsim__device *dev)
{
    if (!dev->workers)
        return;
    pthread_mutex_lock(&dev->exec_lock);
    dev->stop = true;
    atomic_fetch_add(&dev->work_hint, 1);
    pthread_cond_broadcast(&dev->exec_wake);
    pthread_mutex_unlock(&dev->exec_lock);
    for (uint32_t i = 0; i < dev->nworkers; i++)
        pthread_join(dev->workers[i], NULL);
    free(dev->workers);
    dev->workers = NULL;
    dev->nworkers = 0;
    pthread_cond_destroy(&dev->exec_wake);
    pthread_mutex_destroy(&dev->exec_lock);
}

void aclsim__run_job(struct aclsim__device *dev, struct aclsim__job *job)
{
    atomic_store_explicit(&job->next, 0, memory_order_relaxed);
    job->helpers = 0;
    pthread_cond_init(&job->idle, NULL);
    pthread_mutex_lock(&dev->exec_lock);
    job->listed = true;
    job->next_job = dev->jobs;
    dev->jobs = job;
    atomic_fetch_add_explicit(&dev->work_hint, 1, memory_order_release);
    if (dev->sleepers)
        pthread_cond_broadcast(&dev->exec_wake);
    pthread_mutex_unlock(&dev->exec_lock);

    work_on(job);

    pthread_mutex_lock(&dev->exec_lock);
    for (struct aclsim__job **p = &dev->jobs; *p; p = &(*p)->next_job)
        if (*p == job) {
            *p = job->next_job;
            break;
        }
    job->listed = false;
    while (job->helpers)
        pthread_cond_wait(&job->idle, &dev->exec_lock);
    pthread_mutex_unlock(&dev->exec_lock);
    pthread_cond_destroy(&job->idle);
}

/* ---- streams ------------------------------------------------------------ */

/* Stream structs are type-stable: a destroyed stream goes to this pool and is
 * reused by a later aclrtCreateStream, never freed. A thread still inside
 * aclsim__stream_wait on it (woken by the destroy) thus never touches freed
 * memory, and since submitted/completed keep counting across reuse, the
 * sequence number it waits for is already reached. The pool holds at most the
 * peak number of streams. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__stream *stream_pool;

static void stream_unref(struct aclsim__stream *s)
{
    if (atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    pthread_mutex_lock(&pool_lock);
    s->next_in_context = stream_pool;
    stream_pool = s;
    pthread_mutex_unlock(&pool_lock);
}

aclError aclsim__stream_create(struct aclsim__context *ctx, bool is_default,
                               struct aclsim__stream **out, const char *api)
{
    pthread_mutex_lock(&pool_lock);
    struct aclsim__stream *s = stream_pool;
    if (s)
        stream_pool = s->next_in_context;
    pthread_mutex_unlock(&pool_lock);
    if (!s) {
        s = aclsim__aligned_alloc(_Alignof(struct aclsim__stream), sizeof *s);
        if (!s)
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating a stream");
        memset(s, 0, sizeof *s);
        adaptive_mutex_init(&s->lock);
        pthread_cond_init(&s->progress, NULL);
    }
    /* A reused struct keeps its lock, condition variable, spare tasks and
     * counters (submitted == completed; late waiters may still count in
     * waiters and hurry). The rest starts afresh. */
    pthread_mutex_lock(&s->lock);
    s->handle = NULL;
    s->context = ctx;
    s->device = ctx->device;
    s->head = s->tail = NULL;
    s->state = ACLSIM_STREAM_IDLE;
    s->next_ready = s->next_waiting = s->next_in_context = NULL;
    atomic_store(&s->discard, false);
    atomic_store(&s->refs, 1);
    pthread_mutex_unlock(&s->lock);
    if (!is_default) {
        s->handle = aclsim__handle_new(ACLSIM_H_STREAM, s);
        if (!s->handle) {
            stream_unref(s);
            return aclsim__fail(ACL_ERROR_RT_NO_STREAM_RESOURCE, api,
                                "out of memory creating a stream");
        }
        pthread_mutex_lock(&ctx->lock);
        s->next_in_context = ctx->streams;
        ctx->streams = s;
        pthread_mutex_unlock(&ctx->lock);
    }
    *out = s;
    return ACL_SUCCESS;
}

/* Takes s off its context's list (after its handle was won). */
static void unlink_stream(struct aclsim__stream *s)
{
    struct aclsim__context *ctx = s->context;
    pthread_mutex_lock(&ctx->lock);
    for (struct aclsim__stream **p = &ctx->streams; *p; p = &(*p)->next_in_context)
        if (*p == s) {
            *p = s->next_in_context;
            break;
        }
    pthread_cond_broadcast(&ctx->unlinked);
    pthread_mutex_unlock(&ctx->lock);
}

void aclsim__stream_destroy(struct aclsim__stream *s, bool force)
{
    pthread_mutex_lock(&s->lock);
    if (force) {
        /* Discard every task that has not started. A worker running the
         * stream discards the rest of what it claimed (after the task it is
         * running); a parked stream is taken off its event first. */
        atomic_store(&s->discard, true);
        if (s->state == ACLSIM_STREAM_PARKED) {
            struct aclsim__event *ev = s->head->u.event.event;
            pthread_mutex_lock(&ev->lock);
            for (struct aclsim__stream **p = &ev->waiters; *p; p = &(*p)->next_waiting)
                if (*p == s) {
                    *p = s->next_waiting;
                    s->state = ACLSIM_STREAM_IDLE;   /* unlinked: nobody will wake it */
                    break;
                }
            pthread_mutex_unlock(&ev->lock);
        }
        struct aclsim__task *queued = s->head;
        s->head = s->tail = NULL;
        pthread_mutex_unlock(&s->lock);
        uint64_t n = 0;
        for (struct aclsim__task *t = queued; t; t = t->next)
            n++;
        struct aclsim__task *last = discard_tasks(queued);
        pthread_mutex_lock(&s->lock);
        if (last) {
            last->next = s->spare;
            s->spare = queued;
        }
        pthread_mutex_unlock(&s->lock);
        count_done(s, n);
        pthread_mutex_lock(&s->lock);
    }
    /* Wait until no worker holds or will take the stream. */
    atomic_fetch_add(&s->waiters, 1);
    while (s->head || s->state != ACLSIM_STREAM_IDLE)
        pthread_cond_wait(&s->progress, &s->lock);
    atomic_fetch_sub(&s->waiters, 1);
    pthread_mutex_unlock(&s->lock);
    stream_unref(s);
}

aclError aclsim__stream_resolve(aclrtStream stream, const char *api,
                                struct aclsim__context **ctx_out, struct aclsim__stream **out)
{
    /* A caller that already resolved the current context passes it in. */
    struct aclsim__context *ctx = ctx_out ? *ctx_out : NULL;
    aclError err = ctx ? ACL_SUCCESS : aclsim__current_context(api, &ctx);
    if (err)
        return err;
    struct aclsim__stream *s = ctx->default_stream;
    if (stream) {
        s = aclsim__handle_get(stream, ACLSIM_H_STREAM);
        if (ACLSIM_UNLIKELY(!s))
            return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                                "stream %p is not a live stream (destroyed, or never created)",
                                stream);
        if (ACLSIM_UNLIKELY(s->context != ctx))
            return aclsim__fail(ACL_ERROR_RT_STREAM_CONTEXT, api,
                                "stream %p belongs to a context of device %d, not to the "
                                "current context (device %d)", stream, s->device->id,
                                ctx->device->id);
    }
    if (ctx_out)
        *ctx_out = ctx;
    *out = s;
    return ACL_SUCCESS;
}

uint64_t aclsim__submit(struct aclsim__stream *s, const struct aclsim__task *task)
{
    pthread_mutex_lock(&s->lock);
    struct aclsim__task *t = s->spare;
    if (t) {
        s->spare = t->next;
    } else if (!(t = aclsim__malloc(sizeof *t))) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    *t = *task;
    t->next = NULL;
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    uint64_t seq = atomic_load_explicit(&s->submitted, memory_order_relaxed) + 1;
    atomic_store_explicit(&s->submitted, seq, memory_order_release);
    bool idle = s->state == ACLSIM_STREAM_IDLE;
    if (idle)
        s->state = ACLSIM_STREAM_QUEUED;
    pthread_mutex_unlock(&s->lock);
    if (idle)
        schedule(s);
    return seq;
}

static void deadline_after(struct timespec *ts, int32_t ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

bool aclsim__stream_wait(struct aclsim__stream *s, uint64_t seq, int32_t timeout_ms)
{
    if (atomic_load_explicit(&s->completed, memory_order_acquire) >= seq)
        return true;
    atomic_fetch_add(&s->hurry, 1);   /* a lingering worker stops batching */
    bool done = false;
    for (struct backoff b = backoff_start(HOST_SPIN_NS); !done && backoff_wait(&b);) {
        done = atomic_load_explicit(&s->completed, memory_order_acquire) >= seq;
    }
    atomic_fetch_sub(&s->hurry, 1);
    if (done)
        return true;
    struct timespec deadline;
    if (timeout_ms >= 0)
        deadline_after(&deadline, timeout_ms);
    /* No lost wake-up without a lock on the worker side: this thread
     * increments waiters, then reads completed; a worker increments
     * completed, then reads waiters (both sequentially consistent), so at
     * least one of them sees the other's write. */
    bool ok = true;
    pthread_mutex_lock(&s->lock);
    atomic_fetch_add(&s->waiters, 1);
    while (atomic_load(&s->completed) < seq) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&s->progress, &s->lock);
        } else if (pthread_cond_timedwait(&s->progress, &s->lock, &deadline) == ETIMEDOUT) {
            ok = atomic_load(&s->completed) >= seq;
            break;
        }
    }
    atomic_fetch_sub(&s->waiters, 1);
    pthread_mutex_unlock(&s->lock);
    return ok;
}

static uint64_t submitted_of(struct aclsim__stream *s)
{
    return atomic_load_explicit(&s->submitted, memory_order_acquire);
}

aclError aclsim__device_synchronize(struct aclsim__device *dev, const char *api)
{
    if (ACLSIM_UNLIKELY(aclsim__tls_device == dev))
        return aclsim__refuse_self_wait(api, "this device");
    /* Snapshot (stream, submitted) pairs under the locks, wait without them. */
    size_t n = 0, cap = 16;
    struct pending { struct aclsim__stream *s; uint64_t seq; } *list = aclsim__malloc(cap * sizeof *list);
    if (!list)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    pthread_mutex_lock(&aclsim__rt.lock);
    for (struct aclsim__context *c = dev->contexts; c; c = c->next_in_device) {
        pthread_mutex_lock(&c->lock);
        for (struct aclsim__stream *s = c->default_stream; s;
             s = s == c->default_stream ? c->streams : s->next_in_context) {
            if (n == cap) {
                struct pending *bigger = aclsim__realloc(list, 2 * cap * sizeof *list);
                if (!bigger) {
                    pthread_mutex_unlock(&c->lock);
                    pthread_mutex_unlock(&aclsim__rt.lock);
                    for (size_t i = 0; i < n; i++)
                        stream_unref(list[i].s);
                    free(list);
                    return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
                }
                list = bigger;
                cap *= 2;
            }
            atomic_fetch_add(&s->refs, 1);
            list[n++] = (struct pending){s, submitted_of(s)};
        }
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    for (size_t i = 0; i < n; i++) {
        aclsim__stream_wait(list[i].s, list[i].seq, -1);
        stream_unref(list[i].s);
    }
    free(list);
    return ACL_SUCCESS;
}

/* ---- stream API ---------------------------------------------------------- */

static aclError create_stream(aclrtStream *stream, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    struct aclsim__stream *s = NULL;
    if (!err && !(err = aclsim__stream_create(ctx, false, &s, api)))
        *stream = s->handle;
    return err;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
    return create_stream(stream, "aclrtCreateStream");
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)
{
    (void)priority;   /* one priority class: the simulator schedules streams round-robin */
    (void)flag;       /* fast launch/sync etc. change nothing on a CPU */
    return create_stream(stream, "aclrtCreateStreamWithConfig");
}

static aclError destroy_stream(aclrtStream stream, bool force, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stream is NULL (the default stream cannot be destroyed)");
    struct aclsim__stream *s = aclsim__handle_get(stream, ACLSIM_H_STREAM);
    if (s && ACLSIM_UNLIKELY(s == aclsim__tls_stream))
        return aclsim__refuse_self_wait(api, "this stream");
    /* Only the thread that frees the handle destroys the stream. */
    if (!s || !aclsim__handle_free(stream))
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "stream %p is not a live stream (destroyed, or never created)", stream);
    unlink_stream(s);
    aclsim__stream_destroy(s, force);
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    return destroy_stream(stream, false, "aclrtDestroyStream");
}

aclError aclrtDestroyStreamForce(aclrtStream stream)
{
    return destroy_stream(stream, true, "aclrtDestroyStreamForce");
}

static aclError sync_stream(aclrtStream stream, int32_t timeout, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    struct aclsim__stream *s = NULL;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (err)
        return err;
    if (ACLSIM_UNLIKELY(s == aclsim__tls_stream))
        return aclsim__refuse_self_wait(api, "this stream");
    if (!aclsim__stream_wait(s, submitted_of(s), timeout))
        return aclsim__fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, api,
                            "stream %p still has work after %d ms", stream, timeout);
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    return sync_stream(stream, -1, "aclrtSynchronizeStream");
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    ACLSIM_REQUIRE_INIT("aclrtSynchronizeStreamWithTimeout");
    if (timeout < -1 || timeout == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStreamWithTimeout",
                            "timeout %d is invalid: -1 (wait forever) or a positive number of "
                            "milliseconds", timeout);
    return sync_stream(stream, timeout, "aclrtSynchronizeStreamWithTimeout");
}

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)
{
    static const char api[] = "aclrtLaunchHostFunc";
    ACLSIM_REQUIRE_INIT(api);
    if (!fn)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "fn is NULL");
    struct aclsim__stream *s = NULL;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (err)
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_HOST_FUNC, .u.host = {fn, args}};
    if (!aclsim__submit(s, &t))
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory queuing a host function");
    return ACL_SUCCESS;
}

/* ---- events --------------------------------------------------------------- */

/* Resolves an event handle and takes a reference on the event (the caller
 * drops it with event_unref). Lookup and reference happen under live_lock,
 * where aclrtDestroyEvent frees the handle, so a racing destroy cannot free
 * the event in between. */
static struct aclsim__event *event_of(aclrtEvent event, const char *what, const char *api,
                                      aclError *err)
{
    if (!event) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", what);
        return NULL;
    }
    pthread_mutex_lock(&live_lock);
    struct aclsim__event *ev = aclsim__handle_get(event, ACLSIM_H_EVENT);
    if (ev)
        atomic_fetch_add(&ev->refs, 1);
    pthread_mutex_unlock(&live_lock);
    if (!ev)
        *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "%s %p is not a live event (destroyed, or never created)", what, event);
    return ev;
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
    static const char api[] = "aclrtCreateEvent";
    ACLSIM_REQUIRE_INIT(api);
    if (!event)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "event is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    struct aclsim__event *ev = aclsim__calloc(1, sizeof *ev);
    if (!ev)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating an event");
    pthread_mutex_init(&ev->lock, NULL);
    pthread_cond_init(&ev->done, NULL);
    atomic_init(&ev->refs, 1);
    ev->handle = aclsim__handle_new(ACLSIM_H_EVENT, ev);
    if (!ev->handle) {
        event_unref(ev);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating an event");
    }
    pthread_mutex_lock(&live_lock);
    ev->next_live = live_events;
    if (live_events)
        live_events->prev_live = ev;
    live_events = ev;
    pthread_mutex_unlock(&live_lock);
    *event = ev->handle;
    return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
    static const char api[] = "aclrtDestroyEvent";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = event_of(event, "event", api, &err);
    if (!ev)
        return err;
    /* Queued records and waits keep their reference; they still run. */
    pthread_mutex_lock(&live_lock);
    bool live = aclsim__handle_free(event);   /* false: a racing destroy won */
    if (live)
        live_unlink(ev);
    pthread_mutex_unlock(&live_lock);
    event_unref(ev);   /* ours, from event_of */
    if (!live)
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "event %p is not a live event (destroyed, or never created)", event);
    event_unref(ev);   /* the handle's */
    return ACL_SUCCESS;
}

void aclsim__events_finalize(void)
{
    pthread_mutex_lock(&live_lock);
    while (live_events) {
        struct aclsim__event *ev = live_events;
        live_unlink(ev);
        aclsim__handle_free(ev->handle);
        pthread_mutex_unlock(&live_lock);
        event_unref(ev);
        pthread_mutex_lock(&live_lock);
    }
    pthread_mutex_unlock(&live_lock);
}

static aclError queue_event_task(aclrtEvent event, aclrtStream stream, int kind, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = event_of(event, "event", api, &err);
    if (!ev)
        return err;
    struct aclsim__stream *s = NULL;
    if ((err = aclsim__stream_resolve(stream, api, NULL, &s))) {
        event_unref(ev);
        return err;
    }
    struct aclsim__task t = {.kind = (uint8_t)kind, .u.event.event = ev};   /* takes our ref */
    /* A record gets a new sequence number; a wait waits for the latest record
     * made before it (none: it passes at once). The event lock cannot be held
     * over the submit (lock order is stream -> event). */
    pthread_mutex_lock(&ev->lock);
    t.u.event.seq = kind == ACLSIM_TASK_RECORD ? ++ev->recorded : ev->recorded;
    pthread_mutex_unlock(&ev->lock);
    if (!aclsim__submit(s, &t)) {
        if (kind == ACLSIM_TASK_RECORD)   /* the number is taken: retire it, unstamped */
            event_complete(ev, t.u.event.seq, false);
        event_unref(ev);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory queuing an event task");
    }
    return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    return queue_event_task(event, stream, ACLSIM_TASK_RECORD, "aclrtRecordEvent");
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    return queue_event_task(event, stream, ACLSIM_TASK_WAIT, "aclrtStreamWaitEvent");
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    static const char api[] = "aclrtSynchronizeEvent";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = event_of(event, "event", api, &err);
    if (!ev)
        return err;
    pthread_mutex_lock(&ev->lock);
    uint64_t target = ev->recorded;   /* the latest record made before this call */
    while (!event_reached(ev, target))
        pthread_cond_wait(&ev->done, &ev->lock);
    pthread_mutex_unlock(&ev->lock);
    event_unref(ev);
    return ACL_SUCCESS;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    static const char api[] = "aclrtQueryEventStatus";
    ACLSIM_REQUIRE_INIT(api);
    if (!status)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "status is NULL");
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = event_of(event, "event", api, &err);
    if (!ev)
        return err;
    pthread_mutex_lock(&ev->lock);
    bool done = ev->recorded > 0 && event_reached(ev, ev->recorded);
    pthread_mutex_unlock(&ev->lock);
    event_unref(ev);
    *status = done ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    return ACL_SUCCESS;
}

/* The timestamp of ev's latest record, if that record has run. */
static bool event_stamp(struct aclsim__event *ev, struct timespec *ts)
{
    pthread_mutex_lock(&ev->lock);
    bool ok = ev->recorded > 0 && ev->stamp_seq == ev->recorded;
    *ts = ev->stamp;
    pthread_mutex_unlock(&ev->lock);
    return ok;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    static const char api[] = "aclrtEventElapsedTime";
    ACLSIM_REQUIRE_INIT(api);
    if (!ms)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ms is NULL");
    aclError err = ACL_SUCCESS;
    struct aclsim__event *a = event_of(startEvent, "startEvent", api, &err);
    if (!a)
        return err;
    struct aclsim__event *b = event_of(endEvent, "endEvent", api, &err);
    if (!b) {
        event_unref(a);
        return err;
    }
    struct timespec ta, tb;
    bool a_ok = event_stamp(a, &ta), b_ok = event_stamp(b, &tb);
    event_unref(a);
    event_unref(b);
    if (!a_ok)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "startEvent %p has not completed a record (record it on a stream "
                            "and synchronize first)", startEvent);
    if (!b_ok)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "endEvent %p has not completed a record (record it on a stream "
                            "and synchronize first)", endEvent);
    *ms = (float)((double)(tb.tv_sec - ta.tv_sec) * 1e3 + (double)(tb.tv_nsec - ta.tv_nsec) / 1e6);
    return ACL_SUCCESS;
}
