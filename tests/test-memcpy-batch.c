/*
 * Batched and indirect copies: aclrtMemcpyBatch / V2 / Async / AsyncV2 (data,
 * per-entry attributes, the failure index, stream order, pageable waits),
 * aclrtMemcpyAsyncWithOffset (base pointers read from device memory when the
 * task runs), aclrtMemcpyAsyncWithCondition, and copy descriptors
 * (aclrtGetMemcpyDescSize / aclrtSetMemcpyDesc / aclrtMemcpyAsyncWithDesc),
 * with CANN's codes for bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "acl/acl.h"
#include "common.h"

static aclrtMemcpyBatchAttr h2d(uint32_t dev)
{
    aclrtMemcpyBatchAttr a;
    memset(&a, 0, sizeof a);
    a.dstLoc = (aclrtMemLocation){dev, ACL_MEM_LOCATION_TYPE_DEVICE};
    a.srcLoc = (aclrtMemLocation){0, ACL_MEM_LOCATION_TYPE_HOST};
    return a;
}

static aclrtMemcpyBatchAttr d2h(uint32_t dev)
{
    aclrtMemcpyBatchAttr a;
    memset(&a, 0, sizeof a);
    a.dstLoc = (aclrtMemLocation){0, ACL_MEM_LOCATION_TYPE_HOST_NUMA};
    a.srcLoc = (aclrtMemLocation){dev, ACL_MEM_LOCATION_TYPE_DEVICE};
    return a;
}

/* Three host-to-device entries (attribute 0), then two device-to-host ones
 * (attribute 1), page-locked and ordinary host memory mixed. */
struct fixture {
    unsigned char *dev[3], *pinned, host[64], back[2][64];
    void *dsts[5], *srcs[5];
    size_t sizes[5], maxs[5], idx[2];
    aclrtMemcpyBatchAttr attrs[2];
};

static void fixture_open(struct fixture *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 3; i++) {
        EXPECT_OK(aclrtMalloc((void **)&f->dev[i], 64, ACL_MEM_MALLOC_HUGE_FIRST));
        EXPECT_OK(aclrtMemset(f->dev[i], 64, 0xee, 64));
    }
    EXPECT_OK(aclrtMallocHost((void **)&f->pinned, 64));
    for (int i = 0; i < 64; i++) {
        f->host[i] = (unsigned char)(i + 1);
        f->pinned[i] = (unsigned char)(200 - i);
    }
    void *d[5] = {f->dev[0], f->dev[1], f->dev[2] + 8, f->back[0], f->back[1]};
    void *s[5] = {f->host, f->pinned, f->host + 32, f->dev[0], f->dev[1]};
    size_t n[5] = {64, 64, 16, 64, 64};
    for (int i = 0; i < 5; i++) {
        f->dsts[i] = d[i];
        f->srcs[i] = s[i];
        f->sizes[i] = n[i];
        f->maxs[i] = 64;
    }
    f->idx[0] = 0;
    f->idx[1] = 3;
    f->attrs[0] = h2d(0);
    f->attrs[1] = d2h(0);
}

static void fixture_check(struct fixture *f)
{
    assert_memory_equal(f->back[0], f->host, 64);
    assert_memory_equal(f->back[1], f->pinned, 64);
    unsigned char third[64];
    EXPECT_OK(aclrtMemcpy(third, 64, f->dev[2], 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 64; i++)
        assert_int_equal(third[i], i >= 8 && i < 24 ? f->host[32 + i - 8] : 0xee);
}

static void fixture_close(struct fixture *f)
{
    for (int i = 0; i < 3; i++)
        EXPECT_OK(aclrtFree(f->dev[i]));
    EXPECT_OK(aclrtFreeHost(f->pinned));
}

static void test_batch_sync(void **state)
{
    (void)state;
    struct fixture f;
    fixture_open(&f);
    size_t fail = 7;
    /* In array order here: the device-to-host entries read what the first ones wrote. */
    EXPECT_OK(aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail));
    assert_int_equal(fail, SIZE_MAX);
    fixture_check(&f);
    memset(f.back, 0, sizeof f.back);
    EXPECT_OK(aclrtMemcpyBatchV2(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2));
    fixture_check(&f);
    /* all sizes 0: nothing to do, nothing checked */
    size_t zero[2] = {0, 0};
    fail = 7;
    EXPECT_OK(aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, zero, 2, NULL, NULL, 0, &fail));
    assert_int_equal(fail, SIZE_MAX);
    fixture_close(&f);
}

static void test_batch_async(void **state)
{
    (void)state;
    struct fixture f;
    fixture_open(&f);
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    /* Only page-locked memory: queued behind a blocked stream, the call returns at once. */
    unsigned char *pin2;
    EXPECT_OK(aclrtMallocHost((void **)&pin2, 64));
    memset(pin2, 0, 64);
    void *d[2] = {f.dev[0], pin2};
    void *src[2] = {f.pinned, f.dev[0]};
    size_t n[2] = {64, 64}, m[2] = {64, 64}, idx[2] = {0, 1}, fail = 0;
    aclrtMemcpyBatchAttr at[2] = {h2d(0), d2h(0)};
    struct blocker b;
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    EXPECT_OK(aclrtMemcpyBatchAsync(d, m, src, n, 2, at, idx, 2, &fail, s));
    assert_int_equal(fail, SIZE_MAX);
    assert_int_equal(pin2[0], 0);   /* not yet */
    blocker_release(&b);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_memory_equal(pin2, f.pinned, 64);
    /* With ordinary host memory the call returns once the copies are done. */
    EXPECT_OK(aclrtMemcpyBatchAsyncV2(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, s));
    fixture_check(&f);
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFreeHost(pin2));
    fixture_close(&f);
}

/* A failing entry is reported by index, and nothing of the batch is copied. */
static void test_batch_fail_index(void **state)
{
    (void)state;
    struct fixture f;
    fixture_open(&f);
    unsigned char *other;
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtMalloc((void **)&other, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtSetDevice(0));
    size_t fail = 0;
    void *keep = f.dsts[4];
    f.dsts[4] = other;   /* on device 1, the attributes say host */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "entry 4", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail));
    assert_int_equal(fail, 4);
    unsigned char first[64];
    EXPECT_OK(aclrtMemcpy(first, 64, f.dev[0], 64, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(first[0], 0xee);   /* entry 0 was not copied either */
    f.dsts[4] = keep;
    /* the device id of the attributes must match */
    f.attrs[0].dstLoc.id = 1;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "entry 0", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail));
    assert_int_equal(fail, 0);
    f.attrs[0].dstLoc.id = 0;
    /* UNREGISTERED in the attributes does not match host memory (CANN maps it to HOST first) */
    f.attrs[1].dstLoc.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "entry 3", aclrtMemcpyBatchAsync(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail, NULL));
    assert_int_equal(fail, 3);
    f.attrs[1] = d2h(0);
    /* device to device is not a batch direction */
    void *dd[1] = {f.dev[1]}, *ds[1] = {f.dev[0]};
    size_t n1[1] = {8}, m1[1] = {8}, i1[1] = {0};
    aclrtMemcpyBatchAttr dev2dev;
    memset(&dev2dev, 0, sizeof dev2dev);
    dev2dev.dstLoc = dev2dev.srcLoc = (aclrtMemLocation){0, ACL_MEM_LOCATION_TYPE_DEVICE};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "host-to-device", aclrtMemcpyBatch(dd, m1, ds, n1, 1, &dev2dev, i1, 1, &fail));
    assert_int_equal(fail, 0);
    /* a range beyond its allocation */
    f.sizes[2] = 64;   /* dev[2] + 8 has 56 bytes */
    f.maxs[2] = 64;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail));
    assert_int_equal(fail, 2);
    f.sizes[2] = 16;
    /* async: an entry of size 0 among others */
    f.sizes[1] = 0;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "size is 0", aclrtMemcpyBatchAsync(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail, NULL));
    assert_int_equal(fail, 1);
    f.sizes[1] = 64;
    EXPECT_OK(aclrtFree(other));
    fixture_close(&f);
}

static void test_batch_bad_arguments(void **state)
{
    (void)state;
    struct fixture f;
    fixture_open(&f);
    size_t fail = 7;
    /* CANN's ACL layer: 100000, failIndex untouched */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "failIndex", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "sizes", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, NULL, 5, f.attrs, f.idx, 2, &fail));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "numBatches", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 0, f.attrs, f.idx, 2, &fail));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dsts", aclrtMemcpyBatchV2(NULL, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attrsIndexes", aclrtMemcpyBatchAsyncV2(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, NULL, 2, NULL));
    f.maxs[3] = 63;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "index 3", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail));
    f.maxs[3] = 64;
    f.attrs[1].rsv[3] = 1;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "rsv", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail));
    f.attrs[1].rsv[3] = 0;
    assert_int_equal(fail, 7);
    /* The runtime's checks: 107000, failIndex SIZE_MAX */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "numAttrs", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 0, &fail));
    assert_int_equal(fail, SIZE_MAX);
    size_t idx[6] = {0, 1, 2, 3, 4, 4};
    aclrtMemcpyBatchAttr six[6];
    memset(six, 0, sizeof six);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "numAttrs", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, six, idx, 6, &fail));
    f.idx[0] = 1;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "attrsIndexes[0]", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail));
    f.idx[0] = 0;
    f.idx[1] = 0;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not greater", aclrtMemcpyBatch(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail));
    f.idx[1] = 5;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not less", aclrtMemcpyBatchAsync(f.dsts, f.maxs, f.srcs, f.sizes, 5, f.attrs, f.idx, 2, &fail, NULL));
    assert_int_equal(fail, SIZE_MAX);
    fixture_close(&f);
}

/* The base pointers live in device memory and are read when the task runs. */
static void test_with_offset(void **state)
{
    (void)state;
    unsigned char *a, *b, *c;
    void **dloc, **sloc;
    EXPECT_OK(aclrtMalloc((void **)&a, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&b, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&c, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&dloc, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&sloc, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    unsigned char pattern[64];
    for (int i = 0; i < 64; i++)
        pattern[i] = (unsigned char)(3 * i);
    EXPECT_OK(aclrtMemcpy(a, 64, pattern, 64, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemset(b, 64, 0, 64));
    EXPECT_OK(aclrtMemset(c, 64, 0, 64));
    EXPECT_OK(aclrtMemcpy(sloc, 8, &a, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(dloc, 8, &b, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtMemcpyAsyncWithOffset(dloc, 32, 4, (const void **)sloc, 16, 10, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    unsigned char out[64];
    EXPECT_OK(aclrtMemcpy(out, 64, b, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 64; i++)
        assert_int_equal(out[i], i >= 4 && i < 20 ? pattern[10 + i - 4] : 0);
    /* queued behind a blocker, the copy uses the base pointer stored when it runs */
    struct blocker bl;
    blocker_init(&bl);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &bl));
    EXPECT_OK(aclrtMemcpyAsyncWithOffset(dloc, 8, 0, (const void **)sloc, 8, 0, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s));
    EXPECT_OK(aclrtMemcpy(dloc, 8, &c, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    blocker_release(&bl);
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtMemcpy(out, 64, c, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(out, pattern, 8);
    EXPECT_OK(aclrtMemcpy(out, 64, b, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(out[0], 0);   /* b untouched by the second copy */
    EXPECT_OK(aclrtMemcpyAsyncWithOffset(dloc, 8, 0, (const void **)sloc, 0, 0, (aclrtMemcpyKind)99, s));   /* count 0: nothing */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "kind", aclrtMemcpyAsyncWithOffset(dloc, 8, 0, (const void **)sloc, 8, 0, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "destMax", aclrtMemcpyAsyncWithOffset(dloc, 4, 0, (const void **)sloc, 8, 0, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s));
    void *hostloc = a;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ordinary host memory", aclrtMemcpyAsyncWithOffset(&hostloc, 8, 0, (const void **)sloc, 8, 0, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(a));
    EXPECT_OK(aclrtFree(b));
    EXPECT_OK(aclrtFree(c));
    EXPECT_OK(aclrtFree(dloc));
    EXPECT_OK(aclrtFree(sloc));
}

static void test_with_desc(void **state)
{
    (void)state;
    size_t size = 0;
    EXPECT_OK(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &size));
    assert_int_equal(size, 32);
    void *desc, *a, *b;
    EXPECT_OK(aclrtMalloc(&desc, size, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&a, 128, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&b, 128, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(a, 128, 0x3c, 128));
    EXPECT_OK(aclrtMemset(b, 128, 0, 128));
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "no copy descriptor", aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s));
    EXPECT_OK(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, (char *)b + 64, 32, NULL));
    EXPECT_OK(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    unsigned char out[128];
    EXPECT_OK(aclrtMemcpy(out, 128, b, 128, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 128; i++)
        assert_int_equal(out[i], i >= 64 && i < 96 ? 0x3c : 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "descSize", aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "kind", aclrtGetMemcpyDescSize((aclrtMemcpyKind)8, &size));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "kind", aclrtGetMemcpyDescSize(ACL_MEMCPY_DEVICE_TO_DEVICE, &size));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "desc", aclrtSetMemcpyDesc(NULL, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 8, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "count", aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 0, NULL));
    int cfg;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "config", aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 8, &cfg));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "kind", aclrtSetMemcpyDesc(desc, ACL_MEMCPY_HOST_TO_DEVICE, a, b, 8, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "64-byte", aclrtSetMemcpyDesc((char *)desc + 8, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 8, NULL));
    unsigned char host[64];
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "one device", aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, host, b, 8, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, (char *)b + 100, 32, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "desc", aclrtMemcpyAsyncWithDesc(NULL, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(desc));
    EXPECT_OK(aclrtFree(a));
    EXPECT_OK(aclrtFree(b));
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void test_with_condition(void **state)
{
    (void)state;
    unsigned char host[32], back[32];
    for (int i = 0; i < 32; i++)
        host[i] = (unsigned char)(i ^ 0x5a);
    void *dev;
    EXPECT_OK(aclrtMalloc(&dev, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpyAsyncWithCondition(dev, 32, host, 32, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    EXPECT_OK(aclrtMemcpyAsyncWithCondition(back, 32, dev, 32, ACL_MEMCPY_DEVICE_TO_HOST, NULL));
    assert_memory_equal(back, host, 32);   /* pageable: done when the call returns */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "host-to-host",
               aclrtMemcpyAsyncWithCondition(back, 32, host, 32, ACL_MEMCPY_HOST_TO_HOST, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "destMax",
               aclrtMemcpyAsyncWithCondition(dev, 16, host, 32, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "kind",
               aclrtMemcpyAsyncWithCondition(dev, 32, host, 32, ACL_MEMCPY_DEVICE_TO_HOST, NULL));
    EXPECT_OK(aclrtFree(dev));
}
#pragma GCC diagnostic pop

/* Physical memory of device 0 mapped into a reservation is device memory to
 * a batch (its attributes say DEVICE 0) and to a reduce; the data arrives
 * through a second mapping of the same physical memory. */
static void test_virtual_memory(void **state)
{
    (void)state;
    const size_t g2 = 2 * MiB;
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    aclrtDrvMemHandle h = NULL;
    EXPECT_OK(aclrtMallocPhysical(&h, g2, &prop, 0));
    void *v = NULL;
    EXPECT_OK(aclrtReserveMemAddress(&v, 2 * g2, 0, NULL, 0));
    char *a = v, *b = (char *)v + g2;
    EXPECT_OK(aclrtMapMem(a, g2, 0, h, 0));
    EXPECT_OK(aclrtMapMem(b, g2, 0, h, 0));
    int32_t host[16], back[16];
    for (int i = 0; i < 16; i++)
        host[i] = i * 10;
    void *dsts[1] = {a}, *srcs[1] = {host};
    size_t sizes[1] = {sizeof host}, maxs[1] = {sizeof host}, idx[1] = {0}, fail = 0;
    aclrtMemcpyBatchAttr at = h2d(0);
    EXPECT_OK(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 1, &at, idx, 1, &fail));
    assert_int_equal(fail, SIZE_MAX);
    /* b + 64 aliases a + 64: a reduce of the first 16 values into the next 16 */
    EXPECT_OK(aclrtMemcpy(a + 64, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtReduceAsync(b + 64, a, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT32, NULL, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtMemcpy(back, 64, a + 64, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 16; i++)
        assert_int_equal(back[i], 2 * host[i]);
    at.dstLoc.id = 1;   /* it is device 0's memory */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "entry 0", aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 1, &at, idx, 1, &fail));
    assert_int_equal(fail, 0);
    EXPECT_OK(aclrtUnmapMem(a));
    EXPECT_OK(aclrtUnmapMem(b));
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT_OK(aclrtReleaseMemAddress(v));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_device0, teardown_device0)
    const struct CMUnitTest tests[] = {
        T(test_batch_sync),
        cmocka_unit_test_setup_teardown(test_batch_async, setup_gated, teardown_gated),
        T(test_batch_fail_index),
        T(test_batch_bad_arguments),
        cmocka_unit_test_setup_teardown(test_with_offset, setup_gated, teardown_gated),
        T(test_with_desc),
        T(test_with_condition),
        T(test_virtual_memory),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
