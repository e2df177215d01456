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
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define POISON 0xfdu

/* Offsets [lo, hi] of the bytes of [p, p + n) that are not POISON. */
static bool changed(const unsigned char *p, size_t n, size_t *lo, size_t *hi)
{
    size_t i = 0;
    while (i < n && p[i] == POISON)
        i++;
    if (i == n)
        return false;
    size_t j = n;
    while (p[j - 1] == POISON)
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
        aclsim__check_poison(a);   /* reported once */
    return !bad_front && !bad_back;
}

/* A launch being checked: registered by aclsim__check_kernel for the time
 * its blocks run (on this worker and helpers). The first block at whose end
 * a guard zone was found changed is the culprit, or -- when blocks ran in
 * parallel -- one of the blocks running at the same time. Verification is
 * serialised (verify_lock): the checker's reads and re-poisoning never race
 * each other. */
struct launch {
    const struct aclsim__task *task;
    bool found;
    uint32_t block;
    struct aclsim__alloc alloc;
    int device;
    char bytes[128];
};
#define MAX_LAUNCHES 64   /* kernels running at once: devices x workers */
static struct launch *launches[MAX_LAUNCHES];
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
    for (int i = 0; i < MAX_LAUNCHES && !l; i++)
        if (launches[i] && launches[i]->task == t)
            l = launches[i];
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
        if (!launches[i]) {
            launches[i] = l;
            ok = true;
        }
    pthread_mutex_unlock(&verify_lock);
    return ok;
}

static void launch_end(struct launch *l)
{
    pthread_mutex_lock(&verify_lock);
    for (int i = 0; i < MAX_LAUNCHES; i++)
        if (launches[i] == l)
            launches[i] = NULL;
    pthread_mutex_unlock(&verify_lock);
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
    snprintf(text, sizeof text, "kernel %s (task %u) on device %d, %s: %s",
             t->u.kernel.kernel->name, t->id, s->device->id, stream,
             why + strlen("aclsim check: "));
    aclsim__check_print(detector, text);
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
    if (!(mask & ACLSIM_CHECK_OOB))
        return aclsim__execute_kernel(s->device, t, d);
    struct launch l = {.task = t};
    bool tracked = launch_begin(&l);   /* (more launches at once than slots: unchecked) */
    aclError code = aclsim__execute_kernel(s->device, t, d);
    if (tracked)
        launch_end(&l);
    if (code || !l.found)
        return code;
    char what[600];
    aclsim__check_describe_alloc(&l.alloc, l.device, what, sizeof what);
    bool parallel = t->u.kernel.blocks > 1 && t->u.kernel.cores != 1 && s->device->nworkers > 1;
    snprintf(why, sizeof why, "aclsim check: out of bounds: block %u of %u%s wrote %s of %s",
             l.block, t->u.kernel.blocks,
             parallel ? " (or a block running at the same time)" : "", l.bytes, what);
    fault(d, t, "oob", why, s);
    return ACL_ERROR_RT_AICORE_EXCEPTION;
}

/* After fork(), in the child (THE FORK RULE): the parent's launches are not
 * the child's, and verify_lock may have been held by one of its workers. */
void aclsim__check_kernel_forget_after_fork(void)
{
    memset(launches, 0, sizeof launches);
    pthread_mutex_init(&verify_lock, NULL);
}
