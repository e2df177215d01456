/*
 * Streams: creation, destruction, lookup, submission and waiting.
 *
 * A stream is an in-order queue of tasks run by its device's executor
 * (executor.c). Stream structs are type-stable (pooled, never freed), so a
 * thread that looked a stream up can always lock it and find out whether it
 * is still the stream it looked up (see aclsim__submit).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HOST_SPIN_NS 20000      /* a host thread waiting for a stream */

/* ---- streams ------------------------------------------------------------ */

/* Stream structs are type-stable: a destroyed stream goes to this pool and is
 * reused by a later aclrtCreateStream, never freed. A thread still holding a
 * pointer to it (a call that resolved it just before a destroy, a waiter woken
 * by the destroy) thus never touches freed memory: it locks the struct and
 * sees from `epoch` and `closed` that its stream is gone (aclsim__submit), and
 * since submitted/completed keep counting across reuse, a sequence number it
 * waits for is already reached. The pool holds at most the peak number of
 * streams; pooled structs keep no spare tasks. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__stream *stream_pool;

/* Most finished tasks a stream keeps for reuse; beyond that they are freed,
 * so a burst of a million queued tasks does not stay allocated. */
#define SPARE_MAX 256

/* Frees spare tasks of s beyond keep. Caller holds s->lock. */
static void trim_spares(struct aclsim__stream *s, uint32_t keep)
{
    while (s->nspare > keep) {
        struct aclsim__task *t = s->spare;
        s->spare = t->next;
        s->nspare--;
        free(t);
    }
}

void aclsim__stream_recycle_tasks(struct aclsim__stream *s, struct aclsim__task *first,
                                  struct aclsim__task *last, uint64_t n)
{
    last->next = s->spare;
    s->spare = first;
    s->nspare += (uint32_t)(n < UINT32_MAX ? n : UINT32_MAX);
    if (ACLSIM_UNLIKELY(s->nspare > SPARE_MAX))
        trim_spares(s, SPARE_MAX);
}

static void stream_unref(struct aclsim__stream *s)
{
    if (atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    pthread_mutex_lock(&s->lock);
    trim_spares(s, 0);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&pool_lock);
    s->next_in_context = stream_pool;
    stream_pool = s;
    pthread_mutex_unlock(&pool_lock);
}

aclError aclsim__stream_create(struct aclsim__context *ctx, const void *ctx_handle,
                               struct aclsim__stream **out, void **handle_out, const char *api)
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
        aclsim__adaptive_mutex_init(&s->lock);
        pthread_cond_init(&s->progress, NULL);
    }
    /* A reused struct keeps its lock, condition variable and counters
     * (submitted == completed; late waiters may still count in waiters and
     * hurry). It gets a new epoch: calls that resolved its previous life
     * cannot submit to this one. */
    pthread_mutex_lock(&s->lock);
    atomic_fetch_add_explicit(&s->epoch, 1, memory_order_seq_cst);
    s->closed = false;
    s->handle = NULL;
    __atomic_store_n(&s->context, ctx, __ATOMIC_RELAXED);
    s->device = aclsim__context_device(ctx);
    s->head = s->tail = NULL;
    s->state = ACLSIM_STREAM_IDLE;
    s->next_ready = s->next_waiting = s->next_in_context = NULL;
    s->prev_in_context = NULL;
    atomic_store(&s->sat_mode, atomic_load(&aclsim__context_device(ctx)->sat_mode));   /* overflow.c */
    atomic_store(&s->overflow_check, true);
    atomic_store(&s->discard, false);
    atomic_store(&s->refs, 1);
    s->wait_task = NULL;        /* wait.c */
    s->failure = ACL_SUCCESS;
    pthread_mutex_unlock(&s->lock);
    if (ctx_handle) {
        s->handle = aclsim__handle_new(ACLSIM_H_STREAM, s);
        if (!s->handle) {
            stream_unref(s);
            return aclsim__fail(ACL_ERROR_RT_NO_STREAM_RESOURCE, api,
                                "out of memory creating a stream");
        }
        /* The context's handle is freed before it is destroyed (and before
         * its struct can be reused): checked under its lock, a live handle
         * means the destroyer will find this stream on the list. */
        pthread_mutex_lock(&ctx->lock);
        if (ACLSIM_UNLIKELY(aclsim__handle_get(ctx_handle, ACLSIM_H_CONTEXT) != ctx)) {
            pthread_mutex_unlock(&ctx->lock);
            aclsim__handle_free(s->handle);
            stream_unref(s);
            return aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                                "the current context was destroyed (aclrtDestroyContext, or "
                                "its device was reset) while this call was using it");
        }
        /* Once on the list, a racing context destroy may destroy s and its
         * struct start a new life: the caller gets the handle from here. */
        if (handle_out)
            *handle_out = s->handle;
        s->next_in_context = ctx->streams;
        if (ctx->streams)
            ctx->streams->prev_in_context = s;
        ctx->streams = s;
        pthread_mutex_unlock(&ctx->lock);
    }
    *out = s;
    return ACL_SUCCESS;
}

/* Takes s off its context's list in O(1), and tells whoever destroys the
 * context that it is gone. */
static void unlink_stream(struct aclsim__stream *s)
{
    struct aclsim__context *ctx = s->context;
    pthread_mutex_lock(&ctx->lock);
    if (s->prev_in_context)
        s->prev_in_context->next_in_context = s->next_in_context;
    else
        ctx->streams = s->next_in_context;
    if (s->next_in_context)
        s->next_in_context->prev_in_context = s->prev_in_context;
    s->next_in_context = s->prev_in_context = NULL;
    pthread_cond_broadcast(&ctx->unlinked);
    pthread_mutex_unlock(&ctx->lock);
}

/* Discards every task of s that has not started (force destroy): a worker
 * running the stream discards the rest of what it claimed after the task it
 * is running; a parked stream is taken off its event first. Caller holds
 * s->lock; it is released and taken again. */
static void discard_queued(struct aclsim__stream *s)
{
    atomic_store(&s->discard, true);
    if (s->state == ACLSIM_STREAM_PARKED && aclsim__wait_unpark(s))
        s->state = ACLSIM_STREAM_IDLE;   /* unlinked: nobody will wake it */
    struct aclsim__task *queued = s->head;
    s->head = s->tail = NULL;
    pthread_mutex_unlock(&s->lock);
    uint64_t n = 0;
    for (struct aclsim__task *t = queued; t; t = t->next)
        n++;
    struct aclsim__task *last = aclsim__discard_tasks(queued);
    pthread_mutex_lock(&s->lock);
    if (last)
        aclsim__stream_recycle_tasks(s, queued, last, n);
    pthread_mutex_unlock(&s->lock);
    aclsim__count_done(s, n);
    pthread_mutex_lock(&s->lock);
}

void aclsim__stream_destroy(struct aclsim__stream *s, bool force)
{
    pthread_mutex_lock(&s->lock);
    s->closed = true;   /* from here on aclsim__submit refuses this stream */
    if (force)
        discard_queued(s);
    /* Wait until no worker holds or will take the stream. */
    atomic_fetch_add(&s->waiters, 1);
    while (s->head || s->state != ACLSIM_STREAM_IDLE)
        pthread_cond_wait(&s->progress, &s->lock);
    atomic_fetch_sub(&s->waiters, 1);
    pthread_mutex_unlock(&s->lock);
    /* Only now does it leave its context's list: aclsim__device_synchronize
     * (and so aclrtBinaryUnLoad) still sees it while it drains. */
    if (s->handle)
        unlink_stream(s);
    stream_unref(s);
}

aclError aclsim__stream_resolve(aclrtStream stream, const char *api,
                                struct aclsim__context **ctx_out, struct aclsim__sref *out)
{
    /* A caller that already resolved the current context passes it in. */
    struct aclsim__context *ctx = ctx_out ? *ctx_out : NULL;
    aclError err = ctx ? ACL_SUCCESS : aclsim__current_context(api, &ctx);
    if (err)
        return err;
    struct aclsim__stream *s;
    uint32_t epoch;
    if (!stream) {
        s = __atomic_load_n(&ctx->default_stream, __ATOMIC_ACQUIRE);
        epoch = atomic_load(&s->epoch);
        /* The context may have been destroyed and its struct reused since
         * it was resolved: then s is not its default stream any more. */
        if (ACLSIM_UNLIKELY(aclsim__handle_get(aclsim__current_handle(), ACLSIM_H_CONTEXT) != ctx))
            return aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                                "the current context was destroyed (aclrtDestroyContext, or "
                                "its device was reset) while this call was using it");
    } else {
        s = aclsim__handle_get(stream, ACLSIM_H_STREAM);
        if (ACLSIM_UNLIKELY(!s))
            return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                                "stream %p is not a live stream (destroyed, or never created)",
                                stream);
        epoch = atomic_load(&s->epoch);
        /* Read the epoch, then check the handle is still live: a struct
         * reused in between has a new epoch, and its old handle is dead. */
        if (ACLSIM_UNLIKELY(aclsim__handle_get(stream, ACLSIM_H_STREAM) != s))
            return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                                "stream %p was destroyed while this call was using it", stream);
        struct aclsim__context *owner = __atomic_load_n(&s->context, __ATOMIC_RELAXED);
        if (ACLSIM_UNLIKELY(owner != ctx))
            return aclsim__fail(ACL_ERROR_RT_STREAM_CONTEXT, api,
                                "stream %p belongs to a context of device %d, not to the "
                                "current context (device %d)", stream, aclsim__context_device(owner)->id,
                                aclsim__context_device(ctx)->id);
    }
    if (ctx_out)
        *ctx_out = ctx;
    *out = (struct aclsim__sref){s, epoch, stream};
    return ACL_SUCCESS;
}

/* The one place tasks enter a stream. Under the stream's lock it checks that
 * the stream is still the one the caller resolved (same epoch) and is not
 * being destroyed: a call racing aclrtDestroyStream, a context destroy, a
 * device reset or aclFinalize gets an error here and nothing is queued, so a
 * task never lands in a recycled stream or on a device without workers. */
aclError aclsim__submit(struct aclsim__sref ref, const struct aclsim__task *task, const char *api,
                        uint64_t *seq_out)
{
    struct aclsim__stream *s = ref.s;
    aclError gate = aclsim__snapshot_check(api);   /* no new work while locked for a snapshot */
    if (gate)
        return gate;
    pthread_mutex_lock(&s->lock);
    if (ACLSIM_UNLIKELY(s->closed || atomic_load_explicit(&s->epoch, memory_order_relaxed) !=
                                         ref.epoch)) {
        pthread_mutex_unlock(&s->lock);
        if (ref.handle)
            return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                                "stream %p was destroyed while this call was using it",
                                ref.handle);
        return aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                            "the current context was destroyed (aclrtDestroyContext, or its "
                            "device was reset) while this call was using its default stream");
    }
    struct aclsim__task *t = s->spare;
    if (t) {
        s->spare = t->next;
        s->nspare--;
    } else if (!(t = aclsim__malloc(sizeof *t))) {
        pthread_mutex_unlock(&s->lock);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory queuing a task");
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
        aclsim__schedule(s);
    if (seq_out)
        *seq_out = seq;
    return ACL_SUCCESS;
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
    for (struct aclsim__backoff b = aclsim__backoff_start(HOST_SPIN_NS); !done && aclsim__backoff_wait(&b);) {
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
    aclError failure = ACL_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        aclsim__stream_wait(list[i].s, list[i].seq, -1);
        if (!failure)   /* a failed task (wait.c) on any of its streams */
            failure = aclsim__stream_take_failure(list[i].s, api);
        stream_unref(list[i].s);
    }
    free(list);
    return failure;
}

/* ---- stream API ---------------------------------------------------------- */

static aclError create_stream(aclrtStream *stream, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError gate = aclsim__snapshot_check(api);
    if (gate)
        return gate;
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    struct aclsim__stream *s = NULL;
    void *handle = NULL;
    if (!err && !(err = aclsim__stream_create(ctx, aclsim__current_handle(), &s, &handle, api)))
        *stream = handle;
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
    aclError gate = aclsim__snapshot_check(api);
    if (gate)
        return gate;
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
    struct aclsim__sref ref;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &ref);
    if (err)
        return err;
    struct aclsim__stream *s = ref.s;
    if (ACLSIM_UNLIKELY(s == aclsim__tls_stream))
        return aclsim__refuse_self_wait(api, "this stream");
    if (!aclsim__stream_wait(s, submitted_of(s), timeout))
        return aclsim__fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, api,
                            "stream %p still has work after %d ms", stream, timeout);
    if ((err = aclsim__stream_take_failure(s, api)))   /* a failed task (wait.c) */
        return err;
    return aclsim__kernel_failure_take(s, ref.epoch, NULL, api);
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


/* After fork(), in the child (internal.h, THE FORK RULE). New
 * synchronisation and no waiters (the parent's threads are gone). */
static void renew_after_fork(struct aclsim__stream *s)
{
    aclsim__adaptive_mutex_init(&s->lock);
    pthread_cond_init(&s->progress, NULL);
    atomic_store(&s->waiters, 0);
    atomic_store(&s->hurry, 0);
}

/* A stream of the inherited session: its queued tasks are dropped without
 * running (their events go with the session), it gets a new epoch (calls
 * that resolved it cannot submit) and goes back to the pool. */
void aclsim__stream_forget_after_fork(struct aclsim__stream *s)
{
    renew_after_fork(s);
    for (struct aclsim__task *t = s->head, *next; t; t = next) {
        next = t->next;
        if (t->kind == ACLSIM_TASK_KERNEL)
            free(t->u.kernel.argbuf);
        free(t);
    }
    s->head = s->tail = NULL;
    s->closed = true;
    s->state = ACLSIM_STREAM_IDLE;
    atomic_fetch_add(&s->epoch, 1);
    atomic_store(&s->completed, atomic_load(&s->submitted));
    atomic_store(&s->refs, 1);
    stream_unref(s);   /* trims the spares, pools it */
}

/* The pool: a new lock, and new synchronisation for every pooled stream. */
void aclsim__streams_forget_after_fork(void)
{
    pthread_mutex_init(&pool_lock, NULL);
    for (struct aclsim__stream *s = stream_pool; s; s = s->next_in_context)
        renew_after_fork(s);
}
