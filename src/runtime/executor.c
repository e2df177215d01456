/*
 * The executor: each device runs a fixed pool of worker threads.
 *
 * A stream with runnable work sits on its device's ready list; a worker takes
 * it, runs a batch of its tasks in order, and puts it back if more remain. One
 * worker runs one stream at a time, so order within a stream holds; different
 * streams run concurrently. A stream whose head task waits on an event that
 * has not completed leaves the ready list (PARKED, see event.c) and occupies no
 * worker until the event's record task runs. Kernel blocks and shares of large
 * copies are jobs: parallel-fors that idle workers of the device help with
 * (and, for copies, host threads waiting on the stream: THE HELP RULE).
 *
 * Waiting threads (host or worker) spin briefly and then sleep on a condition
 * variable: on a 2-core machine a spinning waiter must not keep a worker from
 * the core it needs. On one usable CPU nothing spins, and a host thread that
 * synchronizes a stream runs its tasks without user code itself
 * (aclsim__host_run) instead of switching to a worker and back.
 */
#include "internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 64            /* tasks a worker runs from one stream before yielding it */
#define WORKER_SPIN_NS 5000    /* an idle worker waiting for work (one per device) */
#define LINGER_NS 10000          /* a worker keeping a drained stream for more tasks */
#define LINGER_BATCH 256
#define LINGER_LOOK_NS 1000      /* how often a lingering worker looks at submitted */

/* See internal.h. */
void aclsim__adaptive_mutex_init(pthread_mutex_t *m)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(m, &attr);
    pthread_mutexattr_destroy(&attr);
}

/* ---- the executor ------------------------------------------------------ */

/* The ready list is ordered by stream priority (0 first), first come first
 * served within a priority: a stream goes behind every stream of its
 * priority or a greater one (O(1) when all share one priority). */
void aclsim__schedule(struct aclsim__stream *s)
{
    struct aclsim__device *dev = s->device;
    uint32_t prio = __atomic_load_n(&s->priority, __ATOMIC_RELAXED);
    pthread_mutex_lock(&dev->exec_lock);
    s->ready_priority = prio;
    atomic_fetch_add_explicit(&dev->nready, 1, memory_order_relaxed);
    if (!dev->ready_tail || dev->ready_tail->ready_priority <= prio) {
        s->next_ready = NULL;
        if (dev->ready_tail)
            dev->ready_tail->next_ready = s;
        else
            dev->ready_head = s;
        dev->ready_tail = s;
    } else {
        struct aclsim__stream **p = &dev->ready_head;
        while ((*p)->ready_priority <= prio)
            p = &(*p)->next_ready;
        s->next_ready = *p;
        *p = s;
    }
    atomic_fetch_add_explicit(&dev->work_hint, 1, memory_order_release);
    /* On one CPU, while an idle worker polls work_hint (it re-reads it under
     * exec_lock before sleeping, so it cannot miss this stream), a sleeper
     * is woken only for work beyond the one stream the poller takes: the
     * wake-up would switch to a worker that finds nothing and sleeps again
     * (1-block launch + sync, one CPU: 6.2 us with it, 2.1 us without). */
    if (dev->sleepers && (!dev->spinner || !aclsim__one_cpu() ||
                          atomic_load_explicit(&dev->nready, memory_order_relaxed) > 1))
        pthread_cond_signal(&dev->exec_wake);
    pthread_mutex_unlock(&dev->exec_lock);
}

/* Frees what a task owns; the task itself goes back to the stream's spares. */
static void task_release(struct aclsim__task *t)
{
    if (ACLSIM_UNLIKELY(aclsim__checking()))   /* checker hook: the task's memory uses end */
        aclsim__check_released(t);
    if (t->kind == ACLSIM_TASK_KERNEL)
        free(t->u.kernel.argbuf);
    else if (t->kind == ACLSIM_TASK_RECORD)
        aclsim__event_unref(t->u.event.event);
    else if ((t->kind == ACLSIM_TASK_WAIT || t->kind == ACLSIM_TASK_SIGNAL) && t->u.sync.ops->release)
        t->u.sync.ops->release(t);
    else if (t->kind == ACLSIM_TASK_RANDOM)
        free(t->u.random.data);
    else if (t->kind == ACLSIM_TASK_BATCH)
        free(t->u.batch.data);
}

static void execute(struct aclsim__stream *s, struct aclsim__task *t)
{
    aclError code;
    struct aclsim__fault_detail detail;
    /* Device memory may change: memory waits must see it (wait.c). */
    bool guard = (t->kind <= ACLSIM_TASK_KERNEL || t->kind == ACLSIM_TASK_OVERFLOW ||
                  t->kind == ACLSIM_TASK_COPY2D || t->kind == ACLSIM_TASK_MEMSET32) &&
                 aclsim__memory_write_begin();
    if (ACLSIM_UNLIKELY(aclsim__checking()))   /* checker hook: unwritten reads, page-locked alias */
        aclsim__check_task_run(s, t);
    switch (t->kind) {
    case ACLSIM_TASK_COPY:
        aclsim__execute_copy(s, t->u.copy.dst, t->u.copy.src, t->bytes);
        break;
    case ACLSIM_TASK_MEMSET:
        memset(t->u.memset.dst, t->u.memset.value, t->bytes);
        break;
    case ACLSIM_TASK_KERNEL:
        code = ACLSIM_UNLIKELY(aclsim__checking()) ? aclsim__check_kernel(s, t, &detail) /* checker hook */
                                                   : aclsim__execute_kernel(s->device, t, &detail);
        if (ACLSIM_UNLIKELY(code))
            aclsim__task_failed(s, t, code, &detail);   /* a failed task: failure.c */
        break;
    case ACLSIM_TASK_HOST_FUNC:
        t->u.host.fn(t->u.host.arg);
        break;
    case ACLSIM_TASK_CALLBACK:
        t->u.cb.run(t->u.cb.arg);
        break;
    case ACLSIM_TASK_RECORD:
        aclsim__event_complete(t->u.event.event, t->u.event.seq, true);
        break;
    case ACLSIM_TASK_OVERFLOW:
        aclsim__execute_overflow(s->device, t);
        break;
    case ACLSIM_TASK_SIGNAL:
        t->u.sync.ops->signal(t, false);
        break;
    case ACLSIM_TASK_COPY2D:
    case ACLSIM_TASK_MEMSET32:
        aclsim__execute_copy_variant(t);
        break;
    case ACLSIM_TASK_REDUCE:
        aclsim__execute_reduce(t);
        break;
    case ACLSIM_TASK_RANDOM:
        aclsim__execute_random(t);
        break;
    case ACLSIM_TASK_BATCH:
        aclsim__execute_batch(t);
        break;
    default:
        break;
    }
    aclsim__memory_write_end(guard);
}

/* For model runtime instances, tasks run on the calling worker: a
 * conditional task's branch (modelri-cond.c), a replay's plan
 * (modelri-run.c) and a built model's steps (modelri-label.c). */
void aclsim__execute_inline(struct aclsim__stream *s, struct aclsim__task *t)
{
    execute(s, t);
}

/* Counts one more task of s as finished (run or discarded) and wakes threads
 * waiting for it. Needs no lock: see aclsim__stream_wait for why no wake-up
 * is lost. */
void aclsim__count_done(struct aclsim__stream *s, uint64_t n)
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
/* What a discarded task still does: a record or signal counts as reached,
 * unstamped, so that nobody waits forever on it. (Its resources go with
 * task_release.) */
static void discard_one(struct aclsim__task *t)
{
    if (t->kind == ACLSIM_TASK_RECORD)
        aclsim__event_complete(t->u.event.event, t->u.event.seq, false);
    else if (t->kind == ACLSIM_TASK_SIGNAL)
        t->u.sync.ops->signal(t, true);
    else if (t->kind == ACLSIM_TASK_CALLBACK)
        t->u.cb.drop(t->u.cb.arg);   /* callback.c frees what it owns */
}

struct aclsim__task *aclsim__discard_tasks(struct aclsim__task *t)
{
    struct aclsim__task *last = NULL;
    for (; t; t = t->next) {
        discard_one(t);
        task_release(t);
        last = t;
    }
    return last;
}

/* Called with s->lock held and head empty, after the worker ran what it
 * claimed: takes the inbox (THE INBOX RULE), but first keeps the stream for
 * a few microseconds in case its producer is pumping tasks, so that they are
 * claimed in batches (one hand-over of the inbox per batch instead of per
 * task, and no schedule or wake-up). Takes at once when LINGER_BATCH tasks
 * wait, a host thread waits on the stream or other work appears on the
 * device. True if tasks were taken. */
static bool linger(struct aclsim__stream *s)
{
    struct aclsim__device *dev = s->device;
    /* On one CPU the producer cannot queue while this worker lingers, and a
     * host thread waiting on the stream runs such tasks itself
     * (aclsim__host_run) only while the stream is not held. */
    uint32_t pending = aclsim__stream_pending(s);
    if (aclsim__one_cpu() || pending >= LINGER_BATCH ||
        (pending && atomic_load_explicit(&s->hurry, memory_order_relaxed)))
        return aclsim__stream_take_inbox(s, false);
    unsigned hint = atomic_load_explicit(&dev->work_hint, memory_order_relaxed);
    /* (A destroy or discard may take the inbox meanwhile: then this returns
     * false with tasks in head, and the stream goes back on the ready list.) */
    uint32_t taken = s->taken;
    pthread_mutex_unlock(&s->lock);
    uint64_t look = 0;
    for (struct aclsim__backoff b = aclsim__backoff_start(LINGER_NS); aclsim__backoff_wait(&b);) {
        if (atomic_load_explicit(&dev->work_hint, memory_order_relaxed) != hint)
            break;
        /* Look rarely at submitted while the producer pumps: its store to
         * it waits for each look, and its next locked instruction for that
         * store. A host waiting on the stream pumps nothing: then look each
         * round, and take what it waits for at once. (With nothing queued,
         * keep the stream: the next submit of a round trip then finds it
         * held, and needs no wake-up.) */
        uint64_t now = aclsim__now_ns();
        bool hurry = atomic_load_explicit(&s->hurry, memory_order_relaxed);
        if (hurry || now - look >= LINGER_LOOK_NS) {
            look = now;
            pending = (uint32_t)atomic_load_explicit(&s->submitted, memory_order_relaxed) - taken;
            if (pending >= LINGER_BATCH || (pending && hurry))
                break;
        }
    }
    pthread_mutex_lock(&s->lock);
    return aclsim__stream_take_inbox(s, false);
}

/* Tasks run or discarded by a worker, kept as the chain they were queued in
 * (so the worker never writes to them) and handed back to the stream's
 * spares in one splice. */
struct chain { struct aclsim__task *head, *tail; uint64_t n; };

static void chain_append(struct chain *c, struct aclsim__task *first, struct aclsim__task *last,
                         uint64_t n)
{
    if (c->tail)
        c->tail->next = first;
    else
        c->head = first;
    c->tail = last;
    c->n += n;
}

/* Gives the chain back to the stream's spares. Caller holds s->lock. */
static void chain_recycle(struct aclsim__stream *s, struct chain *c)
{
    if (c->head)
        aclsim__stream_recycle_tasks(s, c->head, c->tail, c->n);
    *c = (struct chain){NULL, NULL, 0};
}

/* Runs the tasks of claimed (taken off the queue by this worker) in order,
 * without the stream lock. Stops early at an event wait that is not yet
 * satisfied and returns the tasks from there on (NULL when all ran). The
 * tasks run or discarded go to *done; they are counted as completed. */
static struct aclsim__task *run_claimed(struct aclsim__stream *s, struct aclsim__task *claimed,
                                        struct chain *done)
{
    struct aclsim__task *first = claimed, *prev = NULL, *rest = NULL;
    uint64_t n = 0, total = 0;   /* not yet counted as completed; all handled */
    for (struct aclsim__task *t = claimed; t; prev = t, t = t->next) {
        if (t->ahead)   /* (a hint: see struct aclsim__task) */
            aclsim__prefetch_task(t->ahead, false);
        uint64_t trace_start = aclsim__trace_start();   /* TRACE HOOK (see the end of the loop) */
        bool stopped = false;
        if (atomic_load_explicit(&s->discard, memory_order_acquire)) {
            /* Force reset/finalize or aclrtStreamAbort: what has not started never will. */
            struct aclsim__task *wait = s->wait_task;   /* (one atomic load) */
            for (struct aclsim__task *x = t; x; x = x->next) {
                if (x == wait)
                    s->wait_task = NULL;   /* (a woken wait: see discard_queued) */
                n++;
                total++;
            }
            prev = aclsim__discard_tasks(t);
            break;
        }
        if (ACLSIM_UNLIKELY(atomic_load_explicit(&s->stopping, memory_order_acquire)) &&
            aclsim__task_stopped(s, t)) {
            /* Stopped by a failure (ACL_STOP_ON_FAILURE) or a device task
             * abort: discarded as if never started. */
            if (t->kind == ACLSIM_TASK_WAIT && s->wait_task == t)
                s->wait_task = NULL;   /* (parked before: stop_stream unparked it) */
            discard_one(t);
            stopped = true;
        } else if (t->kind == ACLSIM_TASK_WAIT) {
            if (!aclsim__wait_ready(s, t)) {
                rest = t;
                if (prev)
                    prev->next = NULL;
                break;
            }
        } else {
            /* User code may block on whoever waits for the tasks before it:
             * report those first. (Copies and memsets are counted in bulk.) */
            bool user_code = t->kind == ACLSIM_TASK_HOST_FUNC || t->kind == ACLSIM_TASK_KERNEL ||
                             t->kind == ACLSIM_TASK_CALLBACK;
            /* Checker hook (race, docs/checker.md): a record or signal tells
             * a host that the tasks before it are done; they are counted
             * first, so that the host's next task finds them completed. */
            bool flush = user_code || (ACLSIM_UNLIKELY(aclsim__checking()) &&
                                       (t->kind == ACLSIM_TASK_RECORD || t->kind == ACLSIM_TASK_SIGNAL));
            if (flush && n) {
                aclsim__count_done(s, n);
                n = 0;
            }
            if (user_code)
                aclsim__tls_stream = s;   /* lets the runtime refuse waits on itself */
            execute(s, t);
            if (t->ran)
                atomic_store_explicit(t->ran, true, memory_order_release);
            if (user_code)
                aclsim__tls_stream = NULL;
        }
        if (ACLSIM_UNLIKELY(trace_start))
            aclsim__trace_task(s, t, trace_start, stopped);   /* TRACE HOOK: a slice per task */
        task_release(t);
        n++;
        total++;
    }
    if (prev)
        chain_append(done, first, prev, total);
    if (n)
        aclsim__count_done(s, n);
    return rest;
}

/* A worker runs stream s: it claims everything queued with one lock, runs it
 * without the lock, and repeats (up to BATCH tasks, for fairness between
 * streams). A waiting event parks the stream on the event. */
/* Counts the tasks another thread discarded while this worker had claimed
 * tasks in flight (discard_queued in stream.c). completed must count a
 * prefix of the stream: the discarded tasks come after the claimed ones, so
 * they count only once those are done. Caller holds s->lock. */
static void flush_discarded(struct aclsim__stream *s)
{
    if (ACLSIM_LIKELY(!s->discarded_pending))
        return;
    atomic_fetch_add(&s->completed, s->discarded_pending);
    s->discarded_pending = 0;
    pthread_cond_broadcast(&s->progress);
}

/* Tasks a host thread may run for a worker (aclsim__host_run): no user code
 * (kernels, host functions, callbacks), no wait (which may park, time out
 * and call exception callbacks). What they do does not depend on the
 * thread: the tracer puts them on their stream's track wherever they run. */
static bool host_safe(const struct aclsim__task *t)
{
    return t->kind != ACLSIM_TASK_KERNEL && t->kind != ACLSIM_TASK_HOST_FUNC &&
           t->kind != ACLSIM_TASK_CALLBACK && t->kind != ACLSIM_TASK_WAIT;
}

/* host: a host thread runs s (aclsim__host_run); it claims only the
 * host_safe tasks at the head and leaves the rest to a worker. */
static void run_stream(struct aclsim__stream *s, bool host)
{
    struct chain done = {NULL, NULL, 0};
    int budget = BATCH;
    bool ran = false;
    pthread_mutex_lock(&s->lock);
    s->state = ACLSIM_STREAM_RUNNING;
    for (;;) {
        flush_discarded(s);   /* nothing claimed is in flight here */
        /* The budget only matters when other streams are waiting for a worker. */
        if (budget <= 0) {
            if (atomic_load_explicit(&s->device->nready, memory_order_relaxed))
                break;
            budget = BATCH;
        }
        /* THE INBOX RULE: the inbox joins the queue, at once the first time
         * round, after a linger once this worker has run what it claimed. */
        if (!s->head && !(ran && !host ? linger(s) : aclsim__stream_take_inbox(s, false)))
            break;
        ran = true;
        struct aclsim__task *claimed = s->head, *last = s->tail;
        if (ACLSIM_UNLIKELY(host)) {
            last = NULL;
            for (struct aclsim__task *t = s->head; t && host_safe(t); t = t->next)
                last = t;
            if (!last)
                break;   /* a worker runs the rest */
            s->head = last->next;
            if (!s->head)
                s->tail = NULL;
            last->next = NULL;
        } else {
            s->head = s->tail = NULL;
        }
        pthread_mutex_unlock(&s->lock);
        /* Counted by their ids (queued tasks have consecutive ids, and the
         * fairness budget needs no more than an estimate), not by a walk
         * along `next`, which would wait for each task's lines in turn. */
        uint32_t nclaimed = last->id - claimed->id + 1;
        budget -= nclaimed == 0 ? 1 : nclaimed < BATCH ? (int)nclaimed : BATCH;
        struct aclsim__task *rest = run_claimed(s, claimed, &done);
        pthread_mutex_lock(&s->lock);
        /* Back to the spares once a batch has gathered, not only when the
         * worker lets go of the stream: a producer pumping tasks into a
         * stream this worker keeps for a long time reuses them instead of
         * calling malloc. (Fewer go back with the end of the run.) */
        if (done.n >= BATCH)
            chain_recycle(s, &done);
        if (rest && (atomic_load(&s->discard) ||
                     (atomic_load(&s->stopping) && aclsim__task_stopped(s, rest)))) {
            /* Discarded (abort, forced reset, finalize) or stopped (failure.c)
             * while we looked at the event: do not park. */
            pthread_mutex_unlock(&s->lock);
            rest = run_claimed(s, rest, &done);   /* discards them (the stopped ones) */
            pthread_mutex_lock(&s->lock);
        }
        if (rest) {
            /* Blocked on an event: the unrun tasks go back in front, in order. */
            struct aclsim__task *end = rest;
            while (end->next)
                end = end->next;
            end->next = s->head;
            if (!s->head)
                s->tail = end;
            s->head = rest;
            if (aclsim__wait_park(s, rest))
                goto out;
            /* completed meanwhile: go on */
        }
    }
    flush_discarded(s);
    bool more = s->head != NULL;
    if (!more) {
        /* One sub_lock round: the inbox taken or the stream marked idle,
         * and the tasks run since the last give-back handed over. */
        more = aclsim__stream_end_run(s, done.head, done.tail, done.n);
        done = (struct chain){NULL, NULL, 0};
    }
    if (more) {
        s->state = ACLSIM_STREAM_QUEUED;
        chain_recycle(s, &done);   /* before letting go of the stream */
        pthread_mutex_unlock(&s->lock);
        aclsim__schedule(s);
        return;
    }
    s->state = ACLSIM_STREAM_IDLE;
    pthread_cond_broadcast(&s->progress);   /* destroy waits for IDLE */
    bool retire = aclsim__stream_idle(s);   /* a force-destroyed stream has drained */
    chain_recycle(s, &done);
    pthread_mutex_unlock(&s->lock);
    if (retire)
        aclsim__stream_retire(s);
    return;
out:
    flush_discarded(s);   /* (a discard also discards what would park: nothing is ahead) */
    chain_recycle(s, &done);
    pthread_mutex_unlock(&s->lock);
}

/* A job on dev->jobs that still has unclaimed indices. Caller holds exec_lock. */
static struct aclsim__job *open_job(struct aclsim__device *dev)
{
    for (struct aclsim__job *j = dev->jobs; j; j = j->next_job)
        if (atomic_load_explicit(&j->next, memory_order_relaxed) < j->count &&
            (!j->max_helpers || j->helpers < j->max_helpers))
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
            aclsim__tls_stream = job->stream;   /* acting for that stream's task */
            work_on(job);
            aclsim__tls_stream = NULL;
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
            run_stream(s, false);
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
            for (struct aclsim__backoff b = aclsim__backoff_start(WORKER_SPIN_NS);
                 atomic_load_explicit(&dev->work_hint, memory_order_acquire) == hint &&
                 aclsim__backoff_wait(&b);)
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

atomic_uint aclsim__cpus = 2;

/* Counts the CPUs the calling thread may run on (the workers it starts
 * inherit its affinity): `taskset -c 0` makes it 1. */
static void cpus_refresh(void)
{
    cpu_set_t set;
    unsigned n = 2;   /* unknown: assume the waiting policy for several cores */
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = (unsigned)CPU_COUNT(&set);
    atomic_store_explicit(&aclsim__cpus, n ? n : 1, memory_order_relaxed);
}

aclError aclsim__executor_start(struct aclsim__device *dev, uint32_t nworkers, const char *api)
{
    cpus_refresh();
    if (!dev->exec_ready) {   /* never destroyed: aclsim__host_run may lock it any time */
        aclsim__adaptive_mutex_init(&dev->exec_lock);
        pthread_cond_init(&dev->exec_wake, NULL);
        __atomic_store_n(&dev->exec_ready, true, __ATOMIC_RELEASE);
    }
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
}

void aclsim__run_job(struct aclsim__device *dev, struct aclsim__job *job)
{
    atomic_store_explicit(&job->next, 0, memory_order_relaxed);
    job->helpers = 0;   /* max_helpers: set by the caller */
    job->stream = aclsim__tls_stream;
    pthread_cond_init(&job->idle, NULL);
    pthread_mutex_lock(&dev->exec_lock);
    job->listed = true;
    job->next_job = dev->jobs;
    dev->jobs = job;
    atomic_fetch_add_explicit(&dev->work_hint, 1, memory_order_release);
    if (dev->sleepers)
        pthread_cond_broadcast(&dev->exec_wake);
    pthread_mutex_unlock(&dev->exec_lock);
    struct aclsim__stream *hs = job->host_stream;
    if (hs) {
        /* A host thread waiting on hs is awake already, while a second
         * worker may first have to be woken: offer it the job (THE HELP
         * RULE), and wake a host sleeping on the stream so it can help. */
        atomic_store(&hs->help_job, job);
        if (atomic_load(&hs->waiters)) {
            pthread_mutex_lock(&hs->lock);
            pthread_cond_broadcast(&hs->progress);
            pthread_mutex_unlock(&hs->lock);
        }
    }

    work_on(job);

    if (hs) {
        /* THE HELP RULE: no host thread touches the job once this returns.
         * A helper is inside one share of the copy at most. */
        atomic_store(&hs->help_job, NULL);
        for (unsigned k = 0; atomic_load(&hs->helping); k++)
            if (k > 64)
                sched_yield();
            else
                aclsim__cpu_relax();
    }

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


bool aclsim__job_help(struct aclsim__stream *s)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&s->help_job, memory_order_relaxed)))
        return false;
    /* THE HELP RULE: counted in helping before reading help_job, so the
     * owner does not return (and free the job) while this thread uses it. */
    atomic_fetch_add(&s->helping, 1);
    struct aclsim__job *job = atomic_load(&s->help_job);
    bool helped = job && atomic_load_explicit(&job->next, memory_order_relaxed) < job->count;
    if (helped)
        work_on(job);   /* chunks of a copy: no user code, no thread state */
    atomic_fetch_sub(&s->helping, 1);
    return helped;
}

bool aclsim__host_run(struct aclsim__stream *s)
{
    pthread_mutex_lock(&s->lock);
    struct aclsim__device *dev = s->device;
    bool queued = s->state == ACLSIM_STREAM_QUEUED;
    pthread_mutex_unlock(&s->lock);
    /* (exec_lock, once made, is never destroyed: locking it is safe even if
     * the device closed since.) */
    if (!queued || !__atomic_load_n(&dev->exec_ready, __ATOMIC_ACQUIRE))
        return false;
    /* Taken off the ready list under exec_lock, s is this thread's as it
     * would be a worker's: the invariants of run_stream hold unchanged. */
    pthread_mutex_lock(&dev->exec_lock);
    struct aclsim__stream **p = &dev->ready_head, *prev = NULL;
    while (*p && *p != s) {
        prev = *p;
        p = &(*p)->next_ready;
    }
    bool mine = *p && !dev->stop;
    if (mine) {
        *p = s->next_ready;
        if (dev->ready_tail == s)
            dev->ready_tail = prev;
        atomic_fetch_sub_explicit(&dev->nready, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&dev->exec_lock);
    if (!mine)
        return false;
    uint64_t before = atomic_load(&s->completed);
    run_stream(s, true);
    return atomic_load(&s->completed) != before;
}
