/*
 * Configuration, read once per aclInit: defaults, then the aclInit JSON file
 * (its "aclsim" object, "err_msg_mode" and "defaultDevice"), then the
 * environment, which wins.
 *
 * Every value is checked whole: a setting is either exactly one of its
 * accepted spellings or aclInit fails with ACL_ERROR_INVALID_PARAM (100000)
 * and a message naming the setting, where it came from and the bad value.
 * Nothing is cut, wrapped, rounded or skipped: numbers are unsigned decimal
 * digits only (no sign, space, base prefix or fraction), JSON numbers must be
 * integral, text longer than MAX_VALUE_LEN is refused, and the JSON file must
 * hold exactly one well-formed object with no NUL byte in it or in its strings
 * (ACL_ERROR_PARSE_FILE, 100006). docs/runtime.md lists every rule.
 */
#include "internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DEVICES 8u
#define DEFAULT_SOC "Ascend910B1"
#define DEFAULT_MEMORY ((size_t)32 << 30)
#define DEFAULT_WORKERS 2u
#define DEFAULT_OP_TIMEOUT_INTERVAL_US 4294967u   /* A2 hardware: 2^32 ns, so 254 of them = 1091 s */
#define MAX_JSON_DEPTH 10
#define MAX_VALUE_LEN 255   /* longer values are refused, never cut */
#define QUOTE_MAX 48        /* characters of a bad value quoted in a message */

/* SoC names: the device model of src/soc.def (soc.c). */

/* ---- strict parsers ------------------------------------------------------ */

/* Unsigned decimal digits up to end (or the NUL): at least one, nothing else,
 * no overflow. */
static bool parse_digits(const char *s, const char **end, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return false;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (end)
        *end = s;
    else if (*s)
        return false;
    *out = v;
    return true;
}

bool aclsim__parse_decimal(const char *text, uint64_t *out)
{
    return text && parse_digits(text, NULL, out);
}

bool aclsim__parse_size(const char *text, size_t *out)
{
    const char *end;
    uint64_t v;
    if (!text || !parse_digits(text, &end, &v))
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    case 'T': case 't': shift = 40; end++; break;
    default: break;
    }
    if (shift && (*end == 'i' || *end == 'I'))   /* "512MiB" style */
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v == 0 || v > (SIZE_MAX >> shift))
        return false;
    *out = (size_t)v << shift;
    return true;
}

/* ---- values and their messages ------------------------------------------- */

/* One setting's value as found: environment text, a JSON string, a JSON
 * number, or a JSON value of another type. */
struct value {
    const char *name;       /* as the message names it */
    const char *origin;     /* NULL: not set */
    const char *text;       /* environment or JSON string; NULL for other JSON values */
    double number;          /* a JSON number */
    bool is_number;
};

/* Quotes s for a message: escaped, at most QUOTE_MAX characters of it. */
static const char *quote(const char *s, char *buf, size_t cap)
{
    size_t n = 0, len = strlen(s);
    buf[n++] = '"';
    for (size_t i = 0; i < len && i < QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            buf[n++] = '\\';
            buf[n++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", c);
        } else {
            buf[n++] = (char)c;
        }
    }
    if (len > QUOTE_MAX)
        snprintf(buf + n, cap - n, "...\" (%zu characters)", len);
    else
        snprintf(buf + n, cap - n, "\"");
    return buf;
}

static const char *describe(const struct value *v, char *buf, size_t cap)
{
    if (v->text)
        return quote(v->text, buf, cap);
    if (v->is_number)
        snprintf(buf, cap, "%.17g", v->number);
    else
        snprintf(buf, cap, "not a string or number");
    return buf;
}

static aclError refuse(const struct value *v, const char *expected)
{
    char q[QUOTE_MAX * 4 + 64];
    return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit", "%s (%s) is %s: expected %s",
                        v->name, v->origin, describe(v, q, sizeof q), expected);
}

/* An integral JSON number within [min, max]. */
static bool number_in(double x, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!(x >= 0 && x <= 9007199254740992.0) || __builtin_signbit(x))   /* 2^53: exact */
        return false;
    uint64_t u = (uint64_t)x;
    if ((double)u != x || u < min || u > max)
        return false;
    *out = u;
    return true;
}

static bool value_uint(const struct value *v, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t u;
    if (v->is_number)
        return number_in(v->number, min, max, out);
    if (!v->text || !aclsim__parse_decimal(v->text, &u) || u < min || u > max)
        return false;
    *out = u;
    return true;
}

/* Reads environment variable var into v (the environment wins over JSON). */
static aclError env_value(const char *var, struct value *v)
{
    const char *text = getenv(var);
    if (!text)
        return ACL_SUCCESS;
    *v = (struct value){.name = var, .origin = "environment", .text = text};
    if (strlen(text) > MAX_VALUE_LEN)
        return refuse(v, "a value of at most " ACLSIM_STR(MAX_VALUE_LEN) " characters");
    return ACL_SUCCESS;
}

/* ---- logging ----------------------------------------------------------- */

/* ASCEND_GLOBAL_LOG_LEVEL 0..4; ASCEND_LOG_PRINT_TO_STDOUT (newer, wins) and
 * ASCEND_SLOG_PRINT_TO_STDOUT 0 or 1. Applied at once when all are valid, so
 * that the errors of the rest of aclInit are logged as configured. */
static aclError configure_logging(void)
{
    struct value level = {0}, print = {0}, old_print = {0};
    aclError err;
    if ((err = env_value("ASCEND_GLOBAL_LOG_LEVEL", &level)) ||
        (err = env_value("ASCEND_LOG_PRINT_TO_STDOUT", &print)) ||
        (err = env_value("ASCEND_SLOG_PRINT_TO_STDOUT", &old_print)))
        return err;
    uint64_t lv = ACLSIM_LOG_ERROR, pr = 0, old = 0;
    if (level.origin && !value_uint(&level, ACLSIM_LOG_DEBUG, ACLSIM_LOG_NULL, &lv))
        return refuse(&level, "0 (debug), 1 (info), 2 (warning), 3 (error) or 4 (none)");
    if (print.origin && !value_uint(&print, 0, 1, &pr))
        return refuse(&print, "0 or 1");
    if (old_print.origin && !value_uint(&old_print, 0, 1, &old))
        return refuse(&old_print, "0 or 1");
    aclsim__log_set((int)lv, print.origin ? pr == 1 : old == 1);
    return ACL_SUCCESS;
}

/* ---- the JSON file ----------------------------------------------------- */

static aclError read_file(const char *path, char **out, size_t *out_len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return aclsim__fail(ACL_ERROR_INVALID_FILE, "aclInit",
                            "cannot open config file \"%s\": %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = aclsim__malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (len + 1 < cap)
            break;
        char *bigger = aclsim__realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
        } else {
            buf = bigger;
            cap *= 2;
        }
    }
    bool failed = ferror(f);
    fclose(f);
    if (!buf)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, "aclInit", "out of memory reading \"%s\"", path);
    if (failed) {
        free(buf);
        return aclsim__fail(ACL_ERROR_INVALID_FILE, "aclInit", "cannot read config file \"%s\"", path);
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return ACL_SUCCESS;
}

/* Deepest nesting of objects and, separately, of arrays (CANN limits each). */
static void json_depth(const cJSON *item, int objects, int arrays, int *max_objects,
                       int *max_arrays)
{
    objects += cJSON_IsObject(item);
    arrays += cJSON_IsArray(item);
    if (objects > *max_objects)
        *max_objects = objects;
    if (arrays > *max_arrays)
        *max_arrays = arrays;
    for (const cJSON *c = item->child; c; c = c->next)
        json_depth(c, objects, arrays, max_objects, max_arrays);
}

/* Whether a string of the (well-formed) JSON text holds an escaped NUL
 * (\u0000), at which cJSON's C string would silently end. */
static bool has_escaped_nul(const char *t)
{
    bool in_string = false;
    for (; *t; t++) {
        if (!in_string) {
            in_string = *t == '"';
        } else if (*t == '"') {
            in_string = false;
        } else if (*t == '\\') {
            t++;   /* well-formed: an escape always has its character */
            if (*t == 'u' && strncmp(t + 1, "0000", 4) == 0)
                return true;
        }
    }
    return false;
}

/* Parses the file into one JSON object (*root NULL: an empty file). */
static aclError parse_file(const char *path, cJSON **root)
{
    char *text = NULL;
    size_t len = 0;
    aclError err = read_file(path, &text, &len);
    if (err)
        return err;
    *root = NULL;
    const char *why = NULL;
    if (memchr(text, '\0', len)) {
        why = "holds a NUL byte";
    } else if (text[strspn(text, " \t\r\n")] == '\0') {
        free(text);   /* empty, or only white space: nothing to set (as CANN) */
        return ACL_SUCCESS;
    } else {
        const char *end = NULL;
        /* Exactly one value, then only white space up to the NUL. */
        *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
        int objects = 0, arrays = 0;
        if (*root)
            json_depth(*root, 0, 0, &objects, &arrays);
        if (!*root)
            why = "is not a JSON object: malformed, or not one value with nothing after it";
        else if (!cJSON_IsObject(*root))
            why = "is not a JSON object";
        else if (objects > MAX_JSON_DEPTH || arrays > MAX_JSON_DEPTH)
            why = "nests more than " ACLSIM_STR(MAX_JSON_DEPTH) " objects or "
                  ACLSIM_STR(MAX_JSON_DEPTH) " arrays";
        else if (has_escaped_nul(text))
            why = "has a string holding a NUL character (\\u0000)";
    }
    free(text);
    if (!why)
        return ACL_SUCCESS;
    cJSON_Delete(*root);
    *root = NULL;
    return aclsim__fail(ACL_ERROR_PARSE_FILE, "aclInit", "config file \"%s\" %s", path, why);
}

/* obj's member key, refusing a key given twice. */
static aclError member(const cJSON *obj, const char *key, const char *where, const cJSON **out)
{
    *out = NULL;
    for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next) {
        if (!c->string || strcmp(c->string, key) != 0)
            continue;
        if (*out)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                                "%s \"%s\" is given twice: give each setting once", where, key);
        *out = c;
    }
    return ACL_SUCCESS;
}

static void json_value(const cJSON *item, const char *name, const char *origin, struct value *v)
{
    if (!item)
        return;
    *v = (struct value){.name = name, .origin = origin};
    if (cJSON_IsString(item))
        v->text = item->valuestring;
    else if (cJSON_IsNumber(item)) {
        v->is_number = true;
        v->number = item->valuedouble;
    }
}

/* ---- the settings ------------------------------------------------------ */

enum { S_COUNT, S_SOC, S_MEMORY, S_WORKERS, S_OP_INTERVAL, S_TRACE, S_TRACE_EVENTS, S_PROFILE,
       S_BLOCK_ORDER, S_CHECK, S_CHECK_STOP, NSETTINGS };
static const struct { const char *env, *key, *json_name; } settings[NSETTINGS] = {
    {"ACLSIM_DEVICE_COUNT", "device_count", "\"aclsim\".\"device_count\""},
    {"ACLSIM_SOC_VERSION", "soc_version", "\"aclsim\".\"soc_version\""},
    {"ACLSIM_DEVICE_MEMORY", "device_memory", "\"aclsim\".\"device_memory\""},
    {"ACLSIM_WORKERS", "workers", "\"aclsim\".\"workers\""},
    {"ACLSIM_OP_TIMEOUT_INTERVAL_US", "op_timeout_interval_us",
     "\"aclsim\".\"op_timeout_interval_us\""},
    {"ACLSIM_TRACE", "trace", "\"aclsim\".\"trace\""},              /* trace.c */
    {"ACLSIM_TRACE_EVENTS", "trace_events", "\"aclsim\".\"trace_events\""},
    {"ACLSIM_PROFILE", "profile", "\"aclsim\".\"profile\""},
    {"ACLSIM_BLOCK_ORDER", "block_order", "\"aclsim\".\"block_order\""},
    {"ACLSIM_CHECK", "check", "\"aclsim\".\"check\""},
    {"ACLSIM_CHECK_STOP", "check_stop", "\"aclsim\".\"check_stop\""},
};

/* The file's settings: the "aclsim" object, "err_msg_mode", "defaultDevice". */
static aclError configure_json(const cJSON *root, const char *path, struct value *v,
                               bool *per_process, int32_t *default_device)
{
    static const char origin[] = "aclInit config file";
    const cJSON *ours, *mode, *dd;
    aclError err;
    if ((err = member(root, "aclsim", "config file key", &ours)) ||
        (err = member(root, "err_msg_mode", "config file key", &mode)) ||
        (err = member(root, "defaultDevice", "config file key", &dd)))
        return err;
    if (ours && !cJSON_IsObject(ours))
        return aclsim__fail(ACL_ERROR_FILE_ATTR_INVALID, "aclInit",
                            "config file \"%s\": \"aclsim\" must be an object", path);
    for (const cJSON *c = ours ? ours->child : NULL; c; c = c->next) {
        int i = 0;
        while (i < NSETTINGS && strcmp(c->string, settings[i].key) != 0)
            i++;
        if (i == NSETTINGS) {
            char q[QUOTE_MAX * 4 + 64];
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                                "config file \"%s\": \"aclsim\" has no setting %s (the settings "
                                "are device_count, soc_version, device_memory, workers, "
                                "op_timeout_interval_us, trace, trace_events, profile, "
                                "block_order, check, check_stop)",
                                path, quote(c->string, q, sizeof q));
        }
        const cJSON *item;
        if ((err = member(ours, settings[i].key, "\"aclsim\" setting", &item)))
            return err;
        json_value(item, settings[i].json_name, origin, &v[i]);
        if (v[i].text && strlen(v[i].text) > MAX_VALUE_LEN)
            return refuse(&v[i], "a value of at most " ACLSIM_STR(MAX_VALUE_LEN) " characters");
    }
    if (mode) {
        struct value m = {0};
        json_value(mode, "\"err_msg_mode\"", origin, &m);
        if (!m.text || (strcmp(m.text, "0") && strcmp(m.text, "1")))
            return refuse(&m, "the string \"0\" (per thread) or \"1\" (per process)");
        *per_process = m.text[0] == '1';
    }
    /* "defaultDevice": {"default_device": "0"}: the device of threads that never set one. */
    if (dd) {
        const cJSON *id = NULL;
        if (cJSON_IsObject(dd) && (err = member(dd, "default_device", "\"defaultDevice\" key", &id)))
            return err;
        if (!id)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                                "\"defaultDevice\" (aclInit config file) is %s: expected "
                                "{\"default_device\": \"<device id>\"}",
                                cJSON_IsObject(dd) ? "an object without \"default_device\""
                                                   : "not an object");
        struct value d = {0};
        json_value(id, "\"defaultDevice\".\"default_device\"", origin, &d);
        uint64_t u;
        if (!value_uint(&d, 0, ACLSIM_MAX_DEVICES - 1, &u))
            return refuse(&d, "a visible device id (decimal digits, as a string or number)");
        *default_device = (int32_t)u;
    }
    return aclsim__dump_configure(root, path);   /* the "dump" object (dump.c) */
}

/* ASCEND_RT_VISIBLE_DEVICES, as CANN (runtime.cc GetVisibleDevices): comma-
 * separated physical ids, read up to the first token that is not all digits
 * or not an existing device ("1, 2,3" selects {1}, "1,3,8" of 8 devices
 * {1,3}); ids out of ascending order, a repeated id, or no id at all are
 * errors (CANN fails every later device call; aclsim fails aclInit). */
static aclError configure_visible(struct aclsim__config *c)
{
    struct value v = {0};
    aclError err = env_value("ASCEND_RT_VISIBLE_DEVICES", &v);
    if (err)
        return err;
    if (!v.origin) {
        c->visible_count = c->physical_devices;
        for (uint32_t i = 0; i < c->physical_devices; i++)
            c->visible[i] = i;
        return ACL_SUCCESS;
    }
    c->visible_count = 0;
    for (const char *p = v.text; c->visible_count < c->physical_devices;) {
        const char *end;
        uint64_t id;
        if (!parse_digits(p, &end, &id) || (*end && *end != ',') || id >= c->physical_devices)
            break;
        for (uint32_t j = 0; j < c->visible_count; j++) {
            if (c->visible[j] == id)
                return refuse(&v, "each device id once");
            if (c->visible[j] > id)
                return refuse(&v, "device ids in ascending order");
        }
        c->visible[c->visible_count++] = (uint32_t)id;
        if (!*end)
            break;
        p = end + 1;
    }
    if (c->visible_count == 0) {
        char expected[96];
        snprintf(expected, sizeof expected,
                 "comma-separated ascending device ids from 0 to %u", c->physical_devices - 1);
        return refuse(&v, expected);
    }
    return ACL_SUCCESS;
}

/* Checks value v of setting i and stores it in *c. */
static aclError apply(int i, const struct value *v, struct aclsim__config *c)
{
    uint64_t u = 0;
    switch (i) {
    case S_COUNT:
        if (!value_uint(v, 1, ACLSIM_MAX_DEVICES, &u))
            return refuse(v, "a device count from 1 to " ACLSIM_STR(ACLSIM_MAX_DEVICES));
        c->physical_devices = (uint32_t)u;
        break;
    case S_SOC: {
        const struct aclsim__soc *soc = v->text ? aclsim__soc_find(v->text) : NULL;
        if (!soc)
            return refuse(v, "a known SoC name (for example Ascend910B1, Ascend910_9391, "
                             "Ascend950PR, Ascend310P3; see the README)");
        snprintf(c->soc_name, sizeof c->soc_name, "%s", soc->name);
        c->symbols_supported = soc->symbols;
        break;
    }
    case S_MEMORY: {
        size_t size = 0;
        bool ok;
        if (v->is_number) {
            ok = number_in(v->number, 1, UINT64_MAX, &u);
            size = (size_t)u;
        } else {
            ok = v->text && aclsim__parse_size(v->text, &size);
        }
        if (!ok || size < ((size_t)1 << 20) || size > ((size_t)1 << 40))
            return refuse(v, "a size from 1M to 1T such as 512M or 32G (digits, then K, M, G "
                             "or T)");
        c->device_memory = size;
        break;
    }
    case S_WORKERS:
        if (!value_uint(v, 2, 64, &u))
            return refuse(v, "2 to 64 worker threads per device");
        c->workers = (uint32_t)u;
        break;
    case S_OP_INTERVAL:   /* failure.c: the op execute timeout's unit */
        if (!value_uint(v, 1, 100000000, &u))
            return refuse(v, "an op timeout interval from 1 to 100000000 microseconds");
        c->op_timeout_interval_us = (uint32_t)u;
        break;
    case S_TRACE:   /* the Chrome trace file (docs/tracing.md); "" for none */
        if (!v->text)
            return refuse(v, "a file path (a string)");
        snprintf(c->trace_path, sizeof c->trace_path, "%s", v->text);
        break;
    case S_TRACE_EVENTS:
        if (!value_uint(v, 16, 16777216, &u))
            return refuse(v, "16 to 16777216 trace events per thread");
        c->trace_events = (uint32_t)u;
        break;
    case S_PROFILE:
        if (!value_uint(v, 0, 1, &u))
            return refuse(v, "0 or 1");
        c->profile = u == 1;
        break;
    case S_BLOCK_ORDER:   /* kernel-block.c: how a launch's blocks are scheduled */
        if (!v->text || (strcmp(v->text, "parallel") != 0 && strcmp(v->text, "serial") != 0))
            return refuse(v, "parallel (blocks on all workers) or serial (one block at a time, "
                             "in index order)");
        c->serial_blocks = strcmp(v->text, "serial") == 0;
        break;
    case S_CHECK: {   /* checker mode: check.c, docs/checker.md */
        char bad[80], q[QUOTE_MAX * 4 + 64];
        bool unsupported;
        if (v->is_number ? !number_in(v->number, 0, 1, &u)
                         : !v->text || !aclsim__check_parse(v->text, &c->check, bad, sizeof bad,
                                                            &unsupported)) {
            if (!v->is_number && v->text && unsupported)
                return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclInit",
                                    "%s (%s) is %s: detector \"%s\" is not implemented in this "
                                    "version of aclsim (implemented: oob, stale, free-pending, "
                                    "early-host-access, race, uninit; see docs/checker.md)",
                                    v->name, v->origin,
                                    describe(v, q, sizeof q), bad);
            return refuse(v, "0, 1, all, or detector names separated by commas (oob, stale, "
                             "free-pending, early-host-access, race, uninit)");
        }
        if (v->is_number)
            aclsim__check_parse(u ? "1" : "0", &c->check, bad, sizeof bad, &unsupported);
        break;
    }
    case S_CHECK_STOP:   /* the first checker report ends the process (check.c) */
        if (!value_uint(v, 0, 1, &u))
            return refuse(v, "0 (a checker report lets the program go on) or 1 (the first "
                             "report ends it with abort())");
        c->check_stop = u == 1;
        break;
    }
    return ACL_SUCCESS;
}

/* Checks every setting and fills *c. A bad value in the file is refused even
 * when the environment overrides it. */
static aclError configure_all(const cJSON *root, const char *path, struct aclsim__config *c,
                              bool *per_process)
{
    struct value json[NSETTINGS] = {{0}}, env[NSETTINGS] = {{0}};
    int32_t default_device = -1;
    aclError err;
    if (root && (err = configure_json(root, path, json, per_process, &default_device)))
        return err;
    c->physical_devices = DEFAULT_DEVICES;
    snprintf(c->soc_name, sizeof c->soc_name, "%s", DEFAULT_SOC);
    c->symbols_supported = aclsim__soc_find(DEFAULT_SOC)->symbols;
    c->device_memory = DEFAULT_MEMORY;
    c->workers = DEFAULT_WORKERS;
    c->op_timeout_interval_us = DEFAULT_OP_TIMEOUT_INTERVAL_US;
    c->serial_blocks = false;
    for (int i = 0; i < NSETTINGS; i++) {
        if ((json[i].origin && (err = apply(i, &json[i], c))) ||
            (err = env_value(settings[i].env, &env[i])) ||
            (env[i].origin && (err = apply(i, &env[i], c))))
            return err;
    }
    if ((err = configure_visible(c)))
        return err;
    c->default_device = default_device;
    if (c->default_device >= (int32_t)c->visible_count)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                            "\"defaultDevice\".\"default_device\" (aclInit config file) is %d: "
                            "not a visible device (%u visible)",
                            c->default_device, c->visible_count);
    return ACL_SUCCESS;
}

aclError aclsim__configure(const char *path, struct aclsim__config *c, bool *per_process)
{
    memset(c, 0, sizeof *c);
    *per_process = false;
    aclError err = configure_logging();
    if (err)
        return err;
    cJSON *root = NULL;
    if (path && *path && (err = parse_file(path, &root)))
        return err;
    err = configure_all(root, path, c, per_process);
    cJSON_Delete(root);
    return err;
}
