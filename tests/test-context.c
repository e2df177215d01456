/*
 * Contexts: the default context of a device, aclrtCreateContext /
 * DestroyContext / SetCurrentContext / GetCurrentContext, the per-thread
 * current context, handle validation (107017), and streams used under
 * another context (107003).
 *
 * Every test starts and ends with the runtime finalized and the configuration
 * variables unset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "common.h"

/* ---- helpers --------------------------------------------------------------- */

/* What an actor step did. */
struct step {
    aclrtContext ctx;     /* in: context to set; out: context read */
    int32_t dev;
    aclError rc, rc2, rc3;
    char msg[512];
};

static void record_msg(struct step *s)
{
    const char *m = aclGetRecentErrMsg();
    snprintf(s->msg, sizeof s->msg, "%s", m ? m : "");
}

static void step_query(void *p)   /* current context, device, and a stream */
{
    struct step *s = p;
    s->ctx = NULL;
    s->dev = -1;
    s->rc = aclrtGetCurrentContext(&s->ctx);
    record_msg(s);
    s->rc2 = aclrtGetDevice(&s->dev);
    drain_msg();
    aclrtStream st = NULL;
    s->rc3 = aclrtCreateStream(&st);
    drain_msg();
    if (s->rc3 == ACL_SUCCESS)
        s->rc3 = aclrtDestroyStream(st);
}

static void step_set_context(void *p)
{
    struct step *s = p;
    s->rc = aclrtSetCurrentContext(s->ctx);
    record_msg(s);
}

static void step_set_device(void *p)
{
    struct step *s = p;
    s->rc = aclrtSetDevice(s->dev);
    record_msg(s);
}

static void step_create_context(void *p)
{
    struct step *s = p;
    s->ctx = NULL;
    s->rc = aclrtCreateContext(&s->ctx, s->dev);
    record_msg(s);
}

/* A clean start (setup_clean), then 4 devices of 64M. */
static int setup(void **state)
{
    setup_clean(state);
    assert_int_equal(init_devices("4", "64M"), ACL_SUCCESS);
    return 0;
}

/* ---- default contexts ---------------------------------------------------------------- */

static void test_default_context(void **state)
{
    (void)state;
    aclrtContext c;
    assert_int_equal(aclrtGetCurrentContext(&c), ACL_ERROR_RT_CONTEXT_NULL);
    expect_msg("aclrtGetCurrentContext");

    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext d0 = current_context();
    assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
    aclrtContext d1 = current_context();
    assert_ptr_not_equal(d0, d1);
    assert_int_equal(current_device(), 1);
    /* Setting a device again gives back its one default context. */
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_ptr_equal(current_context(), d0);
    assert_int_equal(current_device(), 0);

    /* Shared by every thread that sets the device. */
    struct actor a;
    actor_start(&a);
    struct step s = {.dev = 1};
    actor_run(&a, step_set_device, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    actor_run(&a, step_query, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    assert_ptr_equal(s.ctx, d1);
    assert_int_equal(s.dev, 1);
    assert_int_equal(s.rc3, ACL_SUCCESS);
    actor_stop(&a);

    /* The default context can be set explicitly like any other. */
    assert_int_equal(aclrtSetCurrentContext(d1), ACL_SUCCESS);
    assert_ptr_equal(current_context(), d1);
    assert_int_equal(current_device(), 1);
}

static void test_create_context_becomes_current(void **state)
{
    (void)state;
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext dflt = current_context();

    aclrtContext c = NULL;
    assert_int_equal(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    assert_non_null(c);
    assert_ptr_not_equal(c, dflt);
    assert_ptr_equal(current_context(), c);
    assert_int_equal(current_device(), 0);

    assert_int_equal(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
    assert_ptr_equal(current_context(), dflt);
    assert_int_equal(aclrtSetCurrentContext(c), ACL_SUCCESS);
    assert_ptr_equal(current_context(), c);

    /* Streams and memory work under it. */
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    void *p;
    assert_int_equal(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMemsetAsync(p, 4096, 7, 4096, s), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);   /* its default stream */
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtFree(p), ACL_SUCCESS);

    /* Two more contexts on the same device are distinct. */
    aclrtContext c2, c3;
    assert_int_equal(aclrtCreateContext(&c2, 0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateContext(&c3, 0), ACL_SUCCESS);
    assert_ptr_not_equal(c2, c);
    assert_ptr_not_equal(c3, c2);
    assert_ptr_equal(current_context(), c3);

    assert_int_equal(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c2), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c3), ACL_SUCCESS);
    assert_ptr_equal(current_context(), dflt);
}

/* aclrtCreateContext opens the device by itself, without aclrtSetDevice. */
static void test_create_context_without_set_device(void **state)
{
    (void)state;
    aclrtContext c = NULL;
    assert_int_equal(aclrtCreateContext(&c, 2), ACL_SUCCESS);
    assert_ptr_equal(current_context(), c);
    assert_int_equal(current_device(), 2);
    void *p;
    assert_int_equal(aclrtMalloc(&p, MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclrtMemsetAsync(p, MiB, 1, MiB, s), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtFree(p), ACL_SUCCESS);

    /* Destroying the current context leaves the thread without one. */
    assert_int_equal(aclrtDestroyContext(c), ACL_SUCCESS);
    aclrtContext now;
    assert_int_equal(aclrtGetCurrentContext(&now), ACL_ERROR_RT_CONTEXT_NULL);
    expect_msg("aclrtGetCurrentContext");
    int32_t d;
    assert_int_equal(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL);
    drain_msg();
}

/* ---- per-thread current context ------------------------------------------------------ */

static void test_current_context_per_thread(void **state)
{
    (void)state;
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext mine = current_context();

    struct actor a;
    actor_start(&a);
    struct step s = {0};

    /* A new thread has no current context. */
    actor_run(&a, step_query, &s);
    assert_int_equal(s.rc, ACL_ERROR_RT_CONTEXT_NULL);
    assert_non_null(strstr(s.msg, "aclrtGetCurrentContext"));
    assert_int_equal(s.rc2, ACL_ERROR_RT_CONTEXT_NULL);
    assert_int_equal(s.rc3, ACL_ERROR_RT_CONTEXT_NULL);

    /* Setting this thread's context there works. */
    s.ctx = mine;
    actor_run(&a, step_set_context, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    actor_run(&a, step_query, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    assert_ptr_equal(s.ctx, mine);
    assert_int_equal(s.rc2, ACL_SUCCESS);
    assert_int_equal(s.dev, 0);
    assert_int_equal(s.rc3, ACL_SUCCESS);

    /* A context created there becomes current there only. */
    s.dev = 1;
    actor_run(&a, step_create_context, &s);
    assert_int_equal(s.rc, ACL_SUCCESS);
    aclrtContext theirs = s.ctx;
    actor_run(&a, step_query, &s);
    assert_ptr_equal(s.ctx, theirs);
    assert_int_equal(s.dev, 1);
    assert_ptr_equal(current_context(), mine);
    assert_int_equal(current_device(), 0);

    /* ...and may be used here too. */
    assert_int_equal(aclrtSetCurrentContext(theirs), ACL_SUCCESS);
    assert_int_equal(current_device(), 1);
    assert_int_equal(aclrtSetCurrentContext(mine), ACL_SUCCESS);
    actor_stop(&a);
    assert_int_equal(aclrtDestroyContext(theirs), ACL_SUCCESS);
}

/* Many threads switching between contexts concurrently. */
struct switcher { aclrtContext ctx[2]; int32_t dev[2]; atomic_int errors; };

static void *switch_loop(void *p)
{
    struct switcher *w = p;
    for (int i = 0; i < 500; i++) {
        int k = i & 1;
        int32_t d = -1;
        aclrtContext c = NULL;
        if (aclrtSetCurrentContext(w->ctx[k]) != ACL_SUCCESS ||
            aclrtGetCurrentContext(&c) != ACL_SUCCESS || c != w->ctx[k] ||
            aclrtGetDevice(&d) != ACL_SUCCESS || d != w->dev[k])
            atomic_fetch_add(&w->errors, 1);
    }
    return NULL;
}

static void test_context_switching_threads(void **state)
{
    (void)state;
    struct switcher w = {.dev = {0, 3}};
    atomic_init(&w.errors, 0);
    assert_int_equal(aclrtCreateContext(&w.ctx[0], 0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateContext(&w.ctx[1], 3), ACL_SUCCESS);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, switch_loop, &w), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&w.errors), 0);
    assert_int_equal(aclrtDestroyContext(w.ctx[0]), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(w.ctx[1]), ACL_SUCCESS);
}

/* ---- handle validation ------------------------------------------------------------------ */

static void test_destroy_invalid_context(void **state)
{
    (void)state;
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext dflt = current_context();
    aclrtContext c;
    assert_int_equal(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c), ACL_SUCCESS);

    /* Destroyed. */
    assert_int_equal(aclrtDestroyContext(c), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtDestroyContext");
    assert_int_equal(aclrtSetCurrentContext(c), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtSetCurrentContext");

    /* Garbage: never created, another kind of handle, random bits. */
    int local = 0;
    aclrtStream stream;
    assert_int_equal(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&stream), ACL_SUCCESS);
    aclrtEvent event;
    assert_int_equal(aclrtCreateEvent(&event), ACL_SUCCESS);
    void *garbage[] = {
        &local, (void *)(uintptr_t)1, (void *)(uintptr_t)0x1234, (void *)(uintptr_t)0x12345679,
        (void *)UINTPTR_MAX, (void *)(uintptr_t)0xdeadbeefcafef00dULL, stream, event,
        (void *)((uintptr_t)dflt ^ ((uintptr_t)1 << 40)), (void *)((uintptr_t)dflt + 8),
    };
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        aclError rc = aclrtDestroyContext(garbage[i]);
        if (rc != ACL_ERROR_RT_INVALID_HANDLE) {
            print_error("aclrtDestroyContext(%p) = %d, expected %d\n", garbage[i], rc,
                        ACL_ERROR_RT_INVALID_HANDLE);
            fail();
        }
        expect_msg("aclrtDestroyContext");
        assert_int_equal(aclrtSetCurrentContext(garbage[i]), ACL_ERROR_RT_INVALID_HANDLE);
        expect_msg("aclrtSetCurrentContext");
    }
    /* Nothing was disturbed. */
    assert_ptr_equal(current_context(), dflt);
    assert_int_equal(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(event), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(stream), ACL_SUCCESS);

    /* A recycled slot does not revive an old handle. */
    aclrtContext fresh;
    assert_int_equal(aclrtCreateContext(&fresh, 0), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c), ACL_ERROR_RT_INVALID_HANDLE);
    drain_msg();
    assert_ptr_equal(current_context(), fresh);
    assert_int_equal(aclrtDestroyContext(fresh), ACL_SUCCESS);
}

/* A handle of another kind (a stream, an event) is not a context, whatever
 * its bits say: aclrtSetCurrentContext must not adopt it. */
static void test_other_kind_handle_is_not_a_context(void **state)
{
    (void)state;
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext dflt = current_context();
    aclrtStream stream;
    assert_int_equal(aclrtCreateStream(&stream), ACL_SUCCESS);
    aclrtEvent event;
    assert_int_equal(aclrtCreateEvent(&event), ACL_SUCCESS);
    /* The same handles with their low bits changed: still not contexts. */
    void *forged[6];
    for (uintptr_t k = 0; k < 3; k++) {
        forged[2 * k] = (void *)(((uintptr_t)stream & ~(uintptr_t)7) | (k + 1));
        forged[2 * k + 1] = (void *)(((uintptr_t)event & ~(uintptr_t)7) | (k + 1));
    }
    for (size_t i = 0; i < 6; i++) {
        if (forged[i] == stream || forged[i] == event)
            continue;
        aclError rc = aclrtSetCurrentContext(forged[i]);
        if (rc != ACL_ERROR_RT_INVALID_HANDLE) {
            print_error("aclrtSetCurrentContext(%p, from %s %p) = %d, expected %d\n", forged[i],
                        i % 2 ? "event" : "stream", i % 2 ? event : stream, rc,
                        ACL_ERROR_RT_INVALID_HANDLE);
            /* Do not go on with a non-context as the current context. */
            aclrtSetCurrentContext(dflt);
            fail();
        }
        expect_msg("aclrtSetCurrentContext");
        rc = aclrtDestroyContext(forged[i]);
        if (rc != ACL_ERROR_RT_INVALID_HANDLE) {
            print_error("aclrtDestroyContext(%p) = %d, expected %d\n", forged[i], rc,
                        ACL_ERROR_RT_INVALID_HANDLE);
            fail();
        }
        expect_msg("aclrtDestroyContext");
    }
    assert_ptr_equal(current_context(), dflt);
    assert_int_equal(aclrtDestroyEvent(event), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(stream), ACL_SUCCESS);
}

static void test_destroy_default_context(void **state)
{
    (void)state;
    assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
    aclrtContext dflt = current_context();
    aclError rc = aclrtDestroyContext(dflt);
    assert_int_not_equal(rc, ACL_SUCCESS);
    expect_msg("aclrtDestroyContext");
    /* Still alive and current. */
    assert_ptr_equal(current_context(), dflt);
    assert_int_equal(current_device(), 1);
    void *p;
    assert_int_equal(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMemset(p, 4096, 0, 4096), ACL_SUCCESS);
    assert_int_equal(aclrtFree(p), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    /* Also from a context of the same device being current. */
    aclrtContext c;
    assert_int_equal(aclrtCreateContext(&c, 1), ACL_SUCCESS);
    assert_int_not_equal(aclrtDestroyContext(dflt), ACL_SUCCESS);
    drain_msg();
    assert_int_equal(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c), ACL_SUCCESS);
}

static void test_null_arguments(void **state)
{
    (void)state;
    assert_int_equal(aclrtCreateContext(NULL, 0), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtCreateContext", "context");
    assert_int_equal(aclrtDestroyContext(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtDestroyContext", "context");
    assert_int_equal(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtSetCurrentContext", "context");
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtGetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetCurrentContext", "context");
    /* None of these changed the current context. */
    assert_int_equal(current_device(), 0);

    /* An invalid device. */
    aclrtContext c = (aclrtContext)(uintptr_t)0x5;
    assert_int_equal(aclrtCreateContext(&c, 4), ACL_ERROR_RT_INVALID_DEVICEID);
    expect_msg("aclrtCreateContext", "4");
    assert_int_equal(aclrtCreateContext(&c, -1), ACL_ERROR_RT_INVALID_DEVICEID);
    expect_msg("aclrtCreateContext");
    assert_int_equal(current_device(), 0);
}

/* ---- contexts on two devices -------------------------------------------------------------- */

static void test_contexts_on_two_devices(void **state)
{
    (void)state;
    aclrtContext c0, c1;
    assert_int_equal(aclrtCreateContext(&c0, 0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateContext(&c1, 1), ACL_SUCCESS);
    assert_int_equal(current_device(), 1);
    size_t free1 = hbm_free();
    assert_int_equal(aclrtSetCurrentContext(c0), ACL_SUCCESS);
    assert_int_equal(current_device(), 0);
    size_t free0 = hbm_free();

    /* Memory goes to the current context's device. */
    void *p1;
    assert_int_equal(aclrtSetCurrentContext(c1), ACL_SUCCESS);
    assert_int_equal(aclrtMalloc(&p1, 8 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(hbm_free(), free1 - 8 * MiB);
    assert_int_equal(aclrtSetCurrentContext(c0), ACL_SUCCESS);
    assert_int_equal(hbm_free(), free0);

    /* Each context has its own streams and default stream. */
    aclrtStream s0, s1;
    assert_int_equal(aclrtCreateStream(&s0), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(c1), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&s1), ACL_SUCCESS);
    assert_int_equal(aclrtMemsetAsync(p1, 8 * MiB, 3, 8 * MiB, s1), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(s1), ACL_SUCCESS);
    unsigned char probe[16];
    assert_int_equal(aclrtMemcpy(probe, sizeof probe, (char *)p1 + 8 * MiB - 16, 16,
                                 ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    for (size_t i = 0; i < sizeof probe; i++)
        assert_int_equal(probe[i], 3);

    assert_int_equal(aclrtSynchronizeStream(s0), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtSynchronizeStream");
    assert_int_equal(aclrtSetCurrentContext(c0), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(s1), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtSynchronizeStream");
    assert_int_equal(aclrtSynchronizeStream(s0), ACL_SUCCESS);

    assert_int_equal(aclrtDestroyStream(s0), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(c1), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s1), ACL_SUCCESS);
    assert_int_equal(aclrtFree(p1), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c0), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c1), ACL_SUCCESS);
}

/* ---- streams of another context: 107003 ------------------------------------------------------ */

static void noop(void *arg) { (void)arg; }

static void check_foreign_stream(aclrtStream foreign, void *dev_ptr, void *pinned)
{
    assert_int_equal(aclrtSynchronizeStream(foreign), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtSynchronizeStream");
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(foreign, 1000), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtSynchronizeStreamWithTimeout");
    assert_int_equal(aclrtMemcpyAsync(dev_ptr, 4096, pinned, 4096, ACL_MEMCPY_HOST_TO_DEVICE,
                                      foreign), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtMemcpyAsync");
    assert_int_equal(aclrtMemsetAsync(dev_ptr, 4096, 0, 4096, foreign), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtMemsetAsync");
    assert_int_equal(aclrtLaunchHostFunc(foreign, noop, NULL), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtLaunchHostFunc");
    aclrtEvent ev;
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, foreign), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtRecordEvent");
    assert_int_equal(aclrtStreamWaitEvent(foreign, ev), ACL_ERROR_RT_STREAM_CONTEXT);
    expect_msg("aclrtStreamWaitEvent");
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
}

static void test_stream_of_another_context(void **state)
{
    (void)state;
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext dflt = current_context();
    aclrtStream s0;
    assert_int_equal(aclrtCreateStream(&s0), ACL_SUCCESS);
    void *dev_ptr, *pinned;
    assert_int_equal(aclrtMalloc(&dev_ptr, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMallocHost(&pinned, 4096), ACL_SUCCESS);
    memset(pinned, 0x42, 4096);

    /* Another context of the same device. */
    aclrtContext same_dev;
    assert_int_equal(aclrtCreateContext(&same_dev, 0), ACL_SUCCESS);
    check_foreign_stream(s0, dev_ptr, pinned);

    /* A context of another device. */
    aclrtContext other_dev;
    assert_int_equal(aclrtCreateContext(&other_dev, 1), ACL_SUCCESS);
    check_foreign_stream(s0, dev_ptr, pinned);

    /* The other way round: a stream of the new context used from the default one. */
    aclrtStream s1;
    assert_int_equal(aclrtCreateStream(&s1), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
    check_foreign_stream(s1, dev_ptr, pinned);

    /* Back in its own context the stream works, and nothing was queued on it. */
    assert_int_equal(aclrtMemcpyAsync(dev_ptr, 4096, pinned, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s0),
                     ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(s0), ACL_SUCCESS);
    unsigned char back[4096];
    assert_int_equal(aclrtMemcpy(back, sizeof back, dev_ptr, 4096, ACL_MEMCPY_DEVICE_TO_HOST),
                     ACL_SUCCESS);
    for (size_t i = 0; i < sizeof back; i++)
        assert_int_equal(back[i], 0x42);

    assert_int_equal(aclrtDestroyStream(s0), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(other_dev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s1), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(other_dev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(same_dev), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
    assert_int_equal(aclrtFree(dev_ptr), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(pinned), ACL_SUCCESS);
}

/* Destroying a context lets its queued work finish and invalidates its streams. */
static atomic_int ran;

static void slow_increment(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_fetch_add(&ran, 1);
}

static void test_destroy_context_with_streams(void **state)
{
    (void)state;
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext dflt = current_context();
    aclrtContext c;
    assert_int_equal(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    aclrtStream s;
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    atomic_store(&ran, 0);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(aclrtLaunchHostFunc(s, slow_increment, NULL), ACL_SUCCESS);
        assert_int_equal(aclrtLaunchHostFunc(NULL, slow_increment, NULL), ACL_SUCCESS);
    }
    assert_int_equal(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c), ACL_SUCCESS);
    assert_int_equal(atomic_load(&ran), 10);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtSynchronizeStream");
    assert_int_equal(aclrtDestroyStream(s), ACL_ERROR_RT_INVALID_HANDLE);
    expect_msg("aclrtDestroyStream");
    assert_int_equal(aclrtSetCurrentContext(c), ACL_ERROR_RT_INVALID_HANDLE);
    drain_msg();
    assert_ptr_equal(current_context(), dflt);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown_clean)
    const struct CMUnitTest tests[] = {
        T(test_default_context),
        T(test_create_context_becomes_current),
        T(test_create_context_without_set_device),
        T(test_current_context_per_thread),
        T(test_context_switching_threads),
        T(test_destroy_invalid_context),
        T(test_other_kind_handle_is_not_a_context),
        T(test_destroy_default_context),
        T(test_null_arguments),
        T(test_contexts_on_two_devices),
        T(test_stream_of_another_context),
        T(test_destroy_context_with_streams),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
