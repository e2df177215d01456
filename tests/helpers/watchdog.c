/*
 * The race-test watchdog: see watchdog.h.
 */
#include "watchdog.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WD_SANITIZER 1
#endif
#endif
#ifndef WD_SANITIZER
#define WD_SANITIZER 0
#endif

struct slot {
    bool armed;
    const char *what;
    long round;
    double seconds;
    double deadline;
};

static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[WATCHDOG_SLOTS];
static bool started;

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool under_sanitizer(void) { return WD_SANITIZER; }

double time_budget(double base)
{
    const char *s = getenv("ACLSIM_TEST_TIME_SCALE");
    double f = s ? strtod(s, NULL) : 1.0;
    return base * (f > 0 ? f : 1.0);
}

/* Every thread's stack, from gdb attached to this process (best effort). */
static void dump_stacks(void)
{
    const char *g = getenv("ACLSIM_WATCHDOG_GDB");
    if ((g && strcmp(g, "0") == 0) || access("/usr/bin/gdb", X_OK) != 0)
        return;
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    pid_t child = fork();
    if (child == 0) {
        dup2(2, 1);
        /* ACLSIM_WATCHDOG_GDB_CMDS: a gdb command file run after the stacks */
        const char *cmds = getenv("ACLSIM_WATCHDOG_GDB_CMDS");
        if (cmds && *cmds)
            execl("/usr/bin/gdb", "gdb", "-q", "-n", "-batch", "-p", pid, "-ex",
                  "thread apply all bt 30", "-x", cmds, (char *)NULL);
        else
            execl("/usr/bin/gdb", "gdb", "-q", "-n", "-batch", "-p", pid, "-ex",
                  "thread apply all bt 30", (char *)NULL);
        _exit(127);
    }
    if (child < 0)
        return;
    for (int i = 0; i < 600; i++) {   /* 60 s at most */
        if (waitpid(child, NULL, WNOHANG) == child)
            return;
        usleep(100000);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

static void *watch(void *arg)
{
    (void)arg;
    for (;;) {
        usleep(50000);
        double now = now_seconds();
        pthread_mutex_lock(&wd_lock);
        for (int i = 0; i < WATCHDOG_SLOTS; i++) {
            struct slot s = slots[i];
            if (!s.armed || now < s.deadline)
                continue;
            pthread_mutex_unlock(&wd_lock);
            fprintf(stderr,
                    "\nWATCHDOG: %s, round %ld, did not finish within %.1f s: a hang. "
                    "Thread stacks follow (if gdb is installed); then abort.\n",
                    s.what ? s.what : "?", s.round, s.seconds);
            fflush(stderr);
            dump_stacks();
            fprintf(stderr, "WATCHDOG: aborting (%s, round %ld hung)\n", s.what ? s.what : "?",
                    s.round);
            fflush(stderr);
            abort();
        }
        pthread_mutex_unlock(&wd_lock);
    }
    return NULL;
}

/* A crash (outside sanitizer builds, which report crashes themselves) names
 * what slot 0 was watching; async-signal-safe. */
static void put(const char *s) { (void)!write(2, s, strlen(s)); }

static void on_crash(int sig)
{
    char num[24];
    int n = 0;
    long round = slots[0].round;
    char digits[24];
    if (round < 0)
        round = -round;
    do {
        digits[n++] = (char)('0' + round % 10);
        round /= 10;
    } while (round && n < 20);
    for (int i = 0; i < n; i++)
        num[i] = digits[n - 1 - i];
    num[n] = 0;
    put("\nCRASH: ");
    put(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE" : "SIGILL");
    put(" during ");
    put(slots[0].armed && slots[0].what ? slots[0].what : "(no armed scenario)");
    put(", round ");
    put(num);
    put("\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

/* cmocka installs its own handlers for each test (which cannot handle a
 * crash on another thread): ours go in again whenever slot 0 is armed. */
static void catch_crashes(void)
{
    if (WD_SANITIZER)
        return;
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], on_crash);
}

void watchdog_start(void)
{
    catch_crashes();
    pthread_mutex_lock(&wd_lock);
    if (!started) {
        setvbuf(stdout, NULL, _IONBF, 0);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, watch, NULL) == 0)
            started = true;
        pthread_attr_destroy(&attr);
    }
    pthread_mutex_unlock(&wd_lock);
}

void watchdog_arm(int slot, const char *what, long round, double seconds)
{
    if (slot < 0 || slot >= WATCHDOG_SLOTS)
        abort();
    if (slot == 0)
        catch_crashes();
    double now = now_seconds();
    pthread_mutex_lock(&wd_lock);
    slots[slot] = (struct slot){true, what, round, seconds, now + seconds};
    pthread_mutex_unlock(&wd_lock);
}

void watchdog_disarm(int slot)
{
    if (slot < 0 || slot >= WATCHDOG_SLOTS)
        abort();
    pthread_mutex_lock(&wd_lock);
    slots[slot].armed = false;
    pthread_mutex_unlock(&wd_lock);
}
