/*
 * Failures: aclsimTrap (507015 at the next synchronize, message naming
 * kernel, device, stream, block and reason), op execute timeouts (507014),
 * exception callbacks and their getters, ACL_STOP_ON_FAILURE (the context's
 * streams stop, other contexts do not), aclrtGetThreadLastTaskId,
 * aclrtDeviceTaskAbort and its callbacks, device state callbacks,
 * aclrtQueryDeviceStatus, aclrtGetErrorVerbose, product support, bad inputs
 * and concurrent failures.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

static uint32_t my_tid(void) { return (uint32_t)syscall(SYS_gettid); }

/* ---- kernels ------------------------------------------------------------------- */

/* Every block marks out[i]; block bad traps first (and must not get past it). */
static void trap_at(int *out, uint32_t bad)
{
    uint32_t i = aclsimGetBlockIdx();
    if (i == bad) {
        aclsimTrap("index out of range");
        out[i] = 99;   /* never reached */
    }
    __atomic_fetch_add(&out[i], 1, __ATOMIC_RELAXED);
}
ACLSIM_KERNEL_REGISTER(trap_at, int *, uint32_t);

/* Sleeps ms milliseconds, then counts itself in *done. */
static void nap(uint32_t ms, int *done)
{
    sleep_ms(ms);
    __atomic_fetch_add(done, 1, __ATOMIC_RELAXED);
}
ACLSIM_KERNEL_REGISTER(nap, uint32_t, int *);

static int *dev_ints(size_t n)
{
    void *p = NULL;
    OK(aclrtMalloc(&p, n * sizeof(int), ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(p, n * sizeof(int), 0, n * sizeof(int)));
    return p;
}

static void launch_trap(int *out, uint32_t blocks, uint32_t bad, aclrtStream s)
{
    void *args[] = {&out, &bad};
    OK(aclrtLaunchKernelWithArgsArray(FUNC(trap_at), blocks, s, NULL, args));
}

static void launch_nap(uint32_t ms, int *done, aclrtStream s)
{
    void *args[] = {&ms, &done};
    OK(aclrtLaunchKernelWithArgsArray(FUNC(nap), 1, s, NULL, args));
}

static int read_int(const int *p)
{
    int v = 0;
    OK(aclrtMemcpy(&v, sizeof v, p, sizeof v, ACL_MEMCPY_DEVICE_TO_HOST));
    return v;
}

/* ---- aclsimTrap ------------------------------------------------------------------ */

static void test_trap_reports_at_synchronize(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    int *out = dev_ints(4);
    launch_trap(out, 4, 2, s);
    atomic_int after = 0;
    OK(aclrtLaunchHostFunc(s, count_fn, &after));   /* default mode: later work runs */
    char handle[32];
    snprintf(handle, sizeof handle, "%p", s);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("aclrtSynchronizeStream", "kernel trap_at", "device 0", handle, "block 2 of 4",
               "index out of range", "507015");
    assert_int_equal(atomic_load(&after), 1);
    assert_int_equal(read_int(out + 2), 0);         /* the trapping block stopped */
    EXPECT_OK(aclrtSynchronizeStream(s));            /* reported once */
    EXPECT_OK(aclrtSynchronizeDevice());
    /* Or by the device's synchronize, whichever comes first. */
    launch_trap(out, 4, 1, s);
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "block 1 of 4", aclrtSynchronizeDevice());
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtSynchronizeStream(s));
    /* The stream still works. */
    launch_trap(out, 4, 4, s);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_true(read_int(out + 2) >= 1);              /* the launch without a trap ran block 2 */
    OK(aclrtFree(out));
    OK(aclrtDestroyStream(s));
}

static void test_trap_on_default_stream(void **state)
{
    (void)state;
    int *out = dev_ints(1);
    launch_trap(out, 1, 0, NULL);
    EXPECT_ERR2(ACL_ERROR_RT_AICORE_EXCEPTION, "default stream", "block 0 of 1",
                aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    drain_msg();
    (void)aclrtSynchronizeDevice();
    drain_msg();
    OK(aclrtFree(out));
}

static void test_trap_skips_blocks_not_started(void **state)
{
    (void)state;
    enum { N = 4000 };
    int *out = dev_ints(N);
    launch_trap(out, N, 0, NULL);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_AICORE_EXCEPTION);
    drain_msg();
    (void)aclrtSynchronizeDevice();
    drain_msg();
    int *host = malloc(N * sizeof(int));
    OK(aclrtMemcpy(host, N * sizeof(int), out, N * sizeof(int), ACL_MEMCPY_DEVICE_TO_HOST));
    int ran = 0;
    for (int i = 0; i < N; i++)
        ran += host[i];
    free(host);
    assert_int_equal(ran < N / 2, 1);   /* the blocks claimed after the trap never ran */
    OK(aclrtFree(out));
}

/* ---- exception callbacks ------------------------------------------------------------ */

static struct seen {
    atomic_int calls;
    uint32_t task, stream, thread, device, code, caller_tid, args_len;
    void *args, *func;
    int null_out_codes;   /* NULL outputs refused with 100000 (of 2) */
} seen_a, seen_b;

static void record(struct seen *s, aclrtExceptionInfo *info)
{
    s->task = aclrtGetTaskIdFromExceptionInfo(info);
    s->stream = aclrtGetStreamIdFromExceptionInfo(info);
    s->thread = aclrtGetThreadIdFromExceptionInfo(info);
    s->device = aclrtGetDeviceIdFromExceptionInfo(info);
    s->code = aclrtGetErrorCodeFromExceptionInfo(info);
    s->caller_tid = my_tid();
    aclrtFuncHandle f = NULL;
    if (aclrtGetFuncHandleFromExceptionInfo(info, &f) == ACL_SUCCESS)
        s->func = f;
    (void)aclrtGetArgsFromExceptionInfo(info, &s->args, &s->args_len);
    uint32_t len;
    s->null_out_codes = (aclrtGetArgsFromExceptionInfo(info, NULL, &len) == ACL_ERROR_INVALID_PARAM) +
                        (aclrtGetFuncHandleFromExceptionInfo(info, NULL) == ACL_ERROR_INVALID_PARAM);
    aclGetRecentErrMsg();
    atomic_fetch_add(&s->calls, 1);
}
static void cb_a(aclrtExceptionInfo *info) { record(&seen_a, info); }
static void cb_b(aclrtExceptionInfo *info) { record(&seen_b, info); }

static void test_exception_callbacks(void **state)
{
    (void)state;
    memset(&seen_a, 0, sizeof seen_a);
    memset(&seen_b, 0, sizeof seen_b);
    OK(aclrtExceptionInfoCallbackRegister(cb_a));
    OK(aclrtExceptionInfoCallbackRegister(cb_a));   /* kept once */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    OK(aclrtSetExceptionInfoCallback(cb_b));
#pragma GCC diagnostic pop
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    int *out = dev_ints(8);
    launch_trap(out, 8, 5, s);
    uint32_t task = 0;
    OK(aclrtGetThreadLastTaskId(&task));
    assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_RT_AICORE_EXCEPTION);
    drain_msg();
    assert_int_equal(atomic_load(&seen_a.calls), 1);
    assert_int_equal(atomic_load(&seen_b.calls), 1);
    assert_int_equal(seen_a.task, task);
    assert_int_equal(seen_a.device, 0);
    assert_int_equal(seen_a.code, ACL_ERROR_RT_AICORE_EXCEPTION);
    assert_int_equal(seen_a.thread, seen_a.caller_tid);   /* tid: the thread calling back */
    assert_int_not_equal(seen_a.thread, my_tid());        /* a device worker, not us */
    assert_ptr_equal(seen_a.func, FUNC(trap_at));
    assert_non_null(seen_a.args);
    assert_true(seen_a.args_len >= sizeof(int *) + sizeof(uint32_t));
    assert_int_equal(seen_b.stream, seen_a.stream);
    assert_int_equal(seen_a.null_out_codes, 2);
    /* Same function set both ways: two independent registrations. */
    OK(aclrtExceptionInfoCallbackRegister(cb_b));
    launch_trap(out, 1, 0, s);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_RT_AICORE_EXCEPTION);
    assert_int_equal(atomic_load(&seen_a.calls), 2);
    assert_int_equal(atomic_load(&seen_b.calls), 3);
    /* Unregistered, cleared: not called any more. */
    OK(aclrtExceptionInfoCallbackUnregister(cb_a));
    OK(aclrtExceptionInfoCallbackUnregister(cb_a));   /* not registered: success */
    OK(aclrtExceptionInfoCallbackUnregister(cb_b));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    OK(aclrtSetExceptionInfoCallback(NULL));
#pragma GCC diagnostic pop
    launch_trap(out, 1, 0, s);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_RT_AICORE_EXCEPTION);
    assert_int_equal(atomic_load(&seen_a.calls), 2);
    assert_int_equal(atomic_load(&seen_b.calls), 3);
    drain_msg();
    (void)aclrtSynchronizeDevice();
    drain_msg();
    OK(aclrtFree(out));
    OK(aclrtDestroyStream(s));
}

static void test_exception_bad_inputs(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "callback", aclrtExceptionInfoCallbackRegister(NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "callback", aclrtExceptionInfoCallbackUnregister(NULL));
    assert_int_equal(aclrtGetTaskIdFromExceptionInfo(NULL), 0xFFFFFFFFu);
    assert_int_equal(aclrtGetStreamIdFromExceptionInfo(NULL), 0xFFFFFFFFu);
    assert_int_equal(aclrtGetThreadIdFromExceptionInfo(NULL), 0xFFFFFFFFu);
    assert_int_equal(aclrtGetDeviceIdFromExceptionInfo(NULL), 0xFFFFFFFFu);
    assert_int_equal(aclrtGetErrorCodeFromExceptionInfo(NULL), 0xFFFFFFFFu);
    expect_msg("info is NULL");
    void *p;
    uint32_t n;
    aclrtFuncHandle f;
    assert_int_equal(aclrtGetArgsFromExceptionInfo(NULL, &p, &n), ACL_ERROR_INVALID_EXCEPTION_INFO);
    assert_int_equal(aclrtGetFuncHandleFromExceptionInfo(NULL, &f), ACL_ERROR_INVALID_EXCEPTION_INFO);
    drain_msg();
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "taskId", aclrtGetThreadLastTaskId(NULL));
}

/* ---- last task id ---------------------------------------------------------------- */

static void last_task_in_thread(void *arg)
{
    uint32_t *id = arg;
    (void)aclrtGetThreadLastTaskId(id);
}

static void test_thread_last_task_id(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    atomic_int n = 0;
    uint32_t a = 0, b = 0, c = 0, other = 123;
    OK(aclrtLaunchHostFunc(s, count_fn, &n));
    OK(aclrtGetThreadLastTaskId(&a));
    OK(aclrtLaunchHostFunc(s, count_fn, &n));
    OK(aclrtGetThreadLastTaskId(&b));
    assert_int_equal(b, a + 1);
    OK(aclrtLaunchHostFunc(NULL, count_fn, &n));    /* the default stream does not count */
    OK(aclrtGetThreadLastTaskId(&c));
    assert_int_equal(c, b);
    struct call call;
    call_start(&call, last_task_in_thread, &other);
    assert_true(call_wait(&call, WAIT_MS));
    assert_int_equal(other, 0);                     /* per thread */
    OK(aclrtSynchronizeStream(s));
    OK(aclrtSynchronizeStream(NULL));
    OK(aclrtDestroyStream(s));
}

/* ---- failure mode ----------------------------------------------------------------- */

static void test_stop_on_failure(void **state)
{
    (void)state;
    aclrtContext main_ctx = current_context(), other_ctx;
    aclrtStream a, b, c;
    OK(aclrtCreateStream(&a));
    OK(aclrtCreateStream(&b));
    OK(aclrtSetStreamFailureMode(a, ACL_STOP_ON_FAILURE));
    OK(aclrtSetStreamFailureMode(a, ACL_STOP_ON_FAILURE));   /* same mode: fine */
    OK(aclrtSetStreamFailureMode(b, ACL_CONTINUE_ON_FAILURE));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "cannot go back",
               aclrtSetStreamFailureMode(a, ACL_CONTINUE_ON_FAILURE));
    OK(aclrtCreateContext(&other_ctx, 0));                      /* another context, same device */
    OK(aclrtCreateStream(&c));
    OK(aclrtSetCurrentContext(main_ctx));

    /* b: a task running across the failure, then tasks queued before it. */
    /* The default stream waits (parked) for an event b records after that. */
    struct blocker blk;
    blocker_init(&blk);
    atomic_int b_after = 0, a_after = 0, c_after = 0;
    aclrtEvent ev;
    OK(aclrtCreateEvent(&ev));
    OK(aclrtLaunchHostFunc(b, blocker_fn, &blk));
    OK(aclrtLaunchHostFunc(b, count_fn, &b_after));
    OK(aclrtRecordEvent(ev, b));
    OK(aclrtStreamWaitEvent(NULL, ev));
    OK(aclrtLaunchHostFunc(NULL, count_fn, &b_after));
    assert_true(gate_wait(&blk.started, WAIT_MS));

    int *out = dev_ints(2);
    launch_trap(out, 1, 0, a);
    /* Queued behind the trap, or refused if the trap already stopped the
     * context (a new submission then gets the failure): never run either way. */
    aclError queued = aclrtLaunchHostFunc(a, count_fn, &a_after);
    assert_true(queued == ACL_SUCCESS || queued == ACL_ERROR_RT_AICORE_EXCEPTION);
    assert_int_equal(aclrtSynchronizeStream(a), ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("kernel trap_at", "ACL_STOP_ON_FAILURE");
    blocker_release(&blk);
    assert_true(gate_wait(&blk.finished, WAIT_MS));             /* started: it finishes */
    assert_false(blocker_timed_out(&blk));
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "kernel trap_at", aclrtSynchronizeStream(b));
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "kernel trap_at", aclrtSynchronizeStream(NULL));
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "kernel trap_at", aclrtSynchronizeDevice());
    assert_int_equal(atomic_load(&a_after), 0);
    assert_int_equal(atomic_load(&b_after), 0);                 /* queued before, never ran */
    /* Sticky; new work is refused. */
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "no more tasks",
               aclrtLaunchHostFunc(b, count_fn, &b_after));
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, NULL, aclrtSynchronizeStream(a));

    /* The other context is unaffected. */
    OK(aclrtSetCurrentContext(other_ctx));
    OK(aclrtLaunchHostFunc(c, count_fn, &c_after));
    EXPECT_OK(aclrtSynchronizeStream(c));
    assert_int_equal(atomic_load(&c_after), 1);
    OK(aclrtDestroyStream(c));
    OK(aclrtDestroyContext(other_ctx));
    OK(aclrtSetCurrentContext(main_ctx));
    OK(aclrtDestroyStream(a));
    OK(aclrtDestroyStream(b));
    OK(aclrtDestroyEvent(ev));
    drain_msg();
}

static void test_failure_mode_bad_inputs(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "not a live stream",
               aclrtSetStreamFailureMode((aclrtStream)(uintptr_t)0x1234, ACL_STOP_ON_FAILURE));
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    OK(aclrtDestroyStream(s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, NULL, aclrtSetStreamFailureMode(s, 1));
    OK(aclrtSetStreamFailureMode(NULL, ACL_CONTINUE_ON_FAILURE));   /* default stream, A2: fine */
}

/* ---- op timeouts ------------------------------------------------------------------ */

static int setup_fast_interval(void **state)
{
    setenv("ACLSIM_OP_TIMEOUT_INTERVAL_US", "1000", 1);
    return setup_gated(state);
}

static int teardown_fast_interval(void **state)
{
    unsetenv("ACLSIM_OP_TIMEOUT_INTERVAL_US");
    return teardown_gated(state);
}

static void test_op_execute_timeout(void **state)
{
    (void)state;
    uint32_t ms = 0;
    OK(aclrtGetOpExecuteTimeout(&ms));
    assert_int_equal(ms, 1091000);                  /* A2's default */
    uint64_t interval = 0, actual = 0;
    OK(aclrtGetOpTimeOutInterval(&interval));
    assert_int_equal(interval, 1000);
    OK(aclrtSetOpExecuteTimeOutV2(29500, &actual));
    assert_int_equal(actual, 30000);                 /* rounded up to 30 intervals */
    OK(aclrtGetOpExecuteTimeout(&ms));
    assert_int_equal(ms, 30);
    OK(aclrtSetOpExecuteTimeOutV2(1000000000u, &actual));
    assert_int_equal(actual, 254000);                /* at most 254 intervals */
    OK(aclrtSetOpExecuteTimeOut(5));
    OK(aclrtGetOpExecuteTimeout(&ms));
    assert_int_equal(ms, 254);
    OK(aclrtSetOpExecuteTimeOutV2(0, &actual));      /* interval < 100 ms: never */
    assert_int_equal(actual, UINT64_MAX);
    OK(aclrtGetOpExecuteTimeout(&ms));
    assert_int_equal(ms, UINT32_MAX);

    OK(aclrtSetOpExecuteTimeOutV2(30000, &actual));
    int *done = dev_ints(1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    launch_nap(120, done, NULL);
    EXPECT_ERR2(ACL_ERROR_RT_AICORE_TIMEOUT, "kernel nap", "op execute timeout of 30000 us",
                aclrtSynchronizeStream(NULL));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long took = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    assert_true(took >= 120 && took < 120 + WAIT_MS);   /* checked when the kernel returns */
    assert_int_equal(read_int(done), 1);                 /* not pre-empted */
    launch_nap(1, done, NULL);
    EXPECT_OK(aclrtSynchronizeStream(NULL));             /* within the limit */
    drain_msg();
    (void)aclrtSynchronizeDevice();
    drain_msg();
    OK(aclrtSetOpExecuteTimeOutV2(0, &actual));
    OK(aclrtFree(done));
}

static void test_op_timeout_interval_setting(void **state)
{
    (void)state;
    setenv("ACLSIM_OP_TIMEOUT_INTERVAL_US", "0", 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ACLSIM_OP_TIMEOUT_INTERVAL_US", aclInit(NULL));
    setenv("ACLSIM_OP_TIMEOUT_INTERVAL_US", "100000001", 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ACLSIM_OP_TIMEOUT_INTERVAL_US", aclInit(NULL));
    setenv("ACLSIM_OP_TIMEOUT_INTERVAL_US", "250000", 1);
    OK(aclInit(NULL));
    OK(aclrtSetDevice(0));
    uint64_t interval = 0, actual = 0;
    OK(aclrtGetOpTimeOutInterval(&interval));
    assert_int_equal(interval, 250000);
    OK(aclrtSetOpExecuteTimeOutV2(0, &actual));   /* interval >= 100 ms: 0 is the maximum */
    assert_int_equal(actual, 254u * 250000u);
    OK(reset_and_finalize());
    OK(aclInit(NULL));                             /* the default: A2 hardware's */
    OK(aclrtSetDevice(0));
    OK(aclrtGetOpTimeOutInterval(&interval));
    assert_int_equal(interval, 4294967);
    uint32_t ms = 0;
    OK(aclrtSetOpExecuteTimeOut(0));
    OK(aclrtGetOpExecuteTimeout(&ms));
    assert_int_equal(ms, (254ull * 4294967u + 999) / 1000);
    OK(reset_and_finalize());
}

/* aclrtSetOpWaitTimeout bounds the aclrtStreamWaitEvent waits queued after it:
 * past it the wait fails its stream (reported by the next synchronize). */
static void test_op_wait_timeout(void **state)
{
    (void)state;
    aclrtStream a, b;
    OK(aclrtCreateStream(&a));
    OK(aclrtCreateStream(&b));
    struct blocker blk;
    blocker_init(&blk);
    aclrtEvent ev;
    OK(aclrtCreateEvent(&ev));
    OK(aclrtLaunchHostFunc(a, blocker_fn, &blk));
    OK(aclrtRecordEvent(ev, a));
    OK(aclrtSetOpWaitTimeout(1));
    OK(aclrtStreamWaitEvent(b, ev));
    atomic_int after = 0;
    OK(aclrtLaunchHostFunc(b, count_fn, &after));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    EXPECT_ERR2(ACL_ERROR_RT_WAIT_TIMEOUT, "timed out after 1 s", "event",
                aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long took = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    assert_true(took >= 900 && took < WAIT_MS);
    assert_int_equal(atomic_load(&after), 1);      /* later work runs (default mode) */
    blocker_release(&blk);
    OK(aclrtSetOpWaitTimeout(0));
    EXPECT_OK(aclrtSynchronizeStream(a));
    OK(aclrtDestroyEvent(ev));
    OK(aclrtDestroyStream(a));
    OK(aclrtDestroyStream(b));
}

static void test_op_timeout_bad_inputs(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "actualTimeout", aclrtSetOpExecuteTimeOutV2(1, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "interval", aclrtGetOpTimeOutInterval(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeoutMs", aclrtGetOpExecuteTimeout(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "no product", aclrtSetOpExecuteTimeOutWithMs(10));
    OK(aclrtSetOpWaitTimeout(3));
    OK(aclrtSetOpWaitTimeout(0));
}

/* ---- device task abort --------------------------------------------------------------- */

static struct abort_seen {
    atomic_int pre, post;
    uint32_t tid;
    void *args;
} abort_seen;

static int32_t abort_cb(int32_t dev, aclrtDeviceTaskAbortStage stage, uint32_t timeout, void *args)
{
    (void)dev;
    (void)timeout;
    abort_seen.tid = my_tid();
    abort_seen.args = args;
    atomic_fetch_add(stage == ACL_RT_DEVICE_TASK_ABORT_PRE ? &abort_seen.pre : &abort_seen.post, 1);
    return 0;
}

struct abort_call { int32_t device; uint32_t timeout; aclError result; uint32_t tid; };

static void do_abort(void *arg)
{
    struct abort_call *c = arg;
    c->tid = my_tid();
    c->result = aclrtDeviceTaskAbort(c->device, c->timeout);
}

static void test_device_task_abort(void **state)
{
    (void)state;
    memset(&abort_seen, 0, sizeof abort_seen);
    int token;
    OK(aclrtSetDeviceTaskAbortCallback("test", abort_cb, &token));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "already registered",
               aclrtSetDeviceTaskAbortCallback("test", abort_cb, NULL));
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    struct blocker blk;
    blocker_init(&blk);
    atomic_int after = 0;
    OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    for (int i = 0; i < 10; i++)
        OK(aclrtLaunchHostFunc(s, count_fn, &after));
    assert_true(gate_wait(&blk.started, WAIT_MS));

    /* The running host function is not interrupted: a short timeout passes. */
    struct abort_call c = {0, 50, -1, 0};
    struct call call;
    call_start(&call, do_abort, &c);
    assert_true(call_wait(&call, WAIT_MS));
    assert_int_equal(c.result, ACL_ERROR_RT_WAIT_TIMEOUT);
    /* With no timeout, it returns once the running task is over. */
    c = (struct abort_call){0, 0, -1, 0};
    call_start(&call, do_abort, &c);
    sleep_ms(20);
    blocker_release(&blk);
    assert_true(call_wait(&call, WAIT_MS));
    assert_int_equal(c.result, ACL_SUCCESS);
    assert_int_equal(atomic_load(&after), 0);          /* queued work discarded */
    assert_int_equal(atomic_load(&abort_seen.pre), 2);
    assert_int_equal(atomic_load(&abort_seen.post), 1);
    assert_int_equal(abort_seen.tid, c.tid);            /* on the aborting thread */
    assert_ptr_equal(abort_seen.args, &token);
    /* The device is clean again: synchronize succeeds, new work runs. */
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtSynchronizeDevice());
    OK(aclrtLaunchHostFunc(s, count_fn, &after));
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_int_equal(atomic_load(&after), 1);
    OK(aclrtSetDeviceTaskAbortCallback("test", NULL, NULL));   /* unregistered */
    EXPECT_OK(aclrtDeviceTaskAbort(0, 0));
    assert_int_equal(atomic_load(&abort_seen.pre), 2);
    OK(aclrtDestroyStream(s));
}

static void test_abort_cleans_stop_on_failure(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    OK(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE));
    int *out = dev_ints(1);
    launch_trap(out, 1, 0, s);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_RT_AICORE_EXCEPTION);
    aclrtErrorInfo info;
    OK(aclrtGetErrorVerbose(0, &info));
    assert_int_equal(info.errorType, ACL_RT_ERROR_OTHERS);   /* A2: others */
    atomic_int n = 0;
    assert_int_equal(aclrtLaunchHostFunc(s, count_fn, &n), ACL_ERROR_RT_AICORE_EXCEPTION);
    OK(aclrtDeviceTaskAbort(0, 0));
    OK(aclrtGetErrorVerbose(0, &info));
    assert_int_equal(info.errorType, ACL_RT_NO_ERROR);
    OK(aclrtLaunchHostFunc(s, count_fn, &n));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtSynchronizeDevice());
    assert_int_equal(atomic_load(&n), 1);
    drain_msg();
    OK(aclrtFree(out));
    OK(aclrtDestroyStream(s));
}

static void test_reset_forgets_failures(void **state)
{
    (void)state;
    int *out = dev_ints(1);
    launch_trap(out, 1, 0, NULL);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_AICORE_EXCEPTION);
    OK(aclrtResetDeviceForce(0));     /* the device's failure is still pending */
    OK(aclrtSetDevice(0));
    aclrtErrorInfo info;
    OK(aclrtGetErrorVerbose(0, &info));
    assert_int_equal(info.errorType, ACL_RT_NO_ERROR);
    EXPECT_OK(aclrtSynchronizeDevice());
}

static void test_abort_bad_inputs(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "36 minutes", aclrtDeviceTaskAbort(0, 36u * 60u * 1000u + 1));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, "deviceId", aclrtDeviceTaskAbort(7, 0));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, "deviceId", aclrtDeviceTaskAbort(-1, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "regName", aclrtSetDeviceTaskAbortCallback(NULL, abort_cb, NULL));
    EXPECT_OK(aclrtDeviceTaskAbort(1, 100));   /* a device not in use: nothing to abort */
}

/* ---- device state, status, verbose errors ------------------------------------------ */

static struct { atomic_int n; int states[8]; int devs[8]; uint32_t tid; void *args; } state_seen;

static void state_cb(int32_t dev, aclrtDeviceState st, void *args)
{
    int i = atomic_fetch_add(&state_seen.n, 1);
    if (i < 8) {
        state_seen.states[i] = st;
        state_seen.devs[i] = dev;
    }
    state_seen.tid = my_tid();
    state_seen.args = args;
}

static void test_device_state_callbacks(void **state)
{
    (void)state;
    memset(&state_seen, 0, sizeof state_seen);
    int token;
    OK(aclrtRegDeviceStateCallback("watch", state_cb, &token));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "already registered",
               aclrtRegDeviceStateCallback("watch", state_cb, NULL));
    OK(aclrtSetDevice(1));      /* opens it: SET_PRE, SET_POST */
    OK(aclrtSetDevice(1));      /* open already: SET_POST */
    OK(aclrtResetDevice(1));    /* one reference left: nothing */
    OK(aclrtResetDevice(1));    /* closes it: RESET_PRE, RESET_POST */
    OK(aclrtSetDevice(0));      /* open already (the setup): SET_POST */
    assert_int_equal(atomic_load(&state_seen.n), 6);
    int want[] = {ACL_RT_DEVICE_STATE_SET_PRE, ACL_RT_DEVICE_STATE_SET_POST,
                  ACL_RT_DEVICE_STATE_SET_POST, ACL_RT_DEVICE_STATE_RESET_PRE,
                  ACL_RT_DEVICE_STATE_RESET_POST, ACL_RT_DEVICE_STATE_SET_POST};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(state_seen.states[i], want[i]);
        assert_int_equal(state_seen.devs[i], i < 5 ? 1 : 0);
    }
    assert_int_equal(state_seen.tid, my_tid());
    assert_ptr_equal(state_seen.args, &token);
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtSetDevice(9));   /* no callback */
    assert_int_equal(atomic_load(&state_seen.n), 6);
    OK(aclrtResetDeviceForce(0));   /* force: closes it */
    assert_int_equal(atomic_load(&state_seen.n), 8);
    assert_int_equal(state_seen.states[6], ACL_RT_DEVICE_STATE_RESET_PRE);
    assert_int_equal(state_seen.states[7], ACL_RT_DEVICE_STATE_RESET_POST);
    OK(aclrtRegDeviceStateCallback("watch", NULL, NULL));
    OK(aclrtRegDeviceStateCallback("never-registered", NULL, NULL));
    OK(aclrtSetDevice(0));
    assert_int_equal(atomic_load(&state_seen.n), 8);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "regName", aclrtRegDeviceStateCallback(NULL, state_cb, NULL));
}

static void test_query_device_status(void **state)
{
    (void)state;
    aclrtDeviceStatus st = ACL_RT_DEVICE_STATUS_END;
    OK(aclrtQueryDeviceStatus(1, &st));
    assert_int_equal(st, ACL_RT_DEVICE_STATUS_NORMAL);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "deviceStatus", aclrtQueryDeviceStatus(0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, "deviceId", aclrtQueryDeviceStatus(2, &st));
    aclrtErrorInfo info;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "errorInfo", aclrtGetErrorVerbose(0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, "deviceId", aclrtGetErrorVerbose(5, &info));
    OK(aclrtGetErrorVerbose(0, &info));
    assert_int_equal(info.errorType, ACL_RT_NO_ERROR);
}

static void test_uce_and_repair(void **state)
{
    (void)state;
    aclrtMemUceInfo uce[4];
    size_t n = 99;
    OK(aclrtGetMemUceInfo(0, uce, 4, &n));
    assert_int_equal(n, 0);                                 /* simulated memory has none */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "retSize", aclrtGetMemUceInfo(0, uce, 4, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memUceInfoArray", aclrtGetMemUceInfo(0, NULL, 4, &n));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtGetMemUceInfo(3, uce, 4, &n));
    OK(aclrtMemUceRepair(0, uce, 0));
    uce[0] = (aclrtMemUceInfo){.addr = (void *)(uintptr_t)0x1000, .len = 64};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "no uncorrectable memory error", aclrtMemUceRepair(0, uce, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memUceInfoArray", aclrtMemUceRepair(0, NULL, 1));

    /* A failure, then the documented order: verbose info, abort, repair. */
    int *out = dev_ints(1);
    launch_trap(out, 1, 0, NULL);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_AICORE_EXCEPTION);
    drain_msg();
    aclrtErrorInfo info;
    OK(aclrtGetErrorVerbose(0, &info));
    assert_int_equal(info.tryRepair, 0);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "tryRepair", aclrtRepairError(0, &info));
    info.tryRepair = 1;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "errorType", aclrtRepairError(0, &info));
    info.errorType = ACL_RT_ERROR_MEMORY;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "no memory error", aclrtRepairError(0, &info));
    info.errorType = ACL_RT_NO_ERROR;
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtRepairError(9, &info));
    OK(aclrtRepairError(0, &info));                          /* clears the device's fault */
    OK(aclrtGetErrorVerbose(0, &info));
    assert_int_equal(info.errorType, ACL_RT_NO_ERROR);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "errorInfo", aclrtRepairError(0, NULL));
    OK(aclrtFree(out));
}

/* ---- product support ----------------------------------------------------------------- */

static aclError init_soc(const char *soc)
{
    setenv("ACLSIM_SOC_VERSION", soc, 1);
    aclError e = init_devices("2", "64M");
    unsetenv("ACLSIM_SOC_VERSION");
    if (!e)
        e = aclrtSetDevice(0);
    return e;
}

static void test_product_support(void **state)
{
    (void)state;
    aclrtErrorInfo info;
    uint32_t id;
    aclrtDeviceStatus st;
    /* Atlas inference series (310P): no abort, no verbose errors, no wait timeout, no
     * failure mode for the default stream. NULL still gets 100000 first. */
    OK(init_soc("Ascend310P3"));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "errorInfo", aclrtGetErrorVerbose(0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310P3", aclrtGetErrorVerbose(0, &info));
    size_t n;
    aclrtMemUceInfo uce[1];
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtGetMemUceInfo(0, uce, 1, &n));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtMemUceRepair(0, uce, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtRepairError(0, &info));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtDeviceTaskAbort(0, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL,
               aclrtSetDeviceTaskAbortCallback("x", abort_cb, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtSetOpWaitTimeout(1));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "default stream",
               aclrtSetStreamFailureMode(NULL, ACL_STOP_ON_FAILURE));
    uint32_t ms;
    OK(aclrtGetOpExecuteTimeout(&ms));
    assert_int_equal(ms, 547000);
    OK(aclrtSetOpExecuteTimeOut(10000));          /* capped at the product's 547 s */
    OK(aclrtGetOpExecuteTimeout(&ms));
    assert_int_equal(ms, 547000);
    OK(aclrtQueryDeviceStatus(0, &st));
    OK(reset_and_finalize());
    /* Ascend 950: AI Core errors in detail. */
    OK(init_soc("Ascend950PR"));
    int *out = dev_ints(1);
    launch_trap(out, 1, 0, NULL);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_AICORE_EXCEPTION);
    OK(aclrtGetErrorVerbose(0, &info));
    assert_int_equal(info.errorType, ACL_RT_ERROR_AICORE);
    assert_int_equal(info.hasDetail, 1);
    assert_int_equal(info.detail.aicoreErrType, ACL_RT_AICORE_ERROR_SW);
    OK(aclrtFree(out));
    OK(reset_and_finalize());
    /* IPV350 supports none of them (the last errors aside). */
    OK(init_soc("IPV350"));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtQueryDeviceStatus(0, &st));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtGetThreadLastTaskId(&id));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtExceptionInfoCallbackRegister(cb_a));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtRegDeviceStateCallback("x", state_cb, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtSetStreamFailureMode(NULL, 0));
    OK(aclrtSetOpExecuteTimeOut(1));              /* supported everywhere */
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    OK(reset_and_finalize());
}

static void test_uninitialized(void **state)
{
    (void)state;
    aclrtDeviceStatus st;
    uint64_t v;
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, aclrtQueryDeviceStatus(0, &st));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, aclrtDeviceTaskAbort(0, 0));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, aclrtSetStreamFailureMode(NULL, 1));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, aclrtGetOpTimeOutInterval(&v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL, aclrtGetOpTimeOutInterval(NULL));   /* NULL first */
}

/* ---- concurrency --------------------------------------------------------------------- */

static atomic_int cb_calls;
static void count_cb(aclrtExceptionInfo *info)
{
    (void)info;
    atomic_fetch_add(&cb_calls, 1);
}

static atomic_int churn_calls;
static void churn_cb(aclrtExceptionInfo *info)
{
    (void)info;
    atomic_fetch_add(&churn_calls, 1);   /* called concurrently by several workers */
}

struct racer { aclrtContext ctx; int rounds; atomic_int *errors; char *err; };

static void *race_traps(void *arg)
{
    struct racer *r = arg;
    aclrtSetCurrentContext(r->ctx);
    aclrtStream s;
    if (aclrtCreateStream(&s)) {
        note_first_error(r->errors, r->err, 256, "create stream");
        return NULL;
    }
    int *out = NULL;
    aclrtMalloc((void **)&out, 64 * sizeof(int), ACL_MEM_MALLOC_HUGE_FIRST);
    for (int i = 0; i < r->rounds; i++) {
        uint32_t bad = (uint32_t)(i % 8), blocks = 8;
        void *args[] = {&out, &bad};
        aclrtLaunchKernelWithArgsArray(FUNC(trap_at), blocks, s, NULL, args);
        aclError e = aclrtSynchronizeStreamWithTimeout(s, WAIT_MS);   /* bounded: no hang */
        if (e != ACL_ERROR_RT_AICORE_EXCEPTION)
            note_first_error(r->errors, r->err, 256, "round %d: sync returned %d", i, e);
        if (aclrtGetLastError(ACL_RT_THREAD_LEVEL) != ACL_ERROR_RT_AICORE_EXCEPTION)
            note_first_error(r->errors, r->err, 256, "round %d: last error", i);
        aclGetRecentErrMsg();
    }
    aclrtFree(out);
    aclrtDestroyStream(s);
    return NULL;
}

static void test_concurrent_failures(void **state)
{
    (void)state;
    atomic_store(&cb_calls, 0);
    OK(aclrtExceptionInfoCallbackRegister(count_cb));
    enum { THREADS = 4, ROUNDS = 40 };
    pthread_t th[THREADS];
    atomic_int errors = 0;
    char err[256] = "";
    struct racer r = {current_context(), ROUNDS, &errors, err};
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race_traps, &r), 0);
    /* Registrations change while failures are reported. */
    for (int i = 0; i < 200; i++) {
        OK(aclrtExceptionInfoCallbackRegister(churn_cb));
        OK(aclrtExceptionInfoCallbackUnregister(churn_cb));
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    if (atomic_load(&errors))
        fail_msg("%d error(s), first: %s", atomic_load(&errors), err);
    assert_int_equal(atomic_load(&cb_calls), THREADS * ROUNDS);
    OK(aclrtExceptionInfoCallbackUnregister(count_cb));
    (void)aclrtSynchronizeDevice();
    drain_msg();
}

/* Counts, after about 50 us of work. */
static void slow_count(void *arg)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 50000);
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* Sibling streams run freely when the failure stops them: afterwards each
 * runs at most the one task it had started (its count grows by at most 1
 * once the failure is reported), and every synchronize, bounded, reports it. */
static void test_stop_on_failure_race(void **state)
{
    (void)state;
    enum { ROUNDS = 25, SIBLINGS = 3, TASKS = 300 };
    aclrtContext main_ctx = current_context();
    int grew_max = 0, ran_min = TASKS;
    for (int round = 0; round < ROUNDS; round++) {
        aclrtContext ctx;
        OK(aclrtCreateContext(&ctx, 0));
        aclrtStream a, b[SIBLINGS];
        OK(aclrtCreateStream(&a));
        OK(aclrtSetStreamFailureMode(a, ACL_STOP_ON_FAILURE));
        atomic_int count[SIBLINGS];
        for (int i = 0; i < SIBLINGS; i++) {
            atomic_init(&count[i], 0);
            OK(aclrtCreateStream(&b[i]));
            for (int k = 0; k < TASKS; k++)
                OK(aclrtLaunchHostFunc(b[i], slow_count, &count[i]));
        }
        int *out = dev_ints(1);
        launch_trap(out, 1, 0, a);
        assert_int_equal(aclrtSynchronizeStreamWithTimeout(a, WAIT_MS), ACL_ERROR_RT_AICORE_EXCEPTION);
        int seen[SIBLINGS];
        for (int i = 0; i < SIBLINGS; i++)
            seen[i] = atomic_load(&count[i]);
        for (int i = 0; i < SIBLINGS; i++) {
            aclError e = aclrtSynchronizeStreamWithTimeout(b[i], WAIT_MS);
            /* A stream whose tasks all ran before the failure has nothing to report
             * of its own, but the context is stopped: it reports the failure too. */
            assert_int_equal(e, ACL_ERROR_RT_AICORE_EXCEPTION);
            int grew = atomic_load(&count[i]) - seen[i];
            assert_true(grew <= 1);
            if (grew > grew_max)
                grew_max = grew;
            if (atomic_load(&count[i]) < ran_min)
                ran_min = atomic_load(&count[i]);
        }
        drain_msg();
        OK(aclrtFree(out));
        OK(aclrtDestroyStream(a));
        for (int i = 0; i < SIBLINGS; i++)
            OK(aclrtDestroyStream(b[i]));
        OK(aclrtDestroyContext(ctx));
        OK(aclrtSetCurrentContext(main_ctx));
    }
    (void)aclrtSynchronizeDevice();
    drain_msg();
    print_message("stop race: at most %d task(s) finished after the report; fewest run %d of %d\n",
                  grew_max, ran_min, TASKS);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_gated, teardown_gated)
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_uninitialized, setup_clean, teardown_clean),
        T(test_trap_reports_at_synchronize),
        T(test_trap_on_default_stream),
        T(test_trap_skips_blocks_not_started),
        T(test_exception_callbacks),
        T(test_exception_bad_inputs),
        T(test_thread_last_task_id),
        T(test_stop_on_failure),
        T(test_failure_mode_bad_inputs),
        cmocka_unit_test_setup_teardown(test_op_execute_timeout, setup_fast_interval,
                                        teardown_fast_interval),
        cmocka_unit_test_setup_teardown(test_op_timeout_interval_setting, setup_clean,
                                        teardown_clean),
        T(test_op_wait_timeout),
        T(test_op_timeout_bad_inputs),
        T(test_device_task_abort),
        T(test_abort_cleans_stop_on_failure),
        T(test_reset_forgets_failures),
        T(test_abort_bad_inputs),
        T(test_device_state_callbacks),
        T(test_query_device_status),
        T(test_uce_and_repair),
        cmocka_unit_test_setup_teardown(test_product_support, setup_clean, teardown_clean),
        T(test_concurrent_failures),
        T(test_stop_on_failure_race),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
