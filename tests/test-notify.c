/*
 * Notifies and counting notifies: a record on one stream releases a wait on
 * another (one record, one wait), waits park their stream without holding a
 * worker, timeouts fail the waiting stream at synchronize, a device reset
 * releases parked waits, batch reset, ids and limits, every record and wait
 * mode of the counting notifies, bad inputs with CANN's codes, product
 * support per SoC, and concurrent use from several threads.
 *
 * Every wait is bounded: what might hang runs on a helper thread the test
 * waits for with a timeout.
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
#include <time.h>

#include "acl/acl.h"
#include "common.h"

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void test_record_releases_one_wait(void **state)
{
    (void)state;
    aclrtStream a, b, c;
    aclrtNotify n;
    ASSERT_OK(aclrtCreateStream(&a));
    ASSERT_OK(aclrtCreateStream(&b));
    ASSERT_OK(aclrtCreateStream(&c));
    ASSERT_OK(aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT));
    static atomic_int nb, nc;
    atomic_store(&nb, 0);
    atomic_store(&nc, 0);
    /* two streams wait; a is held by a blocker before its records */
    ASSERT_OK(aclrtWaitAndResetNotify(n, b, 0));
    ASSERT_OK(aclrtWaitAndResetNotify(n, c, 0));
    static struct blocker blk;
    blocker_init(&blk);
    ASSERT_OK(aclrtLaunchHostFunc(a, blocker_fn, &blk));
    ASSERT_OK(aclrtRecordNotify(n, a));
    assert_stream_held(b, &nb, 50);
    assert_stream_held(c, &nc, 0);
    gate_open(&blk.release);
    ASSERT_OK(aclrtSynchronizeStream(a));
    /* one record released exactly one of the two waits */
    sleep_ms(50);
    assert_int_equal(atomic_load(&nb) + atomic_load(&nc), 1);
    ASSERT_OK(aclrtRecordNotify(n, a));   /* the second record releases the other */
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(c, WAIT_MS));
    assert_int_equal(atomic_load(&nb) + atomic_load(&nc), 2);
    /* a record before the wait: the wait passes at once, and resets it */
    ASSERT_OK(aclrtRecordNotify(n, a));
    ASSERT_OK(aclrtSynchronizeStream(a));
    ASSERT_OK(aclrtWaitAndResetNotify(n, b, 0));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    ASSERT_OK(aclrtWaitAndResetNotify(n, b, 0));
    assert_stream_held(b, &nb, 30);
    ASSERT_OK(aclrtRecordNotify(n, NULL));   /* the default stream records too */
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    ASSERT_OK(aclrtDestroyNotify(n));
    ASSERT_OK(aclrtDestroyStream(a));
    ASSERT_OK(aclrtDestroyStream(b));
    ASSERT_OK(aclrtDestroyStream(c));
}

/* Waiting streams occupy no worker: with 2 workers, 8 streams wait and
 * another stream still runs. */
static void test_waits_park(void **state)
{
    (void)state;
    enum { N = 8 };
    aclrtStream s[N], free_stream;
    aclrtNotify n;
    ASSERT_OK(aclrtCreateNotify(&n, 0));
    for (int i = 0; i < N; i++) {
        ASSERT_OK(aclrtCreateStream(&s[i]));
        ASSERT_OK(aclrtWaitAndResetNotify(n, s[i], 0));
    }
    ASSERT_OK(aclrtCreateStream(&free_stream));
    static atomic_int ran;
    atomic_store(&ran, 0);
    ASSERT_OK(aclrtLaunchHostFunc(free_stream, count_fn, &ran));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(free_stream, WAIT_MS));
    assert_int_equal(atomic_load(&ran), 1);
    for (int i = 0; i < N; i++)
        ASSERT_OK(aclrtRecordNotify(n, free_stream));
    for (int i = 0; i < N; i++) {
        ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s[i], WAIT_MS));
        ASSERT_OK(aclrtDestroyStream(s[i]));
    }
    ASSERT_OK(aclrtDestroyStream(free_stream));
    ASSERT_OK(aclrtDestroyNotify(n));
}

static void test_wait_timeout(void **state)
{
    (void)state;
    aclrtStream b;
    aclrtNotify n;
    ASSERT_OK(aclrtCreateStream(&b));
    ASSERT_OK(aclrtCreateNotify(&n, 0));
    static atomic_int after;
    atomic_store(&after, 0);
    uint64_t t0 = now_ms();
    ASSERT_OK(aclrtWaitAndResetNotify(n, b, 1));   /* one second */
    ASSERT_OK(aclrtLaunchHostFunc(b, count_fn, &after));
    EXPECT_ERR2(ACL_ERROR_RT_WAIT_TIMEOUT, "notify", "timed out",
                aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    uint64_t took = now_ms() - t0;
    assert_true(took >= 900 && took < 4000);
    assert_int_equal(atomic_load(&after), 1);   /* later work still ran */
    ASSERT_OK(aclrtSynchronizeStream(b));       /* reported once */
    ASSERT_OK(aclrtDestroyNotify(n));
    ASSERT_OK(aclrtDestroyStream(b));
}

static void reset_device0(void *arg)
{
    *(aclError *)arg = aclrtResetDevice(0);
}

/* A device reset releases a wait that nothing would ever release. */
static void test_reset_releases_wait(void **state)
{
    (void)state;
    aclrtStream b;
    aclrtNotify n;
    ASSERT_OK(aclrtCreateStream(&b));
    ASSERT_OK(aclrtCreateNotify(&n, 0));
    ASSERT_OK(aclrtWaitAndResetNotify(n, b, 0));
    ASSERT_OK(aclrtWaitAndResetNotify(n, NULL, 0));   /* the default stream too */
    sleep_ms(20);
    static aclError rc;
    static struct call c;
    call_start(&c, reset_device0, &rc);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(rc);
    ASSERT_OK(aclrtDestroyNotify(n));   /* the handle outlives the device's streams */
}

static void destroy_force_fn(void *arg)
{
    *(aclError *)((void **)arg)[1] = aclrtDestroyStreamForce(((void **)arg)[0]);
}

/* aclrtDestroyStreamForce takes a parked stream off its notify: no hang, and
 * a later record does not touch it. */
static void test_force_destroy_parked(void **state)
{
    (void)state;
    aclrtNotify n;
    ASSERT_OK(aclrtCreateNotify(&n, 0));
    for (int round = 0; round < 20; round++) {
        aclrtStream b;
        ASSERT_OK(aclrtCreateStream(&b));
        ASSERT_OK(aclrtWaitAndResetNotify(n, b, 0));
        static atomic_int after;
        ASSERT_OK(aclrtLaunchHostFunc(b, count_fn, &after));
        if (round % 2)
            sleep_ms(2);   /* parked for sure */
        static aclError rc;
        static void *args[2];
        args[0] = b;
        args[1] = &rc;
        static struct call c;
        call_start(&c, destroy_force_fn, args);
        assert_true(call_wait(&c, WAIT_MS));
        ASSERT_OK(rc);
    }
    ASSERT_OK(aclrtRecordNotify(n, NULL));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    ASSERT_OK(aclrtDestroyNotify(n));
}

static void finalize_fn(void *arg)
{
    *(aclError *)arg = aclFinalize();
}

static void test_finalize_releases_wait(void **state)
{
    (void)state;
    aclrtNotify n;
    ASSERT_OK(aclrtCreateNotify(&n, 0));
    ASSERT_OK(aclrtWaitAndResetNotify(n, NULL, 0));
    static aclError rc;
    static struct call c;
    call_start(&c, finalize_fn, &rc);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(rc);
}

static void test_batch_reset(void **state)
{
    (void)state;
    aclrtStream b;
    aclrtNotify n[3];
    ASSERT_OK(aclrtCreateStream(&b));
    for (int i = 0; i < 3; i++) {
        ASSERT_OK(aclrtCreateNotify(&n[i], 0));
        ASSERT_OK(aclrtRecordNotify(n[i], NULL));
    }
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    /* a bad handle in the list changes nothing */
    aclrtNotify bad[2] = {n[0], (aclrtNotify)(uintptr_t)0x7777};
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "aclrtNotifyBatchReset", aclrtNotifyBatchReset(bad, 2));
    ASSERT_OK(aclrtWaitAndResetNotify(n[0], b, 0));   /* still set: passes */
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    ASSERT_OK(aclrtNotifyBatchReset(&n[1], 2));
    static atomic_int cnt;
    atomic_store(&cnt, 0);
    ASSERT_OK(aclrtWaitAndResetNotify(n[2], b, 0));   /* cleared: waits */
    assert_stream_held(b, &cnt, 30);
    ASSERT_OK(aclrtRecordNotify(n[2], NULL));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    assert_int_equal(atomic_load(&cnt), 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notifies", aclrtNotifyBatchReset(NULL, 1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "num", aclrtNotifyBatchReset(n, 0));
    aclrtNotify with_null[2] = {n[0], NULL};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "notifies[1]", aclrtNotifyBatchReset(with_null, 2));
    for (int i = 0; i < 3; i++)
        ASSERT_OK(aclrtDestroyNotify(n[i]));
    ASSERT_OK(aclrtDestroyStream(b));
}

static void test_ids_and_bad_inputs(void **state)
{
    (void)state;
    aclrtNotify a, b;
    ASSERT_OK(aclrtCreateNotify(&a, ACL_NOTIFY_DEFAULT));
    ASSERT_OK(aclrtCreateNotify(&b, ACL_NOTIFY_DEVICE_USE_ONLY));
    uint32_t ia, ib;
    ASSERT_OK(aclrtGetNotifyId(a, &ia));
    ASSERT_OK(aclrtGetNotifyId(b, &ib));
    assert_int_not_equal(ia, ib);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notifyId", aclrtGetNotifyId(a, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notify", aclrtGetNotifyId(NULL, &ia));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notify", aclrtCreateNotify(NULL, 0));
    aclrtNotify c;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag", aclrtCreateNotify(&c, 2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notify", aclrtRecordNotify(NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notify", aclrtWaitAndResetNotify(NULL, NULL, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notify", aclrtDestroyNotify(NULL));
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtDestroyStream(s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtRecordNotify(a, s));
    ASSERT_OK(aclrtDestroyNotify(a));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "notify", aclrtRecordNotify(a, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "notify", aclrtGetNotifyId(a, &ia));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "notify", aclrtDestroyNotify(a));
    /* an event handle is not a notify */
    aclrtEvent ev;
    ASSERT_OK(aclrtCreateEvent(&ev));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "notify", aclrtRecordNotify(ev, NULL));
    ASSERT_OK(aclrtDestroyEvent(ev));
    ASSERT_OK(aclrtDestroyNotify(b));
    /* no current context */
    ASSERT_OK(aclrtResetDevice(0));
    EXPECT_ERR(ACL_ERROR_RT_CONTEXT_NULL, NULL, aclrtCreateNotify(&c, 0));
}

static void test_limit(void **state)
{
    (void)state;
    restart_gated("Ascend310P3");   /* 1024 notifies per device */
    static aclrtNotify n[1024];
    for (int i = 0; i < 1024; i++)
        ASSERT_OK(aclrtCreateNotify(&n[i], 0));
    aclrtNotify extra;
    EXPECT_ERR(ACL_ERROR_RT_NO_NOTIFY_RESOURCE, "notify", aclrtCreateNotify(&extra, 0));
    ASSERT_OK(aclrtDestroyNotify(n[7]));
    ASSERT_OK(aclrtCreateNotify(&n[7], 0));
    /* the limit is per device */
    ASSERT_OK(aclrtSetDevice(1));
    ASSERT_OK(aclrtCreateNotify(&extra, 0));
    ASSERT_OK(aclrtDestroyNotify(extra));
    ASSERT_OK(aclrtSetDevice(0));
    for (int i = 0; i < 1024; i++)
        ASSERT_OK(aclrtDestroyNotify(n[i]));
}

static void test_product_support(void **state)
{
    (void)state;
    restart_gated("IPV350");
    aclrtNotify n;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notify", aclrtCreateNotify(NULL, 0));   /* NULL first */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtCreateNotify(&n, 0));
    restart_gated("Ascend310P3");   /* notifies yes, batch reset and counting notifies no */
    ASSERT_OK(aclrtCreateNotify(&n, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notifies", aclrtNotifyBatchReset(NULL, 1));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310P3", aclrtNotifyBatchReset(&n, 1));
    ASSERT_OK(aclrtDestroyNotify(n));
    restart_gated("Ascend910B1");
    aclrtCntNotify cn;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "cntNotify", aclrtCntNotifyCreate(NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B1", aclrtCntNotifyCreate(&cn, 0));
    aclrtCntNotifyRecordInfo ri = {ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "info", aclrtCntNotifyRecord(&cn, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtCntNotifyRecord(&cn, NULL, &ri));
}

/* ---- counting notifies (Ascend 950) ------------------------------------------ */

static void cnt_record(aclrtCntNotify c, aclrtStream s, aclrtCntNotifyRecordMode mode, uint32_t v)
{
    aclrtCntNotifyRecordInfo info = {mode, v};
    ASSERT_OK(aclrtCntNotifyRecord(c, s, &info));
}

static aclError cnt_wait(aclrtCntNotify c, aclrtStream s, aclrtCntNotifyWaitMode mode, uint32_t v,
                         bool clear, uint32_t timeout)
{
    aclrtCntNotifyWaitInfo info = {.mode = mode, .value = v, .timeout = timeout, .isClear = clear};
    return aclrtCntNotifyWaitWithTimeout(c, s, &info);
}

/* The count is v: an EQUAL wait passes at once (a wait with timeout 1 s
 * would fail the stream otherwise). */
static void expect_count(aclrtCntNotify c, aclrtStream s, uint32_t v)
{
    ASSERT_OK(cnt_wait(c, s, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, v, false, 1));
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS));
}

static void test_cnt_record_modes(void **state)
{
    (void)state;
    aclrtCntNotify c;
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    ASSERT_OK(aclrtCntNotifyCreate(&c, 0));
    expect_count(c, s, 0);
    cnt_record(c, s, ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 5);
    expect_count(c, s, 5);
    cnt_record(c, s, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 3);
    expect_count(c, s, 8);
    cnt_record(c, s, ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, 0x3);
    expect_count(c, s, 0xB);
    cnt_record(c, s, ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE, 0x6);
    expect_count(c, s, 0x2);
    ASSERT_OK(aclrtCntNotifyReset(c, s));
    expect_count(c, s, 0);
    uint32_t id1, id2;
    aclrtCntNotify d;
    ASSERT_OK(aclrtCntNotifyCreate(&d, 0));
    ASSERT_OK(aclrtCntNotifyGetId(c, &id1));
    ASSERT_OK(aclrtCntNotifyGetId(d, &id2));
    assert_int_not_equal(id1, id2);
    ASSERT_OK(aclrtCntNotifyDestroy(d));
    ASSERT_OK(aclrtCntNotifyDestroy(c));
    ASSERT_OK(aclrtDestroyStream(s));
}

/* Each wait mode holds its stream until a record makes it true. */
static void test_cnt_wait_modes(void **state)
{
    (void)state;
    static const struct {
        aclrtCntNotifyWaitMode mode;
        uint32_t want, start, release;   /* count before, count that releases */
    } cases[] = {
        {ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, 4, 9, 3},
        {ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 4, 9, 4},
        {ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, 4, 4, 5},
        {ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, 4, 3, 4},
        {ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE, 0x5, 0x4, 0xD},
    };
    aclrtStream a, b;
    ASSERT_OK(aclrtCreateStream(&a));
    ASSERT_OK(aclrtCreateStream(&b));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        aclrtCntNotify c;
        ASSERT_OK(aclrtCntNotifyCreate(&c, 0));
        cnt_record(c, a, ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, cases[i].start);
        ASSERT_OK(aclrtSynchronizeStream(a));
        ASSERT_OK(cnt_wait(c, b, cases[i].mode, cases[i].want, true, 0));
        static atomic_int n;
        atomic_store(&n, 0);
        assert_stream_held(b, &n, 30);
        cnt_record(c, a, ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, cases[i].release);
        ASSERT_OK(aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
        assert_int_equal(atomic_load(&n), 1);
        expect_count(c, a, 0);   /* isClear cleared it */
        ASSERT_OK(aclrtCntNotifyDestroy(c));
    }
    /* without isClear the count stays; a wait that timed out fails its stream */
    aclrtCntNotify c;
    ASSERT_OK(aclrtCntNotifyCreate(&c, 0));
    cnt_record(c, a, ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 7);
    ASSERT_OK(cnt_wait(c, a, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 7, false, 0));
    expect_count(c, a, 7);
    ASSERT_OK(cnt_wait(c, b, ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, 100, false, 1));
    EXPECT_ERR(ACL_ERROR_RT_WAIT_TIMEOUT, "counting notify", aclrtSynchronizeStreamWithTimeout(b, WAIT_MS));
    ASSERT_OK(aclrtCntNotifyDestroy(c));
    ASSERT_OK(aclrtDestroyStream(a));
    ASSERT_OK(aclrtDestroyStream(b));
}

static void test_cnt_bad_inputs(void **state)
{
    (void)state;
    aclrtCntNotify c;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "cntNotify", aclrtCntNotifyCreate(NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag", aclrtCntNotifyCreate(&c, 1));
    ASSERT_OK(aclrtCntNotifyCreate(&c, 0));
    aclrtCntNotifyRecordInfo ri = {(aclrtCntNotifyRecordMode)3, 1};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "mode", aclrtCntNotifyRecord(c, NULL, &ri));
    ri.mode = (aclrtCntNotifyRecordMode)5;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "mode", aclrtCntNotifyRecord(c, NULL, &ri));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "info", aclrtCntNotifyRecord(c, NULL, NULL));
    aclrtCntNotifyWaitInfo wi = {.mode = (aclrtCntNotifyWaitMode)5};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "mode", aclrtCntNotifyWaitWithTimeout(c, NULL, &wi));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "info", aclrtCntNotifyWaitWithTimeout(c, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "cntNotify", aclrtCntNotifyReset(NULL, NULL));
    uint32_t id;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "notifyId", aclrtCntNotifyGetId(c, NULL));
    aclrtNotify plain;
    ASSERT_OK(aclrtCreateNotify(&plain, 0));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "counting notify", aclrtCntNotifyGetId(plain, &id));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "notify", aclrtRecordNotify(c, NULL));
    ASSERT_OK(aclrtDestroyNotify(plain));
    ASSERT_OK(aclrtCntNotifyDestroy(c));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "counting notify", aclrtCntNotifyDestroy(c));
}

static void test_uninitialized(void **state)
{
    (void)state;
    aclrtNotify n;
    uint32_t id;
    aclrtCntNotifyRecordInfo ri = {ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1};
    aclrtCntNotifyWaitInfo wi = {0};
    aclError rc[] = {aclrtCreateNotify(&n, 0), aclrtDestroyNotify(NULL), aclrtRecordNotify(NULL, NULL),
                     aclrtWaitAndResetNotify(NULL, NULL, 0), aclrtGetNotifyId(NULL, &id),
                     aclrtNotifyBatchReset(NULL, 0), aclrtCntNotifyCreate(&n, 0),
                     aclrtCntNotifyDestroy(NULL), aclrtCntNotifyRecord(NULL, NULL, &ri),
                     aclrtCntNotifyWaitWithTimeout(NULL, NULL, &wi), aclrtCntNotifyReset(NULL, NULL),
                     aclrtCntNotifyGetId(NULL, &id)};
    for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++)
        assert_int_equal(rc[i], ACL_ERROR_UNINITIALIZE);
    expect_msg("aclInit");
}

/* ---- threads ---------------------------------------------------------------------- */

#define ROUNDS 200

struct pingpong {
    aclrtContext ctx;
    aclrtNotify ping, pong;
    bool first;
    atomic_int *errors;
    char *err_buf;
};

/* Two threads, each with its own stream, hand a token back and forth
 * through two notifies: every wait is released by the other's record. */
static void *pingpong_main(void *arg)
{
    struct pingpong *p = arg;
    aclrtStream s = NULL;
    if (aclrtSetCurrentContext(p->ctx) || aclrtCreateStream(&s)) {
        note_first_error(p->errors, p->err_buf, 256, "setup");
        return NULL;
    }
    for (int i = 0; i < ROUNDS; i++) {
        aclError e = p->first ? aclrtRecordNotify(p->ping, s) : aclrtWaitAndResetNotify(p->ping, s, 5);
        if (!e)
            e = p->first ? aclrtWaitAndResetNotify(p->pong, s, 5) : aclrtRecordNotify(p->pong, s);
        if (!e && i % 50 == 0)
            e = aclrtSynchronizeStreamWithTimeout(s, WAIT_MS);
        if (e) {
            note_first_error(p->errors, p->err_buf, 256, "round %d: %d", i, e);
            break;
        }
    }
    aclError e = aclrtSynchronizeStreamWithTimeout(s, WAIT_MS);
    if (e)
        note_first_error(p->errors, p->err_buf, 256, "final synchronize: %d", e);
    aclrtDestroyStream(s);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    aclrtNotify ping, pong;
    ASSERT_OK(aclrtCreateNotify(&ping, 0));
    ASSERT_OK(aclrtCreateNotify(&pong, 0));
    static atomic_int errors;
    static char buf[256];
    atomic_store(&errors, 0);
    struct pingpong p[2] = {{current_context(), ping, pong, true, &errors, buf},
                            {current_context(), ping, pong, false, &errors, buf}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, pingpong_main, &p[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    if (atomic_load(&errors))
        fail_msg("%s", buf);
    ASSERT_OK(aclrtDestroyNotify(ping));
    ASSERT_OK(aclrtDestroyNotify(pong));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_gated, teardown_gated)
#define T950(f) cmocka_unit_test_setup_teardown(f, setup_gated_950, teardown_gated)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_uninitialized, setup_clean, teardown_clean),
        T(test_record_releases_one_wait),
        T(test_waits_park),
        T(test_wait_timeout),
        T(test_reset_releases_wait),
        T(test_finalize_releases_wait),
        T(test_force_destroy_parked),
        T(test_batch_reset),
        T(test_ids_and_bad_inputs),
        T(test_limit),
        T(test_product_support),
        T950(test_cnt_record_modes),
        T950(test_cnt_wait_modes),
        T950(test_cnt_bad_inputs),
        T(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
