/*
 * Checker mode, free-pending for virtual memory (docs/checker.md): an
 * aclrtUnmapMem of a mapping that queued work still uses returns 207002 with
 * the report and is deferred until the work is done (the data lands, then
 * the address can be mapped again); so is the release of its reserved range
 * and the free of its physical memory. The same program fixed gets no report.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"
#include "watchdog.h"

#define G2 (2 * MiB)

/* Writes 7 into p[block]. */
static void k_seven(uint32_t *p) { p[aclsimGetBlockIdx()] = 7; }
ACLSIM_KERNEL_REGISTER(k_seven, uint32_t *);

static int setup_checked(void **state)
{
    setenv("ACLSIM_CHECK", "1", 1);
    return setup_device0(state);
}

static int teardown_checked(void **state)
{
    unsetenv("ACLSIM_CHECK");
    return teardown_device0(state);
}

static aclrtDrvMemHandle physical(void)
{
    aclrtPhysicalMemProp p;
    memset(&p, 0, sizeof p);
    p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    p.memAttr = ACL_HBM_MEM_HUGE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    aclrtDrvMemHandle h = NULL;
    EXPECT_OK(aclrtMallocPhysical(&h, G2, &p, 0));
    return h;
}

static char *reserve(void)
{
    void *v = NULL;
    EXPECT_OK(aclrtReserveMemAddress(&v, G2, 0, NULL, 0));
    return v;
}

/* Whether the n bytes at device address p all hold byte b. */
static bool device_bytes(const void *p, size_t n, unsigned char b)
{
    unsigned char *buf = malloc(n);
    assert_non_null(buf);
    EXPECT_OK(aclrtMemcpy(buf, n, p, n, ACL_MEMCPY_DEVICE_TO_HOST));
    bool all = true;
    for (size_t i = 0; i < n; i++)
        all &= buf[i] == b;
    free(buf);
    return all;
}

static void test_unmap_in_use(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    aclrtDrvMemHandle h = physical();
    char *v = reserve();
    OK(aclrtMapMem(v, G2, 0, h, 0));
    OK(aclrtMemset(v, 4096, 0, 4096));
    char printed[4096];

    /* The bug: unmapped while a memset queued behind a busy host function
     * still has to write it. */
    struct blocker b;
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    OK(aclrtMemsetAsync(v, 4096, 0x5A, 4096, s));
    capture_begin();
    aclError rc = aclrtUnmapMem(v);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_MEMORY_FREE);
    expect_msg("aclrtUnmapMem", "unmap of memory in use: aclrtUnmapMem unmaps the 2097152-byte "
               "mapping at", "(device 0 physical memory, handle ", "1 queued task(s) still use "
               "it, the latest memset (task ", ") on stream",
               "the unmap is deferred until they are done");
    expect_one_report(printed, "free-pending", "the unmap is deferred", NULL);

    /* Unmapped for the program: no new work there, no second unmap, no new
     * mapping over it yet. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "no physical memory mapped there",
               aclrtMemset(v, 16, 1, 16));
    capture_begin();
    rc = aclrtUnmapMem(v);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_PARAM_INVALID);
    expect_msg("was already unmapped: that unmap waits for the queued work");
    expect_one_report(printed, "free-pending", "was already unmapped", NULL);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "its unmap waits for the queued work",
               aclrtMapMem(v, G2, 0, h, 0));

    /* The memset lands in the memory; then the unmap happens: the address
     * maps again, and shows what the memset wrote. */
    blocker_release(&b);
    OK(aclrtSynchronizeStream(s));
    assert_false(blocker_timed_out(&b));
    OK(aclrtMapMem(v, G2, 0, h, 0));
    assert_true(device_bytes(v, 4096, 0x5A));

    /* Fixed: synchronize, then unmap. */
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    OK(aclrtMemsetAsync(v, 4096, 0x33, 4096, s));
    blocker_release(&b);
    capture_begin();
    OK(aclrtSynchronizeStream(s));
    rc = aclrtUnmapMem(v);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    OK(aclrtFreePhysical(h));
    OK(aclrtReleaseMemAddress(v));
    OK(aclrtDestroyStream(s));
}

/* A kernel argument counts as a use; the release of the range and the free
 * of the physical memory after the deferred unmap are deferred and reported
 * too, and everything goes once the kernel is done. */
static void test_release_and_free_in_use(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    size_t free0 = hbm_free();
    aclrtDrvMemHandle h = physical();
    char *v = reserve();
    OK(aclrtMapMem(v, G2, 0, h, 0));
    struct blocker b;
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    void *arg = v;
    void *args[] = {&arg};
    OK(aclrtLaunchKernelWithArgsArray(FUNC(k_seven), 4, s, NULL, args));
    char printed[8192];
    capture_begin();
    aclError unmapped = aclrtUnmapMem(v);
    aclError freed = aclrtFreePhysical(h);
    aclError released = aclrtReleaseMemAddress(v);
    aclError again = aclrtReleaseMemAddress(v);
    capture_end(printed, sizeof printed);
    assert_int_equal(unmapped, ACL_ERROR_RT_MEMORY_FREE);
    assert_int_equal(freed, ACL_ERROR_RT_MEMORY_FREE);
    assert_int_equal(released, ACL_ERROR_RT_MEMORY_FREE);
    assert_int_equal(again, ACL_ERROR_RT_PARAM_INVALID);
    expect_msg("it was released already");
    if (count_of(printed, "aclsim check: free-pending: ") != 3 ||
        !strstr(printed, "the latest kernel k_seven (task ") ||
        !strstr(printed, "free of memory in use: aclrtFreePhysical frees the physical memory of "
                         "the 2097152-byte mapping") ||
        !strstr(printed, "release of memory in use: aclrtReleaseMemAddress releases the "
                         "2097152-byte reserved range at") ||
        !strstr(printed, "the release is deferred until they are done"))
        fail_msg("printed: %s", printed);
    assert_int_equal(hbm_free(), free0 - G2);   /* still there for the kernel */

    /* The kernel runs on the memory; then the unmap, the free and the
     * release happen: the device memory is back, the handle and the range
     * are gone. */
    blocker_release(&b);
    OK(aclrtSynchronizeStream(s));
    assert_int_equal(hbm_free(), free0);
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "not a live physical memory handle",
               aclrtFreePhysical(h));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "is not the start of a reserved range",
               aclrtReleaseMemAddress(v));
    OK(aclrtDestroyStream(s));
}

/* Work queued on the mapping after its unmap was deferred (a kernel given
 * the address: kernel arguments are not range-checked) keeps it mapped
 * until that work is done too. */
static void test_unmap_waits_for_later_work(void **state)
{
    (void)state;
    aclrtStream s, t;
    OK(aclrtCreateStream(&s));
    OK(aclrtCreateStream(&t));
    aclrtDrvMemHandle h = physical();
    char *v = reserve();
    OK(aclrtMapMem(v, G2, 0, h, 0));
    OK(aclrtMemset(v, 64, 0, 64));
    struct blocker bs, bt;
    blocker_init(&bs);
    blocker_init(&bt);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bs));
    OK(aclrtMemsetAsync(v + 64, 64, 1, 64, s));
    char printed[4096];
    capture_begin();
    aclError rc = aclrtUnmapMem(v);
    capture_end(printed, sizeof printed);
    assert_int_equal(rc, ACL_ERROR_RT_MEMORY_FREE);
    OK(aclrtLaunchHostFunc(t, blocker_fn, &bt));
    void *arg = v;
    void *args[] = {&arg};
    OK(aclrtLaunchKernelWithArgsArray(FUNC(k_seven), 4, t, NULL, args));
    blocker_release(&bs);
    OK(aclrtSynchronizeStream(s));   /* the memset is done; the kernel is not */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "its unmap waits for the queued work",
               aclrtMapMem(v, G2, 0, h, 0));
    blocker_release(&bt);
    OK(aclrtSynchronizeStream(t));
    OK(aclrtMapMem(v, G2, 0, h, 0));   /* now it was unmapped */
    uint32_t got[4];
    OK(aclrtMemcpy(got, sizeof got, v, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 4; i++)
        assert_int_equal(got[i], 7);
    assert_true(device_bytes(v + 64, 64, 1));
    OK(aclrtUnmapMem(v));
    OK(aclrtFreePhysical(h));
    OK(aclrtReleaseMemAddress(v));
    OK(aclrtDestroyStream(s));
    OK(aclrtDestroyStream(t));
}

/* Unmapping memory still mapped elsewhere, with work queued only on the
 * other mapping, is no bug: no report. */
static void test_unmap_other_mapping(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    aclrtDrvMemHandle h = physical();
    char *v = reserve(), *w = reserve();
    OK(aclrtMapMem(v, G2, 0, h, 0));
    OK(aclrtMapMem(w, G2, 0, h, 0));
    struct blocker b;
    blocker_init(&b);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    OK(aclrtMemsetAsync(w, 64, 9, 64, s));
    char printed[4096];
    capture_begin();
    aclError rc = aclrtUnmapMem(v);
    capture_end(printed, sizeof printed);
    blocker_release(&b);
    OK(aclrtSynchronizeStream(s));
    assert_int_equal(rc, ACL_SUCCESS);
    expect_no_report(printed);
    assert_true(device_bytes(w, 64, 9));
    OK(aclrtUnmapMem(w));
    OK(aclrtFreePhysical(h));
    OK(aclrtReleaseMemAddress(v));
    OK(aclrtReleaseMemAddress(w));
    OK(aclrtDestroyStream(s));
}

/* Unmaps racing the worker that runs and releases the memset: each is done
 * at once (the memset had run) or deferred with a report; either way the
 * memset's bytes land and the address maps again. Bounded rounds and time,
 * with a watchdog. */
static void test_unmap_races_release(void **state)
{
    (void)state;
    watchdog_start();
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    aclrtDrvMemHandle h = physical();
    char *v = reserve();
    enum { ROUNDS = 300, CAP = 1 << 20 };
    char *printed = malloc(CAP);
    assert_non_null(printed);
    double budget = time_budget(3.0), start = now_seconds();
    int rounds = 0, deferred = 0, bad = -1;
    aclError rc[4] = {0};
    capture_begin();
    for (; rounds < ROUNDS && now_seconds() - start < budget && bad < 0; rounds++) {
        watchdog_arm(1, "aclrtUnmapMem racing the release of a memset", rounds, 20);
        rc[0] = aclrtMapMem(v, G2, 0, h, 0);
        if (!rc[0] && rounds > 0 && !device_bytes(v, 64, (unsigned char)(rounds - 1)))
            bad = rounds;   /* the last round's memset did not land */
        rc[1] = aclrtMemsetAsync(v, 64, rounds & 0xff, 64, s);
        /* (From no wait to about the time the worker takes to run it.) */
        struct timespec pause = {0, (rounds % 4) * 15000L};
        nanosleep(&pause, NULL);
        rc[2] = aclrtUnmapMem(v);
        rc[3] = aclrtSynchronizeStream(s);
        watchdog_disarm(1);
        deferred += rc[2] == ACL_ERROR_RT_MEMORY_FREE;
        if (rc[0] || rc[1] || rc[3] || (rc[2] && rc[2] != ACL_ERROR_RT_MEMORY_FREE))
            bad = rounds;
    }
    capture_end(printed, CAP);
    if (bad >= 0)
        fail_msg("round %d: map %d, memset %d (bytes of the round before %s), unmap %d, "
                 "synchronize %d", bad, rc[0], rc[1], rc[0] ? "unchecked" : "checked", rc[2],
                 rc[3]);
    assert_int_equal(count_of(printed, "aclsim check: free-pending: unmap of memory in use"),
                     deferred);
    assert_int_equal(count_of(printed, "aclsim check:"), deferred);
    print_message("%d rounds, %d unmaps deferred\n", rounds, deferred);
    free(printed);
    OK(aclrtMapMem(v, G2, 0, h, 0));
    OK(aclrtUnmapMem(v));
    OK(aclrtFreePhysical(h));
    OK(aclrtReleaseMemAddress(v));
    OK(aclrtDestroyStream(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unmap_in_use, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_release_and_free_in_use, setup_checked,
                                        teardown_checked),
        cmocka_unit_test_setup_teardown(test_unmap_waits_for_later_work, setup_checked,
                                        teardown_checked),
        cmocka_unit_test_setup_teardown(test_unmap_other_mapping, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_unmap_races_release, setup_checked, teardown_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
