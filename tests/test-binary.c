/*
 * Kernel binaries: aclrtBinaryLoadFromFile / aclrtBinaryGetFunction /
 * aclrtBinaryGetGlobal / aclrtBinaryUnLoad on libaclsim_test_kernels.so
 * (tests/kernels/hbin-kernels.c: hbin_counter = 7, hbin_table[64] = {1, 2, 3},
 * hbin_origin = {3, -4, 0.5} and the kernels hbin_bump, hbin_table_scale,
 * hbin_read_origin, hbin_report_addresses, hbin_nop).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

#ifndef ACLSIM_TEST_KERNELS_PATH
#error "ACLSIM_TEST_KERNELS_PATH is not defined (no tests/kernels/*.c?)"
#endif
static const char kPath[] = ACLSIM_TEST_KERNELS_PATH;

/* Same layout as in hbin-kernels.c. */
typedef struct hbin_point {
    int32_t x;
    int64_t y;
    double z;
} hbin_point;

/* A device variable of the main program, used while binaries come and go. */
ACLSIM_DEVICE_VAR(int64_t, hbin_main_ticker, [32]);

/* Asserts that got == want and that the recent error message mentions every
 * non-NULL needle. */
static void expect_error(aclError got, aclError want, const char *needle1, const char *needle2)
{
    assert_int_equal(got, want);
    const char *msg = aclGetRecentErrMsg();
    if (!msg)
        fail_msg("error %d: aclGetRecentErrMsg() is NULL", (int)want);
    if (needle1 && !strstr(msg, needle1))
        fail_msg("error %d: message \"%s\" does not mention \"%s\"", (int)want, msg, needle1);
    if (needle2 && !strstr(msg, needle2))
        fail_msg("error %d: message \"%s\" does not mention \"%s\"", (int)want, msg, needle2);
}

/* true while the kernels shared object is mapped in this process. */
static bool kernels_mapped(void)
{
    void *dl = dlopen(kPath, RTLD_NOW | RTLD_NOLOAD);
    if (dl)
        dlclose(dl);
    return dl != NULL;
}

static int32_t read_i32(const void *dev)
{
    int32_t v = -1;
    ASSERT_OK(aclrtMemcpy(&v, sizeof v, dev, sizeof v, ACL_MEMCPY_DEVICE_TO_HOST));
    return v;
}

static void launch_bump(aclrtBinHandle h, int32_t delta)
{
    aclrtFuncHandle f = NULL;
    ASSERT_OK(aclrtBinaryGetFunction(h, "hbin_bump", &f));
    void *args[] = {&delta};
    ASSERT_OK(aclrtLaunchKernelWithArgsArray(f, 3, NULL, NULL, args));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
}

static int setup_env(const char *soc)
{
    if (soc)
        setenv("ACLSIM_SOC_VERSION", soc, 1);
    if (init_devices("2", "64M") != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return -1;
    return 0;
}

static int setup(void **state)
{
    (void)state;
    return setup_env(NULL);
}

static int setup_unsupported_soc(void **state)
{
    (void)state;
    return setup_env("Ascend910A");
}

static int teardown(void **state)
{
    (void)state;
    (void)reset_and_finalize();
    return 0;
}

/* Copies the kernels shared object to a new file under /tmp: a second,
 * distinct kernel binary with the same names. path gets the copy's name. */
static void copy_kernels(char *path, size_t len)
{
    snprintf(path, len, "/tmp/hbin-copy-XXXXXX.so");
    int out = mkstemps(path, 3);
    assert_true(out >= 0);
    FILE *in = fopen(kPath, "rb");
    assert_non_null(in);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(write(out, buf, n), (ssize_t)n);
    fclose(in);
    close(out);
}

/* ---- loading and launching ------------------------------------------------ */

static void test_load_get_function_launch(void **state)
{
    (void)state;
    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
    assert_non_null(h);

    /* args-array launch of a kernel that touches the scalar variable */
    launch_bump(h, 5);
    void *counter = NULL;
    size_t size = 0;
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &counter, &size));
    assert_int_equal(size, sizeof(int32_t));
    assert_int_equal(read_i32(counter), 7 + 5);

    /* packed-arguments launch over 64 blocks of a kernel using the array */
    aclrtFuncHandle scale = NULL;
    ASSERT_OK(aclrtBinaryGetFunction(h, "hbin_table_scale", &scale));
    float *out = NULL;
    ASSERT_OK(aclrtMalloc((void **)&out, 64 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    struct { float *out; float k; } packed = {out, 2.0f};
    ASSERT_OK(aclrtLaunchKernel(scale, 64, &packed, sizeof packed, NULL));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    float host[64];
    ASSERT_OK(aclrtMemcpy(host, sizeof host, out, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 64; i++)
        assert_true(host[i] == (i < 3 ? (float)(i + 1) * 2.0f : 0.0f));
    void *table = NULL;
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_table", &table, &size));
    assert_int_equal(size, 64 * sizeof(float));
    ASSERT_OK(aclrtMemcpy(host, sizeof host, table, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 64; i++)
        assert_true(host[i] == (i < 3 ? (float)(i + 1) : 0.0f) + 1.0f);

    /* a struct variable */
    aclrtFuncHandle origin_fn = NULL;
    ASSERT_OK(aclrtBinaryGetFunction(h, "hbin_read_origin", &origin_fn));
    hbin_point *pout = NULL;
    ASSERT_OK(aclrtMalloc((void **)&pout, sizeof *pout, ACL_MEM_MALLOC_HUGE_FIRST));
    void *args[] = {&pout};
    ASSERT_OK(aclrtLaunchKernelWithArgsArray(origin_fn, 1, NULL, NULL, args));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    hbin_point p;
    ASSERT_OK(aclrtMemcpy(&p, sizeof p, pout, sizeof p, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(p.x, 3);
    assert_true(p.y == -4);
    assert_true(p.z == 0.5);
    void *origin = NULL;
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_origin", &origin, &size));
    assert_int_equal(size, sizeof(hbin_point));
    ASSERT_OK(aclrtMemcpy(&p, sizeof p, origin, sizeof p, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(p.x, 4);

    /* a kernel without parameters */
    aclrtFuncHandle nop = NULL;
    ASSERT_OK(aclrtBinaryGetFunction(h, "hbin_nop", &nop));
    ASSERT_OK(aclrtLaunchKernelWithArgsArray(nop, 2, NULL, NULL, NULL));
    ASSERT_OK(aclrtSynchronizeStream(NULL));

    ASSERT_OK(aclrtFree(out));
    ASSERT_OK(aclrtFree(pout));
    ASSERT_OK(aclrtBinaryUnLoad(h));
}

static void test_load_with_options(void **state)
{
    (void)state;
    aclrtBinaryLoadOptions none = {NULL, 0};
    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, &none, &h));
    launch_bump(h, 1);
    void *counter = NULL;
    size_t size = 0;
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &counter, &size));
    assert_int_equal(read_i32(counter), 8);
    ASSERT_OK(aclrtBinaryUnLoad(h));

    /* an options array with numOpt 0 is not read */
    aclrtBinaryLoadOption opt;
    memset(&opt, 0, sizeof opt);
    aclrtBinaryLoadOptions zero = {&opt, 0};
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, &zero, &h));
    ASSERT_OK(aclrtBinaryUnLoad(h));

    /* numOpt says there is an option but the array is missing */
    aclrtBinaryLoadOptions broken = {NULL, 1};
    expect_error(aclrtBinaryLoadFromFile(kPath, &broken, &h), ACL_ERROR_INVALID_PARAM, "numOpt",
                 NULL);
}

/* Two loads of one file are two handles; unloading one leaves the other
 * working, and the file is unmapped only after the last unload. */
static void test_load_twice(void **state)
{
    (void)state;
    aclrtBinHandle a = NULL, b = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &a));
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &b));
    assert_ptr_not_equal(a, b);
    ASSERT_OK(aclrtBinaryUnLoad(a));
    assert_true(kernels_mapped());
    launch_bump(b, 2);
    void *counter = NULL;
    size_t size = 0;
    ASSERT_OK(aclrtBinaryGetGlobal(b, "hbin_counter", &counter, &size));
    assert_int_equal(read_i32(counter), 9);
    expect_error(aclrtBinaryGetFunction(a, "hbin_bump", &(aclrtFuncHandle){NULL}),
                 ACL_ERROR_RT_INVALID_HANDLE, NULL, NULL);
    ASSERT_OK(aclrtBinaryUnLoad(b));
    assert_false(kernels_mapped());
}

/* Two different files with the same names are two binaries with their own
 * variables and kernels; unloading one leaves the other intact. */
static void test_two_binaries(void **state)
{
    (void)state;
    char copy[64];
    copy_kernels(copy, sizeof copy);
    aclrtBinHandle a = NULL, b = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &a));
    aclError err = aclrtBinaryLoadFromFile(copy, NULL, &b);
    if (err != ACL_SUCCESS)
        unlink(copy);
    ASSERT_OK(err);

    void *ca = NULL, *cb = NULL;
    size_t size = 0;
    ASSERT_OK(aclrtBinaryGetGlobal(a, "hbin_counter", &ca, &size));
    ASSERT_OK(aclrtBinaryGetGlobal(b, "hbin_counter", &cb, &size));
    assert_ptr_not_equal(ca, cb);
    aclrtFuncHandle fa = NULL, fb = NULL;
    ASSERT_OK(aclrtBinaryGetFunction(a, "hbin_bump", &fa));
    ASSERT_OK(aclrtBinaryGetFunction(b, "hbin_bump", &fb));
    assert_ptr_not_equal(fa, fb);
    launch_bump(a, 1);
    launch_bump(b, 2);
    assert_int_equal(read_i32(ca), 8);
    assert_int_equal(read_i32(cb), 9);

    void *dl = dlopen(copy, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(dl);
    void *sym_b = dlsym(dl, "hbin_counter");
    assert_non_null(sym_b);

    ASSERT_OK(aclrtBinaryUnLoad(a));
    assert_false(kernels_mapped());
    /* b is untouched */
    ASSERT_OK(aclrtGetSymbolSize(sym_b, &size));
    assert_int_equal(size, sizeof(int32_t));
    void *addr = NULL;
    ASSERT_OK(aclrtGetSymbolAddress(sym_b, &addr));
    assert_ptr_equal(addr, cb);
    launch_bump(b, 1);
    assert_int_equal(read_i32(cb), 10);
    dlclose(dl);

    ASSERT_OK(aclrtBinaryUnLoad(b));
    unlink(copy);
}

/* A path without '/' names a file in the current directory (not a library
 * search). */
static void test_load_relative_path(void **state)
{
    (void)state;
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", kPath);
    char *slash = strrchr(dir, '/');
    assert_non_null(slash);
    *slash = '\0';
    assert_int_equal(chdir(dir), 0);
    aclrtBinHandle h = NULL;
    aclError err = aclrtBinaryLoadFromFile(slash + 1, NULL, &h);
    assert_int_equal(chdir(cwd), 0);
    ASSERT_OK(err);
    launch_bump(h, 1);
    ASSERT_OK(aclrtBinaryUnLoad(h));
}

/* ---- aclrtBinaryGetFunction ------------------------------------------------- */

static void test_get_function_errors(void **state)
{
    (void)state;
    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
    aclrtFuncHandle f = NULL;

    expect_error(aclrtBinaryGetFunction(h, "hbin_no_such_kernel", &f),
                 ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "hbin_no_such_kernel", NULL);
    /* a device variable is not a kernel */
    expect_error(aclrtBinaryGetFunction(h, "hbin_counter", &f),
                 ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "hbin_counter", NULL);
    /* a function reachable from the binary that was never registered */
    expect_error(aclrtBinaryGetFunction(h, "malloc", &f), ACL_ERROR_RT_INVALID_DEVICE_FUNCTION,
                 "malloc", NULL);
    expect_error(aclrtBinaryGetFunction(h, "", &f), ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, NULL,
                 NULL);
    assert_null(f);

    expect_error(aclrtBinaryGetFunction(h, NULL, &f), ACL_ERROR_INVALID_PARAM, "kernelName", NULL);
    expect_error(aclrtBinaryGetFunction(h, "hbin_bump", NULL), ACL_ERROR_INVALID_PARAM,
                 "funcHandle", NULL);
    expect_error(aclrtBinaryGetFunction(NULL, "hbin_bump", &f), ACL_ERROR_INVALID_PARAM,
                 "binHandle", NULL);

    /* a live handle of another kind */
    aclrtStream s = NULL;
    ASSERT_OK(aclrtCreateStream(&s));
    expect_error(aclrtBinaryGetFunction(s, "hbin_bump", &f), ACL_ERROR_RT_INVALID_HANDLE, NULL,
                 NULL);
    void *p = NULL;
    size_t size = 0;
    expect_error(aclrtBinaryGetGlobal(s, "hbin_counter", &p, &size), ACL_ERROR_RT_INVALID_HANDLE,
                 NULL, NULL);
    expect_error(aclrtBinaryUnLoad(s), ACL_ERROR_RT_INVALID_HANDLE, NULL, NULL);
    ASSERT_OK(aclrtDestroyStream(s));

    /* the handle is the one aclrtGetFuncBySymbol would give for the function */
    ASSERT_OK(aclrtBinaryGetFunction(h, "hbin_bump", &f));
    void *dl = dlopen(kPath, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(dl);
    aclrtFuncHandle g = NULL;
    ASSERT_OK(aclrtGetFuncBySymbol(dlsym(dl, "hbin_bump"), &g));
    dlclose(dl);
    assert_ptr_equal(f, g);

    ASSERT_OK(aclrtBinaryUnLoad(h));
}

/* ---- aclrtBinaryGetGlobal ----------------------------------------------------- */

static void test_get_global(void **state)
{
    (void)state;
    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
    void *counter = NULL, *table = NULL, *origin = NULL;
    size_t size = 0;

    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &counter, &size));
    assert_int_equal(size, sizeof(int32_t));
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_table", &table, &size));
    assert_int_equal(size, 64 * sizeof(float));
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_origin", &origin, &size));
    assert_int_equal(size, sizeof(hbin_point));
    assert_int_equal((uintptr_t)counter % 64, 0);
    assert_int_equal((uintptr_t)table % 64, 0);
    assert_int_equal((uintptr_t)origin % 64, 0);

    /* device memory holding the initializers, usable with aclrtMemcpy */
    assert_int_equal(read_i32(counter), 7);
    float t[64];
    ASSERT_OK(aclrtMemcpy(t, sizeof t, table, sizeof t, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_true(t[0] == 1.0f && t[1] == 2.0f && t[2] == 3.0f && t[3] == 0.0f && t[63] == 0.0f);
    hbin_point p;
    ASSERT_OK(aclrtMemcpy(&p, sizeof p, origin, sizeof p, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_true(p.x == 3 && p.y == -4 && p.z == 0.5);

    /* written with aclrtMemcpy / aclrtMemset, seen by the binary's kernels */
    int32_t v = 40;
    ASSERT_OK(aclrtMemcpy(counter, sizeof v, &v, sizeof v, ACL_MEMCPY_HOST_TO_DEVICE));
    launch_bump(h, 2);
    assert_int_equal(read_i32(counter), 42);
    ASSERT_OK(aclrtMemset(counter, sizeof v, 0, sizeof v));
    launch_bump(h, 1);
    assert_int_equal(read_i32(counter), 1);

    /* the instances kernels use are the ones GetGlobal returns */
    aclrtFuncHandle report = NULL;
    ASSERT_OK(aclrtBinaryGetFunction(h, "hbin_report_addresses", &report));
    uint64_t *dout = NULL;
    ASSERT_OK(aclrtMalloc((void **)&dout, 3 * sizeof(uint64_t), ACL_MEM_MALLOC_HUGE_FIRST));
    void *args[] = {&dout};
    ASSERT_OK(aclrtLaunchKernelWithArgsArray(report, 1, NULL, NULL, args));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    uint64_t addrs[3];
    ASSERT_OK(aclrtMemcpy(addrs, sizeof addrs, dout, sizeof addrs, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(addrs[0], (uintptr_t)counter);
    assert_int_equal(addrs[1], (uintptr_t)table);
    assert_int_equal(addrs[2], (uintptr_t)origin);
    ASSERT_OK(aclrtFree(dout));

    /* and the ones the symbol functions use for the binary's host objects */
    void *dl = dlopen(kPath, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(dl);
    void *sym = dlsym(dl, "hbin_counter");
    assert_non_null(sym);
    void *addr = NULL;
    ASSERT_OK(aclrtGetSymbolAddress(sym, &addr));
    assert_ptr_equal(addr, counter);
    ASSERT_OK(aclrtGetSymbolSize(sym, &size));
    assert_int_equal(size, sizeof(int32_t));
    int32_t w = 11, r = 0;
    ASSERT_OK(aclrtMemcpyToSymbol(sym, &w, sizeof w, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    assert_int_equal(read_i32(counter), 11);
    ASSERT_OK(aclrtMemcpyFromSymbol(&r, sizeof r, sym, sizeof r, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(r, 11);
    /* the host object itself is not the device instance */
    assert_int_equal(*(const int32_t *)sym, 7);
    /* only the exact address of a variable is a symbol */
    const float *table_sym = dlsym(dl, "hbin_table");
    assert_non_null(table_sym);
    expect_error(aclrtGetSymbolSize(table_sym + 1, &size), ACL_ERROR_RT_INVALID_SYMBOL, NULL,
                 NULL);
    /* nor is the device address */
    expect_error(aclrtGetSymbolSize(counter, &size), ACL_ERROR_RT_INVALID_SYMBOL, NULL, NULL);
    dlclose(dl);

    ASSERT_OK(aclrtBinaryUnLoad(h));
}

struct no_context_result {
    aclrtBinHandle h;
    aclError err;
    char msg[512];
};

static void *get_global_without_context(void *arg)
{
    struct no_context_result *r = arg;
    void *p = NULL;
    size_t size = 0;
    r->err = aclrtBinaryGetGlobal(r->h, "hbin_counter", &p, &size);
    const char *m = aclGetRecentErrMsg();
    snprintf(r->msg, sizeof r->msg, "%s", m ? m : "");
    return NULL;
}

static void test_get_global_errors(void **state)
{
    (void)state;
    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
    void *p = NULL;
    size_t size = 0;

    expect_error(aclrtBinaryGetGlobal(h, "hbin_no_such_var", &p, &size),
                 ACL_ERROR_RT_SYMBOL_NOT_FOUND, "hbin_no_such_var", NULL);
    /* a kernel is not a device variable */
    expect_error(aclrtBinaryGetGlobal(h, "hbin_bump", &p, &size), ACL_ERROR_RT_SYMBOL_NOT_FOUND,
                 "hbin_bump", NULL);
    /* nor is the runtime's descriptor of one */
    expect_error(aclrtBinaryGetGlobal(h, "aclsim__var_hbin_counter", &p, &size),
                 ACL_ERROR_RT_SYMBOL_NOT_FOUND, NULL, NULL);
    /* a variable of the main program is not in the binary */
    expect_error(aclrtBinaryGetGlobal(h, "hbin_main_ticker", &p, &size),
                 ACL_ERROR_RT_SYMBOL_NOT_FOUND, "hbin_main_ticker", NULL);
    assert_null(p);

    expect_error(aclrtBinaryGetGlobal(h, NULL, &p, &size), ACL_ERROR_INVALID_PARAM, "name", NULL);
    expect_error(aclrtBinaryGetGlobal(h, "hbin_counter", NULL, &size), ACL_ERROR_INVALID_PARAM,
                 "dptr", NULL);
    expect_error(aclrtBinaryGetGlobal(h, "hbin_counter", &p, NULL), ACL_ERROR_INVALID_PARAM,
                 "size", NULL);
    expect_error(aclrtBinaryGetGlobal(NULL, "hbin_counter", &p, &size), ACL_ERROR_INVALID_PARAM,
                 "binHandle", NULL);

    /* no current context in a thread that never set a device */
    struct no_context_result r = {.h = h};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, get_global_without_context, &r), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(r.err, ACL_ERROR_RT_CONTEXT_NULL);
    assert_true(r.msg[0] != '\0');

    ASSERT_OK(aclrtBinaryUnLoad(h));
}

/* Every device has its own instance of the binary's variables. */
static void test_get_global_per_device(void **state)
{
    (void)state;
    aclrtContext ctx0 = NULL, ctx1 = NULL;
    ASSERT_OK(aclrtGetCurrentContext(&ctx0));
    ASSERT_OK(aclrtSetDevice(1));
    ASSERT_OK(aclrtGetCurrentContext(&ctx1));
    ASSERT_OK(aclrtSetCurrentContext(ctx0));

    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
    void *a0 = NULL, *a1 = NULL, *t0 = NULL, *t1 = NULL;
    size_t size = 0;
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &a0, &size));
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_table", &t0, &size));
    launch_bump(h, 10);   /* device 0: 17 */

    ASSERT_OK(aclrtSetCurrentContext(ctx1));
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &a1, &size));
    assert_int_equal(size, sizeof(int32_t));
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_table", &t1, &size));
    assert_ptr_not_equal(a0, a1);
    assert_ptr_not_equal(t0, t1);
    assert_int_equal(read_i32(a1), 7);   /* fresh from the initializer */
    int32_t v = 100;
    ASSERT_OK(aclrtMemcpy(a1, sizeof v, &v, sizeof v, ACL_MEMCPY_HOST_TO_DEVICE));
    launch_bump(h, 1);
    assert_int_equal(read_i32(a1), 101);

    void *dl = dlopen(kPath, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(dl);
    void *sym = dlsym(dl, "hbin_counter");
    void *addr = NULL;
    ASSERT_OK(aclrtGetSymbolAddress(sym, &addr));
    assert_ptr_equal(addr, a1);

    ASSERT_OK(aclrtSetCurrentContext(ctx0));
    ASSERT_OK(aclrtGetSymbolAddress(sym, &addr));
    assert_ptr_equal(addr, a0);
    dlclose(dl);
    void *again = NULL;
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &again, &size));
    assert_ptr_equal(again, a0);
    assert_int_equal(read_i32(a0), 17);

    ASSERT_OK(aclrtBinaryUnLoad(h));
}

/* GetGlobal follows the device-variable support matrix; loading, functions
 * and launches work on every SoC. */
static void test_unsupported_soc(void **state)
{
    (void)state;
    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
    launch_bump(h, 1);
    void *p = NULL;
    size_t size = 0;
    expect_error(aclrtBinaryGetGlobal(h, "hbin_counter", &p, &size),
                 ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910A", NULL);
    /* the support check comes before the name lookup */
    expect_error(aclrtBinaryGetGlobal(h, "hbin_no_such_var", &p, &size),
                 ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, NULL);
    ASSERT_OK(aclrtBinaryUnLoad(h));
}

/* ---- files that cannot be loaded, NULL arguments, no runtime ------------------ */

static void test_load_failures(void **state)
{
    (void)state;
    aclrtBinHandle h = NULL;

    const char *missing = "/nonexistent-hbin-dir/libmissing.so";
    expect_error(aclrtBinaryLoadFromFile(missing, NULL, &h), ACL_ERROR_INVALID_FILE, missing,
                 "No such file");

    /* a text file: the loader's reason is in the message */
    char text[] = "/tmp/hbin-text-XXXXXX";
    int fd = mkstemp(text);
    assert_true(fd >= 0);
    const char body[] = "this is a text file, not a kernel binary; it is long enough to hold "
                        "a whole ELF header, so the loader looks at its magic.\n";
    assert_int_equal(write(fd, body, sizeof body - 1), (ssize_t)(sizeof body - 1));
    close(fd);
    aclError err = aclrtBinaryLoadFromFile(text, NULL, &h);
    const char *m = aclGetRecentErrMsg();
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", m ? m : "");
    unlink(text);
    assert_int_equal(err, ACL_ERROR_INVALID_FILE);
    assert_non_null(strstr(msg, text));
    assert_non_null(strstr(msg, "invalid ELF header"));

    /* an empty file */
    char empty[] = "/tmp/hbin-empty-XXXXXX";
    fd = mkstemp(empty);
    assert_true(fd >= 0);
    close(fd);
    err = aclrtBinaryLoadFromFile(empty, NULL, &h);
    m = aclGetRecentErrMsg();
    snprintf(msg, sizeof msg, "%s", m ? m : "");
    unlink(empty);
    assert_int_equal(err, ACL_ERROR_INVALID_FILE);
    assert_non_null(strstr(msg, empty));
    assert_non_null(strstr(msg, "file too short"));

    /* a directory */
    expect_error(aclrtBinaryLoadFromFile("/tmp", NULL, &h), ACL_ERROR_INVALID_FILE, "/tmp", NULL);

    /* a bare name is a file in the current directory, not a library search */
    char dir[] = "/tmp/hbin-dir-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    err = aclrtBinaryLoadFromFile("libc.so.6", NULL, &h);
    m = aclGetRecentErrMsg();
    snprintf(msg, sizeof msg, "%s", m ? m : "");
    assert_int_equal(chdir(cwd), 0);
    rmdir(dir);
    assert_int_equal(err, ACL_ERROR_INVALID_FILE);
    assert_non_null(strstr(msg, "libc.so.6"));

    assert_null(h);
}

static void test_null_arguments(void **state)
{
    (void)state;
    aclrtBinHandle h = NULL;
    expect_error(aclrtBinaryLoadFromFile(NULL, NULL, &h), ACL_ERROR_INVALID_PARAM, "binPath",
                 NULL);
    expect_error(aclrtBinaryLoadFromFile(kPath, NULL, NULL), ACL_ERROR_INVALID_PARAM,
                 "binHandle", NULL);
    expect_error(aclrtBinaryUnLoad(NULL), ACL_ERROR_INVALID_PARAM, "binHandle", NULL);
    /* a NULL out-pointer did not load anything */
    assert_false(kernels_mapped());
}

static void test_uninitialized(void **state)
{
    (void)state;
    aclrtBinHandle h = NULL;
    expect_error(aclrtBinaryLoadFromFile(kPath, NULL, &h), ACL_ERROR_UNINITIALIZE, "aclInit",
                 NULL);
    assert_false(kernels_mapped());
}

/* ---- unloading ------------------------------------------------------------------- */

static void test_after_unload(void **state)
{
    (void)state;
    assert_false(kernels_mapped());
    /* the main program's variables exist on device 0 before the baseline */
    void *ticker = NULL;
    ASSERT_OK(aclrtGetSymbolAddress(hbin_main_ticker, &ticker));
    size_t free_before = hbm_free();

    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
    aclrtFuncHandle bump = NULL, scale = NULL;
    ASSERT_OK(aclrtBinaryGetFunction(h, "hbin_bump", &bump));
    ASSERT_OK(aclrtBinaryGetFunction(h, "hbin_table_scale", &scale));
    launch_bump(h, 1);   /* instances of all three variables */
    void *counter = NULL;
    size_t size = 0;
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &counter, &size));
    assert_true(hbm_free() < free_before);

    /* the host objects, looked up through our own reference to the file */
    void *dl = dlopen(kPath, RTLD_NOW);
    assert_non_null(dl);
    void *counter_sym = dlsym(dl, "hbin_counter");
    void *table_sym = dlsym(dl, "hbin_table");
    void *bump_fn = dlsym(dl, "hbin_bump");
    assert_non_null(counter_sym);
    assert_non_null(table_sym);
    assert_non_null(bump_fn);
    ASSERT_OK(aclrtGetSymbolSize(counter_sym, &size));
    assert_int_equal(size, sizeof(int32_t));
    assert_int_equal(dlclose(dl), 0);

    ASSERT_OK(aclrtBinaryUnLoad(h));
    assert_false(kernels_mapped());

    /* the handle is dead */
    aclrtFuncHandle f = NULL;
    void *p = NULL;
    expect_error(aclrtBinaryGetFunction(h, "hbin_bump", &f), ACL_ERROR_RT_INVALID_HANDLE, NULL,
                 NULL);
    expect_error(aclrtBinaryGetGlobal(h, "hbin_counter", &p, &size), ACL_ERROR_RT_INVALID_HANDLE,
                 NULL, NULL);
    expect_error(aclrtBinaryUnLoad(h), ACL_ERROR_RT_INVALID_HANDLE, NULL, NULL);

    /* its variables are no longer symbols */
    expect_error(aclrtGetSymbolSize(counter_sym, &size), ACL_ERROR_RT_INVALID_SYMBOL, NULL, NULL);
    expect_error(aclrtGetSymbolAddress(table_sym, &p), ACL_ERROR_RT_INVALID_SYMBOL, NULL, NULL);
    int32_t v = 1;
    expect_error(aclrtMemcpyToSymbol(counter_sym, &v, sizeof v, 0, ACL_MEMCPY_HOST_TO_DEVICE),
                 ACL_ERROR_RT_INVALID_SYMBOL, NULL, NULL);
    expect_error(aclrtMemcpyFromSymbol(&v, sizeof v, counter_sym, sizeof v, 0,
                                       ACL_MEMCPY_DEVICE_TO_HOST),
                 ACL_ERROR_RT_INVALID_SYMBOL, NULL, NULL);

    /* its kernels are gone: old handles fail, they do not crash */
    int32_t delta = 1;
    void *args[] = {&delta};
    expect_error(aclrtLaunchKernelWithArgsArray(bump, 1, NULL, NULL, args),
                 ACL_ERROR_RT_INVALID_HANDLE, NULL, NULL);
    struct { float *out; float k; } packed = {NULL, 1.0f};
    expect_error(aclrtLaunchKernel(scale, 1, &packed, sizeof packed, NULL),
                 ACL_ERROR_RT_INVALID_HANDLE, NULL, NULL);
    expect_error(aclrtGetFuncBySymbol(bump_fn, &f), ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, NULL,
                 NULL);
    ASSERT_OK(aclrtSynchronizeStream(NULL));

    /* its instances were given back */
    assert_int_equal(hbm_free(), free_before);

    /* loading it again gives new handles; the old ones stay dead */
    aclrtBinHandle h2 = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h2));
    aclrtFuncHandle bump2 = NULL;
    ASSERT_OK(aclrtBinaryGetFunction(h2, "hbin_bump", &bump2));
    expect_error(aclrtLaunchKernelWithArgsArray(bump, 1, NULL, NULL, args),
                 ACL_ERROR_RT_INVALID_HANDLE, NULL, NULL);
    expect_error(aclrtBinaryGetFunction(h, "hbin_bump", &f), ACL_ERROR_RT_INVALID_HANDLE, NULL,
                 NULL);
    expect_error(aclrtBinaryUnLoad(h), ACL_ERROR_RT_INVALID_HANDLE, NULL, NULL);
    ASSERT_OK(aclrtBinaryGetGlobal(h2, "hbin_counter", &counter, &size));
    assert_int_equal(read_i32(counter), 7);
    ASSERT_OK(aclrtLaunchKernelWithArgsArray(bump2, 1, NULL, NULL, args));
    ASSERT_OK(aclrtSynchronizeStream(NULL));
    assert_int_equal(read_i32(counter), 8);
    ASSERT_OK(aclrtBinaryUnLoad(h2));
    assert_false(kernels_mapped());
    assert_int_equal(hbm_free(), free_before);
    /* the main program's variable is untouched */
    void *ticker_again = NULL;
    ASSERT_OK(aclrtGetSymbolAddress(hbin_main_ticker, &ticker_again));
    assert_ptr_equal(ticker_again, ticker);
}

/* Load/unload 50 times on two devices: every load starts from the
 * initializers, and nothing stays behind. */
static void test_load_unload_repeated(void **state)
{
    (void)state;
    aclrtContext ctx[2] = {NULL, NULL};
    ASSERT_OK(aclrtGetCurrentContext(&ctx[0]));
    ASSERT_OK(aclrtSetDevice(1));
    ASSERT_OK(aclrtGetCurrentContext(&ctx[1]));
    size_t free_before[2];
    for (int d = 0; d < 2; d++) {
        ASSERT_OK(aclrtSetCurrentContext(ctx[d]));
        void *ticker = NULL;
        ASSERT_OK(aclrtGetSymbolAddress(hbin_main_ticker, &ticker));
        free_before[d] = hbm_free();
    }

    for (int i = 0; i < 50; i++) {
        aclrtBinaryLoadOptions none = {NULL, 0};
        aclrtBinHandle h = NULL;
        ASSERT_OK(aclrtBinaryLoadFromFile(kPath, i % 2 ? &none : NULL, &h));
        for (int d = 0; d < 2; d++) {
            ASSERT_OK(aclrtSetCurrentContext(ctx[d]));
            void *counter = NULL;
            size_t size = 0;
            ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &counter, &size));
            assert_int_equal(read_i32(counter), 7);
            launch_bump(h, i + d);
            assert_int_equal(read_i32(counter), 7 + i + d);
        }
        ASSERT_OK(aclrtBinaryUnLoad(h));
    }

    assert_false(kernels_mapped());
    for (int d = 0; d < 2; d++) {
        ASSERT_OK(aclrtSetCurrentContext(ctx[d]));
        assert_int_equal(hbm_free(), free_before[d]);
    }
}

struct copier {
    int device;
    const void *symbol;   /* 256 bytes */
    atomic_bool *stop;
    atomic_long iterations;
    atomic_int errors;
    char first_error[256];
};

static void copier_error(struct copier *c, const char *what, long i)
{
    note_first_error(&c->errors, c->first_error, sizeof c->first_error,
                     "device %d iteration %ld: %s", c->device, i, what);
}

static void *copier_main(void *arg)
{
    struct copier *c = arg;
    if (aclrtSetDevice(c->device) != ACL_SUCCESS) {
        copier_error(c, "aclrtSetDevice", -1);
        return NULL;
    }
    int64_t out[32], in[32];
    for (long i = 0; !atomic_load(c->stop); i++) {
        for (int j = 0; j < 32; j++)
            out[j] = (int64_t)c->device * 1000000000 + i * 32 + j;
        memset(in, 0, sizeof in);
        if (i % 2 == 0) {
            if (aclrtMemcpyToSymbol(c->symbol, out, sizeof out, 0, ACL_MEMCPY_HOST_TO_DEVICE) ||
                aclrtMemcpyFromSymbol(in, sizeof in, c->symbol, sizeof in, 0,
                                      ACL_MEMCPY_DEVICE_TO_HOST)) {
                copier_error(c, "sync copy failed", i);
                break;
            }
        } else {
            if (aclrtMemcpyToSymbolAsync(c->symbol, out, sizeof out, 0,
                                         ACL_MEMCPY_HOST_TO_DEVICE, NULL) ||
                aclrtMemcpyFromSymbolAsync(in, sizeof in, c->symbol, sizeof in, 0,
                                           ACL_MEMCPY_DEVICE_TO_HOST, NULL) ||
                aclrtSynchronizeStream(NULL)) {
                copier_error(c, "async copy failed", i);
                break;
            }
        }
        if (memcmp(in, out, sizeof in) != 0) {
            copier_error(c, "read back different data", i);
            break;
        }
        atomic_fetch_add(&c->iterations, 1);
    }
    (void)aclrtResetDevice(c->device);
    return NULL;
}

/* Unloading a binary while other threads copy to other variables (of the
 * main program, and of a second binary) is safe. */
static void test_unload_while_copying(void **state)
{
    (void)state;
    char copy[64];
    copy_kernels(copy, sizeof copy);
    aclrtBinHandle other = NULL;
    aclError err = aclrtBinaryLoadFromFile(copy, NULL, &other);
    void *dl = err ? NULL : dlopen(copy, RTLD_NOW | RTLD_NOLOAD);
    void *other_table = dl ? dlsym(dl, "hbin_table") : NULL;   /* 256 bytes */
    if (dl)
        dlclose(dl);
    unlink(copy);
    ASSERT_OK(err);
    assert_non_null(other_table);

    enum { N = 4 };
    atomic_bool stop = false;
    struct copier c[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].device = i % 2;
        c[i].symbol = i < 2 ? (const void *)hbin_main_ticker : other_table;
        c[i].stop = &stop;
        atomic_init(&c[i].iterations, 0);
        atomic_init(&c[i].errors, 0);
        assert_int_equal(pthread_create(&t[i], NULL, copier_main, &c[i]), 0);
    }
    /* let them all start copying (bounded: they fail fast if they cannot) */
    for (int spins = 0; spins < 2000000; spins++) {
        int started = 0;
        for (int i = 0; i < N; i++)
            started += atomic_load(&c[i].iterations) || atomic_load(&c[i].errors);
        if (started == N)
            break;
        sched_yield();
    }

    for (int i = 0; i < 200; i++) {
        aclrtBinHandle h = NULL;
        ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
        void *counter = NULL;
        size_t size = 0;
        ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &counter, &size));
        if (i % 20 == 0) {
            launch_bump(h, 3);
            assert_int_equal(read_i32(counter), 10);
        }
        ASSERT_OK(aclrtBinaryUnLoad(h));
    }

    atomic_store(&stop, true);
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (atomic_load(&c[i].errors))
            fail_msg("copier %d: %s", i, c[i].first_error);
        assert_true(atomic_load(&c[i].iterations) > 0);
    }
    assert_false(kernels_mapped());
    ASSERT_OK(aclrtBinaryUnLoad(other));
}

/* aclrtResetDevice discards the device's instances of the binary's variables
 * too: the next use starts again from the initializer. */
static void test_reset_device(void **state)
{
    (void)state;
    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
    launch_bump(h, 20);
    void *counter = NULL;
    size_t size = 0;
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &counter, &size));
    assert_int_equal(read_i32(counter), 27);
    ASSERT_OK(aclrtResetDevice(0));
    ASSERT_OK(aclrtSetDevice(0));
    ASSERT_OK(aclrtBinaryGetGlobal(h, "hbin_counter", &counter, &size));
    assert_int_equal(read_i32(counter), 7);
    launch_bump(h, 1);
    assert_int_equal(read_i32(counter), 8);
    ASSERT_OK(aclrtBinaryUnLoad(h));
}

static void sleep_a_little(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Unloading a binary while a launch of one of its kernels is still queued.
 * CANN is silent; our choice: the unload is safe (it never crashes), the
 * queued launch still runs with the binary's data, and the stream then
 * synchronizes normally. */
static void test_unload_with_queued_launch(void **state)
{
    (void)state;
    aclrtStream s = NULL;
    ASSERT_OK(aclrtCreateStream(&s));
    float *out = NULL;
    ASSERT_OK(aclrtMalloc((void **)&out, 64 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMemset(out, 64 * sizeof(float), 0, 64 * sizeof(float)));
    aclrtBinHandle h = NULL;
    ASSERT_OK(aclrtBinaryLoadFromFile(kPath, NULL, &h));
    aclrtFuncHandle scale = NULL;
    ASSERT_OK(aclrtBinaryGetFunction(h, "hbin_table_scale", &scale));

    /* keep the stream busy so the launch is still queued at the unload */
    ASSERT_OK(aclrtLaunchHostFunc(s, sleep_a_little, NULL));
    float k = 2.0f;
    void *args[] = {&out, &k};
    ASSERT_OK(aclrtLaunchKernelWithArgsArray(scale, 64, s, NULL, args));
    ASSERT_OK(aclrtBinaryUnLoad(h));
    ASSERT_OK(aclrtSynchronizeStream(s));

    float host[64];
    ASSERT_OK(aclrtMemcpy(host, sizeof host, out, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_true(host[0] == 2.0f && host[1] == 4.0f && host[2] == 6.0f && host[3] == 0.0f);
    assert_false(kernels_mapped());
    ASSERT_OK(aclrtFree(out));
    ASSERT_OK(aclrtDestroyStream(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uninitialized),
        cmocka_unit_test_setup_teardown(test_load_get_function_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_with_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_binaries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_relative_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_function_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_global, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_global_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_global_per_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsupported_soc, setup_unsupported_soc, teardown),
        cmocka_unit_test_setup_teardown(test_load_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_unload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_unload_repeated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unload_while_copying, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_device, setup, teardown),
        /* last: if it crashes, the results above are already printed */
        cmocka_unit_test_setup_teardown(test_unload_with_queued_launch, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
