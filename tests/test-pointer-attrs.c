/*
 * Unified addressing over every kind of pointer aclsim hands out: device
 * memory, page-locked host memory, registered host memory, managed memory,
 * mapped virtual memory, device-variable instances and ordinary host memory
 * (aclrtPointerGetAttributes, aclrtMemGetAddressRange, aclrtCheckMemType).
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

ACLSIM_DEVICE_VAR(int, attrs_var, [100]);

struct kind {
    const char *name;
    char *ptr;              /* the block's start */
    size_t size;            /* as aclrtMemGetAddressRange reports it */
    int type;               /* aclrtMemLocationType */
    uint32_t id, page;
    uint32_t memtype;       /* ACL_RT_MEM_TYPE_* (0: none) */
};

static void check_kind(const struct kind *k)
{
    aclrtPtrAttributes a;
    memset(&a, 0xee, sizeof a);
    EXPECT_OK(aclrtPointerGetAttributes(k->ptr + 3, &a));
    if ((int)a.location.type != k->type || a.location.id != k->id || a.pageSize != k->page)
        fail_msg("%s: location {%d, %u} page %u, expected {%d, %u} page %u", k->name,
                 (int)a.location.type, a.location.id, a.pageSize, k->type, k->id, k->page);
    void *base = NULL;
    size_t size = 0;
    if (k->size) {
        EXPECT_OK(aclrtMemGetAddressRange(k->ptr + 3, &base, &size));
        if (base != k->ptr || size != k->size)
            fail_msg("%s: range %p + %zu, expected %p + %zu", k->name, base, size, (void *)k->ptr,
                     k->size);
    } else {
        EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "ordinary host memory",
                   aclrtMemGetAddressRange(k->ptr, &base, &size));
    }
    static const uint32_t types[] = {ACL_RT_MEM_TYPE_DEV, ACL_RT_MEM_TYPE_DVPP, ACL_RT_MEM_TYPE_RSVD};
    for (int i = 0; i < 3; i++) {
        uint32_t r = 7;
        void *list[] = {k->ptr};
        EXPECT_OK(aclrtCheckMemType(list, 1, types[i], &r, 0));
        if (r != (types[i] == k->memtype))
            fail_msg("%s: aclrtCheckMemType(0x%x) = %u", k->name, types[i], r);
    }
}

static void test_every_kind(void **state)
{
    (void)state;
    struct kind k[8];
    int n = 0;
    void *p = NULL;
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtMalloc(&p, 3 * MiB, ACL_MEM_MALLOC_HUGE_FIRST));
    k[n++] = (struct kind){"device (large)", p, 3 * MiB, ACL_MEM_LOCATION_TYPE_DEVICE, 1, G2,
                           ACL_RT_MEM_TYPE_DEV};
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtMalloc(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST));
    k[n++] = (struct kind){"device (small)", p, 100, ACL_MEM_LOCATION_TYPE_DEVICE, 0, 4096,
                           ACL_RT_MEM_TYPE_DEV};
    void *var = NULL;
    EXPECT_OK(aclrtGetSymbolAddress(&attrs_var, &var));
    k[n++] = (struct kind){"device variable", var, sizeof(int) * 100, ACL_MEM_LOCATION_TYPE_DEVICE, 0,
                           4096, ACL_RT_MEM_TYPE_DEV};
    EXPECT_OK(aclrtMallocHost(&p, 5000));
    k[n++] = (struct kind){"page-locked", p, 5000, ACL_MEM_LOCATION_TYPE_HOST, 0, 4096, 0};
    static char reg[8192] __attribute__((aligned(4096)));
    EXPECT_OK(aclrtHostRegisterV2(reg, sizeof reg, ACL_HOST_REG_MAPPED));
    k[n++] = (struct kind){"registered", reg, sizeof reg, ACL_MEM_LOCATION_TYPE_HOST, 0, 4096, 0};
    EXPECT_OK(aclrtMemAllocManaged(&p, 10, ACL_RT_MEM_ATTACH_GLOBAL));
    k[n++] = (struct kind){"managed", p, G2, ACL_MEM_LOCATION_TYPE_MANAGED, 0, G2, 0};
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    aclrtDrvMemHandle h = NULL;
    EXPECT_OK(aclrtMallocPhysical(&h, G2, &prop, 0));
    char *v = NULL;
    EXPECT_OK(aclrtReserveMemAddress((void **)&v, 2 * G2, 0, NULL, 0));
    EXPECT_OK(aclrtMapMem(v + G2, G2, 0, h, 0));
    k[n++] = (struct kind){"mapped virtual", v + G2, G2, ACL_MEM_LOCATION_TYPE_DEVICE, 0, G2,
                           ACL_RT_MEM_TYPE_RSVD};
    static char ordinary[64];
    k[n++] = (struct kind){"ordinary host", ordinary, 0, ACL_MEM_LOCATION_TYPE_UNREGISTERED, 0,
                           4096, 0};
    for (int i = 0; i < n; i++)
        check_kind(&k[i]);

    /* A list of several kinds matches the union of their types. */
    void *list[] = {k[0].ptr, k[6].ptr};
    uint32_t r = 9;
    EXPECT_OK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_RSVD, &r, 0));
    assert_int_equal(r, 1);
    EXPECT_OK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &r, 0));
    assert_int_equal(r, 0);
    /* A freed device block is no longer a block. */
    EXPECT_OK(aclrtFree(k[1].ptr));
    void *base;
    size_t size;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "outside any live allocation",
               aclrtMemGetAddressRange(k[1].ptr, &base, &size));
    EXPECT_OK(aclrtMemGetAddressRange(k[3].ptr, NULL, NULL));   /* outputs are optional */

    EXPECT_OK(aclrtUnmapMem(v + G2));
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT_OK(aclrtReleaseMemAddress(v));
    EXPECT_OK(aclrtFree(k[5].ptr));
    EXPECT_OK(aclrtHostUnregister(reg));
    EXPECT_OK(aclrtFreeHost(k[3].ptr));
}

static void test_bad_inputs(void **state)
{
    (void)state;
    aclrtPtrAttributes a;
    int x;
    void *list[] = {&x};
    uint32_t r;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtPointerGetAttributes(NULL, &a));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attributes", aclrtPointerGetAttributes(&x, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtMemGetAddressRange(NULL, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "addrList", aclrtCheckMemType(NULL, 1, ACL_RT_MEM_TYPE_DEV, &r, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "checkResult", aclrtCheckMemType(list, 1, ACL_RT_MEM_TYPE_DEV, NULL, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "size", aclrtCheckMemType(list, 0, ACL_RT_MEM_TYPE_DEV, &r, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "reserve", aclrtCheckMemType(list, 1, ACL_RT_MEM_TYPE_DEV, &r, 1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "memType", aclrtCheckMemType(list, 1, 0x4, &r, 0));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "memType", aclrtCheckMemType(list, 1, 0, &r, 0));
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, aclrtPointerGetAttributes(&x, &a));
    setenv("ACLSIM_SOC_VERSION", "IPV350", 1);
    assert_int_equal(init_devices("2", "64M"), ACL_SUCCESS);
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclrtPointerGetAttributes(&x, &a));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtMemGetAddressRange(&x, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtCheckMemType(list, 1, ACL_RT_MEM_TYPE_DEV, &r, 0));
}

/* Classify under churn: threads query pointers while others reserve, map,
 * register and free (a watchdog-free, bounded number of rounds). */
static void *querier(void *arg)
{
    atomic_int *stop = arg;
    static char buf[64];
    aclrtPtrAttributes a;
    while (!atomic_load(stop))
        if (aclrtPointerGetAttributes(buf, &a) != ACL_SUCCESS ||
            a.location.type != ACL_MEM_LOCATION_TYPE_UNREGISTERED)
            atomic_store(stop, 2);
    return NULL;
}

static void test_concurrent_queries(void **state)
{
    (void)state;
    atomic_int stop = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, querier, &stop), 0);
    for (int i = 0; i < 200 && atomic_load(&stop) == 0; i++) {
        void *m = NULL, *v = NULL;
        EXPECT_OK(aclrtMemAllocManaged(&m, 1, ACL_RT_MEM_ATTACH_GLOBAL));
        EXPECT_OK(aclrtReserveMemAddress(&v, G2, 0, NULL, 0));
        aclrtPtrAttributes a;
        EXPECT_OK(aclrtPointerGetAttributes(m, &a));
        assert_int_equal(a.location.type, ACL_MEM_LOCATION_TYPE_MANAGED);
        EXPECT_OK(aclrtReleaseMemAddress(v));
        EXPECT_OK(aclrtFree(m));
    }
    int seen = atomic_exchange(&stop, 1);
    pthread_join(t, NULL);
    assert_int_equal(seen, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_kind, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_bad_inputs, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_concurrent_queries, setup_device0, teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
