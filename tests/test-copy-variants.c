/*
 * Copy and set variants: aclrtMemcpy2d / aclrtMemcpy2dAsync (pitches, padding
 * untouched, kinds, bad pitches and ranges, pageable waits) and
 * aclrtMemsetD32 / aclrtMemsetD32Async (device and host memory, ordering).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "acl/acl.h"
#include "common.h"

#define W 5       /* bytes per row copied */
#define H 4       /* rows */
#define SP 8      /* source pitch */
#define DP 12     /* device pitch */

static void test_memcpy2d_round_trip(void **state)
{
    (void)state;
    unsigned char host[SP * H], back[SP * H];
    for (int i = 0; i < SP * H; i++)
        host[i] = (unsigned char)(i + 1);
    unsigned char *dev = NULL;
    EXPECT_OK(aclrtMalloc((void **)&dev, DP * H, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(dev, DP * H, 0xee, DP * H));
    EXPECT_OK(aclrtMemcpy2d(dev, DP, host, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE));
    unsigned char image[DP * H];
    EXPECT_OK(aclrtMemcpy(image, sizeof image, dev, DP * H, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int r = 0; r < H; r++)
        for (int c = 0; c < DP; c++)   /* rows moved, padding untouched */
            assert_int_equal(image[r * DP + c], c < W ? host[r * SP + c] : 0xee);
    memset(back, 0x11, sizeof back);
    EXPECT_OK(aclrtMemcpy2d(back, SP, dev, DP, W, H, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int r = 0; r < H; r++)
        for (int c = 0; c < SP; c++)
            assert_int_equal(back[r * SP + c], c < W ? host[r * SP + c] : 0x11);
    EXPECT_OK(aclrtFree(dev));
}

static void test_memcpy2d_async(void **state)
{
    (void)state;
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    unsigned char *pinned = NULL, *dev = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&pinned, SP * H));
    EXPECT_OK(aclrtMalloc((void **)&dev, DP * H, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < SP * H; i++)
        pinned[i] = (unsigned char)(3 * i);
    /* Page-locked host memory: stream-ordered, after a memset on the same stream. */
    EXPECT_OK(aclrtMemsetAsync(dev, DP * H, 0, DP * H, s));
    EXPECT_OK(aclrtMemcpy2dAsync(dev, DP, pinned, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE, s));
    /* Pageable destination: complete when the call returns. */
    unsigned char out[DP * H];
    memset(out, 0x5a, sizeof out);
    EXPECT_OK(aclrtMemcpy2dAsync(out, DP, dev, DP, W, H, ACL_MEMCPY_DEVICE_TO_HOST, s));
    for (int r = 0; r < H; r++)
        for (int c = 0; c < DP; c++)
            assert_int_equal(out[r * DP + c], c < W ? pinned[r * SP + c] : 0x5a);
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtFreeHost(pinned));
}

static void test_memcpy2d_bad_input(void **state)
{
    (void)state;
    unsigned char host[64];
    unsigned char *dev = NULL;
    EXPECT_OK(aclrtMalloc((void **)&dev, 40, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dpitch", aclrtMemcpy2d(dev, 4, host, 8, 5, 2, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "spitch", aclrtMemcpy2d(dev, 8, host, 4, 5, 2, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not supported", aclrtMemcpy2d(dev, 8, dev, 8, 5, 2, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "height", aclrtMemcpy2d(dev, 8, host, 8, 5, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    /* 40 bytes hold rows at 0, 12, 24 of 5 bytes, not a fourth at 36. */
    EXPECT_OK(aclrtMemcpy2d(dev, 12, host, 8, 5, 3, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtMemcpy2d(dev, 12, host, 8, 5, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "device memory expected", aclrtMemcpy2d(host, 8, host, 8, 5, 2, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overflows", aclrtMemcpy2d(dev, SIZE_MAX / 2, host, 8, 5, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "NULL", aclrtMemcpy2dAsync(NULL, 8, host, 8, 5, 2, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    EXPECT_OK(aclrtFree(dev));
}

static void test_memset_d32(void **state)
{
    (void)state;
    uint32_t *dev = NULL, *pinned = NULL;
    EXPECT_OK(aclrtMalloc((void **)&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMallocHost((void **)&pinned, 64));
    EXPECT_OK(aclrtMemset(dev, 64, 0, 64));
    EXPECT_OK(aclrtMemsetD32(dev, 64, 0xdeadbeefu, 10));
    uint32_t out[16];
    EXPECT_OK(aclrtMemcpy(out, sizeof out, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 16; i++)
        assert_int_equal(out[i], i < 10 ? 0xdeadbeefu : 0);
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtMemsetD32Async(dev, 64, 7, 16, s));
    EXPECT_OK(aclrtMemcpyAsync(pinned, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST, s));   /* ordered after */
    EXPECT_OK(aclrtSynchronizeStream(s));
    for (int i = 0; i < 16; i++)
        assert_int_equal(pinned[i], 7);
    /* Host memory: done when the call returns, not a stream task. */
    EXPECT_OK(aclrtMemsetD32Async(pinned, 64, 9, 4, s));
    assert_int_equal(pinned[3], 9);
    assert_int_equal(pinned[4], 7);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memSize", aclrtMemsetD32(dev, 64, 1, 17));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "aligned", aclrtMemsetD32((char *)dev + 2, 60, 1, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ordinary host memory", aclrtMemsetD32(out, 64, 1, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtMemsetD32(dev + 8, 64, 1, 16));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "NULL", aclrtMemsetD32Async(NULL, 64, 1, 1, s));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtFreeHost(pinned));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_device0, teardown_device0)
    const struct CMUnitTest tests[] = {
        T(test_memcpy2d_round_trip),
        T(test_memcpy2d_async),
        T(test_memcpy2d_bad_input),
        T(test_memset_d32),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
