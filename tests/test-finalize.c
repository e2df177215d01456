/*
 * aclFinalize is idempotent and exclusive (issue 19, item 3): concurrent
 * calls serialise, exactly one tears the session down and the others get
 * 100037 ACL_ERROR_REPEAT_FINALIZE; an aclInit that succeeds between them is
 * never torn down by the older call; aclInit racing a finalize waits for it.
 * Races run many rounds, each bounded by a watchdog (a hang is a failure).
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
#include <time.h>

#include <sys/syscall.h>
#include <unistd.h>

#include "acl/acl.h"
#include "common.h"

#define WATCHDOG_MS 60000

static aclError init_two_devices(void)
{
    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    setenv("ACLSIM_WORKERS", "2", 1);
    return aclInit(NULL);
}

/* ---- K threads finalize one session at once ---------------------------------- */

#define FINALIZERS 4
#define ROUNDS 150

struct race {
    atomic_int go;           /* round number the finalizers may start */
    atomic_int ready;        /* finalizers waiting for the start */
    aclError rc[FINALIZERS];
};

struct finalizer { struct race *race; int index; };

static void *finalize_thread(void *p)
{
    struct finalizer *f = p;
    atomic_fetch_add(&f->race->ready, 1);
    while (!atomic_load(&f->race->go))
        ;
    f->race->rc[f->index] = aclFinalize();
    drain_msg();
    return NULL;
}

static atomic_int errors;
static char first_error[512];

static void concurrent_rounds(void *arg)
{
    (void)arg;
    for (int round = 0; round < ROUNDS && !atomic_load(&errors); round++) {
        if (init_two_devices() != ACL_SUCCESS) {
            note_first_error(&errors, first_error, sizeof first_error, "round %d: aclInit", round);
            return;
        }
        /* Open devices with queued work, so that the teardown takes a while. */
        aclrtStream s = NULL;
        void *p = NULL;
        if (aclrtSetDevice(1) || aclrtSetDevice(0) || aclrtCreateStream(&s) ||
            aclrtMalloc(&p, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST) ||
            aclrtMemsetAsync(p, 1 << 20, 1, 1 << 20, s)) {
            note_first_error(&errors, first_error, sizeof first_error, "round %d: setup", round);
            return;
        }
        struct race race = {0};
        struct finalizer f[FINALIZERS];
        pthread_t t[FINALIZERS];
        for (int i = 0; i < FINALIZERS; i++) {
            f[i] = (struct finalizer){&race, i};
            pthread_create(&t[i], NULL, finalize_thread, &f[i]);
        }
        while (atomic_load(&race.ready) < FINALIZERS)
            sched_yield();
        atomic_store(&race.go, 1);
        for (int i = 0; i < FINALIZERS; i++)
            pthread_join(t[i], NULL);
        int ok = 0;
        for (int i = 0; i < FINALIZERS; i++) {
            if (race.rc[i] == ACL_SUCCESS)
                ok++;
            else if (race.rc[i] != ACL_ERROR_REPEAT_FINALIZE)
                note_first_error(&errors, first_error, sizeof first_error,
                                 "round %d: aclFinalize = %d", round, race.rc[i]);
        }
        if (ok != 1)
            note_first_error(&errors, first_error, sizeof first_error,
                             "round %d: %d of %d concurrent aclFinalize calls succeeded", round, ok,
                             FINALIZERS);
        if (runtime_initialized())
            note_first_error(&errors, first_error, sizeof first_error,
                             "round %d: still initialized after the finalizes", round);
    }
}

static void run_watched(void (*fn)(void *), const char *what)
{
    atomic_store(&errors, 0);
    first_error[0] = '\0';
    struct call c;
    call_start(&c, fn, NULL);
    if (!call_wait(&c, WATCHDOG_MS))
        fail_msg("%s: no progress within %d ms (hang)", what, WATCHDOG_MS);
    if (atomic_load(&errors))
        fail_msg("%s: %d error(s), first: %s", what, atomic_load(&errors), first_error);
}

static void test_concurrent_finalize_exactly_one(void **state)
{
    (void)state;
    run_watched(concurrent_rounds, "concurrent aclFinalize");
}

/* ---- an aclInit between two finalizes survives the older one ---------------- */

#define INIT_ROUNDS 20

static aclError finalize_rc[3];
static _Atomic pid_t finalize_tid[3];

/* Records the thread id, then finalizes: the test waits until the thread
 * sleeps (inside aclFinalize, behind the draining one) before it calls
 * aclInit, so that the call was surely made for the old session. */
static void finalize_into(void *arg)
{
    aclError *rc = arg;
    atomic_store(&finalize_tid[rc - finalize_rc], (pid_t)syscall(SYS_gettid));
    *rc = aclFinalize();
    drain_msg();
}

/* Whether thread tid of this process is asleep (state S in /proc). */
static bool thread_sleeping(pid_t tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close = strrchr(buf, ')');   /* "tid (comm) S ..." */
    return close && close[1] == ' ' && close[2] == 'S';
}

/* Waits (bounded) until finalizer i has entered aclFinalize and sleeps. */
static void wait_asleep(int i)
{
    for (int k = 0; k < 2000; k++) {
        pid_t tid = atomic_load(&finalize_tid[i]);
        if (tid && thread_sleeping(tid)) {
            sleep_ms(2);
            if (thread_sleeping(tid))
                return;
        }
        sleep_ms(1);
    }
}
static aclError init_rc;
static void init_into(void *arg) { (void)arg; init_rc = init_two_devices(); drain_msg(); }

static void older_finalize_rounds(void *arg)
{
    (void)arg;
    for (int round = 0; round < INIT_ROUNDS && !atomic_load(&errors); round++) {
        if (init_two_devices() || aclrtSetDevice(0)) {
            note_first_error(&errors, first_error, sizeof first_error, "round %d: init", round);
            return;
        }
        /* A running host function keeps the first finalize draining. */
        struct blocker b;
        blocker_init(&b);
        if (aclrtLaunchHostFunc(NULL, blocker_fn, &b) || !gate_wait(&b.started, WAIT_MS)) {
            note_first_error(&errors, first_error, sizeof first_error, "round %d: blocker", round);
            return;
        }
        struct call fin[3], init;
        for (int i = 0; i < 3; i++)
            atomic_store(&finalize_tid[i], 0);
        call_start(&fin[0], finalize_into, &finalize_rc[0]);
        wait_asleep(0);   /* the first finalize is draining (waiting for the blocker) */
        call_start(&fin[1], finalize_into, &finalize_rc[1]);
        call_start(&fin[2], finalize_into, &finalize_rc[2]);
        wait_asleep(1);   /* all three were called for the old session */
        wait_asleep(2);
        call_start(&init, init_into, NULL);
        sleep_ms(5);
        blocker_release(&b);
        bool finished = call_wait(&init, WAIT_MS);
        for (int i = 0; i < 3; i++)
            finished = call_wait(&fin[i], WAIT_MS) && finished;
        if (!finished) {
            note_first_error(&errors, first_error, sizeof first_error, "round %d: hang", round);
            return;
        }
        int ok = 0;
        for (int i = 0; i < 3; i++)
            ok += finalize_rc[i] == ACL_SUCCESS;
        if (ok != 1 || init_rc != ACL_SUCCESS)
            note_first_error(&errors, first_error, sizeof first_error,
                             "round %d: finalizes %d %d %d (one 0, two 100037 expected), "
                             "aclInit between them %d", round, finalize_rc[0], finalize_rc[1],
                             finalize_rc[2], init_rc);
        /* The new session is alive and works. */
        void *h = NULL;
        if (!runtime_initialized() || aclrtSetDevice(1) || aclrtMallocHost(&h, 4096) ||
            aclrtMemset(h, 4096, 7, 4096) || ((unsigned char *)h)[4095] != 7 || aclrtFreeHost(h))
            note_first_error(&errors, first_error, sizeof first_error,
                             "round %d: the session of the aclInit between the finalizes is "
                             "gone", round);
        if (aclFinalize() != ACL_SUCCESS)
            note_first_error(&errors, first_error, sizeof first_error,
                             "round %d: final aclFinalize", round);
    }
}

static void test_older_finalize_spares_newer_init(void **state)
{
    (void)state;
    run_watched(older_finalize_rounds, "aclInit between two aclFinalize calls");
}

/* ---- a storm of init / finalize / use from 4 threads -------------------------- */

#define STORM_THREADS 4
#define STORM_NS 1500000000ull

static atomic_long inits_ok, finalizes_ok;

static void *storm_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t end = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + STORM_NS;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec >= end)
            break;
        aclError rc;
        switch (rand_r(&seed) % 4) {
        case 0:
            rc = init_two_devices();
            if (rc == ACL_SUCCESS)
                atomic_fetch_add(&inits_ok, 1);
            else if (rc != ACL_ERROR_REPEAT_INITIALIZE)
                note_first_error(&errors, first_error, sizeof first_error, "aclInit = %d", rc);
            break;
        case 1:
            rc = aclFinalize();
            if (rc == ACL_SUCCESS)
                atomic_fetch_add(&finalizes_ok, 1);
            else if (rc != ACL_ERROR_REPEAT_FINALIZE)
                note_first_error(&errors, first_error, sizeof first_error, "aclFinalize = %d",
                                 rc);
            break;
        default: {
            /* Use that touches no memory another thread's aclFinalize may
             * unmap, and no context it may recycle (calls resolving a
             * context racing its destruction are the lifetime rule's
             * business, tested elsewhere): fails cleanly with 100001 when
             * the session is gone. */
            uint32_t n = 0;
            rc = aclrtSetDevice((int32_t)(rand_r(&seed) % 2));
            if (rc != ACL_SUCCESS && rc != ACL_ERROR_UNINITIALIZE)
                note_first_error(&errors, first_error, sizeof first_error,
                                 "aclrtSetDevice = %d", rc);
            rc = aclrtGetDeviceCount(&n);
            if (rc != ACL_SUCCESS && rc != ACL_ERROR_UNINITIALIZE)
                note_first_error(&errors, first_error, sizeof first_error,
                                 "aclrtGetDeviceCount = %d", rc);
            break;
        }
        }
        drain_msg();
    }
    return NULL;
}

static void storm(void *arg)
{
    (void)arg;
    pthread_t t[STORM_THREADS];
    for (int i = 0; i < STORM_THREADS; i++)
        pthread_create(&t[i], NULL, storm_thread, (void *)(uintptr_t)(i * 7919 + 1));
    for (int i = 0; i < STORM_THREADS; i++)
        pthread_join(t[i], NULL);
}

static void test_init_finalize_storm(void **state)
{
    (void)state;
    atomic_store(&inits_ok, 0);
    atomic_store(&finalizes_ok, 0);
    run_watched(storm, "init/finalize storm");
    long sessions = atomic_load(&inits_ok) - atomic_load(&finalizes_ok);
    bool live = runtime_initialized();
    if (sessions != (live ? 1 : 0))
        fail_msg("%ld successful aclInit, %ld successful aclFinalize, runtime %s",
                 atomic_load(&inits_ok), atomic_load(&finalizes_ok),
                 live ? "initialized" : "not initialized");
    assert_true(atomic_load(&inits_ok) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_concurrent_finalize_exactly_one, setup_clean,
                                        teardown_clean),
        cmocka_unit_test_setup_teardown(test_older_finalize_spares_newer_init, setup_clean,
                                        teardown_clean),
        cmocka_unit_test_setup_teardown(test_init_finalize_storm, setup_clean, teardown_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
