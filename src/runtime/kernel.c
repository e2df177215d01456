/*
 * Kernels: the registry of aclsimKernel descriptors (ACLSIM_KERNEL_REGISTER),
 * aclrtGetFuncBySymbol and the launch functions (launch configurations,
 * argument blocks, Ascend C's <<<>>>). A launch copies the argument values
 * into the task, so the caller's buffers may be reused at once; its blocks
 * run in parallel on the device's workers (kernel-block.c), the launch as a
 * whole in stream order. The function queries are in kernel-query.c; what
 * the files share is in kernel.h.
 */
#include "kernel.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct aclsim__addr_map kernels = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Kernels follow the variables' rules (symbol.c, R1-R3) for their function
 * address: the same descriptor registered again is counted, another
 * descriptor for a registered function is refused and its unregistration
 * changes nothing. And (K1) a descriptor whose function lies in another
 * loaded object than the descriptor is refused: a kernel binary's kernel
 * named like a function that a program linked with -rdynamic exports has its
 * `&fn` resolved to the program's function, and the load is refused with the
 * message instead of running the wrong code. */
void aclsimRegisterKernel(aclsimKernel *kernel)
{
    if (kernel->num_params > 16) {   /* ACLSIM_KERNEL_REGISTER cannot make one */
        aclsim__registration_failed(ACL_ERROR_INVALID_FILE, "kernel %s (%s:%d) has %u parameters; at most 16",
                                    kernel->name, kernel->file, kernel->line,
                                    kernel->num_params);
        return;
    }
    pthread_mutex_lock(&kernels.lock);
    aclsimKernel *old = aclsim__map_get(&kernels, kernel->function);
    if (old == kernel) {
        kernel->registrations++;
        pthread_mutex_unlock(&kernels.lock);
        return;
    }
    /* The descriptor and its function in two different loaded objects: the
     * macro's `&fn` was interposed by another object's export of that name,
     * and invoke would run that object's function. */
    Dl_info di, fi;
    if (!old && dladdr(kernel, &di) && dladdr(kernel->function, &fi) &&
        di.dli_fbase != fi.dli_fbase) {
        pthread_mutex_unlock(&kernels.lock);
        aclsim__registration_failed(ACL_ERROR_INVALID_FILE,
            "kernel %s (%s:%d) of %s resolves to function %p of %s, which exports the same "
            "name (symbol interposition): rename the kernel, or do not export that symbol",
            kernel->name, kernel->file, kernel->line, di.dli_fname ? di.dli_fname : "?",
            kernel->function, fi.dli_fname ? fi.dli_fname : "?");
        return;
    }
    if (old) {
        pthread_mutex_unlock(&kernels.lock);
        aclsim__registration_failed(ACL_ERROR_INVALID_FILE,
            "kernel %s (%s:%d) is function %p, which kernel %s (%s:%d) already registered "
            "(two objects define a kernel of that name and the program exports its own: "
            "rename one, or do not link the program with -rdynamic)", kernel->name,
            kernel->file, kernel->line, kernel->function, old->name, old->file, old->line);
        return;
    }
    kernel->handle = aclsim__handle_new(ACLSIM_H_FUNC, kernel);
    if (!kernel->handle || !aclsim__map_insert(&kernels, kernel->function, kernel)) {
        if (kernel->handle)
            aclsim__handle_free(kernel->handle);
        kernel->handle = NULL;
        pthread_mutex_unlock(&kernels.lock);
        aclsim__registration_failed(ACL_ERROR_BAD_ALLOC, "out of memory registering kernel %s (%s:%d)",
                                    kernel->name, kernel->file, kernel->line);
        return;
    }
    kernel->registrations = 1;
    pthread_mutex_unlock(&kernels.lock);
}

void aclsimRegisterKernelAlias(aclsimKernel *kernel)
{
    pthread_mutex_lock(&kernels.lock);
    aclsimKernel *old = aclsim__map_get(&kernels, kernel->function);
    if (old && old != kernel && old->function == kernel->function) {
        /* the function is registered (e.g. by a C file's ACLSIM_KERNEL_REGISTER):
         * this descriptor shares its handle and stays out of the map */
        kernel->handle = old->handle;
        pthread_mutex_unlock(&kernels.lock);
        return;
    }
    pthread_mutex_unlock(&kernels.lock);
    aclsimRegisterKernel(kernel);
}

void aclsimUnregisterKernel(aclsimKernel *kernel)
{
    pthread_mutex_lock(&kernels.lock);
    if (aclsim__map_get(&kernels, kernel->function) == kernel && --kernel->registrations == 0) {
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

size_t aclsim__kernel_layout(const aclsimKernel *k, size_t *offsets, size_t *max_align)
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

/* ---- Ascend C's <<<>>> (aclsim-cc) ------------------------------------------ */

int aclsimLaunchAt(const aclsimKernel *kernel, uint32_t blocks, void *stream, void **args,
                   const char *file, int line)
{
    aclError err;
    if (!kernel->handle)
        err = aclsim__fail(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "aclrtLaunchKernelWithArgsArray",
                           "kernel %s (%s:%d) is not registered (out of memory at load time)",
                           kernel->name, kernel->file, kernel->line);
    else
        err = aclrtLaunchKernelWithArgsArray(kernel->handle, blocks, stream, NULL, args);
    if (err) {
        const char *m = aclGetRecentErrMsg();
        char api[512], why[512];
        snprintf(why, sizeof why, "%s", m ? m : "launch failed");
        char *tail = strstr(why, " (error ");   /* aclsim__fail adds it again */
        if (tail)
            *tail = 0;
        snprintf(api, sizeof api, "%s:%d: %s<<<%u, ..., %p>>>", file ? file : "?", line,
                 kernel->name, blocks, stream);
        return aclsim__fail(err, api, "%s", why);
    }
    return ACL_SUCCESS;
}

/* ---- launches --------------------------------------------------------------- */

const aclsimKernel *aclsim__kernel_of(const void *func)
{
    const aclsimKernel *k = aclsim__handle_get(func, ACLSIM_H_FUNC);
    return k ? k : aclsim__kernel_by_function(func);
}

static aclError attr_range(const char *api, size_t i, const char *field, unsigned value,
                           unsigned end)
{
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "cfg->attrs[%zu].value.%s is %u, out of range [0, %u)", i, field, value,
                        end);
}

static aclError attr_family(const char *api, size_t i, const char *attr, unsigned families,
                            const char *products)
{
    const struct aclsim__soc *soc = aclsim__soc_current();
    if (families & (1u << soc->family))
        return ACL_SUCCESS;
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "cfg->attrs[%zu]: %s is supported on %s only, not on SoC %s", i, attr,
                        products, soc->name);
}

/* Launch attributes, checked as CANN's runtime does (107000 for a bad value).
 * Accepted without effect, because nothing observable depends on them on a
 * CPU: the scheduling mode, the engine type (Atlas inference products),
 * block-task prefetch and per-task profiling (aclsim has no profiling
 * session to report to). The timeouts are honoured. The rest is 207000. */
aclError aclsim__launch_cfg_parse(const char *api, const aclrtLaunchKernelCfg *cfg,
                                  const aclsimKernel *k, struct aclsim__launch_cfg *out)
{
    out->timeout_us = 0;
    if (!cfg)
        return ACL_SUCCESS;
    if (cfg->numAttrs && !cfg->attrs)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "cfg->attrs is NULL but cfg->numAttrs is %zu", cfg->numAttrs);
    bool seconds = false, micros = false;
    aclError err = ACL_SUCCESS;
    for (size_t i = 0; i < cfg->numAttrs && !err; i++) {
        const aclrtLaunchKernelAttrValue *v = &cfg->attrs[i].value;
        switch ((int)cfg->attrs[i].id) {
        case ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE:
            if (v->schemMode >= 2)
                err = attr_range(api, i, "schemMode", v->schemMode, 2);
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE:
            if (v->dynUBufSize &&
                !(err = attr_family(api, i, "ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE", A5_ONLY,
                                    "Ascend 950")))
                err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                   "cfg->attrs[%zu].value.dynUBufSize is %u, but kernel %s is not "
                                   "a SIMT kernel (aclsim's kernels are SIMD): it must be 0",
                                   i, v->dynUBufSize, k->name);
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE:
            if ((unsigned)v->engineType > ACL_RT_ENGINE_TYPE_AIV)
                err = attr_range(api, i, "engineType", (unsigned)v->engineType, 2);
            else
                err = attr_family(api, i, "ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE", INFERENCE_ONLY,
                                  "Atlas inference products");
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET:
            if (!(err = attr_family(api, i, "ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET",
                                    INFERENCE_ONLY, "Atlas inference products")) &&
                v->blockDimOffset)
                err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                   "cfg->attrs[%zu].value.blockDimOffset is %u: splitting one "
                                   "kernel's blocks between the AI Cores and the Vector Cores is "
                                   "not simulated (launch all blocks in one launch)", i,
                                   v->blockDimOffset);
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH:
            if (v->isBlockTaskPrefetch > 1)
                err = attr_range(api, i, "isBlockTaskPrefetch", v->isBlockTaskPrefetch, 2);
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP:
            if (v->isDataDump > 1)
                err = attr_range(api, i, "isDataDump", v->isDataDump, 2);
            else if (v->isDataDump)
                err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                   "cfg->attrs[%zu]: data dump (isDataDump 1) is not simulated", i);
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT:
            seconds = true;   /* 0: wait forever */
            out->timeout_us = v->timeout ? (uint32_t)v->timeout * 1000000u : UINT32_MAX;
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US: {
            micros = true;
            uint64_t us = (uint64_t)v->timeoutUs.timeoutHigh << 32 | v->timeoutUs.timeoutLow;
            out->timeout_us = us && us < UINT32_MAX ? (uint32_t)us : UINT32_MAX;
            break;
        }
        case ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING:
            if (v->enableProfiling > 1)
                err = attr_range(api, i, "enableProfiling", v->enableProfiling, 2);
            break;
        default:
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                               "cfg->attrs[%zu].id %d is not a launch attribute: it should be in "
                               "[%d, %d]", i, (int)cfg->attrs[i].id,
                               ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE,
                               ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING);
        }
    }
    if (!err && seconds && micros)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "the ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT(7) and "
                           "ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US(8) attributes cannot be carried "
                           "at the same time");
    return err;
}

char *aclsim__args_block(const aclsimKernel *k, size_t n, char **values, size_t *len)
{
    size_t offsets[16], max_align;
    aclsim__kernel_layout(k, offsets, &max_align);
    if (max_align < 16)
        max_align = 16;   /* also aligns placeholder data and 8-byte argument slots */
    size_t table = (k->num_params * sizeof(void *) + max_align - 1) & ~(max_align - 1);
    char *buf = aclsim__aligned_alloc(max_align, table + (n ? n : 1));
    if (buf) {
        *values = buf + table;
        *len = table + (n ? n : 1);
    }
    return buf;
}

static aclError check_blocks(const aclsimKernel *k, uint32_t numBlocks, const char *api)
{
    if (numBlocks == 0 || numBlocks > ACLSIM_MAX_BLOCKS)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "numBlocks %u is out of range for kernel %s: 1 to %u", numBlocks,
                            k->name, ACLSIM_MAX_BLOCKS);
    return ACL_SUCCESS;
}

aclError aclsim__kernel_dead_func(const void *func, const char *api)
{
    return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                        "funcHandle %p is not a live kernel handle (from aclrtGetFuncBySymbol or "
                        "aclrtBinaryGetFunction; its binary may have been unloaded) nor a "
                        "registered kernel function", func);
}

aclError aclsim__launch_built(const aclsimKernel *k, uint32_t numBlocks, aclrtStream stream,
                              const struct aclsim__launch_cfg *c, char *buf, size_t len,
                              const char *api)
{
    struct aclsim__context *ctx = NULL;
    struct aclsim__sref s;
    aclError err = aclsim__stream_resolve(stream, api, &ctx, &s);
    if (!err)
        err = aclsim__symbols_instantiate_all(ctx, api);
    if (err) {
        free(buf);
        return err;
    }
    struct aclsim__task t = {.kind = ACLSIM_TASK_KERNEL, .label = k->name,
                             .u.kernel = {.kernel = k, .blocks = numBlocks, .argbuf = buf,
                                          .cores = aclsim__kernel_core_limit(aclsim__context_device(ctx)),
                                          .sat_mode = atomic_load(&s.s->sat_mode),
                                          .overflow_check = atomic_load(&s.s->overflow_check),
                                          .args_len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len,
                                          .timeout_us = c ? c->timeout_us : 0}};
    if ((err = aclsim__submit(s, &t, api, NULL)))
        free(buf);
    return err;
}

/* Where a launch's argument values come from: argsData / hostArgs (packed
 * with natural alignment; host: placeholder data may follow the values, and
 * placeholders are rewritten to point at the launch's copy of it), or one
 * pointer per parameter. */
struct launch_src {
    const void *packed;
    size_t packed_size;
    void **args;
    bool host;
    const aclrtPlaceHolderInfo *ph;
    size_t nph;
};

static aclError check_placeholders(const aclsimKernel *k, const size_t *offsets,
                                   const struct launch_src *src, const char *api)
{
    if (src->nph && !src->ph)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "placeHolderArray is NULL but placeHolderNum is %zu", src->nph);
    for (size_t i = 0; i < src->nph; i++) {
        const aclrtPlaceHolderInfo *p = &src->ph[i];
        if (p->addrOffset >= src->packed_size || p->dataOffset >= src->packed_size)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "placeHolderArray[%zu].%s %u should be less than argsSize %zu", i,
                                p->addrOffset >= src->packed_size ? "addrOffset" : "dataOffset",
                                p->addrOffset >= src->packed_size ? p->addrOffset : p->dataOffset,
                                src->packed_size);
        uint32_t j = 0;
        while (j < k->num_params &&
               !(offsets[j] == p->addrOffset && k->param_size[j] == sizeof(void *)))
            j++;
        if (j == k->num_params)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "placeHolderArray[%zu].addrOffset %u is not the offset of a "
                                "pointer parameter of kernel %s (aclrtFunctionGetParamInfo gives "
                                "each parameter's offset and size)", i, p->addrOffset, k->name);
    }
    return ACL_SUCCESS;
}

/* The kernel of an aclrtFuncHandle argument, or (by_function: a `void *func`
 * argument, as CANN's reference allows for mixed builds) of a kernel
 * function itself. */
const aclsimKernel *aclsim__kernel_arg(const void *func, bool by_function)
{
    return by_function ? aclsim__kernel_of(func) : aclsim__handle_get(func, ACLSIM_H_FUNC);
}

/* An AI CPU kernel gets one argument block (host arguments only, as CANN's
 * launches for them): a copy of hostArgs, placeholders pointing into it. */
static aclError cpu_launch(const aclsimKernel *k, uint32_t numBlocks, aclrtStream stream,
                           const char *api, const struct aclsim__launch_cfg *c,
                           const struct launch_src *src)
{
    if (!src->host)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "kernel %s is an AI CPU kernel (aclrtRegisterCpuFunc): launch it with "
                            "aclrtLaunchKernelWithConfig or aclrtLaunchKernelWithHostArgs", k->name);
    if (!src->packed_size)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "argsSize is 0");
    if (src->nph && !src->ph)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "placeHolderArray is NULL but placeHolderNum is %zu", src->nph);
    for (size_t i = 0; i < src->nph; i++)
        if (src->packed_size < sizeof(void *) ||
            src->ph[i].addrOffset > src->packed_size - sizeof(void *) ||
            src->ph[i].dataOffset >= src->packed_size)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "placeHolderArray[%zu] (addrOffset %u, dataOffset %u) lies outside "
                                "argsSize %zu", i, src->ph[i].addrOffset, src->ph[i].dataOffset,
                                src->packed_size);
    char *values;
    size_t len;
    char *buf = aclsim__cpu_block(k, src->packed, src->packed_size, &values, &len);
    if (!buf)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory launching kernel %s",
                            k->name);
    for (size_t i = 0; i < src->nph; i++) {
        void *data = values + src->ph[i].dataOffset;
        memcpy(values + src->ph[i].addrOffset, &data, sizeof data);
    }
    return aclsim__launch_built(k, numBlocks, stream, c, buf, len, api);
}

static aclError launch(void *func, bool by_function, uint32_t numBlocks, aclrtStream stream,
                       const char *api, const aclrtLaunchKernelCfg *cfg,
                       const struct launch_src *src)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!func)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "funcHandle is NULL");
    const aclsimKernel *k = aclsim__kernel_arg(func, by_function);
    if (!k)
        return aclsim__kernel_dead_func(func, api);
    struct aclsim__launch_cfg c;
    aclError err = check_blocks(k, numBlocks, api);
    if (err || (err = aclsim__launch_cfg_parse(api, cfg, k, &c)))
        return err;
    if (aclsim__kernel_is_cpu(k))
        return cpu_launch(k, numBlocks, stream, api, &c, src);
    size_t offsets[16], max_align;
    size_t need = aclsim__kernel_layout(k, offsets, &max_align);
    if (k->num_params && !src->packed && !src->args)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "kernel %s takes %u argument(s) but %s is NULL", k->name,
                            k->num_params, src->packed_size ? "argsData" : "args");
    if (src->packed && !src->host) {
        size_t padded = (need + max_align - 1) & ~(max_align - 1);
        if (src->packed_size < need || src->packed_size > padded)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "argsSize %zu does not match kernel %s: its %u argument(s) "
                                "packed with natural alignment take %zu bytes", src->packed_size,
                                k->name, k->num_params, need);
    }
    if (src->host) {
        if (src->packed_size < need)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "argsSize %zu is too small for kernel %s: its %u argument(s) "
                                "packed with natural alignment take %zu bytes (placeholder data "
                                "follows them)", src->packed_size, k->name, k->num_params, need);
        if ((err = check_placeholders(k, offsets, src, api)))
            return err;
    }
    if (src->args)
        for (uint32_t i = 0; i < k->num_params; i++)
            if (!src->args[i])
                return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                    "args[%u] is NULL (kernel %s takes %u arguments)", i,
                                    k->name, k->num_params);
    /* Invariant: a kernel with parameters always gets a table with one valid
     * pointer per parameter, even when every parameter is zero-size (a GNU C
     * empty struct: need == 0), so invoke never dereferences a NULL table.
     * Without parameters there is no buffer and invoke ignores args. */
    char *buf = NULL, *values = NULL;
    size_t len = 0;
    if (k->num_params) {
        size_t n = src->host ? src->packed_size : need;
        if (!(buf = aclsim__args_block(k, n, &values, &len)))
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory launching kernel %s",
                                k->name);
        if (src->host)
            memcpy(values, src->packed, n);
        for (uint32_t i = 0; i < k->num_params; i++) {
            if (!src->host)
                memcpy(values + offsets[i],
                       src->packed ? (const char *)src->packed + offsets[i] : src->args[i],
                       k->param_size[i]);
            ((void **)buf)[i] = values + offsets[i];
        }
        for (size_t i = 0; i < src->nph; i++) {   /* now pointing at the launch's copy */
            void *data = values + src->ph[i].dataOffset;
            memcpy(values + src->ph[i].addrOffset, &data, sizeof data);
        }
    }
    return aclsim__launch_built(k, numBlocks, stream, &c, buf, len, api);
}

aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t numBlocks, const void *argsData,
                           size_t argsSize, aclrtStream stream)
{
    ACLSIM_REQUIRE_INIT("aclrtLaunchKernel");
    if (!argsData && argsSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchKernel",
                            "argsData is NULL but argsSize is %zu", argsSize);
    struct launch_src src = {.packed = argsData ? argsData : (const void *)"",
                             .packed_size = argsSize};
    return launch(funcHandle, false, numBlocks, stream, "aclrtLaunchKernel", NULL, &src);
}

aclError aclrtLaunchKernelV2(aclrtFuncHandle funcHandle, uint32_t numBlocks, const void *argsData,
                             size_t argsSize, aclrtLaunchKernelCfg *cfg, aclrtStream stream)
{
    static const char api[] = "aclrtLaunchKernelV2";
    if (!funcHandle || !argsData)   /* CANN's ACL layer checks both first */
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !funcHandle ? "funcHandle" : "argsData");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    struct launch_src src = {.packed = argsData, .packed_size = argsSize};
    return launch(funcHandle, false, numBlocks, stream, api, cfg, &src);
}

aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                       aclrtStream stream, aclrtLaunchKernelCfg *cfg,
                                       void *hostArgs, size_t argsSize,
                                       aclrtPlaceHolderInfo *placeHolderArray,
                                       size_t placeHolderNum)
{
    static const char api[] = "aclrtLaunchKernelWithHostArgs";
    if (!funcHandle || !hostArgs)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !funcHandle ? "funcHandle" : "hostArgs");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    struct launch_src src = {.packed = hostArgs, .packed_size = argsSize, .host = true,
                             .ph = placeHolderArray, .nph = placeHolderNum};
    return launch(funcHandle, false, numBlocks, stream, api, cfg, &src);
}

aclError aclrtLaunchKernelWithArgsArray(void *func, uint32_t numBlocks, aclrtStream stream,
                                        aclrtLaunchKernelCfg *cfg, void **args)
{
    struct launch_src src = {.args = args};
    return launch(func, true, numBlocks, stream, "aclrtLaunchKernelWithArgsArray", cfg, &src);
}

/* SIMT kernels (a grid of thread blocks, Ascend 950 only) do not exist in
 * aclsim: every kernel is a SIMD kernel run block by block. */
static aclError simt_launch(void *func, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, A5_ONLY);
    if (err)
        return err;
    const aclsimKernel *k = aclsim__kernel_arg(func, true);
    if (!k)
        return aclsim__kernel_dead_func(func, api);
    /* CANN checks the kernel's type first, then the dimensions. */
    return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                        "kernel %s is not a SIMT kernel: this function launches SIMT kernels only, "
                        "and aclsim's kernels are SIMD kernels (launch it with "
                        "aclrtLaunchKernelWithArgsArray or aclrtLaunchKernelWithHostArgs)",
                        k->name);
}

aclError aclrtLaunchSIMTKernelWithArgsArray(void *func, dim3 gridDim, dim3 blockDim,
                                            size_t dynUbufSize, aclrtStream stream,
                                            aclrtLaunchKernelCfg *cfg, void **args)
{
    static const char api[] = "aclrtLaunchSIMTKernelWithArgsArray";
    (void)gridDim, (void)blockDim, (void)dynUbufSize, (void)stream, (void)cfg, (void)args;
    if (!func)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "func is NULL");
    return simt_launch(func, api);
}

aclError aclrtLaunchSIMTKernelWithHostArgs(void *func, dim3 gridDim, dim3 blockDim,
                                           size_t dynUbufSize, aclrtStream stream,
                                           aclrtLaunchKernelCfg *cfg, void *hostArgs,
                                           size_t argsSize, aclrtPlaceHolderInfo *placeHolderArray,
                                           size_t placeHolderNum)
{
    static const char api[] = "aclrtLaunchSIMTKernelWithHostArgs";
    (void)gridDim, (void)blockDim, (void)dynUbufSize, (void)stream, (void)cfg;
    (void)placeHolderArray, (void)placeHolderNum;
    if (!func || !hostArgs || !argsSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s",
                            !func ? "func is NULL" : !hostArgs ? "hostArgs is NULL"
                                                               : "argsSize is 0");
    return simt_launch(func, api);
}

/* After fork(), in the child (internal.h, THE FORK RULE). */
void aclsim__kernels_forget_after_fork(void)
{
    pthread_mutex_init(&kernels.lock, NULL);
}
