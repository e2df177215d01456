/*
 * Waits queued on streams: the machinery shared by event, notify, counting
 * notify and memory waits (the objects supply a struct aclsim__wait_ops).
 *
 * A WAIT task that cannot pass parks its stream: the stream leaves its
 * device's ready list and occupies no worker. It sits on the waited object's
 * queue (struct aclsim__waitq) and, in every case, on the watcher's list. The
 * object wakes it when a record, reset or write lets it pass. The watcher
 * thread (one per process, started with the first parked wait) wakes it when
 * its timeout expires or its device is being reset (the wait then passes and
 * its stream fails: synchronize reports it), and evaluates memory waits,
 * which have no object to wake them: at once when something that writes
 * device memory finishes (the memory guard's release), and every POLL_NS in
 * case memory changed some other way.
 *
 * Invariant: a stream is on the watcher's list iff it is PARKED (both under
 * its lock). Lock order: stream.lock -> object lock; stream.lock -> watch_lock;
 * the watcher only try-locks streams while holding watch_lock; memory guard
 * (exclusive) -> watch_lock.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define POLL_NS 1000000u          /* memory waits: periodic re-check */
#define RETRY_NS 200000u          /* a stream the watcher could not lock */
#define GUARD_WAIT_NS 2000000u    /* the watcher's wait for the memory guard */

atomic_uint aclsim__memory_watched;
static pthread_rwlock_t guard = PTHREAD_RWLOCK_INITIALIZER;   /* glibc: prefers readers */

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cond;
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static struct aclsim__stream *watched;   /* doubly linked by watch_next/prev */
static unsigned pokes;                   /* bumped when the watcher should look again */
static bool watcher_running, watcher_stop;
/* A thread is joining the watcher (watch_lock released meanwhile): others
 * that would stop or join it wait for that (joined) instead of joining the
 * same thread twice. */
static bool watcher_joining;
static pthread_cond_t joined = PTHREAD_COND_INITIALIZER;
static pthread_t watcher;
static atomic_bool aborting[ACLSIM_MAX_DEVICES];

static void watch_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&watch_cond, &a);
    pthread_condattr_destroy(&a);
}

/* ---- wait queues --------------------------------------------------------- */

void aclsim__waitq_push(struct aclsim__waitq *q, struct aclsim__stream *s)
{
    s->next_waiting = NULL;
    if (q->tail)
        q->tail->next_waiting = s;
    else
        q->head = s;
    q->tail = s;
}

bool aclsim__waitq_remove(struct aclsim__waitq *q, struct aclsim__stream *s)
{
    struct aclsim__stream *prev = NULL;
    for (struct aclsim__stream *x = q->head; x; prev = x, x = x->next_waiting) {
        if (x != s)
            continue;
        if (prev)
            prev->next_waiting = x->next_waiting;
        else
            q->head = x->next_waiting;
        if (q->tail == x)
            q->tail = prev;
        return true;
    }
    return false;
}

void aclsim__waitq_release(struct aclsim__waitq *q, bool (*pass)(struct aclsim__task *t),
                           struct aclsim__stream **wake)
{
    struct aclsim__stream *prev = NULL, *x = q->head;
    while (x) {
        struct aclsim__stream *next = x->next_waiting;
        if (pass(x->head)) {   /* a parked stream's head is its wait (stable) */
            if (prev)
                prev->next_waiting = next;
            else
                q->head = next;
            if (q->tail == x)
                q->tail = prev;
            x->next_waiting = *wake;
            *wake = x;
        } else {
            prev = x;
        }
        x = next;
    }
}

/* ---- the watcher's list ---------------------------------------------------- */

/* Caller holds watch_lock. */
static void watch_unlink_locked(struct aclsim__stream *s)
{
    if (!s->watched)
        return;
    if (s->watch_prev)
        s->watch_prev->watch_next = s->watch_next;
    else
        watched = s->watch_next;
    if (s->watch_next)
        s->watch_next->watch_prev = s->watch_prev;
    s->watch_next = s->watch_prev = NULL;
    s->watched = false;
    /* (Not read from head: the parked wait may have been discarded since,
     * by an abort or a reset, leaving head empty.) */
    if (s->watch_polls)
        atomic_fetch_sub_explicit(&aclsim__memory_watched, 1, memory_order_release);
}

static void watch_unlink(struct aclsim__stream *s)
{
    pthread_mutex_lock(&watch_lock);
    watch_unlink_locked(s);
    pthread_mutex_unlock(&watch_lock);
}

static void *watcher_main(void *arg);
static bool device_aborting(const struct aclsim__stream *s);

/* Caller holds watch_lock. */
static void start_watcher_locked(void)
{
    int rc = pthread_create(&watcher, NULL, watcher_main, NULL);
    if (rc == 0)
        watcher_running = true;
    else   /* timeouts and memory polling stay off; objects still wake waits */
        aclsim__log(ACLSIM_LOG_ERROR, "cannot start the wait watcher thread: %s", strerror(rc));
}

/* s->lock held, s just PARKED. */
static void watch_link(struct aclsim__stream *s)
{
    pthread_once(&watch_once, watch_init);
    pthread_mutex_lock(&watch_lock);
    s->watch_prev = NULL;
    s->watch_next = watched;
    if (watched)
        watched->watch_prev = s;
    watched = s;
    s->watched = true;
    s->watch_polls = s->head->u.sync.ops->poll != NULL;
    /* The watcher is needed (and told) only for a deadline, a memory wait or
     * a device being reset; a plain wait costs a list insertion. */
    if (s->wait_deadline || s->watch_polls || device_aborting(s)) {
        if (!watcher_running)
            start_watcher_locked();
        pokes++;
        pthread_cond_signal(&watch_cond);
    }
    pthread_mutex_unlock(&watch_lock);
}

static void poke(void)
{
    pthread_once(&watch_once, watch_init);
    pthread_mutex_lock(&watch_lock);
    pokes++;
    pthread_cond_signal(&watch_cond);
    pthread_mutex_unlock(&watch_lock);
}

void aclsim__memory_guard_shared(void)
{
    pthread_rwlock_rdlock(&guard);
}

void aclsim__memory_guard_release(void)
{
    pthread_rwlock_unlock(&guard);
    poke();
}

bool aclsim__memory_check(struct aclsim__task *t)
{
    /* Counted while it reads, so that writers from now on take the guard. */
    atomic_fetch_add_explicit(&aclsim__memory_watched, 1, memory_order_seq_cst);
    bool ok = false;
    if (pthread_rwlock_trywrlock(&guard) == 0) {
        ok = t->u.sync.ops->poll(t);
        pthread_rwlock_unlock(&guard);
    }
    atomic_fetch_sub_explicit(&aclsim__memory_watched, 1, memory_order_release);
    return ok;
}

/* ---- waking ---------------------------------------------------------------- */

void aclsim__wake(struct aclsim__stream *wake)
{
    while (wake) {
        struct aclsim__stream *s = wake;
        wake = s->next_waiting;
        pthread_mutex_lock(&s->lock);
        watch_unlink(s);
        s->wait_granted = true;   /* it passed (and took what it consumes) */
        s->state = ACLSIM_STREAM_QUEUED;
        pthread_mutex_unlock(&s->lock);
        aclsim__schedule(s);
    }
}

static bool device_aborting(const struct aclsim__stream *s)
{
    return atomic_load_explicit(&aborting[s->device->id], memory_order_acquire);
}

/* Adds ns to now, saturating. */
static uint64_t deadline_after(uint64_t ns)
{
    uint64_t now = aclsim__now_ns();
    return ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
}

bool aclsim__wait_ready(struct aclsim__stream *s, struct aclsim__task *t)
{
    const struct aclsim__wait_ops *ops = t->u.sync.ops;
    bool mine = s->wait_task == t;
    if (mine && s->wait_granted) {   /* woken because it passed: a deadline since is moot */
        s->wait_task = NULL;
        return true;
    }
    if (device_aborting(s)) {
        /* The stream goes with its device: the wait ends so that the reset
         * can drain it (logged; the lifetime rule allows a racing
         * synchronize to see the stream's work done). */
        s->wait_task = NULL;
        aclsim__log(ACLSIM_LOG_WARNING, "a wait for %s on a stream of device %d ended: the "
                    "device is being reset (or aclFinalize called)", ops->what, s->device->id);
        return true;
    }
    if (mine && (s->wait_expired || (s->wait_deadline && aclsim__now_ns() >= s->wait_deadline))) {
        s->wait_task = NULL;
        /* A failed task (failure.c): reported by the next synchronize,
         * stops the context in ACL_STOP_ON_FAILURE mode, exception callbacks. */
        struct aclsim__fault_detail d = {.args = NULL};
        snprintf(d.why, sizeof d.why, "a wait for %s timed out after %u s", ops->what,
                 t->u.sync.timeout_s);
        aclsim__task_failed(s, t, ACL_ERROR_RT_WAIT_TIMEOUT, &d);
        return true;
    }
    if (!ops->ready(t))
        return false;
    s->wait_task = NULL;
    return true;
}

bool aclsim__wait_park(struct aclsim__stream *s, struct aclsim__task *t)
{
    const struct aclsim__wait_ops *ops = t->u.sync.ops;
    if (s->wait_task != t) {   /* first time this wait parks: its timeout starts */
        s->wait_task = t;
        s->wait_expired = false;
        s->wait_granted = false;
        s->wait_deadline = t->u.sync.timeout_s
                               ? deadline_after((uint64_t)t->u.sync.timeout_s * 1000000000u)
                               : 0;
    }
    if (device_aborting(s) || (s->wait_deadline && aclsim__now_ns() >= s->wait_deadline))
        return false;   /* the worker goes on and wait_ready fails it */
    /* Counted before the memory is first read: writers from here on take
     * the guard (see memop.c). */
    if (ops->poll)
        atomic_fetch_add_explicit(&aclsim__memory_watched, 1, memory_order_seq_cst);
    if (!ops->park(t, s)) {   /* it passed meanwhile, and took what it consumes */
        if (ops->poll)
            atomic_fetch_sub_explicit(&aclsim__memory_watched, 1, memory_order_release);
        s->wait_granted = true;
        return false;
    }
    watch_link(s);
    return true;
}

bool aclsim__wait_unpark(struct aclsim__stream *s)
{
    struct aclsim__task *t = s->head;
    if (!t || t != s->wait_task)
        return false;   /* its wait was discarded while its object was waking it: still being woken */
    const struct aclsim__wait_ops *ops = t->u.sync.ops;
    if (ops->unpark && !ops->unpark(t, s))
        return false;   /* its object is waking it */
    watch_unlink(s);
    return true;
}

/* ---- the watcher ------------------------------------------------------------ */

/* One look at every parked wait. Caller holds watch_lock (and the memory
 * guard exclusively if have_guard). Fires what expired, is aborted or (memory
 * waits) may pass; returns them on *wake and when to look again. */
static uint64_t scan(bool have_guard, struct aclsim__stream **wake)
{
    uint64_t now = aclsim__now_ns(), next = UINT64_MAX;
    for (struct aclsim__stream *s = watched, *n; s; s = n) {
        n = s->watch_next;
        bool expired = s->wait_deadline && now >= s->wait_deadline;
        bool abort = device_aborting(s);
        /* Listed, so PARKED. (Its head is the wait, s->wait_task, except
         * when an abort or a reset discarded the wait while its object was
         * waking it: then wait_task is NULL and head empty or a later task,
         * until aclsim__wake, on its way, unlinks it.) */
        bool memory = s->watch_polls;
        if (!expired && !abort && !memory) {
            if (s->wait_deadline && s->wait_deadline < next)
                next = s->wait_deadline;
            continue;
        }
        if (memory && !expired && !abort && !have_guard) {
            next = now + RETRY_NS < next ? now + RETRY_NS : next;
            continue;
        }
        if (pthread_mutex_trylock(&s->lock)) {
            next = now + RETRY_NS < next ? now + RETRY_NS : next;
            continue;
        }
        struct aclsim__task *t = s->head;
        if (!t || t != s->wait_task) {   /* discarded while being woken (see above) */
            pthread_mutex_unlock(&s->lock);
            continue;
        }
        const struct aclsim__wait_ops *ops = t->u.sync.ops;
        bool fire = false;
        if (expired || abort) {
            fire = !ops->unpark || ops->unpark(t, s);   /* false: being woken */
            s->wait_expired = fire;
        } else {
            fire = ops->poll(t);
            if (!fire && now + POLL_NS < next)
                next = now + POLL_NS;
        }
        if (fire) {
            watch_unlink_locked(s);
            s->wait_granted = !s->wait_expired;   /* a memory wait saw its value */
            s->state = ACLSIM_STREAM_QUEUED;
            s->next_waiting = *wake;
            *wake = s;
        } else if (expired || abort) {
            next = now + RETRY_NS < next ? now + RETRY_NS : next;
        }
        pthread_mutex_unlock(&s->lock);
    }
    return next;
}

static void *watcher_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&watch_lock);
    for (;;) {
        while (!watcher_stop && !watched)
            pthread_cond_wait(&watch_cond, &watch_lock);
        if (watcher_stop)
            break;
        unsigned seen = pokes;
        bool memory = atomic_load(&aclsim__memory_watched) != 0;
        pthread_mutex_unlock(&watch_lock);
        bool have_guard = false;
        if (memory) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);   /* pthread_rwlock_timedwrlock's clock */
            ts.tv_nsec += GUARD_WAIT_NS;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            have_guard = pthread_rwlock_timedwrlock(&guard, &ts) == 0;
        }
        pthread_mutex_lock(&watch_lock);
        struct aclsim__stream *wake = NULL;
        uint64_t next = scan(have_guard, &wake);
        pthread_mutex_unlock(&watch_lock);
        if (have_guard)
            pthread_rwlock_unlock(&guard);
        for (struct aclsim__stream *s = wake, *n; s; s = n) {
            n = s->next_waiting;
            aclsim__schedule(s);
        }
        pthread_mutex_lock(&watch_lock);
        if (pokes == seen && !watcher_stop && watched) {
            if (next == UINT64_MAX) {
                pthread_cond_wait(&watch_cond, &watch_lock);
            } else {
                struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
                pthread_cond_timedwait(&watch_cond, &watch_lock, &ts);
            }
        }
    }
    pthread_mutex_unlock(&watch_lock);
    return NULL;
}

void aclsim__waits_abort_device(struct aclsim__device *dev)
{
    atomic_store_explicit(&aborting[dev->id], true, memory_order_release);
    pthread_once(&watch_once, watch_init);
    pthread_mutex_lock(&watch_lock);
    if (watched && !watcher_running)
        start_watcher_locked();
    pokes++;
    pthread_cond_signal(&watch_cond);
    pthread_mutex_unlock(&watch_lock);
}

/* Stops and joins the watcher thread; caller holds watch_lock (released
 * while joining). */
static void stop_watcher_locked(void)
{
    while (watcher_joining)
        pthread_cond_wait(&joined, &watch_lock);
    if (!watcher_running)
        return;
    watcher_stop = true;
    watcher_joining = true;
    pthread_t thread = watcher;
    pthread_cond_signal(&watch_cond);
    pthread_mutex_unlock(&watch_lock);
    pthread_join(thread, NULL);
    pthread_mutex_lock(&watch_lock);
    watcher_running = false;
    watcher_stop = false;   /* the next parked wait starts it again */
    watcher_joining = false;
    pthread_cond_broadcast(&joined);
}

void aclsim__waits_resume_device(struct aclsim__device *dev)
{
    atomic_store_explicit(&aborting[dev->id], false, memory_order_release);
    /* Nothing parked any more: the watcher goes with the device's workers. */
    pthread_once(&watch_once, watch_init);
    pthread_mutex_lock(&watch_lock);
    if (!watched) {
        stop_watcher_locked();
        if (watched)   /* a wait parked while it stopped */
            start_watcher_locked();
    }
    pthread_mutex_unlock(&watch_lock);
}

void aclsim__waits_finalize(void)
{
    pthread_once(&watch_once, watch_init);
    pthread_mutex_lock(&watch_lock);
    stop_watcher_locked();
    pthread_mutex_unlock(&watch_lock);
}

/* After fork(), in the child (internal.h, THE FORK RULE): the watcher thread
 * and the parked streams are the parent's; the child starts with none. */
void aclsim__waits_forget_after_fork(void)
{
    pthread_mutex_init(&watch_lock, NULL);
    pthread_rwlock_init(&guard, NULL);
    pthread_once(&watch_once, watch_init);
    watched = NULL;
    watcher_running = watcher_stop = watcher_joining = false;
    pthread_cond_init(&joined, NULL);
    atomic_store(&aclsim__memory_watched, 0);
    for (int i = 0; i < ACLSIM_MAX_DEVICES; i++)
        atomic_store(&aborting[i], false);
}
