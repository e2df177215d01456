/*
 * Configuration parsing refuses every malformed value (issue 19, item 6).
 *
 * Table-driven: every setting the runtime reads (ACLSIM_* variables and their
 * "aclsim" JSON keys, ASCEND_RT_VISIBLE_DEVICES, the ASCEND_* log variables,
 * "err_msg_mode", "defaultDevice") gets its garbage -- empty, white space,
 * signs, wrapped negatives, hex, fractions, overflow, trailing text, huge
 * lengths -- and aclInit must fail with the exact code and a message naming
 * the setting, leaving the runtime uninitialized. The JSON file must be one
 * well-formed object: trailing garbage, two values, NUL bytes and \u0000 in
 * strings are refused. Good edge values must still be accepted.
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

static char tmpdir[256];
static char path[512];

/* Writes len bytes of text (NULs allowed) to the config file; returns its path. */
static const char *write_config(const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return path;
}
#define CONFIG(literal) write_config(literal, sizeof(literal) - 1)

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/aclsim-test-config-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(path, sizeof path, "%s/config.json", tmpdir);
    unset_config();
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(tmpdir);
    return 0;
}

/* Values longer than any valid one: "0000...04 devices, please" (the
 * truncation case of the issue) and a long run of digits. */
static char long_count[400], long_digits[300], long_soc[300], long_json[600];

static void build_long_values(void)
{
    memset(long_count, '0', sizeof long_count);
    snprintf(long_count + 300, sizeof long_count - 300, "4 devices, please");
    memset(long_digits, '0', sizeof long_digits - 2);
    long_digits[sizeof long_digits - 2] = '4';
    long_digits[sizeof long_digits - 1] = '\0';
    memset(long_soc, 'A', sizeof long_soc - 1);
    long_soc[sizeof long_soc - 1] = '\0';
    snprintf(long_json, sizeof long_json, "{\"aclsim\": {\"soc_version\": \"%s\"}}", long_soc);
}

/* Checks that aclInit(config) failed with want, that the message names every
 * non-NULL needle, and that the runtime stayed uninitialized. Returns the
 * number of failures (0 or 1), printing what went wrong. */
static int expect_refused(const char *what, const char *config, aclError want, const char *n1,
                          const char *n2)
{
    aclError rc = aclInit(config);
    const char *msg = aclGetRecentErrMsg();
    int failed = 0;
    if (rc != want) {
        print_error("%s: aclInit = %d, expected %d (message: %s)\n", what, rc, want,
                    msg ? msg : "none");
        failed = 1;
    } else if (!msg || (n1 && !strstr(msg, n1)) || (n2 && !strstr(msg, n2))) {
        print_error("%s: message \"%s\" does not mention \"%s\"%s%s%s\n", what, msg ? msg : "NULL",
                    n1 ? n1 : "", n2 ? " and \"" : "", n2 ? n2 : "", n2 ? "\"" : "");
        failed = 1;
    }
    if (runtime_initialized()) {
        if (!failed)
            print_error("%s: runtime initialized despite the error\n", what);
        failed = 1;
        aclFinalize();
        drain_msg();
    }
    return failed;
}

/* ---- environment -------------------------------------------------------- */

/* Garbage that no numeric setting may accept. */
static const char *const bad_numbers[] = {
    "", " ", " 4", "4 ", "\t4", "4\n", "+4", "-4", "-0", " -18446744073709551615",
    "-18446744073709551615", "0x4", "0X4", "04x", "4x", "x4", "4.0", "2.6", "2,5", "1e1",
    "18446744073709551616", "99999999999999999999999999", "4 devices, please",
    long_count, long_digits, "\xef\xbc\x94" /* fullwidth 4 */,
};

static void test_env_numbers_refused(void **state)
{
    (void)state;
    build_long_values();
    static const char *const vars[] = {"ACLSIM_DEVICE_COUNT", "ACLSIM_WORKERS",
                                       "ACLSIM_DEVICE_MEMORY", "ASCEND_GLOBAL_LOG_LEVEL",
                                       "ASCEND_LOG_PRINT_TO_STDOUT", "ASCEND_SLOG_PRINT_TO_STDOUT"};
    int failures = 0;
    for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++) {
        for (size_t i = 0; i < sizeof bad_numbers / sizeof bad_numbers[0]; i++) {
            char what[128];
            snprintf(what, sizeof what, "%s=\"%.40s\"", vars[v], bad_numbers[i]);
            setenv(vars[v], bad_numbers[i], 1);
            /* The message quotes short printable values as they are. */
            bool plain = strlen(bad_numbers[i]) <= 40 && !strpbrk(bad_numbers[i], "\t\n\xef");
            failures += expect_refused(what, NULL, ACL_ERROR_INVALID_PARAM, vars[v],
                                       plain ? bad_numbers[i] : NULL);
            unsetenv(vars[v]);
        }
    }
    assert_int_equal(failures, 0);
}

/* Per-setting ranges and spellings. */
static const struct env_case { const char *var, *value; } bad_env[] = {
    {"ACLSIM_DEVICE_COUNT", "0"}, {"ACLSIM_DEVICE_COUNT", "33"}, {"ACLSIM_DEVICE_COUNT", "000"},
    {"ACLSIM_WORKERS", "0"}, {"ACLSIM_WORKERS", "1"}, {"ACLSIM_WORKERS", "65"},
    {"ACLSIM_DEVICE_MEMORY", "0"}, {"ACLSIM_DEVICE_MEMORY", "0M"},
    {"ACLSIM_DEVICE_MEMORY", "1023K"}, {"ACLSIM_DEVICE_MEMORY", "1048575"},
    {"ACLSIM_DEVICE_MEMORY", "2T"}, {"ACLSIM_DEVICE_MEMORY", "1025G"},
    {"ACLSIM_DEVICE_MEMORY", "64MM"}, {"ACLSIM_DEVICE_MEMORY", "64 M"},
    {"ACLSIM_DEVICE_MEMORY", "M"}, {"ACLSIM_DEVICE_MEMORY", "64iB"},
    {"ACLSIM_DEVICE_MEMORY", "64Bi"}, {"ACLSIM_DEVICE_MEMORY", "64P"},
    {"ACLSIM_DEVICE_MEMORY", "1.5G"}, {"ACLSIM_DEVICE_MEMORY", "-64M"},
    {"ACLSIM_DEVICE_MEMORY", " -18446744073709551615M"},
    {"ACLSIM_DEVICE_MEMORY", "18446744073709551615G"},
    {"ACLSIM_BLOCK_ORDER", ""}, {"ACLSIM_BLOCK_ORDER", "Serial"}, {"ACLSIM_BLOCK_ORDER", "serial "},
    {"ACLSIM_BLOCK_ORDER", "1"},
    {"ACLSIM_SOC_VERSION", ""}, {"ACLSIM_SOC_VERSION", " "},
    {"ACLSIM_SOC_VERSION", " Ascend910B1"}, {"ACLSIM_SOC_VERSION", "Ascend910B1 "},
    {"ACLSIM_SOC_VERSION", "ascend910b1"}, {"ACLSIM_SOC_VERSION", "Ascend910B1\n"},
    {"ACLSIM_SOC_VERSION", "Ascend910B"  "1x"}, {"ACLSIM_SOC_VERSION", long_soc},
    {"ASCEND_GLOBAL_LOG_LEVEL", "5"}, {"ASCEND_GLOBAL_LOG_LEVEL", "-1"},
    {"ASCEND_LOG_PRINT_TO_STDOUT", "2"}, {"ASCEND_LOG_PRINT_TO_STDOUT", "true"},
    {"ASCEND_SLOG_PRINT_TO_STDOUT", "yes"}, {"ASCEND_SLOG_PRINT_TO_STDOUT", "10"},
    {"ASCEND_RT_VISIBLE_DEVICES", ""}, {"ASCEND_RT_VISIBLE_DEVICES", " "},
    {"ASCEND_RT_VISIBLE_DEVICES", "x"}, {"ASCEND_RT_VISIBLE_DEVICES", "-1"},
    {"ASCEND_RT_VISIBLE_DEVICES", " 0"}, {"ASCEND_RT_VISIBLE_DEVICES", ","},
    {"ASCEND_RT_VISIBLE_DEVICES", ",0"}, {"ASCEND_RT_VISIBLE_DEVICES", "+0"},
    {"ASCEND_RT_VISIBLE_DEVICES", "0x1"}, {"ASCEND_RT_VISIBLE_DEVICES", "4"},
    {"ASCEND_RT_VISIBLE_DEVICES", "99999999999999999999"},
    {"ASCEND_RT_VISIBLE_DEVICES", "2,1"}, {"ASCEND_RT_VISIBLE_DEVICES", "1,1"},
    {"ASCEND_RT_VISIBLE_DEVICES", "0,2,2"}, {"ASCEND_RT_VISIBLE_DEVICES", "0,3,1"},
    {"ASCEND_RT_VISIBLE_DEVICES", long_count},
};

static void test_env_values_refused(void **state)
{
    (void)state;
    build_long_values();
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_env / sizeof bad_env[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, "%s=\"%.40s\"", bad_env[i].var, bad_env[i].value);
        setenv("ACLSIM_DEVICE_COUNT", "4", 1);   /* visible-device cases: 4 devices */
        setenv(bad_env[i].var, bad_env[i].value, 1);
        failures += expect_refused(what, NULL, ACL_ERROR_INVALID_PARAM, bad_env[i].var, NULL);
        unset_config();
    }
    assert_int_equal(failures, 0);
}

/* The edges that are right stay accepted. */
static void test_env_good_values(void **state)
{
    (void)state;
    static const struct { const char *var, *value; uint32_t devices; } good[] = {
        {"ACLSIM_DEVICE_COUNT", "1", 1}, {"ACLSIM_DEVICE_COUNT", "32", 32},
        {"ACLSIM_DEVICE_COUNT", "004", 4}, {"ACLSIM_WORKERS", "2", 8},
        {"ACLSIM_WORKERS", "64", 8}, {"ACLSIM_DEVICE_MEMORY", "1M", 8},
        {"ACLSIM_DEVICE_MEMORY", "1048576", 8}, {"ACLSIM_DEVICE_MEMORY", "1T", 8},
        {"ACLSIM_DEVICE_MEMORY", "64MiB", 8}, {"ACLSIM_DEVICE_MEMORY", "64mb", 8},
        {"ACLSIM_DEVICE_MEMORY", "1024K", 8}, {"ACLSIM_DEVICE_MEMORY", "16GiB", 8},
        {"ACLSIM_SOC_VERSION", "Ascend310P3", 8}, {"ASCEND_GLOBAL_LOG_LEVEL", "4", 8},
        {"ACLSIM_BLOCK_ORDER", "serial", 8}, {"ACLSIM_BLOCK_ORDER", "parallel", 8},
        {"ASCEND_GLOBAL_LOG_LEVEL", "0", 8}, {"ASCEND_LOG_PRINT_TO_STDOUT", "0", 8},
        {"ASCEND_SLOG_PRINT_TO_STDOUT", "0", 8}, {"ASCEND_RT_VISIBLE_DEVICES", "0", 1},
        {"ASCEND_RT_VISIBLE_DEVICES", "1,3,5,7", 4}, {"ASCEND_RT_VISIBLE_DEVICES", "07", 1},
        /* CANN reads up to the first bad token or id. */
        {"ASCEND_RT_VISIBLE_DEVICES", "1, 2,3", 1}, {"ASCEND_RT_VISIBLE_DEVICES", "1,3,8", 2},
        {"ASCEND_RT_VISIBLE_DEVICES", "0,1,", 2}, {"ASCEND_RT_VISIBLE_DEVICES", "6,7,x", 2},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv(good[i].var, good[i].value, 1);
        aclError rc = aclInit(NULL);
        uint32_t n = 0;
        if (rc != ACL_SUCCESS) {
            const char *msg = aclGetRecentErrMsg();
            print_error("%s=\"%s\": aclInit = %d (%s)\n", good[i].var, good[i].value, rc,
                        msg ? msg : "no message");
            failures++;
        } else {
            assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
            if (n != good[i].devices) {
                print_error("%s=\"%s\": %u devices, expected %u\n", good[i].var, good[i].value,
                            n, good[i].devices);
                failures++;
            }
            assert_int_equal(aclFinalize(), ACL_SUCCESS);
        }
        unset_config();
    }
    assert_int_equal(failures, 0);
}

/* ---- the JSON file ---------------------------------------------------------- */

struct json_case { const char *text; size_t len; aclError code; const char *needle; };
#define J(literal, code, needle) {literal, sizeof(literal) - 1, code, needle}

static const struct json_case bad_json[] = {
    /* Not exactly one well-formed object. */
    J("{} x", ACL_ERROR_PARSE_FILE, "config file"),
    J("{}{}", ACL_ERROR_PARSE_FILE, "config file"),
    J("{} {}", ACL_ERROR_PARSE_FILE, "config file"),
    J("{}\n[]", ACL_ERROR_PARSE_FILE, "config file"),
    J("{\"aclsim\": {\"workers\": 2}} 5", ACL_ERROR_PARSE_FILE, "config file"),
    J("{}}", ACL_ERROR_PARSE_FILE, "config file"),
    J("{},", ACL_ERROR_PARSE_FILE, "config file"),
    J("[]", ACL_ERROR_PARSE_FILE, "not a JSON object"),
    J("5", ACL_ERROR_PARSE_FILE, "not a JSON object"),
    J("\"{}\"", ACL_ERROR_PARSE_FILE, "not a JSON object"),
    J("null", ACL_ERROR_PARSE_FILE, "not a JSON object"),
    /* NUL bytes, anywhere. */
    J("\0{}", ACL_ERROR_PARSE_FILE, "NUL"),
    J("{}\0", ACL_ERROR_PARSE_FILE, "NUL"),
    J("{}\0garbage", ACL_ERROR_PARSE_FILE, "NUL"),
    J("\0", ACL_ERROR_PARSE_FILE, "NUL"),
    J("{\"aclsim\": {\"soc_version\": \"Ascend910B1\0x\"}}", ACL_ERROR_PARSE_FILE, "NUL"),
    /* \u0000 in a string, which a C string would silently cut. */
    J("{\"aclsim\": {\"device_count\": \"2\\u0000junk\"}}", ACL_ERROR_PARSE_FILE, "\\u0000"),
    J("{\"aclsim\": {\"soc_version\": \"Ascend910B1\\u0000\"}}", ACL_ERROR_PARSE_FILE, "\\u0000"),
    J("{\"x\\u0000y\": 1}", ACL_ERROR_PARSE_FILE, "\\u0000"),
    J("{\"err_msg_mode\": \"0\\u0000\"}", ACL_ERROR_PARSE_FILE, "\\u0000"),
    /* Numbers where integers are expected must be integral and in range. */
    J("{\"aclsim\": {\"device_count\": 2.6}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": 2.5}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": -1}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": -0}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": 1e300}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": 18446744073709551617}}", ACL_ERROR_INVALID_PARAM,
      "device_count"),
    J("{\"aclsim\": {\"device_count\": 4.000001}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"workers\": 2.5}}", ACL_ERROR_INVALID_PARAM, "workers"),
    J("{\"aclsim\": {\"workers\": 64.5}}", ACL_ERROR_INVALID_PARAM, "workers"),
    J("{\"aclsim\": {\"device_memory\": 1048576.5}}", ACL_ERROR_INVALID_PARAM, "device_memory"),
    J("{\"aclsim\": {\"device_memory\": 1048575}}", ACL_ERROR_INVALID_PARAM, "device_memory"),
    J("{\"aclsim\": {\"device_memory\": -1048576}}", ACL_ERROR_INVALID_PARAM, "device_memory"),
    /* Strings for numbers: the environment's strict rules. */
    J("{\"aclsim\": {\"device_count\": \"\"}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": \" 4\"}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": \"4 \"}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": \"+4\"}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": \" -18446744073709551615\"}}", ACL_ERROR_INVALID_PARAM,
      "device_count"),
    J("{\"aclsim\": {\"device_count\": \"0x4\"}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": \"2.6\"}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"workers\": \"2\\n\"}}", ACL_ERROR_INVALID_PARAM, "workers"),
    J("{\"aclsim\": {\"device_memory\": \" -1M\"}}", ACL_ERROR_INVALID_PARAM, "device_memory"),
    J("{\"aclsim\": {\"device_memory\": \"\"}}", ACL_ERROR_INVALID_PARAM, "device_memory"),
    /* Other types. */
    J("{\"aclsim\": {\"device_count\": true}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"device_count\": null}}", ACL_ERROR_INVALID_PARAM, "device_count"),
    J("{\"aclsim\": {\"workers\": [2]}}", ACL_ERROR_INVALID_PARAM, "workers"),
    J("{\"aclsim\": {\"workers\": {}}}", ACL_ERROR_INVALID_PARAM, "workers"),
    J("{\"aclsim\": {\"soc_version\": 910}}", ACL_ERROR_INVALID_PARAM, "soc_version"),
    J("{\"aclsim\": {\"soc_version\": \"\"}}", ACL_ERROR_INVALID_PARAM, "soc_version"),
    J("{\"aclsim\": {\"soc_version\": \"Ascend910B1 \"}}", ACL_ERROR_INVALID_PARAM, "soc_version"),
    /* Unknown or repeated keys. */
    J("{\"aclsim\": {\"device_cnt\": 4}}", ACL_ERROR_INVALID_PARAM, "device_cnt"),
    J("{\"aclsim\": {\"workers\": 2, \"workers\": 3}}", ACL_ERROR_INVALID_PARAM, "twice"),
    J("{\"aclsim\": {}, \"aclsim\": {\"workers\": 3}}", ACL_ERROR_INVALID_PARAM, "twice"),
    J("{\"err_msg_mode\": \"0\", \"err_msg_mode\": \"1\"}", ACL_ERROR_INVALID_PARAM, "twice"),
    J("{\"aclsim\": 5}", ACL_ERROR_FILE_ATTR_INVALID, "aclsim"),
    J("{\"aclsim\": []}", ACL_ERROR_FILE_ATTR_INVALID, "aclsim"),
    /* err_msg_mode: the strings "0" and "1" only. */
    J("{\"err_msg_mode\": \"2\"}", ACL_ERROR_INVALID_PARAM, "err_msg_mode"),
    J("{\"err_msg_mode\": \"\"}", ACL_ERROR_INVALID_PARAM, "err_msg_mode"),
    J("{\"err_msg_mode\": \"00\"}", ACL_ERROR_INVALID_PARAM, "err_msg_mode"),
    J("{\"err_msg_mode\": \" 1\"}", ACL_ERROR_INVALID_PARAM, "err_msg_mode"),
    J("{\"err_msg_mode\": 1}", ACL_ERROR_INVALID_PARAM, "err_msg_mode"),
    J("{\"err_msg_mode\": null}", ACL_ERROR_INVALID_PARAM, "err_msg_mode"),
    /* defaultDevice. */
    J("{\"defaultDevice\": {\"default_device\": \"0x1\"}}", ACL_ERROR_INVALID_PARAM,
      "defaultDevice"),
    J("{\"defaultDevice\": {\"default_device\": \"-1\"}}", ACL_ERROR_INVALID_PARAM,
      "defaultDevice"),
    J("{\"defaultDevice\": {\"default_device\": \" 1\"}}", ACL_ERROR_INVALID_PARAM,
      "defaultDevice"),
    J("{\"defaultDevice\": {\"default_device\": 1.5}}", ACL_ERROR_INVALID_PARAM, "defaultDevice"),
    J("{\"defaultDevice\": {\"default_device\": -0}}", ACL_ERROR_INVALID_PARAM, "defaultDevice"),
    J("{\"defaultDevice\": {\"default_device\": \"8\"}}", ACL_ERROR_INVALID_PARAM,
      "defaultDevice"),
    J("{\"defaultDevice\": {\"default_device\": \"\"}}", ACL_ERROR_INVALID_PARAM,
      "defaultDevice"),
    J("{\"defaultDevice\": {}}", ACL_ERROR_INVALID_PARAM, "defaultDevice"),
    J("{\"defaultDevice\": \"0\"}", ACL_ERROR_INVALID_PARAM, "defaultDevice"),
    J("{\"defaultDevice\": {\"default_device\": \"0\", \"default_device\": \"1\"}}",
      ACL_ERROR_INVALID_PARAM, "twice"),
};

static void test_json_refused(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_json / sizeof bad_json[0]; i++) {
        char what[160];
        snprintf(what, sizeof what, "config file holding '%.100s' (%zu bytes)", bad_json[i].text,
                 bad_json[i].len);
        failures += expect_refused(what, write_config(bad_json[i].text, bad_json[i].len),
                                   bad_json[i].code, bad_json[i].needle, NULL);
    }
    /* A value longer than any valid one is refused and quoted shortened. */
    build_long_values();
    failures += expect_refused("long soc_version", write_config(long_json, strlen(long_json)),
                               ACL_ERROR_INVALID_PARAM, "soc_version", "(299 characters)");
    assert_int_equal(failures, 0);
}

/* The environment wins over the file, but a bad value in the file is still
 * refused (and says it came from the file). */
static void test_json_checked_under_env(void **state)
{
    (void)state;
    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    setenv("ACLSIM_WORKERS", "3", 1);
    assert_int_equal(expect_refused("device_count 2.6 under the environment",
                                    CONFIG("{\"aclsim\": {\"device_count\": 2.6}}"),
                                    ACL_ERROR_INVALID_PARAM, "device_count", "config file"),
                     0);
    assert_int_equal(expect_refused("workers 2.5 under the environment",
                                    CONFIG("{\"aclsim\": {\"workers\": 2.5}}"),
                                    ACL_ERROR_INVALID_PARAM, "workers", "2.5"),
                     0);
    /* And a good file value still loses to the environment. */
    EXPECT_OK(aclInit(CONFIG("{\"aclsim\": {\"device_count\": 5, \"workers\": 4}}")));
    uint32_t n = 0;
    EXPECT_OK(aclrtGetDeviceCount(&n));
    assert_int_equal(n, 2);
    EXPECT_OK(aclFinalize());
    /* A bad environment value is named as such even with a good file. */
    setenv("ACLSIM_DEVICE_COUNT", "2.6", 1);
    assert_int_equal(expect_refused("ACLSIM_DEVICE_COUNT=2.6 over a file",
                                    CONFIG("{\"aclsim\": {\"device_count\": 5}}"),
                                    ACL_ERROR_INVALID_PARAM, "ACLSIM_DEVICE_COUNT", "environment"),
                     0);
    unset_config();
}

static void test_json_good_values(void **state)
{
    (void)state;
    static const struct { const char *text; uint32_t devices; } good[] = {
        {"{\"aclsim\": {\"device_count\": 4}}", 4},
        {"{\"aclsim\": {\"device_count\": 4.0}}", 4},   /* integral */
        {"{\"aclsim\": {\"device_count\": 4e0}}", 4},
        {"{\"aclsim\": {\"device_count\": \"04\"}}", 4},
        {"{\"aclsim\": {\"device_memory\": 1048576, \"workers\": 64}}", 8},
        {"{\"aclsim\": {\"device_memory\": \"1T\", \"workers\": \"2\"}}", 8},
        {" \n\t{\"aclsim\": {}}\n\n ", 8},   /* white space around the object */
        {"{\"err_msg_mode\": \"1\", \"defaultDevice\": {\"default_device\": 7}}", 8},
        {"{\"defaultDevice\": {\"default_device\": \"0\", \"other\": 1}}", 8},
        {"{\"aclsim\": {\"soc_version\": \"Ascend\\u0039\\u0031\\u0030B1\"}}", 8},  /* escapes */
        {"{\"dump\": {\"dump_path\": \"a\\\\u0000b\"}}", 8},   /* a backslash, then u0000 */
        {" \n ", 8},   /* only white space: nothing to set */
        {"\xef\xbb\xbf{\"aclsim\": {\"device_count\": 3}}", 3},   /* a UTF-8 byte-order mark */
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        aclError rc = aclInit(write_config(good[i].text, strlen(good[i].text)));
        uint32_t n = 0;
        if (rc != ACL_SUCCESS) {
            const char *msg = aclGetRecentErrMsg();
            print_error("'%s': aclInit = %d (%s)\n", good[i].text, rc, msg ? msg : "no message");
            failures++;
            continue;
        }
        assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
        if (n != good[i].devices) {
            print_error("'%s': %u devices, expected %u\n", good[i].text, n, good[i].devices);
            failures++;
        }
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
    }
    assert_int_equal(failures, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_clean, teardown_clean)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_env_numbers_refused), T(test_env_values_refused), T(test_env_good_values),
        T(test_json_refused), T(test_json_checked_under_env), T(test_json_good_values),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
