/*
 * Last errors: aclrtGetLastError (reads and clears) and aclrtPeekAtLastError
 * (reads), per thread, ACL_RT_THREAD_LEVEL only; every failing call and
 * every reported asynchronous failure is recorded with its code; threads do
 * not see each other's.
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

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

static void trap_now(void) { aclsimTrap("last-error test"); }
ACLSIM_KERNEL_REGISTER(trap_now, void);

static void test_get_clears_peek_does_not(void **state)
{
    (void)state;
    (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL);   /* what the setup left */
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
    assert_int_equal(aclrtMalloc(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
    /* A successful call does not clear it. */
    uint32_t n;
    OK(aclrtGetDeviceCount(&n));
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
    assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
    /* The latest failure wins. */
    assert_int_equal(aclrtSetDevice(77), ACL_ERROR_RT_INVALID_DEVICEID);
    assert_int_equal(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
    drain_msg();
}

static void test_bad_level(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ACL_RT_THREAD_LEVEL", aclrtGetLastError((aclrtLastErrLevel)1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "level -1", aclrtPeekAtLastError((aclrtLastErrLevel)-1));
    /* ... which is itself a failing call. */
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
}

static void test_before_init(void **state)
{
    (void)state;
    (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL);   /* what the setup left */
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
    uint32_t n;
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_UNINITIALIZE);
    drain_msg();
}

static void test_asynchronous_failure(void **state)
{
    (void)state;
    (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL);
    OK(aclrtLaunchKernelWithArgsArray(FUNC(trap_now), 1, NULL, NULL, NULL));
    assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);   /* not yet */
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_AICORE_EXCEPTION);
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_AICORE_EXCEPTION);
    OK(aclrtLaunchKernelWithArgsArray(FUNC(trap_now), 1, NULL, NULL, NULL));
    assert_int_equal(aclrtSynchronizeDevice(), ACL_ERROR_RT_AICORE_EXCEPTION);
    assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_AICORE_EXCEPTION);
    drain_msg();
}

/* Each thread fails with its own code and reads only its own. */
struct worker { int id; aclrtContext ctx; atomic_int *errors; char *err; pthread_barrier_t *go; };

static void *per_thread(void *arg)
{
    struct worker *w = arg;
    if (aclrtGetLastError(ACL_RT_THREAD_LEVEL) != ACL_SUCCESS)
        note_first_error(w->errors, w->err, 256, "thread %d: not clean at start", w->id);
    aclrtSetCurrentContext(w->ctx);
    pthread_barrier_wait(w->go);
    for (int round = 0; round < 500; round++) {
        aclError want;
        if ((w->id + round) % 3 == 0) {
            want = ACL_ERROR_INVALID_PARAM;
            aclrtMalloc(NULL, 1, ACL_MEM_MALLOC_HUGE_FIRST);
        } else if ((w->id + round) % 3 == 1) {
            want = ACL_ERROR_RT_INVALID_DEVICEID;
            aclrtSetDevice(1000 + w->id);
        } else {
            want = ACL_ERROR_RT_INVALID_HANDLE;
            aclrtSynchronizeStream((aclrtStream)(uintptr_t)0x100);
        }
        aclError peek = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
        aclError got = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
        aclError after = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
        if (peek != want || got != want || after != ACL_SUCCESS)
            note_first_error(w->errors, w->err, 256, "thread %d round %d: %d/%d/%d, want %d",
                             w->id, round, peek, got, after, want);
        aclGetRecentErrMsg();
    }
    return NULL;
}

static void test_per_thread(void **state)
{
    (void)state;
    enum { THREADS = 6 };
    /* This thread's last error is not touched by the others. */
    assert_int_equal(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
    pthread_t th[THREADS];
    struct worker w[THREADS];
    atomic_int errors = 0;
    char err[256] = "";
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){i, current_context(), &errors, err, &go};
        assert_int_equal(pthread_create(&th[i], NULL, per_thread, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    if (atomic_load(&errors))
        fail_msg("%d error(s), first: %s", atomic_load(&errors), err);
    assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
    drain_msg();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_before_init, setup_clean, teardown_clean),
        cmocka_unit_test_setup_teardown(test_get_clears_peek_does_not, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_bad_level, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_asynchronous_failure, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_per_thread, setup_device0, teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
