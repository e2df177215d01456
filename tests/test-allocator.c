/*
 * Custom memory allocators (acl/acl_rt_allocator.h): descriptors, their
 * registration per stream (a copy of the descriptor, the last registration
 * wins), lookup and unregistration, with CANN's codes for bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "acl/acl.h"
#include "acl/acl_rt_allocator.h"
#include "common.h"

struct pool { void *base; size_t used; };

static void *pool_alloc(aclrtAllocator a, size_t size)
{
    struct pool *p = a;
    void *block = (char *)p->base + p->used;
    p->used += size;
    return block;
}
static void pool_free(aclrtAllocator a, aclrtAllocatorBlock b) { (void)a; (void)b; }
static void *pool_advise(aclrtAllocator a, size_t size, aclrtAllocatorAddr addr)
{
    (void)addr;
    return pool_alloc(a, size);
}
static void *pool_addr(aclrtAllocatorBlock b) { return b; }
static void *other_alloc(aclrtAllocator a, size_t size) { (void)a; (void)size; return NULL; }

static void test_register_and_use(void **state)
{
    (void)state;
    struct pool pool = {NULL, 0};
    EXPECT_OK(aclrtMalloc(&pool.base, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    assert_non_null(d);
    EXPECT_OK(aclrtAllocatorSetObjToDesc(d, &pool));
    EXPECT_OK(aclrtAllocatorSetAllocFuncToDesc(d, pool_alloc));
    EXPECT_OK(aclrtAllocatorSetFreeFuncToDesc(d, pool_free));
    EXPECT_OK(aclrtAllocatorSetAllocAdviseFuncToDesc(d, pool_advise));
    EXPECT_OK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, pool_addr));
    aclrtStream s, t;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtCreateStream(&t));
    EXPECT_OK(aclrtAllocatorRegister(s, d));
    aclrtAllocatorDesc gd = NULL;
    aclrtAllocator obj = NULL;
    aclrtAllocatorAllocFunc af = NULL;
    aclrtAllocatorFreeFunc ff = NULL;
    aclrtAllocatorAllocAdviseFunc adv = NULL;
    aclrtAllocatorGetAddrFromBlockFunc gaf = NULL;
    EXPECT_OK(aclrtAllocatorGetByStream(s, &gd, &obj, &af, &ff, &adv, &gaf));
    assert_ptr_equal(gd, d);
    assert_ptr_equal(obj, &pool);
    assert_true(af == pool_alloc && ff == pool_free && adv == pool_advise && gaf == pool_addr);
    /* use it as a library would: a block of the pool, then memory through it */
    void *block = af(obj, 256);
    void *mem = gaf(block);
    EXPECT_OK(aclrtMemsetAsync(mem, 256, 7, 256, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    unsigned char out[256];
    EXPECT_OK(aclrtMemcpy(out, 256, mem, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_int_equal(out[255], 7);
    /* a copy was registered: changing the descriptor changes nothing registered */
    EXPECT_OK(aclrtAllocatorSetAllocFuncToDesc(d, other_alloc));
    EXPECT_OK(aclrtAllocatorGetByStream(s, &gd, NULL, &af, NULL, NULL, NULL));
    assert_true(af == pool_alloc);
    /* registering again replaces; another stream is independent */
    EXPECT_OK(aclrtAllocatorRegister(s, d));
    EXPECT_OK(aclrtAllocatorGetByStream(s, &gd, NULL, &af, NULL, NULL, NULL));
    assert_true(af == other_alloc);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not registered", aclrtAllocatorGetByStream(t, &gd, NULL, NULL, NULL, NULL, NULL));
    EXPECT_OK(aclrtAllocatorUnregister(s));
    EXPECT_OK(aclrtAllocatorUnregister(s));   /* again: nothing to do */
    EXPECT_OK(aclrtAllocatorUnregister(t));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not registered", aclrtAllocatorGetByStream(s, &gd, NULL, NULL, NULL, NULL, NULL));
    EXPECT_OK(aclrtAllocatorDestroyDesc(d));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtDestroyStream(t));
    EXPECT_OK(aclrtFree(pool.base));
}

static void test_bad_input(void **state)
{
    (void)state;
    int obj;
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "allocatorDesc", aclrtAllocatorSetObjToDesc(NULL, &obj));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "allocator", aclrtAllocatorSetObjToDesc(d, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "func", aclrtAllocatorSetAllocFuncToDesc(d, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream is NULL", aclrtAllocatorRegister(NULL, d));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "allocatorDesc->obj", aclrtAllocatorRegister(s, d));
    EXPECT_OK(aclrtAllocatorSetObjToDesc(d, &obj));
    EXPECT_OK(aclrtAllocatorSetAllocFuncToDesc(d, pool_alloc));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "freeFunc", aclrtAllocatorRegister(s, d));
    EXPECT_OK(aclrtAllocatorSetFreeFuncToDesc(d, pool_free));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "getAddrFromBlockFunc", aclrtAllocatorRegister(s, d));
    EXPECT_OK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, pool_addr));
    EXPECT_OK(aclrtAllocatorRegister(s, d));   /* the advise function is optional */
    aclrtAllocatorDesc gd;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "allocatorDesc", aclrtAllocatorGetByStream(s, NULL, NULL, NULL, NULL, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtAllocatorGetByStream(NULL, &gd, NULL, NULL, NULL, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream", aclrtAllocatorUnregister(NULL));
    EXPECT_OK(aclrtAllocatorUnregister(s));
    EXPECT_OK(aclrtAllocatorDestroyDesc(d));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a live allocator descriptor", aclrtAllocatorDestroyDesc(d));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a live allocator descriptor", aclrtAllocatorSetFreeFuncToDesc(d, pool_free));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "NULL", aclrtAllocatorDestroyDesc(NULL));
    /* a destroyed stream is refused */
    d = aclrtAllocatorCreateDesc();
    EXPECT_OK(aclrtAllocatorSetObjToDesc(d, &obj));
    EXPECT_OK(aclrtAllocatorSetAllocFuncToDesc(d, pool_alloc));
    EXPECT_OK(aclrtAllocatorSetFreeFuncToDesc(d, pool_free));
    EXPECT_OK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, pool_addr));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, NULL, aclrtAllocatorRegister(s, d));
    EXPECT_OK(aclrtAllocatorDestroyDesc(d));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_device0, teardown_device0)
    const struct CMUnitTest tests[] = {
        T(test_register_and_use),
        T(test_bad_input),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
