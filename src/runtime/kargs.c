/*
 * Kernel argument lists (CANN's aclrtKernelArgs* functions) and
 * aclrtLaunchKernelWithConfig, which launches with one.
 *
 * A list belongs to one kernel. Its parameters are appended in order, each at
 * an offset aligned to 8 bytes (or the parameter's own alignment if larger),
 * as CANN lays them out; a placeholder is a pointer parameter whose data
 * lives in the same buffer after the parameters (GetPlaceHolderBuffer). A
 * launch copies the buffer into the launch's own argument block and points
 * each placeholder at the copy of its data, so the list may be changed
 * (ParaUpdate) or reused as soon as the launch call returns, as on the NPU,
 * where the launch copies the list to the device.
 *
 * aclsim knows each registered kernel's signature, so an append is checked
 * against the kernel's next parameter: count and size (107000 otherwise).
 *
 * Memory, as CANN's: aclrtKernelArgsInit gives the calling thread's one
 * system-managed list (64 KiB of argument memory, as CANN's); a later Init on
 * the same thread replaces it (the old handle then gets 107017 instead of
 * silently naming the new list, as it would on CANN). It is freed when the
 * thread exits, by the next Init, or by aclFinalize. aclrtKernelArgsInitByUserMem
 * builds the list in the caller's memory (aclrtKernelArgsGetHandleMemSize
 * bytes, 16-byte aligned as malloc's) over the caller's argument memory
 * (aclrtKernelArgsGetMemSize bytes); nothing is allocated for it.
 *
 * Thread safety: every function here holds args_lock while it reads or
 * changes a list, so lists may be used from any thread; a list is not copied
 * or freed while another call uses it.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define ARGS_MAGIC 0x4b415247u    /* "KARG" */
#define PARAM_MAGIC 0x50415241u   /* "PARA" */
#define SYSTEM_PARAMS 128u        /* CANN's MAX_PARAM_CNT */
#define SYSTEM_BUFFER (64u * 1024u) /* CANN's MAX_ARGS_BUFF_SIZE */
#define SLOT_ALIGN 8u             /* CANN's NON_CPU_KERNEL_ARGS_ALIGN_SIZE */

struct param {
    uint32_t magic;
    bool placeholder;
    bool has_data;                /* placeholder: GetPlaceHolderBuffer was called */
    size_t off, size;             /* its value in the buffer */
    size_t data_off;              /* placeholder: its data in the buffer */
};

struct args {
    uint32_t magic;
    struct args *self;            /* user memory: a list lives where it was built */
    void *handle;                 /* system list: its handle; NULL in user memory */
    const aclsimKernel *kernel;   /* as resolved at Init; read only while func is live */
    void *func;                   /* its handle: dead once its binary is unloaded */
    char *buffer;
    size_t cap, used;
    uint32_t nparams, max_params;
    bool finalized, updating, got_buffer;
    struct args *prev, *next;     /* system lists, under args_lock */
    struct param params[];
};

static pthread_mutex_t args_lock = PTHREAD_MUTEX_INITIALIZER;
static struct args *system_lists;
static _Thread_local void *tls_system;   /* handle of the thread's system list */

/* Frees a system list (args_lock held). */
static void free_system(struct args *a)
{
    if (a->prev)
        a->prev->next = a->next;
    else
        system_lists = a->next;
    if (a->next)
        a->next->prev = a->prev;
    aclsim__handle_free(a->handle);
    a->magic = 0;
    free(a->buffer);
    free(a);
}

/* A thread that made a system list exits: its list goes with it. */
void aclsim__kargs_thread_exit(void)
{
    pthread_mutex_lock(&args_lock);
    struct args *a = aclsim__handle_get(tls_system, ACLSIM_H_ARGS);
    if (a)
        free_system(a);
    pthread_mutex_unlock(&args_lock);
    tls_system = NULL;
}

void aclsim__kargs_finalize(void)
{
    pthread_mutex_lock(&args_lock);
    while (system_lists)
        free_system(system_lists);
    pthread_mutex_unlock(&args_lock);
}

/* The list of argsHandle (args_lock held): a live system list, or one built
 * in user memory (16-byte aligned, so never a handle value: those have a
 * kind in their low 4 bits). */
static struct args *args_of(aclrtArgsHandle h, const char *api, aclError *err)
{
    struct args *a = aclsim__handle_get(h, ACLSIM_H_ARGS);
    if (!a && ((uintptr_t)h & 15) == 0) {
        a = h;
        if (a->magic != ARGS_MAGIC || a->self != a || a->handle)
            a = NULL;
    }
    if (!a)
        *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "argsHandle %p is not a live argument list (from aclrtKernelArgsInit "
                            "or aclrtKernelArgsInitByUserMem; a later aclrtKernelArgsInit on the "
                            "same thread replaces the thread's list, and aclFinalize ends it)", h);
    return a;
}

static struct param *param_of(struct args *a, aclrtParamHandle h, const char *api, aclError *err)
{
    uintptr_t p = (uintptr_t)h, first = (uintptr_t)a->params;
    if (p >= first && p < first + a->nparams * sizeof(struct param) &&
        (p - first) % sizeof(struct param) == 0 && ((struct param *)h)->magic == PARAM_MAGIC)
        return h;
    *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                        "paramHandle %p is not a parameter of argsHandle %p", h, (void *)a);
    return NULL;
}

/* The kernel of funcHandle, for the functions taking one. */
static const aclsimKernel *kernel_of(aclrtFuncHandle funcHandle, const char *api, aclError *err)
{
    const aclsimKernel *k = aclsim__handle_get(funcHandle, ACLSIM_H_FUNC);
    if (!k)
        *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "funcHandle %p is not a live kernel handle (its binary may have been "
                            "unloaded)", funcHandle);
    return k;
}

static size_t handle_size(uint32_t params)
{
    return sizeof(struct args) + params * sizeof(struct param);
}

static void list_init(struct args *a, const aclsimKernel *k, char *buffer, size_t cap,
                      uint32_t max_params)
{
    memset(a, 0, handle_size(max_params));
    a->magic = ARGS_MAGIC;
    a->self = a;
    a->kernel = k;
    a->func = k->handle;
    a->buffer = buffer;
    a->cap = cap;
    a->max_params = max_params;
}

aclError aclrtKernelArgsGetHandleMemSize(aclrtFuncHandle funcHandle, size_t *memSize)
{
    static const char api[] = "aclrtKernelArgsGetHandleMemSize";
    if (!funcHandle || !memSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !funcHandle ? "funcHandle" : "memSize");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    const aclsimKernel *k = kernel_of(funcHandle, api, &err);
    if (k)   /* an AI CPU kernel's parameters are not known: CANN's maximum */
        *memSize = handle_size(aclsim__kernel_is_cpu(k) ? SYSTEM_PARAMS : k->num_params);
    return err;
}

aclError aclrtKernelArgsGetMemSize(aclrtFuncHandle funcHandle, size_t userArgsSize,
                                   size_t *actualArgsSize)
{
    static const char api[] = "aclrtKernelArgsGetMemSize";
    if (!funcHandle || !actualArgsSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !funcHandle ? "funcHandle" : "actualArgsSize");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    const aclsimKernel *k = kernel_of(funcHandle, api, &err);
    if (!k)
        return err;
    if (aclsim__kernel_is_cpu(k)) {   /* packed tight, no system parameters (CANN) */
        *actualArgsSize = userArgsSize;
        return ACL_SUCCESS;
    }
    /* CANN's: room for 8 system parameters and one 8-byte padding per
     * parameter (aclsim has no system parameters; the room covers the
     * padding of parameters aligned to more than 8). */
    size_t extra = 8 * SLOT_ALIGN + (size_t)k->num_params * SLOT_ALIGN;
    if (userArgsSize > SIZE_MAX - extra)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "userArgsSize %zu is too large",
                            userArgsSize);
    *actualArgsSize = userArgsSize + extra;
    return ACL_SUCCESS;
}

aclError aclrtKernelArgsInit(aclrtFuncHandle funcHandle, aclrtArgsHandle *argsHandle)
{
    static const char api[] = "aclrtKernelArgsInit";
    if (!funcHandle || !argsHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !funcHandle ? "funcHandle" : "argsHandle");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    const aclsimKernel *k = kernel_of(funcHandle, api, &err);
    if (!k)
        return err;
    struct args *a = aclsim__malloc(handle_size(SYSTEM_PARAMS));
    char *buffer = aclsim__aligned_alloc(16, SYSTEM_BUFFER);
    void *h = a && buffer ? aclsim__handle_new(ACLSIM_H_ARGS, a) : NULL;
    if (!h || !aclsim__thread_keep(ACLSIM_THREAD_KARGS)) {
        if (h)
            aclsim__handle_free(h);
        free(a);
        free(buffer);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory making an argument list");
    }
    list_init(a, k, buffer, SYSTEM_BUFFER, SYSTEM_PARAMS);
    a->handle = h;
    pthread_mutex_lock(&args_lock);
    struct args *old = aclsim__handle_get(tls_system, ACLSIM_H_ARGS);
    if (old)   /* the thread's previous list: one per thread, as CANN's */
        free_system(old);
    a->next = system_lists;
    if (system_lists)
        system_lists->prev = a;
    system_lists = a;
    tls_system = h;
    pthread_mutex_unlock(&args_lock);
    *argsHandle = h;
    return ACL_SUCCESS;
}

aclError aclrtKernelArgsInitByUserMem(aclrtFuncHandle funcHandle, aclrtArgsHandle argsHandle,
                                      void *userHostMem, size_t actualArgsSize)
{
    static const char api[] = "aclrtKernelArgsInitByUserMem";
    if (!funcHandle || !argsHandle || !userHostMem)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !funcHandle ? "funcHandle" : !argsHandle ? "argsHandle" : "userHostMem");
    if (!actualArgsSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "actualArgsSize is 0");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    const aclsimKernel *k = kernel_of(funcHandle, api, &err);
    if (!k)
        return err;
    if ((uintptr_t)argsHandle & 15)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "argsHandle %p is not 16-byte aligned (use memory from malloc or "
                            "aclrtMallocHost, aclrtKernelArgsGetHandleMemSize bytes)", argsHandle);
    pthread_mutex_lock(&args_lock);
    list_init(argsHandle, k, userHostMem, actualArgsSize,
              aclsim__kernel_is_cpu(k) ? SYSTEM_PARAMS : k->num_params);
    pthread_mutex_unlock(&args_lock);
    return ACL_SUCCESS;
}

/* The checks Append and AppendPlaceHolder share, in CANN's order; then the
 * kernel's next parameter (size and, for a placeholder, a pointer). Returns
 * the slot's offset in *off. */
static aclError append_check(struct args *a, size_t size, bool placeholder, size_t *off,
                             const char *api)
{
    if (a->finalized)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "appending and getting placeholder buffer after finalization is not "
                            "supported (aclrtKernelArgsFinalize was called)");
    if (a->got_buffer)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "appending placeholder or common parameter after getting placeholder "
                            "buffer is not supported");
    if (aclsim__handle_get(a->func, ACLSIM_H_FUNC) != a->kernel)
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "the kernel of argsHandle is gone (its binary was unloaded)");
    const aclsimKernel *k = a->kernel;
    uint32_t i = a->nparams;
    if (aclsim__kernel_is_cpu(k)) {   /* no signature: packed tight, as CANN */
        *off = a->used;
        if (i >= a->max_params)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "an argument list takes at most %u parameters", a->max_params);
        if (a->cap - a->used < size)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "parameter %u does not fit: it needs bytes up to %zu, the "
                                "argument memory has %zu", i, a->used + size, a->cap);
        return ACL_SUCCESS;
    }
    if (i >= a->max_params || i >= k->num_params)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "kernel %s takes %u parameter(s), all appended already", k->name,
                            k->num_params);
    if (placeholder ? k->param_size[i] != sizeof(void *) : k->param_size[i] != size)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            placeholder ? "parameter %u of kernel %s is %zu bytes: a placeholder "
                                          "is a pointer parameter (%zu bytes)"
                                        : "parameter %u of kernel %s is %zu bytes, not %zu",
                            i, k->name, k->param_size[i], placeholder ? sizeof(void *) : size);
    size_t align = k->param_align[i] > SLOT_ALIGN ? k->param_align[i] : SLOT_ALIGN;
    *off = (a->used + align - 1) & ~(align - 1);
    if (*off > a->cap || a->cap - *off < size)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "parameter %u of kernel %s does not fit: it needs bytes up to %zu, "
                            "the argument memory has %zu", i, k->name, *off + size, a->cap);
    return ACL_SUCCESS;
}

static aclError append(aclrtArgsHandle argsHandle, const void *value, size_t size,
                       aclrtParamHandle *paramHandle, const char *api)
{
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    size_t off = 0;
    pthread_mutex_lock(&args_lock);
    struct args *a = args_of(argsHandle, api, &err);
    if (a && !(err = append_check(a, size, !value, &off, api))) {
        struct param *p = &a->params[a->nparams++];
        *p = (struct param){.magic = PARAM_MAGIC, .placeholder = !value, .off = off, .size = size};
        if (value)
            memcpy(a->buffer + off, value, size);
        else
            memset(a->buffer + off, 0, size);
        a->used = off + size;
        *paramHandle = p;
    }
    pthread_mutex_unlock(&args_lock);
    return err;
}

aclError aclrtKernelArgsAppend(aclrtArgsHandle argsHandle, void *param, size_t paramSize,
                               aclrtParamHandle *paramHandle)
{
    static const char api[] = "aclrtKernelArgsAppend";
    if (!argsHandle || !param || !paramHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !argsHandle ? "argsHandle" : !param ? "param" : "paramHandle");
    if (!paramSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "paramSize is 0");
    return append(argsHandle, param, paramSize, paramHandle, api);
}

aclError aclrtKernelArgsAppendPlaceHolder(aclrtArgsHandle argsHandle, aclrtParamHandle *paramHandle)
{
    static const char api[] = "aclrtKernelArgsAppendPlaceHolder";
    if (!argsHandle || !paramHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !argsHandle ? "argsHandle" : "paramHandle");
    return append(argsHandle, NULL, sizeof(void *), paramHandle, api);
}

aclError aclrtKernelArgsGetPlaceHolderBuffer(aclrtArgsHandle argsHandle, aclrtParamHandle paramHandle,
                                             size_t dataSize, void **bufferAddr)
{
    static const char api[] = "aclrtKernelArgsGetPlaceHolderBuffer";
    if (!argsHandle || !paramHandle || !bufferAddr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !argsHandle ? "argsHandle" : !paramHandle ? "paramHandle" : "bufferAddr");
    if (!dataSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataSize is 0");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&args_lock);
    struct args *a = args_of(argsHandle, api, &err);
    struct param *p = a ? param_of(a, paramHandle, api, &err) : NULL;
    if (!p)
        goto out;
    if (!p->placeholder) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "parameter %u was appended with aclrtKernelArgsAppend, not as a "
                           "placeholder: it has no placeholder buffer", (unsigned)(p - a->params));
        goto out;
    }
    if (a->finalized) {
        err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                           "appending and getting placeholder buffer after finalization is not "
                           "supported (aclrtKernelArgsFinalize was called)");
        goto out;
    }
    size_t align = aclsim__kernel_is_cpu(a->kernel) ? 1 : SLOT_ALIGN;
    size_t off = (a->used + align - 1) & ~(align - 1);
    if (off > a->cap || a->cap - off < dataSize) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "the placeholder buffer does not fit: it needs bytes up to %zu, the "
                           "argument memory has %zu", off + dataSize, a->cap);
        goto out;
    }
    p->data_off = off;
    p->has_data = true;
    a->used = off + dataSize;
    a->got_buffer = true;
    *bufferAddr = a->buffer + off;
out:
    pthread_mutex_unlock(&args_lock);
    return err;
}

aclError aclrtKernelArgsParaUpdate(aclrtArgsHandle argsHandle, aclrtParamHandle paramHandle,
                                   void *param, size_t paramSize)
{
    static const char api[] = "aclrtKernelArgsParaUpdate";
    if (!argsHandle || !paramHandle || !param)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !argsHandle ? "argsHandle" : !paramHandle ? "paramHandle" : "param");
    if (!paramSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "paramSize is 0");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&args_lock);
    struct args *a = args_of(argsHandle, api, &err);
    struct param *p = a ? param_of(a, paramHandle, api, &err) : NULL;
    if (p && p->placeholder)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "parameter %u is a placeholder: write its data through its buffer "
                           "(aclrtKernelArgsGetPlaceHolderBuffer) instead",
                           (unsigned)(p - a->params));
    else if (p && p->size != paramSize)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "paramSize %zu must be equal to the parameter's size %zu", paramSize,
                           p->size);
    else if (p) {
        memcpy(a->buffer + p->off, param, paramSize);
        a->updating = true;   /* until the next aclrtKernelArgsFinalize */
    }
    pthread_mutex_unlock(&args_lock);
    return err;
}

aclError aclrtKernelArgsFinalize(aclrtArgsHandle argsHandle)
{
    static const char api[] = "aclrtKernelArgsFinalize";
    if (!argsHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "argsHandle is NULL");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&args_lock);
    struct args *a = args_of(argsHandle, api, &err);
    if (a) {
        a->finalized = true;
        a->updating = false;
    }
    pthread_mutex_unlock(&args_lock);
    return err;
}

/* Builds the launch's argument block from list a (args_lock held). */
static aclError build_block(struct args *a, const aclsimKernel *k, char **buf, size_t *len,
                            const char *api)
{
    if (a->kernel != k)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "argsHandle was initialized for another kernel than %s", k->name);
    if (!a->finalized || a->updating)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "the argsHandle is not finalized or is currently being updated (call "
                            "aclrtKernelArgsFinalize after appending or updating)");
    bool cpu = aclsim__kernel_is_cpu(k);
    if (cpu && !a->used)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "the argument list of AI CPU kernel %s is empty", k->name);
    if (!cpu && a->nparams != k->num_params)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "kernel %s takes %u parameter(s) but argsHandle has %u", k->name,
                            k->num_params, a->nparams);
    for (uint32_t i = 0; i < a->nparams; i++)
        if (a->params[i].placeholder && !a->params[i].has_data)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "placeholder parameter %u has no buffer "
                                "(aclrtKernelArgsGetPlaceHolderBuffer)", i);
    *buf = NULL;
    *len = 0;
    if (!k->num_params)
        return ACL_SUCCESS;
    char *values;
    *buf = cpu ? aclsim__cpu_block(k, a->buffer, a->used, &values, len)
               : aclsim__args_block(k, a->used, &values, len);
    if (!*buf)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory launching kernel %s",
                            k->name);
    if (!cpu)
        memcpy(values, a->buffer, a->used);
    for (uint32_t i = 0; i < a->nparams; i++) {
        const struct param *p = &a->params[i];
        if (!cpu)
            ((void **)*buf)[i] = values + p->off;
        if (p->placeholder) {   /* the copy of its data, as the NPU's device copy */
            void *data = values + p->data_off;
            memcpy(values + p->off, &data, sizeof data);
        }
    }
    return ACL_SUCCESS;
}

aclError aclrtLaunchKernelWithConfig(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                     aclrtStream stream, aclrtLaunchKernelCfg *cfg,
                                     aclrtArgsHandle argsHandle, void *reserve)
{
    static const char api[] = "aclrtLaunchKernelWithConfig";
    if (!funcHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "funcHandle is NULL");
    if (!numBlocks)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "numBlocks is 0");
    if (!argsHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "argsHandle is NULL");
    if (reserve)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "reserve is a reserved parameter and must be NULL");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    const aclsimKernel *k = kernel_of(funcHandle, api, &err);
    if (!k)
        return err;
    if (numBlocks > ACLSIM_MAX_BLOCKS)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "numBlocks %u is out of range for kernel %s: 1 to %u", numBlocks,
                            k->name, ACLSIM_MAX_BLOCKS);
    struct aclsim__launch_cfg c;
    if ((err = aclsim__launch_cfg_parse(api, cfg, k, &c)))
        return err;
    char *buf = NULL;
    size_t len = 0;
    pthread_mutex_lock(&args_lock);
    struct args *a = args_of(argsHandle, api, &err);
    if (a)
        err = build_block(a, k, &buf, &len, api);
    pthread_mutex_unlock(&args_lock);
    if (err)
        return err;
    return aclsim__launch_built(k, numBlocks, stream, &c, buf, len, api);
}

/* After fork(), in the child (internal.h, THE FORK RULE): the lists stay
 * until aclFinalize. */
void aclsim__kargs_forget_after_fork(void)
{
    pthread_mutex_init(&args_lock, NULL);
}
