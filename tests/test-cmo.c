/*
 * Cache maintenance: aclrtCmoAsync / WithBarrier / WaitBarrier / GetDescSize /
 * SetDesc / AsyncWithDesc and aclrtDeviceL2CacheFlush. CPU memory is
 * coherent, so they change no data; the asynchronous ones are still ordered
 * in their stream. Checks, product limits and CANN's codes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "common.h"

static void test_cmo_async_ordered(void **state)
{
    (void)state;
    unsigned char *dev;
    EXPECT_OK(aclrtMalloc((void **)&dev, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(dev, 256, 0x77, 256));
    aclrtStream s;
    aclrtEvent ev;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtCreateEvent(&ev));
    struct blocker b;
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    for (int type = ACL_RT_CMO_TYPE_PREFETCH; type <= ACL_RT_CMO_TYPE_FLUSH; type++)
        EXPECT_OK(aclrtCmoAsync(dev + 64, 128, (aclrtCmoType)type, s));
    EXPECT_OK(aclrtRecordEvent(ev, s));
    assert_true(gate_wait(&b.started, WAIT_MS));
    aclrtEventRecordedStatus st;
    EXPECT_OK(aclrtQueryEventStatus(ev, &st));
    assert_int_equal(st, ACL_EVENT_RECORDED_STATUS_NOT_READY);   /* behind the blocker */
    blocker_release(&b);
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtQueryEventStatus(ev, &st));
    assert_int_equal(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    unsigned char out[256];
    EXPECT_OK(aclrtMemcpy(out, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 256; i++)
        assert_int_equal(out[i], 0x77);   /* no effect on data */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "src", aclrtCmoAsync(NULL, 8, ACL_RT_CMO_TYPE_PREFETCH, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtCmoAsync(dev, 0, ACL_RT_CMO_TYPE_PREFETCH, s));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "cmoType", aclrtCmoAsync(dev, 8, (aclrtCmoType)4, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtCmoAsync(dev + 200, 64, ACL_RT_CMO_TYPE_FLUSH, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ordinary host memory", aclrtCmoAsync(out, 8, ACL_RT_CMO_TYPE_FLUSH, s));
    EXPECT_OK(aclrtDestroyEvent(ev));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(dev));
}

static void test_cmo_desc(void **state)
{
    (void)state;
    size_t size = 0;
    EXPECT_OK(aclrtCmoGetDescSize(&size));
    assert_int_equal(size, 32);
    void *desc, *dev;
    EXPECT_OK(aclrtMalloc(&desc, size, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(desc, size, 0, size));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "no cache operation",
               aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, NULL, NULL));
    EXPECT_OK(aclrtCmoSetDesc(desc, dev, 1000));
    /* CANN's layout: the length at offset 12, the source address at 16 */
    unsigned char raw[32];
    EXPECT_OK(aclrtMemcpy(raw, 32, desc, 32, ACL_MEMCPY_DEVICE_TO_HOST));
    uint32_t len;
    uint64_t src;
    memcpy(&len, raw + 12, 4);
    memcpy(&src, raw + 16, 8);
    assert_int_equal(len, 1000);
    assert_true(src == (uint64_t)(uintptr_t)dev);
    EXPECT_OK(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, NULL, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int r;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "size", aclrtCmoGetDescSize(NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "cmoDesc", aclrtCmoSetDesc(NULL, dev, 8));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "src", aclrtCmoSetDesc(desc, NULL, 8));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "size", aclrtCmoSetDesc(desc, dev, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtCmoSetDesc(desc, dev, 4097));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "reserve",
               aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, NULL, &r));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "cmoDesc",
               aclrtCmoAsyncWithDesc(NULL, ACL_RT_CMO_TYPE_PREFETCH, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "cmoType",
               aclrtCmoAsyncWithDesc(desc, (aclrtCmoType)9, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "64-byte",
               aclrtCmoAsyncWithDesc((char *)desc + 16, ACL_RT_CMO_TYPE_PREFETCH, NULL, NULL));
    EXPECT_OK(aclrtFree(desc));
    EXPECT_OK(aclrtFree(dev));
}

static void test_l2_flush_and_barriers_elsewhere(void **state)
{
    (void)state;
    EXPECT_OK(aclrtDeviceL2CacheFlush(NULL));
    int r;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "rsv", aclrtDeviceL2CacheFlush(&r));
    void *dev;
    EXPECT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    /* barriers are for the Atlas 200I/500 A2 only */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B1",
               aclrtCmoAsyncWithBarrier(dev, 64, ACL_RT_CMO_TYPE_INVALID, 1, NULL));
    aclrtBarrierTaskInfo ti = {1, {{ACL_RT_CMO_TYPE_INVALID, 1}}};
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B1", aclrtCmoWaitBarrier(&ti, NULL, 0));
    /* argument checks come first */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "src", aclrtCmoAsyncWithBarrier(NULL, 64, ACL_RT_CMO_TYPE_INVALID, 1, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "taskInfo", aclrtCmoWaitBarrier(NULL, NULL, 0));
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtResetDeviceForce(0));
    EXPECT_ERR(ACL_ERROR_RT_CONTEXT_NULL, NULL, aclrtDeviceL2CacheFlush(NULL));
}

static int setup_edge(void **state)
{
    setenv("ACLSIM_SOC_VERSION", "Ascend310B1", 1);
    return setup_device0(state);
}

static void test_barriers_on_edge(void **state)
{
    (void)state;
    void *dev;
    EXPECT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtCmoAsyncWithBarrier(dev, 64, ACL_RT_CMO_TYPE_INVALID, 3, s));
    EXPECT_OK(aclrtCmoAsyncWithBarrier(dev, 64, ACL_RT_CMO_TYPE_WRITEBACK, 0, s));
    aclrtBarrierTaskInfo ti = {1, {{ACL_RT_CMO_TYPE_INVALID, 3}}};
    EXPECT_OK(aclrtCmoWaitBarrier(&ti, s, 0));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "barrierId", aclrtCmoAsyncWithBarrier(dev, 64, ACL_RT_CMO_TYPE_INVALID, 0, s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "barrierId", aclrtCmoAsyncWithBarrier(dev, 64, ACL_RT_CMO_TYPE_FLUSH, 2, s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "size", aclrtCmoAsyncWithBarrier(dev, 0, ACL_RT_CMO_TYPE_FLUSH, 0, s));
    ti.barrierNum = 0;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "barrierNum", aclrtCmoWaitBarrier(&ti, s, 0));
    ti.barrierNum = 7;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "barrierNum", aclrtCmoWaitBarrier(&ti, s, 0));
    ti.barrierNum = 1;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag", aclrtCmoWaitBarrier(&ti, s, 1));
    ti.cmoInfo[0].cmoType = ACL_RT_CMO_TYPE_FLUSH;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "ACL_RT_CMO_TYPE_INVALID", aclrtCmoWaitBarrier(&ti, s, 0));
    /* and the other CMO calls are not for this product */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310B1", aclrtCmoAsync(dev, 64, ACL_RT_CMO_TYPE_PREFETCH, s));
    size_t size;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310B1", aclrtCmoGetDescSize(&size));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(dev));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cmo_async_ordered, setup_gated, teardown_gated),
        cmocka_unit_test_setup_teardown(test_cmo_desc, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_l2_flush_and_barriers_elsewhere, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_barriers_on_edge, setup_edge, teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
