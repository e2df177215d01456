/*
 * Kernels: the registry of aclsimKernel descriptors (ACLSIM_KERNEL_REGISTER),
 * aclrtGetFuncBySymbol and the two launch functions. A launch copies the
 * argument values into the task, so the caller's buffers may be reused at
 * once; its blocks run in parallel on the device's workers, the launch as a
 * whole in stream order.
 */
#include "internal.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>


_Thread_local uint32_t aclsim__tls_block_idx = 0, aclsim__tls_block_num = 1,
                       aclsim__tls_device_slot = ACLSIM_HOST_SLOT;

uint32_t aclsimGetBlockIdx(void) { return aclsim__tls_block_idx; }
uint32_t aclsimGetBlockNum(void) { return aclsim__tls_block_num; }
uint32_t aclsimKernelDeviceSlot(void) { return aclsim__tls_device_slot; }

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

/* A launch running as a job: one index per block. A block that traps
 * (aclsimTrap) longjmps back to run_block; the first one to trap records
 * itself, and blocks not yet started are skipped from then on, as they are
 * after an aclrtDeviceTaskAbort of the device. */
struct block_job {
    struct aclsim__job job;
    struct aclsim__task *task;
    struct aclsim__device *dev;
    unsigned abort_gen;            /* aclsim__abort_generation at launch */
    atomic_bool trapped;           /* set once, by the first block to trap */
    uint32_t trap_block;           /* written by that block before it returns */
    char reason[200];
};

/* The block this thread runs, and where aclsimTrap jumps to. */
static _Thread_local struct block_job *tls_job;
static _Thread_local jmp_buf *tls_trap;

void aclsimTrap(const char *reason)
{
    struct block_job *b = tls_job;
    if (!tls_trap || !b) {
        fprintf(stderr, "aclsimTrap called outside a kernel: %s\n", reason ? reason : "(no reason)");
        abort();
    }
    bool expected = false;
    if (atomic_compare_exchange_strong(&b->trapped, &expected, true)) {
        b->trap_block = aclsim__tls_block_idx;
        snprintf(b->reason, sizeof b->reason, "%s", reason ? reason : "(no reason)");
    }
    longjmp(*tls_trap, 1);
}

/* ---- kernel printf (aclsimPrint) ------------------------------------------ */

#define PRINT_LINE_MAX 4096
static _Thread_local char tls_line[PRINT_LINE_MAX];
static _Thread_local size_t tls_line_len;

static void write_all(const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(1, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return;   /* standard output closed or full: the text is lost, as printf's */
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Writes the thread's pending line (prefixed) with one write. */
static void print_flush(void)
{
    if (!tls_line_len)
        return;
    char out[PRINT_LINE_MAX + 64];
    int n = 0;
    if (aclsim__tls_device_slot != ACLSIM_HOST_SLOT)
        n = snprintf(out, 64, "[device %u, block %u] ", aclsim__tls_device_slot,
                     aclsim__tls_block_idx);
    memcpy(out + n, tls_line, tls_line_len);
    write_all(out, (size_t)n + tls_line_len);
    tls_line_len = 0;
}

void aclsimPrint(const char *text, size_t len)
{
    while (len) {
        const char *nl = memchr(text, '\n', len);
        size_t take = nl ? (size_t)(nl - text) + 1 : len;
        if (take > PRINT_LINE_MAX - tls_line_len)
            take = PRINT_LINE_MAX - tls_line_len;   /* an overlong line goes in pieces */
        memcpy(tls_line + tls_line_len, text, take);
        tls_line_len += take;
        text += take;
        len -= take;
        if (tls_line[tls_line_len - 1] == '\n' || tls_line_len == PRINT_LINE_MAX)
            print_flush();
    }
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

static void run_block(struct aclsim__job *job, uint32_t index)
{
    struct block_job *b = (struct block_job *)job;
    if (atomic_load_explicit(&b->trapped, memory_order_relaxed) ||
        aclsim__abort_generation(b->dev) != b->abort_gen)
        return;   /* the launch failed or was aborted: blocks not started never run */
    aclsim__tls_block_idx = index;
    aclsim__tls_block_num = b->task->u.kernel.blocks;
    aclsim__tls_device_slot = (uint32_t)b->dev->id;
    aclsim__tls_kernel_device = b->dev;
    aclsim__tls_sat_mode = b->task->u.kernel.sat_mode;
    aclsim__tls_overflow_check = b->task->u.kernel.overflow_check;
    jmp_buf env;
    struct block_job *const outer_job = tls_job;   /* kept: blocks may nest via helpers */
    jmp_buf *const outer_trap = tls_trap;
    tls_job = b;
    tls_trap = &env;
    if (setjmp(env) == 0)
        b->task->u.kernel.kernel->invoke((void *const *)b->task->u.kernel.argbuf);
    if (ACLSIM_UNLIKELY(aclsim__checking()))   /* checker hook: guard zones after each block */
        aclsim__check_block_done(b->dev, b->task, index);
    print_flush();   /* the block's unfinished printf line (aclsimPrint) */
    tls_trap = outer_trap;
    tls_job = outer_job;
    aclsim__tls_kernel_device = NULL;
    aclsim__tls_block_idx = 0;
    aclsim__tls_block_num = 1;
    aclsim__tls_device_slot = ACLSIM_HOST_SLOT;
}

/* Size of a launch's argument block (the pointer table, then the values). */
static uint32_t args_size(const aclsimKernel *k);

aclError aclsim__execute_kernel(struct aclsim__device *dev, struct aclsim__task *t,
                                struct aclsim__fault_detail *d)
{
    struct block_job b = {.task = t, .dev = dev, .abort_gen = aclsim__abort_generation(dev)};
    b.job.run = run_block;
    b.job.count = t->u.kernel.blocks;
    uint64_t limit = aclsim__op_execute_timeout_ns();
    uint64_t start = aclsim__now_ns();
    if (t->u.kernel.blocks == 1 || t->u.kernel.cores == 1) {
        for (uint32_t i = 0; i < t->u.kernel.blocks; i++)
            run_block(&b.job, i);
    } else {
        b.job.max_helpers = t->u.kernel.cores ? t->u.kernel.cores - 1 : 0;
        aclsim__run_job(dev, &b.job);
    }
    uint64_t took = aclsim__now_ns() - start;
    atomic_fetch_add_explicit(&dev->kernel_busy_ns, took, memory_order_relaxed);
    aclError code = ACL_SUCCESS;
    if (atomic_load(&b.trapped)) {
        code = ACL_ERROR_RT_AICORE_EXCEPTION;
        snprintf(d->why, sizeof d->why, "block %u of %u trapped: aclsimTrap(\"%s\")",
                 b.trap_block, t->u.kernel.blocks, b.reason);
    } else if (limit != UINT64_MAX && took > limit) {
        code = ACL_ERROR_RT_AICORE_TIMEOUT;
        snprintf(d->why, sizeof d->why,
                 "ran %" PRIu64 " us (%u blocks), past the op execute timeout of %" PRIu64
                 " us (aclrtSetOpExecuteTimeOut*)", took / 1000, t->u.kernel.blocks,
                 limit / 1000);
    }
    if (code) {
        d->args = t->u.kernel.argbuf;
        d->args_len = args_size(t->u.kernel.kernel);
        d->func = t->u.kernel.kernel->handle;
    }
    return code;
}

static uint32_t args_size(const aclsimKernel *k)
{
    size_t offsets[16], max_align;
    size_t need = packed_layout(k, offsets, &max_align);
    if (max_align < sizeof(void *))
        max_align = sizeof(void *);
    size_t table = (k->num_params * sizeof(void *) + max_align - 1) & ~(max_align - 1);
    return need ? (uint32_t)(table + need) : 0;
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
    if ((err = aclsim__symbols_instantiate_all(ctx, api)))
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_KERNEL, .label = k->name,
                             .u.kernel = {.kernel = k, .blocks = numBlocks,
                                          .cores = aclsim__kernel_core_limit(aclsim__context_device(ctx)),
                                          .sat_mode = atomic_load(&s.s->sat_mode),
                                          .overflow_check = atomic_load(&s.s->overflow_check)}};
    /* One block: the argument pointers, then the values, aligned for the
     * most aligned parameter (invoke reads them in place). Invariant: a
     * kernel with parameters always gets a table with one valid pointer per
     * parameter, even when every parameter is zero-size (a GNU C empty
     * struct: need == 0), so invoke never dereferences a NULL table; the
     * values area then is one byte nobody reads. Without parameters there
     * is no buffer and invoke ignores args. */
    if (max_align < sizeof(void *))
        max_align = sizeof(void *);
    size_t table = (k->num_params * sizeof(void *) + max_align - 1) & ~(max_align - 1);
    char *buf = k->num_params ? aclsim__aligned_alloc(max_align, table + (need ? need : 1))
                              : NULL;
    if (k->num_params && !buf)
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
