/*
 * Helpers shared by the cmocka tests (tests/test-*.c): assertion macros,
 * error-message checks, environment / aclInit fixtures, one-shot gates with
 * bounded waits, a host function that blocks a stream, helper threads.
 *
 * Compiled, with the other sources of tests/helpers/, into the static library
 * aclsim_test_helpers that every test links. cmocka assertions only work on the thread that runs
 * the test: helpers that assert must be called from there.
 */
#ifndef ACLSIM_TEST_HELPERS_COMMON_H
#define ACLSIM_TEST_HELPERS_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "acl/acl.h"

#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

/* Upper bound (ms) for anything that must happen: bounded waits use it. */
#define WAIT_MS 5000

/* ---- assertions ------------------------------------------------------------------ */

/* The call returns ACL_SUCCESS (OK is the short spelling of ASSERT_OK). */
#define ASSERT_OK(expr) assert_int_equal((expr), ACL_SUCCESS)
#define OK(expr) ASSERT_OK(expr)

/* Like ASSERT_OK, but a failure names the call and quotes the error message. */
#define EXPECT_OK(call)                                                                     \
    do {                                                                                    \
        aclError e_ = (call);                                                               \
        if (e_ != ACL_SUCCESS) {                                                            \
            const char *m_ = aclGetRecentErrMsg();                                          \
            fail_msg("%s:%d: %s returned %d (message: %s)", __FILE__, __LINE__, #call, e_, \
                     m_ ? m_ : "none");                                                     \
        }                                                                                   \
    } while (0)

/* The call returns want, and the recent error message exists and mentions
 * the non-NULL needle(s). */
#define EXPECT_ERR(want, needle, call) \
    expect_err_(__FILE__, __LINE__, #call, (call), (want), (needle), NULL)
#define EXPECT_ERR2(want, n1, n2, call) \
    expect_err_(__FILE__, __LINE__, #call, (call), (want), (n1), (n2))
void expect_err_(const char *file, int line, const char *expr, aclError got, aclError want,
                 const char *n1, const char *n2);

/* The calling thread's recent error message exists and contains each of the
 * given strings (case-sensitive; the list ends at the first NULL); reading it
 * consumes it. */
#define expect_msg(...) expect_msg_(__FILE__, __LINE__, __VA_ARGS__, (const char *)NULL)
void expect_msg_(const char *file, int line, const char *first, ...);

/* Reads (and so clears) the calling thread's recent error message. */
void drain_msg(void);

/* ---- runtime state and environment ------------------------------------------------ */

/* Unsets every environment variable the runtime reads (ACLSIM_*, visible
 * devices, logging). */
void unset_config(void);

/* Whether aclInit has been called (and not yet finalized); no message left. */
bool runtime_initialized(void);

/* Sets ACLSIM_DEVICE_COUNT and ACLSIM_DEVICE_MEMORY (a NULL value leaves that
 * variable alone) and returns aclInit(NULL). The variables stay set. */
aclError init_devices(const char *count, const char *memory);

/* Whether ACLSIM_CHECK, read as the runtime reads it ("1" and "all": every
 * detector; otherwise detector names separated by commas), turns on the
 * checker's early-host-access detector (docs/checker.md). That detector
 * reports every host access to a page-locked buffer that a queued copy or
 * memset still uses: a test whose probe reads such a buffer on purpose while
 * the stream is held (to prove that nothing ran yet) skips that probe then. */
bool checking_early_host_access(void);

/* Force-resets devices 0 and 1, finalizes, clears the message and unsets the
 * configuration; returns what aclFinalize returned. For teardowns. */
aclError reset_and_finalize(void);

/* aclFinalize, then aclInit with ACLSIM_SOC_VERSION=soc, 2 devices of 64M
 * with 2 workers, and aclrtSetDevice(0) (the variables are unset again). */
void reinit_with_soc(const char *soc);

/* The current context / device / free device memory, asserting success
 * (and, for the context, that it is not NULL). */
aclrtContext current_context(void);
int32_t current_device(void);
size_t hbm_free(void);

/* ---- kernels ------------------------------------------------------------------------ */

/* A kernel function as the symbol aclrtGetFuncBySymbol takes. */
#define FN(fn) ((const void *)(uintptr_t)&(fn))
/* The function handle of a registered kernel, asserting success. */
#define FUNC(fn) func_by_symbol(FN(fn))
aclrtFuncHandle func_by_symbol(const void *symbol);

/* ---- fixtures (cmocka setup / teardown functions) ---------------------------------- */

/* The runtime finalized and the configuration unset, before and after. */
int setup_clean(void **state);
int teardown_clean(void **state);

/* 2 devices of 64M, device 0 set; the variables stay set until the teardown,
 * which fails when aclFinalize does. */
int setup_device0(void **state);
int teardown_device0(void **state);
/* For tests that may finalize themselves: aclFinalize's result is ignored. */
int teardown_device0_any(void **state);

/* 2 devices of 64M with 2 workers each, device 0 set (the variables are unset
 * again right after aclInit); gates work. The teardown first wakes whatever a
 * failed test left waiting on a gate (abort_waits), then finalizes. */
int setup_gated(void **state);
int teardown_gated(void **state);

/* setup_gated with ACLSIM_SOC_VERSION set to Ascend950PR for the aclInit
 * (counting notifies exist only there); teardown_gated undoes it. */
int setup_gated_950(void **state);
/* Finalizes and starts again like setup_gated, on SoC soc; asserts success. */
void restart_gated(const char *soc);

/* ---- gates: one-shot latches with a bounded wait ----------------------------------- */

/* All gates share one lock and condition variable, so a teardown can wake
 * every waiter of a failed test (abort_waits) without touching the failed
 * test's (dead) stack. */
struct gate {
    bool open;
};

void gate_init(struct gate *g);
void gate_open(struct gate *g);
bool gate_is_open(struct gate *g);
/* true when the gate opened within ms (false also after abort_waits(true)). */
bool gate_wait(struct gate *g, int ms);
/* on: every gate_wait returns at once (until abort_waits(false)). */
void abort_waits(bool on);

/* ---- a host function that blocks its stream ------------------------------------------ */

/* Launch blocker_fn with the blocker as its argument: it opens started, waits
 * for release (WAIT_MS at most), then opens finished. */
struct blocker {
    struct gate started, release, finished;
    atomic_bool released_ok;   /* false: it gave up waiting (or has not run) */
};

void blocker_init(struct blocker *b);
void blocker_fn(void *arg);
void blocker_release(struct blocker *b);
/* true when blocker_fn ran and gave up waiting for the release. */
bool blocker_timed_out(struct blocker *b);

/* A host function that increments the atomic_int its argument points to. */
void count_fn(void *arg);
/* Queues count_fn(n) on stream and asserts that it has not run after ms
 * (the stream is held by something queued before it). */
void assert_stream_held(aclrtStream stream, atomic_int *n, int ms);

/* ---- checker reports (stderr) ----------------------------------------------------- */

/* Sends stderr (fd 2) to a file until capture_end, which puts it back, puts
 * what was printed into buf (at most cap - 1 bytes), prints it to stderr as
 * well and returns buf. */
void capture_begin(void);
const char *capture_end(char *buf, size_t cap);
/* How often needle occurs in text. */
int count_of(const char *text, const char *needle);
/* printed holds exactly one checker report ("aclsim check: "), of detector,
 * containing the non-NULL needles; or none. */
void expect_one_report(const char *printed, const char *detector, const char *n1,
                       const char *n2);
void expect_no_report(const char *printed);

/* ---- threads ----------------------------------------------------------------------- */

void sleep_ms(long ms);

/* Runs fn(arg) on a new thread and joins it. */
void run_in_thread(void *(*fn)(void *), void *arg);

/* Runs fn(arg) on a helper thread; call_wait bounds how long we wait for it. */
struct call {
    void (*fn)(void *);
    void *arg;
    struct gate done;
    pthread_t thread;
    bool joined;
};

void call_start(struct call *c, void (*fn)(void *), void *arg);
/* true when the call returned within ms (and the thread is joined). */
bool call_wait(struct call *c, int ms);

/* A helper thread that runs functions on request, so that a test can act as
 * a second thread (with its own current context) step by step. */
struct actor {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    void (*fn)(void *);
    void *arg;
    bool busy, quit;
};

void actor_start(struct actor *a);
/* Runs fn(arg) on the actor's thread and waits for it. */
void actor_run(struct actor *a, void (*fn)(void *), void *arg);
void actor_stop(struct actor *a);

/* For worker threads (which must not assert): counts an error in *errors and
 * keeps the first one in buf, formatted and followed by the thread's recent
 * error message in parentheses. */
void note_first_error(atomic_int *errors, char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Threads of this process (entries of /proc/self/task). */
int thread_count(void);

#endif
