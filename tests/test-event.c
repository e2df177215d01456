/*
 * Events: create/destroy, record and synchronize, status queries, ordering
 * across streams (also across devices) with aclrtStreamWaitEvent, elapsed
 * time measured when the records execute, handle validation and argument
 * checks, and destroying an event that queued tasks still refer to.
 *
 * Every wait in this file is bounded: host functions that block do so on a
 * gate with a timeout, and calls that might hang run on a helper thread that
 * the test waits for with a timeout, so a bug fails a test instead of hanging.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "common.h"

/* aclrtQueryEvent is deprecated in CANN; its behaviour is still tested. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* ---- tests ----------------------------------------------------------------- */

/* A host function that notes whether a blocker had finished when it ran. */
struct after_check {
    struct blocker *b;
    atomic_int ran, ran_after;
};

static void after_fn(void *arg)
{
    struct after_check *a = arg;
    if (gate_is_open(&a->b->finished))
        atomic_fetch_add(&a->ran_after, 1);
    atomic_fetch_add(&a->ran, 1);
}

static void sleep_fn(void *arg) { sleep_ms(*(int *)arg); }

static void test_uninitialized(void **state)
{
    (void)state;
    aclrtEvent ev = NULL;
    assert_int_equal(aclrtCreateEvent(&ev), ACL_ERROR_UNINITIALIZE);
    expect_msg("aclrtCreateEvent", "aclInit");
    aclrtEventRecordedStatus st;
    assert_int_equal(aclrtQueryEventStatus(ev, &st), ACL_ERROR_UNINITIALIZE);
    expect_msg("aclrtQueryEventStatus", NULL);
    /* the extended API too, even with NULL arguments */
    uint32_t u;
    uint64_t ts;
    aclrtEventStatus es;
    aclrtEventWaitStatus ws;
    aclError rc[] = {aclrtCreateEventWithFlag(NULL, 0), aclrtCreateEventExWithFlag(&ev, 1),
                     aclrtRecordEventWithFlag(NULL, NULL, 0), aclrtResetEvent(NULL, NULL),
                     aclrtQueryEvent(NULL, &es), aclrtQueryEventWaitStatus(NULL, &ws),
                     aclrtSynchronizeEventWithTimeout(NULL, -5), aclrtEventGetTimestamp(NULL, &ts),
                     aclrtStreamWaitEventWithFlag(NULL, NULL, 0, 9), aclrtGetEventId(NULL, &u),
                     aclrtGetEventAvailNum(&u)};
    for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++)
        assert_int_equal(rc[i], ACL_ERROR_UNINITIALIZE);
    drain_msg();
}

static void test_create_destroy(void **state)
{
    (void)state;
    enum { N = 500 };
    static aclrtEvent ev[N];
    for (int i = 0; i < N; i++) {
        ev[i] = NULL;
        assert_int_equal(aclrtCreateEvent(&ev[i]), ACL_SUCCESS);
        assert_non_null(ev[i]);
        for (int j = 0; j < i; j += 37)
            assert_ptr_not_equal(ev[i], ev[j]);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(aclrtDestroyEvent(ev[i]), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(ev[0]), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtDestroyEvent", "event");
    /* a fresh event works after the others were destroyed (slots recycled) */
    aclrtEvent e;
    assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(e, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(ev[N - 1]), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtDestroyEvent", "event");
}

static void sync_event_call(void *arg)
{
    aclrtEvent *ev = arg;
    *ev = (aclrtEvent)(intptr_t)aclrtSynchronizeEvent(*ev);
}

static void test_record_and_synchronize(void **state)
{
    (void)state;
    aclrtStream s;
    aclrtEvent ev;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    /* never recorded: nothing to wait for */
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_SUCCESS);

    /* the record follows the host function: synchronizing the event covers it */
    static atomic_int n = 0;
    static int ms = 20;
    assert_int_equal(aclrtLaunchHostFunc(s, sleep_fn, &ms), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s, count_fn, &n), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, s), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_SUCCESS);
    assert_int_equal(atomic_load(&n), 1);

    /* on the default stream */
    assert_int_equal(aclrtLaunchHostFunc(NULL, sleep_fn, &ms), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(NULL, count_fn, &n), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_SUCCESS);
    assert_int_equal(atomic_load(&n), 2);

    /* aclrtSynchronizeEvent blocks until a record queued behind a blocker ran */
    static struct blocker b;
    blocker_init(&b);
    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &b), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, s), ACL_SUCCESS);
    static aclrtEvent arg;
    arg = ev;
    static struct call c;
    call_start(&c, sync_event_call, &arg);
    if (call_wait(&c, 100))
        fail_msg("aclrtSynchronizeEvent returned (%d) before the record ran",
                 (int)(intptr_t)arg);
    gate_open(&b.release);
    if (!call_wait(&c, WAIT_MS))
        fail_msg("aclrtSynchronizeEvent did not return after the record ran");
    assert_int_equal((aclError)(intptr_t)arg, ACL_SUCCESS);
    assert_true(gate_is_open(&b.finished));
    assert_true(atomic_load(&b.released_ok));

    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

static aclrtEventRecordedStatus status_of(aclrtEvent ev)
{
    aclrtEventRecordedStatus st = (aclrtEventRecordedStatus)42;
    assert_int_equal(aclrtQueryEventStatus(ev, &st), ACL_SUCCESS);
    assert_true(st == ACL_EVENT_RECORDED_STATUS_NOT_READY ||
                st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    return st;
}

static void test_query_status(void **state)
{
    (void)state;
    aclrtStream s;
    aclrtEvent ev;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    assert_int_equal(status_of(ev), ACL_EVENT_RECORDED_STATUS_NOT_READY);   /* never recorded */

    for (int round = 0; round < 2; round++) {   /* the second round re-records */
        static struct blocker b;
        blocker_init(&b);
        assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &b), ACL_SUCCESS);
        assert_int_equal(aclrtRecordEvent(ev, s), ACL_SUCCESS);
        assert_true(gate_wait(&b.started, WAIT_MS));
        assert_int_equal(status_of(ev), ACL_EVENT_RECORDED_STATUS_NOT_READY);
        sleep_ms(10);
        assert_int_equal(status_of(ev), ACL_EVENT_RECORDED_STATUS_NOT_READY);
        gate_open(&b.release);
        assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
        assert_true(atomic_load(&b.released_ok));
        assert_int_equal(status_of(ev), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        assert_int_equal(status_of(ev), ACL_EVENT_RECORDED_STATUS_COMPLETE);   /* stays */
    }
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

/* B waits for an event recorded on A behind a blocker. */
static void test_wait_orders_across_streams(void **state)
{
    (void)state;
    aclrtStream a, b, c;
    aclrtEvent e1, e2;
    assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&b), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&c), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&e1), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&e2), ACL_SUCCESS);
    static struct blocker blk;
    blocker_init(&blk);
    static struct after_check on_b = {&blk, 0, 0}, on_c = {&blk, 0, 0};

    assert_int_equal(aclrtLaunchHostFunc(a, blocker_fn, &blk), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(e1, a), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(b, e1), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(b, after_fn, &on_b), ACL_SUCCESS);
    /* transitively: C waits for an event recorded on B after B's wait */
    assert_int_equal(aclrtRecordEvent(e2, b), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(c, e2), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(c, after_fn, &on_c), ACL_SUCCESS);

    assert_true(gate_wait(&blk.started, WAIT_MS));
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(b, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(c, 1), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    assert_int_equal(atomic_load(&on_b.ran), 0);
    assert_int_equal(atomic_load(&on_c.ran), 0);
    assert_int_equal(status_of(e2), ACL_EVENT_RECORDED_STATUS_NOT_READY);
    gate_open(&blk.release);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(c, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS), ACL_SUCCESS);
    assert_true(atomic_load(&blk.released_ok));
    assert_int_equal(atomic_load(&on_b.ran), 1);
    assert_int_equal(atomic_load(&on_b.ran_after), 1);
    assert_int_equal(atomic_load(&on_c.ran), 1);
    assert_int_equal(atomic_load(&on_c.ran_after), 1);
    assert_int_equal(status_of(e2), ACL_EVENT_RECORDED_STATUS_COMPLETE);

    assert_int_equal(aclrtDestroyEvent(e1), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(e2), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(b), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(c), ACL_SUCCESS);
}

/* A wait concerns the records made before it; with none it passes at once. */
static void test_wait_without_prior_record(void **state)
{
    (void)state;
    aclrtStream a, b;
    aclrtEvent ev;
    assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&b), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    static atomic_int n = 0;
    assert_int_equal(aclrtStreamWaitEvent(b, ev), ACL_SUCCESS);   /* never recorded */
    assert_int_equal(aclrtLaunchHostFunc(b, count_fn, &n), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&n), 1);
    assert_int_equal(aclrtStreamWaitEvent(NULL, ev), ACL_SUCCESS);   /* default stream too */
    assert_int_equal(aclrtLaunchHostFunc(NULL, count_fn, &n), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&n), 2);

    /* a record made after the wait was queued does not hold the waiter back */
    static struct blocker blk;
    blocker_init(&blk);
    assert_int_equal(aclrtLaunchHostFunc(a, blocker_fn, &blk), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(b, ev), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, a), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(b, count_fn, &n), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&n), 3);
    assert_false(gate_is_open(&blk.finished));
    gate_open(&blk.release);
    assert_int_equal(aclrtSynchronizeStream(a), ACL_SUCCESS);
    assert_true(atomic_load(&blk.released_ok));

    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(b), ACL_SUCCESS);
}

static void test_elapsed_time(void **state)
{
    (void)state;
    aclrtStream s;
    aclrtEvent start, end;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&start), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&end), ACL_SUCCESS);
    float ms = -1;

    /* neither recorded yet */
    assert_int_equal(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtEventElapsedTime", "startEvent");

    /* Everything is queued at once; only timestamps taken when the records
     * execute can be ~50 ms apart. */
    static int sleep = 50;
    assert_int_equal(aclrtRecordEvent(start, s), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s, sleep_fn, &sleep), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(end, s), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    print_message("elapsed %.3f ms\n", ms);
    if (!(ms >= 45.0f))
        fail_msg("elapsed time %.3f ms across a 50 ms host function", ms);

    /* same with the records queued behind a blocker released later */
    static struct blocker blk;
    blocker_init(&blk);
    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &blk), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(start, s), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s, sleep_fn, &sleep), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(end, s), ACL_SUCCESS);
    assert_true(gate_wait(&blk.started, WAIT_MS));
    /* the latest records have not completed */
    assert_int_equal(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtEventElapsedTime", "startEvent");
    gate_open(&blk.release);
    assert_int_equal(aclrtSynchronizeEvent(end), ACL_SUCCESS);
    ms = -1;
    assert_int_equal(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    if (!(ms >= 45.0f))
        fail_msg("elapsed time %.3f ms across a 50 ms host function (second round)", ms);

    /* only the end event is missing a completed record */
    aclrtEvent fresh;
    assert_int_equal(aclrtCreateEvent(&fresh), ACL_SUCCESS);
    assert_int_equal(aclrtEventElapsedTime(&ms, start, fresh), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtEventElapsedTime", "endEvent");
    assert_int_equal(aclrtEventElapsedTime(&ms, start, start), ACL_SUCCESS);
    assert_true(ms == 0.0f);

    /* arguments */
    assert_int_equal(aclrtEventElapsedTime(NULL, start, end), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtEventElapsedTime", "ms");
    assert_int_equal(aclrtEventElapsedTime(&ms, NULL, end), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtEventElapsedTime", "startEvent");
    assert_int_equal(aclrtEventElapsedTime(&ms, start, NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtEventElapsedTime", "endEvent");
    assert_int_equal(aclrtDestroyEvent(fresh), ACL_SUCCESS);
    assert_int_equal(aclrtEventElapsedTime(&ms, start, fresh), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtEventElapsedTime", "endEvent");
    assert_int_equal(aclrtEventElapsedTime(&ms, fresh, end), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtEventElapsedTime", "startEvent");

    assert_int_equal(aclrtDestroyEvent(start), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(end), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

static void test_bad_event_handles(void **state)
{
    (void)state;
    aclrtStream s;
    aclrtEvent dead, live;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&dead), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(dead), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&live), ACL_SUCCESS);   /* may reuse dead's slot */
    assert_int_equal(aclrtRecordEvent(live, s), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeEvent(live), ACL_SUCCESS);
    int local;
    aclrtEvent bad[] = {
        dead,
        (aclrtEvent)(uintptr_t)0xdeadbee0u,
        (aclrtEvent)&local,
        (aclrtEvent)s,                                        /* a stream is not an event */
        (aclrtEvent)((uintptr_t)live ^ ((uintptr_t)1 << 40)), /* forged generation */
        (aclrtEvent)((uintptr_t)live + ((uintptr_t)700 << 3)), /* another slot */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aclrtEvent x = bad[i];
        aclrtEventRecordedStatus st;
        float ms;
        print_message("bad event handle %zu: %p\n", i, x);
        assert_int_equal(aclrtRecordEvent(x, s), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtRecordEvent", "event");
        assert_int_equal(aclrtStreamWaitEvent(s, x), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtStreamWaitEvent", "event");
        assert_int_equal(aclrtSynchronizeEvent(x), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtSynchronizeEvent", "event");
        assert_int_equal(aclrtQueryEventStatus(x, &st), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtQueryEventStatus", "event");
        assert_int_equal(aclrtEventElapsedTime(&ms, x, live), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtEventElapsedTime", "startEvent");
        assert_int_equal(aclrtEventElapsedTime(&ms, live, x), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtEventElapsedTime", "endEvent");
        assert_int_equal(aclrtDestroyEvent(x), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtDestroyEvent", "event");
    }
    /* nothing was queued by the failed calls; the live event is undisturbed */
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(status_of(live), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    assert_int_equal(aclrtDestroyEvent(live), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

static void test_null_arguments(void **state)
{
    (void)state;
    aclrtStream s;
    aclrtEvent ev;
    aclrtEventRecordedStatus st;
    float ms;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtCreateEvent", "event");
    assert_int_equal(aclrtDestroyEvent(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtDestroyEvent", "event");
    assert_int_equal(aclrtRecordEvent(NULL, s), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtRecordEvent", "event");
    assert_int_equal(aclrtRecordEvent(NULL, NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtRecordEvent", "event");
    assert_int_equal(aclrtStreamWaitEvent(s, NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtStreamWaitEvent", "event");
    assert_int_equal(aclrtSynchronizeEvent(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtSynchronizeEvent", "event");
    assert_int_equal(aclrtQueryEventStatus(NULL, &st), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtQueryEventStatus", "event");
    assert_int_equal(aclrtQueryEventStatus(ev, NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtQueryEventStatus", "status");
    assert_int_equal(aclrtEventElapsedTime(&ms, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtEventElapsedTime", "Event");
    /* the event is still usable and was never recorded */
    assert_int_equal(status_of(ev), ACL_EVENT_RECORDED_STATUS_NOT_READY);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

/* Destroying an event while records and waits on it are still queued. */
static void test_destroy_event_with_queued_tasks(void **state)
{
    (void)state;
    enum { W = 3 };
    aclrtStream a, w[W];
    aclrtEvent ev;
    static struct blocker blk;
    blocker_init(&blk);
    static struct after_check chk = {&blk, 0, 0};
    assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(a, blocker_fn, &blk), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, a), ACL_SUCCESS);
    assert_true(gate_wait(&blk.started, WAIT_MS));
    for (int i = 0; i < W; i++) {
        assert_int_equal(aclrtCreateStream(&w[i]), ACL_SUCCESS);
        assert_int_equal(aclrtStreamWaitEvent(w[i], ev), ACL_SUCCESS);
        assert_int_equal(aclrtLaunchHostFunc(w[i], after_fn, &chk), ACL_SUCCESS);
    }
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(w[0], 20),
                     ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);   /* parked on the event */
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    aclrtEventRecordedStatus st;
    assert_int_equal(aclrtQueryEventStatus(ev, &st), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtQueryEventStatus", "event");
    /* the queued record and waits still work after the handle is gone */
    gate_open(&blk.release);
    for (int i = 0; i < W; i++)
        assert_int_equal(aclrtSynchronizeStreamWithTimeout(w[i], WAIT_MS), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(a, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&chk.ran), W);
    assert_int_equal(atomic_load(&chk.ran_after), W);
    assert_true(atomic_load(&blk.released_ok));
    for (int i = 0; i < W; i++)
        assert_int_equal(aclrtDestroyStream(w[i]), ACL_SUCCESS);

    /* an event destroyed with only a queued record, then its stream force-destroyed
     * (the record still runs, and the wait on it passes) */
    static struct blocker blk2;
    blocker_init(&blk2);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(a, blocker_fn, &blk2), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, a), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(NULL, ev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_true(gate_wait(&blk2.started, WAIT_MS));
    gate_open(&blk2.release);
    assert_int_equal(aclrtDestroyStreamForce(a), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, WAIT_MS), ACL_SUCCESS);
    assert_true(atomic_load(&blk2.released_ok));
}

/* Record on a stream of device 0, wait on a stream of device 1. */
static void test_event_across_devices(void **state)
{
    (void)state;
    aclrtContext ctx0 = current_context();
    aclrtStream s0, s1;
    aclrtEvent ev;
    assert_int_equal(aclrtCreateStream(&s0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
    aclrtContext ctx1 = current_context();
    assert_ptr_not_equal(ctx0, ctx1);
    assert_int_equal(aclrtCreateStream(&s1), ACL_SUCCESS);

    static struct blocker blk;
    blocker_init(&blk);
    static struct after_check chk = {&blk, 0, 0};
    assert_int_equal(aclrtSetCurrentContext(ctx0), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s0, blocker_fn, &blk), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, s0), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(ctx1), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(s1, ev), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s1, after_fn, &chk), ACL_SUCCESS);
    assert_true(gate_wait(&blk.started, WAIT_MS));
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s1, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    assert_int_equal(atomic_load(&chk.ran), 0);
    /* device 1's workers are free: its default stream still runs */
    static atomic_int n = 0;
    assert_int_equal(aclrtLaunchHostFunc(NULL, count_fn, &n), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&n), 1);
    gate_open(&blk.release);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s1, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&chk.ran), 1);
    assert_int_equal(atomic_load(&chk.ran_after), 1);
    assert_true(atomic_load(&blk.released_ok));
    assert_int_equal(status_of(ev), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_SUCCESS);

    /* and back: record on device 1, wait on device 0 */
    static struct blocker blk2;
    blocker_init(&blk2);
    static struct after_check chk2 = {&blk2, 0, 0};
    assert_int_equal(aclrtLaunchHostFunc(s1, blocker_fn, &blk2), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, s1), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(ctx0), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(s0, ev), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s0, after_fn, &chk2), ACL_SUCCESS);
    assert_true(gate_wait(&blk2.started, WAIT_MS));
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s0, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    gate_open(&blk2.release);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s0, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&chk2.ran_after), 1);

    assert_int_equal(aclrtDestroyStream(s0), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(ctx1), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s1), ACL_SUCCESS);
    assert_int_equal(aclrtResetDevice(1), ACL_SUCCESS);
}

/* A wait is for the latest record made before it, not for a later one that
 * happens to run first on another stream. */
static void test_wait_targets_its_own_record(void **state)
{
    (void)state;
    aclrtStream slow, fast, w_early, w_late;
    aclrtEvent ev;
    assert_int_equal(aclrtCreateStream(&slow), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&fast), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&w_early), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&w_late), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    static struct blocker blk;
    blocker_init(&blk);
    static struct after_check early = {&blk, 0, 0};
    static atomic_int late = 0;

    assert_int_equal(aclrtLaunchHostFunc(slow, blocker_fn, &blk), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, slow), ACL_SUCCESS);       /* record 1: held back */
    assert_int_equal(aclrtStreamWaitEvent(w_early, ev), ACL_SUCCESS); /* waits for record 1 */
    assert_int_equal(aclrtLaunchHostFunc(w_early, after_fn, &early), ACL_SUCCESS);
    assert_true(gate_wait(&blk.started, WAIT_MS));
    assert_int_equal(aclrtRecordEvent(ev, fast), ACL_SUCCESS);       /* record 2: runs now */
    assert_int_equal(aclrtSynchronizeStream(fast), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(w_late, ev), ACL_SUCCESS);  /* waits for record 2 */
    assert_int_equal(aclrtLaunchHostFunc(w_late, count_fn, &late), ACL_SUCCESS);

    /* record 2 ran: the late waiter passes, the status of the latest record is COMPLETE */
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(w_late, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&late), 1);
    assert_int_equal(status_of(ev), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_SUCCESS);
    /* record 1 did not: the early waiter still waits */
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(w_early, 30),
                     ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    assert_int_equal(atomic_load(&early.ran), 0);
    gate_open(&blk.release);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(w_early, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&early.ran), 1);
    assert_int_equal(atomic_load(&early.ran_after), 1);
    assert_true(atomic_load(&blk.released_ok));

    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(slow), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(fast), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(w_early), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(w_late), ACL_SUCCESS);
}

/* A record discarded by aclrtStreamAbort marks the event reached (nothing
 * waits forever) but takes no timestamp. */
static void release_blocker_soon(void *arg)
{
    sleep_ms(30);   /* the abort is waiting for the running blocker by then */
    gate_open(&((struct blocker *)arg)->release);
}

static void test_discarded_record(void **state)
{
    (void)state;
    aclrtStream s, w;
    aclrtEvent start, end;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&w), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&start), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&end), ACL_SUCCESS);
    static struct blocker blk;
    blocker_init(&blk);
    static atomic_int n = 0;
    assert_int_equal(aclrtRecordEvent(start, s), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &blk), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(end, s), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(w, end), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(w, count_fn, &n), ACL_SUCCESS);
    assert_true(gate_wait(&blk.started, WAIT_MS));
    static struct call rel;
    call_start(&rel, release_blocker_soon, &blk);
    /* the running blocker finishes; the record after it is dropped */
    assert_int_equal(aclrtStreamAbort(s), ACL_SUCCESS);
    assert_true(call_wait(&rel, WAIT_MS));
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(w, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&n), 1);
    assert_int_equal(aclrtSynchronizeEvent(end), ACL_SUCCESS);
    assert_int_equal(status_of(end), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    float ms = -1;
    assert_int_equal(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtEventElapsedTime", "endEvent");
    assert_true(atomic_load(&blk.released_ok));
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(start), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(end), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(w), ACL_SUCCESS);
}

/* Events survive a device reset (docs/runtime.md), but not aclFinalize: a
 * handle from an earlier aclInit session is stale. */
static void test_events_across_reset_and_finalize(void **state)
{
    (void)state;
    aclrtEvent ev, old;
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(status_of(ev), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    assert_int_equal(aclrtRecordEvent(ev, NULL), ACL_SUCCESS);   /* usable on the new context */
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_SUCCESS);

    assert_int_equal(aclrtCreateEvent(&old), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);   /* with the live event `old` */
    assert_int_equal(setup_gated(NULL), 0);
    aclrtEventRecordedStatus st;
    assert_int_equal(aclrtQueryEventStatus(old, &st), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtQueryEventStatus", "event");
    assert_int_equal(aclrtRecordEvent(old, NULL), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtRecordEvent", "event");
    assert_int_equal(aclrtDestroyEvent(old), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtDestroyEvent", "event");
}


/* ---- flags, resets, reusable events, timeouts, ids (CANN's extended API) ---- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void test_create_with_flag(void **state)
{
    (void)state;
    static const uint32_t good[] = {ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE, ACL_EVENT_CAPTURE_STREAM_PROGRESS,
                                    ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE, ACL_EVENT_DEVICE_USE_ONLY,
                                    ACL_EVENT_EXTERNAL, 0x3F & ~0x30u};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        aclrtEvent ev;
        ASSERT_OK(aclrtCreateEventWithFlag(&ev, good[i]));
        ASSERT_OK(aclrtDestroyEvent(ev));
    }
    static const uint32_t bad[] = {0, ACL_EVENT_IPC, 0x80, ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_SYNC,
                                   ACL_EVENT_EXTERNAL | ACL_EVENT_TIME_LINE};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aclrtEvent ev;
        EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag", aclrtCreateEventWithFlag(&ev, bad[i]));
    }
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtCreateEventWithFlag(NULL, ACL_EVENT_SYNC));
    static const uint32_t good_ex[] = {ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE};
    for (size_t i = 0; i < sizeof good_ex / sizeof good_ex[0]; i++) {
        aclrtEvent ev;
        ASSERT_OK(aclrtCreateEventExWithFlag(&ev, good_ex[i]));
        ASSERT_OK(aclrtDestroyEvent(ev));
    }
    static const uint32_t bad_ex[] = {0, ACL_EVENT_DEVICE_USE_ONLY, ACL_EVENT_EXTERNAL, 0x80,
                                      ACL_EVENT_IPC | ACL_EVENT_SYNC};
    for (size_t i = 0; i < sizeof bad_ex / sizeof bad_ex[0]; i++) {
        aclrtEvent ev;
        EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag", aclrtCreateEventExWithFlag(&ev, bad_ex[i]));
    }
    aclrtEvent ev;
    /* IPC events (shared between processes: test-ipc.c) */
    EXPECT_OK(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_IPC));
    EXPECT_OK(aclrtDestroyEvent(ev));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtCreateEventExWithFlag(NULL, ACL_EVENT_SYNC));
    /* device-only events: not on the first-generation training series */
    restart_gated("Ascend910A");
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910A",
               aclrtCreateEventExWithFlag(&ev, ACL_EVENT_IPC));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910A",
               aclrtCreateEventWithFlag(&ev, ACL_EVENT_DEVICE_USE_ONLY));
    ASSERT_OK(aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC));
    ASSERT_OK(aclrtDestroyEvent(ev));
}

/* CANN's hardware events: a record sets the flag, aclrtResetEvent clears it,
 * a wait needs it set. A SYNC event starts cleared. */
static void test_reset_and_sync_events(void **state)
{
    (void)state;
    aclrtStream a, b, c;
    ASSERT_OK(aclrtCreateStream(&a));
    ASSERT_OK(aclrtCreateStream(&b));
    ASSERT_OK(aclrtCreateStream(&c));
    static atomic_int nb, nc;
    atomic_store(&nb, 0);
    atomic_store(&nc, 0);
    aclrtEvent ev;
    ASSERT_OK(aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC));
    /* a wait before any record waits for one */
    ASSERT_OK(aclrtStreamWaitEvent(b, ev));
    assert_stream_held(b, &nb, 50);
    ASSERT_OK(aclrtRecordEvent(ev, a));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    assert_int_equal(atomic_load(&nb), 1);
    /* recorded: waits pass, until a reset queued after them */
    ASSERT_OK(aclrtStreamWaitEvent(b, ev));
    ASSERT_OK(aclrtResetEvent(ev, b));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    ASSERT_OK(aclrtStreamWaitEvent(c, ev));   /* after the reset: waits for the next record */
    assert_stream_held(c, &nc, 50);
    ASSERT_OK(aclrtRecordEvent(ev, a));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(c, WAIT_MS));
    assert_int_equal(atomic_load(&nc), 1);
    ASSERT_OK(aclrtDestroyEvent(ev));

    /* aclrtCreateEvent's events reset the same way */
    ASSERT_OK(aclrtCreateEvent(&ev));
    ASSERT_OK(aclrtRecordEvent(ev, a));
    ASSERT_OK(aclrtSynchronizeStream(a));   /* the reset below is on another stream */
    ASSERT_OK(aclrtResetEvent(ev, NULL));
    ASSERT_OK(aclrtSynchronizeDevice());
    ASSERT_OK(aclrtStreamWaitEvent(c, ev));
    assert_stream_held(c, &nc, 50);
    ASSERT_OK(aclrtRecordEvent(ev, a));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(c, WAIT_MS));
    assert_int_equal(atomic_load(&nc), 2);
    ASSERT_OK(aclrtDestroyEvent(ev));
    ASSERT_OK(aclrtDestroyStream(a));
    ASSERT_OK(aclrtDestroyStream(b));
    ASSERT_OK(aclrtDestroyStream(c));
}

static void test_refusals(void **state)
{
    (void)state;
    aclrtEvent tl, dev_only, ex, ext;
    ASSERT_OK(aclrtCreateEventWithFlag(&tl, ACL_EVENT_TIME_LINE));
    ASSERT_OK(aclrtCreateEventWithFlag(&dev_only, ACL_EVENT_DEVICE_USE_ONLY));
    ASSERT_OK(aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
    ASSERT_OK(aclrtCreateEventWithFlag(&ext, ACL_EVENT_EXTERNAL));
    /* without ACL_EVENT_SYNC: no waits, no resets */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "ACL_EVENT_SYNC", aclrtStreamWaitEvent(NULL, tl));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "ACL_EVENT_SYNC", aclrtResetEvent(tl, NULL));
    ASSERT_OK(aclrtRecordEvent(tl, NULL));
    /* device-only: nothing from the host */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device", aclrtRecordEvent(dev_only, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device", aclrtStreamWaitEvent(NULL, dev_only));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device", aclrtResetEvent(dev_only, NULL));
    /* reusable events: no reset, no aclrtQueryEvent / aclrtQueryEventWaitStatus */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtCreateEventExWithFlag", aclrtResetEvent(ex, NULL));
    aclrtEventStatus st;
    aclrtEventWaitStatus ws;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtCreateEventExWithFlag", aclrtQueryEvent(ex, &st));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtCreateEventExWithFlag",
               aclrtQueryEventWaitStatus(ex, &ws));
    /* external events: no host synchronization or queries */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "EXTERNAL", aclrtSynchronizeEvent(ext));
    aclrtEventRecordedStatus rs;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "EXTERNAL", aclrtQueryEventStatus(ext, &rs));
    uint64_t ts;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "EXTERNAL", aclrtEventGetTimestamp(ext, &ts));
    /* NULL arguments come first */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtResetEvent(NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "status", aclrtQueryEvent(tl, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtQueryEvent(NULL, &st));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "status", aclrtQueryEventWaitStatus(tl, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timestamp", aclrtEventGetTimestamp(tl, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtEventGetTimestamp(NULL, &ts));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    aclrtEvent all[] = {tl, dev_only, ex, ext};
    for (size_t i = 0; i < 4; i++)
        ASSERT_OK(aclrtDestroyEvent(all[i]));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "event", aclrtResetEvent(tl, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "event", aclrtQueryEvent(tl, &st));
}

/* aclrtCreateEventExWithFlag: reusable; a wait uses the latest record made
 * before it; before any record, waits pass and the status is complete. */
static void test_reusable_events(void **state)
{
    (void)state;
    aclrtStream a, b;
    ASSERT_OK(aclrtCreateStream(&a));
    ASSERT_OK(aclrtCreateStream(&b));
    aclrtEvent ev;
    ASSERT_OK(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_SYNC));
    aclrtEventRecordedStatus rs;
    ASSERT_OK(aclrtQueryEventStatus(ev, &rs));
    assert_int_equal(rs, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    static atomic_int n;
    atomic_store(&n, 0);
    ASSERT_OK(aclrtStreamWaitEvent(b, ev));   /* nothing recorded: passes */
    ASSERT_OK(aclrtLaunchHostFunc(b, count_fn, &n));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    assert_int_equal(atomic_load(&n), 1);
    for (int round = 0; round < 3; round++) {
        static struct blocker blk;
        blocker_init(&blk);
        ASSERT_OK(aclrtLaunchHostFunc(a, blocker_fn, &blk));
        ASSERT_OK(aclrtRecordEvent(ev, a));
        ASSERT_OK(aclrtQueryEventStatus(ev, &rs));
        assert_int_equal(rs, ACL_EVENT_RECORDED_STATUS_NOT_READY);
        ASSERT_OK(aclrtStreamWaitEvent(b, ev));
        assert_stream_held(b, &n, 30);
        gate_open(&blk.release);
        ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
        assert_int_equal(atomic_load(&n), 2 + round);
        assert_true(gate_is_open(&blk.finished));
    }
    ASSERT_OK(aclrtDestroyEvent(ev));
    /* an Ex event without ACL_EVENT_SYNC cannot be waited for */
    ASSERT_OK(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_TIME_LINE));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "ACL_EVENT_SYNC", aclrtStreamWaitEvent(b, ev));
    ASSERT_OK(aclrtDestroyEvent(ev));
    ASSERT_OK(aclrtDestroyStream(a));
    ASSERT_OK(aclrtDestroyStream(b));
}

static void test_query_event_and_wait_status(void **state)
{
    (void)state;
    aclrtStream a, b;
    ASSERT_OK(aclrtCreateStream(&a));
    ASSERT_OK(aclrtCreateStream(&b));
    aclrtEvent ev;
    ASSERT_OK(aclrtCreateEvent(&ev));
    aclrtEventStatus st;
    aclrtEventWaitStatus ws;
    ASSERT_OK(aclrtQueryEvent(ev, &st));
    assert_int_equal(st, ACL_EVENT_STATUS_COMPLETE);
    ASSERT_OK(aclrtQueryEventWaitStatus(ev, &ws));
    assert_int_equal(ws, ACL_EVENT_WAIT_STATUS_COMPLETE);
    static struct blocker blk;
    blocker_init(&blk);
    ASSERT_OK(aclrtLaunchHostFunc(a, blocker_fn, &blk));
    ASSERT_OK(aclrtRecordEvent(ev, a));
    ASSERT_OK(aclrtStreamWaitEvent(b, ev));
    ASSERT_OK(aclrtQueryEvent(ev, &st));
    assert_int_equal(st, ACL_EVENT_STATUS_NOT_READY);
    sleep_ms(20);
    ASSERT_OK(aclrtQueryEventWaitStatus(ev, &ws));
    assert_int_equal(ws, ACL_EVENT_WAIT_STATUS_NOT_READY);
    gate_open(&blk.release);
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    ASSERT_OK(aclrtQueryEvent(ev, &st));
    assert_int_equal(st, ACL_EVENT_STATUS_COMPLETE);
    ASSERT_OK(aclrtQueryEventWaitStatus(ev, &ws));
    assert_int_equal(ws, ACL_EVENT_WAIT_STATUS_COMPLETE);
    ASSERT_OK(aclrtDestroyEvent(ev));
    ASSERT_OK(aclrtDestroyStream(a));
    ASSERT_OK(aclrtDestroyStream(b));
}

static void test_synchronize_with_timeout(void **state)
{
    (void)state;
    aclrtStream a;
    ASSERT_OK(aclrtCreateStream(&a));
    aclrtEvent ev;
    ASSERT_OK(aclrtCreateEvent(&ev));
    ASSERT_OK(aclrtSynchronizeEventWithTimeout(ev, 10));   /* never recorded: nothing to wait for */
    static struct blocker blk;
    blocker_init(&blk);
    ASSERT_OK(aclrtLaunchHostFunc(a, blocker_fn, &blk));
    ASSERT_OK(aclrtRecordEvent(ev, a));
    uint64_t t0 = now_ms();
    EXPECT_ERR(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "100 ms", aclrtSynchronizeEventWithTimeout(ev, 100));
    uint64_t took = now_ms() - t0;
    assert_true(took >= 95 && took < 2000);
    gate_open(&blk.release);
    ASSERT_OK(aclrtSynchronizeEventWithTimeout(ev, WAIT_MS));
    ASSERT_OK(aclrtSynchronizeEventWithTimeout(ev, -1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "timeout", aclrtSynchronizeEventWithTimeout(ev, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "timeout", aclrtSynchronizeEventWithTimeout(ev, -2));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "timeout", aclrtSynchronizeEventWithTimeout(NULL, -2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtSynchronizeEventWithTimeout(NULL, 10));
    ASSERT_OK(aclrtDestroyEvent(ev));
    ASSERT_OK(aclrtDestroyStream(a));
}

static void test_timestamps(void **state)
{
    (void)state;
    aclrtEvent e1, e2, sync_only;
    ASSERT_OK(aclrtCreateEvent(&e1));
    ASSERT_OK(aclrtCreateEventWithFlag(&e2, ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC));
    ASSERT_OK(aclrtCreateEventWithFlag(&sync_only, ACL_EVENT_SYNC));
    uint64_t t1, t2;
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "never been recorded", aclrtEventGetTimestamp(e1, &t1));
    static struct blocker blk;
    blocker_init(&blk);
    ASSERT_OK(aclrtLaunchHostFunc(NULL, blocker_fn, &blk));
    ASSERT_OK(aclrtRecordEvent(e1, NULL));
    EXPECT_ERR(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, "not run", aclrtEventGetTimestamp(e1, &t1));
    gate_open(&blk.release);
    static int ms = 20;
    ASSERT_OK(aclrtLaunchHostFunc(NULL, sleep_fn, &ms));
    ASSERT_OK(aclrtRecordEvent(e2, NULL));
    ASSERT_OK(aclrtRecordEvent(sync_only, NULL));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    ASSERT_OK(aclrtEventGetTimestamp(e1, &t1));
    ASSERT_OK(aclrtEventGetTimestamp(e2, &t2));
    assert_true(t2 >= t1 + 19000);   /* microseconds */
    assert_true(t2 - t1 < 5000000);
    float elapsed;
    ASSERT_OK(aclrtEventElapsedTime(&elapsed, e1, e2));
    assert_true(elapsed >= 19.0f);
    EXPECT_ERR(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, "ACL_EVENT_TIME_LINE",
               aclrtEventGetTimestamp(sync_only, &t1));
    EXPECT_ERR(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, "ACL_EVENT_TIME_LINE",
               aclrtEventElapsedTime(&elapsed, e1, sync_only));
    ASSERT_OK(aclrtDestroyEvent(e1));
    ASSERT_OK(aclrtDestroyEvent(e2));
    ASSERT_OK(aclrtDestroyEvent(sync_only));
}

static void test_ids_and_available(void **state)
{
    (void)state;
    uint32_t avail0, avail;
    ASSERT_OK(aclrtGetEventAvailNum(&avail0));
    assert_int_equal(avail0, 65536);   /* Atlas A2, nothing held */
    aclrtEvent a, b, plain;
    ASSERT_OK(aclrtCreateEventWithFlag(&a, ACL_EVENT_SYNC));
    ASSERT_OK(aclrtCreateEventWithFlag(&b, ACL_EVENT_SYNC));
    ASSERT_OK(aclrtGetEventAvailNum(&avail));
    assert_int_equal(avail, avail0 - 2);
    uint32_t ia, ib, ip;
    ASSERT_OK(aclrtGetEventId(a, &ia));
    ASSERT_OK(aclrtGetEventId(b, &ib));
    assert_int_not_equal(ia, ib);
    ASSERT_OK(aclrtCreateEvent(&plain));
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "no id", aclrtGetEventId(plain, &ip));
    ASSERT_OK(aclrtRecordEvent(plain, NULL));
    ASSERT_OK(aclrtGetEventId(plain, &ip));
    assert_int_not_equal(ip, ia);
    assert_int_not_equal(ip, ib);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "eventId", aclrtGetEventId(a, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtGetEventId(NULL, &ia));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "eventCount", aclrtGetEventAvailNum(NULL));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    ASSERT_OK(aclrtDestroyEvent(a));
    ASSERT_OK(aclrtDestroyEvent(b));
    ASSERT_OK(aclrtDestroyEvent(plain));
    ASSERT_OK(aclrtGetEventAvailNum(&avail));
    assert_int_equal(avail, avail0);
    /* the Atlas inference series holds 1023 per device */
    restart_gated("Ascend310P3");
    ASSERT_OK(aclrtGetEventAvailNum(&avail));
    assert_int_equal(avail, 1023);
    static aclrtEvent evs[1023];
    for (int i = 0; i < 1023; i++)
        ASSERT_OK(aclrtCreateEventWithFlag(&evs[i], ACL_EVENT_SYNC));
    ASSERT_OK(aclrtGetEventAvailNum(&avail));
    assert_int_equal(avail, 0);
    EXPECT_ERR(ACL_ERROR_RT_NO_EVENT_RESOURCE, "no event left", aclrtCreateEventWithFlag(&a, ACL_EVENT_SYNC));
    for (int i = 0; i < 1023; i++)
        ASSERT_OK(aclrtDestroyEvent(evs[i]));
    ASSERT_OK(aclrtResetDevice(0));
    EXPECT_ERR(ACL_ERROR_RT_CONTEXT_NULL, NULL, aclrtGetEventAvailNum(&avail));
}

static void test_wait_with_flag(void **state)
{
    (void)state;
    aclrtStream b;
    ASSERT_OK(aclrtCreateStream(&b));
    aclrtEvent ev, ex;
    ASSERT_OK(aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC));
    ASSERT_OK(aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
    /* a timeout (seconds): the stream fails, later work still runs */
    static atomic_int n;
    atomic_store(&n, 0);
    uint64_t t0 = now_ms();
    ASSERT_OK(aclrtStreamWaitEventWithFlag(b, ev, 1, ACL_EVENT_WAIT_DEFAULT));
    ASSERT_OK(aclrtLaunchHostFunc(b, count_fn, &n));
    EXPECT_ERR2(ACL_ERROR_RT_WAIT_TIMEOUT, "event", "timed out", aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    uint64_t took = now_ms() - t0;
    assert_true(took >= 900 && took < 4000);
    assert_int_equal(atomic_load(&n), 1);
    /* released in time: no failure */
    ASSERT_OK(aclrtStreamWaitEventWithFlag(b, ev, 5, ACL_EVENT_WAIT_DEFAULT));
    ASSERT_OK(aclrtRecordEvent(ev, NULL));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    /* aclrtStreamWaitEventWithTimeout: the same wait, timeout in seconds */
    ASSERT_OK(aclrtResetEvent(ev, NULL));
    ASSERT_OK(aclrtSynchronizeDevice());
    t0 = now_ms();
    ASSERT_OK(aclrtStreamWaitEventWithTimeout(b, ev, 1));
    EXPECT_ERR(ACL_ERROR_RT_WAIT_TIMEOUT, "timed out", aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    took = now_ms() - t0;
    assert_true(took >= 900 && took < 4000);
    ASSERT_OK(aclrtStreamWaitEventWithTimeout(b, ev, 0));   /* 0: no timeout */
    ASSERT_OK(aclrtRecordEvent(ev, NULL));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout -1", aclrtStreamWaitEventWithTimeout(b, ev, -1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtStreamWaitEventWithTimeout(b, NULL, 1));
    /* bad inputs */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtStreamWaitEventWithFlag(b, NULL, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flag", aclrtStreamWaitEventWithFlag(b, ev, 0, 2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout",
               aclrtStreamWaitEventWithFlag(b, ex, 1, ACL_EVENT_WAIT_EXTERNAL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtCreateEventExWithFlag",
               aclrtStreamWaitEventWithFlag(b, ev, 0, ACL_EVENT_WAIT_EXTERNAL));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "captured",
               aclrtStreamWaitEventWithFlag(b, ex, 0, ACL_EVENT_WAIT_EXTERNAL));
    /* the wait flag of ex is now EXTERNAL: a DEFAULT wait is refused */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "stay the same", aclrtStreamWaitEvent(b, ex));
    /* the same for records */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flag", aclrtRecordEventWithFlag(ev, b, 2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtRecordEventWithFlag(NULL, b, 0));
    ASSERT_OK(aclrtRecordEventWithFlag(ev, b, ACL_EVENT_RECORD_DEFAULT));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "captured",
               aclrtRecordEventWithFlag(ex, b, ACL_EVENT_RECORD_EXTERNAL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "stay the same", aclrtRecordEvent(ex, b));
    ASSERT_OK(aclrtSynchronizeStream(b));
    ASSERT_OK(aclrtDestroyEvent(ev));
    ASSERT_OK(aclrtDestroyEvent(ex));
    ASSERT_OK(aclrtDestroyStream(b));
    /* only on Ascend 950, Atlas A3 and A2 */
    restart_gated("Ascend310P3");
    ASSERT_OK(aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtStreamWaitEventWithFlag(NULL, NULL, 0, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310P3", aclrtStreamWaitEventWithFlag(NULL, ev, 0, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310P3", aclrtRecordEventWithFlag(ev, NULL, 0));
    ASSERT_OK(aclrtDestroyEvent(ev));
    restart_gated("IPV350");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtCreateEvent(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtCreateEvent(&ev));
}

static void reset_device0_fn(void *arg)
{
    *(aclError *)arg = aclrtResetDevice(0);
}

/* A wait that nothing will release does not hang a device reset; waiting
 * streams hold no worker meanwhile. */
static void test_waits_park_and_reset_releases(void **state)
{
    (void)state;
    enum { N = 6 };
    aclrtStream s[N], other;
    aclrtEvent ev;
    ASSERT_OK(aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC));
    for (int i = 0; i < N; i++) {
        ASSERT_OK(aclrtCreateStream(&s[i]));
        ASSERT_OK(aclrtStreamWaitEvent(s[i], ev));
    }
    ASSERT_OK(aclrtCreateStream(&other));
    static atomic_int n;
    atomic_store(&n, 0);
    ASSERT_OK(aclrtLaunchHostFunc(other, count_fn, &n));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(other, WAIT_MS));
    assert_int_equal(atomic_load(&n), 1);
    static aclError rc;
    static struct call c;
    call_start(&c, reset_device0_fn, &rc);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(rc);
    ASSERT_OK(aclrtDestroyEvent(ev));
}

/* Threads record, reset, wait and query shared events at once. */
struct ev_worker {
    aclrtContext ctx;
    aclrtEvent *evs;
    int nevs, id;
    atomic_int *errors;
    char *buf;
};

static void *ev_worker_main(void *arg)
{
    struct ev_worker *w = arg;
    aclrtStream s = NULL;
    if (aclrtSetCurrentContext(w->ctx) || aclrtCreateStream(&s)) {
        note_first_error(w->errors, w->buf, 256, "setup");
        return NULL;
    }
    for (int i = 0; i < 300; i++) {
        aclrtEvent ev = w->evs[(i + w->id) % w->nevs];
        aclError e = aclrtRecordEvent(ev, s);
        if (!e)
            e = aclrtStreamWaitEventWithFlag(s, ev, 5, 0);   /* its own record releases it */
        aclrtEventRecordedStatus rs;
        aclrtEventWaitStatus ws;
        if (!e)
            e = aclrtQueryEventStatus(ev, &rs);
        if (!e)
            e = aclrtQueryEventWaitStatus(ev, &ws);
        if (!e && i % 32 == 0)
            e = aclrtSynchronizeStreamWithTimeout(s, WAIT_MS);
        if (e) {
            note_first_error(w->errors, w->buf, 256, "round %d: %d", i, e);
            break;
        }
    }
    aclError e = aclrtSynchronizeStreamWithTimeout(s, WAIT_MS);
    if (e)
        note_first_error(w->errors, w->buf, 256, "final synchronize: %d", e);
    aclrtDestroyStream(s);
    return NULL;
}

static void test_threads_share_events(void **state)
{
    (void)state;
    enum { THREADS = 4, EVS = 3 };
    static aclrtEvent evs[EVS];
    for (int i = 0; i < EVS; i++)
        ASSERT_OK(aclrtCreateEventWithFlag(&evs[i], ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE));
    static atomic_int errors;
    static char buf[256];
    atomic_store(&errors, 0);
    struct ev_worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct ev_worker){current_context(), evs, EVS, i, &errors, buf};
        assert_int_equal(pthread_create(&t[i], NULL, ev_worker_main, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    if (atomic_load(&errors))
        fail_msg("%s", buf);
    for (int i = 0; i < EVS; i++)
        ASSERT_OK(aclrtDestroyEvent(evs[i]));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_gated, teardown_gated)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uninitialized),
        T(test_create_destroy),
        T(test_record_and_synchronize),
        T(test_query_status),
        T(test_wait_orders_across_streams),
        T(test_wait_without_prior_record),
        T(test_elapsed_time),
        T(test_bad_event_handles),
        T(test_null_arguments),
        T(test_destroy_event_with_queued_tasks),
        T(test_event_across_devices),
        T(test_wait_targets_its_own_record),
        T(test_discarded_record),
        T(test_events_across_reset_and_finalize),
        T(test_create_with_flag),
        T(test_reset_and_sync_events),
        T(test_refusals),
        T(test_reusable_events),
        T(test_query_event_and_wait_status),
        T(test_synchronize_with_timeout),
        T(test_timestamps),
        T(test_ids_and_available),
        T(test_wait_with_flag),
        T(test_waits_park_and_reset_releases),
        T(test_threads_share_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
