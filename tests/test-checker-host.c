/*
 * Checker mode (docs/checker.md): what ACLSIM_CHECK=1 turns on (every
 * detector, early-host-access too, as "all" and the JSON number 1 do); host
 * code that runs in a stream's order (a host function) touching a buffer
 * only that stream's queued copies use is no early host access, while one
 * on another stream is; only the pages pending copies use are protected
 * (a page far from a 4-byte copy is not, a page two streams' copies use
 * stays protected until both are done); and ACLSIM_CHECK_STOP: the first
 * report ends the process with abort() (run in a child process: this test
 * program executes itself with --child).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

/* A JSON config file with the given "aclsim" members; the path goes to buf. */
static const char *write_config(char *buf, size_t len, const char *members)
{
    snprintf(buf, len, "/tmp/aclsim-checker-host-%d.json", (int)getpid());
    FILE *f = fopen(buf, "w");
    assert_non_null(f);
    fprintf(f, "{\"aclsim\": {\"device_count\": 2, \"device_memory\": \"64M\"%s%s}}",
            members ? ", " : "", members ? members : "");
    fclose(f);
    return buf;
}

/* The early access: the host writes a page-locked buffer that a copy queued
 * behind a held stream still has to read. Returns what was printed. */
static const char *early_write(char *printed, size_t cap)
{
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    int *host, *dev;
    OK(aclrtMallocHost((void **)&host, 4096));
    OK(aclrtMalloc((void **)&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    memset(host, 0, 4096);
    struct blocker bl;
    blocker_init(&bl);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bl));
    OK(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
    capture_begin();
    ((volatile int *)host)[5] = -5;
    capture_end(printed, cap);
    blocker_release(&bl);
    OK(aclrtSynchronizeStream(s));
    OK(aclrtFreeHost(host));
    OK(aclrtFree(dev));
    OK(aclrtDestroyStream(s));
    return printed;
}

/* ---- what turns early-host-access on --------------------------------------------- */

static void test_one_means_all(void **state)
{
    (void)state;
    char path[96], printed[4096];
    static const char *const env[] = {"1", "all", "oob,early-host-access"};
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++) {
        setenv("ACLSIM_CHECK", env[i], 1);
        EXPECT_OK(init_devices("2", "64M"));
        OK(aclrtSetDevice(0));
        expect_one_report(early_write(printed, sizeof printed), "early-host-access",
                          "host code touched the 4096-byte allocation", NULL);
        OK(reset_and_finalize());
    }
    /* The JSON number 1 too; and 0 in the environment wins over it. */
    unsetenv("ACLSIM_CHECK");
    OK(aclInit(write_config(path, sizeof path, "\"check\": 1")));
    OK(aclrtSetDevice(0));
    expect_one_report(early_write(printed, sizeof printed), "early-host-access",
                      "host code touched", NULL);
    OK(reset_and_finalize());
    setenv("ACLSIM_CHECK", "0", 1);
    OK(aclInit(path));
    OK(aclrtSetDevice(0));
    expect_no_report(early_write(printed, sizeof printed));
    OK(reset_and_finalize());
    unsetenv("ACLSIM_CHECK");
    unlink(path);
}

static void test_config_stop_values(void **state)
{
    (void)state;
    char path[96];
    setenv("ACLSIM_CHECK_STOP", "yes", 1);
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "ACLSIM_CHECK_STOP", "0 (a checker report lets the "
                "program go on) or 1", aclInit(NULL));
    unsetenv("ACLSIM_CHECK_STOP");
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "\"aclsim\".\"check_stop\"", "or 1",
                aclInit(write_config(path, sizeof path, "\"check_stop\": 2")));
    unlink(path);
}

/* ---- host code in a stream's order ------------------------------------------------- */

struct peek {
    const volatile int *p;
    int seen;
};

static void peek_fn(void *arg)
{
    struct peek *k = arg;
    k->seen = k->p[5];
}

static int setup_checked(void **state)
{
    setenv("ACLSIM_CHECK", "early-host-access", 1);
    return setup_device0(state);
}

static int teardown_checked(void **state)
{
    unsetenv("ACLSIM_CHECK");
    return teardown_device0(state);
}

static void test_host_function_in_stream_order(void **state)
{
    (void)state;
    aclrtStream s, t;
    OK(aclrtCreateStream(&s));
    OK(aclrtCreateStream(&t));
    int *host, *dev;
    OK(aclrtMallocHost((void **)&host, 4096));
    OK(aclrtMalloc((void **)&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < 1024; i++)
        host[i] = i;
    OK(aclrtMemcpy(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE));
    char printed[4096];

    /* Fine: s's host function reads the buffer between two of s's copies
     * (after the first, before the second); then the host, after the
     * synchronize. */
    struct blocker bl;
    struct peek k = {host, -1};
    blocker_init(&bl);
    capture_begin();
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bl));
    OK(aclrtMemcpyAsync(host, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
    OK(aclrtLaunchHostFunc(s, peek_fn, &k));
    OK(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
    blocker_release(&bl);
    OK(aclrtSynchronizeStream(s));
    int after = ((volatile int *)host)[6];
    capture_end(printed, sizeof printed);
    expect_no_report(printed);
    assert_int_equal(k.seen, 5);
    assert_int_equal(after, 6);

    /* The bug: stream t's host function reads the buffer while s's copy,
     * which nothing orders with it, is still queued. */
    blocker_init(&bl);
    k.seen = -1;
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bl));
    OK(aclrtMemcpyAsync(host, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
    capture_begin();
    OK(aclrtLaunchHostFunc(t, peek_fn, &k));
    OK(aclrtSynchronizeStream(t));
    capture_end(printed, sizeof printed);
    blocker_release(&bl);
    OK(aclrtSynchronizeStream(s));
    expect_one_report(printed, "early-host-access", "host code touched the 4096-byte allocation",
                      "still uses it");
    assert_int_equal(k.seen, 5);
    OK(aclrtFreeHost(host));
    OK(aclrtFree(dev));
    OK(aclrtDestroyStream(s));
    OK(aclrtDestroyStream(t));
}

/* ---- only the pages pending copies use ------------------------------------------- */

#define PAGE_INTS (4096 / (int)sizeof(int))

/* A 4-byte copy from the start of a 16-page buffer, queued behind a held
 * stream, protects its page and no other: touching page 10 is fine,
 * touching page 0 is reported once (touching it again is not reported
 * again). */
static void test_only_pages_in_use(void **state)
{
    (void)state;
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    int *host, *dev;
    OK(aclrtMallocHost((void **)&host, 16 * 4096));
    OK(aclrtMalloc((void **)&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    memset(host, 0, 16 * 4096);
    char printed[4096];
    struct blocker bl;
    blocker_init(&bl);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bl));
    OK(aclrtMemcpyAsync(dev, 4, host, 4, ACL_MEMCPY_HOST_TO_DEVICE, s));
    capture_begin();
    ((volatile int *)host)[10 * PAGE_INTS + 3] = 7;
    int far = ((volatile int *)host)[15 * PAGE_INTS];
    capture_end(printed, sizeof printed);
    expect_no_report(printed);
    capture_begin();
    ((volatile int *)host)[PAGE_INTS - 1] = -1;   /* the copied page, not the copied bytes */
    ((volatile int *)host)[0] = 5;
    capture_end(printed, sizeof printed);
    blocker_release(&bl);
    OK(aclrtSynchronizeStream(s));
    expect_one_report(printed, "early-host-access", "host code touched the 65536-byte allocation",
                      "while copy (task");
    assert_int_equal(far, 0);
    assert_int_equal(((volatile int *)host)[10 * PAGE_INTS + 3], 7);
    OK(aclrtFreeHost(host));
    OK(aclrtFree(dev));
    OK(aclrtDestroyStream(s));
}

/* A page is protected while any pending copy uses it: a copy on stream t
 * that finished leaves its pages accessible while s's copies are still
 * queued, but not a page one of s's copies also uses; the report names the
 * copy still pending (s's). */
static void test_page_counts(void **state)
{
    (void)state;
    aclrtStream s, t;
    OK(aclrtCreateStream(&s));
    OK(aclrtCreateStream(&t));
    int *host, *dev;
    OK(aclrtMallocHost((void **)&host, 16 * 4096));
    OK(aclrtMalloc((void **)&dev, 4 * 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    memset(host, 0, 16 * 4096);
    char printed[4096], name[64];
    struct blocker bs, bt;
    blocker_init(&bs);
    blocker_init(&bt);
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bs));
    OK(aclrtLaunchHostFunc(t, blocker_fn, &bt));
    OK(aclrtMemcpyAsync(dev, 4, host, 4, ACL_MEMCPY_HOST_TO_DEVICE, s));
    /* t: page 0 too, and pages 8-11. */
    OK(aclrtMemcpyAsync(dev + 1, 4, host + 2, 4, ACL_MEMCPY_HOST_TO_DEVICE, t));
    OK(aclrtMemcpyAsync(dev, 4 * 4096, host + 8 * PAGE_INTS, 4 * 4096,
                        ACL_MEMCPY_HOST_TO_DEVICE, t));
    blocker_release(&bt);
    OK(aclrtSynchronizeStream(t));
    capture_begin();
    for (int page = 1; page < 16; page++)
        ((volatile int *)host)[page * PAGE_INTS + 1] = page;
    capture_end(printed, sizeof printed);
    expect_no_report(printed);
    capture_begin();
    ((volatile int *)host)[100] = 1;
    capture_end(printed, sizeof printed);
    blocker_release(&bs);
    OK(aclrtSynchronizeStream(s));
    snprintf(name, sizeof name, "stream %p", (void *)s);
    expect_one_report(printed, "early-host-access", "host code touched the 65536-byte allocation",
                      name);
    OK(aclrtFreeHost(host));
    OK(aclrtFree(dev));
    OK(aclrtDestroyStream(s));
    OK(aclrtDestroyStream(t));
}

/* s's host functions, queued before s's copy of page 0, may touch that page
 * while t's copy of page 6 is pending too; page 6 is an early access for
 * them (reported with t's copy). */
static void test_lent_page(void **state)
{
    (void)state;
    aclrtStream s, t;
    OK(aclrtCreateStream(&s));
    OK(aclrtCreateStream(&t));
    int *host, *dev;
    OK(aclrtMallocHost((void **)&host, 16 * 4096));
    OK(aclrtMalloc((void **)&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < 16 * PAGE_INTS; i++)
        host[i] = i % PAGE_INTS;
    char printed[4096], name[64];
    struct blocker bs, bt;
    blocker_init(&bs);
    blocker_init(&bt);
    struct peek mine = {host, -1}, other = {host + 6 * PAGE_INTS, -1};
    OK(aclrtLaunchHostFunc(s, blocker_fn, &bs));
    OK(aclrtLaunchHostFunc(s, peek_fn, &mine));
    OK(aclrtLaunchHostFunc(s, peek_fn, &other));
    OK(aclrtMemcpyAsync(dev, 4, host, 4, ACL_MEMCPY_HOST_TO_DEVICE, s));
    OK(aclrtLaunchHostFunc(t, blocker_fn, &bt));
    OK(aclrtMemcpyAsync(dev, 4, host + 6 * PAGE_INTS, 4, ACL_MEMCPY_HOST_TO_DEVICE, t));
    capture_begin();
    blocker_release(&bs);
    OK(aclrtSynchronizeStream(s));
    capture_end(printed, sizeof printed);
    blocker_release(&bt);
    OK(aclrtSynchronizeStream(t));
    snprintf(name, sizeof name, "on stream %p", (void *)t);
    expect_one_report(printed, "early-host-access", "host code touched the 65536-byte allocation",
                      name);
    assert_int_equal(mine.seen, 5);
    assert_int_equal(other.seen, 5);
    OK(aclrtFreeHost(host));
    OK(aclrtFree(dev));
    OK(aclrtDestroyStream(s));
    OK(aclrtDestroyStream(t));
}

/* ---- ACLSIM_CHECK_STOP: a child process ------------------------------------------- */

/* The child (this program run with --child <bug> [config]): the bug, then
 * "went on" on stderr and exit 0 if the process was not stopped. */
static int child(const char *bug, const char *config)
{
    if (aclInit(config) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 3;
    aclrtStream s;
    int *host, *dev;
    if (aclrtCreateStream(&s) || aclrtMallocHost((void **)&host, 4096) ||
        aclrtMalloc((void **)&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST))
        return 3;
    memset(host, 0, 4096);
    struct blocker bl;
    blocker_init(&bl);
    if (aclrtLaunchHostFunc(s, blocker_fn, &bl) ||
        aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s))
        return 3;
    if (!strcmp(bug, "early"))
        ((volatile int *)host)[5] = -5;   /* stops here */
    else if (aclrtFree(dev) != ACL_ERROR_RT_MEMORY_FREE)   /* free-pending: stops here */
        return 4;
    fprintf(stderr, "went on\n");
    blocker_release(&bl);
    if (aclrtSynchronizeStream(s))
        return 3;
    aclFinalize();
    return 0;
}

/* Runs the child with ACLSIM_CHECK=check (NULL: unset) and ACLSIM_CHECK_STOP=stop
 * (NULL: unset), JSON file config if any; *status gets its wait status, out
 * its stderr. Bounded: a child still running after 30 s is killed (a
 * failure). */
static void run_child(const char *bug, const char *check, const char *stop, const char *config,
                      int *status, char *out, size_t cap)
{
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    if (check)
        setenv("ACLSIM_CHECK", check, 1);
    if (stop)
        setenv("ACLSIM_CHECK_STOP", stop, 1);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);   /* (no core file from the abort) */
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        close(pipefd[1]);
        char *argv[] = {"test-checker-host", "--child", (char *)bug, (char *)config, NULL};
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    unsetenv("ACLSIM_CHECK");
    unsetenv("ACLSIM_CHECK_STOP");
    close(pipefd[1]);
    size_t n = 0;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    bool timed_out = false;
    for (;;) {
        struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
        int r = poll(&p, 1, 100);
        if (r > 0) {
            ssize_t got = read(pipefd[0], out + n, cap - 1 - n);
            if (got == 0)
                break;   /* the child closed stderr: it ended */
            if (got > 0)
                n += (size_t)got;
            if (n == cap - 1)
                break;
        } else if (r < 0 && errno != EINTR) {
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 30) {
            timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
    }
    out[n] = 0;
    close(pipefd[0]);
    assert_int_equal(waitpid(pid, status, 0), pid);
    fputs(out, stderr);
    if (timed_out)
        fail_msg("the child did not end within 30 s; it printed: %s", out);
}

static void test_stop_at_first_report(void **state)
{
    (void)state;
    char out[8192], path[96];
    int status;
    /* Early host access: the report, then abort(). */
    run_child("early", "early-host-access", "1", NULL, &status, out, sizeof out);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fail_msg("the child was not ended by SIGABRT (status 0x%x); it printed: %s", status, out);
    expect_one_report(out, "early-host-access", "host code touched the 4096-byte allocation",
                      NULL);
    assert_non_null(strstr(out, "aclsim: stopping at the first checker report (ACLSIM_CHECK_STOP): "
                                "abort()"));
    assert_null(strstr(out, "went on"));

    /* Any detector's report stops it: free-pending, with the JSON key. */
    run_child("free", NULL, NULL, write_config(path, sizeof path,
                                                  "\"check\": \"all\", \"check_stop\": 1"),
              &status, out, sizeof out);
    unlink(path);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fail_msg("the child was not ended by SIGABRT (status 0x%x); it printed: %s", status, out);
    expect_one_report(out, "free-pending", "free of memory in use", NULL);
    assert_null(strstr(out, "went on"));

    /* Without the setting (or with 0) the program goes on after the report. */
    run_child("early", "early-host-access", "0", NULL, &status, out, sizeof out);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the child did not exit with 0 (status 0x%x); it printed: %s", status, out);
    expect_one_report(out, "early-host-access", "host code touched", NULL);
    assert_non_null(strstr(out, "went on"));
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "--child"))
        return child(argv[2], argc >= 4 ? argv[3] : NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_means_all, setup_clean, teardown_clean),
        cmocka_unit_test_setup_teardown(test_config_stop_values, setup_clean, teardown_clean),
        cmocka_unit_test_setup_teardown(test_host_function_in_stream_order, setup_checked,
                                        teardown_checked),
        cmocka_unit_test_setup_teardown(test_only_pages_in_use, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_page_counts, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_lent_page, setup_checked, teardown_checked),
        cmocka_unit_test_setup_teardown(test_stop_at_first_report, setup_clean, teardown_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
