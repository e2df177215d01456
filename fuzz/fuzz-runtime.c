/*
 * libFuzzer harness for aclsim: the input is a sequence of runtime calls with
 * hostile arguments; after every call a set of invariants is checked and any
 * violation abort()s (libFuzzer then saves the input as a crash).
 *
 * Input format: byte 0 seeds the host buffer pattern; then records of 16
 * bytes, rec[0] % OP_COUNT is the operation and rec[1..15] its argument
 * selectors (see the table at "operations" below; fuzz/make-seeds.py writes
 * the same layout). At most MAX_OPS records are run.
 *
 * The harness keeps a model of what it created: devices (reference counts),
 * contexts, streams, events, device and page-locked allocations, the current
 * context, and a shadow copy of every device variable on every device. From
 * the model it predicts, for each call, whether CANN's rules (and aclsim's
 * documented checks where CANN is silent) say the call MUST succeed, MUST
 * fail, or may do either; and it never passes host memory the library would
 * legitimately write or read out of bounds on success (host buffers always
 * have room for `count`; stale/garbage pointers are only passed where the
 * library must classify them and reject them).
 *
 * Invariants, checked after every call (abort on violation):
 *   1. no crash / sanitizer report / hang (libFuzzer -timeout);
 *   2. the return code is 0 or one of the codes in the function's allow-list
 *      (from the reference's tables);
 *   3. on failure aclGetRecentErrMsg() is non-NULL, non-empty and names the
 *      function; out-parameters are left untouched;
 *   4. the prediction holds: count == 0 copies succeed, invalid arguments
 *      (NULL, count > max, bad kind, unknown/interior symbol, offset+count
 *      beyond the variable, stale or forged handles, freed or overrun device
 *      ranges, no current context) fail, fully valid calls succeed (or report
 *      out of memory where that can happen);
 *   5. device variables: every byte of every device variable on every open
 *      device that no successful call addressed keeps its shadow value; bytes
 *      written by a synchronous call from known data hold exactly that data;
 *      bytes read back by a synchronous call equal the shadow; instances
 *      exist only on open devices, are stable while the device is open,
 *      start from the initializer, and revert to it after the device's last
 *      reset; the host objects (the symbols) never change;
 *   6. results are right: allocations are aligned and never overlap live
 *      allocations or variable instances; aclrtGetSymbolAddress returns the
 *      instance on the current device, aclrtGetSymbolSize the variable's size;
 *      aclrtGetCurrentContext/aclrtGetDevice agree with the model; a completed
 *      copy leaves dst equal to src and a memset leaves its value (checked when
 *      no queued work can interfere; large async copies are synchronized and
 *      compared); aclrtQueryEventStatus is NOT_READY before any record and
 *      COMPLETE once the recording stream was synchronized.
 *
 * Asynchronous writes make bytes "pending" until the harness knows they have
 * run (stream/device synchronize, stream destroy, a pageable async copy on
 * the same stream, device close); pending bytes are resynchronised from
 * memory then (any value is acceptable for bytes a successful call addressed).
 *
 * Environment: FUZZ_TRACE=1 prints every call, its arguments, prediction and
 * result to stderr (use it to read a crash input: ./fuzz-runtime crash-...);
 * FUZZ_STATS=1 prints per-function call counts at exit. See docs/fuzzing.md.
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"

/* Built with TSan (a corpus replay, see CMakeLists.txt): memory operations that
 * could succeed are skipped while queued work is outstanding, so that the only
 * races left to report are the library's own, not the unsynchronised accesses
 * the harness makes on purpose. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FUZZ_TSAN 1
#endif
#endif
#ifndef FUZZ_TSAN
#define FUZZ_TSAN 0
#endif
#if defined(__clang__)
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

/* ---- the device variables under test ------------------------------------ */

struct fz_record {
    int32_t a;
    double b;
    char c[13];
    uint16_t d;
};

ACLSIM_DEVICE_VAR(int32_t, fz_int, ) = 0x11223344;
ACLSIM_DEVICE_VAR(float, fz_floats, [64]) = {1.5f, 2.5f, -3.0f, 4.25f, 1e10f, -0.0f, 7.0f, 8.0f};
ACLSIM_DEVICE_VAR(struct fz_record, fz_rec, ) = {-7, 3.25, "hello, world", 0xbeef};
ACLSIM_DEVICE_VAR(uint8_t, fz_bytes, [1000]) = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, [999] = 0xee};

#define NVARS 4
#define NDEV 2
#define MAXVAR 1000

static aclsimVar *const desc[NVARS] = {&aclsim__var_fz_int, &aclsim__var_fz_floats,
                                       &aclsim__var_fz_rec, &aclsim__var_fz_bytes};
static uint8_t init_image[NVARS][MAXVAR];     /* the host objects at start-up */

/* ---- limits and tables ---------------------------------------------------- */

#define MAX_OPS 128
#define REC 16
#define HB 65536                         /* the ordinary host buffer */
#define DEVICE_MEMORY ((size_t)64 << 20)
#define MAX_DALLOC 24
#define MAX_PALLOC 12
#define MAX_CTX 8
#define MAX_STREAM 12
#define MAX_EVENT 12
#define MAX_PEND 192
#define MAX_OLD 16

static uint8_t hbuf[HB];

struct dalloc { uintptr_t p; size_t size; int dev; unsigned epoch; bool live; };
struct palloc { uintptr_t p; size_t size; bool live; };
struct ctxrec { aclrtContext h; int dev; bool is_default; bool live; };
struct strec { aclrtStream h; aclrtContext ctx; int dev; bool live; };
struct evrec {
    aclrtEvent h;
    bool live;
    bool recorded;      /* has a record */
    bool complete;      /* its latest record has run or was discarded */
    bool ran;           /* ... and is known to have run (so it has a timestamp) */
    uintptr_t key;      /* stream of the latest record */
    int sdev;
};

/* An asynchronous operation not yet known to have run. */
struct pend {
    uintptr_t key;      /* stream handle, or the context handle for its default stream */
    int sdev;           /* device of that stream */
    int tdev;           /* device whose memory it touches (-1: page-locked memory) */
    int var;            /* variable written (bytes counted in pcount), or -1 */
    int alloc;          /* dalloc written, or -1 */
    size_t off, len;
};

static struct {
    struct dalloc da[MAX_DALLOC];
    struct palloc pa[MAX_PALLOC];
    struct ctxrec cx[MAX_CTX];
    struct strec st[MAX_STREAM];
    struct evrec ev[MAX_EVENT];
    struct pend pe[MAX_PEND];
    int npend;
    uint32_t ref[NDEV];
    unsigned epoch[NDEV];
    aclrtContext default_ctx[NDEV];
    uintptr_t span_lo[NDEV], span_hi[NDEV];  /* addresses seen in the device's range */
    uintptr_t pin_lo, pin_hi;                 /* addresses seen in the page-locked heap */
    aclrtContext cur;                         /* the thread's current context (maybe stale) */
    uint8_t shadow[NDEV][NVARS][MAXVAR];
    uint16_t pcount[NDEV][NVARS][MAXVAR];     /* pending async writes per byte */
    uintptr_t inst[NDEV][NVARS];              /* instance address seen, 0 = none yet */
    uintptr_t old[MAX_OLD];                   /* stale instance / allocation addresses */
    unsigned nold;
} M;

static bool trace;
static int g_opno;
/* FUZZ_STATS=1: per-function call counts printed at exit. */
#define MAX_APIS 48
static struct { const char *api; unsigned long calls, ok, failed; } stats[MAX_APIS];
static unsigned long skipped_ops, inputs_run, total_calls;
static const char *g_api = "(setup)";

#define VIOLATION(...)                                                                \
    do {                                                                              \
        fprintf(stderr, "\n*** aclsim fuzz: invariant violated at op %d (%s): ",     \
                g_opno, g_api);                                                       \
        fprintf(stderr, __VA_ARGS__);                                                 \
        fputc('\n', stderr);                                                          \
        abort();                                                                      \
    } while (0)

#define TRACE(...)                                                                    \
    do {                                                                              \
        if (trace)                                                                    \
            fprintf(stderr, __VA_ARGS__);                                             \
    } while (0)

/* ---- the model ------------------------------------------------------------ */

static size_t var_size(int v) { return desc[v]->size; }
static uintptr_t var_host(int v) { return (uintptr_t)desc[v]->symbol; }
static uintptr_t inst_now(int d, int v)
{
    return (uintptr_t)__atomic_load_n(&desc[v]->instance[d], __ATOMIC_ACQUIRE);
}
static bool dev_open(int d) { return M.ref[d] > 0; }

static void remember_old(uintptr_t p)
{
    if (p)
        M.old[M.nold++ % MAX_OLD] = p;
}

static void span_add(int d, uintptr_t p, size_t n)
{
    if (!M.span_lo[d] || p < M.span_lo[d])
        M.span_lo[d] = p;
    if (p + n > M.span_hi[d])
        M.span_hi[d] = p + n;
}

static struct ctxrec *ctx_live(aclrtContext h)
{
    if (!h)
        return NULL;
    for (int i = 0; i < MAX_CTX; i++)
        if (M.cx[i].live && M.cx[i].h == h)
            return &M.cx[i];
    return NULL;
}
static struct ctxrec *cur_ctx(void) { return ctx_live(M.cur); }
static int cur_dev(void)
{
    struct ctxrec *c = cur_ctx();
    return c ? c->dev : -1;
}

static struct strec *stream_live(aclrtStream h)
{
    if (!h)
        return NULL;
    for (int i = 0; i < MAX_STREAM; i++)
        if (M.st[i].live && M.st[i].h == h)
            return &M.st[i];
    return NULL;
}

static struct evrec *event_live(aclrtEvent h)
{
    if (!h)
        return NULL;
    for (int i = 0; i < MAX_EVENT; i++)
        if (M.ev[i].live && M.ev[i].h == h)
            return &M.ev[i];
    return NULL;
}

/* Stream argument as the library resolves it: 0 and key/device, or -1 (must fail). */
static int resolve_stream(aclrtStream s, uintptr_t *key, int *sdev)
{
    struct ctxrec *c = cur_ctx();
    if (!c)
        return -1;
    if (!s) {
        *key = (uintptr_t)c->h;
        *sdev = c->dev;
        return 0;
    }
    struct strec *r = stream_live(s);
    if (!r || r->ctx != c->h)
        return -1;
    *key = (uintptr_t)s;
    *sdev = r->dev;
    return 0;
}

/* ---- shadow bookkeeping ----------------------------------------------------- */

static void resync_byte(int d, int v, size_t i)
{
    uintptr_t in = inst_now(d, v);
    if (in)
        M.shadow[d][v][i] = ((const volatile uint8_t *)in)[i];
}

static void pend_remove(int i, bool resync)
{
    struct pend *p = &M.pe[i];
    if (p->var >= 0)
        for (size_t k = p->off; k < p->off + p->len; k++)
            if (--M.pcount[p->tdev][p->var][k] == 0 && resync)
                resync_byte(p->tdev, p->var, k);
    M.pe[i] = M.pe[--M.npend];
}

/* Everything queued on stream `key` (by_device: on every stream of device
 * `key`) has run (ran) or run-or-been-discarded (!ran). */
static void settle(uintptr_t key, bool by_device, bool ran)
{
    for (int i = 0; i < M.npend;)
        if (by_device ? M.pe[i].sdev == (int)key : M.pe[i].key == key)
            pend_remove(i, true);
        else
            i++;
    for (int i = 0; i < MAX_EVENT; i++)
        if (M.ev[i].recorded && !M.ev[i].complete &&
            (by_device ? M.ev[i].sdev == (int)key : M.ev[i].key == key)) {
            M.ev[i].complete = true;
            M.ev[i].ran = ran;
        }
}

static void settle_key(uintptr_t key, bool ran) { settle(key, false, ran); }
static void settle_sdev(int d, bool ran) { settle((uintptr_t)d, true, ran); }

static void pend_add(uintptr_t key, int sdev, int tdev, int var, int alloc, size_t off,
                     size_t len)
{
    if (M.npend == MAX_PEND)
        VIOLATION("harness: pending table overflow (ops should have been skipped)");
    M.pe[M.npend++] = (struct pend){key, sdev, tdev, var, alloc, off, len};
    if (var >= 0)
        for (size_t k = off; k < off + len; k++)
            M.pcount[tdev][var][k]++;
}

/* True if closing device d would leave another device's stream touching d's memory. */
static bool cross_pending(int d)
{
    for (int i = 0; i < M.npend; i++)
        if (M.pe[i].tdev == d && M.pe[i].sdev != d)
            return true;
    return false;
}

static bool alloc_write_pending(int a)
{
    for (int i = 0; i < M.npend; i++)
        if (M.pe[i].alloc == a)
            return true;
    return false;
}

/* The library closed device d: everything on it is gone, variables revert. */
static void model_close(int d, bool force)
{
    settle_sdev(d, !force);
    for (int i = 0; i < M.npend;)
        if (M.pe[i].tdev == d)
            pend_remove(i, false);
        else
            i++;
    for (int i = 0; i < MAX_CTX; i++)
        if (M.cx[i].live && M.cx[i].dev == d)
            M.cx[i].live = false;
    for (int i = 0; i < MAX_STREAM; i++)
        if (M.st[i].live && M.st[i].dev == d)
            M.st[i].live = false;
    for (int i = 0; i < MAX_DALLOC; i++)
        if (M.da[i].live && M.da[i].dev == d) {
            M.da[i].live = false;
            remember_old(M.da[i].p);
        }
    for (int v = 0; v < NVARS; v++) {
        remember_old(M.inst[d][v]);
        M.inst[d][v] = 0;
        memcpy(M.shadow[d][v], init_image[v], var_size(v));
        memset(M.pcount[d][v], 0, sizeof M.pcount[d][v]);
    }
    M.ref[d] = 0;
    M.epoch[d]++;
    M.default_ctx[d] = NULL;
}

/* Drops one device reference as aclsim does; closes at zero or with force. */
static void model_release(int d, bool force)
{
    if (!dev_open(d))
        return;
    if (force || M.ref[d] <= 1)
        model_close(d, force);
    else
        M.ref[d]--;
}

static bool release_closes(int d, bool force) { return dev_open(d) && (force || M.ref[d] <= 1); }

/* ---- where a pointer is ---------------------------------------------------- */

enum cls { C_NULL, C_HOST, C_HOSTRO, C_DEV, C_DEVFREE, C_PIN, C_PINFREE, C_WILD };
static const char *const cls_name[] = {"NULL", "host", "host-object", "device", "device-free",
                                       "pinned", "pinned-free", "wild"};

struct where {
    enum cls c;
    size_t room;        /* bytes from p to the end of its buffer/allocation/variable */
    int dev;            /* C_DEV/C_DEVFREE */
    int var;            /* instance (C_DEV) or host object (C_HOSTRO) of this variable */
    int alloc;          /* C_DEV: dalloc index, or -1 */
    size_t off;         /* offset inside var */
};

static struct where classify(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    struct where w = {C_WILD, 0, -1, -1, -1, 0};
    if (!p) {
        w.c = C_NULL;
        return w;
    }
    if (p >= (uintptr_t)hbuf && p < (uintptr_t)hbuf + HB) {
        w.c = C_HOST;
        w.room = (uintptr_t)hbuf + HB - p;
        return w;
    }
    for (int v = 0; v < NVARS; v++)
        if (p >= var_host(v) && p < var_host(v) + var_size(v)) {
            w.c = C_HOSTRO;
            w.var = v;
            w.off = p - var_host(v);
            w.room = var_size(v) - w.off;
            return w;
        }
    for (int d = 0; d < NDEV; d++) {
        if (!dev_open(d))
            continue;
        for (int v = 0; v < NVARS; v++) {
            uintptr_t in = inst_now(d, v);
            if (in && p >= in && p < in + var_size(v)) {
                w.c = C_DEV;
                w.dev = d;
                w.var = v;
                w.off = p - in;
                w.room = var_size(v) - w.off;
                return w;
            }
        }
    }
    for (int i = 0; i < MAX_DALLOC; i++) {
        struct dalloc *a = &M.da[i];
        if (a->live && p >= a->p && p < a->p + a->size) {
            w.c = C_DEV;
            w.dev = a->dev;
            w.alloc = i;
            w.room = a->p + a->size - p;
            return w;
        }
    }
    /* A device's range stays reserved after it closes (docs/runtime.md), so
     * addresses seen in it are still "device d memory" when stale. */
    for (int d = 0; d < NDEV; d++)
        if (M.span_lo[d] && p >= M.span_lo[d] && p < M.span_hi[d]) {
            w.c = C_DEVFREE;
            w.dev = d;
            return w;
        }
    for (int i = 0; i < MAX_PALLOC; i++) {
        struct palloc *a = &M.pa[i];
        if (a->live && p >= a->p && p < a->p + a->size) {
            w.c = C_PIN;
            w.room = a->p + a->size - p;
            return w;
        }
    }
    if (M.pin_lo && p >= M.pin_lo && p < M.pin_hi) {
        w.c = C_PINFREE;
        return w;
    }
    return w;
}

static bool is_devc(enum cls c) { return c == C_DEV || c == C_DEVFREE; }
static bool is_hostc(enum cls c) { return c == C_HOST || c == C_HOSTRO; }   /* ordinary */

/* ---- input reading and argument pickers ------------------------------------- */

static uintptr_t at(uintptr_t base, size_t off) { return base + off; }

static size_t menu_offset(uint8_t x, size_t size)
{
    switch (x % 8) {
    case 0: case 1: return 0;
    case 2: return size / 2;
    case 3: return size ? size - 1 : 0;
    case 4: return size;                /* one past the end */
    case 5: return size + 64;
    case 6: return 4;
    default: return (size_t)x * 8 % (size ? size : 1);
    }
}

static void *pick_hostbuf(uint8_t x)
{
    static const size_t offs[8] = {0, 0, 64, 100, HB / 2, HB - 1, HB - 64, HB - 1024};
    return (void *)at((uintptr_t)hbuf, x % 8 == 7 ? (size_t)x * 197 % HB : offs[x % 8]);
}

static void *pick_ptr(uint8_t sel, uint8_t idx, uint8_t x)
{
    switch (sel % 16) {
    case 0:
        return NULL;
    case 1: case 2: case 3: {   /* device allocation (3: also freed/stale ones) + offset */
        bool any = sel % 16 == 3;
        for (int i = 0; i < MAX_DALLOC; i++) {
            struct dalloc *a = &M.da[(idx + i) % MAX_DALLOC];
            if (!a->p || (!a->live && !any))
                continue;
            size_t off = menu_offset(x, a->size);
            if (!any && off >= a->size)
                off = 0;   /* live picks stay in range; sel 3 also gives end/beyond */
            return (void *)at(a->p, off);
        }
        return pick_hostbuf(x);
    }
    case 4: case 5: {           /* a variable's instance + offset */
        int v = idx % NVARS, d = (idx / NVARS) % NDEV;
        uintptr_t in = inst_now(d, v);
        if (!in)
            in = inst_now(1 - d, v);
        if (!in)
            return pick_hostbuf(x);
        return (void *)at(in, menu_offset(x, var_size(v)));
    }
    case 6: case 7:             /* page-locked allocation (7: also freed ones) */
        for (int i = 0; i < MAX_PALLOC; i++) {
            struct palloc *a = &M.pa[(idx + i) % MAX_PALLOC];
            if (a->p && (a->live || sel % 16 == 7))
                return (void *)at(a->p, menu_offset(x, a->size));
        }
        return pick_hostbuf(x);
    case 8: case 9:
        return pick_hostbuf(x);
    case 10: {                  /* the host C object of a variable (read-only for us) */
        int v = idx % NVARS;
        size_t off = menu_offset(x, var_size(v));
        return (void *)at(var_host(v), off >= var_size(v) ? 0 : off);
    }
    case 11: {
        static const uintptr_t garbage[8] = {1, 0x1000, UINTPTR_MAX, UINTPTR_MAX - 63,
                                             0xdead0000, 0x7fff00000000u, 64, 0x10000};
        return (void *)garbage[idx % 8];
    }
    case 12:                    /* a variable descriptor: ordinary memory, not a symbol */
        return (void *)desc[idx % NVARS];
    case 13:                    /* a handle used as a pointer */
        for (int i = 0; i < MAX_STREAM; i++)
            if (M.st[(idx + i) % MAX_STREAM].h)
                return M.st[(idx + i) % MAX_STREAM].h;
        return (void *)(uintptr_t)0x9;
    default:                    /* stale addresses of closed devices */
        if (M.nold)
            return (void *)at(M.old[idx % (M.nold < MAX_OLD ? M.nold : MAX_OLD)], x % 4 * 64);
        return pick_hostbuf(x);
    }
}

/* Forged handle from a known one: same index, generation made even (never live)
 * or the type bits changed (another object's slot seen through the wrong type). */
static void *forge(void *h, uint8_t x)
{
    uintptr_t v = (uintptr_t)h;
    if (!v)
        return (void *)(uintptr_t)((x | 1u) << 3 | (x & 7u));   /* generation 0: never live */
    switch (x % 3) {
    case 0: return (void *)(v ^ ((uintptr_t)1 << 32));
    case 1: return (void *)((v & ~(uintptr_t)7) | (x / 3 % 8));
    default: return (void *)(uintptr_t)((v & 0xffffffffu) | ((uintptr_t)(x | 1u) << 33));
    }
}

static aclrtStream pick_stream(uint8_t sel, uint8_t idx, uint8_t x)
{
    switch (sel % 12) {
    case 0: case 1: case 2:
        return NULL;
    case 3: case 4: case 5: case 6:
        for (int i = 0; i < MAX_STREAM; i++)
            if (M.st[(idx + i) % MAX_STREAM].live)
                return M.st[(idx + i) % MAX_STREAM].h;
        return NULL;
    case 7:         /* destroyed (or live) stream */
        for (int i = 0; i < MAX_STREAM; i++)
            if (M.st[(idx + i) % MAX_STREAM].h)
                return M.st[(idx + i) % MAX_STREAM].h;
        return NULL;
    case 8:         /* an event or context handle where a stream is expected */
        if (x & 1) {
            for (int i = 0; i < MAX_EVENT; i++)
                if (M.ev[(idx + i) % MAX_EVENT].h)
                    return M.ev[(idx + i) % MAX_EVENT].h;
        }
        for (int i = 0; i < MAX_CTX; i++)
            if (M.cx[(idx + i) % MAX_CTX].h)
                return M.cx[(idx + i) % MAX_CTX].h;
        return (void *)(uintptr_t)1;
    case 9:
        return (void *)(uintptr_t)(x % 2 ? 1 : 0x7fff0000);
    default:
        return forge(M.st[idx % MAX_STREAM].h ? M.st[idx % MAX_STREAM].h : M.ev[idx % MAX_EVENT].h,
                     x);
    }
}

static aclrtEvent pick_event(uint8_t sel, uint8_t idx, uint8_t x)
{
    switch (sel % 10) {
    case 0:
        return NULL;
    case 1: case 2: case 3: case 4:
        for (int i = 0; i < MAX_EVENT; i++)
            if (M.ev[(idx + i) % MAX_EVENT].live)
                return M.ev[(idx + i) % MAX_EVENT].h;
        return NULL;
    case 5:
        for (int i = 0; i < MAX_EVENT; i++)
            if (M.ev[(idx + i) % MAX_EVENT].h)
                return M.ev[(idx + i) % MAX_EVENT].h;
        return NULL;
    case 6:
        for (int i = 0; i < MAX_STREAM; i++)
            if (M.st[(idx + i) % MAX_STREAM].h)
                return M.st[(idx + i) % MAX_STREAM].h;
        return (void *)(uintptr_t)2;
    case 7:
        return (void *)hbuf;
    default:
        return forge(M.ev[idx % MAX_EVENT].h ? M.ev[idx % MAX_EVENT].h : M.st[idx % MAX_STREAM].h,
                     x);
    }
}

static aclrtContext pick_ctx(uint8_t sel, uint8_t idx, uint8_t x)
{
    switch (sel % 10) {
    case 0:
        return NULL;
    case 1: case 2: case 3:
        for (int i = 0; i < MAX_CTX; i++)
            if (M.cx[(idx + i) % MAX_CTX].live)
                return M.cx[(idx + i) % MAX_CTX].h;
        return NULL;
    case 4:
        for (int i = 0; i < MAX_CTX; i++)
            if (M.cx[(idx + i) % MAX_CTX].h)
                return M.cx[(idx + i) % MAX_CTX].h;
        return NULL;
    case 5:
        return M.default_ctx[idx % NDEV];
    case 6:
        for (int i = 0; i < MAX_STREAM; i++)
            if (M.st[(idx + i) % MAX_STREAM].h)
                return M.st[(idx + i) % MAX_STREAM].h;
        return (void *)(uintptr_t)3;
    case 7:
        return (void *)(uintptr_t)(x % 2 ? 1 : 0x1000);
    default:
        return forge(M.cx[idx % MAX_CTX].h ? M.cx[idx % MAX_CTX].h : M.st[idx % MAX_STREAM].h, x);
    }
}

static const void *pick_sym(uint8_t sel, uint8_t idx)
{
    int v = idx % NVARS;
    switch (sel % 16) {
    case 0: return NULL;
    case 1: case 2: case 3: case 4: case 15: return desc[(sel % 16 == 15 ? idx : sel - 1) % NVARS]->symbol;
    case 5: return (const void *)at(var_host(v), 1);
    case 6: return (const void *)at(var_host(v), var_size(v));       /* one past the end */
    case 7: return desc[v];                                           /* the descriptor */
    case 8: { uintptr_t in = inst_now(idx / NVARS % NDEV, v);         /* a device address */
              return in ? (const void *)in : (const void *)(uintptr_t)0x40; }
    case 9: return hbuf;
    case 10: return (const void *)(uintptr_t)1;
    case 11: return (const void *)(uintptr_t)&pick_sym;               /* a function */
    case 12: return pick_ptr(1, idx, 0);
    case 13: return (const void *)(var_host(v) - 1);
    default: return (const void *)at(var_host(v), 4);                 /* &array[1] */
    }
}

static size_t pick_count(uint8_t sel, uint8_t x, size_t hint)
{
    switch (sel % 24) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 2;
    case 3: return 4;
    case 4: return 7;
    case 5: return 8;
    case 6: return 63;
    case 7: return 64;
    case 8: return 65;
    case 9: return 256;
    case 10: return 1000;
    case 11: return 1 + (size_t)x;
    case 12: case 13: case 14: return hint;
    case 15: return hint ? hint - 1 : 0;
    case 16: return hint + 1;
    case 17: return hint / 2 + 1;
    case 18: return 4096;
    case 19: return SIZE_MAX;
    case 20: return SIZE_MAX - x;
    case 21: return (size_t)1 << 63;
    case 22: return ((size_t)1 << 32) + x;
    default: return (size_t)x * 4;
    }
}

static size_t pick_max(uint8_t sel, uint8_t x, size_t count, size_t room)
{
    switch (sel % 10) {
    case 0: case 1: case 2: return count;
    case 3: return count ? count - 1 : 0;
    case 4: return count + 1;
    case 5: case 6: return room;
    case 7: return SIZE_MAX;
    case 8: return 0;
    default: return x;
    }
}

static size_t pick_sym_offset(uint8_t sel, uint8_t x, size_t size)
{
    switch (sel % 12) {
    case 0: case 1: case 2: case 3: return 0;
    case 4: return 1;
    case 5: return 4;
    case 6: return size / 2;
    case 7: return size;
    case 8: return size ? size - 1 : 0;
    case 9: return SIZE_MAX - x;
    case 10: return (size_t)1 << 63;
    default: return x;
    }
}

static int pick_kind(uint8_t sel)
{
    static const int kinds[20] = {0, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 4, 8, -1, 999, INT_MIN,
                                  INT_MAX, 1, 2};
    return kinds[sel % 20];
}

static int32_t pick_dev(uint8_t sel)
{
    static const int32_t ids[16] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, -1, 32, INT_MAX, INT_MIN, 31};
    return ids[sel % 16];
}

/* ---- checking ------------------------------------------------------------------ */

enum expect { E_ANY, E_OK, E_OK_OOM, E_FAIL, E_OK_TIMEOUT };
static const char *const expect_name[] = {"any", "ok", "ok/oom", "fail", "ok/timeout"};

static void count_call(const char *api, aclError rc)
{
    total_calls++;
    for (int i = 0; i < MAX_APIS; i++) {
        if (!stats[i].api)
            stats[i].api = api;
        if (stats[i].api == api || !strcmp(stats[i].api, api)) {
            stats[i].calls++;
            if (rc)
                stats[i].failed++;
            else
                stats[i].ok++;
            return;
        }
    }
}

static void print_stats(void)
{
    fprintf(stderr, "fuzz-runtime: %lu inputs, %lu calls checked, %lu operations skipped "
            "(unsafe or table full)\n", inputs_run, total_calls, skipped_ops);
    fprintf(stderr, "%-36s %12s %12s %12s\n", "function", "calls", "succeeded", "failed");
    for (int i = 0; i < MAX_APIS && stats[i].api; i++)
        fprintf(stderr, "%-36s %12lu %12lu %12lu\n", stats[i].api, stats[i].calls, stats[i].ok,
                stats[i].failed);
}

static void check_rc(const char *api, aclError rc, const int *allowed, size_t nallowed,
                     enum expect e, const char *why)
{
    const char *msg = aclGetRecentErrMsg();
    count_call(api, rc);
    TRACE("    -> %d (expected %s: %s)%s%s\n", rc, expect_name[e], why, rc && msg ? " msg: " : "",
          rc && msg ? msg : "");
    if (rc != ACL_SUCCESS) {
        bool ok = false;
        for (size_t i = 0; i < nallowed; i++)
            ok |= rc == allowed[i];
        if (!ok)
            VIOLATION("%s returned %d, which is not in its allow-list", api, rc);
        if (!msg || !*msg)
            VIOLATION("%s failed with %d but aclGetRecentErrMsg() is %s", api, rc,
                      msg ? "empty" : "NULL");
        if (!strstr(msg, api))
            VIOLATION("%s failed with %d but the message does not name it: \"%s\"", api, rc, msg);
    }
    switch (e) {
    case E_ANY:
        break;
    case E_OK:
        if (rc)
            VIOLATION("%s failed with %d (\"%s\") but the call is valid (%s)", api, rc,
                      msg ? msg : "", why);
        break;
    case E_OK_OOM:
        if (rc && rc != ACL_ERROR_RT_MEMORY_ALLOCATION && rc != ACL_ERROR_BAD_ALLOC)
            VIOLATION("%s failed with %d (\"%s\") but the call is valid (%s)", api, rc,
                      msg ? msg : "", why);
        break;
    case E_OK_TIMEOUT:
        if (rc && rc != ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
            VIOLATION("%s failed with %d (\"%s\") but the call is valid (%s)", api, rc,
                      msg ? msg : "", why);
        break;
    case E_FAIL:
        if (!rc)
            VIOLATION("%s succeeded but must fail: %s", api, why);
        break;
    }
}

#define CODES(...) (const int[]){__VA_ARGS__}, sizeof((const int[]){__VA_ARGS__}) / sizeof(int)
#define L_SYM_GET CODES(100000, 100001, 107002, 107043, 207001)
#define L_SYM_COPY CODES(100000, 100001, 107002, 107043, 500001, 207001)
#define L_SYM_COPY_ASYNC CODES(100000, 100001, 107002, 107003, 107017, 107043, 500001, 207001, 200000)
#define L_MEMCPY CODES(100000, 100001, 107002)
#define L_ASYNC CODES(100000, 100001, 107002, 107003, 107017, 200000)
#define L_MALLOC CODES(100000, 100001, 107002, 207001, 200000)
#define L_FREE CODES(100000, 100001, 107002)
#define L_MALLOC_HOST CODES(100000, 100001, 207001, 200000)
#define L_FREE_HOST CODES(100000, 100001)
#define L_CREATE CODES(100000, 100001, 107002, 200000)
#define L_CREATE_STREAM CODES(100000, 100001, 107002, 200000, 207000)
#define L_DESTROY_STREAM CODES(100000, 100001, 107003, 107017)
#define L_SYNC_STREAM CODES(100000, 100001, 107002, 107003, 107017, 507046)
#define L_SYNC_DEVICE CODES(100001, 107002, 200000)
#define L_EVENT CODES(100000, 100001, 107017)
#define L_SET_DEVICE CODES(100001, 107001, 207001, 200000)
#define L_RESET CODES(100001, 107001)
#define L_CREATE_CTX CODES(100000, 100001, 107001, 207001, 200000)
#define L_CTX CODES(100000, 100001, 107017)
#define L_GET_CTX CODES(100000, 100001, 107002)

/* After every call: instances, shadows, host objects. */
static void check_variables(void)
{
    for (int v = 0; v < NVARS; v++)
        if (memcmp((const void *)var_host(v), init_image[v], var_size(v)))
            VIOLATION("the host object of device variable %s changed", desc[v]->name);
    for (int d = 0; d < NDEV; d++)
        for (int v = 0; v < NVARS; v++) {
            uintptr_t in = inst_now(d, v);
            if (!dev_open(d)) {
                if (in)
                    VIOLATION("device %d is closed but variable %s still has an instance at %p",
                              d, desc[v]->name, (void *)in);
                continue;
            }
            if (!in) {
                if (M.inst[d][v])
                    VIOLATION("the instance of %s on open device %d disappeared", desc[v]->name, d);
                continue;
            }
            if (!M.inst[d][v]) {
                if (in % 64 || in % desc[v]->align)
                    VIOLATION("instance of %s on device %d at %p is misaligned", desc[v]->name, d,
                              (void *)in);
                M.inst[d][v] = in;
                span_add(d, in, var_size(v));
            } else if (M.inst[d][v] != in) {
                VIOLATION("the instance of %s on device %d moved from %p to %p while open",
                          desc[v]->name, d, (void *)M.inst[d][v], (void *)in);
            }
            const volatile uint8_t *mem = (const volatile uint8_t *)in;
            for (size_t i = 0; i < var_size(v); i++)
                if (M.pcount[d][v][i] == 0 && mem[i] != M.shadow[d][v][i])
                    VIOLATION("device %d variable %s byte %zu is 0x%02x, expected 0x%02x "
                              "(not addressed by any successful call, or written with known data)",
                              d, desc[v]->name, i, mem[i], M.shadow[d][v][i]);
        }
}

/* ---- what a successful call wrote or read --------------------------------------- */

enum { SRC_UNKNOWN, SRC_BYTES, SRC_VALUE };
static struct plan {
    bool write, read;
    int d, v;               /* the variable written / read */
    size_t off, len;
    uint8_t val[MAXVAR];
    bool known[MAXVAR];
    const uint8_t *host;    /* read: where the bytes went (ordinary host buffer) */
} P;

static void plan_clear(void) { P.write = P.read = false; }

/* Write of len bytes at offset off of variable v on device d, from src (described by ws). */
static void plan_write(int d, int v, size_t off, size_t len, const void *src, struct where ws,
                       int mode, int value)
{
    P.write = true;
    P.d = d;
    P.v = v;
    P.off = off;
    P.len = len;
    for (size_t i = 0; i < len; i++) {
        P.known[i] = false;
        if (mode == SRC_VALUE) {
            P.val[i] = (uint8_t)value;
            P.known[i] = true;
        } else if (mode == SRC_BYTES && is_hostc(ws.c)) {
            P.val[i] = ((const uint8_t *)src)[i];
            P.known[i] = true;
        } else if (mode == SRC_BYTES && ws.c == C_DEV && ws.var >= 0 &&
                   M.pcount[ws.dev][ws.var][ws.off + i] == 0) {
            P.val[i] = M.shadow[ws.dev][ws.var][ws.off + i];   /* before the call: memmove */
            P.known[i] = true;
        }
    }
}

static void plan_read(int d, int v, size_t off, size_t len, const void *dst, struct where wd)
{
    if (wd.c != C_HOST)
        return;   /* only the harness's own buffer is compared */
    P.read = true;
    P.d = d;
    P.v = v;
    P.off = off;
    P.len = len;
    P.host = dst;
}

/* A synchronous (or completed) successful call: apply / verify. */
static void plan_apply_sync(void)
{
    if (P.write)
        for (size_t i = 0; i < P.len; i++) {
            size_t k = P.off + i;
            if (M.pcount[P.d][P.v][k])
                continue;
            if (P.known[i])
                M.shadow[P.d][P.v][k] = P.val[i];
            else
                resync_byte(P.d, P.v, k);
        }
    if (P.read)
        for (size_t i = 0; i < P.len; i++) {
            size_t k = P.off + i;
            if (M.pcount[P.d][P.v][k] == 0 && P.host[i] != M.shadow[P.d][P.v][k])
                VIOLATION("read of device %d variable %s byte %zu gave 0x%02x, expected 0x%02x",
                          P.d, desc[P.v]->name, k, P.host[i], M.shadow[P.d][P.v][k]);
        }
}

/* After a copy known to have completed: dst holds src's bytes. Only when no
 * queued work could still change either side, and the ranges do not overlap. */
static void verify_copy(const void *dst, const void *src, size_t n)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (M.npend || (d < s + n && s < d + n))
        return;
    if (memcmp(dst, src, n) == 0)
        return;
    size_t i = 0;
    while (((const uint8_t *)dst)[i] == ((const uint8_t *)src)[i])
        i++;
    VIOLATION("after a completed copy of %zu bytes from %p to %p, byte %zu differs "
              "(0x%02x vs 0x%02x)", n, src, dst, i, ((const uint8_t *)dst)[i],
              ((const uint8_t *)src)[i]);
}

/* ---- operations ----------------------------------------------------------------- */

enum op {
    OP_SET_DEVICE, OP_RESET_DEVICE, OP_RESET_DEVICE_FORCE, OP_CREATE_CONTEXT,
    OP_SET_CURRENT_CONTEXT, OP_DESTROY_CONTEXT, OP_GET_CURRENT_CONTEXT, OP_MALLOC, OP_FREE,
    OP_MALLOC_HOST, OP_FREE_HOST, OP_CREATE_STREAM, OP_DESTROY_STREAM, OP_DESTROY_STREAM_FORCE,
    OP_SYNC_STREAM, OP_SYNC_STREAM_TIMEOUT, OP_SYNC_DEVICE, OP_CREATE_EVENT, OP_RECORD_EVENT,
    OP_STREAM_WAIT_EVENT, OP_DESTROY_EVENT, OP_QUERY_EVENT, OP_SYNC_EVENT, OP_GET_SYMBOL_ADDRESS,
    OP_GET_SYMBOL_SIZE, OP_MEMCPY_TO_SYMBOL, OP_MEMCPY_FROM_SYMBOL, OP_MEMCPY_TO_SYMBOL_ASYNC,
    OP_MEMCPY_FROM_SYMBOL_ASYNC, OP_MEMCPY, OP_MEMCPY_ASYNC, OP_MEMSET, OP_MEMSET_ASYNC,
    OP_EVENT_ELAPSED, OP_LAUNCH_HOST_FUNC,
    OP_COUNT
};

#define SENTINEL ((void *)(uintptr_t)0x5a5a5a5a5a5a5a5aull)

static void learn_current_after_set(int d)
{
    aclrtContext c = NULL;
    aclError rc = aclrtGetCurrentContext(&c);
    if (rc || !c)
        VIOLATION("aclrtGetCurrentContext failed (%d) right after aclrtSetDevice(%d)", rc, d);
    if (M.default_ctx[d] && M.default_ctx[d] != c)
        VIOLATION("aclrtSetDevice(%d) made %p current, not the device's default context %p", d, c,
                  M.default_ctx[d]);
    if (!M.default_ctx[d]) {
        int slot = -1;
        for (int i = 0; i < MAX_CTX && slot < 0; i++)
            if (!M.cx[i].live)
                slot = i;
        if (slot < 0)
            VIOLATION("harness: context table full (op should have been skipped)");
        M.cx[slot] = (struct ctxrec){c, d, true, true};
        M.default_ctx[d] = c;
    }
    M.cur = c;
}

static int free_ctx_slot(void)
{
    for (int i = 0; i < MAX_CTX; i++)
        if (!M.cx[i].live)
            return i;
    return -1;
}

static void op_set_device(const uint8_t *a)
{
    int32_t d = pick_dev(a[0]);
    g_api = "aclrtSetDevice";
    bool valid = d >= 0 && d < NDEV;
    if (valid && !M.default_ctx[d] && free_ctx_slot() < 0)
        return;
    TRACE("aclrtSetDevice(%d)\n", d);
    aclError rc = aclrtSetDevice(d);
    check_rc(g_api, rc, L_SET_DEVICE, valid ? E_OK_OOM : E_FAIL, "device id");
    if (!rc) {
        M.ref[d]++;
        learn_current_after_set(d);
    }
}

static void op_reset_device(const uint8_t *a, bool force)
{
    int32_t d = pick_dev(a[0]);
    g_api = force ? "aclrtResetDeviceForce" : "aclrtResetDevice";
    bool valid = d >= 0 && d < NDEV;
    if (valid && release_closes(d, force) && cross_pending(d))
        return;   /* another device's stream still uses d's memory: the harness's own rule */
    TRACE("%s(%d)\n", g_api, d);
    aclError rc = force ? aclrtResetDeviceForce(d) : aclrtResetDevice(d);
    check_rc(g_api, rc, L_RESET, valid ? E_OK : E_FAIL, "device id");
    if (!rc)
        model_release(d, force);
}

static void op_create_context(const uint8_t *a)
{
    int32_t d = pick_dev(a[0]);
    bool null_out = a[1] % 8 == 7;
    g_api = "aclrtCreateContext";
    int slot = free_ctx_slot();
    if (slot < 0)
        return;
    aclrtContext c = SENTINEL;
    bool valid = d >= 0 && d < NDEV;
    TRACE("aclrtCreateContext(%s, %d)\n", null_out ? "NULL" : "&c", d);
    aclError rc = aclrtCreateContext(null_out ? NULL : &c, d);
    check_rc(g_api, rc, L_CREATE_CTX, null_out || !valid ? E_FAIL : E_OK_OOM, "context, device id");
    if (rc) {
        if (c != SENTINEL)
            VIOLATION("aclrtCreateContext failed but wrote its out-parameter");
        return;
    }
    M.cx[slot] = (struct ctxrec){c, d, false, true};
    M.ref[d]++;
    M.cur = c;
}

static void op_set_current_context(const uint8_t *a)
{
    aclrtContext c = pick_ctx(a[0], a[1], a[2]);
    g_api = "aclrtSetCurrentContext";
    TRACE("aclrtSetCurrentContext(%p)\n", c);
    aclError rc = aclrtSetCurrentContext(c);
    check_rc(g_api, rc, L_CTX, ctx_live(c) ? E_OK : E_FAIL, "live context handle");
    if (!rc)
        M.cur = c;
}

static void op_destroy_context(const uint8_t *a)
{
    aclrtContext c = pick_ctx(a[0], a[1], a[2]);
    g_api = "aclrtDestroyContext";
    struct ctxrec *r = ctx_live(c);
    enum expect e = !r || r->is_default ? E_FAIL : E_OK;
    if (e == E_OK && release_closes(r->dev, false) && cross_pending(r->dev))
        return;
    TRACE("aclrtDestroyContext(%p)\n", c);
    aclError rc = aclrtDestroyContext(c);
    check_rc(g_api, rc, L_CTX, e, "live, non-default context");
    if (rc)
        return;
    /* Its streams are destroyed (waiting for their work), then the device released. */
    settle_key((uintptr_t)c, true);
    for (int i = 0; i < MAX_STREAM; i++)
        if (M.st[i].live && M.st[i].ctx == c) {
            settle_key((uintptr_t)M.st[i].h, true);
            M.st[i].live = false;
        }
    r->live = false;
    model_release(r->dev, false);
}

static void op_get_current_context(const uint8_t *a)
{
    bool null_out = a[0] % 8 == 7;
    g_api = "aclrtGetCurrentContext";
    aclrtContext c = SENTINEL;
    TRACE("aclrtGetCurrentContext(%s)\n", null_out ? "NULL" : "&c");
    aclError rc = aclrtGetCurrentContext(null_out ? NULL : &c);
    check_rc(g_api, rc, L_GET_CTX, null_out || !cur_ctx() ? E_FAIL : E_OK, "current context");
    if (!rc && c != M.cur)
        VIOLATION("aclrtGetCurrentContext gave %p, the current context is %p", c, M.cur);
    if (rc && c != SENTINEL)
        VIOLATION("aclrtGetCurrentContext failed but wrote its out-parameter");
    int32_t d = -77;
    g_api = "aclrtGetDevice";
    TRACE("aclrtGetDevice(&d)\n");
    rc = aclrtGetDevice(&d);
    check_rc(g_api, rc, L_GET_CTX, cur_ctx() ? E_OK : E_FAIL, "current context");
    if (!rc && d != cur_dev())
        VIOLATION("aclrtGetDevice gave %d, the current context is on device %d", d, cur_dev());
    if (rc && d != -77)
        VIOLATION("aclrtGetDevice failed but wrote its out-parameter");
}

static bool overlaps_live(uintptr_t p, size_t n)
{
    for (int i = 0; i < MAX_DALLOC; i++)
        if (M.da[i].live && p < M.da[i].p + M.da[i].size && M.da[i].p < p + n)
            return true;
    for (int d = 0; d < NDEV; d++)
        for (int v = 0; v < NVARS; v++) {
            uintptr_t in = inst_now(d, v);
            if (dev_open(d) && in && p < in + var_size(v) && in < p + n)
                return true;
        }
    for (int i = 0; i < MAX_PALLOC; i++)
        if (M.pa[i].live && p < M.pa[i].p + M.pa[i].size && M.pa[i].p < p + n)
            return true;
    return false;
}

static void op_malloc(const uint8_t *a)
{
    static const size_t sizes[16] = {0, 1, 63, 64, 65, 100, 1000, 4096, (size_t)16 << 20, 65536,
                                     (size_t)1 << 20, (size_t)32 << 20, DEVICE_MEMORY,
                                     DEVICE_MEMORY + 1, SIZE_MAX, SIZE_MAX - 63};
    static const unsigned policies[16] = {0, 1, 2, 3, 4, 5, 6, 7, 0x100, 0x1000, 0x101, 0x1002,
                                          8, 0xff, 0xffffffffu, 0x2000};
    bool null_out = a[0] % 8 == 7;
    size_t size = a[1] % 32 < 16 ? sizes[a[1] % 16] : (size_t)a[2] * 64 + a[1] % 8;
    unsigned policy = a[3] % 2 ? 0 : policies[a[3] / 2 % 16];
    g_api = "aclrtMalloc";
    int slot = -1;
    for (int i = 0; i < MAX_DALLOC && slot < 0; i++)
        if (!M.da[i].live)
            slot = i;
    if (slot < 0)
        return;
    bool bad_policy = (policy & 0xffu) > 7 || (policy & ~(0xffu | 0x100u | 0x1000u));
    enum expect e = null_out || size == 0 || bad_policy || !cur_ctx() || size > DEVICE_MEMORY
                        ? E_FAIL : E_OK_OOM;
    void *p = SENTINEL;
    TRACE("aclrtMalloc(%s, %zu, 0x%x)\n", null_out ? "NULL" : "&p", size, policy);
    aclError rc = aclrtMalloc(null_out ? NULL : &p, size, (aclrtMemMallocPolicy)policy);
    check_rc(g_api, rc, L_MALLOC, e, "out-param, size, policy, context, capacity");
    if (rc) {
        if (p != SENTINEL)
            VIOLATION("aclrtMalloc failed but wrote its out-parameter");
        return;
    }
    TRACE("    = %p\n", p);
    if (!p || (uintptr_t)p % 64)
        VIOLATION("aclrtMalloc returned %p: NULL or not 64-byte aligned", p);
    if (overlaps_live((uintptr_t)p, size))
        VIOLATION("aclrtMalloc returned [%p, +%zu) overlapping a live allocation or instance", p,
                  size);
    int d = cur_dev();
    M.da[slot] = (struct dalloc){(uintptr_t)p, size, d, M.epoch[d], true};
    span_add(d, (uintptr_t)p, size);
}

static void op_free(const uint8_t *a)
{
    void *p = pick_ptr(a[0], a[1], a[2]);
    g_api = "aclrtFree";
    int live = -1;
    for (int i = 0; i < MAX_DALLOC; i++)
        if (M.da[i].live && M.da[i].p == (uintptr_t)p)
            live = i;
    if (live >= 0 && alloc_write_pending(live))
        return;   /* the harness does not free memory its queued work still writes */
    TRACE("aclrtFree(%p) [%s]\n", p, cls_name[classify(p).c]);
    aclError rc = aclrtFree(p);
    check_rc(g_api, rc, L_FREE, live >= 0 ? E_OK : E_FAIL, "start of a live aclrtMalloc block");
    if (!rc) {
        M.da[live].live = false;
        remember_old(M.da[live].p);
    }
}

static void op_malloc_host(const uint8_t *a)
{
    static const size_t sizes[12] = {0, 1, 64, 100, 4096, 4097, 65536, (size_t)1 << 20,
                                     SIZE_MAX, (size_t)1 << 50, SIZE_MAX - 4095, 1000};
    bool null_out = a[0] % 8 == 7;
    size_t size = a[1] % 24 < 12 ? sizes[a[1] % 12] : (size_t)a[2] * 16 + 1;
    g_api = "aclrtMallocHost";
    int slot = -1;
    for (int i = 0; i < MAX_PALLOC && slot < 0; i++)
        if (!M.pa[i].live)
            slot = i;
    if (slot < 0)
        return;
    void *p = SENTINEL;
    enum expect e = null_out || size == 0 || size >= (size_t)1 << 50 ? E_FAIL : E_OK_OOM;
    TRACE("aclrtMallocHost(%s, %zu)\n", null_out ? "NULL" : "&p", size);
    aclError rc = aclrtMallocHost(null_out ? NULL : &p, size);
    check_rc(g_api, rc, L_MALLOC_HOST, e, "out-param, size");
    if (rc) {
        if (p != SENTINEL)
            VIOLATION("aclrtMallocHost failed but wrote its out-parameter");
        return;
    }
    TRACE("    = %p\n", p);
    if (!p || (uintptr_t)p % 64)
        VIOLATION("aclrtMallocHost returned %p: NULL or not 64-byte aligned", p);
    if (overlaps_live((uintptr_t)p, size))
        VIOLATION("aclrtMallocHost returned [%p, +%zu) overlapping a live allocation", p, size);
    M.pa[slot] = (struct palloc){(uintptr_t)p, size, true};
    if (!M.pin_lo || (uintptr_t)p < M.pin_lo)
        M.pin_lo = (uintptr_t)p;
    if ((uintptr_t)p + size > M.pin_hi)
        M.pin_hi = (uintptr_t)p + size;
}

static void op_free_host(const uint8_t *a)
{
    void *p = pick_ptr(a[0], a[1], a[2]);
    g_api = "aclrtFreeHost";
    int live = -1;
    for (int i = 0; i < MAX_PALLOC; i++)
        if (M.pa[i].live && M.pa[i].p == (uintptr_t)p)
            live = i;
    TRACE("aclrtFreeHost(%p) [%s]\n", p, cls_name[classify(p).c]);
    aclError rc = aclrtFreeHost(p);
    check_rc(g_api, rc, L_FREE_HOST, live >= 0 ? E_OK : E_FAIL,
             "start of a live aclrtMallocHost block");
    if (!rc)
        M.pa[live].live = false;
}

static void op_create_stream(const uint8_t *a)
{
    bool null_out = a[0] % 8 == 7, config = a[1] % 2;
    g_api = config ? "aclrtCreateStreamWithConfig" : "aclrtCreateStream";
    int slot = -1;
    for (int i = 0; i < MAX_STREAM && slot < 0; i++)
        if (!M.st[i].live)
            slot = i;
    if (slot < 0)
        return;
    aclrtStream s = SENTINEL;
    TRACE("%s(%s)\n", g_api, null_out ? "NULL" : "&s");
    aclError rc = config ? aclrtCreateStreamWithConfig(null_out ? NULL : &s, a[2], a[3])
                         : aclrtCreateStream(null_out ? NULL : &s);
    /* Persistent, CPU-schedule and device-use-only streams cannot be
     * simulated: 207000 (the other flag bits make ordinary streams). */
    bool unsimulated = config && ((uint32_t)a[3] & (ACL_STREAM_PERSISTENT | ACL_STREAM_CPU_SCHEDULE |
                                                    ACL_STREAM_DEVICE_USE_ONLY));
    check_rc(g_api, rc, L_CREATE_STREAM, null_out || !cur_ctx() || unsimulated ? E_FAIL : E_OK_OOM,
             "out-param, context, flags");
    if (rc) {
        if (s != SENTINEL)
            VIOLATION("%s failed but wrote its out-parameter", g_api);
        return;
    }
    if (!s || stream_live(s))
        VIOLATION("%s returned %p: NULL or an existing stream", g_api, s);
    M.st[slot] = (struct strec){s, M.cur, cur_dev(), true};
}

/* True if the model has work pending on the stream with this key. */
static bool key_pending(uintptr_t key)
{
    for (int i = 0; i < M.npend; i++)
        if (M.pe[i].key == key)
            return true;
    return false;
}

/* Whether an event's latest record sits on stream key, not yet known to have run. */
static bool record_pending(uintptr_t key)
{
    for (int i = 0; i < MAX_EVENT; i++)
        if (M.ev[i].live && M.ev[i].recorded && !M.ev[i].complete && M.ev[i].key == key)
            return true;
    return false;
}

static void op_destroy_stream(const uint8_t *a, bool force)
{
    aclrtStream s = pick_stream(a[0], a[1], a[2]);
    /* aclrtDestroyStreamForce returns at once while queued work still runs
     * (issue 8): with work pending, the model could not tell when it lands,
     * so such streams are destroyed the waiting way. */
    if (force && (key_pending((uintptr_t)s) || record_pending((uintptr_t)s)))
        force = false;
    g_api = force ? "aclrtDestroyStreamForce" : "aclrtDestroyStream";
    struct strec *r = stream_live(s);
    /* Any live stream, also of another context (docs/runtime.md). */
    enum expect e = !r ? E_FAIL : E_OK;
    TRACE("%s(%p)\n", g_api, s);
    aclError rc = force ? aclrtDestroyStreamForce(s) : aclrtDestroyStream(s);
    check_rc(g_api, rc, L_DESTROY_STREAM, e, "live stream");
    if (!rc) {
        settle_key((uintptr_t)s, true);   /* (force only ever destroys idle streams here) */
        r->live = false;
    }
}

static void op_sync_stream(const uint8_t *a, bool timeout)
{
    static const int32_t timeouts[8] = {-1, -1, 1, 100, 0, -2, INT_MIN, 10000};
    aclrtStream s = pick_stream(a[0], a[1], a[2]);
    int32_t t = timeouts[a[3] % 8];
    uintptr_t key;
    int sdev;
    bool ok = resolve_stream(s, &key, &sdev) == 0;
    g_api = timeout ? "aclrtSynchronizeStreamWithTimeout" : "aclrtSynchronizeStream";
    enum expect e = !ok ? E_FAIL : E_OK;
    if (timeout && (t == 0 || t < -1))
        e = E_FAIL;
    else if (timeout && t > 0 && e == E_OK)
        e = E_OK_TIMEOUT;
    TRACE("%s(%p%s)\n", g_api, s, timeout ? ", t" : "");
    aclError rc = timeout ? aclrtSynchronizeStreamWithTimeout(s, t) : aclrtSynchronizeStream(s);
    check_rc(g_api, rc, L_SYNC_STREAM, e, "stream of the current context, timeout");
    if (!rc)
        settle_key(key, true);
}

static void op_sync_device(void)
{
    g_api = "aclrtSynchronizeDevice";
    TRACE("aclrtSynchronizeDevice()\n");
    aclError rc = aclrtSynchronizeDevice();
    check_rc(g_api, rc, L_SYNC_DEVICE, cur_ctx() ? E_OK_OOM : E_FAIL, "current context");
    if (!rc)
        settle_sdev(cur_dev(), true);
}

static void op_create_event(const uint8_t *a)
{
    bool null_out = a[0] % 8 == 7;
    g_api = "aclrtCreateEvent";
    int slot = -1;
    for (int i = 0; i < MAX_EVENT && slot < 0; i++)
        if (!M.ev[i].live)
            slot = i;
    if (slot < 0)
        return;
    aclrtEvent ev = SENTINEL;
    TRACE("aclrtCreateEvent(%s)\n", null_out ? "NULL" : "&e");
    aclError rc = aclrtCreateEvent(null_out ? NULL : &ev);
    check_rc(g_api, rc, L_CREATE, null_out || !cur_ctx() ? E_FAIL : E_OK_OOM, "out-param, context");
    if (rc) {
        if (ev != SENTINEL)
            VIOLATION("aclrtCreateEvent failed but wrote its out-parameter");
        return;
    }
    if (!ev || event_live(ev))
        VIOLATION("aclrtCreateEvent returned %p: NULL or an existing event", ev);
    M.ev[slot] = (struct evrec){.h = ev, .live = true};
}

static void op_event_task(const uint8_t *a, bool wait)
{
    aclrtEvent ev = pick_event(a[0], a[1], a[2]);
    aclrtStream s = pick_stream(a[3], a[4], a[5]);
    uintptr_t key;
    int sdev;
    bool ok = event_live(ev) && resolve_stream(s, &key, &sdev) == 0;
    g_api = wait ? "aclrtStreamWaitEvent" : "aclrtRecordEvent";
    TRACE("%s(ev %p, stream %p)\n", g_api, ev, s);
    aclError rc = wait ? aclrtStreamWaitEvent(s, ev) : aclrtRecordEvent(ev, s);
    check_rc(g_api, rc, L_ASYNC, ok ? E_OK_OOM : E_FAIL, "live event, stream of the current context");
    if (!rc && !wait) {
        struct evrec *r = event_live(ev);
        r->recorded = true;
        r->complete = r->ran = false;
        r->key = key;
        r->sdev = sdev;
    }
}

static void op_event_simple(const uint8_t *a, enum op op)
{
    aclrtEvent ev = pick_event(a[0], a[1], a[2]);
    bool live = event_live(ev) != NULL;
    aclError rc;
    if (op == OP_DESTROY_EVENT) {
        g_api = "aclrtDestroyEvent";
        TRACE("aclrtDestroyEvent(%p)\n", ev);
        rc = aclrtDestroyEvent(ev);
        check_rc(g_api, rc, L_EVENT, live ? E_OK : E_FAIL, "live event");
        if (!rc)
            event_live(ev)->live = false;
    } else if (op == OP_SYNC_EVENT) {
        g_api = "aclrtSynchronizeEvent";
        TRACE("aclrtSynchronizeEvent(%p)\n", ev);
        rc = aclrtSynchronizeEvent(ev);
        check_rc(g_api, rc, L_EVENT, live ? E_OK : E_FAIL, "live event");
        if (!rc)
            event_live(ev)->complete = true;   /* reached: run or discarded */
    } else {
        bool null_out = a[3] % 8 == 7;
        aclrtEventRecordedStatus st = (aclrtEventRecordedStatus)77;
        g_api = "aclrtQueryEventStatus";
        TRACE("aclrtQueryEventStatus(%p, %s)\n", ev, null_out ? "NULL" : "&st");
        rc = aclrtQueryEventStatus(ev, null_out ? NULL : &st);
        check_rc(g_api, rc, L_EVENT, live && !null_out ? E_OK : E_FAIL, "live event, out-param");
        if (!rc && st != ACL_EVENT_RECORDED_STATUS_NOT_READY &&
            st != ACL_EVENT_RECORDED_STATUS_COMPLETE)
            VIOLATION("aclrtQueryEventStatus gave status %d", (int)st);
        struct evrec *r = event_live(ev);
        if (!rc && !r->recorded && st != ACL_EVENT_RECORDED_STATUS_NOT_READY)
            VIOLATION("aclrtQueryEventStatus: event never recorded but status %d", (int)st);
        if (!rc && r->recorded && r->complete && st != ACL_EVENT_RECORDED_STATUS_COMPLETE)
            VIOLATION("aclrtQueryEventStatus: the latest record has run (stream synchronized) "
                      "but status is %d", (int)st);
        if (rc && (int)st != 77)
            VIOLATION("aclrtQueryEventStatus failed but wrote its out-parameter");
    }
}

/* Index of the variable whose symbol is exactly s, or -1. */
static int var_of_symbol(const void *s)
{
    for (int v = 0; v < NVARS; v++)
        if (s == desc[v]->symbol)
            return v;
    return -1;
}

static void op_get_symbol(const uint8_t *a, bool size_query)
{
    const void *sym = pick_sym(a[0], a[1]);
    bool null_out = a[2] % 8 == 7;
    int v = var_of_symbol(sym);
    g_api = size_query ? "aclrtGetSymbolSize" : "aclrtGetSymbolAddress";
    enum expect e = null_out || !sym || !cur_ctx() || v < 0 ? E_FAIL : E_OK_OOM;
    void *p = SENTINEL;
    size_t n = 0x5a5a;
    TRACE("%s(%p, %s)\n", g_api, sym, null_out ? "NULL" : "&out");
    aclError rc = size_query ? aclrtGetSymbolSize(sym, null_out ? NULL : &n)
                             : aclrtGetSymbolAddress(sym, null_out ? NULL : &p);
    check_rc(g_api, rc, L_SYM_GET, e, "symbol, out-param, context");
    if (rc) {
        if (p != SENTINEL || n != 0x5a5a)
            VIOLATION("%s failed but wrote its out-parameter", g_api);
        return;
    }
    if (size_query && n != var_size(v))
        VIOLATION("aclrtGetSymbolSize(%s) = %zu, expected %zu", desc[v]->name, n, var_size(v));
    if (!size_query && (uintptr_t)p != inst_now(cur_dev(), v))
        VIOLATION("aclrtGetSymbolAddress(%s) = %p, but the instance on the current device %d "
                  "is %p", desc[v]->name, p, cur_dev(), (void *)inst_now(cur_dev(), v));
}

/* The four symbol copies. */
static void op_symbol_copy(const uint8_t *a, bool to, bool async)
{
    const void *sym = pick_sym(a[0], a[1]);
    void *host = pick_ptr(a[2], a[3], a[4]);
    int v = var_of_symbol(sym);
    size_t size = v >= 0 ? var_size(v) : 64;
    size_t offset = pick_sym_offset(a[7], a[8], size);
    size_t count = pick_count(a[5], a[6], offset <= size ? size - offset : size);
    int kind = pick_kind(a[9]);
    aclrtStream s = async ? pick_stream(a[10], a[11], a[12]) : NULL;
    struct where wh = classify(host);
    size_t hostMax = to ? 0 : pick_max(a[13], a[14], count, wh.room);
    g_api = to ? (async ? "aclrtMemcpyToSymbolAsync" : "aclrtMemcpyToSymbol")
               : (async ? "aclrtMemcpyFromSymbolAsync" : "aclrtMemcpyFromSymbol");
    uintptr_t key = 0;
    int sdev = -1;
    enum expect e = E_ANY;
    const char *why = "";
    for (int iter = 0;; iter++) {
        if (iter == 4)
            return;   /* could not make the call safe: skip it */
        wh = classify(host);
        if (count == 0) { e = E_OK; why = "count 0 succeeds first"; break; }
        if (!sym || !host) { e = E_FAIL; why = "NULL symbol or host pointer"; break; }
        if (!to && count > hostMax) { e = E_FAIL; why = "count > dstMax"; break; }
        if (to ? kind != 1 && kind != 4 : kind != 2 && kind != 4) {
            e = E_FAIL; why = "kind not allowed"; break;
        }
        if (!cur_ctx()) { e = E_FAIL; why = "no current context"; break; }
        if (v < 0) { e = E_FAIL; why = "not a registered symbol"; break; }
        if (offset + count < offset) { e = E_FAIL; why = "offset + count overflows"; break; }
        if (offset + count > size) { e = E_FAIL; why = "offset + count > size"; break; }
        if (async && resolve_stream(s, &key, &sdev)) {
            e = E_FAIL; why = "stream not of the current context"; break;
        }
        if (is_devc(wh.c)) { e = E_FAIL; why = "host side is device memory"; break; }
        if (wh.c == C_WILD || wh.c == C_PINFREE || (!to && wh.c == C_HOSTRO)) {
            host = pick_hostbuf(a[4]);   /* would be dereferenced: use our own buffer */
            continue;
        }
        if (count > wh.room) {   /* ordinary or page-locked host memory: never overrun it */
            if (to)
                count = wh.room;
            else
                hostMax = wh.room;
            continue;
        }
        e = E_OK_OOM;
        why = "valid call";
        break;
    }
    bool pinned = wh.c == C_PIN;
    if (async && !pinned && e == E_OK_OOM && M.npend >= MAX_PEND - 2)
        return;
    if (FUZZ_TSAN && M.npend && e != E_FAIL)
        return;
    int d = cur_dev();
    plan_clear();
    if (e == E_OK_OOM) {
        if (to)
            plan_write(d, v, offset, count, host, wh, pinned ? SRC_UNKNOWN : SRC_BYTES, 0);
        else
            plan_read(d, v, offset, count, host, wh);
    }
    TRACE("%s(sym %p [%d], host %p [%s], count %zu, offset %zu, kind %d, max %zu, stream %p)\n",
          g_api, sym, v, host, cls_name[wh.c], count, offset, kind, hostMax, s);
    aclError rc;
    if (to)
        rc = async ? aclrtMemcpyToSymbolAsync(sym, host, count, offset, (aclrtMemcpyKind)kind, s)
                   : aclrtMemcpyToSymbol(sym, host, count, offset, (aclrtMemcpyKind)kind);
    else
        rc = async ? aclrtMemcpyFromSymbolAsync(host, hostMax, sym, count, offset,
                                                (aclrtMemcpyKind)kind, s)
                   : aclrtMemcpyFromSymbol(host, hostMax, sym, count, offset, (aclrtMemcpyKind)kind);
    if (async)
        check_rc(g_api, rc, L_SYM_COPY_ASYNC, e, why);
    else
        check_rc(g_api, rc, L_SYM_COPY, e, why);
    if (rc || count == 0)
        return;
    if (!async) {
        plan_apply_sync();
    } else if (!pinned) {       /* pageable: returned after the copy ran */
        settle_key(key, true);
        plan_apply_sync();
    } else if (to) {
        pend_add(key, sdev, d, v, -1, offset, count);
    } else {
        pend_add(key, sdev, d, -1, -1, 0, 0);
    }
}

/* aclrtMemcpy / aclrtMemcpyAsync. */
static void op_memcpy(const uint8_t *a, bool async)
{
    void *dst = pick_ptr(a[0], a[1], a[2]);
    void *src = pick_ptr(a[3], a[4], a[5]);
    struct where wd = classify(dst), ws = classify(src);
    size_t hint = wd.room && ws.room ? (wd.room < ws.room ? wd.room : ws.room)
                                     : wd.room ? wd.room : ws.room;
    size_t count = pick_count(a[6], a[7], hint);
    size_t destMax = pick_max(a[8], a[9], count, wd.room);
    int kind = pick_kind(a[10]);
    aclrtStream s = async ? pick_stream(a[11], a[12], a[13]) : NULL;
    g_api = async ? "aclrtMemcpyAsync" : "aclrtMemcpy";
    uintptr_t key = 0;
    int sdev = -1;
    enum expect e = E_ANY;
    const char *why = "";
    for (int iter = 0;; iter++) {
        if (iter == 6)
            return;
        wd = classify(dst);
        ws = classify(src);
        if (count == 0) { e = E_OK; why = "count 0 succeeds first"; break; }
        if (!dst || !src) { e = E_FAIL; why = "NULL pointer"; break; }
        if (count > destMax) { e = E_FAIL; why = "count > destMax"; break; }
        if (!async && !cur_ctx()) { e = E_FAIL; why = "no current context"; break; }
        if (async && resolve_stream(s, &key, &sdev)) {
            e = E_FAIL; why = "stream not of the current context"; break;
        }
        if (kind < 0 || kind > 7) { e = E_FAIL; why = "kind out of range"; break; }
        int rd, rs;   /* role: 1 device, 0 host, -1 decided by where the pointer is */
        switch (kind) {
        case 0: rd = 0; rs = 0; break;
        case 1: case 5: rd = 1; rs = 0; break;
        case 2: rd = 0; rs = 1; break;
        case 4: rd = -1; rs = -1; break;
        default: rd = 1; rs = 1; break;
        }
        /* A pointer the library would treat as host memory must be our own buffer. */
        if ((wd.c == C_WILD && rd != 1) || wd.c == C_HOSTRO) { dst = pick_hostbuf(a[2]); continue; }
        if (ws.c == C_WILD && rs != 1) { src = pick_hostbuf(a[5]); continue; }
        if (rd < 0)
            rd = is_devc(wd.c);
        if (rs < 0)
            rs = is_devc(ws.c);
        if (rd == 1 && !is_devc(wd.c)) { e = E_FAIL; why = "kind wants device dst"; break; }
        if (rd == 0 && is_devc(wd.c)) { e = E_FAIL; why = "kind wants host dst"; break; }
        if (rs == 1 && !is_devc(ws.c)) { e = E_FAIL; why = "kind wants device src"; break; }
        if (rs == 0 && is_devc(ws.c)) { e = E_FAIL; why = "kind wants host src"; break; }
        if (wd.c == C_DEVFREE || wd.c == C_PINFREE) { e = E_FAIL; why = "dst not allocated"; break; }
        if (ws.c == C_DEVFREE || ws.c == C_PINFREE) { e = E_FAIL; why = "src not allocated"; break; }
        if ((wd.c == C_DEV || wd.c == C_PIN) && count > wd.room) {
            e = E_FAIL; why = "dst range overruns its allocation"; break;
        }
        if ((ws.c == C_DEV || ws.c == C_PIN) && count > ws.room) {
            e = E_FAIL; why = "src range overruns its allocation"; break;
        }
        if (kind == 6 && wd.dev != ws.dev) { e = E_FAIL; why = "inner copy across devices"; break; }
        if (kind == 7 && wd.dev == ws.dev) { e = E_FAIL; why = "inter copy on one device"; break; }
        if ((is_hostc(wd.c) && count > wd.room) || (is_hostc(ws.c) && count > ws.room)) {
            size_t room = is_hostc(wd.c) ? wd.room : SIZE_MAX;
            if (is_hostc(ws.c) && ws.room < room)
                room = ws.room;
            count = room;
            continue;
        }
        e = E_OK;
        why = "valid call";
        if ((kind == 3 || kind == 4) && wd.c == C_DEV && ws.c == C_DEV && wd.dev != ws.dev) {
            e = E_ANY;   /* peer copy between devices: CANN needs P2P, aclsim allows it */
            why = "copy between two devices";
        }
        break;
    }
    bool pageable = is_hostc(wd.c) || is_hostc(ws.c);
    if (async && !pageable && e != E_FAIL && M.npend >= MAX_PEND - 2)
        return;
    if (FUZZ_TSAN && M.npend && e != E_FAIL)
        return;
    plan_clear();
    if (e != E_FAIL) {
        if (wd.c == C_DEV && wd.var >= 0)
            plan_write(wd.dev, wd.var, wd.off, count, src, ws, SRC_BYTES, 0);
        else if (ws.c == C_DEV && ws.var >= 0)
            plan_read(ws.dev, ws.var, ws.off, count, dst, wd);
    }
    TRACE("%s(dst %p [%s], max %zu, src %p [%s], count %zu, kind %d, stream %p)\n", g_api, dst,
          cls_name[wd.c], destMax, src, cls_name[ws.c], count, kind, s);
    aclError rc = async ? aclrtMemcpyAsync(dst, destMax, src, count, (aclrtMemcpyKind)kind, s)
                        : aclrtMemcpy(dst, destMax, src, count, (aclrtMemcpyKind)kind);
    if (async)
        check_rc(g_api, rc, L_ASYNC, e, why);
    else
        check_rc(g_api, rc, L_MEMCPY, e, why);
    if (rc || count == 0)
        return;
    if (!async) {
        plan_apply_sync();
        verify_copy(dst, src, count);
    } else if (pageable) {
        settle_key(key, true);
        plan_apply_sync();
        verify_copy(dst, src, count);
    } else {
        if (wd.c == C_DEV)
            pend_add(key, sdev, wd.dev, wd.var, wd.alloc, wd.off, wd.var >= 0 ? count : 0);
        else
            pend_add(key, sdev, -1, -1, -1, 0, 0);   /* page-locked destination */
        if (ws.c == C_DEV)
            pend_add(key, sdev, ws.dev, -1, -1, 0, 0);
        if (count >= ((size_t)8 << 20)) {
            /* A large copy is split across the device's workers: wait for it and
             * compare the two ranges (the harness's own synchronize). */
            aclError src2 = aclrtSynchronizeStream(s);
            if (src2)
                VIOLATION("aclrtSynchronizeStream(%p) after a large copy failed with %d (%s)", s,
                          src2, aclGetRecentErrMsg());
            settle_key(key, true);
            verify_copy(dst, src, count);
        }
    }
}

static void op_memset(const uint8_t *a, bool async)
{
    static const int32_t values[8] = {0, 0xff, 0x5a, -1, 0x1234, INT_MIN, 1, 0x80};
    void *p = pick_ptr(a[0], a[1], a[2]);
    struct where w = classify(p);
    size_t count = pick_count(a[3], a[4], w.room);
    size_t maxCount = pick_max(a[5], a[6], count, w.room);
    int32_t value = a[7] % 2 ? a[7] : values[a[7] / 2 % 8];
    aclrtStream s = async ? pick_stream(a[8], a[9], a[10]) : NULL;
    g_api = async ? "aclrtMemsetAsync" : "aclrtMemset";
    uintptr_t key = 0;
    int sdev = -1;
    enum expect e;
    const char *why;
    if (count == 0) { e = E_OK; why = "count 0 succeeds first"; }
    else if (!p) { e = E_FAIL; why = "NULL"; }
    else if (count > maxCount) { e = E_FAIL; why = "count > maxCount"; }
    else if (w.c != C_DEV && w.c != C_PIN) { e = E_FAIL; why = "not device or page-locked memory"; }
    else if (count > w.room) { e = E_FAIL; why = "range overruns its allocation"; }
    else if (async && resolve_stream(s, &key, &sdev)) { e = E_FAIL; why = "stream"; }
    else if (!async && !cur_ctx()) { e = E_ANY; why = "no current context (CANN silent)"; }
    else { e = E_OK; why = "valid call"; }
    if (async && e == E_OK && M.npend >= MAX_PEND - 2)
        return;
    if (FUZZ_TSAN && M.npend && e != E_FAIL)
        return;
    plan_clear();
    if (e != E_FAIL && w.c == C_DEV && w.var >= 0 && count)
        plan_write(w.dev, w.var, w.off, count, NULL, w, SRC_VALUE, value);
    TRACE("%s(%p [%s], max %zu, value %d, count %zu, stream %p)\n", g_api, p, cls_name[w.c],
          maxCount, value, count, s);
    aclError rc = async ? aclrtMemsetAsync(p, maxCount, value, count, s)
                        : aclrtMemset(p, maxCount, value, count);
    if (async)
        check_rc(g_api, rc, L_ASYNC, e, why);
    else
        check_rc(g_api, rc, L_MEMCPY, e, why);
    if (rc || count == 0)
        return;
    if (!async) {
        plan_apply_sync();
        if (M.npend == 0)
            for (size_t i = 0; i < count; i++)
                if (((const volatile uint8_t *)p)[i] != (uint8_t)value)
                    VIOLATION("aclrtMemset(%p, value %d, count %zu) left byte %zu as 0x%02x", p,
                              value, count, i, ((const volatile uint8_t *)p)[i]);
    } else if (w.c == C_DEV) {
        pend_add(key, sdev, w.dev, w.var, w.alloc, w.off, w.var >= 0 ? count : 0);
    } else {
        pend_add(key, sdev, -1, -1, -1, 0, 0);   /* page-locked memory */
    }
}

static void op_event_elapsed(const uint8_t *a)
{
    aclrtEvent e1 = pick_event(a[0], a[1], a[2]), e2 = pick_event(a[3], a[4], a[5]);
    bool null_out = a[6] % 8 == 7;
    float ms = -12345.0f;
    g_api = "aclrtEventElapsedTime";
    TRACE("aclrtEventElapsedTime(%s, %p, %p)\n", null_out ? "NULL" : "&ms", e1, e2);
    aclError rc = aclrtEventElapsedTime(null_out ? NULL : &ms, e1, e2);
    /* Valid handles still fail while a latest record has not run (100000). */
    struct evrec *r1 = event_live(e1), *r2 = event_live(e2);
    enum expect e = null_out || !r1 || !r2 || !r1->recorded || !r2->recorded ? E_FAIL
                    : r1->ran && r2->ran ? E_OK : E_ANY;
    check_rc(g_api, rc, L_EVENT, e, "live events whose latest records ran, out-param");
    if (!rc && ms != ms)
        VIOLATION("aclrtEventElapsedTime gave NaN");
    if (rc && ms != -12345.0f)
        VIOLATION("aclrtEventElapsedTime failed but wrote its out-parameter");
}

static _Atomic unsigned long host_func_runs;
/* Runs on worker threads: no coverage counters (plain bytes other threads bump). */
NO_COVERAGE static void host_func(void *arg)
{
    (void)arg;
    host_func_runs++;
}

static void op_launch_host_func(const uint8_t *a)
{
    aclrtStream s = pick_stream(a[0], a[1], a[2]);
    bool null_fn = a[3] % 8 == 7;
    uintptr_t key;
    int sdev;
    bool ok = !null_fn && resolve_stream(s, &key, &sdev) == 0;
    g_api = "aclrtLaunchHostFunc";
    TRACE("aclrtLaunchHostFunc(%p, %s)\n", s, null_fn ? "NULL" : "fn");
    aclError rc = aclrtLaunchHostFunc(s, null_fn ? NULL : host_func, &host_func_runs);
    check_rc(g_api, rc, L_ASYNC, ok ? E_OK_OOM : E_FAIL, "function, stream of the current context");
}

static void run_op(const uint8_t *rec)
{
    const uint8_t *a = rec + 1;
    switch ((enum op)(rec[0] % OP_COUNT)) {
    case OP_SET_DEVICE: op_set_device(a); break;
    case OP_RESET_DEVICE: op_reset_device(a, false); break;
    case OP_RESET_DEVICE_FORCE: op_reset_device(a, true); break;
    case OP_CREATE_CONTEXT: op_create_context(a); break;
    case OP_SET_CURRENT_CONTEXT: op_set_current_context(a); break;
    case OP_DESTROY_CONTEXT: op_destroy_context(a); break;
    case OP_GET_CURRENT_CONTEXT: op_get_current_context(a); break;
    case OP_MALLOC: op_malloc(a); break;
    case OP_FREE: op_free(a); break;
    case OP_MALLOC_HOST: op_malloc_host(a); break;
    case OP_FREE_HOST: op_free_host(a); break;
    case OP_CREATE_STREAM: op_create_stream(a); break;
    case OP_DESTROY_STREAM: op_destroy_stream(a, false); break;
    case OP_DESTROY_STREAM_FORCE: op_destroy_stream(a, true); break;
    case OP_SYNC_STREAM: op_sync_stream(a, false); break;
    case OP_SYNC_STREAM_TIMEOUT: op_sync_stream(a, true); break;
    case OP_SYNC_DEVICE: op_sync_device(); break;
    case OP_CREATE_EVENT: op_create_event(a); break;
    case OP_RECORD_EVENT: op_event_task(a, false); break;
    case OP_STREAM_WAIT_EVENT: op_event_task(a, true); break;
    case OP_DESTROY_EVENT: op_event_simple(a, OP_DESTROY_EVENT); break;
    case OP_QUERY_EVENT: op_event_simple(a, OP_QUERY_EVENT); break;
    case OP_SYNC_EVENT: op_event_simple(a, OP_SYNC_EVENT); break;
    case OP_GET_SYMBOL_ADDRESS: op_get_symbol(a, false); break;
    case OP_GET_SYMBOL_SIZE: op_get_symbol(a, true); break;
    case OP_MEMCPY_TO_SYMBOL: op_symbol_copy(a, true, false); break;
    case OP_MEMCPY_FROM_SYMBOL: op_symbol_copy(a, false, false); break;
    case OP_MEMCPY_TO_SYMBOL_ASYNC: op_symbol_copy(a, true, true); break;
    case OP_MEMCPY_FROM_SYMBOL_ASYNC: op_symbol_copy(a, false, true); break;
    case OP_MEMCPY: op_memcpy(a, false); break;
    case OP_MEMCPY_ASYNC: op_memcpy(a, true); break;
    case OP_MEMSET: op_memset(a, false); break;
    case OP_MEMSET_ASYNC: op_memset(a, true); break;
    case OP_EVENT_ELAPSED: op_event_elapsed(a); break;
    case OP_LAUNCH_HOST_FUNC: op_launch_host_func(a); break;
    case OP_COUNT: break;
    }
}

/* ---- per-input setup and teardown --------------------------------------------- */

static void cleanup_call(const char *api, aclError rc)
{
    g_api = api;
    if (rc)
        VIOLATION("cleanup: %s failed with %d (%s)", api, rc, aclGetRecentErrMsg());
}

static void reset_everything(void)
{
    g_opno = -1;
    /* Let every queued operation finish before any device goes away (work on
     * one device may touch the other's memory). */
    for (int d = 0; d < NDEV; d++)
        if (dev_open(d)) {
            cleanup_call("aclrtSetDevice", aclrtSetDevice(d));
            cleanup_call("aclrtSynchronizeDevice", aclrtSynchronizeDevice());
            M.ref[d]++;
            settle_sdev(d, true);
        }
    check_variables();
    for (int d = 0; d < NDEV; d++) {
        cleanup_call("aclrtResetDeviceForce", aclrtResetDeviceForce(d));
        if (dev_open(d))
            model_close(d, true);
    }
    for (int i = 0; i < MAX_PALLOC; i++)
        if (M.pa[i].live)
            cleanup_call("aclrtFreeHost", aclrtFreeHost((void *)M.pa[i].p));
    for (int i = 0; i < MAX_EVENT; i++)
        if (M.ev[i].live)
            cleanup_call("aclrtDestroyEvent", aclrtDestroyEvent(M.ev[i].h));
    check_variables();
    (void)aclGetRecentErrMsg();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    setenv("ACLSIM_WORKERS", "2", 1);
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);
    unsetenv("ASCEND_RT_VISIBLE_DEVICES");
    unsetenv("ACLSIM_SOC_VERSION");
    trace = getenv("FUZZ_TRACE") && *getenv("FUZZ_TRACE") == '1';
    if (getenv("FUZZ_STATS") && *getenv("FUZZ_STATS") == '1')
        atexit(print_stats);
    for (int v = 0; v < NVARS; v++) {
        if (var_size(v) > MAXVAR)
            abort();
        memcpy(init_image[v], desc[v]->symbol, var_size(v));
    }
    aclError rc = aclInit(NULL);
    if (rc) {
        fprintf(stderr, "fuzz-runtime: aclInit failed: %d %s\n", rc, aclGetRecentErrMsg());
        abort();
    }
    uint32_t n = 0;
    if (aclrtGetDeviceCount(&n) || n != NDEV) {
        fprintf(stderr, "fuzz-runtime: expected %d devices, got %u\n", NDEV, n);
        abort();
    }
    return 0;
}

static void model_reset(void)
{
    memset(&M, 0, sizeof M);
    for (int d = 0; d < NDEV; d++)
        for (int v = 0; v < NVARS; v++)
            memcpy(M.shadow[d][v], init_image[v], var_size(v));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* The previous input left no device open and a stale current context
     * (the library's "no current context" state, as at the very start). */
    model_reset();
    for (size_t i = 0; i < HB; i++)
        hbuf[i] = (uint8_t)(i * 131 + data[0] + (i >> 8));
    size_t nops = (size - 1) / REC;
    if (nops > MAX_OPS)
        nops = MAX_OPS;
    TRACE("---- input: %zu operations\n", nops);
    inputs_run++;
    for (size_t i = 0; i < nops; i++) {
        g_opno = (int)i;
        unsigned long before = total_calls;
        run_op(data + 1 + i * REC);
        if (total_calls == before)
            skipped_ops++;
        check_variables();
    }
    reset_everything();
    return 0;
}
