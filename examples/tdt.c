/*
 * Data transmission (docs/tdt.md): an input pipeline as CANN programs write
 * it, on the simulated devices.
 *
 *  1. A loader thread sends batches (a float tensor [rows, 4] each, then an
 *     end-of-sequence item) through a tensor channel of capacity 3; the main
 *     thread receives them, copies each to device memory and back, and checks
 *     every value. The channel's capacity makes the loader wait for the
 *     consumer (back-pressure).
 *  2. A shared queue fans out: two routes bind a source queue to two
 *     destination queues, so each record enqueued once is dequeued from both.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "example-check.h"

#define BATCHES 8
#define ROWS 16
#define COLS 4

static float value_of(int batch, int i) { return (float)(batch * 1000 + i) * 0.5f; }

/* The loader: BATCHES tensors, then the end of the sequence. */
static void *loader(void *arg)
{
    acltdtChannelHandle *ch = arg;
    static float rows[ROWS * COLS];
    int64_t dims[2] = {ROWS, COLS};
    for (int b = 0; b <= BATCHES; b++) {
        acltdtDataset *ds = acltdtCreateDataset();
        acltdtDataItem *item;
        if (b < BATCHES) {
            for (int i = 0; i < ROWS * COLS; i++)
                rows[i] = value_of(b, i);
            item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, rows, sizeof rows);
        } else {
            item = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, NULL, 0, ACL_FLOAT, NULL, 0);
        }
        CHECK(acltdtAddDataItem(ds, item));
        CHECK(acltdtSendTensor(ch, ds, -1));   /* waits while the channel is full */
        CHECK(acltdtDestroyDataItem(item));
        CHECK(acltdtDestroyDataset(ds));
    }
    return NULL;
}

static void channel_pipeline(void)
{
    printf("tensor channel, capacity 3, %d batches:\n", BATCHES);
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "images", 3);
    if (!ch) {
        fprintf(stderr, "acltdtCreateChannelWithCapacity: %s\n", aclGetRecentErrMsg());
        exit(1);
    }
    pthread_t t;
    pthread_create(&t, NULL, loader, ch);
    void *dev;
    CHECK(aclrtMalloc(&dev, ROWS * COLS * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    int batches = 0, bad = 0;
    for (;;) {
        acltdtDataset *ds = acltdtCreateDataset();
        CHECK(acltdtReceiveTensor(ch, ds, 5000));
        acltdtDataItem *item = acltdtGetDataItem(ds, 0);
        if (acltdtGetTensorTypeFromItem(item) == ACL_TENSOR_DATA_END_OF_SEQUENCE) {
            CHECK(acltdtDestroyDataset(ds));
            break;
        }
        size_t bytes = acltdtGetDataSizeFromItem(item);
        CHECK(aclrtMemcpy(dev, bytes, acltdtGetDataAddrFromItem(item), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        float back[ROWS * COLS];
        CHECK(aclrtMemcpy(back, sizeof back, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        for (int i = 0; i < ROWS * COLS; i++)
            bad += back[i] != value_of(batches, i);
        batches++;
        CHECK(acltdtDestroyDataset(ds));   /* and the items it received */
    }
    pthread_join(t, NULL);
    verify(batches == BATCHES, "every batch arrived, in order, before the end of the sequence");
    verify(bad == 0, "every value arrived intact (through device memory and back)");
    CHECK(aclrtFree(dev));
    CHECK(acltdtStopChannel(ch));
    CHECK(acltdtDestroyChannel(ch));
}

static uint32_t queue_named(const char *name, uint32_t depth)
{
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    CHECK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof name, &name));
    CHECK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof depth, &depth));
    uint32_t qid;
    CHECK(acltdtCreateQueue(attr, &qid));
    CHECK(acltdtDestroyQueueAttr(attr));
    return qid;
}

static void queue_fan_out(void)
{
    printf("shared queues, one source routed to two destinations:\n");
    uint32_t src = queue_named("records", 8), a = queue_named("train", 8), b = queue_named("eval", 8);
    acltdtQueueRouteList *routes = acltdtCreateQueueRouteList();
    acltdtQueueRoute *ra = acltdtCreateQueueRoute(src, a), *rb = acltdtCreateQueueRoute(src, b);
    CHECK(acltdtAddQueueRoute(routes, ra));
    CHECK(acltdtAddQueueRoute(routes, rb));
    CHECK(acltdtBindQueueRoutes(routes));
    for (uint32_t i = 0; i < 5; i++) {
        char record[32];
        snprintf(record, sizeof record, "record %u", i);
        CHECK(acltdtEnqueueData(src, record, strlen(record) + 1, &i, sizeof i, 1000, 0));
    }
    int ok = 1;
    for (uint32_t i = 0; i < 5; i++)
        for (int d = 0; d < 2; d++) {
            char record[32], want[32];
            uint32_t tag = 99;
            size_t n;
            CHECK(acltdtDequeueData(d ? b : a, record, sizeof record, &n, &tag, sizeof tag, 1000));
            snprintf(want, sizeof want, "record %u", i);
            ok &= strcmp(record, want) == 0 && tag == i;
        }
    verify(ok, "each record (and its user data) reached both destinations, in order");
    CHECK(acltdtUnbindQueueRoutes(routes));
    CHECK(acltdtDestroyQueueRoute(ra));
    CHECK(acltdtDestroyQueueRoute(rb));
    CHECK(acltdtDestroyQueueRouteList(routes));
    CHECK(acltdtDestroyQueue(src));
    CHECK(acltdtDestroyQueue(a));
    CHECK(acltdtDestroyQueue(b));
}

int main(void)
{
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    channel_pipeline();
    queue_fan_out();
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("%s\n", failures ? "FAILED" : "all checks passed");
    return failures != 0;
}
