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
 * conflict is a write against any use.
 *
 * Two kernels using one buffer are compared when the second of them ends:
 * when a kernel is queued that uses an allocation a kernel of another
 * stream uses, and nothing orders them, the two make a pair; each kernel,
 * when it ends, leaves the bytes it read and wrote through the Ascend C
 * layer (check-kernel.c), and the second to end compares them: a write of
 * one against a read or write of the other is a race, that kernel's fault.
 * A kernel that touched the allocation only through plain pointers counts
 * as using all of it (how unknown): against the other's writes through the
 * layer it is a race; two such kernels are not reported (both may only read).
 * A kernel and a copy (2D copy, reduce) that reads make a pair the same way:
 * the copy's bytes are known when it is queued.
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
_Static_assert(READ == 1 && WRITE == 2, "struct aclsim__gm_range's how (internal.h)");
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

/* ---- kernel against kernel --------------------------------------------------------- */

/* A kernel in a pair, or one that ended and could still join one (until its
 * stream counts it completed), or a copy's read in a pair. Found by its
 * stream and sequence number (a hash); its pairs are listed with it, so
 * that a kernel's end looks at its own pairs only. */
struct kpair;
struct krec {
    struct krec *next;           /* in its bucket */
    struct access info;          /* who (s, seq, names for the report) */
    bool done;                   /* ended (or a copy); r holds its accesses */
    struct aclsim__gm_range *r;
    size_t n;
    struct kpair **pairs;        /* the pairs it is in */
    unsigned npairs, cap;
};
struct kpair {
    struct krec *x, *y;
    struct aclsim__alloc a;      /* the allocation both use */
    int32_t device;
};
#define KBUCKETS 4096u
static struct krec *kbuckets[KBUCKETS];
static size_t nkrecs, tidy_at = 64;   /* records kept; the count at which to tidy next */

static struct krec **kbucket(const struct aclsim__stream *s, uint64_t seq)
{
    uint64_t h = ((uintptr_t)s >> 6) * 0x9E3779B97F4A7C15ull ^ seq * 0xC2B2AE3D27D4EB4Full;
    return &kbuckets[(h >> 40) & (KBUCKETS - 1)];
}

static bool counted(const struct access *a)
{
    return atomic_load_explicit(&a->s->completed, memory_order_acquire) >= a->seq;
}

static struct krec *krec_of(const struct access *who, bool create)
{
    struct krec **b = kbucket(who->s, who->seq);
    for (struct krec *k = *b; k; k = k->next)
        if (k->info.s == who->s && k->info.seq == who->seq)
            return k;
    struct krec *k = create ? calloc(1, sizeof *k) : NULL;
    if (k && who->how == READ) {   /* a copy's read: known from the start */
        k->r = malloc(sizeof *k->r);
        if (!k->r) {
            free(k);
            return NULL;
        }
        *k->r = (struct aclsim__gm_range){who->lo, who->hi, READ};
        k->n = 1;
        k->done = true;
    }
    if (k) {
        k->info = *who;
        k->next = *b;
        *b = k;
        nkrecs++;
    }
    return k;
}

static bool link_pair(struct krec *k, struct kpair *p)
{
    if (k->npairs == k->cap) {
        unsigned cap = k->cap ? k->cap * 2 : 4;
        struct kpair **n = realloc(k->pairs, cap * sizeof *n);
        if (!n)
            return false;
        k->pairs = n;
        k->cap = cap;
    }
    k->pairs[k->npairs++] = p;
    return true;
}

static void unlink_pair(struct krec *k, const struct kpair *p)
{
    for (unsigned i = 0; i < k->npairs; i++)
        if (k->pairs[i] == p) {
            k->pairs[i] = k->pairs[--k->npairs];
            return;
        }
}

static void pair_drop(struct kpair *p)
{
    unlink_pair(p->x, p);
    unlink_pair(p->y, p);
    free(p);
}

static bool kernels_conflict(const struct krec *k, const struct krec *o, uintptr_t lo,
                             uintptr_t hi, uintptr_t *clo, uintptr_t *chi, uint8_t *kh,
                             uint8_t *oh);

/* x (queued earlier) and y: a kernel and a kernel, or a kernel and a copy
 * reading. When both are known already (the kernel ended, the other is a
 * copy) they are compared at once: true with *kernel_how, the kernel's. */
static bool pair_add(const struct access *x, const struct access *y, const struct aclsim__alloc *a,
                     int32_t device, uint8_t *kernel_how)
{
    struct krec *kx = krec_of(x, true), *ky = krec_of(y, true);
    if (!kx || !ky)
        return false;   /* (out of memory: not compared) */
    if (kx->done && ky->done) {
        uintptr_t clo, chi;
        uint8_t yh;
        return kernels_conflict(kx, ky, a->addr, a->addr + a->size, &clo, &chi, kernel_how, &yh);
    }
    for (unsigned i = 0; i < kx->npairs; i++) {
        const struct kpair *p = kx->pairs[i];
        if (p->a.addr == a->addr && (p->x == ky || p->y == ky))
            return false;
    }
    struct kpair *p = calloc(1, sizeof *p);
    if (!p)
        return false;
    *p = (struct kpair){kx, ky, *a, device};
    if (!link_pair(kx, p)) {
        free(p);
        return false;
    }
    if (!link_pair(ky, p)) {
        unlink_pair(kx, p);
        free(p);
    }
    return false;
}

/* Drops the pairs of kernels that will never end (discarded: counted
 * without having run), then the records no pair holds that no new pair can
 * take. Amortised: when the records have doubled since the last time. */
static void kernels_tidy(void)
{
    if (nkrecs < tidy_at)
        return;
    for (size_t b = 0; b < KBUCKETS; b++)
        for (struct krec *k = kbuckets[b]; k; k = k->next)
            if (!k->done && counted(&k->info))
                while (k->npairs)
                    pair_drop(k->pairs[0]);
    for (size_t b = 0; b < KBUCKETS; b++)
        for (struct krec **kp = &kbuckets[b]; *kp;) {
            struct krec *k = *kp;
            if (!k->npairs && counted(&k->info)) {
                *kp = k->next;
                free(k->r);
                free(k->pairs);
                free(k);
                nkrecs--;
            } else {
                kp = &k->next;
            }
        }
    tidy_at = nkrecs * 2 > 64 ? nkrecs * 2 : 64;
}

/* Forgets every record and pair (finalize; after fork the parent's are
 * dropped without freeing). */
static void kernels_forget(bool free_them)
{
    for (size_t b = 0; b < KBUCKETS; b++) {
        while (free_them && kbuckets[b]) {
            struct krec *k = kbuckets[b];
            kbuckets[b] = k->next;
            for (unsigned i = 0; i < k->npairs; i++)
                if (k->pairs[i]->x == k)   /* (each pair freed once, by its x) */
                    free(k->pairs[i]);
            free(k->r);
            free(k->pairs);
            free(k);
        }
        kbuckets[b] = NULL;
    }
    nkrecs = 0;
    tidy_at = 64;
}

/* k's accesses inside [lo, hi): the layer's, or the whole range (USE) when
 * the kernel touched none of it through the layer. */
static size_t accesses_in(const struct krec *k, uintptr_t lo, uintptr_t hi,
                          struct aclsim__gm_range *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < k->n && n < max; i++)
        if (k->r[i].lo < hi && lo < k->r[i].hi)
            out[n++] = (struct aclsim__gm_range){k->r[i].lo > lo ? k->r[i].lo : lo,
                                                 k->r[i].hi < hi ? k->r[i].hi : hi, k->r[i].how};
    if (!n && max)
        out[n++] = (struct aclsim__gm_range){lo, hi, USE};
    return n;
}

/* A write of one against any access of the other, inside the allocation:
 * the bytes and how each of k (*kh) and o (*oh) accesses them. */
static bool kernels_conflict(const struct krec *k, const struct krec *o, uintptr_t lo,
                             uintptr_t hi, uintptr_t *clo, uintptr_t *chi, uint8_t *kh,
                             uint8_t *oh)
{
    struct aclsim__gm_range kr[64], xr[64];
    size_t kn = accesses_in(k, lo, hi, kr, 64), on = accesses_in(o, lo, hi, xr, 64);
    if (kr[0].how == USE && xr[0].how == USE)
        return false;   /* neither used the layer: how is not known */
    for (size_t i = 0; i < kn; i++)
        for (size_t j = 0; j < on; j++) {
            if (kr[i].how != WRITE && xr[j].how != WRITE)
                continue;
            if (kr[i].hi <= xr[j].lo || xr[j].hi <= kr[i].lo)
                continue;
            *clo = kr[i].lo > xr[j].lo ? kr[i].lo : xr[j].lo;
            *chi = kr[i].hi < xr[j].hi ? kr[i].hi : xr[j].hi;
            *kh = kr[i].how;
            *oh = xr[j].how;
            return true;
        }
    return false;
}

bool aclsim__check_race_kernel(struct aclsim__stream *s, const struct aclsim__task *t,
                               const struct aclsim__gm_range *r, size_t n, char *why,
                               size_t len)
{
    /* The task's sequence number: the first after what s completed whose
     * low 32 bits are its id. */
    uint64_t c = atomic_load_explicit(&s->completed, memory_order_acquire);
    uint64_t seq = c + (uint32_t)(t->id - (uint32_t)c);
    struct access me = {s, seq, 0, 0, USE, t->kind, t->id, s->id, t->label, s->handle,
                        s->is_default, s->device->id};
    struct aclsim__gm_range *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (copy)
        memcpy(copy, r, n * sizeof *copy);
    bool raced = false;
    struct access other;
    struct kpair found;
    uintptr_t clo = 0, chi = 0;
    uint8_t kh = 0, oh = 0;
    pthread_mutex_lock(&race_lock);
    struct krec *k = krec_of(&me, true);
    if (k) {
        k->done = true;
        k->r = copy;
        k->n = copy ? n : 0;
        copy = NULL;
        for (unsigned i = 0; i < k->npairs;) {
            struct kpair *p = k->pairs[i];
            struct krec *o = p->x == k ? p->y : p->x;
            if (!o->done) {   /* the other one still runs: it compares */
                i++;
                continue;
            }
            if (!raced && kernels_conflict(k, o, p->a.addr, p->a.addr + p->a.size, &clo, &chi,
                                           &kh, &oh)) {
                raced = true;
                other = o->info;
                other.how = oh;
                found = *p;
            }
            pair_drop(p);   /* (k->pairs[i] is another one now) */
        }
    }
    kernels_tidy();
    pthread_mutex_unlock(&race_lock);
    free(copy);
    if (!raced)
        return false;
    char what[600], first[200];
    aclsim__check_describe_alloc(&found.a, found.device, what, sizeof what);
    describe_access(&other, first, sizeof first);
    const char *bytes_of = kh == USE ? "uses" : how_name(kh);
    snprintf(why, len,
             "aclsim check: race: %s bytes %zu to %zu of %s while %s them, with nothing ordering "
             "them; record an event after the first and make the second stream wait for "
             "it (aclrtRecordEvent, aclrtStreamWaitEvent), or synchronize the first stream "
             "before queuing the second", bytes_of, (size_t)(clo - found.a.addr),
             (size_t)(chi - found.a.addr - 1), what, first);
    return true;
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
    memset(found, 0, sizeof found);   /* (set when a conflict is found; -O3 cannot see it) */
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
        /* A kernel against a kernel or a copy that reads: compared when
         * the kernel ends (or now, if it has). */
        struct access paired;
        for (unsigned r = 0; !x && y.how != WRITE && r < m->nreads && r < READS; r++) {
            const struct access *k = &m->reads[r];
            uint8_t kh;
            if ((k->how == USE || y.how == USE) && k->s && k->s != s && !counted(k) &&
                clock_get(&rs->clock, k->s) < k->seq &&
                pair_add(k, &y, &a, w.kind == ACLSIM_DEVICE ? w.device->id : -1, &kh)) {
                paired = *k;
                paired.how = kh;   /* the kernel wrote what the copy reads */
                x = &paired;
            }
        }
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
    kernels_forget(true);
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
    kernels_forget(false);
    gone_cursor = 0;
    pthread_mutex_init(&race_lock, NULL);
}
