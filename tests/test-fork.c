/*
 * fork() in a process that initialised the runtime (issue 19, the fork
 * paragraph; docs/runtime.md "fork()"). The child has none of the parent's
 * worker threads: every call that needs the runtime fails with 100001 and a
 * message telling it to call aclFinalize and then aclInit; aclFinalize
 * discards the inherited session without waiting for those threads; aclInit,
 * aclrtSetDevice, copies and kernel launches then work in the child. The
 * parent is unaffected. Real fork(); the parent checks the child's exit
 * status with waitpid under a timeout, and the child has its own alarm.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"
#include "aclsim/aclsim.h"
#include "common.h"

/* ThreadSanitizer does not support a child of a multithreaded process that
 * starts threads: by default it kills it, and with die_after_fork=0 it still
 * mistakes the child's new threads for the parent's vanished ones ("dup
 * thread"). Under TSan the children therefore stop after aclFinalize (the
 * refused calls and the discard of the inherited session are still checked,
 * under TSan's eye); the plain and ASan builds run the whole restart. */
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

/* AddressSanitizer (GCC 12) does not guard its allocator across fork(): a
 * child forked while other threads allocate can inherit the allocator's lock
 * held, and its first new thread then blocks forever inside ASan. Under ASan
 * the fork-while-busy children therefore stop after aclFinalize too. */
#if defined(__SANITIZE_ADDRESS__)
#define BUSY_CHILD_MAY_START_THREADS 0
#else
#define BUSY_CHILD_MAY_START_THREADS CHILD_MAY_START_THREADS
#endif
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "die_after_fork=0"; }

#define CHILD_TIMEOUT_MS 30000
#define N 64

ACLSIM_DEVICE_VAR(int32_t, fork_bias, ) = 5;
void k_fork_add(int32_t *out, int32_t k)
{
    uint32_t i = aclsimGetBlockIdx();
    out[i] += k + ACLSIM_DEV(fork_bias);
}
ACLSIM_KERNEL_REGISTER(k_fork_add, int32_t *, int32_t);

/* ---- the child's side: no cmocka, an exit status ------------------------------------ */

/* On failure: prints what failed and returns a non-zero exit status. */
#define CHILD_CHECK(cond)                                                                   \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            const char *m_ = aclGetRecentErrMsg();                                          \
            fprintf(stderr, "child (pid %d) %s:%d: %s failed (message: %s)\n", (int)getpid(), \
                    __FILE__, __LINE__, #cond, m_ ? m_ : "none");                           \
            return __LINE__ % 250 + 1;                                                      \
        }                                                                                   \
    } while (0)

/* The call fails with code, and its message names api and says what to do. */
static int refused(aclError rc, aclError code, const char *api)
{
    const char *m = aclGetRecentErrMsg();
    if (rc == code && m && strstr(m, api) && strstr(m, "fork()") &&
        strstr(m, "call aclFinalize and then aclInit"))
        return 1;
    fprintf(stderr, "child: %s returned %d (expected %d), message: %s\n", api, rc, code,
            m ? m : "none");
    return 0;
}

/* Real work on device dev: copies, a kernel launch, page-locked memory, an
 * event, a device variable. 0 when everything checks out. */
static int real_work(int32_t dev)
{
    aclrtStream s = NULL;
    aclrtEvent ev = NULL;
    void *d = NULL, *pinned = NULL;
    int32_t host[N], bias = 7;
    for (int i = 0; i < N; i++)
        host[i] = i;
    CHILD_CHECK(aclrtSetDevice(dev) == ACL_SUCCESS);
    CHILD_CHECK(aclrtCreateStream(&s) == ACL_SUCCESS);
    CHILD_CHECK(aclrtCreateEvent(&ev) == ACL_SUCCESS);
    CHILD_CHECK(aclrtMalloc(&d, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    CHILD_CHECK(aclrtMallocHost(&pinned, sizeof host) == ACL_SUCCESS);
    CHILD_CHECK(aclrtMemcpy(d, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE) ==
                ACL_SUCCESS);
    CHILD_CHECK(aclrtMemcpyToSymbol(&fork_bias, &bias, sizeof bias, 0,
                                    ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
    aclrtFuncHandle f = NULL;
    CHILD_CHECK(aclrtGetFuncBySymbol((const void *)(uintptr_t)&k_fork_add, &f) == ACL_SUCCESS);
    int32_t k = 3;
    void *args[] = {&d, &k};
    CHILD_CHECK(aclrtLaunchKernelWithArgsArray(f, N, s, NULL, args) == ACL_SUCCESS);
    CHILD_CHECK(aclrtMemcpyAsync(pinned, sizeof host, d, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST,
                                 s) == ACL_SUCCESS);
    CHILD_CHECK(aclrtRecordEvent(ev, s) == ACL_SUCCESS);
    CHILD_CHECK(aclrtSynchronizeEvent(ev) == ACL_SUCCESS);
    for (int i = 0; i < N; i++)
        CHILD_CHECK(((int32_t *)pinned)[i] == i + 3 + 7);
    CHILD_CHECK(aclrtDestroyEvent(ev) == ACL_SUCCESS);
    CHILD_CHECK(aclrtDestroyStream(s) == ACL_SUCCESS);
    CHILD_CHECK(aclrtFree(d) == ACL_SUCCESS);
    CHILD_CHECK(aclrtFreeHost(pinned) == ACL_SUCCESS);
    CHILD_CHECK(aclrtResetDevice(dev) == ACL_SUCCESS);
    return 0;
}

static int start_over(void)
{
    CHILD_CHECK(aclFinalize() == ACL_SUCCESS);
    CHILD_CHECK(aclFinalize() == ACL_ERROR_REPEAT_FINALIZE);
    if (!CHILD_MAY_START_THREADS)
        return 0;
    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    CHILD_CHECK(aclInit(NULL) == ACL_SUCCESS);
    int rc = real_work(0);
    if (rc)
        return rc;
    if ((rc = real_work(1)))
        return rc;
    CHILD_CHECK(aclFinalize() == ACL_SUCCESS);
    return 0;
}

/* Runs fn in a child; returns its exit status (128 + signal if killed, -1
 * if it did not finish within CHILD_TIMEOUT_MS: then it is killed). */
static int run_child(int (*fn)(void *), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -2;
    if (pid == 0) {
        alarm(CHILD_TIMEOUT_MS / 1000);   /* the child's own watchdog */
        /* _exit, as a child of a multithreaded process should: LeakSanitizer
         * cannot scan the parent's threads (gone here), so at exit() it would
         * report everything only they pointed to (cmocka's state, the tasks
         * they were running) as leaked. */
        int status = fn(arg);
        fflush(stderr);
        _exit(status);
    }
    for (int waited = 0; waited < CHILD_TIMEOUT_MS; waited += 5) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        sleep_ms(5);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

#define EXPECT_CHILD_OK(status)                                                          \
    do {                                                                                 \
        int st_ = (status);                                                              \
        if (st_ != 0)                                                                    \
            fail_msg("child %s (status %d)", st_ == -1 ? "hung and was killed"           \
                                             : st_ > 128 ? "was killed by a signal"      \
                                                         : "failed", st_);               \
    } while (0)

/* ---- fixtures: a parent with a busy, initialised runtime ---------------------------- */

static aclrtStream parent_stream;

static int setup_parent(void **state)
{
    (void)state;
    unset_config();
    setenv("ACLSIM_WORKERS", "2", 1);
    if (init_devices("2", "64M") != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
        aclrtCreateStream(&parent_stream) != ACL_SUCCESS || real_work(1) != 0 ||
        aclrtSetDevice(0) != ACL_SUCCESS)
        return -1;
    drain_msg();
    return 0;
}

static int teardown_parent(void **state)
{
    (void)state;
    abort_waits(true);
    if (runtime_initialized())
        aclFinalize();
    abort_waits(false);
    drain_msg();
    unset_config();
    return 0;
}

/* The parent still works after its children. */
static void parent_still_works(void)
{
    assert_int_equal(real_work(1), 0);
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtSynchronizeStream(parent_stream));
}

/* ---- tests ----------------------------------------------------------------------- */

static int child_refused_then_starts_over(void *arg)
{
    (void)arg;
    int32_t dev;
    uint32_t count;
    void *p = NULL;
    aclrtStream s;
    aclrtContext ctx;
    aclrtEvent ev;
    int32_t major, minor, patch;
    /* Everything that needs the runtime: 100001 with the way out. */
    CHILD_CHECK(refused(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE, "aclrtSetDevice"));
    CHILD_CHECK(refused(aclrtGetDevice(&dev), ACL_ERROR_UNINITIALIZE, "aclrtGetDevice"));
    CHILD_CHECK(refused(aclrtGetDeviceCount(&count), ACL_ERROR_UNINITIALIZE,
                        "aclrtGetDeviceCount"));
    CHILD_CHECK(refused(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE,
                        "aclrtMalloc"));
    CHILD_CHECK(refused(aclrtMallocHost(&p, 64), ACL_ERROR_UNINITIALIZE, "aclrtMallocHost"));
    CHILD_CHECK(refused(aclrtCreateStream(&s), ACL_ERROR_UNINITIALIZE, "aclrtCreateStream"));
    CHILD_CHECK(refused(aclrtSynchronizeStream(parent_stream), ACL_ERROR_UNINITIALIZE,
                        "aclrtSynchronizeStream"));
    CHILD_CHECK(refused(aclrtSynchronizeDevice(), ACL_ERROR_UNINITIALIZE,
                        "aclrtSynchronizeDevice"));
    CHILD_CHECK(refused(aclrtGetCurrentContext(&ctx), ACL_ERROR_UNINITIALIZE,
                        "aclrtGetCurrentContext"));
    CHILD_CHECK(refused(aclrtCreateEvent(&ev), ACL_ERROR_UNINITIALIZE, "aclrtCreateEvent"));
    CHILD_CHECK(refused(aclrtResetDevice(0), ACL_ERROR_UNINITIALIZE, "aclrtResetDevice"));
    CHILD_CHECK(refused(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, "aclInit"));
    CHILD_CHECK(aclrtGetSocName() == NULL);
    CHILD_CHECK(aclrtGetVersion(&major, &minor, &patch) == ACL_SUCCESS);
    CHILD_CHECK(start_over() == 0);
    if (!CHILD_MAY_START_THREADS)
        return 0;
    /* After starting over, the parent's handles are not the child's. */
    CHILD_CHECK(aclInit(NULL) == ACL_SUCCESS);
    CHILD_CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
    CHILD_CHECK(aclrtSynchronizeStream(parent_stream) == ACL_ERROR_RT_INVALID_HANDLE);
    CHILD_CHECK(aclrtDestroyStream(parent_stream) == ACL_ERROR_RT_INVALID_HANDLE);
    CHILD_CHECK(aclFinalize() == ACL_SUCCESS);
    return 0;
}

static void test_child_refused_then_starts_over(void **state)
{
    (void)state;
    EXPECT_CHILD_OK(run_child(child_refused_then_starts_over, NULL));
    parent_still_works();
}

static int child_starts_over(void *arg)
{
    (void)arg;
    return start_over();
}

/* The child of a busy parent: under ASan it only discards the inherited
 * session (see BUSY_CHILD_MAY_START_THREADS). */
static int child_of_busy_parent(void *arg)
{
    if (BUSY_CHILD_MAY_START_THREADS)
        return child_starts_over(arg);
    CHILD_CHECK(aclFinalize() == ACL_SUCCESS);
    CHILD_CHECK(aclFinalize() == ACL_ERROR_REPEAT_FINALIZE);
    return 0;
}

/* Fork while the parent's workers run a host function and another thread
 * copies and launches non-stop: whatever locks they held at fork() must not
 * hang the child's aclFinalize. */
static atomic_bool hammer_stop;
static atomic_int hammer_errors;

static void *hammer(void *arg)
{
    (void)arg;
    int32_t buf[N] = {0};
    void *d = NULL;
    aclrtStream s = NULL;
    if (aclrtSetDevice(0) || aclrtCreateStream(&s) ||
        aclrtMalloc(&d, sizeof buf, ACL_MEM_MALLOC_HUGE_FIRST)) {
        atomic_fetch_add(&hammer_errors, 1);
        return NULL;
    }
    aclrtFuncHandle f = NULL;
    aclrtGetFuncBySymbol((const void *)(uintptr_t)&k_fork_add, &f);
    int32_t k = 1;
    void *args[] = {&d, &k};
    while (!atomic_load(&hammer_stop)) {
        if (aclrtMemcpyAsync(d, sizeof buf, buf, sizeof buf, ACL_MEMCPY_HOST_TO_DEVICE, s) ||
            aclrtLaunchKernelWithArgsArray(f, N, s, NULL, args) || aclrtSynchronizeStream(s))
            atomic_fetch_add(&hammer_errors, 1);
    }
    aclrtDestroyStream(s);
    aclrtFree(d);
    return NULL;
}

#define BUSY_ROUNDS 12

static void test_fork_while_busy(void **state)
{
    (void)state;
    struct blocker b;
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(parent_stream, blocker_fn, &b));
    assert_true(gate_wait(&b.started, WAIT_MS));
    atomic_store(&hammer_stop, false);
    atomic_store(&hammer_errors, 0);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
    int failed = 0;
    for (int round = 0; round < BUSY_ROUNDS && !failed; round++) {
        sleep_ms(3);
        int st = run_child(child_of_busy_parent, NULL);
        if (st != 0) {
            print_error("round %d: child status %d\n", round, st);
            failed = 1;
        }
    }
    atomic_store(&hammer_stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    blocker_release(&b);
    EXPECT_OK(aclrtSynchronizeStream(parent_stream));
    assert_false(blocker_timed_out(&b));
    assert_int_equal(failed, 0);
    assert_int_equal(atomic_load(&hammer_errors), 0);
    parent_still_works();
}

/* fork() from a host function: the child's one thread was a device worker
 * in the parent, and may still start over. */
static atomic_int host_child_status = -100;

static void fork_from_host_function(void *arg)
{
    (void)arg;
    atomic_store(&host_child_status, run_child(child_starts_over, NULL));
}

static void test_fork_from_host_function(void **state)
{
    (void)state;
    EXPECT_OK(aclrtLaunchHostFunc(parent_stream, fork_from_host_function, NULL));
    EXPECT_OK(aclrtSynchronizeStream(parent_stream));
    EXPECT_CHILD_OK(atomic_load(&host_child_status));
    parent_still_works();
}

/* aclFinalizeReference in the child discards the parent's session too. */
static int child_finalize_reference(void *arg)
{
    (void)arg;
    uint64_t refs = 99;
    CHILD_CHECK(aclFinalizeReference(&refs) == ACL_SUCCESS && refs == 0);
    CHILD_CHECK(aclFinalizeReference(&refs) == ACL_ERROR_REPEAT_FINALIZE);
    CHILD_CHECK(aclFinalize() == ACL_ERROR_REPEAT_FINALIZE);
    if (!CHILD_MAY_START_THREADS)
        return 0;
    CHILD_CHECK(aclInit(NULL) == ACL_SUCCESS);
    int rc = real_work(0);
    if (rc)
        return rc;
    CHILD_CHECK(aclFinalizeReference(&refs) == ACL_SUCCESS && refs == 0);
    return 0;
}

static void test_child_finalize_reference(void **state)
{
    (void)state;
    EXPECT_CHILD_OK(run_child(child_finalize_reference, NULL));
    parent_still_works();
}

/* Fork while another thread's aclFinalize waits for a running host
 * function: the child inherits a session half torn down, and still gets the
 * fork error and a prompt aclFinalize. */
static aclError parent_finalize_rc;
static void parent_finalize(void *arg) { (void)arg; parent_finalize_rc = aclFinalize(); }

static int child_during_finalize(void *arg)
{
    (void)arg;
    int32_t dev;
    CHILD_CHECK(refused(aclrtGetDevice(&dev), ACL_ERROR_UNINITIALIZE, "aclrtGetDevice"));
    return start_over();
}

static void test_fork_during_finalize(void **state)
{
    (void)state;
    struct blocker b;
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(parent_stream, blocker_fn, &b));
    assert_true(gate_wait(&b.started, WAIT_MS));
    struct call fin;
    call_start(&fin, parent_finalize, NULL);
    sleep_ms(20);   /* the finalize is waiting for the host function */
    int status = run_child(child_during_finalize, NULL);
    blocker_release(&b);
    assert_true(call_wait(&fin, WAIT_MS));
    assert_int_equal(parent_finalize_rc, ACL_SUCCESS);
    EXPECT_CHILD_OK(status);
    EXPECT_OK(aclInit(NULL));
    assert_int_equal(real_work(0), 0);
}

/* A parent without a session: the child just initializes. */
static int child_fresh(void *arg)
{
    (void)arg;
    int32_t dev;
    CHILD_CHECK(aclrtGetDevice(&dev) == ACL_ERROR_UNINITIALIZE);
    const char *m = aclGetRecentErrMsg();
    CHILD_CHECK(m && strstr(m, "call aclInit first") && !strstr(m, "fork()"));
    CHILD_CHECK(aclFinalize() == ACL_ERROR_REPEAT_FINALIZE);
    CHILD_CHECK(aclInit(NULL) == ACL_SUCCESS);
    int rc = real_work(0);
    if (rc)
        return rc;
    CHILD_CHECK(aclFinalize() == ACL_SUCCESS);
    return 0;
}

static void test_fork_without_session(void **state)
{
    (void)state;
    EXPECT_OK(aclFinalize());
    EXPECT_CHILD_OK(run_child(child_fresh, NULL));
    EXPECT_OK(aclInit(NULL));
    assert_int_equal(real_work(0), 0);
}

/* A memory pool with an allocation in use and a free still queued at fork():
 * the child's calls are refused, its aclFinalize discards the pool, and after
 * aclInit it has pools of its own (the parent's handle means nothing there). */
static aclrtMemPool parent_pool;

static aclrtMemPoolProps pool_props(void)
{
    aclrtMemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.maxSize = 16u << 20;
    return p;
}

static int child_with_pool(void *arg)
{
    (void)arg;
    void *p = NULL;
    CHILD_CHECK(refused(aclrtMemPoolMallocAsync(&p, 64, parent_pool, parent_stream),
                        ACL_ERROR_UNINITIALIZE, "aclrtMemPoolMallocAsync"));
    CHILD_CHECK(refused(aclrtMemPoolDestroy(parent_pool), ACL_ERROR_UNINITIALIZE,
                        "aclrtMemPoolDestroy"));
    CHILD_CHECK(start_over() == 0);
    if (!CHILD_MAY_START_THREADS)
        return 0;
    CHILD_CHECK(aclInit(NULL) == ACL_SUCCESS);
    CHILD_CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
    uint64_t v = 0;
    CHILD_CHECK(aclrtMemPoolGetAttr(parent_pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &v) ==
                ACL_ERROR_RT_PARAM_INVALID);
    aclrtMemPoolProps props = pool_props();
    aclrtMemPool pool = NULL;
    aclrtStream s = NULL;
    CHILD_CHECK(aclrtMemPoolCreate(&pool, &props) == ACL_SUCCESS);
    CHILD_CHECK(aclrtCreateStream(&s) == ACL_SUCCESS);
    CHILD_CHECK(aclrtMemPoolMallocAsync(&p, 64, pool, s) == ACL_SUCCESS);
    CHILD_CHECK(aclrtMemsetAsync(p, 64, 1, 64, s) == ACL_SUCCESS);
    CHILD_CHECK(aclrtMemPoolFreeAsync(p, s) == ACL_SUCCESS);
    CHILD_CHECK(aclrtSynchronizeStream(s) == ACL_SUCCESS);
    CHILD_CHECK(aclrtMemPoolDestroy(pool) == ACL_SUCCESS);
    CHILD_CHECK(aclFinalize() == ACL_SUCCESS);
    return 0;
}

static void test_fork_with_memory_pool(void **state)
{
    (void)state;
    aclrtMemPoolProps props = pool_props();
    EXPECT_OK(aclrtMemPoolCreate(&parent_pool, &props));
    void *busy = NULL, *freed = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&busy, 64, parent_pool, parent_stream));
    EXPECT_OK(aclrtMemPoolMallocAsync(&freed, 64, parent_pool, parent_stream));
    EXPECT_OK(aclrtMemPoolFreeAsync(freed, parent_stream));
    EXPECT_CHILD_OK(run_child(child_with_pool, NULL));
    parent_still_works();
    EXPECT_OK(aclrtMemPoolFreeAsync(busy, parent_stream));
    EXPECT_OK(aclrtSynchronizeStream(parent_stream));
    EXPECT_OK(aclrtMemPoolDestroy(parent_pool));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_parent, teardown_parent)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_child_refused_then_starts_over),
        T(test_fork_while_busy),
        T(test_fork_from_host_function),
        T(test_child_finalize_reference),
        T(test_fork_during_finalize),
        T(test_fork_without_session),
        T(test_fork_with_memory_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
