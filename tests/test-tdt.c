/*
 * Tensor channels, data items and datasets (acl/acl_tdt.h) and shared
 * buffers (aclrt*Buf, acltdt*Buf): datasets round-trip byte for byte, full
 * and empty channels with every timeout mode, blocked senders and receivers
 * released by the other side, by acltdtStopChannel, by destroying the
 * channel, by a device reset and by aclFinalize; a producer and a consumer
 * thread; CANN's TDT channels on the training series; bad inputs with CANN's
 * codes; product support per SoC.
 *
 * Every call that may block runs on a helper thread the test waits for with
 * a bound (call_start / call_wait).
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

/* The code a NULL-returning call recorded (aclrtGetLastError clears it). */
static aclError last_code(void)
{
    return aclrtGetLastError(ACL_RT_THREAD_LEVEL);
}

#define EXPECT_NULL(want, needle, call)                                                   \
    do {                                                                                  \
        (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL);                                     \
        assert_null(call);                                                                \
        assert_int_equal(last_code(), (want));                                            \
        expect_msg(needle);                                                               \
    } while (0)

/* A dataset of one float tensor (rows x 3, values base + i) and, if eos, an
 * end-of-sequence item. The data lives in buf. */
static acltdtDataset *make_dataset(float *buf, int64_t rows, float base, bool eos)
{
    for (int64_t i = 0; i < rows * 3; i++)
        buf[i] = base + (float)i;
    int64_t dims[2] = {rows, 3};
    acltdtDataset *ds = acltdtCreateDataset();
    assert_non_null(ds);
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, buf,
                                              (size_t)rows * 3 * sizeof(float));
    assert_non_null(it);
    ASSERT_OK(acltdtAddDataItem(ds, it));
    if (eos) {
        acltdtDataItem *end = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, NULL, 0,
                                                   ACL_FLOAT, NULL, 0);
        assert_non_null(end);
        ASSERT_OK(acltdtAddDataItem(ds, end));
    }
    return ds;
}

/* Destroys a dataset made by make_dataset and the items added to it. */
static void free_dataset(acltdtDataset *ds)
{
    size_t n = acltdtGetDatasetSize(ds);
    for (size_t i = 0; i < n; i++)
        ASSERT_OK(acltdtDestroyDataItem(acltdtGetDataItem(ds, i)));
    ASSERT_OK(acltdtDestroyDataset(ds));
}

/* Asserts that ds (received) holds make_dataset(rows, base, eos)'s content. */
static void check_received(acltdtDataset *ds, int64_t rows, float base, bool eos)
{
    assert_int_equal(acltdtGetDatasetSize(ds), eos ? 2 : 1);
    acltdtDataItem *it = acltdtGetDataItem(ds, 0);
    assert_non_null(it);
    assert_int_equal(acltdtGetTensorTypeFromItem(it), ACL_TENSOR_DATA_TENSOR);
    assert_int_equal(acltdtGetDataTypeFromItem(it), ACL_FLOAT);
    assert_int_equal(acltdtGetDimNumFromItem(it), 2);
    int64_t dims[4] = {0};
    ASSERT_OK(acltdtGetDimsFromItem(it, dims, 4));
    assert_int_equal(dims[0], rows);
    assert_int_equal(dims[1], 3);
    assert_int_equal(acltdtGetDataSizeFromItem(it), (size_t)rows * 3 * sizeof(float));
    const float *f = acltdtGetDataAddrFromItem(it);
    assert_non_null(f);
    for (int64_t i = 0; i < rows * 3; i++)
        assert_true(f[i] == base + (float)i);
    if (eos) {
        acltdtDataItem *end = acltdtGetDataItem(ds, 1);
        assert_int_equal(acltdtGetTensorTypeFromItem(end), ACL_TENSOR_DATA_END_OF_SEQUENCE);
        assert_int_equal(acltdtGetDataSizeFromItem(end), 0);
        assert_null(acltdtGetDataAddrFromItem(end));
    }
}

/* ---- data items and datasets ----------------------------------------------------- */

static void test_items_and_datasets(void **state)
{
    (void)state;
    float buf[6];
    acltdtDataset *ds = make_dataset(buf, 2, 1.0f, true);
    acltdtDataItem *it = acltdtGetDataItem(ds, 0);
    assert_ptr_equal(acltdtGetDataAddrFromItem(it), buf);
    size_t num = 7, id = 7;
    ASSERT_OK(acltdtGetSliceInfoFromItem(it, &num, &id));
    assert_int_equal(num, 0);
    assert_int_equal(id, 0);
    assert_string_equal(acltdtGetDatasetName(ds), "");
    int64_t dims[2];
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dimNum 1 cannot be less", acltdtGetDimsFromItem(it, dims, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dims is NULL", acltdtGetDimsFromItem(it, NULL, 2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dimNum is 0", acltdtGetDimsFromItem(it, dims, 0));
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "index 2", acltdtGetDataItem(ds, 2));

    /* Bad items, as CANN's checks. */
    int64_t d3[3] = {1, 2, 3};
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "dims is NULL",
                acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 2, ACL_FLOAT, buf, 4));
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "dimNum is 0",
                acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, d3, 0, ACL_FLOAT, buf, 4));
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "dimNum 129",
                acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, d3, 129, ACL_FLOAT, buf, 4));
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "dims must be NULL",
                acltdtCreateDataItem(ACL_TENSOR_DATA_ABNORMAL, d3, 3, ACL_FLOAT, NULL, 0));
    /* A control item keeps no shape or data type. */
    acltdtDataItem *ab = acltdtCreateDataItem(ACL_TENSOR_DATA_ABNORMAL, NULL, 0, ACL_FLOAT, buf, 8);
    assert_int_equal(acltdtGetDataTypeFromItem(ab), ACL_DT_UNDEFINED);
    assert_int_equal(acltdtGetDataSizeFromItem(ab), 0);
    ASSERT_OK(acltdtDestroyDataItem(ab));

    /* NULL arguments. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataItem is NULL", acltdtDestroyDataItem(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataset is NULL", acltdtDestroyDataset(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataset is NULL", acltdtAddDataItem(NULL, it));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataItem is NULL", acltdtAddDataItem(ds, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "sliceNum is NULL", acltdtGetSliceInfoFromItem(it, NULL, &id));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "sliceId is NULL", acltdtGetSliceInfoFromItem(it, &num, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataItem is NULL", acltdtGetSliceInfoFromItem(NULL, &num, &id));
    assert_int_equal(acltdtGetTensorTypeFromItem(NULL), ACL_TENSOR_DATA_UNDEFINED);
    expect_msg("dataItem is NULL");
    assert_int_equal(acltdtGetDataTypeFromItem(NULL), ACL_DT_UNDEFINED);
    expect_msg("dataItem is NULL");
    assert_null(acltdtGetDataAddrFromItem(NULL));
    expect_msg("dataItem is NULL");
    assert_int_equal(acltdtGetDataSizeFromItem(NULL), 0);
    expect_msg("dataItem is NULL");
    assert_int_equal(acltdtGetDimNumFromItem(NULL), 0);
    expect_msg("dataItem is NULL");
    assert_int_equal(acltdtGetDatasetSize(NULL), 0);
    expect_msg("dataset is NULL");
    assert_null(acltdtGetDatasetName(NULL));
    expect_msg("dataset is NULL");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataItem is NULL", acltdtGetDimsFromItem(NULL, dims, 2));

    /* Host and device data cannot be mixed in one dataset. */
    void *dev;
    ASSERT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    acltdtDataItem *on_dev = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, d3, 1, ACL_INT8, dev, 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "all host or all device", acltdtAddDataItem(ds, on_dev));
    assert_int_equal(acltdtGetDatasetSize(ds), 2);   /* left as it was */
    ASSERT_OK(acltdtDestroyDataItem(on_dev));
    ASSERT_OK(aclrtFree(dev));
    free_dataset(ds);
}

/* ---- channels -------------------------------------------------------------------- */

static void test_channel_round_trip(void **state)
{
    (void)state;
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "round-trip", 4);
    assert_non_null(ch);
    float a[12], b[3];
    acltdtDataset *s1 = make_dataset(a, 4, 10.0f, true);
    acltdtDataset *s2 = make_dataset(b, 1, -5.0f, false);
    ASSERT_OK(acltdtSendTensor(ch, s1, 0));
    ASSERT_OK(acltdtSendTensor(ch, s2, 1000));
    a[0] = 999.0f;   /* sent datasets are copies */
    size_t size = 0;
    ASSERT_OK(acltdtQueryChannelSize(ch, &size));
    assert_int_equal(size, 2);

    acltdtDataset *r = acltdtCreateDataset();
    ASSERT_OK(acltdtReceiveTensor(ch, r, -1));
    check_received(r, 4, 10.0f, true);
    /* Received items belong to the dataset. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "belongs to the dataset",
               acltdtDestroyDataItem(acltdtGetDataItem(r, 0)));
    EXPECT_ERR(ACL_ERROR_FEATURE_UNSUPPORTED, "received items",
               acltdtAddDataItem(r, acltdtGetDataItem(s2, 0)));
    /* A receive needs an empty dataset; the message stays queued. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "must be empty", acltdtReceiveTensor(ch, r, 0));
    ASSERT_OK(acltdtQueryChannelSize(ch, &size));
    assert_int_equal(size, 1);
    ASSERT_OK(acltdtDestroyDataset(r));
    r = acltdtCreateDataset();
    ASSERT_OK(acltdtReceiveTensor(ch, r, 0));
    check_received(r, 1, -5.0f, false);
    ASSERT_OK(acltdtDestroyDataset(r));

    /* An empty dataset travels too. */
    acltdtDataset *empty = acltdtCreateDataset();
    ASSERT_OK(acltdtSendTensor(ch, empty, 0));
    r = acltdtCreateDataset();
    ASSERT_OK(acltdtReceiveTensor(ch, r, 0));
    assert_int_equal(acltdtGetDatasetSize(r), 0);
    ASSERT_OK(acltdtDestroyDataset(r));
    ASSERT_OK(acltdtDestroyDataset(empty));

    /* Device memory is sent too; an item claiming more than its allocation is refused. */
    void *dev;
    ASSERT_OK(aclrtMalloc(&dev, 12, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMemcpy(dev, 12, b, 12, ACL_MEMCPY_HOST_TO_DEVICE));
    int64_t one[2] = {1, 3};
    acltdtDataItem *on_dev = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, one, 2, ACL_FLOAT, dev, 12);
    acltdtDataItem *too_big = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, one, 2, ACL_FLOAT, dev, 16);
    acltdtDataset *dset = acltdtCreateDataset();
    ASSERT_OK(acltdtAddDataItem(dset, on_dev));
    ASSERT_OK(acltdtSendTensor(ch, dset, 0));
    r = acltdtCreateDataset();
    ASSERT_OK(acltdtReceiveTensor(ch, r, 0));
    check_received(r, 1, -5.0f, false);
    ASSERT_OK(acltdtDestroyDataset(r));
    ASSERT_OK(acltdtAddDataItem(dset, too_big));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "an item's data", acltdtSendTensor(ch, dset, 0));
    free_dataset(dset);
    ASSERT_OK(aclrtFree(dev));

    /* Only tensor, end-of-sequence and abnormal items can be sent. */
    acltdtDataset *bad = acltdtCreateDataset();
    acltdtDataItem *slice = acltdtCreateDataItem(ACL_TENSOR_DATA_SLICE_TENSOR, NULL, 0, ACL_FLOAT, NULL, 0);
    ASSERT_OK(acltdtAddDataItem(bad, slice));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "SLICE_TENSOR", acltdtSendTensor(ch, bad, 0));
    free_dataset(bad);
    ASSERT_OK(acltdtQueryChannelSize(ch, &size));
    assert_int_equal(size, 0);

    free_dataset(s1);
    free_dataset(s2);
    ASSERT_OK(acltdtStopChannel(ch));
    ASSERT_OK(acltdtDestroyChannel(ch));
}

static void test_channel_full_empty_timeouts(void **state)
{
    (void)state;
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "small", 2);
    assert_non_null(ch);
    float buf[3];
    acltdtDataset *ds = make_dataset(buf, 1, 0.0f, false);
    ASSERT_OK(acltdtSendTensor(ch, ds, 0));
    ASSERT_OK(acltdtSendTensor(ch, ds, 0));
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_FULL, "is full", acltdtSendTensor(ch, ds, 0));
    uint64_t t0 = now_ms();
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_FULL, "timed out", acltdtSendTensor(ch, ds, 60));
    uint64_t waited = now_ms() - t0;
    assert_true(waited >= 55 && waited < WAIT_MS);
    for (int i = 0; i < 2; i++) {
        acltdtDataset *r = acltdtCreateDataset();
        ASSERT_OK(acltdtReceiveTensor(ch, r, 0));
        ASSERT_OK(acltdtDestroyDataset(r));
    }
    acltdtDataset *r = acltdtCreateDataset();
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_EMPTY, "is empty", acltdtReceiveTensor(ch, r, 0));
    t0 = now_ms();
    EXPECT_ERR(ACL_ERROR_RT_QUEUE_EMPTY, "timed out", acltdtReceiveTensor(ch, r, 40));
    waited = now_ms() - t0;
    assert_true(waited >= 35 && waited < WAIT_MS);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout -2", acltdtReceiveTensor(ch, r, -2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "timeout -7", acltdtSendTensor(ch, ds, -7));
    ASSERT_OK(acltdtDestroyDataset(r));
    free_dataset(ds);
    ASSERT_OK(acltdtDestroyChannel(ch));
}

/* A send or receive on a helper thread. */
struct xfer {
    const acltdtChannelHandle *ch;
    acltdtDataset *ds;
    int32_t timeout;
    bool send;
    aclError result;
    char msg[256];
};

static void xfer_fn(void *arg)
{
    struct xfer *x = arg;
    x->result = x->send ? acltdtSendTensor(x->ch, x->ds, x->timeout)
                        : acltdtReceiveTensor(x->ch, x->ds, x->timeout);
    const char *m = aclGetRecentErrMsg();
    snprintf(x->msg, sizeof x->msg, "%s", m ? m : "");
}

static void test_blocked_sides_release_each_other(void **state)
{
    (void)state;
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "release", 2);
    float buf[3];
    acltdtDataset *ds = make_dataset(buf, 1, 3.0f, false);
    ASSERT_OK(acltdtSendTensor(ch, ds, 0));
    ASSERT_OK(acltdtSendTensor(ch, ds, 0));
    /* A sender blocked on a full channel goes on when a receive makes room. */
    struct xfer x = {.ch = ch, .ds = ds, .timeout = -1, .send = true};
    struct call c;
    call_start(&c, xfer_fn, &x);
    assert_false(call_wait(&c, 50));
    acltdtDataset *r = acltdtCreateDataset();
    ASSERT_OK(acltdtReceiveTensor(ch, r, 0));
    ASSERT_OK(acltdtDestroyDataset(r));
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(x.result);
    /* The same with a finite timeout. */
    x.timeout = WAIT_MS;
    call_start(&c, xfer_fn, &x);
    assert_false(call_wait(&c, 50));
    ASSERT_OK(acltdtCleanChannel(ch));   /* cleaning makes room too */
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(x.result);
    size_t size;
    ASSERT_OK(acltdtQueryChannelSize(ch, &size));
    assert_int_equal(size, 1);
    ASSERT_OK(acltdtCleanChannel(ch));
    /* A receiver blocked on an empty channel gets the next dataset. */
    struct xfer y = {.ch = ch, .ds = acltdtCreateDataset(), .timeout = -1};
    call_start(&c, xfer_fn, &y);
    assert_false(call_wait(&c, 50));
    ASSERT_OK(acltdtSendTensor(ch, ds, 0));
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(y.result);
    check_received(y.ds, 1, 3.0f, false);
    ASSERT_OK(acltdtDestroyDataset(y.ds));
    free_dataset(ds);
    ASSERT_OK(acltdtDestroyChannel(ch));
}

static void test_stop_wakes_blocked(void **state)
{
    (void)state;
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "stop", 2);
    struct xfer y = {.ch = ch, .ds = acltdtCreateDataset(), .timeout = -1};
    struct call c;
    call_start(&c, xfer_fn, &y);
    assert_false(call_wait(&c, 50));
    ASSERT_OK(acltdtStopChannel(ch));
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(y.result, ACL_ERROR_FAILURE);
    assert_non_null(strstr(y.msg, "stopped"));
    /* Later calls fail at once. */
    float buf[3];
    acltdtDataset *ds = make_dataset(buf, 1, 0.0f, false);
    EXPECT_ERR(ACL_ERROR_FAILURE, "stopped", acltdtSendTensor(ch, ds, -1));
    EXPECT_ERR(ACL_ERROR_FAILURE, "stopped", acltdtReceiveTensor(ch, y.ds, -1));
    ASSERT_OK(acltdtStopChannel(ch));   /* again: still fine */
    ASSERT_OK(acltdtDestroyChannel(ch));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "not a live channel", acltdtSendTensor(ch, ds, 0));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "not a live channel", acltdtDestroyChannel(ch));
    ASSERT_OK(acltdtDestroyDataset(y.ds));
    free_dataset(ds);
}

static void test_handles_share_a_name(void **state)
{
    (void)state;
    acltdtChannelHandle *a = acltdtCreateChannelWithCapacity(0, "shared", 3);
    acltdtChannelHandle *b = acltdtCreateChannelWithCapacity(0, "shared", 3);
    acltdtChannelHandle *other = acltdtCreateChannelWithCapacity(1, "shared", 3);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(other);
    assert_ptr_not_equal(a, b);
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "exists with capacity 3",
                acltdtCreateChannelWithCapacity(0, "shared", 5));
    float buf[3];
    acltdtDataset *ds = make_dataset(buf, 1, 7.0f, false);
    ASSERT_OK(acltdtSendTensor(a, ds, 0));
    size_t size;
    ASSERT_OK(acltdtQueryChannelSize(b, &size));
    assert_int_equal(size, 1);
    ASSERT_OK(acltdtQueryChannelSize(other, &size));   /* another device: another channel */
    assert_int_equal(size, 0);
    acltdtDataset *r = acltdtCreateDataset();
    ASSERT_OK(acltdtReceiveTensor(b, r, 0));
    check_received(r, 1, 7.0f, false);
    ASSERT_OK(acltdtDestroyDataset(r));
    /* Destroying one handle keeps the channel; the last one wakes its waiters. */
    ASSERT_OK(acltdtDestroyChannel(a));
    ASSERT_OK(acltdtSendTensor(b, ds, 0));
    ASSERT_OK(acltdtCleanChannel(b));
    struct xfer y = {.ch = b, .ds = acltdtCreateDataset(), .timeout = -1};
    struct call c;
    call_start(&c, xfer_fn, &y);
    assert_false(call_wait(&c, 50));
    ASSERT_OK(acltdtDestroyChannel(b));
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(y.result, ACL_ERROR_FAILURE);
    assert_non_null(strstr(y.msg, "destroyed"));
    ASSERT_OK(acltdtDestroyDataset(y.ds));
    ASSERT_OK(acltdtDestroyChannel(other));
    free_dataset(ds);
}

static void test_device_reset_wakes_blocked(void **state)
{
    (void)state;
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "reset", 2);
    struct xfer y = {.ch = ch, .ds = acltdtCreateDataset(), .timeout = -1};
    struct call c;
    call_start(&c, xfer_fn, &y);
    assert_false(call_wait(&c, 50));
    ASSERT_OK(aclrtResetDeviceForce(0));
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(y.result, ACL_ERROR_FAILURE);
    assert_non_null(strstr(y.msg, "device 0 was reset"));
    size_t size;
    EXPECT_ERR(ACL_ERROR_FAILURE, "was reset", acltdtQueryChannelSize(ch, &size));
    /* A new channel of that name is a new one. */
    acltdtChannelHandle *fresh = acltdtCreateChannelWithCapacity(0, "reset", 2);
    ASSERT_OK(acltdtQueryChannelSize(fresh, &size));
    assert_int_equal(size, 0);
    ASSERT_OK(acltdtDestroyChannel(ch));
    ASSERT_OK(acltdtDestroyChannel(fresh));
    ASSERT_OK(acltdtDestroyDataset(y.ds));
    ASSERT_OK(aclrtSetDevice(0));
}

static void test_finalize_wakes_blocked(void **state)
{
    (void)state;
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(1, "finalize", 2);
    acltdtChannelHandle *left = acltdtCreateChannelWithCapacity(1, "left", 2);
    assert_non_null(left);
    struct xfer y = {.ch = ch, .ds = acltdtCreateDataset(), .timeout = -1};
    struct call c;
    call_start(&c, xfer_fn, &y);
    assert_false(call_wait(&c, 50));
    ASSERT_OK(aclFinalize());
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(y.result, ACL_ERROR_FAILURE);
    assert_non_null(strstr(y.msg, "aclFinalize"));
    /* Every channel went with the session (no leak of "left" under ASan). */
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, acltdtDestroyChannel(ch));
    ASSERT_OK(aclInit(NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "not a live channel", acltdtDestroyChannel(left));
    ASSERT_OK(acltdtDestroyDataset(y.ds));
}

/* A host function blocked on a channel of another device: its own device's
 * reset (which drains its stream) interrupts the wait instead of hanging, and
 * so does aclFinalize. */
static struct xfer host_xfer;
static void host_receive(void *arg)
{
    (void)arg;
    xfer_fn(&host_xfer);
}

static void reset_device0(void *arg)
{
    *(aclError *)arg = aclrtResetDeviceForce(0);
}

/* Starts to wait only once the reset of its device has begun. */
static void late_host_receive(void *arg)
{
    (void)arg;
    sleep_ms(150);
    xfer_fn(&host_xfer);
}

static void reset_device0_gently(void *arg)
{
    *(aclError *)arg = aclrtResetDevice(0);   /* drains: waits for the host function */
}

static void finalize_fn(void *arg)
{
    *(aclError *)arg = aclFinalize();
}

static void test_host_function_waits_end(void **state)
{
    (void)state;
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(1, "host", 2);
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    host_xfer = (struct xfer){.ch = ch, .ds = acltdtCreateDataset(), .timeout = -1};
    ASSERT_OK(aclrtLaunchHostFunc(s, host_receive, NULL));
    sleep_ms(50);
    aclError rc = -1;
    struct call c;
    call_start(&c, reset_device0, &rc);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(rc);
    assert_int_equal(host_xfer.result, ACL_ERROR_FAILURE);
    assert_non_null(strstr(host_xfer.msg, "device 0 is being reset"));
    ASSERT_OK(acltdtDestroyDataset(host_xfer.ds));
    /* A host function that starts to wait while its device is being reset. */
    ASSERT_OK(aclrtSetDevice(0));
    ASSERT_OK(aclrtCreateStream(&s));
    host_xfer = (struct xfer){.ch = ch, .ds = acltdtCreateDataset(), .timeout = -1};
    ASSERT_OK(aclrtLaunchHostFunc(s, late_host_receive, NULL));
    sleep_ms(30);
    call_start(&c, reset_device0_gently, &rc);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(rc);
    assert_int_equal(host_xfer.result, ACL_ERROR_FAILURE);
    assert_non_null(strstr(host_xfer.msg, "device 0 is being reset"));
    ASSERT_OK(acltdtDestroyDataset(host_xfer.ds));
    /* The channel (device 1) is untouched. */
    size_t size;
    ASSERT_OK(acltdtQueryChannelSize(ch, &size));
    /* aclFinalize with a host function blocked on the channel. */
    ASSERT_OK(aclrtSetDevice(0));
    ASSERT_OK(aclrtCreateStream(&s));
    host_xfer = (struct xfer){.ch = ch, .ds = acltdtCreateDataset(), .timeout = -1};
    ASSERT_OK(aclrtLaunchHostFunc(s, host_receive, NULL));
    sleep_ms(50);
    call_start(&c, finalize_fn, &rc);
    assert_true(call_wait(&c, WAIT_MS));
    ASSERT_OK(rc);
    assert_int_equal(host_xfer.result, ACL_ERROR_FAILURE);
    ASSERT_OK(acltdtDestroyDataset(host_xfer.ds));
    ASSERT_OK(aclInit(NULL));
}

/* A producer thread sends ROUNDS datasets numbered 0.. through a small
 * channel; the consumer checks each one's number and bytes. */
#define ROUNDS 2000
struct pc { acltdtChannelHandle *ch; atomic_int errors; char first[256]; };

static void *producer(void *arg)
{
    struct pc *p = arg;
    for (int i = 0; i < ROUNDS; i++) {
        uint32_t words[17];
        for (int k = 0; k < 17; k++)
            words[k] = (uint32_t)i * 31u + (uint32_t)k;
        int64_t dims[1] = {17};
        acltdtDataset *ds = acltdtCreateDataset();
        acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_UINT32,
                                                  words, sizeof words);
        if (acltdtAddDataItem(ds, it) || acltdtSendTensor(p->ch, ds, i % 2 ? -1 : WAIT_MS))
            note_first_error(&p->errors, p->first, sizeof p->first, "send %d", i);
        acltdtDestroyDataItem(it);
        acltdtDestroyDataset(ds);
    }
    return NULL;
}

static void test_producer_consumer(void **state)
{
    (void)state;
    watchdog_start();
    struct pc p = {.ch = acltdtCreateChannelWithCapacity(0, "pc", 3)};
    assert_non_null(p.ch);
    watchdog_arm(0, "tdt producer/consumer", 0, 60);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, producer, &p), 0);
    for (int i = 0; i < ROUNDS; i++) {
        acltdtDataset *r = acltdtCreateDataset();
        aclError err = acltdtReceiveTensor(p.ch, r, i % 3 ? WAIT_MS : -1);
        if (err) {
            pthread_join(t, NULL);
            fail_msg("receive %d: %d (%s); producer: %s", i, err, aclGetRecentErrMsg(), p.first);
        }
        acltdtDataItem *it = acltdtGetDataItem(r, 0);
        const uint32_t *w = acltdtGetDataAddrFromItem(it);
        assert_int_equal(acltdtGetDataSizeFromItem(it), 17 * sizeof(uint32_t));
        for (int k = 0; k < 17; k++)
            assert_int_equal(w[k], (uint32_t)i * 31u + (uint32_t)k);
        ASSERT_OK(acltdtDestroyDataset(r));
    }
    pthread_join(t, NULL);
    watchdog_disarm(0);
    assert_int_equal(atomic_load(&p.errors), 0);
    ASSERT_OK(acltdtDestroyChannel(p.ch));
}

/* Many threads create, use and destroy channels of a few names while others
 * stop and clean them: no crash, no hang, every call gets a defined code. */
static void *churn(void *arg)
{
    atomic_int *errors = arg;
    char name[16];
    float buf[3] = {1, 2, 3};
    int64_t dims[1] = {3};
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "churn%d", i % 3);
        acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, name, 4);
        if (!ch) {
            atomic_fetch_add(errors, 1);
            continue;
        }
        acltdtDataset *ds = acltdtCreateDataset();
        acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_FLOAT, buf,
                                                  sizeof buf);
        acltdtAddDataItem(ds, it);
        aclError e = acltdtSendTensor(ch, ds, 1);
        if (e && e != ACL_ERROR_RT_QUEUE_FULL && e != ACL_ERROR_FAILURE)
            atomic_fetch_add(errors, 1);
        acltdtDataset *r = acltdtCreateDataset();
        e = acltdtReceiveTensor(ch, r, 1);
        if (e && e != ACL_ERROR_RT_QUEUE_EMPTY && e != ACL_ERROR_FAILURE)
            atomic_fetch_add(errors, 1);
        if (i % 50 == 49)
            acltdtStopChannel(ch);
        if (i % 7 == 0)
            acltdtCleanChannel(ch);
        acltdtDestroyDataset(r);
        acltdtDestroyDataItem(it);
        acltdtDestroyDataset(ds);
        if (acltdtDestroyChannel(ch))
            atomic_fetch_add(errors, 1);
    }
    return NULL;
}

static void test_channel_churn(void **state)
{
    (void)state;
    watchdog_start();
    watchdog_arm(0, "tdt channel churn", 0, 60);
    atomic_int errors = 0;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, &errors), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    watchdog_disarm(0);
    assert_int_equal(atomic_load(&errors), 0);
}

/* Threads make channels, queues and buffers while aclFinalize and aclInit
 * alternate: no crash, no hang, and nothing is left over from an earlier
 * session (a channel or queue of the name left behind would refuse the new
 * one below). The window of the session check itself (a create that passed
 * its initialized check while aclFinalize tears down) is too narrow to be
 * hit reliably here; this is a stress test around it. */
static atomic_bool race_stop;

static void *racer(void *arg)
{
    (void)arg;
    const char *name = "race";
    while (!atomic_load(&race_stop)) {
        (void)acltdtCreateChannelWithCapacity(0, name, 2);   /* kept: aclFinalize frees it */
        if (aclrtSetDevice(0) == ACL_SUCCESS) {
            acltdtQueueAttr *attr = acltdtCreateQueueAttr();
            uint32_t qid;
            if (attr && acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof name, &name) == 0)
                (void)acltdtCreateQueue(attr, &qid);
            acltdtDestroyQueueAttr(attr);
        }
        aclrtMbuf b;
        (void)aclrtAllocBuf(&b, 64);
    }
    return NULL;
}

static void test_create_races_finalize(void **state)
{
    (void)state;
    watchdog_start();
    watchdog_arm(0, "tdt create vs aclFinalize", 0, 120);
    atomic_store(&race_stop, false);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, racer, NULL), 0);
    for (int round = 0; round < 30; round++) {
        sleep_ms(3);
        ASSERT_OK(aclFinalize());
        ASSERT_OK(aclInit(NULL));
    }
    atomic_store(&race_stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    ASSERT_OK(aclFinalize());
    ASSERT_OK(aclInit(NULL));
    watchdog_disarm(0);
    ASSERT_OK(aclrtSetDevice(0));
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "race", 3);
    assert_non_null(ch);
    ASSERT_OK(acltdtDestroyChannel(ch));
    const char *name = "race";
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    ASSERT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof name, &name));
    uint32_t qid;
    ASSERT_OK(acltdtCreateQueue(attr, &qid));
    ASSERT_OK(acltdtDestroyQueue(qid));
    ASSERT_OK(acltdtDestroyQueueAttr(attr));
}

static void test_channel_bad_inputs(void **state)
{
    (void)state;
    char longname[200];
    memset(longname, 'n', sizeof longname);
    longname[128] = '\0';
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "name is NULL", acltdtCreateChannelWithCapacity(0, NULL, 4));
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "too long", acltdtCreateChannelWithCapacity(0, longname, 4));
    longname[127] = '\0';
    acltdtChannelHandle *ok = acltdtCreateChannelWithCapacity(0, longname, 2);
    assert_non_null(ok);
    ASSERT_OK(acltdtDestroyChannel(ok));
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "capacity 1", acltdtCreateChannelWithCapacity(0, "c", 1));
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "capacity 8193", acltdtCreateChannelWithCapacity(0, "c", 8193));
    ok = acltdtCreateChannelWithCapacity(0, "c", 8192);
    assert_non_null(ok);
    EXPECT_NULL(ACL_ERROR_RT_INVALID_DEVICEID, "deviceId 9", acltdtCreateChannelWithCapacity(9, "c", 4));
    EXPECT_NULL(ACL_ERROR_INVALID_PARAM, "name is NULL", acltdtCreateChannel(0, NULL));
    /* acltdtCreateChannel: Atlas training series only. */
    EXPECT_NULL(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported on Ascend910B1",
                acltdtCreateChannel(0, "x"));
    acltdtDataset *ds = acltdtCreateDataset();
    size_t size;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle is NULL", acltdtSendTensor(NULL, ds, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataset is NULL", acltdtSendTensor(ok, NULL, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle is NULL", acltdtReceiveTensor(NULL, ds, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataset is NULL", acltdtReceiveTensor(ok, NULL, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle is NULL", acltdtQueryChannelSize(NULL, &size));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size is NULL", acltdtQueryChannelSize(ok, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle is NULL", acltdtStopChannel(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle is NULL", acltdtCleanChannel(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle is NULL", acltdtDestroyChannel(NULL));
    acltdtChannelHandle *forged = (acltdtChannelHandle *)(uintptr_t)0x1234560;
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "not a live channel", acltdtStopChannel(forged));
    ASSERT_OK(acltdtDestroyChannel(ok));
    ASSERT_OK(acltdtDestroyDataset(ds));

    /* Products: 950/A3/A2/training only. */
    restart_gated("Ascend310P3");
    EXPECT_NULL(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310P3",
                acltdtCreateChannelWithCapacity(0, "c", 4));
    restart_gated("IPV350");
    EXPECT_NULL(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", acltdtCreateChannelWithCapacity(0, "c", 4));
    restart_gated("Ascend910_9391");
    ok = acltdtCreateChannelWithCapacity(0, "c", 4);
    assert_non_null(ok);
    ASSERT_OK(acltdtDestroyChannel(ok));
}

/* CANN's TDT channels (Atlas training series): timeouts -1 only; a channel
 * "TF_RECEIVE_x" receives what "x" sends. */
static void test_tdt_channels_training(void **state)
{
    (void)state;
    restart_gated("Ascend910A");
    acltdtChannelHandle *tx = acltdtCreateChannel(0, "feed");
    acltdtChannelHandle *rx = acltdtCreateChannel(0, "TF_RECEIVE_feed");
    assert_non_null(tx);
    assert_non_null(rx);
    float buf[6];
    acltdtDataset *ds = make_dataset(buf, 2, 4.0f, true);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "only waits forever", acltdtSendTensor(tx, ds, 0));
    ASSERT_OK(acltdtSendTensor(tx, ds, -1));
    acltdtDataset *r = acltdtCreateDataset();
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a receive channel", acltdtReceiveTensor(tx, r, -1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "only waits forever", acltdtReceiveTensor(rx, r, 100));
    ASSERT_OK(acltdtReceiveTensor(rx, r, -1));
    check_received(r, 2, 4.0f, true);
    ASSERT_OK(acltdtDestroyDataset(r));
    size_t size;
    EXPECT_ERR(ACL_ERROR_FEATURE_UNSUPPORTED, "acltdtCreateChannelWithCapacity",
               acltdtQueryChannelSize(rx, &size));
    EXPECT_ERR(ACL_ERROR_FEATURE_UNSUPPORTED, "acltdtCreateChannelWithCapacity",
               acltdtCleanChannel(rx));
    /* A blocked receive ends with acltdtStopChannel. */
    struct xfer y = {.ch = rx, .ds = acltdtCreateDataset(), .timeout = -1};
    struct call c;
    call_start(&c, xfer_fn, &y);
    assert_false(call_wait(&c, 50));
    ASSERT_OK(acltdtStopChannel(rx));
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(y.result, ACL_ERROR_FAILURE);
    ASSERT_OK(acltdtDestroyDataset(y.ds));
    ASSERT_OK(acltdtDestroyChannel(tx));
    ASSERT_OK(acltdtDestroyChannel(rx));
    free_dataset(ds);
}

/* ---- shared buffers ------------------------------------------------------------------ */

static void test_buffers(void **state)
{
    (void)state;
    aclrtMbuf b;
    ASSERT_OK(aclrtAllocBuf(&b, 100));
    void *data;
    size_t size, len = 7;
    ASSERT_OK(aclrtGetBufData(b, &data, &size));
    assert_int_equal(size, 100);
    ASSERT_OK(aclrtGetBufDataLen(b, &len));
    assert_int_equal(len, 0);
    memset(data, 0xab, 100);
    ASSERT_OK(aclrtSetBufDataLen(b, 60));
    ASSERT_OK(aclrtGetBufDataLen(b, &len));
    assert_int_equal(len, 60);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "len 101", aclrtSetBufDataLen(b, 101));
    /* 96 bytes of private data. */
    unsigned char in[96], out[96];
    for (int i = 0; i < 96; i++)
        in[i] = (unsigned char)i;
    ASSERT_OK(aclrtSetBufUserData(b, in, 96, 0));
    ASSERT_OK(aclrtSetBufUserData(b, in, 8, 88));
    ASSERT_OK(aclrtGetBufUserData(b, out, 8, 88));
    assert_memory_equal(out, in, 8);
    ASSERT_OK(aclrtGetBufUserData(b, out, 80, 0));
    assert_memory_equal(out, in, 80);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "96 bytes", aclrtSetBufUserData(b, in, 9, 88));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "96 bytes", aclrtGetBufUserData(b, out, 1, 96));
    /* A reference shares the data and copies length and private data. */
    aclrtMbuf ref;
    ASSERT_OK(aclrtCopyBufRef(b, &ref));
    void *rdata;
    ASSERT_OK(aclrtGetBufData(ref, &rdata, &size));
    assert_ptr_equal(rdata, data);
    ASSERT_OK(aclrtGetBufDataLen(ref, &len));
    assert_int_equal(len, 60);
    ASSERT_OK(aclrtFreeBuf(b));
    assert_int_equal(((unsigned char *)rdata)[99], 0xab);   /* still alive through ref */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a live shared buffer", aclrtGetBufData(b, &data, &size));
    ASSERT_OK(aclrtFreeBuf(ref));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a live shared buffer", aclrtFreeBuf(ref));

    /* Chains. */
    aclrtMbuf h, c[3];
    ASSERT_OK(aclrtAllocBuf(&h, 8));
    uint32_t num = 0;
    ASSERT_OK(aclrtGetBufChainNum(h, &num));
    assert_int_equal(num, 1);
    for (int i = 0; i < 3; i++) {
        ASSERT_OK(aclrtAllocBuf(&c[i], 16));
        ASSERT_OK(aclrtAppendBufChain(h, c[i]));
    }
    ASSERT_OK(aclrtGetBufChainNum(h, &num));
    assert_int_equal(num, 4);
    aclrtMbuf got;
    ASSERT_OK(aclrtGetBufFromChain(h, 0, &got));
    assert_ptr_equal(got, h);
    ASSERT_OK(aclrtGetBufFromChain(h, 2, &got));
    assert_ptr_equal(got, c[1]);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "index 4", aclrtGetBufFromChain(h, 4, &got));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "already in a chain", aclrtAppendBufChain(h, c[0]));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "headBuf itself", aclrtAppendBufChain(h, h));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not the head", aclrtAppendBufChain(c[0], c[1]));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "free that chain's head", aclrtFreeBuf(c[2]));
    ASSERT_OK(aclrtFreeBuf(h));   /* frees the chain */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a live", aclrtGetBufChainNum(c[1], &num));
    /* At most 128 buffers a chain. */
    ASSERT_OK(aclrtAllocBuf(&h, 1));
    for (int i = 1; i < 128; i++) {
        aclrtMbuf x;
        ASSERT_OK(aclrtAllocBuf(&x, 1));
        ASSERT_OK(aclrtAppendBufChain(h, x));
    }
    aclrtMbuf extra;
    ASSERT_OK(aclrtAllocBuf(&extra, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "128", aclrtAppendBufChain(h, extra));
    ASSERT_OK(aclrtFreeBuf(h));
    /* Bad inputs. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "buf is NULL", aclrtAllocBuf(NULL, 8));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size is 0", aclrtAllocBuf(&b, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "4 GiB", aclrtAllocBuf(&b, ((size_t)4 << 30) + 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "buf is NULL", aclrtFreeBuf(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataPtr is NULL", aclrtGetBufData(extra, NULL, &size));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size is NULL", aclrtGetBufData(extra, &data, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "len is NULL", aclrtGetBufDataLen(extra, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataPtr is NULL", aclrtSetBufUserData(extra, NULL, 1, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "newBuf is NULL", aclrtCopyBufRef(extra, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "num is NULL", aclrtGetBufChainNum(extra, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "headBuf is NULL", aclrtAppendBufChain(NULL, extra));
    ASSERT_OK(aclrtFreeBuf(extra));
    /* Left unfreed: aclFinalize frees it (the ASan build checks). */
    ASSERT_OK(aclrtAllocBuf(&b, 32));
}

static void test_tdt_buffers_per_product(void **state)
{
    (void)state;
    acltdtBuf b;
    /* Argument checks first, then the product (Atlas 200I/500 A2 only). */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "type 2", acltdtAllocBuf(8, 2, &b));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "buf is NULL", acltdtAllocBuf(8, ACL_TDT_NORMAL_MEM, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B1", acltdtAllocBuf(8, ACL_TDT_NORMAL_MEM, &b));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "buf is NULL", acltdtFreeBuf(NULL));
    restart_gated("Ascend310B1");
    ASSERT_OK(acltdtAllocBuf(8, ACL_TDT_DVPP_MEM, &b));
    acltdtBuf b2;
    ASSERT_OK(acltdtAllocBuf(4, ACL_TDT_NORMAL_MEM, &b2));
    ASSERT_OK(acltdtAppendBufChain(b, b2));
    uint32_t num;
    ASSERT_OK(acltdtGetBufChainNum(b, &num));
    assert_int_equal(num, 2);
    acltdtBuf got;
    ASSERT_OK(acltdtGetBufFromChain(b, 1, &got));
    assert_ptr_equal(got, b2);
    void *data;
    size_t size, len;
    ASSERT_OK(acltdtGetBufData(b2, &data, &size));
    assert_int_equal(size, 4);
    ASSERT_OK(acltdtSetBufDataLen(b2, 3));
    ASSERT_OK(acltdtGetBufDataLen(b2, &len));
    assert_int_equal(len, 3);
    uint64_t v = 0x1122334455667788ull, w = 0;
    ASSERT_OK(acltdtSetBufUserData(b2, &v, sizeof v, 8));
    ASSERT_OK(acltdtGetBufUserData(b2, &w, sizeof w, 8));
    assert_true(v == w);
    acltdtBuf ref;
    ASSERT_OK(acltdtCopyBufRef(b2, &ref));
    /* The aclrt* and acltdt* functions work on the same buffers. */
    ASSERT_OK(aclrtFreeBuf(ref));
    ASSERT_OK(acltdtFreeBuf(b));
}

static void test_uninitialized(void **state)
{
    (void)state;
    aclrtMbuf b;
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, aclrtAllocBuf(&b, 8));
    EXPECT_NULL(ACL_ERROR_UNINITIALIZE, "aclInit", acltdtCreateChannelWithCapacity(0, "x", 4));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, acltdtStopChannel((acltdtChannelHandle *)(uintptr_t)16));
    /* Data items and datasets are host objects that need no runtime (as CANN). */
    acltdtDataset *ds = acltdtCreateDataset();
    assert_non_null(ds);
    ASSERT_OK(acltdtDestroyDataset(ds));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_gated, teardown_gated)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_uninitialized, setup_clean, teardown_clean),
        T(test_items_and_datasets),
        T(test_channel_round_trip),
        T(test_channel_full_empty_timeouts),
        T(test_blocked_sides_release_each_other),
        T(test_stop_wakes_blocked),
        T(test_handles_share_a_name),
        T(test_device_reset_wakes_blocked),
        T(test_finalize_wakes_blocked),
        T(test_host_function_waits_end),
        T(test_producer_consumer),
        T(test_channel_churn),
        T(test_create_races_finalize),
        T(test_channel_bad_inputs),
        T(test_tdt_channels_training),
        T(test_buffers),
        T(test_tdt_buffers_per_product),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
