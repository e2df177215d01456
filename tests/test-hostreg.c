/*
 * Host registration: the device pointer of registered host memory aliases the
 * host buffer (a kernel's writes appear in it), V2 flags, unregistering,
 * capabilities, product support and bad inputs with CANN's codes.
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

/* Writes base + i into out[i] for each block i. */
void reg_fill(uint32_t *out, uint32_t base) { out[aclsimGetBlockIdx()] = base + aclsimGetBlockIdx(); }
ACLSIM_KERNEL_REGISTER(reg_fill, uint32_t *, uint32_t);

static void *page_buffer(size_t size)
{
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, 4096, size), 0);
    memset(p, 0, size);
    return p;
}

static void test_kernel_writes_host_buffer(void **state)
{
    (void)state;
    uint32_t *host = page_buffer(16384);
    void *dev = NULL;
    EXPECT_OK(aclrtHostRegister(host, 16384, ACL_HOST_REGISTER_MAPPED, &dev));
    assert_non_null(dev);
    void *again = NULL;
    EXPECT_OK(aclrtHostGetDevicePointer(host + 10, &again, 0));
    assert_ptr_equal(again, (char *)dev + 40);
    uint32_t *out = dev;
    uint32_t base = 500;
    void *args[] = {&out, &base};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(reg_fill), 32, NULL, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    for (uint32_t i = 0; i < 32; i++)
        assert_int_equal(host[i], 500 + i);
    /* Registered memory is page-locked host memory to copies and queries. */
    void *d = NULL;
    EXPECT_OK(aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpyAsync(d, 128, host, 128, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    EXPECT_OK(aclrtMemcpyAsync(host + 1024, 128, d, 128, ACL_MEMCPY_DEVICE_TO_HOST, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    assert_memory_equal(host, host + 1024, 128);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns",
               aclrtMemcpy(d, 4096, host + 4000, 1024, ACL_MEMCPY_HOST_TO_DEVICE));
    aclrtPtrAttributes a;
    EXPECT_OK(aclrtPointerGetAttributes(host + 3, &a));
    assert_int_equal(a.location.type, ACL_MEM_LOCATION_TYPE_HOST);
    void *pbase = NULL;
    size_t psize = 0;
    EXPECT_OK(aclrtMemGetAddressRange(host + 3, &pbase, &psize));
    assert_ptr_equal(pbase, host);
    assert_int_equal(psize, 16384);
    /* Twice, overlapping: 507910; unregistering: only at the start. */
    EXPECT_ERR(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "overlap",
               aclrtHostRegister(host + 1024, 4096, ACL_HOST_REGISTER_MAPPED, &dev));
    EXPECT_ERR(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, NULL, aclrtHostUnregister(host + 1));
    EXPECT_OK(aclrtHostUnregister(host));
    EXPECT_ERR(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, NULL, aclrtHostUnregister(host));
    EXPECT_ERR(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, NULL, aclrtHostGetDevicePointer(host, &dev, 0));
    EXPECT_OK(aclrtPointerGetAttributes(host, &a));
    assert_int_equal(a.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
    EXPECT_OK(aclrtFree(d));
    free(host);
}

static void test_v2_and_page_locked(void **state)
{
    (void)state;
    char *host = page_buffer(8192);
    EXPECT_OK(aclrtHostRegisterV2(host, 8192, ACL_HOST_REG_PINNED));
    void *dev = NULL;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "ACL_HOST_REG_MAPPED", aclrtHostGetDevicePointer(host, &dev, 0));
    EXPECT_OK(aclrtHostUnregister(host));
    EXPECT_OK(aclrtHostRegisterV2(host, 8192, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
    EXPECT_OK(aclrtHostGetDevicePointer(host, &dev, 0));
    assert_ptr_equal(dev, host);
    /* Host memory: aclrtMemsetD32Async runs at once, even behind blocked work. */
    struct blocker b;
    blocker_init(&b);
    EXPECT_OK(aclrtLaunchHostFunc(NULL, blocker_fn, &b));
    EXPECT_OK(aclrtMemsetD32Async(host, 8192, 0xfeedf00du, 4, NULL));
    uint32_t word;
    memcpy(&word, host + 12, 4);
    assert_int_equal(word, 0xfeedf00du);
    blocker_release(&b);
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtHostUnregister(host));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "reserved", aclrtHostRegisterV2(host, 8192, ACL_HOST_REG_READONLY));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "reserved", aclrtHostRegisterV2(host, 8192, ACL_HOST_REG_IOMEMORY));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag", aclrtHostRegisterV2(host, 8192, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "flag", aclrtHostRegisterV2(host, 8192, 0x40));
    /* Page-locked memory: MAPPED works (the same address), PINNED is refused. */
    void *pinned = NULL;
    EXPECT_OK(aclrtMallocHost(&pinned, 8192));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "page-locked already",
               aclrtHostRegisterV2(pinned, 8192, ACL_HOST_REG_PINNED));
    EXPECT_OK(aclrtHostRegister(pinned, 8192, ACL_HOST_REGISTER_MAPPED, &dev));
    assert_ptr_equal(dev, pinned);
    EXPECT_OK(aclrtHostUnregister(pinned));
    EXPECT_OK(aclrtFreeHost(pinned));
    /* Device memory cannot be registered. */
    void *d = NULL;
    EXPECT_OK(aclrtMalloc(&d, 8192, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not host memory",
               aclrtHostRegister(d, 4096, ACL_HOST_REGISTER_MAPPED, &dev));
    EXPECT_OK(aclrtFree(d));
    free(host);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    char *host = page_buffer(8192);
    void *dev = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtHostRegister(NULL, 4096, ACL_HOST_REGISTER_MAPPED, &dev));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "devPtr", aclrtHostRegister(host, 4096, ACL_HOST_REGISTER_MAPPED, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "size", aclrtHostRegister(host, 0, ACL_HOST_REGISTER_MAPPED, &dev));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL,
               aclrtHostRegister(host, 4096, ACL_HOST_REGISTER_READONLY, &dev));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "aclrtHostRegisterType",
               aclrtHostRegister(host, 4096, (aclrtHostRegisterType)3, &dev));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "4 KiB",
               aclrtHostRegister(host + 16, 4096, ACL_HOST_REGISTER_MAPPED, &dev));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "flag", aclrtHostGetDevicePointer(host, &dev, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "pDevice", aclrtHostGetDevicePointer(host, NULL, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtHostUnregister(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtHostRegisterV2(NULL, 1, ACL_HOST_REG_MAPPED));
    /* Capabilities: kernels reach registered memory. */
    aclrtHostMemMapCapability c = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
    EXPECT_OK(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIC, &c));
    assert_int_equal(c, ACL_RT_HOST_MEM_MAP_SUPPORTED);
    EXPECT_OK(aclrtHostMemMapCapabilities(1, ACL_RT_HAC_TYPE_AIV, &c));
    assert_int_equal(c, ACL_RT_HOST_MEM_MAP_SUPPORTED);
    EXPECT_OK(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_DVPP, &c));
    assert_int_equal(c, ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "hacType",
               aclrtHostMemMapCapabilities(0, (aclrtHacType)10, &c));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtHostMemMapCapabilities(2, ACL_RT_HAC_TYPE_AIC, &c));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "capabilities",
               aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIC, NULL));
    /* Registration needs a context. */
    EXPECT_OK(aclrtResetDeviceForce(0));
    EXPECT_ERR(ACL_ERROR_RT_CONTEXT_NULL, NULL, aclrtHostRegister(host, 4096, ACL_HOST_REGISTER_MAPPED, &dev));
    /* Products without registration: Atlas inference series. */
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    setenv("ACLSIM_SOC_VERSION", "Ascend310P1", 1);
    assert_int_equal(init_devices("2", "64M"), ACL_SUCCESS);
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL,
               aclrtHostRegister(host, 4096, ACL_HOST_REGISTER_MAPPED, &dev));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtHostUnregister(host));
    EXPECT_OK(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIC, &c));
    free(host);
}

/* Left registered: aclFinalize forgets it (ASan would report the leak). */
static void test_finalize_forgets(void **state)
{
    (void)state;
    static char buf[8192] __attribute__((aligned(4096)));
    void *dev = NULL;
    EXPECT_OK(aclrtHostRegister(buf, sizeof buf, ACL_HOST_REGISTER_MAPPED, &dev));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kernel_writes_host_buffer, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_v2_and_page_locked, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_bad_inputs, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_finalize_forgets, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_finalize_forgets, setup_device0, teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
