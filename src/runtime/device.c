/*
 * Simulated devices. A device is opened by its first aclrtSetDevice (or
 * aclrtCreateContext): its memory range is reserved, its worker pool started
 * and its default context created. It is closed when its reference count
 * drops to zero (aclrtResetDevice) or at once (aclrtResetDeviceForce,
 * aclFinalize): contexts and streams are destroyed, the workers stop, the
 * device's variable instances and memory are discarded.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct aclsim__device aclsim__devices[ACLSIM_MAX_DEVICES];

aclError aclsim__device_check_id(int32_t id, const char *api)
{
    if (id < 0 || (uint32_t)id >= aclsim__config()->visible_count)
        return aclsim__fail(ACL_ERROR_RT_INVALID_DEVICEID, api,
                            "deviceId %d is invalid: %u device(s) are visible (ids 0..%d)", id,
                            aclsim__config()->visible_count,
                            (int)aclsim__config()->visible_count - 1);
    return ACL_SUCCESS;
}

struct aclsim__device *aclsim__device_of(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (a < atomic_load_explicit(&aclsim__device_span.lo, memory_order_relaxed) ||
        a >= atomic_load_explicit(&aclsim__device_span.hi, memory_order_relaxed))
        return NULL;   /* ordinary host memory, mostly: one compare, not a look at each heap */
    uint32_t n = aclsim__config()->visible_count;
    for (uint32_t i = 0; i < n; i++)
        if (aclsim__heap_contains(&aclsim__devices[i].heap, p))
            return &aclsim__devices[i];
    return NULL;
}

static aclError open_device(struct aclsim__device *dev, const char *api)
{
    dev->heap.shareable = true;   /* exportable to other processes (ipc.c) */
    aclError err = aclsim__heap_init(&dev->heap, aclsim__config()->device_memory, api);
    if (err)
        return err;
    err = aclsim__executor_start(dev, aclsim__config()->workers, api);
    if (err) {
        aclsim__heap_destroy(&dev->heap);
        return err;
    }
    atomic_store(&dev->vars_generation, 0);
    aclsim__device_faults_clear(dev->id);
    aclsim__tdt_device_opened(dev->id);   /* its host functions may wait on queues again */
    /* Float overflow (overflow.c): products with INF/NaN support start in
     * that mode, the others saturate; no overflow recorded yet. */
    uint8_t family = aclsim__soc_current()->family;
    atomic_store(&dev->sat_mode, family == ACLSIM_FAMILY_A2 || family == ACLSIM_FAMILY_A3 ||
                                         family == ACLSIM_FAMILY_A5
                                     ? ACL_RT_OVERFLOW_MODE_INFNAN
                                     : ACL_RT_OVERFLOW_MODE_SATURATION);
    atomic_store(&dev->float_overflow, false);
    atomic_store(&dev->peers, 0);   /* peer access is enabled anew per device session */
    atomic_store(&dev->open, true);
    err = aclsim__context_create(dev, true, &dev->default_ctx, api);
    if (err) {
        atomic_store(&dev->open, false);
        aclsim__executor_stop(dev);
        aclsim__heap_destroy(&dev->heap);
        return err;
    }
    aclsim__log(ACLSIM_LOG_INFO, "device %d (physical %u) opened", dev->id, dev->physical_id);
    return ACL_SUCCESS;
}

/* Caller holds rt.lock; it is released while the device drains (streams may
 * run host functions that call the runtime) and held again on return. The
 * device is "closing" meanwhile: aclsim__device_acquire waits for it. */
static void close_device(struct aclsim__device *dev, bool force)
{
    dev->closing = true;
    aclsim__waits_abort_device(dev);   /* waits that would never end fail instead */
    aclsim__tdt_device_closed(dev->id);   /* its queues and channels go (docs/tdt.md) */
    struct aclsim__context *contexts = dev->contexts;
    dev->contexts = NULL;
    dev->default_ctx = NULL;
    /* From here on, threads whose current context is on this device get 107002. */
    for (struct aclsim__context *c = contexts; c; c = c->next_in_device)
        aclsim__handle_free(c->handle);
    pthread_mutex_unlock(&aclsim__rt.lock);
    /* Forced: nothing that has not started runs, on any stream of any
     * context (discard everything before waiting for any running task). */
    for (struct aclsim__context *c = contexts; force && c; c = c->next_in_device)
        aclsim__context_discard_all(c);
    while (contexts) {
        struct aclsim__context *next = contexts->next_in_device;
        aclsim__context_destroy(contexts, force);
        contexts = next;
    }
    pthread_mutex_lock(&aclsim__rt.lock);
    while (dev->detached)   /* contexts another thread is destroying */
        pthread_cond_wait(&aclsim__rt.changed, &aclsim__rt.lock);
    pthread_mutex_unlock(&aclsim__rt.lock);
    aclsim__executor_stop(dev);
    aclsim__waits_resume_device(dev);
    pthread_mutex_lock(&aclsim__rt.lock);
    atomic_store(&dev->open, false);
    aclsim__symbols_forget_device(dev);
    aclsim__mempools_device_closing(dev);   /* its memory pools die with the session */
    aclsim__ipc_device_closed(dev);   /* its memory's IPC exports close */
    aclsim__heap_reset(&dev->heap);
    dev->refcount = 0;
    dev->closing = false;
    pthread_cond_broadcast(&aclsim__rt.changed);
    aclsim__log(ACLSIM_LOG_INFO, "device %d closed", dev->id);
}

aclError aclsim__device_acquire(int32_t id, const char *api)
{
    aclError err = aclsim__device_check_id(id, api);
    if (err)
        return err;
    struct aclsim__device *dev = &aclsim__devices[id];
    /* (Checked first: a device that aclFinalize is closing is not "being
     * reset" for a host function that tries to open it meanwhile.) */
    while (dev->closing && !aclsim__rt.finalizing) {
        /* A host function waiting here would wait for itself. */
        if (aclsim__tls_worker)
            return aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                                "device %d is being reset; a host function cannot use it "
                                "until the reset is over", id);
        pthread_cond_wait(&aclsim__rt.changed, &aclsim__rt.lock);
    }
    if (aclsim__rt.finalizing || !aclsim__initialized())
        return aclsim__fail(ACL_ERROR_UNINITIALIZE, api,
                            "aclFinalize is in progress: no device can be opened");
    if (!atomic_load(&dev->open) && (err = open_device(dev, api)))
        return err;
    dev->refcount++;
    return ACL_SUCCESS;
}

aclError aclsim__device_release(int32_t id, bool force, const char *api)
{
    aclError err = aclsim__device_check_id(id, api);
    if (err)
        return err;
    struct aclsim__device *dev = &aclsim__devices[id];
    if (ACLSIM_UNLIKELY(aclsim__tls_device == dev) && (force || dev->refcount <= 1))
        return aclsim__refuse_self_wait(api, "this device");   /* it would join itself */
    if (!atomic_load(&dev->open) || dev->closing) {
        aclsim__log(ACLSIM_LOG_WARNING, "%s: device %d is not in use; nothing to reset", api, id);
        return ACL_SUCCESS;
    }
    if (force || dev->refcount <= 1)
        close_device(dev, force);
    else
        dev->refcount--;
    return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId)
{
    ACLSIM_REQUIRE_INIT("aclrtSetDevice");
    ACLSIM_SNAPSHOT_GATE("aclrtSetDevice");
    aclsim__device_state_notify(deviceId, ACL_RT_DEVICE_STATE_SET_PRE);
    pthread_mutex_lock(&aclsim__rt.lock);
    bool was_open = deviceId >= 0 && deviceId < ACLSIM_MAX_DEVICES &&
                    atomic_load(&aclsim__devices[deviceId].open);
    aclError err = aclsim__device_acquire(deviceId, "aclrtSetDevice");
    void *opened = NULL;   /* the new default stream, for the stream state callbacks */
    if (!err) {
        aclsim__set_current(aclsim__devices[deviceId].default_ctx);
        if (!was_open)
            opened = aclsim__stream_announce(aclsim__devices[deviceId].default_ctx->default_stream);
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    aclsim__stream_state_notify(opened, true);
    if (!err)
        aclsim__device_state_notify(deviceId, ACL_RT_DEVICE_STATE_SET_POST);
    return err;
}

static aclError reset(int32_t deviceId, bool force, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    /* Device state callbacks see a reset that closes the device (as CANN). */
    bool closes = false;
    pthread_mutex_lock(&aclsim__rt.lock);
    if (deviceId >= 0 && (uint32_t)deviceId < aclsim__config()->visible_count) {
        struct aclsim__device *dev = &aclsim__devices[deviceId];
        closes = atomic_load(&dev->open) && !dev->closing && (force || dev->refcount <= 1);
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    if (closes)
        aclsim__device_state_notify(deviceId, ACL_RT_DEVICE_STATE_RESET_PRE);
    pthread_mutex_lock(&aclsim__rt.lock);
    aclError err = aclsim__device_release(deviceId, force, api);
    pthread_mutex_unlock(&aclsim__rt.lock);
    if (!err && closes)
        aclsim__device_state_notify(deviceId, ACL_RT_DEVICE_STATE_RESET_POST);
    return err;
}

aclError aclrtResetDevice(int32_t deviceId) { return reset(deviceId, false, "aclrtResetDevice"); }

aclError aclrtResetDeviceForce(int32_t deviceId)
{
    return reset(deviceId, true, "aclrtResetDeviceForce");
}

aclError aclrtGetDevice(int32_t *deviceId)
{
    ACLSIM_REQUIRE_INIT("aclrtGetDevice");
    if (!deviceId)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice", "deviceId is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context("aclrtGetDevice", &ctx);
    if (!err)
        *deviceId = aclsim__context_device(ctx)->id;
    return err;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
    ACLSIM_REQUIRE_INIT("aclrtGetDeviceCount");
    if (!count)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount", "count is NULL");
    *count = aclsim__config()->visible_count;
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void)
{
    ACLSIM_REQUIRE_INIT("aclrtSynchronizeDevice");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context("aclrtSynchronizeDevice", &ctx);
    if (err || (err = aclsim__capture_refuse_device(aclsim__context_device(ctx),
                                                    "aclrtSynchronizeDevice")))
        return err;
    err = aclsim__device_synchronize(aclsim__context_device(ctx), "aclrtSynchronizeDevice");
    if (!err)
        aclsim__mempools_after_sync(aclsim__context_device(ctx));   /* release threshold */
    return err ? err : aclsim__device_report(ctx, "aclrtSynchronizeDevice");
}

/* After fork(), in the child (internal.h, THE FORK RULE): every device of
 * the inherited session is closed without its workers (they do not exist
 * here: never joined or signalled), its contexts and streams pooled afresh,
 * its variable instances forgotten and its memory unmapped. */
void aclsim__devices_forget_after_fork(void)
{
    for (uint32_t i = 0; i < ACLSIM_MAX_DEVICES; i++) {
        struct aclsim__device *dev = &aclsim__devices[i];
        struct aclsim__context *ctx = dev->contexts;
        while (ctx) {
            struct aclsim__context *next = ctx->next_in_device;
            aclsim__context_forget_after_fork(ctx);
            ctx = next;
        }
        if (!dev->closing)   /* else the closing thread may have freed it: leaked */
            free(dev->workers);
        dev->workers = NULL;
        dev->nworkers = 0;
        dev->contexts = dev->default_ctx = NULL;
        dev->ready_head = dev->ready_tail = NULL;
        atomic_store(&dev->nready, 0);
        atomic_store(&dev->nstreams, 0);   /* streams held by the parent's threads never return */
        dev->jobs = NULL;
        dev->refcount = dev->detached = dev->sleepers = 0;
        dev->closing = dev->spinner = dev->stop = false;
        dev->exec_ready = false;   /* executor_start makes exec_lock anew */
        atomic_store(&dev->open, false);
        aclsim__symbols_forget_device(dev);
        aclsim__heap_forget_after_fork(&dev->heap);
        aclsim__heap_destroy(&dev->heap);
    }
}
