/*
 * Submission: the one place tasks enter a stream (aclsim__submit), the
 * takes of the queue side (THE INBOX RULE, internal.h), and the spare tasks
 * submits are made of (THE SPARES, below).
 *
 * A submit appends its task to the stream's inbox under sub_lock; the inbox
 * moves to the queue, head..tail, under the stream's lock, once per batch:
 * by whoever runs the stream (a worker, or a host thread on one CPU), by the
 * submit that takes an idle stream out of IDLE, and by discards, destroys
 * and busy checks (aclsim__stream_take_inbox, aclsim__stream_end_run; all
 * through detach_inbox). Stream lifetimes, lookups and waits are stream.c's.
 */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

/* ---- THE SPARES ----------------------------------------------------------- */

/* THE SPARES. Finished tasks a stream keeps for reuse: up to SPARE_MAX
 * each, and beyond that as many as a process-wide budget of SPARE_EXTRA_MAX
 * allows. A producer pumping thousands of tasks ahead of the worker then
 * reuses them instead of calling malloc and free for each, while a burst of
 * a million queued tasks does not stay allocated.
 *
 * The queue side gives finished tasks back a chain at a time (lock held: one
 * giver at a time), pushing it onto `returned`, a lock-free stack (or, at
 * the end of a run, straight into an empty in_spare: aclsim__stream_end_run); a
 * submitter (sub_lock held: one taker at a time) takes the whole stack with
 * one exchange into in_spare when that runs dry. Neither waits for the
 * other's lock, and as the stack is only ever taken whole, a chain is never
 * taken half (no ABA). nreturned counts the tasks on the stack, for the
 * bound only: a chain given back while the stack is taken may be counted
 * after it went, or not at all, until the next take resets it.
 * spare_charged is what the stream holds from the budget for the stack;
 * taken with it, it becomes in_charged, held until in_spare runs dry (the
 * submit that takes its last task gives it back), so that taken tasks stay
 * within the budget too. */
#define SPARE_MAX 256
#define SPARE_EXTRA_MAX 16384
static atomic_uint spare_extra;   /* spares charged to the budget, all streams */

/* Up to want spares more from the budget: how many were granted. */
static uint32_t budget_take(uint32_t want)
{
    unsigned cur = atomic_load_explicit(&spare_extra, memory_order_relaxed), grant;
    do
        grant = cur >= SPARE_EXTRA_MAX ? 0 : want < SPARE_EXTRA_MAX - cur ? want : SPARE_EXTRA_MAX - cur;
    while (grant && !atomic_compare_exchange_weak_explicit(&spare_extra, &cur, cur + grant,
                                                           memory_order_relaxed, memory_order_relaxed));
    return grant;
}

static void budget_give(uint32_t n)
{
    if (ACLSIM_UNLIKELY(n))
        atomic_fetch_sub_explicit(&spare_extra, n, memory_order_relaxed);
}

/* Takes s's whole stack of spares, and in *charged what s holds of the
 * budget for them (sub_lock held, or s unreachable). */
static struct aclsim__task *take_returned(struct aclsim__stream *s, uint32_t *charged)
{
    struct aclsim__task *list = atomic_exchange_explicit(&s->returned, NULL, memory_order_acquire);
    atomic_store_explicit(&s->nreturned, 0, memory_order_relaxed);
    *charged = ACLSIM_UNLIKELY(atomic_load_explicit(&s->spare_charged, memory_order_relaxed))
                   ? atomic_exchange_explicit(&s->spare_charged, 0, memory_order_relaxed)
                   : 0;
    return list;
}

static void free_tasks(struct aclsim__task *t)
{
    for (struct aclsim__task *next; t; t = next) {
        next = t->next;
        free(t);
    }
}

void aclsim__stream_recycle_tasks(struct aclsim__stream *s, struct aclsim__task *first,
                                  struct aclsim__task *last, uint64_t n)
{
    uint64_t had = atomic_load_explicit(&s->nreturned, memory_order_relaxed);
    if (ACLSIM_UNLIKELY(had + n > SPARE_MAX)) {
        /* Beyond the stream's own SPARE_MAX: what the budget grants is kept,
         * the rest of the chain (from its front) is freed. */
        uint64_t over = had + n - SPARE_MAX, want = over < n ? over : n;
        uint32_t granted = budget_take(want < UINT32_MAX ? (uint32_t)want : UINT32_MAX);
        atomic_fetch_add_explicit(&s->spare_charged, granted, memory_order_relaxed);
        for (uint64_t drop = want - granted; drop; drop--) {
            struct aclsim__task *t = first;
            if (t == last) {   /* (the whole chain) */
                free(t);
                return;
            }
            first = t->next;
            free(t);
            n--;
        }
    }
    struct aclsim__task *top = atomic_load_explicit(&s->returned, memory_order_relaxed);
    do
        last->next = top;
    while (!atomic_compare_exchange_weak_explicit(&s->returned, &top, first, memory_order_release,
                                                  memory_order_relaxed));
    /* (Not a read-modify-write: one giver at a time, and a take's reset
     * racing it only makes the count approximate, as said above.) */
    atomic_store_explicit(&s->nreturned, (uint32_t)(had + n < UINT32_MAX ? had + n : UINT32_MAX),
                          memory_order_relaxed);
}


/* Frees s's spare tasks and gives their budget back (stream.c calls it when
 * the struct goes back to the pool; s->lock held). */
void aclsim__spares_free(struct aclsim__stream *s)
{
    aclsim__sub_lock(s);
    uint32_t charged;
    free_tasks(take_returned(s, &charged));
    budget_give(charged);
    free_tasks(s->in_spare);
    s->in_spare = NULL;
    budget_give(s->in_charged);
    s->in_charged = 0;
    aclsim__sub_unlock(s);
}

/* A spare task for a submit (sub_lock held): one of in_spare, refilled
 * with the whole stack of returned tasks (THE SPARES) when it runs dry; NULL
 * if there is none. */
static struct aclsim__task *spare_task(struct aclsim__stream *s)
{
    struct aclsim__task *t = s->in_spare;
    /* (in_charged is 0 whenever in_spare is empty: the pop that empties it
     * gives the budget back, below, and aclsim__spares_free clears both.) */
    if (!t && atomic_load_explicit(&s->returned, memory_order_relaxed))
        t = take_returned(s, &s->in_charged);
    if (t) {
        /* The next one was last touched by the worker that ran it: fetched
         * for writing now, it is this thread's by the time it is used. */
        struct aclsim__task *next = s->in_spare = t->next;
        if (t->ahead)   /* (a hint: the spare about ACLSIM_AHEAD_TASKS takes on) */
            aclsim__prefetch_task(t->ahead, true);
        if (next) {
            aclsim__prefetch_task(next, true);
        } else if (s->in_charged) {
            /* in_spare is used up: its budget goes back now, before the
             * worker gives these tasks back (else a producer queuing more
             * than the budget's half keeps it, and the worker frees what
             * it gives back: thousands of new tasks per run). */
            budget_give(s->in_charged);
            s->in_charged = 0;
        }
    }
    return t;
}

/* THE SPARES, the submitter's hand: each thread keeps one spare task, taken
 * from the stream it submitted to at the end of that submit, and the next
 * submit (to any stream) fills it before it takes sub_lock. A spare was last
 * touched by the worker that ran it, on another core, and the stores into
 * it wait for its cache lines to come back: made outside sub_lock, they do
 * not keep it held, and a worker taking the inbox finds it free. (While it
 * is held, each try of the worker takes the lock's cache line away from
 * the submitter: on this 2-vCPU VM that alone made 10,000 queued copies
 * 4x slower in some runs, docs/performance.md.) Given back at thread exit
 * (thread.c); a thread whose exit cannot be armed keeps nothing in hand. */
static _Thread_local struct aclsim__task *tls_hand;

void aclsim__submit_thread_exit(void)
{
    free(tls_hand);
    tls_hand = NULL;
}

static void hand_keep(struct aclsim__task *t)
{
    if (ACLSIM_LIKELY(aclsim__thread_keep(ACLSIM_THREAD_HAND)))
        tls_hand = t;
    else
        free(t);   /* nothing would free it at thread exit */
}

/* ---- THE INBOX RULE: the takes of the queue side ------------------------ */

uint64_t aclsim__stream_submitted_now(struct aclsim__stream *s)
{
    aclsim__sub_lock(s);
    uint64_t n = atomic_load_explicit(&s->submitted, memory_order_relaxed);
    aclsim__sub_unlock(s);
    return n;
}

/* Detaches the inbox, its last task in *last (sub_lock held). With
 * go_idle, if there is nothing to take and head is empty, sets idle: the
 * caller is making the stream IDLE. */
static struct aclsim__task *detach_inbox(struct aclsim__stream *s, bool go_idle,
                                         struct aclsim__task **last)
{
    struct aclsim__task *first = s->inbox;
    *last = s->inbox_tail;
    s->inbox = s->inbox_tail = NULL;
    s->inbox_base = atomic_load_explicit(&s->submitted, memory_order_relaxed);
    if (go_idle && !first && !s->head)
        s->idle = true;   /* the next submit queues the stream */
    return first;
}

/* Appends first..last (a detached inbox) to head..tail (lock held). */
static void queue_taken(struct aclsim__stream *s, struct aclsim__task *first,
                        struct aclsim__task *last)
{
    s->taken = last->id;
    if (s->tail)
        s->tail->next = first;
    else
        s->head = first;
    s->tail = last;
}

bool aclsim__stream_take_inbox(struct aclsim__stream *s, bool go_idle)
{
    /* Nothing submitted since the last take: nothing to move. (A submit
     * bumps submitted before it appends, under sub_lock; one under way may be
     * missed here, so whoever makes the stream IDLE looks under sub_lock.) */
    if (!go_idle && !aclsim__stream_pending(s))
        return false;
    struct aclsim__task *last;
    aclsim__sub_lock(s);
    struct aclsim__task *first = detach_inbox(s, go_idle, &last);
    aclsim__sub_unlock(s);
    if (!first)
        return false;
    queue_taken(s, first, last);
    return true;
}

bool aclsim__stream_end_run(struct aclsim__stream *s, struct aclsim__task *first,
                            struct aclsim__task *last, uint64_t n)
{
    struct aclsim__task *in_last;
    aclsim__sub_lock(s);
    struct aclsim__task *in = detach_inbox(s, true, &in_last);
    /* THE SPARES: a few tasks go straight to the submitters when they have
     * none (a round trip's task: no push, and no take at the next submit). */
    bool given = first && !s->in_spare && n <= SPARE_MAX;
    if (given) {
        last->next = NULL;
        s->in_spare = first;
    }
    aclsim__sub_unlock(s);
    if (first && !given)
        aclsim__stream_recycle_tasks(s, first, last, n);
    if (!in)
        return false;
    queue_taken(s, in, in_last);
    return true;
}

/* THE INBOX RULE, the submitter's side: it queued a task of the life
 * `epoch` and cleared idle, and takes the stream out of IDLE. Caller holds s->lock.
 * True if the caller must schedule s; *retire: it must retire s (a detached
 * stream whose tasks were all discarded meanwhile). */
static bool stream_wake(struct aclsim__stream *s, unsigned epoch, bool *retire)
{
    *retire = false;
    if (atomic_load_explicit(&s->epoch, memory_order_relaxed) != epoch)
        return false;   /* discarded, destroyed and reused: the new life owns idle */
    if (s->head || aclsim__stream_pending(s) || aclsim__stream_take_inbox(s, true)) {
        s->state = ACLSIM_STREAM_QUEUED;   /* (its worker takes the inbox) */
        return true;
    }
    /* Discarded meanwhile (abort, force destroy or reset): the stream stays
     * IDLE, idle is set again (take_inbox), and whoever makes a stream IDLE
     * retires it if it was detached. */
    *retire = aclsim__stream_idle(s);
    return false;
}

/* ---- the submit ----------------------------------------------------------- */

/* What a submit writes into its task: the caller's, unlinked and without a
 * hint (task->ahead is set by a later submit, while t is in the inbox). */
static inline void task_fill(struct aclsim__task *t, const struct aclsim__task *task)
{
    *t = *task;
    t->next = NULL;
    t->ahead = NULL;
}

/* The one place tasks enter a stream. Under the stream's sub_lock it checks
 * that the stream is still the one the caller resolved (same epoch) and is
 * not being destroyed: a call racing aclrtDestroyStream, a context destroy, a
 * device reset or aclFinalize gets an error here and nothing is queued, so a
 * task never lands in a recycled stream or on a device without workers. The
 * task goes to the inbox (THE INBOX RULE); a stream that was IDLE is queued
 * on its device by this call. */
aclError aclsim__submit(struct aclsim__sref ref, const struct aclsim__task *task, const char *api,
                        uint64_t *seq_out)
{
    struct aclsim__stream *s = ref.s;
    ACLSIM_SNAPSHOT_GATE(api);   /* no new work while locked for a snapshot */
    /* ==== CAPTURE HOOK (modelri-capture.c): a stream captured into a model runtime
     * instance records the task there instead of queuing it. ==== */
    ACLSIM_CAPTURE_HOOK(ref, task, api, seq_out);
    /* The checker hook below may record a fault on s, which is written under
     * its lock: with checking on, submits hold it too. */
    bool locked = ACLSIM_UNLIKELY(aclsim__checking());
    /* The task in hand is filled before the locks (THE SPARES). */
    struct aclsim__task *t = tls_hand;
    tls_hand = NULL;
    if (ACLSIM_LIKELY(t))
        task_fill(t, task);
    if (locked)
        pthread_mutex_lock(&s->lock);
    aclsim__sub_lock(s);
    enum { GONE = 1, FAULT, NO_MEMORY } refused = 0;
    struct aclsim__context *ctx = __atomic_load_n(&s->context, __ATOMIC_RELAXED);
    if (ACLSIM_UNLIKELY(s->closed || atomic_load_explicit(&s->epoch, memory_order_relaxed) !=
                                         ref.epoch))
        refused = GONE;
    else if (ACLSIM_UNLIKELY(atomic_load_explicit(&ctx->fault, memory_order_relaxed)))
        refused = FAULT;   /* stopped on failure */
    else if (ACLSIM_UNLIKELY(!t)) {
        /* Nothing in hand (this thread's first submit): a spare, or a new task. */
        if ((t = spare_task(s)) || (t = aclsim__malloc(sizeof *t)))
            task_fill(t, task);
        else
            refused = NO_MEMORY;
    }
    if (ACLSIM_UNLIKELY(refused)) {
        /* Reported without the locks (the context's report takes its lock). */
        aclsim__sub_unlock(s);
        if (locked)
            pthread_mutex_unlock(&s->lock);
        if (t)
            hand_keep(t);   /* back in hand, unused */
        if (refused == FAULT)
            return aclsim__context_refuse(ctx, api);
        if (refused == NO_MEMORY)
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory queuing a task");
        if (ref.handle)
            return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                                "stream %p was destroyed while this call was using it", ref.handle);
        return aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                            "the current context was destroyed (aclrtDestroyContext, or its "
                            "device was reset) while this call was using its default stream");
    }
    uint64_t seq = atomic_load_explicit(&s->submitted, memory_order_relaxed) + 1;
    t->id = (uint32_t)seq;
    if (ACLSIM_UNLIKELY(locked))   /* checker hook: count t's memory uses */
        aclsim__check_submitted(s, t);
    /* Counted before it can run: completed never passes submitted. */
    atomic_store_explicit(&s->submitted, seq, memory_order_release);
    if (s->inbox_tail)
        s->inbox_tail->next = t;
    else
        s->inbox = t;
    s->inbox_tail = t;
    /* The hint of the task queued ACLSIM_AHEAD_TASKS submits ago, if it is still
     * in the inbox (nobody else sees it yet): t. */
    struct aclsim__task **back = &s->recent[seq % ACLSIM_AHEAD_TASKS];
    if (seq > s->inbox_base + ACLSIM_AHEAD_TASKS)
        (*back)->ahead = t;
    *back = t;
    struct aclsim__task *hand = spare_task(s);   /* for the next submit (NULL: none spare) */
    bool wake = s->idle;   /* THE INBOX RULE: this call takes the stream out of IDLE */
    s->idle = false;
    if (wake && !locked && pthread_mutex_trylock(&s->lock) == 0) {
        /* Both locks held (taken in order, as a trylock): queue it now, with
         * the inbox already moved, so that whoever runs it next need not
         * take sub_lock for this task. */
        struct aclsim__task *last, *first = detach_inbox(s, false, &last);
        queue_taken(s, first, last);
        s->state = ACLSIM_STREAM_QUEUED;
        aclsim__sub_unlock(s);
        pthread_mutex_unlock(&s->lock);
        aclsim__schedule(s);
        wake = false;
    } else {
        aclsim__sub_unlock(s);
    }
    if (ACLSIM_UNLIKELY(wake)) {
        if (!locked)
            pthread_mutex_lock(&s->lock);
        bool retire;
        wake = stream_wake(s, ref.epoch, &retire);
        pthread_mutex_unlock(&s->lock);
        if (wake)
            aclsim__schedule(s);
        if (retire)
            aclsim__stream_retire(s);
    } else if (locked) {
        pthread_mutex_unlock(&s->lock);
    }
    if (hand)
        hand_keep(hand);   /* (fetched for writing by spare_task) */
    if (ACLSIM_UNLIKELY(aclsim__tracing(ACLSIM_TRACE_API)))
        aclsim__trace_submit(s, ref.epoch, seq);   /* TRACE HOOK: the call -> task arrow */
    if (seq_out)
        *seq_out = seq;
    if (ref.handle)
        aclsim__tls_last_task_id = (uint32_t)seq;
    return ACL_SUCCESS;
}

