/*
 * The tracer: a timeline of what the program did, written as Chrome Trace
 * Event JSON (chrome://tracing, Perfetto, MindStudio Insight), and the
 * ACLSIM_PROFILE summary. docs/tracing.md describes the file.
 *
 * Events are recorded into a ring per thread (a fixed number of events; when
 * it is full the oldest are overwritten and counted as dropped), each ring
 * under its own lock, which only its thread and the writer take. Rings are
 * never freed: a thread that exits leaves its ring to the next new thread,
 * events included, so memory is bounded by the peak number of threads. The
 * clock is CLOCK_MONOTONIC (aclsim__now_ns), written in microseconds.
 *
 * Tracks: pid 0 is the host (a track per thread: its runtime calls, stamps
 * and marks, synchronous copies); pid d + 1 is device d, with a track per
 * stream (a slice per task) and a track per worker thread (a slice per
 * kernel block it ran). Flow arrows join an event record to the waits that
 * waited for it, and (with API slices on) a call to the task it queued.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_uint aclsim__trace_mask;

#define TEXT_MAX 64
#define DEFAULT_EVENTS 65536u

enum ph { PH_SLICE, PH_INSTANT, PH_FLOW_OUT, PH_FLOW_IN };
enum track { TRK_HOST, TRK_WORKER, TRK_STREAM, TRK_STREAM_DEFAULT };
enum cat { CAT_API, CAT_TASK, CAT_BLOCK, CAT_COPY, CAT_TX, CAT_FLOW_EVENT, CAT_FLOW_CALL,
           CAT_NOTE, CAT_FLOW_NOTIFY };

struct ev {
    uint64_t ts, dur;   /* ns */
    uint64_t value;     /* copies: bytes; kernels and blocks: blocks; flows: id */
    uint64_t aux;       /* tasks: sequence number in the stream; blocks: index */
    uint32_t pid, tid;
    uint32_t stream;    /* stream tracks: the stream id; its life (epoch) in aux2 */
    uint32_t aux2;
    uint8_t ph, cat, trk, kind;   /* kind: the task kind (CAT_TASK) */
    char dir[4];                  /* copies: H2D, D2H, D2D, H2H */
    char text[TEXT_MAX];          /* name, or the copy's variable */
};

struct ring {
    pthread_mutex_t lock;
    struct ev *ev;
    uint32_t cap, head, count;   /* the events are [head, head + count) mod cap */
    uint64_t dropped;
    /* The thread's last runtime call, kept open after it returned until the
     * thread's next call: work it does after the function holding
     * ACLSIM_REQUIRE_INIT returned (a copy, a submission: a call may check
     * its arguments in a helper) extends it. The writer includes it. */
    struct ev pending;
    bool has_pending;
    bool owned;                  /* a live thread records into it (under list_lock) */
    struct ring *next;
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ring *rings;
static atomic_uint ring_events = DEFAULT_EVENTS;   /* capacity of new rings */
static atomic_uint_fast64_t lost;                  /* no ring (out of memory) */
static atomic_uint next_serial;
static _Thread_local struct ring *tls_ring;
static _Thread_local uint32_t tls_serial;
static _Thread_local bool tls_in_api;

/* ---- configuration ----------------------------------------------------------- */

static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static char trace_path[256];         /* ACLSIM_TRACE, under config_lock */
static unsigned env_bits, prof_bits; /* under config_lock */
static atomic_uint prof_devices;     /* aclprofStart's devices (without ACLSIM_TRACE) */
static atomic_bool env_tasks;        /* ACLSIM_TRACE: every device */
static bool exit_registered;
static atomic_uint_fast64_t recorded, written;   /* events recorded so far / at the last write */

static void at_exit(void);
static void summary_print(void);

/* Whether device d's tasks are traced: all with ACLSIM_TRACE, else those
 * aclprofStart named. */
static bool device_traced(int32_t d)
{
    return atomic_load_explicit(&env_tasks, memory_order_relaxed) ||
           (d >= 0 && d < 32 && (atomic_load_explicit(&prof_devices, memory_order_relaxed) >> d) & 1u);
}

static void publish_mask(void)
{
    atomic_store_explicit(&aclsim__trace_mask, env_bits | prof_bits, memory_order_relaxed);
}

/* A session starts a new trace: the rings are emptied (the last session's
 * events were written at its aclFinalize) and take the configured size. A
 * ring that cannot grow keeps its size. */
static void reset_rings(uint32_t cap)
{
    pthread_mutex_lock(&list_lock);
    for (struct ring *r = rings; r; r = r->next) {
        pthread_mutex_lock(&r->lock);
        if (r->cap != cap) {
            struct ev *ev = aclsim__realloc(r->ev, (size_t)cap * sizeof *ev);
            if (ev) {
                r->ev = ev;
                r->cap = cap;
            }
        }
        r->head = r->count = 0;
        r->dropped = 0;
        r->has_pending = false;
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_unlock(&list_lock);
    atomic_store(&lost, 0);
    atomic_store(&written, atomic_load(&recorded));
}

void aclsim__trace_configure(const struct aclsim__config *c)
{
    atomic_store(&ring_events, c->trace_events ? c->trace_events : DEFAULT_EVENTS);
    reset_rings(atomic_load(&ring_events));
    pthread_mutex_lock(&config_lock);
    snprintf(trace_path, sizeof trace_path, "%s", c->trace_path);
    env_bits = (c->trace_path[0] ? ACLSIM_TRACE_TASKS | ACLSIM_TRACE_API | ACLSIM_TRACE_TX : 0) |
               (c->profile ? ACLSIM_TRACE_SUMMARY : 0);
    atomic_store(&env_tasks, (env_bits & ACLSIM_TRACE_TASKS) != 0);
    if (env_bits && !exit_registered)
        exit_registered = atexit(at_exit) == 0;
    publish_mask();
    pthread_mutex_unlock(&config_lock);
}

void aclsim__trace_prof_bits(unsigned bits, uint32_t devices)
{
    pthread_mutex_lock(&config_lock);
    prof_bits = bits;
    atomic_store(&prof_devices, devices);
    publish_mask();
    pthread_mutex_unlock(&config_lock);
}

/* ---- recording ------------------------------------------------------------- */

/* A thread's ring is free for another thread once it exited. */
void aclsim__trace_thread_exit(void)
{
    struct ring *r = tls_ring;
    tls_ring = NULL;
    if (!r)
        return;
    pthread_mutex_lock(&list_lock);
    r->owned = false;
    pthread_mutex_unlock(&list_lock);
}

static uint32_t thread_serial(void)
{
    if (!tls_serial)
        tls_serial = atomic_fetch_add(&next_serial, 1) + 1;
    return tls_serial;
}

/* The calling thread's ring: a free one left by a thread that exited, or a
 * new one; NULL when out of memory. */
static struct ring *my_ring(void)
{
    if (ACLSIM_LIKELY(tls_ring != NULL))
        return tls_ring;
    pthread_mutex_lock(&list_lock);
    struct ring *r = rings;
    while (r && r->owned)
        r = r->next;
    if (r) {
        r->owned = true;
    } else if ((r = aclsim__calloc(1, sizeof *r))) {
        r->cap = atomic_load(&ring_events);
        if (!(r->ev = aclsim__malloc((size_t)r->cap * sizeof *r->ev))) {
            free(r);
            r = NULL;
        } else {
            pthread_mutex_init(&r->lock, NULL);
            r->owned = true;
            r->next = rings;
            rings = r;
        }
    }
    pthread_mutex_unlock(&list_lock);
    if (r) {
        tls_ring = r;
        (void)aclsim__thread_keep(ACLSIM_THREAD_TRACE_RING);   /* (unarmed: the ring stays owned) */
    }
    return r;
}

/* Appends e to r. Caller holds r->lock. */
static void append(struct ring *r, const struct ev *e)
{
    uint32_t slot;
    if (r->count == r->cap) {   /* full: the oldest goes */
        slot = r->head;
        r->head = (r->head + 1) % r->cap;
        r->dropped++;
    } else {
        slot = (r->head + r->count++) % r->cap;
    }
    r->ev[slot] = *e;
    atomic_fetch_add_explicit(&recorded, 1, memory_order_relaxed);
}

static void push(const struct ev *e)
{
    struct ring *r = my_ring();
    if (!r) {
        atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
        return;
    }
    pthread_mutex_lock(&r->lock);
    append(r, e);
    pthread_mutex_unlock(&r->lock);
}

/* The calling thread's ring, locked, with its pending call slice extended
 * to end (if it has one); NULL without a ring. */
static struct ring *lock_extend(uint64_t end)
{
    struct ring *r = my_ring();
    if (!r)
        return NULL;
    pthread_mutex_lock(&r->lock);
    if (r->has_pending && r->pending.ts + r->pending.dur < end)
        r->pending.dur = end - r->pending.ts;
    return r;
}

static void set_text(struct ev *e, const char *s)
{
    int n = snprintf(e->text, sizeof e->text, "%s", s ? s : "");
    if (n < (int)sizeof e->text)
        return;
    /* Cut: no UTF-8 sequence is left incomplete (the file stays valid UTF-8). */
    size_t len = sizeof e->text - 1, i = len;
    while (i > 0 && ((unsigned char)e->text[i - 1] & 0xC0) == 0x80)
        i--;
    if (i > 0 && ((unsigned char)e->text[i - 1] & 0x80)) {
        unsigned char lead = (unsigned char)e->text[i - 1];
        size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (i - 1 + need > len)
            e->text[i - 1] = 0;
    }
}

static struct ev host_event(uint8_t ph, uint8_t cat, uint64_t ts, uint64_t dur)
{
    struct ev e = {.ts = ts, .dur = dur, .pid = 0, .tid = thread_serial(), .ph = ph, .cat = cat,
                   .trk = TRK_HOST};
    if (aclsim__tls_worker && aclsim__tls_device)
        e.aux2 = (uint32_t)aclsim__tls_device->id + 1;   /* a worker's host-side calls */
    return e;
}

struct aclsim__api_scope aclsim__trace_api_begin(const char *api)
{
    if (tls_in_api)   /* only the outermost call of the thread is a slice */
        return (struct aclsim__api_scope){0, NULL};
    tls_in_api = true;
    struct ring *r = my_ring();
    if (r) {   /* the previous call is over */
        pthread_mutex_lock(&r->lock);
        if (r->has_pending)
            append(r, &r->pending);
        r->has_pending = false;
        pthread_mutex_unlock(&r->lock);
    }
    return (struct aclsim__api_scope){aclsim__now_ns(), api};
}

void aclsim__trace_api_end(struct aclsim__api_scope *scope)
{
    tls_in_api = false;
    struct ev e = host_event(PH_SLICE, CAT_API, scope->start, aclsim__now_ns() - scope->start);
    set_text(&e, scope->api);
    struct ring *r = my_ring();
    if (!r) {
        atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
        return;
    }
    pthread_mutex_lock(&r->lock);
    if (r->has_pending)
        append(r, &r->pending);
    r->pending = e;
    r->has_pending = true;
    pthread_mutex_unlock(&r->lock);
}

/* A flow id from its parts (never 0). */
static uint64_t flow_id(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= (c + 0x165667B19E3779F9ull) * 0x27D4EB2F165667C5ull;
    h ^= h >> 29;
    return (h & 0x1FFFFFFFFFFFFFull) | 1;   /* exact in a JSON double */
}

static uint32_t stream_tid(uint32_t id, uint32_t epoch)
{
    return 100000u + (id % 20000u) * 64u + epoch % 64u;
}

void aclsim__trace_submit(struct aclsim__stream *s, uint32_t epoch, uint64_t seq)
{
    /* The arrow starts in the calling API slice: the open one, or the one
     * whose checks returned (extended to now). */
    uint64_t now = aclsim__now_ns();
    struct ring *r = lock_extend(now);
    if (!r)
        return;
    if (tls_in_api || r->has_pending) {
        struct ev e = host_event(PH_FLOW_OUT, CAT_FLOW_CALL, now, 0);
        e.value = flow_id(s->id, epoch, seq);
        append(r, &e);
    }
    pthread_mutex_unlock(&r->lock);
}

/* "an event" -> "event" (the wait ops' what, for names). */
static const char *noun(const char *what)
{
    return strncmp(what, "an ", 3) == 0 ? what + 3 : strncmp(what, "a ", 2) == 0 ? what + 2 : what;
}

static const char *task_name(const struct aclsim__task *t)
{
    switch (t->kind) {
    case ACLSIM_TASK_COPY: return "memcpy";
    case ACLSIM_TASK_MEMSET: return "memset";
    case ACLSIM_TASK_KERNEL: return "kernel";
    case ACLSIM_TASK_HOST_FUNC: return t->label ? t->label : "host function";
    case ACLSIM_TASK_RECORD: return "event record";
    case ACLSIM_TASK_WAIT: return noun(t->u.sync.ops->what);
    case ACLSIM_TASK_OVERFLOW: return "float overflow status";
    case ACLSIM_TASK_COPY2D: return "memcpy2d";
    case ACLSIM_TASK_MEMSET32: return "memset32";
    case ACLSIM_TASK_SIGNAL: return noun(t->u.sync.ops->what);
    case ACLSIM_TASK_REDUCE: return "reduce";
    case ACLSIM_TASK_RANDOM: return "random numbers";
    case ACLSIM_TASK_BATCH: return "memcpy batch";
    case ACLSIM_TASK_CMO: return "cache operation";
    case ACLSIM_TASK_CALLBACK: return "callback";
    case ACLSIM_TASK_MARK: return t->label ? t->label : "mark";
    default: return "task";
    }
}

/* "H2D" etc. for a copy from src to dst; *device: the device side's id. */
static void direction(void *dst, const void *src, char out[4], int32_t *device)
{
    struct aclsim__where wd = aclsim__classify(dst), ws = aclsim__classify(src);
    bool dd = wd.kind == ACLSIM_DEVICE || wd.kind == ACLSIM_VIRTUAL;
    bool sd = ws.kind == ACLSIM_DEVICE || ws.kind == ACLSIM_VIRTUAL;
    out[0] = sd ? 'D' : 'H';
    out[1] = '2';
    out[2] = dd ? 'D' : 'H';
    out[3] = 0;
    *device = -1;
    if (dd && wd.device)
        *device = wd.device->id;
    else if (sd && ws.device)
        *device = ws.device->id;
}

static void summary_copy(const char *label, const char *dir, size_t bytes, uint64_t ns,
                         int32_t device);
static void summary_kernel(const char *name, uint32_t blocks, uint64_t ns);

/* Notifies have no record sequence numbers, and a wait released by a record
 * can finish (and be traced) before that record's task is traced. So the
 * tracer counts, per notify, the records and the waits it traced: the k-th
 * wait's arrow is the k-th record's, whichever is traced first. Records that
 * one wait consumed together (a notify is a flag: two records, one wait)
 * make the wait skip ahead to the latest record. A small table; a collision
 * restarts the counts, which can misplace an arrow, nothing else. */
#define NOTIFY_SLOTS 256
static pthread_mutex_t notify_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { const void *obj; uint64_t records, waits; } notify_flows[NOTIFY_SLOTS];

static size_t notify_slot(const void *obj)
{
    size_t i = (size_t)(((uintptr_t)obj >> 4) * 0x9E3779B97F4A7C15ull >> 56) % NOTIFY_SLOTS;
    if (notify_flows[i].obj != obj) {
        notify_flows[i].obj = obj;
        notify_flows[i].records = notify_flows[i].waits = 0;
    }
    return i;
}

/* A record of notify obj: its arrow's id. */
static uint64_t notify_recorded(const void *obj)
{
    pthread_mutex_lock(&notify_lock);
    uint64_t k = ++notify_flows[notify_slot(obj)].records;
    pthread_mutex_unlock(&notify_lock);
    return flow_id((uintptr_t)obj, k, 11);
}

/* A wait on notify obj passed: the arrow of the record that released it. */
static uint64_t notify_released(const void *obj)
{
    pthread_mutex_lock(&notify_lock);
    size_t i = notify_slot(obj);
    uint64_t k = ++notify_flows[i].waits;
    if (k < notify_flows[i].records)
        k = notify_flows[i].waits = notify_flows[i].records;
    pthread_mutex_unlock(&notify_lock);
    return flow_id((uintptr_t)obj, k, 11);
}

static bool is_notify(const struct aclsim__task *t)
{
    const char *what = t->u.sync.ops->what;
    return strcmp(what, "a notify") == 0 || strcmp(what, "a counting notify") == 0;
}

void aclsim__trace_task(struct aclsim__stream *s, const struct aclsim__task *t, uint64_t start,
                        bool discarded)
{
    uint64_t end = aclsim__now_ns();
    if (t->kind == ACLSIM_TASK_WAIT)
        start = end;   /* (the loop's start may precede the record that let it pass) */
    uint32_t epoch = atomic_load_explicit(&s->epoch, memory_order_relaxed);
    int32_t device = s->device->id;
    char dir[4] = "";
    int32_t side = device;
    if (t->kind == ACLSIM_TASK_COPY)
        direction(t->u.copy.dst, t->u.copy.src, dir, &side);
    if (!discarded && aclsim__tracing(ACLSIM_TRACE_SUMMARY)) {
        if (t->kind == ACLSIM_TASK_COPY && t->label)
            summary_copy(t->label, dir, t->bytes, end - start, side);
        else if (t->kind == ACLSIM_TASK_KERNEL)
            summary_kernel(t->label, t->u.kernel.blocks, end - start);
    }
    /* (a mark task is msproftx's: it shows whenever marks do) */
    if (!(aclsim__tracing(ACLSIM_TRACE_TASKS) && device_traced(device)) &&
        !(t->kind == ACLSIM_TASK_MARK && aclsim__tracing(ACLSIM_TRACE_TX)))
        return;
    struct ev e = {.ts = start, .dur = end - start, .pid = (uint32_t)device + 1,
                   .tid = stream_tid(s->id, epoch), .stream = s->id, .aux2 = epoch,
                   .aux = t->id, .ph = discarded ? PH_INSTANT : PH_SLICE, .cat = CAT_TASK,
                   .kind = t->kind,
                   .trk = __atomic_load_n(&s->is_default, __ATOMIC_RELAXED) ? TRK_STREAM_DEFAULT
                                                                            : TRK_STREAM};
    memcpy(e.dir, dir, sizeof dir);
    set_text(&e, t->kind == ACLSIM_TASK_KERNEL || t->kind == ACLSIM_TASK_COPY ? t->label
                                                                              : task_name(t));
    if (t->kind == ACLSIM_TASK_KERNEL)
        e.value = t->u.kernel.blocks;
    else
        e.value = t->bytes;
    push(&e);
    if (discarded)
        return;
    /* The arrow from the call that queued it (if that call was traced). */
    struct ev f = e;
    f.ph = PH_FLOW_IN;
    f.cat = CAT_FLOW_CALL;
    f.dur = 0;
    f.value = flow_id(s->id, epoch, t->id);
    if (aclsim__tracing(ACLSIM_TRACE_API))
        push(&f);
    /* Event record -> the waits that waited for that record. */
    if (t->kind == ACLSIM_TASK_RECORD) {
        f.ph = PH_FLOW_OUT;
        f.cat = CAT_FLOW_EVENT;
        f.value = flow_id((uintptr_t)t->u.event.event, t->u.event.seq, 7);
        push(&f);
    } else if (t->kind == ACLSIM_TASK_WAIT && strcmp(t->u.sync.ops->what, "an event") == 0 &&
               t->u.sync.value) {
        f.ph = PH_FLOW_IN;
        f.cat = CAT_FLOW_EVENT;
        f.value = flow_id((uintptr_t)t->u.sync.obj, t->u.sync.value, 7);
        push(&f);
    } else if (t->kind == ACLSIM_TASK_SIGNAL && is_notify(t)) {
        f.ph = PH_FLOW_OUT;
        f.cat = CAT_FLOW_NOTIFY;
        f.value = notify_recorded(t->u.sync.obj);
        push(&f);
    } else if (t->kind == ACLSIM_TASK_WAIT && is_notify(t)) {
        f.ph = PH_FLOW_IN;
        f.value = notify_released(t->u.sync.obj);
        f.cat = CAT_FLOW_NOTIFY;
        push(&f);
    }
}

void aclsim__trace_block(const struct aclsim__device *dev, const char *name, uint32_t index,
                         uint32_t blocks, uint64_t start)
{
    if (!device_traced(dev->id))
        return;
    struct ev e = {.ts = start, .dur = aclsim__now_ns() - start, .pid = (uint32_t)dev->id + 1,
                   .tid = thread_serial(), .ph = PH_SLICE, .cat = CAT_BLOCK, .trk = TRK_WORKER,
                   .value = blocks, .aux = index};
    set_text(&e, name);
    push(&e);
}

void aclsim__trace_sync_copy(const char *api, void *dst, const void *src, size_t n,
                             const char *label, uint64_t start)
{
    uint64_t end = aclsim__now_ns();
    struct ev e = host_event(PH_SLICE, CAT_COPY, start, end - start);
    if (!tls_in_api && aclsim__tracing(ACLSIM_TRACE_API)) {
        struct ring *r = lock_extend(end);   /* the copy belongs to the call */
        if (r)
            pthread_mutex_unlock(&r->lock);
    }
    int32_t device;
    direction(dst, src, e.dir, &device);
    if (label && aclsim__tracing(ACLSIM_TRACE_SUMMARY))
        summary_copy(label, e.dir, n, end - start, device);
    if (!aclsim__tracing(ACLSIM_TRACE_TASKS))
        return;
    e.value = n;
    e.aux = (uint64_t)(device + 1);
    snprintf(e.text, sizeof e.text, "%s", label ? label : api);
    e.kind = label ? 1 : 0;
    push(&e);
}

uint32_t aclsim__trace_thread(void)
{
    return thread_serial();
}

void aclsim__trace_tx(const char *domain, const char *message, uint64_t start, uint64_t dur,
                      bool slice, uint32_t thread)
{
    struct ev e = host_event(slice ? PH_SLICE : PH_INSTANT, CAT_TX, start, dur);
    if (thread)
        e.tid = thread;
    e.value = (uintptr_t)domain;   /* (a static string: the category) */
    set_text(&e, message);
    push(&e);
}

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

static void summary_copy(const char *label, const char *dir, size_t bytes, uint64_t ns,
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

static void summary_kernel(const char *name, uint32_t blocks, uint64_t ns)
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
    pthread_mutex_lock(&list_lock);
    for (struct ring *r = rings; r; r = r->next) {
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
    pthread_mutex_unlock(&list_lock);
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
    uint64_t upto = atomic_load(&recorded);
    size_t nstarts;
    uint64_t *starts = flow_starts(&nstarts);
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
    bool first = true;
    struct seen_set set = {NULL, 0, 0};
    uint64_t dropped = 0, total = 0;
    pthread_mutex_lock(&list_lock);
    for (struct ring *r = rings; r; r = r->next) {
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
    pthread_mutex_unlock(&list_lock);
    free(starts);
    dropped += atomic_load(&lost);
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
            total, dropped, atomic_load(&ring_events));
    bool ok = !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    if (ok)
        atomic_store(&written, upto);
    return ok;
}

static void write_configured(void)
{
    pthread_mutex_lock(&config_lock);
    char path[sizeof trace_path];
    memcpy(path, trace_path, sizeof path);
    pthread_mutex_unlock(&config_lock);
    if (path[0] && !aclsim__trace_write(path))
        aclsim__log(ACLSIM_LOG_ERROR, "ACLSIM_TRACE: cannot write %s: %s", path, strerror(errno));
}

void aclsim__trace_finalize(void)
{
    write_configured();
}

static void at_exit(void)
{
    if (atomic_load(&recorded) != atomic_load(&written))
        write_configured();
    summary_print();
}

/* fork() child (THE FORK RULE): the parent's other threads are gone, maybe
 * holding a lock; every lock is made new. Their rings stay owned (no thread
 * will use them again) and their events are kept: the child's file includes
 * what the parent recorded before the fork. */
void aclsim__trace_forget_after_fork(void)
{
    pthread_mutex_init(&list_lock, NULL);
    pthread_mutex_init(&config_lock, NULL);
    pthread_mutex_init(&stat_lock, NULL);
    pthread_mutex_init(&notify_lock, NULL);
    for (struct ring *r = rings; r; r = r->next)
        pthread_mutex_init(&r->lock, NULL);
    aclsim__prof_forget_after_fork();
}
