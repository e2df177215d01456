/*
 * Kernel failures and kernel output, the runtime side of Ascend C's trap(),
 * assert() and printf (aclsimKernelFail, aclsimPrint, aclsimLaunchAt):
 * the launch returns 0, the next synchronize of the stream (or of the
 * device) returns 507015 once, naming kernel, device, block and reason;
 * other streams are unaffected; blocks not started are skipped; later work
 * runs; a new session forgets old failures; printf lines are whole and
 * reach file descriptor 1 by the time the synchronize returns; failing
 * outside a kernel aborts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

static atomic_int blocks_run;

static void k_fail(int when)
{
    atomic_fetch_add(&blocks_run, 1);
    if ((int)aclsimGetBlockIdx() == when)
        aclsimKernelFail("bad thing happened");
}
ACLSIM_KERNEL_REGISTER(k_fail, int);

static void k_count(int *p)
{
    atomic_fetch_add((atomic_int *)p, 1);
}
ACLSIM_KERNEL_REGISTER(k_count, int *);

static void k_print(int tag)
{
    char text[64];
    int n = snprintf(text, sizeof text, "line %d", tag);
    aclsimPrint(text, (size_t)n);       /* a line in pieces */
    aclsimPrint(" of block\n", 10);
    aclsimPrint("unfinished", 10);     /* written when the block ends */
}
ACLSIM_KERNEL_REGISTER(k_print, int);

static aclError launch1(void *fn, uint32_t blocks, aclrtStream s, void *arg)
{
    void *args[] = {arg};
    return aclrtLaunchKernelWithArgsArray(func_by_symbol(fn), blocks, s, NULL, args);
}

static void test_failure_reported_at_stream_synchronize(void **state)
{
    (void)state;
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    int when = 2;
    EXPECT_OK(launch1((void *)&k_fail, 4, s, &when));   /* the launch itself succeeds */
    EXPECT_ERR2(ACL_ERROR_RT_AICORE_EXCEPTION, "kernel k_fail", "block 2 of 4: bad thing happened",
                aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtSynchronizeStream(s));               /* reported once */
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtDestroyStream(s));
}

static void test_device_synchronize_and_other_streams(void **state)
{
    (void)state;
    aclrtStream a, b;
    EXPECT_OK(aclrtCreateStream(&a));
    EXPECT_OK(aclrtCreateStream(&b));
    int when = 0, counter = 0;
    int *dev_counter;
    EXPECT_OK(aclrtMalloc((void **)&dev_counter, sizeof counter, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(dev_counter, sizeof counter, 0, sizeof counter));
    EXPECT_OK(launch1((void *)&k_fail, 1, a, &when));
    EXPECT_OK(launch1((void *)&k_count, 1, a, &dev_counter));   /* later work still runs */
    EXPECT_OK(launch1((void *)&k_count, 1, b, &dev_counter));
    EXPECT_OK(aclrtSynchronizeStream(b));                       /* b did not fail */
    EXPECT_ERR2(ACL_ERROR_RT_AICORE_EXCEPTION, "k_fail", "device 0, block 0 of 1",
                aclrtSynchronizeDevice());
    EXPECT_OK(aclrtSynchronizeStream(a));                       /* taken by the device sync */
    EXPECT_OK(aclrtMemcpy(&counter, sizeof counter, dev_counter, sizeof counter,
                          ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(counter, 2);
    /* the default stream */
    EXPECT_OK(launch1((void *)&k_fail, 1, NULL, &when));
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "k_fail", aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtFree(dev_counter));
    EXPECT_OK(aclrtDestroyStream(a));
    EXPECT_OK(aclrtDestroyStream(b));
}

static void test_blocks_after_a_failure_are_skipped(void **state)
{
    (void)state;
    atomic_store(&blocks_run, 0);
    int when = 0;
    EXPECT_OK(launch1((void *)&k_fail, 20000, NULL, &when));
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "block 0 of 20000", aclrtSynchronizeStream(NULL));
    assert_true(atomic_load(&blocks_run) < 20000);
}

static void test_new_session_forgets_failures(void **state)
{
    (void)state;
    int when = 0;
    EXPECT_OK(launch1((void *)&k_fail, 1, NULL, &when));
    /* wait for it without taking the failure: a host-side spin on a second launch */
    aclrtEvent ev;
    EXPECT_OK(aclrtCreateEvent(&ev));
    EXPECT_OK(aclrtRecordEvent(ev, NULL));
    EXPECT_OK(aclrtSynchronizeEvent(ev));
    EXPECT_OK(aclrtDestroyEvent(ev));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtSynchronizeStream(NULL));
}

static void test_print_lines_reach_fd1_whole(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    int saved = dup(1);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fds[1], 1), 1);
    int tag = 7;
    aclError launched = launch1((void *)&k_print, 3, NULL, &tag);
    aclError synced = aclrtSynchronizeStream(NULL);
    assert_int_equal(dup2(saved, 1), 1);
    close(saved);
    close(fds[1]);
    char buf[4096];
    size_t len = 0;
    ssize_t n;
    while ((n = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)n;
    close(fds[0]);
    buf[len] = 0;
    EXPECT_OK(launched);
    EXPECT_OK(synced);
    for (int b = 0; b < 3; b++) {
        char want[128];
        snprintf(want, sizeof want, "[device 0, block %d] line 7 of block\n", b);
        assert_non_null(strstr(buf, want));
        snprintf(want, sizeof want, "[device 0, block %d] unfinished", b);
        assert_non_null(strstr(buf, want));
    }
}

static void test_launch_at_names_the_call_site(void **state)
{
    (void)state;
    int *p = NULL;
    void *args[] = {&p};
    aclrtFuncHandle h = func_by_symbol((const void *)&k_count);
    /* a descriptor as Ascend C's launcher passes it (sharing k_count's handle) */
    aclsimKernel desc = {.function = (const void *)&k_count, .name = "k_count",
                         .file = "here.asc", .line = 3, .num_params = 1,
                         .handle = h};
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "user.asc:12: k_count<<<0", "numBlocks 0",
                aclsimLaunchAt(&desc, 0, NULL, args, "user.asc", 12));
    desc.handle = NULL;
    EXPECT_ERR2(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "user.asc:13: k_count<<<1",
                "not registered", aclsimLaunchAt(&desc, 1, NULL, args, "user.asc", 13));
}

static void test_fail_outside_a_kernel_aborts(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        aclsimKernelFail("not in a kernel");
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_failure_reported_at_stream_synchronize,
                                        setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_device_synchronize_and_other_streams,
                                        setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_blocks_after_a_failure_are_skipped, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_new_session_forgets_failures, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_print_lines_reach_fd1_whole, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_launch_at_names_the_call_site, setup_device0,
                                        teardown_device0),
        cmocka_unit_test(test_fail_outside_a_kernel_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
