/*
 * Host memory registration (CANN's 11-02): aclrtHostRegister(V2),
 * aclrtHostGetDevicePointer, aclrtHostUnregister, aclrtHostMemMapCapabilities.
 * See docs/memory.md.
 *
 * Host and simulated devices share one address space, so the device pointer
 * of a registered range is the host address itself: a kernel's writes
 * through it are the host buffer's bytes. Registered ordinary memory counts
 * as page-locked from then on (copies with it do not wait). Registrations
 * are ranges of the registry (ranges.h), under aclsim__ranges_lock.
 */
#include "ranges.h"

struct registration {
    struct registration *next;
    uintptr_t base;
    size_t size;
    uint32_t flags;          /* ACL_HOST_REG_* */
};

static struct registration *regs;

static const unsigned reg_families =
    ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A5);

/* The registration containing p (lock held), or NULL. */
static struct registration *registration_of(const void *p)
{
    for (struct registration *r = regs; r; r = r->next)
        if ((uintptr_t)p - r->base < r->size)
            return r;
    return NULL;
}

static aclError do_register(const char *api, void *ptr, uint64_t size, uint32_t flags)
{
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    if ((uintptr_t)ptr % 4096)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "ptr %p is not aligned to a 4 KiB page", ptr);
    struct aclsim__where w = aclsim__classify(ptr);
    if (w.kind != ACLSIM_HOST && w.kind != ACLSIM_PINNED && w.kind != ACLSIM_REGISTERED) {
        char what[256];
        aclsim__describe(ptr, what, sizeof what);
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "ptr %p is not host memory: it is %s",
                            ptr, what);
    }
    if ((flags & ACL_HOST_REG_PINNED) && w.kind == ACLSIM_PINNED)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "ptr %p is page-locked already (aclrtMallocHost): "
                            "ACL_HOST_REG_PINNED is for pageable memory", ptr);
    if ((uintptr_t)ptr + size < (uintptr_t)ptr)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "size %llu wraps around",
                            (unsigned long long)size);
    struct registration *r = aclsim__malloc(sizeof *r);
    if (!r)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    *r = (struct registration){NULL, (uintptr_t)ptr, (size_t)size, flags};
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct registration *old = NULL;
    for (struct registration *o = regs; o && !old; o = o->next)
        if (o->base < r->base + r->size && r->base < o->base + o->size)
            old = o;
    if (old) {
        err = aclsim__fail(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, api,
                           "%llu bytes at %p overlap the registered range at %p (%zu bytes)",
                           (unsigned long long)size, ptr, (void *)old->base, old->size);
    } else if (w.kind == ACLSIM_HOST && aclsim__ranges_overlap(r->base, r->size)) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "%llu bytes at %p overlap reserved or managed memory",
                           (unsigned long long)size, ptr);
    } else if (w.kind == ACLSIM_HOST && !aclsim__ranges_add(r->base, r->size,
                                                            ACLSIM_RANGE_REGISTERED, r)) {
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    } else {
        /* Page-locked memory stays in the host heap's hands: only ordinary
         * memory enters the registry (classify finds the heap first). */
        r->next = regs;
        regs = r;
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    if (err)
        free(r);
    return err;
}

aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr)
{
    static const char api[] = "aclrtHostRegister";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr || !devPtr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !ptr ? "ptr" : "devPtr");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    aclError err = aclsim__soc_check(api, reg_families);
    if (err)
        return err;
    if (type == ACL_HOST_REGISTER_IOMEMORY || type == ACL_HOST_REGISTER_READONLY)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "type %d is reserved: only ACL_HOST_REGISTER_MAPPED is supported",
                            (int)type);
    if (type != ACL_HOST_REGISTER_MAPPED)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "type %d is not an aclrtHostRegisterType value", (int)type);
    err = do_register(api, ptr, size, ACL_HOST_REG_MAPPED);
    if (!err)
        *devPtr = ptr;   /* one address space: the device pointer is the host address */
    return err;
}

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag)
{
    static const char api[] = "aclrtHostRegisterV2";
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    aclError err = aclsim__soc_check(api, reg_families);
    if (err)
        return err;
    const uint32_t known = (uint32_t)(ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY |
                                      ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED);
    if (flag == 0 || (flag & ~known))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flag 0x%x is not a combination of ACL_HOST_REG_* values", flag);
    if (flag & (ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY))
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "flag 0x%x: ACL_HOST_REG_IOMEMORY and ACL_HOST_REG_READONLY are reserved",
                            flag);
    return do_register(api, ptr, size, flag);
}

aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag)
{
    static const char api[] = "aclrtHostGetDevicePointer";
    ACLSIM_REQUIRE_INIT(api);
    if (!pHost || !pDevice)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !pHost ? "pHost" : "pDevice");
    if (flag != 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "flag is %u (reserved, must be 0)", flag);
    aclError err = aclsim__soc_check(api, reg_families);
    if (err)
        return err;
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    struct registration *r = registration_of(pHost);
    if (!r)
        err = aclsim__fail(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, api,
                           "pHost %p is not in registered host memory (aclrtHostRegister)", pHost);
    else if (!(r->flags & ACL_HOST_REG_MAPPED))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "pHost %p was registered without ACL_HOST_REG_MAPPED", pHost);
    else
        *pDevice = pHost;
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

aclError aclrtHostUnregister(void *ptr)
{
    static const char api[] = "aclrtHostUnregister";
    aclError err = aclsim__ranges_enter(api, "ptr", ptr, reg_families);
    if (err)
        return err;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct registration **pp = &regs;
    while (*pp && (*pp)->base != (uintptr_t)ptr)
        pp = &(*pp)->next;
    struct registration *r = *pp;
    if (!r) {
        err = aclsim__fail(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, api,
                           "ptr %p is not the start of registered host memory", ptr);
    } else {
        *pp = r->next;
        const struct aclsim__range *range = aclsim__ranges_find(ptr);
        if (range && range->owner == r)
            aclsim__ranges_remove(r->base);
        free(r);
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType,
                                     aclrtHostMemMapCapability *capabilities)
{
    static const char api[] = "aclrtHostMemMapCapabilities";
    ACLSIM_REQUIRE_INIT(api);
    if (!capabilities)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "capabilities is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__device_check_id((int32_t)deviceId, api);
    if (err)
        return err;
    if ((unsigned)hacType > ACL_RT_HAC_TYPE_CCU)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "hacType %d is not an aclrtHacType value", (int)hacType);
    /* Kernels (AI Core and Vector Core) read and write registered memory. */
    *capabilities = hacType == ACL_RT_HAC_TYPE_AIC || hacType == ACL_RT_HAC_TYPE_AIV
                        ? ACL_RT_HOST_MEM_MAP_SUPPORTED
                        : ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
    return ACL_SUCCESS;
}

/* aclFinalize, lock held for writing (the registry itself is emptied by the caller). */
void aclsim__hostreg_finalize(void)
{
    while (regs) {
        struct registration *r = regs;
        regs = r->next;
        free(r);
    }
}
