/*
 * Shareable handles of physical memory (aclrtMem*ShareableHandle*,
 * docs/ipc.md): a physical allocation (vmm-phys.c) exported as a 64-bit handle,
 * whitelisted processes, and imported as a physical handle of another
 * process. The registry behind the handles is ipc.c; what the IPC files
 * share is in ipc.h.
 */
#include "ipc.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

/* ---- shareable handles of physical memory ---------------------------------- */

/* A shareable handle: owner pid (bits 63..32), slot (31..20), low 20 bits
 * of the nonce (19..0); the slot's nonce is chosen so those bits are never 0. */
static uint64_t shareable_of(const struct aclsim__ipc_ref *r)
{
    return (uint64_t)(uint32_t)r->owner << 32 | (uint64_t)r->index << 20 | (r->nonce & 0xFFFFF);
}

/* The slot a shareable handle names, as a key (false: cannot be one). */
static bool parse_shareable(uint64_t h, pid_t *pid, uint32_t *index, uint32_t *low)
{
    *pid = (pid_t)(h >> 32);
    *index = (uint32_t)(h >> 20) & 0xFFF;
    *low = (uint32_t)h & 0xFFFFF;
    return *pid > 0 && *low != 0;
}

/* Resolves a shareable handle to its slot (with the full nonce). */
static aclError shareable_slot(uint64_t h, struct aclsim__ipc_ref *r, bool own_only,
                               const char *api)
{
    pid_t pid;
    uint32_t index, low;
    if (!parse_shareable(h, &pid, &index, &low))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "shareableHandle %#" PRIx64 " is not a handle aclsim exported", h);
    if (own_only && pid != getpid())
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "shareableHandle %#" PRIx64 " was exported by process %d, not by "
                            "this one", h, (int)pid);
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    struct table *t = aclsim__ipc_table_of_locked(pid, false);
    uint64_t nonce = t ? atomic_load_explicit(&t->slots[index].nonce, memory_order_acquire) : 0;
    if (t && (nonce & 0xFFFFF) != low && pid != getpid()) {
        t = aclsim__ipc_table_of_locked(pid, true);
        nonce = t ? atomic_load_explicit(&t->slots[index].nonce, memory_order_acquire) : 0;
    }
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
    if (!t || nonce == 0 || (nonce & 0xFFFFF) != low || t->slots[index].kind != ACLSIM_IPC_PHYSICAL)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "shareableHandle %#" PRIx64 " names no exported physical memory (its "
                            "process exited, or it was freed)", h);
    *r = (struct aclsim__ipc_ref){&t->slots[index], nonce, pid, index};
    return ACL_SUCCESS;
}

#define SHARE_SOCS ACLSIM_ALL_BUT_IPV

static aclError export_shareable(const char *api, aclrtDrvMemHandle handle, uint64_t flags,
                                 uint64_t *out)
{
    int fd = -1;
    size_t size = 0;
    int32_t device = -1;
    aclError err = aclsim__vmm_phys_share(api, handle, &fd, &size, &device);
    if (err)
        return err;
    if (flags > ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flags %#" PRIx64 " is invalid: ACL_RT_VMM_EXPORT_FLAG_DEFAULT or "
                            "ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION", flags);
    /* One shareable handle per physical handle (CANN refuses a second export). */
    bool again = false;
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    for (struct exported *x = aclsim__ipc_export_list; x && !again; x = x->next)
        again = x->kind == ACLSIM_IPC_PHYSICAL && x->alloc == handle;
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
    if (again)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "handle %p is already exported: a physical handle has one shareable "
                            "handle", handle);
    struct aclsim__ipc_ref r;
    /* Retry until the nonce's low 20 bits (the part the handle holds) are
     * not 0: export draws a fresh nonce each time. */
    for (;;) {
        err = aclsim__ipc_export(ACLSIM_IPC_PHYSICAL, device, fd, 0, size, size,
                                 flags & ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, handle, &r,
                                 api);
        if (err || (r.nonce & 0xFFFFF))
            break;
        aclsim__ipc_close(&r);
    }
    if (!err)
        *out = shareable_of(&r);
    return err;
}

aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
                                         uint64_t flags, uint64_t *shareableHandle)
{
    static const char api[] = "aclrtMemExportToShareableHandle";
    aclError err = aclsim__ipc_first_checks(api, handle, "handle", shareableHandle, "shareableHandle",
                                            SHARE_SOCS, NULL);
    if (err)
        return err;
    if (handleType != ACL_MEM_HANDLE_TYPE_NONE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "handleType %d is invalid: ACL_MEM_HANDLE_TYPE_NONE", (int)handleType);
    return export_shareable(api, handle, flags, shareableHandle);
}

/* V2's handle storage: a uint64_t (DEFAULT) or an aclrtMemFabricHandle. */
static aclError share_type(const char *api, aclrtMemSharedHandleType t)
{
    if (t != ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT && t != ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "shareType %d is invalid: ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT (1) or "
                            "ACL_MEM_SHARE_HANDLE_TYPE_FABRIC (2)", (int)t);
    if (t == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "fabric handles share memory between servers over the fabric; "
                            "aclsim simulates one host (use ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT)");
    return ACL_SUCCESS;
}

aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags,
                                           aclrtMemSharedHandleType shareType,
                                           void *shareableHandle)
{
    static const char api[] = "aclrtMemExportToShareableHandleV2";
    aclError err = aclsim__ipc_first_checks(api, handle, "handle", shareableHandle, "shareableHandle",
                                            SHARE_SOCS, NULL);
    if (!err)
        err = share_type(api, shareType);
    return err ? err : export_shareable(api, handle, flags, shareableHandle);
}

static aclError import_shareable(const char *api, uint64_t h, int32_t device,
                                 aclrtDrvMemHandle *handle)
{
    aclError err = aclsim__device_check_id(device, api);
    if (err)
        return err;
    if (!atomic_load_explicit(&aclsim__devices[device].open, memory_order_acquire))
        return aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                            "device %d is not open: call aclrtSetDevice(%d) first", device, device);
    struct aclsim__ipc_ref r;
    if ((err = shareable_slot(h, &r, false, api)))
        return err;
    /* The whitelist, as for keys. */
    char key[ACLSIM_IPC_KEY_LEN];
    aclsim__ipc_key(&r, key);
    if ((err = aclsim__ipc_open(key, ACLSIM_IPC_PHYSICAL, "physical memory", &r, api)))
        return err;
    int fd = aclsim__ipc_open_memory(&r, api);
    if (fd < 0)
        return ACL_ERROR_RT_PARAM_INVALID;
    err = aclsim__vmm_phys_adopt(api, fd, (size_t)r.slot->map_size, &aclsim__devices[device],
                                 handle);
    if (err)
        close(fd);
    return err;
}

aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                           aclrtDrvMemHandle *handle)
{
    static const char api[] = "aclrtMemImportFromShareableHandle";
    aclError err = aclsim__ipc_first_checks(api, handle, "handle", handle, "handle", SHARE_SOCS, NULL);
    return err ? err : import_shareable(api, shareableHandle, deviceId, handle);
}

aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle,
                                             aclrtMemSharedHandleType shareType, uint64_t flags,
                                             aclrtDrvMemHandle *handle)
{
    static const char api[] = "aclrtMemImportFromShareableHandleV2";
    aclError err = aclsim__ipc_first_checks(api, shareableHandle, "shareableHandle", handle, "handle",
                                            SHARE_SOCS, NULL);
    if (err)
        return err;
    if (flags != 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "flags %#" PRIx64 " is reserved and must be 0", flags);
    struct aclsim__context *ctx = NULL;   /* CANN imports into the current device */
    if ((err = share_type(api, shareType)) || (err = aclsim__current_context(api, &ctx)))
        return err;
    uint64_t h;
    memcpy(&h, shareableHandle, sizeof h);
    return import_shareable(api, h, aclsim__context_device(ctx)->id, handle);
}

static aclError set_pids_shareable(const char *api, uint64_t h, int32_t *pid, size_t num)
{
    if (num == 0 || num > INT32_MAX)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "pidNum %zu is invalid: 1..%d", num,
                            INT32_MAX);
    struct aclsim__ipc_ref r;
    aclError err = shareable_slot(h, &r, true, api);
    return err ? err : aclsim__ipc_allow(&r, pid, num, api);
}

aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum)
{
    static const char api[] = "aclrtMemSetPidToShareableHandle";
    aclError err = aclsim__ipc_first_checks(api, pid, "pid", pid, "pid", SHARE_SOCS, NULL);
    return err ? err : set_pids_shareable(api, shareableHandle, pid, pidNum);
}

aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle,
                                           aclrtMemSharedHandleType shareType, int32_t *pid,
                                           size_t pidNum)
{
    static const char api[] = "aclrtMemSetPidToShareableHandleV2";
    aclError err = aclsim__ipc_first_checks(api, shareableHandle, "shareableHandle", pid, "pid", SHARE_SOCS,
                                            NULL);
    if (err || (err = share_type(api, shareType)))
        return err;
    uint64_t h;
    memcpy(&h, shareableHandle, sizeof h);
    return set_pids_shareable(api, h, pid, pidNum);
}
