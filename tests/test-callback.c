/*
 * Callbacks: aclrtSubscribeReport / aclrtLaunchCallback / aclrtProcessReport /
 * aclrtUnSubscribeReport in both block modes, and the host-function
 * subscriptions of IPV350 (aclrtSubscribeHostFunc / aclrtProcessHostFunc /
 * aclrtUnSubscribeHostFunc).
 *
 * Every callback records the thread it ran on and its user data, so the tests
 * check that it ran on the subscribed thread, with the right data, in order.
 * Threads that process reports loop with a bounded timeout and a stop flag;
 * everything else waits on gates with a bound.
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
#include <unistd.h>

#include "acl/acl.h"
#include "common.h"

/* ---- a thread that processes reports ------------------------------------------ */

#define SEEN_MAX 4096

struct processor {
    pthread_t thread;
    atomic_bool stop;
    bool host_func;                   /* aclrtProcessHostFunc instead of aclrtProcessReport */
    aclrtContext ctx;                 /* made current on the thread (for callbacks that need one) */
    atomic_int calls, timeouts, others;
    aclError other;                   /* the first unexpected result */
    pthread_mutex_t m;
    int n;
    pthread_t ran_on[SEEN_MAX];
    intptr_t data[SEEN_MAX];
};

static void *processor_main(void *arg)
{
    struct processor *p = arg;
    aclrtSetCurrentContext(p->ctx);
    drain_msg();
    while (!atomic_load(&p->stop)) {
        aclError e = p->host_func ? aclrtProcessHostFunc(20) : aclrtProcessReport(20);
        if (e == ACL_SUCCESS) {
            atomic_fetch_add(&p->calls, 1);
        } else if (e == ACL_ERROR_RT_REPORT_TIMEOUT) {
            atomic_fetch_add(&p->timeouts, 1);
        } else if (e == ACL_ERROR_RT_THREAD_SUBSCRIBE) {
            sleep_ms(1);   /* not subscribed yet, or any more */
        } else {
            if (atomic_fetch_add(&p->others, 1) == 0)
                p->other = e;
            sleep_ms(1);
        }
        drain_msg();
    }
    return NULL;
}

static void processor_start(struct processor *p, bool host_func)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->m, NULL);
    p->host_func = host_func;
    p->ctx = current_context();
    assert_int_equal(pthread_create(&p->thread, NULL, processor_main, p), 0);
}

static void processor_stop(struct processor *p)
{
    atomic_store(&p->stop, true);
    pthread_join(p->thread, NULL);
}

static uint64_t tid_of(struct processor *p)
{
    return (uint64_t)p->thread;
}

static int seen_count(struct processor *p)
{
    pthread_mutex_lock(&p->m);
    int n = p->n;
    pthread_mutex_unlock(&p->m);
    return n;
}

/* Waits (bounded) until p has seen n callbacks. */
static bool wait_seen(struct processor *p, int n)
{
    for (int i = 0; i < WAIT_MS; i++) {
        if (seen_count(p) >= n)
            return true;
        sleep_ms(1);
    }
    return false;
}

struct note {
    struct processor *p;
    intptr_t value;
};

static void note_fn(void *arg)
{
    struct note *x = arg;
    struct processor *p = x->p;
    pthread_mutex_lock(&p->m);
    if (p->n < SEEN_MAX) {
        p->ran_on[p->n] = pthread_self();
        p->data[p->n] = x->value;
        p->n++;
    }
    pthread_mutex_unlock(&p->m);
}

/* A callback that blocks on a gate (bounded), then notes itself. */
struct held {
    struct note note;
    struct gate started, release;
};

static void held_fn(void *arg)
{
    struct held *h = arg;
    gate_open(&h->started);
    gate_wait(&h->release, WAIT_MS);
    note_fn(&h->note);
}

static void expect_all_on(struct processor *p, int n)
{
    assert_int_equal(seen_count(p), n);
    for (int i = 0; i < n; i++) {
        if (!pthread_equal(p->ran_on[i], p->thread))
            fail_msg("callback %d ran on another thread than the subscribed one", i);
        if (p->data[i] != i)
            fail_msg("callback %d got user data %ld: wrong data or out of order", i,
                     (long)p->data[i]);
    }
}


/* ---- tests --------------------------------------------------------------------- */

static void test_uninitialized(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclrtSubscribeReport(1, NULL));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclrtUnSubscribeReport(1, NULL));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclrtProcessReport(10));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit",
               aclrtLaunchCallback(note_fn, NULL, ACL_CALLBACK_BLOCK, NULL));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclrtSubscribeHostFunc(1, (aclrtStream)8));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclrtProcessHostFunc(10));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclrtUnSubscribeHostFunc(1, (aclrtStream)8));
}

/* Non-blocking callbacks run on the subscribed thread, with their user data,
 * in order; the stream does not wait for them. */
static void test_callbacks_run_on_subscribed_thread(void **state)
{
    (void)state;
    enum { N = 200 };
    static struct processor p;
    processor_start(&p, false);
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    OK(aclrtSubscribeReport(tid_of(&p), s));
    static struct note notes[N];
    for (int i = 0; i < N; i++) {
        notes[i] = (struct note){&p, i};
        OK(aclrtLaunchCallback(note_fn, &notes[i], i % 2 ? ACL_CALLBACK_BLOCK : ACL_CALLBACK_NO_BLOCK,
                               s));
    }
    OK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS));
    assert_true(wait_seen(&p, N));
    expect_all_on(&p, N);
    OK(aclrtUnSubscribeReport(tid_of(&p), s));
    processor_stop(&p);
    assert_int_equal(atomic_load(&p.others), 0);
    OK(aclrtDestroyStream(s));
}

/* The default stream (NULL) can be subscribed too. */
static void test_default_stream(void **state)
{
    (void)state;
    static struct processor p;
    processor_start(&p, false);
    OK(aclrtSubscribeReport(tid_of(&p), NULL));
    static struct note n0;
    n0 = (struct note){&p, 0};
    OK(aclrtLaunchCallback(note_fn, &n0, ACL_CALLBACK_BLOCK, NULL));
    OK(aclrtSynchronizeStreamWithTimeout(NULL, WAIT_MS));
    expect_all_on(&p, 1);   /* blocking: done before the stream went on */
    OK(aclrtUnSubscribeReport(tid_of(&p), NULL));
    processor_stop(&p);
}

/* ACL_CALLBACK_BLOCK holds the stream until the callback returned;
 * ACL_CALLBACK_NO_BLOCK does not. */
static void test_block_modes(void **state)
{
    (void)state;
    static struct processor p;
    processor_start(&p, false);
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    OK(aclrtSubscribeReport(tid_of(&p), s));
    static atomic_int after = 0;

    static struct held h;
    h = (struct held){.note = {&p, 0}};
    OK(aclrtLaunchCallback(held_fn, &h, ACL_CALLBACK_BLOCK, s));
    OK(aclrtLaunchHostFunc(s, count_fn, &after));
    assert_true(gate_wait(&h.started, WAIT_MS));
    sleep_ms(20);
    assert_int_equal(atomic_load(&after), 0);   /* held behind the blocking callback */
    aclrtStreamStatus st;
    OK(aclrtStreamQuery(s, &st));
    assert_int_equal(st, ACL_STREAM_STATUS_NOT_READY);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    drain_msg();
    gate_open(&h.release);
    OK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS));
    assert_int_equal(atomic_load(&after), 1);
    expect_all_on(&p, 1);

    static struct held h2;
    h2 = (struct held){.note = {&p, 1}};
    OK(aclrtLaunchCallback(held_fn, &h2, ACL_CALLBACK_NO_BLOCK, s));
    OK(aclrtLaunchHostFunc(s, count_fn, &after));
    assert_true(gate_wait(&h2.started, WAIT_MS));
    /* the stream went on while the callback is still blocked */
    OK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS));
    assert_int_equal(atomic_load(&after), 2);
    OK(aclrtStreamQuery(s, &st));
    assert_int_equal(st, ACL_STREAM_STATUS_COMPLETE);
    assert_int_equal(seen_count(&p), 1);
    gate_open(&h2.release);
    assert_true(wait_seen(&p, 2));
    expect_all_on(&p, 2);
    OK(aclrtUnSubscribeReport(tid_of(&p), s));
    processor_stop(&p);
    OK(aclrtDestroyStream(s));
}

static void *process_once(void *arg)
{
    aclError *e = arg;
    *e = aclrtProcessReport(WAIT_MS);
    return NULL;
}

static void test_bad_inputs(void **state)
{
    (void)state;
    aclrtStream s, t;
    OK(aclrtCreateStream(&s));
    OK(aclrtCreateStream(&t));
    static struct note n;
    uint64_t me = (uint64_t)pthread_self();

    EXPECT_ERR(ACL_ERROR_RT_STREAM_NO_CB_REG, "aclrtSubscribeReport",
               aclrtLaunchCallback(note_fn, &n, ACL_CALLBACK_BLOCK, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "blockType",
               aclrtLaunchCallback(note_fn, &n, (aclrtCallbackBlockType)2, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "fn", aclrtLaunchCallback(NULL, &n, ACL_CALLBACK_BLOCK, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout", aclrtProcessReport(0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout", aclrtProcessReport(-2));
    EXPECT_ERR(ACL_ERROR_RT_THREAD_SUBSCRIBE, "not subscribed", aclrtProcessReport(10));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_SUBSCRIBE, "no subscribed thread", aclrtUnSubscribeReport(me, s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtSubscribeReport(me, (aclrtStream)8));

    OK(aclrtSubscribeReport(me, s));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_SUBSCRIBE, "already", aclrtSubscribeReport(me, s));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_SUBSCRIBE, "already", aclrtSubscribeReport(me + 1, s));
    EXPECT_ERR(ACL_ERROR_RT_THREAD_SUBSCRIBE, "not to thread", aclrtUnSubscribeReport(me + 1, s));
    OK(aclrtSubscribeReport(me, t));   /* one thread, two streams of one device */

    /* a thread serves one device */
    aclrtContext ctx0 = current_context();
    OK(aclrtSetDevice(1));
    aclrtStream d1;
    OK(aclrtCreateStream(&d1));
    EXPECT_ERR(ACL_ERROR_RT_THREAD_SUBSCRIBE, "device", aclrtSubscribeReport(me, d1));
    OK(aclrtDestroyStream(d1));
    OK(aclrtResetDevice(1));
    OK(aclrtSetCurrentContext(ctx0));

    /* the timeout is honoured; another thread is not this one */
    uint64_t t0 = (uint64_t)time(NULL);
    EXPECT_ERR(ACL_ERROR_RT_REPORT_TIMEOUT, "30 ms", aclrtProcessReport(30));
    assert_true((uint64_t)time(NULL) - t0 <= 2);
    static aclError other;
    run_in_thread(process_once, &other);
    assert_int_equal(other, ACL_ERROR_RT_THREAD_SUBSCRIBE);

    /* a callback launched here is run by this thread */
    n = (struct note){NULL, 0};
    static atomic_int hits = 0;
    OK(aclrtLaunchCallback(count_fn, &hits, ACL_CALLBACK_NO_BLOCK, t));
    OK(aclrtSynchronizeStreamWithTimeout(t, WAIT_MS));
    assert_int_equal(atomic_load(&hits), 0);
    OK(aclrtProcessReport(WAIT_MS));
    assert_int_equal(atomic_load(&hits), 1);

    OK(aclrtUnSubscribeReport(me, s));
    OK(aclrtUnSubscribeReport(me, t));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_SUBSCRIBE, "no subscribed thread", aclrtUnSubscribeReport(me, t));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_NO_CB_REG, "aclrtSubscribeReport",
               aclrtLaunchCallback(count_fn, &hits, ACL_CALLBACK_BLOCK, t));
    OK(aclrtDestroyStream(s));
    OK(aclrtDestroyStream(t));
}

/* A blocking callback nobody processes: unsubscribing, aborting, or a forced
 * reset releases its stream (the callback is dropped). */
static void test_unprocessed_blocking_callback_released(void **state)
{
    (void)state;
    static atomic_int hits = 0, after = 0;
    uint64_t nobody = 12345;   /* a thread id that never processes */
    for (int how = 0; how < 3; how++) {
        aclrtStream s;
        OK(aclrtCreateStream(&s));
        OK(aclrtSubscribeReport(nobody, s));
        OK(aclrtLaunchCallback(count_fn, &hits, ACL_CALLBACK_BLOCK, s));
        OK(aclrtLaunchHostFunc(s, count_fn, &after));
        assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        drain_msg();
        if (how == 0) {
            OK(aclrtUnSubscribeReport(nobody, s));
            OK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS));
            assert_int_equal(atomic_load(&after), 1);   /* the stream went on */
            OK(aclrtDestroyStream(s));
        } else if (how == 1) {
            OK(aclrtStreamAbort(s));
            OK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS));
            assert_int_equal(atomic_load(&after), 1);   /* discarded by the abort */
            OK(aclrtUnSubscribeReport(nobody, s));
            OK(aclrtDestroyStream(s));
        } else {
            OK(aclrtResetDeviceForce(0));
            OK(aclrtSetDevice(0));
        }
    }
    assert_int_equal(atomic_load(&hits), 0);
}

/* aclFinalize does not hang on a pending blocking callback, and a thread
 * waiting in aclrtProcessReport(-1) is released with 107012. */
static struct gate go;
static aclError waited;

static void *process_forever(void *arg)
{
    (void)arg;
    gate_wait(&go, WAIT_MS);
    waited = aclrtProcessReport(-1);
    return NULL;
}

static void finalize_call(void *arg)
{
    *(aclError *)arg = aclFinalize();
}

static void test_finalize_releases_everyone(void **state)
{
    (void)state;
    gate_init(&go);
    waited = ACL_SUCCESS;
    aclrtStream s, b;
    OK(aclrtCreateStream(&s));
    OK(aclrtCreateStream(&b));
    pthread_t waiter;
    assert_int_equal(pthread_create(&waiter, NULL, process_forever, NULL), 0);
    OK(aclrtSubscribeReport((uint64_t)waiter, s));
    gate_open(&go);
    sleep_ms(30);   /* the waiter is in aclrtProcessReport(-1) now */
    static atomic_int hits = 0;
    OK(aclrtSubscribeReport(777, b));   /* nobody processes for 777 */
    OK(aclrtLaunchCallback(count_fn, &hits, ACL_CALLBACK_BLOCK, b));
    static aclError fin;
    static struct call c;
    call_start(&c, finalize_call, &fin);
    if (!call_wait(&c, WAIT_MS))
        fail_msg("aclFinalize hung on a blocking callback nobody processes");
    assert_int_equal(fin, ACL_SUCCESS);
    pthread_join(waiter, NULL);
    assert_int_equal(waited, ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert_int_equal(atomic_load(&hits), 0);
    EXPECT_OK(init_devices("2", "64M"));
    EXPECT_OK(aclrtSetDevice(0));
}

/* Many threads launch callbacks on several subscribed streams at once. */
struct launcher {
    aclrtContext ctx;
    aclrtStream s;
    atomic_int *hits;
    int n;
    atomic_int errors;
};

static void *launch_many(void *arg)
{
    struct launcher *l = arg;
    if (aclrtSetCurrentContext(l->ctx) != ACL_SUCCESS)
        atomic_fetch_add(&l->errors, 1);
    for (int i = 0; i < l->n; i++)
        if (aclrtLaunchCallback(count_fn, l->hits, i % 3 ? ACL_CALLBACK_NO_BLOCK : ACL_CALLBACK_BLOCK,
                                l->s) != ACL_SUCCESS)
            atomic_fetch_add(&l->errors, 1);
    return NULL;
}

static void test_concurrent_callbacks(void **state)
{
    (void)state;
    enum { STREAMS = 3, THREADS = 2, N = 300 };
    static struct processor p[STREAMS];
    static atomic_int hits[STREAMS];
    static struct launcher l[STREAMS][THREADS];
    aclrtContext ctx = current_context();
    aclrtStream s[STREAMS];
    pthread_t th[STREAMS][THREADS];
    for (int i = 0; i < STREAMS; i++) {
        atomic_store(&hits[i], 0);
        processor_start(&p[i], false);
        OK(aclrtCreateStream(&s[i]));
        OK(aclrtSubscribeReport(tid_of(&p[i]), s[i]));
    }
    for (int i = 0; i < STREAMS; i++)
        for (int j = 0; j < THREADS; j++) {
            l[i][j] = (struct launcher){.ctx = ctx, .s = s[i], .hits = &hits[i], .n = N};
            assert_int_equal(pthread_create(&th[i][j], NULL, launch_many, &l[i][j]), 0);
        }
    for (int i = 0; i < STREAMS; i++)
        for (int j = 0; j < THREADS; j++)
            pthread_join(th[i][j], NULL);
    for (int i = 0; i < STREAMS; i++) {
        OK(aclrtSynchronizeStreamWithTimeout(s[i], WAIT_MS));
        for (int k = 0; k < WAIT_MS && atomic_load(&hits[i]) < THREADS * N; k++)
            sleep_ms(1);
        assert_int_equal(atomic_load(&hits[i]), THREADS * N);
        for (int j = 0; j < THREADS; j++)
            assert_int_equal(atomic_load(&l[i][j].errors), 0);
        OK(aclrtUnSubscribeReport(tid_of(&p[i]), s[i]));
        processor_stop(&p[i]);
        assert_int_equal(atomic_load(&p[i].others), 0);
        OK(aclrtDestroyStream(s[i]));
    }
}

/* A blocking callback that would wait for its own stream or device is refused
 * (507000) instead of deadlocking; a non-blocking one may wait. */
static struct { aclrtStream s; aclError stream_err, device_err, other_err; struct gate other_done; } selfwait;

static void wait_self_fn(void *arg)
{
    (void)arg;
    selfwait.stream_err = aclrtSynchronizeStream(selfwait.s);
    drain_msg();
    selfwait.device_err = aclrtSynchronizeDevice();
    drain_msg();
}

static void wait_other_fn(void *arg)
{
    (void)arg;
    selfwait.other_err = aclrtSynchronizeStreamWithTimeout(selfwait.s, WAIT_MS);
    drain_msg();
    gate_open(&selfwait.other_done);
}

static void test_blocking_callback_cannot_wait_for_itself(void **state)
{
    (void)state;
    static struct processor p;
    processor_start(&p, false);
    OK(aclrtCreateStream(&selfwait.s));
    OK(aclrtSubscribeReport(tid_of(&p), selfwait.s));
    selfwait.stream_err = selfwait.device_err = selfwait.other_err = -1;
    gate_init(&selfwait.other_done);
    OK(aclrtLaunchCallback(wait_self_fn, NULL, ACL_CALLBACK_BLOCK, selfwait.s));
    OK(aclrtSynchronizeStreamWithTimeout(selfwait.s, WAIT_MS));
    assert_int_equal(selfwait.stream_err, ACL_ERROR_RT_INTERNAL_ERROR);
    assert_int_equal(selfwait.device_err, ACL_ERROR_RT_INTERNAL_ERROR);
    /* not blocking: the stream has gone on, so the callback may wait for it */
    OK(aclrtLaunchCallback(wait_other_fn, NULL, ACL_CALLBACK_NO_BLOCK, selfwait.s));
    OK(aclrtSynchronizeStreamWithTimeout(selfwait.s, WAIT_MS));
    assert_true(gate_wait(&selfwait.other_done, WAIT_MS));
    assert_int_equal(selfwait.other_err, ACL_SUCCESS);
    OK(aclrtUnSubscribeReport(tid_of(&p), selfwait.s));
    processor_stop(&p);
    OK(aclrtDestroyStream(selfwait.s));
}

/* Subscribing and unsubscribing race with launches: a launch either queues
 * (and its callback runs or is dropped by the unsubscribe) or gets 107015. */
struct churn { aclrtContext ctx; aclrtStream s; uint64_t tid; atomic_bool stop; atomic_int bad, queued; };

static void *churn_subscribe(void *arg)
{
    struct churn *c = arg;
    aclrtSetCurrentContext(c->ctx);
    for (int i = 0; i < 300; i++) {
        if (aclrtSubscribeReport(c->tid, c->s) != ACL_SUCCESS)
            atomic_fetch_add(&c->bad, 1);
        if (aclrtUnSubscribeReport(c->tid, c->s) != ACL_SUCCESS)
            atomic_fetch_add(&c->bad, 1);
    }
    atomic_store(&c->stop, true);
    return NULL;
}

static void *churn_launch(void *arg)
{
    struct churn *c = arg;
    static atomic_int hits;
    aclrtSetCurrentContext(c->ctx);
    while (!atomic_load(&c->stop)) {
        aclError e = aclrtLaunchCallback(count_fn, &hits, ACL_CALLBACK_BLOCK, c->s);
        if (e == ACL_SUCCESS)
            atomic_fetch_add(&c->queued, 1);
        else if (e != ACL_ERROR_RT_STREAM_NO_CB_REG)
            atomic_fetch_add(&c->bad, 1);
        drain_msg();
    }
    return NULL;
}

static void test_subscription_races(void **state)
{
    (void)state;
    static struct processor p;
    processor_start(&p, false);
    static struct churn c;
    c = (struct churn){.ctx = current_context(), .tid = tid_of(&p)};
    OK(aclrtCreateStream(&c.s));
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, churn_subscribe, &c), 0);
    assert_int_equal(pthread_create(&b, NULL, churn_launch, &c), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(atomic_load(&c.bad), 0);
    /* every blocking callback ran or was dropped: the stream completes */
    OK(aclrtSynchronizeStreamWithTimeout(c.s, WAIT_MS));
    processor_stop(&p);
    assert_int_equal(atomic_load(&p.others), 0);
    OK(aclrtDestroyStream(c.s));
}

/* IPV350: a subscribed stream's host functions run on the subscribed thread. */
static void test_host_func_subscription(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    /* not on this SoC (Ascend910B1); NULL is refused first */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "exeStream", aclrtSubscribeHostFunc(1, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "exeStream", aclrtUnSubscribeHostFunc(1, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B1", aclrtSubscribeHostFunc(1, s));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B1", aclrtUnSubscribeHostFunc(1, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout", aclrtProcessHostFunc(0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B1", aclrtProcessHostFunc(10));
    OK(aclrtDestroyStream(s));

    reinit_with_soc("IPV350");
    enum { N = 50 };
    static struct processor p;
    processor_start(&p, true);
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtCreateStream(&s));
    OK(aclrtCreateStreamV2(&s, NULL));   /* how IPV350 creates streams */
    OK(aclrtSubscribeHostFunc(tid_of(&p), s));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_SUBSCRIBE, "already", aclrtSubscribeHostFunc(tid_of(&p), s));
    static struct note notes[N];
    for (int i = 0; i < N; i++) {
        notes[i] = (struct note){&p, i};
        OK(aclrtLaunchHostFunc(s, note_fn, &notes[i]));
    }
    OK(aclrtSynchronizeStream(s));
    expect_all_on(&p, N);   /* blocking: all ran before the stream completed */
    EXPECT_ERR(ACL_ERROR_RT_THREAD_SUBSCRIBE, "not to thread", aclrtUnSubscribeHostFunc(1, s));
    OK(aclrtUnSubscribeHostFunc(tid_of(&p), s));
    processor_stop(&p);
    assert_int_equal(atomic_load(&p.others), 0);
    /* unsubscribed: host functions run on a device worker again */
    static atomic_int hits = 0;
    OK(aclrtLaunchHostFunc(s, count_fn, &hits));
    OK(aclrtSynchronizeStream(s));
    assert_int_equal(atomic_load(&hits), 1);
    EXPECT_ERR(ACL_ERROR_RT_THREAD_SUBSCRIBE, "not subscribed", aclrtProcessHostFunc(10));
    OK(aclrtDestroyStream(s));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_gated, teardown_gated)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_uninitialized, setup_clean, teardown_clean),
        T(test_callbacks_run_on_subscribed_thread),
        T(test_default_stream),
        T(test_block_modes),
        T(test_bad_inputs),
        T(test_unprocessed_blocking_callback_released),
        T(test_finalize_releases_everyone),
        T(test_concurrent_callbacks),
        T(test_subscription_races),
        T(test_blocking_callback_cannot_wait_for_itself),
        T(test_host_func_subscription),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
