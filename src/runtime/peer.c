/*
 * Peer access between devices. All simulated devices form one AI server, so
 * every pair of distinct devices can access each other. Enabling is one-way
 * and per device: aclrtDeviceEnablePeerAccess(p) on current device d lets d
 * access p's memory, until aclrtDeviceDisablePeerAccess or until d is reset.
 */
#include "internal.h"

static aclError check_pair(const char *api, int32_t a, int32_t b)
{
    aclError err = aclsim__device_check_id(a, api);
    if (!err)
        err = aclsim__device_check_id(b, api);
    if (!err && a == b)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           "the two devices are both %d: peer access is between two devices", a);
    return err;
}

aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId)
{
    static const char api[] = "aclrtDeviceCanAccessPeer";
    ACLSIM_REQUIRE_INIT(api);
    if (!canAccessPeer)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "canAccessPeer is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = check_pair(api, deviceId, peerDeviceId);
    if (!err)
        *canAccessPeer = 1;   /* one AI server: every pair */
    return err;
}

/* The current device and the peer, checked. */
static aclError current_and_peer(const char *api, int32_t peer, struct aclsim__device **dev)
{
    ACLSIM_REQUIRE_INIT(api);
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__current_context(api, &ctx);
    if (!err)
        err = check_pair(api, aclsim__context_device(ctx)->id, peer);
    if (!err)
        *dev = aclsim__context_device(ctx);
    return err;
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)
{
    static const char api[] = "aclrtDeviceEnablePeerAccess";
    if (flags != 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "flags %u is reserved and must be 0", flags);
    struct aclsim__device *dev = NULL;
    aclError err = current_and_peer(api, peerDeviceId, &dev);
    if (!err)   /* enabling twice is harmless */
        atomic_fetch_or(&dev->peers, 1u << peerDeviceId);
    return err;
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId)
{
    static const char api[] = "aclrtDeviceDisablePeerAccess";
    struct aclsim__device *dev = NULL;
    aclError err = current_and_peer(api, peerDeviceId, &dev);
    if (err)
        return err;
    if (!(atomic_fetch_and(&dev->peers, ~(1u << peerDeviceId)) & (1u << peerDeviceId)))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "peer access from device %d to device %d is not enabled", dev->id,
                            peerDeviceId);
    return ACL_SUCCESS;
}

aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t *status)
{
    static const char api[] = "aclrtDevicePeerAccessStatus";
    ACLSIM_REQUIRE_INIT(api);
    if (!status)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "status is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = check_pair(api, deviceId, peerDeviceId);
    if (err)
        return err == ACL_ERROR_RT_INVALID_DEVICEID ? ACL_ERROR_RT_PARAM_INVALID : err;
    struct aclsim__device *dev = &aclsim__devices[deviceId];
    *status = atomic_load(&dev->open) && (atomic_load(&dev->peers) & (1u << peerDeviceId)) ? 1 : 0;
    return ACL_SUCCESS;
}
