/*
 * Device variables of every shape a program declares: scalars, arrays (1-D
 * and 2-D), structs, arrays of structs, function pointers through a typedef,
 * file-static variables (ACLSIM_DEVICE_VAR_STATIC), variables defined in
 * another file (ACLSIM_DEVICE_VAR_EXTERN, and a plain `extern` declaration for
 * the host API), and ACLSIM_DEV on each of them inside kernels.
 *
 * The variables declared extern here are defined in
 * tests/helpers/hsym-extern-vars.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

/* ---- the variables ----------------------------------------------------------- */

ACLSIM_DEVICE_VAR(int, counter, ) = 5;
ACLSIM_DEVICE_VAR(float, w, [16]) = {1, 2};
ACLSIM_DEVICE_VAR(int16_t, grid, [4][3]) = {{1, 2, 3}, {4, 5, 6}};
ACLSIM_DEVICE_VAR(uint64_t, big_scalar, ) = UINT64_C(0x0123456789abcdef);
ACLSIM_DEVICE_VAR(char, text, [12]) = "hello";

typedef struct {
    int32_t a;
    double b;
    char c[5];
} rec_t;
ACLSIM_DEVICE_VAR(rec_t, rec, ) = {.a = 1, .b = 2.5, .c = "hey"};

typedef struct {
    int32_t x, y;
} pt_t;
ACLSIM_DEVICE_VAR(pt_t, pts, [4]) = {{1, 2}, {3, 4}};

typedef int32_t (*binop_t)(int32_t, int32_t);
static int32_t op_add(int32_t a, int32_t b) { return a + b; }
static int32_t op_mul(int32_t a, int32_t b) { return a * b; }
static int32_t op_sub(int32_t a, int32_t b) { return a - b; }
ACLSIM_DEVICE_VAR(binop_t, op, ) = op_add;
ACLSIM_DEVICE_VAR(binop_t, ops, [3]) = {op_add, op_mul};

ACLSIM_DEVICE_VAR_STATIC(int32_t, hidden, [4]) = {9, 8, 7, 6};
ACLSIM_DEVICE_VAR_STATIC(double, hidden_scalar, );                /* zero */
/* Same name as a file-static variable of hsym-extern-vars.c. */
ACLSIM_DEVICE_VAR_STATIC(int32_t, hsym_same_name, ) = 1001;

ACLSIM_DEVICE_VAR_EXTERN(int32_t, hsym_ext_counter, );
ACLSIM_DEVICE_VAR_EXTERN(float, hsym_ext_table, [8]);
extern double hsym_plain_ext[4];          /* plain extern: host API only */

int hsym_ext_counter_line(void);
const void *hsym_same_name_in_helper(void);
int32_t hsym_same_name_dev_read(void);

/* ---- kernels ------------------------------------------------------------------- */

/* One block: counter += by. */
void k_counter(int32_t by) { ACLSIM_DEV(counter) += by; }
ACLSIM_KERNEL_REGISTER(k_counter, int32_t);

/* Block i: w[i] *= k; grid[i][j] += i for i < 4. */
void k_arrays(float k)
{
    uint32_t i = aclsimGetBlockIdx();
    ACLSIM_DEV(w)[i] *= k;
    if (i < 4)
        for (int j = 0; j < 3; j++)
            ACLSIM_DEV(grid)[i][j] = (int16_t)(ACLSIM_DEV(grid)[i][j] + (int16_t)i);
}
ACLSIM_KERNEL_REGISTER(k_arrays, float);

/* rec.b *= 2; rec.c[0] = 'H'; block i: pts[i].x += i, pts[i].y = -y. */
void k_structs(int32_t *out)
{
    uint32_t i = aclsimGetBlockIdx();
    if (i == 0) {
        ACLSIM_DEV(rec).b *= 2;
        ACLSIM_DEV(rec).c[0] = 'H';
        out[4] = ACLSIM_DEV(rec).a;
    }
    pt_t *p = &ACLSIM_DEV(pts)[i];
    p->x += (int32_t)i;
    p->y = -p->y;
    out[i] = p->x;
}
ACLSIM_KERNEL_REGISTER(k_structs, int32_t *);

/* out[0] = op(a, b); out[1 + j] = ops[j](a, b) for the non-NULL ones. */
void k_funcptr(int32_t *out, int32_t a, int32_t b)
{
    out[0] = ACLSIM_DEV(op)(a, b);
    for (int j = 0; j < 3; j++)
        out[1 + j] = ACLSIM_DEV(ops)[j] ? ACLSIM_DEV(ops)[j](a, b) : -12345;
}
ACLSIM_KERNEL_REGISTER(k_funcptr, int32_t *, int32_t, int32_t);

/* Reads and writes the static and extern variables. */
void k_linkage(int32_t *out, double *dout)
{
    uint32_t i = aclsimGetBlockIdx();   /* 4 blocks */
    out[i] = ACLSIM_DEV(hidden)[i];
    ACLSIM_DEV(hidden)[i] += 100;
    ACLSIM_DEV(hsym_ext_table)[i] += 10.0f;
    if (i == 0) {
        out[4] = ACLSIM_DEV(hsym_ext_counter);
        ACLSIM_DEV(hsym_ext_counter) *= 2;
        out[5] = ACLSIM_DEV(counter);
        out[6] = ACLSIM_DEV(hsym_same_name);
        out[7] = hsym_same_name_dev_read();
        ACLSIM_DEV(hsym_same_name) = 3003;
        dout[0] = ACLSIM_DEV(hidden_scalar);
        ACLSIM_DEV(hidden_scalar) = 0.25;
    }
}
ACLSIM_KERNEL_REGISTER(k_linkage, int32_t *, double *);

/* ---- helpers --------------------------------------------------------------------- */

static void launch(aclrtFuncHandle f, uint32_t blocks, void **args)
{
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, blocks, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
}

static void from_symbol(void *dst, const void *symbol, size_t n)
{
    EXPECT_OK(aclrtMemcpyFromSymbol(dst, n, symbol, n, 0, ACL_MEMCPY_DEVICE_TO_HOST));
}

static void to_symbol(const void *symbol, const void *src, size_t n)
{
    EXPECT_OK(aclrtMemcpyToSymbol(symbol, src, n, 0, ACL_MEMCPY_HOST_TO_DEVICE));
}

static size_t symbol_size(const void *symbol)
{
    size_t n = 0;
    EXPECT_OK(aclrtGetSymbolSize(symbol, &n));
    return n;
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_scalar(void **state)
{
    (void)state;
    assert_int_equal(symbol_size(&counter), sizeof(int));
    int v = 0;
    from_symbol(&v, &counter, sizeof v);
    assert_int_equal(v, 5);
    int32_t by = 1;
    void *args[] = {&by};
    launch(FUNC(k_counter), 1, args);
    from_symbol(&v, &counter, sizeof v);
    assert_int_equal(v, 6);
    v = 10;
    to_symbol(&counter, &v, sizeof v);
    by = 3;
    launch(FUNC(k_counter), 1, args);
    from_symbol(&v, &counter, sizeof v);
    assert_int_equal(v, 13);
    assert_int_equal(counter, 5);   /* the host object */

    uint64_t u = 0;
    assert_int_equal(symbol_size(&big_scalar), 8);
    from_symbol(&u, &big_scalar, sizeof u);
    assert_true(u == UINT64_C(0x0123456789abcdef));
    /* a partial copy at an offset inside a scalar */
    uint8_t byte = 0xff;
    EXPECT_OK(aclrtMemcpyToSymbol(&big_scalar, &byte, 1, 7, ACL_MEMCPY_HOST_TO_DEVICE));
    from_symbol(&u, &big_scalar, sizeof u);
    uint64_t want = UINT64_C(0x0123456789abcdef);
    ((uint8_t *)&want)[7] = 0xff;
    assert_true(u == want);
    /* the scalar is 4 bytes: 8 do not fit */
    int64_t too_big = 0;
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "counter", "test-symbol-types.c",
                aclrtMemcpyToSymbol(&counter, &too_big, sizeof too_big, 0,
                                    ACL_MEMCPY_HOST_TO_DEVICE));
}

static void test_arrays(void **state)
{
    (void)state;
    assert_int_equal(symbol_size(w), sizeof(float) * 16);
    assert_int_equal(symbol_size(grid), sizeof(int16_t) * 12);
    assert_int_equal(symbol_size(text), 12);
    float wb[16];
    from_symbol(wb, w, sizeof wb);
    assert_true(wb[0] == 1.0f && wb[1] == 2.0f);
    for (int i = 2; i < 16; i++)
        assert_true(wb[i] == 0.0f);
    for (int i = 0; i < 16; i++)
        wb[i] = (float)i;
    to_symbol(w, wb, sizeof wb);
    float k = 3.0f;
    void *args[] = {&k};
    launch(FUNC(k_arrays), 16, args);
    from_symbol(wb, w, sizeof wb);
    for (int i = 0; i < 16; i++)
        assert_true(wb[i] == 3.0f * (float)i);
    int16_t g[4][3];
    from_symbol(g, grid, sizeof g);
    int16_t want[4][3] = {{1, 2, 3}, {5, 6, 7}, {2, 2, 2}, {3, 3, 3}};
    assert_memory_equal(g, want, sizeof g);
    /* one row, addressed by offset */
    int16_t row[3] = {-1, -2, -3};
    EXPECT_OK(aclrtMemcpyToSymbol(grid, row, sizeof row, 3 * sizeof row,
                                  ACL_MEMCPY_HOST_TO_DEVICE));
    from_symbol(g, grid, sizeof g);
    assert_memory_equal(g[3], row, sizeof row);
    assert_memory_equal(g[0], want[0], sizeof row);
    /* a row is an interior address, not a symbol */
    void *p = NULL;
    EXPECT_ERR2(ACL_ERROR_RT_INVALID_SYMBOL, "aclrtGetSymbolAddress", NULL,
                aclrtGetSymbolAddress(grid[1], &p));
    /* a char array with a string initializer */
    char t[12];
    from_symbol(t, text, sizeof t);
    assert_string_equal(t, "hello");
    for (int i = 5; i < 12; i++)
        assert_int_equal(t[i], 0);
    /* the host objects are untouched */
    assert_true(w[0] == 1.0f && w[1] == 2.0f && w[5] == 0.0f);
    assert_int_equal(grid[3][0], 0);
}

static void test_structs(void **state)
{
    (void)state;
    assert_int_equal(symbol_size(&rec), sizeof(rec_t));
    assert_int_equal(symbol_size(pts), 4 * sizeof(pt_t));
    rec_t r;
    memset(&r, 0, sizeof r);
    from_symbol(&r, &rec, sizeof r);
    assert_int_equal(r.a, 1);
    assert_true(r.b == 2.5);
    assert_string_equal(r.c, "hey");
    /* one field, by offsetof */
    double b = 4.0;
    EXPECT_OK(aclrtMemcpyToSymbol(&rec, &b, sizeof b, offsetof(rec_t, b),
                                  ACL_MEMCPY_HOST_TO_DEVICE));
    int32_t *out = NULL;
    EXPECT_OK(aclrtMalloc((void **)&out, 8 * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    void *args[] = {&out};
    launch(FUNC(k_structs), 4, args);
    from_symbol(&r, &rec, sizeof r);
    assert_int_equal(r.a, 1);
    assert_true(r.b == 8.0);
    assert_string_equal(r.c, "Hey");
    double got_b = 0;
    EXPECT_OK(aclrtMemcpyFromSymbol(&got_b, sizeof got_b, &rec, sizeof got_b,
                                    offsetof(rec_t, b), ACL_MEMCPY_DEVICE_TO_HOST));
    assert_true(got_b == 8.0);
    pt_t p[4];
    from_symbol(p, pts, sizeof p);
    const pt_t want[4] = {{1, -2}, {4, -4}, {2, 0}, {3, 0}};
    assert_memory_equal(p, want, sizeof p);
    int32_t h[5];
    EXPECT_OK(aclrtMemcpy(h, sizeof h, out, sizeof h, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(h[0], 1);
    assert_int_equal(h[1], 4);
    assert_int_equal(h[2], 2);
    assert_int_equal(h[3], 3);
    assert_int_equal(h[4], 1);
    /* one element of the array of structs, by offset */
    pt_t one = {70, 80};
    EXPECT_OK(aclrtMemcpyToSymbol(pts, &one, sizeof one, 2 * sizeof(pt_t),
                                  ACL_MEMCPY_HOST_TO_DEVICE));
    from_symbol(p, pts, sizeof p);
    assert_int_equal(p[2].x, 70);
    assert_int_equal(p[2].y, 80);
    assert_int_equal(p[3].x, 3);
    /* host objects untouched */
    assert_true(rec.b == 2.5);
    assert_int_equal(pts[1].x, 3);
    EXPECT_OK(aclrtFree(out));
}

static void test_function_pointers(void **state)
{
    (void)state;
    assert_int_equal(symbol_size(&op), sizeof(binop_t));
    assert_int_equal(symbol_size(ops), 3 * sizeof(binop_t));
    int32_t *out = NULL;
    EXPECT_OK(aclrtMalloc((void **)&out, 4 * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    int32_t a = 7, b = 5, h[4];
    void *args[] = {&out, &a, &b};
    launch(FUNC(k_funcptr), 1, args);
    EXPECT_OK(aclrtMemcpy(h, sizeof h, out, sizeof h, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(h[0], 12);
    assert_int_equal(h[1], 12);
    assert_int_equal(h[2], 35);
    assert_int_equal(h[3], -12345);
    /* the device's pointer is data: write new ones from the host */
    binop_t m = op_mul, tbl[3] = {op_sub, op_add, op_mul};
    to_symbol(&op, &m, sizeof m);
    to_symbol(ops, tbl, sizeof tbl);
    binop_t back = NULL;
    from_symbol(&back, &op, sizeof back);
    assert_true(back == op_mul);
    launch(FUNC(k_funcptr), 1, args);
    EXPECT_OK(aclrtMemcpy(h, sizeof h, out, sizeof h, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(h[0], 35);
    assert_int_equal(h[1], 2);
    assert_int_equal(h[2], 12);
    assert_int_equal(h[3], 35);
    /* the host object still points at op_add; device 1 still has the initializer */
    assert_true(op == op_add);
    EXPECT_OK(aclrtSetDevice(1));
    int32_t *out1 = NULL;
    EXPECT_OK(aclrtMalloc((void **)&out1, 4 * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    void *args1[] = {&out1, &a, &b};
    launch(FUNC(k_funcptr), 1, args1);
    EXPECT_OK(aclrtMemcpy(h, sizeof h, out1, sizeof h, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(h[0], 12);
    assert_int_equal(h[2], 35);
    EXPECT_OK(aclrtFree(out1));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtFree(out));
}

static void test_static_variables(void **state)
{
    (void)state;
    assert_int_equal(symbol_size(hidden), 4 * sizeof(int32_t));
    assert_int_equal(symbol_size(&hidden_scalar), sizeof(double));
    int32_t h[4];
    from_symbol(h, hidden, sizeof h);
    int32_t want[4] = {9, 8, 7, 6};
    assert_memory_equal(h, want, sizeof h);
    double d = -1;
    from_symbol(&d, &hidden_scalar, sizeof d);
    assert_true(d == 0.0);
    /* two file-static variables with the same name are two variables */
    const void *other = hsym_same_name_in_helper();
    assert_ptr_not_equal(other, &hsym_same_name);
    int32_t mine = 0, theirs = 0;
    from_symbol(&mine, &hsym_same_name, 4);
    from_symbol(&theirs, other, 4);
    assert_int_equal(mine, 1001);
    assert_int_equal(theirs, 2002);
    void *a1 = NULL, *a2 = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(&hsym_same_name, &a1));
    EXPECT_OK(aclrtGetSymbolAddress(other, &a2));
    assert_ptr_not_equal(a1, a2);
    int32_t v = 5005;
    to_symbol(&hsym_same_name, &v, 4);
    from_symbol(&theirs, other, 4);
    assert_int_equal(theirs, 2002);
}

static void test_extern_variables(void **state)
{
    (void)state;
    assert_int_equal(symbol_size(&hsym_ext_counter), sizeof(int32_t));
    assert_int_equal(symbol_size(hsym_ext_table), 8 * sizeof(float));
    int32_t c = 0;
    from_symbol(&c, &hsym_ext_counter, 4);
    assert_int_equal(c, 77);
    float t[8];
    from_symbol(t, hsym_ext_table, sizeof t);
    for (int i = 0; i < 8; i++)
        assert_true(t[i] == 0.5f + (float)i);
    c = 123;
    to_symbol(&hsym_ext_counter, &c, 4);
    c = 0;
    from_symbol(&c, &hsym_ext_counter, 4);
    assert_int_equal(c, 123);
    /* messages name the variable and the file:line of its definition */
    char where[64];
    snprintf(where, sizeof where, "hsym-extern-vars.c:%d", hsym_ext_counter_line());
    int64_t too_big = 0;
    EXPECT_ERR2(ACL_ERROR_INVALID_PARAM, "hsym_ext_counter", where,
                aclrtMemcpyToSymbol(&hsym_ext_counter, &too_big, sizeof too_big, 0,
                                    ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR2(ACL_ERROR_FAILURE, "hsym_ext_counter", where,
                aclrtMemcpyFromSymbol(&c, 4, &hsym_ext_counter, 4, SIZE_MAX,
                                      ACL_MEMCPY_DEVICE_TO_HOST));
    /* an interior address of an extern array is not a symbol */
    EXPECT_ERR2(ACL_ERROR_RT_INVALID_SYMBOL, NULL, NULL,
                aclrtMemcpyToSymbol(&hsym_ext_table[1], t, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE));
}

static void test_plain_extern_declaration(void **state)
{
    (void)state;
    assert_int_equal(symbol_size(hsym_plain_ext), 4 * sizeof(double));
    double d[4];
    from_symbol(d, hsym_plain_ext, sizeof d);
    assert_true(d[0] == 1.25 && d[1] == 2.5 && d[2] == 3.75 && d[3] == 5.0);
    double v = -8.5;
    EXPECT_OK(aclrtMemcpyToSymbolAsync(hsym_plain_ext, &v, sizeof v, 3 * sizeof v,
                                       ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    EXPECT_OK(aclrtMemcpyFromSymbolAsync(d, sizeof d, hsym_plain_ext, sizeof d, 0,
                                         ACL_MEMCPY_DEVICE_TO_HOST, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    assert_true(d[3] == -8.5 && d[0] == 1.25);
    void *addr = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(hsym_plain_ext, &addr));
    double first = 0;
    EXPECT_OK(aclrtMemcpy(&first, sizeof first, addr, sizeof first, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_true(first == 1.25);
    assert_true(hsym_plain_ext[3] == 5.0);
}

static void test_dev_in_kernels_all_linkages(void **state)
{
    (void)state;
    int32_t *out = NULL;
    double *dout = NULL;
    EXPECT_OK(aclrtMalloc((void **)&out, 8 * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&dout, sizeof(double), ACL_MEM_MALLOC_HUGE_FIRST));
    void *args[] = {&out, &dout};
    for (int d = 0; d < 2; d++) {
        EXPECT_OK(aclrtSetDevice(d));
        int32_t *o = out;
        double *dd = dout;
        if (d == 1) {
            EXPECT_OK(aclrtMalloc((void **)&o, 8 * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
            EXPECT_OK(aclrtMalloc((void **)&dd, sizeof(double), ACL_MEM_MALLOC_HUGE_FIRST));
            args[0] = &o;
            args[1] = &dd;
        }
        /* run twice: the second run sees the first run's writes */
        for (int run = 0; run < 2; run++) {
            launch(FUNC(k_linkage), 4, args);
            int32_t h[8];
            double hd = -1;
            EXPECT_OK(aclrtMemcpy(h, sizeof h, o, sizeof h, ACL_MEMCPY_DEVICE_TO_HOST));
            EXPECT_OK(aclrtMemcpy(&hd, sizeof hd, dd, sizeof hd, ACL_MEMCPY_DEVICE_TO_HOST));
            int32_t base[4] = {9, 8, 7, 6};
            for (int i = 0; i < 4; i++)
                assert_int_equal(h[i], base[i] + 100 * run);
            assert_int_equal(h[4], run ? 154 : 77);
            assert_int_equal(h[5], 5);
            assert_int_equal(h[6], run ? 3003 : 1001);
            assert_int_equal(h[7], 2002);   /* the helper's variable of the same name */
            assert_true(hd == (run ? 0.25 : 0.0));
        }
        /* the host API sees what the kernels wrote */
        float t[8];
        from_symbol(t, hsym_ext_table, sizeof t);
        for (int i = 0; i < 8; i++)
            assert_true(t[i] == 0.5f + (float)i + (i < 4 ? 20.0f : 0.0f));
        int32_t hh[4];
        from_symbol(hh, hidden, sizeof hh);
        assert_int_equal(hh[0], 209);
        if (d == 1) {
            EXPECT_OK(aclrtFree(o));
            EXPECT_OK(aclrtFree(dd));
        }
    }
    /* host objects untouched */
    assert_int_equal(hsym_ext_counter, 77);
    assert_int_equal(hidden[0], 9);
    assert_int_equal(hsym_same_name, 1001);
    assert_true(hsym_ext_table[0] == 0.5f);
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtFree(out));
    EXPECT_OK(aclrtFree(dout));
}

/* Outside a kernel, ACLSIM_DEV names the host object, for every linkage. */
static void test_dev_outside_kernel(void **state)
{
    (void)state;
    assert_ptr_equal(&ACLSIM_DEV(counter), &counter);
    assert_ptr_equal(&ACLSIM_DEV(w), &w);
    assert_ptr_equal(&ACLSIM_DEV(hidden), &hidden);
    assert_ptr_equal(&ACLSIM_DEV(hsym_ext_counter), &hsym_ext_counter);
    assert_ptr_equal(&ACLSIM_DEV(hsym_ext_table), &hsym_ext_table);
    assert_int_equal(ACLSIM_DEV(counter), 5);
    assert_true(ACLSIM_DEV(op) == op_add);
    assert_int_equal(ACLSIM_DEV(pts)[1].y, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_device0, teardown_device0)
        T(test_scalar),
        T(test_arrays),
        T(test_structs),
        T(test_function_pointers),
        T(test_static_variables),
        T(test_extern_variables),
        T(test_plain_extern_declaration),
        T(test_dev_in_kernels_all_linkages),
        T(test_dev_outside_kernel),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
