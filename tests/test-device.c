/*
 * Simulated devices: aclrtGetDeviceCount, ASCEND_RT_VISIBLE_DEVICES selection
 * and renumbering, aclrtSetDevice / aclrtResetDevice reference counting,
 * aclrtResetDeviceForce, aclrtGetDevice, aclrtGetMemInfo, aclrtSynchronizeDevice,
 * lazy devices.
 *
 * Every test starts and ends with the runtime finalized and the configuration
 * variables unset.
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
#include <time.h>

#include "acl/acl.h"
#include "common.h"


/* ---- helpers --------------------------------------------------------------- */

static void init_with(const char *devices, const char *memory)
{
    assert_int_equal(init_devices(devices, memory), ACL_SUCCESS);
}

static uint32_t device_count(void)
{
    uint32_t n = 12345;
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    return n;
}

static void mem_info(size_t *free_b, size_t *total)
{
    assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, free_b, total), ACL_SUCCESS);
}

/* Actor steps: each records its return code(s). */
struct step { int32_t dev; aclError rc; int32_t got; char msg[512]; };

static void step_set_device(void *p)
{
    struct step *s = p;
    s->rc = aclrtSetDevice(s->dev);
}

static void step_reset_device(void *p)
{
    struct step *s = p;
    s->rc = aclrtResetDevice(s->dev);
}

static void step_get_device(void *p)
{
    struct step *s = p;
    s->got = -1;
    s->rc = aclrtGetDevice(&s->got);
    const char *m = aclGetRecentErrMsg();
    snprintf(s->msg, sizeof s->msg, "%s", m ? m : "");
}

static void step_get_context(void *p)
{
    struct step *s = p;
    aclrtContext c = NULL;
    s->rc = aclrtGetCurrentContext(&c);
    drain_msg();
}

/* ---- device count and ASCEND_RT_VISIBLE_DEVICES ------------------------------------ */

static void test_device_count(void **state)
{
    (void)state;
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(device_count(), 8);   /* default */
    assert_int_equal(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetDeviceCount");
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    static const char *const counts[] = {"1", "3", "16", "32"};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        init_with(counts[i], NULL);
        assert_int_equal(device_count(), (uint32_t)atoi(counts[i]));
        /* The last id is valid, the next one is not. */
        int32_t last = atoi(counts[i]) - 1;
        assert_int_equal(aclrtSetDevice(last), ACL_SUCCESS);
        assert_int_equal(current_device(), last);
        assert_int_equal(aclrtSetDevice(last + 1), ACL_ERROR_RT_INVALID_DEVICEID);
        drain_msg();
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
    }
}

static void test_visible_devices(void **state)
{
    (void)state;
    static const struct { const char *physical, *visible; uint32_t count; } cases[] = {
        {"4", "1, 2,3", 1},      /* parsing stops at the space */
        {"4", "0,2", 2},
        {"4", "0,1,2,3", 4},
        {"4", "3", 1},
        {"4", "1,3", 2},
        {"4", "0,5,1", 1},       /* out of range: stops */
        {"4", "1,3,4", 2},
        {"4", "0,1,x,2", 2},
        {"8", "7", 1},
        {"8", "0,7", 2},
        {"8", "1,2,3,5,6", 5},
        {"2", "0,1,2,3", 2},
        /* Out of order, repeated or no id at all: refused (tests/test-config.c). */
    };
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("ACLSIM_DEVICE_COUNT", cases[i].physical, 1);
        setenv("ASCEND_RT_VISIBLE_DEVICES", cases[i].visible, 1);
        aclError rc = aclInit(NULL);
        uint32_t n = 0;
        if (rc != ACL_SUCCESS) {
            print_error("ACLSIM_DEVICE_COUNT=%s ASCEND_RT_VISIBLE_DEVICES=\"%s\": aclInit = %d\n",
                        cases[i].physical, cases[i].visible, rc);
            failures++;
            continue;
        }
        assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
        if (n != cases[i].count) {
            print_error("ACLSIM_DEVICE_COUNT=%s ASCEND_RT_VISIBLE_DEVICES=\"%s\": %u device(s), "
                        "expected %u\n", cases[i].physical, cases[i].visible, n, cases[i].count);
            failures++;
        }
        /* Renumbered 0..n-1. */
        if (n != 0) {
            assert_int_equal(aclrtSetDevice((int32_t)n - 1), ACL_SUCCESS);
            assert_int_equal(current_device(), (int32_t)n - 1);
            assert_int_equal(aclrtResetDevice((int32_t)n - 1), ACL_SUCCESS);
        }
        assert_int_equal(aclrtSetDevice((int32_t)n), ACL_ERROR_RT_INVALID_DEVICEID);
        drain_msg();
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
    }
    assert_int_equal(failures, 0);
}

/* Visible devices are real, separate devices under their new numbers. */
static void test_visible_devices_renumbered(void **state)
{
    (void)state;
    setenv("ASCEND_RT_VISIBLE_DEVICES", "1,3", 1);
    init_with("4", "64M");
    assert_int_equal(device_count(), 2);
    void *p0, *p1;
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtMalloc(&p0, 8 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(hbm_free(), 56 * MiB);
    assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
    assert_int_equal(current_device(), 1);
    assert_int_equal(hbm_free(), 64 * MiB);   /* logical 1 is another device */
    assert_int_equal(aclrtMalloc(&p1, 16 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(hbm_free(), 48 * MiB);
    assert_int_equal(aclrtSetDevice(2), ACL_ERROR_RT_INVALID_DEVICEID);
    expect_msg("aclrtSetDevice", "2");
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(hbm_free(), 56 * MiB);
    assert_int_equal(aclrtFree(p0), ACL_SUCCESS);
    assert_int_equal(aclrtFree(p1), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

/* ---- aclrtSetDevice / aclrtGetDevice ------------------------------------------------ */

static void test_set_device_invalid(void **state)
{
    (void)state;
    init_with("4", "64M");
    static const int32_t bad[] = {-1, 4, 5, 32, 100, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", bad[i]);
        assert_int_equal(aclrtSetDevice(bad[i]), ACL_ERROR_RT_INVALID_DEVICEID);
        expect_msg("aclrtSetDevice", id);
        /* Nothing happened: still no current device. */
        int32_t d;
        assert_int_equal(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL);
        drain_msg();
    }
    assert_int_equal(aclrtResetDevice(4), ACL_ERROR_RT_INVALID_DEVICEID);
    expect_msg("aclrtResetDevice", "4");
    assert_int_equal(aclrtResetDeviceForce(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    expect_msg("aclrtResetDeviceForce", "-1");
}

static void test_get_device(void **state)
{
    (void)state;
    init_with("4", "64M");
    int32_t d = 77;
    assert_int_equal(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL);
    expect_msg("aclrtGetDevice");
    assert_int_equal(d, 77);
    assert_int_equal(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetDevice");

    assert_int_equal(aclrtSetDevice(2), ACL_SUCCESS);
    assert_int_equal(current_device(), 2);
    assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
    assert_int_equal(current_device(), 1);
    assert_int_equal(aclrtSetDevice(2), ACL_SUCCESS);
    assert_int_equal(current_device(), 2);

    /* Per thread: another thread has none until it sets one. */
    struct actor a;
    actor_start(&a);
    struct step s = {0};
    actor_run(&a, step_get_device, &s);
    assert_int_equal(s.rc, ACL_ERROR_RT_CONTEXT_NULL);
    assert_non_null(strstr(s.msg, "aclrtGetDevice"));
    s.dev = 3;
    actor_run(&a, step_set_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    actor_run(&a, step_get_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    assert_int_equal(s.got, 3);
    assert_int_equal(current_device(), 2);   /* unchanged here */
    actor_stop(&a);
}

/* ---- reference counting ----------------------------------------------------------------- */

static void test_reset_refcount(void **state)
{
    (void)state;
    init_with("2", "64M");
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    size_t free0 = hbm_free();
    void *p = NULL;
    assert_int_equal(aclrtMalloc(&p, 4 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    char in[256], out[256];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (char)(i * 7 + 1);
    assert_int_equal(aclrtMemcpy(p, 4 * MiB, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);

    /* Two resets of three: the device, its memory and the pointer survive. */
    for (int r = 0; r < 2; r++) {
        assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
        assert_int_equal(current_device(), 0);
        assert_int_equal(hbm_free(), free0 - 4 * MiB);
        memset(out, 0, sizeof out);
        assert_int_equal(aclrtMemcpy(out, sizeof out, p, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST),
                         ACL_SUCCESS);
        assert_memory_equal(out, in, sizeof in);
        aclrtStream s;
        assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
        assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
    }

    /* The last reset closes it: no current context, the memory is gone. */
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    int32_t d;
    assert_int_equal(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL);
    expect_msg("aclrtGetDevice");
    size_t f, t;
    assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_ERROR_RT_CONTEXT_NULL);
    drain_msg();
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    mem_info(&f, &t);
    assert_int_equal(f, t);
    assert_int_not_equal(aclrtFree(p), ACL_SUCCESS);   /* died with the device */
    expect_msg("aclrtFree");
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
}

/* Reference counts are per process: a reset in one thread does not close a
 * device another thread still holds. */
static void test_reset_refcount_across_threads(void **state)
{
    (void)state;
    init_with("2", "64M");
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    void *p = NULL;
    assert_int_equal(aclrtMalloc(&p, MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);

    struct actor a;
    actor_start(&a);
    struct step s = {.dev = 0};
    actor_run(&a, step_set_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);

    /* This thread's reset: the other still holds the device. */
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    actor_run(&a, step_get_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    assert_int_equal(s.got, 0);
    assert_int_equal(current_device(), 0);   /* still open: still current here */
    assert_int_equal(aclrtMemset(p, MiB, 0x5a, MiB), ACL_SUCCESS);
    size_t f, t;
    mem_info(&f, &t);
    assert_int_equal(f, t - MiB);

    /* The other thread's reset is the last one: both threads lose the
     * default context. */
    actor_run(&a, step_reset_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    actor_run(&a, step_get_device, &s);
    assert_int_equal(s.rc, ACL_ERROR_RT_CONTEXT_NULL);
    actor_run(&a, step_get_context, &s);
    assert_int_equal(s.rc, ACL_ERROR_RT_CONTEXT_NULL);
    int32_t d;
    assert_int_equal(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL);
    expect_msg("aclrtGetDevice");
    aclrtStream st;
    assert_int_equal(aclrtCreateStream(&st), ACL_ERROR_RT_CONTEXT_NULL);
    expect_msg("aclrtCreateStream");

    /* Setting the device again works in both. */
    s.dev = 0;
    actor_run(&a, step_set_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    actor_run(&a, step_get_device, &s);
    assert_int_equal(s.got, 0);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    mem_info(&f, &t);
    assert_int_equal(f, t);
    actor_stop(&a);
}

static void test_reset_device_force(void **state)
{
    (void)state;
    init_with("2", "64M");
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    struct actor a;
    actor_start(&a);
    struct step s = {.dev = 0};
    actor_run(&a, step_set_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);

    void *p = NULL;
    assert_int_equal(aclrtMalloc(&p, 2 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    aclrtStream st;
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);

    /* Device 1 is not affected. */
    s.dev = 1;
    struct actor b;
    actor_start(&b);
    actor_run(&b, step_set_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);

    assert_int_equal(aclrtResetDeviceForce(0), ACL_SUCCESS);
    int32_t d;
    assert_int_equal(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL);
    drain_msg();
    actor_run(&a, step_get_device, &s);
    assert_int_equal(s.rc, ACL_ERROR_RT_CONTEXT_NULL);
    actor_run(&b, step_get_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    assert_int_equal(s.got, 1);

    /* The stream died with the device. */
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(st), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtSynchronizeStream");
    size_t f, t;
    mem_info(&f, &t);
    assert_int_equal(f, t);
    /* A force reset of a device with one reference. */
    assert_int_equal(aclrtResetDeviceForce(0), ACL_SUCCESS);
    assert_int_equal(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL);
    drain_msg();
    actor_stop(&a);
    actor_stop(&b);
}

/* ---- memory info ------------------------------------------------------------------------ */

static void test_mem_info(void **state)
{
    (void)state;
    init_with("2", "64M");
    size_t f = 0, t = 0;
    assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_ERROR_RT_CONTEXT_NULL);
    expect_msg("aclrtGetMemInfo");
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);

    static const aclrtMemAttr hbm[] = {
        ACL_HBM_MEM, ACL_HBM_MEM_HUGE, ACL_HBM_MEM_NORMAL, ACL_HBM_MEM_P2P_HUGE,
        ACL_HBM_MEM_P2P_NORMAL, ACL_HBM_MEM_HUGE1G, ACL_HBM_MEM_P2P_HUGE1G,
    };
    size_t free0 = 0;
    mem_info(&free0, &t);
    assert_int_equal(t, 64 * MiB);
    assert_true(free0 <= t);
    for (size_t i = 0; i < sizeof hbm / sizeof hbm[0]; i++) {
        assert_int_equal(aclrtGetMemInfo(hbm[i], &f, &t), ACL_SUCCESS);
        assert_int_equal(t, 64 * MiB);
        assert_int_equal(f, free0);
    }

    void *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(aclrtMalloc(&a, MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(hbm_free(), free0 - MiB);
    assert_int_equal(aclrtMalloc(&b, 16 * MiB, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
    assert_int_equal(hbm_free(), free0 - 17 * MiB);
    assert_int_equal(aclrtMalloc(&c, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    size_t after_c = hbm_free();
    assert_true(after_c <= free0 - 17 * MiB - 100);
    for (size_t i = 0; i < sizeof hbm / sizeof hbm[0]; i++) {
        assert_int_equal(aclrtGetMemInfo(hbm[i], &f, &t), ACL_SUCCESS);
        assert_int_equal(t, 64 * MiB);
        assert_true(f <= free0 - 17 * MiB - 100);
    }

    /* Another device's memory is its own. */
    assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
    mem_info(&f, &t);
    assert_int_equal(t, 64 * MiB);
    assert_int_equal(f, free0);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);

    assert_int_equal(aclrtFree(b), ACL_SUCCESS);
    assert_int_equal(hbm_free(), after_c + 16 * MiB);
    assert_int_equal(aclrtFree(c), ACL_SUCCESS);
    assert_int_equal(hbm_free(), free0 - MiB);
    assert_int_equal(aclrtFree(a), ACL_SUCCESS);
    assert_int_equal(hbm_free(), free0);

    /* Capacity is enforced; a failed allocation changes nothing. */
    void *big = NULL;
    assert_int_equal(aclrtMalloc(&big, 65 * MiB, ACL_MEM_MALLOC_HUGE_FIRST),
                     ACL_ERROR_RT_MEMORY_ALLOCATION);
    expect_msg("aclrtMalloc");
    assert_int_equal(hbm_free(), free0);
    assert_int_equal(aclrtMalloc(&big, free0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(hbm_free(), 0);
    void *more = NULL;
    assert_int_equal(aclrtMalloc(&more, 64, ACL_MEM_MALLOC_HUGE_FIRST),
                     ACL_ERROR_RT_MEMORY_ALLOCATION);
    drain_msg();
    assert_int_equal(aclrtFree(big), ACL_SUCCESS);
    assert_int_equal(hbm_free(), free0);

    /* Bad arguments. */
    assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &t), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetMemInfo");
    assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &f, NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetMemInfo");
    assert_int_equal(aclrtGetMemInfo((aclrtMemAttr)999, &f, &t), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetMemInfo");
}

/* ---- aclrtSynchronizeDevice ------------------------------------------------------------ */

static atomic_int done_count;

static void slow_task(void *arg)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_fetch_add(&done_count, 1);
    atomic_store((atomic_int *)arg, 1);
}

static void test_synchronize_device(void **state)
{
    (void)state;
    init_with("2", "64M");
    assert_int_equal(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL);
    expect_msg("aclrtSynchronizeDevice");

    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext dflt;
    assert_int_equal(aclrtGetCurrentContext(&dflt), ACL_SUCCESS);
    aclrtStream s1, s2, s3;
    assert_int_equal(aclrtCreateStream(&s1), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&s2), ACL_SUCCESS);

    /* A stream of another context of the same device. */
    aclrtContext other;
    assert_int_equal(aclrtCreateContext(&other, 0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&s3), ACL_SUCCESS);

    enum { PER_STREAM = 3 };
    static atomic_int flags[4][PER_STREAM];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < PER_STREAM; j++)
            atomic_store(&flags[i][j], 0);
    atomic_store(&done_count, 0);
    for (int j = 0; j < PER_STREAM; j++)
        assert_int_equal(aclrtLaunchHostFunc(s3, slow_task, &flags[3][j]), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
    aclrtStream streams[3] = {NULL, s1, s2};   /* NULL: the default stream */
    for (int j = 0; j < PER_STREAM; j++)
        for (int i = 0; i < 3; i++)
            assert_int_equal(aclrtLaunchHostFunc(streams[i], slow_task, &flags[i][j]),
                             ACL_SUCCESS);

    assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
    assert_int_equal(atomic_load(&done_count), 4 * PER_STREAM);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < PER_STREAM; j++)
            assert_int_equal(atomic_load(&flags[i][j]), 1);

    /* Nothing queued: returns at once. */
    assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);

    assert_int_equal(aclrtDestroyStream(s1), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s2), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(other), ACL_SUCCESS);
}

/* ---- lazy devices ----------------------------------------------------------------------- */

/* Virtual memory size of this process, from /proc/self/status. */
static size_t vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
}

static void test_unused_devices_cost_nothing(void **state)
{
    (void)state;
    size_t vm0 = vm_size();
    /* 8 x 64 GiB: reserving all of it up front would show as 1.5 TiB of
     * address space (kept well under what sanitizer runtimes allow). */
    init_with("8", "64G");
    size_t vm1 = vm_size();
    if (vm0 && vm1)
        assert_true(vm1 < vm0 + GiB);   /* aclInit reserves no device memory */

    assert_int_equal(aclrtSetDevice(5), ACL_SUCCESS);
    size_t f, t;
    mem_info(&f, &t);
    assert_int_equal(t, 64 * GiB);
    void *p = NULL;
    assert_int_equal(aclrtMalloc(&p, 64 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMemset(p, 64 * MiB, 1, 64 * MiB), ACL_SUCCESS);
    assert_int_equal(hbm_free(), f - 64 * MiB);
    size_t vm2 = vm_size();
    if (vm0 && vm2)
        /* One device's worth, not eight: its memory's address space three
         * times (heap.c, THE SESSION WINDOWS), and half as much again in
         * checker mode. */
        assert_true(vm2 < vm0 + 5 * 64 * GiB);
    assert_int_equal(aclrtFree(p), ACL_SUCCESS);
    assert_int_equal(aclrtResetDevice(5), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_clean, teardown_clean)
    const struct CMUnitTest tests[] = {
        T(test_device_count),
        T(test_visible_devices),
        T(test_visible_devices_renumbered),
        T(test_set_device_invalid),
        T(test_get_device),
        T(test_reset_refcount),
        T(test_reset_refcount_across_threads),
        T(test_reset_device_force),
        T(test_mem_info),
        T(test_synchronize_device),
        T(test_unused_devices_cost_nothing),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
