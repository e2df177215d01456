/*
 * Device identities: the three device ids, UUIDs, PCI bus ids, topology.
 *
 * CANN's terms: the *user* id is the index a program passes (0..n-1 after
 * ASCEND_RT_VISIBLE_DEVICES), the *logic* id is the id that variable lists
 * (the same as the user id when it is unset), and the *physical* id the
 * hardware's. Outside a container the physical id equals the logic id, and
 * aclsim runs outside one. Every simulated device is a PCIe card; devices
 * 0-3 and 4-7 (by physical id) share a PCIe switch, as in an eight-card server.
 * The UUID and PCI bus id are derived from the physical id, so they are stable
 * across runs and distinct between devices.
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define PCI_BUS_BASE 0x01u     /* device with physical id p sits on bus 0x01 + p */
#define SWITCH_WIDTH 4u        /* devices per PCIe switch */

static aclError check_out(const char *api, const void *p, const char *name)
{
    return p ? ACL_SUCCESS : aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
}

/* Physical ids are 0 .. ACLSIM_DEVICE_COUNT-1. */
static aclError check_physical(const char *api, int32_t id, const char *what)
{
    uint32_t n = aclsim__config()->physical_devices;
    if (id < 0 || (uint32_t)id >= n)
        return aclsim__fail(ACL_ERROR_RT_INVALID_DEVICEID, api,
                            "%s %d is invalid: the machine has %u device(s) (ids 0..%d)", what, id,
                            n, (int)n - 1);
    return ACL_SUCCESS;
}

/* The user id under which physical (= logic) id p is visible, or -1. */
static int32_t user_of(int32_t p)
{
    const struct aclsim__config *c = aclsim__config();
    for (uint32_t u = 0; u < c->visible_count; u++)
        if (c->visible[u] == (uint32_t)p)
            return (int32_t)u;
    return -1;
}

static aclError user_to_logic(const char *api, int32_t user, int32_t *out, const char *name)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_out(api, out, name);
    if (!err)
        err = aclsim__device_check_id(user, api);
    if (!err)
        *out = (int32_t)aclsim__config()->visible[user];
    return err;
}

static aclError logic_to_user(const char *api, int32_t logic, int32_t *out, const char *name)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_out(api, out, name);
    if (!err)
        err = check_physical(api, logic, "device id");
    if (err)
        return err;
    int32_t u = user_of(logic);
    if (u < 0)
        return aclsim__fail(ACL_ERROR_RT_INVALID_DEVICEID, api,
                            "device %d is not visible to this process (ASCEND_RT_VISIBLE_DEVICES)",
                            logic);
    *out = u;
    return ACL_SUCCESS;
}

static aclError logic_to_physical(const char *api, int32_t id, int32_t *out, const char *name)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_out(api, out, name);
    if (!err)
        err = check_physical(api, id, "device id");
    if (!err)
        *out = id;   /* not in a container: logic id == physical id */
    return err;
}

aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId)
{
    return user_to_logic("aclrtGetLogicDevIdByUserDevId", userDevid, logicDevId, "logicDevId");
}

aclError aclrtGetPhyDevIdByUserDevId(const int32_t userDevId, int32_t *const phyDevId)
{
    return user_to_logic("aclrtGetPhyDevIdByUserDevId", userDevId, phyDevId, "phyDevId");
}

aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId, int32_t *const userDevid)
{
    return logic_to_user("aclrtGetUserDevIdByLogicDevId", logicDevId, userDevid, "userDevid");
}

aclError aclrtGetUserDevIdByPhyDevId(const int32_t phyDevId, int32_t *const userDevId)
{
    return logic_to_user("aclrtGetUserDevIdByPhyDevId", phyDevId, userDevId, "userDevId");
}

aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId, int32_t *const logicDevId)
{
    return logic_to_physical("aclrtGetLogicDevIdByPhyDevId", phyDevId, logicDevId, "logicDevId");
}

aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId, int32_t *const phyDevId)
{
    return logic_to_physical("aclrtGetPhyDevIdByLogicDevId", logicDevId, phyDevId, "phyDevId");
}

aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid)
{
    static const char api[] = "aclrtDeviceGetUuid";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_out(api, uuid, "uuid");
    if (!err)
        err = aclsim__device_check_id(deviceId, api);
    if (err)
        return err;
    /* "aclsim" + the physical id, shaped as an RFC 4122 version-8 UUID. */
    uint32_t p = aclsim__config()->visible[deviceId];
    unsigned char b[16] = {'a', 'c', 'l', 's', 'i', 'm', 0x80, 0,
                           0x80, 0, 0, 0, (unsigned char)(p >> 24), (unsigned char)(p >> 16),
                           (unsigned char)(p >> 8), (unsigned char)p};
    memcpy(uuid->bytes, b, sizeof b);
    return ACL_SUCCESS;
}

aclError aclrtDeviceGetPCIBusId(int32_t deviceId, char *pciBusId, int32_t len)
{
    static const char api[] = "aclrtDeviceGetPCIBusId";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_out(api, pciBusId, "pciBusId");
    if (!err)
        err = aclsim__device_check_id(deviceId, api);
    if (err)
        return err;
    char id[16];
    int n = snprintf(id, sizeof id, "0000:%02x:00.0", PCI_BUS_BASE + aclsim__config()->visible[deviceId]);
    if (len <= n)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "len %d is too small for the PCI bus id \"%s\" (%d bytes with the NUL)",
                            len, id, n + 1);
    memcpy(pciBusId, id, (size_t)n + 1);
    return ACL_SUCCESS;
}

/* Parses "[domain:]bus:device.function" (hex, any case). */
static bool parse_bus_id(const char *s, unsigned *bus)
{
    unsigned domain = 0, b = 0, dev = 0, fn = 0;
    int used = 0;
    if (sscanf(s, "%x:%x:%x.%x%n", &domain, &b, &dev, &fn, &used) == 4 && s[used] == '\0') {
        *bus = b;
        return domain == 0 && dev == 0 && fn == 0;
    }
    used = 0;
    if (sscanf(s, "%x:%x.%x%n", &b, &dev, &fn, &used) == 3 && s[used] == '\0') {
        *bus = b;
        return dev == 0 && fn == 0;
    }
    return false;
}

aclError aclrtDeviceGetByPCIBusId(const char *pciBusId, int32_t *deviceId)
{
    static const char api[] = "aclrtDeviceGetByPCIBusId";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_out(api, pciBusId, "pciBusId");
    if (!err)
        err = check_out(api, deviceId, "deviceId");
    if (err)
        return err;
    unsigned bus = 0;
    bool ok = true;
    for (const char *c = pciBusId; *c && ok; c++)
        ok = isxdigit((unsigned char)*c) || *c == ':' || *c == '.';
    if (!ok || !parse_bus_id(pciBusId, &bus))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "pciBusId \"%s\" is not a PCI bus id of the form 0000:bb:00.0", pciBusId);
    int32_t user = bus >= PCI_BUS_BASE ? user_of((int32_t)(bus - PCI_BUS_BASE)) : -1;
    if (user < 0)
        return aclsim__fail(ACL_ERROR_RT_INVALID_DEVICEID, api,
                            "no visible device sits at PCI bus id \"%s\"", pciBusId);
    *deviceId = user;
    return ACL_SUCCESS;
}

aclError aclrtGetDevicesTopo(uint32_t deviceId, uint32_t otherDeviceId, uint64_t *value)
{
    static const char api[] = "aclrtGetDevicesTopo";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_out(api, value, "value");
    if (!err)
        err = aclsim__device_check_id(deviceId > INT32_MAX ? -1 : (int32_t)deviceId, api);
    if (!err)
        err = aclsim__device_check_id(otherDeviceId > INT32_MAX ? -1 : (int32_t)otherDeviceId, api);
    if (err)
        return err;
    if (deviceId == otherDeviceId)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "deviceId and otherDeviceId are both %u: a topology needs two devices",
                            deviceId);
    const uint32_t *v = aclsim__config()->visible;
    *value = v[deviceId] / SWITCH_WIDTH == v[otherDeviceId] / SWITCH_WIDTH
                 ? ACL_RT_DEVS_TOPOLOGY_PIX   /* the same PCIe switch */
                 : ACL_RT_DEVS_TOPOLOGY_PHB;  /* through the host bridge */
    return ACL_SUCCESS;
}
