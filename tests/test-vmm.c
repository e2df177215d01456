/*
 * Virtual memory: reserved ranges, physical allocations (real shared memory)
 * and mappings. Two mappings of one physical allocation alias for copies and
 * kernels; copies span adjacent mappings; physical memory counts against the
 * device; access flags hold; wrong-order unmap/release and bad inputs get
 * CANN's codes; memory freed while mapped stays usable until its last unmap.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

#define G2 (2 * MiB)

/* Writes base + i into out[i] for each block i. */
void vmm_fill(uint32_t *out, uint32_t base) { out[aclsimGetBlockIdx()] = base + aclsimGetBlockIdx(); }
ACLSIM_KERNEL_REGISTER(vmm_fill, uint32_t *, uint32_t);

static aclrtPhysicalMemProp device_prop(uint32_t dev)
{
    aclrtPhysicalMemProp p;
    memset(&p, 0, sizeof p);
    p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    p.memAttr = ACL_HBM_MEM_HUGE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    return p;
}

static aclrtDrvMemHandle physical(size_t size)
{
    aclrtPhysicalMemProp p = device_prop(0);
    aclrtDrvMemHandle h = NULL;
    EXPECT_OK(aclrtMallocPhysical(&h, size, &p, 0));
    assert_non_null(h);
    return h;
}

static char *reserve(size_t size)
{
    void *v = NULL;
    EXPECT_OK(aclrtReserveMemAddress(&v, size, 0, NULL, 0));
    assert_non_null(v);
    return v;
}

static void test_two_mappings_alias(void **state)
{
    (void)state;
    aclrtPhysicalMemProp prop = device_prop(0);
    size_t gran = 0;
    EXPECT_OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran));
    assert_int_equal(gran, G2);
    size_t free0 = hbm_free();
    aclrtDrvMemHandle h = physical(G2);
    assert_int_equal(hbm_free(), free0 - G2);   /* counts against the device */
    char *v = reserve(4 * G2);
    EXPECT_OK(aclrtMapMem(v, G2, 0, h, 0));
    EXPECT_OK(aclrtMapMem(v + 2 * G2, G2, 0, h, 0));   /* the same memory again */
    assert_int_equal(hbm_free(), free0 - G2);           /* mapping costs nothing more */
    aclrtMemUsageInfo u[4];
    size_t nu = 0;
    EXPECT_OK(aclrtGetMemUsageInfo(0, u, 4, &nu));
    assert_int_equal(nu, 3);
    assert_string_equal(u[0].name, "physical");   /* the largest first */
    assert_int_equal(u[0].curMemSize, G2);

    /* A copy into one mapping shows through the other. */
    uint32_t src[256], dst[256];
    for (int i = 0; i < 256; i++)
        src[i] = 0xabc00000u + (uint32_t)i;
    EXPECT_OK(aclrtMemcpy(v + 4096, sizeof src, src, sizeof src, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(dst, sizeof dst, v + 2 * G2 + 4096, sizeof dst, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(src, dst, sizeof src);

    /* A kernel writing through the second mapping, read through the first. */
    uint32_t *out = (uint32_t *)(v + 2 * G2);
    uint32_t base = 1000;
    void *args[] = {&out, &base};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(vmm_fill), 64, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtMemcpy(dst, sizeof dst, v, 64 * 4, ACL_MEMCPY_DEVICE_TO_HOST));
    for (uint32_t i = 0; i < 64; i++)
        assert_int_equal(dst[i], 1000 + i);
    /* Device-to-device within the reservation, and memset. */
    EXPECT_OK(aclrtMemcpy(v + 8192, 256, v, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_OK(aclrtMemset(v + G2 - 16, 16, 0x5a, 16));
    EXPECT_OK(aclrtMemcpy(dst, 16, v + 3 * G2 - 16, 16, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(dst[0], 0x5a5a5a5au);

    /* Queries: the mapping holding the address; a device pointer. */
    void *pbase = NULL;
    size_t psize = 0;
    EXPECT_OK(aclrtMemGetAddressRange(v + 2 * G2 + 77, &pbase, &psize));
    assert_ptr_equal(pbase, v + 2 * G2);
    assert_int_equal(psize, G2);
    aclrtPtrAttributes a;
    EXPECT_OK(aclrtPointerGetAttributes(v + 5, &a));
    assert_int_equal(a.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
    assert_int_equal(a.location.id, 0);
    assert_int_equal(a.pageSize, G2);
    uint32_t match = 9;
    void *list[] = {v, v + G2};   /* mapped and unmapped parts of the reservation */
    EXPECT_OK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_RSVD, &match, 0));
    assert_int_equal(match, 1);
    EXPECT_OK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &match, 0));
    assert_int_equal(match, 0);

    EXPECT_OK(aclrtUnmapMem(v));
    EXPECT_OK(aclrtUnmapMem(v + 2 * G2));
    EXPECT_OK(aclrtFreePhysical(h));
    assert_int_equal(hbm_free(), free0);
    EXPECT_OK(aclrtReleaseMemAddress(v));
}

static void test_copies_span_adjacent_mappings(void **state)
{
    (void)state;
    aclrtDrvMemHandle a = physical(G2), b = physical(G2);
    char *v = reserve(4 * G2);
    EXPECT_OK(aclrtMapMem(v, G2, 0, a, 0));
    EXPECT_OK(aclrtMapMem(v + G2, G2, 0, b, 0));
    size_t n = 2 * G2;
    unsigned char *src = malloc(n), *dst = malloc(n);
    assert_non_null(src);
    assert_non_null(dst);
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    EXPECT_OK(aclrtMemcpy(v, n, src, n, ACL_MEMCPY_HOST_TO_DEVICE));
    memset(dst, 0, n);
    EXPECT_OK(aclrtMemcpyAsync(dst, n, v, n, ACL_MEMCPY_DEVICE_TO_HOST, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    assert_memory_equal(src, dst, n);
    /* Each mapping is still its own block. */
    void *pbase = NULL;
    size_t psize = 0;
    EXPECT_OK(aclrtMemGetAddressRange(v + G2 + 1, &pbase, &psize));
    assert_ptr_equal(pbase, v + G2);
    assert_int_equal(psize, G2);
    /* Past the mapped extent, or into unmapped reserved space. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "past the mapped memory",
               aclrtMemcpy(v + G2, n, src, n, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "no physical memory mapped",
               aclrtMemcpy(v + 3 * G2, 16, src, 16, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "host memory expected",
               aclrtMemcpy(v, 16, src, 16, ACL_MEMCPY_HOST_TO_HOST));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not in a live block",
               aclrtMemGetAddressRange(v + 3 * G2, &pbase, &psize));
    free(src);
    free(dst);
    EXPECT_OK(aclrtUnmapMem(v));
    EXPECT_OK(aclrtUnmapMem(v + G2));
    EXPECT_OK(aclrtFreePhysical(a));
    EXPECT_OK(aclrtFreePhysical(b));
    EXPECT_OK(aclrtReleaseMemAddress(v));
}

static void test_wrong_order(void **state)
{
    (void)state;
    size_t free0 = hbm_free();
    aclrtDrvMemHandle h = physical(G2);
    char *v = reserve(2 * G2);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not the start of a mapping", aclrtUnmapMem(v));
    EXPECT_OK(aclrtMapMem(v, G2, 0, h, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "overlap", aclrtMapMem(v, G2, 0, h, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "still has 1 mapping", aclrtReleaseMemAddress(v));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "inside one", aclrtUnmapMem(v + 4096));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "inside one", aclrtReleaseMemAddress(v + G2));
    memset(v, 0x11, 64);
    /* Freed while mapped: the memory stays usable until the last unmap. */
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, "not a live physical memory handle",
               aclrtFreePhysical(h));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, NULL, aclrtMapMem(v + G2, G2, 0, h, 0));
    assert_int_equal(hbm_free(), free0 - G2);
    unsigned char back[64];
    EXPECT_OK(aclrtMemcpy(back, 64, v, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(back[0], 0x11);
    assert_int_equal(back[63], 0x11);
    /* Retaining it gives a live handle again. */
    aclrtDrvMemHandle h2 = NULL;
    EXPECT_OK(aclrtMemRetainAllocationHandle(v, &h2));
    aclrtPhysicalMemProp p;
    EXPECT_OK(aclrtMemGetAllocationPropertiesFromHandle(h2, &p));
    assert_int_equal(p.memAttr, ACL_HBM_MEM_HUGE);
    assert_int_equal(p.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
    EXPECT_OK(aclrtFreePhysical(h2));
    EXPECT_OK(aclrtUnmapMem(v));
    assert_int_equal(hbm_free(), free0);   /* the last unmap freed it */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not the start", aclrtUnmapMem(v));
    EXPECT_OK(aclrtReleaseMemAddress(v));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not the start of a reserved range",
               aclrtReleaseMemAddress(v));
}

static void test_retain_counts(void **state)
{
    (void)state;
    aclrtDrvMemHandle h = physical(G2), r = NULL;
    char *v = reserve(G2);
    EXPECT_OK(aclrtMapMem(v, G2, 0, h, 0));
    EXPECT_OK(aclrtMemRetainAllocationHandle(v, &r));
    assert_ptr_equal(r, h);
    EXPECT_OK(aclrtUnmapMem(v));
    EXPECT_OK(aclrtFreePhysical(h));
    aclrtPhysicalMemProp p;
    EXPECT_OK(aclrtMemGetAllocationPropertiesFromHandle(h, &p));   /* one reference left */
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, NULL, aclrtMemGetAllocationPropertiesFromHandle(h, &p));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not the start of a mapping",
               aclrtMemRetainAllocationHandle(v, &r));
    EXPECT_OK(aclrtReleaseMemAddress(v));
}

static void test_access_flags(void **state)
{
    (void)state;
    aclrtDrvMemHandle h = physical(G2);
    char *v = reserve(G2);
    EXPECT_OK(aclrtMemMapNoAccess(v, G2, 0, h, 0));
    char buf[32] = "written";
    aclrtMemLocation dev0 = {0, ACL_MEM_LOCATION_TYPE_DEVICE};
    uint64_t flag = 99;
    EXPECT_OK(aclrtMemGetAccess(v, &dev0, &flag));
    assert_int_equal(flag, ACL_RT_MEM_ACCESS_FLAGS_NONE);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not accessible",
               aclrtMemcpy(v, 32, buf, 32, ACL_MEMCPY_HOST_TO_DEVICE));
    aclrtMemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location = dev0;
    d.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
    EXPECT_OK(aclrtMemSetAccess(v, G2, &d, 1));
    EXPECT_OK(aclrtMemGetAccess(v, &dev0, &flag));
    assert_int_equal(flag, ACL_RT_MEM_ACCESS_FLAGS_READ);
    EXPECT_OK(aclrtMemcpy(buf, 32, v, 32, ACL_MEMCPY_DEVICE_TO_HOST));   /* reads work */
    assert_int_equal(buf[0], 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "read-only",
               aclrtMemcpy(v, 32, buf, 32, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "read-only", aclrtMemset(v, 32, 0, 32));
    d.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    EXPECT_OK(aclrtMemSetAccess(v, G2, &d, 1));
    strcpy(buf, "written");
    EXPECT_OK(aclrtMemcpy(v, 32, buf, 32, ACL_MEMCPY_HOST_TO_DEVICE));
    assert_string_equal(v, "written");
    /* Bad inputs. */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not the size", aclrtMemSetAccess(v, G2 / 2, &d, 1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "count is 0", aclrtMemSetAccess(v, G2, &d, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "desc is NULL", aclrtMemSetAccess(v, G2, NULL, 1));
    d.flags = (aclrtMemAccessFlags)2;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemAccessFlags", aclrtMemSetAccess(v, G2, &d, 1));
    d.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
    d.location.id = 7;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "visible device", aclrtMemSetAccess(v, G2, &d, 1));
    aclrtMemLocation bad = {0, ACL_MEM_LOCATION_TYPE_MANAGED};
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, NULL, aclrtMemGetAccess(v, &bad, &flag));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flag", aclrtMemGetAccess(v, &dev0, NULL));
    EXPECT_OK(aclrtUnmapMem(v));
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT_OK(aclrtReleaseMemAddress(v));
}

static void test_bad_inputs(void **state)
{
    (void)state;
    aclrtPhysicalMemProp p = device_prop(0);
    aclrtDrvMemHandle h = NULL;
    void *v = NULL;
    size_t g = 0;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle", aclrtMallocPhysical(NULL, G2, &p, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "prop", aclrtMallocPhysical(&h, G2, NULL, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMallocPhysical(&h, 0, &p, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags", aclrtMallocPhysical(&h, G2, &p, 1));
    p.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handleType", aclrtMallocPhysical(&h, G2, &p, 0));
    p = device_prop(0);
    p.allocationType = (aclrtMemAllocationType)1;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "allocationType", aclrtMallocPhysical(&h, G2, &p, 0));
    p = device_prop(0);
    p.location.type = ACL_MEM_LOCATION_TYPE_MANAGED;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "managed", aclrtMallocPhysical(&h, G2, &p, 0));
    p = device_prop(0);
    p.memAttr = ACL_DDR_MEM_NORMAL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "DDR", aclrtMallocPhysical(&h, G2, &p, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "DDR",
               aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
    p.memAttr = ACL_HBM_MEM_P2P_HUGE;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not supported", aclrtMallocPhysical(&h, G2, &p, 0));
    p = device_prop(5);
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtMallocPhysical(&h, G2, &p, 0));
    p = device_prop(1);   /* not set */
    EXPECT_ERR(ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice(1)", aclrtMallocPhysical(&h, G2, &p, 0));
    p = device_prop(0);
    EXPECT_ERR(ACL_ERROR_RT_MEMORY_ALLOCATION, "cannot back",
               aclrtMallocPhysical(&h, 128 * MiB, &p, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "option",
               aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, &g));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "granularity",
               aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, NULL));
    p.memAttr = ACL_HBM_MEM_HUGE1G;
    EXPECT_OK(aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g));
    assert_int_equal(g, GiB);
    /* Host physical memory: not charged to the device, mapped as host memory. */
    p = device_prop(0);
    p.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    p.memAttr = ACL_DDR_MEM_NORMAL;
    size_t free0 = hbm_free();
    EXPECT_OK(aclrtMallocPhysical(&h, G2, &p, 0));
    assert_int_equal(hbm_free(), free0);

    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "virPtr", aclrtReserveMemAddress(NULL, G2, 0, NULL, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtReserveMemAddress(&v, 0, 0, NULL, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags", aclrtReserveMemAddress(&v, G2, 0, NULL, 2));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "alignment", aclrtReserveMemAddress(&v, G2, 4096, NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aligned",
               aclrtReserveMemAddress(&v, G2, 0, (void *)(uintptr_t)0x100001000ull, 0));
    EXPECT_OK(aclrtReserveMemAddress(&v, 3 * G2, 0, NULL, 1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "in use", aclrtReserveMemAddress(&v, G2, 0, v, 0));
    char *c = v;
    EXPECT_OK(aclrtMapMem(c, G2, 0, h, 0));
    aclrtPtrAttributes a;
    EXPECT_OK(aclrtPointerGetAttributes(c, &a));
    assert_int_equal(a.location.type, ACL_MEM_LOCATION_TYPE_HOST);
    aclrtDrvMemHandle d = physical(G2);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "two locations", aclrtMapMem(c + G2, G2, 0, d, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "virPtr", aclrtMapMem(NULL, G2, 0, d, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle", aclrtMapMem(c, G2, 0, NULL, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMapMem(c, 0, 0, d, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flags", aclrtMapMem(c, G2, 0, d, 1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "offset", aclrtMapMem(c + G2, G2, 4096, d, 0));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, NULL, aclrtMapMem(c + G2, G2, 0, (void *)&a, 0));
    int local;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not in a reserved range", aclrtMapMem(&local, G2, 0, d, 0));
    EXPECT_OK(aclrtUnmapMem(c));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "whole physical allocation",
               aclrtMapMem(c + 4096, G2, 0, d, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "whole physical allocation", aclrtMapMem(c, G2 / 2, 0, d, 0));
    aclrtDrvMemHandle big = physical(2 * G2);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "past the end", aclrtMapMem(c + 2 * G2, 2 * G2, 0, big, 0));
    EXPECT_OK(aclrtFreePhysical(big));
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT_OK(aclrtFreePhysical(d));
    EXPECT_OK(aclrtReleaseMemAddress(c));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL, aclrtUnmapMem(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL, aclrtReleaseMemAddress(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL, aclrtFreePhysical(NULL));
}

static void test_product_support(void **state)
{
    (void)state;
    void *v = NULL;
    aclrtDrvMemHandle h = NULL;
    aclrtPhysicalMemProp p = device_prop(0);
    /* NoUCMemory is Atlas A3 only; the Ascend910B1 of the fixture is A2. */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL,
               aclrtReserveMemAddressNoUCMemory(&v, GiB, 0, (void *)(uintptr_t)(64ull << 40), 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "virPtr",   /* argument checks first */
               aclrtReserveMemAddressNoUCMemory(NULL, GiB, 0, NULL, 0));
    p.memAttr = ACL_MEM_P2P_HUGE1G;   /* A3 only */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtMallocPhysical(&h, GiB, &p, 0));
    EXPECT_OK(aclrtResetDeviceForce(0));
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    setenv("ACLSIM_SOC_VERSION", "IPV350", 1);
    assert_int_equal(init_devices("2", "64M"), ACL_SUCCESS);
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtReserveMemAddress(&v, G2, 0, NULL, 0));
    p = device_prop(0);
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtMallocPhysical(&h, G2, &p, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMallocPhysical(&h, 0, &p, 0));
    EXPECT_OK(aclrtResetDeviceForce(0));
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    setenv("ACLSIM_SOC_VERSION", "Ascend910_9391", 1);
    assert_int_equal(init_devices("2", "64M"), ACL_SUCCESS);
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "1 GiB",
               aclrtReserveMemAddressNoUCMemory(&v, G2, 0, (void *)(uintptr_t)(64ull << 40), 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "expectPtr",
               aclrtReserveMemAddressNoUCMemory(&v, GiB, 0, NULL, 0));
#ifndef __SANITIZE_THREAD__   /* TSan aborts on mappings outside its application ranges */
    void *at = (void *)(uintptr_t)(64ull << 40);
    aclError e = aclrtReserveMemAddressNoUCMemory(&v, GiB, 0, at, 0);
    if (e == ACL_SUCCESS) {   /* the address is free in this process */
        assert_ptr_equal(v, at);
        EXPECT_OK(aclrtReleaseMemAddress(v));
    } else {
        assert_int_equal(e, ACL_ERROR_RT_PARAM_INVALID);
    }
#endif
}

/* Left mapped, allocated and reserved: aclFinalize releases it all (ASan
 * would report the leak otherwise). */
static void test_finalize_releases(void **state)
{
    (void)state;
    aclrtDrvMemHandle h = physical(G2);
    char *v = reserve(2 * G2);
    EXPECT_OK(aclrtMapMem(v, G2, 0, h, 0));
    EXPECT_OK(aclrtMapMem(v + G2, G2, 0, h, 0));
    v[0] = 1;
    (void)physical(G2);
}

struct churn { atomic_int errors; char msg[256]; };

static void *churn_thread(void *arg)
{
    struct churn *c = arg;
    aclrtSetDevice(0);
    aclrtPhysicalMemProp p = device_prop(0);
    for (int round = 0; round < 40; round++) {
        aclrtDrvMemHandle h = NULL;
        void *v = NULL;
        uint64_t word = 0x1234000000000000ull + (uint64_t)round, back = 0;
        if (aclrtMallocPhysical(&h, G2, &p, 0) || aclrtReserveMemAddress(&v, 2 * G2, 0, NULL, 0) ||
            aclrtMapMem(v, G2, 0, h, 0) || aclrtMapMem((char *)v + G2, G2, 0, h, 0) ||
            aclrtMemcpy(v, 8, &word, 8, ACL_MEMCPY_HOST_TO_DEVICE) ||
            aclrtMemcpy(&back, 8, (char *)v + G2, 8, ACL_MEMCPY_DEVICE_TO_HOST) || back != word ||
            aclrtUnmapMem(v) || aclrtFreePhysical(h) || aclrtUnmapMem((char *)v + G2) ||
            aclrtReleaseMemAddress(v)) {
            note_first_error(&c->errors, c->msg, sizeof c->msg, "round %d: %s", round,
                             aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "wrong data");
            break;
        }
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    struct churn c = {0};
    size_t free0 = hbm_free();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn_thread, &c), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    if (atomic_load(&c.errors))
        fail_msg("%s", c.msg);
    assert_int_equal(hbm_free(), free0);
}

/* Synchronous copies into mapped memory racing aclFinalize: each copy either
 * completes or fails cleanly (100000, 100001, 107002), never touching
 * unmapped memory. */
struct racer { char *v; atomic_int started; atomic_int bad; };

static void *copy_loop(void *arg)
{
    struct racer *r = arg;
    uint64_t w = 42;
    for (long i = 0;; i++) {
        aclError e = aclrtMemcpy(r->v + (i % 512) * 8, 8, &w, 8, ACL_MEMCPY_HOST_TO_DEVICE);
        atomic_store(&r->started, 1);
        if (e == ACL_SUCCESS)
            continue;
        if (e != ACL_ERROR_INVALID_PARAM && e != ACL_ERROR_UNINITIALIZE &&
            e != ACL_ERROR_RT_CONTEXT_NULL)   /* its context closed first */
            atomic_store(&r->bad, (int)e);
        return NULL;
    }
}

static void test_copies_race_finalize(void **state)
{
    (void)state;
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            assert_int_equal(init_devices("2", "64M"), ACL_SUCCESS);
            EXPECT_OK(aclrtSetDevice(0));
        }
        aclrtDrvMemHandle h = physical(G2);
        struct racer r = {.v = reserve(G2)};
        EXPECT_OK(aclrtMapMem(r.v, G2, 0, h, 0));
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, copy_loop, &r), 0);
        while (!atomic_load(&r.started))
            sched_yield();
        if (round % 2)
            sleep_ms(1);
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
        pthread_join(t, NULL);
        assert_int_equal(atomic_load(&r.bad), 0);
    }
    assert_int_equal(init_devices("2", "64M"), ACL_SUCCESS);   /* for the teardown */
}

/* aclrtMemMapSelectedLink (Atlas A3): the destination reservation maps the
 * physical memory mapped in the source's, at the same offsets: the two alias. */
static void test_map_selected_link(void **state)
{
    (void)state;
    char *dst = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "virPtrDst", aclrtMemMapSelectedLink(NULL, G2, &dst, 0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtMemMapSelectedLink(&dst, G2, &dst, 0));
    reinit_with_soc("Ascend910_9391");
    char *src = reserve(2 * G2);
    dst = reserve(2 * G2);
    aclrtDrvMemHandle h1 = physical(G2), h2 = physical(G2);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "no physical memory",
               aclrtMemMapSelectedLink(dst, 2 * G2, src, ACL_RT_MEM_LINK_IDX_0));
    EXPECT_OK(aclrtMapMem(src, G2, 0, h1, 0));
    EXPECT_OK(aclrtMapMem(src + G2, G2, 0, h2, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "virPtrSrc", aclrtMemMapSelectedLink(dst, G2, NULL, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtMemMapSelectedLink(dst, 0, src, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "linkIdx", aclrtMemMapSelectedLink(dst, 2 * G2, src, 2));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "virPtrDst is not the start",
               aclrtMemMapSelectedLink(dst + G2, G2, src, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "virPtrSrc is not the start",
               aclrtMemMapSelectedLink(dst, 2 * G2, src + G2, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "sizes",
               aclrtMemMapSelectedLink(dst, G2, src, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "same reserved range",
               aclrtMemMapSelectedLink(src, 2 * G2, src, 0));
    EXPECT_OK(aclrtMemMapSelectedLink(dst, 2 * G2, src, ACL_RT_MEM_LINK_IDX_1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "already has memory mapped",
               aclrtMemMapSelectedLink(dst, 2 * G2, src, 0));
    /* Aliases, across the two physical allocations. */
    uint32_t v = 0x5EED, got = 0;
    EXPECT_OK(aclrtMemcpy(src + G2 - 2, 4, &v, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(&got, 4, dst + G2 - 2, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(got, 0x5EED);
    dst[3] = 7;
    assert_int_equal(src[3], 7);
    /* Each mapping of the destination is unmapped on its own (CANN's note). */
    void *base = NULL;
    size_t size = 0;
    EXPECT_OK(aclrtMemGetAddressRange(dst + G2 + 5, &base, &size));
    assert_ptr_equal(base, dst + G2);
    assert_int_equal(size, G2);
    EXPECT_OK(aclrtUnmapMem(dst));
    EXPECT_OK(aclrtUnmapMem(dst + G2));
    assert_int_equal(src[3], 7);   /* the source keeps its memory */
    EXPECT_OK(aclrtUnmapMem(src));
    EXPECT_OK(aclrtUnmapMem(src + G2));
    EXPECT_OK(aclrtFreePhysical(h1));
    EXPECT_OK(aclrtFreePhysical(h2));
    EXPECT_OK(aclrtReleaseMemAddress(src));
    EXPECT_OK(aclrtReleaseMemAddress(dst));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_mappings_alias, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_copies_span_adjacent_mappings, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_wrong_order, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_retain_counts, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_access_flags, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_bad_inputs, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_product_support, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_finalize_releases, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_threads, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_map_selected_link, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_copies_race_finalize, setup_device0, teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
