/*
 * Allocation variants: aclrtMallocAlign32 (32-byte rounding), aclrtMallocCached,
 * aclrtMallocWithCfg / aclrtMallocForTaskScheduler / aclrtMallocHostWithCfg
 * (configurations), aclrtMemFlush / aclrtMemInvalidate (checks, no effect on
 * data), aclrtFreeWithDevSync / aclrtFreeHostWithDevSync (wait for queued
 * work), with CANN's codes for bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "common.h"

static void test_align32(void **state)
{
    (void)state;
    size_t before = hbm_free();
    unsigned char *p = NULL;
    EXPECT_OK(aclrtMallocAlign32((void **)&p, 33, ACL_MEM_MALLOC_HUGE_FIRST));
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 64, 0);
    assert_true(hbm_free() < before);
    unsigned char in[64], out[64];
    for (int i = 0; i < 64; i++)
        in[i] = (unsigned char)(i * 3 + 1);
    /* 33 bytes round up to 64: all of them are usable, one more is not. */
    EXPECT_OK(aclrtMemcpy(p, 64, in, 64, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(out, 64, p, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(in, out, 64);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns",
               aclrtMemcpy(p, 65, in, 65, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtFree(p));
    assert_int_equal(hbm_free(), before);
    /* Any policy value is taken (CANN falls back to its default). */
    EXPECT_OK(aclrtMallocAlign32((void **)&p, 32, (aclrtMemMallocPolicy)0x777));
    EXPECT_OK(aclrtFreeWithDevSync(p));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtMallocAlign32(NULL, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMallocAlign32((void **)&p, 0, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size",
               aclrtMallocAlign32((void **)&p, SIZE_MAX - 3, ACL_MEM_MALLOC_HUGE_FIRST));
}

static void test_cached_and_cache_ops(void **state)
{
    (void)state;
    int *p = NULL;
    EXPECT_OK(aclrtMallocCached((void **)&p, 100, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_OK(aclrtMemset(p, 100, 0x5a, 100));
    EXPECT_OK(aclrtMemFlush(p, 100));
    EXPECT_OK(aclrtMemInvalidate(p, 100));
    unsigned char out[100];
    EXPECT_OK(aclrtMemcpy(out, 100, p, 100, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 100; i++)   /* no effect on the data */
        assert_int_equal(out[i], 0x5a);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtMemFlush(NULL, 4));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMemFlush(p, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtMemInvalidate(NULL, 4));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMemInvalidate(p, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtMemFlush(p, 101));
    EXPECT_OK(aclrtFree(p));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "freed", aclrtMemInvalidate(p, 4));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtMallocCached(NULL, 4, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMallocCached((void **)&p, 0, ACL_MEM_MALLOC_HUGE_FIRST));
}

static void test_with_cfg(void **state)
{
    (void)state;
    void *p = NULL;
    EXPECT_OK(aclrtMallocWithCfg(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST, NULL));
    assert_int_equal((uintptr_t)p % 64, 0);
    EXPECT_OK(aclrtMemset(p, 256, 1, 256));
    EXPECT_OK(aclrtFree(p));
    aclrtMallocAttribute attrs[2] = {{.attr = ACL_RT_MEM_ATTR_MODULE_ID, .value.moduleId = 33},
                                     {.attr = ACL_RT_MEM_ATTR_DEVICE_ID, .value.deviceId = 0}};
    aclrtMallocConfig cfg = {attrs, 2};
    EXPECT_OK(aclrtMallocWithCfg(&p, 256, ACL_MEM_TYPE_HIGH_BAND_WIDTH | ACL_MEM_MALLOC_HUGE_FIRST, &cfg));
    EXPECT_OK(aclrtFreeWithDevSync(p));
    EXPECT_OK(aclrtMallocForTaskScheduler(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST, &cfg));
    EXPECT_OK(aclrtMemset(p, 64, 2, 64));
    EXPECT_OK(aclrtFree(p));
    attrs[1].value.deviceId = 1;   /* not the current device */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "device 1", aclrtMallocWithCfg(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST, &cfg));
    attrs[1] = (aclrtMallocAttribute){.attr = (aclrtMallocAttrType)9};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "aclrtMallocAttrType",
               aclrtMallocForTaskScheduler(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST, &cfg));
    attrs[1] = (aclrtMallocAttribute){.attr = ACL_RT_MEM_ATTR_VA_FLAG, .value.vaFlag = 1};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "aclrtMallocHostWithCfg only",
               aclrtMallocWithCfg(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST, &cfg));
    aclrtMallocConfig broken = {NULL, 1};
    /* attrs is checked before size, as CANN does */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attrs", aclrtMallocWithCfg(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST, &broken));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtMallocWithCfg(NULL, 64, ACL_MEM_MALLOC_HUGE_FIRST, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMallocWithCfg(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size",
               aclrtMallocForTaskScheduler(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST, NULL));
    EXPECT_ERR(ACL_ERROR_RT_MEMORY_ALLOCATION, "cannot allocate",
               aclrtMallocWithCfg(&p, 1u << 30, ACL_MEM_MALLOC_HUGE_FIRST, NULL));
}

static void test_host_with_cfg(void **state)
{
    (void)state;
    unsigned char *h = NULL;
    aclrtMallocAttribute attrs[1] = {{.attr = ACL_RT_MEM_ATTR_VA_FLAG, .value.vaFlag = 1}};
    aclrtMallocConfig cfg = {attrs, 1};
    EXPECT_OK(aclrtMallocHostWithCfg((void **)&h, 128, &cfg));
    assert_int_equal((uintptr_t)h % 64, 0);
    void *dev = NULL;
    EXPECT_OK(aclrtMalloc(&dev, 128, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < 128; i++)
        h[i] = (unsigned char)i;
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    /* page-locked memory: an async copy does not wait */
    EXPECT_OK(aclrtMemcpyAsync(dev, 128, h, 128, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtFreeHost(h));
    EXPECT_OK(aclrtMallocHostWithCfg((void **)&h, 64, NULL));
    EXPECT_OK(aclrtFreeHostWithDevSync(h));
    attrs[0].value.vaFlag = 2;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "vaFlag", aclrtMallocHostWithCfg((void **)&h, 64, &cfg));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtMallocHostWithCfg(NULL, 64, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMallocHostWithCfg((void **)&h, 0, NULL));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(dev));
}

static atomic_int free_result = -1;
static void free_host_sync(void *p) { atomic_store(&free_result, aclrtFreeHostWithDevSync(p)); }
static void free_dev_sync(void *p) { atomic_store(&free_result, aclrtFreeWithDevSync(p)); }

/* Frees with a device sync wait for work queued before them: a copy blocked
 * behind a host function still reads the buffer's bytes, not freed memory. */
static void test_free_with_dev_sync_waits(void **state)
{
    (void)state;
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    unsigned char *pinned = NULL, *dev = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&pinned, 64));
    EXPECT_OK(aclrtMalloc((void **)&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    memset(pinned, 0x42, 64);
    EXPECT_OK(aclrtMemset(dev, 64, 0, 64));
    struct blocker b;
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    EXPECT_OK(aclrtMemcpyAsync(dev, 64, pinned, 64, ACL_MEMCPY_HOST_TO_DEVICE, s));
    assert_true(gate_wait(&b.started, WAIT_MS));
    struct call c;
    call_start(&c, free_host_sync, pinned);
    sleep_ms(50);
    assert_false(gate_is_open(&c.done));   /* still waiting for the stream */
    blocker_release(&b);
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(atomic_load(&free_result), ACL_SUCCESS);
    unsigned char out[64];
    EXPECT_OK(aclrtMemcpy(out, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 64; i++)
        assert_int_equal(out[i], 0x42);
    /* it was freed */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost", aclrtFreeHost(pinned));

    /* aclrtFreeWithDevSync: a memset queued behind a blocker runs before the free. */
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    EXPECT_OK(aclrtMemsetAsync(dev, 64, 7, 64, s));
    assert_true(gate_wait(&b.started, WAIT_MS));
    call_start(&c, free_dev_sync, dev);
    sleep_ms(50);
    assert_false(gate_is_open(&c.done));
    blocker_release(&b);
    assert_true(call_wait(&c, WAIT_MS));
    assert_int_equal(atomic_load(&free_result), ACL_SUCCESS);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "aclrtMalloc", aclrtFree(dev));
    EXPECT_OK(aclrtDestroyStream(s));

    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtFreeWithDevSync(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "hostPtr", aclrtFreeHostWithDevSync(NULL));
    int local;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ordinary host memory", aclrtFreeWithDevSync(&local));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ordinary host memory", aclrtFreeHostWithDevSync(&local));
    EXPECT_OK(aclrtMalloc((void **)&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "offset 8", aclrtFreeWithDevSync(dev + 8));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "device 0 memory", aclrtFreeHostWithDevSync(dev));
    EXPECT_OK(aclrtFreeWithDevSync(dev));
}

static void test_not_initialized(void **state)
{
    (void)state;
    void *p;
    EXPECT_OK(aclrtResetDeviceForce(0));
    EXPECT_OK(aclFinalize());
    assert_int_equal(aclrtMallocAlign32(&p, 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclrtMallocHostWithCfg(&p, 4, NULL), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclrtMemFlush(&p, 4), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclrtFreeWithDevSync(&p), ACL_ERROR_UNINITIALIZE);
    drain_msg();
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_device0, teardown_device0)
    const struct CMUnitTest tests[] = {
        T(test_align32),
        T(test_cached_and_cache_ops),
        T(test_with_cfg),
        T(test_host_with_cfg),
        cmocka_unit_test_setup_teardown(test_free_with_dev_sync_waits, setup_gated, teardown_gated),
        cmocka_unit_test_setup_teardown(test_not_initialized, setup_device0, teardown_device0_any),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
