/*
 * Model runtime instances (aclmdlRI*): capture of copies, kernels and host
 * functions (nothing runs during the capture), replay many times with the
 * expected data and order each time, cross-stream capture through events,
 * the calls a capture refuses and the captures it invalidates (CANN's codes),
 * inspection and update of captured tasks (kernel arguments, disable, task
 * groups), conditional tasks, explicit build on persistent streams, destroy
 * while replays run, debug dumps, product support, and threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"
#include "watchdog.h"

/* A fork() child may not start threads under ThreadSanitizer (test-fork.c). */
#if defined(__SANITIZE_THREAD__)
#define CHILD_MAY_START_THREADS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHILD_MAY_START_THREADS 0
#endif
#endif
#ifndef CHILD_MAY_START_THREADS
#define CHILD_MAY_START_THREADS 1
#endif
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "die_after_fork=0"; }

/* aclmdlRIDebugPrint is deprecated in CANN but still part of the API. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define NB 8   /* blocks of the kernels below: one element each */

/* p[block] += d */
void k_add(int32_t *p, int32_t d)
{
    p[aclsimGetBlockIdx()] += d;
}
ACLSIM_KERNEL_REGISTER(k_add, int32_t *, int32_t);

/* p[block] += d, atomically (replays of one instance on several streams) */
void k_atomic_add(int32_t *p, int32_t d)
{
    __atomic_fetch_add(&p[aclsimGetBlockIdx()], d, __ATOMIC_RELAXED);
}
ACLSIM_KERNEL_REGISTER(k_atomic_add, int32_t *, int32_t);

struct add_args { int32_t *p; int32_t d; };

static void launch_add(aclrtStream s, int32_t *p, int32_t d)
{
    struct add_args a = {p, d};
    EXPECT_OK(aclrtLaunchKernel(FUNC(k_add), NB, &a, sizeof a, s));
}

/* A device variable written by captured symbol copies. */
ACLSIM_DEVICE_VAR(int32_t, graph_var, [NB]);

/* Host functions that log their order. */
struct order_log { atomic_int n; int seq[64]; };
struct order_entry { struct order_log *log; int id; };
static void log_fn(void *arg)
{
    struct order_entry *e = arg;
    int i = atomic_fetch_add(&e->log->n, 1);
    if (i < 64)
        e->log->seq[i] = e->id;
}

static aclrtEvent ex_event(void)
{
    aclrtEvent ev;
    EXPECT_OK(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_SYNC));
    return ev;
}

/* ---- capture and replay on one stream ------------------------------------------------ */

static void test_capture_replay(void **state)
{
    (void)state;
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    int32_t *dev, *in, *out;
    ASSERT_OK(aclrtMalloc((void **)&dev, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMallocHost((void **)&in, NB * 4));
    ASSERT_OK(aclrtMallocHost((void **)&out, NB * 4));
    for (int i = 0; i < NB; i++)
        in[i] = out[i] = -1;
    ASSERT_OK(aclrtMemset(dev, NB * 4, 0, NB * 4));
    static struct order_log log;
    atomic_store(&log.n, 0);
    static struct order_entry e1 = {&log, 1}, e2 = {&log, 2};

    aclmdlRICaptureStatus st;
    aclmdlRI during = NULL, ri = NULL;
    ASSERT_OK(aclmdlRICaptureGetInfo(s, &st, &during));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    assert_null(during);
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtLaunchHostFunc(s, log_fn, &e1));
    ASSERT_OK(aclrtMemcpyAsync(dev, NB * 4, in, NB * 4, ACL_MEMCPY_HOST_TO_DEVICE, s));
    launch_add(s, dev, 10);
    ASSERT_OK(aclrtMemcpyAsync(out, NB * 4, dev, NB * 4, ACL_MEMCPY_DEVICE_TO_HOST, s));
    ASSERT_OK(aclrtLaunchHostFunc(s, log_fn, &e2));
    ASSERT_OK(aclmdlRICaptureGetInfo(s, &st, &during));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
    assert_non_null(during);
    ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
    assert_ptr_equal(ri, during);
    ASSERT_OK(aclrtSynchronizeStream(s));
    /* nothing ran during the capture */
    assert_int_equal(atomic_load(&log.n), 0);
    for (int i = 0; i < NB; i++)
        assert_int_equal(out[i], -1);
    ASSERT_OK(aclmdlRICaptureGetInfo(s, &st, NULL));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);

    for (int round = 0; round < 30; round++) {
        for (int i = 0; i < NB; i++)
            in[i] = round * 100 + i;
        ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
        ASSERT_OK(aclrtSynchronizeStream(s));
        for (int i = 0; i < NB; i++)
            assert_int_equal(out[i], round * 100 + i + 10);
    }
    assert_int_equal(atomic_load(&log.n), 60);
    for (int i = 0; i < 60; i++)
        assert_int_equal(log.seq[i], i % 2 ? 2 : 1);   /* order kept in every replay */

    /* replays queued back to back on another stream of the context */
    aclrtStream s2;
    ASSERT_OK(aclrtCreateStream(&s2));
    for (int r = 0; r < 5; r++)
        ASSERT_OK(aclmdlRIExecuteAsync(ri, s2));
    ASSERT_OK(aclrtSynchronizeStream(s2));
    uint32_t id;
    ASSERT_OK(aclmdlRIGetId(ri, &id));
    ASSERT_OK(aclmdlRISetName(ri, "graph-one"));
    char name[8];
    ASSERT_OK(aclmdlRIGetName(ri, sizeof name, name));
    assert_string_equal(name, "graph-o");   /* cut to maxLen */
    ASSERT_OK(aclmdlRIDestroy(ri));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a live model runtime instance",
               aclmdlRIExecuteAsync(ri, s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a live", aclmdlRIDestroy(ri));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtDestroyStream(s2));
    ASSERT_OK(aclrtFree(dev));
    ASSERT_OK(aclrtFreeHost(in));
    ASSERT_OK(aclrtFreeHost(out));
}

/* ---- cross-stream capture --------------------------------------------------------------- */

static void test_cross_stream(void **state)
{
    (void)state;
    aclrtStream s1, s2, s3;
    ASSERT_OK(aclrtCreateStream(&s1));
    ASSERT_OK(aclrtCreateStream(&s2));
    ASSERT_OK(aclrtCreateStream(&s3));
    aclrtEvent e1 = ex_event(), e2 = ex_event();
    int32_t *a, *b, *h;
    ASSERT_OK(aclrtMalloc((void **)&a, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMalloc((void **)&b, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMallocHost((void **)&h, NB * 4));
    ASSERT_OK(aclrtMemset(a, NB * 4, 0, NB * 4));
    ASSERT_OK(aclrtMemset(b, NB * 4, 0, NB * 4));

    aclmdlRI ri, ri2;
    aclmdlRICaptureStatus st;
    ASSERT_OK(aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    launch_add(s1, a, 1);                         /* a += 1 */
    ASSERT_OK(aclrtRecordEvent(e1, s1));
    ASSERT_OK(aclrtStreamWaitEvent(s2, e1));      /* s2 joins the capture */
    ASSERT_OK(aclmdlRICaptureGetInfo(s2, &st, &ri2));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
    ASSERT_OK(aclrtMemcpyAsync(b, NB * 4, a, NB * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s2));  /* b = a */
    launch_add(s2, b, 5);                         /* b += 5 */
    ASSERT_OK(aclrtRecordEvent(e2, s2));
    ASSERT_OK(aclrtStreamWaitEvent(s1, e2));      /* s2 returns to s1 */
    ASSERT_OK(aclrtMemcpyAsync(h, NB * 4, b, NB * 4, ACL_MEMCPY_DEVICE_TO_HOST, s1));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, "not begun on this stream",
               aclmdlRICaptureEnd(s2, &ri));
    ASSERT_OK(aclmdlRICaptureEnd(s1, &ri));
    assert_ptr_equal(ri, ri2);
    ASSERT_OK(aclmdlRICaptureGetInfo(s2, &st, NULL));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    ASSERT_OK(aclrtSynchronizeDevice());
    int32_t probe[NB];
    ASSERT_OK(aclrtMemcpy(probe, sizeof probe, a, sizeof probe, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(probe[0], 0);   /* nothing ran */

    uint32_t n = 0;
    ASSERT_OK(aclmdlRIGetStreams(ri, NULL, &n));
    assert_int_equal(n, 2);
    for (int round = 1; round <= 20; round++) {
        ASSERT_OK(aclmdlRIExecuteAsync(ri, s3));
        ASSERT_OK(aclrtSynchronizeStream(s3));
        for (int i = 0; i < NB; i++)
            assert_int_equal(h[i], round + 5);   /* a grows by one per replay; b = a + 5 */
    }
    ASSERT_OK(aclmdlRIDestroy(ri));

    /* a joined stream that does not return: 107025, the capture is discarded */
    ASSERT_OK(aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtRecordEvent(e1, s1));
    ASSERT_OK(aclrtStreamWaitEvent(s2, e1));
    launch_add(s2, a, 1);
    EXPECT_ERR(ACL_ERROR_RT_STREAM_UNJOINED, "last task", aclmdlRICaptureEnd(s1, &ri));
    assert_null(ri);
    ASSERT_OK(aclmdlRICaptureGetInfo(s2, &st, NULL));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);

    /* returns, then issues more work: 107025 too */
    ASSERT_OK(aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtRecordEvent(e1, s1));
    ASSERT_OK(aclrtStreamWaitEvent(s2, e1));
    ASSERT_OK(aclrtRecordEvent(e2, s2));
    ASSERT_OK(aclrtStreamWaitEvent(s1, e2));
    launch_add(s2, a, 1);
    EXPECT_ERR(ACL_ERROR_RT_STREAM_UNJOINED, NULL, aclmdlRICaptureEnd(s1, &ri));
    ASSERT_OK(aclrtSynchronizeDevice());
    ASSERT_OK(aclrtMemcpy(probe, sizeof probe, a, sizeof probe, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(probe[0], 20);   /* still only the 20 replays */

    ASSERT_OK(aclrtDestroyEvent(e1));
    ASSERT_OK(aclrtDestroyEvent(e2));
    ASSERT_OK(aclrtDestroyStream(s1));
    ASSERT_OK(aclrtDestroyStream(s2));
    ASSERT_OK(aclrtDestroyStream(s3));
    ASSERT_OK(aclrtFree(a));
    ASSERT_OK(aclrtFree(b));
    ASSERT_OK(aclrtFreeHost(h));
}

/* ---- what a capture refuses, and what invalidates it ---------------------------------------- */

static aclError end_capture_on(aclrtStream s)
{
    aclmdlRI ri = NULL;
    aclError err = aclmdlRICaptureEnd(s, &ri);
    if (!err)
        (void)aclmdlRIDestroy(ri);
    return err;
}

struct end_arg { aclrtStream s; aclError err; aclrtContext ctx; };
static void *end_in_thread(void *p)
{
    struct end_arg *a = p;
    aclmdlRI ri = NULL;
    a->err = aclrtSetCurrentContext(a->ctx);
    if (!a->err)
        a->err = aclmdlRICaptureEnd(a->s, &ri);
    if (!a->err)
        (void)aclmdlRIDestroy(ri);
    return NULL;
}

static void test_refusals(void **state)
{
    (void)state;
    aclrtStream s, t;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtCreateStream(&t));
    aclrtEvent ev = ex_event(), plain;
    ASSERT_OK(aclrtCreateEvent(&plain));
    int32_t *dev, host[NB];
    ASSERT_OK(aclrtMalloc((void **)&dev, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    aclmdlRICaptureStatus st;

    /* bad arguments */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream is NULL",
               aclmdlRICaptureBegin(NULL, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "mode 3", aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)3));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "both NULL", aclmdlRICaptureGetInfo(s, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "mode is NULL", aclmdlRICaptureThreadExchangeMode(NULL));
    aclmdlRICaptureMode m = (aclmdlRICaptureMode)7;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "mode 7", aclmdlRICaptureThreadExchangeMode(&m));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "not being captured", end_capture_on(s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "modelRI is NULL", aclmdlRIExecuteAsync(NULL, s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, NULL,
               aclmdlRICaptureBegin((aclrtStream)(uintptr_t)0x1234567, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));

    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURED, "already",
               aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURED, "being captured", aclrtSynchronizeStream(s));
    aclrtStreamStatus ss;
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURED, "being captured", aclrtStreamQuery(s, &ss));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURED, "being captured", aclrtDestroyStream(s));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURED, "device 0", aclrtSynchronizeDevice());
    ASSERT_OK(aclrtRecordEvent(ev, s));
    EXPECT_ERR(ACL_ERROR_RT_EVENT_CAPTURED, "recorded under capture", aclrtSynchronizeEvent(ev));
    aclrtEventRecordedStatus rs;
    EXPECT_ERR(ACL_ERROR_RT_EVENT_CAPTURED, NULL, aclrtQueryEventStatus(ev, &rs));
    /* unsafe synchronous calls in GLOBAL mode: refused, the capture stays valid */
    EXPECT_ERR(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "RELAXED",
               aclrtMemcpy(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, NULL, aclrtMemset(dev, NB * 4, 0, NB * 4));
    m = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    ASSERT_OK(aclmdlRICaptureThreadExchangeMode(&m));
    assert_int_equal(m, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);   /* the default */
    ASSERT_OK(aclrtMemcpy(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE));
    ASSERT_OK(aclmdlRICaptureThreadExchangeMode(&m));
    assert_int_equal(m, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
    /* pageable memory cannot be captured; another stream's pageable copy is unsafe */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "pageable",
               aclrtMemcpyAsync(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_ERR(ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC, NULL,
               aclrtMemcpyAsync(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE, t));
    /* events of the old API, waits on records made outside, the default stream */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtCreateEventExWithFlag",
               aclrtRecordEvent(plain, s));
    aclrtEvent outside = ex_event();
    ASSERT_OK(aclrtRecordEvent(outside, t));
    EXPECT_ERR(ACL_ERROR_RT_CAPTURE_DEPENDENCY, "no event record", aclrtStreamWaitEvent(s, outside));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, "default stream", aclrtStreamWaitEvent(NULL, ev));
    ASSERT_OK(aclmdlRICaptureGetInfo(s, &st, NULL));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);   /* none of these invalidated it */
    /* ending on another thread in GLOBAL mode: 107038, discarded */
    struct end_arg ea = {s, 0, current_context()};
    run_in_thread(end_in_thread, &ea);
    assert_int_equal(ea.err, ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD);
    ASSERT_OK(aclmdlRICaptureGetInfo(s, &st, NULL));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    ASSERT_OK(aclrtSynchronizeStream(s));
    ASSERT_OK(aclrtSynchronizeEvent(ev));

    /* RELAXED: any thread may end it */
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ASSERT_OK(aclrtMemcpy(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE));
    launch_add(s, dev, 1);
    ea.err = -1;
    run_in_thread(end_in_thread, &ea);
    assert_int_equal(ea.err, ACL_SUCCESS);

    /* an event captured into two captures: both are invalidated (107032) */
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclmdlRICaptureBegin(t, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtRecordEvent(ev, s));
    EXPECT_ERR(ACL_ERROR_STREAM_CAPTURE_CONFLICT, "another model runtime instance",
               aclrtStreamWaitEvent(t, ev));
    ASSERT_OK(aclmdlRICaptureGetInfo(s, &st, NULL));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED);
    ASSERT_OK(aclmdlRICaptureGetInfo(t, &st, NULL));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED);
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "invalidated",
               aclrtLaunchHostFunc(s, count_fn, &(atomic_int){0}));
    aclmdlRI ri = (aclmdlRI)1;
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "invalidated", aclmdlRICaptureEnd(s, &ri));
    assert_null(ri);
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, NULL, end_capture_on(t));
    ASSERT_OK(aclrtSynchronizeStream(s));

    /* a captured instance is for aclmdlRIExecuteAsync; one being captured runs nowhere */
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    launch_add(s, dev, 1);
    aclmdlRI open;
    ASSERT_OK(aclmdlRICaptureGetInfo(s, NULL, &open));
    EXPECT_ERR(ACL_ERROR_RT_MODEL_EXECUTE, "still being captured", aclmdlRIExecuteAsync(open, t));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CAPTURED, NULL, aclmdlRIDestroy(open));
    ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRIExecuteAsync", aclmdlRIExecute(ri, -1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "timeout 0", aclmdlRIExecute(ri, 0));
    ASSERT_OK(aclmdlRIDestroy(ri));

    ASSERT_OK(aclrtDestroyEvent(ev));
    ASSERT_OK(aclrtDestroyEvent(outside));
    ASSERT_OK(aclrtDestroyEvent(plain));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtDestroyStream(t));
    ASSERT_OK(aclrtFree(dev));
}

/* ---- EXTERNAL event flags: waits and records for the world outside the instance ----------------- */

static void test_external_events(void **state)
{
    (void)state;
    aclrtStream s, out;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtCreateStream(&out));
    aclrtEvent in_ev = ex_event(), out_ev = ex_event();
    static atomic_int hits;
    atomic_store(&hits, 0);
    aclmdlRI ri;
    EXPECT_ERR(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "not being captured",
               aclrtStreamWaitEventWithFlag(s, in_ev, 0, ACL_EVENT_WAIT_EXTERNAL));
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtStreamWaitEventWithFlag(s, in_ev, 0, ACL_EVENT_WAIT_EXTERNAL));
    ASSERT_OK(aclrtLaunchHostFunc(s, count_fn, &hits));
    ASSERT_OK(aclrtRecordEventWithFlag(out_ev, s, ACL_EVENT_RECORD_EXTERNAL));
    ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
    uint32_t ns = 1, nt = 3;
    aclrtStream rs;
    aclmdlRITask tasks[3];
    ASSERT_OK(aclmdlRIGetStreams(ri, &rs, &ns));
    ASSERT_OK(aclmdlRIGetTasksByStream(rs, tasks, &nt));
    aclmdlRITaskParams p;
    ASSERT_OK(aclmdlRITaskGetParams(tasks[0], &p));
    assert_int_equal(p.type, ACL_MODEL_RI_TASK_EVENT_WAIT);
    assert_ptr_equal(p.eventWaitTaskParams.event, in_ev);
    assert_int_equal(p.eventWaitTaskParams.waitFlag, ACL_EVENT_WAIT_EXTERNAL);
    ASSERT_OK(aclmdlRITaskGetParams(tasks[2], &p));
    assert_int_equal(p.eventRecordTaskParams.recordFlag, ACL_EVENT_RECORD_EXTERNAL);

    for (int round = 1; round <= 3; round++) {
        static struct blocker blk;
        blocker_init(&blk);
        ASSERT_OK(aclrtLaunchHostFunc(out, blocker_fn, &blk));
        ASSERT_OK(aclrtRecordEvent(in_ev, out));
        ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
        sleep_ms(30);
        assert_int_equal(atomic_load(&hits), round - 1);   /* waits for the record outside */
        blocker_release(&blk);
        ASSERT_OK(aclrtSynchronizeEvent(out_ev));   /* recorded by the replay */
        ASSERT_OK(aclrtSynchronizeStream(s));
        assert_int_equal(atomic_load(&hits), round);
    }
    ASSERT_OK(aclmdlRIDestroy(ri));
    ASSERT_OK(aclrtDestroyEvent(in_ev));
    ASSERT_OK(aclrtDestroyEvent(out_ev));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtDestroyStream(out));
}

/* ---- inspecting and updating captured tasks ------------------------------------------------ */

static void test_update_kernel_args(void **state)
{
    (void)state;
    aclrtStream s, u;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtCreateStream(&u));
    int32_t *dev, out[NB];
    ASSERT_OK(aclrtMalloc((void **)&dev, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMemset(dev, NB * 4, 0, NB * 4));
    static atomic_int hits;
    atomic_store(&hits, 0);

    aclmdlRI ri;
    aclrtTaskGrp grp;
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtLaunchHostFunc(s, count_fn, &hits));
    launch_add(s, dev, 1);
    ASSERT_OK(aclmdlRICaptureTaskGrpBegin(s));
    EXPECT_ERR(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "open already", aclmdlRICaptureTaskGrpBegin(s));
    launch_add(s, dev, 1000);
    ASSERT_OK(aclmdlRICaptureTaskGrpEnd(s, &grp));
    ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_NOT_CAPTURED, NULL, aclmdlRICaptureTaskGrpBegin(s));

    uint32_t ns = 0, nt = 0;
    ASSERT_OK(aclmdlRIGetStreams(ri, NULL, &ns));
    assert_int_equal(ns, 1);
    aclrtStream rs;
    ASSERT_OK(aclmdlRIGetStreams(ri, &rs, &ns));
    ASSERT_OK(aclmdlRIGetTasksByStream(rs, NULL, &nt));
    assert_int_equal(nt, 3);
    aclmdlRITask tasks[3];
    uint32_t small = 2;
    EXPECT_ERR(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, NULL, aclmdlRIGetTasksByStream(rs, tasks, &small));
    ASSERT_OK(aclmdlRIGetTasksByStream(rs, tasks, &nt));
    aclmdlRITaskType type;
    uint32_t seq;
    ASSERT_OK(aclmdlRITaskGetType(tasks[0], &type));
    assert_int_equal(type, ACL_MODEL_RI_TASK_DEFAULT);
    ASSERT_OK(aclmdlRITaskGetType(tasks[1], &type));
    assert_int_equal(type, ACL_MODEL_RI_TASK_KERNEL);
    ASSERT_OK(aclmdlRITaskGetSeqId(tasks[2], &seq));
    assert_int_equal(seq, 2);
    aclmdlRITaskParams p;
    ASSERT_OK(aclmdlRITaskGetParams(tasks[1], &p));
    assert_int_equal(p.type, ACL_MODEL_RI_TASK_KERNEL);
    assert_ptr_equal(p.kernelTaskParams.funcHandle, FUNC(k_add));
    assert_int_equal(p.kernelTaskParams.numBlocks, NB);
    assert_null(p.taskGrp);
    struct add_args got;
    assert_true(p.kernelTaskParams.argsSize >= 12);
    memcpy(&got, p.kernelTaskParams.args, 12);
    assert_ptr_equal(got.p, dev);
    assert_int_equal(got.d, 1);
    aclmdlRITaskParams pg;
    ASSERT_OK(aclmdlRITaskGetParams(tasks[2], &pg));
    assert_ptr_equal(pg.taskGrp, grp);
    aclrtLaunchKernelAttrValue av;
    ASSERT_OK(aclmdlRIKernelTaskGetAttribute(tasks[1], ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, &av));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "cannot be queried",
               aclmdlRIKernelTaskGetAttribute(tasks[1], ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE, &av));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a kernel task",
               aclmdlRIKernelTaskGetAttribute(tasks[0], ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, &av));

    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));
    ASSERT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(out[3], 1001);

    /* new arguments (packed, as aclrtLaunchKernel takes them) and block count */
    struct add_args na = {dev, 7};
    p.kernelTaskParams.args = &na;
    p.kernelTaskParams.numBlocks = 4;
    ASSERT_OK(aclmdlRITaskSetParams(tasks[1], &p));
    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));
    ASSERT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(out[3], 2008);
    assert_int_equal(out[5], 2001);   /* beyond the 4 blocks: only the group's kernel */
    p.kernelTaskParams.argsSize = 3;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "packed", aclmdlRITaskSetParams(tasks[1], &p));
    p.kernelTaskParams.argsSize = sizeof na;
    p.kernelTaskParams.numBlocks = 0;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "numBlocks", aclmdlRITaskSetParams(tasks[1], &p));
    p.type = ACL_MODEL_RI_TASK_EVENT_RECORD;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "differs", aclmdlRITaskSetParams(tasks[1], &p));

    /* the task group: updated from an ordinary stream, same number and kind of tasks */
    ASSERT_OK(aclmdlRICaptureTaskUpdateBegin(u, grp));
    launch_add(u, dev, 50000);
    ASSERT_OK(aclmdlRICaptureTaskUpdateEnd(u));
    ASSERT_OK(aclrtSynchronizeStream(u));
    ASSERT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(out[3], 2008);   /* the update's launch did not run */
    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));
    ASSERT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(out[3], 52015);
    ASSERT_OK(aclmdlRICaptureTaskUpdateBegin(u, grp));
    EXPECT_ERR(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "2 task(s) were issued", ({
                   launch_add(u, dev, 1);
                   launch_add(u, dev, 1);
                   aclmdlRICaptureTaskUpdateEnd(u);
               }));
    EXPECT_ERR(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "not recording", aclmdlRICaptureTaskUpdateEnd(u));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle is NULL", aclmdlRICaptureTaskUpdateBegin(u, NULL));

    /* disable takes effect at aclmdlRIUpdate */
    ASSERT_OK(aclmdlRITaskDisable(tasks[0]));
    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));
    int before = atomic_load(&hits);
    ASSERT_OK(aclmdlRIUpdate(ri));
    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));
    assert_int_equal(atomic_load(&hits), before);
    assert_int_equal(before, 4);

    ASSERT_OK(aclmdlRIDestroy(ri));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a task", aclmdlRITaskGetType(tasks[0], &type));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a stream", aclmdlRIGetTasksByStream(rs, NULL, &nt));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtDestroyStream(u));
    ASSERT_OK(aclrtFree(dev));
}

/* ---- symbol copies in a capture; a copy updated through a task group ----------------------------- */

static void test_symbol_and_copy_update(void **state)
{
    (void)state;
    aclrtStream s, u;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtCreateStream(&u));
    int32_t *a, *b, *back;
    ASSERT_OK(aclrtMallocHost((void **)&a, NB * 4));
    ASSERT_OK(aclrtMallocHost((void **)&b, NB * 4));
    ASSERT_OK(aclrtMallocHost((void **)&back, NB * 4));
    for (int i = 0; i < NB; i++) {
        a[i] = 100 + i;
        b[i] = 200 + i;
        back[i] = 0;
    }
    aclmdlRI ri;
    aclrtTaskGrp grp;
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclmdlRICaptureTaskGrpBegin(s));
    ASSERT_OK(aclrtMemcpyToSymbolAsync(graph_var, a, NB * 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, s));
    ASSERT_OK(aclmdlRICaptureTaskGrpEnd(s, &grp));
    ASSERT_OK(aclrtMemcpyFromSymbolAsync(back, NB * 4, graph_var, NB * 4, 0, ACL_MEMCPY_DEVICE_TO_HOST, s));
    ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
    assert_int_equal(back[0], 0);   /* nothing ran */
    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));
    assert_int_equal(back[3], 103);
    /* the group's copy now copies from b */
    ASSERT_OK(aclmdlRICaptureTaskUpdateBegin(u, grp));
    ASSERT_OK(aclrtMemcpyToSymbolAsync(graph_var, b, NB * 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, u));
    ASSERT_OK(aclmdlRICaptureTaskUpdateEnd(u));
    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));
    assert_int_equal(back[3], 203);
    /* a kernel cannot replace the copy */
    ASSERT_OK(aclmdlRICaptureTaskUpdateBegin(u, grp));
    launch_add(u, (int32_t *)back, 1);
    EXPECT_ERR(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "not of the kind", aclmdlRICaptureTaskUpdateEnd(u));
    ASSERT_OK(aclmdlRIDestroy(ri));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtDestroyStream(u));
    ASSERT_OK(aclrtFreeHost(a));
    ASSERT_OK(aclrtFreeHost(b));
    ASSERT_OK(aclrtFreeHost(back));
}

/* ---- destroy while replays run; destroy callbacks ------------------------------------------ */

static atomic_int destroyed;
static void on_destroy(void *data)
{
    atomic_fetch_add(&destroyed, *(int *)data);
}

static void test_destroy_while_replaying(void **state)
{
    (void)state;
    aclrtStream s, cap;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtCreateStream(&cap));
    int32_t *dev, out[NB];
    ASSERT_OK(aclrtMalloc((void **)&dev, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMemset(dev, NB * 4, 0, NB * 4));
    aclrtEvent ev = ex_event();
    aclmdlRI ri;
    ASSERT_OK(aclmdlRICaptureBegin(cap, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    launch_add(cap, dev, 3);
    ASSERT_OK(aclrtRecordEvent(ev, cap));
    ASSERT_OK(aclmdlRICaptureEnd(cap, &ri));
    static int ten = 10, one = 1;
    atomic_store(&destroyed, 0);
    ASSERT_OK(aclmdlRIDestroyRegisterCallback(ri, on_destroy, &ten));
    ASSERT_OK(aclmdlRIDestroyRegisterCallback(ri, (aclrtCallback)count_fn, &(atomic_int){0}));
    ASSERT_OK(aclmdlRIDestroyUnregisterCallback(ri, (aclrtCallback)count_fn));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not registered",
               aclmdlRIDestroyUnregisterCallback(ri, (aclrtCallback)count_fn));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "func is NULL",
               aclmdlRIDestroyRegisterCallback(ri, NULL, &one));

    static struct blocker blk;
    blocker_init(&blk);
    ASSERT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    for (int i = 0; i < 10; i++)
        ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    assert_true(gate_wait(&blk.started, WAIT_MS));
    ASSERT_OK(aclmdlRIDestroy(ri));   /* the replays queued own their copies */
    assert_int_equal(atomic_load(&destroyed), 10);
    blocker_release(&blk);
    ASSERT_OK(aclrtSynchronizeStream(s));
    ASSERT_OK(aclrtSynchronizeEvent(ev));   /* the replays' records */
    ASSERT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(out[0], 30);
    ASSERT_OK(aclrtDestroyEvent(ev));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtDestroyStream(cap));
    ASSERT_OK(aclrtFree(dev));
}

/* ---- conditional tasks ----------------------------------------------------------------------- */

static uint64_t *g_cond;
static void dec_cond(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
    __atomic_fetch_sub(g_cond, 1, __ATOMIC_RELAXED);
}

static void capture_branch(aclmdlRI branch, aclrtStream s, void (*fn)(void *), void *arg)
{
    aclmdlRI got;
    ASSERT_OK(aclmdlRICaptureToModelRIBegin(s, branch, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtLaunchHostFunc(s, fn, arg));
    ASSERT_OK(aclmdlRICaptureEnd(s, &got));
    assert_ptr_equal(got, branch);
}

static void test_conditional(void **state)
{
    (void)state;
    aclrtStream s, b;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtCreateStream(&b));
    static atomic_int then_n, else_n, loop_n, sw[3];
    atomic_store(&then_n, 0);
    atomic_store(&else_n, 0);
    atomic_store(&loop_n, 0);
    for (int i = 0; i < 3; i++)
        atomic_store(&sw[i], 0);

    aclmdlRI ri, open;
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclmdlRICaptureGetInfo(s, NULL, &open));
    aclmdlRICondHandle c_if, c_while, c_sw;
    ASSERT_OK(aclmdlRICondHandleCreate(open, 0, (aclmdlRICondHandleFlag)0, &c_if));
    ASSERT_OK(aclmdlRICondHandleCreate(open, 3, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &c_while));
    ASSERT_OK(aclmdlRICondHandleCreate(open, 0, (aclmdlRICondHandleFlag)0, &c_sw));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag 2",
               aclmdlRICondHandleCreate(open, 0, (aclmdlRICondHandleFlag)2, &c_sw));
    uint64_t *p_if, *p_sw;
    ASSERT_OK(aclmdlRICondHandleGetCondPtr(c_if, &p_if));
    ASSERT_OK(aclmdlRICondHandleGetCondPtr(c_while, &g_cond));
    ASSERT_OK(aclmdlRICondHandleGetCondPtr(c_sw, &p_sw));
    aclmdlRI br_if[2], br_while[1], br_sw[3];
    ASSERT_OK(aclmdlRIAddCondTask((aclmdlRICondTaskParams){c_if, ACL_MODEL_RI_COND_TYPE_IF, 2, br_if}, s, 0));
    ASSERT_OK(aclmdlRIAddCondTask((aclmdlRICondTaskParams){c_while, ACL_MODEL_RI_COND_TYPE_WHILE, 1, br_while}, s, 0));
    ASSERT_OK(aclmdlRIAddCondTask((aclmdlRICondTaskParams){c_sw, ACL_MODEL_RI_COND_TYPE_SWITCH, 3, br_sw}, s, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "params.size",
               aclmdlRIAddCondTask((aclmdlRICondTaskParams){c_if, ACL_MODEL_RI_COND_TYPE_IF, 3, br_sw}, s, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flags",
               aclmdlRIAddCondTask((aclmdlRICondTaskParams){c_if, ACL_MODEL_RI_COND_TYPE_IF, 1, br_sw}, s, 1));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_NOT_CAPTURED, NULL,
               aclmdlRIAddCondTask((aclmdlRICondTaskParams){c_if, ACL_MODEL_RI_COND_TYPE_IF, 1, br_sw}, b, 0));
    capture_branch(br_if[0], b, count_fn, &then_n);
    capture_branch(br_if[1], b, count_fn, &else_n);
    capture_branch(br_while[0], b, dec_cond, &loop_n);
    for (int i = 0; i < 3; i++)
        capture_branch(br_sw[i], b, count_fn, &sw[i]);
    EXPECT_ERR(ACL_ERROR_RT_MODEL_CAPTURED, "captured already",
               aclmdlRICaptureToModelRIBegin(b, br_sw[0], ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "branch", aclmdlRIDestroy(br_sw[0]));
    ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a branch",
               aclmdlRICaptureToModelRIBegin(b, ri, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));

    for (int round = 0; round < 6; round++) {
        uint64_t vif = (uint64_t)(round % 2), vsw = (uint64_t)round;
        ASSERT_OK(aclrtMemcpy(p_if, 8, &vif, 8, ACL_MEMCPY_HOST_TO_DEVICE));
        ASSERT_OK(aclrtMemcpy(p_sw, 8, &vsw, 8, ACL_MEMCPY_HOST_TO_DEVICE));
        ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
        ASSERT_OK(aclrtSynchronizeStream(s));
    }
    assert_int_equal(atomic_load(&then_n), 3);
    assert_int_equal(atomic_load(&else_n), 3);
    assert_int_equal(atomic_load(&loop_n), 18);   /* 3 rounds per replay: assigned 3 each time */
    for (int i = 0; i < 3; i++)
        assert_int_equal(atomic_load(&sw[i]), 1);   /* values 3..5: no branch */
    ASSERT_OK(aclmdlRIDestroy(ri));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "condition handle", aclmdlRICondHandleGetCondPtr(c_if, &p_if));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtDestroyStream(b));
}

/* ---- explicit build on persistent streams ------------------------------------------------------ */

static void test_build(void **state)
{
    (void)state;
    aclrtStream ps, plain, s;
    ASSERT_OK(aclrtCreateStreamWithConfig(&ps, 0, ACL_STREAM_PERSISTENT));
    ASSERT_OK(aclrtCreateStream(&plain));
    ASSERT_OK(aclrtCreateStream(&s));
    int32_t *dev, out[NB];
    ASSERT_OK(aclrtMalloc((void **)&dev, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMemset(dev, NB * 4, 0, NB * 4));
    static atomic_int hits;
    atomic_store(&hits, 0);
    aclmdlRI ri;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "modelRI is NULL", aclmdlRIBuildBegin(NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "reserved", aclmdlRIBuildBegin(&ri, 1));
    ASSERT_OK(aclmdlRIBuildBegin(&ri, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "ACL_STREAM_PERSISTENT",
               aclmdlRIBindStream(ri, plain, ACL_MODEL_STREAM_FLAG_HEAD));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag 0x5", aclmdlRIBindStream(ri, ps, 5));
    ASSERT_OK(aclmdlRIBindStream(ri, ps, ACL_MODEL_STREAM_FLAG_HEAD));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_MODEL, "already", aclmdlRIBindStream(ri, ps, ACL_MODEL_STREAM_FLAG_HEAD));
    launch_add(ps, dev, 2);
    ASSERT_OK(aclrtLaunchHostFunc(ps, count_fn, &hits));
    EXPECT_ERR(ACL_ERROR_RT_MODEL_EXECUTE, "not ended", aclmdlRIExecute(ri, -1));
    ASSERT_OK(aclmdlRIEndTask(ri, ps));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_MODEL, "not bound", aclmdlRIEndTask(ri, plain));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "reserve", aclmdlRIBuildEnd(ri, &hits));
    ASSERT_OK(aclmdlRIBuildEnd(ri, NULL));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_MODEL, "has ended", aclrtLaunchHostFunc(ps, count_fn, &hits));
    assert_int_equal(atomic_load(&hits), 0);
    for (int i = 0; i < 5; i++)
        ASSERT_OK(aclmdlRIExecute(ri, 5000));
    assert_int_equal(atomic_load(&hits), 5);
    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));
    assert_int_equal(atomic_load(&hits), 6);
    ASSERT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(out[7], 12);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "modelRI is NULL", aclmdlRIAbort(NULL));
    ASSERT_OK(aclmdlRIAbort(ri));
    ASSERT_OK(aclmdlRIUnbindStream(ri, ps));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_MODEL, "not bound", aclmdlRIUnbindStream(ri, ps));
    ASSERT_OK(aclrtLaunchHostFunc(ps, count_fn, &hits));   /* an ordinary stream again */
    ASSERT_OK(aclrtSynchronizeStream(ps));
    assert_int_equal(atomic_load(&hits), 7);
    ASSERT_OK(aclmdlRIDestroy(ri));

    /* aclrtPersistentTaskClean drops what a bound stream recorded */
    ASSERT_OK(aclmdlRIBuildBegin(&ri, 0));
    ASSERT_OK(aclmdlRIBindStream(ri, ps, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_OK(aclrtLaunchHostFunc(ps, count_fn, &hits));
    ASSERT_OK(aclrtPersistentTaskClean(ps));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "ACL_STREAM_PERSISTENT", aclrtPersistentTaskClean(plain));
    ASSERT_OK(aclmdlRIEndTask(ri, ps));
    ASSERT_OK(aclmdlRIBuildEnd(ri, NULL));
    ASSERT_OK(aclmdlRIExecute(ri, -1));
    assert_int_equal(atomic_load(&hits), 7);
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "captured",
               ({ aclmdlRI c; aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
                  aclmdlRICaptureEnd(s, &c); aclError e_ = aclmdlRIAbort(c); aclmdlRIDestroy(c); e_; }));
    ASSERT_OK(aclmdlRIDestroy(ri));
    ASSERT_OK(aclrtDestroyStream(ps));
    ASSERT_OK(aclrtDestroyStream(plain));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtFree(dev));
}

/* ---- labels and stream activation in built models -------------------------------------------- */

static void test_labels(void **state)
{
    (void)state;
    aclrtStream p1, p2, p3, p4, plain;
    ASSERT_OK(aclrtCreateStreamWithConfig(&p1, 0, ACL_STREAM_PERSISTENT));
    ASSERT_OK(aclrtCreateStreamWithConfig(&p2, 0, ACL_STREAM_PERSISTENT));
    ASSERT_OK(aclrtCreateStreamWithConfig(&p3, 0, ACL_STREAM_PERSISTENT));
    ASSERT_OK(aclrtCreateStreamWithConfig(&p4, 0, ACL_STREAM_PERSISTENT));
    ASSERT_OK(aclrtCreateStream(&plain));
    uint32_t *idx;
    int32_t *vals;
    ASSERT_OK(aclrtMalloc((void **)&idx, 4, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMalloc((void **)&vals, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    static struct order_log log;
    atomic_store(&log.n, 0);
    static struct order_entry A = {&log, 1}, B = {&log, 2}, C = {&log, 3}, D = {&log, 4},
                              never = {&log, 9};
    aclrtLabel l0, l1;
    aclrtLabelList list;
    ASSERT_OK(aclrtCreateLabel(&l0));
    ASSERT_OK(aclrtCreateLabel(&l1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "label is NULL", aclrtCreateLabel(NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "num 0", aclrtCreateLabelList((aclrtLabel[]){l0}, 0, &list));
    ASSERT_OK(aclrtCreateLabelList((aclrtLabel[]){l0, l1}, 2, &list));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_MODEL, "not bound", aclrtSetLabel(l0, plain));

    aclmdlRI ri;
    ASSERT_OK(aclmdlRIBuildBegin(&ri, 0));
    ASSERT_OK(aclmdlRIBindStream(ri, p1, ACL_MODEL_STREAM_FLAG_HEAD));
    ASSERT_OK(aclmdlRIBindStream(ri, p2, ACL_MODEL_STREAM_FLAG_DEFAULT));
    ASSERT_OK(aclmdlRIBindStream(ri, p3, ACL_MODEL_STREAM_FLAG_DEFAULT));
    ASSERT_OK(aclmdlRIBindStream(ri, p4, ACL_MODEL_STREAM_FLAG_DEFAULT));
    /* p1: A, D only if vals[0] == vals[1] (p4), then the switch; nothing after it runs */
    ASSERT_OK(aclrtLaunchHostFunc(p1, log_fn, &A));
    ASSERT_OK(aclrtSwitchStream(&vals[0], ACL_RT_EQUAL, &vals[1], ACL_RT_SWITCH_INT32, p4, NULL, p1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "maxValue 3", aclrtSwitchLabelByIndex(idx, 3, list, p1));
    ASSERT_OK(aclrtSwitchLabelByIndex(idx, 2, list, p1));
    ASSERT_OK(aclrtLaunchHostFunc(p1, log_fn, &never));
    /* p2: label 0, B, then falls through to its end; p3: label 1, C; p4: D */
    ASSERT_OK(aclrtSetLabel(l0, p2));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "set already", aclrtSetLabel(l0, p3));
    ASSERT_OK(aclrtLaunchHostFunc(p2, log_fn, &B));
    ASSERT_OK(aclrtSetLabel(l1, p3));
    ASSERT_OK(aclrtLaunchHostFunc(p3, log_fn, &C));
    ASSERT_OK(aclrtLaunchHostFunc(p4, log_fn, &D));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_MODEL, "not bound to the model", aclrtActiveStream(plain, p1));
    for (int i = 0; i < 4; i++)
        ASSERT_OK(aclmdlRIEndTask(ri, i == 0 ? p1 : i == 1 ? p2 : i == 2 ? p3 : p4));
    ASSERT_OK(aclmdlRIBuildEnd(ri, NULL));

    int32_t v[2] = {1, 2};
    ASSERT_OK(aclrtMemcpy(vals, 8, v, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    uint32_t choose[3] = {0, 1, 7};
    for (int r = 0; r < 3; r++) {
        ASSERT_OK(aclrtMemcpy(idx, 4, &choose[r], 4, ACL_MEMCPY_HOST_TO_DEVICE));
        ASSERT_OK(aclmdlRIExecute(ri, WAIT_MS));
    }
    v[1] = 1;   /* now equal: p4 runs */
    ASSERT_OK(aclrtMemcpy(vals, 8, v, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    ASSERT_OK(aclmdlRIExecuteAsync(ri, plain));
    ASSERT_OK(aclrtSynchronizeStream(plain));
    int want[] = {1, 2, 1, 3, 1, 3, 1, 4, 3};
    assert_int_equal(atomic_load(&log.n), 9);
    for (int i = 0; i < 9; i++)
        assert_int_equal(log.seq[i], want[i]);

    /* a destroyed label makes the switch fail at execution */
    ASSERT_OK(aclrtDestroyLabel(l1));
    EXPECT_ERR(ACL_ERROR_RT_MODEL_EXECUTE, "label 1", aclmdlRIExecute(ri, WAIT_MS));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a live label", aclrtDestroyLabel(l1));
    ASSERT_OK(aclrtDestroyLabelList(list));
    ASSERT_OK(aclrtDestroyLabel(l0));
    ASSERT_OK(aclmdlRIDestroy(ri));
    ASSERT_OK(aclrtDestroyStream(p1));
    ASSERT_OK(aclrtDestroyStream(p2));
    ASSERT_OK(aclrtDestroyStream(p3));
    ASSERT_OK(aclrtDestroyStream(p4));
    ASSERT_OK(aclrtDestroyStream(plain));
    ASSERT_OK(aclrtFree(idx));
    ASSERT_OK(aclrtFree(vals));
}

/* ---- readable dumps ------------------------------------------------------------------------------ */

static void test_debug_print(void **state)
{
    (void)state;
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    int32_t *dev;
    ASSERT_OK(aclrtMalloc((void **)&dev, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    aclmdlRI ri;
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    launch_add(s, dev, 0x55);
    ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
    ASSERT_OK(aclmdlRISetName(ri, "dumped"));
    char path[] = "/tmp/aclsim-modelri-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    ASSERT_OK(aclmdlRIDebugJsonPrint(ri, path, ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE));
    char buf[4096] = {0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    unlink(path);
    assert_true(n > 0);
    assert_non_null(strstr(buf, "\"name\":\"dumped\""));
    assert_non_null(strstr(buf, "\"taskType\":\"KERNEL\""));
    assert_non_null(strstr(buf, "\"name\":\"k_add\""));
    assert_non_null(strstr(buf, "55000000"));   /* the argument d in VERBOSE */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flags 2", aclmdlRIDebugJsonPrint(ri, path, 2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "path is NULL", aclmdlRIDebugJsonPrint(ri, NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "cannot write",
               aclmdlRIDebugJsonPrint(ri, "/nonexistent-dir/x.json", 0));
    ASSERT_OK(aclmdlRIDebugPrint(ri));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "modelRI is NULL", aclmdlRIDebugPrint(NULL));
    ASSERT_OK(aclmdlRIDestroy(ri));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtFree(dev));
}

/* ---- products, reset, finalize --------------------------------------------------------------------- */

static void test_product_support(void **state)
{
    (void)state;
    reinit_with_soc("Ascend910A");   /* the first training series: no capture, build yes */
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream is NULL",
               aclmdlRICaptureBegin(NULL, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL,
               aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    aclmdlRI ri;
    ASSERT_OK(aclmdlRIBuildBegin(&ri, 0));
    uint32_t id;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclmdlRIGetId(ri, &id));
    ASSERT_OK(aclmdlRIDestroy(ri));
    ASSERT_OK(aclrtDestroyStream(s));
    reinit_with_soc("Ascend310P3");   /* inference: capture yes, inspection no */
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
    uint32_t n;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclmdlRIGetStreams(ri, NULL, &n));
    ASSERT_OK(aclmdlRIDestroy(ri));
    ASSERT_OK(aclrtDestroyStream(s));
}

static void test_reset_and_finalize_end_captures(void **state)
{
    (void)state;
    aclrtStream s, t;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtCreateStream(&t));
    aclrtEvent ev = ex_event();
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtLaunchHostFunc(s, count_fn, &(atomic_int){0}));
    ASSERT_OK(aclrtRecordEvent(ev, s));
    ASSERT_OK(aclrtStreamWaitEvent(t, ev));
    aclmdlRI kept;
    aclrtStream u;
    ASSERT_OK(aclrtCreateStream(&u));
    ASSERT_OK(aclmdlRICaptureBegin(u, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclmdlRICaptureEnd(u, &kept));
    ASSERT_OK(aclrtResetDeviceForce(0));   /* the open capture ends with its streams */
    ASSERT_OK(aclrtSetDevice(0));
    ASSERT_OK(aclrtCreateStream(&s));
    EXPECT_ERR(ACL_ERROR_RT_MODEL_CONTEXT, "context", aclmdlRIExecuteAsync(kept, s));
    ASSERT_OK(aclmdlRIDestroy(kept));
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtLaunchHostFunc(s, count_fn, &(atomic_int){0}));
    ASSERT_OK(aclrtDestroyEvent(ev));
    /* aclFinalize (the teardown) with this capture still open */
}

/* ---- fork() with instances, an open capture and labels in the parent ---------------------------- */

static int fork_child(void)
{
    aclmdlRI ri;
    if (aclFinalize() != ACL_SUCCESS)   /* discards the inherited instances */
        return 1;
    if (!CHILD_MAY_START_THREADS)
        return 0;
    aclrtStream s;
    static atomic_int hits;
    if (aclInit(NULL) || aclrtSetDevice(0) || aclrtCreateStream(&s) ||
        aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) ||
        aclrtLaunchHostFunc(s, count_fn, &hits) || aclmdlRICaptureEnd(s, &ri) ||
        aclmdlRIExecuteAsync(ri, s) || aclrtSynchronizeStream(s) || atomic_load(&hits) != 1 ||
        aclmdlRIDestroy(ri) || aclrtDestroyStream(s) || aclrtResetDevice(0) || aclFinalize())
        return 2;
    return 0;
}

static void test_fork(void **state)
{
    (void)state;
    aclrtStream s, open;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtCreateStream(&open));
    aclmdlRI ri;
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtLaunchHostFunc(s, count_fn, &(atomic_int){0}));
    ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));   /* the plan exists */
    ASSERT_OK(aclmdlRICaptureBegin(open, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    aclrtLabel label;
    ASSERT_OK(aclrtCreateLabel(&label));
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fork_child());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* the parent is unaffected */
    ASSERT_OK(aclmdlRIExecuteAsync(ri, s));
    ASSERT_OK(aclrtSynchronizeStream(s));
    aclmdlRI got;
    ASSERT_OK(aclmdlRICaptureEnd(open, &got));
    ASSERT_OK(aclmdlRIDestroy(got));
    ASSERT_OK(aclmdlRIDestroy(ri));
    ASSERT_OK(aclrtDestroyLabel(label));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtDestroyStream(open));
}

/* ---- threads ------------------------------------------------------------------------------------------ */

struct racer {
    aclrtContext ctx;
    aclmdlRI shared;
    int32_t *dev;
    int rounds;
    atomic_int *errors;
    char *err_text;
    int index;
};

static void *race_main(void *p)
{
    struct racer *r = p;
    char *buf = r->err_text;
    if (aclrtSetCurrentContext(r->ctx)) {
        note_first_error(r->errors, buf, 256, "set context");
        return NULL;
    }
    aclrtStream s;
    if (aclrtCreateStream(&s)) {
        note_first_error(r->errors, buf, 256, "create stream");
        return NULL;
    }
    atomic_int mine = 0;
    for (int i = 0; i < r->rounds; i++) {
        aclmdlRI own;
        aclError e;
        /* capture of its own, replay of its own and of the shared one */
        if ((e = aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)) ||
            (e = aclrtLaunchHostFunc(s, count_fn, &mine)) || (e = aclmdlRICaptureEnd(s, &own))) {
            note_first_error(r->errors, buf, 256, "capture round %d: %d", i, e);
            break;
        }
        if ((e = aclmdlRIExecuteAsync(own, s)) || (e = aclmdlRIExecuteAsync(r->shared, s)) ||
            (e = aclrtSynchronizeStream(s)) || (e = aclmdlRIDestroy(own))) {
            note_first_error(r->errors, buf, 256, "replay round %d: %d", i, e);
            break;
        }
        uint32_t nt = 0;
        aclrtStream rs;
        uint32_t ns = 1;
        if ((e = aclmdlRIGetStreams(r->shared, &rs, &ns)) ||
            (e = aclmdlRIGetTasksByStream(rs, NULL, &nt)) || nt != 1) {
            note_first_error(r->errors, buf, 256, "inspect round %d: %d", i, e);
            break;
        }
    }
    if (atomic_load(&mine) != r->rounds)
        note_first_error(r->errors, buf, 256, "own host function ran %d times, not %d",
                         atomic_load(&mine), r->rounds);
    (void)aclrtDestroyStream(s);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    watchdog_start();
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    int32_t *dev, out[NB];
    ASSERT_OK(aclrtMalloc((void **)&dev, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMemset(dev, NB * 4, 0, NB * 4));
    aclmdlRI shared;
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    struct add_args one = {dev, 1};
    ASSERT_OK(aclrtLaunchKernel(FUNC(k_atomic_add), NB, &one, sizeof one, s));
    ASSERT_OK(aclmdlRICaptureEnd(s, &shared));
    enum { NT = 4 };
    int rounds = under_sanitizer() ? 40 : 200;
    static atomic_int errors;
    atomic_store(&errors, 0);
    static char text[256];
    struct racer r[NT];
    pthread_t th[NT];
    watchdog_arm(0, "modelri threads", 0, time_budget(60));
    for (int i = 0; i < NT; i++) {
        r[i] = (struct racer){current_context(), shared, dev, rounds, &errors, text, i};
        assert_int_equal(pthread_create(&th[i], NULL, race_main, &r[i]), 0);
    }
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    watchdog_disarm(0);
    if (atomic_load(&errors))
        fail_msg("%d error(s), first: %s", atomic_load(&errors), text);
    ASSERT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(out[0], NT * rounds);   /* every replay of the shared kernel ran */
    ASSERT_OK(aclmdlRIDestroy(shared));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtFree(dev));
}

/* Replays racing aclmdlRIDestroy on other threads: each replay either is
 * refused (the instance is gone: 107000) or runs completely. */
struct destroy_racer {
    aclrtContext ctx;
    aclmdlRI ri;
    atomic_int *errors, *replays;
    char *err_text;
};

static void *replay_until_destroyed(void *p)
{
    struct destroy_racer *r = p;
    aclrtStream s;
    if (aclrtSetCurrentContext(r->ctx) || aclrtCreateStream(&s)) {
        note_first_error(r->errors, r->err_text, 256, "setup");
        return NULL;
    }
    for (int i = 0; i < 100000; i++) {
        aclError e = aclmdlRIExecuteAsync(r->ri, s);
        if (e == ACL_ERROR_RT_PARAM_INVALID)
            break;   /* destroyed */
        if (e) {
            note_first_error(r->errors, r->err_text, 256, "replay %d: %d", i, e);
            break;
        }
        atomic_fetch_add(r->replays, 1);
    }
    if (aclrtSynchronizeStream(s) || aclrtDestroyStream(s))
        note_first_error(r->errors, r->err_text, 256, "synchronize");
    return NULL;
}

static void test_destroy_races_replays(void **state)
{
    (void)state;
    watchdog_start();
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    int32_t *dev, out[NB];
    ASSERT_OK(aclrtMalloc((void **)&dev, NB * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    static atomic_int errors, replays;
    static char text[256];
    int rounds = under_sanitizer() ? 10 : 40;
    for (int round = 0; round < rounds; round++) {
        watchdog_arm(0, "modelri destroy race", round, time_budget(20));
        ASSERT_OK(aclrtMemset(dev, NB * 4, 0, NB * 4));
        atomic_store(&errors, 0);
        atomic_store(&replays, 0);
        aclmdlRI ri;
        ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
        struct add_args one = {dev, 1};
        ASSERT_OK(aclrtLaunchKernel(FUNC(k_atomic_add), NB, &one, sizeof one, s));
        ASSERT_OK(aclrtLaunchHostFunc(s, count_fn, &(atomic_int){0}));
        ASSERT_OK(aclmdlRICaptureEnd(s, &ri));
        struct destroy_racer r = {current_context(), ri, &errors, &replays, text};
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_create(&th[i], NULL, replay_until_destroyed, &r), 0);
        sleep_ms(round % 3);
        ASSERT_OK(aclmdlRIDestroy(ri));
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        watchdog_disarm(0);
        if (atomic_load(&errors))
            fail_msg("round %d: %d error(s), first: %s", round, atomic_load(&errors), text);
        ASSERT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
        assert_int_equal(out[0], atomic_load(&replays));   /* every accepted replay ran whole */
    }
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtFree(dev));
}

/* A stream captured again into another instance keeps that capture when the
 * first instance is destroyed. */
static void test_recapture_same_stream(void **state)
{
    (void)state;
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    aclmdlRI a, b;
    aclmdlRICaptureStatus st;
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclrtLaunchHostFunc(s, count_fn, &(atomic_int){0}));
    ASSERT_OK(aclmdlRICaptureEnd(s, &a));
    ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ASSERT_OK(aclmdlRIDestroy(a));
    ASSERT_OK(aclmdlRICaptureGetInfo(s, &st, NULL));
    assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
    ASSERT_OK(aclrtLaunchHostFunc(s, count_fn, &(atomic_int){0}));
    ASSERT_OK(aclmdlRICaptureEnd(s, &b));
    ASSERT_OK(aclmdlRIDestroy(b));
    ASSERT_OK(aclrtDestroyStream(s));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_gated, teardown_gated)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_capture_replay),
        T(test_cross_stream),
        T(test_refusals),
        T(test_external_events),
        T(test_update_kernel_args),
        T(test_symbol_and_copy_update),
        T(test_destroy_while_replaying),
        T(test_conditional),
        T(test_build),
        T(test_labels),
        T(test_debug_print),
        T(test_product_support),
        T(test_reset_and_finalize_end_captures),
        T(test_threads),
        T(test_destroy_races_replays),
        T(test_recapture_same_stream),
        T(test_fork),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
