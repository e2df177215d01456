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
    if (setjmp(local.env) == 0)
        b->task->u.kernel.kernel->invoke((void *const *)b->task->u.kernel.argbuf);
    print_flush();   /* the block's unfinished printf line (aclsimPrint) */
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

/* Size of a launch's argument block (the pointer table, then the values). */
static uint32_t args_size(const aclsimKernel *k);

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
