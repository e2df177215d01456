/*
 * The simulated device model: what each SoC looks like (src/soc.def), and
 * the queries that answer from it: aclGetDeviceCapability, aclrtGetDeviceInfo,
 * aclrtGetDeviceCapability, aclrtCheckArchCompatibility and the CANN feature
 * attributes.
 */
#include "internal.h"

#include <string.h>

static const struct aclsim__soc socs[] = {
#define ACLSIM_SOC(name, family, arch, aicore, vector, aicpu, mem_gib, ub_kib, l2_mib, symbols) \
    {name, ACLSIM_FAMILY_##family, arch, aicore, vector, aicpu, (uint64_t)(mem_gib) << 30,      \
     (ub_kib) * 1024u, (uint64_t)(l2_mib) << 20, symbols},
#include "soc.def"
#undef ACLSIM_SOC
};

const struct aclsim__soc *aclsim__soc_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof socs / sizeof socs[0]; i++)
        if (strcmp(socs[i].name, name) == 0)
            return &socs[i];
    return NULL;
}

const struct aclsim__soc *aclsim__soc_current(void)
{
    const struct aclsim__soc *s = aclsim__soc_find(aclsim__config()->soc_name);
    return s ? s : &socs[0];   /* aclInit refuses unknown names: never taken */
}

aclError aclsim__soc_check(const char *api, unsigned families)
{
    const struct aclsim__soc *soc = aclsim__soc_current();
    if (families & (1u << soc->family))
        return ACL_SUCCESS;
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "not supported on %s (ACLSIM_SOC_VERSION): CANN does not support it on "
                        "that product", soc->name);
}

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value)
{
    static const char api[] = "aclGetDeviceCapability";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    aclError err = aclsim__device_check_id(deviceId > INT32_MAX ? -1 : (int32_t)deviceId, api);
    if (err)
        return err;
    const struct aclsim__soc *soc = aclsim__soc_current();
    switch (deviceInfo) {
    case ACL_DEVICE_INFO_AI_CORE_NUM: *value = soc->aicore; break;
    case ACL_DEVICE_INFO_VECTOR_CORE_NUM: *value = soc->vector; break;
    case ACL_DEVICE_INFO_L2_SIZE: *value = (int64_t)soc->l2; break;
    default:
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "deviceInfo %d is not an aclDeviceInfo value (0..2)", (int)deviceInfo);
    }
    return ACL_SUCCESS;
}

/* SIMT attributes exist only on the Ascend 950 (its vector cores run threads). */
static bool simt(const struct aclsim__soc *soc) { return soc->family == ACLSIM_FAMILY_A5; }

aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)
{
    static const char api[] = "aclrtGetDeviceInfo";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    const struct aclsim__soc *soc = aclsim__soc_current();
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__device_check_id(deviceId > INT32_MAX ? -1 : (int32_t)deviceId, api);
    if (err)
        return err;
    const struct aclsim__device *dev = &aclsim__devices[deviceId];
    switch (attr) {
    case ACL_DEV_ATTR_AICPU_CORE_NUM: *value = soc->aicpu; return ACL_SUCCESS;
    case ACL_DEV_ATTR_AICORE_CORE_NUM:
    case ACL_DEV_ATTR_CUBE_CORE_NUM: *value = soc->aicore; return ACL_SUCCESS;
    case ACL_DEV_ATTR_VECTOR_CORE_NUM: *value = soc->vector; return ACL_SUCCESS;
    case ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE: *value = soc->ub; return ACL_SUCCESS;
    case ACL_DEV_ATTR_MAX_GRID_DIM_X:
    case ACL_DEV_ATTR_MAX_BLOCK_PER_GRID: *value = ACLSIM_MAX_BLOCKS; return ACL_SUCCESS;
    case ACL_DEV_ATTR_MAX_GRID_DIM_Y:
    case ACL_DEV_ATTR_MAX_GRID_DIM_Z: *value = 1; return ACL_SUCCESS;
    case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE:
        *value = (int64_t)aclsim__config()->device_memory;
        return ACL_SUCCESS;
    case ACL_DEV_ATTR_L2_CACHE_SIZE: *value = (int64_t)soc->l2; return ACL_SUCCESS;
    case ACL_DEV_ATTR_SMP_ID: *value = 0; return ACL_SUCCESS;   /* one OS: the host's */
    case ACL_DEV_ATTR_PHY_CHIP_ID: *value = dev->physical_id; return ACL_SUCCESS;
    case ACL_DEV_ATTR_CUST_OP_PRIVILEGE: *value = 1; return ACL_SUCCESS;
    case ACL_DEV_ATTR_MAINBOARD_ID: *value = 0; return ACL_SUCCESS;
    case ACL_DEV_ATTR_HD_CONNECT_TYPE: *value = ACL_HOST_DEVICE_CONNECT_TYPE_PCIE; return ACL_SUCCESS;
    case ACL_DEV_ATTR_DEVICE_FORM_FACTOR: *value = ACL_DEVICE_FORM_FACTOR_PCIE_CARD; return ACL_SUCCESS;
    case ACL_DEV_ATTR_IS_VIRTUAL: *value = 0; return ACL_SUCCESS;
    case ACL_DEV_ATTR_NPU_ARCH: *value = soc->npu_arch; return ACL_SUCCESS;
    case ACL_DEV_ATTR_SUPER_POD_DEVICE_ID:
    case ACL_DEV_ATTR_SUPER_POD_SERVER_ID:
    case ACL_DEV_ATTR_SUPER_POD_ID:
        if (soc->family != ACLSIM_FAMILY_A3)
            return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                "attr %d (super pod) exists only on Atlas A3 products, not on %s",
                                (int)attr, soc->name);
        /* One simulated server, alone in its super pod. */
        *value = attr == ACL_DEV_ATTR_SUPER_POD_DEVICE_ID ? dev->physical_id : 0;
        return ACL_SUCCESS;
    case ACL_DEV_ATTR_WARP_SIZE:
    case ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE:
    case ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK:
    case ACL_DEV_ATTR_MAX_BLOCK_DIM_X:
    case ACL_DEV_ATTR_MAX_BLOCK_DIM_Y:
    case ACL_DEV_ATTR_MAX_BLOCK_DIM_Z:
        if (!simt(soc))
            return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                "attr %d (SIMT) exists only on Ascend 950, not on %s", (int)attr,
                                soc->name);
        *value = attr == ACL_DEV_ATTR_WARP_SIZE ? 32
                 : attr == ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE ? 2048
                 : attr == ACL_DEV_ATTR_MAX_BLOCK_DIM_Z ? 64 : 1024;
        return ACL_SUCCESS;
    }
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "attr %d is not an aclrtDevAttr value",
                        (int)attr);
}

aclError aclrtGetDeviceCapability(int32_t deviceId, aclrtDevFeatureType devFeatureType,
                                  int32_t *value)
{
    static const char api[] = "aclrtGetDeviceCapability";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__device_check_id(deviceId, api);
    if (err)
        return err;
    switch (devFeatureType) {
    case ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV:   /* task update of captured graphs */
    case ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV:         /* cross-device memory-queue events */
        *value = ACL_DEV_FEATURE_NOT_SUPPORT;   /* neither exists in aclsim (docs/runtime.md) */
        return ACL_SUCCESS;
    }
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "devFeatureType %d is not an aclrtDevFeatureType value", (int)devFeatureType);
}

aclError aclrtCheckArchCompatibility(const char *socVersion, int32_t *canCompatible)
{
    static const char api[] = "aclrtCheckArchCompatibility";
    ACLSIM_REQUIRE_INIT(api);
    if (!socVersion || !canCompatible)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !socVersion ? "socVersion" : "canCompatible");
    const struct aclsim__soc *other = aclsim__soc_find(socVersion);
    if (!other)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "socVersion \"%s\" is not a known SoC name",
                            socVersion);
    /* Binaries built for socVersion run here if the architecture is the same. */
    *canCompatible = other->npu_arch == aclsim__soc_current()->npu_arch;
    return ACL_SUCCESS;
}

/* CANN features by product: INF/NaN mode and bfloat16 from the A2 generation on. */
static bool cann_attr_supported(aclCannAttr attr)
{
    uint8_t f = aclsim__soc_current()->family;
    bool modern = f == ACLSIM_FAMILY_A2 || f == ACLSIM_FAMILY_A3 || f == ACLSIM_FAMILY_A5;
    switch (attr) {
    case ACL_CANN_ATTR_INF_NAN:
    case ACL_CANN_ATTR_BF16: return modern;
    default: return false;   /* JIT compilation of operators: aclsim compiles none */
    }
}

aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num)
{
    static const char api[] = "aclGetCannAttributeList";
    static const aclCannAttr modern[] = {ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16};
    ACLSIM_REQUIRE_INIT(api);
    if (!cannAttrList || !num)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !cannAttrList ? "cannAttrList" : "num");
    *cannAttrList = modern;   /* static: valid until the process exits, as documented */
    *num = cann_attr_supported(ACL_CANN_ATTR_BF16) ? sizeof modern / sizeof modern[0] : 0;
    return ACL_SUCCESS;
}

aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value)
{
    static const char api[] = "aclGetCannAttribute";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    if (cannAttr != ACL_CANN_ATTR_INF_NAN && cannAttr != ACL_CANN_ATTR_BF16 &&
        cannAttr != ACL_CANN_ATTR_JIT_COMPILE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "cannAttr %d is not an aclCannAttr value",
                            (int)cannAttr);
    *value = cann_attr_supported(cannAttr);
    return ACL_SUCCESS;
}
