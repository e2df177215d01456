/*
 * Virtual memory management, physical memory: aclrtMallocPhysical,
 * aclrtFreePhysical, the allocation granularity and properties, and their
 * sharing between processes (the shareable handles of ipc-share.c). The
 * design and the lifetime of a physical allocation are described at the top
 * of vmm.c (reservations, mappings, access); vmm.h: what the two share.
 */
#include "vmm.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct phys *aclsim__vmm_physicals;

/* ---- physical memory ---------------------------------------------------------------- */

void aclsim__vmm_destroy_phys(struct phys *ph)
{
    for (struct phys **pp = &aclsim__vmm_physicals; *pp; pp = &(*pp)->next)
        if (*pp == ph) {
            *pp = ph->next;
            break;
        }
    if (ph->handle)
        aclsim__handle_free(ph->handle);
    close(ph->fd);
    if (ph->device && !ph->imported)
        aclsim__heap_uncharge(&ph->device->heap, ACLSIM_ALLOC_PHYSICAL, ph->span, ph->gen);
    free(ph);
}

static bool is_ddr(int attr)
{
    return attr == ACL_DDR_MEM_HUGE || attr == ACL_DDR_MEM_NORMAL || attr == ACL_DDR_MEM_P2P_HUGE ||
           attr == ACL_DDR_MEM_P2P_NORMAL;
}

/* The checks aclrtMallocPhysical and aclrtMemGetAllocationGranularity share,
 * in CANN's order; *page gets the granularity. */
static aclError check_prop(const char *api, const aclrtPhysicalMemProp *prop, size_t *page)
{
    int type = (int)prop->location.type, attr = (int)prop->memAttr;
    bool device = type == ACL_MEM_LOCATION_TYPE_DEVICE;
    if (type == ACL_MEM_LOCATION_TYPE_UNREGISTERED || type == ACL_MEM_LOCATION_TYPE_MANAGED)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "prop->location.type %d: physical memory cannot be %s", type,
                            type == ACL_MEM_LOCATION_TYPE_MANAGED ? "managed" : "unregistered");
    if (device && is_ddr(attr))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "prop->memAttr %d is DDR (host) memory: it needs location type "
                            "ACL_MEM_LOCATION_TYPE_HOST(0) or ACL_MEM_LOCATION_TYPE_HOST_NUMA(4)", attr);
    bool huge1g = attr == ACL_MEM_HUGE1G || attr == ACL_MEM_P2P_HUGE1G || attr == ACL_HBM_MEM_HUGE1G;
    switch (attr) {
    case ACL_MEM_NORMAL: case ACL_MEM_HUGE: case ACL_MEM_HUGE1G: case ACL_MEM_P2P_NORMAL:
    case ACL_MEM_P2P_HUGE: case ACL_MEM_P2P_HUGE1G: case ACL_HBM_MEM_HUGE: case ACL_HBM_MEM_HUGE1G:
    case ACL_HBM_MEM_NORMAL: case ACL_DDR_MEM_HUGE: case ACL_DDR_MEM_NORMAL:
    case ACL_DDR_MEM_P2P_HUGE: case ACL_DDR_MEM_P2P_NORMAL:
        break;
    default:
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "prop->memAttr %d is not supported for physical memory", attr);
    }
    if (type != ACL_MEM_LOCATION_TYPE_HOST && type != ACL_MEM_LOCATION_TYPE_DEVICE &&
        type != ACL_MEM_LOCATION_TYPE_HOST_NUMA)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "prop->location.type %d is not an aclrtMemLocationType value", type);
    if (!device && (huge1g || attr == ACL_HBM_MEM_HUGE || attr == ACL_HBM_MEM_NORMAL))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "prop->memAttr %d is device (HBM or 1G huge page) memory, but the "
                            "location is the host", attr);
    unsigned fam = attr == ACL_MEM_HUGE1G      ? ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3)
                   : attr == ACL_MEM_P2P_HUGE1G ? ACLSIM_FAMILIES(A3)
                   : attr == ACL_HBM_MEM_HUGE1G
                       ? ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A5)
                       : ACLSIM_ALL_BUT_IPV;
    aclError err = aclsim__soc_check(api, fam);
    if (err)
        return err;
    if (device) {
        err = aclsim__device_check_id((int32_t)prop->location.id, api);
        if (err)
            return err;
    }
    *page = huge1g ? ACLSIM_1G : ACLSIM_2M;
    return ACL_SUCCESS;
}

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                          aclrtMemGranularityOptions option, size_t *granularity)
{
    static const char api[] = "aclrtMemGetAllocationGranularity";
    ACLSIM_REQUIRE_INIT(api);
    if (!prop || !granularity)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !prop ? "prop" : "granularity");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    size_t page = 0;
    if (!err)
        err = check_prop(api, prop, &page);
    if (err)
        return err;
    if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM &&
        option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "option %d is not ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM or _RECOMMENDED",
                            (int)option);
    *granularity = page;
    return ACL_SUCCESS;
}

/* CANN's argument checks of aclrtMallocPhysical and the map calls: 100001,
 * then 100000 for a NULL pointer (a, b), size 0 or flags not 0. */
aclError aclsim__vmm_check_args(const char *api, const void *a, const char *an, const void *b,
                                const char *bn, size_t size, uint64_t flags)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!a || !b)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !a ? an : bn);
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0");
    if (flags != 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "flags is %llu (reserved, must be 0)",
                            (unsigned long long)flags);
    return ACL_SUCCESS;
}

void aclsim__vmm_list_phys(struct phys *ph)
{
    ph->next = aclsim__vmm_physicals;
    aclsim__vmm_physicals = ph;
}

/* Gives ph its handle (*handle) and lists it; false, ph unlisted and
 * without a handle, when out of memory. */
static bool publish(struct phys *ph, void **handle)
{
    if (!(ph->handle = aclsim__handle_new(ACLSIM_H_PHYSICAL, ph)))
        return false;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    aclsim__vmm_list_phys(ph);
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    *handle = ph->handle;
    return true;
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp *prop,
                             uint64_t flags)
{
    static const char api[] = "aclrtMallocPhysical";
    aclError first = aclsim__vmm_check_args(api, handle, "handle", prop, "prop", size, flags);
    if (first)
        return first;
    if (prop->handleType != ACL_MEM_HANDLE_TYPE_NONE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "prop->handleType is %d (must be ACL_MEM_HANDLE_TYPE_NONE)",
                            (int)prop->handleType);
    if (prop->allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "prop->allocationType is %d (must be ACL_MEM_ALLOCATION_TYPE_PINNED)",
                            (int)prop->allocationType);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    size_t page = 0;
    if (!err)
        err = check_prop(api, prop, &page);
    if (err)
        return err;
    struct aclsim__device *dev = NULL;
    if (prop->location.type == ACL_MEM_LOCATION_TYPE_DEVICE) {
        dev = &aclsim__devices[prop->location.id];
        if (!atomic_load_explicit(&dev->open, memory_order_acquire))
            return aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                                "device %u is not open: call aclrtSetDevice(%u) first",
                                prop->location.id, prop->location.id);
    }
    size_t span = aclsim__vmm_round_up(size, page);
    if (span < size)
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, "size %zu is too large", size);
    struct phys *ph = aclsim__calloc(1, sizeof *ph);
    if (!ph)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    *ph = (struct phys){.fd = -1, .size = size, .span = span, .page = page, .prop = *prop,
                        .device = dev, .user_refs = 1};
    if (dev && !aclsim__heap_charge(&dev->heap, ACLSIM_ALLOC_PHYSICAL, span, &ph->gen)) {
        free(ph);
        pthread_rwlock_rdlock(&dev->heap.lock);
        size_t total = dev->heap.capacity, free_bytes = total - dev->heap.used;
        pthread_rwlock_unlock(&dev->heap.lock);
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "device %d cannot back %zu bytes of physical memory (%zu bytes of %zu "
                            "free)", dev->id, span, free_bytes, total);
    }
    ph->fd = memfd_create("aclsim-physical", MFD_CLOEXEC);
    if (ph->fd < 0 || ftruncate(ph->fd, (off_t)span) != 0) {
        int e = errno;
        if (ph->fd >= 0)
            close(ph->fd);
        if (dev)
            aclsim__heap_uncharge(&dev->heap, ACLSIM_ALLOC_PHYSICAL, span, ph->gen);
        free(ph);
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "cannot create %zu bytes of shared memory: %s", span, strerror(e));
    }
    if (!publish(ph, handle)) {
        ph->user_refs = 0;
        aclsim__vmm_destroy_phys(ph);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    }
    return ACL_SUCCESS;
}

/* The live physical allocation of handle (lock held), or NULL with 107017. */
struct phys *aclsim__vmm_phys_of(const char *api, aclrtDrvMemHandle handle)
{
    struct phys *ph = aclsim__handle_get(handle, ACLSIM_H_PHYSICAL);
    if (!ph)
        aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                     "handle %p is not a live physical memory handle (aclrtMallocPhysical; freed "
                     "with aclrtFreePhysical?)", handle);
    return ph;
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
    static const char api[] = "aclrtFreePhysical";
    aclError err = aclsim__ranges_enter(api, "handle", handle, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    pthread_rwlock_wrlock(&aclsim__ranges_lock);
    struct phys *ph = aclsim__vmm_phys_of(api, handle);
    if (!ph) {
        err = ACL_ERROR_RT_INVALID_HANDLE;
    } else if (--ph->user_refs == 0) {
        if (ACLSIM_UNLIKELY(aclsim__checking()) && ph->maps)   /* checker hook */
            err = aclsim__vmm_free_unmapping(api, ph);
        aclsim__ipc_physical_freed(ph->handle);   /* its shareable handles close */
        aclsim__handle_free(ph->handle);
        ph->handle = NULL;
        if (ph->maps == 0)
            aclsim__vmm_destroy_phys(ph);   /* else it lives until its last unmap */
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return err;
}

aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle, aclrtPhysicalMemProp *prop)
{
    static const char api[] = "aclrtMemGetAllocationPropertiesFromHandle";
    ACLSIM_REQUIRE_INIT(api);
    if (!handle || !prop)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !handle ? "handle" : "prop");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    struct phys *ph = aclsim__vmm_phys_of(api, handle);
    if (ph)
        *prop = ph->prop;
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return ph ? ACL_SUCCESS : ACL_ERROR_RT_INVALID_HANDLE;
}

/* ---- sharing between processes (ipc-share.c) ------------------------------------------ */

aclError aclsim__vmm_phys_share(const char *api, void *handle, int *fd, size_t *size,
                                int32_t *device)
{
    pthread_rwlock_rdlock(&aclsim__ranges_lock);
    struct phys *ph = aclsim__vmm_phys_of(api, handle);
    if (ph) {
        *fd = ph->fd;
        *size = ph->size;
        *device = ph->device ? ph->device->id : -1;
    }
    pthread_rwlock_unlock(&aclsim__ranges_lock);
    return ph ? ACL_SUCCESS : ACL_ERROR_RT_INVALID_HANDLE;
}

/* A physical allocation of dev's memory backed by fd from offset. */
struct phys *aclsim__vmm_adopt(int fd, uint64_t offset, size_t size, size_t page,
                               struct aclsim__device *dev)
{
    struct phys *ph = aclsim__calloc(1, sizeof *ph);
    if (!ph)
        return NULL;
    *ph = (struct phys){.fd = fd, .size = size, .span = size, .page = page, .device = dev,
                        .offset = offset, .imported = true};
    ph->prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    ph->prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    ph->prop.memAttr = ACL_HBM_MEM_HUGE;
    ph->prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    ph->prop.location.id = (uint32_t)dev->id;
    return ph;
}

aclError aclsim__vmm_phys_adopt(const char *api, int fd, size_t size, struct aclsim__device *dev,
                                void **handle)
{
    struct phys *ph = aclsim__vmm_adopt(fd, 0, size, ACLSIM_2M, dev);
    if (!ph)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    ph->user_refs = 1;
    if (!publish(ph, handle)) {
        free(ph);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    }
    return ACL_SUCCESS;
}
