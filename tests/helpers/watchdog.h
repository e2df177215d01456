/*
 * A watchdog for race tests: a hang is a failure with a clear message, not a
 * CI timeout.
 *
 * A test arms a slot with a deadline before each round (or each operation)
 * and disarms it after. A thread checks the armed slots every 50 ms; when one
 * is overdue it prints what was running ("WATCHDOG: <what> round <n> ..."),
 * dumps every thread's stack with gdb when gdb is installed (set
 * ACLSIM_WATCHDOG_GDB=0 to skip; ACLSIM_WATCHDOG_GDB_CMDS names a gdb command
 * file to run after that), and aborts the process.
 */
#ifndef ACLSIM_TEST_HELPERS_WATCHDOG_H
#define ACLSIM_TEST_HELPERS_WATCHDOG_H

#include <stdbool.h>

#define WATCHDOG_SLOTS 16

/* Starts the watchdog thread (once per process) and makes stdout unbuffered,
 * so cmocka's "[ RUN ]" line of a test that crashes is not lost. Outside
 * sanitizer builds it also installs (and arming slot 0 installs again, after
 * cmocka's own) handlers for SIGSEGV, SIGBUS, SIGFPE
 * and SIGILL that print "CRASH: <signal> during <what slot 0 watches>" and
 * re-raise the signal. */
void watchdog_start(void);

/* Slot slot (0..WATCHDOG_SLOTS-1) must be disarmed or re-armed within seconds
 * from now; what (a string literal or otherwise long-lived) and round name it
 * in the message. */
void watchdog_arm(int slot, const char *what, long round, double seconds);
void watchdog_disarm(int slot);

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
double now_seconds(void);

/* A time budget for a race test, in seconds: base, multiplied by the factor
 * in ACLSIM_TEST_TIME_SCALE if set (e.g. 10 for a longer local run). */
double time_budget(double base);

/* true in builds with AddressSanitizer or ThreadSanitizer (slower: tests scale
 * their rounds down). */
bool under_sanitizer(void);

#endif
