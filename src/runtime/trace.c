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
 * This file configures the tracer and records; trace-write.c prints the
 * summary and writes the file (trace.h: what they share).
 *
 * Tracks: pid 0 is the host (a track per thread: its runtime calls, stamps
 * and marks, synchronous copies); pid d + 1 is device d, with a track per
 * stream (a slice per task) and a track per worker thread (a slice per
 * kernel block it ran). Flow arrows join an event record to the waits that
 * waited for it, and (with API slices on) a call to the task it queued.
 */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_uint aclsim__trace_mask;

#define DEFAULT_EVENTS 65536u

pthread_mutex_t aclsim__trace_list_lock = PTHREAD_MUTEX_INITIALIZER;
struct ring *aclsim__trace_rings;
atomic_uint aclsim__trace_ring_events = DEFAULT_EVENTS;
atomic_uint_fast64_t aclsim__trace_lost;
atomic_uint_fast64_t aclsim__trace_recorded, aclsim__trace_written;
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

/* A session starts a new trace: the aclsim__trace_rings are emptied (the last session's
 * events were written at its aclFinalize) and take the configured size. A
 * ring that cannot grow keeps its size. */
static void reset_rings(uint32_t cap)
{
    pthread_mutex_lock(&aclsim__trace_list_lock);
    for (struct ring *r = aclsim__trace_rings; r; r = r->next) {
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
    pthread_mutex_unlock(&aclsim__trace_list_lock);
    atomic_store(&aclsim__trace_lost, 0);
    atomic_store(&aclsim__trace_written, atomic_load(&aclsim__trace_recorded));
}

void aclsim__trace_configure(const struct aclsim__config *c)
{
    atomic_store(&aclsim__trace_ring_events, c->trace_events ? c->trace_events : DEFAULT_EVENTS);
    reset_rings(atomic_load(&aclsim__trace_ring_events));
    pthread_mutex_lock(&config_lock);
    snprintf(trace_path, sizeof trace_path, "%s", c->trace_path);
    env_bits = (c->trace_path[0] ? ACLSIM_TRACE_TASKS | ACLSIM_TRACE_API | ACLSIM_TRACE_TX : 0) |
               (c->profile ? ACLSIM_TRACE_SUMMARY : 0);
    atomic_store(&env_tasks, (env_bits & ACLSIM_TRACE_TASKS) != 0);
    if (env_bits && !exit_registered)
        exit_registered = atexit(aclsim__trace_at_exit) == 0;
    publish_mask();
    pthread_mutex_unlock(&config_lock);
}

void aclsim__trace_path(char *path, size_t len)
{
    pthread_mutex_lock(&config_lock);
    snprintf(path, len, "%s", trace_path);
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
    pthread_mutex_lock(&aclsim__trace_list_lock);
    r->owned = false;
    pthread_mutex_unlock(&aclsim__trace_list_lock);
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
    pthread_mutex_lock(&aclsim__trace_list_lock);
    struct ring *r = aclsim__trace_rings;
    while (r && r->owned)
        r = r->next;
    if (r) {
        r->owned = true;
    } else if ((r = aclsim__calloc(1, sizeof *r))) {
        r->cap = atomic_load(&aclsim__trace_ring_events);
        if (!(r->ev = aclsim__malloc((size_t)r->cap * sizeof *r->ev))) {
            free(r);
            r = NULL;
        } else {
            pthread_mutex_init(&r->lock, NULL);
            r->owned = true;
            r->next = aclsim__trace_rings;
            aclsim__trace_rings = r;
        }
    }
    pthread_mutex_unlock(&aclsim__trace_list_lock);
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
    atomic_fetch_add_explicit(&aclsim__trace_recorded, 1, memory_order_relaxed);
}

static void push(const struct ev *e)
{
    struct ring *r = my_ring();
    if (!r) {
        atomic_fetch_add_explicit(&aclsim__trace_lost, 1, memory_order_relaxed);
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
        atomic_fetch_add_explicit(&aclsim__trace_lost, 1, memory_order_relaxed);
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
            aclsim__trace_summary_copy(t->label, dir, t->bytes, end - start, side);
        else if (t->kind == ACLSIM_TASK_KERNEL)
            aclsim__trace_summary_kernel(t->label, t->u.kernel.blocks, end - start);
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
        aclsim__trace_summary_copy(label, e.dir, n, end - start, device);
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

/* fork() child (THE FORK RULE): the parent's other threads are gone, maybe
 * holding a lock; every lock is made new. Their aclsim__trace_rings stay owned (no thread
 * will use them again) and their events are kept: the child's file includes
 * what the parent recorded before the fork. */
void aclsim__trace_forget_after_fork(void)
{
    pthread_mutex_init(&aclsim__trace_list_lock, NULL);
    pthread_mutex_init(&config_lock, NULL);
    aclsim__trace_summary_forget_after_fork();
    pthread_mutex_init(&notify_lock, NULL);
    for (struct ring *r = aclsim__trace_rings; r; r = r->next)
        pthread_mutex_init(&r->lock, NULL);
    aclsim__prof_forget_after_fork();
}
