/*
 * Kernels: aclrtGetFuncBySymbol, aclrtLaunchKernelWithArgsArray and
 * aclrtLaunchKernel (argument passing of many types, packed argsData with
 * natural alignment, argsSize/numBlocks/handle validation), 0 and 16
 * parameters, block index and count, blocks running in parallel on the
 * device's workers, stream order, argument capture at launch, and device
 * variables used by kernels on two devices.
 *
 * (A type mismatch between ACLSIM_KERNEL_REGISTER's list and the function is
 * a compile error by design; that is not a CTest test.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

/* ---- types passed by value ------------------------------------------------------- */

typedef struct {
    int32_t a;
    int16_t b;
    char tag[3];
} pair_t;   /* 12 bytes, alignment 4 */

typedef struct {
    double x[3];
    int32_t k;
} big_t;    /* 32 bytes, alignment 8 */

typedef struct {
    char c;
    double d;
    pair_t p;
    int8_t s8;
    big_t big;
    int64_t i64;
    float f;
    void *raw;
    uint16_t u16;
    uint32_t blocks;
    uint32_t calls;
} mixed_out_t;

/* ---- kernels ------------------------------------------------------------------------- */

/* Many parameter types, with alignment gaps when packed. Block 0 records them. */
void k_mixed(char c, double d, pair_t p, int8_t s8, mixed_out_t *out, big_t big, int64_t i64,
             float f, void *raw, uint16_t u16)
{
    __atomic_fetch_add(&out->calls, 1, __ATOMIC_RELAXED);
    if (aclsimGetBlockIdx() != 0)
        return;
    out->c = c;
    out->d = d;
    out->p = p;
    out->s8 = s8;
    out->big = big;
    out->i64 = i64;
    out->f = f;
    out->raw = raw;
    out->u16 = u16;
    out->blocks = aclsimGetBlockNum();
}
ACLSIM_KERNEL_REGISTER(k_mixed, char, double, pair_t, int8_t, mixed_out_t *, big_t, int64_t,
                       float, void *, uint16_t);

/* The same arguments packed with natural alignment: what a C struct does. */
struct mixed_packed {
    char c;
    double d;
    pair_t p;
    int8_t s8;
    mixed_out_t *out;
    big_t big;
    int64_t i64;
    float f;
    void *raw;
    uint16_t u16;
};
#define MIXED_NEED (offsetof(struct mixed_packed, u16) + sizeof(uint16_t))

/* No parameters: counts its blocks in a device variable. */
ACLSIM_DEVICE_VAR(uint32_t, kvoid_hits, ) = 0;
void k_void(void) { __atomic_fetch_add(&ACLSIM_DEV(kvoid_hits), 1, __ATOMIC_RELAXED); }
ACLSIM_KERNEL_REGISTER(k_void, void);

/* Zero-size parameters (GNU C: an empty struct has size 0): a kernel whose
 * parameters are all empty, and one mixing them with ordinary ones. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
typedef struct empty_arg {
} empty_t;
#pragma GCC diagnostic pop
_Static_assert(sizeof(empty_t) == 0, "GNU C empty struct");

ACLSIM_DEVICE_VAR(uint32_t, kempty_hits, ) = 0;
void k_empties(empty_t a, empty_t b)
{
    (void)a;
    (void)b;
    __atomic_fetch_add(&ACLSIM_DEV(kempty_hits), 1, __ATOMIC_RELAXED);
}
ACLSIM_KERNEL_REGISTER(k_empties, empty_t, empty_t);

void k_empty_one(empty_t a)
{
    (void)a;
    __atomic_fetch_add(&ACLSIM_DEV(kempty_hits), 100, __ATOMIC_RELAXED);
}
ACLSIM_KERNEL_REGISTER(k_empty_one, empty_t);

/* Ordinary parameters around and between empty ones. */
void k_empty_mixed(empty_t e0, int32_t *out, empty_t e1, int16_t s, empty_t e2, double d)
{
    (void)e0;
    (void)e1;
    (void)e2;
    out[aclsimGetBlockIdx()] = s + (int32_t)d;
}
ACLSIM_KERNEL_REGISTER(k_empty_mixed, empty_t, int32_t *, empty_t, int16_t, empty_t, double);

struct empty_mixed_packed {
    empty_t e0;
    int32_t *out;
    empty_t e1;
    int16_t s;
    empty_t e2;
    double d;
};

/* Sixteen parameters. */
typedef struct {
    int8_t a1;
    uint8_t a2;
    int16_t a3;
    uint16_t a4;
    int32_t a5;
    uint32_t a6;
    int64_t a7;
    uint64_t a8;
    float a9;
    double a10;
    char a11;
    pair_t a12;
    const char *a13;
    _Bool a14;
    big_t a15;
} k16_out_t;

void k16(k16_out_t *out, int8_t a1, uint8_t a2, int16_t a3, uint16_t a4, int32_t a5, uint32_t a6,
         int64_t a7, uint64_t a8, float a9, double a10, char a11, pair_t a12, const char *a13,
         _Bool a14, big_t a15)
{
    out->a1 = a1;
    out->a2 = a2;
    out->a3 = a3;
    out->a4 = a4;
    out->a5 = a5;
    out->a6 = a6;
    out->a7 = a7;
    out->a8 = a8;
    out->a9 = a9;
    out->a10 = a10;
    out->a11 = a11;
    out->a12 = a12;
    out->a13 = a13;
    out->a14 = a14;
    out->a15 = a15;
}
ACLSIM_KERNEL_REGISTER(k16, k16_out_t *, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                       int64_t, uint64_t, float, double, char, pair_t, const char *, _Bool,
                       big_t);

struct k16_packed {
    k16_out_t *out;
    int8_t a1;
    uint8_t a2;
    int16_t a3;
    uint16_t a4;
    int32_t a5;
    uint32_t a6;
    int64_t a7;
    uint64_t a8;
    float a9;
    double a10;
    char a11;
    pair_t a12;
    const char *a13;
    _Bool a14;
    big_t a15;
};

/* Every block records its index once and the block count. */
void k_blocks(uint32_t *seen, uint32_t *nums)
{
    uint32_t i = aclsimGetBlockIdx();
    __atomic_fetch_add(&seen[i], 1, __ATOMIC_RELAXED);
    nums[i] = aclsimGetBlockNum();
}
ACLSIM_KERNEL_REGISTER(k_blocks, uint32_t *, uint32_t *);

/* Blocks 0 and 1 wait for each other (at most 5 s). */
struct rendezvous {
    uint32_t arrived;
    uint32_t met[2];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void k_rendezvous(struct rendezvous *r)
{
    uint32_t i = aclsimGetBlockIdx();
    if (i >= 2)
        return;
    __atomic_fetch_add(&r->arrived, 1, __ATOMIC_SEQ_CST);
    double deadline = now_s() + 5.0;
    while (__atomic_load_n(&r->arrived, __ATOMIC_SEQ_CST) < 2) {
        if (now_s() > deadline)
            return;
        sched_yield();
    }
    r->met[i] = 1;
}
ACLSIM_KERNEL_REGISTER(k_rendezvous, struct rendezvous *);

/* buf[i] = buf[i] * mul + add */
void k_affine(int32_t *buf, int32_t mul, int32_t add)
{
    uint32_t i = aclsimGetBlockIdx();
    buf[i] = buf[i] * mul + add;
}
ACLSIM_KERNEL_REGISTER(k_affine, int32_t *, int32_t, int32_t);

/* A device variable used by kernels on two devices. */
ACLSIM_DEVICE_VAR(int32_t, kdv, [4]) = {1, 2, 3, 4};
void k_kdv(int32_t add, int32_t **where)
{
    uint32_t i = aclsimGetBlockIdx();
    ACLSIM_DEV(kdv)[i] += add;
    if (i == 0)
        *where = &ACLSIM_DEV(kdv)[0];
}
ACLSIM_KERNEL_REGISTER(k_kdv, int32_t, int32_t **);

/* A parameter type with a large alignment, passed by value after a char. */
typedef struct {
    _Alignas(64) float v[16];
} vec64_t;

void k_aligned(char tag, vec64_t v, float *out)
{
    if (aclsimGetBlockIdx() != 0)
        return;   /* one writer: the launch's 2 blocks may run at once (a data race for TSan) */
    out[0] = (float)tag;
    out[1] = ((uintptr_t)&v % 64 == 0) ? 1.0f : 0.0f;
    for (int i = 0; i < 16; i++)
        out[2 + i] = v.v[i];
}
ACLSIM_KERNEL_REGISTER(k_aligned, char, vec64_t, float *);

struct aligned_packed {
    char tag;
    vec64_t v;
    float *out;
};

/* A function pointer parameter (through a typedef). */
typedef int32_t (*binop_t)(int32_t, int32_t);
static int32_t op_mul(int32_t a, int32_t b) { return a * b; }
void k_apply(binop_t op, int32_t *out) { out[aclsimGetBlockIdx()] = op(3, 4 + (int32_t)aclsimGetBlockIdx()); }
ACLSIM_KERNEL_REGISTER(k_apply, binop_t, int32_t *);

/* Never registered. */
void k_unregistered(int32_t *out);
void k_unregistered(int32_t *out) { *out = 1; }

/* ---- helpers ----------------------------------------------------------------------------- */

static void *dev_alloc(size_t n)
{
    void *p = NULL;
    EXPECT_OK(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(p, n, 0, n));
    return p;
}

static void d2h(void *dst, const void *src, size_t n)
{
    EXPECT_OK(aclrtMemcpy(dst, n, src, n, ACL_MEMCPY_DEVICE_TO_HOST));
}


/* ---- aclrtGetFuncBySymbol ---------------------------------------------------------------- */

static void test_get_func_by_symbol(void **state)
{
    (void)state;
    aclrtFuncHandle h = NULL, h2 = NULL;
    EXPECT_OK(aclrtGetFuncBySymbol(FN(k_affine), &h));
    assert_non_null(h);
    EXPECT_OK(aclrtGetFuncBySymbol(FN(k_affine), &h2));
    assert_ptr_equal(h, h2);
    EXPECT_OK(aclrtGetFuncBySymbol(FN(k_void), &h2));
    assert_ptr_not_equal(h, h2);

    h2 = NULL;
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtGetFuncBySymbol", "symbol",
                aclrtGetFuncBySymbol(NULL, &h2));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtGetFuncBySymbol", "funcHandle",
                aclrtGetFuncBySymbol(FN(k_affine), NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "aclrtGetFuncBySymbol",
               aclrtGetFuncBySymbol(FN(k_unregistered), &h2));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "aclrtGetFuncBySymbol",
               aclrtGetFuncBySymbol(kdv, &h2));                 /* a device variable */
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "aclrtGetFuncBySymbol",
               aclrtGetFuncBySymbol((const char *)FN(k_affine) + 1, &h2));
    int local = 0;
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "aclrtGetFuncBySymbol",
               aclrtGetFuncBySymbol(&local, &h2));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "aclrtGetFuncBySymbol",
               aclrtGetFuncBySymbol(FN(memcpy), &h2));
    assert_null(h2);
}

/* ---- argument passing ---------------------------------------------------------------------- */

static void fill_mixed(struct mixed_packed *m, mixed_out_t *out)
{
    memset(m, 0, sizeof *m);
    m->c = 'Q';
    m->d = -1234.5625;
    m->p = (pair_t){.a = -77, .b = 300, .tag = {'x', 'y', 'z'}};
    m->s8 = -100;
    m->out = out;
    m->big = (big_t){{1.5, -2.25, 1e300}, 0x7eadbeef};
    m->i64 = INT64_C(-0x123456789abcdef);
    m->f = 3.25f;
    m->raw = (void *)(uintptr_t)0xdeadbeefcafe;
    m->u16 = 0xfedc;
}

static void check_mixed(const mixed_out_t *o, const struct mixed_packed *m, uint32_t blocks)
{
    assert_int_equal(o->c, m->c);
    assert_true(o->d == m->d);
    assert_int_equal(o->p.a, m->p.a);
    assert_int_equal(o->p.b, m->p.b);
    assert_memory_equal(o->p.tag, m->p.tag, 3);
    assert_int_equal(o->s8, m->s8);
    assert_true(o->big.x[0] == m->big.x[0] && o->big.x[1] == m->big.x[1] &&
                o->big.x[2] == m->big.x[2]);
    assert_int_equal(o->big.k, m->big.k);
    assert_true(o->i64 == m->i64);
    assert_true(o->f == m->f);
    assert_ptr_equal(o->raw, m->raw);
    assert_int_equal(o->u16, m->u16);
    assert_int_equal(o->blocks, blocks);
    assert_int_equal(o->calls, blocks);
}

static void test_launch_with_args_array(void **state)
{
    (void)state;
    mixed_out_t *out = dev_alloc(sizeof(mixed_out_t));
    struct mixed_packed m;
    fill_mixed(&m, out);
    void *args[] = {&m.c, &m.d, &m.p, &m.s8, &m.out, &m.big, &m.i64, &m.f, &m.raw, &m.u16};
    aclrtFuncHandle f = FUNC(k_mixed);
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 3, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    mixed_out_t o;
    d2h(&o, out, sizeof o);
    check_mixed(&o, &m, 3);
    /* with a cfg that has no attributes, and on a created stream */
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtMemset(out, sizeof o, 0, sizeof o));
    aclrtLaunchKernelCfg cfg = {NULL, 0};
    m.c = 'r';
    m.u16 = 1;
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 1, s, &cfg, args));
    EXPECT_OK(aclrtSynchronizeStream(s));
    d2h(&o, out, sizeof o);
    check_mixed(&o, &m, 1);
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(out));
}

static void test_launch_packed_args(void **state)
{
    (void)state;
    mixed_out_t *out = dev_alloc(sizeof(mixed_out_t));
    struct mixed_packed m;
    fill_mixed(&m, out);
    aclrtFuncHandle f = FUNC(k_mixed);
    assert_true(MIXED_NEED < sizeof m);   /* the layout has tail padding */
    /* exactly the packed bytes */
    EXPECT_OK(aclrtLaunchKernel(f, 2, &m, MIXED_NEED, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    mixed_out_t o;
    d2h(&o, out, sizeof o);
    check_mixed(&o, &m, 2);
    /* sizeof the struct (with its tail padding) */
    EXPECT_OK(aclrtMemset(out, sizeof o, 0, sizeof o));
    m.d = 0.125;
    m.big.k = -1;
    EXPECT_OK(aclrtLaunchKernel(f, 4, &m, sizeof m, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    d2h(&o, out, sizeof o);
    check_mixed(&o, &m, 4);
    /* wrong sizes */
    const size_t bad[] = {MIXED_NEED - 1, 0, 1, sizeof m + 8, sizeof m * 2};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        aclError e = aclrtLaunchKernel(f, 1, &m, bad[i], NULL);
        const char *msg = aclGetRecentErrMsg();
        if (e != ACL_ERROR_INVALID_PARAM || !msg || !strstr(msg, "argsSize") ||
            !strstr(msg, "k_mixed"))
            fail_msg("argsSize %zu: got %d (message: %s), expected 100000 about argsSize of "
                     "k_mixed", bad[i], e, msg ? msg : "none");
    }
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsData", aclrtLaunchKernel(f, 1, NULL, MIXED_NEED, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL, aclrtLaunchKernel(f, 1, NULL, 0, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    /* none of the failed launches ran */
    d2h(&o, out, sizeof o);
    assert_int_equal(o.calls, 4);
    EXPECT_OK(aclrtFree(out));
}

static void test_zero_parameters(void **state)
{
    (void)state;
    aclrtFuncHandle f = FUNC(k_void);
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 4, NULL, NULL, NULL));
    void *ignored[] = {NULL};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 1, NULL, NULL, ignored));
    EXPECT_OK(aclrtLaunchKernel(f, 3, NULL, 0, NULL));
    int dummy = 0;
    EXPECT_OK(aclrtLaunchKernel(f, 2, &dummy, 0, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsSize", aclrtLaunchKernel(f, 1, &dummy, 4, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    uint32_t hits = 0;
    EXPECT_OK(aclrtMemcpyFromSymbol(&hits, 4, &kvoid_hits, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(hits, 10);
}

static uint32_t empty_hits(void)
{
    uint32_t hits = 0;
    EXPECT_OK(aclrtMemcpyFromSymbol(&hits, 4, &kempty_hits, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    return hits;
}

/* Issue 19 item 5: all parameters zero-size used to crash at launch (NULL
 * argument table), with both launch functions. */
static void test_zero_size_parameters(void **state)
{
    (void)state;
    uint32_t zero = 0;
    EXPECT_OK(aclrtMemcpyToSymbol(&kempty_hits, &zero, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    aclrtFuncHandle f = FUNC(k_empties), g = FUNC(k_empty_one);
    empty_t a, b;
    void *args[] = {&a, &b};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 3, NULL, NULL, args));
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(g, 2, NULL, NULL, args));
    /* Packed: zero bytes of arguments, with or without a pointer. */
    EXPECT_OK(aclrtLaunchKernel(f, 4, NULL, 0, NULL));
    EXPECT_OK(aclrtLaunchKernel(f, 1, &a, 0, NULL));
    EXPECT_OK(aclrtLaunchKernel(g, 1, NULL, 0, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    assert_int_equal(empty_hits(), 3 + 200 + 4 + 1 + 100);
    /* The argument checks still apply. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "args", aclrtLaunchKernelWithArgsArray(f, 1, NULL, NULL,
                                                                                NULL));
    void *half[] = {&a, NULL};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "args[1]",
               aclrtLaunchKernelWithArgsArray(f, 1, NULL, NULL, half));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsSize", aclrtLaunchKernel(f, 1, &a, 8, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    assert_int_equal(empty_hits(), 308);
}

static void test_zero_size_mixed_parameters(void **state)
{
    (void)state;
    int32_t *out = dev_alloc(4 * sizeof(int32_t));
    aclrtFuncHandle f = FUNC(k_empty_mixed);
    struct empty_mixed_packed p = {.out = out, .s = -7, .d = 1000.0};
    void *args[] = {&p.e0, &p.out, &p.e1, &p.s, &p.e2, &p.d};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 2, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t got[4] = {0};
    d2h(got, out, sizeof got);
    assert_int_equal(got[0], 993);
    assert_int_equal(got[1], 993);
    assert_int_equal(got[2], 0);
    /* Packed: the struct's layout is the natural packing (empty members take no room). */
    p.s = 5;
    p.d = 2.0;
    EXPECT_OK(aclrtLaunchKernel(f, 4, &p, sizeof p, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    d2h(got, out, sizeof got);
    for (int i = 0; i < 4; i++)
        assert_int_equal(got[i], 7);
    EXPECT_OK(aclrtFree(out));
}

static void fill16(struct k16_packed *p, k16_out_t *out)
{
    memset(p, 0, sizeof *p);
    p->out = out;
    p->a1 = -5;
    p->a2 = 250;
    p->a3 = -30000;
    p->a4 = 60000;
    p->a5 = -2000000000;
    p->a6 = 4000000000u;
    p->a7 = INT64_MIN + 3;
    p->a8 = UINT64_MAX - 5;
    p->a9 = -0.75f;
    p->a10 = 6.02214076e23;
    p->a11 = 'k';
    p->a12 = (pair_t){.a = 9, .b = -9, .tag = {'a', 'b', 'c'}};
    p->a13 = "sixteen";
    p->a14 = 1;
    p->a15 = (big_t){{-1.0, 0.5, 2.0}, 16};
}

static void check16(const k16_out_t *o, const struct k16_packed *p)
{
    assert_int_equal(o->a1, p->a1);
    assert_int_equal(o->a2, p->a2);
    assert_int_equal(o->a3, p->a3);
    assert_int_equal(o->a4, p->a4);
    assert_int_equal(o->a5, p->a5);
    assert_int_equal(o->a6, p->a6);
    assert_true(o->a7 == p->a7);
    assert_true(o->a8 == p->a8);
    assert_true(o->a9 == p->a9);
    assert_true(o->a10 == p->a10);
    assert_int_equal(o->a11, p->a11);
    assert_memory_equal(&o->a12, &p->a12, sizeof(pair_t));
    assert_ptr_equal(o->a13, p->a13);
    assert_string_equal(o->a13, "sixteen");
    assert_int_equal(o->a14, p->a14);
    assert_memory_equal(o->a15.x, p->a15.x, sizeof p->a15.x);
    assert_int_equal(o->a15.k, p->a15.k);
}

static void test_sixteen_parameters(void **state)
{
    (void)state;
    k16_out_t *out = dev_alloc(sizeof(k16_out_t));
    struct k16_packed p;
    fill16(&p, out);
    aclrtFuncHandle f = FUNC(k16);
    void *args[] = {&p.out, &p.a1, &p.a2, &p.a3, &p.a4,  &p.a5,  &p.a6,  &p.a7,
                    &p.a8,  &p.a9, &p.a10, &p.a11, &p.a12, &p.a13, &p.a14, &p.a15};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 1, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    k16_out_t o;
    d2h(&o, out, sizeof o);
    check16(&o, &p);
    /* packed */
    EXPECT_OK(aclrtMemset(out, sizeof o, 0, sizeof o));
    p.a5 = 17;
    p.a11 = 'z';
    EXPECT_OK(aclrtLaunchKernel(f, 1, &p, sizeof p, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    d2h(&o, out, sizeof o);
    check16(&o, &p);
    /* a NULL entry in args */
    args[12] = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "args[12]",
               aclrtLaunchKernelWithArgsArray(f, 1, NULL, NULL, args));
    EXPECT_OK(aclrtFree(out));
}

/* Arguments whose type is aligned beyond malloc's guarantee arrive intact
 * (and properly aligned: the kernel's copy of a by-value parameter is an
 * ordinary object of its type). */
static void test_overaligned_parameter(void **state)
{
    (void)state;
    float *out = dev_alloc(18 * sizeof(float));
    aclrtFuncHandle f = FUNC(k_aligned);
    static struct aligned_packed p;
    p.tag = 'A';
    for (int i = 0; i < 16; i++)
        p.v.v[i] = (float)i * 1.5f;
    p.out = out;
    void *args[] = {&p.tag, &p.v, &p.out};
    for (int api = 0; api < 2; api++) {
        EXPECT_OK(aclrtMemset(out, 18 * sizeof(float), 0, 18 * sizeof(float)));
        if (api == 0)
            EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 2, NULL, NULL, args));
        else
            EXPECT_OK(aclrtLaunchKernel(f, 2, &p, sizeof p, NULL));
        EXPECT_OK(aclrtSynchronizeStream(NULL));
        float h[18];
        d2h(h, out, sizeof h);
        assert_true(h[0] == 65.0f);
        assert_true(h[1] == 1.0f);
        for (int i = 0; i < 16; i++)
            assert_true(h[2 + i] == (float)i * 1.5f);
    }
    EXPECT_OK(aclrtFree(out));
}

static void test_function_pointer_parameter(void **state)
{
    (void)state;
    int32_t *out = dev_alloc(4 * sizeof(int32_t));
    binop_t op = op_mul;
    void *args[] = {&op, &out};
    /* with launch attributes the simulator has no use for */
    aclrtLaunchKernelAttr attr;
    memset(&attr, 0, sizeof attr);
    attr.id = ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT;
    attr.value.timeout = 10;
    aclrtLaunchKernelCfg cfg = {&attr, 1};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(k_apply), 4, NULL, &cfg, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t h[4];
    d2h(h, out, sizeof h);
    for (int i = 0; i < 4; i++)
        assert_int_equal(h[i], 3 * (4 + i));
    EXPECT_OK(aclrtFree(out));
}

static void test_args_null_for_kernel_with_params(void **state)
{
    (void)state;
    aclrtFuncHandle f = FUNC(k_affine);
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "args", "k_affine",
                aclrtLaunchKernelWithArgsArray(f, 1, NULL, NULL, NULL));
    int32_t *buf = dev_alloc(4);
    int32_t mul = 1;
    void *args[] = {&buf, NULL, &mul};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "args[1]",
               aclrtLaunchKernelWithArgsArray(f, 1, NULL, NULL, args));
    aclrtLaunchKernelCfg cfg = {NULL, 2};
    args[1] = &mul;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attrs", aclrtLaunchKernelWithArgsArray(f, 1, NULL, &cfg, args));
    EXPECT_OK(aclrtFree(buf));
}

/* ---- numBlocks and handles ------------------------------------------------------------------- */

static void test_num_blocks_range(void **state)
{
    (void)state;
    aclrtFuncHandle f = FUNC(k_blocks);
    const uint32_t n = 65535;
    uint32_t *seen = dev_alloc(n * sizeof(uint32_t));
    uint32_t *nums = dev_alloc(n * sizeof(uint32_t));
    void *args[] = {&seen, &nums};
    const uint32_t bad[] = {0, 65536, 100000, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "numBlocks",
                   aclrtLaunchKernelWithArgsArray(f, bad[i], NULL, NULL, args));
        struct { uint32_t *s, *n; } packed = {seen, nums};
        EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "numBlocks",
                   aclrtLaunchKernel(f, bad[i], &packed, sizeof packed, NULL));
    }
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, n, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    uint32_t *hs = malloc(n * sizeof *hs), *hn = malloc(n * sizeof *hn);
    assert_non_null(hs);
    assert_non_null(hn);
    d2h(hs, seen, n * sizeof *hs);
    d2h(hn, nums, n * sizeof *hn);
    for (uint32_t i = 0; i < n; i++)
        if (hs[i] != 1 || hn[i] != n)
            fail_msg("block %u: seen %u times, block count %u (expected once, %u)", i, hs[i],
                     hn[i], n);
    free(hs);
    free(hn);
    EXPECT_OK(aclrtFree(seen));
    EXPECT_OK(aclrtFree(nums));
}

static void test_block_idx_and_num(void **state)
{
    (void)state;
    /* outside a kernel */
    assert_int_equal(aclsimGetBlockIdx(), 0);
    assert_int_equal(aclsimGetBlockNum(), 1);
    aclrtFuncHandle f = FUNC(k_blocks);
    const uint32_t counts[] = {1, 2, 3, 7, 64, 1000};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        uint32_t n = counts[c];
        uint32_t *seen = dev_alloc((n + 1) * sizeof(uint32_t));
        uint32_t *nums = dev_alloc((n + 1) * sizeof(uint32_t));
        struct { uint32_t *s, *n; } packed = {seen, nums};
        EXPECT_OK(aclrtLaunchKernel(f, n, &packed, sizeof packed, NULL));
        EXPECT_OK(aclrtSynchronizeStream(NULL));
        uint32_t hs[1001], hn[1001];
        d2h(hs, seen, (n + 1) * sizeof(uint32_t));
        d2h(hn, nums, (n + 1) * sizeof(uint32_t));
        for (uint32_t i = 0; i < n; i++) {
            assert_int_equal(hs[i], 1);
            assert_int_equal(hn[i], n);
        }
        assert_int_equal(hs[n], 0);   /* no block index out of range */
        EXPECT_OK(aclrtFree(seen));
        EXPECT_OK(aclrtFree(nums));
    }
    assert_int_equal(aclsimGetBlockIdx(), 0);
    assert_int_equal(aclsimGetBlockNum(), 1);
}

static void test_bad_handles(void **state)
{
    (void)state;
    int32_t *buf = dev_alloc(4);
    int32_t mul = 1, add = 1;
    void *args[] = {&buf, &mul, &add};
    struct { int32_t *b; int32_t m, a; } packed = {buf, 1, 1};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "funcHandle",
               aclrtLaunchKernelWithArgsArray(NULL, 1, NULL, NULL, args));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "funcHandle",
               aclrtLaunchKernel(NULL, 1, &packed, sizeof packed, NULL));
    /* garbage, a stream handle, the kernel's own address, a device variable */
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    void *garbage[] = {(void *)(uintptr_t)0x12345, s, (void *)(uintptr_t)FN(k_affine),
                       (void *)kdv, (void *)(uintptr_t)0xffffffffffff0001ull};
    for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++) {
        /* (WithArgsArray takes the kernel function itself too: test-kernel-launch) */
        aclError e1 = i == 2 ? ACL_ERROR_RT_INVALID_HANDLE
                             : aclrtLaunchKernelWithArgsArray(garbage[i], 1, NULL, NULL, args);
        const char *m1 = i == 2 ? "skipped" : aclGetRecentErrMsg();
        if (e1 != ACL_ERROR_RT_INVALID_HANDLE || !m1)
            fail_msg("launch with garbage handle #%zu: got %d (message: %s), expected 107017",
                     i, e1, m1 ? m1 : "none");
        aclError e2 = aclrtLaunchKernel(garbage[i], 1, &packed, sizeof packed, NULL);
        const char *m2 = aclGetRecentErrMsg();
        if (e2 != ACL_ERROR_RT_INVALID_HANDLE || !m2)
            fail_msg("aclrtLaunchKernel with garbage handle #%zu: got %d (message: %s), "
                     "expected 107017", i, e2, m2 ? m2 : "none");
    }
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t h = -1;
    d2h(&h, buf, 4);
    assert_int_equal(h, 0);   /* nothing ran */
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(buf));
}

struct ctx_results {
    aclError rc[2];
    bool has_msg[2];
};

static void *no_context_launch(void *arg)
{
    struct ctx_results *r = arg;
    aclrtFuncHandle f = NULL;
    if (aclrtGetFuncBySymbol(FN(k_void), &f) != ACL_SUCCESS)
        return NULL;
    r->rc[0] = aclrtLaunchKernelWithArgsArray(f, 1, NULL, NULL, NULL);
    r->has_msg[0] = aclGetRecentErrMsg() != NULL;
    r->rc[1] = aclrtLaunchKernel(f, 1, NULL, 0, NULL);
    r->has_msg[1] = aclGetRecentErrMsg() != NULL;
    return NULL;
}

static void test_launch_context_and_stream_errors(void **state)
{
    (void)state;
    /* a thread without a current context */
    struct ctx_results r = {{-1, -1}, {false, false}};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, no_context_launch, &r), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(r.rc[0], ACL_ERROR_RT_CONTEXT_NULL);
    assert_int_equal(r.rc[1], ACL_ERROR_RT_CONTEXT_NULL);
    assert_true(r.has_msg[0] && r.has_msg[1]);

    aclrtFuncHandle f = FUNC(k_void);
    /* a stream of another context (device 1, and another context of device 0) */
    aclrtContext ctx0 = NULL, c1 = NULL, c0b = NULL;
    aclrtStream s1 = NULL, s0b = NULL;
    EXPECT_OK(aclrtGetCurrentContext(&ctx0));
    EXPECT_OK(aclrtCreateContext(&c1, 1));
    EXPECT_OK(aclrtCreateStream(&s1));
    EXPECT_OK(aclrtCreateContext(&c0b, 0));
    EXPECT_OK(aclrtCreateStream(&s0b));
    EXPECT_OK(aclrtSetCurrentContext(ctx0));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CONTEXT, "stream",
               aclrtLaunchKernelWithArgsArray(f, 1, s1, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CONTEXT, "stream", aclrtLaunchKernel(f, 1, NULL, 0, s0b));
    /* a destroyed stream */
    aclrtStream gone = NULL;
    EXPECT_OK(aclrtCreateStream(&gone));
    EXPECT_OK(aclrtDestroyStream(gone));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream",
               aclrtLaunchKernelWithArgsArray(f, 1, gone, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream", aclrtLaunchKernel(f, 1, NULL, 0, gone));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    uint32_t hits = 1;
    EXPECT_OK(aclrtMemcpyFromSymbol(&hits, 4, &kvoid_hits, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(hits, 0);
    /* the same launch in the stream's own context works, on that device */
    EXPECT_OK(aclrtSetCurrentContext(c1));
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 5, s1, NULL, NULL));
    EXPECT_OK(aclrtSynchronizeStream(s1));
    EXPECT_OK(aclrtMemcpyFromSymbol(&hits, 4, &kvoid_hits, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(hits, 5);
    EXPECT_OK(aclrtDestroyStream(s1));
    EXPECT_OK(aclrtSetCurrentContext(c0b));
    EXPECT_OK(aclrtDestroyStream(s0b));
    EXPECT_OK(aclrtSetCurrentContext(ctx0));
    EXPECT_OK(aclrtDestroyContext(c1));
    EXPECT_OK(aclrtDestroyContext(c0b));
    EXPECT_OK(aclrtMemcpyFromSymbol(&hits, 4, &kvoid_hits, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(hits, 0);   /* device 0's instance */
}

/* ---- execution ---------------------------------------------------------------------------------- */

static void run_rendezvous(uint32_t blocks)
{
    struct rendezvous *r = dev_alloc(sizeof *r);
    void *args[] = {&r};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(k_rendezvous), blocks, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    struct rendezvous h;
    d2h(&h, r, sizeof h);
    if (h.met[0] != 1 || h.met[1] != 1)
        fail_msg("%u blocks: blocks 0 and 1 did not run at the same time (arrived %u, met %u %u)",
                 blocks, h.arrived, h.met[0], h.met[1]);
    EXPECT_OK(aclrtFree(r));
}

static void test_blocks_run_in_parallel(void **state)
{
    (void)state;
    run_rendezvous(2);
    run_rendezvous(8);
    /* on the other device too */
    EXPECT_OK(aclrtSetDevice(1));
    run_rendezvous(3);
    EXPECT_OK(aclrtSetDevice(0));
}

static void test_launch_ordered_in_stream(void **state)
{
    (void)state;
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    int32_t *dev = dev_alloc(8 * sizeof(int32_t));
    int32_t *in = NULL, *out = NULL, *mid = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&in, 32));
    EXPECT_OK(aclrtMallocHost((void **)&out, 32));
    EXPECT_OK(aclrtMallocHost((void **)&mid, 32));
    for (int i = 0; i < 8; i++) {
        in[i] = i;
        out[i] = mid[i] = -1;
    }
    aclrtFuncHandle f = FUNC(k_affine);
    static struct blocker blk;   /* static: outlives a failed assertion */
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    EXPECT_OK(aclrtMemcpyAsync(dev, 32, in, 32, ACL_MEMCPY_HOST_TO_DEVICE, s));
    int32_t mul1 = 3, add1 = 1;
    void *args1[] = {&dev, &mul1, &add1};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 8, s, NULL, args1));        /* 3i + 1 */
    EXPECT_OK(aclrtMemcpyAsync(mid, 32, dev, 32, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtMemsetAsync(dev, 32, 0, 8, s));                           /* [0], [1] = 0 */
    struct { int32_t *b; int32_t m, a; } packed = {dev, -2, 5};
    EXPECT_OK(aclrtLaunchKernel(f, 8, &packed, sizeof packed, s));           /* -2x + 5 */
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 4, s, NULL, args1));        /* first 4: 3x + 1 */
    EXPECT_OK(aclrtMemcpyAsync(out, 32, dev, 32, ACL_MEMCPY_DEVICE_TO_HOST, s));
    /* Blocked: nothing ran. (A read of page-locked buffers that queued copies
     * still write, on purpose: what the checker's early-host-access detector
     * reports, so the probe is left out when that detector is on.) */
    bool ran_early = false;
    for (int i = 0; i < 8 && !checking_early_host_access(); i++)
        ran_early |= out[i] != -1 || mid[i] != -1;
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_false(ran_early);
    assert_false(blocker_timed_out(&blk));
    for (int i = 0; i < 8; i++) {
        int32_t x = 3 * i + 1;
        assert_int_equal(mid[i], x);
        if (i < 2)
            x = 0;
        x = -2 * x + 5;
        if (i < 4)
            x = 3 * x + 1;
        assert_int_equal(out[i], x);
    }
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtFreeHost(in));
    EXPECT_OK(aclrtFreeHost(out));
    EXPECT_OK(aclrtFreeHost(mid));
}

/* Argument values are captured by the launch call: the caller may reuse them. */
static void test_arguments_captured_at_launch(void **state)
{
    (void)state;
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    int32_t *dev = dev_alloc(8 * sizeof(int32_t));
    int32_t *other = dev_alloc(8 * sizeof(int32_t));
    aclrtFuncHandle f = FUNC(k_affine);
    static struct blocker blk;   /* static: outlives a failed assertion */
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    int32_t *ptr = dev;
    int32_t mul = 1, add = 7;
    void *args[] = {&ptr, &mul, &add};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 8, s, NULL, args));   /* dev = 7 */
    ptr = other;
    mul = 100;
    add = 1000;
    args[0] = args[1] = args[2] = NULL;
    struct { int32_t *b; int32_t m, a; } packed = {dev, 2, 1};
    EXPECT_OK(aclrtLaunchKernel(f, 8, &packed, sizeof packed, s));    /* dev = 15 */
    packed.b = other;
    packed.m = 0;
    packed.a = -1;
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_false(blocker_timed_out(&blk));
    int32_t h[8], ho[8];
    d2h(h, dev, sizeof h);
    d2h(ho, other, sizeof ho);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(h[i], 15);
        assert_int_equal(ho[i], 0);
    }
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtFree(other));
}

/* ---- device variables in kernels ------------------------------------------------------------------ */

static void test_kernel_uses_each_devices_instance(void **state)
{
    (void)state;
    aclrtFuncHandle f = FUNC(k_kdv);
    const int32_t adds[2] = {10, 100};
    for (int d = 0; d < 2; d++) {
        EXPECT_OK(aclrtSetDevice(d));
        int32_t **where = dev_alloc(sizeof(int32_t *));
        int32_t add = adds[d];
        void *args[] = {&add, &where};
        /* the kernel runs before any host call on the variable on this device */
        EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 4, NULL, NULL, args));
        EXPECT_OK(aclrtSynchronizeStream(NULL));
        int32_t *seen = NULL;
        d2h(&seen, where, sizeof seen);
        void *addr = NULL;
        EXPECT_OK(aclrtGetSymbolAddress(kdv, &addr));
        assert_ptr_equal(seen, addr);
        assert_ptr_not_equal(seen, kdv);
        EXPECT_OK(aclrtFree(where));
    }
    for (int d = 0; d < 2; d++) {
        EXPECT_OK(aclrtSetDevice(d));
        int32_t v[4];
        EXPECT_OK(aclrtMemcpyFromSymbol(v, sizeof v, kdv, sizeof v, 0, ACL_MEMCPY_DEVICE_TO_HOST));
        for (int i = 0; i < 4; i++)
            assert_int_equal(v[i], i + 1 + adds[d]);
    }
    /* the host object is untouched */
    for (int i = 0; i < 4; i++)
        assert_int_equal(kdv[i], i + 1);
    /* after the last reset of device 1, its kernels start from the initializer again */
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtResetDeviceForce(1));
    EXPECT_OK(aclrtSetDevice(1));
    int32_t **where = dev_alloc(sizeof(int32_t *));
    int32_t add = 1000;
    void *args[] = {&add, &where};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 4, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t v[4];
    EXPECT_OK(aclrtMemcpyFromSymbol(v, sizeof v, kdv, sizeof v, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 4; i++)
        assert_int_equal(v[i], i + 1 + 1000);
    EXPECT_OK(aclrtFree(where));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtMemcpyFromSymbol(v, sizeof v, kdv, sizeof v, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 4; i++)
        assert_int_equal(v[i], i + 1 + 10);
}

/* A kernel's write is seen by the host API and the other way round, in stream order. */
static void test_kernel_and_symbol_copies_agree(void **state)
{
    (void)state;
    int32_t w[4] = {50, 60, 70, 80};
    EXPECT_OK(aclrtMemcpyToSymbolAsync(kdv, w, sizeof w, 0, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    int32_t **where = dev_alloc(sizeof(int32_t *));
    int32_t add = -50;
    void *args[] = {&add, &where};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(k_kdv), 4, NULL, NULL, args));
    int32_t v[4] = {0};
    EXPECT_OK(aclrtMemcpyFromSymbolAsync(v, sizeof v, kdv, sizeof v, 0, ACL_MEMCPY_DEVICE_TO_HOST,
                                         NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    for (int i = 0; i < 4; i++)
        assert_int_equal(v[i], 10 * i);
    EXPECT_OK(aclrtFree(where));
}

/* Outside a kernel, ACLSIM_DEV names the host object. */
static void test_dev_outside_kernel_is_host_object(void **state)
{
    (void)state;
    assert_ptr_equal(&ACLSIM_DEV(kdv), &kdv);
    assert_ptr_equal(&ACLSIM_DEV(kvoid_hits), &kvoid_hits);
    assert_int_equal(ACLSIM_DEV(kdv)[2], 3);
    /* even while the device has its own instance */
    void *addr = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(kdv, &addr));
    assert_ptr_not_equal(&ACLSIM_DEV(kdv), addr);
    ACLSIM_DEV(kdv)[0] = 500;   /* the host object only */
    int32_t v = 0;
    aclError e = aclrtMemcpyFromSymbol(&v, 4, kdv, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST);
    kdv[0] = 1;
    EXPECT_OK(e);
    assert_int_equal(v, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_device0, teardown_device0)
        T(test_get_func_by_symbol),
        T(test_launch_with_args_array),
        T(test_launch_packed_args),
        T(test_zero_parameters),
        T(test_zero_size_parameters),
        T(test_zero_size_mixed_parameters),
        T(test_sixteen_parameters),
        T(test_overaligned_parameter),
        T(test_function_pointer_parameter),
        T(test_args_null_for_kernel_with_params),
        T(test_num_blocks_range),
        T(test_block_idx_and_num),
        T(test_bad_handles),
        T(test_launch_context_and_stream_errors),
        T(test_blocks_run_in_parallel),
        T(test_launch_ordered_in_stream),
        T(test_arguments_captured_at_launch),
        T(test_kernel_uses_each_devices_instance),
        T(test_kernel_and_symbol_copies_agree),
        T(test_dev_outside_kernel_is_host_object),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
