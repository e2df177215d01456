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
 * Also here: failure mode, exception callbacks and their getters, op
 * timeouts, device task abort, device state callbacks, device status.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOT_IPV350 ACLSIM_ALL_BUT_IPV
#define FAST_RECOVER (ACLSIM_FAMILIES(A5) | ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A2))
#define TASK_ABORT_TIMEOUT_MAX (36u * 60u * 1000u)   /* ms, as CANN */

_Thread_local uint32_t aclsim__tls_last_task_id;

/* What the exception callbacks get (opaque to programs). */
struct rtExceptionInfo {
    uint32_t taskid, streamid, tid, deviceid, retcode;
    void *args;
    uint32_t args_len;
    void *func;
};

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
        aclsim__log(ACLSIM_LOG_ERROR, "out of memory: %zu registered callback(s) not called", count);
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

/* The checks that open most functions here, in CANN's order: a NULL output
 * argument (100000, on every product), the runtime (100001), the product
 * (207000). */
static aclError prologue(const char *api, const void *out, const char *out_name,
                         unsigned families)
{
    if (out_name && !out)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", out_name);
    ACLSIM_REQUIRE_INIT(api);
    return aclsim__soc_check(api, families);
}

/* ---- failure records ------------------------------------------------------ */

/* A stream's context: written atomically when a pooled stream starts a new life. */
static struct aclsim__context *stream_context(const struct aclsim__stream *s)
{
    return __atomic_load_n(&s->context, __ATOMIC_RELAXED);
}

/* Per device: the latest failure since the last device task abort or the
 * device's opening (aclrtGetErrorVerbose). */
static pthread_mutex_t dev_fault_lock = PTHREAD_MUTEX_INITIALIZER;
static aclError dev_latest[ACLSIM_MAX_DEVICES];
static atomic_uint abort_gen[ACLSIM_MAX_DEVICES];

unsigned aclsim__abort_generation(const struct aclsim__device *dev)
{
    return atomic_load_explicit(&abort_gen[dev->id], memory_order_acquire);
}

/* Stops s: every task submitted so far that has not started is discarded
 * (a parked stream is woken to discard its wait). With code, a stream with
 * work outstanding also gets that pending fault. Callers may hold its
 * context's lock, not s->lock. */
static void stop_stream(struct aclsim__stream *s, aclError code, const char *text)
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
    stop_stream(ctx->default_stream, 0, NULL);
    for (struct aclsim__stream *s = ctx->streams; s; s = s->next_in_context)
        stop_stream(s, 0, NULL);
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

    struct aclsim__context *ctx = stream_context(s);
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
    struct aclsim__context *ctx = stream_context(s);
    if (ACLSIM_LIKELY(!atomic_load_explicit(&ctx->fault, memory_order_acquire) &&
                      !atomic_load_explicit(&s->fault, memory_order_acquire)))
        return ACL_SUCCESS;
    /* Only the life of the stream the caller waited for: a stream destroyed
     * (and its struct reused) meanwhile has nothing to report any more. */
    pthread_mutex_lock(&s->lock);
    bool same = atomic_load(&s->epoch) == ref.epoch;
    ctx = stream_context(s);
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
        atomic_store(&stream_context(s)->stop_on_failure, true);
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
    aclError err = prologue(api, taskId, "taskId", NOT_IPV350);
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
    aclError err = prologue(api, actualTimeout, "actualTimeout", NOT_IPV350);
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
    aclError err = prologue(api, interval, "interval", NOT_IPV350);
    struct aclsim__context *ctx = NULL;
    if (err || (err = aclsim__current_context(api, &ctx)))
        return err;
    *interval = interval_us();
    return ACL_SUCCESS;
}

aclError aclrtGetOpExecuteTimeout(uint32_t *const timeoutMs)
{
    static const char api[] = "aclrtGetOpExecuteTimeout";
    aclError err = prologue(api, timeoutMs, "timeoutMs", NOT_IPV350);
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

/* ---- devices: status, state callbacks, task abort, error verbose ---------- */

aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus)
{
    static const char api[] = "aclrtQueryDeviceStatus";
    aclError err = prologue(api, deviceStatus, "deviceStatus", NOT_IPV350);
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
    aclError err = prologue(api, regName, "regName", NOT_IPV350);
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
    aclError err = prologue(api, regName, "regName", FAST_RECOVER);
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
                               cbs[i].name, rc, stage == ACL_RT_DEVICE_TASK_ABORT_PRE ? "PRE" : "POST");
    }
    free(cbs);
    return err;
}

static void abort_stream(struct aclsim__stream *s, void *arg)
{
    (void)arg;
    stop_stream(s, ACL_ERROR_RT_DEVICE_TASK_ABORT,
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
    atomic_store(&stream_context(s)->fault, 0);
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
    aclError err = prologue(api, errorInfo, "errorInfo", FAST_RECOVER);
    if (err || (err = aclsim__device_check_id(deviceId, api)))
        return err;
    pthread_mutex_lock(&dev_fault_lock);
    aclError latest = dev_latest[deviceId];
    pthread_mutex_unlock(&dev_fault_lock);
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
    aclError err = prologue(api, retSize, "retSize", FAST_RECOVER);
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
    aclError err = prologue(api, memUceInfoArray, "memUceInfoArray", FAST_RECOVER);
    if (err || (err = aclsim__device_check_id(deviceId, api)))
        return err;
    return arraySize ? no_uce(deviceId, &memUceInfoArray[0], api) : ACL_SUCCESS;
}

aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo *errorInfo)
{
    static const char api[] = "aclrtRepairError";
    aclError err = prologue(api, errorInfo, "errorInfo", FAST_RECOVER);
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

void aclsim__failures_forget_after_fork(void)
{
    pthread_mutex_init(&state_callbacks.lock, NULL);
    pthread_mutex_init(&abort_callbacks.lock, NULL);
    pthread_mutex_init(&exc_lock, NULL);
    pthread_mutex_init(&dev_fault_lock, NULL);
}

void aclsim__failures_finalize(void)
{
    registry_clear(&state_callbacks);
    registry_clear(&abort_callbacks);
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
