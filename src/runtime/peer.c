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

/* The products whose aclrtMemcpy reference requires peer access for a copy
 * between two devices (CANN's constraint lists 950, A2, training and
 * inference series; not A3, not 200I/500 A2). */
#define PEER_COPY_FAMILIES \
    (ACLSIM_FAMILIES(A5) | ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(TRAINING) | ACLSIM_FAMILIES(INFERENCE))

aclError aclsim__peer_copy_check(const char *api, const struct aclsim__device *dst,
                                 const struct aclsim__device *src)
{
    if (!dst || !src || dst == src ||
        !(PEER_COPY_FAMILIES & (1u << aclsim__soc_current()->family)))
        return ACL_SUCCESS;
    if ((atomic_load(&dst->peers) & (1u << src->id)) || (atomic_load(&src->peers) & (1u << dst->id)))
        return ACL_SUCCESS;
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "src is on device %d and dst on device %d, and peer access between them "
                        "is not enabled: call aclrtDeviceEnablePeerAccess(%d, 0) with device %d "
                        "current first", src->id, dst->id, src->id, dst->id);
}

/* aclrtMemP2PMap: builds device dstDevId's page table entries for devPtr's
 * memory ahead of use, so its first access does not fault. Devices here share
 * the host's page tables: after the checks (the memory is device memory of
 * another device, and dstDevId may access that device), nothing is left to
 * do, and nothing else is observable on hardware either. */
aclError aclrtMemP2PMap(void *devPtr, size_t size, int32_t dstDevId, uint64_t flags)
{
    static const char api[] = "aclrtMemP2PMap";
    ACLSIM_REQUIRE_INIT(api);
    if (!devPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is NULL");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0: it must be greater than 0");
    if (flags != 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "flags %llu is reserved and must be 0", (unsigned long long)flags);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV & ~ACLSIM_FAMILIES(EDGE));
    if (err || (err = aclsim__device_check_id(dstDevId, api)))
        return err;
    struct aclsim__heap_hold hold;
    if ((err = aclsim__hold_heaps(api, &hold, devPtr, NULL)))
        return err;
    struct aclsim__where w = aclsim__classify(devPtr);
    if (!w.device)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "devPtr %p is not device memory (aclrtMalloc, or physical memory of a "
                           "device mapped with aclrtMapMem)", devPtr);
    else if ((err = aclsim__check_range(api, "devPtr", devPtr, size, w)))
        ;   /* 100000: the message says why */
    else if (w.device->id == dstDevId)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "devPtr %p is device %d's own memory: a peer mapping is for another "
                           "device", devPtr, dstDevId);
    else if (!atomic_load(&aclsim__devices[dstDevId].open) ||
             !(atomic_load(&aclsim__devices[dstDevId].peers) & (1u << w.device->id)))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "device %d may not access device %d's memory: call "
                           "aclrtDeviceEnablePeerAccess(%d, 0) with device %d current first",
                           dstDevId, w.device->id, w.device->id, dstDevId);
    aclsim__release_heaps(&hold);
    return err;
}
