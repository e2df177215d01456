/*
 * Shared queues (acl/acl_tdt_queue.h): enqueue/dequeue round trips with user
 * data, depth, full/empty with every timeout mode, blocked callers released
 * by the other side, by destroying the queue and by a device reset; queue
 * attributes; routes (one source to several destinations, back-pressure,
 * cycles refused, queries, unbinding); the functions CANN supports on no
 * product; producers and consumers on several threads; bad inputs.
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
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "common.h"
#include "watchdog.h"

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint32_t make_queue(const char *name, uint32_t depth)
{
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    assert_non_null(attr);
    if (name)
        ASSERT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof name, &name));
    ASSERT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof depth, &depth));
    uint32_t qid;
    ASSERT_OK(acltdtCreateQueue(attr, &qid));
    ASSERT_OK(acltdtDestroyQueueAttr(attr));
    return qid;
}

static void put_u32(uint32_t qid, uint32_t v)
{
    ASSERT_OK(acltdtEnqueueData(qid, &v, sizeof v, NULL, 0, 0, 0));
}

static uint32_t get_u32(uint32_t qid)
{
    uint32_t v = 0;
    size_t n = 0;
    ASSERT_OK(acltdtDequeueData(qid, &v, sizeof v, &n, NULL, 0, 0));
    assert_int_equal(n, sizeof v);
    return v;
}

static void test_round_trip(void **state)
{
    (void)state;
    uint32_t qid;
    ASSERT_OK(acltdtCreateQueue(NULL, &qid));   /* defaults: depth 8 */
    unsigned char data[1000], user[96], out[1000], uout[96];
    for (int i = 0; i < 1000; i++)
        data[i] = (unsigned char)(i * 7);
    for (int i = 0; i < 96; i++)
        user[i] = (unsigned char)(255 - i);
    ASSERT_OK(acltdtEnqueueData(qid, data, sizeof data, user, sizeof user, -1, 0));
    ASSERT_OK(acltdtEnqueueData(qid, data, 10, user, 4, 100, 0));
    size_t n = 0;
    memset(uout, 0, sizeof uout);
    ASSERT_OK(acltdtDequeueData(qid, out, sizeof out, &n, uout, sizeof uout, -1));
    assert_int_equal(n, 1000);
    assert_memory_equal(out, data, 1000);
    assert_memory_equal(uout, user, 96);
    /* The second one: 4 bytes of user data, the rest of the 96 are zero. */
    memset(uout, 0xee, sizeof uout);
    ASSERT_OK(acltdtDequeueData(qid, out, sizeof out, &n, uout, 8, 100));
    assert_int_equal(n, 10);
    assert_memory_equal(out, data, 10);
    assert_memory_equal(uout, user, 4);
    assert_int_equal(uout[4], 0);
    assert_int_equal(uout[8], 0xee);
    /* Depth 8: the ninth waits or fails. */
    for (uint32_t i = 0; i < 8; i++)
        put_u32(qid, i);
    uint32_t v = 99;
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_FULL, "is full", acltdtEnqueueData(qid, &v, 4, NULL, 0, 0, 0));
    uint64_t t0 = now_ms();
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_FULL, "timed out", acltdtEnqueueData(qid, &v, 4, NULL, 0, 50, 0));
    assert_true(now_ms() - t0 >= 45);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(get_u32(qid), i);
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_EMPTY, "is empty", acltdtDequeueData(qid, &v, 4, &n, NULL, 0, 0));
    t0 = now_ms();
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_EMPTY, "timed out", acltdtDequeueData(qid, &v, 4, &n, NULL, 0, 30));
    assert_true(now_ms() - t0 >= 25);
    /* A buffer too small: the message stays, retDataSize says how much it needs. */
    ASSERT_OK(acltdtEnqueueData(qid, data, 100, NULL, 0, 0, 0));
    n = 0;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "more than dataSize 99",
               acltdtDequeueData(qid, out, 99, &n, NULL, 0, 0));
    assert_int_equal(n, 100);
    ASSERT_OK(acltdtDequeueData(qid, out, 100, &n, NULL, 0, 0));
    ASSERT_OK(acltdtDestroyQueue(qid));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "is not a queue of device 0", acltdtDestroyQueue(qid));
}

/* Device memory on either side, checked like a synchronous copy's. */
static void test_device_memory(void **state)
{
    (void)state;
    uint32_t qid = make_queue("dev", 4);
    void *dev, *back;
    ASSERT_OK(aclrtMalloc(&dev, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMalloc(&back, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    unsigned char host[256], out[256];
    for (int i = 0; i < 256; i++)
        host[i] = (unsigned char)(i ^ 0x5a);
    ASSERT_OK(aclrtMemcpy(dev, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE));
    ASSERT_OK(acltdtEnqueueData(qid, dev, 256, NULL, 0, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "data", acltdtEnqueueData(qid, dev, 257, NULL, 0, 0, 0));
    size_t n = 0;
    /* A destination range beyond its allocation is refused before anything is taken. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "data", acltdtDequeueData(qid, (char *)back + 8, 256, &n, NULL, 0, 0));
    ASSERT_OK(acltdtDequeueData(qid, back, 256, &n, NULL, 0, 0));
    assert_int_equal(n, 256);
    ASSERT_OK(aclrtMemcpy(out, 256, back, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(out, host, 256);
    ASSERT_OK(aclrtFree(dev));
    ASSERT_OK(aclrtFree(back));
    ASSERT_OK(acltdtDestroyQueue(qid));
}

static void test_attributes(void **state)
{
    (void)state;
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    const char *name = NULL;
    uint32_t depth = 0;
    size_t ret = 0;
    ASSERT_OK(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof depth, &ret, &depth));
    assert_int_equal(depth, 8);
    assert_int_equal(ret, sizeof depth);
    ASSERT_OK(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof name, &ret, &name));
    assert_string_equal(name, "");
    const char *want = "images";
    ASSERT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof want, &want));
    ASSERT_OK(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof name, &ret, &name));
    assert_string_equal(name, "images");
    assert_ptr_not_equal(name, want);   /* copied */
    /* Bad inputs. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attr is NULL", acltdtSetQueueAttr(NULL, ACL_TDT_QUEUE_DEPTH_UINT32, 4, &depth));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "param is NULL", acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, 4, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "len 8", acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, 8, &depth));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "type 5", acltdtSetQueueAttr(attr, (acltdtQueueAttrType)5, 4, &depth));
    const char *null_name = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "NULL", acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof null_name, &null_name));
    char longname[200];
    memset(longname, 'q', sizeof longname);
    longname[128] = '\0';
    const char *lp = longname;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "too long", acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof lp, &lp));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "too small", acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, 2, &ret, &depth));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "paramRetSize is NULL", acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, 4, NULL, &depth));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "type 9", acltdtGetQueueAttr(attr, (acltdtQueueAttrType)9, 4, &ret, &depth));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attr is NULL", acltdtDestroyQueueAttr(NULL));
    /* Depth 2..8192. */
    uint32_t qid;
    depth = 1;
    ASSERT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, 4, &depth));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "depth 1", acltdtCreateQueue(attr, &qid));
    depth = 8193;
    ASSERT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, 4, &depth));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "depth 8193", acltdtCreateQueue(attr, &qid));
    depth = 2;
    ASSERT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, 4, &depth));
    ASSERT_OK(acltdtCreateQueue(attr, &qid));
    put_u32(qid, 1);
    put_u32(qid, 2);
    uint32_t v = 3;
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_FULL, "\"images\"", acltdtEnqueueData(qid, &v, 4, NULL, 0, 0, 0));
    /* Names are unique on a device (as CANN); another device may reuse one. */
    uint32_t other;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "is taken on device 0", acltdtCreateQueue(attr, &other));
    ASSERT_OK(aclrtSetDevice(1));
    ASSERT_OK(acltdtCreateQueue(attr, &other));
    ASSERT_OK(acltdtDestroyQueue(other));
    ASSERT_OK(aclrtSetDevice(0));
    ASSERT_OK(acltdtDestroyQueue(qid));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "qid is NULL", acltdtCreateQueue(attr, NULL));
    ASSERT_OK(acltdtDestroyQueueAttr(attr));
}

struct call_args {
    uint32_t qid;
    int32_t timeout;
    aclError result;
    uint32_t value;
    char msg[256];
    atomic_int started;   /* set just before the call that is to block */
};

static void dequeue_fn(void *arg)
{
    struct call_args *a = arg;
    size_t n;
    atomic_store(&a->started, 1);
    a->result = acltdtDequeueData(a->qid, &a->value, sizeof a->value, &n, NULL, 0, a->timeout);
    const char *m = aclGetRecentErrMsg();
    snprintf(a->msg, sizeof a->msg, "%s", m ? m : "");
}

static void enqueue_fn(void *arg)
{
    struct call_args *a = arg;
    atomic_store(&a->started, 1);
    a->result = acltdtEnqueueData(a->qid, &a->value, sizeof a->value, NULL, 0, a->timeout, 0);
    const char *m = aclGetRecentErrMsg();
    snprintf(a->msg, sizeof a->msg, "%s", m ? m : "");
}

/* The helper threads need the test's device as their current one. */
static void dequeue_on_device0(void *arg)
{
    ASSERT_OK(aclrtSetDevice(0));
    dequeue_fn(arg);
}

static void enqueue_on_device0(void *arg)
{
    ASSERT_OK(aclrtSetDevice(0));
    enqueue_fn(arg);
}

/* Starts fn(a) on a thread and checks that it blocks: it reached the call
 * (under load a thread can take longer than any fixed sleep to start) and has
 * not returned 50 ms later. */
static void start_blocked(struct call *c, void (*fn)(void *), struct call_args *a)
{
    atomic_store(&a->started, 0);
    call_start(c, fn, a);
    for (int i = 0; i < WAIT_MS && !atomic_load(&a->started); i++)
        sleep_ms(1);
    assert_true(atomic_load(&a->started));
    assert_false(call_wait(c, 50));
}

static void test_blocking_and_wakeups(void **state)
{
    (void)state;
    uint32_t qid = make_queue("block", 2);
    /* A blocked dequeue gets the next enqueue. */
    struct call_args a = {.qid = qid, .timeout = -1};
    struct call c;
    start_blocked(&c, dequeue_on_device0, &a);
    put_u32(qid, 42);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(a.result);
    assert_int_equal(a.value, 42);
    /* A blocked enqueue goes on when a dequeue makes room. */
    put_u32(qid, 1);
    put_u32(qid, 2);
    struct call_args b = {.qid = qid, .timeout = WAIT_MS, .value = 3};
    start_blocked(&c, enqueue_on_device0, &b);
    assert_int_equal(get_u32(qid), 1);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(b.result);
    assert_int_equal(get_u32(qid), 2);
    assert_int_equal(get_u32(qid), 3);
    /* Destroying the queue wakes a blocked caller. */
    a.result = 0;
    start_blocked(&c, dequeue_on_device0, &a);
    ASSERT_OK(acltdtDestroyQueue(qid));
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(a.result, ACL_ERROR_FAILURE);
    assert_non_null(strstr(a.msg, "destroyed (acltdtDestroyQueue)"));
    /* So does a reset of its device; the queue is gone after it. */
    qid = make_queue("reset", 2);
    a.qid = qid;
    start_blocked(&c, dequeue_on_device0, &a);
    ASSERT_OK(aclrtResetDeviceForce(0));
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(a.result, ACL_ERROR_FAILURE);
    assert_non_null(strstr(a.msg, "reset of device 0"));
    ASSERT_OK(aclrtSetDevice(0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a queue", acltdtDestroyQueue(qid));
}

static void test_queues_per_device(void **state)
{
    (void)state;
    uint32_t q0 = make_queue("d0", 4);
    put_u32(q0, 5);
    ASSERT_OK(aclrtSetDevice(1));
    uint32_t v;
    size_t n;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a queue of device 1",
               acltdtDequeueData(q0, &v, 4, &n, NULL, 0, 0));
    uint32_t q1 = make_queue("d1", 4);
    assert_int_not_equal(q0, q1);
    ASSERT_OK(acltdtDestroyQueue(q1));
    ASSERT_OK(aclrtSetDevice(0));
    assert_int_equal(get_u32(q0), 5);
    ASSERT_OK(acltdtDestroyQueue(q0));
    /* Left undestroyed: aclFinalize frees it (the ASan build checks). */
    put_u32(make_queue("left", 4), 1);
}

static acltdtQueueRouteList *routes_of(size_t n, const uint32_t (*pairs)[2])
{
    acltdtQueueRouteList *l = acltdtCreateQueueRouteList();
    assert_non_null(l);
    for (size_t i = 0; i < n; i++) {
        acltdtQueueRoute *r = acltdtCreateQueueRoute(pairs[i][0], pairs[i][1]);
        ASSERT_OK(acltdtAddQueueRoute(l, r));
        ASSERT_OK(acltdtDestroyQueueRoute(r));
    }
    return l;
}

static int32_t route_status(acltdtQueueRouteList *l, size_t i)
{
    acltdtQueueRoute *r = acltdtCreateQueueRoute(0, 0);
    ASSERT_OK(acltdtGetQueueRoute(l, i, r));
    int32_t status = -1;
    size_t ret;
    ASSERT_OK(acltdtGetQueueRouteParam(r, ACL_TDT_QUEUE_ROUTE_STATUS_INT32, sizeof status, &ret, &status));
    ASSERT_OK(acltdtDestroyQueueRoute(r));
    return status;
}

static void test_routes(void **state)
{
    (void)state;
    uint32_t src = make_queue("src", 8), d1 = make_queue("d1", 2), d2 = make_queue("d2", 8);
    const uint32_t pairs[2][2] = {{src, d1}, {src, d2}};
    acltdtQueueRouteList *l = routes_of(2, pairs);
    assert_int_equal(acltdtGetQueueRouteNum(l), 2);
    ASSERT_OK(acltdtBindQueueRoutes(l));
    assert_int_equal(route_status(l, 0), ACL_TDT_QUEUE_ROUTE_BIND);
    assert_int_equal(route_status(l, 1), ACL_TDT_QUEUE_ROUTE_BIND);
    /* Every message of src reaches both destinations, in order. */
    for (uint32_t i = 0; i < 3; i++)
        put_u32(src, 100 + i);
    /* d1 (depth 2) is full: the third is held back in src. */
    assert_int_equal(get_u32(d2), 100);
    assert_int_equal(get_u32(d2), 101);
    uint32_t v;
    size_t n;
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_EMPTY, NULL, acltdtDequeueData(d2, &v, 4, &n, NULL, 0, 0));
    assert_int_equal(get_u32(d1), 100);   /* room in d1: the third moves on */
    assert_int_equal(get_u32(d2), 102);
    assert_int_equal(get_u32(d1), 101);
    assert_int_equal(get_u32(d1), 102);
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_EMPTY, NULL, acltdtDequeueData(src, &v, 4, &n, NULL, 0, 0));

    /* Queries. */
    acltdtQueueRouteQueryInfo *qi = acltdtCreateQueueRouteQueryInfo();
    acltdtQueueRouteList *found = acltdtCreateQueueRouteList();
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "no mode", acltdtQueryQueueRoutes(qi, found));
    int32_t mode = ACL_TDT_QUEUE_ROUTE_QUERY_SRC;
    ASSERT_OK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof mode, &mode));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "no source id", acltdtQueryQueueRoutes(qi, found));
    ASSERT_OK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32, sizeof src, &src));
    ASSERT_OK(acltdtQueryQueueRoutes(qi, found));
    assert_int_equal(acltdtGetQueueRouteNum(found), 2);
    assert_int_equal(route_status(found, 0), ACL_TDT_QUEUE_ROUTE_BIND);
    mode = ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST;
    ASSERT_OK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof mode, &mode));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "no destination id", acltdtQueryQueueRoutes(qi, found));
    assert_int_equal(acltdtGetQueueRouteNum(found), 0);   /* cleared first, as CANN */
    ASSERT_OK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32, sizeof d2, &d2));
    ASSERT_OK(acltdtQueryQueueRoutes(qi, found));
    assert_int_equal(acltdtGetQueueRouteNum(found), 1);
    acltdtQueueRoute *r = acltdtCreateQueueRoute(0, 0);
    ASSERT_OK(acltdtGetQueueRoute(found, 0, r));
    uint32_t got;
    size_t ret;
    ASSERT_OK(acltdtGetQueueRouteParam(r, ACL_TDT_QUEUE_ROUTE_SRC_UINT32, sizeof got, &ret, &got));
    assert_int_equal(got, src);
    ASSERT_OK(acltdtGetQueueRouteParam(r, ACL_TDT_QUEUE_ROUTE_DST_UINT32, sizeof got, &ret, &got));
    assert_int_equal(got, d2);
    mode = ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL;
    ASSERT_OK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof mode, &mode));
    ASSERT_OK(acltdtQueryQueueRoutes(qi, found));
    assert_int_equal(acltdtGetQueueRouteNum(found), 0);
    mode = 7;
    ASSERT_OK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof mode, &mode));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "mode 7", acltdtQueryQueueRoutes(qi, found));

    /* Refused: a bound queue cannot be destroyed; cycles; duplicates; unknown queues. */
    EXPECT_ERR(ACL_ERROR_FAILURE, "unbind them first", acltdtDestroyQueue(src));
    const uint32_t bad[3][2] = {{d1, src}, {src, d2}, {d2, 4000000}};
    acltdtQueueRouteList *bl = routes_of(3, bad);
    EXPECT_ERR2(ACL_ERROR_FAILURE, "3 of 3 routes were not bound", "cycle", acltdtBindQueueRoutes(bl));
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(route_status(bl, i), ACL_TDT_QUEUE_ROUTE_UNBIND);
    /* A chain src -> d2 -> d3 forwards twice. */
    uint32_t d3 = make_queue("d3", 8);
    const uint32_t chain[1][2] = {{d2, d3}};
    acltdtQueueRouteList *cl = routes_of(1, chain);
    ASSERT_OK(acltdtBindQueueRoutes(cl));
    put_u32(src, 7);
    assert_int_equal(get_u32(d3), 7);
    assert_int_equal(get_u32(d1), 7);
    /* Unbinding: each route once. */
    ASSERT_OK(acltdtUnbindQueueRoutes(cl));
    assert_int_equal(route_status(cl, 0), ACL_TDT_QUEUE_ROUTE_UNBIND);
    EXPECT_ERR(ACL_ERROR_FAILURE, "is not bound", acltdtUnbindQueueRoutes(cl));
    ASSERT_OK(acltdtUnbindQueueRoutes(l));
    put_u32(src, 8);   /* no route any more: it stays */
    assert_int_equal(get_u32(src), 8);
    for (uint32_t q = 0; q < 4; q++)
        ASSERT_OK(acltdtDestroyQueue(q == 0 ? src : q == 1 ? d1 : q == 2 ? d2 : d3));

    /* Route objects: bad inputs. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "index 5", acltdtGetQueueRoute(l, 5, r));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "route is NULL", acltdtGetQueueRoute(l, 0, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "routeList is NULL", acltdtAddQueueRoute(NULL, r));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "too small",
               acltdtGetQueueRouteParam(r, ACL_TDT_QUEUE_ROUTE_SRC_UINT32, 2, &ret, &got));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "type 3",
               acltdtGetQueueRouteParam(r, (acltdtQueueRouteParamType)3, 4, &ret, &got));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "len 2",
               acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32, 2, &got));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "type 3",
               acltdtSetQueueRouteQueryInfo(qi, (acltdtQueueRouteQueryInfoParamType)3, 4, &got));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "qRouteList is NULL", acltdtBindQueueRoutes(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "qRouteList is NULL", acltdtUnbindQueueRoutes(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "queryInfo is NULL", acltdtQueryQueueRoutes(NULL, found));
    assert_int_equal(acltdtGetQueueRouteNum(NULL), 0);
    expect_msg("routeList is NULL");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "route is NULL", acltdtDestroyQueueRoute(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "routeList is NULL", acltdtDestroyQueueRouteList(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "info is NULL", acltdtDestroyQueueRouteQueryInfo(NULL));
    ASSERT_OK(acltdtDestroyQueueRoute(r));
    ASSERT_OK(acltdtDestroyQueueRouteQueryInfo(qi));
    ASSERT_OK(acltdtDestroyQueueRouteList(found));
    ASSERT_OK(acltdtDestroyQueueRouteList(l));
    ASSERT_OK(acltdtDestroyQueueRouteList(bl));
    ASSERT_OK(acltdtDestroyQueueRouteList(cl));
}

static void *create_without_context(void *arg)
{
    uint32_t qid;
    *(uint32_t *)arg = (uint32_t)acltdtCreateQueue(NULL, &qid);
    return NULL;
}

static void test_bad_inputs_and_products(void **state)
{
    (void)state;
    uint32_t qid = make_queue("bad", 4), v = 1;
    unsigned char user[97] = {0};
    size_t n;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "data is NULL", acltdtEnqueueData(qid, NULL, 4, NULL, 0, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataSize is 0", acltdtEnqueueData(qid, &v, 0, NULL, 0, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "userDataSize 97", acltdtEnqueueData(qid, &v, 4, user, 97, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "userData is NULL", acltdtEnqueueData(qid, &v, 4, NULL, 3, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout -2", acltdtEnqueueData(qid, &v, 4, NULL, 0, -2, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "data is NULL", acltdtDequeueData(qid, NULL, 4, &n, NULL, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "retDataSize is NULL", acltdtDequeueData(qid, &v, 4, NULL, NULL, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataSize is 0", acltdtDequeueData(qid, &v, 0, &n, NULL, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "userDataSize 97", acltdtDequeueData(qid, &v, 4, &n, user, 97, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout -3", acltdtDequeueData(qid, &v, 4, &n, NULL, 0, -3));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "qid 77777", acltdtEnqueueData(77777, &v, 4, NULL, 0, 0, 0));
    /* Supported on no product: arguments first, then 207000. */
    acltdtBuf buf = &v;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "buf is NULL", acltdtEnqueue(qid, NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "no product", acltdtEnqueue(qid, buf, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "buf is NULL", acltdtDequeue(qid, NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "no product", acltdtDequeue(qid, &buf, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "no product", acltdtGrantQueue(qid, 1, ACL_TDT_QUEUE_PERMISSION_ENQUEUE, 0));
    uint32_t perm;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "permission is NULL", acltdtAttachQueue(qid, 0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "no product", acltdtAttachQueue(qid, 0, &perm));
    ASSERT_OK(acltdtDestroyQueue(qid));
    /* Without a current context: 107002. */
    run_in_thread(create_without_context, &v);
    assert_int_equal(v, ACL_ERROR_RT_CONTEXT_NULL);
    /* IPV350 has no queues. */
    restart_gated("IPV350");
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", acltdtCreateQueue(NULL, &qid));
    restart_gated("Ascend310B1");
    ASSERT_OK(acltdtCreateQueue(NULL, &qid));
    ASSERT_OK(acltdtDestroyQueue(qid));
}

/* Two producers and two consumers share one queue; every message arrives once. */
#define PER_PRODUCER 3000
struct mp { uint32_t qid; atomic_int errors; atomic_uint sum, count; char first[256]; };

static void *mp_producer(void *arg)
{
    struct mp *m = arg;
    if (aclrtSetDevice(0))
        note_first_error(&m->errors, m->first, sizeof m->first, "set device");
    for (uint32_t i = 1; i <= PER_PRODUCER; i++)
        if (acltdtEnqueueData(m->qid, &i, sizeof i, &i, sizeof i, i % 2 ? -1 : WAIT_MS, 0))
            note_first_error(&m->errors, m->first, sizeof m->first, "enqueue %u", i);
    return NULL;
}

static void *mp_consumer(void *arg)
{
    struct mp *m = arg;
    if (aclrtSetDevice(0))
        note_first_error(&m->errors, m->first, sizeof m->first, "set device");
    for (int i = 0; i < PER_PRODUCER; i++) {
        uint32_t v = 0, u = 0;
        size_t n = 0;
        if (acltdtDequeueData(m->qid, &v, sizeof v, &n, &u, sizeof u, WAIT_MS) || n != 4 || u != v)
            note_first_error(&m->errors, m->first, sizeof m->first, "dequeue %d", i);
        atomic_fetch_add(&m->sum, v);
        atomic_fetch_add(&m->count, 1);
    }
    return NULL;
}

static void test_producers_consumers(void **state)
{
    (void)state;
    watchdog_start();
    struct mp m = {.qid = make_queue("mp", 4)};
    watchdog_arm(0, "tdt queue producers/consumers", 0, 60);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, i < 2 ? mp_producer : mp_consumer, &m), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    watchdog_disarm(0);
    if (atomic_load(&m.errors))
        fail_msg("%d errors, first: %s", atomic_load(&m.errors), m.first);
    assert_int_equal(atomic_load(&m.count), 2 * PER_PRODUCER);
    assert_int_equal(atomic_load(&m.sum), 2u * (PER_PRODUCER * (PER_PRODUCER + 1u) / 2u));
    ASSERT_OK(acltdtDestroyQueue(m.qid));
}

/* ThreadSanitizer: a child of a multithreaded process may not start threads
 * (see test-fork.c); there the child stops after aclFinalize. */
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
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "die_after_fork=0"; }

/* The child: the inherited queues, channels and buffers are refused, then
 * discarded by aclFinalize (nobody waits on them here, not even the blocked
 * thread the parent has); a new session has none of them. */
static int fork_child(uint32_t qid)
{
    uint32_t v;
    size_t n;
    if (acltdtDequeueData(qid, &v, 4, &n, NULL, 0, 0) != ACL_ERROR_UNINITIALIZE)
        return 2;
    if (aclFinalize() != ACL_SUCCESS)
        return 3;
    if (!CHILD_MAY_START_THREADS)
        return 0;
    if (aclInit(NULL) || aclrtSetDevice(0))
        return 4;
    if (acltdtDequeueData(qid, &v, 4, &n, NULL, 0, 0) != ACL_ERROR_RT_PARAM_INVALID)
        return 5;
    uint32_t q2;
    if (acltdtCreateQueue(NULL, &q2) || acltdtEnqueueData(q2, &qid, 4, NULL, 0, 0, 0) ||
        acltdtDequeueData(q2, &v, 4, &n, NULL, 0, 0) || v != qid)
        return 6;
    return aclFinalize() ? 7 : 0;
}

static void test_fork(void **state)
{
    (void)state;
    uint32_t qid = make_queue("fork", 4);
    put_u32(qid, 9);
    uint32_t waitq = make_queue("fork-wait", 4);
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "fork", 2);
    aclrtMbuf buf;
    ASSERT_OK(aclrtAllocBuf(&buf, 16));
    struct call_args a = {.qid = waitq, .timeout = -1};
    struct call c;
    start_blocked(&c, dequeue_on_device0, &a);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30);
        _exit(fork_child(qid));
    }
    int status = -1;
    bool done = false;
    for (int waited = 0; waited < 30000 && !done; waited += 5) {
        done = waitpid(pid, &status, WNOHANG) == pid;
        if (!done)
            sleep_ms(5);
    }
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("the child hung");
    }
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* The parent is unaffected. */
    assert_int_equal(get_u32(qid), 9);
    put_u32(waitq, 5);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(a.result);
    assert_int_equal(a.value, 5);
    ASSERT_OK(acltdtDestroyChannel(ch));
    ASSERT_OK(aclrtFreeBuf(buf));
}

static void test_uninitialized(void **state)
{
    (void)state;
    uint32_t qid;
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, acltdtCreateQueue(NULL, &qid));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, acltdtDestroyQueue(1));
    /* Attributes and route objects are host objects (as CANN). */
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    assert_non_null(attr);
    ASSERT_OK(acltdtDestroyQueueAttr(attr));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_gated, teardown_gated)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_uninitialized, setup_clean, teardown_clean),
        T(test_round_trip),
        T(test_attributes),
        T(test_device_memory),
        T(test_blocking_and_wakeups),
        T(test_queues_per_device),
        T(test_routes),
        T(test_bad_inputs_and_products),
        T(test_producers_consumers),
        T(test_fork),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
