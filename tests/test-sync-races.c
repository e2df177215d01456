/*
 * Synchronous copies and sets racing a device reset or aclFinalize: they
 * either complete or fail cleanly (100000 for memory freed by the reset,
 * 100001/107002 for a finalized runtime or context), never touch unmapped
 * memory. Bounded rounds under a watchdog.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "common.h"

#define ROUNDS 60
#define BUF 65536

struct shared {
    void *dev, *pinned;
    atomic_int stop, bad;
    aclError bad_code;
    char host[BUF];
};

static bool allowed(aclError e)
{
    return e == ACL_SUCCESS || e == ACL_ERROR_INVALID_PARAM || e == ACL_ERROR_UNINITIALIZE ||
           e == ACL_ERROR_RT_CONTEXT_NULL;
}

static void *hammer(void *arg)
{
    struct shared *s = arg;
    aclrtSetDevice(0);
    while (!atomic_load(&s->stop)) {
        aclError e[5] = {
            aclrtMemset(s->dev, BUF, 1, BUF),
            aclrtMemset(s->pinned, BUF, 2, BUF),
            aclrtMemcpy(s->pinned, BUF, s->dev, BUF, ACL_MEMCPY_DEVICE_TO_HOST),
            aclrtMemcpy(s->dev, BUF, s->host, BUF, ACL_MEMCPY_HOST_TO_DEVICE),
            aclrtMemsetD32(s->dev, BUF, 7, BUF / 4),
        };
        for (int i = 0; i < 5; i++)
            if (!allowed(e[i]) && !atomic_exchange(&s->bad, 1))
                s->bad_code = e[i];
        drain_msg();
    }
    return NULL;
}

static void race(bool finalize)
{
    for (int round = 0; round < ROUNDS; round++) {
        struct shared *s = calloc(1, sizeof *s);
        assert_non_null(s);
        assert_int_equal(init_devices("1", "64M"), ACL_SUCCESS);
        EXPECT_OK(aclrtSetDevice(0));
        EXPECT_OK(aclrtMalloc(&s->dev, BUF, ACL_MEM_MALLOC_HUGE_FIRST));
        EXPECT_OK(aclrtMallocHost(&s->pinned, BUF));
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_create(&t[i], NULL, hammer, s), 0);
        sleep_ms(1 + round % 3);
        if (finalize)
            EXPECT_OK(aclFinalize());
        else
            EXPECT_OK(aclrtResetDeviceForce(0));
        sleep_ms(1);
        atomic_store(&s->stop, 1);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        if (atomic_load(&s->bad))
            fail_msg("round %d: a call racing %s returned %d", round,
                     finalize ? "aclFinalize" : "aclrtResetDeviceForce", s->bad_code);
        if (!finalize)
            EXPECT_OK(aclFinalize());
        free(s);
        drain_msg();
    }
}

static void test_sync_ops_race_reset(void **state)
{
    (void)state;
    race(false);
}

static void test_sync_ops_race_finalize(void **state)
{
    (void)state;
    race(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sync_ops_race_reset, setup_clean, teardown_clean),
        cmocka_unit_test_setup_teardown(test_sync_ops_race_finalize, setup_clean, teardown_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
