/*
 * Failed tasks and what follows from them (docs/failures.md).
 *
 * A task fails on the worker that runs it (a kernel that called aclsimTrap,
 * or ran past the op execute timeout). aclsim__task_failed records the
 * failure: as the stream's pending fault (reported, and consumed, by the next
 * synchronize of that stream or of its device), as the device's latest
 * (aclrtGetErrorVerbose, until the next device task abort), and, when the
 * context is in ACL_STOP_ON_FAILURE mode, as the context's sticky fault:
 * every stream of the context stops (tasks not yet started are discarded),
 * every synchronize reports it and submissions are refused. Then the
 * exception callbacks run, on that worker.
 *
 * Also here: failure mode, exception callbacks and their getters,
 * aclrtGetThreadLastTaskId, op timeouts. The device side (device status,
 * state callbacks, task abort, verbose errors, repair) is in
 * failure-device.c; failure.h holds what the two files share.
 */
#include "failure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

_Thread_local uint32_t aclsim__tls_last_task_id;

/* What the exception callbacks get (opaque to programs). */
struct rtExceptionInfo {
    uint32_t taskid, streamid, tid, deviceid, retcode;
    void *args;
    uint32_t args_len;
    void *func;
};

/* Exception callbacks: the one of aclrtSetExceptionInfoCallback, and the
 * distinct ones of aclrtExceptionInfoCallbackRegister (a list of their own:
 * the same function set both ways is called twice, as CANN documents). */
static pthread_mutex_t exc_lock = PTHREAD_MUTEX_INITIALIZER;
static aclrtExceptionInfoCallback exc_set;
static aclrtExceptionInfoCallback *exc_list;
static size_t exc_count, exc_cap;

static void call_exception_callbacks(aclrtExceptionInfo *info)
{
    pthread_mutex_lock(&exc_lock);
    size_t n = exc_count + (exc_set != NULL);
    aclrtExceptionInfoCallback *copy = n ? aclsim__malloc(n * sizeof *copy) : NULL;
    if (copy) {
        memcpy(copy, exc_list, exc_count * sizeof *copy);
        if (exc_set)
            copy[exc_count] = exc_set;
    }
    pthread_mutex_unlock(&exc_lock);
    if (n && !copy)
        aclsim__log(ACLSIM_LOG_ERROR, "out of memory: %zu exception callback(s) not called", n);
    for (size_t i = 0; copy && i < n; i++)
        copy[i](info);
    free(copy);
}

/* The checks that open most functions here and in failure-device.c, in
 * CANN's order: a NULL output argument (100000, on every product), the
 * runtime (100001), the product (207000). */
aclError aclsim__failure_prologue(const char *api, const void *out, const char *out_name,
                                  unsigned families)
{
    if (out_name && !out)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", out_name);
    ACLSIM_REQUIRE_INIT(api);
    return aclsim__soc_check(api, families);
}

/* ---- failure records ------------------------------------------------------ */

/* Per device: the latest failure since the last device task abort or the
 * device's opening (aclrtGetErrorVerbose). */
static pthread_mutex_t dev_fault_lock = PTHREAD_MUTEX_INITIALIZER;
static aclError dev_latest[ACLSIM_MAX_DEVICES];

/* Stops s: every task submitted so far that has not started is discarded
 * (a parked stream is woken to discard its wait). With code, a stream with
 * work outstanding also gets that pending fault. Callers may hold its
 * context's lock, not s->lock. */
void aclsim__stop_stream(struct aclsim__stream *s, aclError code, const char *text)
{
    pthread_mutex_lock(&s->lock);
    uint64_t submitted = aclsim__stream_submitted_now(s);   /* (a submit under way: counted) */
    atomic_store(&s->stop_upto, (uint32_t)submitted);
    atomic_store(&s->stopping, true);
    if (code && submitted > atomic_load(&s->completed) && !atomic_load(&s->fault)) {
        snprintf(s->fault_text, sizeof s->fault_text, "%s", text);
        atomic_store(&s->fault, code);
    }
    bool wake = s->state == ACLSIM_STREAM_PARKED && aclsim__wait_unpark(s);
    if (wake)
        s->state = ACLSIM_STREAM_QUEUED;
    pthread_mutex_unlock(&s->lock);
    if (wake)
        aclsim__schedule(s);
}

/* ACL_STOP_ON_FAILURE: the context keeps code as its fault and stops. */
static void stop_context(struct aclsim__context *ctx, aclError code, const char *text)
{
    pthread_mutex_lock(&ctx->lock);
    if (!atomic_load(&ctx->fault)) {
        snprintf(ctx->fault_text, sizeof ctx->fault_text, "%s", text);
        atomic_store(&ctx->fault, code);   /* from here on aclsim__submit refuses */
    }
    aclsim__stop_stream(ctx->default_stream, 0, NULL);
    for (struct aclsim__stream *s = ctx->streams; s; s = s->next_in_context)
        aclsim__stop_stream(s, 0, NULL);
    pthread_mutex_unlock(&ctx->lock);
}

void aclsim__task_failed(struct aclsim__stream *s, const struct aclsim__task *t, aclError code,
                         const struct aclsim__fault_detail *d)
{
    struct aclsim__device *dev = s->device;
    char text[384];
    char where[64];
    if (!__atomic_load_n(&s->is_default, __ATOMIC_RELAXED))   /* default streams have handles too */
        snprintf(where, sizeof where, "stream %p (id %u)", s->handle, s->id);
    else
        snprintf(where, sizeof where, "the default stream (id %u)", s->id);
    const char *what = t->kind == ACLSIM_TASK_KERNEL ? "kernel "
                       : t->kind == ACLSIM_TASK_WAIT ? "wait" : "task";
    snprintf(text, sizeof text, "%s%s (task %u) failed on device %d, %s: %s", what,
             t->kind == ACLSIM_TASK_KERNEL && t->label ? t->label : "", t->id, dev->id, where,
             d->why);
    aclsim__log(ACLSIM_LOG_ERROR, "%s (error %d)", text, code);

    pthread_mutex_lock(&s->lock);
    if (!atomic_load(&s->fault)) {
        snprintf(s->fault_text, sizeof s->fault_text, "%s", text);
        atomic_store(&s->fault, code);
    }
    pthread_mutex_unlock(&s->lock);

    pthread_mutex_lock(&dev_fault_lock);
    dev_latest[dev->id] = code;
    pthread_mutex_unlock(&dev_fault_lock);

    struct aclsim__context *ctx = aclsim__stream_context(s);
    if (atomic_load(&ctx->stop_on_failure))
        stop_context(ctx, code, text);

    struct rtExceptionInfo info = {
        .taskid = t->id, .streamid = s->id, .tid = (uint32_t)syscall(SYS_gettid),
        .deviceid = (uint32_t)dev->id, .retcode = (uint32_t)code,
        .args = d->args, .args_len = d->args_len, .func = d->func};
    if (t->kind == ACLSIM_TASK_KERNEL)   /* DUMP HOOK: the exception dump (dump.c) */
        aclsim__dump_kernel_failed(dev->id, s->id, t->id, t->label, d->why, d->args, d->args_len);
    call_exception_callbacks(&info);
    if (t->kind == ACLSIM_TASK_KERNEL && d->func)   /* aclrtBinarySetExceptionCallback's */
        aclsim__binary_exception(d->func, &info);
}

static aclError report_context(struct aclsim__context *ctx, const char *api, const char *how)
{
    char text[sizeof ctx->fault_text];
    pthread_mutex_lock(&ctx->lock);
    aclError code = atomic_load(&ctx->fault);
    memcpy(text, ctx->fault_text, sizeof text);
    pthread_mutex_unlock(&ctx->lock);
    if (!code)   /* cleaned by a device task abort meanwhile */
        return ACL_SUCCESS;
    return aclsim__fail(code, api, "%s (the context is in ACL_STOP_ON_FAILURE mode and stopped%s)",
                        text, how);
}

aclError aclsim__context_refuse(struct aclsim__context *ctx, const char *api)
{
    aclError err = report_context(ctx, api, "; it takes no more tasks");
    return err ? err : aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                                    "the context was stopped by a failure; retry");
}

/* s's pending fault (consumed) and its text, or ACL_SUCCESS. */
static aclError take_fault(struct aclsim__stream *s, char *text)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&s->fault, memory_order_acquire)))
        return ACL_SUCCESS;
    pthread_mutex_lock(&s->lock);
    aclError code = atomic_exchange(&s->fault, 0);
    memcpy(text, s->fault_text, sizeof s->fault_text);
    pthread_mutex_unlock(&s->lock);
    return code;
}

aclError aclsim__stream_report(struct aclsim__sref ref, const char *api)
{
    struct aclsim__stream *s = ref.s;
    struct aclsim__context *ctx = aclsim__stream_context(s);
    if (ACLSIM_LIKELY(!atomic_load_explicit(&ctx->fault, memory_order_acquire) &&
                      !atomic_load_explicit(&s->fault, memory_order_acquire)))
        return ACL_SUCCESS;
    /* Only the life of the stream the caller waited for: a stream destroyed
     * (and its struct reused) meanwhile has nothing to report any more. */
    pthread_mutex_lock(&s->lock);
    bool same = atomic_load(&s->epoch) == ref.epoch;
    ctx = aclsim__stream_context(s);
    pthread_mutex_unlock(&s->lock);
    if (!same)
        return ACL_SUCCESS;
    if (ACLSIM_UNLIKELY(atomic_load_explicit(&ctx->fault, memory_order_acquire)))
        return report_context(ctx, api, "");
    char text[sizeof s->fault_text];
    aclError code = take_fault(s, text);
    return code ? aclsim__fail(code, api, "%s", text) : ACL_SUCCESS;
}

/* The first pending fault of any stream of the device (every context:
 * aclrtSynchronizeDevice waited for all of them), consumed; the others stay
 * for their streams' synchronize. */
aclError aclsim__device_report(struct aclsim__context *ctx, const char *api)
{
    if (ACLSIM_UNLIKELY(atomic_load_explicit(&ctx->fault, memory_order_acquire)))
        return report_context(ctx, api, "");
    struct aclsim__device *dev = aclsim__context_device(ctx);
    char text[sizeof ctx->default_stream->fault_text];
    aclError code = ACL_SUCCESS;
    pthread_mutex_lock(&aclsim__rt.lock);
    for (struct aclsim__context *c = dev->contexts; c && !code; c = c->next_in_device) {
        pthread_mutex_lock(&c->lock);
        for (struct aclsim__stream *s = c->default_stream; s && !code;
             s = s == c->default_stream ? c->streams : s->next_in_context)
            code = take_fault(s, text);
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    return code ? aclsim__fail(code, api, "%s", text) : ACL_SUCCESS;
}

void aclsim__device_faults_clear(int32_t id)
{
    pthread_mutex_lock(&dev_fault_lock);
    dev_latest[id] = ACL_SUCCESS;
    pthread_mutex_unlock(&dev_fault_lock);
}

aclError aclsim__device_latest_fault(int32_t id)
{
    pthread_mutex_lock(&dev_fault_lock);
    aclError latest = dev_latest[id];
    pthread_mutex_unlock(&dev_fault_lock);
    return latest;
}

/* ---- failure mode ---------------------------------------------------------- */

aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)
{
    static const char api[] = "aclrtSetStreamFailureMode";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, NOT_IPV350);
    if (err)
        return err;
    if (!stream && (ACLSIM_FAMILIES(EDGE) | ACLSIM_FAMILIES(INFERENCE) | ACLSIM_FAMILIES(TRAINING)) &
                       (1u << aclsim__soc_current()->family))
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "the default stream (NULL) cannot be given a failure mode on SoC %s, "
                            "as in CANN: pass a stream you created",
                            aclsim__config()->soc_name);
    struct aclsim__sref ref;
    if ((err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    struct aclsim__stream *s = ref.s;
    uint8_t want = (uint8_t)(mode & ACL_STOP_ON_FAILURE);   /* CANN reads the low bit */
    pthread_mutex_lock(&s->lock);
    if (s->failure_mode == ACL_STOP_ON_FAILURE && want == ACL_CONTINUE_ON_FAILURE) {
        pthread_mutex_unlock(&s->lock);
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "stream %p is in ACL_STOP_ON_FAILURE mode; it cannot go back to "
                            "ACL_CONTINUE_ON_FAILURE", stream);
    }
    s->failure_mode = want;
    pthread_mutex_unlock(&s->lock);
    if (want == ACL_STOP_ON_FAILURE)   /* every stream of the context stops on failure */
        atomic_store(&aclsim__stream_context(s)->stop_on_failure, true);
    return ACL_SUCCESS;
}

/* ---- exception callbacks ---------------------------------------------------- */

aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback)
{
    static const char api[] = "aclrtSetExceptionInfoCallback";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, NOT_IPV350);
    if (err)
        return err;
    pthread_mutex_lock(&exc_lock);
    exc_set = callback;   /* NULL clears it */
    pthread_mutex_unlock(&exc_lock);
    return ACL_SUCCESS;
}

/* CANN checks the callback with ACL_ERROR_RT_PARAM_INVALID here. */
static aclError check_callback(aclrtExceptionInfoCallback callback, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!callback)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "callback is NULL");
    return aclsim__soc_check(api, NOT_IPV350);
}

aclError aclrtExceptionInfoCallbackRegister(aclrtExceptionInfoCallback callback)
{
    static const char api[] = "aclrtExceptionInfoCallbackRegister";
    aclError err = check_callback(callback, api);
    if (err)
        return err;
    pthread_mutex_lock(&exc_lock);
    for (size_t i = 0; i < exc_count; i++)
        if (exc_list[i] == callback) {   /* registered again: kept once */
            pthread_mutex_unlock(&exc_lock);
            return ACL_SUCCESS;
        }
    if (exc_count == exc_cap) {
        size_t cap = exc_cap ? 2 * exc_cap : 8;
        aclrtExceptionInfoCallback *bigger = aclsim__realloc(exc_list, cap * sizeof *bigger);
        if (!bigger) {
            pthread_mutex_unlock(&exc_lock);
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory registering a callback");
        }
        exc_list = bigger;
        exc_cap = cap;
    }
    exc_list[exc_count++] = callback;
    pthread_mutex_unlock(&exc_lock);
    return ACL_SUCCESS;
}

aclError aclrtExceptionInfoCallbackUnregister(aclrtExceptionInfoCallback callback)
{
    static const char api[] = "aclrtExceptionInfoCallbackUnregister";
    aclError err = check_callback(callback, api);
    if (err)
        return err;
    /* Does not wait for calls in progress (as CANN documents); unknown: success. */
    pthread_mutex_lock(&exc_lock);
    for (size_t i = 0; i < exc_count; i++)
        if (exc_list[i] == callback) {
            memmove(&exc_list[i], &exc_list[i + 1], (exc_count - i - 1) * sizeof *exc_list);
            exc_count--;
            break;
        }
    pthread_mutex_unlock(&exc_lock);
    return ACL_SUCCESS;
}

/* The getters answer 0xFFFFFFFF (ACL_ERROR_INVALID_EXCEPTION_INFO) for NULL. */
static bool info_ok(const aclrtExceptionInfo *info, const char *api)
{
    if (info)
        return true;
    aclsim__fail(ACL_ERROR_INVALID_EXCEPTION_INFO, api, "info is NULL");
    return false;
}
#define INFO_GETTER(name, field)                                                    \
    uint32_t name(const aclrtExceptionInfo *info)                                   \
    {                                                                               \
        return info_ok(info, #name) ? info->field : (uint32_t)ACL_ERROR_INVALID_EXCEPTION_INFO; \
    }
INFO_GETTER(aclrtGetTaskIdFromExceptionInfo, taskid)
INFO_GETTER(aclrtGetStreamIdFromExceptionInfo, streamid)
INFO_GETTER(aclrtGetThreadIdFromExceptionInfo, tid)
INFO_GETTER(aclrtGetDeviceIdFromExceptionInfo, deviceid)
INFO_GETTER(aclrtGetErrorCodeFromExceptionInfo, retcode)

aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo *info, void **devArgsPtr,
                                       uint32_t *devArgsLen)
{
    static const char api[] = "aclrtGetArgsFromExceptionInfo";
    if (!info_ok(info, api))
        return ACL_ERROR_INVALID_EXCEPTION_INFO;
    if (!devArgsPtr || !devArgsLen)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !devArgsPtr ? "devArgsPtr" : "devArgsLen");
    *devArgsPtr = info->args;
    *devArgsLen = info->args_len;
    return ACL_SUCCESS;
}

aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo *info, aclrtFuncHandle *func)
{
    static const char api[] = "aclrtGetFuncHandleFromExceptionInfo";
    if (!info_ok(info, api))
        return ACL_ERROR_INVALID_EXCEPTION_INFO;
    if (!func)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "func is NULL");
    *func = info->func;
    return ACL_SUCCESS;
}

aclError aclrtGetThreadLastTaskId(uint32_t *taskId)
{
    static const char api[] = "aclrtGetThreadLastTaskId";
    aclError err = aclsim__failure_prologue(api, taskId, "taskId", NOT_IPV350);
    if (!err)
        *taskId = aclsim__tls_last_task_id;
    return err;
}

/* ---- op timeouts ---------------------------------------------------------- */

/* The op execute timeout is a whole number N (1..254) of a hardware
 * interval. Real A2 parts report 2^32 ns (so the maximum is 1091 s);
 * ACLSIM_OP_TIMEOUT_INTERVAL_US sets the simulated one (config.c). */
#define MAX_CREDIT 254u
#define NEVER UINT64_MAX
static atomic_bool exec_set;                /* a set function was called */
static _Atomic uint64_t exec_us;            /* then: the effective timeout (NEVER: none) */
static _Atomic uint64_t wait_s;             /* aclrtSetOpWaitTimeout; 0: none */

static uint64_t interval_us(void)
{
    uint32_t us = aclsim__config()->op_timeout_interval_us;
    return us ? us : 4294967u;   /* (a configured runtime never has 0) */
}

/* Default and maximum in seconds for the families without the interval scale. */
static uint64_t family_seconds(bool maximum)
{
    switch (aclsim__soc_current()->family) {
    case ACLSIM_FAMILY_INFERENCE: return 547;
    case ACLSIM_FAMILY_TRAINING: return maximum ? 2176 : 68;
    default: return 1091;
    }
}

static bool interval_scaled(void)
{
    return FAST_RECOVER & (1u << aclsim__soc_current()->family);
}

/* What a request of us microseconds becomes (0: the maximum, or never when
 * the interval is under 100 ms, as CANN documents). */
static uint64_t effective_us(uint64_t us)
{
    uint64_t step = interval_us();
    if (us == 0 && step < 100000)
        return NEVER;
    uint64_t credit = us == 0 ? MAX_CREDIT : (us + step - 1) / step;
    if (credit > MAX_CREDIT || credit == 0)
        credit = MAX_CREDIT;
    return credit * step;
}

uint64_t aclsim__op_execute_timeout_ns(void)
{
    if (!atomic_load_explicit(&exec_set, memory_order_acquire))
        return family_seconds(false) * 1000000000u;
    uint64_t us = atomic_load_explicit(&exec_us, memory_order_relaxed);
    return us == NEVER ? NEVER : us * 1000u;
}

uint64_t aclsim__op_wait_timeout_ns(void)
{
    return atomic_load_explicit(&wait_s, memory_order_relaxed) * 1000000000u;
}

static void set_exec(uint64_t us)
{
    atomic_store_explicit(&exec_us, us, memory_order_relaxed);
    atomic_store_explicit(&exec_set, true, memory_order_release);
}

aclError aclrtSetOpExecuteTimeOut(uint32_t timeout)
{
    static const char api[] = "aclrtSetOpExecuteTimeOut";
    ACLSIM_REQUIRE_INIT(api);
    if (interval_scaled()) {
        set_exec(effective_us((uint64_t)timeout * 1000000u));
    } else {
        uint64_t s = timeout == 0 || timeout > family_seconds(true) ? family_seconds(true) : timeout;
        set_exec(s * 1000000u);
    }
    return ACL_SUCCESS;
}

aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeout)
{
    static const char api[] = "aclrtSetOpExecuteTimeOutWithMs";
    ACLSIM_REQUIRE_INIT(api);
    (void)timeout;
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "no product supports it (CANN's support table); use "
                        "aclrtSetOpExecuteTimeOutV2 (microseconds)");
}

aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout)
{
    static const char api[] = "aclrtSetOpExecuteTimeOutV2";
    aclError err = aclsim__failure_prologue(api, actualTimeout, "actualTimeout", NOT_IPV350);
    struct aclsim__context *ctx = NULL;
    if (err || (err = aclsim__current_context(api, &ctx)))
        return err;
    uint64_t us = effective_us(timeout);
    set_exec(us);
    *actualTimeout = us;
    return ACL_SUCCESS;
}

aclError aclrtGetOpTimeOutInterval(uint64_t *interval)
{
    static const char api[] = "aclrtGetOpTimeOutInterval";
    aclError err = aclsim__failure_prologue(api, interval, "interval", NOT_IPV350);
    struct aclsim__context *ctx = NULL;
    if (err || (err = aclsim__current_context(api, &ctx)))
        return err;
    *interval = interval_us();
    return ACL_SUCCESS;
}

aclError aclrtGetOpExecuteTimeout(uint32_t *const timeoutMs)
{
    static const char api[] = "aclrtGetOpExecuteTimeout";
    aclError err = aclsim__failure_prologue(api, timeoutMs, "timeoutMs", NOT_IPV350);
    if (err)
        return err;
    uint64_t ns = aclsim__op_execute_timeout_ns();
    *timeoutMs = ns == NEVER ? UINT32_MAX : (uint32_t)((ns + 999999u) / 1000000u);
    return ACL_SUCCESS;
}

aclError aclrtSetOpWaitTimeout(uint32_t timeout)
{
    static const char api[] = "aclrtSetOpWaitTimeout";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, NOT_IPV350 & ~ACLSIM_FAMILIES(INFERENCE));
    if (!err)
        atomic_store_explicit(&wait_s, timeout, memory_order_relaxed);
    return err;
}

void aclsim__failures_forget_after_fork(void)
{
    aclsim__failure_device_forget_after_fork();
    pthread_mutex_init(&exc_lock, NULL);
    pthread_mutex_init(&dev_fault_lock, NULL);
}

void aclsim__failures_finalize(void)
{
    aclsim__failure_device_finalize();
    pthread_mutex_lock(&exc_lock);
    free(exc_list);
    exc_list = NULL;
    exc_count = exc_cap = 0;
    exc_set = NULL;
    pthread_mutex_unlock(&exc_lock);
    atomic_store(&exec_set, false);
    atomic_store(&wait_s, 0);
    for (int32_t i = 0; i < ACLSIM_MAX_DEVICES; i++)
        aclsim__device_faults_clear(i);
}
