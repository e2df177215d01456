/*
 * Checker mode, kernels (docs/checker.md): a launch runs through
 * aclsim__check_kernel, which
 *  - stale: looks at every pointer-sized argument; one that points at device
 *    memory of a device other than the kernel's (without peer access), or at
 *    device or page-locked memory that is in no live allocation (freed, its
 *    device reset, its binary unloaded), fails the launch without running it,
 *    like the AI Core exception the NPU would raise (507015 at the next
 *    synchronize);
 *  - oob: runs the blocks one after the other on this worker, and after each
 *    block verifies the guard zones of every allocation of the kernel's
 *    device and of page-locked memory (heap.c lays them out poisoned). The
 *    first block after which a guard zone changed is the one that wrote it:
 *    the launch fails with 507015 and the report names the block, the
 *    variable or allocation, and the bytes.
 * And, for kernels written with the Ascend C layer, the layer's hook
 * aclsimCheckGm (include/ascendc/aclsim_check.h) sees each GM access of
 * DataCopy, DataCopyPad and GlobalTensor: oob reports an access outside its
 * allocation (or past the GlobalTensor's size) at the access and skips it;
 * uninit reports a read of bytes nothing wrote; race collects the bytes the
 * launch read and wrote, which check-race.c compares with those of kernels
 * of other streams when the kernel ends.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascendc/aclsim_check.h"

_Static_assert((unsigned)ACLSIM_GM_CHECK_OOB == (unsigned)ACLSIM_CHECK_OOB &&
               (unsigned)ACLSIM_GM_CHECK_RACE == (unsigned)ACLSIM_CHECK_RACE &&
               (unsigned)ACLSIM_GM_CHECK_UNINIT == (unsigned)ACLSIM_CHECK_UNINIT,
               "include/ascendc/aclsim_check.h's bits differ from the runtime's");

#define POISON 0xfdu

/* Offsets [lo, hi] of the bytes of [p, p + n) that are not POISON. (Read
 * while a buggy kernel's other blocks may still write there: ACLSIM_NO_TSAN.) */
ACLSIM_NO_TSAN static bool changed(const volatile unsigned char *p, size_t n, size_t *lo,
                                   size_t *hi)
{
    size_t i = 0;
    while (i < n && p[i] == POISON)
        i++;
    if (i == n)
        return false;
    size_t j = n;
    while (j > i && p[j - 1] == POISON)   /* (bounded: the block checker and a free's check
                                           * may re-poison between the two loops) */
        j--;
    *lo = i;
    *hi = j - 1;
    return true;
}

bool aclsim__check_guards(const struct aclsim__alloc *a, char *text, size_t len)
{
    /* (Through the alias: a page-locked buffer's pages may be protected.) */
    unsigned char *front = aclsim__check_alias((const void *)(a->addr - a->lead));
    unsigned char *back = (unsigned char *)aclsim__check_alias((const void *)a->addr) + a->size;
    size_t back_len = a->span - a->lead - a->size, lo, hi;
    bool bad_front = changed(front, a->lead, &lo, &hi);
    if (bad_front) {
        snprintf(text, len, "offsets -%zu to -%zu (before its start)", a->lead - lo,
                 a->lead - hi);
    }
    size_t blo, bhi;
    bool bad_back = changed(back, back_len, &blo, &bhi);
    if (bad_back && !bad_front)
        snprintf(text, len, "offsets %zu to %zu (past its end)", a->size + blo,
                 a->size + bhi);
    if (bad_front || bad_back)
        aclsim__check_poison_guards(a);   /* reported once (the contents stay as they are) */
    return !bad_front && !bad_back;
}

/* Bytes a launch read or wrote through the Ascend C layer: sorted, disjoint,
 * adjacent ranges merged. At most RSET_MAX ranges (a launch touching more
 * scattered places is not followed further: fewer races found, never a false
 * one). */
#define RSET_MAX 65536u
struct rset { struct aclsim__gm_range *r; size_t n, cap; };

static void rset_add(struct rset *set, uintptr_t lo, uintptr_t hi, uint8_t how)
{
    size_t a = 0, b = set->n;   /* the first range ending at or after lo */
    while (a < b) {
        size_t m = (a + b) / 2;
        if (set->r[m].hi < lo)
            a = m + 1;
        else
            b = m;
    }
    size_t j = a;
    while (j < set->n && set->r[j].lo <= hi) {   /* overlapping or adjacent: merged */
        if (set->r[j].lo < lo)
            lo = set->r[j].lo;
        if (set->r[j].hi > hi)
            hi = set->r[j].hi;
        j++;
    }
    if (j == a) {   /* a new range at a */
        if (set->n == set->cap) {
            size_t cap = set->cap ? set->cap * 2 : 16;
            struct aclsim__gm_range *r = cap <= RSET_MAX ? realloc(set->r, cap * sizeof *r) : NULL;
            if (!r)
                return;
            set->r = r;
            set->cap = cap;
        }
        memmove(&set->r[a + 1], &set->r[a], (set->n - a) * sizeof *set->r);
        set->n++;
    } else {   /* [a, j) become one */
        memmove(&set->r[a + 1], &set->r[j], (set->n - j) * sizeof *set->r);
        set->n -= j - a - 1;
    }
    set->r[a] = (struct aclsim__gm_range){lo, hi, how};
}

/* A launch being checked: registered by aclsim__check_kernel for the time
 * its blocks run (on this worker and helpers). The first block at whose end
 * a guard zone was found changed is the culprit, or -- when blocks ran in
 * parallel -- one of the blocks running at the same time. Verification is
 * serialised (verify_lock): the checker's reads and re-poisoning never race
 * each other. The Ascend C layer's hook finds the launch of the block it
 * runs in (launch_of, without a lock) and records under the launch's lock. */
struct launch {
    const struct aclsim__task *task;
    bool found;
    uint32_t block;
    struct aclsim__alloc alloc;
    int device;
    char bytes[128];
    pthread_mutex_t lock;
    atomic_bool at_access;     /* aclsimCheckGm reported (the first report wins) */
    const char *detector;
    char why[1000];
    struct rset reads, writes;
};
#define MAX_LAUNCHES 64   /* kernels running at once: devices x workers */
static _Atomic(struct launch *) launches[MAX_LAUNCHES];
static pthread_mutex_t verify_lock = PTHREAD_MUTEX_INITIALIZER;

struct visiting { struct launch *l; struct aclsim__heap *h; };

static void visit(const struct aclsim__alloc *a, void *arg)
{
    struct visiting *v = arg;
    if (v->l->found || !a->lead)
        return;
    if (!aclsim__check_guards(a, v->l->bytes, sizeof v->l->bytes)) {
        v->l->found = true;
        v->l->alloc = *a;
        v->l->device = aclsim__check_heap_device(v->h);
    }
}

void aclsim__check_block_done(struct aclsim__device *dev, struct aclsim__task *t,
                              uint32_t index)
{
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_OOB))
        return;
    pthread_mutex_lock(&verify_lock);
    struct launch *l = NULL;
    for (int i = 0; i < MAX_LAUNCHES && !l; i++) {
        struct launch *x = atomic_load(&launches[i]);
        if (x && x->task == t)
            l = x;
    }
    if (l && !l->found) {
        struct visiting v = {l, &dev->heap};
        aclsim__heap_visit(&dev->heap, visit, &v);
        v.h = &aclsim__host_heap;
        aclsim__heap_visit(&aclsim__host_heap, visit, &v);
        if (l->found)
            l->block = index;
    }
    pthread_mutex_unlock(&verify_lock);
}

static bool launch_begin(struct launch *l)
{
    bool ok = false;
    pthread_mutex_lock(&verify_lock);
    for (int i = 0; i < MAX_LAUNCHES && !ok; i++)
        if (!atomic_load(&launches[i])) {
            atomic_store(&launches[i], l);
            ok = true;
        }
    pthread_mutex_unlock(&verify_lock);
    return ok;
}

static void launch_end(struct launch *l)
{
    pthread_mutex_lock(&verify_lock);
    for (int i = 0; i < MAX_LAUNCHES; i++)
        if (atomic_load(&launches[i]) == l)
            atomic_store(&launches[i], NULL);
    pthread_mutex_unlock(&verify_lock);
}

/* ---- the Ascend C layer's accesses (aclsimCheckGm) ------------------------------- */

static struct launch *launch_of(const struct aclsim__task *t)
{
    for (int i = 0; i < MAX_LAUNCHES; i++) {
        struct launch *x = atomic_load_explicit(&launches[i], memory_order_acquire);
        if (x && x->task == t)
            return x;
    }
    return NULL;
}

/* Keeps the first report of the launch (detector, and why after
 * "aclsim check: "). */
static void report_access(struct launch *l, const char *detector, const char *why)
{
    pthread_mutex_lock(&l->lock);
    if (!atomic_load(&l->at_access)) {
        l->detector = detector;
        /* (a longer report is cut; its start says what happened) */
        snprintf(l->why, sizeof l->why, "aclsim check: %.*s",
                 (int)(sizeof l->why - sizeof "aclsim check: "), why);
        atomic_store(&l->at_access, true);
    }
    pthread_mutex_unlock(&l->lock);
}

struct near { uintptr_t p; struct aclsim__alloc a; bool found; };

static void visit_near(const struct aclsim__alloc *a, void *arg)
{
    struct near *n = arg;
    if (!n->found && a->lead && n->p - (a->addr - a->lead) < a->span) {
        n->a = *a;
        n->found = true;
    }
}

static const char *verb(int how)
{
    return how == ACLSIM_GM_READ ? "reads" : how == ACLSIM_GM_WRITE ? "writes" : "accesses";
}

/* oob: whether [lo, hi) (the access from base, off bytes into the
 * GlobalTensor) leaves base's allocation or the GlobalTensor's limit; if so
 * it is reported (the first one of the launch) and skipped. */
static bool out_of_bounds(struct launch *l, struct aclsim__heap *h, const void *base, bool in,
                          const struct aclsim__alloc *a, uintptr_t lo, uintptr_t hi,
                          uint64_t limit, uint64_t off, int how, const char *api)
{
    uintptr_t end = in ? a->addr + a->size : 0;
    if (in && hi <= end && (limit == UINT64_MAX || off + (hi - lo) <= limit))
        return false;
    if (atomic_load(&l->at_access))
        return true;   /* reported already: skipped all the same */
    char head[200], what[600], why[1000];
    snprintf(head, sizeof head, "out of bounds: block %u of %u: %s %s", aclsim__tls_block_idx,
             aclsim__tls_block_num, api, verb(how));
    int device = aclsim__check_heap_device(h);
    struct near n = {.p = (uintptr_t)base};
    if (!in) {   /* base itself is outside: a guard zone, or nothing live */
        aclsim__heap_visit(h, visit_near, &n);
        if (n.found) {
            a = &n.a;
            end = a->addr + a->size;
        }
    }
    if (in || n.found) {
        aclsim__check_describe_alloc(a, device, what, sizeof what);
        long long from = (long long)(lo - a->addr), to = (long long)(hi - a->addr) - 1;
        if (hi > end || lo < a->addr)
            snprintf(why, sizeof why, "%s offsets %lld to %lld of %s (%s); the access was skipped",
                     head, from, to, what, lo < a->addr ? "before its start" : "past its end");
        else
            snprintf(why, sizeof why, "%s bytes %llu to %llu of the GlobalTensor, past the %llu "
                     "bytes given to SetGlobalBuffer (offsets %lld to %lld of %s); the access "
                     "was skipped", head, (unsigned long long)off,
                     (unsigned long long)(off + (hi - lo) - 1), (unsigned long long)limit, from,
                     to, what);
    } else {
        if (!aclsim__check_gone(base, what, sizeof what))
            snprintf(what, sizeof what, "%p is in no live allocation (never allocated)", base);
        snprintf(why, sizeof why, "%s %p to %p, outside any live allocation: %s; the access "
                 "was skipped", head, (void *)lo, (void *)(hi - 1), what);
    }
    report_access(l, "oob", why);
    return true;
}

int aclsimCheckGm(const void *base, uint64_t limit, uint64_t off, uint64_t count, uint64_t len,
                  uint64_t step, int how, const char *api)
{
    unsigned mask = aclsim__checking() & (ACLSIM_CHECK_OOB | ACLSIM_CHECK_UNINIT | ACLSIM_CHECK_RACE);
    const struct aclsim__task *t = mask && count && len ? aclsim__running_kernel_task() : NULL;
    struct launch *l = t ? launch_of(t) : NULL;
    struct aclsim__heap *h = l ? aclsim__check_heap_of(aclsim__classify(base)) : NULL;
    if (!h)
        return 0;   /* (host memory, mapped or managed memory: not followed) */
    uintptr_t lo = (uintptr_t)base + off, hi = lo + (count - 1) * step + len;
    struct aclsim__alloc a;
    bool in = aclsim__heap_find(h, base, &a);
    if ((mask & ACLSIM_CHECK_OOB) &&
        out_of_bounds(l, h, base, in, &a, lo, hi, limit, off, how, api))
        return 1;
    if (!in)
        return 0;
    if ((mask & ACLSIM_CHECK_UNINIT) && how == ACLSIM_GM_READ && !atomic_load(&l->at_access)) {
        uintptr_t first = 0, last = 0;
        for (uint64_t i = 0; i < count && !first; i++)
            aclsim__check_unwritten(&a, lo + i * step, lo + i * step + len, false, &first, &last);
        if (first) {
            char what[600], why[1000];
            aclsim__check_describe_alloc(&a, aclsim__check_heap_device(h), what, sizeof what);
            snprintf(why, sizeof why, "uninit: block %u of %u: %s reads bytes %zu to %zu of %s, which "
                     "nothing has written (allocation contents are undefined on an NPU)",
                     aclsim__tls_block_idx, aclsim__tls_block_num, api,
                     (size_t)(first - a.addr), (size_t)(last - a.addr - 1), what);
            report_access(l, "uninit", why);
        }
    }
    if (mask & ACLSIM_CHECK_RACE) {
        pthread_mutex_lock(&l->lock);
        struct rset *set = how == ACLSIM_GM_WRITE ? &l->writes : &l->reads;
        uint8_t kind = how == ACLSIM_GM_WRITE ? ACLSIM_GM_WRITE : ACLSIM_GM_READ;
        if (step == len)
            rset_add(set, lo, hi, kind);
        else
            for (uint64_t i = 0; i < count; i++)
                rset_add(set, lo + i * step, lo + i * step + len, kind);
        pthread_mutex_unlock(&l->lock);
    }
    return 0;
}

/* stale: the first argument of t that points where the kernel must not go;
 * why gets the report. */
static bool stale_argument(struct aclsim__stream *s, const struct aclsim__task *t, char *why,
                           size_t len)
{
    const aclsimKernel *k = t->u.kernel.kernel;
    void *const *args = t->u.kernel.argbuf;
    struct aclsim__device *dev = s->device;
    for (uint32_t i = 0; args && i < k->num_params; i++) {
        if (k->param_size[i] != sizeof(void *))
            continue;
        void *p;
        memcpy(&p, args[i], sizeof p);
        if (!p)
            continue;
        struct aclsim__where w = aclsim__classify(p);
        struct aclsim__heap *h = aclsim__check_heap_of(w);
        if (!h)
            continue;
        struct aclsim__alloc a;
        char what[600];
        bool live = aclsim__heap_find(h, p, &a) ||
                    /* one past the end (an end pointer) is fine */
                    (aclsim__heap_find(h, (const char *)p - 1, &a) &&
                     (uintptr_t)p == a.addr + a.size);
        if (w.kind == ACLSIM_DEVICE && w.device != dev &&
            !(atomic_load(&dev->peers) & (1u << w.device->id))) {
            if (live)
                aclsim__check_describe_alloc(&a, w.device->id, what, sizeof what);
            else
                snprintf(what, sizeof what, "device %d memory", w.device->id);
            snprintf(why, len,
                     "aclsim check: stale pointer: argument %u (%p) is in %s, not memory of "
                     "device %d that the kernel runs on (no peer access)", i, p, what, dev->id);
            return true;
        }
        if (live)
            continue;
        if (!aclsim__check_gone(p, what, sizeof what))
            snprintf(what, sizeof what, "%p is in no live allocation (never allocated)", p);
        snprintf(why, len, "aclsim check: stale pointer: argument %u: %s", i, what);
        return true;
    }
    return false;
}

static void fault(struct aclsim__fault_detail *d, const struct aclsim__task *t, const char *detector,
                  const char *why, struct aclsim__stream *s)
{
    snprintf(d->why, sizeof d->why, "%s", why);
    d->args = t->u.kernel.argbuf;
    d->args_len = 0;
    d->func = t->u.kernel.kernel->handle;
    char text[1200], stream[64];
    aclsim__check_stream_name(s->is_default, s->handle, s->id, stream, sizeof stream);
    const char *rest = why + strlen("aclsim check: ");   /* (and "<detector>: ", if there) */
    if (!strncmp(rest, detector, strlen(detector)) && !strncmp(rest + strlen(detector), ": ", 2))
        rest += strlen(detector) + 2;
    snprintf(text, sizeof text, "kernel %s (task %u) on device %d, %s: %s",
             t->u.kernel.kernel->name, t->id, s->device->id, stream, rest);
    aclsim__check_print(detector, text);
}

/* The launch's layer accesses, reads and writes in one array (NULL: none). */
static struct aclsim__gm_range *accesses(struct launch *l, size_t *n)
{
    *n = l->reads.n + l->writes.n;
    struct aclsim__gm_range *r = *n ? malloc(*n * sizeof *r) : NULL;
    if (r) {
        if (l->reads.n)
            memcpy(r, l->reads.r, l->reads.n * sizeof *r);
        if (l->writes.n)
            memcpy(r + l->reads.n, l->writes.r, l->writes.n * sizeof *r);
    } else {
        *n = 0;
    }
    free(l->reads.r);
    free(l->writes.r);
    return r;
}

aclError aclsim__check_kernel(struct aclsim__stream *s, struct aclsim__task *t,
                              struct aclsim__fault_detail *d)
{
    unsigned mask = aclsim__checking();
    char why[1000];
    if ((mask & ACLSIM_CHECK_STALE) && stale_argument(s, t, why, sizeof why)) {
        fault(d, t, "stale", why, s);
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    if (!(mask & (ACLSIM_CHECK_OOB | ACLSIM_CHECK_UNINIT | ACLSIM_CHECK_RACE)))
        return aclsim__execute_kernel(s->device, t, d);
    struct launch l = {.task = t};
    pthread_mutex_init(&l.lock, NULL);
    bool tracked = launch_begin(&l);   /* (more launches at once than slots: unchecked) */
    aclError code = aclsim__execute_kernel(s->device, t, d);
    if (tracked)
        launch_end(&l);
    pthread_mutex_destroy(&l.lock);
    size_t n;
    struct aclsim__gm_range *r = accesses(&l, &n);
    /* race: compared with kernels of other streams (an untracked launch is
     * not: its accesses are unknown; it counts as discarded). */
    char race[1000];
    bool raced = tracked && (mask & ACLSIM_CHECK_RACE) &&
                 aclsim__check_race_kernel(s, t, r, n, race, sizeof race);
    free(r);
    if (atomic_load(&l.at_access)) {   /* found at the access: before anything after it */
        fault(d, t, l.detector, l.why, s);
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    if (code)
        return code;
    if (l.found) {
        char what[600];
        aclsim__check_describe_alloc(&l.alloc, l.device, what, sizeof what);
        bool parallel = t->u.kernel.blocks > 1 && t->u.kernel.cores != 1 && s->device->nworkers > 1;
        snprintf(why, sizeof why, "aclsim check: out of bounds: block %u of %u%s wrote %s of %s",
                 l.block, t->u.kernel.blocks,
                 parallel ? " (or a block running at the same time)" : "", l.bytes, what);
        fault(d, t, "oob", why, s);
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    if (raced) {
        fault(d, t, "race", race, s);
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    return ACL_SUCCESS;
}

/* After fork(), in the child (THE FORK RULE): the parent's launches are not
 * the child's, and verify_lock may have been held by one of its workers. */
void aclsim__check_kernel_forget_after_fork(void)
{
    for (int i = 0; i < MAX_LAUNCHES; i++)
        atomic_store(&launches[i], NULL);
    pthread_mutex_init(&verify_lock, NULL);
}
