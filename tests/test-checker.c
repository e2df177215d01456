/*
 * Checker mode (ACLSIM_CHECK, docs/checker.md): for each detector, a program
 * with the bug gets exactly the report (on stderr, in aclGetRecentErrMsg)
 * and CANN's code, and the same program fixed gets none. Also: the switch
 * (environment, aclInit JSON, refused values) and that without the checker
 * the bugs go unnoticed, as on an NPU.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

enum { WEIGHTS_LINE = __LINE__ + 1 };
ACLSIM_DEVICE_VAR(float, weights, [16]) = {1, 2};

/* Writes weights[at + block] (at 16: one past the end) and out[block]. */
static void k_write_var(float *out, int at)
{
    uint32_t i = aclsimGetBlockIdx();
    float *w = ACLSIM_DEV(weights);   /* (through a pointer: UBSan's bounds check is not the point) */
    w[at + (int)i] = 7.0f;
    out[i] = 1.0f;
}
ACLSIM_KERNEL_REGISTER(k_write_var, float *, int);

/* Writes p[at] (at -1: just before the start). */
static void k_write_at(int *p, int at)
{
    p[at] = 5;
}
ACLSIM_KERNEL_REGISTER(k_write_at, int *, int);

/* ---- fixtures ------------------------------------------------------------------------- */

static int setup_checked(void **state)
{
    setenv("ACLSIM_CHECK", "1", 1);
    return setup_device0(state);
}

/* Every detector but early-host-access, by name. */
static int setup_checked_but_early(void **state)
{
    setenv("ACLSIM_CHECK", "oob,stale,free-pending,race,uninit", 1);
    return setup_device0(state);
}

static int setup_unchecked(void **state)
{
    unsetenv("ACLSIM_CHECK");
    return setup_device0(state);
}

static int teardown_checked(void **state)
{
    unsetenv("ACLSIM_CHECK");
    return teardown_device0(state);
}

static aclError launch(const void *fn, uint32_t blocks, aclrtStream s, void *a0, int a1)
{
    void *args[] = {&a0, &a1};
    return aclrtLaunchKernelWithArgsArray(func_by_symbol(fn), blocks, s, NULL, args);
}

/* ---- oob ---------------------------------------------------------------------------- */

static void test_oob_device_variable(void **state)
{
    (void)state;
    float *out;
    OK(aclrtMalloc((void **)&out, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    char printed[4096], line[32];
    snprintf(line, sizeof line, "test-checker.c:%d", WEIGHTS_LINE);

    /* The bug: the last block writes weights[16], one past the end. */
    capture_begin();
    EXPECT_OK(launch(FN(k_write_var), 1, NULL, out, 16));
    aclError rc = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("kernel k_write_var", "device 0", "the default stream",
               "out of bounds: block 0 of 1 wrote offsets 64 to 67 (past its end) of device "
               "variable weights (64 bytes, defined at ", line);
    expect_one_report(printed, "oob", "kernel k_write_var (task ", line);

    /* Fixed: blocks write weights[0..3]. */
    capture_begin();
    EXPECT_OK(launch(FN(k_write_var), 4, NULL, out, 0));
    rc = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    OK(aclrtFree(out));
}

static void test_oob_allocation_before_start(void **state)
{
    (void)state;
    int *p;
    OK(aclrtMalloc((void **)&p, 40, ACL_MEM_MALLOC_HUGE_FIRST));
    int data[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, back[10] = {0};
    OK(aclrtMemcpy(p, sizeof data, data, sizeof data, ACL_MEMCPY_HOST_TO_DEVICE));
    char printed[4096];
    capture_begin();
    EXPECT_OK(launch(FN(k_write_at), 1, NULL, p, -1));
    aclError rc = aclrtSynchronizeDevice();
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("kernel k_write_at", "out of bounds: block 0 of 1 wrote offsets -4 to -1 "
               "(before its start) of the 40-byte allocation", "aclrtMalloc called from ",
               "device 0");
    expect_one_report(printed, "oob", "aclrtMalloc called from", NULL);
    /* The report re-poisons the guard zones only: the contents stay (they
     * used to be refilled with uninit's unwritten pattern). */
    capture_begin();
    rc = aclrtMemcpy(back, sizeof back, p, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    assert_memory_equal(back, data, sizeof data);

    capture_begin();
    EXPECT_OK(launch(FN(k_write_at), 1, NULL, p, 9));   /* the last int: fine */
    rc = aclrtSynchronizeDevice();
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    OK(aclrtFree(p));
}

/* Blocks running in parallel: the report still names the variable. */
static void test_oob_many_blocks(void **state)
{
    (void)state;
    float *out;
    OK(aclrtMalloc((void **)&out, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    char printed[4096];
    capture_begin();
    EXPECT_OK(launch(FN(k_write_var), 4, NULL, out, 13));   /* block 3 writes weights[16] */
    aclError rc = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("out of bounds: block ", " of 4", "offsets 64 to 67", "device variable weights");
    expect_one_report(printed, "oob", "device variable weights", NULL);
    OK(aclrtFree(out));
}

/* ---- stale ---------------------------------------------------------------------------- */

static void test_stale_kernel_argument_after_free(void **state)
{
    (void)state;
    int *p;
    OK(aclrtMalloc((void **)&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    char printed[4096];
    /* Fixed: launched and synchronized before the free. */
    capture_begin();
    EXPECT_OK(launch(FN(k_write_at), 1, NULL, p, 0));
    OK(aclrtSynchronizeStream(NULL));
    OK(aclrtFree(p));
    capture_end(printed, sizeof printed);
    expect_no_report(printed);

    /* The bug: the pointer is used after the free. */
    capture_begin();
    EXPECT_OK(launch(FN(k_write_at), 1, NULL, p, 0));
    aclError rc = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("kernel k_write_at", "stale pointer: argument 0:", "points into the 64-byte "
               "allocation", "aclrtMalloc called from", "which was freed");
    expect_one_report(printed, "stale", "which was freed", NULL);
}

static void test_stale_kernel_argument_after_reset(void **state)
{
    (void)state;
    int *p;
    OK(aclrtMalloc((void **)&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtResetDevice(0));
    OK(aclrtSetDevice(0));
    char printed[4096];
    capture_begin();
    EXPECT_OK(launch(FN(k_write_at), 1, NULL, p, 0));
    aclError rc = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("stale pointer: argument 0:", "which was discarded by a reset of its device");
    expect_one_report(printed, "stale", "discarded by a reset of its device", NULL);

    /* Fixed: allocated again after the reset. */
    OK(aclrtMalloc((void **)&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    capture_begin();
    EXPECT_OK(launch(FN(k_write_at), 1, NULL, p, 0));
    rc = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    OK(aclrtFree(p));
}

static void test_stale_other_device(void **state)
{
    (void)state;
    char printed[4096];
    /* A kernel on device 0 given device 1's memory (no peer access). */
    int *d1;
    void *w1;
    OK(aclrtSetDevice(1));
    OK(aclrtMalloc((void **)&d1, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtGetSymbolAddress(weights, &w1));
    OK(aclrtSetDevice(0));
    capture_begin();
    EXPECT_OK(launch(FN(k_write_at), 1, NULL, d1, 0));
    aclError rc = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("stale pointer: argument 0", "is in the 64-byte allocation",
               "not memory of device 0 that the kernel runs on (no peer access)");
    expect_one_report(printed, "stale", "not memory of device 0", NULL);

    /* A device variable's address taken on device 1, used on device 0. */
    float v[16] = {3};
    capture_begin();
    rc = aclrtMemcpy(w1, sizeof v, v, sizeof v, ACL_MEMCPY_HOST_TO_DEVICE);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtMemcpy", "stale pointer: dst", "device variable weights",
               "its instance on device 1", "the current device is 0");
    expect_one_report(printed, "stale", "device variable weights", NULL);

    /* Fixed: the address taken again on the current device. */
    void *w0;
    OK(aclrtGetSymbolAddress(weights, &w0));
    capture_begin();
    rc = aclrtMemcpy(w0, sizeof v, v, sizeof v, ACL_MEMCPY_HOST_TO_DEVICE);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    /* ... and the kernel launched on the device whose memory it uses. */
    OK(aclrtSetDevice(1));
    capture_begin();
    EXPECT_OK(launch(FN(k_write_at), 1, NULL, d1, 0));
    rc = aclrtSynchronizeStream(NULL);
    OK(aclrtFree(d1));
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    OK(aclrtResetDevice(1));
    OK(aclrtSetDevice(0));
}

static void test_stale_copy_after_free_names_allocation(void **state)
{
    (void)state;
    int *p, v = 1;
    OK(aclrtMallocHost((void **)&p, 16));
    OK(aclrtFreeHost(p));
    /* Refused with or without the checker; the checker says what it was. */
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclsim check: stale pointer:",
                "the 16-byte allocation",
                aclrtMemcpy(p, 4, &v, 4, ACL_MEMCPY_HOST_TO_HOST));
}

/* ---- free-pending ---------------------------------------------------------------------- */

static void test_free_pending(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    int *p;
    OK(aclrtMalloc((void **)&p, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    char printed[4096];

    /* The bug: freed while a memset queued behind a busy host function is
     * still to run. */
    struct blocker b;
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    OK(aclrtMemsetAsync(p, 256, 0, 256, s));
    capture_begin();
    aclError rc = aclrtFree(p);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_MEMORY_FREE);
    expect_msg("aclrtFree", "free of memory in use", "the 256-byte allocation",
               "1 queued task(s) still use it, the latest memset (task ", ") on stream",
               "the free is deferred until they are done");
    expect_one_report(printed, "free-pending", "the free is deferred", NULL);
    /* The memset runs on memory that is still there; then it is freed. */
    blocker_release(&b);
    OK(aclrtSynchronizeStream(s));
    assert_false(blocker_timed_out(&b));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "outside any live allocation", aclrtFree(p));

    /* Fixed: synchronize, then free. */
    OK(aclrtMalloc((void **)&p, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    OK(aclrtMemsetAsync(p, 256, 0, 256, s));
    blocker_release(&b);
    capture_begin();
    OK(aclrtSynchronizeStream(s));
    rc = aclrtFree(p);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    OK(aclrtDestroyStream(s));
}

/* A task recorded by a capture was never queued: destroying its model runtime
 * instance gives back no use, so work queued on the buffer is still counted. */
static void test_free_pending_after_captured_task_dropped(void **state)
{
    (void)state;
    aclrtStream s, c;
    OK(aclrtCreateStream(&s));
    OK(aclrtCreateStream(&c));
    int *p;
    OK(aclrtMalloc((void **)&p, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclmdlRICaptureBegin(c, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    OK(aclrtMemsetAsync(p, 256, 1, 256, c));
    aclmdlRI ri;
    OK(aclmdlRICaptureEnd(c, &ri));
    struct blocker b;
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    OK(aclrtMemsetAsync(p, 256, 0, 256, s));
    OK(aclmdlRIDestroy(ri));   /* drops the captured memset */
    char printed[4096];
    capture_begin();
    aclError rc = aclrtFree(p);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_MEMORY_FREE);
    expect_msg("aclrtFree", "1 queued task(s) still use it");
    expect_one_report(printed, "free-pending", "the free is deferred", NULL);
    blocker_release(&b);
    OK(aclrtSynchronizeStream(s));
    assert_false(blocker_timed_out(&b));
    OK(aclrtDestroyStream(c));
    OK(aclrtDestroyStream(s));
}

/* A kernel argument counts as a use too; freeing twice while deferred is a
 * double free. */
static void test_free_pending_kernel_and_double_free(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    int *p;
    OK(aclrtMalloc((void **)&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    struct blocker b;
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    OK(launch(FN(k_write_at), 1, s, p, 3));
    char printed[4096];
    capture_begin();
    aclError rc1 = aclrtFree(p);
    aclError rc2 = aclrtFree(p);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc1, ACL_ERROR_RT_MEMORY_FREE);
    assert_int_equal(rc2, ACL_ERROR_INVALID_PARAM);
    expect_msg("was already freed: that free waits for the queued work");
    if (count_of(printed, "aclsim check: free-pending:") != 2 || !strstr(printed, "kernel k_write_at"))
        fail_msg("printed: %s", printed);
    blocker_release(&b);
    OK(aclrtSynchronizeStream(s));
    OK(aclrtDestroyStream(s));
}

/* ---- race ------------------------------------------------------------------------------ */

static void test_race(void **state)
{
    (void)state;
    aclrtStream a, b;
    aclrtEvent e;
    OK(aclrtCreateStream(&a));
    OK(aclrtCreateStream(&b));
    OK(aclrtCreateEvent(&e));
    int *p;
    OK(aclrtMalloc((void **)&p, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    char printed[4096];
    struct blocker bl;

    /* The bug: stream a's memset is still queued (behind a busy host
     * function) when stream b writes the same bytes; nothing orders them.
     * (b's memset is done before a's starts, so that the test itself has no
     * data race for TSan: the checker reports what could happen.) */
    blocker_init(&bl);
    OK(aclrtLaunchHostFunc(a, blocker_fn, &bl));
    OK(aclrtMemsetAsync(p, 256, 1, 256, a));
    capture_begin();
    OK(aclrtMemsetAsync(p + 8, 64, 2, 64, b));
    aclError rb = aclrtSynchronizeStream(b);
    blocker_release(&bl);
    aclError ra = aclrtSynchronizeStream(a);
    capture_end(printed, sizeof printed);
    assert_int_equal(ra, ACL_SUCCESS);
    assert_int_equal(rb, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("aclsim check: race: memset (task ", " writes the 256-byte allocation",
               "aclrtMalloc called from", "while memset (task ", "writes it, with nothing "
               "ordering them");
    expect_one_report(printed, "race", "with nothing ordering them", NULL);

    /* Fixed: an event recorded after the first write, waited for by b. */
    blocker_init(&bl);
    capture_begin();
    OK(aclrtLaunchHostFunc(a, blocker_fn, &bl));
    OK(aclrtMemsetAsync(p, 256, 1, 256, a));
    OK(aclrtRecordEvent(e, a));
    OK(aclrtStreamWaitEvent(b, e));
    OK(aclrtMemsetAsync(p + 8, 64, 2, 64, b));
    blocker_release(&bl);
    ra = aclrtSynchronizeStream(a);
    rb = aclrtSynchronizeStream(b);
    /* Kernels both using p are not a race (they may only read it). */
    blocker_init(&bl);
    OK(aclrtLaunchHostFunc(a, blocker_fn, &bl));
    OK(launch(FN(k_write_at), 1, a, p, 0));
    OK(launch(FN(k_write_at), 1, b, p, 1));
    blocker_release(&bl);
    OK(aclrtSynchronizeStream(a));
    OK(aclrtSynchronizeStream(b));
    /* Fixed too: the host waits for a before b writes. */
    OK(aclrtMemsetAsync(p, 256, 1, 256, a));
    OK(aclrtSynchronizeStream(a));
    OK(aclrtMemsetAsync(p, 256, 3, 256, b));
    OK(aclrtSynchronizeStream(b));
    capture_end(printed, sizeof printed);
    assert_int_equal(ra, ACL_SUCCESS);
    assert_int_equal(rb, ACL_SUCCESS);
    expect_no_report(printed);
    /* Fixed too: the host waits for an event recorded after the write (many
     * rounds: the tasks before a record count as completed when the host
     * sees it). */
    capture_begin();
    int bad = 0;
    for (int i = 0; i < 500; i++) {
        bad += aclrtMemsetAsync(p, 256, 1, 256, a) != ACL_SUCCESS;
        bad += aclrtRecordEvent(e, a) != ACL_SUCCESS;
        bad += aclrtSynchronizeEvent(e) != ACL_SUCCESS;
        bad += aclrtMemsetAsync(p, 256, 3, 256, b) != ACL_SUCCESS;
        bad += aclrtSynchronizeStream(b) != ACL_SUCCESS;   /* (before a writes again) */
    }
    bad += aclrtSynchronizeStream(a) != ACL_SUCCESS;
    capture_end(printed, sizeof printed);
    assert_int_equal(bad, 0);
    expect_no_report(printed);
    OK(aclrtFree(p));
    OK(aclrtDestroyEvent(e));
    OK(aclrtDestroyStream(a));
    OK(aclrtDestroyStream(b));
}

/* ---- early-host-access --------------------------------------------------------------- */

static void test_early_host_access(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    int *host, *dev;
    OK(aclrtMallocHost((void **)&host, 4096));
    OK(aclrtMalloc((void **)&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < 1024; i++)
        host[i] = i;
    char printed[4096];
    struct blocker bl;

    /* The bug: the host writes the buffer a queued copy has still to read. */
    blocker_init(&bl);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bl));
    OK(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
    capture_begin();
    ((volatile int *)host)[5] = -5;   /* faults, is reported, goes on */
    int seen = ((volatile int *)host)[5];
    capture_end(printed, sizeof printed);
    blocker_release(&bl);
    OK(aclrtSynchronizeStream(s));
    assert_int_equal(seen, -5);
    expect_one_report(printed, "early-host-access", "host code touched the 4096-byte allocation",
                      "aclrtMallocHost called from");
    if (!strstr(printed, "while copy (task ") || !strstr(printed, "queued and not yet done"))
        fail_msg("printed: %s", printed);
    int back[1024];
    OK(aclrtMemcpy(back, sizeof back, dev, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(back[5], -5);   /* the copy ran after the write (its stream was held) */

    /* Fixed: the host waits for the copy before touching the buffer. */
    blocker_init(&bl);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bl));
    OK(aclrtMemcpyAsync(host, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
    blocker_release(&bl);
    capture_begin();
    OK(aclrtSynchronizeStream(s));
    seen = ((volatile int *)host)[5];
    ((volatile int *)host)[6] = 6;
    capture_end(printed, sizeof printed);
    assert_int_equal(seen, -5);
    expect_no_report(printed);
    OK(aclrtFreeHost(host));
    OK(aclrtFree(dev));
    OK(aclrtDestroyStream(s));
}

/* A list of detectors without early-host-access leaves it out: the same
 * access goes unreported. */
static void test_early_host_access_not_listed(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    int *host, *dev;
    OK(aclrtMallocHost((void **)&host, 4096));
    OK(aclrtMalloc((void **)&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(dev, 4096, 0, 4096));
    char printed[4096];
    struct blocker bl;
    blocker_init(&bl);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bl));
    OK(aclrtMemcpyAsync(host, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
    capture_begin();
    ((volatile int *)host)[5] = -5;
    capture_end(printed, sizeof printed);
    blocker_release(&bl);
    OK(aclrtSynchronizeStream(s));
    expect_no_report(printed);
    assert_int_equal(host[5], 0);   /* the copy overwrote it, as it would on the NPU */
    OK(aclrtFreeHost(host));
    OK(aclrtFree(dev));
    OK(aclrtDestroyStream(s));
}

/* ---- uninit ---------------------------------------------------------------------------- */

static void test_uninit(void **state)
{
    (void)state;
    int *p, host[16];
    OK(aclrtMalloc((void **)&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    char printed[4096];
    /* The bug: the kernel writes p[0..1] only; the program reads all 16. */
    capture_begin();
    OK(launch(FN(k_write_at), 1, NULL, p, 0));
    OK(launch(FN(k_write_at), 1, NULL, p, 1));
    OK(aclrtSynchronizeStream(NULL));
    aclError rc = aclrtMemcpy(host, sizeof host, p, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("aclrtMemcpy", "uninit: aclrtMemcpy reads bytes 8 to 63 of the 64-byte "
               "allocation", "aclrtMalloc called from", "which nothing has written");
    expect_one_report(printed, "uninit", "reads bytes 8 to 63", NULL);
    assert_int_equal(host[0], 5);   /* copied all the same */

    /* The same read queued on a stream: its synchronize reports it. */
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    capture_begin();
    OK(aclrtMemcpyAsync(host, sizeof host, p, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST, s));
    rc = aclrtSynchronizeStream(s);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_msg("aclrtSynchronizeStream", "uninit: copy (task ", "reads bytes 8 to 63");
    expect_one_report(printed, "uninit", "reads bytes 8 to 63", NULL);

    /* Fixed: the buffer is set first. */
    OK(aclrtMemset(p, 64, 0, 64));
    capture_begin();
    OK(launch(FN(k_write_at), 1, s, p, 0));
    OK(aclrtMemcpyAsync(host, sizeof host, p, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST, s));
    rc = aclrtSynchronizeStream(s);
    aclError rc2 = aclrtMemcpy(host, sizeof host, p, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    assert_int_equal(rc2, ACL_SUCCESS);
    expect_no_report(printed);
    OK(aclrtDestroyStream(s));
    OK(aclrtFree(p));
}

/* ---- the switch ------------------------------------------------------------------------ */

static void test_off_by_default(void **state)
{
    (void)state;
    float *out;
    OK(aclrtMalloc((void **)&out, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    char printed[4096];
    capture_begin();
    EXPECT_OK(launch(FN(k_write_var), 1, NULL, out, 16));   /* the NPU would not tell */
    aclError rc = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    OK(aclrtFree(out));
}

static void test_config_values(void **state)
{
    (void)state;
    unsetenv("ACLSIM_CHECK");
    setenv("ACLSIM_CHECK", "oob,bogus", 1);
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "ACLSIM_CHECK", "detector names separated by commas",
                aclInit(NULL));
    setenv("ACLSIM_CHECK", "", 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ACLSIM_CHECK", aclInit(NULL));
    unsetenv("ACLSIM_CHECK");

    /* The JSON file: "check": "stale" catches a stale argument, not an oob write. */
    char path[64];
    snprintf(path, sizeof path, "/tmp/aclsim-checker-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"aclsim\": {\"check\": \"stale\", \"device_count\": 2, \"device_memory\": \"64M\"}}",
          f);
    fclose(f);
    OK(aclInit(path));
    OK(aclrtSetDevice(0));
    float *out;
    OK(aclrtMalloc((void **)&out, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    char printed[4096];
    capture_begin();
    EXPECT_OK(launch(FN(k_write_var), 1, NULL, out, 16));
    aclError rc1 = aclrtSynchronizeStream(NULL);
    OK(aclrtFree(out));
    EXPECT_OK(launch(FN(k_write_var), 1, NULL, out, 0));
    aclError rc2 = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc1, ACL_SUCCESS);
    assert_int_equal(rc2, ACL_ERROR_RT_AICORE_EXCEPTION);
    expect_one_report(printed, "stale", "which was freed", NULL);
    drain_msg();
    OK(aclFinalize());
    /* The environment wins over the file. */
    setenv("ACLSIM_CHECK", "0", 1);
    OK(aclInit(path));
    OK(aclrtSetDevice(0));
    OK(aclrtMalloc((void **)&out, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtFree(out));
    capture_begin();
    EXPECT_OK(launch(FN(k_write_var), 1, NULL, out, 0));   /* unchecked: runs */
    rc1 = aclrtSynchronizeStream(NULL);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc1, ACL_SUCCESS);
    expect_no_report(printed);
    OK(aclFinalize());
    unsetenv("ACLSIM_CHECK");
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_oob_device_variable, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_oob_allocation_before_start, setup_checked,
                                        teardown_checked),
        cmocka_unit_test_setup_teardown(test_oob_many_blocks, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_stale_kernel_argument_after_free, setup_checked,
                                        teardown_checked),
        cmocka_unit_test_setup_teardown(test_stale_kernel_argument_after_reset, setup_checked,
                                        teardown_checked),
        cmocka_unit_test_setup_teardown(test_stale_other_device, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_stale_copy_after_free_names_allocation,
                                        setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_free_pending, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_free_pending_after_captured_task_dropped,
                                        setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_free_pending_kernel_and_double_free, setup_checked,
                                        teardown_checked),
        cmocka_unit_test_setup_teardown(test_race, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_uninit, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_early_host_access, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_early_host_access_not_listed,
                                        setup_checked_but_early, teardown_checked),
        cmocka_unit_test_setup_teardown(test_off_by_default, setup_unchecked, teardown_device0),
        cmocka_unit_test_setup_teardown(test_config_values, setup_clean, teardown_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
