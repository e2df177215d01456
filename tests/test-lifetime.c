/*
 * The lifetime rule (docs/runtime.md, "the lifetime rule"; issue 19): calls
 * racing the destruction of the stream, device session or runtime they use
 * fail cleanly or complete with their task run (or, where CANN discards work,
 * report the discard to a caller waiting for it); they never hang, never run
 * in another session, never touch freed memory. Also: kernel blocks on helper
 * workers and host functions that would wait for their own stream get
 * 507000; aclrtBinaryUnLoad waits for a stream being destroyed; destroying
 * streams is O(1); spare task memory is given back; a pointer from an ended
 * device session or runtime session frees nothing of the next ones.
 *
 * Every race runs many rounds within a time budget (ACLSIM_TEST_TIME_SCALE
 * multiplies it) under a watchdog: a round that takes more than
 * ROUND_SECONDS aborts the process with a message naming the scenario and
 * the round, and the stacks of every thread (tests/helpers/watchdog.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"
#include "watchdog.h"

#define NRACERS 2
#define NSLOTS 45                  /* calls per racer and round: 3 of each kind */
#define SYM_SLOTS (NRACERS * NSLOTS)
#define MAX_ROUNDS 100000

/* Seconds a round may take before the watchdog calls it a hang. */
static double round_seconds(void) { return under_sanitizer() ? 30.0 : 10.0; }

/* Written by aclrtMemcpyToSymbolAsync; read by aclrtMemcpyFromSymbolAsync;
 * bumped by every kernel block through ACLSIM_DEV. */
ACLSIM_DEVICE_VAR(int32_t, lt_sym, [SYM_SLOTS]);
ACLSIM_DEVICE_VAR(int32_t, lt_src, [SYM_SLOTS]);
ACLSIM_DEVICE_VAR(int32_t, lt_blocks_run, );

/* The session tasks may run in: set to the round number while a round's
 * work may run and changed as soon as the destroy, reset or finalize that
 * ends the round has returned. A task (kernel or host function) that runs
 * in another session counts in g_cross. */
static atomic_int g_session;
static atomic_int g_cross;

void lt_store(int32_t *out, int32_t value, int32_t session)
{
    if (aclsimGetBlockIdx() == 0)
        *out = value;
    __atomic_fetch_add(&ACLSIM_DEV(lt_blocks_run), 1, __ATOMIC_RELAXED);
    if (session != atomic_load(&g_session))
        atomic_fetch_add(&g_cross, 1);
}
ACLSIM_KERNEL_REGISTER(lt_store, int32_t *, int32_t, int32_t);

/* A host function's argument: how often it ran and the session it belongs to. */
struct tag {
    atomic_int hits;
    atomic_int session;   /* rewritten by the racer while an earlier host function may read it */
};

static void tag_fn(void *arg)
{
    struct tag *t = arg;
    atomic_fetch_add(&t->hits, 1);
    if (atomic_load(&t->session) != atomic_load(&g_session))
        atomic_fetch_add(&g_cross, 1);
}

/* ---- the racing calls -------------------------------------------------------------- */

enum kind {
    K_H2D_PAGEABLE,       /* aclrtMemcpyAsync host_src -> dev_dst */
    K_D2H_PAGEABLE,       /* aclrtMemcpyAsync dev_src -> host_dst */
    K_D2H_PINNED,         /* aclrtMemcpyAsync dev_src -> pinned_dst */
    K_H2D_PINNED,         /* aclrtMemcpyAsync pinned_src -> dev_dst */
    K_MEMSET_PINNED,      /* aclrtMemsetAsync pinned_dst */
    K_MEMSET_DEV,         /* aclrtMemsetAsync dev_dst */
    K_HOSTFN,             /* aclrtLaunchHostFunc tag_fn */
    K_RECORD,             /* aclrtRecordEvent */
    K_WAIT,               /* aclrtStreamWaitEvent */
    K_TO_SYM_PINNED,      /* aclrtMemcpyToSymbolAsync pinned_src -> lt_sym */
    K_TO_SYM_PAGEABLE,    /* aclrtMemcpyToSymbolAsync host_src -> lt_sym */
    K_FROM_SYM_PINNED,    /* aclrtMemcpyFromSymbolAsync lt_src -> pinned_dst */
    K_FROM_SYM_PAGEABLE,  /* aclrtMemcpyFromSymbolAsync lt_src -> host_dst */
    K_KERNEL_ARRAY,       /* aclrtLaunchKernelWithArgsArray lt_store(dev_dst) */
    K_KERNEL_PACKED,      /* aclrtLaunchKernel lt_store(pinned_dst) */
    NKINDS
};

static const char *const kind_names[NKINDS] = {
    "aclrtMemcpyAsync pageable H2D", "aclrtMemcpyAsync pageable D2H",
    "aclrtMemcpyAsync page-locked D2H", "aclrtMemcpyAsync page-locked H2D",
    "aclrtMemsetAsync page-locked", "aclrtMemsetAsync device", "aclrtLaunchHostFunc",
    "aclrtRecordEvent", "aclrtStreamWaitEvent", "aclrtMemcpyToSymbolAsync page-locked",
    "aclrtMemcpyToSymbolAsync pageable", "aclrtMemcpyFromSymbolAsync page-locked",
    "aclrtMemcpyFromSymbolAsync pageable", "aclrtLaunchKernelWithArgsArray",
    "aclrtLaunchKernel"};

/* Pageable copies wait for their task: success means it was copied. */
static bool is_pageable(int kind)
{
    return kind == K_H2D_PAGEABLE || kind == K_D2H_PAGEABLE || kind == K_TO_SYM_PAGEABLE ||
           kind == K_FROM_SYM_PAGEABLE;
}

/* Where a kind's effect lands: on the host (readable after any reset or
 * finalize), on the device, or nowhere observable. */
enum where { W_NONE, W_HOST_DST, W_PINNED_DST, W_DEV_DST, W_SYM };

static enum where effect_of(int kind)
{
    switch (kind) {
    case K_D2H_PAGEABLE: case K_FROM_SYM_PAGEABLE: return W_HOST_DST;
    case K_D2H_PINNED: case K_MEMSET_PINNED: case K_FROM_SYM_PINNED: case K_KERNEL_PACKED:
        return W_PINNED_DST;
    case K_H2D_PAGEABLE: case K_H2D_PINNED: case K_MEMSET_DEV: case K_KERNEL_ARRAY:
        return W_DEV_DST;
    case K_TO_SYM_PINNED: case K_TO_SYM_PAGEABLE: return W_SYM;
    default: return W_NONE;
    }
}

static int32_t slot_value(int round, int racer, int k)
{
    return (int32_t)(((round & 0x7ffff) << 12) | (racer << 8) | (k + 1));
}

static uint8_t memset_byte(int round, int k) { return (uint8_t)(1 + (round * 7 + k) % 250); }

static int32_t expected_value(int kind, int round, int racer, int k)
{
    if (kind == K_MEMSET_PINNED || kind == K_MEMSET_DEV)
        return (int32_t)(memset_byte(round, k) * 0x01010101u);
    return slot_value(round, racer, k);
}

struct racer {
    int id;
    int round;
    int session;
    aclrtContext ctx;          /* made current on the racer's thread */
    aclrtStream stream;        /* the stream raced (NULL: ctx's default stream) */
    aclrtEvent event;
    aclrtFuncHandle store;     /* lt_store */
    bool discard;              /* a force destroy/reset or finalize may discard tasks */
    bool loop;                 /* keep calling until 100001 (finalize storms) */
    const aclError *allowed;   /* codes besides 0 every call may return; ends with 0 */
    struct gate *go;
    pthread_t thread;

    int32_t *dev_src, *dev_dst;        /* NSLOTS each, device memory */
    int32_t *pinned_src, *pinned_dst;  /* NSLOTS each, page-locked */
    int32_t host_src[NSLOTS], host_dst[NSLOTS];
    struct tag tags[NSLOTS];
    aclError rc[NSLOTS];
    long calls;

    atomic_int errors;
    char first_error[512];
};

/* Outcomes of the racing calls of a test: accepted, refused, discarded. */
static atomic_long calls_ok, calls_refused, calls_discarded;

static void print_outcomes(const char *what, int rounds)
{
    print_message("%s: %d rounds; %ld calls succeeded, %ld were refused, %ld reported a "
                  "discarded copy\n", what, rounds, atomic_exchange(&calls_ok, 0),
                  atomic_exchange(&calls_refused, 0), atomic_exchange(&calls_discarded, 0));
}

static bool allowed(const struct racer *r, int kind, aclError rc)
{
    if (rc == ACL_SUCCESS)
        return true;
    if (rc == ACL_ERROR_RT_STREAM_ABORT && r->discard && is_pageable(kind))
        return true;
    for (const aclError *a = r->allowed; *a; a++)
        if (*a == rc)
            return true;
    return false;
}

static aclError issue(struct racer *r, int k)
{
    int kind = k % NKINDS;
    size_t off = ((size_t)r->id * NSLOTS + (size_t)k) * sizeof(int32_t);
    int32_t v = slot_value(r->round, r->id, k);
    aclrtStream s = r->stream;
    switch (kind) {
    case K_H2D_PAGEABLE:
        return aclrtMemcpyAsync(&r->dev_dst[k], 4, &r->host_src[k], 4,
                                ACL_MEMCPY_HOST_TO_DEVICE, s);
    case K_D2H_PAGEABLE:
        return aclrtMemcpyAsync(&r->host_dst[k], 4, &r->dev_src[k], 4,
                                ACL_MEMCPY_DEVICE_TO_HOST, s);
    case K_D2H_PINNED:
        return aclrtMemcpyAsync(&r->pinned_dst[k], 4, &r->dev_src[k], 4,
                                ACL_MEMCPY_DEVICE_TO_HOST, s);
    case K_H2D_PINNED:
        return aclrtMemcpyAsync(&r->dev_dst[k], 4, &r->pinned_src[k], 4,
                                ACL_MEMCPY_HOST_TO_DEVICE, s);
    case K_MEMSET_PINNED:
        return aclrtMemsetAsync(&r->pinned_dst[k], 4, memset_byte(r->round, k), 4, s);
    case K_MEMSET_DEV:
        return aclrtMemsetAsync(&r->dev_dst[k], 4, memset_byte(r->round, k), 4, s);
    case K_HOSTFN:
        atomic_store(&r->tags[k].session, r->session);
        return aclrtLaunchHostFunc(s, tag_fn, &r->tags[k]);
    case K_RECORD:
        return aclrtRecordEvent(r->event, s);
    case K_WAIT:
        return aclrtStreamWaitEvent(s, r->event);
    case K_TO_SYM_PINNED:
        return aclrtMemcpyToSymbolAsync(lt_sym, &r->pinned_src[k], 4, off,
                                        ACL_MEMCPY_HOST_TO_DEVICE, s);
    case K_TO_SYM_PAGEABLE:
        return aclrtMemcpyToSymbolAsync(lt_sym, &r->host_src[k], 4, off,
                                        ACL_MEMCPY_HOST_TO_DEVICE, s);
    case K_FROM_SYM_PINNED:
        return aclrtMemcpyFromSymbolAsync(&r->pinned_dst[k], 4, lt_src, 4, off,
                                          ACL_MEMCPY_DEVICE_TO_HOST, s);
    case K_FROM_SYM_PAGEABLE:
        return aclrtMemcpyFromSymbolAsync(&r->host_dst[k], 4, lt_src, 4, off,
                                          ACL_MEMCPY_DEVICE_TO_HOST, s);
    case K_KERNEL_ARRAY: {
        int32_t *out = &r->dev_dst[k];
        int32_t session = r->session;
        void *args[] = {&out, &v, &session};
        return aclrtLaunchKernelWithArgsArray(r->store, 2, s, NULL, args);
    }
    default: {   /* K_KERNEL_PACKED */
        struct { int32_t *out; int32_t value, session; } a = {&r->pinned_dst[k], v, r->session};
        return aclrtLaunchKernel(r->store, 2, &a, sizeof a, s);
    }
    }
}

static void racer_error(struct racer *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void racer_error(struct racer *r, const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    note_first_error(&r->errors, r->first_error, sizeof r->first_error, "racer %d round %d: %s",
                     r->id, r->round, buf);
}

/* Checks a call's code, and for a pageable copy to the host its effect at
 * once (it waited for its task): success means copied, an error means not. */
static void check_call(struct racer *r, int k, aclError rc)
{
    int kind = k % NKINDS;
    atomic_fetch_add(rc == ACL_SUCCESS ? &calls_ok
                     : rc == ACL_ERROR_RT_STREAM_ABORT ? &calls_discarded : &calls_refused, 1);
    if (!allowed(r, kind, rc)) {
        racer_error(r, "%s (slot %d) returned %d", kind_names[kind], k, rc);
        return;
    }
    drain_msg();
    if (effect_of(kind) != W_HOST_DST)
        return;
    int32_t want = expected_value(kind, r->round, r->id, k), got = r->host_dst[k];
    if (rc == ACL_SUCCESS && got != want)
        racer_error(r, "%s (slot %d) returned ACL_SUCCESS but copied nothing (dst %d, want %d)",
                    kind_names[kind], k, got, want);
    if (rc != ACL_SUCCESS && got != 0)
        racer_error(r, "%s (slot %d) returned %d but copied (dst %d)", kind_names[kind], k, rc,
                    got);
}

static atomic_int racers_ready;   /* racers waiting for the go */

static void *racer_main(void *arg)
{
    struct racer *r = arg;
    aclError rc = aclrtSetCurrentContext(r->ctx);
    if (rc != ACL_SUCCESS && !allowed(r, K_RECORD, rc))
        racer_error(r, "aclrtSetCurrentContext returned %d", rc);
    drain_msg();
    atomic_fetch_add(&racers_ready, 1);
    gate_wait(r->go, WAIT_MS);
    if (!r->loop) {
        for (int k = 0; k < NSLOTS; k++) {
            r->rc[k] = issue(r, k);
            check_call(r, k, r->rc[k]);
        }
        r->calls = NSLOTS;
        return NULL;
    }
    /* Until the runtime is finalized, or a while after the first refusal. */
    for (long i = 0, refused = 0; i < 100000 && refused < 200; i++) {
        int k = (int)(i % NSLOTS);
        r->host_dst[k] = 0;
        rc = issue(r, k);
        r->calls++;
        check_call(r, k, rc);
        if (rc == ACL_ERROR_UNINITIALIZE)
            break;
        refused += rc != ACL_SUCCESS;
    }
    return NULL;
}

/* ---- per-test state ---------------------------------------------------------------- */

static struct racer racers[NRACERS];
static aclrtEvent g_event;

static int setup(void **state)
{
    (void)state;
    watchdog_start();
    abort_waits(false);
    unset_config();
    setenv("ACLSIM_WORKERS", "4", 1);
    if (init_devices("2", "64M") != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return -1;
    drain_msg();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    /* after a failed round too: the teardown must not hang either */
    watchdog_arm(0, "teardown (reset and finalize)", 0, round_seconds());
    abort_waits(true);
    (void)reset_and_finalize();
    abort_waits(false);
    watchdog_disarm(0);
    return 0;
}

static void spin_us(long us)
{
    double end = now_seconds() + (double)us / 1e6;
    while (now_seconds() < end) {
    }
}

/* Allocates the racers' buffers: page-locked ones (which survive resets)
 * and, on the current device, device ones. */
static void alloc_pinned(void)
{
    for (int i = 0; i < NRACERS; i++) {
        OK(aclrtMallocHost((void **)&racers[i].pinned_src, NSLOTS * sizeof(int32_t)));
        OK(aclrtMallocHost((void **)&racers[i].pinned_dst, NSLOTS * sizeof(int32_t)));
    }
}

static void alloc_device(void)
{
    for (int i = 0; i < NRACERS; i++) {
        OK(aclrtMalloc((void **)&racers[i].dev_src, NSLOTS * sizeof(int32_t),
                       ACL_MEM_MALLOC_HUGE_FIRST));
        OK(aclrtMalloc((void **)&racers[i].dev_dst, NSLOTS * sizeof(int32_t),
                       ACL_MEM_MALLOC_HUGE_FIRST));
    }
}

/* Sets the sources to this round's values and clears the destinations, on
 * the current device. */
static void prepare_round(int round, aclrtContext ctx, aclrtStream stream, bool discard,
                          bool loop, const aclError *codes, struct gate *go)
{
    int32_t src[SYM_SLOTS], zero[SYM_SLOTS] = {0};
    for (int i = 0; i < NRACERS; i++) {
        struct racer *r = &racers[i];
        int32_t *pinned_src = r->pinned_src, *pinned_dst = r->pinned_dst;
        int32_t *dev_src = r->dev_src, *dev_dst = r->dev_dst;
        memset(r, 0, sizeof *r);
        r->pinned_src = pinned_src;
        r->pinned_dst = pinned_dst;
        r->dev_src = dev_src;
        r->dev_dst = dev_dst;
        r->id = i;
        r->round = round;
        r->session = round;
        r->ctx = ctx;
        r->stream = stream;
        r->event = g_event;
        r->store = FUNC(lt_store);
        r->discard = discard;
        r->loop = loop;
        r->allowed = codes;
        r->go = go;
        for (int k = 0; k < NSLOTS; k++) {
            r->host_src[k] = slot_value(round, i, k);
            r->pinned_src[k] = slot_value(round, i, k);
            r->pinned_dst[k] = 0;
            src[i * NSLOTS + k] = slot_value(round, i, k);
        }
        OK(aclrtMemcpy(r->dev_src, NSLOTS * 4, src + i * NSLOTS, NSLOTS * 4,
                       ACL_MEMCPY_HOST_TO_DEVICE));
        OK(aclrtMemset(r->dev_dst, NSLOTS * 4, 0, NSLOTS * 4));
    }
    OK(aclrtMemcpyToSymbol(lt_src, src, sizeof src, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    OK(aclrtMemcpyToSymbol(lt_sym, zero, sizeof zero, 0, ACL_MEMCPY_HOST_TO_DEVICE));
}

/* How long the destroyer waits after the go, in microseconds: mostly while
 * the racers' calls are under way (NSLOTS calls take 100-1000 us), sometimes
 * at once. */
static long race_delay(unsigned *seed)
{
    unsigned x = (unsigned)rand_r(seed);
    return x % 8 == 0 ? 0 : (long)(x % 1000);
}

/* Prepares a round (prepare_round), starts the racers, lets them go and
 * returns delay_us later: the caller then destroys what they use. */
static void start_race(int round, aclrtContext ctx, aclrtStream stream, bool discard, bool loop,
                       const aclError *codes, long delay_us)
{
    static struct gate go;
    gate_init(&go);
    prepare_round(round, ctx, stream, discard, loop, codes, &go);
    atomic_store(&racers_ready, 0);
    for (int i = 0; i < NRACERS; i++)
        assert_int_equal(pthread_create(&racers[i].thread, NULL, racer_main, &racers[i]), 0);
    for (double end = now_seconds() + 5; atomic_load(&racers_ready) < NRACERS &&
                                         now_seconds() < end;)
        sched_yield();
    gate_open(&go);
    spin_us(delay_us);
}

static void join_racers(void)
{
    for (int i = 0; i < NRACERS; i++)
        pthread_join(racers[i].thread, NULL);
    for (int i = 0; i < NRACERS; i++)
        if (atomic_load(&racers[i].errors))
            fail_msg("%d error(s); first: %s", atomic_load(&racers[i].errors),
                     racers[i].first_error);
}

/* After the racers are joined and the destroy/reset has returned: every
 * accepted task ran (unless it may have been discarded), none that failed
 * did. device: the device-side destinations can still be read. */
static void check_effects(bool device)
{
    int32_t sym[SYM_SLOTS];
    if (device)
        OK(aclrtMemcpyFromSymbol(sym, sizeof sym, lt_sym, sizeof sym, 0,
                                 ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < NRACERS; i++) {
        struct racer *r = &racers[i];
        int32_t dev[NSLOTS];
        if (device)
            OK(aclrtMemcpy(dev, sizeof dev, r->dev_dst, sizeof dev, ACL_MEMCPY_DEVICE_TO_HOST));
        for (int k = 0; k < NSLOTS; k++) {
            int kind = k % NKINDS;
            aclError rc = r->rc[k];
            bool must = rc == ACL_SUCCESS && (!r->discard || is_pageable(kind));
            if (kind == K_HOSTFN) {
                int hits = atomic_load(&r->tags[k].hits);
                if (hits > 1 || (rc != ACL_SUCCESS && hits) || (must && !hits))
                    fail_msg("round %d racer %d slot %d: aclrtLaunchHostFunc returned %d and "
                             "the function ran %d time(s)", r->round, i, k, rc, hits);
                continue;
            }
            int32_t got;
            switch (effect_of(kind)) {
            case W_HOST_DST: got = r->host_dst[k]; break;
            case W_PINNED_DST: got = r->pinned_dst[k]; break;
            case W_DEV_DST: if (!device) continue; got = dev[k]; break;
            case W_SYM: if (!device) continue; got = sym[i * NSLOTS + k]; break;
            default: continue;
            }
            int32_t want = expected_value(kind, r->round, i, k);
            if (rc != ACL_SUCCESS && got != 0)
                fail_msg("round %d racer %d slot %d: %s returned %d but its task ran "
                         "(dst %d)", r->round, i, k, kind_names[kind], rc, got);
            if (must && got != want)
                fail_msg("round %d racer %d slot %d: %s returned ACL_SUCCESS but its task did "
                         "not run%s (dst %d, want %d)", r->round, i, k, kind_names[kind],
                         r->discard ? " although it waited for it" : "", got, want);
            if (rc == ACL_SUCCESS && got != want && got != 0)
                fail_msg("round %d racer %d slot %d: %s wrote %d, want %d", r->round, i, k,
                         kind_names[kind], got, want);
        }
    }
    assert_int_equal(atomic_load(&g_cross), 0);
}

/* The current device is usable: a new stream and its default stream take
 * work and synchronize promptly, and so does the whole device. */
static void check_device_works(int session)
{
    struct tag tag = {.session = session};
    aclrtStream fresh = NULL;
    EXPECT_OK(aclrtCreateStream(&fresh));
    void *scratch = NULL;
    EXPECT_OK(aclrtMalloc(&scratch, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemsetAsync(scratch, 64, 1, 64, fresh));
    EXPECT_OK(aclrtLaunchHostFunc(fresh, tag_fn, &tag));
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(fresh, 5000));
    EXPECT_OK(aclrtMemsetAsync(scratch, 64, 2, 64, NULL));
    EXPECT_OK(aclrtLaunchHostFunc(NULL, tag_fn, &tag));
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(NULL, 5000));
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtSynchronizeEvent(g_event));
    assert_int_equal(atomic_load(&tag.hits), 2);
    EXPECT_OK(aclrtDestroyStream(fresh));
    EXPECT_OK(aclrtFree(scratch));
}

/* Rounds of a race: until the time budget is spent (at least min_rounds). */
static bool more_rounds(int round, double start, int min_rounds)
{
    return round < MAX_ROUNDS && (round < min_rounds || now_seconds() - start < time_budget(1.5));
}

/* ---- 1. async calls racing aclrtDestroyStream(Force) ----------------------------------- */

static void test_calls_race_destroy_stream(void **state)
{
    (void)state;
    static const aclError codes[] = {ACL_ERROR_RT_INVALID_HANDLE, 0};
    alloc_pinned();
    alloc_device();
    EXPECT_OK(aclrtCreateEvent(&g_event));
    aclrtContext ctx = current_context();
    unsigned seed = 12345;
    double start = now_seconds();
    int round;
    for (round = 1; more_rounds(round, start, 20); round++) {
        watchdog_arm(0, "calls racing aclrtDestroyStream", round, round_seconds());
        bool force = round % 2 == 0;
        atomic_store(&g_session, round);
        aclrtStream s = NULL;
        EXPECT_OK(aclrtCreateStream(&s));
        start_race(round, ctx, s, false, false, codes, race_delay(&seed));   /* nothing discarded */
        if (force) {
            /* Returns at once; what the stream accepted still runs: the
             * device synchronizes with the draining stream. */
            EXPECT_OK(aclrtDestroyStreamForce(s));
            EXPECT_OK(aclrtSynchronizeDevice());
        } else {
            EXPECT_OK(aclrtDestroyStream(s));
        }
        /* Whatever the destroyed stream accepted has run. */
        atomic_store(&g_session, -round);
        join_racers();
        check_effects(true);
        atomic_store(&g_session, round);
        check_device_works(round);
        watchdog_disarm(0);
    }
    print_outcomes("calls racing aclrtDestroyStream(Force)", round - 1);
    EXPECT_OK(aclrtDestroyEvent(g_event));
}

/* ---- 2. async calls racing aclrtResetDevice(Force) ------------------------------------ */

static void test_calls_race_reset_device(void **state)
{
    (void)state;
    static const aclError codes[] = {ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_CONTEXT_NULL,
                                     ACL_ERROR_RT_STREAM_CONTEXT, ACL_ERROR_INVALID_PARAM, 0};
    alloc_pinned();
    EXPECT_OK(aclrtCreateEvent(&g_event));
    OK(aclrtSetDevice(1));
    unsigned seed = 777;
    double start = now_seconds();
    int round;
    for (round = 1; more_rounds(round, start, 20); round++) {
        watchdog_arm(0, "calls racing aclrtResetDevice", round, round_seconds());
        bool force = (round / 2) % 2 == 1;
        bool user_stream = round % 2 == 0;
        atomic_store(&g_session, round);
        aclrtContext ctx = current_context();
        assert_int_equal(current_device(), 1);
        alloc_device();
        aclrtStream s = NULL;
        if (user_stream)
            EXPECT_OK(aclrtCreateStream(&s));
        start_race(round, ctx, s, force, false, codes, race_delay(&seed));
        if (force)
            EXPECT_OK(aclrtResetDeviceForce(1));
        else
            EXPECT_OK(aclrtResetDevice(1));
        /* Nothing of the old session may run from here on. */
        atomic_store(&g_session, -round);
        join_racers();
        check_effects(false);
        /* A new session: its default stream and new streams work. */
        atomic_store(&g_session, round + 1);
        EXPECT_OK(aclrtSetDevice(1));
        check_device_works(round + 1);
        assert_int_equal(atomic_load(&g_cross), 0);
        watchdog_disarm(0);
    }
    print_outcomes("calls racing aclrtResetDevice(Force)", round - 1);
    EXPECT_OK(aclrtDestroyEvent(g_event));
}

/* ---- 2b. aclrtCreateStream racing aclrtDestroyContext of its context -------------------- */

#define CREATES 64

struct creator {
    pthread_t thread;
    aclrtContext ctx;
    struct gate *go;
    int n;                          /* streams created (handles below) */
    aclrtStream made[CREATES];
    atomic_int errors;
    char first_error[256];
};

static void *creator_main(void *arg)
{
    struct creator *c = arg;
    aclError rc = aclrtSetCurrentContext(c->ctx);
    gate_wait(c->go, WAIT_MS);
    while (rc == ACL_SUCCESS && c->n < CREATES) {
        aclrtStream s = NULL;
        rc = aclrtCreateStream(&s);
        if (rc == ACL_SUCCESS) {
            if (!s)
                note_first_error(&c->errors, c->first_error, sizeof c->first_error,
                                 "aclrtCreateStream returned ACL_SUCCESS and a NULL stream");
            c->made[c->n++] = s;
        }
    }
    if (rc != ACL_SUCCESS && rc != ACL_ERROR_RT_CONTEXT_NULL && rc != ACL_ERROR_RT_INVALID_HANDLE)
        note_first_error(&c->errors, c->first_error, sizeof c->first_error,
                         "aclrtCreateStream racing aclrtDestroyContext returned %d", rc);
    drain_msg();
    return NULL;
}

/* Streams created in a context that another thread destroys: each creation
 * fails cleanly or gives a stream of that context, which dies with it. Its
 * handle must never be NULL or name a stream created afterwards elsewhere
 * (the stream struct is recycled at once). */
static void test_create_stream_races_destroy_context(void **state)
{
    (void)state;
    unsigned seed = 1618;
    aclrtContext home = current_context();
    long created = 0;
    double start = now_seconds();
    int round;
    for (round = 1; more_rounds(round, start, 20); round++) {
        watchdog_arm(0, "aclrtCreateStream racing aclrtDestroyContext", round, round_seconds());
        aclrtContext ctx = NULL;
        EXPECT_OK(aclrtCreateContext(&ctx, 0));
        static struct gate go;
        gate_init(&go);
        static struct creator creators[NRACERS];
        memset(creators, 0, sizeof creators);
        for (int i = 0; i < NRACERS; i++) {
            creators[i].ctx = ctx;
            creators[i].go = &go;
            assert_int_equal(pthread_create(&creators[i].thread, NULL, creator_main,
                                            &creators[i]), 0);
        }
        gate_open(&go);
        spin_us(race_delay(&seed) / 8);
        EXPECT_OK(aclrtDestroyContext(ctx));
        /* Reuse the freed stream structs at once: new contexts (default
         * streams) and streams in them. */
        aclrtContext fresh[2];
        aclrtStream fresh_streams[2][4];
        for (int i = 0; i < 2; i++) {
            EXPECT_OK(aclrtCreateContext(&fresh[i], 0));
            for (int j = 0; j < 4; j++)
                EXPECT_OK(aclrtCreateStream(&fresh_streams[i][j]));
        }
        for (int i = 0; i < NRACERS; i++)
            pthread_join(creators[i].thread, NULL);
        for (int i = 0; i < NRACERS; i++) {
            if (atomic_load(&creators[i].errors))
                fail_msg("round %d: %s", round, creators[i].first_error);
            created += creators[i].n;
            for (int k = 0; k < creators[i].n; k++) {
                aclError rc = aclrtDestroyStream(creators[i].made[k]);
                if (rc != ACL_ERROR_RT_INVALID_HANDLE)
                    fail_msg("round %d: a stream created in a destroyed context is still "
                             "alive: aclrtDestroyStream returned %d (its handle names another "
                             "stream)", round, rc);
                drain_msg();
            }
        }
        for (int i = 1; i >= 0; i--) {
            EXPECT_OK(aclrtSetCurrentContext(fresh[i]));
            for (int j = 0; j < 4; j++)
                EXPECT_OK(aclrtDestroyStream(fresh_streams[i][j]));
            EXPECT_OK(aclrtDestroyContext(fresh[i]));
        }
        EXPECT_OK(aclrtSetCurrentContext(home));
        watchdog_disarm(0);
    }
    print_message("aclrtCreateStream racing aclrtDestroyContext: %d rounds, %ld streams "
                  "created\n", round - 1, created);
}

/* ---- 3. async calls racing aclFinalize (then aclInit again) ---------------------------- */

static void test_calls_race_finalize(void **state)
{
    (void)state;
    static const aclError codes[] = {ACL_ERROR_UNINITIALIZE, ACL_ERROR_RT_INVALID_HANDLE,
                                     ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_STREAM_CONTEXT,
                                     ACL_ERROR_INVALID_PARAM, 0};
    unsigned seed = 4242;
    double start = now_seconds();
    int round;
    for (round = 1; more_rounds(round, start, 10); round++) {
        watchdog_arm(0, "calls racing aclFinalize", round, round_seconds());
        atomic_store(&g_session, round);
        if (round > 1) {
            EXPECT_OK(aclInit(NULL));
            EXPECT_OK(aclrtSetDevice(0));
        }
        alloc_pinned();
        alloc_device();
        EXPECT_OK(aclrtCreateEvent(&g_event));
        aclrtStream s = NULL;
        if (round % 2 == 0)
            EXPECT_OK(aclrtCreateStream(&s));
        start_race(round, current_context(), s, true, true, codes, race_delay(&seed));
        switch (round % 3) {
        case 1: EXPECT_OK(aclrtResetDeviceForce(0)); break;
        case 2: EXPECT_OK(aclrtResetDevice(0)); break;
        default: break;
        }
        EXPECT_OK(aclFinalize());
        atomic_store(&g_session, -round);
        join_racers();
        assert_int_equal(atomic_load(&g_cross), 0);
        watchdog_disarm(0);
    }
    print_outcomes("calls racing aclFinalize", round - 1);
}

/* ---- 3b. page-locked allocation racing aclFinalize --------------------------------------- */

struct pinned_churn {
    pthread_t thread;
    struct gate *go;
    long calls;
    atomic_int errors;
    char first_error[256];
};

/* aclrtMallocHost / aclrtFreeHost until the runtime is finalized: each
 * succeeds or gets 100001 (aclrtFreeHost also 100000: the allocation went
 * with the session), never 207001 "out of memory", a crash or a hang. The
 * memory itself is never touched. */
static void *pinned_churn_main(void *arg)
{
    struct pinned_churn *c = arg;
    gate_wait(c->go, WAIT_MS);
    for (; c->calls < 100000; c->calls++) {
        void *p = NULL;
        const char *call = "aclrtMallocHost";
        aclError rc = aclrtMallocHost(&p, 256 + (size_t)(c->calls % 4) * 4096);
        if (rc == ACL_SUCCESS) {
            call = "aclrtFreeHost";
            rc = aclrtFreeHost(p);
            /* the allocation went with the finalized session */
            if (rc == ACL_ERROR_INVALID_PARAM)
                rc = ACL_ERROR_UNINITIALIZE;
        }
        if (rc == ACL_ERROR_UNINITIALIZE)
            break;
        if (rc != ACL_SUCCESS) {
            note_first_error(&c->errors, c->first_error, sizeof c->first_error,
                             "%s racing aclFinalize returned %d", call, rc);
            break;
        }
    }
    drain_msg();
    return NULL;
}

static void test_pinned_alloc_races_finalize(void **state)
{
    (void)state;
    unsigned seed = 31337;
    double start = now_seconds();
    int round;
    for (round = 1; more_rounds(round, start, 10); round++) {
        watchdog_arm(0, "aclrtMallocHost/aclrtFreeHost racing aclFinalize", round,
                     round_seconds());
        if (round > 1)
            EXPECT_OK(aclInit(NULL));
        static struct gate go;
        gate_init(&go);
        struct pinned_churn churn[NRACERS];
        memset(churn, 0, sizeof churn);
        for (int i = 0; i < NRACERS; i++) {
            churn[i].go = &go;
            assert_int_equal(pthread_create(&churn[i].thread, NULL, pinned_churn_main,
                                            &churn[i]), 0);
        }
        gate_open(&go);
        spin_us(race_delay(&seed) / 4);
        EXPECT_OK(aclFinalize());
        for (int i = 0; i < NRACERS; i++)
            pthread_join(churn[i].thread, NULL);
        for (int i = 0; i < NRACERS; i++)
            if (atomic_load(&churn[i].errors))
                fail_msg("round %d: %s", round, churn[i].first_error);
        watchdog_disarm(0);
    }
    print_message("aclrtMallocHost/aclrtFreeHost racing aclFinalize: %d rounds\n", round - 1);
}

/* ---- 3c. first use of a device variable racing a reset or aclFinalize ------------------- */

/* Used by nothing else, so each session's first use is in the race. */
ACLSIM_DEVICE_VAR(int64_t, lt_first_use, [512]);

struct first_user {
    int id;                /* writes only its own half of the variable */
    pthread_t thread;
    aclrtContext ctx;
    struct gate *go;
    atomic_int errors;
    char first_error[256];
};

static void *first_user_main(void *arg)
{
    struct first_user *u = arg;
    aclError rc = aclrtSetCurrentContext(u->ctx);
    gate_wait(u->go, WAIT_MS);
    int64_t v = 7;
    for (int i = 0; i < 2000 && rc == ACL_SUCCESS; i++) {
        void *addr = NULL;
        if (i % 2)
            rc = aclrtGetSymbolAddress(lt_first_use, &addr);
        else
            rc = aclrtMemcpyToSymbol(lt_first_use, &v, sizeof v,
                                     (size_t)(u->id * 256 + i % 256) * sizeof v,
                                     ACL_MEMCPY_HOST_TO_DEVICE);
    }
    if (rc != ACL_SUCCESS && rc != ACL_ERROR_UNINITIALIZE && rc != ACL_ERROR_RT_CONTEXT_NULL &&
        rc != ACL_ERROR_RT_INVALID_HANDLE)
        note_first_error(&u->errors, u->first_error, sizeof u->first_error,
                         "first use of a device variable racing a reset/aclFinalize returned %d",
                         rc);
    drain_msg();
    return NULL;
}

static void test_first_symbol_use_races_reset(void **state)
{
    (void)state;
    unsigned seed = 2718;
    double start = now_seconds();
    int round;
    for (round = 1; more_rounds(round, start, 10); round++) {
        watchdog_arm(0, "first use of a device variable racing reset/aclFinalize", round,
                     round_seconds());
        static struct gate go;
        gate_init(&go);
        struct first_user users[NRACERS];
        memset(users, 0, sizeof users);
        aclrtContext ctx = current_context();
        for (int i = 0; i < NRACERS; i++) {
            users[i].id = i;
            users[i].ctx = ctx;
            users[i].go = &go;
            assert_int_equal(pthread_create(&users[i].thread, NULL, first_user_main,
                                            &users[i]), 0);
        }
        gate_open(&go);
        spin_us(race_delay(&seed) / 8);
        bool finalize = round % 3 == 0;
        if (finalize)
            EXPECT_OK(aclFinalize());
        else
            EXPECT_OK(aclrtResetDeviceForce(0));
        for (int i = 0; i < NRACERS; i++)
            pthread_join(users[i].thread, NULL);
        for (int i = 0; i < NRACERS; i++)
            if (atomic_load(&users[i].errors))
                fail_msg("round %d: %s", round, users[i].first_error);
        if (finalize)
            EXPECT_OK(aclInit(NULL));
        EXPECT_OK(aclrtSetDevice(0));
        /* the new session's instance starts from the initializer (zeros) */
        int64_t got = -1;
        EXPECT_OK(aclrtMemcpyFromSymbol(&got, sizeof got, lt_first_use, sizeof got, 0,
                                        ACL_MEMCPY_DEVICE_TO_HOST));
        assert_int_equal(got, 0);
        watchdog_disarm(0);
    }
    print_message("first use of a device variable racing reset/aclFinalize: %d rounds\n",
                  round - 1);
}

/* ---- 4. aclrtBinaryUnLoad racing aclrtDestroyStream ------------------------------------ */

#ifdef ACLSIM_TEST_KERNELS_PATH
struct destroyer {
    aclrtStream stream;
    bool force;
    aclError rc;
};

static void destroy_fn(void *arg)
{
    struct destroyer *d = arg;
    d->rc = d->force ? aclrtDestroyStreamForce(d->stream) : aclrtDestroyStream(d->stream);
}

struct releaser {
    struct blocker *blocker;
    long delay_us;
};

static void release_fn(void *arg)
{
    struct releaser *r = arg;
    spin_us(r->delay_us);
    blocker_release(r->blocker);
}

static void test_unload_races_destroy_stream(void **state)
{
    (void)state;
    enum { LAUNCHES = 4 };
    float *out = NULL;
    OK(aclrtMalloc((void **)&out, 64 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    unsigned seed = 99;
    double start = now_seconds();
    int round;
    for (round = 1; more_rounds(round, start, 20); round++) {
        watchdog_arm(0, "aclrtBinaryUnLoad racing aclrtDestroyStream", round, round_seconds());
        bool force = round % 3 == 0;
        OK(aclrtMemset(out, 64 * sizeof(float), 0, 64 * sizeof(float)));
        aclrtBinHandle bin = NULL;
        EXPECT_OK(aclrtBinaryLoadFromFile(ACLSIM_TEST_KERNELS_PATH, NULL, &bin));
        aclrtFuncHandle scale = NULL;
        EXPECT_OK(aclrtBinaryGetFunction(bin, "hbin_table_scale", &scale));
        aclrtStream s = NULL;
        EXPECT_OK(aclrtCreateStream(&s));
        struct blocker b;
        blocker_init(&b);
        EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
        float k = 2.0f;
        void *args[] = {&out, &k};
        for (int i = 0; i < LAUNCHES; i++)
            EXPECT_OK(aclrtLaunchKernelWithArgsArray(scale, 64, s, NULL, args));
        assert_true(gate_wait(&b.started, WAIT_MS));
        struct destroyer d = {s, force, -1};
        struct releaser rel = {&b, (long)(rand_r(&seed) % 1000)};
        struct call destroy_call, release_call;
        call_start(&destroy_call, destroy_fn, &d);
        call_start(&release_call, release_fn, &rel);
        spin_us(rand_r(&seed) % 300);
        EXPECT_OK(aclrtBinaryUnLoad(bin));
        assert_true(call_wait(&destroy_call, WAIT_MS));
        assert_true(call_wait(&release_call, WAIT_MS));
        assert_int_equal(d.rc, ACL_SUCCESS);
        assert_false(blocker_timed_out(&b));
        /* Without force the kernels ran before the binary went: element 0
         * is hbin_table[0] (1 after the load, +1 per launch) * k. */
        float got[64];
        OK(aclrtMemcpy(got, sizeof got, out, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST));
        if (!force && got[0] != (float)LAUNCHES * k)
            fail_msg("round %d: aclrtDestroyStream + aclrtBinaryUnLoad: out[0] = %g, want %g "
                     "(the queued kernels did not all run)", round, (double)got[0],
                     (double)((float)LAUNCHES * k));
        EXPECT_OK(aclrtSynchronizeDevice());
        watchdog_disarm(0);
    }
    print_message("aclrtBinaryUnLoad racing aclrtDestroyStream: %d rounds\n", round - 1);
    OK(aclrtFree(out));
}
#endif

/* ---- 5. waiting for yourself from kernel blocks and host functions -------------------- */

#define SELF_BLOCKS 32
#define SELF_CALLS 4

static int32_t self_results[SELF_BLOCKS][SELF_CALLS];
static pthread_t self_threads[SELF_BLOCKS];

/* Each block: the current context, then the four calls that would wait for
 * the block's own stream or device. */
static void self_wait_calls(int32_t *res, void *stream, void *ctx, int32_t *dev)
{
    int32_t local = 5;
    if (aclrtSetCurrentContext(ctx) != ACL_SUCCESS) {
        for (int i = 0; i < SELF_CALLS; i++)
            res[i] = -1;
        return;
    }
    res[0] = aclrtSynchronizeStreamWithTimeout(stream, 1000);
    res[1] = aclrtSynchronizeStream(stream);
    res[2] = aclrtSynchronizeDevice();
    res[3] = aclrtMemcpyAsync(dev, 4, &local, 4, ACL_MEMCPY_HOST_TO_DEVICE, stream);
    drain_msg();
}

void lt_self_wait(void *stream, void *ctx, int32_t *dev)
{
    uint32_t b = aclsimGetBlockIdx();
    self_threads[b] = pthread_self();
    spin_us(300);   /* long enough for idle workers to help with the blocks */
    self_wait_calls(self_results[b], stream, ctx, dev + b);
}
ACLSIM_KERNEL_REGISTER(lt_self_wait, void *, void *, int32_t *);

struct self_host {
    void *stream, *ctx;
    int32_t *dev;
    int32_t res[SELF_CALLS];
};

static void self_host_fn(void *arg)
{
    struct self_host *h = arg;
    self_wait_calls(h->res, h->stream, h->ctx, h->dev);
}

static const char *const self_call_names[SELF_CALLS] = {
    "aclrtSynchronizeStreamWithTimeout", "aclrtSynchronizeStream", "aclrtSynchronizeDevice",
    "pageable aclrtMemcpyAsync on its own stream"};

static void test_self_wait_refused(void **state)
{
    (void)state;
    aclrtContext ctx = current_context();
    int32_t *dev = NULL;
    OK(aclrtMalloc((void **)&dev, SELF_BLOCKS * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    aclrtFuncHandle f = FUNC(lt_self_wait);
    aclrtStream user = NULL;
    EXPECT_OK(aclrtCreateStream(&user));
    bool helpers_seen = false;
    for (int round = 1; round <= 12 || (!helpers_seen && round <= 40); round++) {
        watchdog_arm(0, "self-wait from kernel blocks and host functions", round,
                     round_seconds());
        /* odd rounds: a user stream; even rounds: the default stream (NULL) */
        void *stream = round % 2 ? user : NULL;
        memset(self_results, 0x55, sizeof self_results);
        memset(self_threads, 0, sizeof self_threads);
        void *args[] = {&stream, &ctx, &dev};
        EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, SELF_BLOCKS, stream, NULL, args));
        static struct self_host h;   /* static: outlives a failed round */
        h = (struct self_host){stream, ctx, dev, {0x55, 0x55, 0x55, 0x55}};
        EXPECT_OK(aclrtLaunchHostFunc(stream, self_host_fn, &h));
        aclError rc = aclrtSynchronizeStreamWithTimeout(stream, 8000);
        if (rc != ACL_SUCCESS)
            fail_msg("round %d: the stream did not finish (%d): a kernel block or host "
                     "function waits for itself", round, rc);
        int distinct = 0;
        for (int b = 0; b < SELF_BLOCKS; b++) {
            bool seen = false;
            for (int c = 0; c < b && !seen; c++)
                seen = pthread_equal(self_threads[c], self_threads[b]);
            distinct += !seen;
            for (int i = 0; i < SELF_CALLS; i++)
                if (self_results[b][i] != ACL_ERROR_RT_INTERNAL_ERROR)
                    fail_msg("round %d (%s stream): %s in kernel block %d returned %d, want "
                             "507000", round, stream ? "user" : "default", self_call_names[i],
                             b, self_results[b][i]);
        }
        helpers_seen |= distinct > 1;
        for (int i = 0; i < SELF_CALLS; i++)
            if (h.res[i] != ACL_ERROR_RT_INTERNAL_ERROR)
                fail_msg("round %d (%s stream): %s in a host function returned %d, want "
                         "507000", round, stream ? "user" : "default", self_call_names[i],
                         h.res[i]);
        watchdog_disarm(0);
    }
    /* Otherwise this test would not have exercised helper workers. */
    assert_true(helpers_seen);
    EXPECT_OK(aclrtDestroyStream(user));
    OK(aclrtFree(dev));
}

/* ---- 6. destroying many streams is O(1) each ----------------------------------------- */

/* A device holds at most the SoC's stream limit (1,984 on A2, default streams
 * included): the 100,000 destroys are made in rounds of as many streams as
 * the device has room for, each round destroyed in order. */
static void destroy_many(bool oldest_first)
{
    enum { TOTAL = 100000 };
    double bound = under_sanitizer() ? 10.0 : 2.0;
    uint32_t room = 0;
    OK(aclrtGetStreamAvailableNum(&room));
    assert_true(room > 1000);
    int per_round = (int)room;
    aclrtStream *s = malloc((size_t)per_round * sizeof *s);
    assert_non_null(s);
    double took = 0;
    int done = 0;
    while (done < TOTAL && took <= bound) {
        int n = per_round < TOTAL - done ? per_round : TOTAL - done;
        for (int i = 0; i < n; i++)
            if (aclrtCreateStream(&s[i]) != ACL_SUCCESS)
                fail_msg("aclrtCreateStream number %d (of %d) failed", i, n);
        double t0 = now_seconds();
        int k = 0;
        for (; k < n && took + (now_seconds() - t0) <= bound; k++) {
            int j = oldest_first ? k : n - 1 - k;
            if (aclrtDestroyStream(s[j]) != ACL_SUCCESS)
                fail_msg("aclrtDestroyStream of stream %d failed", j);
        }
        took += now_seconds() - t0;
        /* Too slow: the rest from the other end, so the failure is reported at once. */
        for (int i = k; i < n; i++)
            (void)aclrtDestroyStream(s[oldest_first ? n - 1 - (i - k) : i - k]);
        done += k;
        if (k < n)
            break;
    }
    free(s);
    print_message("destroying %d streams %s (rounds of %d): %.3f s\n", done,
                  oldest_first ? "oldest first" : "newest first", per_round, took);
    if (done < TOTAL || took > bound)
        fail_msg("destroying %d streams %s: only %d destroyed in %.2f s (bound %.0f s for "
                 "all): not O(1) per stream", TOTAL, oldest_first ? "oldest first" :
                 "newest first", done, took, bound);
}

static void test_destroy_streams_constant_time(void **state)
{
    (void)state;
    watchdog_arm(0, "destroying 100,000 streams", 1, 120);
    destroy_many(true);
    destroy_many(false);
    watchdog_disarm(0);
}

/* ---- 7. spare task memory is given back ---------------------------------------------- */

static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    assert_non_null(f);
    long size = 0, resident = 0;
    assert_int_equal(fscanf(f, "%ld %ld", &size, &resident), 2);
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static void queue_memsets(void *dev, long n)
{
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    struct blocker b;
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    for (long i = 0; i < n; i++)
        if (aclrtMemsetAsync(dev, 4, (int32_t)(i & 0x7f), 4, s) != ACL_SUCCESS)
            fail_msg("aclrtMemsetAsync number %ld failed", i);
    blocker_release(&b);
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(s, 60000));
    EXPECT_OK(aclrtDestroyStream(s));
}

static void test_spare_tasks_returned(void **state)
{
    (void)state;
    watchdog_arm(0, "1M queued memsets", 1, 120);
    long n = under_sanitizer() ? 100000 : 1000000;
    void *dev = NULL;
    OK(aclrtMalloc(&dev, 4, ACL_MEM_MALLOC_HUGE_FIRST));
    queue_memsets(dev, 1000);   /* warm up: first allocations of everything */
    malloc_trim(0);
    long before = rss_bytes();
    queue_memsets(dev, n);
    malloc_trim(0);
    long after = rss_bytes();
    print_message("%ld queued memsets: resident memory %+.1f MiB after synchronize and "
                  "destroy\n", n, (double)(after - before) / (double)MiB);
    /* Sanitizer allocators keep freed memory in quarantine: only the
     * plain build can measure what the runtime gave back. */
    if (!under_sanitizer() && after - before > (long)(8 * MiB))
        fail_msg("%ld queued memsets left %+.1f MiB resident after synchronize and destroy "
                 "(bound +8 MiB): spare tasks are not given back", n,
                 (double)(after - before) / (double)MiB);
    OK(aclrtFree(dev));
    watchdog_disarm(0);
}

/* ---- 8. pointers from an ended session ------------------------------------------------ */

#define FILLER_STEP ((size_t)3 << 20)   /* round k puts its pointer k * 3 MiB into the session */

struct reuse {
    size_t filler;   /* bytes allocated before the new allocation */
    void *fresh;     /* allocated by the other thread in the new session */
    uint8_t byte;
};

/* Another thread: force-resets device 0 (ending the session the main
 * thread's allocation belongs to), opens it again and allocates as much
 * again, then the same size as the main thread's. */
static void *reset_and_allocate(void *arg)
{
    struct reuse *r = arg;
    void *filler = NULL;
    EXPECT_OK(aclrtResetDeviceForce(0));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtMalloc(&filler, r->filler, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&r->fresh, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(r->fresh, 256, r->byte, 256));
    EXPECT_OK(aclrtFree(filler));
    return NULL;
}

/* ... and, later, checks its allocation was left alone and frees it. */
static void *check_and_free(void *arg)
{
    struct reuse *r = arg;
    uint8_t back[256];
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtMemcpy(back, sizeof back, r->fresh, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < sizeof back; i++)
        if (back[i] != r->byte)
            fail_msg("byte %zu of the other thread's allocation is %d, want %d", i, back[i],
                     r->byte);
    EXPECT_OK(aclrtFree(r->fresh));
    EXPECT_OK(aclrtResetDevice(0));
    return NULL;
}

static void run_on_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

/* Thread A allocates x (k * 3 MiB into its session); thread B resets the
 * device, opens it again and allocates the same way. B's allocation used to
 * get x's address, and A's aclrtFree(x) freed it. Now (heap.c, THE SESSION
 * WINDOWS) x is outside every allocation of the next session, wherever it
 * lies in its own: the free and a copy through x are refused, and B's
 * memory is intact. 15 rounds. */
static void test_stale_pointer_after_reset(void **state)
{
    (void)state;
    for (int k = 1; k <= 15; k++) {
        void *filler = NULL, *x = NULL;
        OK(aclrtSetDevice(0));   /* (this thread's context died with the last reset) */
        OK(aclrtMalloc(&filler, (size_t)k * FILLER_STEP, ACL_MEM_MALLOC_HUGE_FIRST));
        OK(aclrtMalloc(&x, 256, ACL_MEM_MALLOC_HUGE_FIRST));
        OK(aclrtFree(filler));
        struct reuse r = {(size_t)k * FILLER_STEP, NULL, (uint8_t)(0x40 + k)};
        run_on_thread(reset_and_allocate, &r);
        if (r.fresh == x)
            fail_msg("round %d: the next session's allocation got x's address %p", k, x);
        EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "not the start of a live aclrtMalloc allocation",
                    "from before a reset of the device", aclrtFree(x));
        OK(aclrtSetDevice(0));
        uint8_t zeros[256] = {0};
        EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL,
                   aclrtMemcpy(x, 256, zeros, sizeof zeros, ACL_MEMCPY_HOST_TO_DEVICE));
        run_on_thread(check_and_free, &r);
    }
}

/* The same across aclFinalize and aclInit, for page-locked memory. */
static void test_stale_pinned_after_finalize(void **state)
{
    (void)state;
    for (int k = 1; k <= 15; k++) {
        void *filler = NULL, *old = NULL, *fresh = NULL;
        OK(aclrtMallocHost(&filler, (size_t)k * FILLER_STEP));
        OK(aclrtMallocHost(&old, 4096));
        OK(aclrtFreeHost(filler));
        OK(aclrtResetDevice(0));
        OK(aclFinalize());
        OK(aclInit(NULL));
        OK(aclrtSetDevice(0));
        OK(aclrtMallocHost(&filler, (size_t)k * FILLER_STEP));
        OK(aclrtMallocHost(&fresh, 4096));
        if (fresh == old)
            fail_msg("round %d: the next session's page-locked allocation got address %p", k,
                     old);
        memset(fresh, 0x5a, 4096);
        EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not the start of a live aclrtMallocHost allocation",
                   aclrtFreeHost(old));
        for (int i = 0; i < 4096; i++)
            if (((uint8_t *)fresh)[i] != 0x5a)
                fail_msg("round %d: byte %d of the new allocation changed", k, i);
        OK(aclrtFreeHost(fresh));
        OK(aclrtFreeHost(filler));
    }
}

/* An argument runs only the tests whose names match it (cmocka's filter: * and ? wildcards). */
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    /* The races that end the process when they fail (a crash, a TSan report) last. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_calls_race_destroy_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calls_race_reset_device, setup, teardown),
#ifdef ACLSIM_TEST_KERNELS_PATH
        cmocka_unit_test_setup_teardown(test_unload_races_destroy_stream, setup, teardown),
#endif
        cmocka_unit_test_setup_teardown(test_self_wait_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_streams_constant_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spare_tasks_returned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_pointer_after_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_pinned_after_finalize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_stream_races_destroy_context, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_calls_race_finalize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_symbol_use_races_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pinned_alloc_races_finalize, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
