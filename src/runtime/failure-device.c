/*
 * Failures, the device side (docs/failures.md): device status, device state
 * callbacks, device task abort and its callbacks, verbose errors, error and
 * memory UCE repair; the registries of named callbacks they use.
 *
 * Failed tasks themselves, and their records (the device's latest failure
 * that aclrtGetErrorVerbose reports among them), are in failure.c; failure.h
 * holds what the two files share.
 */
#include "failure.h"

#include <stdlib.h>
#include <string.h>

#define TASK_ABORT_TIMEOUT_MAX (36u * 60u * 1000u)   /* ms, as CANN */

/* ---- callback registries ------------------------------------------------ */

/* Callbacks registered under a unique name (device state, task abort): a
 * NULL callback unregisters the name, a taken name is refused. */
struct named_cb { struct named_cb *next; char *name; void (*fn)(void); void *args; };
struct registry { pthread_mutex_t lock; struct named_cb *head; };

static struct registry state_callbacks = {PTHREAD_MUTEX_INITIALIZER, NULL};
static struct registry abort_callbacks = {PTHREAD_MUTEX_INITIALIZER, NULL};

static aclError registry_set(struct registry *r, const char *name, void (*fn)(void), void *args,
                             const char *api)
{
    pthread_mutex_lock(&r->lock);
    struct named_cb **p = &r->head;
    while (*p && strcmp((*p)->name, name) != 0)
        p = &(*p)->next;
    aclError err = ACL_SUCCESS;
    if (!fn) {   /* unregister (an unknown name is not an error) */
        struct named_cb *gone = *p;
        if (gone) {
            *p = gone->next;
            free(gone->name);
            free(gone);
        }
    } else if (*p) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "a callback is already registered as \"%s\" (unregister it first "
                           "with a NULL callback)", name);
    } else {
        struct named_cb *c = aclsim__calloc(1, sizeof *c);
        if (!c || !(c->name = aclsim__strdup(name))) {
            free(c);
            err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory registering \"%s\"", name);
        } else {
            c->fn = fn;
            c->args = args;
            *p = c;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return err;
}

/* A copy of the registrations, so that they are called without the lock
 * (a callback may register or unregister). NULL when there are none or
 * memory is short (then *n is 0 and nothing is called: logged). */
static struct named_cb *registry_snapshot(struct registry *r, size_t *n)
{
    pthread_mutex_lock(&r->lock);
    size_t count = 0;
    for (struct named_cb *c = r->head; c; c = c->next)
        count++;
    struct named_cb *copy = count ? aclsim__malloc(count * sizeof *copy) : NULL;
    size_t i = 0;
    if (copy)
        for (struct named_cb *c = r->head; c; c = c->next)
            copy[i++] = *c;
    pthread_mutex_unlock(&r->lock);
    if (count && !copy)
        aclsim__log(ACLSIM_LOG_ERROR, "out of memory: %zu registered callback(s) not called",
                    count);
    *n = i;
    return copy;
}

static void registry_clear(struct registry *r)
{
    pthread_mutex_lock(&r->lock);
    while (r->head) {
        struct named_cb *c = r->head;
        r->head = c->next;
        free(c->name);
        free(c);
    }
    pthread_mutex_unlock(&r->lock);
}

/* ---- devices: status, state callbacks, task abort, error verbose ---------- */

/* Bumped by each aclrtDeviceTaskAbort of a device (aclsim__abort_generation). */
static atomic_uint abort_gen[ACLSIM_MAX_DEVICES];

unsigned aclsim__abort_generation(const struct aclsim__device *dev)
{
    return atomic_load_explicit(&abort_gen[dev->id], memory_order_acquire);
}

aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus)
{
    static const char api[] = "aclrtQueryDeviceStatus";
    aclError err = aclsim__failure_prologue(api, deviceStatus, "deviceStatus", NOT_IPV350);
    if (err || (err = aclsim__device_check_id(deviceId, api)))
        return err;
    /* A simulated device has no hardware to lose: an AI Core exception or a
     * task abort leaves it usable, as on hardware. */
    *deviceStatus = ACL_RT_DEVICE_STATUS_NORMAL;
    return ACL_SUCCESS;
}

aclError aclrtRegDeviceStateCallback(const char *regName, aclrtDeviceStateCallback callback,
                                     void *args)
{
    static const char api[] = "aclrtRegDeviceStateCallback";
    aclError err = aclsim__failure_prologue(api, regName, "regName", NOT_IPV350);
    return err ? err : registry_set(&state_callbacks, regName, (void (*)(void))callback, args, api);
}

void aclsim__device_state_notify(int32_t device, int state)
{
    if (device < 0 || (uint32_t)device >= aclsim__config()->visible_count)
        return;   /* the call fails on its id */
    if (state == ACL_RT_DEVICE_STATE_SET_PRE && atomic_load(&aclsim__devices[device].open))
        return;   /* SET_PRE: before the device opens (as CANN: when it is retained) */
    size_t n;
    struct named_cb *cbs = registry_snapshot(&state_callbacks, &n);
    for (size_t i = 0; i < n; i++)
        ((aclrtDeviceStateCallback)cbs[i].fn)(device, (aclrtDeviceState)state, cbs[i].args);
    free(cbs);
}

aclError aclrtSetDeviceTaskAbortCallback(const char *regName, aclrtDeviceTaskAbortCallback callback,
                                         void *args)
{
    static const char api[] = "aclrtSetDeviceTaskAbortCallback";
    aclError err = aclsim__failure_prologue(api, regName, "regName", FAST_RECOVER);
    return err ? err : registry_set(&abort_callbacks, regName, (void (*)(void))callback, args, api);
}

/* Calls the abort callbacks of stage; ms: what is left of the timeout (0:
 * none). A callback answering non-zero fails the abort. */
static aclError abort_callbacks_run(int32_t device, aclrtDeviceTaskAbortStage stage, uint32_t ms,
                                    const char *api)
{
    size_t n;
    struct named_cb *cbs = registry_snapshot(&abort_callbacks, &n);
    aclError err = ACL_SUCCESS;
    for (size_t i = 0; i < n && !err; i++) {
        int32_t rc = ((aclrtDeviceTaskAbortCallback)cbs[i].fn)(device, stage, ms, cbs[i].args);
        if (rc)
            err = aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                               "task abort callback \"%s\" answered %d at the %s stage",
                               cbs[i].name, rc,
                               stage == ACL_RT_DEVICE_TASK_ABORT_PRE ? "PRE" : "POST");
    }
    free(cbs);
    return err;
}

static void abort_stream(struct aclsim__stream *s, void *arg)
{
    (void)arg;
    aclsim__stop_stream(s, ACL_ERROR_RT_DEVICE_TASK_ABORT,
                        "the task was discarded by aclrtDeviceTaskAbort before it started");
}

/* After the abort: the device is clean again (contexts stopped on failure
 * take tasks, pending faults are forgotten). */
static void clean_stream(struct aclsim__stream *s, void *arg)
{
    (void)arg;
    pthread_mutex_lock(&s->lock);
    atomic_store(&s->stopping, false);   /* what it stopped has drained */
    atomic_store(&s->fault, 0);
    pthread_mutex_unlock(&s->lock);
    atomic_store(&aclsim__stream_context(s)->fault, 0);
}

static uint32_t ms_left(uint64_t deadline)
{
    uint64_t now = aclsim__now_ns();
    return now >= deadline ? 1 : (uint32_t)((deadline - now + 999999u) / 1000000u);
}

aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout)
{
    static const char api[] = "aclrtDeviceTaskAbort";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__snapshot_check(api);   /* CANN waits while a snapshot holds the lock */
    if (err || (err = aclsim__soc_check(api, FAST_RECOVER)))
        return err;
    if (timeout > TASK_ABORT_TIMEOUT_MAX)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "timeout %u ms is out of range: 0 (wait forever) to %u (36 minutes)",
                            timeout, TASK_ABORT_TIMEOUT_MAX);
    if ((err = aclsim__device_check_id(deviceId, api)))
        return err;
    struct aclsim__device *dev = &aclsim__devices[deviceId];
    if (ACLSIM_UNLIKELY(aclsim__tls_device == dev))
        return aclsim__refuse_self_wait(api, "this device");
    uint64_t deadline = aclsim__now_ns() + (uint64_t)timeout * 1000000u;
    if ((err = abort_callbacks_run(deviceId, ACL_RT_DEVICE_TASK_ABORT_PRE,
                                   timeout ? ms_left(deadline) : 0, api)))
        return err;
    /* Running kernels skip their blocks not yet started; every task not yet
     * started on any stream of the device is discarded. */
    atomic_fetch_add_explicit(&abort_gen[deviceId], 1, memory_order_acq_rel);
    err = aclsim__device_drain(dev, timeout ? (int32_t)ms_left(deadline) : -1, abort_stream, NULL,
                               api);
    if (err == ACL_ERROR_RT_WAIT_TIMEOUT)
        return aclsim__fail(err, api,
                            "device %d still runs tasks after %u ms (a running kernel or host "
                            "function is not interrupted)", deviceId, timeout);
    if (err)
        return err;
    if ((err = abort_callbacks_run(deviceId, ACL_RT_DEVICE_TASK_ABORT_POST,
                                   timeout ? ms_left(deadline) : 0, api)))
        return err;
    aclsim__device_drain(dev, 0, clean_stream, NULL, api);
    aclsim__device_faults_clear(deviceId);
    return ACL_SUCCESS;
}

aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo)
{
    static const char api[] = "aclrtGetErrorVerbose";
    aclError err = aclsim__failure_prologue(api, errorInfo, "errorInfo", FAST_RECOVER);
    if (err || (err = aclsim__device_check_id(deviceId, api)))
        return err;
    aclError latest = aclsim__device_latest_fault(deviceId);
    memset(errorInfo, 0, sizeof *errorInfo);
    errorInfo->errorType = ACL_RT_NO_ERROR;
    if (latest && aclsim__soc_current()->family == ACLSIM_FAMILY_A5) {
        /* A kernel failed: a software error in AI Core code. */
        errorInfo->errorType = ACL_RT_ERROR_AICORE;
        errorInfo->hasDetail = 1;
        errorInfo->detail.aicoreErrType = ACL_RT_AICORE_ERROR_SW;
    } else if (latest) {
        /* A2/A3 report only no error, memory errors and "others". */
        errorInfo->errorType = ACL_RT_ERROR_OTHERS;
    }
    return ACL_SUCCESS;
}

/* Memory UCE (uncorrectable errors): simulated device memory is host memory
 * that never has one, so there is never an address to report or repair. */
aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize,
                            size_t *retSize)
{
    static const char api[] = "aclrtGetMemUceInfo";
    (void)arraySize;
    aclError err = aclsim__failure_prologue(api, retSize, "retSize", FAST_RECOVER);
    if (!err && !memUceInfoArray)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "memUceInfoArray is NULL");
    if (err || (err = aclsim__device_check_id(deviceId, api)))
        return err;
    *retSize = 0;   /* no uncorrectable memory error on a simulated device */
    return ACL_SUCCESS;
}

static aclError no_uce(int32_t deviceId, const aclrtMemUceInfo *info, const char *api)
{
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "device %d has no uncorrectable memory error at %p (simulated memory "
                        "never has one; aclrtGetMemUceInfo reports none)", deviceId, info->addr);
}

aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize)
{
    static const char api[] = "aclrtMemUceRepair";
    aclError err = aclsim__failure_prologue(api, memUceInfoArray, "memUceInfoArray", FAST_RECOVER);
    if (err || (err = aclsim__device_check_id(deviceId, api)))
        return err;
    return arraySize ? no_uce(deviceId, &memUceInfoArray[0], api) : ACL_SUCCESS;
}

aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo *errorInfo)
{
    static const char api[] = "aclrtRepairError";
    aclError err = aclsim__failure_prologue(api, errorInfo, "errorInfo", FAST_RECOVER);
    if (err)
        return err;
    if (errorInfo->tryRepair != 1)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "errorInfo->tryRepair is %u: only an error that asks for repair "
                            "(tryRepair 1) can be repaired", errorInfo->tryRepair);
    if ((err = aclsim__device_check_id(deviceId, api)))
        return err;
    switch (errorInfo->errorType) {
    case ACL_RT_NO_ERROR:   /* as CANN: the device's fault is cleared */
        aclsim__device_faults_clear(deviceId);
        return ACL_SUCCESS;
    case ACL_RT_ERROR_MEMORY:
        if (errorInfo->hasDetail && errorInfo->detail.uceInfo.arraySize)
            return no_uce(deviceId, &errorInfo->detail.uceInfo.memUceInfoArray[0], api);
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "device %d has no memory error to repair", deviceId);
    default:
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "errorInfo->errorType %d cannot be repaired: ACL_RT_NO_ERROR (0) or "
                            "ACL_RT_ERROR_MEMORY (1)", (int)errorInfo->errorType);
    }
}

void aclsim__failure_device_forget_after_fork(void)
{
    pthread_mutex_init(&state_callbacks.lock, NULL);
    pthread_mutex_init(&abort_callbacks.lock, NULL);
}

void aclsim__failure_device_finalize(void)
{
    registry_clear(&state_callbacks);
    registry_clear(&abort_callbacks);
}
