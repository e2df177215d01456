/*
 * Managed memory: one allocation used by host code and by kernels on two
 * devices; sizes round up to 2 MiB and count against the device; advice and
 * prefetches (stream tasks) read back through GetAttr(s); aclrtFree frees it;
 * bad inputs get CANN's codes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

#define G2 (2 * MiB)

/* out[i] += add for each block i. */
void managed_add(uint32_t *out, uint32_t add) { out[aclsimGetBlockIdx()] += add; }
ACLSIM_KERNEL_REGISTER(managed_add, uint32_t *, uint32_t);

static aclrtMemManagedLocation dev_loc(int32_t id)
{
    return (aclrtMemManagedLocation){ACL_MEM_LOCATIONTYPE_DEVICE, id};
}

static void test_host_and_two_devices(void **state)
{
    (void)state;
    size_t free0 = hbm_free();
    uint32_t *m = NULL;
    EXPECT_OK(aclrtMemAllocManaged((void **)&m, 100, ACL_RT_MEM_ATTACH_GLOBAL));
    assert_int_equal((uintptr_t)m % G2, 0);
    assert_int_equal(hbm_free(), free0 - G2);   /* rounded up to 2 MiB, charged */
    void *pbase = NULL;
    size_t psize = 0;
    EXPECT_OK(aclrtMemGetAddressRange(m + 5, &pbase, &psize));
    assert_ptr_equal(pbase, m);
    assert_int_equal(psize, G2);
    for (uint32_t i = 0; i < 64; i++)
        m[i] = i;   /* host code */
    uint32_t add = 100;
    void *args[] = {&m, &add};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(managed_add), 64, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtSetDevice(1));   /* a kernel on the other device, same pointer */
    add = 1000;
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(managed_add), 64, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    for (uint32_t i = 0; i < 64; i++)
        assert_int_equal(m[i], i + 1100);
    /* Copies and memset take it as either side. */
    uint32_t back[64];
    EXPECT_OK(aclrtMemcpy(back, sizeof back, m, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(back[63], 1163);
    EXPECT_OK(aclrtMemcpy(back, sizeof back, m, sizeof back, ACL_MEMCPY_HOST_TO_HOST));
    EXPECT_OK(aclrtMemcpy(m + 64, sizeof back, back, sizeof back, ACL_MEMCPY_HOST_TO_DEVICE));
    assert_int_equal(m[64 + 63], 1163);
    EXPECT_OK(aclrtMemset(m, G2, 0, G2));
    assert_int_equal(m[0], 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtMemset(m, G2 + 1, 0, G2 + 1));
    aclrtPtrAttributes a;
    EXPECT_OK(aclrtPointerGetAttributes(m, &a));
    assert_int_equal(a.location.type, ACL_MEM_LOCATION_TYPE_MANAGED);
    assert_int_equal(a.pageSize, G2);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not the start", aclrtFree(m + 1));
    EXPECT_OK(aclrtFree(m));
    EXPECT_OK(aclrtSetDevice(0));
    assert_int_equal(hbm_free(), free0);
    EXPECT_OK(aclrtPointerGetAttributes(m, &a));
    assert_int_equal(a.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
}

static int32_t attr_i32(aclrtMemManagedRangeAttribute attr, const void *p, size_t size)
{
    int32_t v = -99;
    EXPECT_OK(aclrtMemManagedGetAttr(attr, p, size, &v, sizeof v));
    return v;
}

static void test_advice_and_prefetch(void **state)
{
    (void)state;
    char *m = NULL;
    EXPECT_OK(aclrtMemAllocManaged((void **)&m, 3 * G2, ACL_RT_MEM_ATTACH_GLOBAL));
    aclrtMemManagedLocation none = {ACL_MEM_LOCATIONTYPE_INVALID, 0};
    assert_int_equal(attr_i32(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 3 * G2), 0);
    EXPECT_OK(aclrtMemManagedAdvise(m, 2 * G2, ACL_MEM_ADVISE_SET_READ_MOSTLY, none));
    assert_int_equal(attr_i32(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 2 * G2), 1);
    assert_int_equal(attr_i32(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 3 * G2), 0);
    EXPECT_OK(aclrtMemManagedAdvise(m + G2, G2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, dev_loc(1)));
    aclrtMemManagedLocation loc;
    EXPECT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m + G2, G2, &loc,
                                     sizeof loc));
    assert_int_equal(loc.type, ACL_MEM_LOCATIONTYPE_DEVICE);
    assert_int_equal(loc.id, 1);
    /* Pages that disagree: invalid. */
    assert_int_equal(attr_i32(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, m, 2 * G2),
                     ACL_MEM_LOCATIONTYPE_INVALID);
    assert_int_equal(attr_i32(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, m + G2, 10), 1);
    EXPECT_OK(aclrtMemManagedAdvise(m, 3 * G2, ACL_MEM_ADVISE_SET_ACCESSED_BY, dev_loc(0)));
    EXPECT_OK(aclrtMemManagedAdvise(m, G2, ACL_MEM_ADVISE_SET_ACCESSED_BY,
                                    (aclrtMemManagedLocation){ACL_MEM_LOCATIONTYPE_HOST, 0}));
    aclrtMemManagedLocation by[3];
    EXPECT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, m, G2, by, sizeof by));
    assert_int_equal(by[0].type, ACL_MEM_LOCATIONTYPE_HOST);
    assert_int_equal(by[1].type, ACL_MEM_LOCATIONTYPE_DEVICE);
    assert_int_equal(by[1].id, 0);
    assert_int_equal(by[2].type, ACL_MEM_LOCATIONTYPE_INVALID);
    EXPECT_OK(aclrtMemManagedAdvise(m, 3 * G2, ACL_MEM_ADVISE_UNSET_ACCESSED_BY, dev_loc(0)));
    EXPECT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, m, 3 * G2, by, sizeof by));
    assert_int_equal(by[0].type, ACL_MEM_LOCATIONTYPE_INVALID);

    /* Prefetches are stream tasks: they take effect in stream order. */
    struct blocker b;
    blocker_init(&b);
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &b));
    EXPECT_OK(aclrtMemManagedPrefetchAsync(m, 3 * G2, dev_loc(1), 0, s));
    assert_int_equal(attr_i32(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, m, 3 * G2),
                     ACL_MEM_LOCATIONTYPE_INVALID);
    blocker_release(&b);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_int_equal(attr_i32(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, m, 3 * G2),
                     ACL_MEM_LOCATIONTYPE_DEVICE);
    assert_int_equal(attr_i32(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, m, 3 * G2), 1);
    /* A batch: pages 0 and 1 to the host, page 2 to device 0. */
    const void *ptrs[] = {m, m + G2, m + 2 * G2};
    size_t sizes[] = {G2, G2, G2};
    aclrtMemManagedLocation locs[] = {{ACL_MEM_LOCATIONTYPE_HOST, 0}, dev_loc(0)};
    size_t idx[] = {0, 2};
    EXPECT_OK(aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 3, locs, idx, 2, 0, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    aclrtMemManagedRangeAttribute attrs[] = {ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
                                             ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY};
    aclrtMemManagedLocation last = {ACL_MEM_LOCATIONTYPE_INVALID, -1};
    int32_t rm = -1;
    void *data[] = {&last, &rm};
    size_t dsizes[] = {sizeof last, sizeof rm};
    EXPECT_OK(aclrtMemManagedGetAttrs(attrs, 2, m, 2 * G2, data, dsizes));
    assert_int_equal(last.type, ACL_MEM_LOCATIONTYPE_HOST);
    assert_int_equal(rm, 1);
    EXPECT_OK(aclrtMemManagedGetAttrs(attrs, 2, m + 2 * G2, G2, data, dsizes));
    assert_int_equal(last.type, ACL_MEM_LOCATIONTYPE_DEVICE);
    assert_int_equal(last.id, 0);
    assert_int_equal(rm, 0);

    /* Bad inputs: argument checks (100000), then the runtime's (107000). */
    int32_t v;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtMemManagedAdvise(NULL, G2, ACL_MEM_ADVISE_SET_READ_MOSTLY, none));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMemManagedAdvise(m, 0, ACL_MEM_ADVISE_SET_READ_MOSTLY, none));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "2 MiB", aclrtMemManagedAdvise(m, 4096, ACL_MEM_ADVISE_SET_READ_MOSTLY, none));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "run past", aclrtMemManagedAdvise(m, 4 * G2, ACL_MEM_ADVISE_SET_READ_MOSTLY, none));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "advise", aclrtMemManagedAdvise(m, G2, (aclrtMemManagedAdviseType)6, none));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "location", aclrtMemManagedAdvise(m, G2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, none));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "location", aclrtMemManagedAdvise(m, G2, ACL_MEM_ADVISE_SET_ACCESSED_BY, dev_loc(2)));
    int local[4];
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not managed memory", aclrtMemManagedAdvise(local, G2, ACL_MEM_ADVISE_SET_READ_MOSTLY, none));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "dataSize", aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, G2, &v, 8));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "attribute", aclrtMemManagedGetAttr((aclrtMemManagedRangeAttribute)0, m, G2, &v, 4));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "data", aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, G2, NULL, 4));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "numAttributes", aclrtMemManagedGetAttrs(attrs, 0, m, G2, data, dsizes));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags", aclrtMemManagedPrefetchAsync(m, G2, dev_loc(0), 1, s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "location", aclrtMemManagedPrefetchAsync(m, G2, none, 0, s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "2 MiB", aclrtMemManagedPrefetchAsync(m + 4096, G2, dev_loc(0), 0, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "count", aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 0, locs, idx, 2, 0, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "greater than or equal", aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 1, locs, idx, 2, 0, s));
    size_t bad_idx[] = {1, 2};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "prefetchLocIdxs[0]", aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 3, locs, bad_idx, 2, 0, s));
    size_t sizes_bad[] = {G2, 4096, G2};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "2 MiB", aclrtMemManagedPrefetchBatchAsync(ptrs, sizes_bad, 3, locs, idx, 2, 0, s));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(m));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not managed memory", aclrtMemManagedPrefetchAsync(m, G2, dev_loc(0), 0, NULL));
}

static void test_alloc_inputs(void **state)
{
    (void)state;
    void *m = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtMemAllocManaged(NULL, G2, ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flag", aclrtMemAllocManaged(&m, G2, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "size", aclrtMemAllocManaged(&m, 0, ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_ERR(ACL_ERROR_RT_MEMORY_ALLOCATION, "cannot back",
               aclrtMemAllocManaged(&m, 128 * MiB, ACL_RT_MEM_ATTACH_GLOBAL));
    /* Usage figures list managed memory once used. */
    EXPECT_OK(aclrtMemAllocManaged(&m, 3 * MiB, ACL_RT_MEM_ATTACH_GLOBAL));
    aclrtMemUsageInfo u[4];
    size_t n = 0;
    EXPECT_OK(aclrtGetMemUsageInfo(0, u, 4, &n));
    assert_int_equal(n, 3);
    assert_string_equal(u[0].name, "managed");
    assert_int_equal(u[0].curMemSize, 4 * MiB);
    /* Left allocated: aclFinalize frees it (ASan would report the leak). */
    EXPECT_OK(aclrtMemAllocManaged(&m, 1, ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_OK(aclrtMemManagedPrefetchAsync(m, G2, dev_loc(0), 0, NULL));
}

static void test_products(void **state)
{
    (void)state;
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    setenv("ACLSIM_SOC_VERSION", "Ascend950PR", 1);
    assert_int_equal(init_devices("2", "64M"), ACL_SUCCESS);
    EXPECT_OK(aclrtSetDevice(0));
    void *m = NULL;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend950PR",
               aclrtMemAllocManaged(&m, G2, ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flag", aclrtMemAllocManaged(&m, G2, 2));
    int local;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL,
               aclrtMemManagedPrefetchAsync(&local, G2, dev_loc(0), 0, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_host_and_two_devices, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_advice_and_prefetch, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_alloc_inputs, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_products, setup_device0, teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
