/*
 * Device variables under concurrency: 4 threads copying to and from their own
 * device variables (sync and async, pageable and page-locked) on 2 devices
 * while another thread creates streams, launches kernels on them and destroys
 * them; and threads racing on a variable's first use on a device.
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

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

#define WORDS 512          /* uint32_t words per copier variable */
#define COPIERS 4
#define ROUNDS 600         /* per copier */
#define HIT_BLOCKS 8

ACLSIM_DEVICE_VAR(uint32_t, conc_buf0, [WORDS]);
ACLSIM_DEVICE_VAR(uint32_t, conc_buf1, [WORDS]);
ACLSIM_DEVICE_VAR(uint32_t, conc_buf2, [WORDS]);
ACLSIM_DEVICE_VAR(uint32_t, conc_buf3, [WORDS]);
static uint32_t *const conc_bufs[COPIERS] = {conc_buf0, conc_buf1, conc_buf2, conc_buf3};

/* Incremented by conc_hit: one slot per block, atomically (launches on
 * different streams of a device run concurrently). */
ACLSIM_DEVICE_VAR(uint32_t, conc_hits, [HIT_BLOCKS]);
/* Written by the stream thread with async copies on its streams. */
ACLSIM_DEVICE_VAR(uint32_t, conc_stream_word, );

void conc_hit(uint32_t weight)
{
    uint32_t i = aclsimGetBlockIdx();
    __atomic_fetch_add(&ACLSIM_DEV(conc_hits)[i], weight, __ATOMIC_RELAXED);
}
ACLSIM_KERNEL_REGISTER(conc_hit, uint32_t);

/* For the first-use race: an initializer to recognise a fresh instance. */
#define FIRST_WORDS 40
ACLSIM_DEVICE_VAR(uint32_t, conc_first, [FIRST_WORDS]) = {42, 43, 44};

void conc_where(uint64_t *out)
{
    if (aclsimGetBlockIdx() == 0)
        *out = (uint64_t)(uintptr_t)ACLSIM_DEV(conc_first);
}
ACLSIM_KERNEL_REGISTER(conc_where, uint64_t *);

static int setup(void **state)
{
    (void)state;
    return init_devices("2", "64M") == ACL_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    (void)reset_and_finalize();
    return 0;
}

/* ---- copiers + stream churn --------------------------------------------------- */

struct worker {
    int index;
    int device;
    atomic_int errors;
    char first_error[320];
};

static void worker_error(struct worker *w, const char *what, long round)
{
    note_first_error(&w->errors, w->first_error, sizeof w->first_error,
                     "worker %d (device %d) round %ld: %s", w->index, w->device, round, what);
}

static void fill(uint32_t *p, size_t n, int who, long round)
{
    for (size_t j = 0; j < n; j++)
        p[j] = (uint32_t)who << 28 ^ (uint32_t)round << 12 ^ (uint32_t)j;
}

static void *copier_main(void *arg)
{
    struct worker *w = arg;
    const void *sym = conc_bufs[w->index];
    const size_t bytes = WORDS * sizeof(uint32_t);
    uint32_t *pinned_out = NULL, *pinned_in = NULL, *out = NULL, *in = NULL;
    aclrtStream own = NULL;
    long round = -1;

    if (aclrtSetDevice(w->device) != ACL_SUCCESS) {
        worker_error(w, "aclrtSetDevice", round);
        return NULL;
    }
    out = malloc(bytes);
    in = malloc(bytes);
    if (!out || !in || aclrtMallocHost((void **)&pinned_out, bytes) ||
        aclrtMallocHost((void **)&pinned_in, bytes) || aclrtCreateStream(&own)) {
        worker_error(w, "setup", round);
        goto done;
    }
    for (round = 0; round < ROUNDS; round++) {
        aclrtStream s = round % 3 == 0 ? NULL : own;
        switch (round % 4) {
        case 0: /* synchronous, whole variable */
            fill(out, WORDS, w->index, round);
            if (aclrtMemcpyToSymbol(sym, out, bytes, 0, ACL_MEMCPY_HOST_TO_DEVICE) ||
                aclrtMemcpyFromSymbol(in, bytes, sym, bytes, 0, ACL_MEMCPY_DEVICE_TO_HOST)) {
                worker_error(w, "sync copy", round);
                goto done;
            }
            if (memcmp(in, out, bytes)) {
                worker_error(w, "sync copy read back different data", round);
                goto done;
            }
            break;
        case 1: /* async, page-locked buffers */
            fill(pinned_out, WORDS, w->index, round);
            memset(pinned_in, 0, bytes);
            if (aclrtMemcpyToSymbolAsync(sym, pinned_out, bytes, 0, ACL_MEMCPY_HOST_TO_DEVICE, s) ||
                aclrtMemcpyFromSymbolAsync(pinned_in, bytes, sym, bytes, 0,
                                           ACL_MEMCPY_DEVICE_TO_HOST, s) ||
                aclrtSynchronizeStream(s)) {
                worker_error(w, "async page-locked copy", round);
                goto done;
            }
            if (memcmp(pinned_in, pinned_out, bytes)) {
                worker_error(w, "async page-locked copy read back different data", round);
                goto done;
            }
            break;
        case 2: /* async, pageable buffers: complete on return */
            fill(out, WORDS, w->index, round);
            memset(in, 0, bytes);
            if (aclrtMemcpyToSymbolAsync(sym, out, bytes, 0, ACL_MEMCPY_DEFAULT, s) ||
                aclrtMemcpyFromSymbolAsync(in, bytes, sym, bytes, 0, ACL_MEMCPY_DEFAULT, s)) {
                worker_error(w, "async pageable copy", round);
                goto done;
            }
            if (memcmp(in, out, bytes)) {
                worker_error(w, "async pageable copy read back different data", round);
                goto done;
            }
            break;
        default: { /* partial copies at an offset, checked through the address */
            fill(out, WORDS, w->index, round);
            size_t off = (size_t)(round % 7 + 1) * 16 * sizeof(uint32_t);
            void *addr = NULL;
            if (aclrtMemcpyToSymbol(sym, out, bytes, 0, ACL_MEMCPY_HOST_TO_DEVICE) ||
                aclrtMemcpyToSymbol(sym, out, 64, off, ACL_MEMCPY_HOST_TO_DEVICE) ||
                aclrtGetSymbolAddress(sym, &addr) ||
                aclrtMemcpy(in, bytes, addr, bytes, ACL_MEMCPY_DEVICE_TO_HOST)) {
                worker_error(w, "offset copy", round);
                goto done;
            }
            memcpy((char *)out + off, out, 64);
            if (memcmp(in, out, bytes)) {
                worker_error(w, "offset copy read back different data", round);
                goto done;
            }
            break;
        }
        }
    }
done:
    if (own)
        (void)aclrtDestroyStream(own);
    if (pinned_out)
        (void)aclrtFreeHost(pinned_out);
    if (pinned_in)
        (void)aclrtFreeHost(pinned_in);
    free(out);
    free(in);
    (void)aclrtResetDevice(w->device);
    return NULL;
}

struct churner {
    atomic_bool *stop;
    atomic_int errors;
    char first_error[320];
    long launches[2];   /* total weight launched per device */
    long streams;
};

static void churn_error(struct churner *c, const char *what, long i)
{
    note_first_error(&c->errors, c->first_error, sizeof c->first_error,
                     "stream thread iteration %ld: %s", i, what);
}

static void *churner_main(void *arg)
{
    struct churner *c = arg;
    aclrtContext ctx[2] = {NULL, NULL};
    aclrtFuncHandle hit = NULL;
    uint32_t *word = NULL;
    if (aclrtSetDevice(1) || aclrtGetCurrentContext(&ctx[1]) || aclrtSetDevice(0) ||
        aclrtGetCurrentContext(&ctx[0]) || aclrtGetFuncBySymbol((const void *)&conc_hit, &hit) ||
        aclrtMallocHost((void **)&word, sizeof *word)) {
        churn_error(c, "setup", -1);
        goto done;
    }
    /* Bounded: stop when the copiers are done, or after a fixed number. */
    for (long i = 0; i < 4000 && !atomic_load(c->stop); i++) {
        int d = (int)(i % 2);
        aclrtStream s[3] = {NULL, NULL, NULL};
        if (aclrtSetCurrentContext(ctx[d])) {
            churn_error(c, "aclrtSetCurrentContext", i);
            break;
        }
        int n = (int)(i % 3) + 1;
        for (int k = 0; k < n; k++) {
            if (aclrtCreateStream(&s[k])) {
                churn_error(c, "aclrtCreateStream", i);
                goto done;
            }
            c->streams++;
        }
        for (int k = 0; k < n; k++) {
            uint32_t weight = (uint32_t)(k + 1);
            void *args[] = {&weight};
            if (aclrtLaunchKernelWithArgsArray(hit, HIT_BLOCKS, s[k], NULL, args)) {
                churn_error(c, "launch", i);
                goto done;
            }
            c->launches[d] += weight;
        }
        *word = (uint32_t)i;
        if (aclrtMemcpyToSymbolAsync(&conc_stream_word, word, sizeof *word, 0,
                                     ACL_MEMCPY_HOST_TO_DEVICE, s[0]) ||
            aclrtSynchronizeStream(s[0])) {
            churn_error(c, "async copy on a fresh stream", i);
            goto done;
        }
        uint32_t back = 0;
        if (aclrtMemcpyFromSymbol(&back, sizeof back, &conc_stream_word, sizeof back, 0,
                                  ACL_MEMCPY_DEVICE_TO_HOST) || back != (uint32_t)i) {
            churn_error(c, "conc_stream_word read back", i);
            goto done;
        }
        /* CANN wants a stream synchronised before it is destroyed */
        for (int k = 0; k < n; k++) {
            if (aclrtSynchronizeStream(s[k]) || aclrtDestroyStream(s[k])) {
                churn_error(c, "synchronize/destroy", i);
                goto done;
            }
        }
    }
done:
    if (word)
        (void)aclrtFreeHost(word);
    return NULL;
}

static void test_copiers_and_stream_churn(void **state)
{
    (void)state;
    /* zero the counters on both devices */
    uint32_t zero[HIT_BLOCKS] = {0};
    for (int d = 1; d >= 0; d--) {
        ASSERT_OK(aclrtSetDevice(d));
        ASSERT_OK(aclrtMemcpyToSymbol(conc_hits, zero, sizeof zero, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    }
    aclrtContext ctx[2];
    ASSERT_OK(aclrtGetCurrentContext(&ctx[0]));
    ASSERT_OK(aclrtSetDevice(1));
    ASSERT_OK(aclrtGetCurrentContext(&ctx[1]));

    atomic_bool stop = false;
    struct churner churn;
    memset(&churn, 0, sizeof churn);
    churn.stop = &stop;
    atomic_init(&churn.errors, 0);
    struct worker w[COPIERS];
    pthread_t ct, wt[COPIERS];
    assert_int_equal(pthread_create(&ct, NULL, churner_main, &churn), 0);
    for (int i = 0; i < COPIERS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].index = i;
        w[i].device = i % 2;
        atomic_init(&w[i].errors, 0);
        assert_int_equal(pthread_create(&wt[i], NULL, copier_main, &w[i]), 0);
    }
    for (int i = 0; i < COPIERS; i++)
        assert_int_equal(pthread_join(wt[i], NULL), 0);
    atomic_store(&stop, true);
    assert_int_equal(pthread_join(ct, NULL), 0);

    for (int i = 0; i < COPIERS; i++)
        if (atomic_load(&w[i].errors))
            fail_msg("%s", w[i].first_error);
    if (atomic_load(&churn.errors))
        fail_msg("%s", churn.first_error);
    assert_true(churn.streams > 0);

    /* every launch ran, on its own device only */
    for (int d = 0; d < 2; d++) {
        ASSERT_OK(aclrtSetCurrentContext(ctx[d]));
        ASSERT_OK(aclrtSynchronizeDevice());
        uint32_t hits[HIT_BLOCKS];
        ASSERT_OK(aclrtMemcpyFromSymbol(hits, sizeof hits, conc_hits, sizeof hits, 0,
                                        ACL_MEMCPY_DEVICE_TO_HOST));
        for (int b = 0; b < HIT_BLOCKS; b++)
            assert_int_equal(hits[b], (uint32_t)churn.launches[d]);
    }

    /* each copier's last write is on its own device; the other device's
     * instance of that variable was never written */
    for (int i = 0; i < COPIERS; i++) {
        uint32_t buf[WORDS];
        ASSERT_OK(aclrtSetCurrentContext(ctx[1 - w[i].device]));
        ASSERT_OK(aclrtMemcpyFromSymbol(buf, sizeof buf, conc_bufs[i], sizeof buf, 0,
                                        ACL_MEMCPY_DEVICE_TO_HOST));
        for (int j = 0; j < WORDS; j++)
            assert_int_equal(buf[j], 0);
    }
}

/* ---- racing first use ---------------------------------------------------------- */

#define RACERS 6
#define RACE_ROUNDS 12

struct racer {
    int index;
    int device;
    pthread_barrier_t *start, *checked;
    void *address;      /* what this thread saw as conc_first's instance */
    uint32_t first[3];  /* contents read right after first use */
    aclError err;
    char msg[256];
};

static void racer_fail(struct racer *r, aclError err)
{
    if (!r->err) {
        r->err = err ? err : ACL_ERROR_FAILURE;
        const char *m = aclGetRecentErrMsg();
        snprintf(r->msg, sizeof r->msg, "%s", m ? m : "no message");
    }
}

static void *racer_main(void *arg)
{
    struct racer *r = arg;
    aclError err;
    uint64_t *where = NULL;
    if ((err = aclrtSetDevice(r->device)))
        racer_fail(r, err);
    /* the kernel racer needs somewhere to write; allocate before the start */
    if (!r->err && r->index % 4 == 0 &&
        (err = aclrtMalloc((void **)&where, sizeof *where, ACL_MEM_MALLOC_HUGE_FIRST)))
        racer_fail(r, err);
    pthread_barrier_wait(r->start);
    if (!r->err) {
        switch (r->index % 4) {
        case 0: /* first use through a kernel: all variables get instances */
            {
                aclrtFuncHandle f = NULL;
                void *args[] = {&where};
                if ((err = aclrtGetFuncBySymbol((const void *)&conc_where, &f)) ||
                    (err = aclrtLaunchKernelWithArgsArray(f, 4, NULL, NULL, args)) ||
                    (err = aclrtSynchronizeStream(NULL))) {
                    racer_fail(r, err);
                    break;
                }
                uint64_t a = 0;
                if ((err = aclrtMemcpy(&a, sizeof a, where, sizeof a, ACL_MEMCPY_DEVICE_TO_HOST)))
                    racer_fail(r, err);
                r->address = (void *)(uintptr_t)a;
            }
            break;
        case 1: /* first use through a copy */
            if ((err = aclrtMemcpyFromSymbol(r->first, sizeof r->first, conc_first,
                                             sizeof r->first, 0, ACL_MEMCPY_DEVICE_TO_HOST)) ||
                (err = aclrtGetSymbolAddress(conc_first, &r->address)))
                racer_fail(r, err);
            break;
        case 2: { /* first use through the size */
            size_t size = 0;
            if ((err = aclrtGetSymbolSize(conc_first, &size)) ||
                (err = aclrtGetSymbolAddress(conc_first, &r->address)))
                racer_fail(r, err);
            else if (size != sizeof conc_first)
                racer_fail(r, ACL_ERROR_FAILURE);
            break;
        }
        default: /* first use through the address */
            if ((err = aclrtGetSymbolAddress(conc_first, &r->address)))
                racer_fail(r, err);
            break;
        }
    }
    /* contents of the one instance, before anyone writes to it */
    if (!r->err && r->index % 4 != 1 &&
        (err = aclrtMemcpy(r->first, sizeof r->first, r->address, sizeof r->first,
                           ACL_MEMCPY_DEVICE_TO_HOST)))
        racer_fail(r, err);
    pthread_barrier_wait(r->checked);
    /* dirty the instance: the next round must start from the initializer */
    if (!r->err && r->index == 1) {
        uint32_t junk[FIRST_WORDS];
        memset(junk, 0x5a, sizeof junk);
        if ((err = aclrtMemcpyToSymbol(conc_first, junk, sizeof junk, 0,
                                       ACL_MEMCPY_HOST_TO_DEVICE)))
            racer_fail(r, err);
    }
    if (where)
        (void)aclrtFree(where);
    (void)aclrtResetDevice(r->device);
    return NULL;
}

static void test_first_use_race(void **state)
{
    (void)state;
    for (int round = 0; round < RACE_ROUNDS; round++) {
        int device = round % 2;
        pthread_barrier_t start, checked;
        assert_int_equal(pthread_barrier_init(&start, NULL, RACERS), 0);
        assert_int_equal(pthread_barrier_init(&checked, NULL, RACERS), 0);
        struct racer r[RACERS];
        pthread_t t[RACERS];
        for (int i = 0; i < RACERS; i++) {
            memset(&r[i], 0, sizeof r[i]);
            r[i].index = i;
            r[i].device = device;
            r[i].start = &start;
            r[i].checked = &checked;
            assert_int_equal(pthread_create(&t[i], NULL, racer_main, &r[i]), 0);
        }
        for (int i = 0; i < RACERS; i++)
            assert_int_equal(pthread_join(t[i], NULL), 0);
        pthread_barrier_destroy(&start);
        pthread_barrier_destroy(&checked);

        for (int i = 0; i < RACERS; i++) {
            if (r[i].err)
                fail_msg("round %d racer %d: error %d: %s", round, i, (int)r[i].err, r[i].msg);
            assert_non_null(r[i].address);
            if (r[i].address != r[0].address)
                fail_msg("round %d: racer %d saw instance %p, racer 0 %p", round, i,
                         r[i].address, r[0].address);
            assert_int_equal((uintptr_t)r[i].address % 64, 0);
            if (r[i].first[0] != 42 || r[i].first[1] != 43 || r[i].first[2] != 44)
                fail_msg("round %d racer %d: instance holds %u %u %u, not the initializer "
                         "42 43 44", round, i, r[i].first[0], r[i].first[1], r[i].first[2]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copiers_and_stream_churn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_use_race, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
