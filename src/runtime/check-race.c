/*
 * Checker mode, race detector (docs/checker.md): two streams accessing one
 * allocation, at least one of them writing, with nothing ordering them.
 *
 * Each stream has a clock: for every other stream, the last of its tasks
 * that this stream is known to come after. Stream order is implicit; an
 * event record (or notify/value signal) queued on stream A takes a snapshot
 * of A's clock with A's own position, and a wait queued on stream B for that
 * record joins the snapshot into B's clock. Host-side ordering (synchronize,
 * query) needs no bookkeeping: a task that has completed when the later one
 * is queued is ordered before it, whoever waited for it.
 *
 * Accesses are known from the task: a copy writes its destination and reads
 * its source, a memset writes, a kernel "uses" the allocations its pointer
 * arguments point into (reading or writing: the checker cannot see which). A
 * conflict is a write against any use; two kernels using one buffer are not
 * reported (both may only read it).
 *
 * All of it happens in the submit hook, under the stream's lock: the race is
 * reported as the second stream's fault, so its next synchronize returns
 * 507015 with the report (the task still runs: the program goes on as the
 * NPU would). race_lock is taken after a stream's lock and before a heap's.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t race_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- clocks --------------------------------------------------------------------- */

struct clock { uint32_t n, cap; struct tick { const void *s; uint64_t seq; } *e; };

static uint64_t clock_get(const struct clock *c, const void *s)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->e[i].s == s)
            return c->e[i].seq;
    return 0;
}

/* (Out of memory: the tick is lost, so fewer accesses count as ordered: a
 * report too many, never one too few.) */
static void clock_max(struct clock *c, const void *s, uint64_t seq)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->e[i].s == s) {
            if (c->e[i].seq < seq)
                c->e[i].seq = seq;
            return;
        }
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 4;
        struct tick *e = realloc(c->e, cap * sizeof *e);
        if (!e)
            return;
        c->e = e;
        c->cap = cap;
    }
    c->e[c->n++] = (struct tick){s, seq};
}

static void clock_join(struct clock *c, const struct clock *o)
{
    for (uint32_t i = 0; i < o->n; i++)
        clock_max(c, o->e[i].s, o->e[i].seq);
}

/* ---- streams and snapshots --------------------------------------------------------- */

#define BUCKETS 256u
static size_t bucket(const void *p) { return (size_t)(((uintptr_t)p >> 6) * 0x9E3779B97F4A7C15ull >> 56) & (BUCKETS - 1); }

struct rstream { struct rstream *next; const struct aclsim__stream *s; struct clock clock; };
static struct rstream *streams[BUCKETS];

static struct rstream *stream_of(const struct aclsim__stream *s)
{
    struct rstream **p = &streams[bucket(s)];
    while (*p && (*p)->s != s)
        p = &(*p)->next;
    if (!*p && (*p = calloc(1, sizeof **p)))
        (*p)->s = s;
    return *p;
}

/* The latest snapshots of each object signalled (event records by record
 * number; notifies and memory signals by object only). */
#define SNAPS_PER_OBJECT 4
struct rsnap { struct rsnap *next; const void *obj; uint64_t value; struct clock clock; };
static struct rsnap *snaps[BUCKETS];

static void snapshot(const void *obj, uint64_t value, const struct clock *c)
{
    struct rsnap *n = calloc(1, sizeof *n);
    if (!n)
        return;
    n->obj = obj;
    n->value = value;
    clock_join(&n->clock, c);
    struct rsnap **p = &snaps[bucket(obj)];
    n->next = *p;
    *p = n;
    int kept = 0;
    for (struct rsnap **q = p; *q;) {
        if ((*q)->obj == obj && ++kept > SNAPS_PER_OBJECT) {
            struct rsnap *old = *q;
            *q = old->next;
            free(old->clock.e);
            free(old);
        } else {
            q = &(*q)->next;
        }
    }
}

/* The snapshot of obj's signal value (any value: the latest). */
static const struct rsnap *snapshot_of(const void *obj, uint64_t value, bool any)
{
    for (struct rsnap *n = snaps[bucket(obj)]; n; n = n->next)
        if (n->obj == obj && (any || n->value == value))
            return n;
    return NULL;
}

/* ---- accesses ---------------------------------------------------------------------- */

enum { USE, READ, WRITE };
struct access {
    const struct aclsim__stream *s;
    uint64_t seq;
    uintptr_t lo, hi;          /* bytes [lo, hi) */
    uint8_t how, task_kind;
    uint32_t task_id, stream_id;
    const char *label;
    const void *handle;
    bool is_default;
    int32_t device;
};
#define READS 8
struct rmem {
    struct rmem *next;
    uintptr_t addr;
    struct access write;       /* the last write (s NULL: none) */
    struct access reads[READS];   /* uses since it (ring) */
    unsigned nreads;
};
static struct rmem *mems[BUCKETS];
static uint64_t gone_cursor;   /* allocations gone so far whose records were dropped */

/* Drops the records of allocations freed or reset since the last call. */
static void forget_gone(void)
{
    uintptr_t addrs[64];
    size_t n;
    while ((n = aclsim__check_gone_since(&gone_cursor, addrs, 64)) > 0)
        for (size_t i = 0; i < n; i++) {
            struct rmem **p = &mems[bucket((const void *)addrs[i])];
            while (*p && (*p)->addr != addrs[i])
                p = &(*p)->next;
            if (*p) {
                struct rmem *x = *p;
                *p = x->next;
                free(x);
            }
        }
}

static struct rmem *mem_of(uintptr_t addr)
{
    struct rmem **p = &mems[bucket((const void *)addr)];
    while (*p && (*p)->addr != addr)
        p = &(*p)->next;
    if (!*p && (*p = calloc(1, sizeof **p)))
        (*p)->addr = addr;
    return *p;
}

/* x (earlier) and y conflict: different streams, overlapping bytes, one of
 * them a write, x not yet completed and not known to y's stream. */
static bool conflict(const struct access *x, const struct access *y, const struct clock *yc)
{
    if (!x->s || x->s == y->s || x->hi <= y->lo || y->hi <= x->lo)
        return false;
    if (x->how != WRITE && y->how != WRITE)
        return false;
    if (x->how == USE && y->how == USE)
        return false;
    if (atomic_load_explicit(&x->s->completed, memory_order_acquire) >= x->seq)
        return false;
    return clock_get(yc, x->s) < x->seq;
}

static const char *how_name(uint8_t how)
{
    return how == WRITE ? "writes" : how == READ ? "reads" : "uses";
}

static void describe_access(const struct access *a, char *buf, size_t len)
{
    char stream[64];
    aclsim__check_stream_name(a->is_default, a->handle, a->stream_id, stream, sizeof stream);
    snprintf(buf, len, "%s%s%s (task %u) on %s of device %d %s",
             aclsim__check_task_name(a->task_kind), a->label ? " " : "", a->label ? a->label : "", a->task_id, stream, a->device,
             how_name(a->how));
}

/* The accesses of task t: pointer, bytes (0: the whole allocation), how. */
static int task_accesses(const struct aclsim__task *t, const void **p, size_t *n, uint8_t *how)
{
    int k = 0;
    switch (t->kind) {
    case ACLSIM_TASK_COPY:
        p[k] = t->u.copy.dst, n[k] = t->bytes, how[k++] = WRITE;
        p[k] = t->u.copy.src, n[k] = t->bytes, how[k++] = READ;
        break;
    case ACLSIM_TASK_MEMSET:
        p[k] = t->u.memset.dst, n[k] = t->bytes, how[k++] = WRITE;
        break;
    case ACLSIM_TASK_MEMSET32:
        p[k] = t->u.memset32.dst, n[k] = t->bytes, how[k++] = WRITE;
        break;
    case ACLSIM_TASK_COPY2D: {
        size_t w = t->u.copy2d.width, h = w ? t->bytes / w : 0;
        p[k] = t->u.copy2d.dst, n[k] = h ? (h - 1) * t->u.copy2d.dpitch + w : 0, how[k++] = WRITE;
        p[k] = t->u.copy2d.src, n[k] = h ? (h - 1) * t->u.copy2d.spitch + w : 0, how[k++] = READ;
        break;
    }
    case ACLSIM_TASK_REDUCE:
        p[k] = t->u.reduce.dst, n[k] = t->bytes, how[k++] = WRITE;
        p[k] = t->u.reduce.src, n[k] = t->bytes, how[k++] = READ;
        break;
    case ACLSIM_TASK_KERNEL: {
        const aclsimKernel *kd = t->u.kernel.kernel;
        void *const *args = t->u.kernel.argbuf;
        for (uint32_t i = 0; args && i < kd->num_params && k < 16; i++)
            if (kd->param_size[i] == sizeof(void *)) {
                memcpy(&p[k], args[i], sizeof(void *));
                n[k] = 0, how[k++] = USE;
            }
        break;
    }
    default:
        break;
    }
    return k;
}

void aclsim__check_race(struct aclsim__stream *s, const struct aclsim__task *t, uint64_t seq)
{
    const void *ptr[16];
    size_t len[16];
    uint8_t how[16];
    int n = task_accesses(t, ptr, len, how);
    bool signal = t->kind == ACLSIM_TASK_RECORD || t->kind == ACLSIM_TASK_SIGNAL;
    bool wait = t->kind == ACLSIM_TASK_WAIT;
    if (!n && !signal && !wait)
        return;
    struct access found[2];
    struct aclsim__alloc fa;
    int fdev = -1;
    bool raced = false;
    pthread_mutex_lock(&race_lock);
    forget_gone();
    struct rstream *rs = stream_of(s);
    if (!rs)
        goto out;
    if (t->kind == ACLSIM_TASK_RECORD) {
        clock_max(&rs->clock, s, seq);
        snapshot(t->u.event.event, t->u.event.seq, &rs->clock);
    } else if (signal) {
        clock_max(&rs->clock, s, seq);
        snapshot(t->u.sync.obj, 0, &rs->clock);
    } else if (wait) {
        bool event = t->u.sync.ops && t->u.sync.ops->what && !strcmp(t->u.sync.ops->what, "event");
        const struct rsnap *sn = snapshot_of(t->u.sync.obj, t->u.sync.value, !event);
        if (sn)
            clock_join(&rs->clock, &sn->clock);
    }
    for (int i = 0; i < n && !raced; i++) {
        struct aclsim__alloc a;
        if (!ptr[i])
            continue;
        struct aclsim__where w = aclsim__classify(ptr[i]);
        struct aclsim__heap *h = aclsim__check_heap_of(w);
        if (!h || !aclsim__heap_find(h, ptr[i], &a))
            continue;
        struct rmem *m = mem_of(a.addr);
        if (!m)
            continue;
        uintptr_t lo = len[i] ? (uintptr_t)ptr[i] : a.addr;
        struct access y = {s, seq, lo, lo + (len[i] ? len[i] : a.size), how[i], t->kind, t->id,
                           s->id, t->label, s->handle, s->is_default, s->device->id};
        const struct access *x = conflict(&m->write, &y, &rs->clock) ? &m->write : NULL;
        for (unsigned r = 0; !x && y.how != READ && r < m->nreads && r < READS; r++)
            if (conflict(&m->reads[r], &y, &rs->clock))
                x = &m->reads[r];
        if (x) {
            raced = true;
            found[0] = *x;
            found[1] = y;
            fa = a;
            fdev = w.kind == ACLSIM_DEVICE ? w.device->id : -1;
        }
        if (y.how == WRITE) {
            m->write = y;
            m->nreads = 0;
        } else {
            m->reads[m->nreads++ % READS] = y;
        }
    }
out:
    pthread_mutex_unlock(&race_lock);
    if (!raced)
        return;
    char what[600], first[200], second[200], text[1400];
    aclsim__check_describe_alloc(&fa, fdev, what, sizeof what);
    describe_access(&found[0], first, sizeof first);
    describe_access(&found[1], second, sizeof second);
    snprintf(text, sizeof text,
             "%s %s while %s it, with nothing ordering them; record an event after the "
             "first and make the second stream wait for it (aclrtRecordEvent, "
             "aclrtStreamWaitEvent), or synchronize the first stream before queuing the second",
             second, what, first);
    aclsim__check_print("race", text);
    /* The second stream's fault (s->lock is held): its next synchronize says so. */
    if (!atomic_load(&s->fault)) {
        snprintf(s->fault_text, sizeof s->fault_text, "aclsim check: race: %.360s", text);
        atomic_store(&s->fault, ACL_ERROR_RT_AICORE_EXCEPTION);
    }
}

void aclsim__check_race_finalize(void)
{
    pthread_mutex_lock(&race_lock);
    for (size_t b = 0; b < BUCKETS; b++) {
        while (streams[b]) {
            struct rstream *x = streams[b];
            streams[b] = x->next;
            free(x->clock.e);
            free(x);
        }
        while (snaps[b]) {
            struct rsnap *x = snaps[b];
            snaps[b] = x->next;
            free(x->clock.e);
            free(x);
        }
        while (mems[b]) {
            struct rmem *x = mems[b];
            mems[b] = x->next;
            free(x);
        }
    }
    gone_cursor = 0;
    pthread_mutex_unlock(&race_lock);
}

/* After fork(), in the child: the parent's records are dropped (not freed:
 * the lock may have been held), the lock is new. */
void aclsim__check_race_forget_after_fork(void)
{
    memset(streams, 0, sizeof streams);
    memset(snaps, 0, sizeof snaps);
    memset(mems, 0, sizeof mems);
    gone_cursor = 0;
    pthread_mutex_init(&race_lock, NULL);
}
