/*
 * Kernels, running a launch: the blocks of a kernel task (run by the
 * executor through aclsim__execute_kernel) on the device's workers, their
 * schedulers and Ascend C's SyncAll barrier (blocks suspended on fibers,
 * fiber.c), traps (aclsimTrap), and what a running block may call: its
 * index and count, block memory and block-local words, kernel printf
 * (aclsimPrint), warnings, the AI CPU call. The launches that queue these
 * tasks are in kernel.c, the function queries in kernel-query.c.
 */
#include "kernel.h"

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

void aclsim__block_thread_exit(void)
{
    for (int i = 0; i < BLOCK_MEM_CACHE; i++) {
        free(tls_mem_cache[i]);
        tls_mem_cache[i] = NULL;
    }
}

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
        if (slot >= 0 && aclsim__thread_keep(ACLSIM_THREAD_BLOCK_MEM)) {   /* (given back at exit) */
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
