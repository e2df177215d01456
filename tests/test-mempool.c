/*
 * Stream-ordered memory pools (acl/acl_rt_memory_soma.h): creation rules and
 * attributes, allocations and frees ordered with their streams' other work,
 * the reuse policies (same stream, event dependencies, opportunistic, internal
 * dependencies), trimming and the release threshold, limits, device resets,
 * and threads sharing a pool.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"
#include "aclsim/aclsim.h"
#include "common.h"
#include "watchdog.h"

#define B2 (2 * MiB)

/* A kernel that holds its stream until the test opens kernel_gate (at most
 * WAIT_MS), then writes v + block index to out. */
static atomic_int kernel_gate, kernel_running;
void pool_kernel(uint32_t *out, uint32_t v)
{
    atomic_store(&kernel_running, 1);
    for (int i = 0; i < WAIT_MS && !atomic_load(&kernel_gate); i++)
        sleep_ms(1);
    out[aclsimGetBlockIdx()] = v + aclsimGetBlockIdx();
}
ACLSIM_KERNEL_REGISTER(pool_kernel, uint32_t *, uint32_t);

static aclrtMemPoolProps props(uint32_t dev, size_t max)
{
    aclrtMemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    p.maxSize = max;
    return p;
}

static aclrtMemPool pool_new(size_t max)
{
    aclrtMemPoolProps p = props(0, max);
    aclrtMemPool pool = NULL;
    EXPECT_OK(aclrtMemPoolCreate(&pool, &p));
    assert_non_null(pool);
    return pool;
}

static uint64_t attr64(aclrtMemPool pool, aclrtMemPoolAttr a)
{
    uint64_t v = 12345;
    EXPECT_OK(aclrtMemPoolGetAttr(pool, a, &v));
    return v;
}

static void set_flag(aclrtMemPool pool, aclrtMemPoolAttr a, uint32_t v)
{
    EXPECT_OK(aclrtMemPoolSetAttr(pool, a, &v));
}

static void *pool_alloc(aclrtMemPool pool, size_t size, aclrtStream s)
{
    void *p = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&p, size, pool, s));
    assert_non_null(p);
    return p;
}

static aclrtStream stream_new(void)
{
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    return s;
}

/* ---- creation ------------------------------------------------------------------ */

static void test_create_rules(void **state)
{
    (void)state;
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps p = props(0, 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memPool", aclrtMemPoolCreate(NULL, &p));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "poolProps", aclrtMemPoolCreate(&pool, NULL));
    p.allocType = (aclrtMemAllocationType)1;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "allocType", aclrtMemPoolCreate(&pool, &p));
    p = props(0, 0);
    p.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "location.type", aclrtMemPoolCreate(&pool, &p));
    p = props(0, 0);
    p.reserved[31] = 1;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "reserved", aclrtMemPoolCreate(&pool, &p));
    p = props(0, 0);
    p.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "handleType", aclrtMemPoolCreate(&pool, &p));
    p = props(5, 0);
    EXPECT_ERR(ACL_ERROR_RT_INVALID_DEVICEID, NULL, aclrtMemPoolCreate(&pool, &p));
    p = props(1, 0);   /* device 1 exists but is not set */
    EXPECT_ERR(ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice(1)", aclrtMemPoolCreate(&pool, &p));
    p = props(0, 64 * MiB + 1);   /* rounded up past the 64M device */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "maxSize", aclrtMemPoolCreate(&pool, &p));
    assert_null(pool);
    /* maxSize 0: the whole device. */
    pool = pool_new(0);
    uint64_t t = 64 * MiB;
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &t));
    t++;
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "exceeds",
               aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &t));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "not a live memory pool", aclrtMemPoolDestroy(pool));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memPool", aclrtMemPoolDestroy(NULL));
    /* Device 1 once set. */
    EXPECT_OK(aclrtSetDevice(1));
    p = props(1, B2);
    EXPECT_OK(aclrtMemPoolCreate(&pool, &p));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtSetDevice(0));
}

static void test_maxsize_is_a_limit(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(3 * MiB);   /* rounded up to 4 MiB */
    aclrtStream s = stream_new();
    void *a = pool_alloc(pool, 1, s), *b = pool_alloc(pool, B2, s), *c = NULL;
    assert_ptr_not_equal(a, b);
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 4 * MiB);
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "full", aclrtMemPoolMallocAsync(&c, 1, pool, s));
    assert_null(c);
    /* A pool as big as the device: the device runs out first (207001). */
    aclrtMemPool big = pool_new(0);
    EXPECT_ERR(ACL_ERROR_RT_MEMORY_ALLOCATION, "memory is full",
               aclrtMemPoolMallocAsync(&c, 62 * MiB, big, s));
    assert_null(c);
    EXPECT_OK(aclrtMemPoolFreeAsync(a, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(b, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtMemPoolDestroy(big));
    EXPECT_OK(aclrtDestroyStream(s));
}

static void test_not_on_other_products(void **state)
{
    (void)state;
    reinit_with_soc("Ascend910_9391");   /* Atlas A3: not supported */
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps p = props(0, 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memPool", aclrtMemPoolCreate(NULL, &p));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtMemPoolCreate(&pool, &p));
    void *ptr = NULL;
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL,
               aclrtMemPoolMallocAsync(&ptr, 1, (aclrtMemPool)&p, (aclrtStream)&p));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtMemPoolFreeAsync(&p, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL, aclrtMemPoolTrimTo((aclrtMemPool)&p, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memPool", aclrtMemPoolTrimTo(NULL, 0));
}

/* ---- attributes ------------------------------------------------------------------ */

static void test_attributes(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(16 * MiB);
    uint32_t f = 7;
    for (int a = ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES;
         a <= ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES; a++) {
        EXPECT_OK(aclrtMemPoolGetAttr(pool, (aclrtMemPoolAttr)a, &f));
        assert_int_equal(f, 0);   /* CANN's defaults: only single-stream reuse */
        set_flag(pool, (aclrtMemPoolAttr)a, 5);
        EXPECT_OK(aclrtMemPoolGetAttr(pool, (aclrtMemPoolAttr)a, &f));
        assert_int_equal(f, 1);   /* any nonzero value turns it on */
        set_flag(pool, (aclrtMemPoolAttr)a, 0);
        EXPECT_OK(aclrtMemPoolGetAttr(pool, (aclrtMemPoolAttr)a, &f));
        assert_int_equal(f, 0);
    }
    for (int a = ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD; a <= ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH; a++)
        assert_int_equal(attr64(pool, (aclrtMemPoolAttr)a), 0);
    uint64_t v = 4 * MiB;
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &v));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD), 4 * MiB);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "read-only",
               aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &v));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "read-only",
               aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, &v));
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "reset, to 0",
               aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &v));
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "not an aclrtMemPoolAttr",
               aclrtMemPoolSetAttr(pool, (aclrtMemPoolAttr)9, &v));
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "not an aclrtMemPoolAttr",
               aclrtMemPoolGetAttr(pool, (aclrtMemPoolAttr)0, &v));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "value",
               aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "value",
               aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memPool",
               aclrtMemPoolGetAttr(NULL, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &v));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD), 4 * MiB);

    /* The peaks follow the figures and reset to 0 only. */
    aclrtStream s = stream_new();
    void *a = pool_alloc(pool, 3 * MiB, s), *b = pool_alloc(pool, 1, s);
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 6 * MiB);
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 6 * MiB);
    EXPECT_OK(aclrtMemPoolFreeAsync(a, s));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 2 * MiB);
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), 6 * MiB);
    v = 0;
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &v));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), 0);
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, &v));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 0);
    EXPECT_OK(aclrtMemPoolFreeAsync(b, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a live memory pool",
               aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &v));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a live memory pool",
               aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &v));
    EXPECT_OK(aclrtDestroyStream(s));
}

/* ---- allocation and free ---------------------------------------------------------- */

static void test_malloc_free_bad_input(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(16 * MiB);
    aclrtStream s = stream_new();
    void *p = (void *)0x1;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtMemPoolMallocAsync(NULL, 8, pool, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memPool", aclrtMemPoolMallocAsync(&p, 8, NULL, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtMemPoolMallocAsync(&p, 8, pool, NULL));
    EXPECT_OK(aclrtMemPoolMallocAsync(&p, 0, pool, s));   /* as CANN: nothing, ptr untouched */
    assert_ptr_equal(p, (void *)0x1);
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "overflows",
               aclrtMemPoolMallocAsync(&p, SIZE_MAX, pool, s));
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "full",
               aclrtMemPoolMallocAsync(&p, 16 * MiB + 1, pool, s));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 0);

    p = pool_alloc(pool, 100, s);
    char host[16];
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ptr", aclrtMemPoolFreeAsync(NULL, s));
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "stream is NULL", aclrtMemPoolFreeAsync(p, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "inside", aclrtMemPoolFreeAsync((char *)p + 64, s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "neither", aclrtMemPoolFreeAsync(host, s));
    /* Pool memory is not aclrtMalloc memory. */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "aclrtMalloc", aclrtFree(p));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), B2);
    /* A stream of another device. */
    EXPECT_OK(aclrtSetDevice(1));
    aclrtStream s1 = stream_new();
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CONTEXT, NULL, aclrtMemPoolFreeAsync(p, s1));
    EXPECT_ERR(ACL_ERROR_RT_STREAM_CONTEXT, NULL, aclrtMemPoolMallocAsync(&p, 8, pool, s1));
    /* With device 1 current: its stream cannot order device 0's pool memory. */
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device 0's", aclrtMemPoolFreeAsync(p, s1));
    void *other = NULL;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device 0's",
               aclrtMemPoolMallocAsync(&other, 8, pool, s1));
    assert_null(other);
    EXPECT_OK(aclrtSetDevice(0));
    void *d = NULL;
    EXPECT_OK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "device 0's", aclrtMemPoolFreeAsync(d, s1));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtFree(d));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), B2);
    EXPECT_OK(aclrtMemPoolFreeAsync(p, s));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "already freed", aclrtMemPoolFreeAsync(p, s));
    EXPECT_OK(aclrtMemPoolDestroy(pool));   /* nothing in use: the queued free finishes it */
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "not a live memory pool",
               aclrtMemPoolMallocAsync(&p, 8, pool, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtDestroyStream(s1));
    EXPECT_OK(aclrtSetDevice(0));
}

/* The memory is device memory of the pool's device, usable by copies. */
static void test_memory_is_device_memory(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(0);
    aclrtStream s = stream_new();
    size_t free0, total, free1;
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total));
    char *p = pool_alloc(pool, 3 * MiB, s);
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total));
    assert_int_equal(free0 - free1, 4 * MiB);
    aclrtPtrAttributes at;
    EXPECT_OK(aclrtPointerGetAttributes(p + 5, &at));
    assert_int_equal(at.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
    assert_int_equal(at.location.id, 0);
    void *base = NULL;
    size_t size = 0;
    EXPECT_OK(aclrtMemGetAddressRange(p + 5, &base, &size));
    assert_ptr_equal(base, p);
    assert_int_equal(size, 4 * MiB);
    uint32_t in[64], out[64];
    for (int i = 0; i < 64; i++)
        in[i] = 0x1000u + (uint32_t)i;
    EXPECT_OK(aclrtMemcpy(p + 3 * MiB, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpyAsync(p, sizeof in, p + 3 * MiB, sizeof in, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtMemcpy(out, sizeof out, p, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(in, out, sizeof in);
    aclrtMemUsageInfo rows[8];
    size_t n = 0;
    EXPECT_OK(aclrtGetMemUsageInfo(0, rows, 8, &n));
    bool found = false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].name, "mem_pool") == 0 && rows[i].curMemSize == 4 * MiB)
            found = true;
    assert_true(found);
    EXPECT_OK(aclrtMemPoolFreeAsync(p, s));
    EXPECT_OK(aclrtSynchronizeStream(s));   /* threshold 0: the idle block goes back */
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total));
    assert_int_equal(free1, free0);
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 0);
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtDestroyStream(s));
}

/* A free queued behind work does not make the memory idle before the stream
 * reaches it; an allocation later on the same stream reuses it at once, and
 * the data flows in stream order. */
static void test_free_is_stream_ordered(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(0);
    aclrtStream s = stream_new(), t = stream_new();
    struct blocker blk;
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    uint32_t *h = NULL;   /* page-locked: the copies do not wait for the stream */
    EXPECT_OK(aclrtMallocHost((void **)&h, 16));
    h[0] = 0xA, h[1] = 0xB, h[2] = 0, h[3] = 0;
    uint32_t *a = &h[0], *b = &h[1], *got_a = &h[2], *got_b = &h[3];
    uint32_t *p = pool_alloc(pool, 4, s);
    EXPECT_OK(aclrtMemcpyAsync(p, 4, a, 4, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_OK(aclrtMemcpyAsync(got_a, 4, p, 4, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(p, s));
    /* Another stream without a dependency: a new block. */
    uint32_t *q = pool_alloc(pool, 4, t);
    assert_ptr_not_equal(q, p);
    /* The same stream: the freed block, ordered after the free. */
    uint32_t *r = pool_alloc(pool, 4, s);
    assert_ptr_equal(r, p);
    EXPECT_OK(aclrtMemcpyAsync(r, 4, b, 4, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_OK(aclrtMemcpyAsync(got_b, 4, r, 4, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(r, s));
    /* Trimming cannot take memory whose free the stream has not reached. */
    EXPECT_OK(aclrtMemPoolFreeAsync(q, t));
    EXPECT_OK(aclrtSynchronizeStream(t));
    EXPECT_OK(aclrtMemPoolTrimTo(pool, 0));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), B2);
    /* Nothing on s ran yet. (An early read on purpose: what the checker's
     * early-host-access detector reports, so left out when it is on.) */
    if (!checking_early_host_access())
        assert_int_equal(*got_a, 0);
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_false(blocker_timed_out(&blk));
    assert_int_equal(*got_a, 0xA);
    assert_int_equal(*got_b, 0xB);
    EXPECT_OK(aclrtFreeHost(h));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 0);
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtDestroyStream(t));
}

/* A free queued after a kernel that uses the memory: while the kernel runs,
 * the memory is neither reused by another stream nor given back; the
 * kernel's writes land; the stream's next allocation reuses it in order. */
static void test_free_after_kernel(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(0);
    set_flag(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 1);
    aclrtStream s = stream_new(), t = stream_new();
    uint32_t *h = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&h, 4 * sizeof *h));
    memset(h, 0, 4 * sizeof *h);
    atomic_store(&kernel_gate, 0);
    atomic_store(&kernel_running, 0);
    uint32_t *p = pool_alloc(pool, 16, s), v = 500;
    void *args[] = {&p, &v};
    /* One block: the device's other worker stays free for stream t. */
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(pool_kernel), 1, s, NULL, args));
    EXPECT_OK(aclrtMemcpyAsync(h, 16, p, 16, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(p, s));
    for (int i = 0; i < WAIT_MS && !atomic_load(&kernel_running); i++)
        sleep_ms(1);
    assert_int_equal(atomic_load(&kernel_running), 1);
    void *q = pool_alloc(pool, 16, t);   /* the kernel still runs: not p */
    assert_ptr_not_equal(q, p);
    EXPECT_OK(aclrtMemPoolFreeAsync(q, t));
    EXPECT_OK(aclrtSynchronizeStream(t));   /* gives back q's block, not p's */
    EXPECT_OK(aclrtMemPoolTrimTo(pool, 0));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), B2);
    uint32_t *r = pool_alloc(pool, 16, s);   /* same stream: p, after the kernel */
    assert_ptr_equal(r, p);
    EXPECT_OK(aclrtMemsetAsync(r, 16, 0, 16, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(r, s));
    atomic_store(&kernel_gate, 1);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_int_equal(h[0], 500);   /* the kernel's write, copied out before the free */
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 0);
    EXPECT_OK(aclrtFreeHost(h));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtDestroyStream(t));
}

/* The closest size wins among reusable blocks. */
static void test_closest_size(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(0);
    aclrtStream s = stream_new();
    uint64_t keep = 64 * MiB;
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &keep));
    void *big = pool_alloc(pool, 8 * MiB, s), *mid = pool_alloc(pool, 4 * MiB, s),
         *small = pool_alloc(pool, 1, s);
    EXPECT_OK(aclrtMemPoolFreeAsync(big, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(mid, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(small, s));
    EXPECT_OK(aclrtSynchronizeStream(s));   /* under the threshold: kept */
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 14 * MiB);
    assert_ptr_equal(pool_alloc(pool, 3 * MiB, s), mid);
    assert_ptr_equal(pool_alloc(pool, 1 * MiB, s), small);
    assert_ptr_equal(pool_alloc(pool, 1 * MiB, s), big);   /* the only one left */
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 14 * MiB);
    EXPECT_OK(aclrtMemPoolFreeAsync(big, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(mid, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(small, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    /* Trim: idle blocks go, smallest first, until at most minBytesToKeep remain. */
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "exceeds", aclrtMemPoolTrimTo(pool, 65 * MiB));
    EXPECT_OK(aclrtMemPoolTrimTo(pool, 12 * MiB));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 12 * MiB);
    EXPECT_OK(aclrtMemPoolTrimTo(pool, 9 * MiB));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 8 * MiB);
    void *x = pool_alloc(pool, 1, s);
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "in use", aclrtMemPoolTrimTo(pool, 1 * MiB));
    EXPECT_OK(aclrtMemPoolTrimTo(pool, 0 + 8 * MiB));
    EXPECT_OK(aclrtMemPoolFreeAsync(x, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtMemPoolTrimTo(pool, 0));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "memPool", aclrtMemPoolTrimTo(NULL, 0));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "not a live", aclrtMemPoolTrimTo(pool, 0));
    EXPECT_OK(aclrtDestroyStream(s));
}

/* ---- reuse between streams --------------------------------------------------------- */

/* REUSE_FOLLOW_EVENT_DEPENDENCIES: a stream that waits for an event recorded
 * after the free reuses the block; before the wait, or with the record
 * before the free, it does not. */
static void test_event_dependency_reuse(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(0);
    uint64_t keep = 64 * MiB;
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &keep));
    aclrtStream s = stream_new(), t = stream_new();
    aclrtEvent early, late;
    EXPECT_OK(aclrtCreateEvent(&early));
    EXPECT_OK(aclrtCreateEvent(&late));
    struct blocker blk;
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));   /* nothing on s runs meanwhile */
    void *p = pool_alloc(pool, 8, s);
    EXPECT_OK(aclrtRecordEvent(early, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(p, s));
    EXPECT_OK(aclrtRecordEvent(late, s));
    /* Switched off (CANN's default): no reuse, even after the wait. */
    EXPECT_OK(aclrtStreamWaitEvent(t, late));
    void *q = pool_alloc(pool, 8, t);
    assert_ptr_not_equal(q, p);
    set_flag(pool, ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES, 1);
    aclrtStream u = stream_new(), v = stream_new();
    EXPECT_OK(aclrtStreamWaitEvent(u, early));   /* recorded before the free */
    void *r = pool_alloc(pool, 8, u);
    assert_ptr_not_equal(r, p);
    void *w = pool_alloc(pool, 8, v);            /* no wait at all */
    assert_ptr_not_equal(w, p);
    EXPECT_OK(aclrtStreamWaitEvent(v, late));
    void *x = pool_alloc(pool, 8, v);
    assert_ptr_equal(x, p);
    /* And its work runs after the free: v is held by s. */
    atomic_int n = 0;
    assert_stream_held(v, &n, 50);
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(v));
    assert_int_equal(atomic_load(&n), 1);
    EXPECT_OK(aclrtSynchronizeStream(s));
    void *all[] = {q, r, w, x};
    aclrtStream on[] = {t, u, v, v};
    for (int i = 0; i < 4; i++)
        EXPECT_OK(aclrtMemPoolFreeAsync(all[i], on[i]));
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtDestroyEvent(early));
    EXPECT_OK(aclrtDestroyEvent(late));
    aclrtStream streams[] = {s, t, u, v};
    for (int i = 0; i < 4; i++)
        EXPECT_OK(aclrtDestroyStream(streams[i]));
}

/* REUSE_ALLOW_OPPORTUNISTIC: another stream reuses the block once the free
 * has run, not before. */
static void test_opportunistic_reuse(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(0);
    uint64_t keep = 64 * MiB;
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &keep));
    set_flag(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 1);
    aclrtStream s = stream_new(), t = stream_new();
    struct blocker blk;
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    void *p = pool_alloc(pool, 8, s);
    EXPECT_OK(aclrtMemPoolFreeAsync(p, s));
    void *q = pool_alloc(pool, 8, t);   /* the free has not run */
    assert_ptr_not_equal(q, p);
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(s));
    void *r = pool_alloc(pool, 8, t);
    assert_ptr_equal(r, p);
    EXPECT_OK(aclrtMemPoolFreeAsync(q, t));
    EXPECT_OK(aclrtMemPoolFreeAsync(r, t));
    EXPECT_OK(aclrtSynchronizeStream(t));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtDestroyStream(t));
}

/* REUSE_ALLOW_INTERNAL_DEPENDENCIES: another stream reuses the block at once,
 * and the runtime makes it wait for the free. */
static void test_internal_dependency_reuse(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(0);
    set_flag(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES, 1);
    aclrtStream s = stream_new(), t = stream_new();
    struct blocker blk;
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    uint32_t *h = NULL, seen = 0;   /* page-locked: the copies do not wait */
    EXPECT_OK(aclrtMallocHost((void **)&h, 8));
    h[0] = 1, h[1] = 2;
    uint32_t *p = pool_alloc(pool, 4, s);
    EXPECT_OK(aclrtMemcpyAsync(p, 4, &h[0], 4, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_OK(aclrtMemPoolFreeAsync(p, s));
    uint32_t *q = pool_alloc(pool, 4, t);
    assert_ptr_equal(q, p);
    EXPECT_OK(aclrtMemcpyAsync(q, 4, &h[1], 4, ACL_MEMCPY_HOST_TO_DEVICE, t));
    atomic_int n = 0;
    assert_stream_held(t, &n, 50);   /* t waits for s's free */
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(t));
    assert_int_equal(atomic_load(&n), 1);
    EXPECT_OK(aclrtMemcpy(&seen, 4, q, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(seen, 2);   /* t's write came after s's */
    EXPECT_OK(aclrtFreeHost(h));
    EXPECT_OK(aclrtMemPoolFreeAsync(q, t));
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtDestroyStream(t));
}

/* ---- release threshold, aclrtMalloc memory, lifetime ------------------------------- */

static void test_release_threshold(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(0);
    aclrtStream s = stream_new();
    uint64_t keep = 4 * MiB;
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &keep));
    void *p[4];
    for (int i = 0; i < 4; i++)
        p[i] = pool_alloc(pool, B2, s);
    for (int i = 0; i < 4; i++)
        EXPECT_OK(aclrtMemPoolFreeAsync(p[i], s));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 8 * MiB);
    EXPECT_OK(aclrtSynchronizeStream(s));
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 4 * MiB);
    keep = 0;
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &keep));
    EXPECT_OK(aclrtSynchronizeDevice());
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 0);
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 8 * MiB);
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtDestroyStream(s));
}

/* aclrtMemPoolFreeAsync of aclrtMalloc memory frees it when the stream
 * reaches the free, as CANN does. */
static void test_free_async_of_malloc_memory(void **state)
{
    (void)state;
    aclrtStream s = stream_new();
    size_t free0, free1, total;
    void *d = NULL;
    EXPECT_OK(aclrtMalloc(&d, 4 * MiB, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total));
    struct blocker blk;
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    EXPECT_OK(aclrtMemPoolFreeAsync(d, s));
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total));
    assert_int_equal(free1, free0);   /* still allocated */
    EXPECT_OK(aclrtMemset(d, 16, 0, 16));
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total));
    assert_true(free1 >= free0 + 4 * MiB);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not the start of a live", aclrtFree(d));
    EXPECT_OK(aclrtDestroyStream(s));
}

/* Destroying a pool whose free is still queued: the block goes back when the
 * stream reaches the free. A device reset ends every pool of the device. */
static void test_destroy_and_reset(void **state)
{
    (void)state;
    aclrtMemPool pool = pool_new(0);
    aclrtStream s = stream_new();
    size_t free0, free1, total;
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total));
    struct blocker blk;
    blocker_init(&blk);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &blk));
    void *p = pool_alloc(pool, 8, s);
    EXPECT_ERR(ACL_ERROR_RT_INTERNAL_ERROR, "in use", aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtMemPoolFreeAsync(p, s));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total));
    assert_int_equal(free0 - free1, B2);   /* still in use by queued work */
    blocker_release(&blk);
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total));
    assert_int_equal(free1, free0);
    EXPECT_OK(aclrtDestroyStream(s));

    pool = pool_new(0);
    s = stream_new();
    p = pool_alloc(pool, 8, s);
    (void)p;
    EXPECT_OK(aclrtResetDeviceForce(0));
    uint64_t v;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a live memory pool",
               aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &v));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total));
    assert_int_equal(free1, total);
}

/* ---- threads ------------------------------------------------------------------------- */

#define THREADS 4
#define ROUNDS 200

struct worker {
    aclrtContext ctx;
    aclrtMemPool pool;
    uint32_t id;
    atomic_int *errors;
    char *err;
    double deadline;   /* now_seconds() past which no new round starts */
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    char buf[160];
    if (aclrtSetCurrentContext(w->ctx) != ACL_SUCCESS) {
        note_first_error(w->errors, w->err, 160, "thread %u: set context", w->id);
        return NULL;
    }
    aclrtStream s = NULL;
    if (aclrtCreateStream(&s) != ACL_SUCCESS) {
        note_first_error(w->errors, w->err, 160, "thread %u: stream", w->id);
        return NULL;
    }
    for (uint32_t r = 0; r < ROUNDS && now_seconds() < w->deadline; r++) {
        watchdog_arm((int)w->id, "test-mempool worker round", r, 30.0);
        uint32_t *p = NULL, in[8], out[8];
        size_t size = (r % 3 + 1) * MiB;
        for (int i = 0; i < 8; i++)
            in[i] = w->id << 24 | r << 8 | (uint32_t)i;
        memset(out, 0, sizeof out);
        aclError e = aclrtMemPoolMallocAsync((void **)&p, size, w->pool, s);
        if (e == ACL_ERROR_RT_INTERNAL_ERROR || e == ACL_ERROR_RT_MEMORY_ALLOCATION) {
            drain_msg();   /* full for now: others hold blocks */
            if (aclrtSynchronizeStream(s) != ACL_SUCCESS)
                break;
            continue;
        }
        if (e || aclrtMemcpyAsync(p, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE, s) ||
            aclrtMemcpyAsync(out, sizeof out, p, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST, s) ||
            aclrtMemPoolFreeAsync(p, s) || aclrtSynchronizeStream(s)) {
            snprintf(buf, sizeof buf, "thread %u round %u: a call failed", w->id, r);
            note_first_error(w->errors, w->err, 160, "%s", buf);
            break;
        }
        if (memcmp(in, out, sizeof in) != 0) {
            note_first_error(w->errors, w->err, 160, "thread %u round %u: data", w->id, r);
            break;
        }
    }
    watchdog_disarm((int)w->id);
    (void)aclrtDestroyStream(s);
    return NULL;
}

static void *toggler_main(void *arg)
{
    struct worker *w = arg;
    (void)aclrtSetCurrentContext(w->ctx);
    for (uint32_t r = 0; r < ROUNDS && now_seconds() < w->deadline; r++) {
        uint32_t f = r & 1;
        uint64_t v = 0;
        if (aclrtMemPoolSetAttr(w->pool, (aclrtMemPoolAttr)(1 + r % 3), &f) ||
            aclrtMemPoolGetAttr(w->pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &v))
            note_first_error(w->errors, w->err, 160, "toggler round %u", r);
        if (aclrtMemPoolTrimTo(w->pool, 64 * MiB) != ACL_SUCCESS)
            drain_msg();   /* bigger than the pool: refused, fine */
        (void)aclrtMemPoolTrimTo(w->pool, v <= 16 * MiB ? 16 * MiB : v);
        drain_msg();
    }
    return NULL;
}

static void test_threads_share_a_pool(void **state)
{
    (void)state;
    watchdog_start();
    aclrtMemPool pool = pool_new(24 * MiB);
    atomic_int errors = 0;
    char err[160] = "";
    pthread_t th[THREADS + 1];
    struct worker w[THREADS + 1];
    double deadline = now_seconds() + time_budget(3.0);
    for (uint32_t i = 0; i <= THREADS; i++) {
        w[i] = (struct worker){current_context(), pool, i, &errors, err, deadline};
        assert_int_equal(pthread_create(&th[i], NULL, i < THREADS ? worker_main : toggler_main,
                                        &w[i]), 0);
    }
    for (int i = 0; i <= THREADS; i++)
        pthread_join(th[i], NULL);
    if (atomic_load(&errors))
        fail_msg("%d errors, first: %s", atomic_load(&errors), err);
    EXPECT_OK(aclrtSynchronizeDevice());
    assert_int_equal(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 0);
    EXPECT_OK(aclrtMemPoolDestroy(pool));
}

/* A device reset racing a thread that allocates and frees from a pool of that
 * device: the thread's calls fail cleanly once the pool or its stream is gone;
 * nothing crashes, hangs or leaks. */
struct racer {
    aclrtContext ctx;
    aclrtStream stream;
    aclrtMemPool pool;
    atomic_int unexpected;
    atomic_bool started;
    int code;   /* the unexpected code */
};

static void racer_fn(void *arg)
{
    struct racer *r = arg;
    if (aclrtSetCurrentContext(r->ctx) != ACL_SUCCESS)
        return;
    for (int i = 0; i < 100000; i++) {
        void *p = NULL;
        aclError e = aclrtMemPoolMallocAsync(&p, 4096, r->pool, r->stream);
        atomic_store(&r->started, true);
        if (!e && (e = aclrtMemsetAsync(p, 4096, i & 0xff, 4096, r->stream)) == ACL_SUCCESS)
            e = aclrtMemPoolFreeAsync(p, r->stream);
        if (e) {
            if (e != ACL_ERROR_RT_INTERNAL_ERROR && e != ACL_ERROR_RT_INVALID_HANDLE &&
                e != ACL_ERROR_RT_CONTEXT_NULL && e != ACL_ERROR_RT_PARAM_INVALID &&
                e != ACL_ERROR_RT_STREAM_CONTEXT && e != ACL_ERROR_INVALID_PARAM /* memory gone */)
                r->code = e, atomic_fetch_add(&r->unexpected, 1);
            return;
        }
    }
}

static void test_reset_races_pool_use(void **state)
{
    (void)state;
    watchdog_start();
    int rounds = under_sanitizer() ? 10 : 40;
    for (int round = 0; round < rounds; round++) {
        watchdog_arm(0, "test-mempool reset race round", round, 30.0);
        EXPECT_OK(aclrtSetDevice(1));
        aclrtMemPoolProps p = props(1, 16 * MiB);
        struct racer r = {.ctx = current_context()};
        EXPECT_OK(aclrtMemPoolCreate(&r.pool, &p));
        r.stream = stream_new();
        struct call c;
        call_start(&c, racer_fn, &r);
        for (int i = 0; i < 2000 && !atomic_load(&r.started); i++)
            sleep_ms(1);
        sleep_ms(round % 3);
        EXPECT_OK(aclrtResetDeviceForce(1));
        assert_true(call_wait(&c, WAIT_MS));
        if (atomic_load(&r.unexpected))
            fail_msg("round %d: the racing thread got %d", round, r.code);
        uint64_t v;
        EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "not a live memory pool",
                   aclrtMemPoolGetAttr(r.pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &v));
        watchdog_disarm(0);
    }
    EXPECT_OK(aclrtSetDevice(0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_rules, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_maxsize_is_a_limit, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_not_on_other_products, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_attributes, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_malloc_free_bad_input, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_memory_is_device_memory, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_free_is_stream_ordered, setup_gated, teardown_gated),
        cmocka_unit_test_setup_teardown(test_free_after_kernel, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_closest_size, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_event_dependency_reuse, setup_gated, teardown_gated),
        cmocka_unit_test_setup_teardown(test_opportunistic_reuse, setup_gated, teardown_gated),
        cmocka_unit_test_setup_teardown(test_internal_dependency_reuse, setup_gated,
                                        teardown_gated),
        cmocka_unit_test_setup_teardown(test_release_threshold, setup_device0, teardown_device0),
        cmocka_unit_test_setup_teardown(test_free_async_of_malloc_memory, setup_gated,
                                        teardown_gated),
        cmocka_unit_test_setup_teardown(test_destroy_and_reset, setup_gated, teardown_gated),
        cmocka_unit_test_setup_teardown(test_threads_share_a_pool, setup_device0,
                                        teardown_device0),
        cmocka_unit_test_setup_teardown(test_reset_races_pool_use, setup_device0,
                                        teardown_device0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
