/*
 * Contexts. Each open device has a default context (shared by every thread
 * that calls aclrtSetDevice on it); aclrtCreateContext adds more, each holding
 * a device reference. The current context is per thread and stored as a
 * handle, so a context destroyed under a thread (device reset) reads as "no
 * current context" (107002) instead of a dangling pointer.
 */
#include "internal.h"

#include <stdlib.h>

static _Thread_local void *tls_current;   /* handle of the current context */

void *aclsim__current_handle(void)
{
    return tls_current;
}

void aclsim__set_current(struct aclsim__context *ctx)
{
    tls_current = ctx ? ctx->handle : NULL;
}

/* A thread without a live current context uses the configured default
 * device (aclInit "defaultDevice"), if any; the runtime holds one reference
 * on it until aclFinalize or a reset closes it. */
static struct aclsim__context *default_device_context(void)
{
    int32_t id = aclsim__config()->default_device;
    if (id < 0)
        return NULL;
    struct aclsim__context *ctx = NULL;
    pthread_mutex_lock(&aclsim__rt.lock);
    struct aclsim__device *dev = &aclsim__devices[id];
    if (atomic_load(&dev->open) && !dev->closing) {
        ctx = dev->default_ctx;
    } else if (aclsim__device_acquire(id, "aclInit defaultDevice") == ACL_SUCCESS) {
        ctx = dev->default_ctx;
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    if (ctx)
        tls_current = ctx->handle;
    return ctx;
}

aclError aclsim__current_context(const char *api, struct aclsim__context **out)
{
    void *h = tls_current;
    struct aclsim__context *ctx = h ? aclsim__handle_get(h, ACLSIM_H_CONTEXT) : NULL;
    if (ACLSIM_UNLIKELY(!ctx))   /* none yet, or destroyed: the default device, if any */
        ctx = default_device_context();
    if (ACLSIM_UNLIKELY(!ctx))
        return aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                            h ? "the current context was destroyed (aclrtDestroyContext, or "
                                "its device was reset); call aclrtSetDevice or "
                                "aclrtSetCurrentContext"
                              : "no current context on this thread; call aclrtSetDevice or "
                                "aclrtSetCurrentContext first");
    *out = ctx;
    return ACL_SUCCESS;
}

/* Caller holds rt.lock. */
/* Context structs are type-stable, like streams: a destroyed context goes to
 * this pool, never back to malloc, so a thread that resolved it just before
 * a reset reads stale but valid memory. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__context *context_pool;

static void context_recycle(struct aclsim__context *ctx)
{
    pthread_mutex_lock(&pool_lock);
    ctx->next_in_device = context_pool;
    context_pool = ctx;
    pthread_mutex_unlock(&pool_lock);
}

aclError aclsim__context_create(struct aclsim__device *dev, bool is_default,
                                struct aclsim__context **out, const char *api)
{
    pthread_mutex_lock(&pool_lock);
    struct aclsim__context *ctx = context_pool;
    if (ctx)
        context_pool = ctx->next_in_device;
    pthread_mutex_unlock(&pool_lock);
    if (!ctx) {
        if (!(ctx = aclsim__calloc(1, sizeof *ctx)))
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating a context");
        pthread_mutex_init(&ctx->lock, NULL);
        pthread_cond_init(&ctx->unlinked, NULL);
    }
    /* Atomic: a call that resolved the struct's previous life may still read
     * it (aclsim__context_device). */
    __atomic_store_n(&ctx->device, dev, __ATOMIC_RELAXED);
    ctx->is_default = is_default;
    atomic_store(&ctx->stop_on_failure, false);
    atomic_store(&ctx->fault, 0);
    ctx->streams = NULL;
    ctx->next_in_device = NULL;
    pthread_mutex_lock(&ctx->lock);
    ctx->sys_param_set = 0;   /* a new context has no system parameters set */
    pthread_mutex_unlock(&ctx->lock);
    atomic_store(&ctx->overflow_addr, NULL);
    struct aclsim__stream *def = NULL;
    aclError err = aclsim__stream_create(ctx, NULL, &def, NULL, api);
    if (err) {
        context_recycle(ctx);
        return err;
    }
    /* Read without a lock by calls that resolved the context's previous life. */
    __atomic_store_n(&ctx->default_stream, def, __ATOMIC_RELEASE);
    ctx->handle = aclsim__handle_new(ACLSIM_H_CONTEXT, ctx);
    if (!ctx->handle) {
        aclsim__stream_destroy(ctx->default_stream, true);
        context_recycle(ctx);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating a context");
    }
    ctx->next_in_device = dev->contexts;
    dev->contexts = ctx;
    *out = ctx;
    return ACL_SUCCESS;
}

/* Destroys a context already taken off its device's list with its handle
 * freed: its streams finish their work (or discard what has not started,
 * with force), then it goes. Called without rt.lock, since stream work may
 * call the runtime. */
void aclsim__context_destroy(struct aclsim__context *ctx, bool force)
{
    pthread_mutex_lock(&ctx->lock);
    while (ctx->streams) {
        struct aclsim__stream *s = ctx->streams;
        /* A stream stays on the list until its destroyer unlinks it (after
         * it drained), so s is valid here. If aclrtDestroyStream won its
         * handle, wait for that thread to finish instead. */
        if (aclsim__handle_free(s->handle)) {
            pthread_mutex_unlock(&ctx->lock);
            aclsim__stream_destroy(s, force);   /* unlinks it */
            pthread_mutex_lock(&ctx->lock);
        } else if (force && !atomic_load(&s->discard)) {
            /* Being destroyed elsewhere (aclrtDestroyStream, or force-
             * destroyed and draining): a forced close discards its queue. */
            aclsim__stream_discard_linked(s, ctx);
        } else {
            pthread_cond_wait(&ctx->unlinked, &ctx->lock);
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    aclsim__stream_destroy(ctx->default_stream, force);
    void *overflow = atomic_exchange(&ctx->overflow_addr, NULL);
    if (overflow)   /* no stream of the context runs any more */
        aclsim__heap_free(&ctx->device->heap, overflow, ACLSIM_ALLOC_MALLOC);
    context_recycle(ctx);
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    static const char api[] = "aclrtCreateContext";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!context)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "context is NULL");
    pthread_mutex_lock(&aclsim__rt.lock);
    bool was_open = deviceId >= 0 && deviceId < ACLSIM_MAX_DEVICES &&
                    atomic_load(&aclsim__devices[deviceId].open);
    aclError err = aclsim__device_acquire(deviceId, api);
    struct aclsim__context *ctx = NULL;
    if (!err) {
        err = aclsim__context_create(&aclsim__devices[deviceId], false, &ctx, api);
        if (err)
            aclsim__device_release(deviceId, false, api);
    }
    void *created[2] = {NULL, NULL};   /* default streams, for the stream state callbacks */
    if (!err) {
        aclsim__set_current(ctx);   /* as in CANN: the new context becomes current */
        *context = ctx->handle;
        if (!was_open)
            created[0] = aclsim__stream_announce(aclsim__devices[deviceId].default_ctx->default_stream);
        created[1] = aclsim__stream_announce(ctx->default_stream);
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    aclsim__stream_state_notify(created[0], true);
    aclsim__stream_state_notify(created[1], true);
    return err;
}

aclError aclrtDestroyContext(aclrtContext context)
{
    static const char api[] = "aclrtDestroyContext";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!context)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "context is NULL");
    pthread_mutex_lock(&aclsim__rt.lock);
    struct aclsim__context *ctx = aclsim__handle_get(context, ACLSIM_H_CONTEXT);
    aclError err = ACL_SUCCESS;
    if (!ctx) {
        err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                           "context %p is not a live context (destroyed, or never created)",
                           context);
    } else if (aclsim__tls_stream && aclsim__tls_stream->context == ctx) {
        err = aclsim__refuse_self_wait(api, "a stream of this context");
    } else if (ctx->is_default) {
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           "context %p is the default context of device %d; it is released "
                           "by aclrtResetDevice", context, ctx->device->id);
    } else {
        struct aclsim__device *dev = ctx->device;
        for (struct aclsim__context **p = &dev->contexts; *p; p = &(*p)->next_in_device)
            if (*p == ctx) {
                *p = ctx->next_in_device;
                break;
            }
        aclsim__handle_free(ctx->handle);
        dev->detached++;   /* a reset must keep the workers until this one drains */
        pthread_mutex_unlock(&aclsim__rt.lock);
        aclsim__context_destroy(ctx, false);
        pthread_mutex_lock(&aclsim__rt.lock);
        dev->detached--;
        pthread_cond_broadcast(&aclsim__rt.changed);
        aclsim__device_release(dev->id, false, api);   /* the context's reference */
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    return err;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
    static const char api[] = "aclrtSetCurrentContext";
    ACLSIM_REQUIRE_INIT(api);
    if (!context)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "context is NULL");
    struct aclsim__context *ctx = aclsim__handle_get(context, ACLSIM_H_CONTEXT);
    if (!ctx)
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "context %p is not a live context (destroyed, or never created)",
                            context);
    tls_current = context;
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    static const char api[] = "aclrtGetCurrentContext";
    ACLSIM_REQUIRE_INIT(api);
    if (!context)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "context is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    if (!err)
        *context = ctx->handle;
    return err;
}

/* After fork(), in the child (internal.h, THE FORK RULE). A context of the
 * inherited session: new synchronisation, its streams forgotten, pooled. */
void aclsim__context_forget_after_fork(struct aclsim__context *ctx)
{
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_cond_init(&ctx->unlinked, NULL);
    while (ctx->streams) {
        struct aclsim__stream *s = ctx->streams;
        ctx->streams = s->next_in_context;
        aclsim__stream_forget_after_fork(s);
    }
    if (ctx->default_stream)
        aclsim__stream_forget_after_fork(ctx->default_stream);
    context_recycle(ctx);
}

/* The pool: a new lock, and new synchronisation for every pooled context. */
void aclsim__contexts_forget_after_fork(void)
{
    pthread_mutex_init(&pool_lock, NULL);
    for (struct aclsim__context *c = context_pool; c; c = c->next_in_device) {
        pthread_mutex_init(&c->lock, NULL);
        pthread_cond_init(&c->unlinked, NULL);
    }
}
