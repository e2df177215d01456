/*
 * aclsim internals: the data structures of the simulated runtime and the
 * invariants that hold between them. Everything here is private (prefix
 * aclsim__); the public API is include/acl and include/aclsim. The sources
 * are in src/runtime/, one file per concept.
 *
 *   runtime (runtime.c)   init state, sessions, finalize, fork handlers
 *   config  (config.c)    configuration, read and checked once per aclInit
 *   error   (error.c)     per-thread messages for aclGetRecentErrMsg, logging
 *   handle  (handle.c)    generation-checked handle table for every opaque handle
 *   thread  (thread.c)    what a thread keeps in thread-locals, given back at
 *                         its exit (one key, deleted when the library unloads)
 *   heap    (heap.c)      a reserved address range with an allocator and an
 *                         allocation table: device memory and page-locked host
 *                         memory; each session in its own window of the range
 *   device  (device.c)    simulated devices: open/reset, worker pool lifetime
 *   context (context.c)   contexts, per-thread current context
 *   executor (executor.c) per-device worker pools: run streams' tasks and jobs
 *   stream  (stream.c, submit.c, stream.h)  streams: create/destroy, resolve,
 *                         wait; submission (the inbox) and spare tasks
 *   event   (event.c, event-query.c, event-ipc.c, event.h)  events: record/
 *                         wait tasks, parking; host-side waits and queries;
 *                         IPC events (the map of files: event.h)
 *   callback (callback.c) host functions queued on streams
 *   memory  (memory.c)    aclrtMalloc/Free/MallocHost, copies, memset, mem info
 *   ranges  (ranges.c)    memory beyond the heaps: virtual memory (vmm.c,
 *                         vmm-phys.c, vmm.h), host registration (hostreg.c),
 *                         managed memory (managed.c)
 *   symbol  (symbol.c)    device-variable registry and the six symbol functions
 *   kernel  (kernel.c, kernel-block.c, kernel-query.c, kernel.h)  kernel
 *                         registry and launches; running a launch's blocks;
 *                         function queries (the map of files: kernel.h)
 *   binary  (binary.c)    kernel binaries (shared objects)
 *   kargs   (kargs.c)     kernel argument lists (aclrtKernelArgs*)
 *   failure (failure.c, failure-device.c, failure.h)  failed tasks (aclsimTrap,
 *                         op timeouts), failure mode, exception callbacks; the
 *                         device side: task abort, device state callbacks and
 *                         status, verbose errors, repair
 *   mempool (mempool.c)   stream-ordered memory pools (acl_rt_memory_soma.h)
 *   modelri (modelri*.c, modelri.h)  model runtime instances: capture (a hook
 *                         in aclsim__submit), replay, task editing, conditional
 *                         tasks, build, labels (the map of files: modelri.h)
 *   ipc     (ipc.c, ipc-mem.c, ipc-share.c, ipc.h)  sharing with other
 *                         processes: the table of exported objects, IPC
 *                         memory, shareable handles (docs/ipc.md)
 *   tdt (tdt-queue.c, tdt-route.c, tdt-channel.c, tdt-data.c, mbuf.c, tdt.h)
 *                         shared queues, routes, tensor channels, datasets,
 *                         shared buffers
 *   check   (check*.c)    checker mode (ACLSIM_CHECK): guard zones, stale
 *                         pointers, frees under queued work, races, unwritten
 *                         reads, early host access to page-locked buffers
 *
 * Lock order (outer first): binary.c loaded_lock -> runtime.lock -> registry
 * lock -> heap.lock; runtime.lock -> context.lock -> stream.lock (a failure
 * stopping a context's streams, aclsim__device_drain's visitors);
 * context.lock -> handle table lock; stream.lock -> event.lock; event
 * live_lock -> handle table lock; ranges_lock (ranges.h) -> handle table
 * lock, ranges_lock -> heap.lock; rt.lock -> ranges_lock (aclFinalize);
 * kargs.c args_lock -> handle table lock; binary.c loaded_lock -> the
 * dynamic loader's lock (dladdr, dlclose).
 * mempool.c pools_lock -> stream.lock (queuing a free) and -> heap.lock.
 * modelri.c's ri_lock -> event.lock / notify lock / heap.lock / handle table
 * lock (it is never taken under a stream's lock: the capture hook runs
 * before aclsim__submit locks the stream).
 * ipc.c's own_lock is innermost (after ranges_lock, rt.lock, a notify's
 * lock) and is never held while taking another lock.
 * rt.lock -> aclsim__tdt_lock -> handle table lock; mbuf.c's lock -> its
 * address map's lock (tdt's locks: taken by device reset, aclFinalize, fork).
 * device.exec_lock is never held while taking any other lock except job
 * waits. runtime.lock is released
 * while a device drains (device.closing). No lock is held while user code
 * (kernels, host functions) runs.
 */
#ifndef ACLSIM_INTERNAL_H
#define ACLSIM_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"

#define ACLSIM_HIDDEN __attribute__((visibility("hidden")))
#define ACLSIM_LIKELY(x) __builtin_expect(!!(x), 1)
#define ACLSIM_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* A function whose memory accesses ThreadSanitizer does not follow: only
 * the checker's guard-zone reads and re-poisoning, which race by design with
 * the out-of-bounds writes of a buggy kernel's other blocks (the bug they
 * report). Such a function uses volatile byte accesses, not memset or
 * memcmp, whose interceptors TSan would still follow. */
#define ACLSIM_NO_TSAN __attribute__((no_sanitize_thread))
#define ACLSIM_STR_(x) #x
#define ACLSIM_STR(x) ACLSIM_STR_(x)   /* a macro's value as a string literal */

/* ---- error.c ---------------------------------------------------------- */

enum aclsim__log_level { ACLSIM_LOG_DEBUG, ACLSIM_LOG_INFO, ACLSIM_LOG_WARNING,
                         ACLSIM_LOG_ERROR, ACLSIM_LOG_NULL };

/* Records "api: message" as the calling thread's recent error (or the
 * process's, with err_msg_mode 1), logs it at ERROR level, returns code. */
aclError aclsim__fail(aclError code, const char *api, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void aclsim__log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets the log level (enum aclsim__log_level) and whether lines are printed. */
void aclsim__log_set(int level, bool print);

/* ---- waiting: bounded spinning shared by the executor and waiters -------- */

static inline uint64_t aclsim__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void aclsim__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Asks for p's cache line, to be read soon (p is a hint: it may point
 * anywhere, a prefetch never faults). */
static inline void aclsim__prefetch_read(const void *p)
{
    __builtin_prefetch(p, 0, 3);
}

/* Asks for p's cache line in a state this core may write (PREFETCHW on
 * x86-64, where CPUs without it run it as a no-op): a line another core
 * wrote last then arrives before this thread stores into it. */
static inline void aclsim__prefetch_write(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* Bounded polling: pure spinning for the first ACLSIM_SPIN_PURE_NS (the
 * common hand-off takes a microsecond or two), then a sched_yield per round,
 * so that a poller sharing a core with the thread it waits for lets that
 * thread run instead of burning the core until its budget is spent. Budgets
 * are in nanoseconds (a pause instruction takes 10-150 ns depending on the
 * CPU, so counting pauses would not bound the time). */
#define ACLSIM_SPIN_PURE_NS 2000
struct aclsim__backoff { uint64_t start, end; };

/* CPUs this process may run on (sched_getaffinity, executor.c), as of the
 * last device open. On 1 (`taskset -c 0`), nothing spins: a spinning
 * waiter would hold the only core the thread it waits for needs, so
 * pollers yield at once, host waits and idle workers sleep at once, and
 * big copies are not split. */
extern atomic_uint aclsim__cpus;
static inline bool aclsim__one_cpu(void)
{
    return atomic_load_explicit(&aclsim__cpus, memory_order_relaxed) <= 1;
}

static inline struct aclsim__backoff aclsim__backoff_start(uint64_t budget_ns)
{
    uint64_t t = aclsim__now_ns();
    return (struct aclsim__backoff){t, t + budget_ns};
}

/* One round of waiting; false once the budget is spent. */
static inline bool aclsim__backoff_wait(struct aclsim__backoff *b)
{
    uint64_t t = aclsim__now_ns();
    if (t >= b->end)
        return false;
    if (t - b->start < ACLSIM_SPIN_PURE_NS && !aclsim__one_cpu())
        aclsim__cpu_relax();
    else
        sched_yield();
    return true;
}

/* The executor's locks are held for a few instructions at a time by a host
 * thread and a worker: spinning briefly before sleeping (glibc's adaptive
 * mutex) avoids a futex round trip per task. */
void aclsim__adaptive_mutex_init(pthread_mutex_t *m);

/* ---- alloc.c: every internal allocation goes through these ------------- */

/* malloc and friends, with a test-only failure injector: after
 * aclsim__fail_allocation_after(n), allocation number n from then on (0 =
 * the next) fails, and later ones succeed again. Tests walk n over every
 * allocation point of a scenario to prove each failure is handled. */
void *aclsim__malloc(size_t size);
void *aclsim__calloc(size_t count, size_t size);
void *aclsim__realloc(void *p, size_t size);
char *aclsim__strdup(const char *s);
void *aclsim__aligned_alloc(size_t align, size_t size);   /* align: a power of two */
void aclsim__fail_allocation_after(long n);   /* n < 0: never fail */
long aclsim__allocations_failed(void);       /* how many failed so far */

/* ---- thread.c: what a thread keeps, given back when it exits ----------- */

enum aclsim__thread_part { ACLSIM_THREAD_HAND, ACLSIM_THREAD_BLOCK_MEM, ACLSIM_THREAD_KARGS,
                           ACLSIM_THREAD_TX_STACK, ACLSIM_THREAD_SYMBOL_SLOT,
                           ACLSIM_THREAD_TRACE_RING, ACLSIM_THREAD_PARTS };
/* Arms part's cleanup at the calling thread's exit (once per thread and
 * part; after that, one test of a thread-local, inlined: the submit path
 * calls it for each task). false if it cannot be armed: then nothing would
 * give back what the caller was about to keep. */
extern _Thread_local unsigned aclsim__thread_armed;   /* bits: 1 << part */
bool aclsim__thread_arm(enum aclsim__thread_part part);
static inline bool aclsim__thread_keep(enum aclsim__thread_part part)
{
    return ACLSIM_LIKELY(aclsim__thread_armed & (1u << part)) || aclsim__thread_arm(part);
}
/* The cleanups, one per part, called at the exit of a thread that armed it
 * (each gives back its own thread-locals). */
void aclsim__submit_thread_exit(void);   /* submit.c: the spare task in hand */
void aclsim__block_thread_exit(void);    /* kernel-block.c: cached block memory */
void aclsim__kargs_thread_exit(void);    /* kargs.c: the thread's system argument list */
void aclsim__tx_thread_exit(void);       /* prof-tx.c: the push stack */
void aclsim__symbol_thread_exit(void);   /* symbol.c: the symbol-copy slot */
void aclsim__trace_thread_exit(void);    /* trace.c: the trace ring */

/* ---- runtime.c: init state and configuration -------------------------- */

struct aclsim__config {
    uint32_t physical_devices;               /* ACLSIM_DEVICE_COUNT */
    char soc_name[64];                       /* ACLSIM_SOC_VERSION */
    size_t device_memory;                    /* ACLSIM_DEVICE_MEMORY, bytes */
    uint32_t workers;                        /* ACLSIM_WORKERS: threads per device */
    uint32_t op_timeout_interval_us;         /* ACLSIM_OP_TIMEOUT_INTERVAL_US */
    uint32_t visible_count;                  /* after ASCEND_RT_VISIBLE_DEVICES */
    uint32_t visible[ACLSIM_MAX_DEVICES];    /* user id -> logic id (= physical id) */
    bool symbols_supported;                  /* from the SoC's product family */
    int32_t default_device;                  /* aclInit "defaultDevice", or -1 */
    /* trace.c (docs/tracing.md): ACLSIM_TRACE (the Chrome trace file, "" for
     * none), ACLSIM_TRACE_EVENTS (ring size per thread), ACLSIM_PROFILE. */
    char trace_path[256];
    uint32_t trace_events;
    bool profile;
    bool serial_blocks;                      /* ACLSIM_BLOCK_ORDER=serial (kernel-block.c) */
    unsigned check;                          /* ACLSIM_CHECK: detectors (check.c) */
    bool check_stop;                         /* ACLSIM_CHECK_STOP: abort at the first report */
};


struct aclsim__runtime {
    pthread_mutex_t lock;   /* serialises init/finalize and device open/reset */
    pthread_cond_t changed; /* broadcast when a device has finished closing, or a finalize */
    atomic_bool initialized;
    /* aclFinalize is closing devices: no device may open; aclInit and other
     * aclFinalize calls wait (THE FINALIZE RULE below). */
    bool finalizing;
    /* Bumped by each successful aclInit (under lock): the session an
     * aclFinalize call is for is the one live when it was made. */
    atomic_uint_fast64_t session;
    /* This process is a fork() child of one whose runtime was initialized
     * (THE FORK RULE below); initialized is false meanwhile. */
    atomic_bool forked;
    /* aclInit "err_msg_mode" "1": one recent error for the process. Apart
     * from the config because failing calls read it during aclInit. */
    atomic_bool err_msg_per_process;
    const struct aclsim__config *_Atomic config;   /* immutable once published */
    /* aclInit calls of the live session (repeats count too, as in CANN);
     * aclFinalizeReference tears down when it drops to 0. Under lock. */
    uint64_t init_refs;
};
extern struct aclsim__runtime aclsim__rt;

static inline const struct aclsim__config *aclsim__config(void)
{
    return atomic_load_explicit(&aclsim__rt.config, memory_order_acquire);
}

/* THE FINALIZE RULE. aclFinalize is idempotent and exclusive: concurrent
 * calls serialise on rt.lock and rt.finalizing; exactly one tears the
 * session down, the others wait for it and get 100037. A call tears down
 * only the session that was live when it was made (rt.session, read on
 * entry): an aclInit that succeeds after it was called (between two
 * finalizes) is never torn down by it. aclInit waits while a finalize runs
 * (a host function or kernel, which the finalize may be waiting for, gets
 * 507000 instead of waiting).
 *
 * THE FORK RULE. pthread_atfork handlers (runtime.c): prepare takes rt.lock
 * and the registry lock, so a child finds the session and registry state
 * consistent; the child re-creates every lock it may use before aclFinalize
 * (rt, registry, handle table, error messages, kernel map) and, if the
 * parent had a session, marks it forked: initialized reads false, so every
 * call that needs the runtime (everything but aclInit, aclFinalize,
 * aclGetRecentErrMsg, aclrtGetVersion; aclrtGetSocName returns NULL) gets
 * 100001 with ACLSIM_FORKED_MESSAGE, and aclInit gets 100002. aclFinalize in
 * the child discards the inherited session without joining or signalling
 * the parent's threads: each module's *_forget_after_fork function (at the
 * end of its file) re-creates the locks of its inherited objects, drops
 * their tasks and pools them, frees their handles (107017 from then on) and
 * unmaps the memory; then aclInit works as in a fresh process. The parent is
 * unaffected. */
#define ACLSIM_FORKED_MESSAGE                                                            \
    "this process is a fork() child of a process that had initialized the runtime, and " \
    "inherits none of its threads: call aclFinalize and then aclInit in the child before " \
    "using the runtime"

/* Every API entry that needs the runtime: 100001 before aclInit/after
 * aclFinalize, and in a fork() child until it calls aclFinalize + aclInit. */
static inline bool aclsim__initialized(void)
{
    return atomic_load_explicit(&aclsim__rt.initialized, memory_order_acquire);
}
aclError aclsim__not_initialized(const char *api);   /* the 100001 and its message */

/* ---- trace.c, trace-write.c: the tracer (docs/tracing.md; trace.h) --------
 * Hooks, each one marked "TRACE HOOK": aclsim__submit (submit.c), the
 * worker's task loop (executor.c run_claimed), kernel blocks (kernel-block.c
 * run_block), synchronous copies (memory.c, symbol.c), and API entry
 * (ACLSIM_REQUIRE_INIT below). Off, each costs one relaxed load and a
 * predictable branch: no lock, no allocation. */
enum { ACLSIM_TRACE_TASKS = 1u,     /* stream tasks, kernel blocks, copies */
       ACLSIM_TRACE_API = 2u,       /* a slice per runtime call per host thread */
       ACLSIM_TRACE_TX = 4u,        /* aclprof stamps, mstx marks and ranges */
       ACLSIM_TRACE_SUMMARY = 8u,   /* ACLSIM_PROFILE: per-variable and per-kernel totals */
       ACLSIM_TRACE_OPS = 16u };    /* aclprof op subscription records (prof-op.c) */
extern atomic_uint aclsim__trace_mask;
static inline bool aclsim__tracing(unsigned what)
{
    return ACLSIM_UNLIKELY(atomic_load_explicit(&aclsim__trace_mask, memory_order_relaxed) & what);
}
/* The API slice of the outermost traced runtime call of this thread. */
struct aclsim__api_scope { uint64_t start; const char *api; };
void aclsim__trace_api_end(struct aclsim__api_scope *scope);
struct aclsim__api_scope aclsim__trace_api_begin(const char *api);
static inline void aclsim__api_scope_end(struct aclsim__api_scope *scope)
{
    if (ACLSIM_UNLIKELY(scope->start))
        aclsim__trace_api_end(scope);
}
#define ACLSIM_TRACE_CAT_(a, b) a##b
#define ACLSIM_TRACE_CAT(a, b) ACLSIM_TRACE_CAT_(a, b)
#define ACLSIM_TRACE_API_SCOPE(api)                                                        \
    __attribute__((cleanup(aclsim__api_scope_end))) struct aclsim__api_scope               \
    ACLSIM_TRACE_CAT(aclsim__scope_, __LINE__) =                                           \
        aclsim__tracing(ACLSIM_TRACE_API) ? aclsim__trace_api_begin(api)                   \
                                          : (struct aclsim__api_scope){0, NULL}
struct aclsim__stream;
struct aclsim__task;
struct aclsim__device;
/* TRACE HOOK of aclsim__submit: task seq was queued on s (in its life epoch). */
void aclsim__trace_submit(struct aclsim__stream *s, uint32_t epoch, uint64_t seq);
/* TRACE HOOK of the worker: task t of s ran (or a wait passed) from start
 * (ns), or was discarded without running (stopped by a failure). */
void aclsim__trace_task(struct aclsim__stream *s, const struct aclsim__task *t, uint64_t start,
                        bool discarded);
/* What the worker's hook starts with: the time when tracing, else 0. */
static inline uint64_t aclsim__trace_start(void)
{
    return aclsim__tracing(ACLSIM_TRACE_TASKS | ACLSIM_TRACE_SUMMARY | ACLSIM_TRACE_TX)
               ? aclsim__now_ns() : 0;
}
/* TRACE HOOK of kernel blocks: block index of kernel name ran on this worker. */
void aclsim__trace_block(const struct aclsim__device *dev, const char *name, uint32_t index,
                         uint32_t blocks, uint64_t start);
/* TRACE HOOK of synchronous copies: n bytes from src to dst, made by api
 * on this thread from start; label: the variable, or NULL. */
void aclsim__trace_sync_copy(const char *api, void *dst, const void *src, size_t n,
                             const char *label, uint64_t start);
/* An instant (a mark) or a slice from start for dur ns on the host track of
 * thread (an aclsim__trace_thread number; 0: the calling thread): prof-tx.c's
 * stamps and mstx. domain: its category, a string that lives for ever. */
void aclsim__trace_tx(const char *domain, const char *message, uint64_t start, uint64_t dur,
                      bool slice, uint32_t thread);
/* The calling thread's track number. */
uint32_t aclsim__trace_thread(void);
/* aclInit: applies the session's ACLSIM_TRACE/ACLSIM_TRACE_EVENTS/ACLSIM_PROFILE. */
void aclsim__trace_configure(const struct aclsim__config *c);
/* aclFinalize: writes the trace file (if any; trace-write.c). */
void aclsim__trace_finalize(void);
/* aclFinalize: prof.c stops profiling (aclprofStop/aclprofFinalize implied). */
void aclsim__prof_finalize(void);
/* prof.c: what aclprofStart turned on (kept apart from ACLSIM_TRACE's), and
 * the devices whose tasks it traces (bit d: device d). */
void aclsim__trace_prof_bits(unsigned bits, uint32_t devices);
/* Writes every event recorded so far to path (Chrome Trace Event JSON;
 * trace-write.c); false with errno on failure. */
bool aclsim__trace_write(const char *path);
/* (Also the tracer's API hook: see ACLSIM_TRACE_API_SCOPE in the trace.c
 * section; it declares a variable, so the macro is a statement at block
 * level.) */
#define ACLSIM_REQUIRE_INIT(api)                                                 \
    ACLSIM_TRACE_API_SCOPE(api);                                                 \
    do {                                                                         \
        if (ACLSIM_UNLIKELY(!aclsim__initialized()))                             \
            return aclsim__not_initialized(api);                                 \
    } while (0)

/* config.c. Fills *c from the aclInit JSON file (path may be NULL or "")
 * and the environment, and applies the log settings; 100000/100003/100006/
 * 100008 with a message naming the setting and the bad value.
 * THE CONFIGURATION RULE: every value is taken whole or refused, never cut,
 * wrapped, rounded or skipped: numbers are decimal digits only (no sign,
 * space, prefix, fraction, overflow), JSON numbers integral, values at most
 * 255 characters, the file exactly one JSON object without NUL bytes or
 * \u0000 in strings, keys the runtime reads given once; a bad file value is
 * refused even where the environment overrides it (docs/runtime.md). */
aclError aclsim__configure(const char *path, struct aclsim__config *c, bool *per_process);
/* initcb.c: the registered init/finalize callbacks, in CANN's order. Called
 * without rt.lock; a callback's failure code is returned (the finalize one
 * with a message; the init one with its type in *failed_type). */
aclError aclsim__init_callbacks_run(const char *config_path, int *failed_type);
aclError aclsim__finalize_callbacks_run(void);
/* Unsigned decimal digits only (no sign, space, prefix), no overflow. */
bool aclsim__parse_decimal(const char *text, uint64_t *out);
/* Parses "512M", "32G", "1024" (binary units). false on syntax or overflow. */
bool aclsim__parse_size(const char *text, size_t *out);

/* ---- soc.c: the simulated device model, one row per SoC (src/soc.def) ---- */

enum aclsim__family { ACLSIM_FAMILY_A2, ACLSIM_FAMILY_A3, ACLSIM_FAMILY_A5,
                      ACLSIM_FAMILY_INFERENCE, ACLSIM_FAMILY_EDGE, ACLSIM_FAMILY_TRAINING,
                      ACLSIM_FAMILY_IPV };
struct aclsim__soc {
    const char *name;
    uint8_t family;                 /* enum aclsim__family */
    uint32_t npu_arch;              /* Ascend C's __NPU_ARCH__ */
    uint32_t aicore, vector, aicpu; /* core counts */
    uint64_t memory;                /* device memory, bytes */
    uint32_t ub;                    /* unified buffer per core, bytes */
    uint64_t l2;                    /* L2 cache, bytes */
    bool symbols;                   /* device-variable functions supported */
};
/* The row of SoC name (matched exactly), or NULL. */
const struct aclsim__soc *aclsim__soc_find(const char *name);
/* The row of the configured SoC (the runtime is initialized). */
const struct aclsim__soc *aclsim__soc_current(void);
/* CANN's product support tables: a mask of families (1u << ACLSIM_FAMILY_x).
 * 207000 with a message naming api and the SoC when the configured SoC's
 * family is not in it. */
#define ACLSIM_FAMILIES(x) (1u << ACLSIM_FAMILY_##x)
#define ACLSIM_ALL_BUT_IPV (0x7fu & ~ACLSIM_FAMILIES(IPV))
#define ACLSIM_A5_A3_A2 (ACLSIM_FAMILIES(A5) | ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A2))
aclError aclsim__soc_check(const char *api, unsigned families);
/* ACLSIM_REQUIRE_INIT, then the product check (207000 outside families). */
#define ACLSIM_REQUIRE_INIT_SOC(api, families)                                   \
    do {                                                                         \
        ACLSIM_REQUIRE_INIT(api);                                                \
        aclError soc_ = aclsim__soc_check(api, families);                        \
        if (soc_)                                                                \
            return soc_;                                                         \
    } while (0)

/* ---- handle.c ----------------------------------------------------------- */

/* Every opaque handle (context, stream, event, function, binary) is an index
 * plus a generation, never a raw pointer: a destroyed or forged handle is
 * recognised (107017) instead of dereferenced. Slots are never freed, only
 * recycled with a new generation, so lookups need no lock. */
enum aclsim__handle_kind { ACLSIM_H_CONTEXT = 1, ACLSIM_H_STREAM, ACLSIM_H_EVENT,
                           ACLSIM_H_FUNC, ACLSIM_H_BINARY, ACLSIM_H_DATA_BUFFER,
                           ACLSIM_H_NOTIFY /* notifies and counting notifies */,
                           ACLSIM_H_PHYSICAL /* vmm-phys.c */,
                           ACLSIM_H_ARGS /* kargs.c: system-managed argument lists */,
                           ACLSIM_H_BINARY_DESC /* binary.c: aclrtCreateBinary's descriptions */,
                           ACLSIM_H_MEMPOOL /* mempool.c */,
                           ACLSIM_H_MODEL_RI, ACLSIM_H_RI_TASK, ACLSIM_H_RI_COND,
                           ACLSIM_H_TASK_GRP, ACLSIM_H_RI_STREAM,
                           ACLSIM_H_LABEL, ACLSIM_H_LABEL_LIST /* modelri.c */,
                           ACLSIM_H_TDT_CHANNEL /* tdt-channel.c */,
                           ACLSIM_H_KINDS /* kinds fit in ACLSIM_HANDLE_KIND_BITS */ };
#define ACLSIM_HANDLE_KIND_BITS 5
_Static_assert(ACLSIM_H_KINDS <= (1 << ACLSIM_HANDLE_KIND_BITS), "handle kinds overflow their bits");
void *aclsim__handle_new(int kind, void *object);  /* NULL when out of memory */
/* The table (handle.c): slots in chunks that are allocated once and never
 * freed. Here so that aclsim__handle_get, on every call's path, inlines. */
#define ACLSIM_HANDLE_CHUNK_BITS 10
#define ACLSIM_HANDLE_CHUNKS 4096u   /* 4M live handles */
struct aclsim__handle_slot {
    atomic_uint generation;   /* odd while live */
    atomic_int kind;
    void *_Atomic object;
    uint32_t next_free;       /* under handle.c's lock */
};
extern struct aclsim__handle_slot *_Atomic aclsim__handle_chunks[ACLSIM_HANDLE_CHUNKS];
/* The slot of a handle's index, or NULL (never allocated). */
static inline struct aclsim__handle_slot *aclsim__handle_slot(uint32_t index)
{
    if (index == 0 || index >= ACLSIM_HANDLE_CHUNKS << ACLSIM_HANDLE_CHUNK_BITS)
        return NULL;
    struct aclsim__handle_slot *chunk = atomic_load_explicit(
        &aclsim__handle_chunks[index >> ACLSIM_HANDLE_CHUNK_BITS], memory_order_acquire);
    return chunk ? &chunk[index & ((1u << ACLSIM_HANDLE_CHUNK_BITS) - 1)] : NULL;
}
/* The object of a live handle of this kind, else NULL. Needs no lock: the
 * generation is read again after the object, so that a slot freed and given
 * to a new object in between returns NULL, not the new object (handle.c
 * stores kind and object with release after the generation changed; the
 * acquire load of the object then makes the changed generation visible). */
static inline void *aclsim__handle_get(const void *handle, int kind)
{
    uintptr_t h = (uintptr_t)handle;
    if ((int)(h & ((1u << ACLSIM_HANDLE_KIND_BITS) - 1)) != kind)
        return NULL;
    struct aclsim__handle_slot *s = aclsim__handle_slot((uint32_t)((h & 0xffffffffu) >> ACLSIM_HANDLE_KIND_BITS));
    uint32_t gen = (uint32_t)(h >> 32);
    if (!s || atomic_load_explicit(&s->generation, memory_order_acquire) != gen ||
        atomic_load_explicit(&s->kind, memory_order_acquire) != kind)
        return NULL;
    void *object = atomic_load_explicit(&s->object, memory_order_acquire);
    return atomic_load_explicit(&s->generation, memory_order_relaxed) == gen ? object : NULL;
}
/* True for the one call that freed it: of threads racing to destroy an
 * object, only that one may go on to destroy it. */
bool aclsim__handle_free(const void *handle);

/* ---- heap.c: reserved address ranges ----------------------------------- */

/* PHYSICAL and MANAGED are never heap allocations: vmm-phys.c and managed.c charge
 * their bytes to a device's heap (aclsim__heap_charge). */
enum aclsim__alloc_kind { ACLSIM_ALLOC_MALLOC, ACLSIM_ALLOC_HOST, ACLSIM_ALLOC_SYMBOL,
                          ACLSIM_ALLOC_PHYSICAL, ACLSIM_ALLOC_MANAGED,
                          ACLSIM_ALLOC_POOL /* a memory pool's block (mempool.c) */,
                          ACLSIM_ALLOC_KINDS };

struct aclsim__alloc {
    uintptr_t addr;
    size_t size;              /* as requested */
    size_t span;              /* as reserved (rounded) */
    uint8_t kind;             /* enum aclsim__alloc_kind */
    const aclsimVar *var;     /* ACLSIM_ALLOC_SYMBOL only */
    /* Checker mode (check.c): bytes of guard zone before addr (0: allocated
     * with checking off, no guard zones), and the API call that allocated it
     * with its caller's return address (NULL when not known). */
    uint32_t lead;
    const char *site_api;
    const void *site;
};

/* A heap owns [base, base + reserved) of address space, reserved PROT_NONE;
 * each session allocates in its own window of it (heap.c, THE SESSION
 * WINDOWS), made read-write as allocations reach further. Invariants:
 * allocs[] is sorted by address, non-overlapping and inside the window; free
 * extents cover exactly the window's bytes not in allocs; used == sum of
 * allocs' span (in checker mode: of their sizes rounded as without guard
 * zones); used <= capacity (as configured). */
struct aclsim__heap {
    char *base;                    /* NULL until reserved; atomic for classify */
    size_t capacity;
    pthread_rwlock_t lock;         /* created once, never destroyed (heap.c) */
    bool lock_ready;
    size_t used;
    size_t committed;              /* bytes from window made read-write */
    struct aclsim__alloc *allocs;
    size_t nallocs, cap_allocs;
    struct aclsim__extent { uintptr_t addr; size_t size; } *free;
    size_t nfree, cap_free;
    atomic_uint_fast64_t frees;    /* frees, resets and destroys so far: never goes back */
    /* Bytes in use and their peak, per allocation kind (under lock; the
     * peaks restart when the heap is reset). */
    size_t used_by_kind[ACLSIM_ALLOC_KINDS], peak_by_kind[ACLSIM_ALLOC_KINDS];
    /* Bumped under lock by every init, reset and destroy: a charge taken in
     * an earlier generation is not given back to a later one. */
    uint64_t generation;
    /* ipc.c: set before aclsim__heap_init for device heaps: the range is a
     * MAP_SHARED mapping of a memfd (fd, valid while base is set), so that
     * another process can map exported allocations (docs/ipc.md). */
    bool shareable;
    int fd;
    /* Checker mode: where the next allocation search starts (next fit, so
     * that freed addresses are not handed out again at once); kept across
     * resets. Under lock. */
    uintptr_t cursor;
    /* Bytes of address space reserved from base (whole pages): room for
     * three session windows (heap.c, THE SESSION WINDOWS), each window_size
     * long: capacity, or more in checker mode, where guard zones take
     * address space but are not counted as used (so that every figure stays
     * as without them). This session allocates in [window, window +
     * window_size) only; window is read without the lock (atomic). hull:
     * the addresses this session has used so far (lo > hi: none); avoid: the
     * hull of the last session that used any, which the next window keeps
     * clear of (kept across destroy and init). Under lock. */
    size_t reserved;
    uintptr_t window;
    size_t window_size;
    uintptr_t hull_lo, hull_hi, avoid_lo, avoid_hi;
    /* Checker mode with early-host-access, page-locked heap only: the same
     * memory mapped a second time (the runtime's own accesses go through it
     * while the first mapping is protected), from memfd alias_fd; NULL/-1
     * otherwise. */
    char *alias;
    int alias_fd;
};
/* Counts bytes of kind against h's capacity without an allocation (physical
 * and managed memory); false if they do not fit or h is not reserved. *gen
 * gets the heap's generation, for aclsim__heap_uncharge. */
bool aclsim__heap_charge(struct aclsim__heap *h, int kind, size_t bytes, uint64_t *gen);
void aclsim__heap_uncharge(struct aclsim__heap *h, int kind, size_t bytes, uint64_t gen);
/* Usage of kind in h: current and peak bytes. */
void aclsim__heap_usage(struct aclsim__heap *h, int kind, size_t *used, size_t *peak);

/* The teardown lock shared by all heaps, shared side (see aclsim__hold_heaps). */
void aclsim__heaps_hold(void);
void aclsim__heaps_release(void);
/* Reserves the range (or keeps the one a reset left, if the capacity is the same). */
aclError aclsim__heap_init(struct aclsim__heap *h, size_t capacity, const char *api);
/* Frees every allocation and gives the memory back, but keeps the address
 * range reserved: a stale pointer into it is still recognised as this
 * device's memory (outside any live allocation) instead of passing for host
 * memory. */
void aclsim__heap_reset(struct aclsim__heap *h);
void aclsim__heap_destroy(struct aclsim__heap *h);
/* Returns NULL when capacity is exhausted or memory is short. */
void *aclsim__heap_alloc(struct aclsim__heap *h, size_t size, size_t align, int kind,
                         const aclsimVar *var);
/* false if p is not the start of a live allocation of that kind. */
bool aclsim__heap_free(struct aclsim__heap *h, void *p, int kind);
/* Calls visit on every live allocation of h, under its read lock (the
 * visitor takes no lock but check.c's leaf locks). */
void aclsim__heap_visit(struct aclsim__heap *h, void (*visit)(const struct aclsim__alloc *a,
                                                              void *arg), void *arg);
/* Copies the allocation containing p into *out; false if none. */
bool aclsim__heap_find(struct aclsim__heap *h, const void *p, struct aclsim__alloc *out);
static inline bool aclsim__heap_contains(const struct aclsim__heap *h, const void *p)
{
    const char *base = __atomic_load_n(&h->base, __ATOMIC_ACQUIRE);
    return base && (const char *)p >= base &&
           (size_t)((const char *)p - base) < __atomic_load_n(&h->reserved, __ATOMIC_RELAXED);
}
/* Whether p lies in the window h's current session allocates from (a
 * pointer from an earlier session mostly does not: heap.c). */
static inline bool aclsim__heap_in_window(const struct aclsim__heap *h, const void *p)
{
    uintptr_t w = __atomic_load_n(&h->window, __ATOMIC_RELAXED);
    return (uintptr_t)p - w < __atomic_load_n(&h->window_size, __ATOMIC_RELAXED);
}

/* ---- device.c ------------------------------------------------------------ */

struct aclsim__stream;
struct aclsim__context;

/* A parallel-for over n indices, run by the worker that owns it plus any idle
 * workers of the device (kernel blocks, chunks of a large copy). */
struct aclsim__job {
    void (*run)(struct aclsim__job *job, uint32_t index);
    uint32_t count;
    atomic_uint next;          /* next index to claim */
    uint32_t helpers;          /* workers inside run(), under exec_lock */
    /* The stream whose task runs the job: helpers running its indices act
     * for that stream (a kernel block there must not wait for it either). */
    struct aclsim__stream *stream;
    uint32_t max_helpers;      /* 0: any idle worker may help (else at most this many) */
    /* Non-NULL for jobs without user code (chunks of a copy): host threads
     * waiting on this stream may help too (aclsim__job_help; THE HELP RULE
     * at struct aclsim__stream). */
    struct aclsim__stream *host_stream;
    bool listed;               /* on device.jobs, under exec_lock */
    struct aclsim__job *next_job;
    pthread_cond_t idle;       /* signalled when helpers drops to 0 */
    void *arg;
};

struct aclsim__device {
    int32_t id;                 /* user id (slot in aclsimVar.instance) */
    uint32_t physical_id;
    /* Under aclsim__rt.lock: */
    uint32_t refcount;          /* aclrtSetDevice calls not yet reset */
    atomic_bool open;
    bool closing;               /* being reset, with rt.lock released meanwhile */
    uint32_t detached;          /* contexts being destroyed outside rt.lock */
    struct aclsim__context *default_ctx;
    struct aclsim__context *contexts;    /* every live context on this device */
    struct aclsim__heap heap;            /* device memory */
    atomic_uint vars_generation;         /* registry generation fully instantiated */
    /* Time workers spent in kernel blocks, for aclrtGetDeviceUtilizationRate. */
    atomic_uint_fast64_t kernel_busy_ns;
    /* overflow.c: the saturation mode new streams get, and whether a kernel
     * reported a float overflow since the status was last cleared. */
    atomic_uchar sat_mode;
    atomic_bool float_overflow;
    /* peer.c: bit p set when this device may access device p's memory
     * (aclrtDeviceEnablePeerAccess); cleared when the device closes. */
    atomic_uint peers;

    /* The executor. exec_lock guards ready queue, jobs, stop, sleepers. */
    pthread_mutex_t exec_lock;
    pthread_cond_t exec_wake;
    struct aclsim__stream *ready_head, *ready_tail;   /* streams with runnable work */
    atomic_uint nready;         /* length of that list, readable without the lock */
    atomic_uint nstreams;       /* live streams (default ones included), see stream-control.c */
    struct aclsim__job *jobs;
    uint32_t sleepers;
    atomic_uint work_hint;      /* bumped on new work: lets idle workers poll, not sleep */
    bool spinner;               /* an idle worker is polling work_hint */
    bool stop;
    /* exec_lock and exec_wake exist (made by the first executor_start, kept
     * across device resets so that a host thread may lock exec_lock at any
     * time: aclsim__host_run; made anew after fork). */
    bool exec_ready;
    uint32_t nworkers;
    pthread_t *workers;
};

extern struct aclsim__device aclsim__devices[ACLSIM_MAX_DEVICES];

/* Opens (first aclrtSetDevice) or references device id. Caller holds rt.lock. */
aclError aclsim__device_acquire(int32_t id, const char *api);
/* Drops one reference, or all with force; closes the device at zero. Caller
 * holds rt.lock. */
aclError aclsim__device_release(int32_t id, bool force, const char *api);
aclError aclsim__device_check_id(int32_t id, const char *api);
/* The device whose heap contains p, or NULL. (Pointers outside the span of
 * every range a device heap ever reserved are told apart by one compare:
 * heap.c widens aclsim__device_span before it publishes a device heap's
 * base, and never narrows it.) */
struct aclsim__device *aclsim__device_of(const void *p);
extern struct aclsim__span { atomic_uintptr_t lo, hi; } aclsim__device_span;

/* ---- context.c ----------------------------------------------------------- */

struct aclsim__context {
    void *handle;
    struct aclsim__device *device;
    struct aclsim__stream *default_stream;
    bool is_default;
    struct aclsim__context *next_in_device;   /* under rt.lock */
    pthread_mutex_t lock;                     /* guards streams (doubly linked) */
    pthread_cond_t unlinked;                  /* a stream left streams */
    struct aclsim__stream *streams;           /* user streams, excluding default */
    /* failure.c: ACL_STOP_ON_FAILURE was set on one of its streams; once a
     * task failed in that mode, fault is its code (sticky: every synchronize
     * reports it, submissions are refused) and fault_text (under lock) says
     * what failed. */
    atomic_bool stop_on_failure;
    _Atomic int32_t fault;
    char fault_text[384];
    /* aclrtCtxSetSysParamOpt values (under lock); bit i of sys_param_set
     * says whether option i was set. */
    int64_t sys_param[4];
    uint8_t sys_param_set;
    /* aclrtCtxGetFloatOverflowAddr: 64 bytes of device memory, made on first
     * request; kernels of the context's streams set its first word when they
     * report an overflow (overflow.c). Freed with the context. */
    void *_Atomic overflow_addr;
};

/* ctx's device, for a caller that resolved ctx and may race its recycling
 * (the struct is type-stable; a stale read gives a valid device, and the
 * caller's later liveness check refuses the call). */
static inline struct aclsim__device *aclsim__context_device(const struct aclsim__context *ctx)
{
    return __atomic_load_n(&ctx->device, __ATOMIC_RELAXED);
}
/* The calling thread's current context, or 107002 with a message. */
aclError aclsim__current_context(const char *api, struct aclsim__context **out);
/* The handle of the calling thread's current context (as last resolved). */
void *aclsim__current_handle(void);
aclError aclsim__context_create(struct aclsim__device *dev, bool is_default,
                                struct aclsim__context **out, const char *api);
/* Destroys a context taken off its device's list, handle freed; without rt.lock. */
void aclsim__context_destroy(struct aclsim__context *ctx, bool force);
void aclsim__set_current(struct aclsim__context *ctx);

/* ---- stream.c, submit.c, executor.c, event.c: tasks and the executor ---- */

enum aclsim__task_kind { ACLSIM_TASK_COPY, ACLSIM_TASK_MEMSET, ACLSIM_TASK_KERNEL,
                         ACLSIM_TASK_HOST_FUNC, ACLSIM_TASK_RECORD, ACLSIM_TASK_WAIT,
                         ACLSIM_TASK_OVERFLOW, ACLSIM_TASK_COPY2D, ACLSIM_TASK_MEMSET32,
                         ACLSIM_TASK_SIGNAL, ACLSIM_TASK_REDUCE, ACLSIM_TASK_RANDOM,
                         ACLSIM_TASK_BATCH,
                         ACLSIM_TASK_CMO /* a cache operation: nothing to run (cmo.c) */,
                         ACLSIM_TASK_CALLBACK,
                         ACLSIM_TASK_MARK /* a profiling mark (prof.c): nothing to run; label */,
                         ACLSIM_TASK_KINDS /* (how many there are) */ };

struct aclsim__event;
struct aclsim__ri;
struct aclsim__task;

/* What a WAIT or SIGNAL task does, supplied by the object it concerns
 * (event.c, notify.c, memop.c; the machinery is in wait.c). A WAIT task may
 * park its stream: the stream leaves the ready list and occupies no worker
 * until the object wakes it (or wait.c's watcher does: timeout, device
 * reset, a memory change). A SIGNAL task (a record, reset or write) runs
 * like any task. */
struct aclsim__wait_ops {
    const char *what;   /* "event", "notify", ... for messages */
    /* WAIT: may t pass now? Consumes what it takes (a notify's flag).
     * Called by the worker that reached t, without locks. */
    bool (*ready)(struct aclsim__task *t);
    /* WAIT, s->lock held, t at s's head: parks s on the object (state
     * PARKED) unless t may pass now (then consumed, and false). */
    bool (*park)(struct aclsim__task *t, struct aclsim__stream *s);
    /* WAIT, s->lock held: takes a PARKED s off the object; false if it was
     * no longer there (the object is waking it). NULL: parked on the
     * watcher's list only (memory waits). */
    bool (*unpark)(struct aclsim__task *t, struct aclsim__stream *s);
    /* WAIT on memory: evaluated by the watcher with the memory guard held. */
    bool (*poll)(struct aclsim__task *t);
    /* SIGNAL: runs t; discarded: it never will (force destroy, reset). */
    void (*signal)(struct aclsim__task *t, bool discarded);
    /* Drops what the task holds (references); NULL: nothing. */
    void (*release)(struct aclsim__task *t);
    /* Takes another set of what release drops, for a copy of t (a model
     * runtime instance's replay, modelri.c); NULL when release is NULL. */
    void (*retain)(struct aclsim__task *t);
};

/* One unit of stream work. Every task says what it is (kind, bytes, the
 * variable or kernel it concerns) so that a checker or tracer can observe the
 * queue without decoding it. */
#define ACLSIM_AHEAD_TASKS 8   /* how far ahead task->ahead points (submit.c) */

struct aclsim__task {
    struct aclsim__task *next;
    uint8_t kind;
    uint32_t id;                    /* low 32 bits of its sequence number in its stream */
    size_t bytes;
    const char *label;              /* variable or kernel name, or NULL */
    /* Set by the executor once the task ran (NULL: nobody asks): a caller
     * waiting for its task tells one that ran from one discarded by an abort,
     * force reset or aclFinalize. */
    atomic_bool *ran;
    /* The stream on which aclsim__submit counted the task's memory uses
     * (check.c), NULL if they were not counted; only a counted task gives
     * them back when it is released. A task recorded by a capture, or
     * dropped before it was queued, never was. */
    const struct aclsim__stream *check_stream;
    union {
        struct { void *dst; const void *src; } copy;
        /* bytes = width * height; copy.c */
        struct { void *dst; const void *src; size_t dpitch, spitch, width; } copy2d;
        /* bytes = 4 * count; copy.c */
        struct { void *dst; uint32_t value; } memset32;
        struct { void *dst; int value; } memset;
        /* argbuf holds args[] (one pointer per parameter) then the values. */
        /* cores: the resource limit in force at launch (0: none, devctl.c);
         * sat_mode and overflow_check: the stream's when it was launched. */
        /* args_len: argbuf's size (for the exception info); timeout_us: the
         * launch's own execute timeout (ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT*):
         * 0 none (the process-wide one applies), UINT32_MAX never. */
        struct { const aclsimKernel *kernel; uint32_t blocks; void *argbuf; uint32_t cores;
                 uint8_t sat_mode; bool overflow_check; uint32_t args_len, timeout_us; } kernel;
        /* Writes the device's float-overflow status (size bytes) to dst, or
         * clears the status (overflow.c). */
        struct { void *dst; bool clear; } overflow;
        struct { aclrtHostFunc fn; void *arg; } host;
        /* callback.c: run (user code, on the worker) or, if discarded, drop
         * (frees what arg owns). */
        struct { void (*run)(void *arg); void (*drop)(void *arg); void *arg; } cb;
        /* dst[i] = dst[i] op src[i] over bytes (reduce.c). */
        struct { void *dst; const void *src; int32_t kind, type; } reduce;
        /* What the task owns (freed with it by the executor): a random
         * number task's parameters (random.c), a batch of copies (batch.c). */
        struct { void *data; } random;
        struct { void *data; } batch;
        struct { struct aclsim__event *event; uint64_t seq; } event;
        /* WAIT and SIGNAL: timeout_s 0 waits forever. */
        struct { const struct aclsim__wait_ops *ops; void *obj; uint64_t value;
                 uint32_t mode, timeout_s; } sync;
    } u;
    /* A prefetch hint, never dereferenced: the task queued ACLSIM_AHEAD_TASKS
     * submits after this one in the same inbox batch (submit.c), or NULL.
     * The worker running this task fetches that one's lines, and so does a
     * submitter taking this task as a spare (the spares come back in queue
     * order), so that neither waits for each task's lines in turn while it
     * follows `next` from task to task. */
    struct aclsim__task *ahead;
};

/* Prefetches every cache line of the task at p (a hint: p may point
 * anywhere), for writing or for reading. A task (96 bytes) spans two
 * lines, or three at some offsets. */
static inline void aclsim__prefetch_task(const struct aclsim__task *p, bool write)
{
    const char *c = (const char *)p;
    if (write) {
        aclsim__prefetch_write(c);
        aclsim__prefetch_write(c + 64);
        aclsim__prefetch_write(c + sizeof *p - 1);
    } else {
        aclsim__prefetch_read(c);
        aclsim__prefetch_read(c + 64);
        aclsim__prefetch_read(c + sizeof *p - 1);
    }
}

enum aclsim__stream_state { ACLSIM_STREAM_IDLE, ACLSIM_STREAM_QUEUED,
                            ACLSIM_STREAM_RUNNING, ACLSIM_STREAM_PARKED };

/* Invariants (under lock): tasks [head..tail] are queued in submission order
 * and none has started; while RUNNING, the one worker that owns the stream
 * (or, on one CPU, the host thread that took it off the ready list in
 * aclsim__host_run, running only tasks without user code) holds the tasks
 * before head (claimed: running, or about to run, in order);
 * completed counts tasks run or discarded; state is QUEUED iff the stream is
 * on its device's ready list; PARKED iff it is on an event's waiter list, its
 * head being the wait (wait_task), except while an abort or reset that
 * discarded the wait races its waking (then wait_task is NULL, wait.c); the
 * tasks of head..tail and of the inbox have consecutive ids (executor.c
 * counts a claimed batch by them); an IDLE stream with tasks never exists,
 * except for tasks in the inbox whose submitter is about to queue it (THE
 * INBOX RULE).
 *
 * THE INBOX RULE. aclsim__submit appends its task to the inbox under
 * sub_lock, which the queue side takes only to move the inbox to the end of
 * head..tail (aclsim__stream_take_inbox), once per batch: a host thread
 * pumping tasks into a stream does not trade the queue's lock with the
 * worker running them. Lock order: lock, then sub_lock. The queue side
 * takes the inbox before it looks at head, so "the stream has tasks" means
 * head or inbox. idle is true iff the stream is IDLE and nobody has taken it
 * on: set (lock held, inbox and head empty) by whoever makes the stream
 * IDLE. The submit that finds it true clears it and must then, under lock,
 * queue the stream (the only way out of IDLE). In between, the stream can
 * only be discarded (the inbox emptied: the submitter sets idle again and
 * retires a detached stream, as whoever makes a stream IDLE does) or, once
 * discarded and destroyed, start a new life (a new epoch: the submitter
 * leaves it alone). closed is written under both locks, so a submit
 * accepted before a close is in the inbox when the closer looks. */
struct aclsim__stream {
    /* Cold: identity and lifetime. */
    void *handle;
    struct aclsim__context *context;
    struct aclsim__device *device;
    atomic_uint refs;               /* 1 while alive + temporary holders */
    uint64_t wait_seq;              /* PARKED: the event record it waits for */
    struct aclsim__stream *next_ready;    /* device ready list, under exec_lock */
    uint32_t ready_priority;              /* its priority when scheduled, under exec_lock */
    struct aclsim__stream *next_waiting;  /* event waiter list, under event lock */
    struct aclsim__stream *next_in_context, *prev_in_context;   /* under context lock */
    pthread_cond_t progress;        /* broadcast when completed grows or state idles */
    /* Bumped (under lock) each time the struct starts a new life. */
    atomic_uint epoch;
    /* Float overflow (overflow.c): the device's saturation mode when the
     * stream was created, and its overflow-detection switch. */
    atomic_uchar sat_mode;
    atomic_bool overflow_check;

    /* The queue side, under lock: whoever runs, parks, discards or destroys
     * the stream (the worker once per batch). */
    _Alignas(64) pthread_mutex_t lock;
    struct aclsim__task *head, *tail;
    uint64_t discarded_pending;      /* discarded behind tasks in flight: counted by the worker */
    uint32_t taken;                  /* id of the newest task taken from the inbox */
    uint8_t state;

    /* The submission side, under sub_lock (THE INBOX RULE below): a thread
     * pumping tasks into the stream touches only these cache lines (and
     * `submitted`'s) while a worker runs the stream, and the worker touches
     * them once per batch. inbox..inbox_tail: accepted tasks not yet moved
     * to head..tail; in_spare: tasks for the next submits, taken from
     * returned a stack at a time. */
    _Alignas(64) pthread_spinlock_t sub_lock;
    struct aclsim__task *inbox, *inbox_tail, *in_spare;
    uint32_t in_charged;             /* THE SPARES (submit.c): budget held for in_spare */
    /* The prefetch hints (submit.c, task->ahead): recent[seq % ACLSIM_AHEAD_TASKS]
     * is the task queued with seq, valid while seq > inbox_base (the
     * submitted count when the inbox was last detached: still in the inbox). */
    uint64_t inbox_base;
    struct aclsim__task *recent[ACLSIM_AHEAD_TASKS];
    bool idle;                       /* THE INBOX RULE: whoever clears it queues the stream */
    bool closed;                     /* being destroyed: aclsim__submit refuses it (written
                                        under lock and sub_lock; read under either) */
    /* THE SPARES (submit.c): finished tasks given back by the queue side,
     * taken whole by a submitter; on their own line, as both sides write
     * them once per batch. */
    _Alignas(64) struct aclsim__task *_Atomic returned;
    atomic_uint nreturned, spare_charged;
    /* Written under sub_lock; read anywhere (a lingering worker polls it:
     * alone on its line, so the polls do not slow the submitter's lock). */
    _Alignas(64) atomic_uint_fast64_t submitted;

    /* Consumer side (the worker, once per task), on its own cache line so
     * that counting completions does not steal the producer's line. */
    _Alignas(64) atomic_uint_fast64_t completed;
    atomic_uint waiters;            /* threads blocked on progress */
    atomic_uint hurry;              /* host threads spinning for completion */
    atomic_bool discard;            /* force reset/finalize, or an abort: run nothing more */
    /* THE HELP RULE (executor.c, aclsim__job_help). help_job: the open job of
     * the task this stream's worker runs, if host threads may help with it
     * (a big copy); helping: host threads that may be looking at it. A host
     * thread increments helping, then reads help_job; the owner clears
     * help_job, then waits for helping to be 0 (all sequentially
     * consistent): so either the host sees NULL, or the owner waits until
     * the host is done with the job (which lives on the owner's stack). */
    struct aclsim__job *_Atomic help_job;
    atomic_uint helping;

    /* Stream API (stream-control.c). Set at creation, then under lock. */
    uint32_t flags;                 /* ACL_STREAM_* it was created with */
    uint32_t priority;              /* 0 (greatest) .. 7 (least); __atomic, read by the executor */
    uint32_t user_tag, cache_op_info;   /* stream attributes (overflow: overflow_check) */
    bool linked;                    /* on its context's list (user streams) */
    bool is_default;                /* its context's default stream */
    bool announced;                 /* aclrtRegStreamStateCallback's callbacks saw it created */
    /* aclrtDestroyStreamForce: the handle is gone, queued work still runs;
     * whoever takes the stream IDLE retires it (aclsim__stream_idle). */
    bool detached;
    atomic_uint aborts;             /* aclrtStreamAbort calls begun on this stream */
    atomic_bool aborting;           /* an aclrtStreamAbort is under way */

    /* failure.c (cold). id: the stream id of exception info, kept by the
     * struct across reuse. When stopping is set, tasks whose id is at most
     * stop_upto (wrap-safe) are discarded instead of run (ACL_STOP_ON_FAILURE,
     * aclrtDeviceTaskAbort). fault: the code of the first failure not yet
     * reported by a synchronize of this stream; fault_text (under lock) says
     * what failed. failure_mode: as aclrtSetStreamFailureMode set it. */
    uint32_t id;
    uint8_t failure_mode;
    atomic_bool stopping;
    _Atomic uint32_t stop_upto;
    _Atomic int32_t fault;
    char fault_text[384];
    /* wait.c: while PARKED, on the watcher's list (under its lock). */
    struct aclsim__stream *watch_next, *watch_prev;
    bool watched;
    bool watch_polls;               /* its wait reads memory (counted in aclsim__memory_watched) */
    bool wait_expired;              /* the watcher woke it: timeout or reset */
    bool wait_granted;              /* woken because its wait passed (and consumed) */
    /* The wait the deadline belongs to: written under s->lock or by the
     * worker running the stream, read by either; atomic (a discard clears it
     * under the lock while the worker looks at its own claimed waits). */
    struct aclsim__task *_Atomic wait_task;
    uint64_t wait_deadline;         /* ns, 0: none */
    /* modelri.c: the model runtime instance this stream is captured into or
     * bound to (aclmdlRIBindStream), or NULL; under modelri.c's lock. */
    struct aclsim__ri *capture;
};

/* Creates a stream of ctx: a user stream (with a handle, on ctx's list) if
 * ctx_handle is the handle through which the caller resolved ctx (refused
 * with 107002 if that context was destroyed meanwhile), or its default
 * stream with NULL. *handle_out gets a user stream's handle as it was made
 * (*out may already be destroyed with its context when this returns). */
aclError aclsim__stream_create(struct aclsim__context *ctx, const void *ctx_handle,
                               struct aclsim__stream **out, void **handle_out, const char *api);
/* Waits for everything queued so far on every stream of dev. */
aclError aclsim__device_synchronize(struct aclsim__device *dev, const char *api);
/* The same, calling visit (if not NULL) on each stream first, under its
 * context's lock and rt.lock; timeout_ms < 0 waits forever, else
 * ACL_ERROR_RT_WAIT_TIMEOUT (no message) once it has passed. */
aclError aclsim__device_drain(struct aclsim__device *dev, int32_t timeout_ms,
                              void (*visit)(struct aclsim__stream *s, void *arg), void *arg,
                              const char *api);
/* Closes s to submissions, waits for queued work (or discards not-started
 * work with force), takes it off its context's list and recycles it. The
 * caller has won aclsim__handle_free on s's handle (or s is a default
 * stream). */
void aclsim__stream_destroy(struct aclsim__stream *s, bool force);
/* THE LIFETIME RULE. A call that races the destruction of the stream,
 * context, device session or runtime it uses either fails cleanly (107017,
 * 107002, 100001) or completes with its task run -- or, where CANN discards
 * work (aclrtStreamAbort, force reset, aclFinalize), discarded and reported as
 * such (107023) to a caller waiting for it. It never hangs, never touches
 * another session, never touches freed or unmapped memory. Enforced in two
 * places only: aclsim__stream_resolve records the stream's epoch, and
 * aclsim__submit (the one place tasks enter a stream) refuses a stream whose
 * epoch changed or that is closed. A stream is closed (under both its locks)
 * before it drains, every device's streams drain before its workers stop,
 * and every device closes before aclFinalize unmaps page-locked memory; so
 * an accepted task always runs or is discarded and counted, which wakes
 * every waiter. */

/* Force-destroys s (its handle already freed, as for aclsim__stream_destroy):
 * closes it and returns at once; queued work still runs, and the worker that
 * takes the stream IDLE unlinks and recycles it. aclrtSynchronizeDevice,
 * aclrtBinaryUnLoad and resets still wait for it (it stays on its context's
 * list until then). */
void aclsim__stream_detach(struct aclsim__stream *s);
/* Called (s->lock held) by whoever sets s->state to IDLE: true if s is a
 * detached stream that has now drained, and the caller must call
 * aclsim__stream_retire(s) once it has released the lock. */
bool aclsim__stream_idle(struct aclsim__stream *s);
/* THE INBOX RULE: moves the inbox to the end of head..tail (lock held).
 * With go_idle, if head is empty and there was nothing to move, also sets
 * idle: the caller is making the stream IDLE. True if tasks moved. */
bool aclsim__stream_take_inbox(struct aclsim__stream *s, bool go_idle);
/* The sequence number of the last task accepted by s, read under sub_lock
 * (lock held): a submit that has passed its checks (the context's fault
 * among them) is counted, and any other makes them after this. What a stop
 * on failure or a task abort stops (failure.c). */
uint64_t aclsim__stream_submitted_now(struct aclsim__stream *s);
/* The end of a run of s (lock held, head empty): takes the inbox, or if it is
 * empty marks the stream idle, as aclsim__stream_take_inbox(s, true) does;
 * in the same sub_lock round gives first..last (n tasks the run finished,
 * or none) back to the spares. True if tasks were taken. */
bool aclsim__stream_end_run(struct aclsim__stream *s, struct aclsim__task *first,
                            struct aclsim__task *last, uint64_t n);
/* Tasks in the inbox, as far as submitted shows (lock held). */
static inline uint32_t aclsim__stream_pending(struct aclsim__stream *s)
{
    return (uint32_t)atomic_load_explicit(&s->submitted, memory_order_relaxed) - s->taken;
}
void aclsim__stream_retire(struct aclsim__stream *s);
/* Discards the not-started work of a stream that is linked to ctx and being
 * destroyed by someone else (force reset meeting a detached stream). Caller
 * holds ctx->lock, which keeps s linked; it is released meanwhile. */
void aclsim__stream_discard_linked(struct aclsim__stream *s, struct aclsim__context *ctx);
struct aclsim__sref;
/* aclrtStreamAbort: discards the not-started work of the resolved stream
 * (and what is submitted meanwhile), waits until no task of it runs (bounded
 * by the task running now), then opens it for new work again. false if the
 * stream was destroyed since it was resolved. */
bool aclsim__stream_abort(struct aclsim__sref ref);
/* Creates a user stream of the current context with these flags and
 * priority (already checked) and tells the stream state callbacks. */
aclError aclsim__create_stream_api(aclrtStream *stream, uint32_t flags, uint32_t priority,
                                   const char *api);
/* A default stream that now exists for the program (its device opened, its
 * context created): marks it announced and returns its handle, for
 * aclsim__stream_state_notify(handle, true) once rt.lock (held here) is
 * released. */
void *aclsim__stream_announce(struct aclsim__stream *s);
/* Streams of dev alive (default streams included), and the SoC's maximum. */
uint32_t aclsim__streams_live(struct aclsim__device *dev);
uint32_t aclsim__streams_max(void);
/* Force reset/aclFinalize: discards the not-started work of every stream of
 * ctx at once (before any of them is waited for). */
void aclsim__context_discard_all(struct aclsim__context *ctx);
/* aclsim__device_synchronize for at most timeout_ms (< 0: forever): 507046
 * when the time runs out. */
aclError aclsim__device_synchronize_timeout(struct aclsim__device *dev, int32_t timeout_ms,
                                            const char *api);

/* A stream as an API call resolved it: the struct, its epoch then, and the
 * user's handle (NULL: the context's default stream). */
struct aclsim__sref { struct aclsim__stream *s; uint32_t epoch; const void *handle; };
/* Resolves a user stream argument (NULL = current context's default stream),
 * checking handle (107017) and context (107003). If ctx_out points at a
 * context already, that is taken as the current one (no second lookup). */
aclError aclsim__stream_resolve(aclrtStream stream, const char *api,
                                struct aclsim__context **ctx_out,
                                struct aclsim__sref *out);
/* Queues a copy of task (filled in by the caller) on the resolved stream.
 * On success the stream owns what the task owns (a kernel's argument buffer,
 * an event reference) and *seq (if not NULL) is its sequence number. Fails
 * with 107017/107002 if the stream was destroyed since it was resolved, or
 * 100000-series out of memory; then the caller still owns what it gave. */
aclError aclsim__submit(struct aclsim__sref ref, const struct aclsim__task *task,
                        const char *api, uint64_t *seq);
/* Gives finished tasks first..last (n of them) back to s's spares, freeing
 * those beyond a bounded cache. Caller holds s->lock. */
void aclsim__stream_recycle_tasks(struct aclsim__stream *s, struct aclsim__task *first,
                                  struct aclsim__task *last, uint64_t n);
/* *ts = CLOCK_REALTIME now + ms (for pthread_cond_timedwait). */
void aclsim__deadline_after(struct timespec *ts, int32_t ms);
/* Blocks until the stream completed seq tasks; timeout_ms < 0 waits forever.
 * false on timeout. A wait without a timeout may work for the stream
 * meanwhile: take a share of a big copy (THE HELP RULE) or, on one CPU, run
 * its tasks that have no user code (aclsim__host_run). */
bool aclsim__stream_wait(struct aclsim__stream *s, uint64_t seq, int32_t timeout_ms);
/* aclFinalize: destroys the events the program did not destroy. */
void aclsim__events_finalize(void);
/* callback.c: aclFinalize forgets every subscription and wakes the threads
 * waiting in aclrtProcessReport/aclrtProcessHostFunc (107012). */
void aclsim__callbacks_finalize(void);
/* stream-control.c: aclrtRegStreamStateCallback's callbacks for a stream
 * handle just created (create true) or about to be destroyed. Call with no
 * lock held. */
void aclsim__stream_state_notify(void *handle, bool create);
/* aclFinalize: destroys the notifies and counting notifies left (notify.c). */
void aclsim__notifies_finalize(void);
void aclsim__notifies_forget_after_fork(void);   /* THE FORK RULE */

/* executor.c: puts s on its device's ready list (s was IDLE or PARKED). */
void aclsim__schedule(struct aclsim__stream *s);
/* Counts n more tasks of s as finished (run or discarded) and wakes threads
 * waiting for them. Needs no lock (see aclsim__stream_wait). */
void aclsim__count_done(struct aclsim__stream *s, uint64_t n);
/* Discards tasks that will never run (a record counts as reached, unstamped,
 * so nobody waits forever on it). Returns the last task, for recycling. */
struct aclsim__task *aclsim__discard_tasks(struct aclsim__task *t);

/* event.c, for the executor: */
void aclsim__event_unref(struct aclsim__event *ev);
/* Marks record seq of ev finished (stamp: with the time it ran) and
 * reschedules the streams parked on it. */
void aclsim__event_complete(struct aclsim__event *ev, uint64_t seq, bool stamp);
/* aclrtStreamWaitEvent with a timeout in seconds (0: none), all checks
 * included, as api: for the other wait-event entry points
 * (aclrtStreamWaitEventWithTimeout, the op wait timeout). */
aclError aclsim__stream_wait_event(aclrtStream stream, aclrtEvent event, uint32_t timeout_s,
                                   const char *api);

/* ---- idpool.c: per-device ids of events and notifies -------------------- */
struct aclsim__idpool { pthread_mutex_t lock; uint32_t used, next; uint8_t *bits; };
#define ACLSIM_IDPOOL_INIT {PTHREAD_MUTEX_INITIALIZER, 0, 0, NULL}
/* A free id below limit (false when limit ids are taken, or out of memory). */
bool aclsim__id_take(struct aclsim__idpool *pool, uint32_t limit, uint32_t *id);
void aclsim__id_give(struct aclsim__idpool *pool, uint32_t id);
uint32_t aclsim__id_used(struct aclsim__idpool *pool);
void aclsim__idpool_forget_after_fork(struct aclsim__idpool *pool);   /* all free, new lock */

/* ---- wait.c: parked waits, the watcher, asynchronous task failures ------ */

/* A FIFO of streams parked on an object (linked by next_waiting), under the
 * object's lock. */
struct aclsim__waitq { struct aclsim__stream *head, *tail; };
void aclsim__waitq_push(struct aclsim__waitq *q, struct aclsim__stream *s);
bool aclsim__waitq_remove(struct aclsim__waitq *q, struct aclsim__stream *s);
/* Takes off q, in FIFO order, the streams whose head wait may now pass
 * (pass(t) says so and consumes), onto *wake. Caller holds the object's lock. */
void aclsim__waitq_release(struct aclsim__waitq *q, bool (*pass)(struct aclsim__task *t),
                           struct aclsim__stream **wake);
/* Reschedules the streams of a *wake list; without the object's lock. */
void aclsim__wake(struct aclsim__stream *wake);
/* Executor: may WAIT task t at s's head pass now? A wait that timed out, or
 * whose device is being reset, passes and fails its stream. */
bool aclsim__wait_ready(struct aclsim__stream *s, struct aclsim__task *t);
/* Executor, s->lock held, t at s's head: parks s; false if t may pass now. */
bool aclsim__wait_park(struct aclsim__stream *s, struct aclsim__task *t);
/* Force destroy, s->lock held, s PARKED: takes s off what it is parked on;
 * false if it is being woken meanwhile. */
bool aclsim__wait_unpark(struct aclsim__stream *s);
/* Device close: its parked waits fail (107023) and no new wait parks, until
 * resume (when the device has closed). */
void aclsim__waits_abort_device(struct aclsim__device *dev);
void aclsim__waits_resume_device(struct aclsim__device *dev);
void aclsim__waits_finalize(void);   /* aclFinalize: stops the watcher thread */
void aclsim__waits_forget_after_fork(void);   /* THE FORK RULE */
/* (A wait that times out fails through failure.c's aclsim__task_failed.) */

/* The memory guard. While memory waits are parked, whatever writes device
 * memory (copies, memsets, kernels, value writes) holds the guard shared and
 * the watcher reads watched memory holding it exclusively: the reads are then
 * ordered with every write (no data race), and a writer's release tells the
 * watcher to look again at once. Costs one atomic load otherwise. */
extern atomic_uint aclsim__memory_watched;
void aclsim__memory_guard_shared(void);
void aclsim__memory_guard_release(void);
/* Evaluates memory wait t (its ops->poll) ordered with the writers, if the
 * guard is free at once; false otherwise (the watcher will look). */
bool aclsim__memory_check(struct aclsim__task *t);
static inline bool aclsim__memory_write_begin(void)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&aclsim__memory_watched, memory_order_acquire)))
        return false;
    aclsim__memory_guard_shared();
    return true;
}
static inline void aclsim__memory_write_end(bool held)
{
    if (held)
        aclsim__memory_guard_release();
}

aclError aclsim__executor_start(struct aclsim__device *dev, uint32_t nworkers, const char *api);
void aclsim__executor_stop(struct aclsim__device *dev);
/* Runs job on the calling worker plus idle workers of dev (and, with
 * job->host_stream, host threads waiting on that stream); returns when done. */
void aclsim__run_job(struct aclsim__device *dev, struct aclsim__job *job);
/* A host thread waiting on s: helps with s's open copy job, if any (THE
 * HELP RULE). True if it did some of the work. */
bool aclsim__job_help(struct aclsim__stream *s);
/* One CPU: a host thread about to sleep until s progresses runs s's queued
 * tasks itself, as a worker would, if s is on its device's ready list and
 * its first tasks run no user code (copies, memsets, records, ...: what they
 * do does not depend on the thread). True if it ran some. */
bool aclsim__host_run(struct aclsim__stream *s);

/* True on the device worker threads (where host functions and kernels run);
 * the device they serve, and the stream whose task they run (or NULL). */
extern _Thread_local bool aclsim__tls_worker;
extern _Thread_local struct aclsim__device *aclsim__tls_device;
extern _Thread_local struct aclsim__stream *aclsim__tls_stream;
/* 507000 for a call from a host function or kernel that would wait for its
 * own stream or device (what: "this stream", "this device", ...). */
aclError aclsim__refuse_self_wait(const char *api, const char *what);

/* Thread-local state of the block a worker is running (kernel-block.c). */
extern _Thread_local uint32_t aclsim__tls_block_idx, aclsim__tls_block_num,
    aclsim__tls_device_slot;
/* What a failed kernel reports (failure.c fills in the rest). */
struct aclsim__fault_detail {
    char why[256];            /* "block 3 of 8: aclsimTrap: <reason>" */
    void *args;               /* the launch's argument block, and its size */
    uint32_t args_len;
    void *func;               /* the kernel's aclrtFuncHandle */
};
/* ---- fiber.c: stacks for kernel blocks that wait for each other ---------- */
#include <ucontext.h>
/* A stack a block can be suspended on; a thread's own stack is a fiber with
 * stack == NULL (aclsim__fiber_native). The list links are the user's. */
struct aclsim__fiber {
    ucontext_t ctx;                  /* the saved context (swapcontext builds) */
    void *sp;                        /* the saved stack pointer (x86-64 builds) */
    void *stack;                     /* NULL: a thread's own stack */
    size_t stack_size;
    const void *bottom;              /* a thread's own stack (learned by ASan builds) */
    size_t size;
    void *asan_fake, *tsan;          /* sanitizer bookkeeping */
    struct aclsim__fiber *next, *all_next; /* the user's list links */
    struct aclsim__fiber *pool_next; /* fiber.c's */
    /* the user's: the block suspended on this stack */
    uint32_t block;
    unsigned gen;
    void *trap;
};
/* f describes the calling thread's own stack. */
void aclsim__fiber_native(struct aclsim__fiber *f);
/* A fiber that starts in entry (which must never return), or NULL (out of
 * memory). Its first act must be aclsim__fiber_started(). */
struct aclsim__fiber *aclsim__fiber_new(void (*entry)(void));
void aclsim__fiber_started(void);
/* Back to the pool (not the running one, not a thread's own). */
void aclsim__fiber_free(struct aclsim__fiber *f);
/* Saves the running context in from and continues to; returns when someone
 * switches back to from. from_ends: from will never run again. Same thread only. */
void aclsim__fiber_switch(struct aclsim__fiber *from, struct aclsim__fiber *to, bool from_ends);

/* Runs a kernel task: ACL_SUCCESS, or the code it failed with (507015 from
 * aclsimTrap, 507014 past the op execute timeout) with *d filled in. */
aclError aclsim__execute_kernel(struct aclsim__device *dev, struct aclsim__task *t,
                                struct aclsim__fault_detail *d);
/* A copy task of s (big ones split across the workers and s's waiting host threads). */
void aclsim__execute_copy(struct aclsim__stream *s, void *dst, const void *src, size_t n);

/* Built-in tasks, run by the executor: reduce.c, random.c, batch.c. */
void aclsim__execute_reduce(struct aclsim__task *t);
void aclsim__execute_random(struct aclsim__task *t);
void aclsim__execute_batch(struct aclsim__task *t);
/* 100000 unless p is memory of dev with room for n bytes (name: the
 * argument, for the message). batch.c */
aclError aclsim__check_on_device(const char *api, const char *name, const void *p, size_t n,
                                 struct aclsim__device *dev);
/* bfloat16 <-> float (round to nearest even; NaN stays NaN). reduce.c */
float aclsim__bf16_to_float(uint16_t v);
uint16_t aclsim__float_to_bf16(float f);

/* ---- failure.c, failure-device.c: failed tasks, the device side ----------- */

/* Records that task t of s failed with code (on the worker that ran it,
 * before the task counts as completed): the stream's and the device's
 * pending fault, the context's sticky fault and the stop of all its streams
 * with ACL_STOP_ON_FAILURE, then the exception callbacks, called on this
 * thread. For any kind of task: an event/notify wait past the op wait
 * timeout reports itself here too (d->func and d->args NULL). Takes the
 * context's and the streams' locks: call it holding none. */
void aclsim__task_failed(struct aclsim__stream *s, const struct aclsim__task *t, aclError code,
                         const struct aclsim__fault_detail *d);
/* Whether t is to be discarded instead of run (s->stopping is set). */
static inline bool aclsim__task_stopped(struct aclsim__stream *s, const struct aclsim__task *t)
{
    uint32_t upto = atomic_load_explicit(&s->stop_upto, memory_order_acquire);
    return (uint32_t)(upto - t->id) < 0x80000000u;
}
/* After a wait on stream s, or on the device of the current context ctx:
 * the failure to report, with aclsim__fail, or ACL_SUCCESS. The context's
 * sticky fault first (ACL_STOP_ON_FAILURE), then the pending fault of s (of
 * the first stream of the device that has one), which this consumes: a
 * failure is reported once, by whichever synchronize comes first. */
struct aclsim__sref;
aclError aclsim__stream_report(struct aclsim__sref ref, const char *api);
aclError aclsim__device_report(struct aclsim__context *ctx, const char *api);
/* aclsim__submit: a context stopped by a failure refuses tasks (its code). */
aclError aclsim__context_refuse(struct aclsim__context *ctx, const char *api);
/* Bumped by each aclrtDeviceTaskAbort on dev (failure-device.c): blocks of a
 * kernel launched under an older generation are skipped (kernel-block.c). */
unsigned aclsim__abort_generation(const struct aclsim__device *dev);
/* Op execute timeout in nanoseconds (UINT64_MAX: never). */
uint64_t aclsim__op_execute_timeout_ns(void);
/* aclrtSetOpWaitTimeout's value in nanoseconds, 0 when no wait timeout is set:
 * for the event/notify waits (a stream waiting longer fails, see
 * docs/failures.md). */
uint64_t aclsim__op_wait_timeout_ns(void);
/* Device state callbacks (aclrtRegDeviceStateCallback, failure-device.c),
 * called without locks by aclrtSetDevice (SET_PRE when the device is not open
 * yet, SET_POST after each success) and aclrtResetDevice(Force) (RESET_PRE/POST
 * around a reset that closes the device). */
void aclsim__device_state_notify(int32_t device, int state);
/* The calling thread submitted task id to a user stream (aclrtGetThreadLastTaskId). */
extern _Thread_local uint32_t aclsim__tls_last_task_id;
/* A device opening starts without the failures of its previous session. */
void aclsim__device_faults_clear(int32_t device);
/* aclFinalize: forgets callbacks, timeouts and failure records. */
void aclsim__failures_finalize(void);
/* fork() child: re-creates the locks of failure.c and failure-device.c (THE FORK RULE). */
void aclsim__failures_forget_after_fork(void);

/* ---- memory.c ---------------------------------------------------------- */

/* VIRTUAL: inside a reserved virtual range (device: that of the physical
 * memory mapped there, or NULL); MANAGED: aclrtMemAllocManaged memory (host
 * and device memory at once); REGISTERED: aclrtHostRegister'ed host memory
 * (treated as page-locked). The last three are found in ranges.c. */
enum aclsim__where_kind { ACLSIM_HOST, ACLSIM_PINNED, ACLSIM_DEVICE, ACLSIM_VIRTUAL,
                          ACLSIM_MANAGED, ACLSIM_REGISTERED };
struct aclsim__where {
    int kind;                        /* enum aclsim__where_kind */
    struct aclsim__device *device;   /* ACLSIM_DEVICE */
};
/* aclrtMalloc's allocation (arguments checked): size bytes of ctx's device,
 * 207001 when it is full. */
aclError aclsim__device_alloc(const char *api, struct aclsim__context *ctx, void **devPtr,
                              size_t size);
/* aclrtMallocHost's allocation (arguments checked): page-locked host memory. */
aclError aclsim__host_alloc(const char *api, void **hostPtr, size_t size);
/* Where p lives; O(number of devices), no locks. */
struct aclsim__where aclsim__classify(const void *p);
extern struct aclsim__heap aclsim__host_heap;    /* page-locked host memory */
/* Queues task (a copy of it) on s; with wait, returns only after it ran
 * (107023 if it was discarded instead): for copies with pageable memory. */
aclError aclsim__submit_maybe_wait(struct aclsim__sref s, struct aclsim__task *task, bool wait,
                                   const char *what, const char *api);
/* Queues a copy task on s; with pageable (ordinary host) memory on either
 * side, returns only after it ran (107023 if it was discarded instead).
 * label names the variable, if any. */
aclError aclsim__copy_async(struct aclsim__sref s, void *dst, const void *src, size_t count,
                            bool pageable, const char *label, const char *api);
/* 100000 unless [p, p + n) lies inside one live allocation, for device and
 * page-locked memory (ordinary host memory cannot be checked). name is the
 * argument's name in the message. */
aclError aclsim__check_range(const char *api, const char *name, const void *p, size_t n,
                             struct aclsim__where w);
/* Checks a copy's pointers against kind (aclrtMemcpyKind) and their ranges
 * (count bytes from each); *wd and *ws get where they live. */
aclError aclsim__check_copy(const char *api, void *dst, const void *src, size_t count, int kind,
                            struct aclsim__where *wd, struct aclsim__where *ws);
/* copy.c: runs an ACLSIM_TASK_COPY2D or ACLSIM_TASK_MEMSET32 task. */
void aclsim__execute_copy_variant(struct aclsim__task *t);
/* Held by a synchronous copy or set from its range checks to the end of its
 * move (a and b: the pointers it touches, either may be NULL), so that a
 * racing reset or aclFinalize cannot free or unmap the bytes under it
 * (100001 if aclFinalize destroyed a heap first). Resets and destroys of any
 * heap wait for it (heap.c's teardown lock); with reserved, managed or
 * registered memory it also holds the range registry's lock (ranges.c). */
struct aclsim__heap_hold { struct aclsim__heap *h[2]; int n; bool ranges; };
aclError aclsim__hold_heaps(const char *api, struct aclsim__heap_hold *hold, const void *a,
                            const void *b);
void aclsim__release_heaps(struct aclsim__heap_hold *hold);
/* Describes p for messages: "device 1 memory (allocation 0x.. of 64 bytes)". */
void aclsim__describe(const void *p, char *buf, size_t len);
void aclsim__memory_finalize(void);
/* aclInit: page-locked memory may be allocated again. */
void aclsim__memory_open(void);

/* ---- ranges.c, vmm*.c, hostreg.c, managed.c: memory beyond the heaps -----
 * Reserved virtual ranges (with physical memory mapped into them), managed
 * allocations and registered host memory live in a small registry of address
 * ranges (src/runtime/ranges.h); classify consults it only while it is not
 * empty, so programs that do not use these kinds pay one atomic load. */
extern atomic_size_t aclsim__ranges_count;
/* Where p lives among the registry's ranges (ACLSIM_HOST if in none). */
struct aclsim__where aclsim__ranges_classify(const void *p);
/* aclsim__check_range for VIRTUAL, MANAGED and REGISTERED: [p, p + n) lies in
 * one managed allocation or registration, or in consecutive accessible
 * mappings of one reservation (write: not read-only; name "src" is read). */
aclError aclsim__ranges_check(const char *api, const char *name, const void *p, size_t n,
                              struct aclsim__where w);
void aclsim__ranges_describe(const void *p, char *buf, size_t len);
/* aclrtFree of managed memory: false if p is not the start of a managed
 * allocation. */
bool aclsim__managed_free(void *p);
/* aclFinalize: unmaps and frees every reservation, physical allocation,
 * managed allocation and registration. */
void aclsim__ranges_finalize(void);
/* The registry's read lock, for aclsim__hold_heaps: while held, no range is
 * unmapped (taken before any heap lock). */
void aclsim__ranges_hold(void);
void aclsim__ranges_unhold(void);

/* peer.c: 107000 when a copy between two devices needs peer access (as the
 * configured product's aclrtMemcpy reference says) and neither device has
 * enabled it to the other; success for anything else (NULL: not a device). */
aclError aclsim__peer_copy_check(const char *api, const struct aclsim__device *dst,
                                 const struct aclsim__device *src);

/* ---- mempool.c: stream-ordered memory pools (acl_rt_memory_soma.h) ------------
 * Each hook costs one atomic load while no pool exists. */
/* Event dependencies for ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES: record
 * number recno of the event with this handle was queued on s as its task seq;
 * stream s queued a wait for record recno of that event. (event.c) */
struct aclsim__sref;
void aclsim__mempool_note_record(const void *event_handle, struct aclsim__sref s, uint64_t seq,
                                 uint64_t recno);
void aclsim__mempool_note_wait(struct aclsim__sref s, const void *event_handle, uint64_t recno);
/* After a successful stream or device synchronize: pools of dev give idle
 * memory above their release threshold back to the device. */
void aclsim__mempools_after_sync(struct aclsim__device *dev);
/* Device close, after its streams drained and before its heap is reset:
 * the pools of dev are destroyed (their handles die). */
void aclsim__mempools_device_closing(struct aclsim__device *dev);
void aclsim__mempools_forget_after_fork(void);   /* THE FORK RULE */
/* ---- ipc.c: sharing between processes (docs/ipc.md) ----------------------- */

#define ACLSIM_IPC_KEY_LEN 65      /* CANN's key length, NUL included */
#define ACLSIM_IPC_MAX_PIDS 64     /* whitelist entries per exported object */
#define ACLSIM_IPC_RING 64         /* IPC event records tracked out of order */
enum aclsim__ipc_kind { ACLSIM_IPC_MEMORY = 1, ACLSIM_IPC_PHYSICAL, ACLSIM_IPC_EVENT,
                        ACLSIM_IPC_NOTIFY };
struct aclsim__ipc_slot;
/* An exported object: its slot in the owner's shared table (mapped here for
 * the life of the process) and the nonce that names this use of the slot. */
struct aclsim__ipc_ref {
    struct aclsim__ipc_slot *slot;
    uint64_t nonce;
    int32_t owner;                 /* exporting process */
    uint32_t index;                /* slot number */
};
/* Publishes an object in this process's table. */
aclError aclsim__ipc_export(int kind, int32_t device, int fd, uint64_t offset, uint64_t size,
                            uint64_t map_size, bool no_check, const void *alloc,
                            struct aclsim__ipc_ref *out, const char *api);
/* Closes an export of this process: its key no longer opens anything. */
void aclsim__ipc_close(const struct aclsim__ipc_ref *r);
/* Opens the object key names, checking its kind and this process against
 * its whitelist (207006). */
aclError aclsim__ipc_open(const char *key, int kind, const char *what,
                          struct aclsim__ipc_ref *out, const char *api);
aclError aclsim__ipc_allow(const struct aclsim__ipc_ref *r, const int32_t *pid, size_t num,
                           const char *api);
void aclsim__ipc_key(const struct aclsim__ipc_ref *r, char key[ACLSIM_IPC_KEY_LEN]);
bool aclsim__ipc_live(const struct aclsim__ipc_ref *r);
/* IPC events (event-ipc.c; event.c and event-query.c for their waits):
 * record numbers, queued/complete, reached. */
uint64_t aclsim__ipc_event_next(const struct aclsim__ipc_ref *r);
void aclsim__ipc_event_queued(const struct aclsim__ipc_ref *r, uint64_t seq);
uint64_t aclsim__ipc_event_latest(const struct aclsim__ipc_ref *r, bool queued);
void aclsim__ipc_event_done(const struct aclsim__ipc_ref *r, uint64_t seq);
bool aclsim__ipc_event_reached(const struct aclsim__ipc_ref *r, uint64_t seq);
/* IPC notifies (notify.c): the shared flag. */
void aclsim__ipc_notify_set(const struct aclsim__ipc_ref *r, uint32_t value);
bool aclsim__ipc_notify_take(const struct aclsim__ipc_ref *r);
/* Memory exports close when their allocation is freed (aclrtFree: alloc is
 * its start), their device closes, or their physical allocation is freed. */
extern atomic_uint aclsim__ipc_exports;
void aclsim__ipc_memory_freed(const void *alloc);
void aclsim__ipc_device_closed(struct aclsim__device *dev);
void aclsim__ipc_physical_freed(const void *handle);
void aclsim__ipc_finalize(void);
void aclsim__ipc_forget_after_fork(void);
/* vmm.c: maps size bytes of memfd fd from offset (page-aligned) as memory of
 * dev at a new reserved range (*base); unimport unmaps and releases it. */
aclError aclsim__vmm_import(const char *api, int fd, uint64_t offset, size_t size,
                           struct aclsim__device *dev, void **base);
void aclsim__vmm_unimport(void *base);
/* vmm-phys.c: the memfd, size and device of a physical handle (for export). */
aclError aclsim__vmm_phys_share(const char *api, void *handle, int *fd, size_t *size,
                                int32_t *device);
/* vmm-phys.c: a new physical handle of dev for an imported memfd of size bytes
 * (takes fd; not charged to dev: the exporter's device holds the memory). */
aclError aclsim__vmm_phys_adopt(const char *api, int fd, size_t size, struct aclsim__device *dev,
                                void **handle);

/* ---- symbol.c ------------------------------------------------------------ */

/* An open-addressing map from addresses (symbols, kernel functions) to
 * descriptors. Lookups are lock-free: slots hold the key beside the value so
 * a probe never dereferences another object's descriptor (which may belong to
 * a shared object being unloaded). Writers hold lock. */
struct aclsim__addr_table {
    size_t mask;                       /* capacity - 1 */
    struct aclsim__addr_slot { _Atomic uintptr_t key; void *_Atomic value; } slots[];
};
struct aclsim__addr_map {
    pthread_mutex_t lock;
    struct aclsim__addr_table *_Atomic table;
    size_t count, tombstones;
    struct aclsim__retired { struct aclsim__retired *next; struct aclsim__addr_table *table; } *retired;
};
bool aclsim__map_insert(struct aclsim__addr_map *m, const void *key, void *value);
void aclsim__map_remove(struct aclsim__addr_map *m, const void *key);
static inline void *aclsim__map_get(struct aclsim__addr_map *m, const void *key)
{
    struct aclsim__addr_table *t = atomic_load_explicit(&m->table, memory_order_acquire);
    if (ACLSIM_UNLIKELY(!t))
        return NULL;
    uintptr_t k = (uintptr_t)key;
    size_t i = (size_t)((k >> 4) * 0x9E3779B97F4A7C15ull) & t->mask;
    for (;;) {
        uintptr_t sk = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
        if (sk == k)
            return atomic_load_explicit(&t->slots[i].value, memory_order_acquire);
        if (sk == 0)
            return NULL;
        i = (i + 1) & t->mask;
    }
}

/* Device variables: the invariants (enforced in symbol.c, where they are
 * spelled out as R1-R3 and I1-I4):
 *  - Registration is by address: one descriptor per variable address. The
 *    macros make each object (program, kernel binary) register its own
 *    descriptor for its own object, whatever names other objects export, so a
 *    binary's variable never aliases the program's. The same descriptor
 *    registered again is counted; another descriptor for a registered address
 *    is refused (a binary that tries is refused by aclrtBinaryLoadFromFile)
 *    and its unregistration touches nothing. Unloading a binary therefore
 *    only ever unregisters the binary's own variables and kernels.
 *  - Instances are created under aclsim__registry_lock, and only while the
 *    caller's current context is still live (its handle is freed at the
 *    start of a device close, before forget): never on a device whose session
 *    is over, never from an old session into a new one (107002 instead).
 *  - aclsim__symbols_forget_device runs after the device's workers stopped
 *    and before its heap is reset or destroyed; it first waits out the
 *    synchronous symbol copies that saw the context live (per-thread slots),
 *    then clears the device's instances under the registry lock.
 *  - A launch creates all instances before its task is submitted, so
 *    ACLSIM_DEV in a running kernel never reads NULL. */
/* Lock of the variable registry; also serialises instance creation. */
extern pthread_mutex_t aclsim__registry_lock;
/* Makes sure every registered variable has an instance on ctx's device
 * (kernels may touch any of them). 207001 when the device is full; 107002
 * when ctx died meanwhile (the caller resolved it in this API call). */
aclError aclsim__symbols_instantiate_all(struct aclsim__context *ctx, const char *api);
/* Forgets dev's instances (their memory goes with the device's heap). Call
 * after dev's workers stopped, before its heap is reset; may wait (for the
 * duration of one memcpy per thread) for synchronous copies in flight. */
void aclsim__symbols_forget_device(struct aclsim__device *dev);

aclsimVar *aclsim__var_of(const void *symbol);
/* Current context (107002; skipped if *ctx is already set), SoC support
 * (207000), lookup (107043), instance on the current device (207001, or
 * 107002 if the context died meanwhile): the shared steps of the symbol
 * functions. */
aclError aclsim__symbol_resolve(const void *symbol, const char *api,
                                struct aclsim__context **ctx, aclsimVar **var, char **inst);
/* Registrations (variables and kernels) this thread dropped for lack of
 * memory so far. Constructors run in the thread that calls dlopen, so a
 * binary whose load raised it is incomplete and is refused; a failure in
 * another thread's dlopen does not count against it. */
extern _Thread_local unsigned long aclsim__tls_registration_failures;
/* The last of them: its message and the code a loader reports for it
 * (200000 out of memory, 100003 a variable or kernel this process cannot
 * register, such as a second descriptor for a registered address). */
extern _Thread_local char aclsim__tls_registration_error[384];
extern _Thread_local aclError aclsim__tls_registration_code;
/* Counts a registration failure, keeps its code and message, logs it. */
void aclsim__registration_failed(aclError code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- binary.c ---- */
/* A binary is refused at load when any of its variables or kernels could not
 * be registered (aclsim__tls_registration_failures grew during its dlopen);
 * dlclose then unregisters what it did register, nothing else. Unload waits
 * for work queued on every device before dlclose (queued launches point into
 * the object); its destructors free its variables' instances under the
 * registry lock, which a device close's forget also takes, so an instance is
 * freed into a live heap or already forgotten. */
/* aclFinalize: unloads the kernel binaries the program did not unload. */
void aclsim__binaries_finalize(void);

/* ---- devctl.c: limits and settings --------------------------------------- */

/* The core limit (aclrtSetDeviceResLimit / aclrtSetStreamResLimit /
 * aclrtUseStreamResInCurrentThread) for a kernel launched now by this thread
 * on dev: the most workers that run its blocks at once; 0 for no limit. */
uint32_t aclsim__kernel_core_limit(const struct aclsim__device *dev);
/* aclFinalize: forgets process-level device resource limits. */
void aclsim__devctl_finalize(void);

/* ---- overflow.c: float overflow status and saturation mode ------------------ */

/* Runs an ACLSIM_TASK_OVERFLOW task of dev. */
void aclsim__execute_overflow(struct aclsim__device *dev, struct aclsim__task *t);
/* Set by the executor around each kernel block: what aclsimReportFloatOverflow
 * and aclsimFloatOverflowMode answer from. */
extern _Thread_local struct aclsim__device *aclsim__tls_kernel_device;
extern _Thread_local uint8_t aclsim__tls_sat_mode;
extern _Thread_local bool aclsim__tls_overflow_check;

/* ---- snapshot.c: process snapshots ------------------------------------------ */

/* Set while the process is locked for a snapshot. Calls that change device
 * state check it first (aclsim__snapshot_check): free when unlocked. */
extern atomic_bool aclsim__snapshot_locked;
aclError aclsim__snapshot_wait(const char *api);
static inline aclError aclsim__snapshot_check(const char *api)
{
    if (ACLSIM_LIKELY(!atomic_load_explicit(&aclsim__snapshot_locked, memory_order_acquire)))
        return ACL_SUCCESS;
    return aclsim__snapshot_wait(api);
}
/* At the entry of an API function that changes device state: returns its
 * error (the function's) if the process is locked for a snapshot and the
 * call may not wait. */
#define ACLSIM_SNAPSHOT_GATE(api)                                                \
    do {                                                                         \
        aclError gate_ = aclsim__snapshot_check(api);                            \
        if (ACLSIM_UNLIKELY(gate_))                                              \
            return gate_;                                                        \
    } while (0)
/* aclFinalize: unlocks, drops the backup, wakes waiting calls. */
void aclsim__snapshot_finalize(void);

/* ---- check.c, check-*.c: checker mode (ACLSIM_CHECK, docs/checker.md) ------
 * Hooks, each one marked "checker hook" where it is called: aclsim__submit
 * (submit.c) and task_release (executor.c) count the queued work on each
 * allocation; the executor runs kernels through aclsim__check_kernel; heap.c
 * lays out guard zones and records what is freed or reset; the public
 * allocation and free functions name their call site; aclsim__check_range
 * and aclsim__check_copy name stale pointers. With checking off each hook
 * costs one predictable branch on aclsim__check_mask (no lock, no
 * allocation). The mask changes only in aclInit, when no device is open. */
enum { ACLSIM_CHECK_OOB = 1u, ACLSIM_CHECK_STALE = 2u, ACLSIM_CHECK_FREE_PENDING = 4u,
       ACLSIM_CHECK_EARLY_HOST = 8u, ACLSIM_CHECK_RACE = 16u, ACLSIM_CHECK_UNINIT = 32u };
/* Exported: the Ascend C layer reads it (include/ascendc/aclsim_check.h). */
extern ACLSIM_API unsigned aclsim__check_mask;
static inline unsigned aclsim__checking(void)
{
    return __atomic_load_n(&aclsim__check_mask, __ATOMIC_RELAXED);
}
#define ACLSIM_CHECKING(bits) ACLSIM_UNLIKELY(aclsim__checking() & (bits))
/* Parses ACLSIM_CHECK's value ("0", "1", or detector names separated by
 * commas) into *mask; false with *bad naming the first bad word (and
 * *unsupported if it names a detector this version does not implement). */
bool aclsim__check_parse(const char *text, unsigned *mask, char *bad, size_t bad_len,
                         bool *unsupported);
/* aclInit: the detectors, and whether the first report ends the process
 * (ACLSIM_CHECK_STOP: aclsim__check_stop_now, abort()). */
void aclsim__check_start(unsigned mask, bool stop);
extern bool aclsim__check_stop;
void aclsim__check_stop_now(void);
void aclsim__check_finalize(void);         /* aclFinalize: forgets everything */
/* The allocation call site, for the next heap allocation by this thread:
 * set by the public allocation functions (ACLSIM_CHECK_SITE), consumed by
 * aclsim__heap_alloc. */
extern _Thread_local const char *aclsim__tls_site_api;
extern _Thread_local const void *aclsim__tls_site;
#define ACLSIM_CHECK_SITE(api)                                                   \
    do {                                                                         \
        if (ACLSIM_UNLIKELY(aclsim__checking())) { /* checker hook */            \
            aclsim__tls_site_api = (api);                                        \
            aclsim__tls_site = __builtin_return_address(0);                      \
        }                                                                        \
    } while (0)
/* heap.c, under h's write lock: guard zone size in front of an allocation
 * aligned to align (0 with checking off), poisoning of a new allocation's
 * guard zones, and the record of allocations that go away (why: "freed",
 * "device reset"). */
size_t aclsim__check_lead(size_t align);
#define ACLSIM_CHECK_TAIL 64u   /* guard bytes at least after an allocation */
void aclsim__check_poison(const struct aclsim__alloc *a);
/* Only a's guard zones: after a report, the allocation's contents stay. */
void aclsim__check_poison_guards(const struct aclsim__alloc *a);
void aclsim__check_forget(struct aclsim__heap *h, const struct aclsim__alloc *a, const char *why);
/* aclrtFree/aclrtFreeHost of p in h: false if p is not the start of a live
 * allocation of kind (the caller reports it). Else verifies its guard zones
 * and frees it, or defers the free while queued work uses it; *err gets
 * ACL_SUCCESS or the report's code (the free is done or deferred all the
 * same). */
bool aclsim__check_free(const char *api, struct aclsim__heap *h, void *p, int kind,
                        aclError *err);
/* Whether a's guard zones are intact; if not, text says which bytes changed
 * (and they are poisoned again). check-kernel.c */
bool aclsim__check_guards(const struct aclsim__alloc *a, char *text, size_t len);
void aclsim__check_forget_after_fork(void);   /* THE FORK RULE */
void aclsim__check_kernel_forget_after_fork(void);   /* (check-kernel.c's part) */
/* check-race.c, from the submit hook (s->lock held): task t, number seq of
 * s, against the unordered accesses of other streams; a race becomes s's
 * fault (507015 at its next synchronize) with the report. */
void aclsim__check_race(struct aclsim__stream *s, const struct aclsim__task *t, uint64_t seq);
void aclsim__check_race_finalize(void);
/* check-uninit.c: fills a new allocation with the unwritten pattern (from
 * aclsim__check_poison); a copy task about to run (executor) or a
 * synchronous copy (its error) reading bytes that still hold it. */
void aclsim__check_fill(const struct aclsim__alloc *a);
void aclsim__check_copy_run(struct aclsim__stream *s, struct aclsim__task *t);
aclError aclsim__check_copy_sync(const char *api, const void *src, size_t n);
/* check-host.c (early-host-access): the SIGSEGV handler (aclInit); the alias
 * of a page-locked address and back; the executor's hook before a task runs
 * (copies through the alias; uninit); whether a task kind runs through the
 * alias. */
void aclsim__check_host_start(void);
/* Protection: a copy or memset (on stream) pending on the pages of
 * [start, end) of the page-locked allocation at buffer. Those of one stream
 * on the same pages share an entry (a slot) with a count:
 * aclsim__check_protect_again counts one more in the entry with that key
 * (trying slot hint first; -1: none, then aclsim__check_protect makes one
 * with the report a host access gets; on: protected now, false: the
 * allocation has other pending users); aclsim__check_unprotect counts one
 * less (the slot, or -1). Every entry of buffer is switched on or off by
 * aclsim__check_protect_buffer. Host code running in the stream's order (a
 * host function, a kernel's block) may touch pages only that stream's tasks
 * use; the handler lends it the pages. Whether any are lent, and protecting
 * lent pages again (under check.c's use lock, after a piece of user code
 * finished). */
int aclsim__check_protect_again(int hint, uintptr_t buffer, uintptr_t start, uintptr_t end,
                                const void *stream);
int aclsim__check_protect(uintptr_t buffer, uintptr_t start, uintptr_t end, const void *stream,
                          bool on, const char *report);
int aclsim__check_unprotect(int hint, uintptr_t buffer, uintptr_t start, uintptr_t end,
                            const void *stream);
void aclsim__check_protect_buffer(uintptr_t buffer, bool on);
bool aclsim__check_lent(void);
void aclsim__check_reprotect(void);
void *aclsim__check_alias(const void *p);
const void *aclsim__check_unalias(const void *p);
void aclsim__check_task_run(struct aclsim__stream *s, struct aclsim__task *t);
bool aclsim__check_protectable(uint8_t kind);
void aclsim__check_race_forget_after_fork(void);
/* Shared by check*.c: names a (device: its logical id, -1 page-locked) with
 * its definition or allocation site (not under a heap lock: dladdr); the
 * device of heap h (-1: page-locked memory); prints a report to stderr. */
void aclsim__check_describe_alloc(const struct aclsim__alloc *a, int device, char *buf,
                                  size_t len);
int aclsim__check_heap_device(const struct aclsim__heap *h);
/* The addresses of allocations that went away since *cursor (a count of
 * them, advanced): at most max. */
size_t aclsim__check_gone_since(uint64_t *cursor, uintptr_t *addrs, size_t max);
/* Whether p was in an allocation that went away: text says which and how. */
bool aclsim__check_gone(const void *p, char *text, size_t len);
void aclsim__check_print(const char *detector, const char *text);
/* The heap of device or page-locked memory w (NULL for other kinds); a task
 * kind's name; a stream as reports name it. */
struct aclsim__heap *aclsim__check_heap_of(struct aclsim__where w);
const char *aclsim__check_task_name(uint8_t kind);
void aclsim__check_stream_name(bool is_default, const void *handle, uint32_t id, char *buf,
                               size_t len);
/* submit.c, s->lock held, t queued: counts t's uses of allocations. */
void aclsim__check_submitted(struct aclsim__stream *s, struct aclsim__task *t);
/* executor.c: t ran or was discarded: its uses end (deferred frees happen). */
void aclsim__check_released(const struct aclsim__task *t);
/* vmm.c, the ranges lock held for writing: api gives back (noun "unmap",
 * verb "unmaps"; "release"; "free") what, whose mapping at base queued work
 * may still use. True if it does: the caller defers the operation until
 * aclsim__vmm_unmap_deferred; *err is the report's code (207002) with
 * free-pending, ACL_SUCCESS without. Whether work still uses the mapping at
 * base (queued since the unmap was deferred: the unmap waits for it too). */
bool aclsim__check_unmap(const char *api, const char *noun, const char *verb, uintptr_t base,
                         const char *what, aclError *err);
bool aclsim__check_still_used(uintptr_t base);
/* vmm.c, for the checker: calls fn(base, size, arg) for each mapping that
 * [p, p + n) overlaps (deferred unmaps included), the ranges lock held for
 * reading; the deferred unmap of the mapping at base, done now unless work
 * uses it again (takes the lock for writing: no checker lock held). */
void aclsim__vmm_each_mapping(const void *p, size_t n,
                              void (*fn)(uintptr_t base, size_t size, void *arg), void *arg);
void aclsim__vmm_unmap_deferred(uintptr_t base);
/* executor.c: runs kernel task t (aclsim__execute_kernel) with the checks:
 * stale arguments (the kernel does not run), guard zones after each block. */
aclError aclsim__check_kernel(struct aclsim__stream *s, struct aclsim__task *t,
                              struct aclsim__fault_detail *d);
/* check-kernel.c: the Ascend C layer's hook (aclsimCheckGm, include/ascendc/
 * aclsim_check.h) records a launch's GM reads and writes; check-race.c gets
 * them when the kernel ends (race between kernels, below). */
struct aclsim__gm_range { uintptr_t lo, hi; uint8_t how; };   /* bytes [lo, hi); 1 read, 2 write */
/* check-race.c, kernel t of s has run (or failed) with the layer's accesses
 * r[0..n): a race with a kernel of another stream that nothing orders and
 * that completed first gives true, with the report in why. */
bool aclsim__check_race_kernel(struct aclsim__stream *s, const struct aclsim__task *t,
                               const struct aclsim__gm_range *r, size_t n, char *why,
                               size_t len);
/* kernel-block.c: the kernel task the calling thread runs a block of (NULL: none). */
const struct aclsim__task *aclsim__running_kernel_task(void);
/* check-uninit.c: the first run of unwritten bytes of [lo, hi) in a (which
 * must be an allocation filled with the pattern: false otherwise). words:
 * only aligned 8-byte words wholly inside [lo, hi) count (copies); else every
 * word [lo, hi) touches (clipped to a) counts (a kernel's small reads). */
bool aclsim__check_unwritten(const struct aclsim__alloc *a, uintptr_t lo, uintptr_t hi,
                             bool words, uintptr_t *first, uintptr_t *last);
/* kernel-block.c: block index of t finished on this thread. */
void aclsim__check_block_done(struct aclsim__device *dev, struct aclsim__task *t,
                              uint32_t index);
/* memory.c: p (in heap memory w) is in no live allocation: appends what the
 * checker knows about the address (the allocation that was there and how it
 * went) to buf. */
void aclsim__check_describe_stale(const void *p, char *buf, size_t len);
/* memory.c, aclsim__check_copy: device memory of a device other than the
 * current one, without peer access (stale: 100000 with a report). */
aclError aclsim__check_devices(const char *api, const void *dst, struct aclsim__where wd,
                               const void *src, struct aclsim__where ws, int kind);

/* ---- kernel.c ------------------------------------------------------------- */
#define ACLSIM_MAX_BLOCKS 65535u   /* numBlocks of one launch: 1..65535, as CANN */
const aclsimKernel *aclsim__kernel_by_function(const void *fn);
/* The kernel of func: an aclrtFuncHandle, or (as CANN allows for mixed
 * builds) the registered kernel function itself; NULL if neither. */
const aclsimKernel *aclsim__kernel_of(const void *func);
/* A launch's attributes (aclrtLaunchKernelCfg), checked and parsed. */
struct aclsim__launch_cfg { uint32_t timeout_us; /* as the task's */ };
aclError aclsim__launch_cfg_parse(const char *api, const aclrtLaunchKernelCfg *cfg,
                                  const aclsimKernel *k, struct aclsim__launch_cfg *out);
/* Byte offsets of k's parameters packed in order with natural alignment (the
 * layout of aclrtLaunchKernel's argsData and aclrtFunctionGetParamInfo);
 * returns the packed size, *max_align the largest alignment. */
size_t aclsim__kernel_layout(const aclsimKernel *k, size_t *offsets, size_t *max_align);
/* Queues a launch of k whose argument block buf (len bytes: one pointer per
 * parameter, then the values the pointers point at) is built; takes buf
 * (freed on failure). Checks numBlocks, the stream and context, instantiates
 * the variables. */
aclError aclsim__launch_built(const aclsimKernel *k, uint32_t numBlocks, aclrtStream stream,
                              const struct aclsim__launch_cfg *c, char *buf, size_t len,
                              const char *api);
/* Allocates an argument block for k with a values area of n bytes (at least
 * one): *values gets its start, aligned for every parameter. */
char *aclsim__args_block(const aclsimKernel *k, size_t n, char **values, size_t *len);
/* AI CPU kernels (aclrtRegisterCpuFunc, binary.c): descriptors whose invoke
 * is aclsim__cpu_invoke and whose one parameter is a struct aclsim__cpu_call:
 * the function (`uint32_t fn(void *args)`, non-zero return: the kernel
 * failed, 507018) and its argument block. */
struct aclsim__cpu_call { uint32_t (*fn)(void *args); void *args; };
void aclsim__cpu_invoke(void *const *args);   /* (kernel-block.c, as aclsim__cpu_block) */
static inline bool aclsim__kernel_is_cpu(const aclsimKernel *k)
{
    return k->invoke == aclsim__cpu_invoke;
}
/* The argument block of a launch of CPU kernel k: the call, then a copy of
 * the n bytes at data (*values: the copy, which the kernel gets). */
char *aclsim__cpu_block(const aclsimKernel *k, const void *data, size_t n, char **values,
                        size_t *len);
/* kargs.c: aclFinalize frees the system-managed argument lists. */
void aclsim__kargs_finalize(void);
/* binary.c: calls the exception callback of the binary that kernel func
 * belongs to (aclrtBinarySetExceptionCallback), if any. No lock held. */
void aclsim__binary_exception(void *func, aclrtExceptionInfo *info);


/* ---- modelri.c: model runtime instances (capture, build, replay) --------- */

/* Streams that are captured into or bound to a model runtime instance, plus
 * streams recording a task update: while 0, submissions pay one load. */
extern atomic_uint aclsim__captures;
/* The capture hook of aclsim__submit: true if the task was taken by a
 * capture (recorded into a model runtime instance, or refused: *err), false
 * if it is to be queued as usual. */
bool aclsim__capture_task(struct aclsim__sref ref, const struct aclsim__task *task,
                          const char *api, uint64_t *seq_out, aclError *err);
#define ACLSIM_CAPTURE_HOOK(ref, task, api, seq_out)                                         \
    do {                                                                                     \
        aclError cap_err_;                                                                   \
        if (ACLSIM_UNLIKELY(atomic_load_explicit(&aclsim__captures, memory_order_relaxed)) && \
            aclsim__capture_task(ref, task, api, seq_out, &cap_err_))                        \
            return cap_err_;                                                                 \
    } while (0)
/* 107027 if s is being captured (synchronizing, querying or destroying it
 * is refused during a capture, as CANN); whether it is, without a report. */
aclError aclsim__capture_refuse_stream(struct aclsim__stream *s, const char *api);
bool aclsim__stream_captured(struct aclsim__stream *s);
/* 107027 if a stream of dev is being captured (device synchronization). */
aclError aclsim__capture_refuse_device(struct aclsim__device *dev, const char *api);
/* 107028 if the latest record of ev (an event.c object) is in a capture. */
aclError aclsim__capture_refuse_event(const void *ev, const char *api);
/* The thread capture mode (aclmdlRICaptureThreadExchangeMode) against the
 * captures of the current context: 107030 for a call CANN calls unsafe
 * (synchronous copies and sets) when the modes forbid it. */
aclError aclsim__capture_mode_check(const char *api);
/* A stream is being destroyed (any path): it leaves its capture (which is
 * invalidated if the stream began it) or its binding. */
void aclsim__capture_stream_gone(struct aclsim__stream *s);
/* aclrtActiveStream (op 0) and aclrtSwitchStream (op 1), arguments checked:
 * a step of the built model both streams are bound to (modelri.c). */
aclError aclsim__modelri_stream_control(int op, aclrtStream target, void *left, int cond,
                                        void *right, int dtype, aclrtStream stream,
                                        const char *api);
/* aclFinalize: destroys every model runtime instance. */
void aclsim__modelri_finalize(void);
/* executor.c: runs task t of s on the calling worker, as the executor
 * would (a conditional task runs its branch this way, modelri.c). */
void aclsim__execute_inline(struct aclsim__stream *s, struct aclsim__task *t);
/* event.c, for modelri.c: an event's object from its task (RECORD: .event;
 * event WAIT/SIGNAL: .sync.obj); whether a task is an event wait or reset;
 * whether the event was made by aclrtCreateEventExWithFlag; its creation
 * flags and handle; a reference; a new record of ev queued on s (the
 * caller holds a reference). */
bool aclsim__is_event_wait(const struct aclsim__task *t);
bool aclsim__is_event_reset(const struct aclsim__task *t);
bool aclsim__event_is_ex(const struct aclsim__event *ev);
uint32_t aclsim__event_flags(const struct aclsim__event *ev);
void *aclsim__event_handle(const struct aclsim__event *ev);
void aclsim__event_ref(struct aclsim__event *ev);
aclError aclsim__event_record_on(struct aclsim__event *ev, struct aclsim__sref s, const char *api);
/* Whether ev's record (wait) flag is fixed to EXTERNAL (graph capture), and
 * the number of its latest record already queued (what a wait waits for). */
bool aclsim__event_external(struct aclsim__event *ev, bool record);
uint64_t aclsim__event_latest(struct aclsim__event *ev);
/* modelri.c: whether s is being captured now. */
bool aclsim__capture_active(struct aclsim__stream *s);

/* ---- tdt-queue.c, tdt-channel.c, tdt-data.c, mbuf.c: data transmission ----
 * Shared queues, tensor channels and shared buffers (docs/tdt.md). Queues and
 * channels belong to a device: its reset destroys them and wakes every thread
 * blocked on them; aclFinalize destroys everything. tdt's one lock is a leaf
 * (taken under rt.lock by these hooks, never the other way round). */
void aclsim__tdt_device_closed(int32_t device);   /* close_device, rt.lock held */
void aclsim__tdt_device_opened(int32_t device);   /* open_device, rt.lock held */
void aclsim__tdt_finalize(void);                  /* aclFinalize, rt.lock held */
/* THE FORK RULE: prepare takes tdt's locks (after rt.lock and the registry
 * lock), parent releases them, the child discards every queue, channel and
 * buffer (nobody in the child waits on them) and makes the locks new. */
void aclsim__tdt_fork_prepare(void);
void aclsim__tdt_fork_parent(void);
void aclsim__tdt_forget_after_fork(void);
void aclsim__mbufs_finalize(void);                /* aclFinalize: frees shared buffers left */

/* ---- after fork(), in the child (THE FORK RULE; one per module) ---------- */
void aclsim__handles_forget_after_fork(bool discard);   /* discard: free ctx/stream/event handles */
void aclsim__errors_forget_after_fork(void);
void aclsim__kernels_forget_after_fork(void);
void aclsim__fibers_forget_after_fork(void);
void aclsim__symbols_forget_after_fork(void);
void aclsim__devices_forget_after_fork(void);            /* contexts, streams, heaps, workers */
void aclsim__context_forget_after_fork(struct aclsim__context *ctx);
void aclsim__contexts_forget_after_fork(void);           /* the context pool */
void aclsim__stream_forget_after_fork(struct aclsim__stream *s);
void aclsim__streams_forget_after_fork(void);            /* the stream pool */
void aclsim__events_forget_after_fork(void);
void aclsim__binaries_forget_after_fork(void);
void aclsim__kargs_forget_after_fork(void);
void aclsim__heap_forget_after_fork(struct aclsim__heap *h);
void aclsim__heap_unshare_after_fork(struct aclsim__heap *h);   /* called by ipc.c's */
void aclsim__memory_forget_after_fork(void);
void aclsim__callbacks_forget_after_fork(void);          /* subscriptions; stream state callbacks' lock */
void aclsim__stream_state_forget_after_fork(void);
void aclsim__ranges_forget_after_fork(void);
void aclsim__devctl_forget_after_fork(void);
void aclsim__initcb_forget_after_fork(void);
void aclsim__snapshot_forget_after_fork(void);
void aclsim__modelri_forget_after_fork(void);            /* before the events and notifies */
void aclsim__trace_forget_after_fork(void);              /* trace.c and prof.c's locks */
void aclsim__prof_forget_after_fork(void);

/* ---- dump.c: the dump API and last-task information (docs/dump.md) ---------- */
/* DUMP HOOK of aclsim__task_failed (failure.c): with exception dump on, writes
 * the failed kernel's argument block and its task's cached info to
 * <base>/extra-info/data-dump/<device>/ (or gives it to acldumpRegCallback's). */
void aclsim__dump_kernel_failed(int32_t device, uint32_t stream, uint32_t task,
                                const char *kernel, const char *why, const void *args,
                                uint32_t args_len);
/* aclInit's config file: its "dump" object, as aclmdlSetDump's (100009 if bad). */
struct cJSON;
aclError aclsim__dump_configure(const struct cJSON *root, const char *path);
/* aclFinalize: forgets the dump configuration and the info cached by
 * aclrtCacheLastTask*Info (task ids restart). */
void aclsim__dump_finalize(void);
void aclsim__dump_forget_after_fork(void);   /* called with prof.c's */
/* prof-tx.c: queues aclprofMarkEx's mark task (used by aclrtProfTrace). */
aclError aclsim__prof_mark(aclrtStream stream, const char *msg, size_t len, const char *api);

#endif /* ACLSIM_INTERNAL_H */
