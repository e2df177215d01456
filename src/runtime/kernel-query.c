/*
 * Kernels, the function queries: parameter count and layout
 * (aclrtFunctionGetParamCount/ParamInfo), the dynamic UB a block may have,
 * a function's name, address and code size, and aclrtGetFunctionAttribute.
 * They answer for the kernels that kernel.c registers (and binary.c loads)
 * and resolve their handles as its launches do; kernel.h has what they share.
 */
#include "kernel.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

/* The products a query function exists on (CANN's support tables). */
static unsigned soc_families(const char *api)
{
    return strcmp(api, "aclrtGetFunctionSize") ? ACLSIM_ALL_BUT_IPV
                                               : ACLSIM_A5_A3_A2 | INFERENCE_ONLY;
}

/* The kernel of a function handle for the query functions: 107000 for NULL
 * where CANN's ACL layer leaves the check to its runtime (null_code),
 * 107017 for a dead handle. */
static const aclsimKernel *query_kernel(const void *func, bool by_function, const char *api,
                                        aclError null_code, aclError *err)
{
    const aclsimKernel *k = NULL;
    *err = ACL_SUCCESS;
    if (!func)
        *err = aclsim__fail(null_code, api, "funcHandle is NULL");
    else if (!aclsim__initialized())
        *err = aclsim__not_initialized(api);
    else if ((*err = aclsim__soc_check(api, soc_families(api))))
        ;
    else if (!(k = aclsim__kernel_arg(func, by_function)))
        *err = aclsim__kernel_dead_func(func, api);
    return k;
}

/* What CANN's runtime answers for an AI CPU kernel's parameter queries. */
static const aclsimKernel *no_cpu(const aclsimKernel *k, const char *api, aclError *err)
{
    if (k && aclsim__kernel_is_cpu(k)) {
        *err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "kernel %s is an AI CPU kernel: AI CPU kernels are not supported "
                            "(their parameters are not known)", k->name);
        return NULL;
    }
    return k;
}

aclError aclrtFunctionGetParamCount(const void *func, size_t *paramCount)
{
    static const char api[] = "aclrtFunctionGetParamCount";
    if (!func || !paramCount)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !func ? "func" : "paramCount");
    aclError err;
    const aclsimKernel *k = no_cpu(query_kernel(func, true, api, ACL_ERROR_INVALID_PARAM, &err),
                                   api, &err);
    if (k)
        *paramCount = k->num_params;
    return err;
}

aclError aclrtFunctionGetParamInfo(const void *func, size_t paramIndex, size_t *paramOffset,
                                   size_t *paramSize)
{
    static const char api[] = "aclrtFunctionGetParamInfo";
    if (!func)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "func is NULL");
    if (!paramOffset && !paramSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "paramOffset and paramSize cannot both be NULL");
    aclError err;
    const aclsimKernel *k = no_cpu(query_kernel(func, true, api, ACL_ERROR_INVALID_PARAM, &err),
                                   api, &err);
    if (!k)
        return err;
    if (paramIndex >= k->num_params)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "paramIndex %zu is out of range [0, %u) for kernel %s", paramIndex,
                            k->num_params, k->name);
    size_t offsets[16], max_align;
    aclsim__kernel_layout(k, offsets, &max_align);
    if (paramOffset)
        *paramOffset = offsets[paramIndex];
    if (paramSize)
        *paramSize = k->param_size[paramIndex];
    return ACL_SUCCESS;
}

aclError aclrtFunctionGetAvailDynUbufPerBlock(void *func, uint32_t flags, size_t *dynamicUbufSize)
{
    static const char api[] = "aclrtFunctionGetAvailDynUbufPerBlock";
    if (!func || !dynamicUbufSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !func ? "func" : "dynamicUbufSize");
    if (flags)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "flags is %u; it must be 0", flags);
    aclError err;
    if (query_kernel(func, true, api, ACL_ERROR_INVALID_PARAM, &err))
        *dynamicUbufSize = 0;   /* as CANN for every non-SIMT kernel */
    return err;
}

aclError aclrtGetFunctionName(aclrtFuncHandle funcHandle, uint32_t maxLen, char *name)
{
    static const char api[] = "aclrtGetFunctionName";
    if (!name)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "name is NULL");
    aclError err;
    const aclsimKernel *k = query_kernel(funcHandle, false, api, ACL_ERROR_RT_PARAM_INVALID, &err);
    if (!k)
        return err;
    size_t n = strlen(k->name);
    if (maxLen < n + 1)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "maxLen %u is too small for kernel name \"%s\": it should be greater "
                            "than or equal to %zu", maxLen, k->name, n + 1);
    memcpy(name, k->name, n + 1);
    return ACL_SUCCESS;
}

aclError aclrtGetFunctionAddr(aclrtFuncHandle funcHandle, void **aicAddr, void **aivAddr)
{
    static const char api[] = "aclrtGetFunctionAddr";
    if (!funcHandle || !aicAddr || !aivAddr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !funcHandle ? "funcHandle" : !aicAddr ? "aicAddr" : "aivAddr");
    aclError err;
    const aclsimKernel *k = query_kernel(funcHandle, false, api, ACL_ERROR_INVALID_PARAM, &err);
    if (k && aclsim__kernel_is_cpu(k))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "the funcHandle of an AI CPU operator (%s) is not supported", k->name);
    if (k)   /* one code for every core: the kernel's C function */
        *aicAddr = *aivAddr = (void *)(uintptr_t)k->function;
    return err;
}

aclError aclrtGetFunctionSize(aclrtFuncHandle funcHandle, size_t *aicSize, size_t *aivSize)
{
    static const char api[] = "aclrtGetFunctionSize";
    aclError err;
    const aclsimKernel *k = query_kernel(funcHandle, false, api, ACL_ERROR_RT_PARAM_INVALID, &err);
    if (!k)
        return err;
    if (!aicSize || !aivSize)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL",
                            !aicSize ? "aicSize" : "aivSize");
    /* The size of the function's code, from its ELF symbol. */
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(k->function, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
        info.dli_saddr != k->function || !sym->st_size)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "the code size of kernel %s is not known: its function is not an "
                            "exported symbol of its object (a static function, or a program "
                            "linked without -rdynamic)", k->name);
    *aicSize = *aivSize = (size_t)sym->st_size;
    return ACL_SUCCESS;
}

aclError aclrtGetFunctionAttribute(aclrtFuncHandle funcHandle, aclrtFuncAttribute attrType,
                                   int64_t *attrValue)
{
    static const char api[] = "aclrtGetFunctionAttribute";
    if (!funcHandle || !attrValue)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !funcHandle ? "funcHandle" : "attrValue");
    aclError err;
    const aclsimKernel *k = query_kernel(funcHandle, false, api, ACL_ERROR_INVALID_PARAM, &err);
    if (!k)
        return err;
    switch ((int)attrType) {
    case ACL_FUNC_ATTR_KERNEL_TYPE:   /* an AI Core kernel runs on any core of the device */
        *attrValue = aclsim__kernel_is_cpu(k) ? ACL_KERNEL_TYPE_AICPU : ACL_KERNEL_TYPE_AICORE;
        return ACL_SUCCESS;
    case ACL_FUNC_ATTR_KERNEL_RATIO: {
        unsigned ratio = ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A2) | INFERENCE_ONLY;
        if ((err = aclsim__soc_check(api, ratio)))
            return err;
        if (aclsim__kernel_is_cpu(k))
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "the funcHandle of an AI CPU operator (%s) is not supported",
                                k->name);
        /* The SoC's cube : vector core ratio (src/soc.def), reduced. */
        const struct aclsim__soc *soc = aclsim__soc_current();
        uint32_t a = soc->aicore, b = soc->vector;
        while (b) {
            uint32_t r = a % b;
            a = b;
            b = r;
        }
        uint16_t cube = (uint16_t)(a ? soc->aicore / a : 0), vec = (uint16_t)(a ? soc->vector / a : 0);
        *attrValue = (int64_t)((uint32_t)cube << 16 | vec);
        return ACL_SUCCESS;
    }
    case ACL_FUNC_ATTR_KERNEL_SCHED_MODE:
        *attrValue = 0;   /* normal scheduling */
        return ACL_SUCCESS;
    default:
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "attrType %d is out of range [%d, %d]", (int)attrType,
                            ACL_FUNC_ATTR_KERNEL_TYPE, ACL_FUNC_ATTR_KERNEL_SCHED_MODE);
    }
}
