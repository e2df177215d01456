/*
 * Sharing between real processes (issue 11, docs/ipc.md): IPC memory, IPC
 * events, IPC notifies and shareable handles of physical memory.
 *
 * Each scenario starts a real second process: this test binary again
 * (posix_spawn of /proc/self/exe with "child <scenario>"), with its own
 * aclsim instance. The two exchange keys, pids and "done" lines through
 * pipes (the child's stdin and stdout); every read has a deadline, and a
 * child that does not answer is killed, so nothing hangs.
 */
#define _GNU_SOURCE
#include "common.h"
#include "aclsim/aclsim.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define BYTES ((size_t)1 << 20)

/* ---- the pipe protocol --------------------------------------------------------- */

struct peer { pid_t pid; int to, from; };

/* One line from fd (without the newline), waiting at most ms; false on
 * timeout or end of file. */
static bool read_line(int fd, char *buf, size_t n, int ms)
{
    size_t len = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, ms) <= 0)
            return false;
        char c;
        if (read(fd, &c, 1) != 1)
            return false;
        if (c == '\n') {
            buf[len] = 0;
            return true;
        }
        if (len + 1 < n)
            buf[len++] = c;
    }
}

static void say(int fd, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    buf[n++] = '\n';
    ssize_t w = write(fd, buf, (size_t)n);
    (void)w;
}

/* Children not reaped yet: the teardown kills them, so that a failed test
 * leaves no process behind (it would hold the test's output pipe open). */
static pid_t children[8];

static void forget_child(pid_t pid)
{
    for (int i = 0; i < 8; i++)
        if (children[i] == pid)
            children[i] = 0;
}

static struct peer spawn_child(const char *scenario)
{
    int in[2], out[2];
    assert_int_equal(pipe2(in, O_CLOEXEC), 0);
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    char *argv[] = {"test-ipc", "child", (char *)scenario, NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 8; i++)
        if (!children[i]) {
            children[i] = pid;
            break;
        }
    close(in[0]);
    close(out[1]);
    return (struct peer){pid, in[1], out[0]};
}

/* The child's next line, which must start with want; the rest in *rest. */
static void expect_line(struct peer *c, const char *want, char *rest, size_t n)
{
    char buf[256];
    if (!read_line(c->from, buf, sizeof buf, WAIT_MS)) {
        kill(c->pid, SIGKILL);
        fail_msg("the child did not say \"%s\" within %d ms", want, WAIT_MS);
    }
    if (strncmp(buf, want, strlen(want)) != 0) {
        kill(c->pid, SIGKILL);
        fail_msg("the child said \"%s\", expected \"%s...\"", buf, want);
    }
    if (rest)
        snprintf(rest, n, "%s", buf + strlen(want));
}

/* Waits (bounded) for the child's exit; returns its status code. */
static int reap(struct peer *c)
{
    close(c->to);
    close(c->from);
    int st = 0;
    for (int i = 0; i < WAIT_MS / 10; i++) {
        pid_t r = waitpid(c->pid, &st, WNOHANG);
        if (r == c->pid) {
            forget_child(c->pid);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    kill(c->pid, SIGKILL);
    waitpid(c->pid, &st, 0);
    forget_child(c->pid);
    fail_msg("the child did not exit within %d ms", WAIT_MS);
    return -1;
}

static void fill(void *dev, uint8_t seed)
{
    uint8_t *h = malloc(BYTES);
    for (size_t i = 0; i < BYTES; i++)
        h[i] = (uint8_t)(seed + i * 7);
    EXPECT_OK(aclrtMemcpy(dev, BYTES, h, BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
    free(h);
}

/* Whether dev holds fill(seed)'s bytes. */
static bool holds(void *dev, uint8_t seed)
{
    uint8_t *h = malloc(BYTES);
    bool ok = aclrtMemcpy(h, BYTES, dev, BYTES, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS;
    for (size_t i = 0; ok && i < BYTES; i++)
        ok = h[i] == (uint8_t)(seed + i * 7);
    free(h);
    return ok;
}

/* A kernel: block i adds 1 to its share of the bytes. */
#define BLOCKS 64
void k_ipc_inc(uint8_t *p)
{
    size_t per = BYTES / BLOCKS, from = aclsimGetBlockIdx() * per;
    for (size_t i = from; i < from + per; i++)
        p[i]++;
}
ACLSIM_KERNEL_REGISTER(k_ipc_inc, uint8_t *);

/* ---- child side: plain C, exit code 0 = every check passed ------------------------ */

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            const char *m_ = aclGetRecentErrMsg();                                         \
            fprintf(stderr, "child %s:%d: check failed: %s (%s)\n", __FILE__, __LINE__,    \
                    #cond, m_ ? m_ : "");                                                  \
            say(1, "fail");                                                                \
            _exit(1);                                                                      \
        }                                                                                  \
    } while (0)

static void child_line(char *buf, size_t n)
{
    if (!read_line(0, buf, n, WAIT_MS))
        _exit(2);   /* the parent went away */
}

static aclrtStream child_start(void)
{
    CHECK(aclInit(NULL) == ACL_SUCCESS);
    CHECK(aclrtSetDevice(1) == ACL_SUCCESS);   /* another device than the parent's */
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s) == ACL_SUCCESS);
    int32_t pid = 0;
    CHECK(aclrtDeviceGetBareTgid(&pid) == ACL_SUCCESS && pid == getpid());
    say(1, "pid %d", (int)pid);
    return s;
}

static int child_memory(void)
{
    aclrtStream s = child_start();
    char key[128];
    child_line(key, sizeof key);
    void *p = NULL;
    /* Not whitelisted yet. */
    CHECK(aclrtIpcMemImportByKey(&p, key, 0) == ACL_ERROR_RT_NO_PERMISSION);
    CHECK(strstr(aclGetRecentErrMsg(), "whitelist"));
    say(1, "refused");
    char go[32];
    child_line(go, sizeof go);
    CHECK(aclrtIpcMemImportByKey(&p, key, ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS) ==
          ACL_SUCCESS);
    CHECK(holds(p, 11));   /* the parent's bytes */
    /* Writes of this side: an async copy from page-locked memory. */
    void *pinned = NULL;
    CHECK(aclrtMallocHost(&pinned, BYTES) == ACL_SUCCESS);
    for (size_t i = 0; i < BYTES; i++)
        ((uint8_t *)pinned)[i] = (uint8_t)(22 + i * 7);
    CHECK(aclrtMemcpyAsync(p, BYTES, pinned, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, s) == ACL_SUCCESS);
    CHECK(aclrtSynchronizeStream(s) == ACL_SUCCESS);
    CHECK(aclrtIpcMemClose(key) == ACL_SUCCESS);
    CHECK(aclrtIpcMemClose(key) == ACL_ERROR_RT_PARAM_INVALID);   /* closed */
    say(1, "written");
    child_line(go, sizeof go);   /* the parent closed its export */
    CHECK(aclrtIpcMemImportByKey(&p, key, 0) == ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtFreeHost(pinned) == ACL_SUCCESS);
    CHECK(aclrtDestroyStream(s) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    say(1, "done");
    return 0;
}

/* The exporter frees its memory while this process still maps it. */
static int child_free_first(void)
{
    aclrtStream s = child_start();
    (void)s;
    char key[128], go[32];
    child_line(key, sizeof key);
    uint32_t *p = NULL;
    CHECK(aclrtIpcMemImportByKey((void **)&p, key, 0) == ACL_SUCCESS);
    uint32_t v = 0;
    CHECK(aclrtMemcpy(&v, 4, p, 4, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS && v == 0xC0FFEE);
    say(1, "imported");
    child_line(go, sizeof go);   /* freed over there */
    /* The mapping stays usable (CANN: "may cause exceptions"; here the
     * pages live while mapped), the key opens nothing any more. */
    CHECK(aclrtMemcpy(p, 4, &v, 4, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
    void *q = NULL;
    CHECK(aclrtIpcMemImportByKey(&q, key, 0) == ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtIpcMemClose(key) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    say(1, "done");
    return 0;
}

static void open_event(const char *hex, aclrtEvent *ev)
{
    aclrtIpcEventHandle h;
    memset(&h, 0, sizeof h);
    snprintf(h.reserved, sizeof h.reserved, "%s", hex);
    CHECK(aclrtIpcOpenEventHandle(h, ev) == ACL_SUCCESS);
}

static int child_event(void)
{
    aclrtStream s = child_start();
    char key[128], handle[128];
    child_line(key, sizeof key);
    child_line(handle, sizeof handle);
    void *p = NULL;
    CHECK(aclrtIpcMemImportByKey(&p, key, 0) == ACL_SUCCESS);
    aclrtEvent ev = NULL;
    open_event(handle, &ev);
    /* The parent's stream: gate, copy of seed 33, record. This stream waits
     * for that record, then reads: it must see seed 33. */
    CHECK(aclrtStreamWaitEvent(s, ev) == ACL_SUCCESS);
    uint8_t *h = NULL;
    CHECK(aclrtMallocHost((void **)&h, BYTES) == ACL_SUCCESS);
    memset(h, 0, BYTES);
    CHECK(aclrtMemcpyAsync(h, BYTES, p, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, s) == ACL_SUCCESS);
    say(1, "queued");
    CHECK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS) == ACL_SUCCESS);
    for (size_t i = 0; i < BYTES; i++)
        CHECK(h[i] == (uint8_t)(33 + i * 7));
    /* The other direction: this process records the event it opened. */
    for (size_t i = 0; i < BYTES; i++)
        h[i] = (uint8_t)(44 + i * 7);
    CHECK(aclrtMemcpyAsync(p, BYTES, h, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, s) == ACL_SUCCESS);
    CHECK(aclrtRecordEvent(ev, s) == ACL_SUCCESS);
    CHECK(aclrtSynchronizeEventWithTimeout(ev, WAIT_MS) == ACL_SUCCESS);
    say(1, "recorded");
    char go[32];
    child_line(go, sizeof go);
    CHECK(aclrtIpcMemClose(key) == ACL_SUCCESS);
    CHECK(aclrtDestroyEvent(ev) == ACL_SUCCESS);
    CHECK(aclrtFreeHost(h) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    say(1, "done");
    return 0;
}

static int child_notify(void)
{
    aclrtStream s = child_start();
    char key[128], nkey[128];
    child_line(key, sizeof key);
    child_line(nkey, sizeof nkey);
    void *p = NULL;
    CHECK(aclrtIpcMemImportByKey(&p, key, 0) == ACL_SUCCESS);
    aclrtNotify n = NULL;
    CHECK(aclrtNotifyImportByKey(&n, nkey, ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS) ==
          ACL_SUCCESS);
    /* Only the creator waits for an IPC notify. */
    CHECK(aclrtWaitAndResetNotify(n, s, 0) == ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    CHECK(aclrtMemsetAsync(p, BYTES, 0x5A, BYTES, s) == ACL_SUCCESS);
    aclrtFuncHandle f = NULL;   /* a kernel of this process writes the parent's memory */
    CHECK(aclrtGetFuncBySymbol((const void *)(uintptr_t)&k_ipc_inc, &f) == ACL_SUCCESS);
    void *args[] = {&p};
    CHECK(aclrtLaunchKernelWithArgsArray(f, BLOCKS, s, NULL, args) == ACL_SUCCESS);
    CHECK(aclrtRecordNotify(n, s) == ACL_SUCCESS);
    CHECK(aclrtSynchronizeStream(s) == ACL_SUCCESS);
    say(1, "recorded");
    char go[32];
    child_line(go, sizeof go);
    CHECK(aclrtDestroyNotify(n) == ACL_SUCCESS);
    CHECK(aclrtIpcMemClose(key) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    say(1, "done");
    return 0;
}

static void block_forever(void *arg)
{
    (void)arg;
    for (;;)
        pause();
}

static int child_killed(void)
{
    aclrtStream s = child_start();
    char handle[128];
    child_line(handle, sizeof handle);
    aclrtEvent ev = NULL;
    open_event(handle, &ev);
    /* Memory the parent maps, and keeps after this process is killed. */
    void *d = NULL;
    char key[65];
    CHECK(aclrtMalloc(&d, BYTES, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    fill(d, 88);
    CHECK(aclrtIpcMemGetExportKey(d, BYTES, key, sizeof key, 1) == ACL_SUCCESS);
    say(1, "key %s", key);
    /* A record that will never run: this process is killed first. */
    CHECK(aclrtLaunchHostFunc(s, block_forever, NULL) == ACL_SUCCESS);
    CHECK(aclrtRecordEvent(ev, s) == ACL_SUCCESS);
    say(1, "recorded");
    for (;;)
        pause();
}

static int child_shareable(void)
{
    aclrtStream s = child_start();
    (void)s;
    char line[128];
    child_line(line, sizeof line);
    uint64_t sh = strtoull(line, NULL, 16);
    aclrtDrvMemHandle h = NULL;
    CHECK(aclrtMemImportFromShareableHandle(sh, 1, &h) == ACL_ERROR_RT_NO_PERMISSION);
    say(1, "refused");
    child_line(line, sizeof line);
    CHECK(aclrtMemImportFromShareableHandle(sh, 1, &h) == ACL_SUCCESS);
    void *va = NULL;
    CHECK(aclrtReserveMemAddress(&va, 2 * MiB, 0, NULL, 0) == ACL_SUCCESS);
    CHECK(aclrtMapMem(va, 2 * MiB, 0, h, 0) == ACL_SUCCESS);
    CHECK(holds(va, 55));
    fill(va, 66);
    CHECK(aclrtUnmapMem(va) == ACL_SUCCESS);
    CHECK(aclrtReleaseMemAddress(va) == ACL_SUCCESS);
    CHECK(aclrtFreePhysical(h) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    say(1, "done");
    return 0;
}

/* ---- parent side: the tests ----------------------------------------------------- */

static int setup(void **state)
{
    (void)state;
    unset_config();
    assert_int_equal(init_devices("2", "256M"), ACL_SUCCESS);
    EXPECT_OK(aclrtSetDevice(0));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 8; i++)
        if (children[i]) {
            kill(children[i], SIGKILL);
            waitpid(children[i], NULL, 0);
            children[i] = 0;
        }
    reset_and_finalize();
    return 0;
}

static void test_memory_between_processes(void **state)
{
    (void)state;
    void *d = NULL;
    EXPECT_OK(aclrtMalloc(&d, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    fill(d, 11);
    char key[65];
    EXPECT_OK(aclrtIpcMemGetExportKey(d, BYTES, key, sizeof key, ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT));
    struct peer c = spawn_child("memory");
    char rest[64];
    expect_line(&c, "pid ", rest, sizeof rest);
    int32_t child = atoi(rest);
    say(c.to, "%s", key);
    expect_line(&c, "refused", NULL, 0);
    int32_t pids[2] = {child, 1};
    EXPECT_OK(aclrtIpcMemSetImportPid(key, pids, 2));
    say(c.to, "go");
    expect_line(&c, "written", NULL, 0);
    assert_true(holds(d, 22));   /* the child's async copy, through its mapping */
    EXPECT_OK(aclrtIpcMemClose(key));
    say(c.to, "closed");
    expect_line(&c, "done", NULL, 0);
    assert_int_equal(reap(&c), 0);
    EXPECT_OK(aclrtFree(d));
}

static aclrtStream gated_stream(atomic_int *gate);

static void wait_gate(void *arg)
{
    atomic_int *gate = arg;
    for (int i = 0; i < WAIT_MS && !atomic_load(gate); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static aclrtStream gated_stream(atomic_int *gate)
{
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtLaunchHostFunc(s, wait_gate, gate));
    return s;
}

static void test_event_between_processes(void **state)
{
    (void)state;
    void *d = NULL;
    EXPECT_OK(aclrtMalloc(&d, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    fill(d, 0);
    char key[65];
    EXPECT_OK(aclrtIpcMemGetExportKey(d, BYTES, key, sizeof key,
                                      ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    aclrtEvent ev = NULL;
    EXPECT_OK(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_IPC));
    aclrtIpcEventHandle h;
    EXPECT_OK(aclrtIpcGetEventHandle(ev, &h));
    /* Held by a gate: copy seed 33, then record. */
    static atomic_int gate;
    atomic_store(&gate, 0);
    aclrtStream s = gated_stream(&gate);
    uint8_t *pinned = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&pinned, BYTES));
    for (size_t i = 0; i < BYTES; i++)
        pinned[i] = (uint8_t)(33 + i * 7);
    EXPECT_OK(aclrtMemcpyAsync(d, BYTES, pinned, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_OK(aclrtRecordEvent(ev, s));
    struct peer c = spawn_child("event");
    expect_line(&c, "pid ", NULL, 0);
    say(c.to, "%s", key);
    say(c.to, "%.64s", h.reserved);
    expect_line(&c, "queued", NULL, 0);   /* its wait and read are queued before our copy ran */
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
    atomic_store(&gate, 1);
    expect_line(&c, "recorded", NULL, 0);
    /* The child recorded after writing seed 44: wait for that here. */
    EXPECT_OK(aclrtStreamWaitEvent(s, ev));
    memset(pinned, 0, BYTES);
    EXPECT_OK(aclrtMemcpyAsync(pinned, BYTES, d, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS));
    for (size_t i = 0; i < BYTES; i++)
        if (pinned[i] != (uint8_t)(44 + i * 7))
            fail_msg("byte %zu is %u after the child's record", i, pinned[i]);
    aclrtEventRecordedStatus st;
    EXPECT_OK(aclrtQueryEventStatus(ev, &st));
    assert_int_equal(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    say(c.to, "go");
    expect_line(&c, "done", NULL, 0);
    assert_int_equal(reap(&c), 0);
    EXPECT_OK(aclrtDestroyEvent(ev));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFreeHost(pinned));
    EXPECT_OK(aclrtIpcMemClose(key));
    EXPECT_OK(aclrtFree(d));
}

static void test_notify_between_processes(void **state)
{
    (void)state;
    void *d = NULL;
    EXPECT_OK(aclrtMalloc(&d, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    fill(d, 0);
    char key[65], nkey[65];
    EXPECT_OK(aclrtIpcMemGetExportKey(d, BYTES, key, sizeof key,
                                      ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    aclrtNotify n = NULL;
    EXPECT_OK(aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT));
    EXPECT_OK(aclrtNotifyGetExportKey(n, nkey, sizeof nkey, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT));
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    struct peer c = spawn_child("notify");
    char rest[64];
    expect_line(&c, "pid ", rest, sizeof rest);
    int32_t child = atoi(rest);
    EXPECT_OK(aclrtNotifySetImportPid(n, &child, 1));
    say(c.to, "%s", key);
    say(c.to, "%s", nkey);
    /* Released by the child's record, which follows its memset. */
    EXPECT_OK(aclrtWaitAndResetNotify(n, s, 0));
    uint8_t *h = malloc(BYTES);
    EXPECT_OK(aclrtMemcpyAsync(h, BYTES, d, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS));
    for (size_t i = 0; i < BYTES; i++)
        if (h[i] != 0x5B)
            fail_msg("byte %zu is %#x after the child's notify (memset 0x5A, kernel +1)", i,
                     h[i]);
    free(h);
    expect_line(&c, "recorded", NULL, 0);
    say(c.to, "go");
    expect_line(&c, "done", NULL, 0);
    assert_int_equal(reap(&c), 0);
    EXPECT_OK(aclrtDestroyNotify(n));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtIpcMemClose(key));
    EXPECT_OK(aclrtFree(d));
}

static void test_exporter_frees_first(void **state)
{
    (void)state;
    void *d = NULL;
    EXPECT_OK(aclrtMalloc(&d, 65536, ACL_MEM_MALLOC_HUGE_FIRST));
    uint32_t v = 0xC0FFEE;
    EXPECT_OK(aclrtMemcpy(d, 4, &v, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    char key[65];
    EXPECT_OK(aclrtIpcMemGetExportKey(d, 65536, key, sizeof key,
                                      ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    struct peer c = spawn_child("free_first");
    expect_line(&c, "pid ", NULL, 0);
    say(c.to, "%s", key);
    expect_line(&c, "imported", NULL, 0);
    EXPECT_OK(aclrtFree(d));   /* without aclrtIpcMemClose: freeing closes the key */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, NULL, aclrtIpcMemClose(key));
    say(c.to, "freed");
    expect_line(&c, "done", NULL, 0);
    assert_int_equal(reap(&c), 0);
}

/* A child killed with a record of the shared event still queued: the
 * parent's wait for it ends (the record counts as reached) within a bound. */
static void test_killed_peer(void **state)
{
    (void)state;
    aclrtEvent ev = NULL;
    EXPECT_OK(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_IPC));
    aclrtIpcEventHandle h;
    EXPECT_OK(aclrtIpcGetEventHandle(ev, &h));
    struct peer c = spawn_child("killed");
    expect_line(&c, "pid ", NULL, 0);
    say(c.to, "%.64s", h.reserved);
    char key[80];
    expect_line(&c, "key ", key, sizeof key);
    void *p = NULL;
    EXPECT_OK(aclrtIpcMemImportByKey(&p, key, 0));
    expect_line(&c, "recorded", NULL, 0);
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtStreamWaitEvent(s, ev));
    aclrtEventRecordedStatus st;
    EXPECT_OK(aclrtQueryEventStatus(ev, &st));
    assert_int_equal(st, ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT_ERR(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, NULL, aclrtSynchronizeStreamWithTimeout(s, 100));
    kill(c.pid, SIGKILL);
    assert_int_equal(reap(&c), 128 + SIGKILL);
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(s, WAIT_MS));
    EXPECT_OK(aclrtSynchronizeEventWithTimeout(ev, WAIT_MS));
    /* Its memory lives on in this process's mapping; its keys open nothing. */
    assert_true(holds(p, 88));
    void *again = NULL;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "exited", aclrtIpcMemImportByKey(&again, key, 0));
    EXPECT_OK(aclrtIpcMemClose(key));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtDestroyEvent(ev));
}

static void test_shareable_between_processes(void **state)
{
    (void)state;
    aclrtPhysicalMemProp prop = {.handleType = ACL_MEM_HANDLE_TYPE_NONE,
                                 .allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED,
                                 .memAttr = ACL_HBM_MEM_HUGE,
                                 .location = {.id = 0, .type = ACL_MEM_LOCATION_TYPE_DEVICE}};
    aclrtDrvMemHandle ph = NULL;
    EXPECT_OK(aclrtMallocPhysical(&ph, 2 * MiB, &prop, 0));
    void *va = NULL;
    EXPECT_OK(aclrtReserveMemAddress(&va, 2 * MiB, 0, NULL, 0));
    EXPECT_OK(aclrtMapMem(va, 2 * MiB, 0, ph, 0));
    fill(va, 55);
    uint64_t sh = 0;
    EXPECT_OK(aclrtMemExportToShareableHandle(ph, ACL_MEM_HANDLE_TYPE_NONE,
                                              ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &sh));
    uint64_t twice = 0;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "already exported",
               aclrtMemExportToShareableHandle(ph, ACL_MEM_HANDLE_TYPE_NONE, 0, &twice));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handleType",
               aclrtMemExportToShareableHandle(ph, ACL_MEM_HANDLE_TYPE_POSIX, 0, &twice));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "fabric",
               aclrtMemExportToShareableHandleV2(ph, 0, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &twice));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "pid", aclrtMemSetPidToShareableHandle(sh, NULL, 1));
    int32_t me = getpid();
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "pidNum", aclrtMemSetPidToShareableHandle(sh, &me, 0));
    struct peer c = spawn_child("shareable");
    char rest[64];
    expect_line(&c, "pid ", rest, sizeof rest);
    int32_t child = atoi(rest);
    say(c.to, "%llx", (unsigned long long)sh);
    expect_line(&c, "refused", NULL, 0);
    EXPECT_OK(aclrtMemSetPidToShareableHandle(sh, &child, 1));
    say(c.to, "go");
    expect_line(&c, "done", NULL, 0);
    assert_int_equal(reap(&c), 0);
    assert_true(holds(va, 66));   /* written by the child through its own mapping */
    /* The V2 calls, in this process (its own handles need no whitelist). */
    aclrtDrvMemHandle self = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags",
               aclrtMemImportFromShareableHandleV2(&sh, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 1, &self));
    EXPECT_OK(aclrtMemImportFromShareableHandleV2(&sh, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0, &self));
    EXPECT_OK(aclrtMemSetPidToShareableHandleV2(&sh, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &me, 1));
    void *va2 = NULL;
    EXPECT_OK(aclrtReserveMemAddress(&va2, 2 * MiB, 0, NULL, 0));
    EXPECT_OK(aclrtMapMem(va2, 2 * MiB, 0, self, 0));
    assert_true(holds(va2, 66));
    EXPECT_OK(aclrtUnmapMem(va2));
    EXPECT_OK(aclrtReleaseMemAddress(va2));
    EXPECT_OK(aclrtFreePhysical(self));
    EXPECT_OK(aclrtUnmapMem(va));
    EXPECT_OK(aclrtReleaseMemAddress(va));
    EXPECT_OK(aclrtFreePhysical(ph));
    /* Freed: the handle names nothing any more. */
    aclrtDrvMemHandle again = NULL;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "shareableHandle",
               aclrtMemImportFromShareableHandle(sh, 0, &again));
}

/* In one process: arguments, codes, close/free orders. */
static void test_bad_inputs_and_lifetimes(void **state)
{
    (void)state;
    void *d = NULL, *small = NULL, *p = NULL;
    char key[65], shortkey[16];
    EXPECT_OK(aclrtMalloc(&d, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&small, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtIpcMemGetExportKey(NULL, 8, key, 65, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "key", aclrtIpcMemGetExportKey(d, 8, NULL, 65, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "size", aclrtIpcMemGetExportKey(d, 0, key, 65, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flags", aclrtIpcMemGetExportKey(d, 8, key, 65, 2));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "len",
               aclrtIpcMemGetExportKey(d, 8, shortkey, sizeof shortkey, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "past the end",
               aclrtIpcMemGetExportKey(d, BYTES + 1, key, 65, 0));
    int host;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not aclrtMalloc",
               aclrtIpcMemGetExportKey(&host, 4, key, 65, 0));
    if ((uintptr_t)small % 4096)
        EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "page aligned",
                   aclrtIpcMemGetExportKey(small, 64, key, 65, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtIpcMemImportByKey(NULL, "x", 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a key", aclrtIpcMemImportByKey(&p, "nonsense", 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a key", aclrtIpcMemClose("nonsense"));
    int32_t pid = getpid();
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "pid", aclrtIpcMemSetImportPid("x", NULL, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "pid", aclrtDeviceGetBareTgid(NULL));
    /* A process that exited: its keys open nothing. */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "exited",
               aclrtIpcMemImportByKey(&p, "aclsim-4194000-1-00000000000000ff", 0));

    EXPECT_OK(aclrtIpcMemGetExportKey(d, BYTES, key, sizeof key, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "num", aclrtIpcMemSetImportPid(key, &pid, 0));
    int32_t bad = -5;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "pid[0]", aclrtIpcMemSetImportPid(key, &bad, 1));
    /* The exporting process itself may import (its own memory). */
    EXPECT_OK(aclrtIpcMemImportByKey(&p, key, 0));
    assert_ptr_not_equal(p, d);
    fill(d, 77);
    assert_true(holds(p, 77));   /* two addresses, one memory */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aclrtIpcMemClose", aclrtUnmapMem(p));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL, aclrtFree(p));
    EXPECT_OK(aclrtIpcMemClose(key));   /* the import */
    EXPECT_OK(aclrtIpcMemClose(key));   /* the export */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "no such object", aclrtIpcMemImportByKey(&p, key, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, NULL, aclrtIpcMemClose(key));
    /* Freeing the memory closes its export. */
    EXPECT_OK(aclrtIpcMemGetExportKey(d, BYTES, key, sizeof key, 0));
    EXPECT_OK(aclrtFree(d));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "no such object", aclrtIpcMemImportByKey(&p, key, 0));
    EXPECT_OK(aclrtFree(small));

    /* The attribute and inter-server calls: Atlas A3 only, and one host. */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL,
               aclrtIpcMemSetAttr(key, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0));
    aclrtServerPid sp = {0, &pid, 1};
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtIpcMemImportPidInterServer(key, &sp, 1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "serverPids", aclrtIpcMemImportPidInterServer(key, NULL, 1));

    /* Events and notifies. */
    aclrtEvent ev = NULL;
    aclrtIpcEventHandle h;
    EXPECT_OK(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_SYNC));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "ACL_EVENT_IPC", aclrtIpcGetEventHandle(ev, &h));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle", aclrtIpcGetEventHandle(ev, NULL));
    EXPECT_OK(aclrtDestroyEvent(ev));
    EXPECT_OK(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_IPC));
    EXPECT_OK(aclrtIpcGetEventHandle(ev, &h));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "event", aclrtIpcOpenEventHandle(h, NULL));
    EXPECT_OK(aclrtDestroyEvent(ev));
    aclrtEvent opened = NULL;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "no such object", aclrtIpcOpenEventHandle(h, &opened));
    aclrtNotify n = NULL, in = NULL;
    char nkey[65];
    EXPECT_OK(aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flags", aclrtNotifyGetExportKey(n, nkey, 65, 1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "len", aclrtNotifyGetExportKey(n, nkey, 0, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aclrtNotifyGetExportKey",
               aclrtNotifySetImportPid(n, &pid, 1));
    EXPECT_OK(aclrtNotifyGetExportKey(n, nkey, sizeof nkey, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flags", aclrtNotifyImportByKey(&in, nkey, 1));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL,
               aclrtNotifySetImportPidInterServer(n, &sp, 1));
    EXPECT_OK(aclrtDestroyNotify(n));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "no such object", aclrtNotifyImportByKey(&in, nkey, 0));
}

/* Threads exporting, importing (their own process's keys), closing and
 * freeing at once, some of them on one shared key. */
struct race { char key[65]; atomic_int failures; };

static void *race_thread(void *arg)
{
    struct race *r = arg;
    if (aclrtSetDevice(0) != ACL_SUCCESS) {
        atomic_fetch_add(&r->failures, 1);
        return NULL;
    }
    for (int round = 0; round < 40; round++) {
        void *d = NULL, *p = NULL, *q = NULL;
        char key[65];
        uint64_t v = (uint64_t)round * 1000 + 7, back = 0;
        bool ok = aclrtMalloc(&d, 8192, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS &&
                  aclrtIpcMemGetExportKey(d, 8192, key, sizeof key, 1) == ACL_SUCCESS &&
                  aclrtIpcMemImportByKey(&p, key, 0) == ACL_SUCCESS &&
                  aclrtMemcpy(p, 8, &v, 8, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS &&
                  aclrtMemcpy(&back, 8, d, 8, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS &&
                  back == v && aclrtIpcMemClose(key) == ACL_SUCCESS &&
                  aclrtIpcMemClose(key) == ACL_SUCCESS && aclrtFree(d) == ACL_SUCCESS &&
                  aclrtIpcMemImportByKey(&q, r->key, 0) == ACL_SUCCESS &&
                  aclrtIpcMemClose(r->key) == ACL_SUCCESS;
        if (!ok)
            atomic_fetch_add(&r->failures, 1);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    static struct race r;
    void *shared = NULL;
    EXPECT_OK(aclrtMalloc(&shared, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtIpcMemGetExportKey(shared, 4096, r.key, sizeof r.key, 0));
    atomic_store(&r.failures, 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, race_thread, &r), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&r.failures), 0);
    EXPECT_OK(aclrtIpcMemClose(r.key));
    EXPECT_OK(aclrtFree(shared));
}

/* Nothing aclsim made has a name in a shared-memory namespace. */
static void test_nothing_left_behind(void **state)
{
    (void)state;
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        skip();
    struct dirent *e;
    while ((e = readdir(dir)))
        if (strstr(e->d_name, "aclsim"))
            fail_msg("/dev/shm/%s is left behind", e->d_name);
    closedir(dir);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        unset_config();
        setenv("ACLSIM_DEVICE_COUNT", "2", 1);
        setenv("ACLSIM_DEVICE_MEMORY", "256M", 1);
        const char *m = argv[2];
        return !strcmp(m, "memory")      ? child_memory()
               : !strcmp(m, "event")     ? child_event()
               : !strcmp(m, "notify")    ? child_notify()
               : !strcmp(m, "killed")    ? child_killed()
               : !strcmp(m, "shareable") ? child_shareable()
               : !strcmp(m, "free_first") ? child_free_first()
                                         : 3;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_memory_between_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_between_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_notify_between_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exporter_frees_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_peer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shareable_between_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_inputs_and_lifetimes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
        cmocka_unit_test(test_nothing_left_behind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
