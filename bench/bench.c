/*
 * aclsim-bench: the performance figures of issues 4 and 17.
 *
 *   aclsim-bench [--quick] [--json FILE] [--only 1,3,6a,...]
 *
 * (and, internally, aclsim-bench --pinned-child CPU: section 8's child)
 *
 * Every figure is the median of repeated samples, with min and max. Every
 * copy is paired with a plain memcpy of the same size between the same two
 * buffers (the device side is the variable's instance, whose address
 * aclrtGetSymbolAddress returns), timed right after it, sample by sample;
 * "vs memcpy" is the copy's speed relative to that memcpy (1.0 = as fast,
 * 0.05 = twenty times slower). Targets are the issue's; missing one is not an
 * error (this is a benchmark, not a test): the exit status is 0 when every
 * call succeeded.
 *
 * `make bench` builds Release and runs it; docs/performance.md explains the
 * figures and the JSON file; bench/compare prints two JSON files side by side.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "harness.h"

#ifndef ACLSIM_BENCH_VERSION
#define ACLSIM_BENCH_VERSION "unknown"
#endif

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define BIG_BYTES ((size_t)256 << 20)
#define KERNEL_BLOCKS_MAX 64

/* Device variables. `big` is bss: it costs nothing until its device instance
 * is made (256 MiB, on first use). */
ACLSIM_DEVICE_VAR(char, big, [256u << 20]);
ACLSIM_DEVICE_VAR(uint32_t, small, [64]);                    /* 256 bytes */
ACLSIM_DEVICE_VAR(uint32_t, hits, [KERNEL_BLOCKS_MAX]);      /* one counter per kernel block */
/* Host thread 0's and 1's symbols: 128 bytes each, so that the two words the
 * threads write are never in the same or adjacent (prefetched-together) lines. */
ACLSIM_DEVICE_VAR(uint32_t, lane0, [32]);
ACLSIM_DEVICE_VAR(uint32_t, lane1, [32]);

/* An almost empty kernel that touches a device variable: each block bumps its
 * own counter (no two blocks write the same word). */
static void touch(void) { ACLSIM_DEV(hits)[aclsimGetBlockIdx()] += 1; }
ACLSIM_KERNEL_REGISTER(touch, void);

/* libc's memcpy through a pointer the compiler cannot see through: a real
 * call with a run-time size, as the runtime makes. */
static void *(*volatile memcpy_fn)(void *, const void *, size_t) = memcpy;

extern char **environ;

static aclrtContext g_ctx;
static aclrtStream g_stream;
/* Largest copy: BIG_BYTES, except for --quick in a sanitizer build, where a
 * 256 MiB copy takes a second (the smoke test there only checks the program
 * runs; its figures mean nothing). */
static size_t g_max_copy = BIG_BYTES;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BENCH_SANITIZED 1
#else
#define BENCH_SANITIZED 0
#endif
static char *g_host;     /* g_max_copy bytes of ordinary (pageable) host memory, pre-faulted */
static char *g_pinned;   /* g_max_copy bytes of page-locked host memory (aclrtMallocHost) */
static char *g_big;      /* big's instance on device 0 */
static char *g_small;    /* small's instance on device 0 */

static void fail_call(const char *what, aclError rc, int line)
{
    const char *msg = aclGetRecentErrMsg();
    fprintf(stderr, "aclsim-bench: line %d: %s failed with %d: %s\n", line, what, (int)rc,
            msg ? msg : "(no message)");
    exit(2);
}
#define CHECK(call)                                                                \
    do {                                                                           \
        aclError rc_ = (call);                                                     \
        if (__builtin_expect(rc_ != ACL_SUCCESS, 0))                               \
            fail_call(#call, rc_, __LINE__);                                       \
    } while (0)

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "aclsim-bench: out of memory\n");
        exit(2);
    }
    return p;
}

static const char *size_name(size_t n, char *buf, size_t len)
{
    if (n >= MiB && n % MiB == 0)
        snprintf(buf, len, "%zu MiB", n / MiB);
    else if (n >= KiB && n % KiB == 0)
        snprintf(buf, len, "%zu KiB", n / KiB);
    else
        snprintf(buf, len, "%zu B", n);
    return buf;
}

static const char *size_id(size_t n, char *buf, size_t len)
{
    if (n >= MiB && n % MiB == 0)
        snprintf(buf, len, "%zuMiB", n / MiB);
    else if (n >= KiB && n % KiB == 0)
        snprintf(buf, len, "%zuKiB", n / KiB);
    else
        snprintf(buf, len, "%zuB", n);
    return buf;
}

/* ---- copies ------------------------------------------------------------------ */

struct copy_op {
    const void *symbol;
    char *dev;          /* the symbol's instance */
    char *host;         /* host side: g_host or g_pinned */
    size_t n;
};

static uint64_t run_to_sync(void *p, uint64_t iters)
{
    struct copy_op *c = p;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++)
        CHECK(aclrtMemcpyToSymbol(c->symbol, c->host, c->n, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    return bench_now_ns() - t0;
}

static uint64_t run_from_sync(void *p, uint64_t iters)
{
    struct copy_op *c = p;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++)
        CHECK(aclrtMemcpyFromSymbol(c->host, c->n, c->symbol, c->n, 0,
                                    ACL_MEMCPY_DEVICE_TO_HOST));
    return bench_now_ns() - t0;
}

/* One aclrtMemcpyToSymbolAsync (page-locked source) + aclrtSynchronizeStream. */
static uint64_t run_to_async_sync(void *p, uint64_t iters)
{
    struct copy_op *c = p;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        CHECK(aclrtMemcpyToSymbolAsync(c->symbol, c->host, c->n, 0, ACL_MEMCPY_HOST_TO_DEVICE,
                                       g_stream));
        CHECK(aclrtSynchronizeStream(g_stream));
    }
    return bench_now_ns() - t0;
}

static uint64_t run_memcpy_to(void *p, uint64_t iters)
{
    struct copy_op *c = p;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        memcpy_fn(c->dev, c->host, c->n);
        BENCH_BARRIER();
    }
    return bench_now_ns() - t0;
}

static uint64_t run_memcpy_from(void *p, uint64_t iters)
{
    struct copy_op *c = p;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        memcpy_fn(c->host, c->dev, c->n);
        BENCH_BARRIER();
    }
    return bench_now_ns() - t0;
}

static struct copy_op copy_of(size_t n, char *host)
{
    struct copy_op c = {.n = n, .host = host};
    if (n <= sizeof small) {
        c.symbol = small;
        c.dev = g_small;
    } else {
        c.symbol = big;
        c.dev = g_big;
    }
    return c;
}

/* Measures op against its memcpy reference; ns/op, or GB/s when gbps. */
static struct bench_figure *copy_figure(const char *id, const char *group, const char *name,
                                        bench_fn op, bench_fn ref, struct copy_op *c, int reps,
                                        bool gbps)
{
    struct bench_stats a, b, vs;
    bench_measure_pair(op, c, ref, c, reps, &a, &b, &vs);
    if (gbps) {
        a = bench_to_gbps(a, (double)c->n);
        b = bench_to_gbps(b, (double)c->n);
    }
    struct bench_figure *f = bench_add(id, group, name, gbps ? "GB/s" : "ns/op", a);
    f->bytes = (double)c->n;
    bench_set_ref(f, b, vs);
    return f;
}

static int reps_for(size_t n)
{
    return n >= 16 * MiB ? bench_cfg.reps_large : bench_cfg.reps_small;
}

/* 1. Synchronous copies to and from a symbol. */
static void bench_sync_copies(void)
{
    bench_section("1. aclrtMemcpyToSymbol / aclrtMemcpyFromSymbol, synchronous, pageable host memory");
    bench_print_table_header();
    const size_t sizes[] = {4, 256, 64 * KiB, 64 * MiB < g_max_copy ? 64 * MiB : g_max_copy};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i];
        bool gbps = i == 3;
        char sn[32], si[32], id[64], name[96];
        size_name(n, sn, sizeof sn);
        size_id(n, si, sizeof si);
        for (int dir = 0; dir < 2; dir++) {
            struct copy_op c = copy_of(n, g_host);
            snprintf(id, sizeof id, "sync_%s_symbol_%s", dir ? "from" : "to", si);
            snprintf(name, sizeof name, "%s %s", dir ? "FromSymbol" : "ToSymbol", sn);
            struct bench_figure *f =
                copy_figure(id, "sync_copy", name, dir ? run_from_sync : run_to_sync,
                            dir ? run_memcpy_from : run_memcpy_to, &c, reps_for(n), gbps);
            if (n == 4)
                bench_set_target(f, BENCH_AT_MOST, 50, false, "<= 50 ns");
            else if (gbps)
                bench_set_target(f, BENCH_AT_LEAST, 0.95, true, ">= 0.95x memcpy");
            bench_print_figure(f);
        }
    }
}

/* 2. aclrtGetSymbolAddress / aclrtGetSymbolSize. */
static uint64_t run_get_address(void *p, uint64_t iters)
{
    (void)p;
    void *addr;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        CHECK(aclrtGetSymbolAddress(small, &addr));
        BENCH_BARRIER();
    }
    return bench_now_ns() - t0;
}

static uint64_t run_get_size(void *p, uint64_t iters)
{
    (void)p;
    size_t size;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        CHECK(aclrtGetSymbolSize(small, &size));
        BENCH_BARRIER();
    }
    return bench_now_ns() - t0;
}

static void bench_symbol_queries(void)
{
    bench_section("2. aclrtGetSymbolAddress / aclrtGetSymbolSize");
    bench_print_table_header();
    struct bench_figure *f;
    f = bench_add("get_symbol_address", "query", "aclrtGetSymbolAddress", "ns/op",
                  bench_measure(run_get_address, NULL, bench_calibrate(run_get_address, NULL),
                                bench_cfg.reps_small));
    bench_set_target(f, BENCH_AT_MOST, 20, false, "<= 20 ns");
    bench_print_figure(f);
    f = bench_add("get_symbol_size", "query", "aclrtGetSymbolSize", "ns/op",
                  bench_measure(run_get_size, NULL, bench_calibrate(run_get_size, NULL),
                                bench_cfg.reps_small));
    bench_set_target(f, BENCH_AT_MOST, 20, false, "<= 20 ns");
    bench_print_figure(f);
}

/* 3. Queued async copies, and async round trips. */

/* The queued-copy figure: a run is QUEUED async 4 B copies from
 * page-locked memory and one synchronize; QUEUED_RUNS runs (after a warm-up)
 * give min/median/max. Per run, ns per copy: tot (enqueue + drain), enq (the
 * enqueue calls alone), ref (a plain 4 B memcpy, timed right after), vs
 * (ref / tot). */
enum { QUEUED = 10000, QUEUED_RUNS = 5 };

static void queued_runs(double *tot, double *enq, double *ref, double *vs)
{
    for (int r = -1; r < QUEUED_RUNS; r++) {   /* r == -1: warm-up */
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < QUEUED; i++)
            CHECK(aclrtMemcpyToSymbolAsync(small, g_pinned, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE,
                                           g_stream));
        uint64_t t1 = bench_now_ns();
        CHECK(aclrtSynchronizeStream(g_stream));
        uint64_t t2 = bench_now_ns();
        for (int i = 0; i < QUEUED; i++) {
            memcpy_fn(g_small, g_pinned, 4);
            BENCH_BARRIER();
        }
        uint64_t t3 = bench_now_ns();
        if (r >= 0) {
            tot[r] = (double)(t2 - t0) / QUEUED;
            enq[r] = (double)(t1 - t0) / QUEUED;
            ref[r] = (double)(t3 - t2) / QUEUED;
            vs[r] = ref[r] / tot[r];
        }
    }
}

/* Adds the queued-copy figures (id_prefix "" or "pinned1_") from queued_runs'
 * samples; the target applies to the whole figure. */
static void queued_figures(const char *id_prefix, const char *name_prefix, double *tot,
                           double *enq, double *ref, double *vs, bool target)
{
    char id[64], name[96];
    snprintf(id, sizeof id, "%squeued_async_4B", id_prefix);
    snprintf(name, sizeof name, "%s10,000 queued 4 B + 1 sync", name_prefix);
    struct bench_figure *f = bench_add(id, "async", name, "ns/op", bench_stats_of(tot, QUEUED_RUNS));
    f->bytes = 4;
    bench_set_ref(f, bench_stats_of(ref, QUEUED_RUNS), bench_stats_of(vs, QUEUED_RUNS));
    if (target) {
        bench_set_target(f, BENCH_AT_MOST, 100, false, "<= 100 ns");
        bench_set_target_max(f, 150, "<= 100 ns, max <= 150");
    }
    bench_print_figure(f);
    snprintf(id, sizeof id, "%squeued_async_4B_enqueue_part", id_prefix);
    f = bench_add(id, "async", "  of which: the 10,000 enqueue calls", "ns/op",
                  bench_stats_of(enq, QUEUED_RUNS));
    bench_print_figure(f);
}

static void bench_async_small(void)
{
    bench_section("3. aclrtMemcpyToSymbolAsync 4 B from page-locked memory");
    bench_print_table_header();
    double tot[QUEUED_RUNS], enq[QUEUED_RUNS], ref[QUEUED_RUNS], vs[QUEUED_RUNS];
    queued_runs(tot, enq, ref, vs);
    queued_figures("", "", tot, enq, ref, vs, true);

    struct copy_op c = copy_of(4, g_pinned);
    struct bench_figure *f =
        copy_figure("async_round_trip_4B", "async", "1 async 4 B + sync, round trip",
                    run_to_async_sync, run_memcpy_to, &c, bench_cfg.reps_small, false);
    bench_set_target(f, BENCH_AT_MOST, 5000, false, "<= 5 us");
    bench_print_figure(f);
}

/* The two-thread memcpy reference: two threads made once, each copying its
 * half of the same buffers when told to; the timing thread waits for both on
 * a condition variable (as a host thread waits in aclrtSynchronizeStream
 * while the two workers copy). */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    uint64_t round;     /* bumped to start a copy */
    int pending;        /* halves not yet copied in this round */
    bool quit;
    char *dst;
    const char *src;
    size_t n;
    pthread_t tid[2];
    bool started;
} pair = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .go = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static void *pair_main(void *p)
{
    const size_t which = (size_t)(uintptr_t)p;
    uint64_t seen = 0;
    pthread_mutex_lock(&pair.lock);
    for (;;) {
        while (pair.round == seen && !pair.quit)
            pthread_cond_wait(&pair.go, &pair.lock);
        if (pair.quit)
            break;
        seen = pair.round;
        size_t half = pair.n / 2, off = which ? half : 0, len = which ? pair.n - half : half;
        char *dst = pair.dst + off;
        const char *src = pair.src + off;
        pthread_mutex_unlock(&pair.lock);
        memcpy_fn(dst, src, len);
        BENCH_BARRIER();
        pthread_mutex_lock(&pair.lock);
        if (--pair.pending == 0)
            pthread_cond_signal(&pair.done);
    }
    pthread_mutex_unlock(&pair.lock);
    return NULL;
}

static void pair_start(void)
{
    for (uintptr_t i = 0; i < 2; i++)
        if (pthread_create(&pair.tid[i], NULL, pair_main, (void *)i) != 0) {
            fprintf(stderr, "aclsim-bench: pthread_create failed\n");
            exit(2);
        }
    pair.started = true;
}

static void pair_stop(void)
{
    if (!pair.started)
        return;
    pthread_mutex_lock(&pair.lock);
    pair.quit = true;
    pthread_cond_broadcast(&pair.go);
    pthread_mutex_unlock(&pair.lock);
    for (int i = 0; i < 2; i++)
        pthread_join(pair.tid[i], NULL);
    pair.started = false;
}

static uint64_t run_memcpy_2threads(void *p, uint64_t iters)
{
    struct copy_op *c = p;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        pthread_mutex_lock(&pair.lock);
        pair.dst = c->dev;
        pair.src = c->host;
        pair.n = c->n;
        pair.pending = 2;
        pair.round++;
        pthread_cond_broadcast(&pair.go);
        while (pair.pending > 0)
            pthread_cond_wait(&pair.done, &pair.lock);
        pthread_mutex_unlock(&pair.lock);
    }
    return bench_now_ns() - t0;
}

/* 4. Large async copies from page-locked memory, each timed in turn with a
 * one-thread and a two-thread memcpy of the same buffers in every sample. */
static void bench_async_large_size(size_t n)
{
    struct copy_op c = copy_of(n, g_pinned);
    int reps = bench_cfg.reps_large;
    double *v[5];
    for (int i = 0; i < 5; i++)
        v[i] = xcalloc((size_t)reps, sizeof *v[i]);
    for (int r = -1; r < reps; r++) {   /* r == -1: warm-up */
        double op = (double)run_to_async_sync(&c, 1), one = (double)run_memcpy_to(&c, 1),
               two = (double)run_memcpy_2threads(&c, 1);
        if (r >= 0) {
            v[0][r] = op;
            v[1][r] = one;
            v[2][r] = two;
            v[3][r] = one / op;   /* speed relative to 1-thread memcpy */
            v[4][r] = two / op;   /* speed relative to 2-thread memcpy */
        }
    }
    struct bench_stats op = bench_stats_of(v[0], reps), one = bench_stats_of(v[1], reps),
                       two = bench_stats_of(v[2], reps), vs1 = bench_stats_of(v[3], reps),
                       vs2 = bench_stats_of(v[4], reps);
    char sn[32], si[32], id[64], name[96];
    size_name(c.n, sn, sizeof sn);
    size_id(c.n, si, sizeof si);
    snprintf(id, sizeof id, "async_pinned_to_symbol_%s", si);
    snprintf(name, sizeof name, "ToSymbolAsync %s + sync", sn);
    struct bench_figure *f = bench_add(id, "async", name, "GB/s", bench_to_gbps(op, (double)c.n));
    f->bytes = (double)c.n;
    bench_set_ref(f, bench_to_gbps(one, (double)c.n), vs1);
    bench_print_figure(f);

    snprintf(id, sizeof id, "memcpy_2threads_%s", si);
    snprintf(name, sizeof name, "memcpy %s on 2 threads (the reference)", sn);
    f = bench_add(id, "async", name, "GB/s", bench_to_gbps(two, (double)c.n));
    f->bytes = (double)c.n;
    bench_note(f, "%.2fx the 1-thread memcpy (ratio of medians)", one.median / two.median);
    bench_print_figure(f);

    snprintf(id, sizeof id, "async_pinned_vs_memcpy2_%s", si);
    snprintf(name, sizeof name, "ToSymbolAsync %s vs 2-thread memcpy", sn);
    f = bench_add(id, "async", name, "x", vs2);
    bench_set_better(f, BENCH_HIGHER_BETTER);
    bench_set_target(f, BENCH_AT_LEAST, 0.9, false, ">= 0.9x");
    bench_note(f, "per-sample speed ratio, 2-thread memcpy time / async copy time");
    bench_print_figure(f);
    for (int i = 0; i < 5; i++)
        free(v[i]);
}

static void bench_async_large(void)
{
    bench_section("4. aclrtMemcpyToSymbolAsync from page-locked memory + synchronize, large");
    printf("(vs memcpy: 1-thread memcpy; the 2-thread memcpy is the reference of the ratio rows)\n");
    bench_print_table_header();
    pair_start();
    const size_t sizes[] = {16 * MiB, 64 * MiB, 256 * MiB};
    bool any = false;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (sizes[i] <= g_max_copy) {
            bench_async_large_size(sizes[i]);
            any = true;
        }
    if (!any)   /* sanitizer --quick: buffers are smaller */
        bench_async_large_size(g_max_copy);
    pair_stop();
}

/* 5. Kernel launch + synchronize. */
struct kernel_op {
    aclrtFuncHandle func;
    uint32_t blocks;
    uint64_t launches;
};

static uint64_t run_kernel(void *p, uint64_t iters)
{
    struct kernel_op *k = p;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        CHECK(aclrtLaunchKernelWithArgsArray(k->func, k->blocks, g_stream, NULL, NULL));
        CHECK(aclrtSynchronizeStream(g_stream));
    }
    k->launches += iters;
    return bench_now_ns() - t0;
}

static void bench_kernels(void)
{
    bench_section("5. kernel launch + synchronize (kernel bumps a device variable)");
    bench_print_table_header();
    aclrtFuncHandle func;
    CHECK(aclrtGetFuncBySymbol((const void *)&touch, &func));
    static const uint32_t zero[KERNEL_BLOCKS_MAX];
    CHECK(aclrtMemcpyToSymbol(hits, zero, sizeof zero, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    struct kernel_op one = {func, 1, 0}, many = {func, KERNEL_BLOCKS_MAX, 0};
    struct bench_figure *f =
        bench_add("kernel_launch_sync_1block", "kernel", "launch + sync, 1 block", "ns/op",
                  bench_measure(run_kernel, &one, bench_calibrate(run_kernel, &one),
                                bench_cfg.reps_small));
    bench_set_target(f, BENCH_AT_MOST, 5000, false, "<= 5 us");
    bench_print_figure(f);
    f = bench_add("kernel_launch_sync_64blocks", "kernel", "launch + sync, 64 blocks", "ns/op",
                  bench_measure(run_kernel, &many, bench_calibrate(run_kernel, &many),
                                bench_cfg.reps_small));
    bench_set_target(f, BENCH_AT_MOST, 20000, false, "<= 20 us");
    bench_print_figure(f);

    /* The kernel really ran: block b was run by every launch with more than b blocks. */
    uint32_t got[KERNEL_BLOCKS_MAX];
    CHECK(aclrtMemcpyFromSymbol(got, sizeof got, hits, sizeof got, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    for (uint32_t b = 0; b < KERNEL_BLOCKS_MAX; b++) {
        uint64_t want = many.launches + (b == 0 ? one.launches : 0);
        if (got[b] != (uint32_t)want) {
            fprintf(stderr, "aclsim-bench: kernel block %u ran %u times, expected %llu\n", b,
                    got[b], (unsigned long long)want);
            exit(3);
        }
    }
}

/* ---- 6. scaling ----------------------------------------------------------------- */

static void bench_sweep(void)
{
    bench_section("6a. copy size sweep (ns/op below 1 MiB, GB/s from 1 MiB)");
    bench_print_table_header();
    static const struct {
        const char *id, *name;
        bench_fn op, ref;
        bool pinned;
    } series[] = {
        {"sweep_to_sync", "ToSymbol", run_to_sync, run_memcpy_to, false},
        {"sweep_from_sync", "FromSymbol", run_from_sync, run_memcpy_from, false},
        {"sweep_to_async_pinned", "ToSymbolAsync pinned + sync", run_to_async_sync,
         run_memcpy_to, true},
    };
    for (size_t s = 0; s < sizeof series / sizeof *series; s++)
        for (size_t n = 4; n <= g_max_copy; n *= 4) {
            char sn[32], si[32], id[64], name[96];
            snprintf(id, sizeof id, "%s_%s", series[s].id, size_id(n, si, sizeof si));
            snprintf(name, sizeof name, "%s %s", series[s].name, size_name(n, sn, sizeof sn));
            struct copy_op c = copy_of(n, series[s].pinned ? g_pinned : g_host);
            int reps = n >= 16 * MiB ? bench_cfg.reps_sweep_large : bench_cfg.reps_small;
            bench_print_figure(copy_figure(id, "sweep", name, series[s].op, series[s].ref, &c, reps,
                                    n >= MiB));
        }
}

/* Extra variables registered at run time: int scalars, 4 bytes apart (what a
 * program with many `__gm__ int` flags has). */
static aclsimVar *extra_vars;
static int *extra_objs;
static size_t extra_count;

static void register_extra(size_t upto)
{
    for (; extra_count < upto; extra_count++) {
        aclsimVar *v = &extra_vars[extra_count];
        v->symbol = &extra_objs[extra_count];
        v->size = sizeof(int);
        v->align = _Alignof(int);
        v->name = "bench_extra";
        v->file = __FILE__;
        v->line = __LINE__;
        v->instance[ACLSIM_HOST_SLOT] = &extra_objs[extra_count];
        aclsimRegisterVar(v);
    }
}

struct lookup_op {
    const void *symbols[64];
    unsigned n;
};

static uint64_t run_lookup(void *p, uint64_t iters)
{
    struct lookup_op *l = p;
    size_t size;
    unsigned j = 0;
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        CHECK(aclrtGetSymbolSize(l->symbols[j], &size));
        BENCH_BARRIER();
        if (++j == l->n)
            j = 0;
    }
    return bench_now_ns() - t0;
}

static void bench_registered(void)
{
    bench_section("6b. aclrtGetSymbolSize with many registered variables (64 of them in turn)");
    bench_print_table_header();
    /* --quick stops at 10,000: unregistering costs O(n) per variable in this
     * version (n^2 in all), seconds for 100,000 in a sanitizer build. */
    const size_t counts[] = {10, 1000, bench_cfg.quick ? 10000 : 100000};
    const size_t max = counts[sizeof counts / sizeof *counts - 1];
    extra_vars = xcalloc(max, sizeof *extra_vars);
    extra_objs = xcalloc(max, sizeof *extra_objs);
    double first = NAN, last = NAN;
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        size_t n = counts[i];
        uint64_t t0 = bench_now_ns();
        size_t before = extra_count;
        register_extra(n);
        double reg_ns = (double)(bench_now_ns() - t0) / (double)(n - before);
        struct lookup_op l = {.n = n < 64 ? (unsigned)n : 64};
        for (unsigned j = 0; j < l.n; j++)
            l.symbols[j] = extra_vars[(size_t)j * n / l.n].symbol;
        char id[64], name[96];
        snprintf(id, sizeof id, "lookup_registered_%zu", n);
        snprintf(name, sizeof name, "GetSymbolSize, %zu extra vars registered", n);
        struct bench_figure *f = bench_add(
            id, "scaling_variables", name, "ns/op",
            bench_measure(run_lookup, &l, bench_calibrate(run_lookup, &l), bench_cfg.reps_small));
        bench_note(f, "aclsimRegisterVar: %.0f ns per variable", reg_ns);
        bench_print_figure(f);
        if (i == 0)
            first = f->s.median;
        last = f->s.median;
    }
    char id[64], name[96];
    struct bench_stats ratio = {last / first, NAN, NAN, 1};
    snprintf(id, sizeof id, "lookup_ratio_%zu_vs_10", max);
    snprintf(name, sizeof name, "lookup cost, %zu vs 10 registered", max);
    struct bench_figure *f = bench_add(id, "scaling_variables", name, "x", ratio);
    bench_set_better(f, BENCH_LOWER_BETTER);
    bench_set_target(f, BENCH_AT_MOST, 1.5, false, "<= 1.5x");
    bench_print_figure(f);

    /* Newest first, as destructors run at exit and at dlclose. */
    uint64_t t0 = bench_now_ns();
    for (size_t i = extra_count; i-- > 0;)
        aclsimUnregisterVar(&extra_vars[i]);
    struct bench_stats u = {(double)(bench_now_ns() - t0) / 1e6, NAN, NAN, 1};
    snprintf(id, sizeof id, "unregister_%zu", max);
    snprintf(name, sizeof name, "unregister all %zu, newest first (once)", max);
    f = bench_add(id, "scaling_variables", name, "ms", u);
    bench_print_figure(f);
    extra_count = 0;
    free(extra_vars);
    free(extra_objs);
}

static void bench_streams(uint32_t nstreams)
{
    int reps = bench_cfg.reps_small;
    uint32_t ops = 10000;
    double rss0 = bench_rss_mib();
    int threads0 = bench_thread_count();
    aclrtStream *streams = xcalloc(nstreams, sizeof *streams);
    uint64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < nstreams; i++)
        CHECK(aclrtCreateStream(&streams[i]));
    double create_ns = (double)(bench_now_ns() - t0) / nstreams;
    double *enq = xcalloc((size_t)reps, sizeof *enq), *drain = xcalloc((size_t)reps, sizeof *drain),
           *ref = xcalloc((size_t)reps, sizeof *ref), *vs = xcalloc((size_t)reps, sizeof *vs);
    for (int r = -1; r < reps; r++) {   /* r == -1: warm-up */
        uint64_t a = bench_now_ns();
        for (uint32_t i = 0; i < ops; i++) {
            uint32_t s = i % nstreams;   /* stream s owns bytes s*64 .. s*64+3 of big */
            CHECK(aclrtMemcpyToSymbolAsync(big, g_pinned + (size_t)s * 64, 4, (size_t)s * 64,
                                           ACL_MEMCPY_HOST_TO_DEVICE, streams[s]));
        }
        uint64_t b = bench_now_ns();
        for (uint32_t s = 0; s < nstreams; s++)
            CHECK(aclrtSynchronizeStream(streams[s]));
        uint64_t c = bench_now_ns();
        for (uint32_t i = 0; i < ops; i++) {
            uint32_t s = i % nstreams;
            memcpy_fn(g_big + (size_t)s * 64, g_pinned + (size_t)s * 64, 4);
            BENCH_BARRIER();
        }
        uint64_t d = bench_now_ns();
        if (r >= 0) {
            enq[r] = (double)(b - a) / ops;
            drain[r] = (double)(c - b) / ops;
            ref[r] = (double)(d - c) / ops;
            vs[r] = ref[r] / enq[r];
        }
    }
    double rss1 = bench_rss_mib();
    int threads1 = bench_thread_count();
    for (uint32_t i = 0; i < nstreams; i++)
        CHECK(aclrtDestroyStream(streams[i]));
    free(streams);

    char id[64], name[96];
    snprintf(id, sizeof id, "streams_%u_enqueue", nstreams);
    snprintf(name, sizeof name, "%u stream%s: enqueue 4 B async, round robin", nstreams,
             nstreams == 1 ? "" : "s");
    struct bench_figure *f = bench_add(id, "scaling_streams", name, "ns/op", bench_stats_of(enq, reps));
    f->bytes = 4;
    bench_set_ref(f, bench_stats_of(ref, reps), bench_stats_of(vs, reps));
    struct bench_stats d = bench_stats_of(drain, reps);
    bench_note(f, "then synchronizing every stream: %.0f ns/op more (median); "
               "aclrtCreateStream %.0f ns", d.median, create_ns);
    bench_print_figure(f);

    snprintf(id, sizeof id, "streams_%u_rss_growth", nstreams);
    snprintf(name, sizeof name, "%u stream%s: RSS growth", nstreams, nstreams == 1 ? "" : "s");
    struct bench_stats rs = {rss1 - rss0, NAN, NAN, 1};
    f = bench_add(id, "scaling_streams", name, "MiB", rs);
    if (nstreams == 1000)
        bench_set_target(f, BENCH_AT_MOST, 16, false, "< 16 MiB");
    bench_print_figure(f);

    snprintf(id, sizeof id, "streams_%u_thread_growth", nstreams);
    snprintf(name, sizeof name, "%u stream%s: new threads", nstreams, nstreams == 1 ? "" : "s");
    struct bench_stats ts = {(double)(threads1 - threads0), NAN, NAN, 1};
    f = bench_add(id, "scaling_streams", name, "threads", ts);
    bench_note(f, "%d threads in the process (/proc/self/task)", threads1);
    if (nstreams == 1000)
        bench_set_target(f, BENCH_AT_MOST, 0, false, "0 (no thread per stream)");
    bench_print_figure(f);
    free(enq);
    free(drain);
    free(ref);
    free(vs);
}

/* Host threads copying 4 B synchronously, each to its own symbol. */
struct lane {
    _Alignas(128) const void *symbol;
    char *dev;
    uint32_t src[16];
    uint64_t ops;
    bool plain_memcpy;
    pthread_barrier_t *start;
    uint64_t t0, t1;
};

static void *lane_main(void *p)
{
    struct lane *l = p;
    CHECK(aclrtSetCurrentContext(g_ctx));
    pthread_barrier_wait(l->start);
    l->t0 = bench_now_ns();
    if (l->plain_memcpy) {
        for (uint64_t i = 0; i < l->ops; i++) {
            memcpy_fn(l->dev, l->src, 4);
            BENCH_BARRIER();
        }
    } else {
        for (uint64_t i = 0; i < l->ops; i++)
            CHECK(aclrtMemcpyToSymbol(l->symbol, l->src, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    }
    l->t1 = bench_now_ns();
    return NULL;
}

/* Aggregate ops/s of nthreads threads doing ops each (timed from the first
 * thread's start to the last one's end). */
static double run_lanes(int nthreads, bool plain, uint64_t ops, char *const dev[2])
{
    struct lane lanes[2];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)nthreads);
    pthread_t tid[2];
    for (int i = 0; i < nthreads; i++) {
        memset(&lanes[i], 0, sizeof lanes[i]);
        lanes[i].symbol = i ? (const void *)lane1 : (const void *)lane0;
        lanes[i].dev = dev[i];
        lanes[i].ops = ops;
        lanes[i].plain_memcpy = plain;
        lanes[i].start = &start;
        if (pthread_create(&tid[i], NULL, lane_main, &lanes[i]) != 0) {
            fprintf(stderr, "aclsim-bench: pthread_create failed\n");
            exit(2);
        }
    }
    uint64_t first = UINT64_MAX, end = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(tid[i], NULL);
        if (lanes[i].t0 < first)
            first = lanes[i].t0;
        if (lanes[i].t1 > end)
            end = lanes[i].t1;
    }
    pthread_barrier_destroy(&start);
    return (double)ops * nthreads / ((double)(end - first) / 1e9);
}

/* 7. Model runtime instances: the per-task cost of replaying a captured
 * 1,000-task sequence (4 B async copies from page-locked memory) against
 * issuing the same tasks directly, both including the run and one
 * synchronize. The ratio is the figure the feature exists for. */
static void bench_modelri(void)
{
    bench_section("7. model runtime instance: replay of 1,000 captured 4 B copies vs issuing them");
    bench_print_table_header();
    enum { TASKS = 1000 };
    void *dev;
    CHECK(aclrtMalloc(&dev, 4 * TASKS, ACL_MEM_MALLOC_HUGE_FIRST));
    aclmdlRI ri;
    CHECK(aclmdlRICaptureBegin(g_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    for (int i = 0; i < TASKS; i++)
        CHECK(aclrtMemcpyAsync((char *)dev + 4 * i, 4, g_pinned + 4 * i, 4,
                               ACL_MEMCPY_HOST_TO_DEVICE, g_stream));
    CHECK(aclmdlRICaptureEnd(g_stream, &ri));
    int reps = bench_cfg.reps_small;
    double *direct = xcalloc((size_t)reps, sizeof *direct),
           *replay = xcalloc((size_t)reps, sizeof *replay),
           *ratio = xcalloc((size_t)reps, sizeof *ratio);
    for (int r = -1; r < reps; r++) {   /* r == -1: warm-up */
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < TASKS; i++)
            CHECK(aclrtMemcpyAsync((char *)dev + 4 * i, 4, g_pinned + 4 * i, 4,
                                   ACL_MEMCPY_HOST_TO_DEVICE, g_stream));
        CHECK(aclrtSynchronizeStream(g_stream));
        uint64_t t1 = bench_now_ns();
        CHECK(aclmdlRIExecuteAsync(ri, g_stream));
        CHECK(aclrtSynchronizeStream(g_stream));
        uint64_t t2 = bench_now_ns();
        if (r >= 0) {
            direct[r] = (double)(t1 - t0) / TASKS;
            replay[r] = (double)(t2 - t1) / TASKS;
            ratio[r] = replay[r] / direct[r];
        }
    }
    struct bench_figure *f = bench_add("modelri_direct_per_task", "modelri",
                                       "1,000 async 4 B copies issued + sync, per task", "ns/op",
                                       bench_stats_of(direct, reps));
    bench_print_figure(f);
    f = bench_add("modelri_replay_per_task", "modelri",
                  "the same, captured and replayed + sync, per task", "ns/op",
                  bench_stats_of(replay, reps));
    bench_print_figure(f);
    f = bench_add("modelri_replay_ratio", "modelri", "replay / direct cost per task", "x",
                  bench_stats_of(ratio, reps));
    bench_set_better(f, BENCH_LOWER_BETTER);
    bench_set_target(f, BENCH_AT_MOST, 0.3333, false, "<= 1/3");
    bench_print_figure(f);
    CHECK(aclmdlRIDestroy(ri));
    CHECK(aclrtFree(dev));
    free(direct);
    free(replay);
    free(ratio);
}

static void bench_host_threads(void)
{
    bench_section("6d. host threads copying 4 B synchronously, each to its own symbol");
    bench_print_table_header();
    char *dev[2];
    void *addr;
    CHECK(aclrtGetSymbolAddress(lane0, &addr));
    dev[0] = addr;
    CHECK(aclrtGetSymbolAddress(lane1, &addr));
    dev[1] = addr;
    int reps = bench_cfg.reps_small;
    double *v[8];
    for (int i = 0; i < 8; i++)
        v[i] = xcalloc((size_t)reps, sizeof *v[i]);
    uint64_t ops = bench_cfg.thread_ops;
    /* Interleaved, so that both sides of each ratio see the same machine load. */
    for (int r = -1; r < reps; r++) {   /* r == -1: warm-up */
        double a = run_lanes(1, false, ops, dev), b = run_lanes(2, false, ops, dev);
        double c = run_lanes(1, true, ops * 4, dev), d = run_lanes(2, true, ops * 4, dev);
        if (r >= 0) {
            v[0][r] = a;
            v[1][r] = b;
            v[2][r] = b / a;
            v[3][r] = c;
            v[4][r] = d;
            v[5][r] = d / c;
            v[6][r] = a / c;
            v[7][r] = b / d;
        }
    }
    struct bench_stats one = bench_stats_of(v[0], reps), two = bench_stats_of(v[1], reps),
                       ratio = bench_stats_of(v[2], reps), mone = bench_stats_of(v[3], reps),
                       mtwo = bench_stats_of(v[4], reps), mratio = bench_stats_of(v[5], reps),
                       vs1 = bench_stats_of(v[6], reps), vs2 = bench_stats_of(v[7], reps);
    struct bench_figure *f =
        bench_add("host_threads_1_ops", "scaling_threads", "1 thread: ToSymbol 4 B", "ops/s", one);
    f->bytes = 4;
    bench_set_ref(f, mone, vs1);
    bench_print_figure(f);
    f = bench_add("host_threads_2_ops", "scaling_threads", "2 threads: ToSymbol 4 B, aggregate",
                  "ops/s", two);
    f->bytes = 4;
    bench_set_ref(f, mtwo, vs2);
    bench_print_figure(f);
    f = bench_add("host_threads_2_vs_1", "scaling_threads", "2 threads vs 1 (per-sample ratio)",
                  "x", ratio);
    bench_set_better(f, BENCH_HIGHER_BETTER);
    bench_set_target(f, BENCH_AT_LEAST, 1.6, false, ">= 1.6x");
    bench_note(f, "plain memcpy scales %.2fx (min %.2f, max %.2f) on this machine at the same time",
               mratio.median, mratio.min, mratio.max);
    bench_print_figure(f);
    for (int i = 0; i < 8; i++)
        free(v[i]);
}

/* ---- 8. one core ------------------------------------------------------------------ */

/* The one-core figures come from a child process (this program, run
 * again with --pinned-child CPU) that restricts itself to one CPU with
 * sched_setaffinity before aclInit, so every thread it makes (the runtime's
 * workers too) inherits the one-CPU mask. The child writes its samples to its
 * stdout, a pipe, one line per series: "key n v1 ... vn"; the parent makes
 * the figures, so they carry the same ids, targets and JSON as the others. */

static int pin_to_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("aclsim-bench: sched_setaffinity");
        return -1;
    }
    if (bench_cpus_allowed() != 1) {
        fprintf(stderr, "aclsim-bench: still on %d CPUs after sched_setaffinity\n",
                bench_cpus_allowed());
        return -1;
    }
    return 0;
}

static void child_emit(const char *key, const double *v, int n)
{
    printf("%s %d", key, n);
    for (int i = 0; i < n; i++)
        printf(" %.17g", v[i]);
    printf("\n");
}

/* In the child: measures and writes every series. */
static void pinned_child_run(void)
{
    int reps = bench_cfg.reps_small;
    double *v = xcalloc((size_t)reps, sizeof *v);
    struct copy_op c = copy_of(4, g_pinned);
    bench_sample(run_to_async_sync, &c, bench_calibrate(run_to_async_sync, &c), reps, v);
    child_emit("round_trip", v, reps);

    aclrtFuncHandle func;
    CHECK(aclrtGetFuncBySymbol((const void *)&touch, &func));
    struct kernel_op one = {func, 1, 0}, many = {func, KERNEL_BLOCKS_MAX, 0};
    bench_sample(run_kernel, &one, bench_calibrate(run_kernel, &one), reps, v);
    child_emit("launch_1", v, reps);
    bench_sample(run_kernel, &many, bench_calibrate(run_kernel, &many), reps, v);
    child_emit("launch_64", v, reps);
    free(v);

    double tot[QUEUED_RUNS], enq[QUEUED_RUNS], ref[QUEUED_RUNS], vs[QUEUED_RUNS];
    queued_runs(tot, enq, ref, vs);
    child_emit("queued_tot", tot, QUEUED_RUNS);
    child_emit("queued_enq", enq, QUEUED_RUNS);
    child_emit("queued_ref", ref, QUEUED_RUNS);
    child_emit("queued_vs", vs, QUEUED_RUNS);
    fflush(stdout);
}

/* The child's series, as read back by the parent. */
#define CHILD_SERIES 8
static struct {
    char key[32];
    int n;
    double *v;
} series[CHILD_SERIES];
static int nseries;

static double *child_series(const char *key, int want_n)
{
    for (int i = 0; i < nseries; i++)
        if (strcmp(series[i].key, key) == 0 && series[i].n == want_n)
            return series[i].v;
    fprintf(stderr, "aclsim-bench: the pinned child sent no series %s of %d samples\n", key,
            want_n);
    exit(2);
}

static void read_child_series(FILE *in)
{
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0 && nseries < CHILD_SERIES) {
        char *p = line, *end;
        size_t klen = strcspn(p, " \n");
        if (klen == 0 || klen >= sizeof series[0].key)
            continue;
        memcpy(series[nseries].key, p, klen);
        series[nseries].key[klen] = 0;
        p += klen;
        long n = strtol(p, &end, 10);
        if (end == p || n <= 0 || n > 100000)
            continue;
        p = end;
        double *v = xcalloc((size_t)n, sizeof *v);
        long got = 0;
        for (; got < n; got++) {
            v[got] = strtod(p, &end);
            if (end == p)
                break;
            p = end;
        }
        if (got != n) {
            free(v);
            continue;
        }
        series[nseries].n = (int)n;
        series[nseries].v = v;
        nseries++;
    }
    free(line);
}

/* The child may take this long (a sanitizer build under load is slow); then
 * it is killed and the benchmark fails rather than hang. */
#define CHILD_DEADLINE_NS (600ull * 1000000000u)

static void child_timed_out(pid_t pid)
{
    fprintf(stderr, "aclsim-bench: the pinned child did not finish in %llu s; killed\n",
            CHILD_DEADLINE_NS / 1000000000u);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    exit(2);
}

/* A system call's result: true if it succeeded, false if a signal
 * interrupted it (try again); any other failure ends the program. */
static bool sys_ok(long rc, const char *what)
{
    if (rc >= 0)
        return true;
    if (errno == EINTR)
        return false;
    fprintf(stderr, "aclsim-bench: %s: %s\n", what, strerror(errno));
    exit(2);
}

/* Everything the child writes to fd, until it closes it (bounded). */
static char *read_child_output(int fd, pid_t pid, size_t *len_out)
{
    uint64_t deadline = bench_now_ns() + CHILD_DEADLINE_NS;
    size_t cap = 1 << 16, len = 0;
    char *buf = xcalloc(cap, 1);
    for (;;) {
        uint64_t now = bench_now_ns();
        if (now >= deadline)
            child_timed_out(pid);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ms = (int)((deadline - now) / 1000000u) + 1;
        int rc = poll(&pfd, 1, ms);
        if (!sys_ok(rc, "poll") || rc == 0)
            continue;
        if (len + 4096 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf) {
                fprintf(stderr, "aclsim-bench: out of memory\n");
                exit(2);
            }
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (!sys_ok(n, "read"))
            continue;
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = 0;
    *len_out = len;
    return buf;
}

/* The child's wait status, once it has exited (bounded: it closed its
 * output, so it is ending). */
static int wait_child(pid_t pid)
{
    uint64_t deadline = bench_now_ns() + CHILD_DEADLINE_NS / 10;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR) {
            perror("aclsim-bench: waitpid");
            exit(2);
        }
        if (bench_now_ns() >= deadline)
            child_timed_out(pid);
        usleep(1000);
    }
}

/* The first CPU this process may run on. */
static int first_allowed_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
            if (CPU_ISSET(cpu, &set))
                return cpu;
    return 0;
}

static void bench_one_core(void)
{
    int cpu = first_allowed_cpu();
    char title[160], cpu_arg[16];
    snprintf(title, sizeof title,
             "8. pinned to one CPU (a child process restricted to CPU %d with sched_setaffinity: "
             "the host thread and every worker share it)", cpu);
    bench_section(title);
    fflush(stdout);
    snprintf(cpu_arg, sizeof cpu_arg, "%d", cpu);
    char *child_argv[] = {"aclsim-bench", "--pinned-child", cpu_arg,
                          bench_cfg.quick ? "--quick" : NULL, NULL};
    int fds[2];
    if (pipe(fds) != 0) {
        perror("aclsim-bench: pipe");
        exit(2);
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    pid_t pid;
    int err = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, child_argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (err != 0) {
        fprintf(stderr, "aclsim-bench: cannot start the pinned child: %s\n", strerror(err));
        exit(2);
    }
    size_t len = 0;
    char *text = read_child_output(fds[0], pid, &len);
    close(fds[0]);
    FILE *in = fmemopen(text, len ? len : 1, "r");
    if (!in) {
        perror("aclsim-bench: fmemopen");
        exit(2);
    }
    read_child_series(in);
    fclose(in);
    free(text);
    int status = wait_child(pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "aclsim-bench: the pinned child failed (status %d)\n", status);
        exit(2);
    }

    bench_print_table_header();
    int reps = bench_cfg.reps_small;
    struct bench_figure *f =
        bench_add("pinned1_async_round_trip_4B", "one_core", "1 async 4 B + sync, round trip",
                  "ns/op", bench_stats_of(child_series("round_trip", reps), reps));
    f->bytes = 4;
    bench_set_target(f, BENCH_AT_MOST, 5000, false, "<= 5 us");
    bench_print_figure(f);
    f = bench_add("pinned1_kernel_launch_sync_1block", "one_core", "launch + sync, 1 block",
                  "ns/op", bench_stats_of(child_series("launch_1", reps), reps));
    bench_set_target(f, BENCH_AT_MOST, 5000, false, "<= 5 us");
    bench_print_figure(f);
    f = bench_add("pinned1_kernel_launch_sync_64blocks", "one_core", "launch + sync, 64 blocks",
                  "ns/op", bench_stats_of(child_series("launch_64", reps), reps));
    bench_print_figure(f);
    queued_figures("pinned1_", "", child_series("queued_tot", QUEUED_RUNS),
                   child_series("queued_enq", QUEUED_RUNS), child_series("queued_ref", QUEUED_RUNS),
                   child_series("queued_vs", QUEUED_RUNS), false);
    for (int i = 0; i < nseries; i++)
        free(series[i].v);
    nseries = 0;
}

/* ---- main --------------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: aclsim-bench [--quick] [--json FILE] [--only SECTIONS]\n"
            "  --quick          fewer and shorter samples (a smoke run, well under 20 s)\n"
            "  --json FILE      also write every figure to FILE as JSON\n"
            "  --only SECTIONS  run only these sections, comma-separated:\n"
            "                   1 2 3 4 5 6a 6b 6c 6d 7 8 (for profiling one path)\n"
            "Environment: the usual ACLSIM_* settings (ACLSIM_WORKERS, ACLSIM_CHECK,\n"
            "ACLSIM_DEVICE_MEMORY: the device needs a little over 256 MiB).\n"
            "Compare two --json files with bench/compare (docs/performance.md).\n");
}

/* --only: comma-separated section names; NULL runs everything. */
static const char *only;

static bool want(const char *section)
{
    if (!only)
        return true;
    size_t n = strlen(section);
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, section, n) == 0)
            return true;
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}

static void env_info(const char *name)
{
    const char *v = getenv(name);
    bench_set_info(name, v ? v : "(default)");
}

static void teardown(void)
{
    CHECK(aclrtDestroyStream(g_stream));
    CHECK(aclrtFreeHost(g_pinned));
    free(g_host);
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    int child_cpu = -1;
    bench_mark_start();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pinned-child") == 0 && i + 1 < argc) {
            child_cpu = atoi(argv[++i]);
            only = "pinned-child";
        } else if (strcmp(argv[i], "--quick") == 0) {
            bench_cfg.quick = true;
        } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json = argv[++i];
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (bench_cfg.quick) {
        bench_cfg.reps_small = 7;
        bench_cfg.reps_large = 5;
        bench_cfg.reps_sweep_large = 3;
        bench_cfg.sample_ns = 300000;
        bench_cfg.thread_ops = 20000;
    } else {
        bench_cfg.reps_small = 51;
        bench_cfg.reps_large = 21;
        bench_cfg.reps_sweep_large = 9;
        bench_cfg.sample_ns = 2000000;
        bench_cfg.thread_ops = 100000;
    }
    uint64_t start = bench_now_ns();
    /* Before aclInit: every thread made from here on inherits the mask. */
    if (child_cpu >= 0 && pin_to_cpu(child_cpu) != 0)
        return 2;

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtGetCurrentContext(&g_ctx));
    CHECK(aclrtCreateStream(&g_stream));
    int32_t major = 0, minor = 0, patch = 0;
    CHECK(aclrtGetVersion(&major, &minor, &patch));
    char text[64];
    snprintf(text, sizeof text, "%d.%d.%d", (int)major, (int)minor, (int)patch);
    bench_set_info("acl_version", text);
    bench_set_info("aclsim_version", ACLSIM_BENCH_VERSION);
    env_info("ACLSIM_CHECK");
    env_info("ACLSIM_WORKERS");
    env_info("ACLSIM_DEVICE_MEMORY");
    env_info("ACLSIM_DEVICE_COUNT");

    /* Buffers, all touched before anything is timed (full size only for the
     * sections with large copies, so that --only 2,3 profiles stay clean). */
    if (bench_cfg.quick && BENCH_SANITIZED)
        g_max_copy = 4 * MiB;
    size_t buf_bytes = want("1") || want("4") || want("6a") ? g_max_copy : MiB;
    g_host = malloc(buf_bytes);
    if (!g_host) {
        fprintf(stderr, "aclsim-bench: out of memory\n");
        return 2;
    }
    memset(g_host, 0x5a, buf_bytes);
    void *p;
    CHECK(aclrtMallocHost(&p, buf_bytes));
    g_pinned = p;
    memset(g_pinned, 0xa5, buf_bytes);
    if (want("1") || want("4") || want("6a") || want("6c")) {
        CHECK(aclrtGetSymbolAddress(big, &p));   /* makes (and fills) big's 256 MiB instance */
        g_big = p;
    }
    CHECK(aclrtGetSymbolAddress(small, &p));
    g_small = p;

    if (child_cpu >= 0) {
        pinned_child_run();
        teardown();
        return 0;
    }

    double load = bench_loadavg();
    const char *check = getenv("ACLSIM_CHECK");
    printf("aclsim-bench %s, %s run, %ld online CPUs (%d for this process), load average %.2f "
           "at start%s\nchecker: ACLSIM_CHECK=%s\n"
           "median / min / max of repeated samples; \"vs memcpy\" = speed relative to a plain "
           "memcpy of the same size\nbetween the same buffers, timed right after each sample "
           "(1.00x = as fast, 0.10x = ten times slower)\n",
           ACLSIM_BENCH_VERSION, bench_cfg.quick ? "quick" : "full", sysconf(_SC_NPROCESSORS_ONLN),
           bench_cpus_allowed(), load,
           load > 0.5 ? " (the machine is busy: expect noisy figures)" : "",
           check && *check ? check : "(unset: off)");
    if (g_max_copy < BIG_BYTES)
        printf("sanitizer build: --quick copies at most %zu MiB; the figures mean nothing\n",
               g_max_copy / MiB);

    if (want("1"))
        bench_sync_copies();
    if (want("2"))
        bench_symbol_queries();
    if (want("3"))
        bench_async_small();
    if (want("4"))
        bench_async_large();
    if (want("5"))
        bench_kernels();
    if (want("6a"))
        bench_sweep();
    if (want("6b"))
        bench_registered();
    if (want("6c")) {
        bench_section("6c. streams: 10,000 async 4 B copies per sample, spread round robin");
        bench_print_table_header();
        bench_streams(1);
        bench_streams(100);
        bench_streams(1000);
    }
    if (want("6d"))
        bench_host_threads();
    if (want("7"))
        bench_modelri();
    if (want("8"))
        bench_one_core();

    teardown();

    double elapsed = (double)(bench_now_ns() - start) / 1e9;
    bench_print_summary();
    printf("elapsed %.1f s\n", elapsed);
    if (json) {
        if (!bench_write_json(json, argv[0], elapsed)) {
            fprintf(stderr, "aclsim-bench: cannot write %s\n", json);
            return 2;
        }
        printf("wrote %s\n", json);
    }
    return 0;
}
