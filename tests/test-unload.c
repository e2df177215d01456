/*
 * Unloading the library (dlclose) while threads that used it live on: each
 * such thread keeps a few things in thread-locals (a spare task, its trace
 * ring, its push stack), given back by a thread-exit destructor (thread.c).
 * The library's destructor deletes that key at dlclose, so that a thread
 * exiting afterwards calls nothing in the unmapped library. Before it did,
 * such a thread crashed at exit.
 *
 * This test is not linked with libascendcl: it dlopen()s the library from
 * ACLSIM_TEST_LIBRARY_PATH, so that dlclose() really unmaps it (checked in
 * /proc/self/maps: a test that cannot unload it fails instead of passing for
 * nothing). Each scenario runs in a child process, which ends with _exit():
 * the parts of a thread that outlived the library stay allocated by design,
 * and a crash is reported as the child's signal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"

/* The functions used, looked up in the loaded library. */
struct api {
    void *lib;
    aclError (*init)(const char *);
    aclError (*finalize)(void);
    aclError (*set_device)(int32_t);
    aclError (*reset_device)(int32_t);
    aclError (*create_stream)(aclrtStream *);
    aclError (*destroy_stream)(aclrtStream);
    aclError (*malloc_host)(void **, size_t);
    aclError (*free_host)(void *);
    aclError (*memcpy_async)(void *, size_t, const void *, size_t, aclrtMemcpyKind, aclrtStream);
    aclError (*synchronize)(aclrtStream);
    void *(*create_stamp)(void);
    aclError (*destroy_stamp)(void *);
    aclError (*push)(void *);
};

/* Child-side checks: a message on stderr and exit status 1. */
#define CHILD_CHECK(cond, ...)                                                          \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
            _exit(1);                                                                   \
        }                                                                               \
    } while (0)

static void load(struct api *a)
{
    a->lib = dlopen(ACLSIM_TEST_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
    CHILD_CHECK(a->lib, "dlopen(%s): %s", ACLSIM_TEST_LIBRARY_PATH, dlerror());
#define SYM(field, name)                                                                \
    do {                                                                                \
        *(void **)&a->field = dlsym(a->lib, name);                                      \
        CHILD_CHECK(a->field, "dlsym(%s) failed", name);                                \
    } while (0)
    SYM(init, "aclInit");
    SYM(finalize, "aclFinalize");
    SYM(set_device, "aclrtSetDevice");
    SYM(reset_device, "aclrtResetDevice");
    SYM(create_stream, "aclrtCreateStream");
    SYM(destroy_stream, "aclrtDestroyStream");
    SYM(malloc_host, "aclrtMallocHost");
    SYM(free_host, "aclrtFreeHost");
    SYM(memcpy_async, "aclrtMemcpyAsync");
    SYM(synchronize, "aclrtSynchronizeStream");
    SYM(create_stamp, "aclprofCreateStamp");
    SYM(destroy_stamp, "aclprofDestroyStamp");
    SYM(push, "aclprofPush");
#undef SYM
}

/* Whether the library's file is mapped (its real path, as /proc shows it). */
static bool library_mapped(void)
{
    char real[4096];
    CHILD_CHECK(realpath(ACLSIM_TEST_LIBRARY_PATH, real), "realpath(%s) failed",
                ACLSIM_TEST_LIBRARY_PATH);
    FILE *f = fopen("/proc/self/maps", "r");
    CHILD_CHECK(f, "cannot read /proc/self/maps");
    char line[4096 + 128];
    bool mapped = false;
    size_t n = strlen(real);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        size_t len = strlen(line);
        if (len >= n && strcmp(line + len - n, real) == 0 && (len == n || line[len - n - 1] == ' '))
            mapped = true;
    }
    fclose(f);
    return mapped;
}

/* A user thread: uses the runtime (an async copy: a spare task in hand; with
 * tracing on, a trace ring; a push: the push stack), then waits for the main
 * thread to say when to exit. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int phase;   /* 1: the user thread used the runtime; 2: it may exit */

static void set_phase(int p)
{
    pthread_mutex_lock(&lock);
    phase = p;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void wait_phase(int p)
{
    pthread_mutex_lock(&lock);
    while (phase < p)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

static void *user_thread(void *arg)
{
    struct api *a = arg;
    aclrtStream s = NULL;
    void *pinned = NULL;
    CHILD_CHECK(a->set_device(0) == ACL_SUCCESS, "aclrtSetDevice failed");
    CHILD_CHECK(a->create_stream(&s) == ACL_SUCCESS, "aclrtCreateStream failed");
    CHILD_CHECK(a->malloc_host(&pinned, 4096) == ACL_SUCCESS, "aclrtMallocHost failed");
    memset(pinned, 7, 64);
    CHILD_CHECK(a->memcpy_async((char *)pinned + 64, 64, pinned, 64, ACL_MEMCPY_HOST_TO_HOST, s) ==
                    ACL_SUCCESS, "aclrtMemcpyAsync failed");
    CHILD_CHECK(a->synchronize(s) == ACL_SUCCESS, "aclrtSynchronizeStream failed");
    CHILD_CHECK(((unsigned char *)pinned)[64 + 63] == 7, "the async copy did not copy");
    void *stamp = a->create_stamp();
    CHILD_CHECK(stamp, "aclprofCreateStamp failed (is ACLSIM_TRACE set?)");
    CHILD_CHECK(a->push(stamp) == ACL_SUCCESS, "aclprofPush failed");
    a->destroy_stamp(stamp);
    CHILD_CHECK(a->destroy_stream(s) == ACL_SUCCESS, "aclrtDestroyStream failed");
    CHILD_CHECK(a->free_host(pinned) == ACL_SUCCESS, "aclrtFreeHost failed");
    CHILD_CHECK(a->reset_device(0) == ACL_SUCCESS, "aclrtResetDevice failed");
    set_phase(1);
    wait_phase(2);
    return NULL;   /* exits: after the library is gone, or before (exit_first) */
}

/* The scenario, in the child: load, use from a user thread, finalize,
 * unload; the user thread exits after (or, with exit_first, before) the
 * unload; then the library loads and works again. */
static void scenario(bool exit_first)
{
    char trace[] = "/tmp/aclsim-test-unload-XXXXXX";
    int fd = mkstemp(trace);
    CHILD_CHECK(fd >= 0, "mkstemp failed");
    close(fd);
    setenv("ACLSIM_TRACE", trace, 1);   /* tracing on: trace rings, and aclprofPush works */
    struct api a;
    load(&a);
    CHILD_CHECK(a.init(NULL) == ACL_SUCCESS, "aclInit failed");
    pthread_t t;
    CHILD_CHECK(pthread_create(&t, NULL, user_thread, &a) == 0, "pthread_create failed");
    wait_phase(1);
    if (exit_first) {
        set_phase(2);
        CHILD_CHECK(pthread_join(t, NULL) == 0, "pthread_join failed");
    }
    CHILD_CHECK(a.finalize() == ACL_SUCCESS, "aclFinalize failed");
    CHILD_CHECK(dlclose(a.lib) == 0, "dlclose: %s", dlerror());
    CHILD_CHECK(!library_mapped(), "libascendcl is still mapped after dlclose: this test "
                                   "cannot check what it is meant to");
    if (!exit_first) {
        set_phase(2);   /* the user thread exits now, with the library unmapped */
        CHILD_CHECK(pthread_join(t, NULL) == 0, "pthread_join failed");
    }
    /* Loaded again, it starts from scratch. */
    phase = 0;
    load(&a);
    CHILD_CHECK(a.init(NULL) == ACL_SUCCESS, "aclInit after reloading failed");
    CHILD_CHECK(pthread_create(&t, NULL, user_thread, &a) == 0, "pthread_create failed");
    wait_phase(1);
    set_phase(2);
    CHILD_CHECK(pthread_join(t, NULL) == 0, "pthread_join failed");
    CHILD_CHECK(a.finalize() == ACL_SUCCESS, "aclFinalize after reloading failed");
    CHILD_CHECK(dlclose(a.lib) == 0, "dlclose: %s", dlerror());
    unlink(trace);
    _exit(0);
}

static void run_child(bool exit_first)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        scenario(exit_first);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fail_msg("the child died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the child failed (exit status %d; its message is above)", WEXITSTATUS(status));
}

/* A thread that used the runtime exits after dlclose: nothing of the
 * library is called (it used to crash in the spare-task destructor). */
static void test_thread_exits_after_unload(void **state)
{
    (void)state;
    run_child(false);
}

/* The usual order: the thread exits first (its parts are given back), then
 * the library goes. */
static void test_thread_exits_before_unload(void **state)
{
    (void)state;
    run_child(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_exits_after_unload),
        cmocka_unit_test(test_thread_exits_before_unload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
