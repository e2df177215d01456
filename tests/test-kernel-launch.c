/*
 * The kernel launch API of CANN's "kernel loading and execution" chapter
 * beyond aclrtLaunchKernel / WithArgsArray (docs/kernel-launch.md): argument
 * lists (aclrtKernelArgs*) and aclrtLaunchKernelWithConfig, launch
 * attributes, aclrtLaunchKernelV2 and WithHostArgs (placeholders), the SIMT
 * variants, binaries from memory, per-binary exception callbacks and the
 * function queries.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

#ifndef ACLSIM_TEST_KERNELS_PATH
#error "ACLSIM_TEST_KERNELS_PATH is not defined (no tests/kernels/*.c?)"
#endif

/* ---- kernels ------------------------------------------------------------------ */

typedef struct pair {
    int32_t a, b;
} pair;

/* Records what it received: out[0..5] = c, d * 1000, ph->a, ph->b, s, ph. */
void kl_record(int64_t *out, int8_t c, double d, const pair *ph, uint16_t s)
{
    if (aclsimGetBlockIdx() != 0)
        return;
    out[0] = c;
    out[1] = (int64_t)(d * 1000);
    out[2] = ph->a;
    out[3] = ph->b;
    out[4] = s;
    out[5] = (int64_t)(uintptr_t)ph;
}
ACLSIM_KERNEL_REGISTER(kl_record, int64_t *, int8_t, double, const pair *, uint16_t);

/* A parameter aligned to 16 bytes after a 1-byte one. */
typedef struct wide {
    _Alignas(16) int64_t v[2];
} wide;

void kl_wide(int64_t *out, int8_t c, wide w)
{
    out[0] = c;
    out[1] = w.v[0];
    out[2] = w.v[1];
}
ACLSIM_KERNEL_REGISTER(kl_wide, int64_t *, int8_t, wide);

/* out[block] = block + add, for every block. */
void kl_blocks(int32_t *out, int32_t add)
{
    out[aclsimGetBlockIdx()] = (int32_t)aclsimGetBlockIdx() + add;
}
ACLSIM_KERNEL_REGISTER(kl_blocks, int32_t *, int32_t);

/* Runs at least ms milliseconds. */
void kl_sleep(uint32_t ms)
{
    sleep_ms(ms);
}
ACLSIM_KERNEL_REGISTER(kl_sleep, uint32_t);

void kl_void(void)
{
}
ACLSIM_KERNEL_REGISTER(kl_void, void);

/* ---- helpers -------------------------------------------------------------------- */

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

/* kl_record's list: out, c, d, placeholder (a pair), s; finalized. *ph gets
 * the placeholder's handle, *buf its buffer. */
static aclrtArgsHandle record_args(int64_t *out, int8_t c, double d, pair p, uint16_t s,
                                   aclrtParamHandle *hc, aclrtParamHandle *hph, void **buf)
{
    aclrtArgsHandle a = NULL;
    aclrtParamHandle h = NULL, ph = NULL;
    EXPECT_OK(aclrtKernelArgsInit(FUNC(kl_record), &a));
    EXPECT_OK(aclrtKernelArgsAppend(a, &out, sizeof out, &h));
    EXPECT_OK(aclrtKernelArgsAppend(a, &c, sizeof c, &h));
    if (hc)
        *hc = h;
    EXPECT_OK(aclrtKernelArgsAppend(a, &d, sizeof d, &h));
    EXPECT_OK(aclrtKernelArgsAppendPlaceHolder(a, &ph));
    EXPECT_OK(aclrtKernelArgsAppend(a, &s, sizeof s, &h));
    void *b = NULL;
    EXPECT_OK(aclrtKernelArgsGetPlaceHolderBuffer(a, ph, sizeof p, &b));
    memcpy(b, &p, sizeof p);
    EXPECT_OK(aclrtKernelArgsFinalize(a));
    if (hph)
        *hph = ph;
    if (buf)
        *buf = b;
    return a;
}

static void expect_record(const int64_t *dev, int8_t c, double d, pair p, uint16_t s)
{
    int64_t got[6];
    d2h(got, dev, sizeof got);
    assert_int_equal(got[0], c);
    assert_int_equal(got[1], (int64_t)(d * 1000));
    assert_int_equal(got[2], p.a);
    assert_int_equal(got[3], p.b);
    assert_int_equal(got[4], s);
}

/* ---- argument lists -------------------------------------------------------------- */

static void test_args_reach_kernel(void **state)
{
    (void)state;
    int64_t *out = dev_alloc(6 * sizeof(int64_t));
    void *buf = NULL;
    aclrtArgsHandle a = record_args(out, -5, 2.5, (pair){7, 9}, 65000, NULL, NULL, &buf);
    EXPECT_OK(aclrtLaunchKernelWithConfig(FUNC(kl_record), 4, NULL, NULL, a, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    expect_record(out, -5, 2.5, (pair){7, 9}, 65000);
    int64_t ptr;
    d2h(&ptr, out + 5, sizeof ptr);
    /* the kernel reads the launch's copy of the placeholder data */
    assert_true((uintptr_t)ptr != (uintptr_t)buf);
    assert_int_equal(ptr % 8, 0);

    /* a parameter aligned to 16 after a 1-byte one */
    aclrtArgsHandle w = NULL;
    aclrtParamHandle h;
    int8_t c = 3;
    wide v = {{-11, 22}};
    EXPECT_OK(aclrtKernelArgsInit(FUNC(kl_wide), &w));
    EXPECT_OK(aclrtKernelArgsAppend(w, &out, sizeof out, &h));
    EXPECT_OK(aclrtKernelArgsAppend(w, &c, 1, &h));
    EXPECT_OK(aclrtKernelArgsAppend(w, &v, sizeof v, &h));
    EXPECT_OK(aclrtKernelArgsFinalize(w));
    EXPECT_OK(aclrtLaunchKernelWithConfig(FUNC(kl_wide), 1, NULL, NULL, w, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int64_t got[3];
    d2h(got, out, sizeof got);
    assert_int_equal(got[0], 3);
    assert_int_equal(got[1], -11);
    assert_int_equal(got[2], 22);

    /* a kernel without parameters: an empty, finalized list */
    aclrtArgsHandle e = NULL;
    EXPECT_OK(aclrtKernelArgsInit(FUNC(kl_void), &e));
    EXPECT_OK(aclrtKernelArgsFinalize(e));
    EXPECT_OK(aclrtLaunchKernelWithConfig(FUNC(kl_void), 2, NULL, NULL, e, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtFree(out));
}

/* ParaUpdate changes the value of the next launch only; a launch copies the
 * list (and the placeholder data) when it is queued. */
static void test_para_update_between_launches(void **state)
{
    (void)state;
    int64_t *out1 = dev_alloc(6 * sizeof(int64_t)), *out2 = dev_alloc(6 * sizeof(int64_t));
    aclrtParamHandle hc = NULL, hph = NULL;
    void *buf = NULL;
    aclrtArgsHandle a = record_args(out1, 1, 1.0, (pair){10, 20}, 5, &hc, &hph, &buf);
    struct blocker b;
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(NULL, blocker_fn, &b));   /* hold the stream */
    EXPECT_OK(aclrtLaunchKernelWithConfig(FUNC(kl_record), 1, NULL, NULL, a, NULL));
    int8_t c = 2;
    EXPECT_OK(aclrtKernelArgsParaUpdate(a, hc, &c, sizeof c));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not finalized or is currently being updated",
               aclrtLaunchKernelWithConfig(FUNC(kl_record), 1, NULL, NULL, a, NULL));
    ((pair *)buf)->a = 30;   /* the placeholder data, after the first launch */
    EXPECT_OK(aclrtKernelArgsFinalize(a));
    EXPECT_OK(aclrtLaunchKernelWithConfig(FUNC(kl_record), 1, NULL, NULL, a, NULL));
    blocker_release(&b);
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    /* both launches wrote out1 in order: the second's values are there */
    expect_record(out1, 2, 1.0, (pair){30, 20}, 5);

    /* two launches to two outputs: each sees its own values */
    aclrtParamHandle h1 = NULL, h2 = NULL;
    aclrtArgsHandle l = NULL;
    int32_t *o1 = (int32_t *)out1, *o2 = (int32_t *)out2;
    int32_t add = 100;
    EXPECT_OK(aclrtKernelArgsInit(FUNC(kl_blocks), &l));
    EXPECT_OK(aclrtKernelArgsAppend(l, &o1, sizeof o1, &h1));
    EXPECT_OK(aclrtKernelArgsAppend(l, &add, sizeof add, &h2));
    EXPECT_OK(aclrtKernelArgsFinalize(l));
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(NULL, blocker_fn, &b));
    EXPECT_OK(aclrtLaunchKernelWithConfig(FUNC(kl_blocks), 3, NULL, NULL, l, NULL));
    add = 200;
    EXPECT_OK(aclrtKernelArgsParaUpdate(l, h1, &o2, sizeof o2));
    EXPECT_OK(aclrtKernelArgsParaUpdate(l, h2, &add, sizeof add));
    EXPECT_OK(aclrtKernelArgsFinalize(l));
    EXPECT_OK(aclrtLaunchKernelWithConfig(FUNC(kl_blocks), 3, NULL, NULL, l, NULL));
    blocker_release(&b);
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t g1[3], g2[3];
    d2h(g1, o1, sizeof g1);
    d2h(g2, o2, sizeof g2);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(g1[i], i + 100);
        assert_int_equal(g2[i], i + 200);
    }
    EXPECT_OK(aclrtFree(out1));
    EXPECT_OK(aclrtFree(out2));
}

static void test_args_in_user_memory(void **state)
{
    (void)state;
    aclrtFuncHandle f = FUNC(kl_record);
    size_t hsize = 0, msize = 0;
    EXPECT_OK(aclrtKernelArgsGetHandleMemSize(f, &hsize));
    assert_true(hsize > 0);
    /* five parameters, each 8 bytes once aligned, and the pair's 8 */
    EXPECT_OK(aclrtKernelArgsGetMemSize(f, 6 * 8, &msize));
    assert_int_equal(msize, 6 * 8 + 64 + 5 * 8);
    void *hmem = malloc(hsize), *mem = malloc(msize);
    assert_non_null(hmem);
    assert_non_null(mem);
    int64_t *out = dev_alloc(6 * sizeof(int64_t));
    int8_t c = 9;
    double d = -0.5;
    uint16_t s = 77;
    aclrtParamHandle h, ph;
    EXPECT_OK(aclrtKernelArgsInitByUserMem(f, hmem, mem, msize));
    EXPECT_OK(aclrtKernelArgsAppend(hmem, &out, sizeof out, &h));
    EXPECT_OK(aclrtKernelArgsAppend(hmem, &c, sizeof c, &h));
    EXPECT_OK(aclrtKernelArgsAppend(hmem, &d, sizeof d, &h));
    EXPECT_OK(aclrtKernelArgsAppendPlaceHolder(hmem, &ph));
    EXPECT_OK(aclrtKernelArgsAppend(hmem, &s, sizeof s, &h));
    void *b = NULL;
    EXPECT_OK(aclrtKernelArgsGetPlaceHolderBuffer(hmem, ph, sizeof(pair), &b));
    /* the caller's memory holds the list: 8-byte slots, then the data */
    assert_ptr_equal(b, (char *)mem + 40);
    assert_memory_equal(mem, &out, sizeof out);
    assert_int_equal(((int8_t *)mem)[8], 9);
    assert_memory_equal((char *)mem + 16, &d, sizeof d);
    assert_memory_equal((char *)mem + 32, &s, sizeof s);
    *(pair *)b = (pair){-1, -2};
    EXPECT_OK(aclrtKernelArgsFinalize(hmem));
    EXPECT_OK(aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, hmem, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    expect_record(out, 9, -0.5, (pair){-1, -2}, 77);

    /* argument memory too small for the list */
    EXPECT_OK(aclrtKernelArgsInitByUserMem(f, hmem, mem, 12));
    EXPECT_OK(aclrtKernelArgsAppend(hmem, &out, sizeof out, &h));
    EXPECT_OK(aclrtKernelArgsAppend(hmem, &c, sizeof c, &h));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "does not fit",
               aclrtKernelArgsAppend(hmem, &d, sizeof d, &h));
    /* not 16-byte aligned */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aligned",
               aclrtKernelArgsInitByUserMem(f, (char *)hmem + 8, mem, msize));
    EXPECT_OK(aclrtFree(out));
    free(hmem);
    free(mem);
}

static void test_args_bad_inputs(void **state)
{
    (void)state;
    aclrtFuncHandle f = FUNC(kl_record);
    aclrtArgsHandle a = NULL;
    aclrtParamHandle h = NULL, ph = NULL;
    size_t n = 0;
    int64_t v = 1;
    void *buf = NULL;
    char mem[256];
    /* NULL arguments: 100000, on every function */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "funcHandle", aclrtKernelArgsInit(NULL, &a));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsHandle", aclrtKernelArgsInit(f, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memSize", aclrtKernelArgsGetHandleMemSize(f, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "funcHandle", aclrtKernelArgsGetMemSize(NULL, 8, &n));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "userHostMem",
               aclrtKernelArgsInitByUserMem(f, mem, NULL, 8));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "actualArgsSize",
               aclrtKernelArgsInitByUserMem(f, mem, mem, 0));
    EXPECT_OK(aclrtKernelArgsInit(f, &a));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "param", aclrtKernelArgsAppend(a, NULL, 8, &h));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "paramSize", aclrtKernelArgsAppend(a, &v, 0, &h));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "paramHandle", aclrtKernelArgsAppend(a, &v, 8, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsHandle", aclrtKernelArgsAppendPlaceHolder(NULL, &h));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsHandle", aclrtKernelArgsFinalize(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataSize",
               aclrtKernelArgsGetPlaceHolderBuffer(a, &v, 0, &buf));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "param", aclrtKernelArgsParaUpdate(a, &v, NULL, 8));

    /* checked against the kernel: first parameter is 8 bytes, second 1 */
    EXPECT_ERR2(ACL_ERROR_RT_PARAM_INVALID, "parameter 0 of kernel kl_record", "is 8 bytes, not 4",
                aclrtKernelArgsAppend(a, &v, 4, &h));
    EXPECT_OK(aclrtKernelArgsAppend(a, &v, 8, &h));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "a placeholder is a pointer parameter",
               aclrtKernelArgsAppendPlaceHolder(a, &ph));
    int8_t c = 1;
    double d = 1;
    EXPECT_OK(aclrtKernelArgsAppend(a, &c, 1, &h));
    EXPECT_OK(aclrtKernelArgsAppend(a, &d, 8, &h));
    EXPECT_OK(aclrtKernelArgsAppendPlaceHolder(a, &ph));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "was appended with aclrtKernelArgsAppend",
               aclrtKernelArgsGetPlaceHolderBuffer(a, h, 8, &buf));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "is a placeholder",
               aclrtKernelArgsParaUpdate(a, ph, &v, 8));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "must be equal",
               aclrtKernelArgsParaUpdate(a, h, &v, 4));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "not a parameter",
               aclrtKernelArgsParaUpdate(a, &v, &v, 8));
    /* the list is not complete yet: 4 of 5 parameters */
    EXPECT_OK(aclrtKernelArgsFinalize(a));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "takes 5 parameter(s) but argsHandle has 4",
               aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, a, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "after finalization",
               aclrtKernelArgsAppend(a, &v, 2, &h));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "after finalization",
               aclrtKernelArgsGetPlaceHolderBuffer(a, ph, 8, &buf));

    /* append after the placeholder buffer; placeholder without buffer */
    aclrtArgsHandle a2 = NULL;
    int64_t *out = NULL;
    EXPECT_OK(aclrtKernelArgsInit(f, &a2));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "replaces the thread's list",
               aclrtKernelArgsFinalize(a));   /* one system list per thread, as CANN */
    EXPECT_OK(aclrtKernelArgsAppend(a2, &out, 8, &h));
    EXPECT_OK(aclrtKernelArgsAppend(a2, &c, 1, &h));
    EXPECT_OK(aclrtKernelArgsAppend(a2, &d, 8, &h));
    EXPECT_OK(aclrtKernelArgsAppendPlaceHolder(a2, &ph));
    uint16_t s = 1;
    EXPECT_OK(aclrtKernelArgsAppend(a2, &s, 2, &h));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "all appended already",
               aclrtKernelArgsAppend(a2, &s, 2, &h));
    EXPECT_OK(aclrtKernelArgsFinalize(a2));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "has no buffer",
               aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, a2, NULL));

    /* launch checks */
    aclrtArgsHandle a3 = NULL;
    aclrtFuncHandle fb = FUNC(kl_blocks);
    int32_t *o = NULL, add = 0;
    EXPECT_OK(aclrtKernelArgsInit(fb, &a3));
    EXPECT_OK(aclrtKernelArgsAppend(a3, &o, 8, &h));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "argsHandle",   /* a3 replaced the thread's a2 */
               aclrtKernelArgsAppendPlaceHolder(a2, &ph));
    EXPECT_OK(aclrtKernelArgsAppend(a3, &add, 4, &h));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not finalized",
               aclrtLaunchKernelWithConfig(fb, 1, NULL, NULL, a3, NULL));
    EXPECT_OK(aclrtKernelArgsFinalize(a3));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "funcHandle",
               aclrtLaunchKernelWithConfig(NULL, 1, NULL, NULL, a3, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "numBlocks",
               aclrtLaunchKernelWithConfig(fb, 0, NULL, NULL, a3, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "numBlocks",
               aclrtLaunchKernelWithConfig(fb, 65536, NULL, NULL, a3, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsHandle",
               aclrtLaunchKernelWithConfig(fb, 1, NULL, NULL, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "reserve",
               aclrtLaunchKernelWithConfig(fb, 1, NULL, NULL, a3, mem));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "another kernel",
               aclrtLaunchKernelWithConfig(FUNC(kl_record), 1, NULL, NULL, a3, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "funcHandle",
               aclrtLaunchKernelWithConfig((void *)(uintptr_t)0x12345, 1, NULL, NULL, a3, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "argsHandle",
               aclrtLaunchKernelWithConfig(fb, 1, NULL, NULL, mem, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "argsHandle",
               aclrtLaunchKernelWithConfig(fb, 1, NULL, NULL, (void *)(uintptr_t)0x1239, NULL));
    aclrtStream other = (aclrtStream)(uintptr_t)0x4242;
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream",
               aclrtLaunchKernelWithConfig(fb, 1, other, NULL, a3, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "funcHandle",
               aclrtKernelArgsInit((void *)(uintptr_t)0x12345, &a));

    /* after aclFinalize: 100001, and the lists are gone */
    EXPECT_OK(aclFinalize());
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "", aclrtKernelArgsFinalize(a3));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "", aclrtKernelArgsInit(fb, &a));
    restart_gated("Ascend910B1");
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "argsHandle", aclrtKernelArgsFinalize(a3));
}

/* Lists made, used and left by many threads at once (each thread's own
 * system list, freed when the thread exits). */
struct thread_work {
    int id;
    atomic_int *errors;
    char *first;
};

static void *args_thread(void *arg)
{
    struct thread_work *w = arg;
    int32_t *out = NULL;
    if (aclrtSetDevice(0) || aclrtMalloc((void **)&out, 64 * sizeof(int32_t),
                                         ACL_MEM_MALLOC_HUGE_FIRST)) {
        note_first_error(w->errors, w->first, 256, "thread %d: setup", w->id);
        return NULL;
    }
    for (int round = 0; round < 50; round++) {
        aclrtArgsHandle a = NULL;
        aclrtParamHandle h;
        int32_t add = w->id * 1000 + round;
        aclrtFuncHandle f = NULL;
        if (aclrtGetFuncBySymbol(FN(kl_blocks), &f) || aclrtKernelArgsInit(f, &a) ||
            aclrtKernelArgsAppend(a, &out, sizeof out, &h) ||
            aclrtKernelArgsAppend(a, &add, sizeof add, &h) || aclrtKernelArgsFinalize(a) ||
            aclrtLaunchKernelWithConfig(f, 8, NULL, NULL, a, NULL) ||
            aclrtSynchronizeStream(NULL)) {
            note_first_error(w->errors, w->first, 256, "thread %d round %d: launch", w->id, round);
            break;
        }
        int32_t got[8];
        if (aclrtMemcpy(got, sizeof got, out, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST)) {
            note_first_error(w->errors, w->first, 256, "thread %d: copy", w->id);
            break;
        }
        for (int i = 0; i < 8; i++)
            if (got[i] != i + add) {
                note_first_error(w->errors, w->first, 256, "thread %d round %d: out[%d] = %d",
                                 w->id, round, i, got[i]);
                break;
            }
    }
    aclrtFree(out);
    return NULL;
}

static void test_args_threads(void **state)
{
    (void)state;
    enum { N = 4 };
    pthread_t t[N];
    struct thread_work w[N];
    atomic_int errors = 0;
    char first[256] = "";
    for (int i = 0; i < N; i++) {
        w[i] = (struct thread_work){i + 1, &errors, first};
        assert_int_equal(pthread_create(&t[i], NULL, args_thread, &w[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    if (atomic_load(&errors))
        fail_msg("%d error(s), first: %s", atomic_load(&errors), first);
}

/* One list shared by two threads: one updates and finalizes it, the other
 * launches it. A launch sees either a finalized list (and the values of one
 * update) or one being updated (107000): never a torn list. */
struct shared_list {
    aclrtArgsHandle args;
    aclrtParamHandle add;
    aclrtFuncHandle f;
    atomic_int errors;
    char first[256];
};

static void *updater(void *arg)
{
    struct shared_list *sl = arg;
    for (int32_t i = 1; i <= 300; i++) {
        int32_t v = i * 1000;
        if (aclrtKernelArgsParaUpdate(sl->args, sl->add, &v, sizeof v) ||
            aclrtKernelArgsFinalize(sl->args)) {
            note_first_error(&sl->errors, sl->first, sizeof sl->first, "update %d", i);
            break;
        }
    }
    return NULL;
}

static void test_args_shared_between_threads(void **state)
{
    (void)state;
    struct shared_list sl = {.f = FUNC(kl_blocks)};
    int32_t *out = dev_alloc(2 * sizeof(int32_t));
    int32_t add = 0;
    aclrtParamHandle h;
    EXPECT_OK(aclrtKernelArgsInit(sl.f, &sl.args));
    EXPECT_OK(aclrtKernelArgsAppend(sl.args, &out, sizeof out, &h));
    EXPECT_OK(aclrtKernelArgsAppend(sl.args, &add, sizeof add, &sl.add));
    EXPECT_OK(aclrtKernelArgsFinalize(sl.args));
    EXPECT_OK(aclrtLaunchKernelWithConfig(sl.f, 2, NULL, NULL, sl.args, NULL));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, updater, &sl), 0);
    for (int i = 0; i < 300; i++) {   /* how many pass depends on the interleaving */
        aclError e = aclrtLaunchKernelWithConfig(sl.f, 2, NULL, NULL, sl.args, NULL);
        if (e != ACL_SUCCESS && e != ACL_ERROR_RT_PARAM_INVALID)
            fail_msg("launch %d: %d", i, e);
    }
    pthread_join(t, NULL);
    if (atomic_load(&sl.errors))
        fail_msg("%s", sl.first);
    EXPECT_OK(aclrtLaunchKernelWithConfig(sl.f, 2, NULL, NULL, sl.args, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t got[2];
    d2h(got, out, sizeof got);
    assert_int_equal(got[0], 300000);   /* the last update, launched last */
    assert_int_equal(got[1], 300001);
    EXPECT_OK(aclrtFree(out));
}

/* ---- launch attributes --------------------------------------------------------- */

static aclError launch_attr(aclrtLaunchKernelAttrId id, aclrtLaunchKernelAttrValue value)
{
    aclrtLaunchKernelAttr attr = {.id = id, .value = value};
    aclrtLaunchKernelCfg cfg = {&attr, 1};
    int32_t add = 0;
    aclrtArgsHandle a = NULL;
    aclrtParamHandle h;
    int32_t *out = NULL;
    EXPECT_OK(aclrtMalloc((void **)&out, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtKernelArgsInit(FUNC(kl_blocks), &a));
    EXPECT_OK(aclrtKernelArgsAppend(a, &out, sizeof out, &h));
    EXPECT_OK(aclrtKernelArgsAppend(a, &add, sizeof add, &h));
    EXPECT_OK(aclrtKernelArgsFinalize(a));
    aclError err = aclrtLaunchKernelWithConfig(FUNC(kl_blocks), 2, NULL, &cfg, a, NULL);
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtFree(out));
    return err;
}

#define V(field, x) ((aclrtLaunchKernelAttrValue){.field = (x)})

static void test_launch_attributes(void **state)
{
    (void)state;
    EXPECT_OK(launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, V(schemMode, 1)));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "schemMode is 2",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, V(schemMode, 2)));
    EXPECT_OK(launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH, V(isBlockTaskPrefetch, 1)));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "isBlockTaskPrefetch",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH, V(isBlockTaskPrefetch, 3)));
    EXPECT_OK(launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, V(isDataDump, 0)));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "data dump",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, V(isDataDump, 1)));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "isDataDump",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, V(isDataDump, 2)));
    EXPECT_OK(launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING, V(enableProfiling, 1)));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "enableProfiling",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING, V(enableProfiling, 2)));
    EXPECT_OK(launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE, V(dynUBufSize, 0)));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend 950",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE, V(dynUBufSize, 1024)));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Atlas inference",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE, V(engineType, ACL_RT_ENGINE_TYPE_AIV)));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Atlas inference",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET, V(blockDimOffset, 0)));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a launch attribute",
               launch_attr((aclrtLaunchKernelAttrId)42, V(schemMode, 0)));
    EXPECT_OK(launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, V(timeout, 10)));

    /* both timeouts at once */
    aclrtLaunchKernelAttr two[2] = {{ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, V(timeout, 1)},
                                    {ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US, V(rsv[0], 5)}};
    aclrtLaunchKernelCfg cfg = {two, 2};
    void *args[] = {NULL};
    uint32_t ms = 0;
    args[0] = &ms;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "cannot be carried at the same time",
               aclrtLaunchKernelWithArgsArray(FUNC(kl_sleep), 1, NULL, &cfg, args));
    cfg.attrs = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "cfg->attrs",
               aclrtLaunchKernelWithArgsArray(FUNC(kl_sleep), 1, NULL, &cfg, args));

    /* on an Atlas inference product: engine type accepted, offsets refused */
    restart_gated("Ascend310P1");
    EXPECT_OK(launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE, V(engineType, ACL_RT_ENGINE_TYPE_AIV)));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "engineType",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE, V(engineType, 7)));
    EXPECT_OK(launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET, V(blockDimOffset, 0)));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not simulated",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET, V(blockDimOffset, 8)));
    /* on Ascend 950: a dynamic UB size needs a SIMT kernel */
    restart_gated("Ascend950PR");
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a SIMT kernel",
               launch_attr(ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE, V(dynUBufSize, 1024)));
}

/* The launch's own timeout: the kernel runs past it and fails with 507014. */
static void test_launch_timeout_attribute(void **state)
{
    (void)state;
    uint32_t ms = 30;
    void *args[] = {&ms};
    aclrtLaunchKernelAttrValue us = {.timeoutUs = {.timeoutLow = 2000, .timeoutHigh = 0}};
    aclrtLaunchKernelAttr attr = {ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US, us};
    aclrtLaunchKernelCfg cfg = {&attr, 1};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(kl_sleep), 1, NULL, &cfg, args));
    EXPECT_ERR2(ACL_ERROR_RT_AICORE_TIMEOUT, "kl_sleep", "ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT",
                aclrtSynchronizeStream(NULL));
    /* a generous one, and 0 (wait forever): no failure */
    attr.value.timeoutUs.timeoutLow = 0;
    attr.value.timeoutUs.timeoutHigh = 1;
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(kl_sleep), 1, NULL, &cfg, args));
    attr = (aclrtLaunchKernelAttr){ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, V(timeout, 0)};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(kl_sleep), 1, NULL, &cfg, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
}

/* ---- V2, host arguments, SIMT -------------------------------------------------------- */

static void test_launch_v2_and_host_args(void **state)
{
    (void)state;
    int64_t *out = dev_alloc(6 * sizeof(int64_t));
    aclrtFuncHandle f = FUNC(kl_record);
    /* V2: the arguments packed as a struct of the parameter types */
    pair p = {4, 5};
    pair *dp = dev_alloc(sizeof p);
    EXPECT_OK(aclrtMemcpy(dp, sizeof p, &p, sizeof p, ACL_MEMCPY_HOST_TO_DEVICE));
    struct { int64_t *out; int8_t c; double d; const pair *ph; uint16_t s; } packed =
        {out, 12, 0.25, dp, 300};
    aclrtLaunchKernelAttr attr = {ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, V(schemMode, 0)};
    aclrtLaunchKernelCfg cfg = {&attr, 1};
    EXPECT_OK(aclrtLaunchKernelV2(f, 1, &packed, sizeof packed, &cfg, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    expect_record(out, 12, 0.25, p, 300);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsData", aclrtLaunchKernelV2(f, 1, NULL, 0, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsSize", aclrtLaunchKernelV2(f, 1, &packed, 3, NULL, NULL));

    /* host arguments at aclrtFunctionGetParamInfo's offsets, placeholder data after */
    size_t count = 0, off[5], size[5];
    EXPECT_OK(aclrtFunctionGetParamCount(f, &count));
    assert_int_equal(count, 5);
    for (size_t i = 0; i < count; i++)
        EXPECT_OK(aclrtFunctionGetParamInfo(f, i, &off[i], &size[i]));
    assert_int_equal(off[0], offsetof(__typeof__(packed), out));
    assert_int_equal(off[1], offsetof(__typeof__(packed), c));
    assert_int_equal(off[2], offsetof(__typeof__(packed), d));
    assert_int_equal(off[3], offsetof(__typeof__(packed), ph));
    assert_int_equal(off[4], offsetof(__typeof__(packed), s));
    assert_int_equal(size[2], sizeof(double));
    _Alignas(16) char host[64] = {0};
    int8_t c = -3;
    double d = 8.0;
    uint16_t s = 9;
    memcpy(host + off[0], &out, size[0]);
    memcpy(host + off[1], &c, size[1]);
    memcpy(host + off[2], &d, size[2]);
    memcpy(host + off[4], &s, size[4]);
    pair hp = {100, 200};
    memcpy(host + 40, &hp, sizeof hp);
    aclrtPlaceHolderInfo ph = {(uint32_t)off[3], 40};
    EXPECT_OK(aclrtLaunchKernelWithHostArgs(f, 1, NULL, NULL, host, 48, &ph, 1));
    memset(host, 0, sizeof host);   /* the launch copied them */
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    expect_record(out, -3, 8.0, hp, 9);

    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "hostArgs",
               aclrtLaunchKernelWithHostArgs(f, 1, NULL, NULL, NULL, 48, &ph, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "funcHandle",
               aclrtLaunchKernelWithHostArgs(NULL, 1, NULL, NULL, host, 48, &ph, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "too small",
               aclrtLaunchKernelWithHostArgs(f, 1, NULL, NULL, host, 16, NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "placeHolderArray is NULL",
               aclrtLaunchKernelWithHostArgs(f, 1, NULL, NULL, host, 48, NULL, 1));
    aclrtPlaceHolderInfo bad = {(uint32_t)off[1], 40};   /* the int8_t */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not the offset of a pointer parameter",
               aclrtLaunchKernelWithHostArgs(f, 1, NULL, NULL, host, 48, &bad, 1));
    bad = (aclrtPlaceHolderInfo){(uint32_t)off[3], 48};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "dataOffset 48 should be less than argsSize 48",
               aclrtLaunchKernelWithHostArgs(f, 1, NULL, NULL, host, 48, &bad, 1));
    EXPECT_OK(aclrtFree(dp));
    EXPECT_OK(aclrtFree(out));
}

/* aclrtLaunchKernelWithArgsArray and the param queries take the kernel
 * function itself too, as CANN's reference allows for mixed builds. */
static void test_function_as_func(void **state)
{
    (void)state;
    int32_t *out = dev_alloc(4 * sizeof(int32_t));
    int32_t add = 40;
    void *args[] = {&out, &add};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray((void *)(uintptr_t)FN(kl_blocks), 4, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t got[4];
    d2h(got, out, sizeof got);
    for (int i = 0; i < 4; i++)
        assert_int_equal(got[i], 40 + i);
    size_t n = 0, o = 9, sz = 0;
    EXPECT_OK(aclrtFunctionGetParamCount(FN(kl_blocks), &n));
    assert_int_equal(n, 2);
    EXPECT_OK(aclrtFunctionGetParamInfo(FN(kl_blocks), 1, &o, NULL));
    assert_int_equal(o, 8);
    EXPECT_OK(aclrtFunctionGetParamInfo(FN(kl_blocks), 1, NULL, &sz));
    assert_int_equal(sz, 4);
    EXPECT_OK(aclrtFunctionGetParamCount(FN(kl_void), &n));
    assert_int_equal(n, 0);
    /* but not the functions taking an aclrtFuncHandle */
    char name[32];
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "funcHandle",
               aclrtGetFunctionName((void *)(uintptr_t)FN(kl_blocks), sizeof name, name));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "paramIndex 2 is out of range [0, 2)",
               aclrtFunctionGetParamInfo(FN(kl_blocks), 2, &o, &sz));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "cannot both be NULL",
               aclrtFunctionGetParamInfo(FN(kl_blocks), 0, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "paramCount", aclrtFunctionGetParamCount(FN(kl_blocks), NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "func", aclrtFunctionGetParamCount(NULL, &n));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "0x777",
               aclrtFunctionGetParamCount((void *)(uintptr_t)0x777, &n));
    EXPECT_OK(aclrtFree(out));
}

static void test_simt_variants(void **state)
{
    (void)state;
    dim3 g = {2, 1, 1}, b = {32, 1, 1}, zero = {0, 1, 1};
    int32_t *o = NULL, add = 0;
    void *args[] = {&o, &add};
    char host[16] = {0};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "func",
               aclrtLaunchSIMTKernelWithArgsArray(NULL, g, b, 0, NULL, NULL, args));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsSize",
               aclrtLaunchSIMTKernelWithHostArgs(FUNC(kl_blocks), g, b, 0, NULL, NULL, host, 0,
                                                 NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B1",
               aclrtLaunchSIMTKernelWithArgsArray(FUNC(kl_blocks), g, b, 0, NULL, NULL, args));
    restart_gated("Ascend950PR");
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a SIMT kernel",
               aclrtLaunchSIMTKernelWithArgsArray(FUNC(kl_blocks), g, b, 0, NULL, NULL, args));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a SIMT kernel",
               aclrtLaunchSIMTKernelWithHostArgs((void *)(uintptr_t)FN(kl_blocks), g, b, 0, NULL, NULL, host,
                                                 sizeof host, NULL, 0));
    /* the kernel's type is checked before the dimensions, as CANN */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a SIMT kernel",
               aclrtLaunchSIMTKernelWithArgsArray(FUNC(kl_blocks), zero, b, 0, NULL, NULL, args));
    size_t ub = 7;
    EXPECT_OK(aclrtFunctionGetAvailDynUbufPerBlock(FUNC(kl_blocks), 0, &ub));
    assert_int_equal(ub, 0);   /* not a SIMT kernel */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags",
               aclrtFunctionGetAvailDynUbufPerBlock(FUNC(kl_blocks), 1, &ub));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dynamicUbufSize",
               aclrtFunctionGetAvailDynUbufPerBlock(FUNC(kl_blocks), 0, NULL));
}

/* ---- function queries ------------------------------------------------------------- */

static void test_function_queries(void **state)
{
    (void)state;
    aclrtFuncHandle f = FUNC(kl_record);
    char name[16];
    EXPECT_OK(aclrtGetFunctionName(f, sizeof name, name));
    assert_string_equal(name, "kl_record");
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "greater than or equal to 10",
               aclrtGetFunctionName(f, 9, name));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "name", aclrtGetFunctionName(f, 16, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "funcHandle", aclrtGetFunctionName(NULL, 16, name));
    void *aic = NULL, *aiv = NULL;
    EXPECT_OK(aclrtGetFunctionAddr(f, &aic, &aiv));
    assert_ptr_equal(aic, FN(kl_record));
    assert_ptr_equal(aiv, FN(kl_record));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "aivAddr", aclrtGetFunctionAddr(f, &aic, NULL));
    int64_t v = -1;
    EXPECT_OK(aclrtGetFunctionAttribute(f, ACL_FUNC_ATTR_KERNEL_TYPE, &v));
    assert_int_equal(v, ACL_KERNEL_TYPE_AICORE);
    EXPECT_OK(aclrtGetFunctionAttribute(f, ACL_FUNC_ATTR_KERNEL_SCHED_MODE, &v));
    assert_int_equal(v, 0);
    EXPECT_OK(aclrtGetFunctionAttribute(f, ACL_FUNC_ATTR_KERNEL_RATIO, &v));
    uint16_t ratio[4];
    memcpy(ratio, &v, sizeof ratio);
    assert_int_equal(ratio[1], 1);   /* cube cores: 24 : 48 vector cores on the 910B1 */
    assert_int_equal(ratio[0], 2);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "attrType 4",
               aclrtGetFunctionAttribute(f, (aclrtFuncAttribute)4, &v));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attrValue",
               aclrtGetFunctionAttribute(f, ACL_FUNC_ATTR_KERNEL_TYPE, NULL));
    size_t s1 = 0, s2 = 0;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aivSize", aclrtGetFunctionSize(f, &s1, NULL));
    aclError e = aclrtGetFunctionSize(f, &s1, &s2);   /* exported only with -rdynamic */
    if (e == ACL_SUCCESS)
        assert_true(s1 > 0 && s1 == s2);
    else
        assert_int_equal(e, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "0x999",
               aclrtGetFunctionAttribute((void *)(uintptr_t)0x999, ACL_FUNC_ATTR_KERNEL_TYPE, &v));
    aclrtBinHandle bin = NULL;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "belongs to no loaded binary",
               aclrtFunctionGetBinary(f, &bin));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "binHandle", aclrtFunctionGetBinary(f, NULL));
    restart_gated("Ascend950PR");
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "",
               aclrtGetFunctionAttribute(FUNC(kl_record), ACL_FUNC_ATTR_KERNEL_RATIO, &v));
    restart_gated("Ascend910A");
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "",
               aclrtGetFunctionSize(FUNC(kl_record), &s1, &s2));
}

/* ---- binaries from memory ------------------------------------------------------------ */

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc((size_t)n);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return p;
}

static void launch_fill(aclrtFuncHandle f, int32_t value, int64_t step, int32_t *out)
{
    aclrtArgsHandle a = NULL;
    aclrtParamHandle h, ph;
    void *buf = NULL;
    EXPECT_OK(aclrtKernelArgsInit(f, &a));
    EXPECT_OK(aclrtKernelArgsAppend(a, &out, sizeof out, &h));
    EXPECT_OK(aclrtKernelArgsAppend(a, &value, sizeof value, &h));
    EXPECT_OK(aclrtKernelArgsAppendPlaceHolder(a, &ph));
    EXPECT_OK(aclrtKernelArgsGetPlaceHolderBuffer(a, ph, sizeof step, &buf));
    memcpy(buf, &step, sizeof step);
    EXPECT_OK(aclrtKernelArgsFinalize(a));
    EXPECT_OK(aclrtLaunchKernelWithConfig(f, 4, NULL, NULL, a, NULL));
}

static void test_binary_from_data(void **state)
{
    (void)state;
    size_t len = 0;
    void *data = read_file(ACLSIM_TEST_KERNELS_PATH, &len);
    aclrtBinHandle bin = NULL, bin2 = NULL;
    EXPECT_OK(aclrtBinaryLoadFromData(data, len, NULL, &bin));
    aclrtFuncHandle f = NULL, f2 = NULL;
    EXPECT_OK(aclrtBinaryGetFunction(bin, "hkl_fill", &f));
    int32_t *out = dev_alloc(4 * sizeof(int32_t));
    launch_fill(f, 5, 3, out);
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t got[4];
    d2h(got, out, sizeof got);
    for (int i = 0; i < 4; i++)
        assert_int_equal(got[i], 5 + 3 * i);

    /* where it lives, by entry, back to its binary */
    void *addr = NULL, *aic = NULL, *aiv = NULL;
    size_t size = 0;
    EXPECT_OK(aclrtBinaryGetDevAddress(bin, &addr, &size));
    assert_non_null(addr);
    assert_int_equal(size, len);
    EXPECT_OK(aclrtGetFunctionAddr(f, &aic, &aiv));
    assert_true((char *)aic > (char *)addr);
    EXPECT_OK(aclrtBinaryGetFunctionByEntry(bin, (uint64_t)(uintptr_t)aic, &f2));
    assert_ptr_equal(f2, f);
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "entry",
               aclrtBinaryGetFunctionByEntry(bin, (uint64_t)(uintptr_t)FN(kl_record), &f2));
    aclrtBinHandle owner = NULL;
    EXPECT_OK(aclrtFunctionGetBinary(f, &owner));
    assert_ptr_equal(owner, bin);
    size_t s1 = 0, s2 = 0;
    EXPECT_OK(aclrtGetFunctionSize(f, &s1, &s2));   /* exported by the shared object */
    assert_true(s1 > 0);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "AI CPU operators only",
               aclrtRegisterCpuFunc(bin, "hkl_cpu_add", "Op", &f2));

    /* aclrtCreateBinary + aclrtBinaryLoad, lazily loaded: no address */
    aclrtBinary desc = aclrtCreateBinary(data, len);
    assert_non_null(desc);
    EXPECT_OK(aclrtBinaryLoad(desc, &bin2));
    EXPECT_OK(aclrtDestroyBinary(desc));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a live aclrtBinary", aclrtDestroyBinary(desc));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a live aclrtBinary", aclrtBinaryLoad(desc, &bin2));
    EXPECT_OK(aclrtBinaryGetFunction(bin2, "hkl_fill", &f2));
    assert_ptr_not_equal(f2, f);   /* its own copy of the kernels */
    EXPECT_OK(aclrtBinaryUnLoad(bin2));
    aclrtBinaryLoadOption lazy = {ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD, {.isLazyLoad = 1}};
    aclrtBinaryLoadOptions opts = {&lazy, 1};
    EXPECT_OK(aclrtBinaryLoadFromData(data, len, &opts, &bin2));
    EXPECT_OK(aclrtBinaryGetDevAddress(bin2, &addr, &size));
    assert_null(addr);
    assert_int_equal(size, len);
    EXPECT_OK(aclrtBinaryUnLoad(bin2));

    /* bad inputs */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "data", aclrtBinaryLoadFromData(NULL, len, NULL, &bin2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "binHandle", aclrtBinaryLoadFromData(data, len, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "length", aclrtBinaryLoadFromData(data, 0, NULL, &bin2));
    EXPECT_ERR(ACL_ERROR_INVALID_FILE, "<memory>", aclrtBinaryLoadFromData("junk", 4, NULL, &bin2));
    aclrtBinaryLoadOption junk = {(aclrtBinaryLoadOptionType)9, {.rsv = {0}}};
    opts.options = &junk;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a load option",
               aclrtBinaryLoadFromData(data, len, &opts, &bin2));
    aclrtBinaryLoadOption magic = {ACL_RT_BINARY_LOAD_OPT_MAGIC, {.magic = 1}};
    opts.options = &magic;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "magic",
               aclrtBinaryLoadFromFile(ACLSIM_TEST_KERNELS_PATH, &opts, &bin2));
    assert_null(aclrtCreateBinary(NULL, 4));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "binary", aclrtDestroyBinary(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "binHandle", aclrtBinaryGetDevAddress(NULL, &addr, &size));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "binSize", aclrtBinaryGetDevAddress(bin, &addr, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "funcHandle", aclrtBinaryGetFunctionByEntry(bin, 1, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "kernelName",
               aclrtRegisterCpuFunc(bin, "RunCpuKernel", NULL, &f2));
    EXPECT_OK(aclrtBinaryUnLoad(bin));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "not a loaded binary",
               aclrtBinaryGetDevAddress(bin, &addr, &size));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "funcHandle", aclrtFunctionGetBinary(f, &owner));
    EXPECT_OK(aclrtFree(out));
    free(data);
}

struct exc_seen {
    atomic_int calls;
    aclrtFuncHandle func;
    uint32_t device;
};

static void on_binary_exception(aclrtExceptionInfo *info, void *userData)
{
    struct exc_seen *seen = userData;
    aclrtFuncHandle f = NULL;
    if (aclrtGetFuncHandleFromExceptionInfo(info, &f) == ACL_SUCCESS)
        seen->func = f;
    seen->device = aclrtGetDeviceIdFromExceptionInfo(info);
    atomic_fetch_add(&seen->calls, 1);
}

static void test_binary_exception_callback(void **state)
{
    (void)state;
    size_t len = 0;
    void *data = read_file(ACLSIM_TEST_KERNELS_PATH, &len);
    aclrtBinHandle bin = NULL;
    EXPECT_OK(aclrtBinaryLoadFromData(data, len, NULL, &bin));
    aclrtFuncHandle trap = NULL;
    EXPECT_OK(aclrtBinaryGetFunction(bin, "hkl_trap", &trap));
    struct exc_seen seen = {0};
    EXPECT_OK(aclrtBinarySetExceptionCallback(bin, on_binary_exception, &seen));
    int32_t yes = 1, no = 0;
    EXPECT_OK(aclrtLaunchKernel(trap, 2, &no, sizeof no, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    assert_int_equal(atomic_load(&seen.calls), 0);
    EXPECT_OK(aclrtLaunchKernel(trap, 2, &yes, sizeof yes, NULL));
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "hkl_trap", aclrtSynchronizeStream(NULL));
    assert_int_equal(atomic_load(&seen.calls), 1);
    assert_ptr_equal(seen.func, trap);
    assert_int_equal(seen.device, 0);
    /* NULL removes it */
    EXPECT_OK(aclrtBinarySetExceptionCallback(bin, NULL, NULL));
    EXPECT_OK(aclrtLaunchKernel(trap, 1, &yes, sizeof yes, NULL));
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "hkl_trap", aclrtSynchronizeStream(NULL));
    assert_int_equal(atomic_load(&seen.calls), 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "binHandle",
               aclrtBinarySetExceptionCallback(NULL, on_binary_exception, &seen));
    EXPECT_OK(aclrtBinaryUnLoad(bin));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "binHandle",
               aclrtBinarySetExceptionCallback(bin, on_binary_exception, &seen));
    free(data);
}

/* AI CPU kernels: a library loaded from memory in CPU kernel mode 2, its
 * functions registered with aclrtRegisterCpuFunc; arguments packed tight. */
static void test_ai_cpu_kernels(void **state)
{
    (void)state;
    size_t len = 0;
    void *data = read_file(ACLSIM_TEST_KERNELS_PATH, &len);
    aclrtBinaryLoadOption mode = {ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE, {.cpuKernelMode = 2}};
    aclrtBinaryLoadOptions opts = {&mode, 1};
    aclrtBinHandle bin = NULL;
    EXPECT_OK(aclrtBinaryLoadFromData(data, len, &opts, &bin));
    aclrtFuncHandle f = NULL, f2 = NULL;
    EXPECT_OK(aclrtRegisterCpuFunc(bin, "hkl_cpu_add", "AddOp", &f));
    EXPECT_OK(aclrtRegisterCpuFunc(bin, "hkl_cpu_add", "AddOp", &f2));
    assert_ptr_equal(f, f2);   /* registered once */
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "no_such_function",
               aclrtRegisterCpuFunc(bin, "no_such_function", "X", &f2));
    char name[16];
    EXPECT_OK(aclrtGetFunctionName(f, sizeof name, name));
    assert_string_equal(name, "AddOp");
    int64_t type = 0;
    EXPECT_OK(aclrtGetFunctionAttribute(f, ACL_FUNC_ATTR_KERNEL_TYPE, &type));
    assert_int_equal(type, ACL_KERNEL_TYPE_AICPU);
    size_t n = 0;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "AI CPU", aclrtFunctionGetParamCount(f, &n));
    void *aic, *aiv;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "AI CPU", aclrtGetFunctionAddr(f, &aic, &aiv));
    aclrtBinHandle owner = NULL;
    EXPECT_OK(aclrtFunctionGetBinary(f, &owner));
    assert_ptr_equal(owner, bin);
    EXPECT_OK(aclrtKernelArgsGetMemSize(f, 24, &n));
    assert_int_equal(n, 24);   /* packed tight, no system parameters */

    /* an argument list: tight offsets, a placeholder */
    int32_t *out = dev_alloc(sizeof(int32_t));
    int32_t a = 3, b = 4;
    int64_t extra = 100;
    aclrtArgsHandle args = NULL;
    aclrtParamHandle h, ph;
    void *buf = NULL;
    EXPECT_OK(aclrtKernelArgsInit(f, &args));
    EXPECT_OK(aclrtKernelArgsAppend(args, &out, sizeof out, &h));
    EXPECT_OK(aclrtKernelArgsAppend(args, &a, sizeof a, &h));
    EXPECT_OK(aclrtKernelArgsAppend(args, &b, sizeof b, &h));
    EXPECT_OK(aclrtKernelArgsAppendPlaceHolder(args, &ph));
    EXPECT_OK(aclrtKernelArgsGetPlaceHolderBuffer(args, ph, sizeof extra, &buf));
    memcpy(buf, &extra, sizeof extra);
    EXPECT_OK(aclrtKernelArgsFinalize(args));
    EXPECT_OK(aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, args, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t got = 0;
    d2h(&got, out, sizeof got);
    assert_int_equal(got, 107);

    /* host arguments */
    struct { int32_t *out; int32_t a, b; const int64_t *extra; int64_t data; } host =
        {out, 10, 20, NULL, 1000};
    aclrtPlaceHolderInfo phi = {offsetof(__typeof__(host), extra), offsetof(__typeof__(host), data)};
    EXPECT_OK(aclrtLaunchKernelWithHostArgs(f, 1, NULL, NULL, &host, sizeof host, &phi, 1));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    d2h(&got, out, sizeof got);
    assert_int_equal(got, 1030);
    /* a failing AI CPU kernel: 507018 */
    host.a = -1;
    EXPECT_OK(aclrtLaunchKernelWithHostArgs(f, 1, NULL, NULL, &host, sizeof host, &phi, 1));
    EXPECT_ERR2(ACL_ERROR_RT_AICPU_EXCEPTION, "AddOp", "returned 7", aclrtSynchronizeStream(NULL));
    void *arr[] = {&out};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "AI CPU kernel",
               aclrtLaunchKernelWithArgsArray(f, 1, NULL, NULL, arr));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "outside argsSize",
               aclrtLaunchKernelWithHostArgs(f, 1, NULL, NULL, &host, 20, &phi, 1));

    /* the other modes, and AI Core binaries */
    mode.value.cpuKernelMode = 1;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ".json",
               aclrtBinaryLoadFromData(data, len, &opts, &owner));
    mode.value.cpuKernelMode = 2;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aclrtBinaryLoadFromData",
               aclrtBinaryLoadFromFile(ACLSIM_TEST_KERNELS_PATH, &opts, &owner));
    mode.value.cpuKernelMode = 3;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "cpuKernelMode",
               aclrtBinaryLoadFromData(data, len, &opts, &owner));
    EXPECT_OK(aclrtBinaryUnLoad(bin));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "funcHandle", aclrtGetFunctionName(f, 16, name));
    EXPECT_OK(aclrtFree(out));
    free(data);
}

/* IPV350 has none of these functions: 207000 after the NULL checks. */
static void test_not_on_ipv350(void **state)
{
    (void)state;
    aclrtFuncHandle f = FUNC(kl_blocks);
    restart_gated("IPV350");
    aclrtArgsHandle a = NULL;
    size_t n = 0;
    int32_t x = 0;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "argsHandle", aclrtKernelArgsInit(f, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtKernelArgsInit(f, &a));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtFunctionGetParamCount(f, &n));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350",
               aclrtLaunchKernelV2(f, 1, &x, sizeof x, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350",
               aclrtBinaryLoadFromData(&x, sizeof x, NULL, &a));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_gated, teardown_gated)
    const struct CMUnitTest tests[] = {
        T(test_args_reach_kernel),
        T(test_para_update_between_launches),
        T(test_args_in_user_memory),
        T(test_args_bad_inputs),
        T(test_args_threads),
        T(test_args_shared_between_threads),
        T(test_launch_attributes),
        T(test_launch_timeout_attribute),
        T(test_launch_v2_and_host_args),
        T(test_function_as_func),
        T(test_simt_variants),
        T(test_function_queries),
        T(test_binary_from_data),
        T(test_binary_exception_callback),
        T(test_ai_cpu_kernels),
        T(test_not_on_ipv350),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
