/*
 * Init and finalize callbacks and aclFinalizeReference: order, user data,
 * the configuration text, registration rules, failing callbacks, reference
 * counting of repeated aclInit calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "common.h"

static char calls[256];   /* "<tag>," per call, in order */

static void note(const char *tag)
{
    strncat(calls, tag, sizeof calls - strlen(calls) - 1);
    strncat(calls, ",", sizeof calls - strlen(calls) - 1);
}

static char seen_config[256];
static size_t seen_len;

static aclError init_cb(const char *config, size_t len, void *user)
{
    note((const char *)user);
    snprintf(seen_config, sizeof seen_config, "%.*s", (int)len, config);
    seen_len = len;
    uint32_t n = 0;   /* the runtime is usable from a callback */
    return aclrtGetDeviceCount(&n) == ACL_SUCCESS && n > 0 ? ACL_SUCCESS : ACL_ERROR_INTERNAL_ERROR;
}

static aclError init_cb2(const char *config, size_t len, void *user)
{
    (void)config;
    (void)len;
    note((const char *)user);
    return ACL_SUCCESS;
}

static aclError failing_init_cb(const char *config, size_t len, void *user)
{
    (void)config;
    (void)len;
    note((const char *)user);
    return ACL_ERROR_INVALID_FILE;
}

static aclError fini_cb(void *user)
{
    note((const char *)user);
    return ACL_SUCCESS;
}

static aclError fini_cb2(void *user)
{
    note((const char *)user);
    return ACL_SUCCESS;
}

static aclError failing_fini_cb(void *user)
{
    note((const char *)user);
    return ACL_ERROR_INTERNAL_ERROR;
}

static void test_order_and_user_data(void **state)
{
    (void)state;
    calls[0] = '\0';
    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, init_cb2, "other1"));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, init_cb, "other2"));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, init_cb2, "dvpp"));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, init_cb2, "model"));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_OP_EXECUTOR, init_cb2, "executor"));
    EXPECT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, fini_cb, "f-other"));
    EXPECT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_MODEL, fini_cb, "f-model"));
    EXPECT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_OP_COMPILER, fini_cb2, "f-compiler"));
    EXPECT_OK(aclInit(NULL));
    /* No configuration file: the op-executor callback is not called (CANN). */
    assert_string_equal(calls, "model,dvpp,other1,other2,");
    assert_int_equal(seen_len, 0);
    calls[0] = '\0';
    EXPECT_OK(aclFinalize());
    assert_string_equal(calls, "f-compiler,f-model,f-other,");
    /* With a file: every type, and the file's text. */
    char path[] = "/tmp/aclsim-cb-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "{\"err_msg_mode\": \"0\"}";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    calls[0] = '\0';
    EXPECT_OK(aclInit(path));
    assert_string_equal(calls, "model,executor,dvpp,other1,other2,");
    assert_string_equal(seen_config, text);
    /* Registered while initialized: called at once, with the same text. */
    calls[0] = '\0';
    seen_config[0] = '\0';
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_RETR, init_cb, "late"));
    assert_string_equal(calls, "late,");
    assert_string_equal(seen_config, text);
    unlink(path);
    /* Unregistered callbacks are not called again. */
    EXPECT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, fini_cb));
    calls[0] = '\0';
    EXPECT_OK(aclFinalize());
    assert_string_equal(calls, "f-compiler,f-other,");
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, init_cb2));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, init_cb));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, init_cb2));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, init_cb2));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_OP_EXECUTOR, init_cb2));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_RETR, init_cb));
    EXPECT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, fini_cb));
    EXPECT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_OP_COMPILER, fini_cb2));
    calls[0] = '\0';
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclFinalize());
    assert_string_equal(calls, "");
}

static void test_registration_rules(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "cbFunc", aclInitCallbackRegister(ACL_REG_TYPE_OTHER, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "cbFunc", aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, NULL, NULL));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, init_cb2, "a"));
    EXPECT_ERR(ACL_ERROR_INTERNAL_ERROR, "registered already", aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, init_cb, "b"));
    EXPECT_ERR(ACL_ERROR_INTERNAL_ERROR, "no such callback", aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, init_cb));
    EXPECT_ERR(ACL_ERROR_INTERNAL_ERROR, "no such callback", aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, init_cb2));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, init_cb2));
    EXPECT_ERR(ACL_ERROR_INTERNAL_ERROR, NULL, aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, fini_cb));
}

static void test_failing_callbacks(void **state)
{
    (void)state;
    calls[0] = '\0';
    setenv("ACLSIM_DEVICE_COUNT", "1", 1);
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, failing_init_cb, "bad-init"));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, init_cb2, "never"));
    EXPECT_ERR(ACL_ERROR_INVALID_FILE, "init callback", aclInit(NULL));
    assert_string_equal(calls, "bad-init,");   /* later callbacks not called */
    assert_false(runtime_initialized());
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, failing_init_cb));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, init_cb2));
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_DVPP, failing_fini_cb, "bad-fini"));
    EXPECT_ERR(ACL_ERROR_INTERNAL_ERROR, "stays initialized", aclFinalize());
    assert_true(runtime_initialized());
    EXPECT_OK(aclrtSetDevice(0));   /* still usable */
    EXPECT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, failing_fini_cb));
    EXPECT_OK(aclFinalize());
}

static void test_finalize_reference(void **state)
{
    (void)state;
    setenv("ACLSIM_DEVICE_COUNT", "1", 1);
    uint64_t refs = 99;
    EXPECT_ERR(ACL_ERROR_REPEAT_FINALIZE, NULL, aclFinalizeReference(&refs));
    assert_int_equal(refs, 0);
    EXPECT_OK(aclInit(NULL));
    EXPECT_ERR(ACL_ERROR_REPEAT_INITIALIZE, NULL, aclInit(NULL));   /* counted all the same */
    EXPECT_ERR(ACL_ERROR_REPEAT_INITIALIZE, NULL, aclInit(NULL));
    EXPECT_OK(aclFinalizeReference(&refs));
    assert_int_equal(refs, 2);
    assert_true(runtime_initialized());
    EXPECT_OK(aclFinalizeReference(NULL));
    assert_true(runtime_initialized());
    EXPECT_OK(aclFinalizeReference(&refs));
    assert_int_equal(refs, 0);
    assert_false(runtime_initialized());
    /* aclFinalize ends the session whatever the count. */
    EXPECT_OK(aclInit(NULL));
    EXPECT_ERR(ACL_ERROR_REPEAT_INITIALIZE, NULL, aclInit(NULL));
    EXPECT_OK(aclFinalize());
    EXPECT_ERR(ACL_ERROR_REPEAT_FINALIZE, NULL, aclFinalizeReference(&refs));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_clean, teardown_clean)
    const struct CMUnitTest tests[] = {
        T(test_order_and_user_data),
        T(test_registration_rules),
        T(test_failing_callbacks),
        T(test_finalize_reference),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
