/*
 * Product families. CANN's reference pages say, per function, on which
 * products it is supported; aclsim follows the configured SoC
 * (ACLSIM_SOC_VERSION) and answers 207000 on the others.
 */
#include "internal.h"

#include <string.h>

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

unsigned aclsim__soc_family(void)
{
    const char *n = aclsim__config()->soc_name;
    if (starts(n, "Ascend950"))
        return ACLSIM_SOC_950;
    if (starts(n, "Ascend910_93"))
        return ACLSIM_SOC_A3;
    if (starts(n, "Ascend910B") && n[10] >= '1' && n[10] <= '4')
        return ACLSIM_SOC_A2;
    if (starts(n, "Ascend310B"))
        return ACLSIM_SOC_310B;
    if (starts(n, "Ascend310P"))
        return ACLSIM_SOC_310P;
    if (starts(n, "IPV350"))
        return ACLSIM_SOC_IPV350;
    return ACLSIM_SOC_910;   /* Ascend910A, Ascend910B, Ascend910Pro*, Ascend910Premium* */
}

static const char *family_name(unsigned f)
{
    switch (f) {
    case ACLSIM_SOC_950: return "Ascend 950PR/950DT";
    case ACLSIM_SOC_A3: return "Atlas A3 training/inference series";
    case ACLSIM_SOC_A2: return "Atlas A2 training/inference series";
    case ACLSIM_SOC_310B: return "Atlas 200I/500 A2 inference products";
    case ACLSIM_SOC_310P: return "Atlas inference series";
    case ACLSIM_SOC_910: return "Atlas training series";
    default: return "IPV350";
    }
}

aclError aclsim__soc_require(unsigned families, const char *api)
{
    unsigned f = aclsim__soc_family();
    if (ACLSIM_LIKELY(families & f))
        return ACL_SUCCESS;
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "not supported on SoC %s (%s), as in CANN; set ACLSIM_SOC_VERSION to a "
                        "product that supports it (see docs/failures.md)",
                        aclsim__config()->soc_name, family_name(f));
}
