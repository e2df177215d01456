/*
 * Helpers shared by the cmocka tests: see common.h.
 */
#include "common.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- assertions ------------------------------------------------------------------ */

void expect_err_(const char *file, int line, const char *expr, aclError got, aclError want,
                 const char *n1, const char *n2)
{
    const char *m = aclGetRecentErrMsg();
    if (got != want)
        fail_msg("%s:%d: %s returned %d, expected %d (message: %s)", file, line, expr, got,
                 want, m ? m : "none");
    if (!m)
        fail_msg("%s:%d: %s returned %d but aclGetRecentErrMsg() is NULL", file, line, expr, got);
    if (n1 && !strstr(m, n1))
        fail_msg("%s:%d: %s: message \"%s\" does not mention \"%s\"", file, line, expr, m, n1);
    if (n2 && !strstr(m, n2))
        fail_msg("%s:%d: %s: message \"%s\" does not mention \"%s\"", file, line, expr, m, n2);
}

void expect_msg_(const char *file, int line, const char *first, ...)
{
    const char *msg = aclGetRecentErrMsg();
    if (!msg) {
        print_error("%s:%d: aclGetRecentErrMsg() is NULL, expected a message mentioning \"%s\"\n",
                    file, line, first ? first : "");
        fail();
    }
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) {
        if (!strstr(msg, s)) {
            print_error("%s:%d: message \"%s\" does not mention \"%s\"\n", file, line, msg, s);
            va_end(ap);
            fail();
        }
    }
    va_end(ap);
}

void drain_msg(void) { (void)aclGetRecentErrMsg(); }

/* ---- runtime state and environment ------------------------------------------------ */

static const char *const config_vars[] = {
    "ACLSIM_DEVICE_COUNT", "ACLSIM_SOC_VERSION", "ACLSIM_DEVICE_MEMORY", "ACLSIM_WORKERS",
    "ACLSIM_OP_TIMEOUT_INTERVAL_US", "ACLSIM_TRACE", "ACLSIM_TRACE_EVENTS", "ACLSIM_PROFILE",
    "ACLSIM_BLOCK_ORDER",
    "ASCEND_RT_VISIBLE_DEVICES", "ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_SLOG_PRINT_TO_STDOUT",
    "ASCEND_LOG_PRINT_TO_STDOUT",
};

void unset_config(void)
{
    for (size_t i = 0; i < sizeof config_vars / sizeof config_vars[0]; i++)
        unsetenv(config_vars[i]);
}

bool checking_early_host_access(void)
{
    const char *v = getenv("ACLSIM_CHECK");
    if (!v)
        return false;
    if (!strcmp(v, "1") || !strcmp(v, "all"))
        return true;
    static const char name[] = "early-host-access";
    for (const char *p = v; (p = strstr(p, name)); p += sizeof name - 1)
        if ((p == v || p[-1] == ',') && (p[sizeof name - 1] == ',' || !p[sizeof name - 1]))
            return true;
    return false;
}

bool runtime_initialized(void)
{
    uint32_t n;
    aclError rc = aclrtGetDeviceCount(&n);
    drain_msg();
    return rc != ACL_ERROR_UNINITIALIZE;
}

aclError init_devices(const char *count, const char *memory)
{
    if (count)
        setenv("ACLSIM_DEVICE_COUNT", count, 1);
    if (memory)
        setenv("ACLSIM_DEVICE_MEMORY", memory, 1);
    return aclInit(NULL);
}

aclError reset_and_finalize(void)
{
    (void)aclrtResetDeviceForce(0);
    (void)aclrtResetDeviceForce(1);
    aclError rc = aclFinalize();
    drain_msg();
    unset_config();
    return rc;
}

aclrtContext current_context(void)
{
    aclrtContext c = NULL;
    assert_int_equal(aclrtGetCurrentContext(&c), ACL_SUCCESS);
    assert_non_null(c);
    return c;
}

int32_t current_device(void)
{
    int32_t d = -1;
    assert_int_equal(aclrtGetDevice(&d), ACL_SUCCESS);
    return d;
}

size_t hbm_free(void)
{
    size_t free_b = 0, total = 0;
    assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total), ACL_SUCCESS);
    return free_b;
}

/* ---- kernels ------------------------------------------------------------------------ */

aclrtFuncHandle func_by_symbol(const void *symbol)
{
    aclrtFuncHandle h = NULL;
    EXPECT_OK(aclrtGetFuncBySymbol(symbol, &h));
    assert_non_null(h);
    return h;
}

/* ---- fixtures ---------------------------------------------------------------------- */

int setup_clean(void **state)
{
    (void)state;
    unset_config();
    if (runtime_initialized())
        aclFinalize();
    drain_msg();
    return 0;
}

int teardown_clean(void **state)
{
    (void)state;
    if (runtime_initialized())
        aclFinalize();
    drain_msg();
    unset_config();
    return 0;
}

int setup_device0(void **state)
{
    (void)state;
    if (init_devices("2", "64M") != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return -1;
    drain_msg();
    return 0;
}

int teardown_device0(void **state)
{
    (void)state;
    aclError e = aclFinalize();
    unset_config();
    drain_msg();
    return e == ACL_SUCCESS ? 0 : -1;
}

int teardown_device0_any(void **state)
{
    (void)teardown_device0(state);
    return 0;
}

int setup_gated(void **state)
{
    (void)state;
    abort_waits(false);
    setenv("ACLSIM_WORKERS", "2", 1);
    aclError err = init_devices("2", "64M");
    unsetenv("ACLSIM_DEVICE_COUNT");
    unsetenv("ACLSIM_DEVICE_MEMORY");
    unsetenv("ACLSIM_WORKERS");
    if (err != ACL_SUCCESS)
        return -1;
    if (aclrtSetDevice(0) != ACL_SUCCESS) {
        aclFinalize();
        return -1;
    }
    return 0;
}

int setup_gated_950(void **state)
{
    setenv("ACLSIM_SOC_VERSION", "Ascend950PR", 1);
    int rc = setup_gated(state);
    unsetenv("ACLSIM_SOC_VERSION");
    return rc;
}

void restart_gated(const char *soc)
{
    aclFinalize();
    drain_msg();
    setenv("ACLSIM_SOC_VERSION", soc, 1);
    int rc = setup_gated(NULL);
    unsetenv("ACLSIM_SOC_VERSION");
    assert_int_equal(rc, 0);
}

void assert_stream_held(aclrtStream stream, atomic_int *n, int ms)
{
    int before = atomic_load(n);
    assert_int_equal(aclrtLaunchHostFunc(stream, count_fn, n), ACL_SUCCESS);
    sleep_ms(ms);
    assert_int_equal(atomic_load(n), before);
}

int teardown_gated(void **state)
{
    (void)state;
    abort_waits(true);   /* a failed test may have left a blocker waiting */
    aclFinalize();       /* 100037 when the test already finalized */
    drain_msg();
    abort_waits(false);
    return 0;
}

/* ---- gates ------------------------------------------------------------------------- */

static pthread_mutex_t gates_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gates_cond = PTHREAD_COND_INITIALIZER;
static bool gates_aborted;

void gate_init(struct gate *g)
{
    pthread_mutex_lock(&gates_lock);
    g->open = false;
    pthread_mutex_unlock(&gates_lock);
}

void gate_open(struct gate *g)
{
    pthread_mutex_lock(&gates_lock);
    g->open = true;
    pthread_cond_broadcast(&gates_cond);
    pthread_mutex_unlock(&gates_lock);
}

bool gate_is_open(struct gate *g)
{
    pthread_mutex_lock(&gates_lock);
    bool open = g->open;
    pthread_mutex_unlock(&gates_lock);
    return open;
}

bool gate_wait(struct gate *g, int ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += ms / 1000;
    deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&gates_lock);
    while (!g->open && !gates_aborted)
        if (pthread_cond_timedwait(&gates_cond, &gates_lock, &deadline) == ETIMEDOUT)
            break;
    bool open = g->open;
    pthread_mutex_unlock(&gates_lock);
    return open;
}

void abort_waits(bool on)
{
    pthread_mutex_lock(&gates_lock);
    gates_aborted = on;
    pthread_cond_broadcast(&gates_cond);
    pthread_mutex_unlock(&gates_lock);
}

/* ---- blocker ----------------------------------------------------------------------- */

void blocker_init(struct blocker *b)
{
    gate_init(&b->started);
    gate_init(&b->release);
    gate_init(&b->finished);
    atomic_init(&b->released_ok, false);
}

void blocker_fn(void *arg)
{
    struct blocker *b = arg;
    gate_open(&b->started);
    atomic_store(&b->released_ok, gate_wait(&b->release, WAIT_MS));
    gate_open(&b->finished);
}

void blocker_release(struct blocker *b) { gate_open(&b->release); }

bool blocker_timed_out(struct blocker *b)
{
    /* finished opens after released_ok is stored */
    return gate_is_open(&b->finished) && !atomic_load(&b->released_ok);
}

void count_fn(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

/* ---- checker reports (stderr) ----------------------------------------------------- */

static int saved_stderr = -1;
static char capture_path[64];

void capture_begin(void)
{
    fflush(stderr);
    snprintf(capture_path, sizeof capture_path, "/tmp/aclsim-capture-%d.txt", (int)getpid());
    int fd = open(capture_path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    assert_true(fd >= 0);
    saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

const char *capture_end(char *buf, size_t cap)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    FILE *f = fopen(capture_path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
    unlink(capture_path);
    fputs(buf, stderr);   /* shown as well (a sanitizer's report would be in it too) */
    return buf;
}

int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

void expect_one_report(const char *printed, const char *detector, const char *n1,
                       const char *n2)
{
    char head[64];
    snprintf(head, sizeof head, "aclsim check: %s: ", detector);
    if (count_of(printed, "aclsim check:") != 1 || !strstr(printed, head) ||
        (n1 && !strstr(printed, n1)) || (n2 && !strstr(printed, n2)))
        fail_msg("expected one \"%s\" report with \"%s\" and \"%s\"; printed: %s", head,
                 n1 ? n1 : "", n2 ? n2 : "", printed);
}

void expect_no_report(const char *printed)
{
    if (strstr(printed, "aclsim check:"))
        fail_msg("expected no report; printed: %s", printed);
}

/* ---- threads ----------------------------------------------------------------------- */

void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

void run_in_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

static void *call_main(void *p)
{
    struct call *c = p;
    c->fn(c->arg);
    gate_open(&c->done);
    return NULL;
}

void call_start(struct call *c, void (*fn)(void *), void *arg)
{
    c->fn = fn;
    c->arg = arg;
    c->joined = false;
    gate_init(&c->done);
    assert_int_equal(pthread_create(&c->thread, NULL, call_main, c), 0);
}

bool call_wait(struct call *c, int ms)
{
    if (!gate_wait(&c->done, ms))
        return false;
    if (!c->joined) {
        pthread_join(c->thread, NULL);
        c->joined = true;
    }
    return true;
}

static void *actor_main(void *p)
{
    struct actor *a = p;
    pthread_mutex_lock(&a->lock);
    for (;;) {
        while (!a->busy && !a->quit)
            pthread_cond_wait(&a->cond, &a->lock);
        if (!a->busy)
            break;
        pthread_mutex_unlock(&a->lock);
        a->fn(a->arg);
        pthread_mutex_lock(&a->lock);
        a->busy = false;
        pthread_cond_broadcast(&a->cond);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

void actor_start(struct actor *a)
{
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->cond, NULL);
    assert_int_equal(pthread_create(&a->thread, NULL, actor_main, a), 0);
}

void actor_run(struct actor *a, void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&a->lock);
    a->fn = fn;
    a->arg = arg;
    a->busy = true;
    pthread_cond_broadcast(&a->cond);
    while (a->busy)
        pthread_cond_wait(&a->cond, &a->lock);
    pthread_mutex_unlock(&a->lock);
}

void actor_stop(struct actor *a)
{
    pthread_mutex_lock(&a->lock);
    a->quit = true;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    pthread_join(a->thread, NULL);
    pthread_cond_destroy(&a->cond);
    pthread_mutex_destroy(&a->lock);
}

void note_first_error(atomic_int *errors, char *buf, size_t len, const char *fmt, ...)
{
    if (atomic_fetch_add(errors, 1) != 0)
        return;
    const char *m = aclGetRecentErrMsg();
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " (%s)", m ? m : "no message");
}

int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

void reinit_with_soc(const char *soc)
{
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    setenv("ACLSIM_SOC_VERSION", soc, 1);
    setenv("ACLSIM_WORKERS", "2", 1);
    EXPECT_OK(init_devices("2", "64M"));
    unsetenv("ACLSIM_SOC_VERSION");
    unsetenv("ACLSIM_WORKERS");
    unsetenv("ACLSIM_DEVICE_COUNT");
    unsetenv("ACLSIM_DEVICE_MEMORY");
    EXPECT_OK(aclrtSetDevice(0));
}
