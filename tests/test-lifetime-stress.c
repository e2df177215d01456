/*
 * The lifetime rule under random load (issue 19, "Done when"): 4 threads for
 * a bounded time mix random creation, use and destruction of streams,
 * events, contexts, device and page-locked memory, host functions and
 * kernels with aclrtSetDevice / aclrtResetDevice(Force) and, now and then,
 * aclFinalize + aclInit, all from any thread and on handles shared between
 * the threads. Every call must return one of the codes allowed for it; a
 * pageable copy that succeeded must have copied; no call may hang (a
 * watchdog slot per thread names the call that hangs) or crash.
 *
 * ACLSIM_STRESS_SECONDS sets the duration (default 5 s; 3 s in sanitizer
 * builds) for longer local runs; ACLSIM_STRESS_SEED the random seed;
 * ACLSIM_STRESS_SERIAL_FINALIZE=1 keeps aclFinalize + aclInit calls from
 * overlapping one another.
 *
 * The program itself follows the rules a correct program follows, so that
 * every failure is the runtime's: it never touches page-locked memory from
 * the host, it frees memory only after the stream that used it was
 * synchronized, and kernels write only to memory that lives for the whole
 * test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"
#include "watchdog.h"

#define THREADS 4
#define POOL 12            /* shared handles of each kind */
#define BUF 256            /* bytes per memory operation */
#define CALL_SECONDS 10.0  /* a single call taking longer is a hang */

ACLSIM_DEVICE_VAR(int32_t, st_slots, [THREADS]);   /* one element per thread */
ACLSIM_DEVICE_VAR(int32_t, st_blocks, );           /* bumped by every kernel block */

/* Kernels write here: host memory that outlives every session. */
static int32_t kernel_out[THREADS][8];

void st_kernel(int32_t thread, int32_t value)
{
    uint32_t b = aclsimGetBlockIdx();
    if (b < 8)
        __atomic_store_n(&kernel_out[thread][b], value, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ACLSIM_DEV(st_blocks), 1, __ATOMIC_RELAXED);
}
ACLSIM_KERNEL_REGISTER(st_kernel, int32_t, int32_t);

static atomic_int host_calls;

/* Handles shared by all threads: any thread may use or destroy any of them
 * at any time (a stale one must give 107017, never a crash). */
static void *_Atomic streams[POOL];
static void *_Atomic events[POOL];
static void *_Atomic contexts[POOL];

static atomic_bool stop;
static atomic_long finalizes;

/* ---- allowed codes ------------------------------------------------------------------- */

/* Refusals any call using a stream, event or context may meet when another
 * thread destroyed it, reset its device or finalized the runtime. */
#define REFUSED ACL_ERROR_UNINITIALIZE, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_INVALID_HANDLE, \
                ACL_ERROR_RT_STREAM_CONTEXT

enum op {
    OP_SET_DEVICE, OP_RESET_DEVICE, OP_RESET_DEVICE_FORCE, OP_CREATE_CONTEXT,
    OP_DESTROY_CONTEXT, OP_SET_CONTEXT, OP_CREATE_STREAM, OP_DESTROY_STREAM,
    OP_DESTROY_STREAM_FORCE, OP_SYNC_STREAM, OP_SYNC_DEVICE, OP_CREATE_EVENT,
    OP_DESTROY_EVENT, OP_RECORD, OP_WAIT, OP_SYNC_EVENT, OP_DEVICE_MEMORY,
    OP_PINNED_MEMORY, OP_HOST_FUNC, OP_KERNEL, OP_SYMBOL, OP_FINALIZE, NOPS
};

static const struct op_info {
    const char *name;
    int weight;
} ops[NOPS] = {
    [OP_SET_DEVICE] = {"aclrtSetDevice", 6},
    [OP_RESET_DEVICE] = {"aclrtResetDevice", 2},
    [OP_RESET_DEVICE_FORCE] = {"aclrtResetDeviceForce", 1},
    [OP_CREATE_CONTEXT] = {"aclrtCreateContext", 2},
    [OP_DESTROY_CONTEXT] = {"aclrtDestroyContext", 2},
    [OP_SET_CONTEXT] = {"aclrtSetCurrentContext", 4},
    [OP_CREATE_STREAM] = {"aclrtCreateStream", 6},
    [OP_DESTROY_STREAM] = {"aclrtDestroyStream", 4},
    [OP_DESTROY_STREAM_FORCE] = {"aclrtDestroyStreamForce", 2},
    [OP_SYNC_STREAM] = {"aclrtSynchronizeStream(WithTimeout)", 4},
    [OP_SYNC_DEVICE] = {"aclrtSynchronizeDevice", 2},
    [OP_CREATE_EVENT] = {"aclrtCreateEvent", 3},
    [OP_DESTROY_EVENT] = {"aclrtDestroyEvent", 2},
    [OP_RECORD] = {"aclrtRecordEvent", 4},
    [OP_WAIT] = {"aclrtStreamWaitEvent", 4},
    [OP_SYNC_EVENT] = {"aclrtSynchronizeEvent", 2},
    [OP_DEVICE_MEMORY] = {"device memory: malloc, memset/copy async, synchronize, free", 6},
    [OP_PINNED_MEMORY] = {"page-locked memory: malloc, copies async, synchronize, free", 4},
    [OP_HOST_FUNC] = {"aclrtLaunchHostFunc", 5},
    [OP_KERNEL] = {"kernel launch", 6},
    [OP_SYMBOL] = {"aclrtMemcpyTo/FromSymbolAsync (pageable)", 3},
    [OP_FINALIZE] = {"aclFinalize + aclInit", 0},   /* chosen apart, rarely */
};

struct thread {
    int id;
    unsigned seed;
    pthread_t handle;
    long calls;
    long outcomes[2];         /* succeeded, refused */
    atomic_int errors;
    char first_error[512];
    const char *current;      /* the call in progress */
};

static struct thread threads[THREADS];

static void st_error(struct thread *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void st_error(struct thread *t, const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    note_first_error(&t->errors, t->first_error, sizeof t->first_error, "thread %d: %s", t->id,
                     buf);
}

/* Checks rc against 0 and the allowed codes (a list ending with 0). */
static bool check_rc_(struct thread *t, const char *call, aclError rc, const aclError *allowed)
{
    t->calls++;
    t->outcomes[rc != ACL_SUCCESS]++;
    if (rc == ACL_SUCCESS)
        return true;
    for (const aclError *a = allowed; *a; a++)
        if (*a == rc) {
            drain_msg();
            return false;
        }
    st_error(t, "%s returned %d", call, rc);
    return false;
}
#define CHECK(t, call, ...) \
    check_rc_((t), #call, (call), (const aclError[]){__VA_ARGS__, 0})

static unsigned rnd(struct thread *t, unsigned n) { return (unsigned)rand_r(&t->seed) % n; }

static void *pick(struct thread *t, void *_Atomic *pool)
{
    return atomic_load(&pool[rnd(t, POOL)]);
}

/* A random shared stream, or NULL (the current context's default stream). */
static aclrtStream pick_stream(struct thread *t)
{
    return rnd(t, 4) == 0 ? NULL : pick(t, streams);
}

/* Puts a new handle into a random slot of pool; returns the one it displaced. */
static void *put(struct thread *t, void *_Atomic *pool, void *handle)
{
    return atomic_exchange(&pool[rnd(t, POOL)], handle);
}

static void *take(struct thread *t, void *_Atomic *pool)
{
    return atomic_exchange(&pool[rnd(t, POOL)], NULL);
}

/* ---- the operations ------------------------------------------------------------------ */

static void op_device_memory(struct thread *t)
{
    void *dev = NULL;
    if (!CHECK(t, aclrtMalloc(&dev, BUF, ACL_MEM_MALLOC_HUGE_FIRST), REFUSED))
        return;
    aclrtStream s = pick_stream(t);
    uint8_t byte = (uint8_t)(1 + rnd(t, 250));
    uint8_t host[BUF] = {0};
    bool set = CHECK(t, aclrtMemsetAsync(dev, BUF, byte, BUF, s), REFUSED, ACL_ERROR_INVALID_PARAM);
    bool copied = CHECK(t, aclrtMemcpyAsync(host, BUF, dev, BUF, ACL_MEMCPY_DEVICE_TO_HOST, s),
                        REFUSED, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_STREAM_ABORT);
    /* A pageable copy that returned waited for its task: in stream order
     * after the memset, or nothing copied at all. */
    for (int i = 0; i < BUF; i++) {
        if (copied && set && host[i] != byte) {
            st_error(t, "pageable aclrtMemcpyAsync after aclrtMemsetAsync(%d) on stream %p "
                     "succeeded but byte %d is %d", byte, s, i, host[i]);
            break;
        }
        if (!copied && host[i] != 0) {
            st_error(t, "pageable aclrtMemcpyAsync failed but copied (byte %d is %d)", i,
                     host[i]);
            break;
        }
    }
    /* Free only what no queued task can still touch. */
    if (CHECK(t, aclrtSynchronizeStreamWithTimeout(s, 5000), REFUSED))
        CHECK(t, aclrtFree(dev), REFUSED, ACL_ERROR_INVALID_PARAM);
}

static void op_pinned_memory(struct thread *t)
{
    void *pinned = NULL, *dev = NULL;
    if (!CHECK(t, aclrtMallocHost(&pinned, BUF), REFUSED))
        return;
    if (!CHECK(t, aclrtMalloc(&dev, BUF, ACL_MEM_MALLOC_HUGE_FIRST), REFUSED))
        return;   /* the page-locked buffer is left to aclFinalize */
    aclrtStream s = pick_stream(t);
    uint8_t byte = (uint8_t)(1 + rnd(t, 250));
    uint8_t host[BUF] = {0};
    bool ok = CHECK(t, aclrtMemsetAsync(dev, BUF, byte, BUF, s), REFUSED, ACL_ERROR_INVALID_PARAM);
    ok &= CHECK(t, aclrtMemcpyAsync(pinned, BUF, dev, BUF, ACL_MEMCPY_DEVICE_TO_HOST, s),
                REFUSED, ACL_ERROR_INVALID_PARAM);
    bool copied = CHECK(t, aclrtMemcpyAsync(host, BUF, pinned, BUF, ACL_MEMCPY_HOST_TO_HOST, s),
                        REFUSED, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_STREAM_ABORT);
    if (ok && copied && (host[0] != byte || host[BUF - 1] != byte))
        st_error(t, "device -> page-locked -> pageable copies on stream %p succeeded but "
                 "gave %d, %d (want %d)", s, host[0], host[BUF - 1], byte);
    if (CHECK(t, aclrtSynchronizeStreamWithTimeout(s, 5000), REFUSED)) {
        CHECK(t, aclrtFree(dev), REFUSED, ACL_ERROR_INVALID_PARAM);
        CHECK(t, aclrtFreeHost(pinned), REFUSED, ACL_ERROR_INVALID_PARAM);
    }
}

static void op_kernel(struct thread *t)
{
    aclrtFuncHandle f = NULL;
    if (!CHECK(t, aclrtGetFuncBySymbol(FN(st_kernel), &f), ACL_ERROR_UNINITIALIZE))
        return;
    int32_t id = t->id, value = (int32_t)rnd(t, 1000);
    aclrtStream s = pick_stream(t);
    uint32_t blocks = 1 + rnd(t, 8);
    if (rnd(t, 2)) {
        void *args[] = {&id, &value};
        CHECK(t, aclrtLaunchKernelWithArgsArray(f, blocks, s, NULL, args), REFUSED);
    } else {
        int32_t packed[2] = {id, value};
        CHECK(t, aclrtLaunchKernel(f, blocks, packed, sizeof packed, s), REFUSED);
    }
}

static void op_symbol(struct thread *t)
{
    aclrtStream s = pick_stream(t);
    int32_t in = (int32_t)rnd(t, 1 << 20) + 1, out = 0;
    size_t off = (size_t)t->id * sizeof(int32_t);
    bool wrote = CHECK(t, aclrtMemcpyToSymbolAsync(st_slots, &in, 4, off,
                                                   ACL_MEMCPY_HOST_TO_DEVICE, s),
                       REFUSED, ACL_ERROR_RT_STREAM_ABORT);
    bool read = CHECK(t, aclrtMemcpyFromSymbolAsync(&out, 4, st_slots, 4, off,
                                                    ACL_MEMCPY_DEVICE_TO_HOST, s),
                      REFUSED, ACL_ERROR_RT_STREAM_ABORT);
    /* Only this thread writes its element: read back after a write that
     * succeeded on the same stream object, it is what was written. */
    if (wrote && read && out != in)
        st_error(t, "aclrtMemcpyFromSymbolAsync after aclrtMemcpyToSymbolAsync(%d) read %d", in,
                 out);
    if (!read && out != 0)
        st_error(t, "aclrtMemcpyFromSymbolAsync failed but copied %d", out);
}

/* ACLSIM_STRESS_SERIAL_FINALIZE=1: one aclFinalize + aclInit at a time
 * (to look for other failures while concurrent aclFinalize calls fail). */
static bool serial_finalize;
static pthread_mutex_t finalize_lock = PTHREAD_MUTEX_INITIALIZER;

static void op_finalize(struct thread *t)
{
    atomic_fetch_add(&finalizes, 1);
    if (serial_finalize)
        pthread_mutex_lock(&finalize_lock);
    CHECK(t, aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    CHECK(t, aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
    if (serial_finalize)
        pthread_mutex_unlock(&finalize_lock);
}

static void run_op(struct thread *t, int op)
{
    int32_t dev = (int32_t)rnd(t, 2);
    void *h;
    switch (op) {
    case OP_SET_DEVICE:
        CHECK(t, aclrtSetDevice(dev), ACL_ERROR_UNINITIALIZE);
        break;
    case OP_RESET_DEVICE:
        CHECK(t, aclrtResetDevice(dev), ACL_ERROR_UNINITIALIZE);
        break;
    case OP_RESET_DEVICE_FORCE:
        CHECK(t, aclrtResetDeviceForce(dev), ACL_ERROR_UNINITIALIZE);
        break;
    case OP_CREATE_CONTEXT: {
        aclrtContext c = NULL;
        if (CHECK(t, aclrtCreateContext(&c, dev), ACL_ERROR_UNINITIALIZE) &&
            (h = put(t, contexts, c)))
            CHECK(t, aclrtDestroyContext(h), REFUSED);
        break;
    }
    case OP_DESTROY_CONTEXT:
        if ((h = take(t, contexts)))
            CHECK(t, aclrtDestroyContext(h), REFUSED);
        break;
    case OP_SET_CONTEXT:
        if ((h = pick(t, contexts)))
            CHECK(t, aclrtSetCurrentContext(h), REFUSED);
        break;
    case OP_CREATE_STREAM: {
        aclrtStream s = NULL;
        if (CHECK(t, aclrtCreateStream(&s), REFUSED) && (h = put(t, streams, s)))
            CHECK(t, aclrtDestroyStream(h), REFUSED);
        break;
    }
    case OP_DESTROY_STREAM:
        if ((h = take(t, streams)))
            CHECK(t, aclrtDestroyStream(h), REFUSED);
        break;
    case OP_DESTROY_STREAM_FORCE:
        if ((h = take(t, streams)))
            CHECK(t, aclrtDestroyStreamForce(h), REFUSED);
        break;
    case OP_SYNC_STREAM: {
        aclrtStream s = pick_stream(t);
        if (rnd(t, 2))
            CHECK(t, aclrtSynchronizeStream(s), REFUSED);
        else
            CHECK(t, aclrtSynchronizeStreamWithTimeout(s, 5000), REFUSED);
        break;
    }
    case OP_SYNC_DEVICE:
        CHECK(t, aclrtSynchronizeDevice(), REFUSED);
        break;
    case OP_CREATE_EVENT: {
        aclrtEvent e = NULL;
        if (CHECK(t, aclrtCreateEvent(&e), REFUSED) && (h = put(t, events, e)))
            CHECK(t, aclrtDestroyEvent(h), REFUSED);
        break;
    }
    case OP_DESTROY_EVENT:
        if ((h = take(t, events)))
            CHECK(t, aclrtDestroyEvent(h), REFUSED);
        break;
    case OP_RECORD:
        if ((h = pick(t, events)))
            CHECK(t, aclrtRecordEvent(h, pick_stream(t)), REFUSED);
        break;
    case OP_WAIT:
        if ((h = pick(t, events)))
            CHECK(t, aclrtStreamWaitEvent(pick_stream(t), h), REFUSED);
        break;
    case OP_SYNC_EVENT:
        if ((h = pick(t, events)))
            CHECK(t, aclrtSynchronizeEvent(h), REFUSED);
        break;
    case OP_DEVICE_MEMORY:
        op_device_memory(t);
        break;
    case OP_PINNED_MEMORY:
        op_pinned_memory(t);
        break;
    case OP_HOST_FUNC:
        CHECK(t, aclrtLaunchHostFunc(pick_stream(t), count_fn, &host_calls), REFUSED);
        break;
    case OP_KERNEL:
        op_kernel(t);
        break;
    case OP_SYMBOL:
        op_symbol(t);
        break;
    default:
        op_finalize(t);
        break;
    }
}

static int total_weight(void)
{
    int total = 0;
    for (int i = 0; i < NOPS; i++)
        total += ops[i].weight;
    return total;
}

static int pick_op(struct thread *t)
{
    if (rnd(t, 1500) == 0)
        return OP_FINALIZE;
    int x = (int)rnd(t, (unsigned)total_weight());
    for (int i = 0; i < NOPS; i++)
        if ((x -= ops[i].weight) < 0)
            return i;
    return OP_SYNC_DEVICE;
}

static void *thread_main(void *arg)
{
    struct thread *t = arg;
    CHECK(t, aclrtSetDevice(t->id % 2), ACL_ERROR_UNINITIALIZE);
    while (!atomic_load(&stop) && atomic_load(&t->errors) == 0) {
        int op = pick_op(t);
        watchdog_arm(1 + t->id, ops[op].name, t->calls, CALL_SECONDS);
        run_op(t, op);
        watchdog_disarm(1 + t->id);
    }
    return NULL;
}

static void test_random_lifetimes(void **state)
{
    (void)state;
    const char *sec = getenv("ACLSIM_STRESS_SECONDS");
    double seconds = sec ? strtod(sec, NULL) : under_sanitizer() ? 3.0 : 5.0;
    if (!(seconds > 0))
        seconds = 5.0;
    const char *seed_env = getenv("ACLSIM_STRESS_SEED");
    unsigned seed = seed_env ? (unsigned)strtoul(seed_env, NULL, 0) : 20261130u;
    const char *serial = getenv("ACLSIM_STRESS_SERIAL_FINALIZE");
    serial_finalize = serial && strcmp(serial, "1") == 0;
    print_message("stress: %d threads for %.1f s, seed %u%s\n", THREADS, seconds, seed,
                  serial_finalize ? ", one aclFinalize at a time" : "");
    watchdog_arm(0, "the lifetime stress test", 0, seconds + 60);
    atomic_store(&stop, false);
    for (int i = 0; i < THREADS; i++) {
        struct thread *t = &threads[i];
        memset(t, 0, sizeof *t);
        t->id = i;
        t->seed = seed * 2654435761u + (unsigned)i;
        assert_int_equal(pthread_create(&t->handle, NULL, thread_main, t), 0);
    }
    double end = now_seconds() + seconds;
    while (now_seconds() < end) {
        sleep_ms(20);
        bool failed = false;
        for (int i = 0; i < THREADS; i++)
            failed |= atomic_load(&threads[i].errors) != 0;
        if (failed)
            break;
    }
    atomic_store(&stop, true);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i].handle, NULL);
    long calls = 0, ok = 0;
    for (int i = 0; i < THREADS; i++) {
        calls += threads[i].calls;
        ok += threads[i].outcomes[0];
    }
    print_message("stress: %ld calls (%ld succeeded, %ld refused), %ld aclFinalize + aclInit, "
                  "%d host functions ran\n", calls, ok, calls - ok, atomic_load(&finalizes),
                  atomic_load(&host_calls));
    for (int i = 0; i < THREADS; i++)
        if (atomic_load(&threads[i].errors))
            fail_msg("%d error(s); first: %s", atomic_load(&threads[i].errors),
                     threads[i].first_error);

    /* Afterwards the runtime works: a new stream and the devices synchronize. */
    aclError rc = aclInit(NULL);
    assert_true(rc == ACL_SUCCESS || rc == ACL_ERROR_REPEAT_INITIALIZE);
    for (int32_t d = 0; d < 2; d++) {
        EXPECT_OK(aclrtSetDevice(d));
        aclrtStream s = NULL;
        EXPECT_OK(aclrtCreateStream(&s));
        int before = atomic_load(&host_calls);
        EXPECT_OK(aclrtLaunchHostFunc(s, count_fn, &host_calls));
        EXPECT_OK(aclrtSynchronizeStreamWithTimeout(s, 5000));
        assert_true(atomic_load(&host_calls) > before);
        EXPECT_OK(aclrtSynchronizeDevice());
        EXPECT_OK(aclrtDestroyStream(s));
    }
    assert_true(calls > 1000);
    watchdog_disarm(0);
}

static int setup(void **state)
{
    (void)state;
    watchdog_start();
    unset_config();
    setenv("ACLSIM_WORKERS", "2", 1);
    return init_devices("2", "64M") == ACL_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    watchdog_arm(0, "teardown (reset and finalize)", 0, 30);
    (void)reset_and_finalize();
    watchdog_disarm(0);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_random_lifetimes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
