/*
 * Peer access: every pair of distinct devices can access each other; enabling
 * is one-way, per device, and ends with the device's reset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "acl/acl.h"
#include "common.h"

static int32_t status(int32_t a, int32_t b)
{
    int32_t s = -1;
    EXPECT_OK(aclrtDevicePeerAccessStatus(a, b, &s));
    return s;
}

static void test_peer_access(void **state)
{
    (void)state;
    int32_t can = -1;
    EXPECT_OK(aclrtDeviceCanAccessPeer(&can, 0, 1));
    assert_int_equal(can, 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "both 0", aclrtDeviceCanAccessPeer(&can, 0, 0));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtDeviceCanAccessPeer(&can, 0, 2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "canAccessPeer", aclrtDeviceCanAccessPeer(NULL, 0, 1));
    assert_int_equal(status(0, 1), 0);
    EXPECT_OK(aclrtDeviceEnablePeerAccess(1, 0));   /* device 0 is current */
    assert_int_equal(status(0, 1), 1);
    assert_int_equal(status(1, 0), 0);              /* one way */
    EXPECT_OK(aclrtDeviceEnablePeerAccess(1, 0));   /* twice: harmless */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags", aclrtDeviceEnablePeerAccess(1, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "both 0", aclrtDeviceEnablePeerAccess(0, 0));
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtDeviceEnablePeerAccess(0, 0));
    assert_int_equal(status(1, 0), 1);
    EXPECT_OK(aclrtDeviceDisablePeerAccess(0));
    assert_int_equal(status(1, 0), 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not enabled", aclrtDeviceDisablePeerAccess(0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, NULL, aclrtDevicePeerAccessStatus(0, 5, &can));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "status", aclrtDevicePeerAccessStatus(0, 1, NULL));
    /* A reset ends what the device enabled. */
    EXPECT_OK(aclrtResetDeviceForce(0));
    assert_int_equal(status(0, 1), 0);
}


/* 64 bytes on device dev (made current) holding byte v. */
static void *dev_buf(int32_t dev, unsigned char v)
{
    EXPECT_OK(aclrtSetDevice(dev));
    void *p = NULL;
    EXPECT_OK(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(p, 64, v, 64));
    return p;
}

static void expect_bytes(const void *dev_ptr, unsigned char v)
{
    unsigned char h[64], want[64];
    memset(want, v, sizeof want);
    EXPECT_OK(aclrtMemcpy(h, sizeof h, dev_ptr, sizeof h, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(h, want, sizeof h);
}

/* aclrtMemcpy between two devices needs peer access on the products whose
 * reference says so (A2, the default): refused with 107000 and nothing
 * written until one of the two devices enabled access to the other. */
static void test_copy_needs_peer_access(void **state)
{
    (void)state;
    void *a = dev_buf(0, 0xAA), *b = dev_buf(1, 0xBB);
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_ERR2(ACL_ERROR_RT_PARAM_INVALID, "peer access", "aclrtDeviceEnablePeerAccess",
                aclrtMemcpy(a, 64, b, 64, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "peer access",
               aclrtMemcpy(b, 64, a, 64, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "peer access",
               aclrtMemcpy(a, 64, b, 64, ACL_MEMCPY_DEFAULT));
    expect_bytes(a, 0xAA);   /* state intact */
    expect_bytes(b, 0xBB);
    assert_int_equal(status(0, 1), 0);
    /* Within one device: never refused. */
    EXPECT_OK(aclrtMemcpy(a, 32, (char *)a + 32, 32, ACL_MEMCPY_DEVICE_TO_DEVICE));
    /* CANN states the rule for aclrtMemcpy: stream copies are not refused. */
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtMemsetAsync(a, 64, 0xAA, 64, s));
    EXPECT_OK(aclrtMemcpyAsync(a, 64, b, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    expect_bytes(a, 0xBB);
    EXPECT_OK(aclrtMemset(a, 64, 0xAA, 64));
    /* Enabled from device 0 to device 1: both directions copy. */
    EXPECT_OK(aclrtDeviceEnablePeerAccess(1, 0));
    EXPECT_OK(aclrtMemcpy(a, 64, b, 64, ACL_MEMCPY_DEVICE_TO_DEVICE));
    expect_bytes(a, 0xBB);
    EXPECT_OK(aclrtMemset(a, 64, 0xAA, 64));
    EXPECT_OK(aclrtMemcpy(b, 64, a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE));
    expect_bytes(b, 0xAA);
    /* Disabled again: refused again. */
    EXPECT_OK(aclrtDeviceDisablePeerAccess(1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "peer access",
               aclrtMemcpy(b, 64, a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE));
    /* Enabled the other way (device 1 to device 0), as CANN's guide does it. */
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtDeviceEnablePeerAccess(0, 0));
    EXPECT_OK(aclrtMemset(b, 64, 0xBB, 64));
    EXPECT_OK(aclrtMemcpy(a, 64, b, 64, ACL_MEMCPY_DEVICE_TO_DEVICE));
    expect_bytes(a, 0xBB);
    EXPECT_OK(aclrtFree(b));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(a));
}

/* Atlas A3's aclrtMemcpy reference has no such constraint. */
static void test_copy_on_a3_needs_no_peer_access(void **state)
{
    (void)state;
    reinit_with_soc("Ascend910_9391");
    void *a = dev_buf(0, 0xAA), *b = dev_buf(1, 0xBB);
    EXPECT_OK(aclrtMemcpy(a, 64, b, 64, ACL_MEMCPY_DEVICE_TO_DEVICE));
    expect_bytes(a, 0xBB);
    EXPECT_OK(aclrtFree(b));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtFree(a));
}

/* aclrtMemP2PMap: checked, then nothing to do (one set of page tables). */
static void test_p2p_map(void **state)
{
    (void)state;
    void *b = dev_buf(1, 0xBB);
    void *a = dev_buf(0, 0xAA);   /* device 0 current */
    char host[64];
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtMemP2PMap(NULL, 64, 1, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMemP2PMap(a, 0, 1, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags", aclrtMemP2PMap(a, 64, 1, 1));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtMemP2PMap(a, 64, 7, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not device memory", aclrtMemP2PMap(host, 64, 1, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "own memory", aclrtMemP2PMap(a, 64, 0, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtMemP2PMap(a, 65, 1, 0));
    /* Device 1 has not enabled access to device 0 yet. */
    EXPECT_ERR2(ACL_ERROR_RT_PARAM_INVALID, "may not access", "aclrtDeviceEnablePeerAccess",
                aclrtMemP2PMap(a, 64, 1, 0));
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtDeviceEnablePeerAccess(0, 0));
    EXPECT_OK(aclrtMemP2PMap(a, 64, 1, 0));
    EXPECT_OK(aclrtMemP2PMap((char *)a + 32, 32, 1, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "may not access", aclrtMemP2PMap(b, 64, 0, 0));
    EXPECT_OK(aclrtFree(b));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtFree(a));
    /* Not on Atlas 200I/500 A2, after the argument checks. */
    reinit_with_soc("Ascend310B1");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtMemP2PMap(NULL, 64, 1, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtMemP2PMap(host, 64, 1, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_peer_access, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_copy_needs_peer_access, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_copy_on_a3_needs_no_peer_access, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_p2p_map, setup_device0, teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
