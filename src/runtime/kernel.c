/*
 * Kernels: the registry of aclsimKernel descriptors (ACLSIM_KERNEL_REGISTER),
 * aclrtGetFuncBySymbol and the two launch functions. A launch copies the
 * argument values into the task, so the caller's buffers may be reused at
 * once; its blocks run in parallel on the device's workers, the launch as a
 * whole in stream order.
 */
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
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
    aclError trap_code;            /* 507015, or 507018 for an AI CPU kernel */
    char reason[200];              /* what failed: "aclsimTrap(\"...\")" */
    /* Block scheduling (see "blocks that wait for each other" below). */
    atomic_uint next_block;        /* next block index to claim */
    uint32_t blocks;
    pthread_mutex_t bar_lock;      /* the SyncAll barrier: gen, released */
    pthread_cond_t bar_cond;
    atomic_uint arrived;           /* blocks waiting at the barrier (this generation) */
    atomic_uint finished;          /* blocks that ended (or were skipped) */
    unsigned gen;                  /* barrier generation, under bar_lock */
    bool released;                 /* the barrier can never complete: waiters leave */
    bool serial;                   /* ACLSIM_BLOCK_ORDER=serial */
    atomic_ullong fewest;          /* (SyncAll calls << 32 | block) of the ended block with the fewest */
};

/* What a running block owns: where aclsimTrap jumps to, its memory
 * (aclsimBlockAlloc) and the words of aclsimBlockLocal. On the block's own
 * stack (run_block's frame), so it survives the block's suspension. */
struct block_local {
    jmp_buf env;
    struct block_mem *mem;
    uint32_t syncs;                /* SyncAll calls passed */
    uint64_t words[ACLSIM_BLOCK_LOCAL_WORDS];
};

/* The block this thread runs, and where aclsimTrap jumps to. */
static _Thread_local struct block_job *tls_job;
static _Thread_local jmp_buf *tls_trap;
static _Thread_local struct block_local *tls_local;

/* Fails the running block (the first failure of the launch is kept). */
static void __attribute__((noreturn)) trap(aclError code, const char *fmt, const char *text)
{
    struct block_job *b = tls_job;
    bool expected = false;
    if (atomic_compare_exchange_strong(&b->trapped, &expected, true)) {
        b->trap_block = aclsim__tls_block_idx;
        b->trap_code = code;
        snprintf(b->reason, sizeof b->reason, fmt, text);
    }
    longjmp(*tls_trap, 1);
}

const struct aclsim__task *aclsim__running_kernel_task(void)
{
    return tls_job ? tls_job->task : NULL;
}

void aclsimTrap(const char *reason)
{
    if (!tls_trap || !tls_job) {
        fprintf(stderr, "aclsimTrap called outside a kernel: %s\n", reason ? reason : "(no reason)");
        abort();
    }
    trap(ACL_ERROR_RT_AICORE_EXCEPTION, "aclsimTrap(\"%s\")", reason ? reason : "(no reason)");
}

void aclsim__cpu_invoke(void *const *args)
{
    const struct aclsim__cpu_call *c = args[0];
    uint32_t rc = c->fn(c->args);
    if (rc) {
        char text[32];
        snprintf(text, sizeof text, "%u", rc);
        trap(ACL_ERROR_RT_AICPU_EXCEPTION, "the AI CPU kernel returned %s", text);
    }
}

char *aclsim__cpu_block(const aclsimKernel *k, const void *data, size_t n, char **values,
                        size_t *len)
{
    size_t head = 16 + sizeof(struct aclsim__cpu_call);   /* the table, then the call */
    char *buf = aclsim__aligned_alloc(16, head + (n ? n : 1));
    if (!buf)
        return NULL;
    *values = buf + head;
    memcpy(*values, data, n);
    struct aclsim__cpu_call call = {(uint32_t (*)(void *))(uintptr_t)k->function, *values};
    memcpy(buf + 16, &call, sizeof call);
    ((void **)buf)[0] = buf + 16;
    *len = head + (n ? n : 1);
    return buf;
}

uint32_t aclsimKernelUbSize(void)
{
    return aclsim__soc_current()->ub;
}

void aclsimKernelWarn(const char *what)
{
    static atomic_int strict = -1;   /* ACLSIM_ASCENDC_STRICT, read once */
    int st = atomic_load_explicit(&strict, memory_order_relaxed);
    if (st < 0) {
        const char *e = getenv("ACLSIM_ASCENDC_STRICT");
        st = e && *e && strcmp(e, "0") != 0;
        atomic_store_explicit(&strict, st, memory_order_relaxed);
    }
    struct block_job *b = tls_job;
    if (st && b && tls_trap) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s (ACLSIM_ASCENDC_STRICT)", what);
        aclsimTrap(msg);
    }
    aclsim__log(ACLSIM_LOG_WARNING, "kernel %s, block %u of %u: %s",
                b ? b->task->u.kernel.kernel->name : "(none)", aclsim__tls_block_idx,
                aclsim__tls_block_num, what);
}

size_t aclsimDeviceRoom(const void *p)
{
    struct aclsim__where w = aclsim__classify(p);
    if (w.kind != ACLSIM_DEVICE)
        return SIZE_MAX;   /* host memory (GmAlloc), mapped or managed memory: unknown */
    struct aclsim__alloc a;
    if (!aclsim__heap_find(&w.device->heap, p, &a))
        return 0;
    return a.size - (size_t)((uintptr_t)p - a.addr);
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

/* ---- block memory (aclsimBlockAlloc) -----------------------------------------
 * Memory a block owns until it ends (also when it traps: longjmp skips the
 * C++ destructors that would free it). Each worker keeps the last few freed
 * areas for the next blocks (a UB is the same size for every block), freed
 * when the thread exits. */
struct block_mem {
    struct block_mem *next;
    size_t size;   /* usable bytes after the header */
};
#define BLOCK_MEM_HDR 64u   /* keeps the area 64-byte aligned */
#define BLOCK_MEM_CACHE 4
static _Thread_local struct block_mem *tls_mem_cache[BLOCK_MEM_CACHE];
static pthread_key_t mem_cache_key;
static pthread_once_t mem_cache_once = PTHREAD_ONCE_INIT;

static void mem_cache_free(void *unused)
{
    (void)unused;
    for (int i = 0; i < BLOCK_MEM_CACHE; i++) {
        free(tls_mem_cache[i]);
        tls_mem_cache[i] = NULL;
    }
}
static void mem_cache_init(void) { pthread_key_create(&mem_cache_key, mem_cache_free); }

void *aclsimBlockAlloc(size_t size)
{
    struct block_local *l = tls_local;
    if (!l) {
        fprintf(stderr, "aclsimBlockAlloc called outside a kernel\n");
        abort();
    }
    struct block_mem *m = NULL;
    for (int i = 0; i < BLOCK_MEM_CACHE; i++)
        if (tls_mem_cache[i] && tls_mem_cache[i]->size >= size) {
            m = tls_mem_cache[i];
            tls_mem_cache[i] = NULL;
            break;
        }
    if (!m) {
        m = aclsim__aligned_alloc(BLOCK_MEM_HDR, BLOCK_MEM_HDR + size);
        if (!m)
            return NULL;
        m->size = size;
    }
    m->next = l->mem;
    l->mem = m;
    return (char *)m + BLOCK_MEM_HDR;
}

static void block_mem_release(struct block_local *l)
{
    while (l->mem) {
        struct block_mem *m = l->mem;
        l->mem = m->next;
        int slot = -1;
        for (int i = 0; i < BLOCK_MEM_CACHE && slot < 0; i++)
            if (!tls_mem_cache[i])
                slot = i;
        if (slot >= 0) {
            pthread_once(&mem_cache_once, mem_cache_init);
            pthread_setspecific(mem_cache_key, (void *)1);   /* runs the destructor at exit */
            tls_mem_cache[slot] = m;
        } else {
            free(m);
        }
    }
}

uint64_t *aclsimBlockLocal(void)
{
    struct block_local *l = tls_local;
    if (!l) {
        fprintf(stderr, "aclsimBlockLocal called outside a kernel\n");
        abort();
    }
    return l->words;
}

/* The thread-local state of a running block (saved when it is suspended). */
static void block_enter(struct block_job *b, uint32_t index, struct block_local *local)
{
    tls_local = local;
    aclsim__tls_block_idx = index;
    aclsim__tls_block_num = b->task->u.kernel.blocks;
    aclsim__tls_device_slot = (uint32_t)b->dev->id;
    aclsim__tls_kernel_device = b->dev;
    aclsim__tls_sat_mode = b->task->u.kernel.sat_mode;
    aclsim__tls_overflow_check = b->task->u.kernel.overflow_check;
    tls_job = b;
    tls_trap = &local->env;
}

static void block_ended(struct block_job *b, uint32_t index, uint32_t syncs);

static void run_block(struct block_job *b, uint32_t index)
{
    if (atomic_load_explicit(&b->trapped, memory_order_relaxed) ||
        aclsim__abort_generation(b->dev) != b->abort_gen) {
        block_ended(b, index, 0);
        return;   /* the launch failed or was aborted: blocks not started never run */
    }
    struct block_local local;
    local.mem = NULL;
    local.syncs = 0;
    memset(local.words, 0, sizeof local.words);
    struct block_job *const outer_job = tls_job;   /* kept: blocks may nest via helpers */
    jmp_buf *const outer_trap = tls_trap;
    struct block_local *const outer_local = tls_local;
    block_enter(b, index, &local);
    uint64_t trace_start = aclsim__trace_start();   /* TRACE HOOK (with the call below) */
    if (setjmp(local.env) == 0)
        b->task->u.kernel.kernel->invoke((void *const *)b->task->u.kernel.argbuf);
    if (ACLSIM_UNLIKELY(aclsim__checking()))   /* checker hook: guard zones after each block */
        aclsim__check_block_done(b->dev, b->task, index);
    print_flush();   /* the block's unfinished printf line (aclsimPrint) */
    if (ACLSIM_UNLIKELY(trace_start) && aclsim__tracing(ACLSIM_TRACE_TASKS))
        aclsim__trace_block(b->dev, b->task->label, index, b->task->u.kernel.blocks, trace_start);
    block_mem_release(&local);
    tls_local = outer_local;
    tls_trap = outer_trap;
    tls_job = outer_job;
    aclsim__tls_kernel_device = NULL;
    aclsim__tls_block_idx = 0;
    aclsim__tls_block_num = 1;
    aclsim__tls_device_slot = ACLSIM_HOST_SLOT;
    block_ended(b, index, local.syncs);
}

/* ---- blocks that wait for each other (Ascend C's SyncAll) -------------------
 *
 * A launch runs as a job of W schedulers (W = the workers it may use); each
 * scheduler claims block indices one by one and runs each block directly on
 * its current stack. A block that calls SyncAll before all blocks arrived is
 * suspended where it is, on that stack, and the scheduler continues on
 * another stack (a fiber: a parked one, or a new one) to run further blocks.
 * When the last block arrives the barrier's generation advances; each
 * scheduler, out of blocks to claim, resumes its own suspended blocks (it
 * parks its current stack and switches to theirs). Blocks never move between
 * threads. So launches that never call SyncAll use no fiber at all, and a
 * launch of thousands of blocks with barriers needs thousands of stacks but
 * only W threads.
 *
 * A barrier that can never complete (every block has either ended or waits,
 * and some ended without arriving) fails the launch with a message, as does a
 * trap while others wait: the waiting blocks leave through their trap exit. */
struct sched {
    struct block_job *b;
    struct aclsim__fiber native;   /* the worker's own stack */
    struct aclsim__fiber *current; /* the stack running now */
    struct aclsim__fiber *idle;    /* stacks parked in the scheduler loop */
    struct aclsim__fiber *waiting; /* stacks holding a block suspended in SyncAll, */
    struct aclsim__fiber **waiting_tail;   /* in the order they were suspended */
    struct aclsim__fiber *all;     /* every fiber taken from the pool (all_next) */
};
static _Thread_local struct sched *tls_sched;

/* Under bar_lock: the barrier cannot complete any more. */
static void barrier_release(struct block_job *b)
{
    b->released = true;
    b->gen++;
    pthread_cond_broadcast(&b->bar_cond);
}

/* Whether the blocks waiting at the barrier can never be joined by the
 * others (each has ended); fails the launch then. Under bar_lock. */
static void barrier_check(struct block_job *b)
{
    unsigned waiting = atomic_load(&b->arrived), ended = atomic_load(&b->finished);
    if (!waiting || b->released || waiting + ended != b->blocks)
        return;
    bool expected = false;
    if (atomic_compare_exchange_strong(&b->trapped, &expected, true)) {
        unsigned long long f = atomic_load(&b->fewest);
        b->trap_block = (uint32_t)f;
        b->trap_code = ACL_ERROR_RT_AICORE_EXCEPTION;
        snprintf(b->reason, sizeof b->reason,
                 "SyncAll: %u of %u blocks wait at barrier %u, but %u block(s) ended without "
                 "reaching it (block %u after %u SyncAll call(s)): every block of the launch "
                 "must call SyncAll the same number of times", waiting, b->blocks, b->gen + 1,
                 ended, (uint32_t)f, (uint32_t)(f >> 32));
    }
    barrier_release(b);
}

static void block_ended(struct block_job *b, uint32_t index, uint32_t syncs)
{
    unsigned long long mine = (unsigned long long)syncs << 32 | index,
                       old = atomic_load_explicit(&b->fewest, memory_order_relaxed);
    while (mine < old && !atomic_compare_exchange_weak(&b->fewest, &old, mine))
        ;
    atomic_fetch_add(&b->finished, 1);
    if (atomic_load(&b->arrived)) {   /* seq_cst pairs with SyncAll's (Dekker) */
        pthread_mutex_lock(&b->bar_lock);
        barrier_check(b);
        pthread_mutex_unlock(&b->bar_lock);
    }
}

static void sched_loop(struct sched *w);

static void fiber_entry(void)
{
    aclsim__fiber_started();
    sched_loop(tls_sched);
}

/* Continue on another stack of this worker: a parked one, or a new one.
 * NULL when no stack can be had (out of memory). */
static struct aclsim__fiber *spare_stack(struct sched *w)
{
    struct aclsim__fiber *f = w->idle;
    if (f) {
        w->idle = f->next;
        return f;
    }
    f = aclsim__fiber_new(fiber_entry);
    if (f) {
        f->all_next = w->all;
        w->all = f;
    }
    return f;
}

/* One scheduler: runs on whatever stack of the worker is current. */
static void sched_loop(struct sched *w)
{
    struct block_job *b = w->b;
    for (;;) {
        uint32_t i = atomic_fetch_add_explicit(&b->next_block, 1, memory_order_relaxed);
        if (i < b->blocks) {
            run_block(b, i);   /* may suspend; returns on this same stack */
            continue;
        }
        if (!w->waiting)
            break;
        /* Out of blocks: wait until one of ours may go on. */
        struct aclsim__fiber *f = NULL, **pf;
        pthread_mutex_lock(&b->bar_lock);
        for (;;) {
            for (pf = &w->waiting; *pf; pf = &(*pf)->next)
                if ((*pf)->gen != b->gen || b->released)
                    break;
            if (*pf)
                break;
            /* bounded: the other blocks run on; one that ends releases us */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 50 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&b->bar_cond, &b->bar_lock, &ts);
            barrier_check(b);
        }
        f = *pf;
        *pf = f->next;
        if (!f->next)
            w->waiting_tail = pf;
        pthread_mutex_unlock(&b->bar_lock);
        struct aclsim__fiber *self = w->current;
        self->next = w->idle;   /* park: resumed when a suspended block needs a stack */
        w->idle = self;
        w->current = f;
        aclsim__fiber_switch(self, f, false);
    }
    if (w->current != &w->native) {
        /* Finished on a fiber: end on the worker's own stack (parked). */
        struct aclsim__fiber *self = w->current;
        w->current = &w->native;
        aclsim__fiber_switch(self, &w->native, true);
    }
}

/* The job's run: one scheduler. */
static void run_scheduler(struct aclsim__job *job, uint32_t index)
{
    (void)index;
    struct sched w = {.b = (struct block_job *)job};
    w.waiting_tail = &w.waiting;
    aclsim__fiber_native(&w.native);
    w.current = &w.native;
    struct sched *const outer = tls_sched;
    tls_sched = &w;
    sched_loop(&w);
    tls_sched = outer;
    while (w.all) {
        struct aclsim__fiber *f = w.all;
        w.all = f->all_next;
        aclsim__fiber_free(f);
    }
}

void aclsimSyncAll(void)
{
    struct block_job *b = tls_job;
    struct sched *w = tls_sched;
    if (!b || !w) {
        fprintf(stderr, "aclsimSyncAll called outside a kernel\n");
        abort();
    }
    if (b->blocks == 1)
        return;
    pthread_mutex_lock(&b->bar_lock);
    if (b->released) {
        pthread_mutex_unlock(&b->bar_lock);
        longjmp(*tls_trap, 1);   /* the launch failed: leave as its other blocks did */
    }
    unsigned n = atomic_fetch_add(&b->arrived, 1) + 1;
    struct aclsim__fiber *self = w->current;
    if (n == b->blocks) {   /* the last one: everybody goes on */
        atomic_store(&b->arrived, 0);
        b->gen++;
        pthread_cond_broadcast(&b->bar_cond);
        if (!b->serial) {
            pthread_mutex_unlock(&b->bar_lock);
            tls_local->syncs++;
            return;
        }
        /* serial order: it goes on after the others, which arrived before it */
        self->gen = b->gen - 1;
    } else {
        barrier_check(b);
        if (b->released) {
            pthread_mutex_unlock(&b->bar_lock);
            longjmp(*tls_trap, 1);
        }
        self->gen = b->gen;
    }
    pthread_mutex_unlock(&b->bar_lock);
    print_flush();   /* another block may print on this thread meanwhile */
    struct aclsim__fiber *next = spare_stack(w);
    if (!next) {
        pthread_mutex_lock(&b->bar_lock);
        if (self->gen == b->gen)   /* still counted as waiting (not the serial last one) */
            atomic_fetch_sub(&b->arrived, 1);
        pthread_mutex_unlock(&b->bar_lock);
        aclsimTrap("SyncAll: out of memory for a stack to suspend the block on");
    }
    self->block = aclsim__tls_block_idx;
    self->trap = tls_local;
    self->next = NULL;   /* appended: suspended blocks resume in the order they arrived */
    *w->waiting_tail = self;
    w->waiting_tail = &self->next;
    w->current = next;
    aclsim__fiber_switch(self, next, false);
    /* resumed by this worker's scheduler */
    block_enter(b, self->block, (struct block_local *)self->trap);
    pthread_mutex_lock(&b->bar_lock);
    bool failed = b->released;
    pthread_mutex_unlock(&b->bar_lock);
    if (failed)
        longjmp(*tls_trap, 1);
    tls_local->syncs++;
}

aclError aclsim__execute_kernel(struct aclsim__device *dev, struct aclsim__task *t,
                                struct aclsim__fault_detail *d)
{
    struct block_job b = {.task = t, .dev = dev, .abort_gen = aclsim__abort_generation(dev),
                          .blocks = t->u.kernel.blocks, .fewest = ~0ull};
    pthread_mutex_init(&b.bar_lock, NULL);
    pthread_cond_init(&b.bar_cond, NULL);
    b.job.run = run_scheduler;
    uint32_t cores = t->u.kernel.cores ? t->u.kernel.cores : dev->nworkers;
    b.serial = aclsim__config()->serial_blocks;
    if (b.serial)
        cores = 1;   /* one scheduler: blocks start, and resume, in index order */
    b.job.count = cores < b.blocks ? cores : b.blocks;   /* schedulers */
    uint64_t limit = aclsim__op_execute_timeout_ns();
    if (t->u.kernel.timeout_us)   /* the launch's own (ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT*) */
        limit = t->u.kernel.timeout_us == UINT32_MAX ? UINT64_MAX
                                                     : (uint64_t)t->u.kernel.timeout_us * 1000u;
    uint64_t start = aclsim__now_ns();
    if (b.job.count <= 1) {
        run_scheduler(&b.job, 0);
    } else {
        b.job.max_helpers = b.job.count - 1;
        aclsim__run_job(dev, &b.job);
    }
    pthread_cond_destroy(&b.bar_cond);
    pthread_mutex_destroy(&b.bar_lock);
    uint64_t took = aclsim__now_ns() - start;
    atomic_fetch_add_explicit(&dev->kernel_busy_ns, took, memory_order_relaxed);
    aclError code = ACL_SUCCESS;
    if (atomic_load(&b.trapped)) {
        code = b.trap_code;
        snprintf(d->why, sizeof d->why, "block %u of %u trapped: %s", b.trap_block,
                 t->u.kernel.blocks, b.reason);
    } else if (limit != UINT64_MAX && took > limit) {
        code = ACL_ERROR_RT_AICORE_TIMEOUT;
        snprintf(d->why, sizeof d->why,
                 "ran %" PRIu64 " us (%u blocks), past the op execute timeout of %" PRIu64
                 " us (%s)", took / 1000, t->u.kernel.blocks, limit / 1000,
                 t->u.kernel.timeout_us ? "its launch's ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT*"
                                        : "aclrtSetOpExecuteTimeOut*");
    }
    if (code) {
        d->args = t->u.kernel.argbuf;
        d->args_len = t->u.kernel.args_len;
        d->func = t->u.kernel.kernel->handle;
    }
    return code;
}

/* ---- launches --------------------------------------------------------------- */

const aclsimKernel *aclsim__kernel_of(const void *func)
{
    const aclsimKernel *k = aclsim__handle_get(func, ACLSIM_H_FUNC);
    return k ? k : aclsim__kernel_by_function(func);
}

/* The families where an attribute means something (CANN's reference). */
#define INFERENCE_ONLY ACLSIM_FAMILIES(INFERENCE)
#define A5_ONLY ACLSIM_FAMILIES(A5)

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

static aclError dead_func(const void *func, const char *api)
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
static const aclsimKernel *kernel_arg(const void *func, bool by_function)
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
    const aclsimKernel *k = kernel_arg(func, by_function);
    if (!k)
        return dead_func(func, api);
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
    const aclsimKernel *k = kernel_arg(func, true);
    if (!k)
        return dead_func(func, api);
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

/* ---- function queries --------------------------------------------------------- */

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
    else if (!(k = kernel_arg(func, by_function)))
        *err = dead_func(func, api);
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

/* After fork(), in the child (internal.h, THE FORK RULE). */
void aclsim__kernels_forget_after_fork(void)
{
    pthread_mutex_init(&kernels.lock, NULL);
}
