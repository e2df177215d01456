/*
 * The six device-variable functions (aclrtGetSymbolAddress, aclrtGetSymbolSize,
 * aclrtMemcpyToSymbol(Async), aclrtMemcpyFromSymbol(Async)): CANN's check order
 * and error codes, the SoC support matrix, host-memory rules, async semantics
 * (stream order, page-locked vs pageable host memory) and per-device
 * instances (device pointers, alignment, memory accounting, initializers,
 * isolation between devices, discard on device reset).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

/* ---- device variables of this file --------------------------------------- */

ACLSIM_DEVICE_VAR(int32_t, sym_arr, [8]) = {1, 2, 3, 4, 5, 6, 7, 8}; enum { SYM_ARR_LINE = __LINE__ };
ACLSIM_DEVICE_VAR(int32_t, sym_scalar, ) = 42;
ACLSIM_DEVICE_VAR(uint8_t, sym_zero, [100]);                /* no initializer: zero */
typedef struct { _Alignas(128) unsigned char bytes[96]; } aligned128_t;
ACLSIM_DEVICE_VAR(aligned128_t, sym_aligned, [2]);
ACLSIM_DEVICE_VAR(char, sym_big, [1 << 20]);
ACLSIM_DEVICE_VAR(int32_t, sym_hostmod, ) = 11;

/* Ordinary globals: not device variables. */
static int32_t plain_global[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static const int32_t arr_init[8] = {1, 2, 3, 4, 5, 6, 7, 8};

/* Kernel used for stream-order tests: out[i] = sym_arr[i]; sym_arr[i] += add. */
void sym_k_step(int32_t *out, int32_t add)
{
    uint32_t i = aclsimGetBlockIdx();
    out[i] = ACLSIM_DEV(sym_arr)[i];
    ACLSIM_DEV(sym_arr)[i] += add;
}
ACLSIM_KERNEL_REGISTER(sym_k_step, int32_t *, int32_t);

/* Kernel that touches no device variable: out[i] = v + i. */
void sym_k_fill(int32_t *out, int32_t v)
{
    uint32_t i = aclsimGetBlockIdx();
    out[i] = v + (int32_t)i;
}
ACLSIM_KERNEL_REGISTER(sym_k_fill, int32_t *, int32_t);

/* ---- assertion helpers ----------------------------------------------------- */

/* True when `word` occurs in s as a whole identifier (not as a prefix of a
 * longer name such as aclrtMemcpyToSymbol). */
static bool mentions_word(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(s, word); p; p = strstr(p + 1, word)) {
        bool left = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
        if (left && right)
            return true;
    }
    return false;
}

/* Results gathered on another thread (cmocka asserts only on the main one). */
#define TR_MAX 64
struct thread_results {
    int n;
    aclError rc[TR_MAX];
    bool has_msg[TR_MAX];
    char msg[TR_MAX][512];
};

static void tr_record(struct thread_results *r, aclError rc)
{
    const char *m = aclGetRecentErrMsg();
    if (r->n >= TR_MAX)
        return;
    r->rc[r->n] = rc;
    r->has_msg[r->n] = m != NULL;
    snprintf(r->msg[r->n], sizeof r->msg[r->n], "%s", m ? m : "");
    r->n++;
}

static void tr_expect(const struct thread_results *r, int i, aclError want, const char *needle)
{
    assert_true(i < r->n);
    if (r->rc[i] != want)
        fail_msg("thread call %d returned %d, expected %d (message: %s)", i, r->rc[i], want,
                 r->has_msg[i] ? r->msg[i] : "none");
    if (want != ACL_SUCCESS && !r->has_msg[i])
        fail_msg("thread call %d returned %d without a message", i, r->rc[i]);
    if (want == ACL_SUCCESS && r->has_msg[i])
        fail_msg("thread call %d succeeded but left a message: %s", i, r->msg[i]);
    if (needle && !strstr(r->msg[i], needle))
        fail_msg("thread call %d: message \"%s\" does not mention \"%s\"", i, r->msg[i], needle);
}

/* ---- the six functions, by number ---------------------------------------- */

enum op { OP_ADDR, OP_SIZE, OP_TO, OP_FROM, OP_TO_ASYNC, OP_FROM_ASYNC, OP_COUNT };
static const char *const op_name[OP_COUNT] = {
    "aclrtGetSymbolAddress", "aclrtGetSymbolSize", "aclrtMemcpyToSymbol",
    "aclrtMemcpyFromSymbol", "aclrtMemcpyToSymbolAsync", "aclrtMemcpyFromSymbolAsync"};

static bool op_is_copy(int op) { return op >= OP_TO; }
static bool op_is_from(int op) { return op == OP_FROM || op == OP_FROM_ASYNC; }
static int op_kind(int op)
{
    return op_is_from(op) ? ACL_MEMCPY_DEVICE_TO_HOST : ACL_MEMCPY_HOST_TO_DEVICE;
}

/* Calls one of the six. For Get*, only symbol matters. */
static aclError call_op(int op, const void *symbol, void *host, size_t host_max, size_t count,
                        size_t offset, int kind, aclrtStream stream)
{
    void *p = NULL;
    size_t sz = 0;
    switch (op) {
    case OP_ADDR: return aclrtGetSymbolAddress(symbol, &p);
    case OP_SIZE: return aclrtGetSymbolSize(symbol, &sz);
    case OP_TO: return aclrtMemcpyToSymbol(symbol, host, count, offset, (aclrtMemcpyKind)kind);
    case OP_FROM:
        return aclrtMemcpyFromSymbol(host, host_max, symbol, count, offset, (aclrtMemcpyKind)kind);
    case OP_TO_ASYNC:
        return aclrtMemcpyToSymbolAsync(symbol, host, count, offset, (aclrtMemcpyKind)kind, stream);
    default:
        return aclrtMemcpyFromSymbolAsync(host, host_max, symbol, count, offset,
                                          (aclrtMemcpyKind)kind, stream);
    }
}

/* A valid call of op on sym_arr (4 bytes at offset 0, through buf). */
static aclError call_valid(int op, const void *symbol, void *buf)
{
    return call_op(op, symbol, buf, 64, 4, 0, op_kind(op), NULL);
}

/* ---- helpers ---------------------------------------------------------------- */

static void read_arr(int32_t out[8])
{
    EXPECT_OK(aclrtMemcpyFromSymbol(out, 8 * sizeof(int32_t), sym_arr, 8 * sizeof(int32_t), 0,
                                    ACL_MEMCPY_DEVICE_TO_HOST));
}

/* ---- step 1: count 0 ----------------------------------------------------------- */

static void count_zero_calls(struct thread_results *r)
{
    int32_t buf[8];
    /* NULL symbol, NULL host pointer, bad kind, absurd offset, garbage stream */
    tr_record(r, aclrtMemcpyToSymbol(NULL, NULL, 0, SIZE_MAX, (aclrtMemcpyKind)999));
    tr_record(r, aclrtMemcpyFromSymbol(NULL, 0, NULL, 0, SIZE_MAX, (aclrtMemcpyKind)999));
    tr_record(r, aclrtMemcpyToSymbolAsync(NULL, NULL, 0, 0, (aclrtMemcpyKind)999,
                                          (aclrtStream)(uintptr_t)0x1234));
    tr_record(r, aclrtMemcpyFromSymbolAsync(NULL, 0, NULL, 0, 0, (aclrtMemcpyKind)999,
                                            (aclrtStream)(uintptr_t)0x1234));
    /* unknown symbol */
    tr_record(r, aclrtMemcpyToSymbol(plain_global, buf, 0, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    tr_record(r, aclrtMemcpyFromSymbol(buf, sizeof buf, plain_global, 0, 0,
                                       ACL_MEMCPY_DEVICE_TO_HOST));
    /* a real symbol, offset past its end */
    tr_record(r, aclrtMemcpyToSymbol(sym_arr, buf, 0, 1000, ACL_MEMCPY_HOST_TO_DEVICE));
    tr_record(r, aclrtMemcpyFromSymbolAsync(buf, 0, sym_arr, 0, 1000, ACL_MEMCPY_DEVICE_TO_HOST,
                                            NULL));
}

static void *count_zero_thread(void *arg)
{
    count_zero_calls(arg);
    return NULL;
}

static void test_count_zero_succeeds_first(void **state)
{
    (void)state;
    struct thread_results r = {0};
    count_zero_calls(&r);
    for (int i = 0; i < r.n; i++)
        tr_expect(&r, i, ACL_SUCCESS, NULL);
    /* no current context on this thread either */
    struct thread_results t = {0};
    run_in_thread(count_zero_thread, &t);
    for (int i = 0; i < t.n; i++)
        tr_expect(&t, i, ACL_SUCCESS, NULL);
    /* and nothing was written */
    int32_t back[8];
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
}

/* ---- step 2: NULL arguments ------------------------------------------------ */

static void test_null_arguments(void **state)
{
    (void)state;
    int32_t buf[8] = {0};
    void *p = NULL;
    size_t sz = 0;
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtGetSymbolAddress", "symbol",
                aclrtGetSymbolAddress(NULL, &p));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtGetSymbolAddress", "devPtr",
                aclrtGetSymbolAddress(sym_arr, NULL));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtGetSymbolSize", "symbol",
                aclrtGetSymbolSize(NULL, &sz));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtGetSymbolSize", "size",
                aclrtGetSymbolSize(sym_arr, NULL));
    assert_null(p);
    assert_int_equal(sz, 0);

    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyToSymbol", "symbol",
                aclrtMemcpyToSymbol(NULL, buf, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyToSymbol", "src",
                aclrtMemcpyToSymbol(sym_arr, NULL, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyFromSymbol", "symbol",
                aclrtMemcpyFromSymbol(buf, sizeof buf, NULL, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyFromSymbol", "dst",
                aclrtMemcpyFromSymbol(NULL, sizeof buf, sym_arr, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyToSymbolAsync", "symbol",
                aclrtMemcpyToSymbolAsync(NULL, buf, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyToSymbolAsync", "src",
                aclrtMemcpyToSymbolAsync(sym_arr, NULL, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyFromSymbolAsync", "symbol",
                aclrtMemcpyFromSymbolAsync(buf, sizeof buf, NULL, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST,
                                           NULL));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyFromSymbolAsync", "dst",
                aclrtMemcpyFromSymbolAsync(NULL, sizeof buf, sym_arr, 4, 0,
                                           ACL_MEMCPY_DEVICE_TO_HOST, NULL));
}

/* ---- step 3: count > dstMax ------------------------------------------------- */

static void test_from_count_larger_than_dstmax(void **state)
{
    (void)state;
    int32_t buf[8];
    memset(buf, 0x5a, sizeof buf);
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyFromSymbol", "dstMax",
                aclrtMemcpyFromSymbol(buf, 7, sym_arr, 8, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyFromSymbolAsync", "dstMax",
                aclrtMemcpyFromSymbolAsync(buf, 0, sym_arr, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST, NULL));
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyFromSymbol", "dstMax",
                aclrtMemcpyFromSymbol(buf, 31, sym_arr, 32, 0, ACL_MEMCPY_DEFAULT));
    for (size_t i = 0; i < sizeof buf; i++)
        assert_int_equal(((unsigned char *)buf)[i], 0x5a);
    /* count == dstMax is fine */
    EXPECT_OK(aclrtMemcpyFromSymbol(buf, 32, sym_arr, 32, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(buf, arr_init, sizeof buf);
}

/* ---- step 4: kind ------------------------------------------------------------- */

static void test_kind_not_allowed(void **state)
{
    (void)state;
    int32_t buf[8] = {0};
    static const int bad_to[] = {ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_DEVICE_TO_HOST,
                                 ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
                                 ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
                                 ACL_MEMCPY_INTER_DEVICE_TO_DEVICE, 8, 999, -1};
    static const int bad_from[] = {ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE,
                                   ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
                                   ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
                                   ACL_MEMCPY_INTER_DEVICE_TO_DEVICE, 8, 999, -1};
    for (int op = OP_TO; op < OP_COUNT; op++) {
        const int *bad = op_is_from(op) ? bad_from : bad_to;
        size_t n = op_is_from(op) ? sizeof bad_from / sizeof *bad_from
                                  : sizeof bad_to / sizeof *bad_to;
        for (size_t i = 0; i < n; i++) {
            aclError e = call_op(op, sym_arr, buf, sizeof buf, 4, 0, bad[i], NULL);
            const char *m = aclGetRecentErrMsg();
            if (e != ACL_ERROR_INVALID_PARAM || !m || !strstr(m, "kind") || !strstr(m, op_name[op]))
                fail_msg("%s with kind %d: got %d (message: %s), expected 100000 about kind",
                         op_name[op], bad[i], e, m ? m : "none");
        }
    }
    int32_t back[8];
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
}

/* ---- step 5: context and lookup ------------------------------------------------- */

static void *no_context_thread(void *arg)
{
    struct thread_results *r = arg;
    int32_t buf[8] = {0};
    for (int op = 0; op < OP_COUNT; op++)
        tr_record(r, call_valid(op, sym_arr, buf));
    return NULL;
}

static void test_no_current_context(void **state)
{
    (void)state;
    struct thread_results r = {0};
    run_in_thread(no_context_thread, &r);
    assert_int_equal(r.n, OP_COUNT);
    for (int op = 0; op < OP_COUNT; op++) {
        tr_expect(&r, op, ACL_ERROR_RT_CONTEXT_NULL, "context");
        tr_expect(&r, op, ACL_ERROR_RT_CONTEXT_NULL, op_name[op]);
    }
}

/* After the last aclrtResetDevice, the thread's context is gone: 107002. */
static void test_context_gone_after_reset(void **state)
{
    (void)state;
    int32_t buf[8] = {0};
    EXPECT_OK(aclrtResetDevice(0));
    for (int op = 0; op < OP_COUNT; op++) {
        aclError e = call_valid(op, sym_arr, buf);
        const char *m = aclGetRecentErrMsg();
        if (e != ACL_ERROR_RT_CONTEXT_NULL || !m)
            fail_msg("%s after reset: got %d (message: %s), expected 107002", op_name[op], e,
                     m ? m : "none");
    }
}

static void test_unknown_symbol(void **state)
{
    (void)state;
    int32_t buf[8] = {0};
    int32_t on_stack[8] = {0};
    int32_t *on_heap = calloc(8, sizeof *on_heap);
    assert_non_null(on_heap);
    void *dev = NULL, *pinned = NULL, *instance = NULL;
    EXPECT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMallocHost(&pinned, 64));
    EXPECT_OK(aclrtGetSymbolAddress(sym_arr, &instance));
    const void *bad[] = {
        plain_global,                  /* an ordinary global */
        on_stack,                      /* a stack address */
        on_heap,                       /* a heap address */
        dev,                           /* device memory from aclrtMalloc */
        pinned,                        /* page-locked host memory */
        instance,                      /* the device instance is not the symbol */
        &sym_arr[1],                   /* interior pointers */
        &sym_arr[7],
        (const char *)&sym_scalar + 1,
        (const void *)(uintptr_t)&sym_k_step,  /* a kernel, not a variable */
        (const void *)(uintptr_t)0x10,
    };
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
        for (int op = 0; op < OP_COUNT; op++) {
            aclError e = call_valid(op, bad[b], buf);
            const char *m = aclGetRecentErrMsg();
            if (e != ACL_ERROR_RT_INVALID_SYMBOL || !m || !strstr(m, op_name[op]))
                fail_msg("%s with unknown symbol #%zu (%p): got %d (message: %s), expected 107043",
                         op_name[op], b, bad[b], e, m ? m : "none");
        }
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtFreeHost(pinned));
    free(on_heap);
    int32_t back[8];
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
    assert_memory_equal(plain_global, arr_init, sizeof plain_global);
}

/* ---- step 6: offset + count ------------------------------------------------------ */

static void test_offset_count_overflow(void **state)
{
    (void)state;
    int32_t buf[8] = {0};
    const size_t offsets[] = {SIZE_MAX, SIZE_MAX - 2, SIZE_MAX - 3};
    for (int op = OP_TO; op < OP_COUNT; op++)
        for (size_t i = 0; i < 3; i++) {
            aclError e = call_op(op, sym_arr, buf, sizeof buf, 4, offsets[i], op_kind(op), NULL);
            const char *m = aclGetRecentErrMsg();
            if (e != ACL_ERROR_FAILURE || !m || !strstr(m, "sym_arr"))
                fail_msg("%s offset %zu count 4: got %d (message: %s), expected 500001 naming "
                         "sym_arr", op_name[op], offsets[i], e, m ? m : "none");
        }
}

static void test_offset_count_exceeds_size(void **state)
{
    (void)state;
    int32_t buf[16] = {0};
    char line[32];
    snprintf(line, sizeof line, "test-symbol.c:%d", (int)SYM_ARR_LINE);
    const struct { size_t offset, count; } cases[] = {
        {29, 4}, {0, 33}, {32, 1}, {1000, 1}, {4, 32}, {SIZE_MAX / 2, SIZE_MAX / 2},
    };
    for (int op = OP_TO; op < OP_COUNT; op++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            aclError e = call_op(op, sym_arr, buf, cases[i].count, cases[i].count,
                                 cases[i].offset, op_kind(op), NULL);
            const char *m = aclGetRecentErrMsg();
            if (e != ACL_ERROR_INVALID_PARAM || !m || !strstr(m, "sym_arr") || !strstr(m, "32") ||
                !strstr(m, line))
                fail_msg("%s offset %zu count %zu: got %d (message: %s), expected 100000 naming "
                         "sym_arr, its definition (%s) and its 32 bytes", op_name[op],
                         cases[i].offset, cases[i].count, e, m ? m : "none", line);
        }
    int32_t back[8];
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
}

static void test_exact_fit(void **state)
{
    (void)state;
    int32_t v = 800, got = 0;
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, &v, 4, 28, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpyFromSymbol(&got, 4, sym_arr, 4, 28, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(got, 800);
    int32_t all[8] = {10, 20, 30, 40, 50, 60, 70, 80}, back[8] = {0};
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, all, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpyFromSymbol(back, 32, sym_arr, 32, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(back, all, sizeof all);
    /* async, exactly at the end; a single byte at the very end */
    v = -5;
    EXPECT_OK(aclrtMemcpyToSymbolAsync(sym_arr, &v, 4, 28, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    unsigned char last = 0;
    EXPECT_OK(aclrtMemcpyFromSymbolAsync(&last, 1, sym_arr, 1, 31, ACL_MEMCPY_DEVICE_TO_HOST,
                                         NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t minus5 = -5;
    assert_int_equal(last, ((unsigned char *)&minus5)[3]);
    /* a scalar: offset 0, count == sizeof */
    int32_t s = 0;
    EXPECT_OK(aclrtMemcpyFromSymbol(&s, sizeof s, &sym_scalar, sizeof s, 0,
                                    ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(s, 42);
    size_t size = 0;
    EXPECT_OK(aclrtGetSymbolSize(sym_arr, &size));
    assert_int_equal(size, 32);
    EXPECT_OK(aclrtGetSymbolSize(&sym_scalar, &size));
    assert_int_equal(size, sizeof(int32_t));
    EXPECT_OK(aclrtGetSymbolSize(sym_big, &size));
    assert_int_equal(size, (size_t)1 << 20);
}

static void test_default_kind(void **state)
{
    (void)state;
    int32_t in[8] = {-1, -2, -3, -4, -5, -6, -7, -8}, back[8] = {0};
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, in, 16, 0, ACL_MEMCPY_DEFAULT));
    EXPECT_OK(aclrtMemcpyFromSymbol(back, sizeof back, sym_arr, 32, 0, ACL_MEMCPY_DEFAULT));
    int32_t want[8] = {-1, -2, -3, -4, 5, 6, 7, 8};
    assert_memory_equal(back, want, sizeof want);
    EXPECT_OK(aclrtMemcpyToSymbolAsync(sym_arr, in + 4, 16, 16, ACL_MEMCPY_DEFAULT, NULL));
    memset(back, 0, sizeof back);
    EXPECT_OK(aclrtMemcpyFromSymbolAsync(back, sizeof back, sym_arr, 32, 0, ACL_MEMCPY_DEFAULT,
                                         NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    assert_memory_equal(back, in, sizeof in);
}

/* ---- precedence between the steps ------------------------------------------------ */

static void *precedence_thread(void *arg)
{
    struct thread_results *r = arg;
    int32_t buf[8] = {0};
    void *p;
    /* 0-3: bad kind before the context check */
    tr_record(r, aclrtMemcpyToSymbol(sym_arr, buf, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    tr_record(r, aclrtMemcpyFromSymbol(buf, sizeof buf, sym_arr, 4, 0, (aclrtMemcpyKind)999));
    tr_record(r, aclrtMemcpyToSymbolAsync(sym_arr, buf, 4, 0, ACL_MEMCPY_HOST_TO_HOST, NULL));
    tr_record(r, aclrtMemcpyFromSymbolAsync(buf, sizeof buf, sym_arr, 4, 0,
                                            ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    /* 4-6: no context before the symbol lookup */
    tr_record(r, aclrtMemcpyToSymbol(plain_global, buf, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    tr_record(r, aclrtGetSymbolAddress(plain_global, &p));
    tr_record(r, aclrtMemcpyFromSymbol(buf, sizeof buf, &sym_arr[1], 4, SIZE_MAX,
                                       ACL_MEMCPY_DEVICE_TO_HOST));
    /* 7-8: NULL arguments before the context check */
    tr_record(r, aclrtGetSymbolAddress(NULL, &p));
    tr_record(r, aclrtMemcpyToSymbol(sym_arr, NULL, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    /* 9: count > dstMax before the context check */
    tr_record(r, aclrtMemcpyFromSymbol(buf, 2, sym_arr, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    /* 10: no context before offset checks */
    tr_record(r, aclrtMemcpyToSymbol(sym_arr, buf, 4, SIZE_MAX, ACL_MEMCPY_HOST_TO_DEVICE));
    return NULL;
}

static void test_check_order(void **state)
{
    (void)state;
    int32_t buf[8] = {0};
    void *p = NULL;
    /* NULL src and bad kind: the NULL check comes first */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "src",
               aclrtMemcpyToSymbol(sym_arr, NULL, 4, 0, (aclrtMemcpyKind)999));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dst",
               aclrtMemcpyFromSymbolAsync(NULL, 64, sym_arr, 4, 0, ACL_MEMCPY_HOST_TO_HOST, NULL));
    /* NULL symbol and count > dstMax: NULL first */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "symbol",
               aclrtMemcpyFromSymbol(buf, 2, NULL, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    /* count > dstMax and bad kind: dstMax first */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dstMax",
               aclrtMemcpyFromSymbol(buf, 2, sym_arr, 4, 0, (aclrtMemcpyKind)999));
    /* bad kind and unknown symbol: kind first */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "kind",
               aclrtMemcpyToSymbol(plain_global, buf, 4, 0, ACL_MEMCPY_DEVICE_TO_DEVICE));
    /* unknown symbol and overflow / too large: lookup first */
    EXPECT_ERR(ACL_ERROR_RT_INVALID_SYMBOL, NULL,
               aclrtMemcpyToSymbol(plain_global, buf, 4, SIZE_MAX, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_SYMBOL, NULL,
               aclrtMemcpyFromSymbol(buf, sizeof buf, &sym_arr[2], 32, 0,
                                     ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_SYMBOL, NULL,
               aclrtMemcpyToSymbolAsync(plain_global, buf, 4, 1000, ACL_MEMCPY_HOST_TO_DEVICE,
                                        NULL));
    /* NULL devPtr and unknown symbol: NULL first */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtGetSymbolAddress(plain_global, NULL));
    /* bad kind and garbage stream: the copy's own checks come first */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "kind",
               aclrtMemcpyToSymbolAsync(sym_arr, buf, 4, 0, (aclrtMemcpyKind)999,
                                        (aclrtStream)(uintptr_t)0x1238));
    assert_null(p);

    struct thread_results r = {0};
    run_in_thread(precedence_thread, &r);
    assert_int_equal(r.n, 11);
    tr_expect(&r, 0, ACL_ERROR_INVALID_PARAM, "kind");
    tr_expect(&r, 1, ACL_ERROR_INVALID_PARAM, "kind");
    tr_expect(&r, 2, ACL_ERROR_INVALID_PARAM, "kind");
    tr_expect(&r, 3, ACL_ERROR_INVALID_PARAM, "kind");
    tr_expect(&r, 4, ACL_ERROR_RT_CONTEXT_NULL, "context");
    tr_expect(&r, 5, ACL_ERROR_RT_CONTEXT_NULL, "context");
    tr_expect(&r, 6, ACL_ERROR_RT_CONTEXT_NULL, "context");
    tr_expect(&r, 7, ACL_ERROR_INVALID_PARAM, "symbol");
    tr_expect(&r, 8, ACL_ERROR_INVALID_PARAM, "src");
    tr_expect(&r, 9, ACL_ERROR_INVALID_PARAM, "dstMax");
    tr_expect(&r, 10, ACL_ERROR_RT_CONTEXT_NULL, "context");
}

/* ---- SoC support matrix ----------------------------------------------------------- */

static const char *const unsupported_socs[] = {"Ascend310B1",   "Ascend310B4", "Ascend910A",
                                               "Ascend910B",    "Ascend910ProA",
                                               "Ascend910ProB", "Ascend910PremiumA", "IPV350"};
static const char *const supported_socs[] = {
    "Ascend910B1",    "Ascend910B2",    "Ascend910B3", "Ascend910B4", "Ascend910_9391",
    "Ascend910_9381", "Ascend910_9372", "Ascend950PR", "Ascend950DT", "Ascend310P1",
    "Ascend310P3"};

static void init_with_soc(const char *soc)
{
    setenv("ACLSIM_SOC_VERSION", soc, 1);
    setenv("ACLSIM_DEVICE_COUNT", "1", 1);
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtSetDevice(0));
    const char *name = aclrtGetSocName();
    assert_non_null(name);
    assert_string_equal(name, soc);
}

static void fini_with_soc(void)
{
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    unsetenv("ACLSIM_SOC_VERSION");
    unsetenv("ACLSIM_DEVICE_COUNT");
    unsetenv("ACLSIM_DEVICE_MEMORY");
}

/* aclrtMalloc, aclrtMemcpy both ways and a kernel launch work on any SoC. */
static void other_apis_work(void)
{
    void *dev = NULL;
    int32_t in[4] = {1, 2, 3, 4}, out[4] = {0};
    EXPECT_OK(aclrtMalloc(&dev, sizeof in, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpy(dev, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof in, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(out, in, sizeof in);
    aclrtFuncHandle f = NULL;
    EXPECT_OK(aclrtGetFuncBySymbol((const void *)(uintptr_t)&sym_k_fill, &f));
    int32_t v = 70;
    void *args[] = {&dev, &v};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 4, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtMemcpy(out, sizeof out, dev, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i], 70 + i);
    EXPECT_OK(aclrtFree(dev));
}

static void test_soc_unsupported(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof unsupported_socs / sizeof *unsupported_socs; s++) {
        const char *soc = unsupported_socs[s];
        init_with_soc(soc);
        int32_t buf[8] = {0};
        for (int op = 0; op < OP_COUNT; op++) {
            aclError e = call_valid(op, sym_arr, buf);
            const char *m = aclGetRecentErrMsg();
            if (e != ACL_ERROR_RT_FEATURE_NOT_SUPPORT || !m || !strstr(m, soc))
                fail_msg("SoC %s, %s: got %d (message: %s), expected 207000 naming the SoC", soc,
                         op_name[op], e, m ? m : "none");
            /* the support check comes before the lookup */
            e = call_valid(op, plain_global, buf);
            m = aclGetRecentErrMsg();
            if (e != ACL_ERROR_RT_FEATURE_NOT_SUPPORT || !m)
                fail_msg("SoC %s, %s on an unknown symbol: got %d, expected 207000", soc,
                         op_name[op], e);
            /* ... and after the argument checks */
            e = call_op(op, NULL, buf, sizeof buf, 4, 0, op_kind(op), NULL);
            m = aclGetRecentErrMsg();
            if (e != ACL_ERROR_INVALID_PARAM || !m)
                fail_msg("SoC %s, %s with NULL symbol: got %d, expected 100000", soc,
                         op_name[op], e);
            if (op_is_copy(op)) {
                /* count 0 still succeeds */
                e = call_op(op, sym_arr, buf, sizeof buf, 0, 0, op_kind(op), NULL);
                if (e != ACL_SUCCESS)
                    fail_msg("SoC %s, %s with count 0: got %d, expected 0", soc, op_name[op], e);
                e = call_op(op, sym_arr, buf, sizeof buf, 4, 0, 999, NULL);
                m = aclGetRecentErrMsg();
                if (e != ACL_ERROR_INVALID_PARAM || !m)
                    fail_msg("SoC %s, %s with kind 999: got %d, expected 100000", soc,
                             op_name[op], e);
            }
        }
        /* the context check comes before the support check */
        struct thread_results r = {0};
        run_in_thread(no_context_thread, &r);
        for (int op = 0; op < OP_COUNT; op++)
            tr_expect(&r, op, ACL_ERROR_RT_CONTEXT_NULL, NULL);
        other_apis_work();
        fini_with_soc();
    }
}

static void test_soc_supported(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof supported_socs / sizeof *supported_socs; s++) {
        init_with_soc(supported_socs[s]);
        void *addr = NULL;
        size_t size = 0;
        EXPECT_OK(aclrtGetSymbolAddress(sym_arr, &addr));
        assert_non_null(addr);
        EXPECT_OK(aclrtGetSymbolSize(sym_arr, &size));
        assert_int_equal(size, 32);
        int32_t v[2] = {(int32_t)s, 1000 + (int32_t)s}, back[2] = {0};
        EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, v, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
        EXPECT_OK(aclrtMemcpyToSymbolAsync(sym_arr, v + 1, 4, 4, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
        EXPECT_OK(aclrtSynchronizeStream(NULL));
        EXPECT_OK(aclrtMemcpyFromSymbol(back, sizeof back, sym_arr, 4, 0,
                                        ACL_MEMCPY_DEVICE_TO_HOST));
        EXPECT_OK(aclrtMemcpyFromSymbolAsync(back + 1, 4, sym_arr, 4, 4,
                                             ACL_MEMCPY_DEVICE_TO_HOST, NULL));
        EXPECT_OK(aclrtSynchronizeStream(NULL));
        assert_memory_equal(back, v, sizeof v);
        other_apis_work();
        fini_with_soc();
    }
}

/* ---- the host side must be host memory -------------------------------------------- */

static void expect_not_host(aclError e, const char *what)
{
    const char *m = aclGetRecentErrMsg();
    if (e != ACL_ERROR_INVALID_PARAM || !m || !mentions_word(m, "aclrtMemcpy") ||
        !strstr(m, "aclrtGetSymbolAddress"))
        fail_msg("%s: got %d (message: %s), expected 100000 pointing to aclrtMemcpy with the "
                 "address from aclrtGetSymbolAddress", what, e, m ? m : "none");
}

static void test_host_side_must_be_host_memory(void **state)
{
    (void)state;
    void *dev = NULL, *inst = NULL, *dev1 = NULL;
    EXPECT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(dev, 64, 0x11, 64));
    EXPECT_OK(aclrtGetSymbolAddress(&sym_scalar, &inst));
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtMalloc(&dev1, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtSetDevice(0));
    void *devs[] = {dev, inst, dev1};
    const int to_kinds[] = {ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEFAULT};
    const int from_kinds[] = {ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEFAULT};
    char what[128];
    for (int d = 0; d < 3; d++)
        for (int k = 0; k < 2; k++) {
            snprintf(what, sizeof what, "ToSymbol from device pointer #%d kind %d", d, to_kinds[k]);
            expect_not_host(aclrtMemcpyToSymbol(sym_arr, devs[d], 4, 0,
                                                (aclrtMemcpyKind)to_kinds[k]), what);
            expect_not_host(aclrtMemcpyToSymbolAsync(sym_arr, devs[d], 4, 0,
                                                     (aclrtMemcpyKind)to_kinds[k], NULL), what);
            snprintf(what, sizeof what, "FromSymbol to device pointer #%d kind %d", d,
                     from_kinds[k]);
            expect_not_host(aclrtMemcpyFromSymbol(devs[d], 4, sym_arr, 4, 0,
                                                  (aclrtMemcpyKind)from_kinds[k]), what);
            expect_not_host(aclrtMemcpyFromSymbolAsync(devs[d], 4, sym_arr, 4, 0,
                                                       (aclrtMemcpyKind)from_kinds[k], NULL),
                            what);
        }
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    /* nothing was copied either way */
    int32_t back[8], s = 0;
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
    EXPECT_OK(aclrtMemcpy(&s, 4, inst, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(s, 42);
    unsigned char raw[64];
    EXPECT_OK(aclrtMemcpy(raw, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 64; i++)
        assert_int_equal(raw[i], 0x11);

    /* page-locked host memory is host memory */
    int32_t *pin = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&pin, 64));
    for (int i = 0; i < 8; i++)
        pin[i] = 300 + i;
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, pin, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    memset(pin, 0, 64);
    EXPECT_OK(aclrtMemcpyFromSymbol(pin, 64, sym_arr, 32, 0, ACL_MEMCPY_DEFAULT));
    for (int i = 0; i < 8; i++)
        assert_int_equal(pin[i], 300 + i);
    EXPECT_OK(aclrtFreeHost(pin));
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtFree(dev1));
}

/* A stale pointer into a reset device's memory is not host memory either. */
static void test_host_side_stale_device_pointer(void **state)
{
    (void)state;
    aclrtContext ctx0 = NULL;
    EXPECT_OK(aclrtGetCurrentContext(&ctx0));
    EXPECT_OK(aclrtSetDevice(1));
    void *stale = NULL, *stale_inst = NULL;
    EXPECT_OK(aclrtMalloc(&stale, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtGetSymbolAddress(sym_arr, &stale_inst));
    EXPECT_OK(aclrtSetCurrentContext(ctx0));
    EXPECT_OK(aclrtResetDevice(1));   /* the last reference: device 1 closes */
    void *ptrs[] = {stale, stale_inst};
    for (int i = 0; i < 2; i++) {
        expect_not_host(aclrtMemcpyToSymbol(sym_arr, ptrs[i], 4, 0, ACL_MEMCPY_HOST_TO_DEVICE),
                        "ToSymbol from a stale device pointer");
        expect_not_host(aclrtMemcpyFromSymbol(ptrs[i], 4, sym_arr, 4, 0, ACL_MEMCPY_DEFAULT),
                        "FromSymbol to a stale device pointer");
        expect_not_host(aclrtMemcpyToSymbolAsync(sym_arr, ptrs[i], 4, 0, ACL_MEMCPY_DEFAULT,
                                                 NULL),
                        "ToSymbolAsync from a stale device pointer");
        expect_not_host(aclrtMemcpyFromSymbolAsync(ptrs[i], 4, sym_arr, 4, 0,
                                                   ACL_MEMCPY_DEVICE_TO_HOST, NULL),
                        "FromSymbolAsync to a stale device pointer");
    }
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    int32_t back[8];
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
}

/* ---- async ---------------------------------------------------------------------------- */

static void test_async_in_stream_order(void **state)
{
    (void)state;
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    int32_t *in = NULL, *in2 = NULL, *back1 = NULL, *back2 = NULL, *h0 = NULL, *h1 = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&in, 32));
    EXPECT_OK(aclrtMallocHost((void **)&in2, 16));
    EXPECT_OK(aclrtMallocHost((void **)&back1, 32));
    EXPECT_OK(aclrtMallocHost((void **)&back2, 32));
    EXPECT_OK(aclrtMallocHost((void **)&h0, 32));
    EXPECT_OK(aclrtMallocHost((void **)&h1, 32));
    for (int i = 0; i < 8; i++) {
        in[i] = 10 * i;
        back1[i] = back2[i] = h0[i] = h1[i] = -99;
    }
    for (int i = 0; i < 4; i++)
        in2[i] = 500 + i;
    void *out0 = NULL, *out1 = NULL;
    char *inst = NULL;
    EXPECT_OK(aclrtMalloc(&out0, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&out1, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtGetSymbolAddress(sym_arr, (void **)&inst));
    aclrtFuncHandle f = NULL;
    EXPECT_OK(aclrtGetFuncBySymbol((const void *)(uintptr_t)&sym_k_step, &f));

    static struct blocker blk;   /* static: outlives a failed assertion */
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    /* everything below is queued behind the blocker */
    EXPECT_OK(aclrtMemcpyToSymbolAsync(sym_arr, in, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE, s));
    int32_t add0 = 1, add1 = 1000;
    void *args0[] = {&out0, &add0};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 8, s, NULL, args0));   /* out0 = 10i; +1 */
    EXPECT_OK(aclrtMemcpyFromSymbolAsync(back1, 32, sym_arr, 32, 0, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtMemcpyAsync(inst + 16, 16, in2, 16, ACL_MEMCPY_HOST_TO_DEVICE, s));
    void *args1[] = {&out1, &add1};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 8, s, NULL, args1));
    EXPECT_OK(aclrtMemcpyFromSymbolAsync(back2, 32, sym_arr, 32, 0, ACL_MEMCPY_DEFAULT, s));
    EXPECT_OK(aclrtMemcpyAsync(h0, 32, out0, 32, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtMemcpyAsync(h1, 32, out1, 32, ACL_MEMCPY_DEVICE_TO_HOST, s));
    /* the stream is blocked: nothing has run yet, not even the first copy
     * (the variable is read on the device side: a read of back1 now would be
     * an early host access) */
    int32_t now[8];
    read_arr(now);
    bool ran_early = memcmp(now, arr_init, sizeof now) != 0;
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_false(ran_early);
    assert_false(blocker_timed_out(&blk));
    for (int i = 0; i < 8; i++) {
        int32_t mid = i < 4 ? 10 * i + 1 : 500 + (i - 4);
        assert_int_equal(h0[i], 10 * i);
        assert_int_equal(back1[i], 10 * i + 1);
        assert_int_equal(h1[i], mid);
        assert_int_equal(back2[i], mid + 1000);
    }
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(out0));
    EXPECT_OK(aclrtFree(out1));
    int32_t *bufs[] = {in, in2, back1, back2, h0, h1};
    for (int i = 0; i < 6; i++)
        EXPECT_OK(aclrtFreeHost(bufs[i]));
}

/* Page-locked host memory: the call returns once queued. */
static void test_async_pinned_returns_when_queued(void **state)
{
    (void)state;
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    int32_t *src = NULL, *dst = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&src, 32));
    EXPECT_OK(aclrtMallocHost((void **)&dst, 32));
    for (int i = 0; i < 8; i++) {
        src[i] = 70 + i;
        dst[i] = -1;
    }
    static struct blocker blk;   /* static: outlives a failed assertion */
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    EXPECT_OK(aclrtMemcpyFromSymbolAsync(dst, 32, sym_arr, 32, 0, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtMemcpyToSymbolAsync(sym_arr, src, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE, s));
    /* both returned while the stream is still blocked */
    bool waited = blocker_timed_out(&blk), ran_early = false;
    int32_t now[8];
    read_arr(now);   /* the variable: the second copy has not written it */
    ran_early = memcmp(now, arr_init, sizeof now) != 0;
    /* Nor has the first copy written dst. (An early read on purpose: what the
     * checker's early-host-access detector reports, so left out when it is on.) */
    for (int i = 0; i < 8 && !checking_early_host_access(); i++)
        ran_early |= dst[i] != -1;
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_false(waited);
    assert_false(ran_early);
    assert_false(blocker_timed_out(&blk));
    assert_memory_equal(dst, arr_init, 32);   /* read before the write, in order */
    int32_t back[8];
    read_arr(back);
    for (int i = 0; i < 8; i++)
        assert_int_equal(back[i], 70 + i);
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFreeHost(src));
    EXPECT_OK(aclrtFreeHost(dst));
}

struct pageable_job {
    aclrtContext ctx;
    aclrtStream stream;
    bool from;
    int32_t host[8];
    int32_t snapshot[8];
    aclError rc;
    atomic_int started, returned;
};

static void *pageable_thread(void *arg)
{
    struct pageable_job *j = arg;
    aclError e = aclrtSetCurrentContext(j->ctx);
    atomic_store(&j->started, 1);
    if (e == ACL_SUCCESS && j->from) {
        e = aclrtMemcpyFromSymbolAsync(j->host, sizeof j->host, sym_arr, 32, 0,
                                       ACL_MEMCPY_DEVICE_TO_HOST, j->stream);
        memcpy(j->snapshot, j->host, sizeof j->snapshot);   /* at once, no synchronize */
    } else if (e == ACL_SUCCESS) {
        e = aclrtMemcpyToSymbolAsync(sym_arr, j->host, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE,
                                     j->stream);
        for (int i = 0; i < 8; i++)   /* the copy is done: reusing the buffer is safe */
            j->host[i] = -7;
    }
    j->rc = e;
    atomic_store(&j->returned, 1);
    return NULL;
}

/* Ordinary (pageable) host memory: the call returns only after the copy ran. */
static void run_pageable(bool from)
{
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    struct pageable_job j = {.stream = s, .from = from};
    EXPECT_OK(aclrtGetCurrentContext(&j.ctx));
    for (int i = 0; i < 8; i++)
        j.host[i] = from ? -1 : 90 + i;
    static struct blocker blk;   /* static: outlives a failed assertion */
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, pageable_thread, &j), 0);
    while (!atomic_load(&j.started))
        sleep_ms(1);
    sleep_ms(100);
    int returned_early = atomic_load(&j.returned);
    blocker_release(&blk);
    assert_int_equal(pthread_join(t, NULL), 0);
    EXPECT_OK(aclrtSynchronizeStream(s));   /* before asserting: j is on this stack */
    assert_int_equal(returned_early, 0);
    assert_false(blocker_timed_out(&blk));
    assert_int_equal(j.rc, ACL_SUCCESS);
    if (from) {
        assert_memory_equal(j.snapshot, arr_init, 32);
    } else {
        int32_t back[8];
        read_arr(back);
        for (int i = 0; i < 8; i++)
            assert_int_equal(back[i], 90 + i);
    }
    EXPECT_OK(aclrtDestroyStream(s));
}

static void test_async_pageable_from_waits(void **state)
{
    (void)state;
    run_pageable(true);
}

static void test_async_pageable_to_waits(void **state)
{
    (void)state;
    run_pageable(false);
}

static void test_async_stream_of_other_context(void **state)
{
    (void)state;
    int32_t buf[8] = {0};
    aclrtContext ctx0 = NULL, c1 = NULL, c0b = NULL;
    aclrtStream s1 = NULL, s0b = NULL;
    EXPECT_OK(aclrtGetCurrentContext(&ctx0));
    EXPECT_OK(aclrtCreateContext(&c1, 1));          /* device 1, becomes current */
    EXPECT_OK(aclrtCreateStream(&s1));
    EXPECT_OK(aclrtCreateContext(&c0b, 0));         /* another context on device 0 */
    EXPECT_OK(aclrtCreateStream(&s0b));
    EXPECT_OK(aclrtSetCurrentContext(ctx0));
    aclrtStream streams[] = {s1, s0b};
    for (int i = 0; i < 2; i++) {
        EXPECT_ERR2(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtMemcpyToSymbolAsync", "stream",
                    aclrtMemcpyToSymbolAsync(sym_arr, buf, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE,
                                             streams[i]));
        EXPECT_ERR2(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtMemcpyFromSymbolAsync", "stream",
                    aclrtMemcpyFromSymbolAsync(buf, sizeof buf, sym_arr, 4, 0,
                                               ACL_MEMCPY_DEVICE_TO_HOST, streams[i]));
    }
    /* in their own context, the streams work */
    EXPECT_OK(aclrtSetCurrentContext(c1));
    int32_t v = 61;
    EXPECT_OK(aclrtMemcpyToSymbolAsync(sym_arr, &v, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, s1));
    EXPECT_OK(aclrtSynchronizeStream(s1));
    int32_t first = 0;   /* device 1's instance, through a non-default context */
    EXPECT_OK(aclrtMemcpyFromSymbol(&first, 4, sym_arr, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(first, 61);
    EXPECT_OK(aclrtDestroyStream(s1));
    EXPECT_OK(aclrtSetCurrentContext(c0b));
    EXPECT_OK(aclrtDestroyStream(s0b));
    EXPECT_OK(aclrtSetCurrentContext(ctx0));
    EXPECT_OK(aclrtDestroyContext(c1));
    EXPECT_OK(aclrtDestroyContext(c0b));
    int32_t back[8];
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);   /* device 0 untouched */
}

static void test_async_destroyed_stream(void **state)
{
    (void)state;
    int32_t buf[8] = {0};
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream",
               aclrtMemcpyToSymbolAsync(sym_arr, buf, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "stream",
               aclrtMemcpyFromSymbolAsync(buf, sizeof buf, sym_arr, 4, 0,
                                          ACL_MEMCPY_DEVICE_TO_HOST, s));
    /* a stream created afterwards may reuse the slot: the old handle stays dead */
    aclrtStream s2 = NULL;
    EXPECT_OK(aclrtCreateStream(&s2));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, NULL,
               aclrtMemcpyToSymbolAsync(sym_arr, buf, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_OK(aclrtDestroyStream(s2));
}

/* Errors come from the call itself, even while its stream is blocked. */
static void test_async_errors_not_deferred(void **state)
{
    (void)state;
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    int32_t *pin = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&pin, 64));
    static struct blocker blk;   /* static: outlives a failed assertion */
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL,
               aclrtMemcpyToSymbolAsync(NULL, pin, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL,
               aclrtMemcpyFromSymbolAsync(pin, 2, sym_arr, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL,
               aclrtMemcpyToSymbolAsync(sym_arr, pin, 4, 0, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_SYMBOL, NULL,
               aclrtMemcpyToSymbolAsync(plain_global, pin, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_ERR(ACL_ERROR_FAILURE, NULL,
               aclrtMemcpyFromSymbolAsync(pin, 64, sym_arr, 4, SIZE_MAX,
                                          ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "sym_arr",
               aclrtMemcpyToSymbolAsync(sym_arr, pin, 8, 28, ACL_MEMCPY_HOST_TO_DEVICE, s));
    assert_false(blocker_timed_out(&blk));
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(s));   /* nothing deferred to the synchronize */
    assert_null(aclGetRecentErrMsg());
    assert_false(blocker_timed_out(&blk));
    int32_t back[8];
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFreeHost(pin));
}

/* The host side in page-locked memory must lie inside its allocation:
 * an overrun or a freed buffer is refused, sync and async. */
static void test_pinned_host_side_checked(void **state)
{
    (void)state;
    int32_t *pin = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&pin, 16));   /* 16 bytes: 4 of the 8 elements */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns",
               aclrtMemcpyToSymbol(sym_arr, pin, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns",
               aclrtMemcpyFromSymbolAsync(pin, 32, sym_arr, 32, 0, ACL_MEMCPY_DEVICE_TO_HOST,
                                          NULL));
    EXPECT_OK(aclrtMemcpyFromSymbol(pin, 16, sym_arr, 16, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(pin, arr_init, 16);
    EXPECT_OK(aclrtFreeHost(pin));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "src",
               aclrtMemcpyToSymbolAsync(sym_arr, pin, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    int32_t back[8];
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);   /* nothing was written */
}

/* ---- per-device instances -------------------------------------------------------------- */

static void test_instance_is_device_memory(void **state)
{
    (void)state;
    int32_t *addr = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(sym_arr, (void **)&addr));
    assert_non_null(addr);
    assert_ptr_not_equal(addr, sym_arr);
    void *again = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(sym_arr, &again));
    assert_ptr_equal(again, addr);
    /* D2H with aclrtMemcpy */
    int32_t back[8] = {0};
    EXPECT_OK(aclrtMemcpy(back, sizeof back, addr, 32, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(back, arr_init, sizeof back);
    /* H2D with aclrtMemcpy at an offset, seen by FromSymbol */
    int32_t v[2] = {-40, -50};
    EXPECT_OK(aclrtMemcpy(addr + 3, 8, v, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    read_arr(back);
    int32_t want[8] = {1, 2, 3, -40, -50, 6, 7, 8};
    assert_memory_equal(back, want, sizeof want);
    /* aclrtMemset over the whole instance */
    EXPECT_OK(aclrtMemset(addr, 32, 0, 32));
    read_arr(back);
    for (int i = 0; i < 8; i++)
        assert_int_equal(back[i], 0);
    /* ToSymbol then D2D into an aclrtMalloc buffer, then back */
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, arr_init, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    void *dev = NULL;
    EXPECT_OK(aclrtMalloc(&dev, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpy(dev, 32, addr, 32, ACL_MEMCPY_DEVICE_TO_DEVICE));
    memset(back, 0, sizeof back);
    EXPECT_OK(aclrtMemcpy(back, 32, dev, 32, ACL_MEMCPY_DEFAULT));
    assert_memory_equal(back, arr_init, sizeof back);
    /* the range check knows the instance's size */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL,
               aclrtMemcpy(back, 64, addr, 36, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_OK(aclrtFree(dev));
    /* as a kernel argument */
    aclrtFuncHandle f = NULL;
    EXPECT_OK(aclrtGetFuncBySymbol((const void *)(uintptr_t)&sym_k_fill, &f));
    int32_t base = 20;
    void *args[] = {&addr, &base};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 8, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    read_arr(back);
    for (int i = 0; i < 8; i++)
        assert_int_equal(back[i], 20 + i);
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, arr_init, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    /* not an aclrtMalloc allocation: aclrtFree refuses it */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL, aclrtFree(addr));
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
}

static void test_instance_alignment(void **state)
{
    (void)state;
    assert_int_equal(_Alignof(aligned128_t), 128);
    void *a = NULL;
    /* a 64-byte instance first, so that the next free address is not 128-aligned */
    EXPECT_OK(aclrtGetSymbolAddress(&sym_scalar, &a));
    assert_int_equal((uintptr_t)a % 64, 0);
    EXPECT_OK(aclrtGetSymbolAddress(sym_aligned, &a));
    assert_int_equal((uintptr_t)a % 128, 0);
    void *b = NULL;
    EXPECT_OK(aclrtMalloc(&b, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtGetSymbolAddress(sym_zero, &a));
    assert_int_equal((uintptr_t)a % 64, 0);
    EXPECT_OK(aclrtGetSymbolAddress(sym_arr, &a));
    assert_int_equal((uintptr_t)a % 64, 0);
    /* and on the other device, in another order */
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtGetSymbolAddress(sym_arr, &a));
    assert_int_equal((uintptr_t)a % 64, 0);
    EXPECT_OK(aclrtGetSymbolAddress(sym_aligned, &a));
    assert_int_equal((uintptr_t)a % 128, 0);
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtFree(b));
}

static void test_instance_counted_in_memory(void **state)
{
    (void)state;
    size_t free0 = 0, total = 0, free1 = 0, total1 = 0;
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total));
    assert_int_equal(total, (size_t)64 << 20);
    void *a = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(sym_big, &a));
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total1));
    assert_int_equal(total1, total);
    assert_true(free1 <= free0);
    assert_true(total - free1 >= sizeof sym_big);
    /* device 1 has not used it yet, or counts it too */
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtGetSymbolAddress(sym_big, &a));
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total1));
    assert_true(total1 - free1 >= sizeof sym_big);
    EXPECT_OK(aclrtSetDevice(0));
}

static void test_instance_initialised(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        EXPECT_OK(aclrtSetDevice(d));
        int32_t back[8] = {0}, s = 0;
        read_arr(back);
        assert_memory_equal(back, arr_init, sizeof back);
        EXPECT_OK(aclrtMemcpyFromSymbol(&s, 4, &sym_scalar, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
        assert_int_equal(s, 42);
        uint8_t z[100];
        memset(z, 0xee, sizeof z);
        EXPECT_OK(aclrtMemcpyFromSymbol(z, sizeof z, sym_zero, sizeof z, 0,
                                        ACL_MEMCPY_DEVICE_TO_HOST));
        for (int i = 0; i < 100; i++)
            assert_int_equal(z[i], 0);
        /* read through the device pointer too */
        void *addr = NULL;
        EXPECT_OK(aclrtGetSymbolAddress(&sym_scalar, &addr));
        s = 0;
        EXPECT_OK(aclrtMemcpy(&s, 4, addr, 4, ACL_MEMCPY_DEVICE_TO_HOST));
        assert_int_equal(s, 42);
    }
    EXPECT_OK(aclrtSetDevice(0));
}

/* The instance starts from the initializer, not from whatever the host object
 * holds when the device first uses the variable (ours: the host object is a
 * separate thing, as in CANN where the variable lives in the device image). */
static void test_instance_from_initializer_not_host_object(void **state)
{
    (void)state;
    sym_hostmod = 99;                 /* before any device use in this init */
    int32_t v = 0;
    aclError e = aclrtMemcpyFromSymbol(&v, 4, &sym_hostmod, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST);
    sym_hostmod = 11;
    EXPECT_OK(e);
    assert_int_equal(v, 11);
}

static void test_devices_isolated(void **state)
{
    (void)state;
    int32_t w0[8], w1[8], back[8];
    for (int i = 0; i < 8; i++) {
        w0[i] = 100 + i;
        w1[i] = 200 + i;
    }
    void *a0 = NULL, *a1 = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(sym_arr, &a0));
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, w0, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtSetDevice(1));
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);   /* device 1 never saw w0 */
    EXPECT_OK(aclrtGetSymbolAddress(sym_arr, &a1));
    assert_ptr_not_equal(a0, a1);
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, w1, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemset(a1, 32, 0, 4));                /* through the device pointer */
    EXPECT_OK(aclrtSetDevice(0));
    read_arr(back);
    assert_memory_equal(back, w0, sizeof back);
    EXPECT_OK(aclrtSetDevice(1));
    read_arr(back);
    assert_int_equal(back[0], 0);
    assert_memory_equal(back + 1, w1 + 1, 28);
    EXPECT_OK(aclrtSetDevice(0));
    /* the host object is untouched by all of it */
    assert_memory_equal(sym_arr, arr_init, sizeof arr_init);
}

static void test_reset_discards_instances(void **state)
{
    (void)state;
    int32_t w[8] = {9, 9, 9, 9, 9, 9, 9, 9}, back[8];
    int32_t s = 7;
    aclrtContext ctx0 = NULL;
    EXPECT_OK(aclrtGetCurrentContext(&ctx0));
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, w, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpyToSymbol(&sym_scalar, &s, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    /* not the last reference: the instance survives */
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtResetDevice(0));
    read_arr(back);
    assert_memory_equal(back, w, sizeof w);
    /* device 1 is unaffected by device 0's reset */
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, w, 16, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtSetCurrentContext(ctx0));   /* back to device 0 without a new reference */
    /* the last reference: gone, next use starts from the initializer */
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclrtSetDevice(0));
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
    s = 0;
    EXPECT_OK(aclrtMemcpyFromSymbol(&s, 4, &sym_scalar, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(s, 42);
    EXPECT_OK(aclrtSetDevice(1));
    read_arr(back);
    assert_memory_equal(back, w, 16);
    assert_memory_equal(back + 4, arr_init + 4, 16);
    /* aclrtResetDeviceForce discards as well */
    EXPECT_OK(aclrtResetDeviceForce(1));
    EXPECT_OK(aclrtSetDevice(1));
    read_arr(back);
    assert_memory_equal(back, arr_init, sizeof back);
    EXPECT_OK(aclrtSetDevice(0));
}

static void test_host_object_never_modified(void **state)
{
    (void)state;
    int32_t w[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    int32_t s = -3;
    void *addr = NULL;
    aclrtFuncHandle f = NULL;
    void *out = NULL;
    EXPECT_OK(aclrtMalloc(&out, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtGetFuncBySymbol((const void *)(uintptr_t)&sym_k_step, &f));
    for (int d = 0; d < 2; d++) {
        EXPECT_OK(aclrtSetDevice(d));
        EXPECT_OK(aclrtMemcpyToSymbol(sym_arr, w, 32, 0, ACL_MEMCPY_HOST_TO_DEVICE));
        EXPECT_OK(aclrtMemcpyToSymbolAsync(&sym_scalar, &s, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
        EXPECT_OK(aclrtGetSymbolAddress(sym_zero, &addr));
        EXPECT_OK(aclrtMemset(addr, 100, 0x7f, 100));
        EXPECT_OK(aclrtSynchronizeStream(NULL));
    }
    EXPECT_OK(aclrtSetDevice(0));
    int32_t add = 5;
    void *args[] = {&out, &add};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, 8, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    assert_memory_equal(sym_arr, arr_init, sizeof arr_init);
    assert_int_equal(sym_scalar, 42);
    for (int i = 0; i < 100; i++)
        assert_int_equal(sym_zero[i], 0);
    int32_t back[8];
    read_arr(back);
    for (int i = 0; i < 8; i++)
        assert_int_equal(back[i], 4);
    EXPECT_OK(aclrtFree(out));
}

/* A device without room for an instance: 207001 naming the variable; nothing
 * is left half-made, and the next use after freeing memory works. */
static void test_instance_out_of_device_memory(void **state)
{
    (void)state;
    void *fill = NULL, *a = NULL;
    EXPECT_OK(aclrtMalloc(&fill, ((size_t)64 << 20) - ((size_t)512 << 10),
                          ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR2(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtGetSymbolAddress", "sym_big",
                aclrtGetSymbolAddress(sym_big, &a));
    char c = 0;
    EXPECT_ERR2(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMemcpyFromSymbol", "sym_big",
                aclrtMemcpyFromSymbol(&c, 1, sym_big, 1, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    /* small variables still fit */
    int32_t s = 0;
    EXPECT_OK(aclrtMemcpyFromSymbol(&s, 4, &sym_scalar, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(s, 42);
    EXPECT_OK(aclrtFree(fill));
    EXPECT_OK(aclrtGetSymbolAddress(sym_big, &a));
    assert_non_null(a);
    c = 1;
    EXPECT_OK(aclrtMemcpyFromSymbol(&c, 1, sym_big, 1, (1 << 20) - 1, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(c, 0);
}

struct first_use {
    aclrtContext ctx;
    pthread_barrier_t *barrier;
    int index;
    void *addr;
    aclError rc_addr, rc_copy;
};

static void *first_use_thread(void *arg)
{
    struct first_use *u = arg;
    aclError e = aclrtSetCurrentContext(u->ctx);
    pthread_barrier_wait(u->barrier);
    if (e != ACL_SUCCESS) {
        u->rc_addr = u->rc_copy = e;
        return NULL;
    }
    u->rc_addr = aclrtGetSymbolAddress(sym_zero, &u->addr);
    uint8_t bytes[25];
    memset(bytes, u->index + 1, sizeof bytes);
    u->rc_copy = aclrtMemcpyToSymbol(sym_zero, bytes, sizeof bytes, (size_t)u->index * 25,
                                     ACL_MEMCPY_HOST_TO_DEVICE);
    return NULL;
}

/* Four threads using a variable for the first time on a device at once get
 * one instance. */
static void test_instance_concurrent_first_use(void **state)
{
    (void)state;
    aclrtContext ctx = NULL;
    EXPECT_OK(aclrtGetCurrentContext(&ctx));
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 4);
    struct first_use u[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        u[i] = (struct first_use){.ctx = ctx, .barrier = &barrier, .index = i};
        assert_int_equal(pthread_create(&t[i], NULL, first_use_thread, &u[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&barrier);
    void *addr = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(sym_zero, &addr));
    for (int i = 0; i < 4; i++) {
        assert_int_equal(u[i].rc_addr, ACL_SUCCESS);
        assert_int_equal(u[i].rc_copy, ACL_SUCCESS);
        assert_ptr_equal(u[i].addr, addr);
    }
    uint8_t back[100];
    EXPECT_OK(aclrtMemcpyFromSymbol(back, sizeof back, sym_zero, sizeof back, 0,
                                    ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 100; i++)
        assert_int_equal(back[i], i / 25 + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_device0, teardown_device0)
        T(test_count_zero_succeeds_first),
        T(test_null_arguments),
        T(test_from_count_larger_than_dstmax),
        T(test_kind_not_allowed),
        T(test_no_current_context),
        T(test_context_gone_after_reset),
        T(test_unknown_symbol),
        T(test_offset_count_overflow),
        T(test_offset_count_exceeds_size),
        T(test_exact_fit),
        T(test_default_kind),
        T(test_check_order),
        cmocka_unit_test_teardown(test_soc_unsupported, teardown_device0_any),
        cmocka_unit_test_teardown(test_soc_supported, teardown_device0_any),
        T(test_host_side_must_be_host_memory),
        T(test_host_side_stale_device_pointer),
        T(test_async_in_stream_order),
        T(test_async_pinned_returns_when_queued),
        T(test_async_pageable_from_waits),
        T(test_async_pageable_to_waits),
        T(test_async_stream_of_other_context),
        T(test_async_destroyed_stream),
        T(test_async_errors_not_deferred),
    T(test_pinned_host_side_checked),
        T(test_instance_is_device_memory),
        T(test_instance_alignment),
        T(test_instance_counted_in_memory),
        T(test_instance_initialised),
        T(test_instance_from_initializer_not_host_object),
        T(test_devices_isolated),
        T(test_reset_discards_instances),
        T(test_host_object_never_modified),
        T(test_instance_out_of_device_memory),
        T(test_instance_concurrent_first_use),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
