/*
 * Device variables with the same name in the program and in a kernel binary.
 * This executable is linked with -rdynamic (ENABLE_EXPORTS), so it exports
 * dup_shared and everything else; tests/dupvars/hdup-kernels.c defines its own
 * dup_shared (8 elements against 4 here). The two are distinct variables
 * through every function (aclrtGetSymbolAddress/Size, the symbol copies,
 * aclrtBinaryGetGlobal, ACLSIM_DEV in kernels of each object), and unloading
 * the binary leaves the program's variable, its value and its instances
 * alone. Also: a descriptor registered twice is counted, a second descriptor
 * for a registered address is refused, and a binary that registers one
 * (tests/dupvars/hdup-conflict.c) is refused with 100003, as are binaries
 * whose kernel is named like the program's kernel or exported function.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

static const char kDup[] = ACLSIM_TEST_DUP_PATH;
static const char kConflict[] = ACLSIM_TEST_CONFLICT_PATH;
static const char kKernelConflict[] = ACLSIM_TEST_KCONFLICT_PATH;
static const char kKernelInterposed[] = ACLSIM_TEST_KINTERPOSED_PATH;

/* Two objects defining globals of the same name is what this test is about
 * (valid ELF, and each object uses its own): AddressSanitizer's check for
 * C++'s one-definition rule would abort at the binary's load, so it is off for
 * this executable. (Environment ASAN_OPTIONS still win for other options.) */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_odr_violation=0"; }

ACLSIM_DEVICE_VAR(int32_t, dup_shared, [4]) = {1, 2, 3, 4};

/* Adds k to this device's instance of the program's dup_shared. */
void dup_prog_bump(int32_t k) { ACLSIM_DEV(dup_shared)[aclsimGetBlockIdx() % 4] += k; }
ACLSIM_KERNEL_REGISTER(dup_prog_bump, int32_t);

/* Exported (not a kernel here); hdup-kinterposed.c registers a kernel of this name. */
atomic_int plain_calls;
void dup_plain_function(int32_t k);
void dup_plain_function(int32_t k) { atomic_fetch_add(&plain_calls, k); }

static void read_program(int32_t out[4])
{
    EXPECT_OK(aclrtMemcpyFromSymbol(out, 16, dup_shared, 16, 0, ACL_MEMCPY_DEVICE_TO_HOST));
}

static void expect4(const int32_t *got, int32_t a, int32_t b, int32_t c, int32_t d)
{
    assert_int_equal(got[0], a);
    assert_int_equal(got[1], b);
    assert_int_equal(got[2], c);
    assert_int_equal(got[3], d);
}

static void launch(aclrtFuncHandle f, uint32_t blocks, int32_t k)
{
    void *args[] = {&k};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(f, blocks, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
}

/* The binary's own dup_shared, as its descriptor registered it. */
static const void *binary_symbol(void)
{
    void *dl = dlopen(kDup, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(dl);
    const void *(*registered)(void) =
        (const void *(*)(void))(uintptr_t)dlsym(dl, "hdup_registered_symbol");
    const void *by_name = dlsym(dl, "dup_shared");
    assert_non_null(registered);
    const void *sym = registered();
    assert_ptr_equal(sym, by_name);   /* its own object, not the program's */
    dlclose(dl);
    return sym;
}

static void test_program_and_binary_variables_are_distinct(void **state)
{
    (void)state;
    int32_t w[4] = {10, 20, 30, 40}, got[8];
    EXPECT_OK(aclrtMemcpyToSymbol(dup_shared, w, sizeof w, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    void *prog_dev = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(dup_shared, &prog_dev));

    for (int round = 0; round < 3; round++) {
        aclrtBinHandle bin = NULL;
        EXPECT_OK(aclrtBinaryLoadFromFile(kDup, NULL, &bin));
        const void *bsym = binary_symbol();
        assert_ptr_not_equal(bsym, (const void *)dup_shared);

        /* Two variables: sizes, addresses, values. */
        size_t size = 0;
        EXPECT_OK(aclrtGetSymbolSize(dup_shared, &size));
        assert_int_equal(size, 16);
        EXPECT_OK(aclrtGetSymbolSize(bsym, &size));
        assert_int_equal(size, 32);
        void *bin_dev = NULL, *global = NULL, *again = NULL;
        EXPECT_OK(aclrtGetSymbolAddress(bsym, &bin_dev));
        EXPECT_OK(aclrtBinaryGetGlobal(bin, "dup_shared", &global, &size));
        assert_ptr_equal(global, bin_dev);
        assert_int_equal(size, 32);
        EXPECT_OK(aclrtGetSymbolAddress(dup_shared, &again));
        assert_ptr_equal(again, prog_dev);
        assert_ptr_not_equal(bin_dev, prog_dev);
        EXPECT_OK(aclrtMemcpyFromSymbol(got, 32, bsym, 32, 0, ACL_MEMCPY_DEVICE_TO_HOST));
        assert_int_equal(got[0], 100);   /* the binary's initializer */
        assert_int_equal(got[7], 107);
        read_program(got);
        expect4(got, 10 + round, 20 + round, 30 + round, 40 + round);

        /* Each object's kernel uses its own variable through ACLSIM_DEV. */
        aclrtFuncHandle fb = NULL;
        EXPECT_OK(aclrtBinaryGetFunction(bin, "hdup_bump", &fb));
        launch(fb, 8, 1000);
        EXPECT_OK(aclrtMemcpy(got, 32, bin_dev, 32, ACL_MEMCPY_DEVICE_TO_HOST));
        assert_int_equal(got[0], 1100);
        assert_int_equal(got[7], 1107);
        read_program(got);
        expect4(got, 10 + round, 20 + round, 30 + round, 40 + round);
        launch(FUNC(dup_prog_bump), 4, 1);
        read_program(got);
        expect4(got, 11 + round, 21 + round, 31 + round, 41 + round);
        EXPECT_OK(aclrtMemcpyFromSymbol(got, 32, bsym, 32, 0, ACL_MEMCPY_DEVICE_TO_HOST));
        assert_int_equal(got[0], 1100);

        /* A copy to the binary's variable leaves the program's alone. */
        int32_t nine[8] = {9, 9, 9, 9, 9, 9, 9, 9};
        EXPECT_OK(aclrtMemcpyToSymbol(bsym, nine, sizeof nine, 0, ACL_MEMCPY_HOST_TO_DEVICE));
        read_program(got);
        expect4(got, 11 + round, 21 + round, 31 + round, 41 + round);

        /* Unloading the binary leaves the program's variable as it was. */
        EXPECT_OK(aclrtBinaryUnLoad(bin));
        read_program(got);
        expect4(got, 11 + round, 21 + round, 31 + round, 41 + round);
        EXPECT_OK(aclrtGetSymbolAddress(dup_shared, &again));
        assert_ptr_equal(again, prog_dev);
        EXPECT_OK(aclrtGetSymbolSize(dup_shared, &size));
        assert_int_equal(size, 16);
        launch(FUNC(dup_prog_bump), 4, 0);   /* the kernel still finds its instance */
    }
    /* The program's variable on a fresh device starts from its own initializer. */
    EXPECT_OK(aclrtSetDevice(1));
    read_program(got);
    expect4(got, 1, 2, 3, 4);
    EXPECT_OK(aclrtResetDevice(1));
}

/* Registering one descriptor twice is counted: it stays registered until the
 * second unregistration, and is registered once (one instance). */
static int32_t plain_global[2] = {5, 6};

static void test_same_descriptor_twice_is_counted(void **state)
{
    (void)state;
    aclsimVar v;
    memset(&v, 0, sizeof v);
    v.symbol = plain_global;
    v.size = sizeof plain_global;
    v.align = 4;
    v.name = "plain_global";
    v.file = __FILE__;
    v.line = __LINE__;
    aclsimRegisterVar(&v);
    aclsimRegisterVar(&v);
    void *a = NULL, *b = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(plain_global, &a));
    int32_t seven = 7, got = 0;
    EXPECT_OK(aclrtMemcpyToSymbol(plain_global, &seven, 4, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    aclsimUnregisterVar(&v);
    EXPECT_OK(aclrtGetSymbolAddress(plain_global, &b));
    assert_ptr_equal(a, b);   /* the same instance: nothing was reset */
    EXPECT_OK(aclrtMemcpyFromSymbol(&got, 4, plain_global, 4, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(got, 7);
    aclsimUnregisterVar(&v);
    EXPECT_ERR(ACL_ERROR_RT_INVALID_SYMBOL, NULL, aclrtGetSymbolAddress(plain_global, &b));
    aclsimUnregisterVar(&v);   /* once more: nothing to do */
    assert_null(v.initial);
}

/* Another descriptor for a registered address is refused and cannot remove
 * the registered one. */
static void test_second_descriptor_is_refused(void **state)
{
    (void)state;
    int32_t w[4] = {7, 7, 7, 7}, got[4];
    EXPECT_OK(aclrtMemcpyToSymbol(dup_shared, w, sizeof w, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    aclsimVar impostor;
    memset(&impostor, 0, sizeof impostor);
    impostor.symbol = dup_shared;
    impostor.size = 4;
    impostor.align = 4;
    impostor.name = "impostor";
    impostor.file = __FILE__;
    impostor.line = __LINE__;
    aclsimRegisterVar(&impostor);
    size_t size = 0;
    EXPECT_OK(aclrtGetSymbolSize(dup_shared, &size));
    assert_int_equal(size, 16);
    aclsimUnregisterVar(&impostor);
    EXPECT_OK(aclrtGetSymbolSize(dup_shared, &size));
    read_program(got);
    expect4(got, 7, 7, 7, 7);
    assert_null(impostor.initial);

    /* A binary that does the same is refused, and changes nothing either. */
    aclrtBinHandle bin = NULL;
    EXPECT_ERR2(ACL_ERROR_INVALID_FILE, "already registered", "dup_shared",
                aclrtBinaryLoadFromFile(kConflict, NULL, &bin));
    read_program(got);
    expect4(got, 7, 7, 7, 7);
    EXPECT_OK(aclrtGetSymbolSize(dup_shared, &size));
    assert_int_equal(size, 16);
}

/* Kernels named like the program's kernel or function: both binaries are
 * refused (their `&fn` resolves to the program's function), and the
 * program's kernel still runs its own code on its own variable. */
static void test_interposed_kernels_are_refused(void **state)
{
    (void)state;
    aclrtBinHandle bin = NULL;
    EXPECT_ERR2(ACL_ERROR_INVALID_FILE, "already registered", "dup_prog_bump",
                aclrtBinaryLoadFromFile(kKernelConflict, NULL, &bin));
    EXPECT_ERR2(ACL_ERROR_INVALID_FILE, "interposition", "dup_plain_function",
                aclrtBinaryLoadFromFile(kKernelInterposed, NULL, &bin));
    aclrtFuncHandle f = NULL;
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, NULL,
               aclrtGetFuncBySymbol(FN(dup_plain_function), &f));
    int32_t w[4] = {0, 0, 0, 0}, got[4];
    EXPECT_OK(aclrtMemcpyToSymbol(dup_shared, w, sizeof w, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    launch(FUNC(dup_prog_bump), 4, 3);
    read_program(got);
    expect4(got, 3, 3, 3, 3);
    assert_int_equal(atomic_load(&plain_calls), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_program_and_binary_variables_are_distinct,
                                        setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_same_descriptor_twice_is_counted, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_second_descriptor_is_refused, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_interposed_kernels_are_refused, setup_device0,
                                        teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
