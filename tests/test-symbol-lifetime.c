/*
 * Device variables racing the end of their device's session: threads making
 * first uses of device variables (aclrtGetSymbolAddress/Size, synchronous
 * copies both ways, kernel launches that use ACLSIM_DEV) while another thread
 * force-resets the device and, every few rounds, finalizes and initialises
 * the runtime again. Every call either succeeds on a live device or fails
 * with a lifetime code; no crash, no hang (watchdog), no value that is
 * neither an initializer nor a value some thread wrote, and no kernel ever
 * sees a NULL instance.
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
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

#define USERS 3
#define ROUNDS 150            /* resets (every FINALIZE_EVERY-th one a finalize) */
#define FINALIZE_EVERY 10
#define TIME_BUDGET_NS (6ull * 1000000000ull)
#define WATCHDOG_S 90
#define INIT_WORD 0x5A5A5A5Au
#define TAG 0xC0000000u       /* values the users write: TAG | thread << 16 | n */
#define WORDS 16

/* Several variables, so that every session has many first uses. */
ACLSIM_DEVICE_VAR(uint32_t, life_v0, [WORDS]) = {INIT_WORD, INIT_WORD, INIT_WORD, INIT_WORD};
ACLSIM_DEVICE_VAR(uint32_t, life_v1, [WORDS]) = {INIT_WORD, INIT_WORD, INIT_WORD, INIT_WORD};
ACLSIM_DEVICE_VAR(uint32_t, life_v2, [WORDS]) = {INIT_WORD, INIT_WORD, INIT_WORD, INIT_WORD};
ACLSIM_DEVICE_VAR(uint32_t, life_v3, [WORDS]) = {INIT_WORD, INIT_WORD, INIT_WORD, INIT_WORD};
static uint32_t *const life_vars[] = {life_v0, life_v1, life_v2, life_v3};
#define NVARS (sizeof life_vars / sizeof life_vars[0])

/* Large ones (1 MiB: the largest with an initializer snapshot), so that
 * creating instances takes long enough for calls to queue behind it while
 * the device closes. */
#define BIG_WORDS (256u * 1024u)
ACLSIM_DEVICE_VAR(uint32_t, life_big0, [BIG_WORDS]);
ACLSIM_DEVICE_VAR(uint32_t, life_big1, [BIG_WORDS]);
ACLSIM_DEVICE_VAR(uint32_t, life_big2, [BIG_WORDS]);
ACLSIM_DEVICE_VAR(uint32_t, life_big3, [BIG_WORDS]);
ACLSIM_DEVICE_VAR(uint32_t, life_big4, [BIG_WORDS]);
ACLSIM_DEVICE_VAR(uint32_t, life_big5, [BIG_WORDS]);
static uint32_t *const big_vars[] = {life_big0, life_big1, life_big2, life_big3, life_big4,
                                     life_big5};
#define NBIG (sizeof big_vars / sizeof big_vars[0])

/* Kernel: counts NULL instances it sees (must stay 0), else bumps word 8+. */
static atomic_int null_instances;
static atomic_int kernel_blocks;
void life_touch(void)
{
    uint32_t b = aclsimGetBlockIdx();
    if ((void *)&ACLSIM_DEV(life_v0) == NULL || (void *)&ACLSIM_DEV(life_v1) == NULL ||
        (void *)&ACLSIM_DEV(life_v2) == NULL || (void *)&ACLSIM_DEV(life_v3) == NULL) {
        atomic_fetch_add(&null_instances, 1);
        return;
    }
    __atomic_fetch_add(&ACLSIM_DEV(life_v0)[8 + b % 8], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ACLSIM_DEV(life_v3)[8 + b % 8], 1, __ATOMIC_RELAXED);
    atomic_fetch_add(&kernel_blocks, 1);
}
ACLSIM_KERNEL_REGISTER(life_touch, void);

static atomic_bool stop;
static atomic_int errors;
static char first_error[512];
static atomic_long calls_ok, calls_refused;

/* The codes a call racing a reset or finalize may give. */
static bool lifetime_code(aclError e)
{
    return e == ACL_ERROR_UNINITIALIZE || e == ACL_ERROR_RT_CONTEXT_NULL ||
           e == ACL_ERROR_RT_INVALID_HANDLE || e == ACL_ERROR_RT_STREAM_CONTEXT ||
           e == ACL_ERROR_RT_STREAM_ABORT;
}

/* true if e is success; counts a lifetime refusal, notes anything else. */
static bool accept(aclError e, const char *what, int me)
{
    if (e == ACL_SUCCESS) {
        atomic_fetch_add(&calls_ok, 1);
        return true;
    }
    if (lifetime_code(e))
        atomic_fetch_add(&calls_refused, 1);
    else
        note_first_error(&errors, first_error, sizeof first_error, "user %d: %s returned %d",
                         me, what, (int)e);
    return false;
}

static bool plausible(uint32_t v, int me)
{
    return v == INIT_WORD || (v & 0xFFFF0000u) == (TAG | (uint32_t)me << 16);
}

static void *user_main(void *arg)
{
    int me = (int)(intptr_t)arg;
    aclrtFuncHandle f = NULL;
    uint32_t n = 0;
    while (!atomic_load(&stop)) {
        aclError e = aclrtSetDevice(0);
        if (e != ACL_SUCCESS) {
            accept(e, "aclrtSetDevice", me);
            sched_yield();
            continue;
        }
        for (unsigned i = 0; i < NVARS && !atomic_load(&stop); i++) {
            const void *sym = life_vars[(i + (unsigned)me) % NVARS];
            void *addr = NULL;
            size_t size = 0;
            accept(aclrtGetSymbolAddress(sym, &addr), "aclrtGetSymbolAddress", me);
            if (accept(aclrtGetSymbolSize(sym, &size), "aclrtGetSymbolSize", me) &&
                size != WORDS * sizeof(uint32_t))
                note_first_error(&errors, first_error, sizeof first_error,
                                 "user %d: size %zu", me, size);
            uint32_t w = TAG | (uint32_t)me << 16 | (n++ & 0xFFFF), r = 0;
            accept(aclrtMemcpyToSymbol(sym, &w, 4, 4 * (size_t)me, ACL_MEMCPY_HOST_TO_DEVICE),
                   "aclrtMemcpyToSymbol", me);
            /* Its own word (no other thread writes it): what it wrote, or the
             * initializer if a reset came in between. */
            if (accept(aclrtMemcpyFromSymbol(&r, 4, sym, 4, 4 * (size_t)me,
                                             ACL_MEMCPY_DEVICE_TO_HOST),
                       "aclrtMemcpyFromSymbol", me) &&
                !plausible(r, me))
                note_first_error(&errors, first_error, sizeof first_error,
                                 "user %d: read 0x%08x, neither an initializer nor written", me,
                                 r);
        }
        for (unsigned i = 0; i < NBIG && !atomic_load(&stop); i++) {
            const void *sym = big_vars[(i * 5 + (unsigned)me) % NBIG];
            void *addr = NULL;
            uint32_t r = 1;
            accept(aclrtGetSymbolAddress(sym, &addr), "aclrtGetSymbolAddress", me);
            if (accept(aclrtMemcpyFromSymbol(&r, 4, sym, 4, 4096 * (size_t)me,
                                             ACL_MEMCPY_DEVICE_TO_HOST),
                       "aclrtMemcpyFromSymbol", me) && r != 0)
                note_first_error(&errors, first_error, sizeof first_error,
                                 "user %d: read 0x%08x from a zero-initialised variable", me, r);
        }
        if (!f && aclrtGetFuncBySymbol(FN(life_touch), &f) != ACL_SUCCESS)
            f = NULL;
        if (f && accept(aclrtLaunchKernelWithArgsArray(f, 4, NULL, NULL, NULL),
                        "aclrtLaunchKernelWithArgsArray", me))
            accept(aclrtSynchronizeStream(NULL), "aclrtSynchronizeStream", me);
        if (aclsimGetBlockNum() != 1)
            note_first_error(&errors, first_error, sizeof first_error, "block state leaked");
    }
    return NULL;
}

static void *watchdog_main(void *arg)
{
    atomic_bool *done = arg;
    for (int i = 0; i < WATCHDOG_S * 10 && !atomic_load(done); i++)
        sleep_ms(100);
    if (!atomic_load(done)) {
        fprintf(stderr, "test-symbol-lifetime: watchdog: no progress for %d s (a hang)\n",
                WATCHDOG_S);
        abort();
    }
    return NULL;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_first_use_races_reset_and_finalize(void **state)
{
    (void)state;
    atomic_store(&stop, false);
    atomic_store(&errors, 0);
    atomic_store(&null_instances, 0);
    atomic_store(&kernel_blocks, 0);
    atomic_bool done = false;
    pthread_t dog, users[USERS];
    assert_int_equal(pthread_create(&dog, NULL, watchdog_main, &done), 0);
    for (int i = 0; i < USERS; i++)
        assert_int_equal(pthread_create(&users[i], NULL, user_main, (void *)(intptr_t)i), 0);
    uint64_t t0 = now_ns();
    int rounds = 0, finalizes = 0;
    unsigned seed = 12345;
    for (; rounds < ROUNDS && now_ns() - t0 < TIME_BUDGET_NS; rounds++) {
        /* Let the users get going on the fresh session (every other round
         * until a kernel ran in it, up to 20 ms: slow builds such as TSan's
         * would otherwise rarely get that far), then pull it away. */
        long ok0 = atomic_load(&calls_ok);
        int k0 = atomic_load(&kernel_blocks);
        usleep(200 + rand_r(&seed) % 800);
        for (int w = 0; w < 200 && (atomic_load(&calls_ok) == ok0 ||
                                    (rounds % 2 && atomic_load(&kernel_blocks) == k0));
             w++)
            usleep(100);
        if (rounds % FINALIZE_EVERY == FINALIZE_EVERY - 1) {
            EXPECT_OK(aclFinalize());
            finalizes++;
            usleep(rand_r(&seed) % 300);
            EXPECT_OK(aclInit(NULL));
        } else {
            EXPECT_OK(aclrtResetDeviceForce(0));
        }
    }
    atomic_store(&stop, true);
    for (int i = 0; i < USERS; i++)
        pthread_join(users[i], NULL);
    atomic_store(&done, true);
    pthread_join(dog, NULL);
    print_message("%d rounds (%d finalizes), %ld calls succeeded, %ld refused, %d kernel "
                  "blocks\n", rounds, finalizes, atomic_load(&calls_ok),
                  atomic_load(&calls_refused), atomic_load(&kernel_blocks));
    if (atomic_load(&errors))
        fail_msg("%d unexpected result(s); first: %s", atomic_load(&errors), first_error);
    assert_int_equal(atomic_load(&null_instances), 0);
    assert_true(rounds >= 20);
    assert_true(atomic_load(&calls_ok) > 0);
    assert_true(atomic_load(&kernel_blocks) > 0);

    /* The runtime is still usable: a fresh session starts from the initializers. */
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtResetDeviceForce(0));
    EXPECT_OK(aclrtSetDevice(0));
    uint32_t got[WORDS];
    for (unsigned i = 0; i < NVARS; i++) {
        EXPECT_OK(aclrtMemcpyFromSymbol(got, sizeof got, life_vars[i], sizeof got, 0,
                                        ACL_MEMCPY_DEVICE_TO_HOST));
        assert_int_equal(got[0], INIT_WORD);
        assert_int_equal(got[3], INIT_WORD);
        assert_int_equal(got[4], 0);
    }
}

/* A thread whose context's device is reset between two symbol calls gets
 * 107002 (not a stale instance), and after aclrtSetDevice the variable's
 * value is the initializer again. */
static void test_reset_between_calls(void **state)
{
    (void)state;
    EXPECT_OK(aclrtSetDevice(0));
    uint32_t w = TAG | 1;
    EXPECT_OK(aclrtMemcpyToSymbol(life_v1, &w, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtResetDeviceForce(0));
    void *addr = NULL;
    EXPECT_ERR(ACL_ERROR_RT_CONTEXT_NULL, NULL, aclrtGetSymbolAddress(life_v1, &addr));
    EXPECT_ERR(ACL_ERROR_RT_CONTEXT_NULL, NULL,
               aclrtMemcpyToSymbol(life_v1, &w, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtSetDevice(0));
    uint32_t r = 0;
    EXPECT_OK(aclrtMemcpyFromSymbol(&r, 4, life_v1, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(r, INIT_WORD);
}

static int setup_one_device(void **state)
{
    (void)state;
    unset_config();
    if (init_devices("1", "64M") != ACL_SUCCESS)
        return -1;
    return 0;
}

static int teardown_any(void **state)
{
    (void)state;
    if (runtime_initialized()) {
        (void)aclrtResetDeviceForce(0);
        (void)aclFinalize();
    }
    drain_msg();
    unset_config();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reset_between_calls, setup_one_device, teardown_any),
        cmocka_unit_test_setup_teardown(test_first_use_races_reset_and_finalize, setup_one_device,
                                        teardown_any),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
