/*
 * Kernels: the registry of aclsimKernel descriptors (ACLSIM_KERNEL_REGISTER),
 * aclrtGetFuncBySymbol and the two launch functions. A launch copies the
 * argument values into the task, so the caller's buffers may be reused at
 * once; its blocks run in parallel on the device's workers, the launch as a
 * whole in stream order.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>


_Thread_local uint32_t aclsim__tls_block_idx = 0, aclsim__tls_block_num = 1,
                       aclsim__tls_device_slot = ACLSIM_HOST_SLOT;

uint32_t aclsimGetBlockIdx(void) { return aclsim__tls_block_idx; }
uint32_t aclsimGetBlockNum(void) { return aclsim__tls_block_num; }
uint32_t aclsimKernelDeviceSlot(void) { return aclsim__tls_device_slot; }

static struct aclsim__addr_map kernels = {.lock = PTHREAD_MUTEX_INITIALIZER};

void aclsimRegisterKernel(aclsimKernel *kernel)
{
    if (kernel->num_params > 16) {   /* ACLSIM_KERNEL_REGISTER cannot make one */
        aclsim__tls_registration_failures++;
        aclsim__log(ACLSIM_LOG_ERROR, "kernel %s (%s:%d) has %u parameters; at most 16",
                    kernel->name, kernel->file, kernel->line, kernel->num_params);
        return;
    }
    pthread_mutex_lock(&kernels.lock);
    kernel->handle = aclsim__handle_new(ACLSIM_H_FUNC, kernel);
    if (!kernel->handle || !aclsim__map_insert(&kernels, kernel->function, kernel)) {
        if (kernel->handle)
            aclsim__handle_free(kernel->handle);
        kernel->handle = NULL;
        aclsim__tls_registration_failures++;
        aclsim__log(ACLSIM_LOG_ERROR, "out of memory registering kernel %s (%s:%d)",
                    kernel->name, kernel->file, kernel->line);
    }
    pthread_mutex_unlock(&kernels.lock);
}

void aclsimUnregisterKernel(aclsimKernel *kernel)
{
    pthread_mutex_lock(&kernels.lock);
    if (aclsim__map_get(&kernels, kernel->function) == kernel) {
        aclsim__map_remove(&kernels, kernel->function);
        aclsim__handle_free(kernel->handle);
        kernel->handle = NULL;
    }
    pthread_mutex_unlock(&kernels.lock);
}

const aclsimKernel *aclsim__kernel_by_function(const void *fn)
{
    const aclsimKernel *k = aclsim__map_get(&kernels, fn);
    return k && k->function == fn ? k : NULL;
}

aclError aclrtGetFuncBySymbol(const void *symbol, aclrtFuncHandle *funcHandle)
{
    static const char api[] = "aclrtGetFuncBySymbol";
    ACLSIM_REQUIRE_INIT(api);
    if (!symbol || !funcHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !symbol ? "symbol" : "funcHandle");
    const aclsimKernel *k = aclsim__kernel_by_function(symbol);
    if (!k)
        return aclsim__fail(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, api,
                            "symbol %p is not a registered kernel (register the function "
                            "with ACLSIM_KERNEL_REGISTER)", symbol);
    *funcHandle = k->handle;
    return ACL_SUCCESS;
}

/* Byte offsets of each parameter when packed in order with natural alignment. */
static size_t packed_layout(const aclsimKernel *k, size_t *offsets, size_t *max_align)
{
    size_t end = 0;
    *max_align = 1;
    for (uint32_t i = 0; i < k->num_params; i++) {
        size_t a = k->param_align[i];
        end = (end + a - 1) & ~(a - 1);
        offsets[i] = end;
        end += k->param_size[i];
        if (a > *max_align)
            *max_align = a;
    }
    return end;
}

struct block_job {
    struct aclsim__job job;
    struct aclsim__task *task;
    uint32_t device;
};

static void run_block(struct aclsim__job *job, uint32_t index)
{
    struct block_job *b = (struct block_job *)job;
    aclsim__tls_block_idx = index;
    aclsim__tls_block_num = b->task->u.kernel.blocks;
    aclsim__tls_device_slot = b->device;
    b->task->u.kernel.kernel->invoke((void *const *)b->task->u.kernel.argbuf);
    aclsim__tls_block_idx = 0;
    aclsim__tls_block_num = 1;
    aclsim__tls_device_slot = ACLSIM_HOST_SLOT;
}

void aclsim__execute_kernel(struct aclsim__device *dev, struct aclsim__task *t)
{
    struct block_job b = {.task = t, .device = (uint32_t)dev->id};
    b.job.run = run_block;
    b.job.count = t->u.kernel.blocks;
    uint64_t start = aclsim__now_ns();
    if (t->u.kernel.blocks == 1 || t->u.kernel.cores == 1) {
        for (uint32_t i = 0; i < t->u.kernel.blocks; i++)
            run_block(&b.job, i);
    } else {
        b.job.max_helpers = t->u.kernel.cores ? t->u.kernel.cores - 1 : 0;
        aclsim__run_job(dev, &b.job);
    }
    atomic_fetch_add_explicit(&dev->kernel_busy_ns, aclsim__now_ns() - start, memory_order_relaxed);
}

/* Common part of both launches: validation, then the task. The arguments
 * come either packed (argsData of aclrtLaunchKernel) or as args[i] pointers. */
static aclError launch(void *func, uint32_t numBlocks, aclrtStream stream, const char *api,
                       const void *packed, size_t packed_size, void **args)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!func)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "funcHandle is NULL");
    const aclsimKernel *k = aclsim__handle_get(func, ACLSIM_H_FUNC);
    if (!k)
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "funcHandle %p is not a live kernel handle (from "
                            "aclrtGetFuncBySymbol or aclrtBinaryGetFunction; its binary may "
                            "have been unloaded)", func);
    if (numBlocks == 0 || numBlocks > ACLSIM_MAX_BLOCKS)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "numBlocks %u is out of range for kernel %s: 1 to %u", numBlocks,
                            k->name, ACLSIM_MAX_BLOCKS);
    size_t offsets[16], max_align;
    size_t need = packed_layout(k, offsets, &max_align);
    if (k->num_params && !packed && !args)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "kernel %s takes %u argument(s) but %s is NULL", k->name,
                            k->num_params, packed_size ? "argsData" : "args");
    if (packed) {
        size_t padded = (need + max_align - 1) & ~(max_align - 1);
        if (packed_size < need || packed_size > padded)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "argsSize %zu does not match kernel %s: its %u argument(s) "
                                "packed with natural alignment take %zu bytes", packed_size,
                                k->name, k->num_params, need);
    }
    if (args)
        for (uint32_t i = 0; i < k->num_params; i++)
            if (!args[i])
                return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                    "args[%u] is NULL (kernel %s takes %u arguments)", i,
                                    k->name, k->num_params);
    struct aclsim__context *ctx = NULL;
    struct aclsim__sref s;
    aclError err = aclsim__stream_resolve(stream, api, &ctx, &s);
    if (err)
        return err;
    if ((err = aclsim__symbols_instantiate_all(ctx->device, api)))
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_KERNEL, .label = k->name,
                             .u.kernel = {.kernel = k, .blocks = numBlocks,
                                          .cores = aclsim__kernel_core_limit(ctx->device)}};
    /* One block: the argument pointers, then the values, aligned for the
     * most aligned parameter (invoke reads them in place). */
    if (max_align < sizeof(void *))
        max_align = sizeof(void *);
    size_t table = (k->num_params * sizeof(void *) + max_align - 1) & ~(max_align - 1);
    char *buf = need ? aclsim__aligned_alloc(max_align, table + need) : NULL;
    if (need && !buf)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory launching kernel %s",
                            k->name);
    for (uint32_t i = 0; i < k->num_params; i++) {
        memcpy(buf + table + offsets[i], packed ? (const char *)packed + offsets[i] : args[i],
               k->param_size[i]);
        ((void **)buf)[i] = buf + table + offsets[i];
    }
    t.u.kernel.argbuf = buf;
    if ((err = aclsim__submit(s, &t, api, NULL)))
        free(buf);
    return err;
}

aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t numBlocks, const void *argsData,
                           size_t argsSize, aclrtStream stream)
{
    ACLSIM_REQUIRE_INIT("aclrtLaunchKernel");
    if (!argsData && argsSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchKernel",
                            "argsData is NULL but argsSize is %zu", argsSize);
    return launch(funcHandle, numBlocks, stream, "aclrtLaunchKernel",
                  argsData ? argsData : (const void *)"", argsSize, NULL);
}

aclError aclrtLaunchKernelWithArgsArray(void *func, uint32_t numBlocks, aclrtStream stream,
                                        aclrtLaunchKernelCfg *cfg, void **args)
{
    static const char api[] = "aclrtLaunchKernelWithArgsArray";
    ACLSIM_REQUIRE_INIT(api);
    if (cfg && cfg->numAttrs && !cfg->attrs)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "cfg->attrs is NULL but cfg->numAttrs is %zu", cfg->numAttrs);
    return launch(func, numBlocks, stream, api, NULL, 0, args);
}

/* After fork(), in the child (internal.h, THE FORK RULE). */
void aclsim__kernels_forget_after_fork(void)
{
    pthread_mutex_init(&kernels.lock, NULL);
}
