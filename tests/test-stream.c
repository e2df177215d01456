/*
 * Streams: in-order execution, concurrency between streams, 1,000 streams on
 * a fixed worker pool, the default (NULL) stream, synchronisation with and
 * without a timeout, destroy / force destroy, handle validation, parked
 * streams, device reset and aclFinalize with work in flight, and pageable vs
 * page-locked aclrtMemcpyAsync.
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

#include <dirent.h>
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

#define WORKERS 2         /* ACLSIM_WORKERS used by every test here (setup_gated) */

/* ---- helpers ------------------------------------------------------------ */

/* An ordered log that host functions append to. */
#define LOG_MAX 4096
struct log {
    pthread_mutex_t m;
    int n;
    int v[LOG_MAX];
};
struct entry {
    struct log *log;
    int value;
};

static void log_init(struct log *l)
{
    pthread_mutex_init(&l->m, NULL);
    l->n = 0;
}

static void append_fn(void *arg)
{
    struct entry *e = arg;
    pthread_mutex_lock(&e->log->m);
    if (e->log->n < LOG_MAX)
        e->log->v[e->log->n++] = e->value;
    pthread_mutex_unlock(&e->log->m);
}

static int log_count(struct log *l)
{
    pthread_mutex_lock(&l->m);
    int n = l->n;
    pthread_mutex_unlock(&l->m);
    return n;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_uninitialized(void **state)
{
    (void)state;
    aclrtStream s = NULL;
    assert_int_equal(aclrtCreateStream(&s), ACL_ERROR_UNINITIALIZE);
    expect_msg("aclrtCreateStream", "aclInit");
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_ERROR_UNINITIALIZE);
    expect_msg("aclrtSynchronizeStream", NULL);
    static atomic_int n = 0;
    assert_int_equal(aclrtLaunchHostFunc(NULL, count_fn, &n), ACL_ERROR_UNINITIALIZE);
    expect_msg("aclrtLaunchHostFunc", NULL);
}

/* Many host functions on one stream run exactly in submission order. */
static void test_host_funcs_in_order(void **state)
{
    (void)state;
    enum { N = 3000 };
    static struct log log;
    static struct entry e[N];
    static struct blocker b;
    log_init(&log);
    blocker_init(&b);
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    /* Queue everything behind a blocker so it runs as one long backlog. */
    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &b), ACL_SUCCESS);
    for (int i = 0; i < N; i++) {
        e[i] = (struct entry){&log, i};
        assert_int_equal(aclrtLaunchHostFunc(s, append_fn, &e[i]), ACL_SUCCESS);
        if (i == N / 2)
            gate_open(&b.release);   /* the rest is queued while the stream runs */
    }
    assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_true(atomic_load(&b.released_ok));
    assert_int_equal(log.n, N);
    for (int i = 0; i < N; i++)
        if (log.v[i] != i)
            fail_msg("log[%d] = %d: host functions ran out of order", i, log.v[i]);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

/* Host functions, async copies and memsets interleaved on one stream. */
struct probe {
    struct log *log;
    const unsigned char *out;   /* page-locked buffer the previous copy filled */
    int expect;
};

static void probe_fn(void *arg)
{
    struct probe *p = arg;
    /* The copy queued just before must have run, the one just after must not. */
    int v = p->out[0] == p->out[63] ? p->out[0] : -1;
    pthread_mutex_lock(&p->log->m);
    p->log->v[p->log->n++] = v == p->expect ? p->expect : -1000 - v;
    pthread_mutex_unlock(&p->log->m);
}

static void test_mixed_tasks_in_order(void **state)
{
    (void)state;
    enum { N = 200, B = 64 };
    static struct log log;
    static struct probe probes[N];
    static struct blocker b;
    log_init(&log);
    blocker_init(&b);
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    void *dev, *out, *src;
    assert_int_equal(aclrtMalloc(&dev, B, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMallocHost(&out, B), ACL_SUCCESS);
    assert_int_equal(aclrtMallocHost(&src, (size_t)N * B), ACL_SUCCESS);
    for (int i = 0; i < N; i++)
        memset((char *)src + (size_t)i * B, i, B);
    memset(out, 0xff, B);

    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &b), ACL_SUCCESS);
    for (int i = 0; i < N; i++) {
        /* even: memset the device buffer; odd: copy a page-locked pattern into it */
        if (i % 2 == 0)
            assert_int_equal(aclrtMemsetAsync(dev, B, i, B, s), ACL_SUCCESS);
        else
            assert_int_equal(aclrtMemcpyAsync(dev, B, (char *)src + (size_t)i * B, B,
                                              ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_SUCCESS);
        assert_int_equal(aclrtMemcpyAsync(out, B, dev, B, ACL_MEMCPY_DEVICE_TO_HOST, s),
                         ACL_SUCCESS);
        probes[i] = (struct probe){&log, out, i};
        assert_int_equal(aclrtLaunchHostFunc(s, probe_fn, &probes[i]), ACL_SUCCESS);
    }
    /* Nothing ran yet: the blocker holds the stream. */
    assert_int_equal(((unsigned char *)out)[0], 0xff);
    gate_open(&b.release);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_true(atomic_load(&b.released_ok));
    assert_int_equal(log.n, N);
    for (int i = 0; i < N; i++)
        if (log.v[i] != i)
            fail_msg("probe %d saw %d: copies/memsets/host functions ran out of order", i,
                     log.v[i]);
    unsigned char last[B];
    assert_int_equal(aclrtMemcpy(last, B, dev, B, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    for (int i = 0; i < B; i++)
        assert_int_equal(last[i], N - 1);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtFree(dev), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(out), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(src), ACL_SUCCESS);
}

/* Two streams run at the same time: A's host function waits for B's. */
struct rendezvous {
    struct gate signal;
    atomic_bool got;
};

static void wait_signal_fn(void *arg)
{
    struct rendezvous *r = arg;
    atomic_store(&r->got, gate_wait(&r->signal, WAIT_MS));
}

static void give_signal_fn(void *arg) { gate_open(&((struct rendezvous *)arg)->signal); }

static void test_streams_run_concurrently(void **state)
{
    (void)state;
    aclrtStream a, b;
    assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&b), ACL_SUCCESS);
    for (int round = 0; round < 3; round++) {
        static struct rendezvous r;
        gate_init(&r.signal);
        atomic_init(&r.got, false);
        /* alternate which stream waits, and include the default stream once */
        aclrtStream waiter = round == 0 ? a : round == 1 ? b : NULL;
        aclrtStream signaller = round == 0 ? b : a;
        assert_int_equal(aclrtLaunchHostFunc(waiter, wait_signal_fn, &r), ACL_SUCCESS);
        assert_int_equal(aclrtLaunchHostFunc(signaller, give_signal_fn, &r), ACL_SUCCESS);
        assert_int_equal(aclrtSynchronizeStream(signaller), ACL_SUCCESS);
        assert_int_equal(aclrtSynchronizeStream(waiter), ACL_SUCCESS);
        if (!atomic_load(&r.got))
            fail_msg("round %d: the host function on one stream never saw the one on the "
                     "other stream run: streams are not concurrent", round);
    }
    assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(b), ACL_SUCCESS);
}

/* 1,000 streams on a fixed pool of workers. */
static void test_thousand_streams(void **state)
{
    (void)state;
    enum { N = 1000 };
    static aclrtStream s[N];
    static atomic_int hits[N];
    int baseline = thread_count();
    void *dev;
    assert_int_equal(aclrtMalloc(&dev, N, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    for (int i = 0; i < N; i++) {
        atomic_init(&hits[i], 0);
        assert_int_equal(aclrtCreateStream(&s[i]), ACL_SUCCESS);
        for (int j = 0; j < i; j += 97)
            assert_ptr_not_equal(s[i], s[j]);
    }
    for (int i = 0; i < N; i++) {
        if (i % 2)
            assert_int_equal(aclrtLaunchHostFunc(s[i], count_fn, &hits[i]), ACL_SUCCESS);
        else
            assert_int_equal(aclrtMemsetAsync((char *)dev + i, 1, 0x5a, 1, s[i]), ACL_SUCCESS);
    }
    int during = thread_count();
    for (int i = 0; i < N; i++)
        assert_int_equal(aclrtSynchronizeStream(s[i]), ACL_SUCCESS);
    int after_sync = thread_count();
    for (int i = 0; i < N; i++)
        if (i % 2)
            assert_int_equal(atomic_load(&hits[i]), 1);
    unsigned char *check = malloc(N);
    assert_non_null(check);
    assert_int_equal(aclrtMemcpy(check, N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    for (int i = 0; i < N; i += 2)
        assert_int_equal(check[i], 0x5a);
    free(check);
    for (int i = 0; i < N; i++)
        assert_int_equal(aclrtDestroyStream(s[i]), ACL_SUCCESS);
    int after = thread_count();
    if (during > baseline || after_sync > baseline || after > baseline)
        fail_msg("threads: %d with the device open, %d with 1,000 busy streams, %d after "
                 "synchronizing, %d after destroying them: the pool grew with the streams",
                 baseline, during, after_sync, after);
    assert_int_equal(aclrtFree(dev), ACL_SUCCESS);
}

/* NULL is the default stream of the calling thread's current context. */
static void test_null_stream_is_current_default(void **state)
{
    (void)state;
    aclrtContext ctx1 = current_context();
    aclrtContext ctx2;
    assert_int_equal(aclrtCreateContext(&ctx2, 0), ACL_SUCCESS);
    assert_ptr_equal(current_context(), ctx2);

    static struct blocker b;
    blocker_init(&b);
    assert_int_equal(aclrtLaunchHostFunc(NULL, blocker_fn, &b), ACL_SUCCESS);   /* ctx2 default */
    assert_true(gate_wait(&b.started, WAIT_MS));

    assert_int_equal(aclrtSetCurrentContext(ctx1), ACL_SUCCESS);
    /* ctx1's default stream is not the blocked one */
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, WAIT_MS), ACL_SUCCESS);
    static atomic_int n = 0;
    assert_int_equal(aclrtLaunchHostFunc(NULL, count_fn, &n), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&n), 1);

    /* A stream of ctx2 used from ctx1: 107003. */
    assert_int_equal(aclrtSetCurrentContext(ctx2), ACL_SUCCESS);
    aclrtStream s2;
    assert_int_equal(aclrtCreateStream(&s2), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(ctx1), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s2, count_fn, &n), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtLaunchHostFunc", "context");

    assert_int_equal(aclrtSetCurrentContext(ctx2), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    expect_msg("aclrtSynchronizeStreamWithTimeout", NULL);
    assert_false(gate_is_open(&b.finished));
    gate_open(&b.release);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    assert_true(gate_is_open(&b.finished));
    assert_true(atomic_load(&b.released_ok));
    assert_int_equal(aclrtDestroyStream(s2), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(ctx2), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(ctx1), ACL_SUCCESS);
}

static void test_synchronize_with_timeout(void **state)
{
    (void)state;
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    /* idle stream: any valid timeout succeeds */
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, 1), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, -1), ACL_SUCCESS);

    static struct blocker b;
    blocker_init(&b);
    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &b), ACL_SUCCESS);
    assert_true(gate_wait(&b.started, WAIT_MS));
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    expect_msg("aclrtSynchronizeStreamWithTimeout", "30");
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, 10), ACL_SUCCESS);  /* other stream */

    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, 0), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtSynchronizeStreamWithTimeout", "timeout");
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, -2), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtSynchronizeStreamWithTimeout", "-2");
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, INT32_MIN), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtSynchronizeStreamWithTimeout", "timeout");

    gate_open(&b.release);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS), ACL_SUCCESS);
    assert_true(gate_is_open(&b.finished));
    assert_true(atomic_load(&b.released_ok));
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, -1), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

/* Releases a blocker once it started, after a short delay. */
struct releaser {
    struct blocker *b;
    int delay_ms;
};

static void release_later(void *arg)
{
    struct releaser *r = arg;
    gate_wait(&r->b->started, WAIT_MS);
    sleep_ms(r->delay_ms);
    gate_open(&r->b->release);
}

static void test_destroy_waits_for_queued_work(void **state)
{
    (void)state;
    enum { N = 50 };
    static struct log log;
    static struct entry e[N];
    log_init(&log);
    static struct blocker b;
    blocker_init(&b);
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &b), ACL_SUCCESS);
    for (int i = 0; i < N; i++) {
        e[i] = (struct entry){&log, i};
        assert_int_equal(aclrtLaunchHostFunc(s, append_fn, &e[i]), ACL_SUCCESS);
    }
    static struct releaser r = {&b, 50};
    static struct call c;
    call_start(&c, release_later, &r);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
    /* everything queued ran before aclrtDestroyStream returned */
    assert_true(gate_is_open(&b.finished));
    assert_int_equal(log_count(&log), N);
    for (int i = 0; i < N; i++)
        assert_int_equal(log.v[i], i);
    assert_true(call_wait(&c, WAIT_MS));
    assert_true(atomic_load(&b.released_ok));
    assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtSynchronizeStream", "stream");
}

/* aclrtDestroyStreamForce returns at once, even with a task running and more
 * queued, and the handle is dead at once; the work already submitted still
 * runs to completion (as on hardware, where it is on the device already), and
 * aclrtSynchronizeDevice waits for it. */
static void test_destroy_force_runs_queued_work(void **state)
{
    (void)state;
    enum { N = 20 };
    static atomic_int ran = 0;
    static struct blocker b;
    blocker_init(&b);
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &b), ACL_SUCCESS);
    for (int i = 0; i < N; i++)
        assert_int_equal(aclrtLaunchHostFunc(s, count_fn, &ran), ACL_SUCCESS);
    assert_true(gate_wait(&b.started, WAIT_MS));

    assert_int_equal(aclrtDestroyStreamForce(s), ACL_SUCCESS);   /* blocker still running */
    assert_false(gate_is_open(&b.finished));
    assert_int_equal(aclrtLaunchHostFunc(s, count_fn, &ran), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtLaunchHostFunc", "stream");
    assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtSynchronizeStream", "stream");
    assert_int_equal(aclrtDestroyStreamForce(s), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtDestroyStreamForce", "not a live stream");
    assert_int_equal(atomic_load(&ran), 0);

    gate_open(&b.release);
    assert_int_equal(aclrtSynchronizeDeviceWithTimeout(WAIT_MS), ACL_SUCCESS);
    assert_true(atomic_load(&b.released_ok));
    assert_int_equal(atomic_load(&ran), N);   /* all of it ran, in the background */

    /* The drained stream was recycled: its struct serves a new stream. */
    uint32_t before, after;
    assert_int_equal(aclrtGetStreamAvailableNum(&before), ACL_SUCCESS);
    aclrtStream t;
    assert_int_equal(aclrtCreateStream(&t), ACL_SUCCESS);
    assert_int_equal(aclrtGetStreamAvailableNum(&after), ACL_SUCCESS);
    assert_int_equal(after, before - 1);
    assert_int_equal(aclrtDestroyStream(t), ACL_SUCCESS);
}

/* Force-destroying a stream parked on an event returns at once; its queue runs
 * once the event is recorded, and aclrtSynchronizeDevice (and a plain device
 * reset) wait for it. */
static void destroy_force_call(void *arg)
{
    aclrtStream *s = arg;
    aclError err = aclrtDestroyStreamForce(*s);
    *s = (aclrtStream)(intptr_t)err;
}

static void test_destroy_force_parked_stream(void **state)
{
    (void)state;
    enum { N = 10 };
    static atomic_int ran = 0;
    static struct blocker b;
    blocker_init(&b);
    aclrtStream a, p;
    aclrtEvent ev;
    assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&p), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(a, blocker_fn, &b), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, a), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(p, ev), ACL_SUCCESS);
    for (int i = 0; i < N; i++)
        assert_int_equal(aclrtLaunchHostFunc(p, count_fn, &ran), ACL_SUCCESS);
    assert_true(gate_wait(&b.started, WAIT_MS));
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(p, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);

    static aclrtStream arg;
    arg = p;
    static struct call c;
    call_start(&c, destroy_force_call, &arg);
    if (!call_wait(&c, WAIT_MS / 2))
        fail_msg("aclrtDestroyStreamForce of a stream waiting on an event did not return");
    assert_int_equal((aclError)(intptr_t)arg, ACL_SUCCESS);
    assert_false(gate_is_open(&b.finished));
    /* the device still has the parked stream's work: a bounded sync times out */
    assert_int_equal(aclrtSynchronizeDeviceWithTimeout(30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    expect_msg("aclrtSynchronizeDeviceWithTimeout", "still has work");
    assert_int_equal(atomic_load(&ran), 0);
    gate_open(&b.release);
    assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
    assert_int_equal(atomic_load(&ran), N);
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
}

/* A plain reset waits for a force-destroyed stream's work; a forced reset
 * discards what has not started. */
static int32_t reset_dev;
static void reset_call(void *arg) { (void)arg; aclrtResetDevice(reset_dev); }
static void reset_force_call(void *arg) { (void)arg; aclrtResetDeviceForce(reset_dev); }

static void test_destroy_force_then_reset(void **state)
{
    (void)state;
    enum { N = 8 };
    for (int forced = 0; forced < 2; forced++) {
        static atomic_int ran;
        atomic_store(&ran, 0);
        static struct blocker b;
        blocker_init(&b);
        aclrtStream s;
        assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
        assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &b), ACL_SUCCESS);
        for (int i = 0; i < N; i++)
            assert_int_equal(aclrtLaunchHostFunc(s, count_fn, &ran), ACL_SUCCESS);
        assert_true(gate_wait(&b.started, WAIT_MS));
        assert_int_equal(aclrtDestroyStreamForce(s), ACL_SUCCESS);
        static struct call c;
        int32_t dev = reset_dev = current_device();
        call_start(&c, forced ? reset_force_call : reset_call, NULL);
        sleep_ms(30);
        assert_false(gate_is_open(&c.done));   /* it waits for the running blocker */
        gate_open(&b.release);
        assert_true(call_wait(&c, WAIT_MS));
        assert_int_equal(atomic_load(&ran), forced ? 0 : N);
        assert_int_equal(aclrtSetDevice(dev), ACL_SUCCESS);
    }
}

static void test_bad_stream_handles(void **state)
{
    (void)state;
    static atomic_int ran = 0;
    void *dev, *pinned;
    assert_int_equal(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMallocHost(&pinned, 64), ACL_SUCCESS);
    aclrtStream dead, live;
    assert_int_equal(aclrtCreateStream(&dead), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(dead), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&live), ACL_SUCCESS);   /* may reuse dead's slot */
    aclrtEvent ev;
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    int local;
    aclrtStream bad[] = {
        dead,
        (aclrtStream)(uintptr_t)0xdeadbee0u,
        (aclrtStream)&local,
        (aclrtStream)ev,                                      /* an event is not a stream */
        (aclrtStream)((uintptr_t)live ^ ((uintptr_t)1 << 40)), /* forged generation */
        (aclrtStream)((uintptr_t)live + ((uintptr_t)500 << 3)), /* another slot */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aclrtStream x = bad[i];
        print_message("bad stream handle %zu: %p\n", i, x);
        assert_int_equal(aclrtSynchronizeStream(x), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtSynchronizeStream", "stream");
        assert_int_equal(aclrtSynchronizeStreamWithTimeout(x, 10), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtSynchronizeStreamWithTimeout", "stream");
        assert_int_equal(aclrtLaunchHostFunc(x, count_fn, &ran), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtLaunchHostFunc", "stream");
        assert_int_equal(aclrtMemcpyAsync(dev, 64, pinned, 64, ACL_MEMCPY_HOST_TO_DEVICE, x),
                         ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtMemcpyAsync", "stream");
        assert_int_equal(aclrtMemsetAsync(dev, 64, 0, 64, x), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtMemsetAsync", "stream");
        assert_int_equal(aclrtRecordEvent(ev, x), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtRecordEvent", "stream");
        assert_int_equal(aclrtStreamWaitEvent(x, ev), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtStreamWaitEvent", "stream");
        assert_int_equal(aclrtDestroyStreamForce(x), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtDestroyStreamForce", "stream");
        assert_int_equal(aclrtDestroyStream(x), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtDestroyStream", "stream");
    }
    assert_int_equal(atomic_load(&ran), 0);
    /* the live stream was not disturbed */
    assert_int_equal(aclrtLaunchHostFunc(live, count_fn, &ran), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(live), ACL_SUCCESS);
    assert_int_equal(atomic_load(&ran), 1);
    assert_int_equal(aclrtDestroyStream(live), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(live), ACL_ERROR_RT_INVALID_HANDLE);   /* twice */
    expect_msg("aclrtDestroyStream", "stream");
    assert_int_equal(aclrtDestroyStreamForce(live), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtDestroyStreamForce", "stream");
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtFree(dev), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(pinned), ACL_SUCCESS);
}

static void test_null_arguments(void **state)
{
    (void)state;
    assert_int_equal(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtCreateStream", "stream");
    assert_int_equal(aclrtCreateStreamWithConfig(NULL, 0, 0), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtCreateStreamWithConfig", "stream");
    assert_int_equal(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtDestroyStream", "stream");
    assert_int_equal(aclrtDestroyStreamForce(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtDestroyStreamForce", "stream");
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtLaunchHostFunc", "fn");
    assert_int_equal(aclrtLaunchHostFunc(NULL, NULL, &s), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtLaunchHostFunc", "fn");
    /* nothing was queued */
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

static void test_create_with_config(void **state)
{
    (void)state;
    static const struct { uint32_t priority, flag; } cfg[] = {
        {0, 0}, {3, ACL_STREAM_FAST_LAUNCH}, {7, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC},
    };
    aclrtStream s[3];
    static atomic_int ran = 0;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(aclrtCreateStreamWithConfig(&s[i], cfg[i].priority, cfg[i].flag),
                         ACL_SUCCESS);
        assert_non_null(s[i]);
        for (int j = 0; j < i; j++)
            assert_ptr_not_equal(s[i], s[j]);
        assert_int_equal(aclrtLaunchHostFunc(s[i], count_fn, &ran), ACL_SUCCESS);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(aclrtSynchronizeStream(s[i]), ACL_SUCCESS);
    assert_int_equal(atomic_load(&ran), 3);
    assert_int_equal(aclrtDestroyStream(s[0]), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStreamForce(s[1]), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s[2]), ACL_SUCCESS);
}

/* With 2 workers, one blocked: four streams waiting on an event must not take the other. */
struct gated_entry {
    struct blocker *b;
    atomic_int *after_release;   /* counts runs that happened after the blocker finished */
    atomic_int *ran;
};

static void gated_fn(void *arg)
{
    struct gated_entry *g = arg;
    if (gate_is_open(&g->b->finished))
        atomic_fetch_add(g->after_release, 1);
    atomic_fetch_add(g->ran, 1);
}

static void test_parked_streams_occupy_no_worker(void **state)
{
    (void)state;
    enum { P = 4 };
    static struct blocker b;
    blocker_init(&b);
    static atomic_int after = 0, ran = 0, other = 0;
    static struct gated_entry g = {&b, &after, &ran};
    aclrtStream a, p[P], c;
    aclrtEvent ev;
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&c), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(a, blocker_fn, &b), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, a), ACL_SUCCESS);
    assert_true(gate_wait(&b.started, WAIT_MS));   /* one of the two workers is now taken */
    for (int i = 0; i < P; i++) {
        assert_int_equal(aclrtCreateStream(&p[i]), ACL_SUCCESS);
        assert_int_equal(aclrtStreamWaitEvent(p[i], ev), ACL_SUCCESS);
        assert_int_equal(aclrtLaunchHostFunc(p[i], gated_fn, &g), ACL_SUCCESS);
    }
    /* other streams still get the remaining worker, repeatedly */
    for (int round = 0; round < 5; round++) {
        assert_int_equal(aclrtLaunchHostFunc(c, count_fn, &other), ACL_SUCCESS);
        assert_int_equal(aclrtLaunchHostFunc(NULL, count_fn, &other), ACL_SUCCESS);
        aclError e1 = aclrtSynchronizeStreamWithTimeout(c, WAIT_MS);
        aclError e2 = aclrtSynchronizeStreamWithTimeout(NULL, WAIT_MS);
        if (e1 != ACL_SUCCESS || e2 != ACL_SUCCESS)
            fail_msg("round %d: work on other streams did not run (%d, %d) while %d streams "
                     "wait on an event: parked streams hold workers", round, e1, e2, P);
    }
    assert_int_equal(atomic_load(&other), 10);
    for (int i = 0; i < P; i++)
        assert_int_equal(aclrtSynchronizeStreamWithTimeout(p[i], 1),
                         ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    assert_int_equal(atomic_load(&ran), 0);
    gate_open(&b.release);
    for (int i = 0; i < P; i++)
        assert_int_equal(aclrtSynchronizeStreamWithTimeout(p[i], WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&ran), P);
    assert_int_equal(atomic_load(&after), P);
    assert_true(atomic_load(&b.released_ok));
    for (int i = 0; i < P; i++)
        assert_int_equal(aclrtDestroyStream(p[i]), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(c), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
}

/* aclrtResetDevice / aclFinalize while streams hold queued and running work. */
struct teardown_call {
    aclError (*fn_reset)(int32_t);
    aclError (*fn_final)(void);
    struct blocker *b;
    aclError result;
    bool blocker_done_at_return;
};

static void teardown_call_fn(void *arg)
{
    struct teardown_call *t = arg;
    t->result = t->fn_reset ? t->fn_reset(0) : t->fn_final();
    t->blocker_done_at_return = gate_is_open(&t->b->finished);
}

struct busy_device {
    struct blocker b;
    struct log log;
    struct entry e[40];
    aclrtStream s1, s2;
    aclrtEvent ev;
    atomic_int ran2;
    void *dev;
};

/* s1: blocker, 40 host functions, a memset; s2: waits on an event recorded
 * on s1 after the blocker, then a host function; the default stream: a host
 * function. */
static void make_busy(struct busy_device *d)
{
    blocker_init(&d->b);
    log_init(&d->log);
    atomic_init(&d->ran2, 0);
    assert_int_equal(aclrtMalloc(&d->dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&d->s1), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&d->s2), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&d->ev), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(d->s1, blocker_fn, &d->b), ACL_SUCCESS);
    for (int i = 0; i < 40; i++) {
        d->e[i] = (struct entry){&d->log, i};
        assert_int_equal(aclrtLaunchHostFunc(d->s1, append_fn, &d->e[i]), ACL_SUCCESS);
    }
    assert_int_equal(aclrtMemsetAsync(d->dev, 4096, 1, 4096, d->s1), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(d->ev, d->s1), ACL_SUCCESS);
    assert_int_equal(aclrtStreamWaitEvent(d->s2, d->ev), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(d->s2, count_fn, &d->ran2), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(NULL, count_fn, &d->ran2), ACL_SUCCESS);
    assert_true(gate_wait(&d->b.started, WAIT_MS));
}

static void test_reset_device_with_work_in_flight(void **state)
{
    (void)state;
    int open_threads = thread_count();
    static struct busy_device d;
    make_busy(&d);
    static struct releaser r = {&d.b, 50};
    static struct call rel, reset;
    call_start(&rel, release_later, &r);
    static struct teardown_call t = {aclrtResetDevice, NULL, &d.b, -1, false};
    call_start(&reset, teardown_call_fn, &t);
    if (!call_wait(&reset, 3 * WAIT_MS))
        fail_msg("aclrtResetDevice with work in flight did not return");
    assert_true(call_wait(&rel, WAIT_MS));
    assert_int_equal(t.result, ACL_SUCCESS);
    if (!t.blocker_done_at_return)
        fail_msg("aclrtResetDevice returned while a host function was still running");
    assert_true(atomic_load(&d.b.released_ok));
    /* ours: a plain (not forced) reset lets queued work finish, like aclrtDestroyStream */
    assert_int_equal(log_count(&d.log), 40);
    for (int i = 0; i < 40; i++)
        assert_int_equal(d.log.v[i], i);
    assert_int_equal(atomic_load(&d.ran2), 2);
    /* the device's workers are gone */
    assert_int_equal(thread_count(), open_threads - WORKERS);
    /* this thread's context went with the device */
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_CONTEXT_NULL);
    expect_msg("aclrtSynchronizeStream", "context");
    /* the device opens again, fresh */
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(d.s1), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtSynchronizeStream", "stream");
    assert_int_equal(aclrtDestroyEvent(d.ev), ACL_SUCCESS);   /* events outlive resets */
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_finalize_with_work_in_flight(void **state)
{
    (void)state;
    int open_threads = thread_count();
    static struct busy_device d;
    make_busy(&d);
    static struct releaser r = {&d.b, 50};
    static struct call rel, fin;
    call_start(&rel, release_later, &r);
    static struct teardown_call t = {NULL, aclFinalize, &d.b, -1, false};
    call_start(&fin, teardown_call_fn, &t);
    if (!call_wait(&fin, 3 * WAIT_MS))
        fail_msg("aclFinalize with work in flight did not return");
    assert_true(call_wait(&rel, WAIT_MS));
    assert_int_equal(t.result, ACL_SUCCESS);
    if (!t.blocker_done_at_return)
        fail_msg("aclFinalize returned while a host function was still running");
    assert_true(atomic_load(&d.b.released_ok));
    /* queued work either ran in order or was discarded; nothing runs afterwards */
    int n = log_count(&d.log);
    for (int i = 0; i < n; i++)
        assert_int_equal(d.log.v[i], i);
    sleep_ms(20);
    assert_int_equal(log_count(&d.log), n);
    assert_int_equal(thread_count(), open_threads - WORKERS);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_ERROR_UNINITIALIZE);
    expect_msg("aclrtSynchronizeStream", NULL);
    /* and the runtime comes back */
    assert_int_equal(setup_gated(NULL), 0);
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    static atomic_int ran = 0;
    assert_int_equal(aclrtLaunchHostFunc(s, count_fn, &ran), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_int_equal(atomic_load(&ran), 1);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);   /* with a live, idle stream */
}

/* Pageable vs page-locked aclrtMemcpyAsync behind a blocked stream. */
struct copy_call {
    aclrtContext ctx;
    aclrtStream s;
    void *dev;
    const unsigned char *src;   /* ordinary host memory */
    unsigned char *back;        /* ordinary host memory */
    size_t n;
    struct blocker *b;
    aclError err, err_back;
    bool blocker_done_at_return;
    bool data_there_at_return;
    bool back_there_at_return;
};

static void pageable_copy_fn(void *arg)
{
    struct copy_call *c = arg;
    aclrtSetCurrentContext(c->ctx);
    c->err = aclrtMemcpyAsync(c->dev, c->n, c->src, c->n, ACL_MEMCPY_HOST_TO_DEVICE, c->s);
    c->blocker_done_at_return = gate_is_open(&c->b->finished);
    unsigned char *now = malloc(c->n);
    if (!now)
        return;
    /* a synchronous read, not ordered with the stream: what is there right now */
    c->data_there_at_return =
        aclrtMemcpy(now, c->n, c->dev, c->n, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS &&
        memcmp(now, c->src, c->n) == 0;
    free(now);
    /* device to pageable host: done when the call returns */
    memset(c->back, 0, c->n);
    c->err_back = aclrtMemcpyAsync(c->back, c->n, c->dev, c->n, ACL_MEMCPY_DEVICE_TO_HOST, c->s);
    c->back_there_at_return = memcmp(c->back, c->src, c->n) == 0;
}

struct pinned_call {
    aclrtContext ctx;
    aclrtStream s;
    void *dev;
    const void *src;
    size_t n;
    aclError err;
};

static void pinned_copy_fn(void *arg)
{
    struct pinned_call *c = arg;
    aclrtSetCurrentContext(c->ctx);
    c->err = aclrtMemcpyAsync(c->dev, c->n, c->src, c->n, ACL_MEMCPY_HOST_TO_DEVICE, c->s);
}

static void test_memcpy_async_pageable_vs_pinned(void **state)
{
    (void)state;
    enum { N = 4096 };
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    void *dev1, *dev2, *pinned;
    assert_int_equal(aclrtMalloc(&dev1, N, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMalloc(&dev2, N, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMemset(dev1, N, 0, N), ACL_SUCCESS);
    assert_int_equal(aclrtMemset(dev2, N, 0, N), ACL_SUCCESS);
    assert_int_equal(aclrtMallocHost(&pinned, N), ACL_SUCCESS);
    unsigned char *pageable = malloc(N), *back = malloc(N), *check = malloc(N);
    assert_non_null(pageable);
    assert_non_null(back);
    assert_non_null(check);
    for (int i = 0; i < N; i++) {
        ((unsigned char *)pinned)[i] = (unsigned char)(i * 7 + 1);
        pageable[i] = (unsigned char)(i * 13 + 5);
    }

    static struct blocker b;
    blocker_init(&b);
    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, &b), ACL_SUCCESS);
    assert_true(gate_wait(&b.started, WAIT_MS));

    /* page-locked: returns while the stream is still blocked; data not there yet */
    static struct pinned_call pc;
    pc = (struct pinned_call){current_context(), s, dev1, pinned, N, -1};
    static struct call c1;
    call_start(&c1, pinned_copy_fn, &pc);
    if (!call_wait(&c1, WAIT_MS))
        fail_msg("aclrtMemcpyAsync from aclrtMallocHost memory waited for the stream");
    assert_int_equal(pc.err, ACL_SUCCESS);
    assert_int_equal(aclrtMemcpy(check, N, dev1, N, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    for (int i = 0; i < N; i++)
        if (check[i] != 0)
            fail_msg("byte %d of a page-locked async copy arrived before its turn", i);

    /* pageable: does not return until the work before it (the blocker) ran */
    static struct copy_call cc;
    cc = (struct copy_call){current_context(), s, dev2, pageable, back, N, &b, -1, -1,
                           false, false, false};
    static struct call c2;
    call_start(&c2, pageable_copy_fn, &cc);
    if (call_wait(&c2, 100))
        fail_msg("aclrtMemcpyAsync from malloc'd memory returned (%d) while the stream was "
                 "blocked", cc.err);
    gate_open(&b.release);
    if (!call_wait(&c2, 2 * WAIT_MS))
        fail_msg("aclrtMemcpyAsync from malloc'd memory did not return after the stream ran");
    assert_int_equal(cc.err, ACL_SUCCESS);
    assert_true(cc.blocker_done_at_return);
    if (!cc.data_there_at_return)
        fail_msg("aclrtMemcpyAsync from malloc'd memory returned before the data arrived");
    assert_int_equal(cc.err_back, ACL_SUCCESS);
    if (!cc.back_there_at_return)
        fail_msg("aclrtMemcpyAsync to malloc'd memory returned before the data arrived");
    assert_true(atomic_load(&b.released_ok));

    assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtMemcpy(check, N, dev1, N, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    assert_memory_equal(check, pinned, N);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtFree(dev1), ACL_SUCCESS);
    assert_int_equal(aclrtFree(dev2), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(pinned), ACL_SUCCESS);
    free(pageable);
    free(back);
    free(check);
}

/* A host function that waits for its own stream or device would wait forever:
 * the runtime refuses those calls (507000) instead of hanging. */
struct self_wait_results {
    aclrtStream stream;
    aclError sync_own, destroy_own, pageable_own, sync_device, reset_device, finalize;
    bool message;
};

static void self_waits(void *arg)
{
    struct self_wait_results *r = arg;
    /* A worker has no current context of its own: take the device's. */
    aclrtSetDevice(0);
    r->sync_own = aclrtSynchronizeStream(r->stream);
    r->message = aclGetRecentErrMsg() != NULL;
    r->destroy_own = aclrtDestroyStream(r->stream);
    static char host[16];
    r->pageable_own = aclrtMemcpyAsync(host, sizeof host, host + 8, 8, ACL_MEMCPY_HOST_TO_HOST,
                                       r->stream);
    r->sync_device = aclrtSynchronizeDevice();
    r->reset_device = aclrtResetDeviceForce(0);
    r->finalize = aclFinalize();
    aclrtResetDevice(0);   /* the reference this host function took */
}

static void test_host_function_cannot_wait_for_itself(void **state)
{
    (void)state;
    static struct self_wait_results r;
    memset(&r, 0, sizeof r);
    ASSERT_OK(aclrtCreateStream(&r.stream));
    ASSERT_OK(aclrtLaunchHostFunc(r.stream, self_waits, &r));
    ASSERT_OK(aclrtSynchronizeStream(r.stream));   /* returns: nothing hung */
    assert_int_equal(r.sync_own, ACL_ERROR_RT_INTERNAL_ERROR);
    assert_true(r.message);
    assert_int_equal(r.destroy_own, ACL_ERROR_RT_INTERNAL_ERROR);
    assert_int_equal(r.pageable_own, ACL_ERROR_RT_INTERNAL_ERROR);
    assert_int_equal(r.sync_device, ACL_ERROR_RT_INTERNAL_ERROR);
    assert_int_equal(r.reset_device, ACL_ERROR_RT_INTERNAL_ERROR);
    assert_int_equal(r.finalize, ACL_ERROR_RT_INTERNAL_ERROR);
    ASSERT_OK(aclrtDestroyStream(r.stream));   /* still alive and usable from the host */
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_gated, teardown_gated)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uninitialized),
        T(test_host_function_cannot_wait_for_itself),
        T(test_host_funcs_in_order),
        T(test_mixed_tasks_in_order),
        T(test_streams_run_concurrently),
        T(test_thousand_streams),
        T(test_null_stream_is_current_default),
        T(test_synchronize_with_timeout),
        T(test_destroy_waits_for_queued_work),
        T(test_destroy_force_runs_queued_work),
        T(test_destroy_force_parked_stream),
        T(test_destroy_force_then_reset),
        T(test_bad_stream_handles),
        T(test_null_arguments),
        T(test_create_with_config),
        T(test_parked_streams_occupy_no_worker),
        T(test_reset_device_with_work_in_flight),
        T(test_finalize_with_work_in_flight),
        T(test_memcpy_async_pageable_vs_pinned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
