/*
 * Checker mode (ACLSIM_CHECK; docs/checker.md): detectors for the device-
 * memory bugs that an NPU hides. This file holds what they share -- the
 * switch, the names of allocations, the record of allocations that went
 * away -- and the free-pending and stale detectors; check-kernel.c runs
 * kernels with the stale-argument and guard-zone (oob) checks.
 *
 * Hooks (internal.h lists them; each call site is marked "checker hook"):
 * heap.c gives every allocation guard zones and searches free memory by next
 * fit (a freed address is not handed out again soon, so a stale pointer still
 * points at nothing live and can be named), and calls aclsim__check_forget
 * for each allocation that goes away. aclsim__submit counts each queued
 * task's uses of allocations and of mappings of virtual memory,
 * task_release ends them; aclrtFree/FreeHost defer a free while uses remain,
 * vmm.c an unmap (aclsim__check_unmap). aclsim__check_print prints every
 * report and, with ACLSIM_CHECK_STOP, ends the process.
 *
 * Locks: (vmm.c's ranges lock, then) use_lock, then a heap's lock, then
 * history_lock (a leaf). Nothing here calls dladdr (which takes the loader's
 * lock, and dlclose holds that lock while it frees into heaps) with a heap
 * lock held; vmm.c's lock is taken for writing only with no lock of this
 * file held (aclsim__vmm_unmap_deferred).
 */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned aclsim__check_mask;
bool aclsim__check_stop;
_Thread_local const char *aclsim__tls_site_api;
_Thread_local const void *aclsim__tls_site;

#define IMPLEMENTED (ACLSIM_CHECK_OOB | ACLSIM_CHECK_STALE | ACLSIM_CHECK_FREE_PENDING | \
                     ACLSIM_CHECK_RACE | ACLSIM_CHECK_UNINIT | ACLSIM_CHECK_EARLY_HOST)

static const struct { const char *name; unsigned bit; } detectors[] = {
    {"oob", ACLSIM_CHECK_OOB},
    {"stale", ACLSIM_CHECK_STALE},
    {"free-pending", ACLSIM_CHECK_FREE_PENDING},
    {"early-host-access", ACLSIM_CHECK_EARLY_HOST},
    {"race", ACLSIM_CHECK_RACE},
    {"uninit", ACLSIM_CHECK_UNINIT},
};
#define NDETECTORS (sizeof detectors / sizeof detectors[0])

bool aclsim__check_parse(const char *text, unsigned *mask, char *bad, size_t bad_len,
                         bool *unsupported)
{
    *unsupported = false;
    *mask = 0;
    if (!strcmp(text, "0"))
        return true;
    if (!strcmp(text, "1") || !strcmp(text, "all")) {   /* every detector */
        *mask = IMPLEMENTED;
        return true;
    }
    for (const char *p = text;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        size_t i = 0;
        while (i < NDETECTORS && (strlen(detectors[i].name) != n ||
                                  strncmp(detectors[i].name, p, n) != 0))
            i++;
        if (i == NDETECTORS || !(detectors[i].bit & IMPLEMENTED)) {
            *unsupported = i < NDETECTORS;
            snprintf(bad, bad_len, "%.*s", (int)(n < 64 ? n : 64), p);
            return false;
        }
        *mask |= detectors[i].bit;
        if (!end)
            return true;
        p = end + 1;
    }
}

/* ---- naming allocations ---------------------------------------------------- */

/* The logical id of the device whose heap h is, or -1 for page-locked memory. */
int aclsim__check_heap_device(const struct aclsim__heap *h)
{
    for (int d = 0; d < ACLSIM_MAX_DEVICES; d++)
        if (h == &aclsim__devices[d].heap)
            return d;
    return -1;
}

/* "main+0x4c (prog+0x1234)": the code at return address site (the offset in
 * the object is what addr2line -e takes). */
static void describe_site(const void *site, char *buf, size_t len)
{
    Dl_info info;
    const char *at = (const char *)site - 1;   /* inside the call instruction */
    if (!site || !dladdr(at, &info) || !info.dli_fname) {
        snprintf(buf, len, "%p", site);
        return;
    }
    size_t off = (size_t)(at - (const char *)info.dli_fbase);
    const char *object = strrchr(info.dli_fname, '/');
    object = object ? object + 1 : info.dli_fname;
    if (info.dli_sname)
        snprintf(buf, len, "%s+0x%zx (%s+0x%zx)", info.dli_sname,
                 (size_t)(at - (const char *)info.dli_saddr), object, off);
    else
        snprintf(buf, len, "%s+0x%zx", object, off);
}

/* What allocation a is, with its definition or allocation site. Not under a
 * heap lock (dladdr). */
static void describe_named(const struct aclsim__alloc *a, int device, const char *vname,
                           const char *vfile, int vline, char *buf, size_t len)
{
    char where[32];
    if (device >= 0)
        snprintf(where, sizeof where, "device %d", device);
    else
        snprintf(where, sizeof where, "page-locked host memory");
    if (a->kind == ACLSIM_ALLOC_SYMBOL && vname) {
        snprintf(buf, len, "device variable %s (%zu bytes, defined at %s:%d; its instance on %s)",
                 vname, a->size, vfile, vline, where);
        return;
    }
    char site[256];
    if (a->site)
        describe_site(a->site, site, sizeof site);
    snprintf(buf, len, "the %zu-byte allocation %p (%s%s%s, %s)", a->size, (void *)a->addr,
             a->site_api ? a->site_api : "allocated by the runtime",
             a->site ? " called from " : "", a->site ? site : "", where);
}

void aclsim__check_describe_alloc(const struct aclsim__alloc *a, int device, char *buf, size_t len)
{
    const aclsimVar *v = a->kind == ACLSIM_ALLOC_SYMBOL ? a->var : NULL;
    describe_named(a, device, v ? v->name : NULL, v ? v->file : NULL, v ? v->line : 0, buf, len);
}

/* Prints a report to stderr (every report is also the recent error message
 * of the call or synchronize that returns its code). */
void aclsim__check_print(const char *detector, const char *text)
{
    fprintf(stderr, "aclsim check: %s: %s\n", detector, text);
    if (aclsim__check_stop)
        aclsim__check_stop_now();
}

/* ACLSIM_CHECK_STOP: the first report ends the process. Async-signal-safe
 * (check-host.c's SIGSEGV handler calls it): abort() leaves a core dump, and
 * a debugger stops at the culprit. */
void aclsim__check_stop_now(void)
{
    static const char msg[] = "aclsim: stopping at the first checker report (ACLSIM_CHECK_STOP): "
                              "abort()\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    abort();
}

/* ---- the record of allocations that went away ------------------------------ */

#define HISTORY 4096
static struct gone {
    struct aclsim__alloc a;
    int device;
    const char *why;
    /* A variable's name and definition site, copied: its descriptor goes
     * with its binary. */
    char var_name[64], var_file[192];
    int var_line;
} history[HISTORY];
static size_t history_next, history_count;
static uint64_t history_total;   /* records ever made this session */
static pthread_mutex_t history_lock = PTHREAD_MUTEX_INITIALIZER;

size_t aclsim__check_lead(size_t align)
{
    return align > 64 ? align : 64;
}

#define POISON 0xfdu

/* (Byte by byte, untracked by TSan: the block checker re-poisons while a
 * buggy kernel's other blocks may still write there, ACLSIM_NO_TSAN.) */
ACLSIM_NO_TSAN void aclsim__check_poison_guards(const struct aclsim__alloc *a)
{
    /* (Through the alias: a page-locked buffer's pages may be protected.) */
    volatile unsigned char *start = aclsim__check_alias((const void *)(a->addr - a->lead));
    for (size_t i = 0; i < a->lead; i++)
        start[i] = POISON;
    volatile unsigned char *tail = start + a->lead + a->size;
    for (size_t i = 0, n = a->span - a->lead - a->size; i < n; i++)
        tail[i] = POISON;
}

void aclsim__check_poison(const struct aclsim__alloc *a)
{
    aclsim__check_poison_guards(a);
    aclsim__check_fill(a);   /* uninit: check-uninit.c */
}

void aclsim__check_forget(struct aclsim__heap *h, const struct aclsim__alloc *a, const char *why)
{
    pthread_mutex_lock(&history_lock);
    struct gone *g = &history[history_next];
    g->a = *a;
    g->device = aclsim__check_heap_device(h);
    g->why = why;
    g->var_name[0] = g->var_file[0] = 0;
    g->var_line = 0;
    if (a->kind == ACLSIM_ALLOC_SYMBOL && a->var) {
        snprintf(g->var_name, sizeof g->var_name, "%s", a->var->name);
        snprintf(g->var_file, sizeof g->var_file, "%s", a->var->file);
        g->var_line = a->var->line;
    }
    history_next = (history_next + 1) % HISTORY;
    if (history_count < HISTORY)
        history_count++;
    history_total++;
    pthread_mutex_unlock(&history_lock);
}

size_t aclsim__check_gone_since(uint64_t *cursor, uintptr_t *addrs, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&history_lock);
    if (*cursor > history_total || history_total - *cursor > history_count)
        *cursor = history_total - history_count;   /* (older ones were overwritten) */
    while (*cursor < history_total && n < max) {
        size_t back = (size_t)(history_total - *cursor);
        addrs[n++] = history[(history_next + HISTORY - back) % HISTORY].a.addr;
        (*cursor)++;
    }
    pthread_mutex_unlock(&history_lock);
    return n;
}

/* The newest record of an allocation whose reserved bytes held p. */
static bool history_find(const void *p, struct gone *out)
{
    bool found = false;
    pthread_mutex_lock(&history_lock);
    for (size_t k = 1; k <= history_count && !found; k++) {
        const struct gone *g = &history[(history_next + HISTORY - k) % HISTORY];
        uintptr_t start = g->a.addr - g->a.lead;
        if ((uintptr_t)p - start < g->a.span) {
            *out = *g;
            found = true;
        }
    }
    pthread_mutex_unlock(&history_lock);
    return found;
}

bool aclsim__check_gone(const void *p, char *text, size_t len)
{
    struct gone g;
    if (!history_find(p, &g))
        return false;
    char what[512];
    describe_named(&g.a, g.device, g.var_name[0] ? g.var_name : NULL, g.var_file, g.var_line,
                   what, sizeof what);
    snprintf(text, len, "%p points %s %s, which was %s", p,
             (uintptr_t)p - g.a.addr < g.a.size ? "into" : "at the guard zone of", what, g.why);
    return true;
}

void aclsim__check_describe_stale(const void *p, char *buf, size_t len)
{
    char text[700];
    buf[0] = 0;
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_STALE) || !aclsim__check_gone(p, text, sizeof text))
        return;
    /* Not printed: the call fails with 100000 with or without the checker;
     * the checker only says what the address was. */
    snprintf(buf, len, "; aclsim check: stale pointer: %s", text);
}

/* ---- stale: a device variable's instance on another device -------------------- */

/* Device memory of a device other than the current one, that the current
 * one has no peer access to. The current device: NULL when there is no
 * current context (the check is skipped).
 *
 * For copies and memsets only the instances of device variables count: the
 * runtime routes a copy by the address, so a copy into an aclrtMalloc buffer
 * of another device is well defined (and the test suite relies on it); an
 * instance address kept across aclrtSetDevice, though, is the classic bug
 * (the program means the variable of the device now current). */
static bool foreign(struct aclsim__where w, const struct aclsim__device *cur)
{
    return w.kind == ACLSIM_DEVICE && cur && w.device != cur &&
           !(atomic_load_explicit(&((struct aclsim__device *)cur)->peers, memory_order_relaxed) &
             (1u << w.device->id));
}

aclError aclsim__check_devices(const char *api, const void *dst, struct aclsim__where wd,
                               const void *src, struct aclsim__where ws, int kind)
{
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_STALE))
        return ACL_SUCCESS;
    void *h = aclsim__current_handle();
    struct aclsim__context *ctx = h ? aclsim__handle_get(h, ACLSIM_H_CONTEXT) : NULL;
    if (!ctx)
        return ACL_SUCCESS;
    const struct aclsim__device *cur = aclsim__context_device(ctx);
    /* A device-to-device copy between the current device and another one is
     * a peer copy: CANN's INTER_DEVICE kind (or DEVICE_TO_DEVICE/DEFAULT). */
    bool d2d = wd.kind == ACLSIM_DEVICE && ws.kind == ACLSIM_DEVICE &&
               (kind == ACL_MEMCPY_INTER_DEVICE_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE ||
                kind == ACL_MEMCPY_DEFAULT) &&
               (wd.device == cur || ws.device == cur);
    if (d2d)
        return ACL_SUCCESS;
    const char *name = foreign(wd, cur) ? "dst" : foreign(ws, cur) ? "src" : NULL;
    if (!name)
        return ACL_SUCCESS;
    const void *p = name[0] == 'd' ? dst : src;
    struct aclsim__where w = name[0] == 'd' ? wd : ws;
    struct aclsim__alloc a;
    if (!aclsim__heap_find(&w.device->heap, p, &a) || a.kind != ACLSIM_ALLOC_SYMBOL || !a.var)
        return ACL_SUCCESS;
    char what[512];
    aclsim__check_describe_alloc(&a, w.device->id, what, sizeof what);
    char text[900];
    snprintf(text, sizeof text,
             "stale pointer: %s %p is in %s, but the current device is %d: the address was "
             "taken (aclrtGetSymbolAddress, aclrtBinaryGetGlobal) while device %d was current; "
             "take it again on device %d, or use the symbol functions (aclrtMemcpyToSymbol)",
             name, p, what, cur->id, w.device->id, cur->id);
    aclsim__check_print("stale", text);
    return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "aclsim check: %s", text);
}

/* ---- free-pending: queued work still using an allocation ---------------------- */

/* An allocation, or a mapping of reserved virtual memory, with queued work
 * on it: how many tasks, the latest of them, and whether its free (unmap)
 * waits for them. Under use_lock. */
struct use {
    struct use *next;
    uintptr_t addr;
    struct aclsim__heap *heap;   /* NULL: a mapping (vmm.c) */
    uint8_t kind;             /* enum aclsim__alloc_kind */
    bool deferred;            /* freed (unmapped): that happens when pending drops to 0 */
    uint32_t pending;
    /* The latest task, for the report. */
    uint8_t task_kind;
    uint32_t task_id, stream_id;
    int32_t device;
    const char *label;
    const void *stream_handle;
    bool default_stream;
    /* early-host-access (check-host.c), page-locked memory: pending tasks
     * that do not run through the alias (not copies or memsets), and the
     * latest slot of its protected pages (-1: none). */
    uint32_t others;
    int slot;
};
#define USE_BUCKETS 1024u
static struct use *uses[USE_BUCKETS];
static pthread_mutex_t use_lock = PTHREAD_MUTEX_INITIALIZER;

static struct use **use_slot(uintptr_t addr)
{
    struct use **u = &uses[(addr >> 6) * 0x9E3779B97F4A7C15ull >> 54 & (USE_BUCKETS - 1)];
    while (*u && (*u)->addr != addr)
        u = &(*u)->next;
    return u;
}

/* A pointer a task reads or writes, and how many bytes from there (0: not
 * known, a kernel's argument). */
struct ref {
    const void *p;
    size_t n;
};

/* The pointers task t reads or writes (at most max). */
static int task_refs(const struct aclsim__task *t, struct ref *out, int max)
{
    int n = 0;
    switch (t->kind) {
    case ACLSIM_TASK_COPY:
        out[n++] = (struct ref){t->u.copy.dst, t->bytes};
        out[n++] = (struct ref){t->u.copy.src, t->bytes};
        break;
    case ACLSIM_TASK_MEMSET:
        out[n++] = (struct ref){t->u.memset.dst, t->bytes};
        break;
    case ACLSIM_TASK_COPY2D: {
        size_t w = t->u.copy2d.width, rows = w ? t->bytes / w : 0;
        out[n++] = (struct ref){t->u.copy2d.dst, rows ? t->u.copy2d.dpitch * (rows - 1) + w : 0};
        out[n++] = (struct ref){t->u.copy2d.src, rows ? t->u.copy2d.spitch * (rows - 1) + w : 0};
        break;
    }
    case ACLSIM_TASK_MEMSET32:
        out[n++] = (struct ref){t->u.memset32.dst, t->bytes};
        break;
    case ACLSIM_TASK_REDUCE:
        out[n++] = (struct ref){t->u.reduce.dst, t->bytes};
        out[n++] = (struct ref){t->u.reduce.src, t->bytes};
        break;
    case ACLSIM_TASK_OVERFLOW:
        out[n++] = (struct ref){t->u.overflow.dst, t->bytes};
        break;
    case ACLSIM_TASK_KERNEL: {
        const aclsimKernel *k = t->u.kernel.kernel;
        void *const *args = t->u.kernel.argbuf;
        for (uint32_t i = 0; args && i < k->num_params && n < max; i++)
            if (k->param_size[i] == sizeof(void *)) {
                memcpy(&out[n].p, args[i], sizeof(void *));
                out[n++].n = 0;
            }
        break;
    }
    default:
        break;
    }
    return n;
}

struct aclsim__heap *aclsim__check_heap_of(struct aclsim__where w)
{
    return w.kind == ACLSIM_DEVICE ? &w.device->heap
           : w.kind == ACLSIM_PINNED ? &aclsim__host_heap : NULL;
}

const char *aclsim__check_task_name(uint8_t kind)
{
    switch (kind) {
    case ACLSIM_TASK_COPY: return "copy";
    case ACLSIM_TASK_MEMSET: return "memset";
    case ACLSIM_TASK_KERNEL: return "kernel";
    case ACLSIM_TASK_COPY2D: return "2D copy";
    case ACLSIM_TASK_MEMSET32: return "32-bit memset";
    case ACLSIM_TASK_REDUCE: return "reduce";
    case ACLSIM_TASK_OVERFLOW: return "overflow status read";
    default: return "task";
    }
}

void aclsim__check_stream_name(bool is_default, const void *handle, uint32_t id, char *buf,
                               size_t len)
{
    if (is_default)
        snprintf(buf, len, "the default stream (id %u)", id);
    else
        snprintf(buf, len, "stream %p (id %u)", handle, id);
}

/* The heap allocation containing p, if p is device or page-locked memory
 * (p may be the runtime's alias of page-locked memory, check-host.c). */
static struct aclsim__heap *alloc_of(const void *p, struct aclsim__alloc *a)
{
    p = p ? aclsim__check_unalias(p) : NULL;
    struct aclsim__heap *h = p ? aclsim__check_heap_of(aclsim__classify(p)) : NULL;
    return h && aclsim__heap_find(h, p, a) && a->lead ? h : NULL;
}

/* early-host-access: task t (on stream s) starting to use (delta 1) or no
 * longer using (-1) the bytes [p, p + n) of u, a page-locked allocation of
 * size bytes: their pages are protected while it is pending (check-host.c).
 * Under use_lock. */
static void host_protection(struct use *u, size_t size, const struct aclsim__task *t,
                            const struct aclsim__stream *s, int delta, const void *p, size_t n)
{
    if (u->heap != &aclsim__host_heap || !__atomic_load_n(&u->heap->alias, __ATOMIC_ACQUIRE) ||
        !aclsim__check_protectable(t->kind))
        return;
    uintptr_t from = (uintptr_t)aclsim__check_unalias(p), to = from + (n ? n : size);
    from = from < u->addr ? u->addr : from;
    to = to > u->addr + size || to < from ? u->addr + size : to;
    const struct aclsim__stream *on = s ? s : t->check_stream;
    if (delta < 0) {
        aclsim__check_unprotect(u->slot, u->addr, from, to, on);
        return;
    }
    int again = aclsim__check_protect_again(u->slot, u->addr, from, to, on);
    if (again >= 0) {
        u->slot = again;
        return;
    }
    struct aclsim__alloc a = {.addr = u->addr, .size = size, .kind = u->kind};
    char what[600], stream[64], report[900];
    if (!aclsim__heap_find(u->heap, (void *)u->addr, &a))
        return;
    aclsim__check_describe_alloc(&a, -1, what, sizeof what);
    aclsim__check_stream_name(s->is_default, s->handle, s->id, stream, sizeof stream);
    snprintf(report, sizeof report,
             "host code touched %s while %s (task %u) on %s of device %d, queued and not yet "
             "done, still uses it; synchronize the stream (or an event recorded after that "
             "task) before touching the buffer", what, aclsim__check_task_name(t->kind),
             t->id, stream, s->device->id);
    u->slot = aclsim__check_protect(u->addr, from, to, s, u->others == 0, report);
}

/* A task's uses being counted (submitted: s, delta 1) or ended (released:
 * delta -1), and the deferred unmaps that became due. */
struct visit {
    struct aclsim__stream *s;
    const struct aclsim__task *t;
    int delta;
    int nunmap;
    uintptr_t unmap[32];   /* (a task spanning more mappings leaves the rest mapped) */
};

/* Counts or ends v's use of the allocation or mapping at addr (size bytes),
 * the bytes [p, p + n) of it (n 0: not known). Under use_lock. */
static void count_use(struct visit *v, uintptr_t addr, struct aclsim__heap *h, uint8_t kind,
                      size_t size, const void *p, size_t n)
{
    const struct aclsim__task *t = v->t;
    struct use **slot = use_slot(addr), *u = *slot;
    bool host = h == &aclsim__host_heap && ACLSIM_CHECKING(ACLSIM_CHECK_EARLY_HOST);
    if (v->delta > 0) {
        if (!u && (u = calloc(1, sizeof *u))) {   /* not aclsim__calloc: not an API failure */
            *u = (struct use){.addr = addr, .heap = h, .kind = kind, .slot = -1};
            *slot = u;
        }
        if (!u)
            return;
        u->pending++;
        if (!aclsim__check_protectable(t->kind) && u->others++ == 0 && host)
            aclsim__check_protect_buffer(u->addr, false);   /* (a kernel uses the program's addresses) */
        u->task_kind = t->kind;
        u->task_id = t->id;
        u->stream_id = v->s->id;
        u->device = v->s->device->id;
        u->label = t->label;
        u->stream_handle = v->s->handle;
        u->default_stream = v->s->is_default;
        if (host)
            host_protection(u, size, t, v->s, 1, p, n);
        return;
    }
    if (u && u->pending) {
        if (host)
            host_protection(u, size, t, NULL, -1, p, n);
        if (!aclsim__check_protectable(t->kind) && u->others && --u->others == 0 && host)
            aclsim__check_protect_buffer(u->addr, true);
        u->pending--;
    }
    if (u && !u->pending) {
        *slot = u->next;
        if (u->deferred && u->heap)   /* the free the program asked for, now that the work is done */
            aclsim__heap_free(u->heap, (void *)u->addr, u->kind);
        else if (u->deferred && v->nunmap < (int)(sizeof v->unmap / sizeof v->unmap[0]))
            v->unmap[v->nunmap++] = u->addr;   /* (vmm.c's lock is taken after use_lock is dropped) */
        free(u);
    }
}

/* aclsim__vmm_each_mapping's callback (the ranges lock held: the mapping
 * stays while its use is counted). */
static void count_mapping(uintptr_t base, size_t size, void *arg)
{
    pthread_mutex_lock(&use_lock);
    count_use(arg, base, NULL, 0, size, NULL, 0);
    pthread_mutex_unlock(&use_lock);
}

static void visit_task(struct visit *v)
{
    struct ref refs[16];
    int n = task_refs(v->t, refs, 16);
    for (int i = 0; i < n; i++) {
        struct aclsim__alloc a;
        struct aclsim__heap *h = alloc_of(refs[i].p, &a);
        if (h) {
            pthread_mutex_lock(&use_lock);
            count_use(v, a.addr, h, a.kind, a.size, refs[i].p, refs[i].n);
            pthread_mutex_unlock(&use_lock);
        } else if (refs[i].p && atomic_load_explicit(&aclsim__ranges_count, memory_order_acquire)) {
            aclsim__vmm_each_mapping(refs[i].p, refs[i].n ? refs[i].n : 1, count_mapping, v);
        }
    }
}

void aclsim__check_submitted(struct aclsim__stream *s, struct aclsim__task *t)
{
    if (ACLSIM_CHECKING(ACLSIM_CHECK_RACE))   /* check-race.c */
        aclsim__check_race(s, t, atomic_load_explicit(&s->submitted, memory_order_relaxed) + 1);
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_FREE_PENDING | ACLSIM_CHECK_EARLY_HOST))
        return;
    struct visit v = {.s = s, .t = t, .delta = 1};
    t->check_stream = s;   /* (also marks t counted) */
    visit_task(&v);
}

void aclsim__check_released(const struct aclsim__task *t)
{
    /* Only what aclsim__check_submitted counted is given back: a captured
     * task dropped with its model runtime instance never was queued. */
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_FREE_PENDING | ACLSIM_CHECK_EARLY_HOST) || !t->check_stream)
        return;
    /* Host code that ran in a stream's order may have been lent protected
     * pages (check-host.c): protected again once it is done. */
    if ((t->kind == ACLSIM_TASK_HOST_FUNC || t->kind == ACLSIM_TASK_CALLBACK ||
         t->kind == ACLSIM_TASK_KERNEL) && aclsim__check_lent()) {
        pthread_mutex_lock(&use_lock);
        aclsim__check_reprotect();
        pthread_mutex_unlock(&use_lock);
    }
    struct visit v = {.t = t, .delta = -1};
    visit_task(&v);
    for (int i = 0; i < v.nunmap; i++)   /* unmaps deferred by aclsim__check_unmap */
        aclsim__vmm_unmap_deferred(v.unmap[i]);
}

/* The report of api (noun: what it does, "free"; verb: "frees") giving back
 * what while queued work, u, still uses it. */
static void in_use_report(const char *api, const char *noun, const char *verb, const char *what,
                          const struct use *u, char *text, size_t len)
{
    char stream[64];
    aclsim__check_stream_name(u->default_stream, u->stream_handle, u->stream_id, stream,
                              sizeof stream);
    snprintf(text, len,
             "%s of memory in use: %s %s %s while %u queued task(s) still use it, the latest "
             "%s%s%s (task %u) on %s of device %d; the %s is deferred until they are done "
             "(synchronize the stream, or record an event after the work and synchronize it, "
             "before the %s)",
             noun, api, verb, what, u->pending, aclsim__check_task_name(u->task_kind),
             u->label ? " " : "", u->label ? u->label : "", u->task_id, stream, u->device, noun,
             noun);
}

bool aclsim__check_unmap(const char *api, const char *noun, const char *verb, uintptr_t base,
                         const char *what, aclError *err)
{
    *err = ACL_SUCCESS;
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_FREE_PENDING | ACLSIM_CHECK_EARLY_HOST))
        return false;
    pthread_mutex_lock(&use_lock);
    struct use *u = *use_slot(base);
    struct use copy = u ? *u : (struct use){0};
    if (u)
        u->deferred = true;
    pthread_mutex_unlock(&use_lock);
    if (!u || !ACLSIM_CHECKING(ACLSIM_CHECK_FREE_PENDING))
        return u != NULL;   /* (deferred without a report: early-host-access alone) */
    char text[1200];
    in_use_report(api, noun, verb, what, &copy, text, sizeof text);
    aclsim__check_print("free-pending", text);
    *err = aclsim__fail(ACL_ERROR_RT_MEMORY_FREE, api, "aclsim check: %s", text);
    return true;
}

bool aclsim__check_still_used(uintptr_t base)
{
    pthread_mutex_lock(&use_lock);
    struct use *u = *use_slot(base);
    if (u)
        u->deferred = true;   /* (work queued since: the unmap waits for it too) */
    pthread_mutex_unlock(&use_lock);
    return u != NULL;
}

static bool check_free(const char *api, struct aclsim__heap *h, void *p, int kind,
                       aclError *err);

bool aclsim__check_free(const char *api, struct aclsim__heap *h, void *p, int kind,
                        aclError *err)
{
    /* The guard zones are read: a racing aclFinalize or reset must not
     * unmap them meanwhile (heap.c's teardown lock). */
    aclsim__heaps_hold();
    bool mine = __atomic_load_n(&h->base, __ATOMIC_ACQUIRE) && check_free(api, h, p, kind, err);
    aclsim__heaps_release();
    return mine;
}

static bool check_free(const char *api, struct aclsim__heap *h, void *p, int kind,
                       aclError *err)
{
    *err = ACL_SUCCESS;
    struct aclsim__alloc a;
    if (!aclsim__heap_find(h, p, &a) || a.addr != (uintptr_t)p || a.kind != kind)
        return false;
    int device = aclsim__check_heap_device(h);
    char what[512], text[1200];
    if (a.lead && ACLSIM_CHECKING(ACLSIM_CHECK_OOB)) {
        char bytes[256];
        if (!aclsim__check_guards(&a, bytes, sizeof bytes)) {
            aclsim__check_describe_alloc(&a, device, what, sizeof what);
            snprintf(text, sizeof text,
                     "out of bounds: %s of %s were written (found when %s freed it; not by a "
                     "kernel, which is checked after each block: host code wrote through a "
                     "device pointer)", bytes, what, api);
            aclsim__check_print("oob", text);
            *err = aclsim__fail(ACL_ERROR_RT_AICORE_EXCEPTION, api, "aclsim check: %s", text);
        }
    }
    /* Use counts are kept for free-pending and early-host-access: either way
     * the memory is not freed under queued work (nor while its pages are
     * protected); only free-pending reports it. */
    if (a.lead && ACLSIM_CHECKING(ACLSIM_CHECK_FREE_PENDING | ACLSIM_CHECK_EARLY_HOST)) {
        pthread_mutex_lock(&use_lock);
        struct use *u = *use_slot(a.addr);
        struct use copy = u ? *u : (struct use){0};
        if (u && !u->deferred)
            u->deferred = true;
        pthread_mutex_unlock(&use_lock);
        if (u && !ACLSIM_CHECKING(ACLSIM_CHECK_FREE_PENDING))
            return true;   /* deferred without a report */
        if (u) {
            aclsim__check_describe_alloc(&a, device, what, sizeof what);
            if (copy.deferred) {
                snprintf(text, sizeof text,
                         "%p (%s) was already freed: that free waits for the queued work that "
                         "still uses it", p, what);
                aclsim__check_print("free-pending", text);
                *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "aclsim check: %s", text);
                return true;
            }
            in_use_report(api, "free", "frees", what, &copy, text, sizeof text);
            aclsim__check_print("free-pending", text);
            aclError code = aclsim__fail(ACL_ERROR_RT_MEMORY_FREE, api, "aclsim check: %s", text);
            if (!*err)
                *err = code;
            return true;
        }
    }
    return aclsim__heap_free(h, p, kind);
}

void aclsim__check_start(unsigned mask, bool stop)
{
    aclsim__check_stop = mask && stop;
    __atomic_store_n(&aclsim__check_mask, mask, __ATOMIC_RELAXED);
    if (mask & ACLSIM_CHECK_EARLY_HOST)
        aclsim__check_host_start();
}

void aclsim__check_finalize(void)
{
    pthread_mutex_lock(&use_lock);
    for (size_t b = 0; b < USE_BUCKETS; b++)
        while (uses[b]) {
            struct use *u = uses[b];
            uses[b] = u->next;
            free(u);
        }
    pthread_mutex_unlock(&use_lock);
    pthread_mutex_lock(&history_lock);
    history_next = history_count = 0;
    history_total = 0;
    pthread_mutex_unlock(&history_lock);
    aclsim__check_race_finalize();
    __atomic_store_n(&aclsim__check_mask, 0, __ATOMIC_RELAXED);
}

/* After fork(), in the child (THE FORK RULE): checking stops (the inherited
 * session is discarded without looking: heap locks may still be held by the
 * parent's threads) and the locks are new. */
void aclsim__check_forget_after_fork(void)
{
    __atomic_store_n(&aclsim__check_mask, 0, __ATOMIC_RELAXED);
    memset(uses, 0, sizeof uses);   /* (the parent's; not freed: their lock may be held) */
    pthread_mutex_init(&use_lock, NULL);
    pthread_mutex_init(&history_lock, NULL);
    aclsim__check_kernel_forget_after_fork();
    aclsim__check_race_forget_after_fork();
}
