/*
 * Streams: creation, destruction, lookup and waiting (submission, and the
 * spare tasks it uses, is submit.c; see stream.h).
 *
 * A stream is an in-order queue of tasks run by its device's executor
 * (executor.c). Stream structs are type-stable (pooled, never freed), so a
 * thread that looked a stream up can always lock it and find out whether it
 * is still the stream it looked up (see aclsim__submit).
 */
#include "stream.h"

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

static void stream_unref(struct aclsim__stream *s)
{
    if (atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    atomic_fetch_sub(&s->device->nstreams, 1);
    pthread_mutex_lock(&s->lock);
    aclsim__spares_free(s);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&pool_lock);
    s->next_in_context = stream_pool;
    stream_pool = s;
    pthread_mutex_unlock(&pool_lock);
}

aclError aclsim__stream_create(struct aclsim__context *ctx, const void *ctx_handle,
                               struct aclsim__stream **out, void **handle_out, const char *api)
{
    /* Counted from here until the struct goes back to the pool (stream_unref). */
    uint32_t live = atomic_fetch_add(&aclsim__context_device(ctx)->nstreams, 1);
    if (ctx_handle && live >= aclsim__streams_max()) {
        atomic_fetch_sub(&aclsim__context_device(ctx)->nstreams, 1);
        return aclsim__fail(ACL_ERROR_RT_NO_STREAM_RESOURCE, api,
                            "device %d already has %u streams (default streams included), the "
                            "most the configured SoC %s supports", aclsim__context_device(ctx)->id, live,
                            aclsim__config()->soc_name);
    }
    pthread_mutex_lock(&pool_lock);
    struct aclsim__stream *s = stream_pool;
    if (s)
        stream_pool = s->next_in_context;
    pthread_mutex_unlock(&pool_lock);
    if (!s) {
        s = aclsim__aligned_alloc(_Alignof(struct aclsim__stream), sizeof *s);
        if (!s) {
            atomic_fetch_sub(&aclsim__context_device(ctx)->nstreams, 1);
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating a stream");
        }
        memset(s, 0, sizeof *s);
        aclsim__adaptive_mutex_init(&s->lock);
        pthread_spin_init(&s->sub_lock, PTHREAD_PROCESS_PRIVATE);
        pthread_cond_init(&s->progress, NULL);
        static atomic_uint next_id;
        s->id = atomic_fetch_add(&next_id, 1);   /* kept by the struct, like CANN's reused ids */
    }
    /* A reused struct keeps its lock, condition variable and counters
     * (submitted == completed; late waiters may still count in waiters and
     * hurry). It gets a new epoch: calls that resolved its previous life
     * cannot submit to this one. */
    pthread_mutex_lock(&s->lock);
    atomic_fetch_add_explicit(&s->epoch, 1, memory_order_seq_cst);
    aclsim__sub_lock(s);
    s->closed = false;
    s->inbox = s->inbox_tail = NULL;
    s->inbox_base = atomic_load(&s->submitted);   /* (recent[] is from the last life) */
    s->idle = true;   /* THE INBOX RULE: the first submit queues it */
    s->taken = (uint32_t)atomic_load(&s->submitted);
    aclsim__sub_unlock(s);
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
    atomic_store(&s->aborting, false);
    atomic_store(&s->stopping, false);
    atomic_store(&s->fault, 0);
    s->failure_mode = ACL_CONTINUE_ON_FAILURE;
    atomic_store(&s->refs, 1);
    s->flags = 0;
    __atomic_store_n(&s->priority, 0, __ATOMIC_RELAXED);
    s->user_tag = s->cache_op_info = 0;
    s->linked = s->detached = false;
    __atomic_store_n(&s->announced, false, __ATOMIC_RELAXED);
    __atomic_store_n(&s->is_default, !ctx_handle, __ATOMIC_RELEASE);   /* (destroy_stream) */
    s->wait_task = NULL;        /* wait.c */
    pthread_mutex_unlock(&s->lock);
    if (!ctx_handle) {
        /* The default stream's handle (aclrtCtxGetCurrentDefaultStream). */
        s->handle = aclsim__handle_new(ACLSIM_H_STREAM, s);
        if (!s->handle) {
            stream_unref(s);
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating a stream");
        }
    } else {
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
        s->linked = true;
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
    s->linked = false;
    pthread_cond_broadcast(&ctx->unlinked);
    pthread_mutex_unlock(&ctx->lock);
}

/* Discards every task of s that has not started (force reset, aclFinalize,
 * aclrtStreamAbort): a worker running the stream discards the rest of what
 * it claimed after the task it is running; a parked stream is taken off its
 * event first. Caller holds s->lock; it is released and taken again. True if
 * this took a detached stream IDLE: the caller retires it after unlocking. */
static bool discard_queued(struct aclsim__stream *s)
{
    bool retire = false, wake = false;
    atomic_store(&s->discard, true);
    bool unparked = s->state == ACLSIM_STREAM_PARKED && aclsim__wait_unpark(s);
    aclsim__stream_take_inbox(s, false);
    struct aclsim__task *queued = s->head;
    s->head = s->tail = NULL;
    /* A parked (or woken) wait is at head: discarded, it is nobody's wait
     * any more (wait.c reads "being woken" from this; and a later wait
     * reusing its memory must not inherit its deadline or grant). */
    if (queued && s->wait_task == queued)
        s->wait_task = NULL;
    if (unparked) {
        /* Unlinked from its event: nobody else will queue it. Tasks
         * submitted since the inbox was taken go through a worker, which
         * discards them while discard is set. */
        wake = aclsim__stream_take_inbox(s, true);
        s->state = wake ? ACLSIM_STREAM_QUEUED : ACLSIM_STREAM_IDLE;
        if (!wake)
            retire = aclsim__stream_idle(s);
    }
    pthread_mutex_unlock(&s->lock);
    if (wake)
        aclsim__schedule(s);
    uint64_t n = 0;
    for (struct aclsim__task *t = queued; t; t = t->next)
        n++;
    struct aclsim__task *last = aclsim__discard_tasks(queued);
    pthread_mutex_lock(&s->lock);
    if (last)
        aclsim__stream_recycle_tasks(s, queued, last, n);
    if (s->state == ACLSIM_STREAM_RUNNING) {
        /* A worker has earlier tasks in flight: they must count first
         * (completed counts a prefix), so it counts these after them. */
        s->discarded_pending += n;
        return retire;
    }
    pthread_mutex_unlock(&s->lock);
    aclsim__count_done(s, n);
    pthread_mutex_lock(&s->lock);
    return retire;
}

/* True while s has tasks (the inbox moved to head first) or a worker holds
 * it. Caller holds s->lock. */
static bool busy(struct aclsim__stream *s)
{
    aclsim__stream_take_inbox(s, false);
    return s->head || s->state != ACLSIM_STREAM_IDLE;
}

/* Closes s to submissions (THE INBOX RULE: under both locks). Caller holds
 * s->lock. */
static void close_stream(struct aclsim__stream *s)
{
    aclsim__sub_lock(s);
    s->closed = true;   /* from here on aclsim__submit refuses this stream */
    aclsim__sub_unlock(s);
}

void aclsim__stream_destroy(struct aclsim__stream *s, bool force)
{
    aclsim__capture_stream_gone(s);   /* leaves a capture or model binding (modelri-capture.c) */
    if (__atomic_load_n(&s->announced, __ATOMIC_ACQUIRE))
        aclsim__stream_state_notify(s->handle, false);
    if (__atomic_load_n(&s->is_default, __ATOMIC_RELAXED))
        aclsim__handle_free(s->handle);   /* aclrtCtxGetCurrentDefaultStream's handle */
    pthread_mutex_lock(&s->lock);
    close_stream(s);
    if (force)
        (void)discard_queued(s);   /* not detached: this thread holds it */
    /* Wait until no worker holds or will take the stream. */
    atomic_fetch_add(&s->waiters, 1);
    while (busy(s))
        pthread_cond_wait(&s->progress, &s->lock);
    atomic_fetch_sub(&s->waiters, 1);
    pthread_mutex_unlock(&s->lock);
    /* Only now does it leave its context's list: aclsim__device_synchronize
     * (and so aclrtBinaryUnLoad) still sees it while it drains. */
    aclsim__stream_retire(s);
}

void aclsim__stream_retire(struct aclsim__stream *s)
{
    if (s->linked)
        unlink_stream(s);
    stream_unref(s);
}

bool aclsim__stream_idle(struct aclsim__stream *s)
{
    if (!s->detached)
        return false;
    s->detached = false;
    return true;
}

void aclsim__stream_detach(struct aclsim__stream *s)
{
    aclsim__capture_stream_gone(s);   /* leaves a capture or model binding (modelri-capture.c) */
    if (__atomic_load_n(&s->announced, __ATOMIC_ACQUIRE))
        aclsim__stream_state_notify(s->handle, false);
    pthread_mutex_lock(&s->lock);
    close_stream(s);
    if (busy(s)) {
        /* Work queued or running: the worker that drains it retires it. */
        s->detached = true;
        pthread_mutex_unlock(&s->lock);
        return;
    }
    pthread_mutex_unlock(&s->lock);
    aclsim__stream_retire(s);
}

/* Discards s's not-started work unless that is done already; s is held by a
 * reference. */
static void discard_held(struct aclsim__stream *s)
{
    pthread_mutex_lock(&s->lock);
    bool retire = false;
    if (!atomic_load(&s->discard))
        retire = discard_queued(s);
    pthread_mutex_unlock(&s->lock);
    if (retire)
        aclsim__stream_retire(s);
    stream_unref(s);
}

void aclsim__stream_discard_linked(struct aclsim__stream *s, struct aclsim__context *ctx)
{
    atomic_fetch_add(&s->refs, 1);   /* keeps the struct in this life meanwhile */
    pthread_mutex_unlock(&ctx->lock);
    discard_held(s);
    pthread_mutex_lock(&ctx->lock);
}

void aclsim__context_discard_all(struct aclsim__context *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    size_t n = 1;
    for (struct aclsim__stream *s = ctx->streams; s; s = s->next_in_context)
        n++;
    struct aclsim__stream **all = aclsim__malloc(n * sizeof *all);
    if (!all) {   /* then each stream is discarded when its destroy reaches it */
        pthread_mutex_unlock(&ctx->lock);
        return;
    }
    size_t k = 0;
    all[k++] = ctx->default_stream;
    for (struct aclsim__stream *s = ctx->streams; s; s = s->next_in_context)
        all[k++] = s;
    for (size_t i = 0; i < k; i++)
        atomic_fetch_add(&all[i]->refs, 1);
    pthread_mutex_unlock(&ctx->lock);
    for (size_t i = 0; i < k; i++)
        discard_held(all[i]);
    free(all);
}

bool aclsim__stream_abort(struct aclsim__sref ref)
{
    struct aclsim__stream *s = ref.s;
    pthread_mutex_lock(&s->lock);
    if (s->closed || atomic_load_explicit(&s->epoch, memory_order_relaxed) != ref.epoch) {
        pthread_mutex_unlock(&s->lock);
        return false;   /* destroyed since it was resolved */
    }
    atomic_fetch_add(&s->refs, 1);   /* a force destroy meanwhile must not recycle it */
    atomic_fetch_add(&s->aborts, 1);
    atomic_store(&s->aborting, true);
    bool retire = discard_queued(s);   /* (a force destroy meanwhile may detach it) */
    /* Bounded by the task running now (a task that started runs to its end). */
    atomic_fetch_add(&s->waiters, 1);
    while (busy(s)) {
        if (s->head && !s->closed) {
            /* submitted meanwhile: discarded too ("no longer takes effect") */
            retire |= discard_queued(s);
            continue;
        }
        pthread_cond_wait(&s->progress, &s->lock);
    }
    atomic_fetch_sub(&s->waiters, 1);
    if (!s->closed)
        atomic_store(&s->discard, false);   /* open for new work again */
    atomic_store(&s->aborting, false);
    pthread_cond_broadcast(&s->progress);
    pthread_mutex_unlock(&s->lock);
    if (retire)
        aclsim__stream_retire(s);
    stream_unref(s);
    return true;
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

void aclsim__deadline_after(struct timespec *ts, int32_t ms)
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
    bool done = false;
    /* Only a wait without a timeout works for the stream (runs or helps with
     * its tasks): work taken on would keep a timed wait past its timeout. */
    bool may_work = timeout_ms < 0;
    if (may_work && aclsim__one_cpu() && !aclsim__tls_worker && !aclsim__checking()) {
        /* On one CPU a worker would have to be switched in and out for the
         * work: this thread runs what it can itself (no user code). */
        while (!(done = atomic_load_explicit(&s->completed, memory_order_acquire) >= seq) &&
               aclsim__host_run(s))
            ;
        if (done)
            return true;
    }
    atomic_fetch_add(&s->hurry, 1);   /* a lingering worker stops batching */
    for (struct aclsim__backoff b = aclsim__backoff_start(HOST_SPIN_NS);
         !done && aclsim__backoff_wait(&b);) {
        if (may_work && aclsim__job_help(s))   /* a big copy: this thread copies a share */
            b = aclsim__backoff_start(HOST_SPIN_NS);
        done = atomic_load_explicit(&s->completed, memory_order_acquire) >= seq;
    }
    atomic_fetch_sub(&s->hurry, 1);
    if (done)
        return true;
    struct timespec deadline;
    if (timeout_ms >= 0)
        aclsim__deadline_after(&deadline, timeout_ms);
    /* No lost wake-up without a lock on the worker side: this thread
     * increments waiters, then reads completed; a worker increments
     * completed, then reads waiters (both sequentially consistent), so at
     * least one of them sees the other's write. */
    bool ok = true;
    pthread_mutex_lock(&s->lock);
    atomic_fetch_add(&s->waiters, 1);
    while (atomic_load(&s->completed) < seq) {
        if (may_work && atomic_load_explicit(&s->help_job, memory_order_relaxed)) {
            /* woken to help with a big copy (THE HELP RULE) */
            pthread_mutex_unlock(&s->lock);
            bool helped = aclsim__job_help(s);
            pthread_mutex_lock(&s->lock);
            if (helped)
                continue;   /* (else every share is taken: sleep) */
        }
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
    return aclsim__device_drain(dev, -1, NULL, NULL, api);
}

aclError aclsim__device_synchronize_timeout(struct aclsim__device *dev, int32_t timeout_ms,
                                            const char *api)
{
    aclError err = aclsim__device_drain(dev, timeout_ms, NULL, NULL, api);
    if (err == ACL_ERROR_RT_WAIT_TIMEOUT)
        return aclsim__fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, api,
                            "device %d still has work after %d ms", dev->id, timeout_ms);
    return err;
}

aclError aclsim__device_drain(struct aclsim__device *dev, int32_t timeout_ms,
                              void (*visit)(struct aclsim__stream *s, void *arg), void *arg,
                              const char *api)
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
            if (visit)
                visit(s, arg);
            list[n++] = (struct pending){s, submitted_of(s)};
        }
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    uint64_t deadline = aclsim__now_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000u;
    aclError err = ACL_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        int32_t left = -1;
        if (timeout_ms >= 0) {
            uint64_t now = aclsim__now_ns();
            left = now >= deadline ? 0 : (int32_t)((deadline - now + 999999u) / 1000000u);
        }
        if (!err && !aclsim__stream_wait(list[i].s, list[i].seq, left))
            err = ACL_ERROR_RT_WAIT_TIMEOUT;
        stream_unref(list[i].s);
    }
    free(list);
    return err;
}

/* ---- stream API ---------------------------------------------------------- */

aclError aclsim__create_stream_api(aclrtStream *stream, uint32_t flags, uint32_t priority,
                                   const char *api)
{
    ACLSIM_SNAPSHOT_GATE(api);   /* callers checked init and stream */
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    struct aclsim__stream *s = NULL;
    void *handle = NULL;
    if (err || (err = aclsim__stream_create(ctx, aclsim__current_handle(), &s, &handle, api)))
        return err;
    /* The stream is published already: a racing context destroy may have
     * destroyed (even recycled) it. Under its lock, a live handle means it is
     * still this stream, and no destroy can finish meanwhile. */
    pthread_mutex_lock(&s->lock);
    bool live = aclsim__handle_get(handle, ACLSIM_H_STREAM) == s;
    if (live) {
        s->flags = flags;
        __atomic_store_n(&s->priority, priority, __ATOMIC_RELAXED);
        __atomic_store_n(&s->announced, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&s->lock);
    *stream = handle;
    if (live)
        aclsim__stream_state_notify(handle, true);
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
    static const char api[] = "aclrtCreateStream";
    ACLSIM_REQUIRE_INIT(api);
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    /* IPV350 creates streams with aclrtCreateStreamV2 (CANN's table). */
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    return err ? err : aclsim__create_stream_api(stream, 0, 0, api);
}

static aclError destroy_stream(aclrtStream stream, bool force, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stream is NULL (the default stream cannot be destroyed)");
    struct aclsim__stream *s = aclsim__handle_get(stream, ACLSIM_H_STREAM);
    if (s && ACLSIM_UNLIKELY(s == aclsim__tls_stream))
        return aclsim__refuse_self_wait(api, "this stream");
    /* Only the thread that frees the handle destroys the stream. A default
     * stream's handle is refused; the flag belongs to the handle's stream
     * only if the handle is still live after it was read (else a reset
     * destroyed the stream meanwhile, and its struct may now be another
     * context's default stream: the handle is dead, 107017 below). */
    if (s && __atomic_load_n(&s->is_default, __ATOMIC_ACQUIRE) &&
        aclsim__handle_get(stream, ACLSIM_H_STREAM) == s)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stream %p is the default stream of its context (from "
                            "aclrtCtxGetCurrentDefaultStream); it cannot be destroyed", stream);
    /* 107027 while captured, but only while the handle still names the
     * struct (else the stream was destroyed meanwhile and the struct is now
     * another stream, captured: the handle is dead, 107017 below). */
    if (s && aclsim__stream_captured(s) && aclsim__handle_get(stream, ACLSIM_H_STREAM) == s) {
        aclError err = aclsim__capture_refuse_stream(s, api);
        if (err)
            return err;
    }
    if (!s || !aclsim__handle_free(stream))
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "stream %p is not a live stream (destroyed, or never created)", stream);
    /* Force: the handle is gone at once, work already queued still runs. */
    if (force)
        aclsim__stream_detach(s);
    else
        aclsim__stream_destroy(s, false);
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    return destroy_stream(stream, false, "aclrtDestroyStream");
}

aclError aclrtDestroyStreamForce(aclrtStream stream)
{
    static const char api[] = "aclrtDestroyStreamForce";
    ACLSIM_REQUIRE_INIT(api);
    if (!stream)   /* the argument check first, then CANN's table (not on IPV350) */
        return destroy_stream(stream, true, api);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    return err ? err : destroy_stream(stream, true, api);
}

static aclError sync_stream(aclrtStream stream, int32_t timeout, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    struct aclsim__sref ref;
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__stream_resolve(stream, api, &ctx, &ref);
    if (err)
        return err;
    struct aclsim__stream *s = ref.s;
    if (ACLSIM_UNLIKELY(s == aclsim__tls_stream))
        return aclsim__refuse_self_wait(api, "this stream");
    if (aclsim__stream_captured(s)) {   /* 107027 while captured */
        /* (Unless the struct started a new life, a captured stream, since it
         * was resolved.) */
        if (atomic_load(&s->epoch) != ref.epoch)
            return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                                "stream %p was destroyed while this call was using it", stream);
        if ((err = aclsim__capture_refuse_stream(s, api)))
            return err;
    }
    unsigned aborts = atomic_load(&s->aborts);
    bool aborting = atomic_load(&s->aborting);
    if (!aclsim__stream_wait(s, submitted_of(s), timeout))
        return aclsim__fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, api,
                            "stream %p still has work after %d ms", stream, timeout);
    if (ACLSIM_UNLIKELY(aborting || atomic_load(&s->aborts) != aborts))
        return aclsim__fail(ACL_ERROR_RT_STREAM_ABORT, api,
                            "stream %p was aborted (aclrtStreamAbort) while this call waited for "
                            "it: its pending work was discarded", stream);
    aclsim__mempools_after_sync(aclsim__context_device(ctx));   /* pools: release threshold */
    return aclsim__stream_report(ref, api);   /* a task that failed */
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
    aclError err = aclsim__soc_check("aclrtSynchronizeStreamWithTimeout", ACLSIM_ALL_BUT_IPV);
    return err ? err : sync_stream(stream, timeout, "aclrtSynchronizeStreamWithTimeout");
}


/* After fork(), in the child (internal.h, THE FORK RULE). New
 * synchronisation and no waiters (the parent's threads are gone). */
static void renew_after_fork(struct aclsim__stream *s)
{
    aclsim__adaptive_mutex_init(&s->lock);
    pthread_spin_init(&s->sub_lock, PTHREAD_PROCESS_PRIVATE);
    pthread_cond_init(&s->progress, NULL);
    atomic_store(&s->waiters, 0);
    atomic_store(&s->hurry, 0);
    atomic_store(&s->helping, 0);
    atomic_store(&s->help_job, NULL);
}

/* A stream of the inherited session: its queued tasks are dropped without
 * running (their events go with the session), it gets a new epoch (calls
 * that resolved it cannot submit) and goes back to the pool. */
void aclsim__stream_forget_after_fork(struct aclsim__stream *s)
{
    renew_after_fork(s);
    aclsim__stream_take_inbox(s, false);
    for (struct aclsim__task *t = s->head, *next; t; t = next) {
        next = t->next;
        if (t->kind == ACLSIM_TASK_KERNEL)
            free(t->u.kernel.argbuf);
        else if (t->kind == ACLSIM_TASK_CALLBACK)
            t->u.cb.drop(t->u.cb.arg);
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
