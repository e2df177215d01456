/*
 * IPC memory (aclrtIpcMem*, docs/ipc.md): device memory from aclrtMalloc
 * exported under a key, whitelisted processes, imported into another
 * process's address space, and closed. The registry behind the keys is
 * ipc.c; what the IPC files share is in ipc.h.
 */
#include "ipc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the public calls: IPC memory ----------------------------------------- */

#define IPC_MEM_SOCS (ACLSIM_A5_A3_A2 | ACLSIM_FAMILIES(INFERENCE) | ACLSIM_FAMILIES(TRAINING))

/* The export of this process named by key, or NULL (107000 with a message). */
static bool own_export(const char *key, int kind, struct aclsim__ipc_ref *r, const char *api,
                       const char *what)
{
    pid_t pid;
    uint32_t index;
    uint64_t nonce;
    if (!aclsim__ipc_parse_key(key, &pid, &index, &nonce)) {
        aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                     "key \"%.64s\" is not a key aclsim exported", key);
        return false;
    }
    bool found = false;
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    for (struct exported *x = aclsim__ipc_export_list; x && !found; x = x->next)
        if (pid == getpid() && x->slot == index && x->nonce == nonce && x->kind == (uint32_t)kind) {
            *r = (struct aclsim__ipc_ref){&aclsim__ipc_own->slots[index], nonce, pid, index};
            found = true;
        }
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
    if (!found)
        aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                     "key \"%s\" is not %s this process exported (or it was closed)", key, what);
    return found;
}

aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags)
{
    static const char api[] = "aclrtIpcMemGetExportKey";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__ipc_first_checks(api, devPtr, "devPtr", key, "key", IPC_MEM_SOCS, &ctx);
    if (err)
        return err;
    if (size == 0 || len == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is 0", size ? "len" : "size");
    if (flags > ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flags %#" PRIx64 " is invalid: ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT or "
                            "ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION", flags);
    if (len < ACLSIM_IPC_KEY_LEN)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "len %zu is too short: a key takes %d bytes (CANN: 65)", len,
                            ACLSIM_IPC_KEY_LEN);
    struct aclsim__where w = aclsim__classify(devPtr);
    struct aclsim__alloc a;
    if (w.kind != ACLSIM_DEVICE || !aclsim__heap_find(&w.device->heap, devPtr, &a) ||
        a.kind != ACLSIM_ALLOC_MALLOC) {
        char what[256];
        aclsim__describe(devPtr, what, sizeof what);
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "devPtr %p is not aclrtMalloc device memory: it is %s (physical "
                            "memory is shared with aclrtMemExportToShareableHandle)", devPtr, what);
    }
    if ((uintptr_t)devPtr % PAGE)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "devPtr %p is not page aligned (%u bytes): CANN refuses to share "
                            "memory that shares pages with other allocations (allocate at least "
                            "%u bytes: aclrtMalloc then aligns to a page)", devPtr, PAGE, PAGE);
    uintptr_t off = (uintptr_t)devPtr - a.addr;
    if (size > a.size - off)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "%zu bytes at devPtr %p run past the end of its allocation (%zu bytes "
                            "at %#" PRIxPTR ")", size, devPtr, a.size, a.addr);
    struct aclsim__ipc_ref r;
    err = aclsim__ipc_export(ACLSIM_IPC_MEMORY, w.device->id, w.device->heap.fd,
                             (uint64_t)((char *)devPtr - w.device->heap.base), size, 0,
                             flags & ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                             (const void *)a.addr, &r, api);
    if (!err)
        aclsim__ipc_key(&r, key);
    (void)ctx;
    return err;
}

aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num)
{
    static const char api[] = "aclrtIpcMemSetImportPid";
    aclError err = aclsim__ipc_first_checks(api, key, "key", pid, "pid", IPC_MEM_SOCS, NULL);
    if (err)
        return err;
    if (num == 0 || num > INT32_MAX)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "num %zu is invalid: 1..%d", num,
                            INT32_MAX);
    struct aclsim__ipc_ref r;
    if (!own_export(key, ACLSIM_IPC_MEMORY, &r, api, "memory"))
        return ACL_ERROR_RT_PARAM_INVALID;
    return aclsim__ipc_allow(&r, pid, num, api);
}

aclError aclrtIpcMemImportPidInterServer(const char *key, aclrtServerPid *serverPids, size_t num)
{
    static const char api[] = "aclrtIpcMemImportPidInterServer";
    ACLSIM_REQUIRE_INIT(api);
    if (!key || !serverPids || num == 0)   /* checked by CANN's runtime layer: 107000 */
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s",
                            !key ? "key is NULL" : !serverPids ? "serverPids is NULL" : "num is 0");
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(A3));
    if (err)
        return err;
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "whitelisting processes of other servers (super-node sharing) needs "
                        "several servers; aclsim simulates one host (use "
                        "aclrtIpcMemSetImportPid for processes on this host)");
}

aclError aclrtIpcMemSetAttr(const char *key, aclrtIpcMemAttrType type, uint64_t attr)
{
    static const char api[] = "aclrtIpcMemSetAttr";
    ACLSIM_REQUIRE_INIT(api);
    if (!key)   /* checked by CANN's runtime layer: 107000 */
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "key is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(A3));
    if (err)
        return err;
    if ((int)type != ACL_RT_IPC_MEM_ATTR_ACCESS_LINK)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "type %d is invalid: ACL_RT_IPC_MEM_ATTR_ACCESS_LINK (0)", (int)type);
    if (attr > ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "attr %" PRIu64 " is invalid: ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO (0) "
                            "or ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS (1)", attr);
    if (attr > ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "attr %" PRIu64 ": UB links are Ascend 950 only", attr);
    struct aclsim__ipc_ref r;
    if (!own_export(key, ACLSIM_IPC_MEMORY, &r, api, "memory"))
        return ACL_ERROR_RT_PARAM_INVALID;
    /* The link between the two dies: recorded (one host has no dies, the
     * bytes are the same either way). */
    atomic_store(&r.slot->attr, attr);
    return ACL_SUCCESS;
}

aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags)
{
    static const char api[] = "aclrtIpcMemImportByKey";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__ipc_first_checks(api, devPtr, "devPtr", key, "key", IPC_MEM_SOCS, &ctx);
    if (err)
        return err;
    if (flags > ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flags %#" PRIx64 " is invalid: ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT or "
                            "ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS", flags);
    struct aclsim__ipc_ref r;
    if ((err = aclsim__ipc_open(key, ACLSIM_IPC_MEMORY, "memory", &r, api)))
        return err;
    struct imported *im = aclsim__calloc(1, sizeof *im);
    if (!im)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    int fd = aclsim__ipc_open_memory(&r, api);
    if (fd < 0) {
        free(im);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    uint64_t off = r.slot->offset, size = r.slot->size;
    uint64_t from = off & ~(uint64_t)(PAGE - 1), to = (off + size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
    void *base = NULL;
    err = aclsim__vmm_import(api, fd, from, (size_t)(to - from), aclsim__context_device(ctx), &base);
    close(fd);
    if (err || !aclsim__ipc_live(&r)) {   /* closed meanwhile: its bytes may be reused */
        if (!err)
            aclsim__vmm_unimport(base);
        free(im);
        return err ? err : aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                        "key \"%s\" was closed while it was being imported", key);
    }
    snprintf(im->key, sizeof im->key, "%s", key);
    im->base = base;
    im->ptr = (char *)base + (off - from);
    *devPtr = im->ptr;   /* before im is published: another thread's close may free it */
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    im->next = aclsim__ipc_import_list;
    aclsim__ipc_import_list = im;
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
    return ACL_SUCCESS;
}

aclError aclrtIpcMemClose(const char *key)
{
    static const char api[] = "aclrtIpcMemClose";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    aclError err = aclsim__ipc_first_checks(api, key, "key", key, "key", IPC_MEM_SOCS, NULL);
    if (err)
        return err;
    /* An import of the key (the oldest first, as CANN) ... */
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    struct imported *im = NULL;
    struct imported **found = NULL;
    for (struct imported **pp = &aclsim__ipc_import_list; *pp; pp = &(*pp)->next)
        if (strncmp((*pp)->key, key, ACLSIM_IPC_KEY_LEN) == 0)
            found = pp;   /* pushed at the front: the last match is the oldest */
    if (found) {
        im = *found;
        *found = im->next;
    }
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
    if (im) {
        aclsim__vmm_unimport(im->base);
        free(im);
        return ACL_SUCCESS;
    }
    /* ... or this process's export: nobody can import it any more. */
    struct aclsim__ipc_ref r;
    if (!own_export(key, ACLSIM_IPC_MEMORY, &r, api, "memory this process imported or"))
        return ACL_ERROR_RT_PARAM_INVALID;
    aclsim__ipc_close(&r);
    return ACL_SUCCESS;
}

aclError aclrtDeviceGetBareTgid(int32_t *pid)
{
    static const char api[] = "aclrtDeviceGetBareTgid";
    ACLSIM_REQUIRE_INIT(api);
    if (!pid)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "pid is NULL");
    /* The host's process id: what the whitelists compare (one host, no
     * container translation). */
    *pid = (int32_t)getpid();
    return ACL_SUCCESS;
}
