/*
 * Out-of-memory injection: for each scenario, make internal allocation n fail
 * for n = 0, 1, 2, ... until the step no longer allocates past n. Every failed
 * step must return ACL_ERROR_BAD_ALLOC or ACL_ERROR_RT_MEMORY_ALLOCATION with a
 * message, and leave the runtime usable: the same step succeeds right after.
 * Leaks are caught by LeakSanitizer in the ASan build.
 *
 * White-box: links the static library to reach aclsim__fail_allocation_after.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "aclsim/aclsim.h"
#include "internal.h"

ACLSIM_DEVICE_VAR(int, oom_counter, ) = 3;
ACLSIM_DEVICE_VAR(float, oom_table, [32]);

void oom_kernel(int *out)
{
    /* Blocks run in parallel: the shared counter needs an atomic add. */
    __atomic_fetch_add(&ACLSIM_DEV(oom_counter), 1, __ATOMIC_RELAXED);
    out[aclsimGetBlockIdx()] = (int)aclsimGetBlockIdx();
}
ACLSIM_KERNEL_REGISTER(oom_kernel, int *);

/* Totals over all scenarios, printed at the end (docs/reliability.md). */
static long points_covered;

struct scenario {
    const char *name;
    void (*setup)(void);      /* state the step needs (no injection) */
    aclError (*step)(void);   /* the call under test */
    void (*teardown)(void);   /* undo setup and step */
};

static bool is_oom(aclError e)
{
    return e == ACL_ERROR_BAD_ALLOC || e == ACL_ERROR_RT_MEMORY_ALLOCATION;
}

static void walk(const struct scenario *s)
{
    for (long n = 0;; n++) {
        assert_true(n < 10000);
        s->setup();
        long before = aclsim__allocations_failed();
        aclsim__fail_allocation_after(n);
        aclError err = s->step();
        aclsim__fail_allocation_after(-1);
        bool injected = aclsim__allocations_failed() != before;
        if (!injected) {
            /* The step needed at most n allocations: all points are covered. */
            if (err != ACL_SUCCESS)
                fail_msg("%s: failed with %d without an injected failure: %s", s->name, err,
                         aclGetRecentErrMsg());
            s->teardown();
            printf("[ oom      ] %-22s %ld allocation point(s)\n", s->name, n);
            points_covered += n;
            return;
        }
        if (err != ACL_SUCCESS) {
            if (!is_oom(err))
                fail_msg("%s: allocation %ld failed, call returned %d (%s)", s->name, n, err,
                         aclGetRecentErrMsg());
            assert_non_null(aclGetRecentErrMsg());
            /* The runtime is still usable: the same step now succeeds. */
            aclError again = s->step();
            if (again != ACL_SUCCESS)
                fail_msg("%s: after failure at allocation %ld, retry returned %d (%s)", s->name,
                         n, again, aclGetRecentErrMsg());
        }
        /* else: the failed allocation was optional (e.g. a spare cache) and
         * the call still succeeded, which is fine. */
        s->teardown();
    }
}

static void nothing(void) {}

/* --- aclInit ---------------------------------------------------------------- */
static char config_path[256];
static aclError init_step(void) { return aclInit(config_path); }
static void init_teardown(void) { aclFinalize(); }

/* --- aclrtSetDevice --------------------------------------------------------- */
static void with_init(void) { assert_int_equal(aclInit(NULL), ACL_SUCCESS); }
static aclError set_device_step(void) { return aclrtSetDevice(0); }
static void finalize(void)
{
    aclrtResetDeviceForce(0);
    aclrtResetDeviceForce(1);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

/* --- first symbol use ----------------------------------------------------------- */
static void with_device(void)
{
    with_init();
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
}
static aclError symbol_step(void)
{
    int v = 42;
    aclError e = aclrtMemcpyToSymbol(&oom_counter, &v, sizeof v, 0, ACL_MEMCPY_HOST_TO_DEVICE);
    if (e)
        return e;
    int back = 0;
    e = aclrtMemcpyFromSymbol(&back, sizeof back, &oom_counter, sizeof back, 0,
                              ACL_MEMCPY_DEVICE_TO_HOST);
    assert_true(e != ACL_SUCCESS || back == 42);
    return e;
}

/* --- stream create ---------------------------------------------------------------- */
static aclrtStream stream;
static aclError stream_step(void)
{
    if (stream)
        return ACL_SUCCESS;
    return aclrtCreateStream(&stream);
}
static void stream_teardown(void)
{
    if (stream)
        assert_int_equal(aclrtDestroyStream(stream), ACL_SUCCESS);
    stream = NULL;
    finalize();
}

/* --- async copy ------------------------------------------------------------------- */
static void *pinned;
static void with_stream(void)
{
    with_device();
    assert_int_equal(aclrtCreateStream(&stream), ACL_SUCCESS);
    assert_int_equal(aclrtMallocHost(&pinned, 4096), ACL_SUCCESS);
    memset(pinned, 7, 4096);
}
static aclError async_copy_step(void)
{
    aclError e = aclrtMemcpyToSymbolAsync(oom_table, pinned, sizeof oom_table, 0,
                                          ACL_MEMCPY_HOST_TO_DEVICE, stream);
    if (e)
        return e;
    return aclrtSynchronizeStream(stream);
}
static void with_stream_teardown(void)
{
    assert_int_equal(aclrtFreeHost(pinned), ACL_SUCCESS);
    stream_teardown();
}

/* --- kernel launch ------------------------------------------------------------------ */
static void *dev_out;
static void with_stream_and_buffer(void)
{
    with_stream();
    assert_int_equal(aclrtMalloc(&dev_out, 64 * sizeof(int), ACL_MEM_MALLOC_HUGE_FIRST),
                     ACL_SUCCESS);
}
static aclError launch_step(void)
{
    aclrtFuncHandle f;
    aclError e = aclrtGetFuncBySymbol((const void *)&oom_kernel, &f);
    if (e)
        return e;
    void *args[] = {&dev_out};
    e = aclrtLaunchKernelWithArgsArray(f, 4, stream, NULL, args);
    if (e)
        return e;
    return aclrtSynchronizeStream(stream);
}
static void launch_teardown(void)
{
    assert_int_equal(aclrtFree(dev_out), ACL_SUCCESS);
    with_stream_teardown();
}

/* An argument list (aclrtKernelArgs*) launched with aclrtLaunchKernelWithConfig. */
static aclError args_launch_step(void)
{
    aclrtFuncHandle f;
    aclrtArgsHandle a;
    aclrtParamHandle p;
    aclError e = aclrtGetFuncBySymbol((const void *)&oom_kernel, &f);
    if (!e)
        e = aclrtKernelArgsInit(f, &a);
    if (!e)
        e = aclrtKernelArgsAppend(a, &dev_out, sizeof dev_out, &p);
    if (!e)
        e = aclrtKernelArgsFinalize(a);
    if (!e)
        e = aclrtLaunchKernelWithConfig(f, 4, stream, NULL, a, NULL);
    return e ? e : aclrtSynchronizeStream(stream);
}

/* --- events, contexts, memory ---------------------------------------------------------- */
static aclError event_step(void)
{
    aclrtEvent ev;
    aclError e = aclrtCreateEvent(&ev);
    if (e)
        return e;
    e = aclrtRecordEvent(ev, stream);
    if (!e)
        e = aclrtStreamWaitEvent(stream, ev);
    if (!e)
        e = aclrtSynchronizeStream(stream);
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    return e;
}
static aclError context_step(void)
{
    aclrtContext ctx;
    aclError e = aclrtCreateContext(&ctx, 1);
    if (e)
        return e;
    return aclrtDestroyContext(ctx);
}
static aclError malloc_step(void)
{
    void *p, *h;
    aclError e = aclrtMalloc(&p, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST);
    if (e)
        return e;
    e = aclrtMallocHost(&h, 1 << 16);
    assert_int_equal(aclrtFree(p), ACL_SUCCESS);
    if (!e)
        assert_int_equal(aclrtFreeHost(h), ACL_SUCCESS);
    return e;
}

/* --- memory pool ----------------------------------------------------------------------- */
/* Creation, an allocation, its stream-ordered free, the event notes of the
 * reuse policies, a reuse, trim and destroy. Whatever the failed call left
 * is undone without injection, so the step can run again. */
static aclError pool_step(void)
{
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = 8u << 20;
    aclrtMemPool pool = NULL;
    aclError e = aclrtMemPoolCreate(&pool, &props);
    if (e)
        return e;
    aclrtEvent ev = NULL;
    void *a = NULL;
    uint32_t on = 1;
    e = aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES, &on);
    if (!e)
        e = aclrtCreateEvent(&ev);
    for (int i = 0; i < 2 && !e; i++) {
        e = aclrtMemPoolMallocAsync(&a, 4096, pool, stream);
        if (!e && (e = aclrtMemPoolFreeAsync(a, stream)) == ACL_SUCCESS)
            a = NULL;
        if (!e)
            e = aclrtRecordEvent(ev, stream);
        if (!e)
            e = aclrtStreamWaitEvent(stream, ev);
    }
    if (!e)
        e = aclrtMemPoolTrimTo(pool, 0);
    if (a)
        assert_int_equal(aclrtMemPoolFreeAsync(a, stream), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    if (ev)
        assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtMemPoolDestroy(pool), ACL_SUCCESS);
    return e;
}

/* --- binary load ------------------------------------------------------------------------- */
#ifdef ACLSIM_TEST_KERNELS_PATH
static aclError binary_step(void)
{
    aclrtBinHandle bin;
    aclError e = aclrtBinaryLoadFromFile(ACLSIM_TEST_KERNELS_PATH, NULL, &bin);
    if (e)
        return e;
    return aclrtBinaryUnLoad(bin);
}

static void *binary_data;
static size_t binary_len;
static aclError binary_data_step(void)
{
    if (!binary_data) {   /* read once; freed at the end of the test */
        FILE *f = fopen(ACLSIM_TEST_KERNELS_PATH, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        binary_len = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        binary_data = malloc(binary_len);
        assert_non_null(binary_data);
        assert_int_equal(fread(binary_data, 1, binary_len, f), binary_len);
        fclose(f);
    }
    aclrtBinHandle bin;
    aclError e = aclrtBinaryLoadFromData(binary_data, binary_len, NULL, &bin);
    return e ? e : aclrtBinaryUnLoad(bin);
}
#endif

/* --- data transmission (docs/tdt.md): every object made is destroyed on every path ---- */
static aclError tdt_channel_step(void)
{
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "oom", 2);
    if (!ch)
        return aclrtGetLastError(ACL_RT_THREAD_LEVEL);
    int64_t dims[1] = {4};
    float data[4] = {1, 2, 3, 4};
    acltdtDataset *ds = acltdtCreateDataset(), *r = acltdtCreateDataset();
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_FLOAT, data,
                                              sizeof data);
    aclError e = ds && r && it ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
    if (!e)
        e = acltdtAddDataItem(ds, it);
    if (!e)
        e = acltdtSendTensor(ch, ds, 0);
    if (!e)
        e = acltdtReceiveTensor(ch, r, 0);
    if (!e)
        assert_true(acltdtGetDatasetSize(r) == 1 &&
                    memcmp(acltdtGetDataAddrFromItem(acltdtGetDataItem(r, 0)), data, sizeof data) == 0);
    if (it)
        acltdtDestroyDataItem(it);
    if (ds)
        acltdtDestroyDataset(ds);
    if (r)
        acltdtDestroyDataset(r);
    acltdtDestroyChannel(ch);
    return e;
}

static aclError tdt_queue_step(void)
{
    uint32_t src, dst, v = 5, got = 0;
    aclError e = acltdtCreateQueue(NULL, &src);
    if (e)
        return e;
    if ((e = acltdtCreateQueue(NULL, &dst))) {
        acltdtDestroyQueue(src);
        return e;
    }
    acltdtQueueRouteList *l = acltdtCreateQueueRouteList();
    acltdtQueueRoute *route = acltdtCreateQueueRoute(src, dst);
    e = l && route ? acltdtAddQueueRoute(l, route) : ACL_ERROR_BAD_ALLOC;
    if (!e)
        e = acltdtBindQueueRoutes(l);
    bool bound = !e;
    if (!e)
        e = acltdtEnqueueData(src, &v, sizeof v, &v, sizeof v, 0, 0);
    size_t n;
    if (!e)
        e = acltdtDequeueData(dst, &got, sizeof got, &n, NULL, 0, 0);
    assert_true(e || got == 5);
    if (bound && acltdtUnbindQueueRoutes(l))
        fail_msg("unbind: %s", aclGetRecentErrMsg());
    acltdtDestroyQueueRoute(route);
    acltdtDestroyQueueRouteList(l);
    acltdtDestroyQueue(src);
    acltdtDestroyQueue(dst);
    return e;
}

static aclError mbuf_step(void)
{
    aclrtMbuf head, tail, ref;
    aclError e = aclrtAllocBuf(&head, 64);
    if (e)
        return e;
    if (!(e = aclrtAllocBuf(&tail, 8)) && (e = aclrtAppendBufChain(head, tail)))
        aclrtFreeBuf(tail);
    if (!e && !(e = aclrtCopyBufRef(head, &ref)))
        aclrtFreeBuf(ref);
    aclrtFreeBuf(head);
    return e;
}

static void test_oom_scenarios(void **state)
{
    (void)state;
    snprintf(config_path, sizeof config_path, "%s/oom-config.json",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    FILE *f = fopen(config_path, "w");
    assert_non_null(f);
    fputs("{\"aclsim\": {\"device_count\": 2, \"device_memory\": \"64M\"}}", f);
    fclose(f);
    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);

    const struct scenario scenarios[] = {
        {"aclInit", nothing, init_step, init_teardown},
        {"aclrtSetDevice", with_init, set_device_step, finalize},
        {"first symbol use", with_device, symbol_step, finalize},
        {"aclrtCreateStream", with_device, stream_step, stream_teardown},
        {"async symbol copy", with_stream, async_copy_step, with_stream_teardown},
        {"kernel launch", with_stream_and_buffer, launch_step, launch_teardown},
        {"events", with_stream, event_step, with_stream_teardown},
        {"aclrtCreateContext", with_device, context_step, finalize},
        {"aclrtMalloc/MallocHost", with_device, malloc_step, finalize},
        {"memory pool", with_stream, pool_step, with_stream_teardown},
#ifdef ACLSIM_TEST_KERNELS_PATH
        {"binary load", with_device, binary_step, finalize},
        {"binary load from data", with_device, binary_data_step, finalize},
#endif
        {"argument list launch", with_stream_and_buffer, args_launch_step, launch_teardown},
        {"tdt channel", with_device, tdt_channel_step, finalize},
        {"tdt queue and route", with_device, tdt_queue_step, finalize},
        {"shared buffers", with_device, mbuf_step, finalize},
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        walk(&scenarios[i]);
    printf("[ oom      ] %ld allocation points covered in total\n", points_covered);
#ifdef ACLSIM_TEST_KERNELS_PATH
    free(binary_data);
#endif
    unlink(config_path);
    unsetenv("ACLSIM_DEVICE_COUNT");
    unsetenv("ACLSIM_DEVICE_MEMORY");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_oom_scenarios)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
