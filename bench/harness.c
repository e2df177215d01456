/* aclsim-bench harness: see harness.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* sched_getaffinity, CPU_COUNT */
#endif
#include "harness.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cjson/cJSON.h>

/* bench-git.h is generated at every build (bench/CMakeLists.txt): the
 * source tree's commit. */
#if defined(__has_include)
#if __has_include("bench-git.h")
#include "bench-git.h"
#endif
#endif
#ifndef BENCH_GIT_COMMIT
#define BENCH_GIT_COMMIT ""
#define BENCH_GIT_DIRTY 0
#endif
#ifndef ACLSIM_BENCH_BUILD_TYPE
#define ACLSIM_BENCH_BUILD_TYPE ""
#endif
#ifndef ACLSIM_BENCH_VERSION
#define ACLSIM_BENCH_VERSION "unknown"
#endif

struct bench_config bench_cfg;

/* ---- statistics ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct bench_stats bench_stats_of(double *samples, int n)
{
    struct bench_stats s = {NAN, NAN, NAN, n};
    if (n <= 0)
        return s;
    qsort(samples, (size_t)n, sizeof *samples, cmp_double);
    s.min = samples[0];
    s.max = samples[n - 1];
    s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    return s;
}

uint64_t bench_calibrate(bench_fn fn, void *ctx)
{
    fn(ctx, 1);   /* warm-up: first touch, lazy instantiation, caches */
    uint64_t target = bench_cfg.sample_ns, iters = 1;
    for (;;) {
        uint64_t t = fn(ctx, iters);
        if (t >= target || iters >= ((uint64_t)1 << 32))
            return iters;
        if (t >= target / 16)   /* measurable: aim straight at the target */
            return iters * target / t + 1;
        iters *= 8;
    }
}

void bench_sample(bench_fn fn, void *ctx, uint64_t iters, int reps, double *out)
{
    for (int r = 0; r < reps; r++)
        out[r] = (double)fn(ctx, iters) / (double)iters;
}

struct bench_stats bench_measure(bench_fn fn, void *ctx, uint64_t iters, int reps)
{
    double *v = malloc(sizeof *v * (size_t)reps);
    if (!v)
        abort();
    bench_sample(fn, ctx, iters, reps, v);
    struct bench_stats s = bench_stats_of(v, reps);
    free(v);
    return s;
}

void bench_measure_pair(bench_fn op, void *op_ctx, bench_fn ref, void *ref_ctx, int reps,
                        struct bench_stats *op_out, struct bench_stats *ref_out,
                        struct bench_stats *ratio_out)
{
    uint64_t op_iters = bench_calibrate(op, op_ctx);
    uint64_t ref_iters = bench_calibrate(ref, ref_ctx);
    double *a = malloc(sizeof *a * (size_t)reps), *b = malloc(sizeof *b * (size_t)reps),
           *q = malloc(sizeof *q * (size_t)reps);
    if (!a || !b || !q)
        abort();
    for (int r = 0; r < reps; r++) {
        a[r] = (double)op(op_ctx, op_iters) / (double)op_iters;
        b[r] = (double)ref(ref_ctx, ref_iters) / (double)ref_iters;
        q[r] = b[r] / a[r];
    }
    *op_out = bench_stats_of(a, reps);
    *ref_out = bench_stats_of(b, reps);
    *ratio_out = bench_stats_of(q, reps);
    free(a);
    free(b);
    free(q);
}

struct bench_stats bench_to_gbps(struct bench_stats ns, double bytes)
{
    struct bench_stats g = ns;
    g.median = bytes / ns.median;
    g.min = bytes / ns.max;
    g.max = bytes / ns.min;
    return g;
}

/* ---- figures ---------------------------------------------------------------- */

#define MAX_INFO 32
static struct { char key[48]; char value[256]; } info[MAX_INFO];
static int ninfo;

void bench_set_info(const char *key, const char *value)
{
    if (ninfo == MAX_INFO)
        return;
    snprintf(info[ninfo].key, sizeof info[ninfo].key, "%s", key);
    snprintf(info[ninfo].value, sizeof info[ninfo].value, "%s", value);
    ninfo++;
}

#define MAX_FIGURES 256
static struct bench_figure figures[MAX_FIGURES];
static int nfigures;

struct bench_figure *bench_add(const char *id, const char *group, const char *name,
                               const char *unit, struct bench_stats s)
{
    if (nfigures == MAX_FIGURES) {
        fprintf(stderr, "aclsim-bench: too many figures\n");
        abort();
    }
    struct bench_figure *f = &figures[nfigures++];
    memset(f, 0, sizeof *f);
    snprintf(f->id, sizeof f->id, "%s", id);
    snprintf(f->group, sizeof f->group, "%s", group);
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->unit, sizeof f->unit, "%s", unit);
    f->s = s;
    f->vs_memcpy = NAN;
    f->target_max = NAN;
    f->met = -1;
    if (strcmp(unit, "GB/s") == 0 || strcmp(unit, "ops/s") == 0)
        f->better = BENCH_HIGHER_BETTER;
    else if (strcmp(unit, "ns/op") == 0 || strcmp(unit, "ms") == 0 ||
             strcmp(unit, "MiB") == 0 || strcmp(unit, "threads") == 0)
        f->better = BENCH_LOWER_BETTER;
    return f;
}

void bench_set_ref(struct bench_figure *f, struct bench_stats ref, struct bench_stats vs)
{
    f->has_ref = true;
    f->ref = ref;
    f->vs = vs;
    f->vs_memcpy = vs.median;
}

void bench_set_target(struct bench_figure *f, enum bench_target_op op, double value,
                      bool on_ratio, const char *text)
{
    f->target_op = op;
    f->target_value = value;
    snprintf(f->target_text, sizeof f->target_text, "%s", text);
    snprintf(f->checked, sizeof f->checked, "%s", on_ratio ? "vs_memcpy" : "median");
    double v = on_ratio ? f->vs_memcpy : f->s.median;
    if (isnan(v))
        f->met = 0;
    else
        f->met = op == BENCH_AT_MOST ? v <= value : v >= value;
}

void bench_set_target_max(struct bench_figure *f, double value, const char *text)
{
    f->target_max = value;
    snprintf(f->target_text, sizeof f->target_text, "%s", text);
    if (f->met == 1 && !(f->s.max <= value))
        f->met = 0;
}

void bench_set_better(struct bench_figure *f, enum bench_better better)
{
    f->better = better;
}

void bench_note(struct bench_figure *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->note, sizeof f->note, fmt, ap);
    va_end(ap);
}

/* ---- the table ------------------------------------------------------------------ */

static const char *num(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (fabs(v) >= 100000)
        snprintf(buf, len, "%.4g", v);
    else if (fabs(v) >= 100)
        snprintf(buf, len, "%.0f", v);
    else if (fabs(v) >= 10)
        snprintf(buf, len, "%.1f", v);
    else if (fabs(v) >= 0.1 || v == 0)
        snprintf(buf, len, "%.2f", v);
    else
        snprintf(buf, len, "%.3f", v);
    return buf;
}

void bench_section(const char *title)
{
    printf("\n== %s\n", title);
    fflush(stdout);
}

void bench_print_table_header(void)
{
    printf("%-46s %9s %9s %9s  %-6s %9s  %-24s %s\n", "figure", "median", "min", "max", "unit",
           "vs memcpy", "target", "met?");
}

void bench_print_figure(const struct bench_figure *f)
{
    char a[32], b[32], c[32], r[32] = "";
    if (f->has_ref)
        snprintf(r, sizeof r, "%sx", num(a, sizeof a, f->vs_memcpy));
    printf("%-46s %9s %9s %9s  %-6s %9s  %-24s %s\n", f->name, num(a, sizeof a, f->s.median),
           num(b, sizeof b, f->s.min), num(c, sizeof c, f->s.max), f->unit, r,
           f->target_op ? f->target_text : "",
           f->met < 0 ? "" : f->met ? "yes" : "NO");
    if (f->has_ref)
        printf("  %-44s %9s %9s %9s  %-6s\n", "memcpy, same size and buffers",
               num(a, sizeof a, f->ref.median), num(b, sizeof b, f->ref.min),
               num(c, sizeof c, f->ref.max), f->unit);
    if (f->note[0])
        printf("  (%s)\n", f->note);
    fflush(stdout);
}

void bench_print_summary(void)
{
    int met = 0, missed = 0;
    for (int i = 0; i < nfigures; i++)
        if (figures[i].met == 1)
            met++;
        else if (figures[i].met == 0)
            missed++;
    printf("\n== targets: %d met, %d missed\n", met, missed);
    for (int i = 0; i < nfigures; i++) {
        const struct bench_figure *f = &figures[i];
        if (f->met != 0)
            continue;
        char a[32];
        double v = strcmp(f->checked, "vs_memcpy") == 0 ? f->vs_memcpy : f->s.median;
        char b[32], extra[64] = "";
        if (!isnan(f->target_max))
            snprintf(extra, sizeof extra, ", max %s", num(b, sizeof b, f->s.max));
        printf("  missed: %-44s %s %s%s (target %s)\n", f->name, num(a, sizeof a, v),
               strcmp(f->checked, "vs_memcpy") == 0 ? "x memcpy" : f->unit, extra,
               f->target_text);
    }
    fflush(stdout);
}

/* ---- JSON ------------------------------------------------------------------------- */

static cJSON *json_num(double v) { return isnan(v) || isinf(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v); }

static cJSON *json_stats(struct bench_stats s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "median", json_num(s.median));
    cJSON_AddItemToObject(o, "min", json_num(s.min));
    cJSON_AddItemToObject(o, "max", json_num(s.max));
    cJSON_AddNumberToObject(o, "samples", s.n);
    return o;
}

void bench_loadavg3(double out[3])
{
    out[0] = out[1] = out[2] = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &out[0], &out[1], &out[2]) != 3)
            out[0] = out[1] = out[2] = NAN;
        fclose(f);
    }
}

double bench_loadavg(void)
{
    double l[3];
    bench_loadavg3(l);
    return l[0];
}

static double load_at_start[3] = {NAN, NAN, NAN};

void bench_mark_start(void)
{
    bench_loadavg3(load_at_start);
}

int bench_cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return (int)sysconf(_SC_NPROCESSORS_ONLN);
    return CPU_COUNT(&set);
}

static cJSON *json_loads(const double l[3])
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < 3; i++)
        cJSON_AddItemToArray(a, json_num(l[i]));
    return a;
}

static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p += 1 + strspn(p + 1, " \t");
                p[strcspn(p, "\n")] = 0;
                snprintf(buf, len, "%s", p);
            }
            break;
        }
    fclose(f);
}

bool bench_write_json(const char *path, const char *argv0, double elapsed_s)
{
    for (int i = 0; i < nfigures; i++)
        if (figures[i].better == BENCH_BETTER_UNSET) {
            /* A programming error in bench.c: compare could not tell a gain from a loss. */
            fprintf(stderr, "aclsim-bench: figure %s (unit %s) does not say which way is better\n",
                    figures[i].id, figures[i].unit);
            return false;
        }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", BENCH_JSON_SCHEMA);
    cJSON_AddStringToObject(root, "program", argv0);
    cJSON_AddStringToObject(root, "mode", bench_cfg.quick ? "quick" : "full");
    cJSON_AddNumberToObject(root, "elapsed_s", elapsed_s);
    time_t now = time(NULL);
    char stamp[64];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON_AddStringToObject(root, "time", stamp);

    const char *check = getenv("ACLSIM_CHECK");
    cJSON_AddStringToObject(root, "aclsim_check", check && *check ? check : "off");

    cJSON *b = cJSON_AddObjectToObject(root, "build");
    cJSON_AddStringToObject(b, "version", ACLSIM_BENCH_VERSION);
    cJSON_AddStringToObject(b, "build_type", ACLSIM_BENCH_BUILD_TYPE);
    if (BENCH_GIT_COMMIT[0]) {
        cJSON_AddStringToObject(b, "commit", BENCH_GIT_COMMIT);
        cJSON_AddBoolToObject(b, "dirty", BENCH_GIT_DIRTY);
    } else {
        cJSON_AddNullToObject(b, "commit");
    }
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    cJSON_AddBoolToObject(b, "sanitized", true);
#else
    cJSON_AddBoolToObject(b, "sanitized", false);
#endif

    cJSON *m = cJSON_AddObjectToObject(root, "machine");
    char model[256];
    cpu_model(model, sizeof model);
    cJSON_AddStringToObject(m, "cpu", model);
    cJSON_AddNumberToObject(m, "nproc", bench_cpus_allowed());
    cJSON_AddNumberToObject(m, "online_cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    double load_end[3];
    bench_loadavg3(load_end);
    cJSON_AddItemToObject(m, "loadavg_at_start", json_loads(load_at_start));
    cJSON_AddItemToObject(m, "loadavg_at_end", json_loads(load_end));
    struct utsname u;
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(m, "kernel", u.release);
        cJSON_AddStringToObject(m, "arch", u.machine);
    }

    cJSON *run = cJSON_AddObjectToObject(root, "run");
    for (int i = 0; i < ninfo; i++)
        cJSON_AddStringToObject(run, info[i].key, info[i].value);

    cJSON *arr = cJSON_AddArrayToObject(root, "figures");
    for (int i = 0; i < nfigures; i++) {
        const struct bench_figure *f = &figures[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", f->id);
        cJSON_AddStringToObject(o, "group", f->group);
        cJSON_AddStringToObject(o, "name", f->name);
        cJSON_AddStringToObject(o, "unit", f->unit);
        cJSON_AddStringToObject(o, "better",
                                f->better == BENCH_HIGHER_BETTER ? "higher" : "lower");
        cJSON_AddItemToObject(o, "median", json_num(f->s.median));
        cJSON_AddItemToObject(o, "min", json_num(f->s.min));
        cJSON_AddItemToObject(o, "max", json_num(f->s.max));
        cJSON_AddNumberToObject(o, "samples", f->s.n);
        if (f->bytes > 0)
            cJSON_AddNumberToObject(o, "bytes", f->bytes);
        if (f->has_ref) {
            cJSON_AddItemToObject(o, "memcpy", json_stats(f->ref));
            cJSON_AddItemToObject(o, "vs_memcpy", json_num(f->vs_memcpy));
            cJSON_AddItemToObject(o, "vs_memcpy_min", json_num(f->vs.min));
            cJSON_AddItemToObject(o, "vs_memcpy_max", json_num(f->vs.max));
        }
        if (f->target_op) {
            cJSON *t = cJSON_AddObjectToObject(o, "target");
            cJSON_AddStringToObject(t, "text", f->target_text);
            cJSON_AddStringToObject(t, "op", f->target_op == BENCH_AT_MOST ? "<=" : ">=");
            cJSON_AddNumberToObject(t, "value", f->target_value);
            cJSON_AddStringToObject(t, "checked", f->checked);
            if (!isnan(f->target_max))
                cJSON_AddNumberToObject(t, "max", f->target_max);
            cJSON_AddBoolToObject(o, "met", f->met == 1);
        }
        if (f->note[0])
            cJSON_AddStringToObject(o, "note", f->note);
        cJSON_AddItemToArray(arr, o);
    }

    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return false;
    FILE *out = fopen(path, "w");
    bool ok = out && fputs(text, out) >= 0 && fputc('\n', out) != EOF;
    if (out && fclose(out) != 0)
        ok = false;
    cJSON_free(text);
    return ok;
}

/* ---- process state ----------------------------------------------------------- */

double bench_rss_mib(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return NAN;
    int n = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    if (n != 2)
        return NAN;
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

int bench_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}
