/*
 * aclInit / aclFinalize, configuration (aclInit JSON "aclsim" object and the
 * ACLSIM_* environment variables), aclrtGetSocName / GetRunMode / GetVersion,
 * aclGetRecentErrMsg (per thread and per process) and logging.
 *
 * Every test starts and ends with the runtime finalized and the configuration
 * variables unset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "common.h"

static char tmpdir[256];

/* ---- helpers --------------------------------------------------------------- */

/* Writes text to tmpdir/name; returns a static path buffer (one per call site
 * is enough: tests use the path before the next call). */
static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
    return path;
}

static size_t hbm_total(void)
{
    size_t free_b = 0, total = 0;
    assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total), ACL_SUCCESS);
    return total;
}

/* ---- fixtures ---------------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/aclsim-test-init-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    unset_config();
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- aclInit / aclFinalize ------------------------------------------------------- */

static void test_init_null_and_empty_path(void **state)
{
    (void)state;
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_true(runtime_initialized());
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    assert_false(runtime_initialized());

    assert_int_equal(aclInit(""), ACL_SUCCESS);
    assert_true(runtime_initialized());
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_init_empty_object_file(void **state)
{
    (void)state;
    assert_int_equal(aclInit(write_file("empty-object.json", "{}")), ACL_SUCCESS);
    uint32_t n = 0;
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 8);   /* defaults apply */
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    /* Other CANN keys are accepted and ignored. */
    assert_int_equal(aclInit(write_file("cann-keys.json",
                                        "{\"err_msg_mode\": \"0\", "
                                        "\"dump\": {\"dump_path\": \"/tmp\"}}")),
                     ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

/* CANN (json_parser.cpp GetConfigStrFromFile): a zero-length config file is
 * "nothing to parse", not an error. */
static void test_init_zero_length_file(void **state)
{
    (void)state;
    aclError rc = aclInit(write_file("zero.json", ""));
    if (rc != ACL_SUCCESS) {
        print_error("aclInit(empty file) = %d: %s\n", rc, aclGetRecentErrMsg());
        fail();
    }
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_init_twice(void **state)
{
    (void)state;
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
    expect_msg("aclInit");
    /* The first initialization is intact. */
    uint32_t n = 0;
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 8);
    assert_int_equal(aclInit(write_file("again.json", "{}")), ACL_ERROR_REPEAT_INITIALIZE);
    drain_msg();
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_finalize_twice(void **state)
{
    (void)state;
    /* Never initialized. */
    assert_int_equal(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    expect_msg("aclFinalize");

    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    expect_msg("aclFinalize");
}

static void test_init_missing_file(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/does-not-exist.json", tmpdir);
    assert_int_equal(aclInit(path), ACL_ERROR_INVALID_FILE);
    expect_msg("aclInit", "does-not-exist.json");
    assert_false(runtime_initialized());

    /* A path through a regular file cannot be opened either. */
    char through[600];
    snprintf(through, sizeof through, "%s/x", write_file("plain.json", "{}"));
    assert_int_equal(aclInit(through), ACL_ERROR_INVALID_FILE);
    expect_msg("aclInit", "plain.json/x");
    assert_false(runtime_initialized());

    /* A directory is not a readable config file either. */
    assert_int_equal(aclInit(tmpdir), ACL_ERROR_INVALID_FILE);
    expect_msg("aclInit");
    assert_false(runtime_initialized());
}

static void test_init_unreadable_file(void **state)
{
    (void)state;
    const char *path = write_file("unreadable.json", "{}");
    assert_int_equal(chmod(path, 0), 0);
    /* root reads anything: then there is nothing to test. */
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        close(fd);
        skip();
    }
    assert_int_equal(aclInit(path), ACL_ERROR_INVALID_FILE);
    expect_msg("aclInit", "unreadable.json");
    assert_false(runtime_initialized());
}

static void test_init_bad_json(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{", "not json", "{\"a\": }", "{\"a\": 1,}", "{\"a\" 1}", "{\"aclsim\": {\"device_count\": 4}",
        "}{", "{'a': 1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aclError rc = aclInit(write_file("bad.json", bad[i]));
        if (rc != ACL_ERROR_PARSE_FILE) {
            print_error("aclInit(file holding '%s') = %d, expected %d\n", bad[i], rc,
                        ACL_ERROR_PARSE_FILE);
            if (rc == ACL_SUCCESS)
                aclFinalize();
            fail();
        }
        expect_msg("aclInit");
        assert_false(runtime_initialized());
    }
}

/* Builds {"a":{"a":...{}...}} with `objects` nested objects in total. */
static void nested_objects(char *buf, size_t len, int objects)
{
    size_t n = 0;
    for (int i = 0; i < objects; i++)
        n += (size_t)snprintf(buf + n, len - n, i + 1 < objects ? "{\"a\":" : "{}");
    for (int i = 1; i < objects; i++)
        n += (size_t)snprintf(buf + n, len - n, "}");
}

static void test_init_nesting_depth(void **state)
{
    (void)state;
    char text[512];
    nested_objects(text, sizeof text, 10);
    assert_int_equal(aclInit(write_file("depth10.json", text)), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    nested_objects(text, sizeof text, 11);
    assert_int_equal(aclInit(write_file("depth11.json", text)), ACL_ERROR_PARSE_FILE);
    expect_msg("aclInit");
    assert_false(runtime_initialized());

    nested_objects(text, sizeof text, 40);
    assert_int_equal(aclInit(write_file("depth40.json", text)), ACL_ERROR_PARSE_FILE);
    expect_msg("aclInit");

    /* Arrays nest too: an object holding 11 nested arrays. */
    assert_int_equal(aclInit(write_file("arrays11.json", "{\"a\":[[[[[[[[[[[1]]]]]]]]]]]}")),
                     ACL_ERROR_PARSE_FILE);
    expect_msg("aclInit");
    assert_false(runtime_initialized());
}

/* CANN (json_parser.cpp GetMaxNestedLayers) limits object nesting and array
 * nesting separately, 10 each: 5 objects holding 6 nested arrays is fine. */
static void test_init_nesting_objects_and_arrays_separately(void **state)
{
    (void)state;
    aclError rc = aclInit(write_file("mixed.json",
                                     "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":[[[[[[1]]]]]]}}}}}"));
    if (rc != ACL_SUCCESS) {
        print_error("aclInit(5 objects + 6 arrays deep) = %d: %s\n", rc, aclGetRecentErrMsg());
        fail();
    }
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    /* 10 objects with 10 arrays inside the innermost one: still fine. */
    char text[512];
    size_t n = 0;
    for (int i = 0; i < 9; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "{\"a\":");
    n += (size_t)snprintf(text + n, sizeof text - n, "{\"b\":[[[[[[[[[[2]]]]]]]]]]}");
    for (int i = 0; i < 9; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "}");
    rc = aclInit(write_file("mixed20.json", text));
    if (rc != ACL_SUCCESS) {
        print_error("aclInit(10 objects + 10 arrays deep) = %d: %s\n", rc, aclGetRecentErrMsg());
        fail();
    }
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

/* Calls a set of runtime APIs and checks each answers 100001 with a message
 * naming it. */
static void check_uninitialized_apis(void)
{
    uint32_t count;
    int32_t dev;
    aclrtContext ctx;
    aclrtStream stream;
    aclrtEvent event;
    void *p;
    size_t free_b, total;
    aclrtRunMode mode;
    char a[64] = {0}, b[64] = {0};

    assert_null(aclrtGetSocName());
#define UNINIT(call, name)                                      \
    do {                                                        \
        assert_int_equal((call), ACL_ERROR_UNINITIALIZE);       \
        expect_msg(name);                                       \
    } while (0)
    UNINIT(aclrtSetDevice(0), "aclrtSetDevice");
    UNINIT(aclrtResetDevice(0), "aclrtResetDevice");
    UNINIT(aclrtResetDeviceForce(0), "aclrtResetDeviceForce");
    UNINIT(aclrtGetDevice(&dev), "aclrtGetDevice");
    UNINIT(aclrtGetDeviceCount(&count), "aclrtGetDeviceCount");
    UNINIT(aclrtSynchronizeDevice(), "aclrtSynchronizeDevice");
    UNINIT(aclrtCreateContext(&ctx, 0), "aclrtCreateContext");
    UNINIT(aclrtGetCurrentContext(&ctx), "aclrtGetCurrentContext");
    UNINIT(aclrtCreateStream(&stream), "aclrtCreateStream");
    UNINIT(aclrtSynchronizeStream(NULL), "aclrtSynchronizeStream");
    UNINIT(aclrtCreateEvent(&event), "aclrtCreateEvent");
    UNINIT(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    UNINIT(aclrtMallocHost(&p, 64), "aclrtMallocHost");
    UNINIT(aclrtMemcpy(a, sizeof a, b, sizeof b, ACL_MEMCPY_HOST_TO_HOST), "aclrtMemcpy");
    UNINIT(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total), "aclrtGetMemInfo");
    UNINIT(aclrtGetRunMode(&mode), "aclrtGetRunMode");
#undef UNINIT
}

static void test_calls_before_init(void **state)
{
    (void)state;
    check_uninitialized_apis();
}

static void test_calls_after_finalize(void **state)
{
    (void)state;
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    check_uninitialized_apis();
}

static void test_reinit(void **state)
{
    (void)state;
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    for (int round = 0; round < 3; round++) {
        assert_int_equal(aclInit(NULL), ACL_SUCCESS);
        int32_t dev = -1;
        /* Nothing survives a finalize: no current device... */
        assert_int_equal(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
        drain_msg();
        assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
        assert_int_equal(aclrtGetDevice(&dev), ACL_SUCCESS);
        assert_int_equal(dev, 1);
        /* ...and no memory in use. */
        size_t free_b, total;
        assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total), ACL_SUCCESS);
        assert_int_equal(total, 64 * MiB);
        assert_int_equal(free_b, total);
        void *p = NULL;
        assert_int_equal(aclrtMalloc(&p, 8 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        aclrtStream s;
        assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
        /* Left live on purpose: aclFinalize cleans up. */
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
    }
}

/* Another thread calling the runtime while this one initializes and
 * finalizes: every call answers either normally or 100001, and (under TSan)
 * without a data race. */
static atomic_bool stop_caller;
static atomic_int caller_bad;

static void *caller_loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_caller)) {
        uint32_t n = 0;
        aclError rc = aclrtGetDeviceCount(&n);
        if (rc != ACL_SUCCESS && rc != ACL_ERROR_UNINITIALIZE)
            atomic_fetch_add(&caller_bad, 1);
        if (rc == ACL_SUCCESS && n != 3)
            atomic_fetch_add(&caller_bad, 1);
        int32_t dev;
        rc = aclrtGetDevice(&dev);   /* fails either way: no device here */
        if (rc != ACL_ERROR_RT_CONTEXT_NULL && rc != ACL_ERROR_UNINITIALIZE)
            atomic_fetch_add(&caller_bad, 1);
        const char *msg = aclGetRecentErrMsg();
        if (!msg || !strstr(msg, "aclrtGetDevice"))
            atomic_fetch_add(&caller_bad, 1);
        const char *soc = aclrtGetSocName();
        if (soc && strcmp(soc, "Ascend910B1") != 0)
            atomic_fetch_add(&caller_bad, 1);
    }
    return NULL;
}

static void test_concurrent_init_and_calls(void **state)
{
    (void)state;
    setenv("ACLSIM_DEVICE_COUNT", "3", 1);
    atomic_store(&stop_caller, false);
    atomic_store(&caller_bad, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, caller_loop, NULL), 0);
    for (int i = 0; i < 30; i++) {
        assert_int_equal(aclInit(NULL), ACL_SUCCESS);
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
    }
    atomic_store(&stop_caller, true);
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&caller_bad), 0);
}

/* "defaultDevice": threads that never set a device use it. */
static void *get_device_thread(void *arg)
{
    int32_t *out = arg;
    if (aclrtGetDevice(out) != ACL_SUCCESS)
        *out = -1;
    return NULL;
}

static void test_default_device(void **state)
{
    (void)state;
    setenv("ACLSIM_DEVICE_COUNT", "3", 1);
    assert_int_equal(aclInit(write_file("default-device.json",
                                        "{\"defaultDevice\": {\"default_device\": \"2\"}}")),
                     ACL_SUCCESS);
    int32_t dev = -1;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, get_device_thread, &dev), 0);
    pthread_join(t, NULL);
    assert_int_equal(dev, 2);
    void *p = NULL;   /* the main thread too: memory comes from device 2 */
    assert_int_equal(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtGetDevice(&dev), ACL_SUCCESS);
    assert_int_equal(dev, 2);
    assert_int_equal(aclrtFree(p), ACL_SUCCESS);
    /* An explicit device still wins. */
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtGetDevice(&dev), ACL_SUCCESS);
    assert_int_equal(dev, 0);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    /* A bad default device is an aclInit error naming the key. */
    const char *bad[] = {"{\"defaultDevice\": {\"default_device\": \"3\"}}",
                         "{\"defaultDevice\": {\"default_device\": \"x\"}}",
                         "{\"defaultDevice\": 1}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(aclInit(write_file("bad-default.json", bad[i])), ACL_ERROR_INVALID_PARAM);
        const char *msg = aclGetRecentErrMsg();
        assert_non_null(msg);
        assert_non_null(strstr(msg, "defaultDevice"));
    }
    unsetenv("ACLSIM_DEVICE_COUNT");
}

/* ---- configuration --------------------------------------------------------------- */

static void test_json_aclsim_object(void **state)
{
    (void)state;
    const char *path = write_file("aclsim.json",
                                  "{\"aclsim\": {\"device_count\": 4, \"soc_version\": "
                                  "\"Ascend910_9391\", \"device_memory\": \"16G\", "
                                  "\"workers\": 3}}");
    assert_int_equal(aclInit(path), ACL_SUCCESS);
    uint32_t n = 0;
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 4);
    assert_non_null(aclrtGetSocName());
    assert_string_equal(aclrtGetSocName(), "Ascend910_9391");
    assert_int_equal(aclrtSetDevice(4), ACL_ERROR_RT_INVALID_DEVICEID);
    drain_msg();
    assert_int_equal(aclrtSetDevice(3), ACL_SUCCESS);
    assert_int_equal(hbm_total(), 16 * GiB);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    /* Numbers may also be given as strings. */
    path = write_file("aclsim-strings.json",
                      "{\"aclsim\": {\"device_count\": \"2\", \"device_memory\": \"512M\", "
                      "\"workers\": \"2\"}}");
    assert_int_equal(aclInit(path), ACL_SUCCESS);
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 2);
    assert_string_equal(aclrtGetSocName(), "Ascend910B1");
    assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
    assert_int_equal(hbm_total(), 512 * MiB);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_env_wins_over_json(void **state)
{
    (void)state;
    const char *path = write_file("aclsim-env.json",
                                  "{\"aclsim\": {\"device_count\": 4, \"soc_version\": "
                                  "\"Ascend910_9391\", \"device_memory\": \"16G\"}}");
    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    setenv("ACLSIM_SOC_VERSION", "Ascend310P3", 1);
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    assert_int_equal(aclInit(path), ACL_SUCCESS);
    uint32_t n = 0;
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 2);
    assert_string_equal(aclrtGetSocName(), "Ascend310P3");
    assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
    assert_int_equal(hbm_total(), 64 * MiB);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_bad_json_aclsim_values(void **state)
{
    (void)state;
    static const struct { const char *json, *names; } bad[] = {
        {"{\"aclsim\": {\"device_count\": 0}}", "device_count"},
        {"{\"aclsim\": {\"device_count\": 33}}", "device_count"},
        {"{\"aclsim\": {\"device_count\": \"four\"}}", "device_count"},
        {"{\"aclsim\": {\"device_count\": true}}", "device_count"},
        {"{\"aclsim\": {\"soc_version\": \"Ascend999\"}}", "soc_version"},
        {"{\"aclsim\": {\"device_memory\": \"lots\"}}", "device_memory"},
        {"{\"aclsim\": {\"device_memory\": \"0\"}}", "device_memory"},
        {"{\"aclsim\": {\"workers\": 1}}", "workers"},
        {"{\"aclsim\": {\"workers\": 65}}", "workers"},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aclError rc = aclInit(write_file("bad-value.json", bad[i].json));
        const char *msg = aclGetRecentErrMsg();
        if (rc != ACL_ERROR_INVALID_PARAM || !msg) {
            print_error("aclInit(%s) = %d (message %s), expected %d\n", bad[i].json, rc,
                        msg ? msg : "NULL", ACL_ERROR_INVALID_PARAM);
            failures++;
        } else {
            /* The message names the setting: its JSON key or its variable. */
            char var[64];
            snprintf(var, sizeof var, "ACLSIM_%s", bad[i].names);
            for (char *c = var; *c; c++)
                *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
            if (!strstr(msg, bad[i].names) && !strstr(msg, var)) {
                print_error("aclInit(%s): message \"%s\" names neither %s nor %s\n", bad[i].json,
                            msg, bad[i].names, var);
                failures++;
            }
        }
        if (rc == ACL_SUCCESS)
            aclFinalize();
    }
    assert_int_equal(failures, 0);
}

/* A bad value of every variable: aclInit fails with 100000 and a message
 * naming the variable; the runtime stays uninitialized. */
static void test_bad_env_values(void **state)
{
    (void)state;
    static const struct { const char *var, *value; } bad[] = {
        {"ACLSIM_DEVICE_COUNT", "0"},     {"ACLSIM_DEVICE_COUNT", "33"},
        {"ACLSIM_DEVICE_COUNT", "-1"},    {"ACLSIM_DEVICE_COUNT", "abc"},
        {"ACLSIM_DEVICE_COUNT", "4x"},    {"ACLSIM_DEVICE_COUNT", "1.5"},
        {"ACLSIM_DEVICE_COUNT", "99999999999999999999"}, {"ACLSIM_DEVICE_COUNT", "4294967297"},
        {"ACLSIM_SOC_VERSION", "Ascend910"},   {"ACLSIM_SOC_VERSION", "ascend910b1"},
        {"ACLSIM_SOC_VERSION", "Ascend910B1x"}, {"ACLSIM_SOC_VERSION", "Ascend910B1 "},
        {"ACLSIM_SOC_VERSION", "Ascend"},      {"ACLSIM_SOC_VERSION", "Ascend910B5"},
        {"ACLSIM_DEVICE_MEMORY", "0"},    {"ACLSIM_DEVICE_MEMORY", "0M"},
        {"ACLSIM_DEVICE_MEMORY", "-1"},   {"ACLSIM_DEVICE_MEMORY", "-64M"},
        {"ACLSIM_DEVICE_MEMORY", "abc"},  {"ACLSIM_DEVICE_MEMORY", "12X"},
        {"ACLSIM_DEVICE_MEMORY", "1.5G"}, {"ACLSIM_DEVICE_MEMORY", "M"},
        {"ACLSIM_DEVICE_MEMORY", "64M64"},
        {"ACLSIM_DEVICE_MEMORY", "18446744073709551615G"},
        {"ACLSIM_DEVICE_MEMORY", "99999999999999999999999"},
        {"ACLSIM_WORKERS", "0"},  {"ACLSIM_WORKERS", "1"},  {"ACLSIM_WORKERS", "65"},
        {"ACLSIM_WORKERS", "-2"}, {"ACLSIM_WORKERS", "x"},  {"ACLSIM_WORKERS", "2.5"},
        {"ACLSIM_WORKERS", "4294967298"},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i].var, bad[i].value, 1);
        aclError rc = aclInit(NULL);
        const char *msg = aclGetRecentErrMsg();
        if (rc != ACL_ERROR_INVALID_PARAM) {
            print_error("%s=\"%s\": aclInit = %d, expected %d\n", bad[i].var, bad[i].value, rc,
                        ACL_ERROR_INVALID_PARAM);
            failures++;
        } else if (!msg || !strstr(msg, bad[i].var)) {
            print_error("%s=\"%s\": message \"%s\" does not name the variable\n", bad[i].var,
                        bad[i].value, msg ? msg : "NULL");
            failures++;
        } else if (runtime_initialized()) {
            print_error("%s=\"%s\": runtime initialized despite the error\n", bad[i].var,
                        bad[i].value);
            failures++;
        }
        if (rc == ACL_SUCCESS || runtime_initialized())
            aclFinalize();
        drain_msg();
        unsetenv(bad[i].var);
    }
    assert_int_equal(failures, 0);
}

static void test_good_env_values(void **state)
{
    (void)state;
    uint32_t n = 0;
    setenv("ACLSIM_DEVICE_COUNT", "1", 1);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    setenv("ACLSIM_DEVICE_COUNT", "32", 1);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 32);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    unsetenv("ACLSIM_DEVICE_COUNT");

    setenv("ACLSIM_WORKERS", "2", 1);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    setenv("ACLSIM_WORKERS", "64", 1);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_size_units(void **state)
{
    (void)state;
    static const struct { const char *text; size_t bytes; } sizes[] = {
        {"512M", 512 * MiB}, {"32G", 32 * GiB}, {"1G", GiB}, {"64M", 64 * MiB}, {"3G", 3 * GiB},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        setenv("ACLSIM_DEVICE_MEMORY", sizes[i].text, 1);
        assert_int_equal(aclInit(NULL), ACL_SUCCESS);
        assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
        size_t total = hbm_total();
        if (total != sizes[i].bytes) {
            print_error("ACLSIM_DEVICE_MEMORY=%s: total %zu, expected %zu\n", sizes[i].text, total,
                        sizes[i].bytes);
            fail();
        }
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
    }
    /* The default is 32 GiB. */
    unsetenv("ACLSIM_DEVICE_MEMORY");
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(hbm_total(), 32 * GiB);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

/* ACLSIM_WORKERS=3 (or "workers": 3): three streams of a device run at once.
 * Each host function waits (bounded) until all three have started. */
static atomic_int started;
static atomic_int saw_all;

static void rendezvous(void *arg)
{
    int want = (int)(intptr_t)arg;
    atomic_fetch_add(&started, 1);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (atomic_load(&started) >= want) {
            atomic_fetch_add(&saw_all, 1);
            return;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 10)
            return;   /* give up: the assertion below reports it */
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
}

static void check_three_concurrent_streams(void)
{
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s[3];
    atomic_store(&started, 0);
    atomic_store(&saw_all, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(aclrtCreateStream(&s[i]), ACL_SUCCESS);
    for (int i = 0; i < 3; i++)
        assert_int_equal(aclrtLaunchHostFunc(s[i], rendezvous, (void *)(intptr_t)3), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
    assert_int_equal(atomic_load(&saw_all), 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(aclrtDestroyStream(s[i]), ACL_SUCCESS);
}

static void test_workers_setting(void **state)
{
    (void)state;
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    setenv("ACLSIM_WORKERS", "3", 1);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    check_three_concurrent_streams();
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    unsetenv("ACLSIM_WORKERS");

    assert_int_equal(aclInit(write_file("workers.json", "{\"aclsim\": {\"workers\": 3}}")),
                     ACL_SUCCESS);
    check_three_concurrent_streams();
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    /* The environment wins over the file here too. */
    setenv("ACLSIM_WORKERS", "3", 1);
    assert_int_equal(aclInit(write_file("workers2.json", "{\"aclsim\": {\"workers\": 2}}")),
                     ACL_SUCCESS);
    check_three_concurrent_streams();
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

/* ---- SoC name, run mode, version --------------------------------------------------- */

static void test_soc_name(void **state)
{
    (void)state;
    assert_null(aclrtGetSocName());
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_non_null(aclrtGetSocName());
    assert_string_equal(aclrtGetSocName(), "Ascend910B1");
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    assert_null(aclrtGetSocName());

    static const char *const socs[] = {
        "Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend910_9391",
        "Ascend910_9381", "Ascend910_9372", "Ascend950PR", "Ascend950DT", "Ascend310P1",
        "Ascend310P3", "Ascend310B1", "Ascend310B4", "Ascend910A", "Ascend910B",
        "Ascend910ProA", "Ascend910ProB", "Ascend910PremiumA", "IPV350",
    };
    for (size_t i = 0; i < sizeof socs / sizeof socs[0]; i++) {
        setenv("ACLSIM_SOC_VERSION", socs[i], 1);
        aclError rc = aclInit(NULL);
        if (rc != ACL_SUCCESS) {
            print_error("ACLSIM_SOC_VERSION=%s rejected: %d %s\n", socs[i], rc,
                        aclGetRecentErrMsg());
            fail();
        }
        assert_non_null(aclrtGetSocName());
        assert_string_equal(aclrtGetSocName(), socs[i]);
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
    }
}

static void test_run_mode(void **state)
{
    (void)state;
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    aclrtRunMode mode = (aclrtRunMode)42;
    assert_int_equal(aclrtGetRunMode(&mode), ACL_SUCCESS);
    assert_int_equal(mode, ACL_HOST);   /* the program runs on the host */
    assert_int_equal(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetRunMode");
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_version(void **state)
{
    (void)state;
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    int32_t major = -1, minor = -1, patch = -1;
    assert_int_equal(aclrtGetVersion(&major, &minor, &patch), ACL_SUCCESS);
    assert_true(major >= 1);
    assert_true(minor >= 0);
    assert_true(patch >= 0);
    assert_int_equal(aclrtGetVersion(NULL, &minor, &patch), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetVersion", "majorVersion");
    assert_int_equal(aclrtGetVersion(&major, NULL, &patch), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetVersion", "minorVersion");
    assert_int_equal(aclrtGetVersion(&major, &minor, NULL), ACL_ERROR_INVALID_PARAM);
    expect_msg("aclrtGetVersion", "patchVersion");
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

/* ---- aclGetRecentErrMsg ---------------------------------------------------------- */

static void test_recent_msg_none_and_clear(void **state)
{
    (void)state;
    assert_null(aclGetRecentErrMsg());
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_null(aclGetRecentErrMsg());

    int32_t dev;
    assert_int_equal(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    /* A later successful call does not erase it. */
    uint32_t n;
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    const char *msg = aclGetRecentErrMsg();
    assert_non_null(msg);
    assert_non_null(strstr(msg, "aclrtGetDevice"));
    assert_null(aclGetRecentErrMsg());   /* read once, then cleared */

    /* Only the most recent one is kept. */
    assert_int_equal(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    assert_int_equal(aclrtSetDevice(1000), ACL_ERROR_RT_INVALID_DEVICEID);
    msg = aclGetRecentErrMsg();
    assert_non_null(msg);
    assert_non_null(strstr(msg, "aclrtSetDevice"));
    assert_null(aclGetRecentErrMsg());
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

struct thread_result { aclError rc; const char *own_msg; char own[1024]; };

static void *fail_in_thread(void *arg)
{
    struct thread_result *r = arg;
    int32_t dev;
    r->rc = aclrtGetDevice(&dev);   /* no current context in a new thread */
    return NULL;
}

static void *fail_and_read_in_thread(void *arg)
{
    struct thread_result *r = arg;
    fail_in_thread(arg);
    r->own_msg = aclGetRecentErrMsg();
    if (r->own_msg)
        snprintf(r->own, sizeof r->own, "%s", r->own_msg);
    return NULL;
}

static void test_err_msg_mode_process(void **state)
{
    (void)state;
    assert_int_equal(aclInit(write_file("mode1.json", "{\"err_msg_mode\": \"1\"}")), ACL_SUCCESS);
    drain_msg();
    struct thread_result r = {0};
    run_in_thread(fail_in_thread, &r);
    assert_int_equal(r.rc, ACL_ERROR_RT_CONTEXT_NULL);
    /* Produced in another thread, readable here. */
    const char *msg = aclGetRecentErrMsg();
    assert_non_null(msg);
    assert_non_null(strstr(msg, "aclrtGetDevice"));
    assert_null(aclGetRecentErrMsg());
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_err_msg_mode_thread(void **state)
{
    (void)state;
    const char *configs[] = {write_file("mode0.json", "{\"err_msg_mode\": \"0\"}"), NULL};
    char path0[512];
    snprintf(path0, sizeof path0, "%s", configs[0]);
    configs[0] = path0;
    /* "0" and the default (no file) are per thread. */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(aclInit(configs[i]), ACL_SUCCESS);
        drain_msg();
        struct thread_result r = {0};
        run_in_thread(fail_and_read_in_thread, &r);
        assert_int_equal(r.rc, ACL_ERROR_RT_CONTEXT_NULL);
        assert_non_null(r.own_msg);
        assert_non_null(strstr(r.own, "aclrtGetDevice"));
        /* Not visible in this thread... */
        run_in_thread(fail_in_thread, &r);
        assert_null(aclGetRecentErrMsg());
        /* ...which has its own. */
        assert_int_equal(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
        expect_msg("aclrtSetDevice");
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
    }
}

/* CANN (acl.cpp HandleErrorManagerConfig): err_msg_mode other than "0"/"1"
 * fails aclInit with ACL_ERROR_INVALID_PARAM. */
static void test_err_msg_mode_invalid(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"err_msg_mode\": \"2\"}", "{\"err_msg_mode\": \"\"}", "{\"err_msg_mode\": 1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aclError rc = aclInit(write_file("mode-bad.json", bad[i]));
        if (rc != ACL_ERROR_INVALID_PARAM) {
            print_error("aclInit(%s) = %d, expected %d\n", bad[i], rc, ACL_ERROR_INVALID_PARAM);
            if (rc == ACL_SUCCESS)
                aclFinalize();
            fail();
        }
        expect_msg("err_msg_mode");
        assert_false(runtime_initialized());
    }
}

/* ---- logging ------------------------------------------------------------------------ */

static int saved_stderr = -1;
static char capture_path[512];

static void begin_capture(void)
{
    snprintf(capture_path, sizeof capture_path, "%s/stderr.txt", tmpdir);
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    assert_true(saved_stderr >= 0);
    int fd = open(capture_path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    close(fd);
}

/* Restores stderr and returns what was written meanwhile (static buffer). */
static const char *end_capture(void)
{
    static char text[16384];
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    saved_stderr = -1;
    FILE *f = fopen(capture_path, "rb");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

/* Initializes with the current environment, makes one failing call (unless
 * fail_call is false) and some good ones, finalizes; returns stderr. */
static const char *run_logged_session(bool fail_call)
{
    begin_capture();
    aclError init_rc = aclInit(NULL);
    int32_t dev = 0;
    aclError get_rc = fail_call ? aclrtGetDevice(&dev) : ACL_ERROR_RT_CONTEXT_NULL;
    aclError set_rc = aclrtSetDevice(0);
    void *p = NULL;
    aclError malloc_rc = aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    aclError free_rc = p ? aclrtFree(p) : -1;
    aclError reset_rc = aclrtResetDevice(0);
    aclError fin_rc = aclFinalize();
    const char *text = end_capture();
    assert_int_equal(init_rc, ACL_SUCCESS);
    assert_int_equal(get_rc, ACL_ERROR_RT_CONTEXT_NULL);
    assert_int_equal(set_rc, ACL_SUCCESS);
    assert_int_equal(malloc_rc, ACL_SUCCESS);
    assert_int_equal(free_rc, ACL_SUCCESS);
    assert_int_equal(reset_rc, ACL_SUCCESS);
    assert_int_equal(fin_rc, ACL_SUCCESS);
    drain_msg();
    return text;
}

/* Back to the default (silent) logging configuration. */
static void reset_logging(void)
{
    unset_config();
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void expect_log_(const char *file, int line, const char *text, bool present)
{
    bool found = strstr(text, "aclrtGetDevice") != NULL;
    if (found != present) {
        print_error("%s:%d: error line for aclrtGetDevice %s on stderr; stderr was:\n%s\n", file,
                    line, present ? "missing" : "unexpected", text);
        fail();
    }
}
#define expect_log(text, present) expect_log_(__FILE__, __LINE__, text, present)

static void test_log_default_silent(void **state)
{
    (void)state;
    const char *text = run_logged_session(true);
    if (text[0]) {
        print_error("stderr not empty by default:\n%s\n", text);
        fail();
    }
    /* Level alone does not print. */
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "0", 1);
    text = run_logged_session(true);
    if (text[0]) {
        print_error("stderr not empty with printing off:\n%s\n", text);
        fail();
    }
    reset_logging();
}

static void test_log_print_switches(void **state)
{
    (void)state;
    setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1", 1);
    expect_log(run_logged_session(true), true);

    unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    setenv("ASCEND_LOG_PRINT_TO_STDOUT", "1", 1);
    expect_log(run_logged_session(true), true);

    /* Both set: the newer name wins, either way. */
    setenv("ASCEND_LOG_PRINT_TO_STDOUT", "0", 1);
    setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1", 1);
    expect_log(run_logged_session(true), false);
    setenv("ASCEND_LOG_PRINT_TO_STDOUT", "1", 1);
    setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "0", 1);
    expect_log(run_logged_session(true), true);

    setenv("ASCEND_LOG_PRINT_TO_STDOUT", "0", 1);
    unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    expect_log(run_logged_session(true), false);
    reset_logging();
}

static void test_log_levels(void **state)
{
    (void)state;
    setenv("ASCEND_LOG_PRINT_TO_STDOUT", "1", 1);

    /* Default level 3 (error): errors only, nothing for a clean session. */
    const char *text = run_logged_session(false);
    if (text[0]) {
        print_error("level 3, no error, yet stderr has:\n%s\n", text);
        fail();
    }
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "3", 1);
    expect_log(run_logged_session(true), true);
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "2", 1);
    expect_log(run_logged_session(true), true);

    /* 4: nothing at all. */
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);
    text = run_logged_session(true);
    if (text[0]) {
        print_error("level 4 (null), yet stderr has:\n%s\n", text);
        fail();
    }

    /* 1 (info) and 0 (debug): the session logs more than its error. */
    for (int level = 0; level <= 1; level++) {
        char value[16];
        snprintf(value, sizeof value, "%d", level);
        setenv("ASCEND_GLOBAL_LOG_LEVEL", value, 1);
        text = run_logged_session(false);
        if (!text[0]) {
            print_error("level %d: aclInit/aclrtSetDevice logged nothing\n", level);
            fail();
        }
        expect_log(run_logged_session(true), true);
    }
    reset_logging();
}

/* A configuration error of aclInit is logged too. */
static void test_log_init_error(void **state)
{
    (void)state;
    setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1", 1);
    setenv("ACLSIM_WORKERS", "1", 1);
    begin_capture();
    aclError rc = aclInit(NULL);
    const char *text = end_capture();
    if (rc == ACL_SUCCESS)
        aclFinalize();
    assert_int_equal(rc, ACL_ERROR_INVALID_PARAM);
    drain_msg();
    if (!strstr(text, "ACLSIM_WORKERS")) {
        print_error("aclInit error not on stderr; stderr was:\n%s\n", text);
        fail();
    }
    reset_logging();
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_clean, teardown_clean)
    const struct CMUnitTest tests[] = {
        T(test_init_null_and_empty_path),
        T(test_init_empty_object_file),
        T(test_init_zero_length_file),
        T(test_init_twice),
        T(test_finalize_twice),
        T(test_init_missing_file),
        T(test_init_unreadable_file),
        T(test_init_bad_json),
        T(test_init_nesting_depth),
        T(test_init_nesting_objects_and_arrays_separately),
        T(test_calls_before_init),
        T(test_calls_after_finalize),
        T(test_reinit),
        T(test_concurrent_init_and_calls),
        T(test_json_aclsim_object),
        T(test_default_device),
        T(test_env_wins_over_json),
        T(test_bad_json_aclsim_values),
        T(test_bad_env_values),
        T(test_good_env_values),
        T(test_size_units),
        T(test_workers_setting),
        T(test_soc_name),
        T(test_run_mode),
        T(test_version),
        T(test_recent_msg_none_and_clear),
        T(test_err_msg_mode_process),
        T(test_err_msg_mode_thread),
        T(test_err_msg_mode_invalid),
        T(test_log_default_silent),
        T(test_log_print_switches),
        T(test_log_levels),
        T(test_log_init_error),
    };
#undef T
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
