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

#ifndef ACLSIM_TEST_KERNELS_PATH
#error "ACLSIM_TEST_KERNELS_PATH is not defined (no tests/kernels/*.c?)"
#endif

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
    /* Nothing ran yet: the blocker holds the stream (no probe has logged;
     * reading out itself now would be an early host access). */
    assert_int_equal(log_count(&log), 0);
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

/* A new stream running a blocker (started) with n count_fn tasks behind it. */
static aclrtStream blocked_stream(struct blocker *b, atomic_int *ran, int n)
{
    blocker_init(b);
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchHostFunc(s, blocker_fn, b), ACL_SUCCESS);
    for (int i = 0; i < n; i++)
        assert_int_equal(aclrtLaunchHostFunc(s, count_fn, ran), ACL_SUCCESS);
    assert_true(gate_wait(&b->started, WAIT_MS));
    return s;
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
    uint32_t initial;
    assert_int_equal(aclrtGetStreamAvailableNum(&initial), ACL_SUCCESS);
    aclrtStream s = blocked_stream(&b, &ran, N);
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

    /* The drained stream is recycled (by its worker, right after its last
     * task counted as done): the available count comes back. */
    uint32_t now = 0;
    for (int k = 0; k < WAIT_MS; k++) {
        assert_int_equal(aclrtGetStreamAvailableNum(&now), ACL_SUCCESS);
        if (now == initial)
            break;
        sleep_ms(1);
    }
    assert_int_equal(now, initial);
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

/* aclrtBinaryUnLoad waits for the work of a force-destroyed stream too (a
 * kernel of the binary might be queued there). */
static aclrtBinHandle unload_bin;
static aclError unload_err;
static void unload_call(void *arg)
{
    (void)arg;
    unload_err = aclrtBinaryUnLoad(unload_bin);
}

static void test_destroy_force_then_unload(void **state)
{
    (void)state;
    OK(aclrtBinaryLoadFromFile(ACLSIM_TEST_KERNELS_PATH, NULL, &unload_bin));
    static atomic_int ran = 0;
    static struct blocker b;
    aclrtStream s = blocked_stream(&b, &ran, 3);
    OK(aclrtDestroyStreamForce(s));
    static struct call c;
    unload_err = -1;
    call_start(&c, unload_call, NULL);
    sleep_ms(30);
    assert_false(gate_is_open(&c.done));   /* waiting for the drained stream */
    gate_open(&b.release);
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(unload_err, ACL_SUCCESS);
    assert_int_equal(atomic_load(&ran), 3);
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
        aclrtStream s = blocked_stream(&b, &ran, N);
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

/* Threads create streams, queue work and force-destroy them while another
 * synchronizes the device: every task queued still runs, nothing leaks
 * (the streams come back: the available count returns to where it was). */
struct force_racer { aclrtContext ctx; atomic_int *ran; atomic_int bad; };

static void *force_race(void *arg)
{
    struct force_racer *r = arg;
    aclrtSetCurrentContext(r->ctx);
    for (int i = 0; i < 100; i++) {
        aclrtStream s;
        if (aclrtCreateStream(&s) != ACL_SUCCESS) {
            atomic_fetch_add(&r->bad, 1);
            continue;
        }
        for (int k = 0; k < 5; k++)
            if (aclrtLaunchHostFunc(s, count_fn, r->ran) != ACL_SUCCESS)
                atomic_fetch_add(&r->bad, 1);
        if (aclrtDestroyStreamForce(s) != ACL_SUCCESS)
            atomic_fetch_add(&r->bad, 1);
        if (i % 10 == 0 && aclrtSynchronizeDevice() != ACL_SUCCESS)
            atomic_fetch_add(&r->bad, 1);
    }
    return NULL;
}

static void test_force_destroy_races(void **state)
{
    (void)state;
    enum { T = 4 };
    static atomic_int ran = 0;
    static struct force_racer r[T];
    uint32_t before, after;
    assert_int_equal(aclrtGetStreamAvailableNum(&before), ACL_SUCCESS);
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        r[i] = (struct force_racer){.ctx = current_context(), .ran = &ran};
        assert_int_equal(pthread_create(&th[i], NULL, force_race, &r[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(atomic_load(&r[i].bad), 0);
    }
    assert_int_equal(aclrtSynchronizeDeviceWithTimeout(WAIT_MS), ACL_SUCCESS);
    assert_int_equal(atomic_load(&ran), T * 100 * 5);
    for (int k = 0; k < WAIT_MS; k++) {   /* the last drained streams are being recycled */
        assert_int_equal(aclrtGetStreamAvailableNum(&after), ACL_SUCCESS);
        if (after == before)
            break;
        sleep_ms(1);
    }
    assert_int_equal(after, before);
}

/* ---- the stream API of issue 8 -------------------------------------------------- */


/* Id, flags and priority as created; the priority range. */
static void test_stream_properties(void **state)
{
    (void)state;
    int32_t least = -1, greatest = -1;
    OK(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
    assert_int_equal(least, 7);
    assert_int_equal(greatest, 0);
    OK(aclrtDeviceGetStreamPriorityRange(NULL, &greatest));   /* either may be NULL */
    OK(aclrtDeviceGetStreamPriorityRange(&least, NULL));

    aclrtStream a, b, c;
    OK(aclrtCreateStream(&a));
    OK(aclrtCreateStreamWithConfig(&b, 3, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC));
    OK(aclrtCreateStreamWithConfig(&c, 100, ACL_STREAM_HUGE | 0x10000u));   /* clamped; unknown bit dropped */
    int32_t ida, idb, idc, idd;
    OK(aclrtStreamGetId(a, &ida));
    OK(aclrtStreamGetId(b, &idb));
    OK(aclrtStreamGetId(c, &idc));
    OK(aclrtStreamGetId(NULL, &idd));
    assert_true(ida >= 0 && idb >= 0 && idc >= 0 && idd >= 0);
    assert_true(ida != idb && ida != idc && idb != idc && idd != ida && idd != idb && idd != idc);
    uint32_t v;
    OK(aclrtStreamGetFlags(a, &v));
    assert_int_equal(v, 0);
    OK(aclrtStreamGetFlags(b, &v));
    assert_int_equal(v, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC);
    OK(aclrtStreamGetFlags(c, &v));
    assert_int_equal(v, ACL_STREAM_HUGE);
    OK(aclrtStreamGetFlags(NULL, &v));
    assert_int_equal(v, 0);
    OK(aclrtStreamGetPriority(a, &v));
    assert_int_equal(v, 0);
    OK(aclrtStreamGetPriority(b, &v));
    assert_int_equal(v, 3);
    OK(aclrtStreamGetPriority(c, &v));
    assert_int_equal(v, 7);
    OK(aclrtStreamGetPriority(NULL, &v));
    assert_int_equal(v, 0);

    /* persistent streams exist (for aclmdlRIBindStream, test-modelri.c) */
    aclrtStream x = NULL;
    OK(aclrtCreateStreamWithConfig(&x, 0, ACL_STREAM_PERSISTENT));
    OK(aclrtStreamGetFlags(x, &v));
    assert_int_equal(v, ACL_STREAM_PERSISTENT);
    OK(aclrtDestroyStream(x));
    x = NULL;
    /* the flags aclsim cannot honour */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "CPU-schedule",
               aclrtCreateStreamWithConfig(&x, 0, ACL_STREAM_CPU_SCHEDULE));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "device-use-only",
               aclrtCreateStreamWithConfig(&x, 0, ACL_STREAM_DEVICE_USE_ONLY));
    assert_null(x);

    /* NULL outputs; dead handles */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "streamId", aclrtStreamGetId(a, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags", aclrtStreamGetFlags(a, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "priority", aclrtStreamGetPriority(a, NULL));
    OK(aclrtDestroyStream(c));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtStreamGetId(c, &idc));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtStreamGetFlags(c, &v));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtStreamGetPriority(c, &v));
    /* another context's stream */
    aclrtContext ctx0 = current_context(), ctx1;
    OK(aclrtCreateContext(&ctx1, 1));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CONTEXT, "context", aclrtStreamGetId(a, &ida));
    OK(aclrtDestroyContext(ctx1));
    OK(aclrtSetCurrentContext(ctx0));
    OK(aclrtDestroyStream(a));
    OK(aclrtDestroyStream(b));
}

/* A free worker takes the waiting stream of greatest priority (0) first. */
static void test_priority_order(void **state)
{
    (void)state;
    static struct blocker b1, b2;
    static struct log log;
    static struct entry low = {&log, 7}, high = {&log, 0}, mid = {&log, 3};
    log_init(&log);
    static atomic_int unused = 0;
    aclrtStream x1 = blocked_stream(&b1, &unused, 0);   /* both workers busy */
    aclrtStream x2 = blocked_stream(&b2, &unused, 0);
    aclrtStream l, h, m;
    OK(aclrtCreateStreamWithConfig(&l, 7, 0));
    OK(aclrtCreateStreamWithConfig(&m, 0, 0));
    OK(aclrtCreateStreamWithConfig(&h, 0, 0));
    aclrtStreamAttrValue v = {.streamPriority = 3};
    OK(aclrtSetStreamAttribute(m, ACL_STREAM_ATTR_PRIORITY, &v));
    OK(aclrtLaunchHostFunc(l, append_fn, &low));    /* queued first, least priority */
    OK(aclrtLaunchHostFunc(m, append_fn, &mid));
    OK(aclrtLaunchHostFunc(h, append_fn, &high));   /* queued last, greatest priority */
    sleep_ms(10);
    assert_int_equal(log_count(&log), 0);
    gate_open(&b1.release);   /* one worker frees up: it runs them in priority order */
    OK(aclrtSynchronizeStreamWithTimeout(l, WAIT_MS));
    assert_int_equal(log_count(&log), 3);
    assert_int_equal(log.v[0], 0);
    assert_int_equal(log.v[1], 3);
    assert_int_equal(log.v[2], 7);
    gate_open(&b2.release);
    OK(aclrtSynchronizeDevice());
    aclrtStream all[] = {x1, x2, l, m, h};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        OK(aclrtDestroyStream(all[i]));
}

/* aclrtStreamQuery follows the stream's work. */
static void test_stream_query(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    OK(aclrtStreamQuery(s, &st));
    assert_int_equal(st, ACL_STREAM_STATUS_COMPLETE);
    static struct blocker b;
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    assert_true(gate_wait(&b.started, WAIT_MS));
    OK(aclrtStreamQuery(s, &st));
    assert_int_equal(st, ACL_STREAM_STATUS_NOT_READY);
    gate_open(&b.release);
    OK(aclrtSynchronizeStream(s));
    OK(aclrtStreamQuery(s, &st));
    assert_int_equal(st, ACL_STREAM_STATUS_COMPLETE);
    OK(aclrtStreamQuery(NULL, &st));
    assert_int_equal(st, ACL_STREAM_STATUS_COMPLETE);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "status", aclrtStreamQuery(s, NULL));
    OK(aclrtDestroyStream(s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtStreamQuery(s, &st));
}

/* The default stream's handle: usable like NULL, not destroyable. */
static void test_current_default_stream(void **state)
{
    (void)state;
    aclrtStream d = NULL, d2 = NULL;
    OK(aclrtCtxGetCurrentDefaultStream(&d));
    assert_non_null(d);
    OK(aclrtCtxGetCurrentDefaultStream(&d2));
    assert_ptr_equal(d, d2);
    static atomic_int n = 0;
    static struct blocker b;
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(NULL, blocker_fn, &b));
    OK(aclrtLaunchHostFunc(d, count_fn, &n));   /* same stream: after the blocker */
    assert_true(gate_wait(&b.started, WAIT_MS));
    sleep_ms(10);
    assert_int_equal(atomic_load(&n), 0);
    gate_open(&b.release);
    OK(aclrtSynchronizeStream(d));
    assert_int_equal(atomic_load(&n), 1);
    int32_t id1, id2;
    OK(aclrtStreamGetId(d, &id1));
    OK(aclrtStreamGetId(NULL, &id2));
    assert_int_equal(id1, id2);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "default stream", aclrtDestroyStream(d));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "default stream", aclrtDestroyStreamForce(d));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtCtxGetCurrentDefaultStream(NULL));
    /* another context has another default stream; a reset kills the handle */
    aclrtContext ctx0 = current_context(), ctx1;
    OK(aclrtCreateContext(&ctx1, 0));
    OK(aclrtCtxGetCurrentDefaultStream(&d2));
    assert_ptr_not_equal(d, d2);
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CONTEXT, "context", aclrtSynchronizeStream(d));
    OK(aclrtDestroyContext(ctx1));
    OK(aclrtSetCurrentContext(ctx0));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtSynchronizeStream(d2));
    OK(aclrtResetDeviceForce(0));
    OK(aclrtSetDevice(0));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtSynchronizeStream(d));
}

/* Streams available = the SoC's maximum minus the live ones; the limit holds. */
static void test_stream_limit(void **state)
{
    (void)state;
    uint32_t n0, n1;
    OK(aclrtGetStreamAvailableNum(&n0));
    assert_int_equal(n0, 1984 - 1);   /* Ascend910B1; the default stream counts */
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    OK(aclrtGetStreamAvailableNum(&n1));
    assert_int_equal(n1, n0 - 1);
    OK(aclrtDestroyStream(s));
    OK(aclrtGetStreamAvailableNum(&n1));
    assert_int_equal(n1, n0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "streamCount", aclrtGetStreamAvailableNum(NULL));

    reinit_with_soc("Ascend310B1");   /* 512 streams per device */
    static aclrtStream many[512];
    OK(aclrtGetStreamAvailableNum(&n0));
    assert_int_equal(n0, 511);
    for (uint32_t i = 0; i < n0; i++)
        OK(aclrtCreateStream(&many[i]));
    OK(aclrtGetStreamAvailableNum(&n1));
    assert_int_equal(n1, 0);
    aclrtStream extra = NULL;
    EXPECT_ERR(ACL_ERROR_RT_NO_STREAM_RESOURCE, "512", aclrtCreateStream(&extra));
    assert_null(extra);
    OK(aclrtDestroyStreamForce(many[0]));
    OK(aclrtCreateStream(&extra));
    for (uint32_t i = 1; i < n0; i++)
        OK(aclrtDestroyStream(many[i]));
    OK(aclrtDestroyStream(extra));

    reinit_with_soc("IPV350");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "streamCount", aclrtGetStreamAvailableNum(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtGetStreamAvailableNum(&n1));
}

static void test_stream_attributes(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    aclrtStreamAttrValue v;
    memset(&v, 0xff, sizeof v);
    OK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v));
    assert_int_equal(v.overflowSwitch, 1);   /* overflow detection is on by default */
    assert_int_equal(v.reserve[3], 0);
    v.overflowSwitch = 0;
    OK(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v));
    uint32_t sw = 1;
    OK(aclrtGetStreamOverflowSwitch(s, &sw));   /* the same switch */
    assert_int_equal(sw, 0);
    OK(aclrtSetStreamOverflowSwitch(s, 1));
    v.userCustomTag = 0xabc;
    OK(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
    v.cacheOpInfoSwitch = 1;
    OK(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_CACHE_OP_INFO, &v));
    v.streamPriority = 5;
    OK(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY, &v));
    OK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v));
    assert_int_equal(v.overflowSwitch, 1);
    OK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
    assert_int_equal(v.userCustomTag, 0xabc);
    OK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_CACHE_OP_INFO, &v));
    assert_int_equal(v.cacheOpInfoSwitch, 1);
    OK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY, &v));
    assert_int_equal(v.streamPriority, 5);
    uint32_t prio;
    OK(aclrtStreamGetPriority(s, &prio));
    assert_int_equal(prio, 5);
    /* the default stream, on this SoC (Ascend910B1) */
    v.userCustomTag = 7;
    OK(aclrtSetStreamAttribute(NULL, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
    OK(aclrtGetStreamAttribute(NULL, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
    assert_int_equal(v.userCustomTag, 7);
    OK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
    assert_int_equal(v.userCustomTag, 0xabc);   /* per stream */

    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value",
               aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "value",
               aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stmAttrType",
               aclrtSetStreamAttribute(s, (aclrtStreamAttr)0, &v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stmAttrType",
               aclrtGetStreamAttribute(s, (aclrtStreamAttr)6, &v));
    v.overflowSwitch = 2;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overflowSwitch",
               aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v));
    v.streamPriority = 8;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "streamPriority",
               aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY, &v));
    /* the failure mode attribute is aclrtSetStreamFailureMode's (failure.c) */
    OK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, &v));
    assert_int_equal(v.failureMode, ACL_CONTINUE_ON_FAILURE);
    v.failureMode = ACL_STOP_ON_FAILURE;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "default stream",
               aclrtSetStreamAttribute(NULL, ACL_STREAM_ATTR_FAILURE_MODE, &v));
    OK(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, &v));
    memset(&v, 0, sizeof v);
    OK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, &v));
    assert_int_equal(v.failureMode, ACL_STOP_ON_FAILURE);
    v.failureMode = ACL_CONTINUE_ON_FAILURE;   /* no way back (CANN) */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "ACL_CONTINUE_ON_FAILURE",
               aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, &v));
    OK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY, &v));
    assert_int_equal(v.streamPriority, 5);   /* unchanged by the refused calls */
    OK(aclrtDestroyStream(s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream",
               aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY, &v));

    reinit_with_soc("Ascend310P1");   /* no default stream here */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "default stream",
               aclrtSetStreamAttribute(NULL, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
    OK(aclrtCreateStream(&s));
    OK(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
    OK(aclrtDestroyStream(s));
}

/* aclrtSynchronizeDeviceWithTimeout: bounded, and CANN's checks. */
static void test_synchronize_device_with_timeout(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "timeout", aclrtSynchronizeDeviceWithTimeout(0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "timeout", aclrtSynchronizeDeviceWithTimeout(-2));
    OK(aclrtSynchronizeDeviceWithTimeout(-1));
    static struct blocker b;
    blocker_init(&b);
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    time_t t0 = time(NULL);
    EXPECT_ERR(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "50 ms", aclrtSynchronizeDeviceWithTimeout(50));
    assert_true(time(NULL) - t0 <= 2);
    gate_open(&b.release);
    OK(aclrtSynchronizeDeviceWithTimeout(WAIT_MS));
    OK(aclrtDestroyStream(s));
    reinit_with_soc("IPV350");
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "timeout", aclrtSynchronizeDeviceWithTimeout(0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtSynchronizeDeviceWithTimeout(10));
}

/* aclrtStreamAbort: the running task finishes, the pending ones are discarded,
 * a synchronize across it gets 107023, a pageable copy discarded by it too;
 * the stream works again afterwards. */
struct sync_result { aclrtContext ctx; aclrtStream s; aclError err; };

static void sync_call(void *arg)
{
    struct sync_result *r = arg;
    aclrtSetCurrentContext(r->ctx);
    r->err = aclrtSynchronizeStream(r->s);
}

struct abort_copy { aclrtContext ctx; aclrtStream s; void *dst; char src[64]; aclError err; };

static void pageable_copy_call(void *arg)
{
    struct abort_copy *c = arg;
    aclrtSetCurrentContext(c->ctx);
    c->err = aclrtMemcpyAsync(c->dst, 64, c->src, 64, ACL_MEMCPY_HOST_TO_DEVICE, c->s);
}

static void release_after_50ms(void *arg)
{
    sleep_ms(50);
    gate_open(&((struct blocker *)arg)->release);
}

static void test_stream_abort(void **state)
{
    (void)state;
    enum { N = 20 };
    static atomic_int ran = 0;
    static struct blocker b;
    void *dev;
    OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    aclrtStream s = blocked_stream(&b, &ran, N);
    static struct sync_result sr;
    sr = (struct sync_result){current_context(), s, ACL_SUCCESS};
    static struct call sc, cc, rc;
    call_start(&sc, sync_call, &sr);
    static struct abort_copy cp;
    cp = (struct abort_copy){.ctx = current_context(), .s = s, .dst = dev};
    call_start(&cc, pageable_copy_call, &cp);
    sleep_ms(20);   /* both wait now */
    call_start(&rc, release_after_50ms, &b);
    OK(aclrtStreamAbort(s));   /* returns once the running blocker has finished */
    assert_true(gate_is_open(&b.finished));
    assert_true(atomic_load(&b.released_ok));
    assert_true(call_wait(&sc, WAIT_MS));
    assert_true(call_wait(&cc, WAIT_MS));
    assert_true(call_wait(&rc, WAIT_MS));
    assert_int_equal(sr.err, ACL_ERROR_RT_STREAM_ABORT);
    assert_int_equal(cp.err, ACL_ERROR_RT_STREAM_ABORT);
    sleep_ms(10);
    assert_int_equal(atomic_load(&ran), 0);
    aclrtStreamStatus st;
    OK(aclrtStreamQuery(s, &st));
    assert_int_equal(st, ACL_STREAM_STATUS_COMPLETE);
    /* usable again */
    OK(aclrtLaunchHostFunc(s, count_fn, &ran));
    OK(aclrtSynchronizeStream(s));
    assert_int_equal(atomic_load(&ran), 1);
    OK(aclrtStreamAbort(s));   /* idle: nothing to do */
    OK(aclrtStreamAbort(NULL));
    OK(aclrtSynchronizeStream(s));
    OK(aclrtDestroyStream(s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtStreamAbort(s));
    OK(aclrtFree(dev));

    reinit_with_soc("Ascend310P1");
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310P1", aclrtStreamAbort(NULL));
}

/* A host function may not abort its own stream (it would wait for itself). */
static struct { aclrtContext ctx; aclrtStream s; aclError err; } self_abort;

static void abort_self(void *arg)
{
    (void)arg;
    aclrtSetCurrentContext(self_abort.ctx);
    self_abort.err = aclrtStreamAbort(self_abort.s);
}

static void test_stream_abort_self(void **state)
{
    (void)state;
#define x self_abort
    x.ctx = current_context();
    OK(aclrtCreateStream(&x.s));
    x.err = ACL_SUCCESS;
    OK(aclrtLaunchHostFunc(x.s, abort_self, &x));
    OK(aclrtSynchronizeStream(x.s));
    assert_int_equal(x.err, ACL_ERROR_RT_INTERNAL_ERROR);
    OK(aclrtDestroyStream(x.s));
#undef x
}

/* Concurrent aborts, submissions and syncs on one stream: nothing hangs, every
 * call returns one of its documented codes. */
struct abort_racer { aclrtContext ctx; aclrtStream s; int role; atomic_int bad; atomic_int *ran; };

static void *abort_race(void *arg)
{
    struct abort_racer *r = arg;
    aclrtSetCurrentContext(r->ctx);
    for (int i = 0; i < 200; i++) {
        aclError e;
        if (r->role == 0)
            e = aclrtStreamAbort(r->s);
        else if (r->role == 1)
            e = aclrtLaunchHostFunc(r->s, count_fn, r->ran);
        else
            e = aclrtSynchronizeStreamWithTimeout(r->s, WAIT_MS);
        if (e != ACL_SUCCESS && !(r->role == 2 && e == ACL_ERROR_RT_STREAM_ABORT))
            atomic_fetch_add(&r->bad, 1);
        drain_msg();
    }
    return NULL;
}

static void test_stream_abort_races(void **state)
{
    (void)state;
    static atomic_int ran = 0;
    static struct abort_racer r[3];
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        r[i] = (struct abort_racer){.ctx = current_context(), .s = s, .role = i, .ran = &ran};
        assert_int_equal(pthread_create(&th[i], NULL, abort_race, &r[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(atomic_load(&r[i].bad), 0);
    }
    OK(aclrtSynchronizeStream(s));
    int before = atomic_load(&ran);
    OK(aclrtLaunchHostFunc(s, count_fn, &ran));
    OK(aclrtSynchronizeStream(s));
    assert_int_equal(atomic_load(&ran), before + 1);
    OK(aclrtDestroyStream(s));
}

static void test_stream_stop_and_model_streams(void **state)
{
    (void)state;
    aclrtStream s, t;
    OK(aclrtCreateStream(&s));
    OK(aclrtCreateStream(&t));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "default stream", aclrtStreamStop(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "running task", aclrtStreamStop(s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtStreamStop((aclrtStream)8));

    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "activeStream", aclrtActiveStream(NULL, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtActiveStream(s, NULL));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_MODEL, "model", aclrtActiveStream(t, s));
    int32_t l = 1, r = 1;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "leftValue",
               aclrtSwitchStream(NULL, ACL_RT_EQUAL, &r, ACL_RT_SWITCH_INT32, t, NULL, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "trueStream",
               aclrtSwitchStream(&l, ACL_RT_EQUAL, &r, ACL_RT_SWITCH_INT32, NULL, NULL, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "falseStream",
               aclrtSwitchStream(&l, ACL_RT_EQUAL, &r, ACL_RT_SWITCH_INT32, t, t, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "cond",
               aclrtSwitchStream(&l, (aclrtCondition)9, &r, ACL_RT_SWITCH_INT32, t, NULL, s));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_MODEL, "model",
               aclrtSwitchStream(&l, ACL_RT_EQUAL, &r, ACL_RT_SWITCH_INT64, t, NULL, s));
    OK(aclrtDestroyStream(s));
    OK(aclrtDestroyStream(t));

    reinit_with_soc("Ascend910_9391");   /* A3: no model-stream switching, but stop exists */
    OK(aclrtCreateStream(&s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtActiveStream(s, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910_9391", aclrtActiveStream(s, s));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "running task", aclrtStreamStop(s));
    OK(aclrtDestroyStream(s));
    reinit_with_soc("Ascend310P3");
    OK(aclrtCreateStream(&s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "default stream", aclrtStreamStop(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310P3", aclrtStreamStop(s));
    OK(aclrtDestroyStream(s));
}

/* aclrtCreateStreamV2 and the config handles exist on IPV350 only. */
static void test_create_stream_v2(void **state)
{
    (void)state;
    aclrtStream s = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtCreateStreamV2(NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B1", aclrtCreateStreamV2(&s, NULL));
    assert_null(aclrtCreateStreamConfigHandle());
    expect_msg("aclrtCreateStreamConfigHandle", "Ascend910B1");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle", aclrtDestroyStreamConfigHandle(NULL));

    reinit_with_soc("IPV350");
    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    assert_non_null(h);
    uint32_t prio = 6;
    size_t flag = ACL_STREAM_FAST_SYNC;
    void *work = NULL;
    size_t wsize = 0;
    OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &prio, sizeof prio));
    OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, &flag, sizeof flag));
    OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_ADDR_PTR, &work, sizeof work));
    OK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_SIZE, &wsize, sizeof wsize));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "valueSize",
               aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &prio, sizeof flag));
    prio = 8;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "priority",
               aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &prio, sizeof prio));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attr",
               aclrtSetStreamConfigOpt(h, (aclrtStreamConfigAttr)4, &prio, sizeof prio));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attrValue",
               aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, NULL, sizeof prio));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle",
               aclrtSetStreamConfigOpt(NULL, ACL_RT_STREAM_PRIORITY, &prio, sizeof prio));
    OK(aclrtCreateStreamV2(&s, h));
    aclrtStream d;
    OK(aclrtCreateStreamV2(&d, NULL));
    static atomic_int n = 0;
    OK(aclrtLaunchHostFunc(s, count_fn, &n));
    OK(aclrtSynchronizeStream(s));
    assert_int_equal(atomic_load(&n), 1);
    OK(aclrtDestroyStreamConfigHandle(h));
    OK(aclrtDestroyStream(s));
    OK(aclrtDestroyStream(d));
    /* the other creation functions, force destroy, the timed synchronize and
     * the query functions are not on IPV350 */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtCreateStream(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtCreateStream(&s));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtCreateStreamWithConfig(&s, 0, 0));
    OK(aclrtCreateStreamV2(&s, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout", aclrtSynchronizeStreamWithTimeout(s, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtSynchronizeStreamWithTimeout(s, 10));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtDestroyStreamForce(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtDestroyStreamForce(s));
    OK(aclrtDestroyStream(s));
    uint32_t v;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags", aclrtStreamGetFlags(NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtStreamGetFlags(NULL, &v));
}

/* aclrtRegStreamStateCallback: CREATE_POST after a stream exists, DESTROY_PRE
 * before it goes, for user and default streams, in name order. */
#define EV_MAX 64
static struct { pthread_mutex_t m; int n; aclrtStream s[EV_MAX]; int state[EV_MAX]; void *args[EV_MAX]; } evs = {PTHREAD_MUTEX_INITIALIZER, 0, {0}, {0}, {0}};

static void state_cb(aclrtStream stm, aclrtStreamState st, void *args)
{
    pthread_mutex_lock(&evs.m);
    if (evs.n < EV_MAX) {
        evs.s[evs.n] = stm;
        evs.state[evs.n] = st;
        evs.args[evs.n] = args;
        evs.n++;
    }
    pthread_mutex_unlock(&evs.m);
}

/* Registering and unregistering state callbacks races with creating and
 * destroying streams: every call succeeds, nothing hangs. */
static atomic_int state_calls;
static void counting_state_cb(aclrtStream stm, aclrtStreamState st, void *args)
{
    (void)stm;
    (void)st;
    (void)args;
    atomic_fetch_add(&state_calls, 1);
}

struct state_racer { aclrtContext ctx; int role; atomic_int bad; };

static void *state_race(void *arg)
{
    struct state_racer *r = arg;
    aclrtSetCurrentContext(r->ctx);
    char name[32];
    for (int i = 0; i < 200; i++) {
        if (r->role) {
            snprintf(name, sizeof name, "racer-%d", i % 7);
            if (aclrtRegStreamStateCallback(name, counting_state_cb, NULL) != ACL_SUCCESS)
                drain_msg();   /* registered already by the last round: fine */
            if (aclrtRegStreamStateCallback(name, NULL, NULL) != ACL_SUCCESS)
                atomic_fetch_add(&r->bad, 1);
        } else {
            aclrtStream s;
            if (aclrtCreateStream(&s) != ACL_SUCCESS || aclrtDestroyStream(s) != ACL_SUCCESS)
                atomic_fetch_add(&r->bad, 1);
        }
    }
    return NULL;
}

static void test_stream_state_callback_races(void **state)
{
    (void)state;
    static struct state_racer r[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        r[i] = (struct state_racer){.ctx = current_context(), .role = i == 2};
        assert_int_equal(pthread_create(&th[i], NULL, state_race, &r[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(atomic_load(&r[i].bad), 0);
    }
    int before = atomic_load(&state_calls);
    aclrtStream s;
    OK(aclrtCreateStream(&s));   /* every registration is gone again */
    OK(aclrtDestroyStream(s));
    assert_int_equal(atomic_load(&state_calls), before);
}

static void test_stream_state_callbacks(void **state)
{
    (void)state;
    static int tag_a, tag_b;
    evs.n = 0;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "regName", aclrtRegStreamStateCallback(NULL, state_cb, NULL));
    OK(aclrtRegStreamStateCallback("b", state_cb, &tag_b));
    OK(aclrtRegStreamStateCallback("a", state_cb, &tag_a));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "registered", aclrtRegStreamStateCallback("a", state_cb, NULL));
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    assert_int_equal(evs.n, 2);
    assert_ptr_equal(evs.s[0], s);
    assert_int_equal(evs.state[0], ACL_RT_STREAM_STATE_CREATE_POST);
    assert_ptr_equal(evs.args[0], &tag_a);   /* in name order */
    assert_ptr_equal(evs.args[1], &tag_b);
    OK(aclrtDestroyStream(s));
    assert_int_equal(evs.n, 4);
    assert_ptr_equal(evs.s[2], s);
    assert_int_equal(evs.state[2], ACL_RT_STREAM_STATE_DESTROY_PRE);
    OK(aclrtRegStreamStateCallback("b", NULL, NULL));   /* unregister */
    OK(aclrtRegStreamStateCallback("never", NULL, NULL));
    OK(aclrtCreateStreamWithConfig(&s, 1, 0));
    assert_int_equal(evs.n, 5);
    OK(aclrtDestroyStreamForce(s));
    assert_int_equal(evs.n, 6);
    assert_int_equal(evs.state[5], ACL_RT_STREAM_STATE_DESTROY_PRE);
    /* a device opening creates its default stream; its reset destroys it */
    OK(aclrtSetDevice(1));
    assert_int_equal(evs.n, 7);
    assert_int_equal(evs.state[6], ACL_RT_STREAM_STATE_CREATE_POST);
    aclrtStream d1;
    OK(aclrtCtxGetCurrentDefaultStream(&d1));
    assert_ptr_equal(evs.s[6], d1);
    OK(aclrtResetDevice(1));
    assert_int_equal(evs.n, 8);
    assert_ptr_equal(evs.s[7], d1);
    assert_int_equal(evs.state[7], ACL_RT_STREAM_STATE_DESTROY_PRE);
    OK(aclrtRegStreamStateCallback("a", NULL, NULL));
    OK(aclrtSetDevice(1));
    OK(aclrtResetDevice(1));
    assert_int_equal(evs.n, 8);
    reinit_with_soc("IPV350");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "regName", aclrtRegStreamStateCallback(NULL, state_cb, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtRegStreamStateCallback("a", state_cb, NULL));
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
        T(test_destroy_force_then_unload),
        T(test_force_destroy_races),
        T(test_stream_properties),
        T(test_priority_order),
        T(test_stream_query),
        T(test_current_default_stream),
        T(test_stream_limit),
        T(test_stream_attributes),
        T(test_synchronize_device_with_timeout),
        T(test_stream_abort),
        T(test_stream_abort_self),
        T(test_stream_abort_races),
        T(test_stream_stop_and_model_streams),
        T(test_create_stream_v2),
        T(test_stream_state_callbacks),
        T(test_stream_state_callback_races),
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
