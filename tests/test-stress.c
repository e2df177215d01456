/*
 * Concurrency stress (bounded): many threads, two devices, many streams, and
 * lifecycle calls racing work in flight. Each test verifies content at the
 * end: no lost or torn writes, nothing hangs, nothing leaks (ASan/TSan builds).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

#define THREADS 8
#define SLICE 512                 /* ints per thread */
#define ROUNDS 200

ACLSIM_DEVICE_VAR(int, stress_grid, [THREADS][SLICE]);
ACLSIM_DEVICE_VAR(long, stress_sum, );

static void init_two_devices(void)
{
    OK(init_devices("2", "256M"));
}

static void finalize(void)
{
    OK(aclFinalize());
    unset_config();
}

/* ---- 8 threads x mixed symbol copies on 2 devices and 16 streams -------------- */

struct worker {
    int id;
    int last[2];      /* last value written on each device */
    int errors;
};

static void fill(int *buf, int value)
{
    for (int i = 0; i < SLICE; i++)
        buf[i] = value;
}

static bool uniform(const int *buf, int value)
{
    for (int i = 0; i < SLICE; i++)
        if (buf[i] != value)
            return false;
    return true;
}

static void *mixed_copies(void *arg)
{
    struct worker *w = arg;
    size_t offset = (size_t)w->id * SLICE * sizeof(int);
    aclrtStream streams[2][2];
    int *pinned[2];
    for (int d = 0; d < 2; d++) {
        if (aclrtSetDevice(d) || aclrtMallocHost((void **)&pinned[d], SLICE * sizeof(int)))
            return (void *)1;
        for (int s = 0; s < 2; s++)
            if (aclrtCreateStream(&streams[d][s]))
                return (void *)1;
    }
    int readback[SLICE];
    unsigned seed = (unsigned)w->id * 7919u + 1;
    for (int r = 1; r <= ROUNDS; r++) {
        int d = (int)(rand_r(&seed) % 2), s = (int)(rand_r(&seed) % 2);
        int value = w->id * 100000 + r;
        if (aclrtSetDevice(d))
            w->errors++;
        switch (rand_r(&seed) % 4) {
        case 0: /* synchronous */
            fill(readback, value);
            w->errors += aclrtMemcpyToSymbol(stress_grid, readback, SLICE * sizeof(int), offset,
                                             ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS;
            break;
        case 1: /* page-locked async, then synchronize before reusing the buffer */
            fill(pinned[d], value);
            w->errors += aclrtMemcpyToSymbolAsync(stress_grid, pinned[d], SLICE * sizeof(int),
                                                  offset, ACL_MEMCPY_DEFAULT,
                                                  streams[d][s]) != ACL_SUCCESS;
            w->errors += aclrtSynchronizeStream(streams[d][s]) != ACL_SUCCESS;
            break;
        case 2: /* pageable async: returns after the copy */
            fill(readback, value);
            w->errors += aclrtMemcpyToSymbolAsync(stress_grid, readback, SLICE * sizeof(int),
                                                  offset, ACL_MEMCPY_HOST_TO_DEVICE,
                                                  streams[d][s]) != ACL_SUCCESS;
            break;
        default: { /* through the device address */
            void *addr;
            fill(readback, value);
            w->errors += aclrtGetSymbolAddress(stress_grid, &addr) != ACL_SUCCESS;
            w->errors += aclrtMemcpy((char *)addr + offset, SLICE * sizeof(int), readback,
                                     SLICE * sizeof(int), ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS;
        }
        }
        w->last[d] = value;
        /* Read back through a random path: must be exactly what was written. */
        memset(readback, 0, sizeof readback);
        if (rand_r(&seed) % 2) {
            w->errors += aclrtMemcpyFromSymbol(readback, sizeof readback, stress_grid,
                                               sizeof readback, offset,
                                               ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS;
        } else {
            w->errors += aclrtMemcpyFromSymbolAsync(readback, sizeof readback, stress_grid,
                                                    sizeof readback, offset, ACL_MEMCPY_DEFAULT,
                                                    streams[d][1 - s]) != ACL_SUCCESS;
        }
        w->errors += !uniform(readback, value);
    }
    for (int d = 0; d < 2; d++) {
        if (aclrtSetDevice(d))
            w->errors++;
        for (int s = 0; s < 2; s++)
            w->errors += aclrtDestroyStream(streams[d][s]) != ACL_SUCCESS;
        w->errors += aclrtFreeHost(pinned[d]) != ACL_SUCCESS;
        w->errors += aclrtResetDevice(d) != ACL_SUCCESS;   /* balances this thread's sets */
        w->errors += aclrtResetDevice(d) != ACL_SUCCESS;
    }
    return NULL;
}

static void test_mixed_symbol_copies(void **state)
{
    (void)state;
    init_two_devices();
    OK(aclrtSetDevice(0));   /* keeps both devices open while workers come and go */
    OK(aclrtSetDevice(1));
    pthread_t t[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){.id = i};
        assert_int_equal(pthread_create(&t[i], NULL, mixed_copies, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *ret;
        pthread_join(t[i], &ret);
        assert_null(ret);
        assert_int_equal(w[i].errors, 0);
    }
    /* Final content: each slice holds its thread's last value on each device. */
    for (int d = 0; d < 2; d++) {
        OK(aclrtSetDevice(d));
        static int grid[THREADS][SLICE];
        OK(aclrtMemcpyFromSymbol(grid, sizeof grid, stress_grid, sizeof grid, 0,
                                 ACL_MEMCPY_DEVICE_TO_HOST));
        for (int i = 0; i < THREADS; i++)
            assert_true(uniform(grid[i], w[i].last[d]));
        OK(aclrtResetDevice(d));
    }
    OK(aclrtResetDevice(0));
    OK(aclrtResetDevice(1));
    finalize();
}

/* ---- stream churn with kernels racing symbol copies --------------------------- */

void stress_add(long amount) { __atomic_fetch_add(&ACLSIM_DEV(stress_sum), amount, __ATOMIC_RELAXED); }
ACLSIM_KERNEL_REGISTER(stress_add, long);

struct churn { int launches; int errors; };

static void *stream_churn(void *arg)
{
    struct churn *c = arg;
    if (aclrtSetDevice(0))
        return (void *)1;
    aclrtFuncHandle f;
    c->errors += aclrtGetFuncBySymbol((const void *)&stress_add, &f) != ACL_SUCCESS;
    for (int i = 0; i < 60; i++) {
        aclrtStream s;
        c->errors += aclrtCreateStream(&s) != ACL_SUCCESS;
        long one = 1;
        void *args[] = {&one};
        for (int k = 0; k < 3; k++) {
            c->errors += aclrtLaunchKernelWithArgsArray(f, 4, s, NULL, args) != ACL_SUCCESS;
            c->launches += 4;
        }
        /* Alternate: let the work finish, or let destroy wait for it. */
        if (i % 2)
            c->errors += aclrtSynchronizeStream(s) != ACL_SUCCESS;
        c->errors += aclrtDestroyStream(s) != ACL_SUCCESS;
    }
    c->errors += aclrtResetDevice(0) != ACL_SUCCESS;
    return NULL;
}

static void *copy_loop(void *arg)
{
    struct worker *w = arg;
    if (aclrtSetDevice(0))
        return (void *)1;
    int buf[SLICE];
    for (int r = 1; r <= ROUNDS; r++) {
        fill(buf, r);
        w->errors += aclrtMemcpyToSymbol(stress_grid, buf, sizeof buf,
                                         (size_t)w->id * sizeof buf, ACL_MEMCPY_DEFAULT) != 0;
        memset(buf, 0, sizeof buf);
        w->errors += aclrtMemcpyFromSymbol(buf, sizeof buf, stress_grid, sizeof buf,
                                           (size_t)w->id * sizeof buf, ACL_MEMCPY_DEFAULT) != 0;
        w->errors += !uniform(buf, r);
    }
    w->errors += aclrtResetDevice(0) != ACL_SUCCESS;
    return NULL;
}

static void test_stream_churn_vs_copies(void **state)
{
    (void)state;
    init_two_devices();
    OK(aclrtSetDevice(0));
    long zero = 0;
    OK(aclrtMemcpyToSymbol(&stress_sum, &zero, sizeof zero, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    pthread_t churner, copiers[4];
    struct churn c = {0};
    struct worker w[4];
    assert_int_equal(pthread_create(&churner, NULL, stream_churn, &c), 0);
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){.id = i};
        assert_int_equal(pthread_create(&copiers[i], NULL, copy_loop, &w[i]), 0);
    }
    void *ret;
    pthread_join(churner, &ret);
    assert_null(ret);
    assert_int_equal(c.errors, 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(copiers[i], &ret);
        assert_null(ret);
        assert_int_equal(w[i].errors, 0);
    }
    long sum = 0;
    OK(aclrtMemcpyFromSymbol(&sum, sizeof sum, &stress_sum, sizeof sum, 0, ACL_MEMCPY_DEFAULT));
    assert_int_equal(sum, c.launches);   /* every block of every launch ran once */
    OK(aclrtResetDevice(0));
    finalize();
}

/* ---- reset, force-destroy and finalize with async work in flight ------------- */

/* Every host function launched with it waits (unbounded) until it opens, and counts itself. */
struct crowd_gate { pthread_mutex_t lock; pthread_cond_t cond; bool open; int ran; };

static void crowd_gate_wait(void *arg)
{
    struct crowd_gate *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->open)
        pthread_cond_wait(&g->cond, &g->lock);
    g->ran++;
    pthread_mutex_unlock(&g->lock);
}

static int counted[4];   /* count_run tasks that ran, per stream */

static void count_run(void *arg)
{
    __atomic_fetch_add((int *)arg, 1, __ATOMIC_RELAXED);
}

static void *open_gate_later(void *arg)
{
    struct crowd_gate *g = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

static void test_lifecycle_with_work_in_flight(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        init_two_devices();
        struct crowd_gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
        memset(counted, 0, sizeof counted);
        OK(aclrtSetDevice(0));
        aclrtStream s[4];
        void *pinned;
        OK(aclrtMallocHost(&pinned, 1 << 20));
        for (int i = 0; i < 4; i++) {
            OK(aclrtCreateStream(&s[i]));
            OK(aclrtLaunchHostFunc(s[i], crowd_gate_wait, &g));
            for (int k = 0; k < 10; k++) {
                /* Each stream its own slice: streams are not ordered with each other. */
                OK(aclrtMemcpyToSymbolAsync(stress_grid, pinned, SLICE * sizeof(int),
                                            (size_t)i * SLICE * sizeof(int),
                                            ACL_MEMCPY_HOST_TO_DEVICE, s[i]));
                OK(aclrtLaunchHostFunc(s[i], count_run, &counted[i]));
            }
        }
        pthread_t opener;
        assert_int_equal(pthread_create(&opener, NULL, open_gate_later, &g), 0);
        switch (round) {
        case 0: /* force-destroy two streams, then reset: nothing hangs */
            OK(aclrtDestroyStreamForce(s[0]));
            OK(aclrtDestroyStreamForce(s[1]));
            OK(aclrtResetDeviceForce(0));
            break;
        case 1: /* a plain reset completes queued work */
            OK(aclrtResetDevice(0));
            assert_int_equal(g.ran, 4);
            for (int i = 0; i < 4; i++)
                assert_int_equal(counted[i], 10);
            break;
        default: /* finalize with live streams and pinned memory */
            break;
        }
        pthread_join(opener, NULL);
        OK(aclFinalize());
        if (round == 0)
            /* s[0] was destroyed while its head was blocked (or not yet
             * started): the work queued behind it never ran. */
            assert_int_equal(counted[0], 0);
        /* Re-initialised runtime works and starts from clean state. */
        OK(aclInit(NULL));
        OK(aclrtSetDevice(0));
        int v = 0;
        OK(aclrtMemcpyFromSymbol(&v, sizeof v, stress_grid, sizeof v, 0, ACL_MEMCPY_DEFAULT));
        assert_int_equal(v, 0);
        OK(aclrtResetDevice(0));
        finalize();
    }
}

/* ---- races found in review (each once used freed memory or hung) ------------ */

#define RACE_STREAMS 32
static aclrtStream race_streams[RACE_STREAMS];
static atomic_int race_go;

static void *destroy_all(void *arg)
{
    int *errors = arg;
    while (!atomic_load(&race_go))
        ;
    for (int i = RACE_STREAMS - 1; i >= 0; i--) {
        aclError e = aclrtDestroyStream(race_streams[i]);
        /* Either this thread destroys it, or the reset got there first. */
        if (e != ACL_SUCCESS && e != ACL_ERROR_RT_INVALID_HANDLE)
            (*errors)++;
    }
    return NULL;
}

/* aclrtDestroyStream racing aclrtResetDevice: each stream destroyed exactly once. */
static void test_destroy_stream_races_reset(void **state)
{
    (void)state;
    init_two_devices();
    int errors = 0;
    for (int round = 0; round < 100; round++) {
        OK(aclrtSetDevice(0));
        for (int i = 0; i < RACE_STREAMS; i++)
            OK(aclrtCreateStream(&race_streams[i]));
        atomic_store(&race_go, 0);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, destroy_all, &errors), 0);
        atomic_store(&race_go, 1);
        OK(aclrtResetDevice(0));
        pthread_join(t, NULL);
    }
    assert_int_equal(errors, 0);
    finalize();
}

static pthread_barrier_t sync_barrier;
static void sleep_20ms(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static void *queue_and_sync(void *arg)
{
    (void)arg;
    aclrtSetDevice(0);
    aclrtLaunchHostFunc(NULL, sleep_20ms, NULL);
    pthread_barrier_wait(&sync_barrier);
    aclError e = aclrtSynchronizeStream(NULL);   /* the stream may vanish under it */
    return (void *)(intptr_t)(e != ACL_SUCCESS && e != ACL_ERROR_RT_CONTEXT_NULL);
}

/* A thread synchronizing a stream while another force-resets its device. */
static void test_synchronize_races_reset(void **state)
{
    (void)state;
    init_two_devices();
    pthread_barrier_init(&sync_barrier, NULL, 2);
    for (int round = 0; round < 30; round++) {
        OK(aclrtSetDevice(0));
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, queue_and_sync, NULL), 0);
        pthread_barrier_wait(&sync_barrier);
        /* Let the other thread get into its wait (the host function runs
         * 20 ms): a waiter woken by the destroy must not touch freed memory.
         * (A call still resolving its stream while the device goes away races
         * the stream's lifetime, which is the program's bug, as in CANN.) */
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
        OK(aclrtResetDeviceForce(0));
        void *bad;
        pthread_join(t, &bad);
        assert_null(bad);
    }
    pthread_barrier_destroy(&sync_barrier);
    finalize();
}

static atomic_int late_started;
static atomic_int late_result;
static void set_device_late(void *arg)
{
    (void)arg;
    atomic_store(&late_started, 1);
    /* aclFinalize starts on the main thread at some point after late_started:
     * until it has, the open succeeds and is undone; from then on it must be
     * refused. Bounded: 10 s (the test fails with the last result). */
    aclError r = ACL_SUCCESS;
    for (int i = 0; i < 10000; i++) {
        r = aclrtSetDevice(0);
        if (r != ACL_SUCCESS)
            break;
        (void)aclrtResetDevice(0);
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&late_result, r);
}

/* A host function opening a device while aclFinalize drains: refused, and
 * aclFinalize leaves no device (and no worker thread) behind. */
static void test_finalize_refuses_late_open(void **state)
{
    (void)state;
    int before = thread_count();
    init_two_devices();
    OK(aclrtSetDevice(1));
    atomic_store(&late_started, 0);
    atomic_store(&late_result, -1);
    OK(aclrtLaunchHostFunc(NULL, set_device_late, NULL));
    while (!atomic_load(&late_started))
        ;
    OK(aclFinalize());
    assert_int_equal(atomic_load(&late_result), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(thread_count(), before);
    unsetenv("ACLSIM_DEVICE_COUNT");
    unsetenv("ACLSIM_DEVICE_MEMORY");
}


/* ---- many submitters on one stream (THE INBOX RULE, src/internal.h) ---------- */

#define SUBMITTERS 4
#define PER_SUBMITTER 3000

/* Each task logs (submitter, k); per submitter, k must come in order. */
struct order_log { pthread_mutex_t lock; int next[SUBMITTERS]; int errors; int ran; };
struct order_task { struct order_log *log; int who, k; };
static struct order_task order_tasks[SUBMITTERS][PER_SUBMITTER];

static void order_run(void *arg)
{
    struct order_task *t = arg;
    pthread_mutex_lock(&t->log->lock);
    if (t->k < t->log->next[t->who])
        t->log->errors++;   /* ran after a later task of the same submitter */
    t->log->next[t->who] = t->k + 1;
    t->log->ran++;
    pthread_mutex_unlock(&t->log->lock);
}

struct submitter {
    aclrtContext ctx;
    aclrtStream stream;
    struct order_log *log;
    int who, accepted, refused, other;
    bool tolerate;   /* the stream may be destroyed under it */
};

static void *submit_loop(void *arg)
{
    struct submitter *w = arg;
    if (aclrtSetCurrentContext(w->ctx))
        return (void *)1;
    for (int k = 0; k < PER_SUBMITTER; k++) {
        order_tasks[w->who][k] = (struct order_task){w->log, w->who, k};
        aclError e = aclrtLaunchHostFunc(w->stream, order_run, &order_tasks[w->who][k]);
        if (e == ACL_SUCCESS)
            w->accepted++;
        else if (e == ACL_ERROR_RT_INVALID_HANDLE && w->tolerate)
            w->refused++;
        else
            w->other++;
        if (k % 64 == 0)
            sched_yield();   /* lets the stream drain and go idle now and then */
    }
    return NULL;
}

/* Four threads pump host functions into one stream while it keeps draining
 * and going idle: every task runs exactly once, each thread's in the order
 * it queued them, and a synchronize sees them all. */
static void test_many_submitters_one_stream(void **state)
{
    (void)state;
    init_two_devices();
    OK(aclrtSetDevice(0));
    aclrtContext ctx;
    OK(aclrtGetCurrentContext(&ctx));
    aclrtStream stream;
    OK(aclrtCreateStream(&stream));
    for (int round = 0; round < 3; round++) {
        struct order_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
        struct submitter w[SUBMITTERS];
        pthread_t th[SUBMITTERS];
        for (int i = 0; i < SUBMITTERS; i++) {
            w[i] = (struct submitter){.ctx = ctx, .stream = stream, .log = &log, .who = i};
            assert_int_equal(pthread_create(&th[i], NULL, submit_loop, &w[i]), 0);
        }
        for (int i = 0; i < SUBMITTERS; i++) {
            void *ret;
            pthread_join(th[i], &ret);
            assert_null(ret);
            assert_int_equal(w[i].accepted, PER_SUBMITTER);
            assert_int_equal(w[i].other, 0);
        }
        OK(aclrtSynchronizeStream(stream));
        assert_int_equal(log.ran, SUBMITTERS * PER_SUBMITTER);
        assert_int_equal(log.errors, 0);
    }
    OK(aclrtDestroyStream(stream));
    OK(aclrtResetDevice(0));
    finalize();
}

/* Submitters racing aclrtStreamAbort and then aclrtDestroyStreamForce on
 * their stream: a submit is accepted or refused with 107017, accepted tasks
 * run in order or are discarded, nothing hangs, and the force-destroyed
 * stream is retired (a leak or a stream left on the context would show under
 * ASan, and in the device reset). */
static void test_submitters_race_abort_and_force_destroy(void **state)
{
    (void)state;
    init_two_devices();
    OK(aclrtSetDevice(0));
    aclrtContext ctx;
    OK(aclrtGetCurrentContext(&ctx));
    for (int round = 0; round < 20; round++) {
        aclrtStream stream;
        OK(aclrtCreateStream(&stream));
        struct order_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
        struct submitter w[SUBMITTERS];
        pthread_t th[SUBMITTERS];
        for (int i = 0; i < SUBMITTERS; i++) {
            w[i] = (struct submitter){.ctx = ctx, .stream = stream, .log = &log, .who = i,
                                      .tolerate = true};
            assert_int_equal(pthread_create(&th[i], NULL, submit_loop, &w[i]), 0);
        }
        for (int a = 0; a < 3; a++) {
            OK(aclrtStreamAbort(stream));
            sched_yield();
        }
        OK(aclrtDestroyStreamForce(stream));
        for (int i = 0; i < SUBMITTERS; i++) {
            void *ret;
            pthread_join(th[i], &ret);
            assert_null(ret);
            assert_int_equal(w[i].other, 0);
            assert_int_equal(w[i].accepted + w[i].refused, PER_SUBMITTER);
        }
        OK(aclrtSynchronizeDevice());   /* the detached stream's rest drains */
        pthread_mutex_lock(&log.lock);
        assert_int_equal(log.errors, 0);
        int accepted = 0;
        for (int i = 0; i < SUBMITTERS; i++)
            accepted += w[i].accepted;
        assert_true(log.ran <= accepted);
        pthread_mutex_unlock(&log.lock);
    }
    OK(aclrtResetDevice(0));
    finalize();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_symbol_copies),
        cmocka_unit_test(test_stream_churn_vs_copies),
        cmocka_unit_test(test_lifecycle_with_work_in_flight),
        cmocka_unit_test(test_destroy_stream_races_reset),
        cmocka_unit_test(test_synchronize_races_reset),
        cmocka_unit_test(test_finalize_refuses_late_open),
        cmocka_unit_test(test_many_submitters_one_stream),
        cmocka_unit_test(test_submitters_race_abort_and_force_destroy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
