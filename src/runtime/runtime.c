/*
 * aclInit / aclFinalize and the configuration. All configuration is read here,
 * once per aclInit: defaults, then the "aclsim" object of the aclInit JSON
 * file, then environment variables (which win).
 */
#include "internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct aclsim__config no_config;   /* before the first aclInit */
struct aclsim__runtime aclsim__rt = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                     .changed = PTHREAD_COND_INITIALIZER,
                                     .config = &no_config};
static struct config_node { struct config_node *next; struct aclsim__config config; } *configs;

#define DEFAULT_DEVICES 8u
#define DEFAULT_SOC "Ascend910B1"
#define DEFAULT_MEMORY ((size_t)32 << 30)
#define DEFAULT_WORKERS 2u
#define MAX_JSON_DEPTH 10

static const struct soc {
    const char *name;
    bool symbols;          /* device variables supported by this product family */
} socs[] = {
    {"Ascend910B1", true},   {"Ascend910B2", true},    {"Ascend910B3", true},
    {"Ascend910B4", true},   {"Ascend910_9391", true}, {"Ascend910_9381", true},
    {"Ascend910_9372", true}, {"Ascend950PR", true},   {"Ascend950DT", true},
    {"Ascend310P1", true},   {"Ascend310P3", true},
    {"Ascend310B1", false},  {"Ascend310B4", false},   {"Ascend910A", false},
    {"Ascend910B", false},   {"Ascend910ProA", false}, {"Ascend910ProB", false},
    {"Ascend910PremiumA", false}, {"IPV350", false},
};

static const struct soc *find_soc(const char *name)
{
    for (size_t i = 0; i < sizeof socs / sizeof socs[0]; i++)
        if (strcmp(socs[i].name, name) == 0)
            return &socs[i];
    return NULL;
}

bool aclsim__parse_size(const char *text, size_t *out)
{
    if (!text || !*text)
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || text[0] == '-')
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    case 'T': case 't': shift = 40; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')   /* "512MiB" style */
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v == 0 || v > (SIZE_MAX >> shift))
        return false;
    *out = (size_t)v << shift;
    return true;
}

static bool parse_uint(const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
    if (!text || !*text || text[0] == '-')
        return false;
    errno = 0;
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* A setting from the JSON "aclsim" object or the environment, as text. */
struct setting { const char *name; char text[64]; bool present; const char *origin; };

static void json_setting(const cJSON *obj, const char *key, struct setting *s)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!item)
        return;
    if (cJSON_IsString(item))
        snprintf(s->text, sizeof s->text, "%s", item->valuestring);
    else if (cJSON_IsNumber(item))
        snprintf(s->text, sizeof s->text, "%.0f", item->valuedouble);
    else
        snprintf(s->text, sizeof s->text, "<not a string or number>");
    s->present = true;
    s->origin = "aclInit config \"aclsim\" object";
}

static void env_setting(const char *var, struct setting *s)
{
    const char *v = getenv(var);
    if (!v)
        return;
    snprintf(s->text, sizeof s->text, "%s", v);
    s->present = true;
    s->origin = "environment";
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

static aclError read_file(const char *path, char **out)
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
    return ACL_SUCCESS;
}

/* ASCEND_RT_VISIBLE_DEVICES: ascending physical ids; parsing stops at the first
 * invalid character or id, as CANN does ("1, 2,3" selects {1}). */
static void parse_visible(const char *text, struct aclsim__config *c)
{
    c->visible_count = 0;
    const char *p = text;
    long last = -1;
    while (*p >= '0' && *p <= '9' && c->visible_count < ACLSIM_MAX_DEVICES) {
        char *end;
        long id = strtol(p, &end, 10);
        if (id <= last || id >= (long)c->physical_devices)
            break;
        c->visible[c->visible_count++] = (uint32_t)id;
        last = id;
        if (*end != ',')
            break;
        p = end + 1;
    }
}

static aclError configure(const char *path, struct aclsim__config *c, bool *per_process)
{
    struct setting count = {.name = "ACLSIM_DEVICE_COUNT"}, soc = {.name = "ACLSIM_SOC_VERSION"},
                   memory = {.name = "ACLSIM_DEVICE_MEMORY"}, workers = {.name = "ACLSIM_WORKERS"};
    memset(c, 0, sizeof *c);
    int32_t default_device = -1;

    if (path && *path) {
        char *text = NULL;
        aclError err = read_file(path, &text);
        if (err)
            return err;
        if (text[strspn(text, " \t\r\n")] == '\0') {   /* an empty file: nothing to set */
            free(text);
            goto environment;
        }
        cJSON *root = cJSON_Parse(text);
        free(text);
        int objects = 0, arrays = 0;
        if (root)
            json_depth(root, 0, 0, &objects, &arrays);
        if (!root || !cJSON_IsObject(root) || objects > MAX_JSON_DEPTH || arrays > MAX_JSON_DEPTH) {
            cJSON_Delete(root);
            return aclsim__fail(ACL_ERROR_PARSE_FILE, "aclInit",
                                "config file \"%s\" is not a JSON object nested at most %d "
                                "objects and %d arrays deep", path, MAX_JSON_DEPTH, MAX_JSON_DEPTH);
        }
        const cJSON *ours = cJSON_GetObjectItemCaseSensitive(root, "aclsim");
        if (ours && !cJSON_IsObject(ours)) {
            cJSON_Delete(root);
            return aclsim__fail(ACL_ERROR_FILE_ATTR_INVALID, "aclInit",
                                "config file \"%s\": \"aclsim\" must be an object", path);
        }
        json_setting(ours, "device_count", &count);
        json_setting(ours, "soc_version", &soc);
        json_setting(ours, "device_memory", &memory);
        json_setting(ours, "workers", &workers);
        const cJSON *mode = cJSON_GetObjectItemCaseSensitive(root, "err_msg_mode");
        if (mode) {
            const char *m = cJSON_IsString(mode) ? mode->valuestring : NULL;
            if (!m || (strcmp(m, "0") && strcmp(m, "1"))) {
                cJSON_Delete(root);
                return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                                    "config file \"%s\": \"err_msg_mode\" must be \"0\" or \"1\"", path);
            }
            *per_process = m[0] == '1';
        }
        /* "defaultDevice": {"default_device": "0"}: the device of threads that never set one. */
        const cJSON *dd = cJSON_GetObjectItemCaseSensitive(root, "defaultDevice");
        const cJSON *id = cJSON_IsObject(dd) ? cJSON_GetObjectItemCaseSensitive(dd, "default_device")
                                             : NULL;
        if (dd) {
            struct setting def = {.name = "defaultDevice.default_device"};
            json_setting(dd, "default_device", &def);
            uint32_t v;
            if (!id || !parse_uint(def.text, 0, ACLSIM_MAX_DEVICES - 1, &v)) {
                cJSON_Delete(root);
                return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                                    "config file \"%s\": \"defaultDevice\" must be "
                                    "{\"default_device\": \"<device id>\"}", path);
            }
            default_device = (int32_t)v;
        }
        cJSON_Delete(root);
    }
environment:
    env_setting("ACLSIM_DEVICE_COUNT", &count);
    env_setting("ACLSIM_SOC_VERSION", &soc);
    env_setting("ACLSIM_DEVICE_MEMORY", &memory);
    env_setting("ACLSIM_WORKERS", &workers);

    c->physical_devices = DEFAULT_DEVICES;
    if (count.present && !parse_uint(count.text, 1, ACLSIM_MAX_DEVICES, &c->physical_devices))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                            "%s (%s) is \"%s\": expected a device count from 1 to %d",
                            count.name, count.origin, count.text, ACLSIM_MAX_DEVICES);
    snprintf(c->soc_name, sizeof c->soc_name, "%s", soc.present ? soc.text : DEFAULT_SOC);
    const struct soc *s = find_soc(c->soc_name);
    if (!s)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                            "%s (%s) is \"%s\": not a known SoC name (for example Ascend910B1, "
                            "Ascend910_9391, Ascend950PR, Ascend310P3; see the README)",
                            soc.name, soc.origin, soc.text);
    c->symbols_supported = s->symbols;
    c->device_memory = DEFAULT_MEMORY;
    if (memory.present && (!aclsim__parse_size(memory.text, &c->device_memory) ||
                           c->device_memory < ((size_t)1 << 20) ||
                           c->device_memory > ((size_t)1 << 40)))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                            "%s (%s) is \"%s\": expected a size from 1M to 1T such as 512M or 32G",
                            memory.name, memory.origin, memory.text);
    c->workers = DEFAULT_WORKERS;
    if (workers.present && !parse_uint(workers.text, 2, 64, &c->workers))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                            "%s (%s) is \"%s\": expected 2 to 64 worker threads per device",
                            workers.name, workers.origin, workers.text);

    c->default_device = default_device;
    const char *visible = getenv("ASCEND_RT_VISIBLE_DEVICES");
    if (visible && *visible) {
        parse_visible(visible, c);
    } else {
        c->visible_count = c->physical_devices;
        for (uint32_t i = 0; i < c->physical_devices; i++)
            c->visible[i] = i;
    }
    if (c->default_device >= (int32_t)c->visible_count)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclInit",
                            "defaultDevice %d is not a visible device (%u visible)",
                            c->default_device, c->visible_count);
    return ACL_SUCCESS;
}

aclError aclInit(const char *configPath)
{
    aclsim__log_configure();
    pthread_mutex_lock(&aclsim__rt.lock);
    if (aclsim__initialized()) {
        pthread_mutex_unlock(&aclsim__rt.lock);
        return aclsim__fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit",
                            "the runtime is already initialized (aclFinalize first)");
    }
    struct aclsim__config config;
    bool per_process = false;
    aclError err = configure(configPath, &config, &per_process);
    if (err == ACL_SUCCESS) {
        /* Published as a new immutable object: threads that still read the
         * previous one (a call racing a re-init) keep a valid copy. Old ones
         * stay on a list until exit; there is one per aclInit. */
        struct config_node *node = aclsim__malloc(sizeof *node);
        if (!node) {
            pthread_mutex_unlock(&aclsim__rt.lock);
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, "aclInit", "out of memory");
        }
        node->config = config;
        node->next = configs;
        configs = node;
        atomic_store_explicit(&aclsim__rt.config, &node->config, memory_order_release);
        atomic_store(&aclsim__rt.err_msg_per_process, per_process);
        for (uint32_t i = 0; i < config.visible_count; i++) {
            if (aclsim__devices[i].id != (int32_t)i)   /* slot = logical id, set once */
                aclsim__devices[i].id = (int32_t)i;
            if (aclsim__devices[i].physical_id != config.visible[i])
                aclsim__devices[i].physical_id = config.visible[i];
        }
        atomic_store_explicit(&aclsim__rt.initialized, true, memory_order_release);
        aclsim__log(ACLSIM_LOG_INFO, "aclInit: %u device(s) visible of %u, SoC %s, %zu bytes each",
                    config.visible_count, config.physical_devices, config.soc_name,
                    config.device_memory);
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    return err;
}

aclError aclFinalize(void)
{
    pthread_mutex_lock(&aclsim__rt.lock);
    if (!aclsim__initialized()) {
        pthread_mutex_unlock(&aclsim__rt.lock);
        return aclsim__fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize",
                            "the runtime is not initialized (already finalized, or aclInit "
                            "was never called)");
    }
    if (aclsim__tls_worker) {
        pthread_mutex_unlock(&aclsim__rt.lock);
        return aclsim__refuse_self_wait("aclFinalize", "a device");
    }
    /* Live streams lose work not yet started; running tasks finish first.
     * Devices drain with rt.lock released: finalizing keeps any of them
     * (one already passed, too) from being opened again meanwhile. */
    aclsim__rt.finalizing = true;
    for (uint32_t i = 0; i < aclsim__config()->visible_count; i++) {
        struct aclsim__device *dev = &aclsim__devices[i];
        while (dev->closing)   /* a reset in another thread: let it finish */
            pthread_cond_wait(&aclsim__rt.changed, &aclsim__rt.lock);
        if (atomic_load(&dev->open))
            aclsim__device_release((int32_t)i, true, "aclFinalize");
        aclsim__heap_destroy(&dev->heap);
    }
    /* Lock order is binary lock -> rt.lock (aclrtBinaryGetGlobal may open the
     * default device): unload without rt.lock; finalizing still holds. */
    pthread_mutex_unlock(&aclsim__rt.lock);
    aclsim__binaries_finalize();
    pthread_mutex_lock(&aclsim__rt.lock);
    aclsim__events_finalize();
    aclsim__memory_finalize();
    aclsim__failures_finalize();
    atomic_store_explicit(&aclsim__rt.initialized, false, memory_order_release);
    aclsim__rt.finalizing = false;
    pthread_mutex_unlock(&aclsim__rt.lock);
    return ACL_SUCCESS;
}

const char *aclrtGetSocName(void)
{
    return aclsim__initialized() ? aclsim__config()->soc_name : NULL;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    ACLSIM_REQUIRE_INIT("aclrtGetRunMode");
    if (!runMode)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode", "runMode is NULL");
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{
    if (!majorVersion || !minorVersion || !patchVersion)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion",
                            "%s is NULL", !majorVersion ? "majorVersion"
                                          : !minorVersion ? "minorVersion" : "patchVersion");
    *majorVersion = 1;
    *minorVersion = 17;
    *patchVersion = 0;
    return ACL_SUCCESS;
}
