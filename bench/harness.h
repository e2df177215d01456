/*
 * aclsim-bench harness: clock, repeated samples, statistics, the list of
 * figures, the stdout table and the JSON file. Nothing here knows about ACL.
 */
#ifndef ACLSIM_BENCH_HARNESS_H
#define ACLSIM_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Keeps the compiler from moving or deleting memory work across this point. */
#define BENCH_BARRIER() __asm__ __volatile__("" ::: "memory")

/* How long each run of the program tries to take. */
struct bench_config {
    bool quick;
    int reps_small;          /* samples of a cheap operation */
    int reps_large;          /* samples of a copy of 16 MiB or more */
    int reps_sweep_large;    /* samples per large size in the sweep */
    uint64_t sample_ns;      /* a cheap operation is repeated until a sample lasts this long */
    uint64_t thread_ops;     /* host-thread figure: copies per thread per sample */
};
extern struct bench_config bench_cfg;

/* Median, minimum and maximum of n samples (NAN when n == 0). */
struct bench_stats {
    double median, min, max;
    int n;
};
struct bench_stats bench_stats_of(double *samples, int n); /* sorts samples */

/* One repeated operation: run(ctx, iters) performs it iters times and returns
 * the elapsed nanoseconds (it may time only part of its work). */
typedef uint64_t (*bench_fn)(void *ctx, uint64_t iters);

/* Iterations so that one call of fn lasts about bench_cfg.sample_ns
 * (1 for operations that take longer than that). Runs fn a few times: this
 * is also the warm-up. */
uint64_t bench_calibrate(bench_fn fn, void *ctx);

/* reps samples of fn (ns per iteration), each sample iters iterations. */
struct bench_stats bench_measure(bench_fn fn, void *ctx, uint64_t iters, int reps);
/* The same, keeping the samples (out: reps values, in the order taken). */
void bench_sample(bench_fn fn, void *ctx, uint64_t iters, int reps, double *out);

/* The same for an operation and a reference (plain memcpy) measured right
 * after it, sample by sample, so both see the same machine state. ratio_out:
 * per pair, reference time / operation time (the operation's relative speed). */
void bench_measure_pair(bench_fn op, void *op_ctx, bench_fn ref, void *ref_ctx, int reps,
                        struct bench_stats *op_out, struct bench_stats *ref_out,
                        struct bench_stats *ratio_out);

/* ---- figures ---------------------------------------------------------------- */

/* The JSON file's format (docs/performance.md); bench/compare reads it. */
#define BENCH_JSON_SCHEMA "aclsim-bench/2"

enum bench_target_op { BENCH_NO_TARGET, BENCH_AT_MOST, BENCH_AT_LEAST };

/* Which way a figure improves: bench_add sets it from the unit ("GB/s",
 * "ops/s": higher; "ns/op", "ms", "MiB", "threads": lower); a figure in "x"
 * (a ratio) must say it with bench_set_better, or the JSON is not written. */
enum bench_better { BENCH_BETTER_UNSET, BENCH_HIGHER_BETTER, BENCH_LOWER_BETTER };

struct bench_figure {
    char id[64];              /* stable key for comparisons between versions */
    char name[96];            /* readable */
    char group[48];
    char unit[16];            /* "ns/op", "GB/s", "ops/s", "MiB", "x", ... */
    struct bench_stats s;
    double bytes;             /* copy size, 0 if not a copy */
    /* The plain memcpy of the same size, measured right after (has_ref). */
    bool has_ref;
    struct bench_stats ref;   /* in the same unit as s */
    struct bench_stats vs;    /* per-sample-pair speed relative to memcpy */
    double vs_memcpy;         /* vs.median: > 1 faster than memcpy, < 1 slower */
    /* Target from the issue: `checked` (the median, or vs_memcpy, or a ratio)
     * compared with target_value. */
    enum bench_target_op target_op;
    double target_value;
    char target_text[48];     /* e.g. "<= 50 ns", ">= 0.95x memcpy" */
    char checked[16];         /* "median" or "vs_memcpy" */
    double target_max;        /* also every sample <= this (NAN: no such bound) */
    int met;                  /* -1 no target, 0 missed, 1 met */
    enum bench_better better;
    char note[160];
};

/* Adds a figure (the list is fixed-size; aborts if full). */
struct bench_figure *bench_add(const char *id, const char *group, const char *name,
                               const char *unit, struct bench_stats s);
/* Attaches the memcpy reference (ref in the same unit as the figure) and the
 * per-pair relative speeds (see bench_measure_pair). */
void bench_set_ref(struct bench_figure *f, struct bench_stats ref, struct bench_stats vs);
/* Sets the target: compares the median (on_ratio false) or vs_memcpy. */
void bench_set_target(struct bench_figure *f, enum bench_target_op op, double value,
                      bool on_ratio, const char *text);
/* Adds a bound on the worst sample to an "at most" target: met only if the
 * max is <= value too (text: the whole target, e.g. "<= 100 ns, all <= 150"). */
void bench_set_target_max(struct bench_figure *f, double value, const char *text);
void bench_set_better(struct bench_figure *f, enum bench_better better);
void bench_note(struct bench_figure *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Converts ns-per-copy samples of `bytes` bytes into GB/s (10^9 bytes/s);
 * the median of rates is the rate of the median time. */
struct bench_stats bench_to_gbps(struct bench_stats ns, double bytes);

/* A key/value about the run (configuration, versions) for the JSON file. */
void bench_set_info(const char *key, const char *value);
/* Records the load average at the start of the run (the JSON has both ends). */
void bench_mark_start(void);
/* CPUs this process may run on (sched_getaffinity), the `nproc` figure. */
int bench_cpus_allowed(void);

/* Section headings in the table. */
void bench_section(const char *title);
void bench_print_table_header(void);
void bench_print_figure(const struct bench_figure *f);
void bench_print_summary(void);
/* Writes every figure (and the run's context) to path. false on error. */
bool bench_write_json(const char *path, const char *argv0, double elapsed_s);

/* ---- process state ------------------------------------------------------- */

double bench_rss_mib(void);       /* resident set, /proc/self/statm */
int bench_thread_count(void);     /* entries of /proc/self/task */
double bench_loadavg(void);       /* 1-minute load average, /proc/loadavg */
/* The 1-, 5- and 15-minute load averages (NAN when unreadable). */
void bench_loadavg3(double out[3]);

#endif
