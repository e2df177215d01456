/*
 * Platform queries: acl/acl_platform.h (hardware facts as strings), atomic
 * capabilities, per-component memory usage, and compute-power groups.
 */
#include "internal.h"

#include "acl/acl_platform.h"

#include <stdio.h>
#include <string.h>

/* Facts beyond src/soc.def, by family: L0 A/B/C, L1 and base-tile sizes in
 * bytes, cube/vector clocks in MHz, the AI Core version string. */
static const struct family_facts {
    uint32_t l0a, l0b, l0c, l1, bt, cube_mhz, vec_mhz;
    const char *aic;
} facts[] = {
    [ACLSIM_FAMILY_A2] = {65536, 65536, 131072, 524288, 1024, 1850, 1850, "AIC-C-220"},
    [ACLSIM_FAMILY_A3] = {65536, 65536, 131072, 524288, 1024, 1850, 1850, "AIC-C-220"},
    [ACLSIM_FAMILY_A5] = {65536, 65536, 262144, 524288, 4096, 1650, 1650, "AIC-C-351"},
    [ACLSIM_FAMILY_INFERENCE] = {65536, 65536, 262144, 1048576, 1024, 1080, 1080, "AIC-M-200"},
    [ACLSIM_FAMILY_EDGE] = {65536, 65536, 131072, 1048576, 1024, 1000, 1000, "AIC-M-300"},
    [ACLSIM_FAMILY_TRAINING] = {65536, 65536, 262144, 1048576, 1024, 1000, 1000, "AIC-C-100"},
    [ACLSIM_FAMILY_IPV] = {32768, 32768, 65536, 262144, 1024, 800, 800, "AIC-M-310"},
};

aclError aclplatformGetDeviceInfo(aclplatformDevInfo infoType, char *value, uint32_t maxLen)
{
    static const char api[] = "aclplatformGetDeviceInfo";
    ACLSIM_REQUIRE_INIT(api);
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    const struct aclsim__soc *soc = aclsim__soc_current();
    const struct family_facts *f = &facts[soc->family];
    char text[64];
    unsigned long long n = 0;
    bool number = true;
    switch (infoType) {
    case ACL_PLATFORM_AICORE_CNT:
    case ACL_PLATFORM_CUBE_CORE_CNT: n = soc->aicore; break;
    case ACL_PLATFORM_VECTOR_CORE_CNT: n = soc->vector; break;
    case ACL_PLATFORM_AICORE_UB_SIZE: n = soc->ub; break;
    case ACL_PLATFORM_L2_SIZE: n = soc->l2; break;
    case ACL_PLATFORM_MEMORY_SIZE: n = aclsim__config()->device_memory; break;
    case ACL_PLATFORM_CUBE_FREQ: n = f->cube_mhz; break;
    case ACL_PLATFORM_VEC_FREQ: n = f->vec_mhz; break;
    case ACL_PLATFORM_BT_SIZE: n = f->bt; break;
    case ACL_PLATFORM_L0_A_SIZE: n = f->l0a; break;
    case ACL_PLATFORM_L0_B_SIZE: n = f->l0b; break;
    case ACL_PLATFORM_L0_C_SIZE: n = f->l0c; break;
    case ACL_PLATFORM_L1_SIZE: n = f->l1; break;
    case ACL_PLATFORM_NPU_ARCH: n = soc->npu_arch; break;
    case ACL_PLATFORM_MEMORY_TYPE: n = HBM; break;
    case ACL_PLATFORM_SOC_VERSION:
        snprintf(text, sizeof text, "%s", soc->name);
        number = false;
        break;
    case ACL_PLATFORM_AIC_VERSION:
        snprintf(text, sizeof text, "%s", f->aic);
        number = false;
        break;
    default:
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "infoType %d is not an aclplatformDevInfo value (0..16)", (int)infoType);
    }
    if (number)
        snprintf(text, sizeof text, "%llu", n);
    size_t len = strlen(text);
    if (len >= maxLen)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "maxLen %u is too small for the value \"%s\" (%zu bytes with the NUL)",
                            maxLen, text, len + 1);
    memcpy(value, text, len + 1);
    return ACL_SUCCESS;
}

aclError aclplatformGetInstructionInfo(aclplatformCoreType type, const char *instruction,
                                       char *value, uint32_t maxLen)
{
    static const char api[] = "aclplatformGetInstructionInfo";
    ACLSIM_REQUIRE_INIT(api);
    (void)maxLen;
    if (!instruction || !value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !instruction ? "instruction" : "value");
    if (type != ACL_PLATFORM_CORE_TYPE_AI_CORE && type != ACL_PLATFORM_CORE_TYPE_VECTOR_CORE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "type %d is not an aclplatformCoreType value (0, 1)", (int)type);
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "aclsim has no instruction tables (CANN's data/platform_config files "
                        "describe the NPU's instruction set; kernels run as CPU code here)");
}

/* ---- atomics ------------------------------------------------------------------ */

/* Device memory is host memory here: host and device (and two devices) share
 * one address space and the CPU's atomic instructions. */
static uint32_t capability_of(aclrtAtomicOperation op)
{
    const uint32_t scalars = ACL_RT_ATOMIC_CAPABILITY_SCALAR8 | ACL_RT_ATOMIC_CAPABILITY_SCALAR16 |
                             ACL_RT_ATOMIC_CAPABILITY_SCALAR32 | ACL_RT_ATOMIC_CAPABILITY_SCALAR64;
    switch (op) {
    case ACL_RT_ATOMIC_OPERATION_INTEGER_ADD:
    case ACL_RT_ATOMIC_OPERATION_INTEGER_MIN:
    case ACL_RT_ATOMIC_OPERATION_INTEGER_MAX:
    case ACL_RT_ATOMIC_OPERATION_INTEGER_INCREMENT:
    case ACL_RT_ATOMIC_OPERATION_INTEGER_DECREMENT:
    case ACL_RT_ATOMIC_OPERATION_AND:
    case ACL_RT_ATOMIC_OPERATION_OR:
    case ACL_RT_ATOMIC_OPERATION_XOR:
    case ACL_RT_ATOMIC_OPERATION_EXCHANGE:
    case ACL_RT_ATOMIC_OPERATION_CAS:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_ADD:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MIN:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MAX:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_CAS:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH:
        return ACL_RT_ATOMIC_CAPABILITY_SIGNED | ACL_RT_ATOMIC_CAPABILITY_UNSIGNED | scalars;
    case ACL_RT_ATOMIC_OPERATION_FLOAT_ADD:
    case ACL_RT_ATOMIC_OPERATION_FLOAT_MIN:
    case ACL_RT_ATOMIC_OPERATION_FLOAT_MAX:   /* compare-and-swap loops on float and double */
        return ACL_RT_ATOMIC_CAPABILITY_SCALAR32 | ACL_RT_ATOMIC_CAPABILITY_SCALAR64;
    case ACL_RT_ATOMIC_OPERATION_DMA_ADD:
    case ACL_RT_ATOMIC_OPERATION_DMA_MIN:
    case ACL_RT_ATOMIC_OPERATION_DMA_MAX:
        return 0;   /* aclsim has no DMA engine */
    }
    return UINT32_MAX;   /* not an operation */
}

static aclError capabilities(const char *api, uint32_t *caps, const aclrtAtomicOperation *ops,
                             uint32_t count)
{
    if (!caps || !ops)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !caps ? "capabilities" : "operations");
    if (count == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "count is 0");
    for (uint32_t i = 0; i < count; i++)
        if (capability_of(ops[i]) == UINT32_MAX)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "operations[%u] = %d is not an aclrtAtomicOperation value", i,
                                (int)ops[i]);
    for (uint32_t i = 0; i < count; i++)
        caps[i] = capability_of(ops[i]);
    return ACL_SUCCESS;
}

aclError aclrtDeviceGetHostAtomicCapabilities(uint32_t *capabilities_, const aclrtAtomicOperation *operations,
                                              const uint32_t count, int32_t deviceId)
{
    static const char api[] = "aclrtDeviceGetHostAtomicCapabilities";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__device_check_id(deviceId, api);
    return err ? err : capabilities(api, capabilities_, operations, count);
}

aclError aclrtDeviceGetP2PAtomicCapabilities(uint32_t *capabilities_, const aclrtAtomicOperation *operations,
                                             const uint32_t count, int32_t srcDeviceId,
                                             int32_t dstDeviceId)
{
    static const char api[] = "aclrtDeviceGetP2PAtomicCapabilities";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__device_check_id(srcDeviceId, api);
    if (!err)
        err = aclsim__device_check_id(dstDeviceId, api);
    return err ? err : capabilities(api, capabilities_, operations, count);
}

/* ---- memory usage by component ------------------------------------------------- */

aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo *memUsageInfo, size_t inputNum,
                              size_t *outputNum)
{
    static const char api[] = "aclrtGetMemUsageInfo";
    ACLSIM_REQUIRE_INIT(api);
    if (!memUsageInfo || !outputNum)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !memUsageInfo ? "memUsageInfo" : "outputNum");
    if (inputNum == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "inputNum is 0");
    aclError err = aclsim__device_check_id(deviceId, api);
    if (err)
        return err;
    /* The components of a simulated device's memory: what the program
     * allocated (aclrtMalloc & co.) and the device variables' instances. */
    struct aclsim__heap *h = &aclsim__devices[deviceId].heap;
    enum { NPARTS = 5 };
    aclrtMemUsageInfo rows[NPARTS];
    memset(rows, 0, sizeof rows);
    static const struct { const char *name; int kind; } parts[NPARTS] = {
        {"app", ACLSIM_ALLOC_MALLOC}, {"device_variables", ACLSIM_ALLOC_SYMBOL},
        {"physical", ACLSIM_ALLOC_PHYSICAL}, {"managed", ACLSIM_ALLOC_MANAGED},
        {"mem_pool", ACLSIM_ALLOC_POOL}};
    int nrows = 0;
    for (int i = 0; i < NPARTS; i++) {
        size_t used, peak;
        aclsim__heap_usage(h, parts[i].kind, &used, &peak);
        if (i >= 2 && peak == 0)
            continue;   /* physical, managed and pool memory: listed once used */
        snprintf(rows[nrows].name, sizeof rows[nrows].name, "%s", parts[i].name);
        rows[nrows].curMemSize = used;
        rows[nrows].memPeakSize = peak;
        nrows++;
    }
    for (int i = 1; i < nrows; i++)   /* largest first (stable) */
        for (int j = i; j > 0 && rows[j].curMemSize > rows[j - 1].curMemSize; j--) {
            aclrtMemUsageInfo t = rows[j];
            rows[j] = rows[j - 1];
            rows[j - 1] = t;
        }
    size_t n = inputNum < (size_t)nrows ? inputNum : (size_t)nrows;
    memcpy(memUsageInfo, rows, n * sizeof rows[0]);
    *outputNum = n;
    return ACL_SUCCESS;
}

/* ---- compute-power groups -------------------------------------------------------- */

/* CANN offers groups only on Atlas inference products in Control CPU mode;
 * aclsim's devices are PCIe cards driven by the host (EP mode). */
static aclError no_groups(const char *api)
{
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "compute-power groups exist only on Atlas inference products in Control "
                        "CPU mode; aclsim simulates PCIe cards driven by the host (EP mode)");
}

aclError aclrtSetGroup(int32_t groupId)
{
    ACLSIM_REQUIRE_INIT("aclrtSetGroup");
    (void)groupId;
    return no_groups("aclrtSetGroup");
}

aclError aclrtGetGroupCount(uint32_t *count)
{
    ACLSIM_REQUIRE_INIT("aclrtGetGroupCount");
    if (!count)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetGroupCount", "count is NULL");
    return no_groups("aclrtGetGroupCount");
}

aclrtGroupInfo *aclrtCreateGroupInfo(void)
{
    no_groups("aclrtCreateGroupInfo");
    return NULL;
}

aclError aclrtDestroyGroupInfo(aclrtGroupInfo *groupInfo)
{
    if (!groupInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyGroupInfo", "groupInfo is NULL");
    return no_groups("aclrtDestroyGroupInfo");
}

aclError aclrtGetAllGroupInfo(aclrtGroupInfo *groupInfo)
{
    ACLSIM_REQUIRE_INIT("aclrtGetAllGroupInfo");
    if (!groupInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetAllGroupInfo", "groupInfo is NULL");
    return no_groups("aclrtGetAllGroupInfo");
}

aclError aclrtGetGroupInfoDetail(const aclrtGroupInfo *groupInfo, int32_t groupIndex,
                                 aclrtGroupAttr attr, void *attrValue, size_t valueLen,
                                 size_t *paramRetSize)
{
    static const char api[] = "aclrtGetGroupInfoDetail";
    ACLSIM_REQUIRE_INIT(api);
    (void)groupIndex;
    (void)attr;
    (void)valueLen;
    if (!groupInfo || !attrValue || !paramRetSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !groupInfo ? "groupInfo" : !attrValue ? "attrValue" : "paramRetSize");
    return no_groups(api);
}
