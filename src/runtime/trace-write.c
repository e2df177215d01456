/*
 * The tracer's output (trace.h): the ACLSIM_PROFILE summary, printed at
 * exit, and the trace file, Chrome Trace Event JSON (docs/tracing.md),
 * written from every thread's ring at aclFinalize and at exit. Recording is
 * trace.c's.
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the summary (ACLSIM_PROFILE) ---------------------------------------------- */

struct stat {
    struct stat *next;
    bool kernel;
    uint64_t to_n, to_bytes, to_ns, from_n, from_bytes, from_ns, other_n, other_bytes, other_ns;
    uint64_t launches, blocks, ns;
    uint64_t per_device[ACLSIM_MAX_DEVICES];
    char name[];
};
static pthread_mutex_t stat_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stat *stats;

static struct stat *stat_for(const char *name, bool kernel)
{
    if (!name)
        name = "?";
    struct stat *st = stats;
    while (st && (st->kernel != kernel || strcmp(st->name, name) != 0))
        st = st->next;
    if (!st && (st = aclsim__calloc(1, sizeof *st + strlen(name) + 1))) {
        st->kernel = kernel;
        strcpy(st->name, name);
        st->next = stats;
        stats = st;
    }
    return st;
}

void aclsim__trace_summary_copy(const char *label, const char *dir, size_t bytes, uint64_t ns,
                                int32_t device)
{
    pthread_mutex_lock(&stat_lock);
    struct stat *st = stat_for(label, false);
    if (st) {
        if (dir[0] == 'H' && dir[2] == 'D') {
            st->to_n++, st->to_bytes += bytes, st->to_ns += ns;
        } else if (dir[0] == 'D' && dir[2] == 'H') {
            st->from_n++, st->from_bytes += bytes, st->from_ns += ns;
        } else {
            st->other_n++, st->other_bytes += bytes, st->other_ns += ns;
        }
        if (device >= 0 && device < ACLSIM_MAX_DEVICES)
            st->per_device[device]++;
    }
    pthread_mutex_unlock(&stat_lock);
}

void aclsim__trace_summary_kernel(const char *name, uint32_t blocks, uint64_t ns)
{
    pthread_mutex_lock(&stat_lock);
    struct stat *st = stat_for(name, true);
    if (st)
        st->launches++, st->blocks += blocks, st->ns += ns;
    pthread_mutex_unlock(&stat_lock);
}

static double us(uint64_t ns) { return (double)ns / 1000.0; }

static void summary_print(void)
{
    pthread_mutex_lock(&stat_lock);
    if (!stats) {
        pthread_mutex_unlock(&stat_lock);
        return;
    }
    fprintf(stderr, "\naclsim profile (ACLSIM_PROFILE)\n\nDevice variables\n");
    fprintf(stderr, "%-24s %8s %12s %12s %10s %8s %12s %12s %10s  %s\n", "variable", "to dev",
            "bytes", "total us", "mean us", "from dev", "bytes", "total us", "mean us",
            "copies per device");
    for (struct stat *st = stats; st; st = st->next) {
        if (st->kernel)
            continue;
        char devs[256] = "";
        size_t len = 0;
        for (int d = 0; d < ACLSIM_MAX_DEVICES && len < sizeof devs - 24; d++)
            if (st->per_device[d])
                len += (size_t)snprintf(devs + len, sizeof devs - len, "%sdev%d:%" PRIu64,
                                        len ? " " : "", d, st->per_device[d]);
        fprintf(stderr, "%-24s %8" PRIu64 " %12" PRIu64 " %12.1f %10.2f %8" PRIu64 " %12" PRIu64
                        " %12.1f %10.2f  %s\n",
                st->name, st->to_n, st->to_bytes, us(st->to_ns),
                st->to_n ? us(st->to_ns) / (double)st->to_n : 0.0, st->from_n, st->from_bytes,
                us(st->from_ns), st->from_n ? us(st->from_ns) / (double)st->from_n : 0.0, devs);
    }
    fprintf(stderr, "\nKernels\n%-24s %10s %12s %12s %10s\n", "kernel", "launches", "blocks",
            "total us", "mean us");
    for (struct stat *st = stats; st; st = st->next)
        if (st->kernel)
            fprintf(stderr, "%-24s %10" PRIu64 " %12" PRIu64 " %12.1f %10.2f\n", st->name,
                    st->launches, st->blocks, us(st->ns),
                    st->launches ? us(st->ns) / (double)st->launches : 0.0);
    pthread_mutex_unlock(&stat_lock);
}

/* ---- writing ----------------------------------------------------------------- */

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static const char *const kind_names[] = {
    "copy", "memset", "kernel", "host function", "event record", "wait", "overflow", "copy2d",
    "memset32", "signal", "reduce", "random", "batch", "cache operation", "callback", "mark"};
_Static_assert(sizeof kind_names / sizeof *kind_names == ACLSIM_TASK_KINDS,
               "kind_names needs a name for each enum aclsim__task_kind");

/* Tracks seen while writing, for their names. */
struct seen { uint32_t pid, tid, stream, epoch, worker_of; uint8_t trk; };
struct seen_set { struct seen *v; size_t n, cap; };

static void note_track(struct seen_set *set, const struct ev *e)
{
    for (size_t i = set->n; i-- > 0;)
        if (set->v[i].pid == e->pid && set->v[i].tid == e->tid)
            return;
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 64;
        struct seen *v = realloc(set->v, cap * sizeof *v);
        if (!v)
            return;
        set->v = v;
        set->cap = cap;
    }
    set->v[set->n++] = (struct seen){e->pid, e->tid, e->stream, e->aux2,
                                     e->trk == TRK_HOST ? e->aux2 : 0, e->trk};
}

static void ts_field(FILE *f, const char *key, uint64_t ns)
{
    fprintf(f, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

static void write_event(FILE *f, const struct ev *e, bool *first)
{
    static const char phs[] = {'X', 'i', 's', 'f'};
    fputs(*first ? "\n" : ",\n", f);
    *first = false;
    char name[TEXT_MAX + 16];
    const char *cat = "task";
    switch (e->cat) {
    case CAT_API: cat = "api"; break;
    case CAT_BLOCK: cat = "block"; break;
    case CAT_COPY: cat = "copy"; break;
    case CAT_TX: cat = e->value ? (const char *)(uintptr_t)e->value : "msproftx"; break;
    case CAT_FLOW_EVENT: cat = "event"; break;
    case CAT_FLOW_NOTIFY: cat = "notify"; break;
    case CAT_FLOW_CALL: cat = "launch"; break;
    case CAT_NOTE: cat = "aclsim"; break;
    default: break;
    }
    if (e->cat == CAT_TASK && e->kind == ACLSIM_TASK_COPY)
        snprintf(name, sizeof name, "%s%s%s", e->dir, e->text[0] ? " " : " memcpy", e->text);
    else if (e->cat == CAT_COPY)
        snprintf(name, sizeof name, "%s %s", e->dir, e->text);
    else if (e->cat == CAT_BLOCK)
        snprintf(name, sizeof name, "%s block %" PRIu64, e->text, e->aux);
    else if (e->cat == CAT_TASK && e->kind == ACLSIM_TASK_WAIT)
        snprintf(name, sizeof name, "%s wait", e->text);
    else if (e->cat == CAT_TASK && e->kind == ACLSIM_TASK_SIGNAL)
        snprintf(name, sizeof name, "%s %s", e->text,
                 strcmp(e->text, "event") == 0          ? "reset"
                 : strcmp(e->text, "memory value") == 0 ? "write"
                                                        : "record");
    else
        snprintf(name, sizeof name, "%s", e->text);
    fprintf(f, "{\"ph\":\"%c\",\"pid\":%u,\"tid\":%u", phs[e->ph], e->pid, e->tid);
    ts_field(f, "ts", e->ts);
    fputs(",\"name\":", f);
    put_string(f, e->ph == PH_FLOW_OUT || e->ph == PH_FLOW_IN ? cat : name);
    fputs(",\"cat\":", f);
    put_string(f, cat);   /* (an mstx domain's name is the user's) */
    if (e->ph == PH_SLICE)
        ts_field(f, "dur", e->dur);
    if (e->ph == PH_INSTANT)
        fputs(",\"s\":\"t\"", f);
    if (e->ph == PH_FLOW_OUT || e->ph == PH_FLOW_IN) {
        fprintf(f, ",\"id\":%" PRIu64, e->value);
        if (e->ph == PH_FLOW_IN)
            fputs(",\"bp\":\"e\"", f);
        fputs("}", f);
        return;
    }
    fputs(",\"args\":{", f);
    if (e->cat == CAT_TASK) {
        fprintf(f, "\"kind\":\"%s\",\"stream\":%u,\"task\":%" PRIu64 ",\"device\":%u",
                e->kind < sizeof kind_names / sizeof *kind_names ? kind_names[e->kind] : "?",
                e->stream, e->aux, e->pid - 1);
        if (e->ph == PH_INSTANT)
            fputs(",\"discarded\":true", f);
        if (e->kind == ACLSIM_TASK_KERNEL)
            fprintf(f, ",\"blocks\":%" PRIu64, e->value);
        else
            fprintf(f, ",\"bytes\":%" PRIu64, e->value);
        if (e->kind == ACLSIM_TASK_COPY) {
            fprintf(f, ",\"direction\":\"%s\"", e->dir);
            if (e->text[0]) {
                fputs(",\"variable\":", f);
                put_string(f, e->text);
            }
        }
    } else if (e->cat == CAT_COPY) {
        fprintf(f, "\"bytes\":%" PRIu64 ",\"direction\":\"%s\"", e->value, e->dir);
        if (e->aux)
            fprintf(f, ",\"device\":%" PRIu64, e->aux - 1);
        if (e->kind) {
            fputs(",\"variable\":", f);
            put_string(f, e->text);
        }
    } else if (e->cat == CAT_BLOCK) {
        fprintf(f, "\"kernel\":");
        put_string(f, e->text);
        fprintf(f, ",\"block\":%" PRIu64 ",\"blocks\":%" PRIu64, e->aux, e->value);
    } else if (e->cat == CAT_NOTE) {
        fprintf(f, "\"dropped\":%" PRIu64, e->value);
    }
    fputs("}}", f);
}

static void write_meta(FILE *f, uint32_t pid, uint32_t tid, const char *what, const char *name,
                       bool *first)
{
    fputs(*first ? "\n" : ",\n", f);
    *first = false;
    fprintf(f, "{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":", pid,
            tid, what);
    put_string(f, name);
    fputs("}}", f);
}

static int cmp_seen(const void *a, const void *b)
{
    const struct seen *x = a, *y = b;
    return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1)
                            : x->tid != y->tid ? (x->tid < y->tid ? -1 : 1) : 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The ids of every flow start recorded, sorted (an arrow's end is written
 * only with its start: a record made before tracing began, or dropped, has
 * none). *n gets their number; NULL when there are none or no memory. */
static uint64_t *flow_starts(size_t *n)
{
    size_t cap = 0, k = 0;
    uint64_t *ids = NULL;
    pthread_mutex_lock(&aclsim__trace_list_lock);
    for (struct ring *r = aclsim__trace_rings; r; r = r->next) {
        pthread_mutex_lock(&r->lock);
        for (uint32_t i = 0; i < r->count; i++) {
            const struct ev *e = &r->ev[(r->head + i) % r->cap];
            if (e->ph != PH_FLOW_OUT)
                continue;
            if (k == cap) {
                size_t c = cap ? 2 * cap : 256;
                uint64_t *bigger = realloc(ids, c * sizeof *ids);
                if (!bigger)
                    break;
                ids = bigger;
                cap = c;
            }
            ids[k++] = e->value;
        }
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_unlock(&aclsim__trace_list_lock);
    if (ids)
        qsort(ids, k, sizeof *ids, cmp_u64);
    *n = k;
    return ids;
}

bool aclsim__trace_write(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    uint64_t upto = atomic_load(&aclsim__trace_recorded);
    size_t nstarts;
    uint64_t *starts = flow_starts(&nstarts);
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
    bool first = true;
    struct seen_set set = {NULL, 0, 0};
    uint64_t dropped = 0, total = 0;
    pthread_mutex_lock(&aclsim__trace_list_lock);
    for (struct ring *r = aclsim__trace_rings; r; r = r->next) {
        pthread_mutex_lock(&r->lock);
        for (uint32_t i = 0; i < r->count; i++) {
            const struct ev *e = &r->ev[(r->head + i) % r->cap];
            if (i == 0 && r->dropped) {
                /* Where this thread's record begins: what came before was dropped. */
                struct ev note = {.ts = e->ts, .pid = e->pid, .tid = e->tid, .ph = PH_INSTANT,
                                  .cat = CAT_NOTE, .trk = e->trk, .value = r->dropped,
                                  .stream = e->stream, .aux2 = e->aux2};
                snprintf(note.text, sizeof note.text, "%" PRIu64 " earlier events dropped",
                         r->dropped);
                write_event(f, &note, &first);
            }
            if (e->ph == PH_FLOW_IN &&
                !(starts && bsearch(&e->value, starts, nstarts, sizeof *starts, cmp_u64)))
                continue;
            note_track(&set, e);
            write_event(f, e, &first);
        }
        if (r->has_pending) {
            note_track(&set, &r->pending);
            write_event(f, &r->pending, &first);
        }
        dropped += r->dropped;
        total += r->count;
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_unlock(&aclsim__trace_list_lock);
    free(starts);
    dropped += atomic_load(&aclsim__trace_lost);
    /* Names: one process per device, a track per stream and per thread. */
    if (set.n)
        qsort(set.v, set.n, sizeof *set.v, cmp_seen);
    uint32_t last_pid = UINT32_MAX;
    for (size_t i = 0; i < set.n; i++) {
        const struct seen *t = &set.v[i];
        char name[96];
        if (t->pid != last_pid) {
            if (t->pid)
                snprintf(name, sizeof name, "device %u", t->pid - 1);
            else
                snprintf(name, sizeof name, "host");
            write_meta(f, t->pid, 0, "process_name", name, &first);
            last_pid = t->pid;
        }
        if (t->trk == TRK_STREAM || t->trk == TRK_STREAM_DEFAULT)
            snprintf(name, sizeof name, "stream %u%s%s", t->stream,
                     t->trk == TRK_STREAM_DEFAULT ? " (default)" : "",
                     t->epoch > 1 ? "" : "");
        else if (t->trk == TRK_WORKER)
            snprintf(name, sizeof name, "worker %u", t->tid);
        else if (t->worker_of)
            snprintf(name, sizeof name, "thread %u (device %u worker)", t->tid, t->worker_of - 1);
        else
            snprintf(name, sizeof name, "thread %u", t->tid);
        write_meta(f, t->pid, t->tid, "thread_name", name, &first);
    }
    free(set.v);
    fprintf(f, "\n],\"otherData\":{\"producer\":\"aclsim\",\"clock\":\"CLOCK_MONOTONIC\","
               "\"events\":%" PRIu64 ",\"dropped_events\":%" PRIu64
               ",\"ring_events_per_thread\":%u}}\n",
            total, dropped, atomic_load(&aclsim__trace_ring_events));
    bool ok = !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    if (ok)
        atomic_store(&aclsim__trace_written, upto);
    return ok;
}

static void write_configured(void)
{
    char path[256];
    aclsim__trace_path(path, sizeof path);
    if (path[0] && !aclsim__trace_write(path))
        aclsim__log(ACLSIM_LOG_ERROR, "ACLSIM_TRACE: cannot write %s: %s", path, strerror(errno));
}

void aclsim__trace_finalize(void)
{
    write_configured();
}

void aclsim__trace_at_exit(void)
{
    if (atomic_load(&aclsim__trace_recorded) != atomic_load(&aclsim__trace_written))
        write_configured();
    summary_print();
}

/* fork() child (THE FORK RULE): the summary's lock is made new. */
void aclsim__trace_summary_forget_after_fork(void)
{
    pthread_mutex_init(&stat_lock, NULL);
}
