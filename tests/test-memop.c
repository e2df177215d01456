/*
 * Stream memory operations: aclrtValueWait holds its stream until the 64-bit
 * value in device memory satisfies each comparison of the enum (GEQ, EQ, AND,
 * NOR), released by aclrtValueWrite on another stream, by a host aclrtMemcpy
 * or aclrtMemset, by an asynchronous memset and by a kernel; a wait parks its
 * stream without holding a worker; a device reset releases it; bad inputs get
 * CANN's codes; product support follows the SoC; threads hand values back
 * and forth. Run under TSan, the host-copy cases also prove the memory is
 * read without a data race.
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
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

/* A kernel that stores v at *p (block 0). */
static void k_store(uint64_t *p, uint64_t v)
{
    if (aclsimGetBlockIdx() == 0)
        *p = v;
}
ACLSIM_KERNEL_REGISTER(k_store, uint64_t *, uint64_t);

static uint64_t *dev_u64(void)
{
    void *p = NULL;
    ASSERT_OK(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMemset(p, 64, 0, 64));
    return p;
}

static void host_write(uint64_t *dev, uint64_t v)
{
    ASSERT_OK(aclrtMemcpy(dev, 8, &v, 8, ACL_MEMCPY_HOST_TO_DEVICE));
}

/* Every comparison: a value that holds the stream, then one that releases it. */
static void test_comparisons(void **state)
{
    (void)state;
    static const struct {
        uint32_t flag;
        uint64_t operand, hold, release;
    } cases[] = {
        {ACL_STREAM_WAIT_VALUE_GEQ, 10, 9, 10},
        {ACL_STREAM_WAIT_VALUE_GEQ, 10, UINT64_MAX, 11},   /* (int64_t)(v - 10) < 0 */
        {ACL_STREAM_WAIT_VALUE_EQ, 42, 41, 42},
        {ACL_STREAM_WAIT_VALUE_AND, 0x0F, 0xF0, 0x11},
        {ACL_STREAM_WAIT_VALUE_NOR, 0x0F, UINT64_MAX, 0x0E},   /* ~(v | 0x0F) != 0 */
    };
    aclrtStream a, b;
    ASSERT_OK(aclrtCreateStream(&a));
    ASSERT_OK(aclrtCreateStream(&b));
    uint64_t *p = dev_u64();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        host_write(p, cases[i].hold);
        ASSERT_OK(aclrtValueWait(p, cases[i].operand, cases[i].flag, b));
        static atomic_int n;
        atomic_store(&n, 0);
        assert_stream_held(b, &n, 30);
        ASSERT_OK(aclrtValueWrite(p, cases[i].release, 0, a));   /* from another stream */
        ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
        assert_int_equal(atomic_load(&n), 1);
        /* a value that already holds: the wait passes at once */
        ASSERT_OK(aclrtValueWait(p, cases[i].operand, cases[i].flag, b));
        ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    }
    ASSERT_OK(aclrtFree(p));
    ASSERT_OK(aclrtDestroyStream(a));
    ASSERT_OK(aclrtDestroyStream(b));
}

/* Writers other than aclrtValueWrite release a wait. */
static void test_released_by_every_writer(void **state)
{
    (void)state;
    aclrtStream a, b;
    ASSERT_OK(aclrtCreateStream(&a));
    ASSERT_OK(aclrtCreateStream(&b));
    uint64_t *p = dev_u64();
    static atomic_int n;
    atomic_store(&n, 0);

    /* a host aclrtMemcpy */
    ASSERT_OK(aclrtValueWait(p, 1, ACL_STREAM_WAIT_VALUE_EQ, b));
    assert_stream_held(b, &n, 30);
    host_write(p, 1);
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    assert_int_equal(atomic_load(&n), 1);

    /* a host aclrtMemset */
    ASSERT_OK(aclrtValueWait(p, 0, ACL_STREAM_WAIT_VALUE_EQ, b));
    assert_stream_held(b, &n, 30);
    ASSERT_OK(aclrtMemset(p, 8, 0, 8));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    assert_int_equal(atomic_load(&n), 2);

    /* an asynchronous copy on another stream */
    static uint64_t *pinned;
    ASSERT_OK(aclrtMallocHost((void **)&pinned, 8));
    *pinned = 7;
    ASSERT_OK(aclrtValueWait(p, 7, ACL_STREAM_WAIT_VALUE_GEQ, b));
    assert_stream_held(b, &n, 30);
    ASSERT_OK(aclrtMemcpyAsync(p, 8, pinned, 8, ACL_MEMCPY_HOST_TO_DEVICE, a));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    assert_int_equal(atomic_load(&n), 3);

    /* an asynchronous memset */
    ASSERT_OK(aclrtValueWait(p, 0, ACL_STREAM_WAIT_VALUE_EQ, b));
    assert_stream_held(b, &n, 30);
    ASSERT_OK(aclrtMemsetAsync(p, 8, 0, 8, a));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    assert_int_equal(atomic_load(&n), 4);

    /* a kernel */
    ASSERT_OK(aclrtValueWait(p, 99, ACL_STREAM_WAIT_VALUE_EQ, b));
    assert_stream_held(b, &n, 30);
    uint64_t v = 99;
    void *args[] = {&p, &v};
    ASSERT_OK(aclrtLaunchKernelWithArgsArray(FUNC(k_store), 4, a, NULL, args));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    assert_int_equal(atomic_load(&n), 5);

    /* same stream: a write before the wait orders it */
    ASSERT_OK(aclrtValueWrite(p, 5, 0, b));
    ASSERT_OK(aclrtValueWait(p, 5, ACL_STREAM_WAIT_VALUE_EQ, b));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    uint64_t got = 0;
    ASSERT_OK(aclrtMemcpy(&got, 8, p, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(got, 5);

    ASSERT_OK(aclrtFreeHost(pinned));
    ASSERT_OK(aclrtFree(p));
    ASSERT_OK(aclrtDestroyStream(a));
    ASSERT_OK(aclrtDestroyStream(b));
}

/* Waiting streams hold no worker (2 per device): 6 wait, another runs. */
static void test_waits_park(void **state)
{
    (void)state;
    enum { N = 6 };
    aclrtStream s[N], other;
    uint64_t *p = dev_u64();
    for (int i = 0; i < N; i++) {
        ASSERT_OK(aclrtCreateStream(&s[i]));
        ASSERT_OK(aclrtValueWait(p, (uint64_t)i + 1, ACL_STREAM_WAIT_VALUE_GEQ, s[i]));
    }
    ASSERT_OK(aclrtCreateStream(&other));
    static atomic_int n;
    atomic_store(&n, 0);
    ASSERT_OK(aclrtLaunchHostFunc(other, count_fn, &n));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(other, WAIT_MS));
    assert_int_equal(atomic_load(&n), 1);
    /* raising the value step by step releases them in order of their operand */
    for (int i = 0; i < N; i++) {
        ASSERT_OK(aclrtValueWrite(p, (uint64_t)i + 1, 0, other));
        ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s[i], WAIT_MS));
    }
    for (int i = 0; i < N; i++)
        ASSERT_OK(aclrtDestroyStream(s[i]));
    ASSERT_OK(aclrtDestroyStream(other));
    ASSERT_OK(aclrtFree(p));
}

static void reset_device0(void *arg)
{
    *(aclError *)arg = aclrtResetDeviceForce(0);
}

static void test_device_reset_releases_wait(void **state)
{
    (void)state;
    aclrtStream b;
    ASSERT_OK(aclrtCreateStream(&b));
    uint64_t *p = dev_u64();
    ASSERT_OK(aclrtValueWait(p, 1, ACL_STREAM_WAIT_VALUE_EQ, b));
    ASSERT_OK(aclrtValueWait(p, 1, ACL_STREAM_WAIT_VALUE_EQ, NULL));
    sleep_ms(20);
    static aclError rc;
    static struct call c;
    call_start(&c, reset_device0, &rc);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(rc);
}

/* aclrtDestroyStreamForce takes a stream off the watcher: no hang. */
static void test_force_destroy_parked(void **state)
{
    (void)state;
    uint64_t *p = dev_u64();
    for (int round = 0; round < 20; round++) {
        aclrtStream b;
        ASSERT_OK(aclrtCreateStream(&b));
        ASSERT_OK(aclrtValueWait(p, 1, ACL_STREAM_WAIT_VALUE_EQ, b));
        if (round % 2)
            sleep_ms(2);
        ASSERT_OK(aclrtDestroyStreamForce(b));
    }
    ASSERT_OK(aclrtValueWrite(p, 1, 0, NULL));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(NULL, WAIT_MS));
    ASSERT_OK(aclrtFree(p));
}

/* Memory freed under a queued wait or write reads as 0 and is not written:
 * the program's error, without a crash. */
static void test_freed_memory(void **state)
{
    (void)state;
    aclrtStream b;
    ASSERT_OK(aclrtCreateStream(&b));
    uint64_t *p = dev_u64();
    host_write(p, 5);
    static struct blocker blk;
    blocker_init(&blk);
    ASSERT_OK(aclrtLaunchHostFunc(b, blocker_fn, &blk));
    ASSERT_OK(aclrtValueWrite(p, 9, 0, b));
    ASSERT_OK(aclrtValueWait(p, 0, ACL_STREAM_WAIT_VALUE_EQ, b));
    assert_true(gate_wait(&blk.started, WAIT_MS));
    ASSERT_OK(aclrtFree(p));
    gate_open(&blk.release);
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    ASSERT_OK(aclrtDestroyStream(b));
}

static void test_bad_inputs(void **state)
{
    (void)state;
    uint64_t *p = dev_u64();
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devAddr", aclrtValueWrite(NULL, 1, 0, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devAddr", aclrtValueWait(NULL, 1, 0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag", aclrtValueWrite(p, 1, 1, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag", aclrtValueWait(p, 1, 4, NULL));
    uint64_t host = 0;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device memory", aclrtValueWrite(&host, 1, 0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device memory", aclrtValueWait(&host, 1, 0, NULL));
    void *pinned;
    ASSERT_OK(aclrtMallocHost(&pinned, 64));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device memory", aclrtValueWait(pinned, 1, 0, NULL));
    ASSERT_OK(aclrtFreeHost(pinned));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aligned", aclrtValueWrite((char *)p + 4, 1, 0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device memory", aclrtValueWrite((char *)p + 64, 1, 0, NULL));
    void *q;
    ASSERT_OK(aclrtMalloc(&q, 60, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "past the end", aclrtValueWrite((char *)q + 56, 1, 0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "past the end", aclrtValueWait((char *)q + 56, 1, 0, NULL));
    ASSERT_OK(aclrtFree(q));
    ASSERT_OK(aclrtValueWrite((char *)p + 56, 1, 0, NULL));   /* the last 8 bytes */
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtDestroyStream(s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtValueWrite(p, 1, 0, s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtValueWait(p, 1, 0, s));
    /* a stream of another context */
    aclrtContext mine = current_context(), other;
    ASSERT_OK(aclrtCreateContext(&other, 0));   /* becomes current */
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtSetCurrentContext(mine));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CONTEXT, NULL, aclrtValueWrite(p, 1, 0, s));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CONTEXT, NULL, aclrtValueWait(p, 1, 0, s));
    ASSERT_OK(aclrtDestroyStream(s));
    ASSERT_OK(aclrtDestroyContext(other));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    ASSERT_OK(aclrtFree(p));
}

static void test_product_support(void **state)
{
    (void)state;
    static const char *const unsupported[] = {"Ascend310P3", "Ascend310B1", "Ascend910A", "IPV350"};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        restart_gated(unsupported[i]);
        void *p;
        ASSERT_OK(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
        EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devAddr", aclrtValueWrite(NULL, 1, 0, NULL));
        EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, unsupported[i], aclrtValueWrite(p, 1, 0, NULL));
        EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, unsupported[i], aclrtValueWait(p, 1, 0, NULL));
        ASSERT_OK(aclrtFree(p));
    }
    restart_gated("Ascend950PR");
    uint64_t *p = dev_u64();
    ASSERT_OK(aclrtValueWrite(p, 1, 0, NULL));
    ASSERT_OK(aclrtValueWait(p, 1, 0, NULL));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(NULL, WAIT_MS));
    ASSERT_OK(aclrtFree(p));
}

static void test_uninitialized(void **state)
{
    (void)state;
    uint64_t x = 0;
    assert_int_equal(aclrtValueWrite(&x, 1, 0, NULL), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclrtValueWait(NULL, 1, 0, NULL), ACL_ERROR_UNINITIALIZE);
    expect_msg("aclrtValueWait", "aclInit");
}

/* ---- threads ----------------------------------------------------------------------- */

#define ROUNDS 300

struct relay {
    aclrtContext ctx;
    uint64_t *p;
    uint64_t parity;   /* this thread writes odd (1) or even (0) steps */
    atomic_int *errors;
    char *buf;
};

/* Two threads, each with a stream, count one value up together: each waits
 * for the other's step and writes the next, with host copies mixed in. */
static void *relay_main(void *arg)
{
    struct relay *r = arg;
    aclrtStream s = NULL;
    if (aclrtSetCurrentContext(r->ctx) || aclrtCreateStream(&s)) {
        note_first_error(r->errors, r->buf, 256, "setup");
        return NULL;
    }
    for (uint64_t step = r->parity; step < ROUNDS; step += 2) {
        aclError e = aclrtValueWait(r->p, step, ACL_STREAM_WAIT_VALUE_EQ, s);
        if (!e)
            e = aclrtValueWrite(r->p, step + 1, 0, s);
        if (!e && step % 64 < 2)
            e = aclrtSynchronizeStreamWithTimeout(s, WAIT_MS);
        if (e) {
            note_first_error(r->errors, r->buf, 256, "step %llu: %d", (unsigned long long)step, e);
            break;
        }
    }
    aclError e = aclrtSynchronizeStreamWithTimeout(s, WAIT_MS);
    if (e)
        note_first_error(r->errors, r->buf, 256, "final synchronize: %d", e);
    aclrtDestroyStream(s);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    uint64_t *p = dev_u64();
    static atomic_int errors;
    static char buf[256];
    atomic_store(&errors, 0);
    struct relay r[2] = {{current_context(), p, 0, &errors, buf},
                         {current_context(), p, 1, &errors, buf}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, relay_main, &r[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    if (atomic_load(&errors))
        fail_msg("%s", buf);
    uint64_t got = 0;
    ASSERT_OK(aclrtMemcpy(&got, 8, p, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(got, ROUNDS);
    ASSERT_OK(aclrtFree(p));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_gated, teardown_gated)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_uninitialized, setup_clean, teardown_clean),
        T(test_comparisons),
        T(test_released_by_every_writer),
        T(test_waits_park),
        T(test_device_reset_releases_wait),
        T(test_force_destroy_parked),
        T(test_freed_memory),
        T(test_bad_inputs),
        T(test_product_support),
        T(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
