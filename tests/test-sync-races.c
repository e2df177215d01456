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
    void *dev[2], *pinned[2];   /* one pair per hammering thread: no user-level race */
    atomic_int stop, bad;
    aclError bad_code;
    char host[2][BUF];
};

struct hammer_arg { struct shared *s; int i; };

static bool allowed(aclError e)
{
    return e == ACL_SUCCESS || e == ACL_ERROR_INVALID_PARAM || e == ACL_ERROR_UNINITIALIZE ||
           e == ACL_ERROR_RT_CONTEXT_NULL;
}

static void *hammer(void *arg)
{
    struct shared *s = ((struct hammer_arg *)arg)->s;
    int k = ((struct hammer_arg *)arg)->i;
    aclrtSetDevice(0);
    while (!atomic_load(&s->stop)) {
        aclError e[5] = {
            aclrtMemset(s->dev[k], BUF, 1, BUF),
            aclrtMemset(s->pinned[k], BUF, 2, BUF),
            aclrtMemcpy(s->pinned[k], BUF, s->dev[k], BUF, ACL_MEMCPY_DEVICE_TO_HOST),
            aclrtMemcpy(s->dev[k], BUF, s->host[k], BUF, ACL_MEMCPY_HOST_TO_DEVICE),
            aclrtMemsetD32(s->dev[k], BUF, 7, BUF / 4),
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
        struct hammer_arg args[2];
        pthread_t t[2];
        for (int i = 0; i < 2; i++) {
            EXPECT_OK(aclrtMalloc(&s->dev[i], BUF, ACL_MEM_MALLOC_HUGE_FIRST));
            EXPECT_OK(aclrtMallocHost(&s->pinned[i], BUF));
        }
        for (int i = 0; i < 2; i++) {
            args[i] = (struct hammer_arg){s, i};
            assert_int_equal(pthread_create(&t[i], NULL, hammer, &args[i]), 0);
        }
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
