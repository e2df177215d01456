/*
 * Peer access: every pair of distinct devices can access each other; enabling
 * is one-way, per device, and ends with the device's reset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_peer_access, setup_device0, teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
