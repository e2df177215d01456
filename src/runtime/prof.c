/*
 * CANN's profiling API (acl/acl_prof.h) and the mstx markers
 * (mstx/ms_tools_ext.h), backed by the tracer (trace.c).
 *
 * A profiling session: aclprofInit names a directory, aclprofStart turns on
 * what its config selects (API slices, task slices on the configured
 * devices, msproftx), aclprofStop turns it off, aclprofFinalize writes the
 * trace to <directory>/aclsim_prof_<pid>.json. Stamps, marks and ranges are
 * instants and slices on the calling thread's track; aclprofMarkEx,
 * aclprofGetStepTimestamp and the mstx marks with a stream also queue a mark
 * task on that stream, which shows on the stream's track when it runs.
 * docs/tracing.md documents every function.
 *
 * This file holds the sessions and what the profiling files share (prof.h):
 * operator subscription is in prof-op.c, stamps, marks, ranges, steps and
 * mstx in prof-tx.c.
 */
#include "prof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_MAX_LEN 4096     /* aclprofInit: the path's length is below this */
#define CONFIG_MAX_LEN 256    /* aclprofSetConfig */
#define CONFIG_MAGIC 0x50524f46u

/* The bits of dataTypeConfig CANN's aclprofStart accepts (its
 * PROF_SWITCH_SUPPORT is every switch of acl_prof.h). */
#define SUPPORTED_TYPES                                                                          \
    (ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU |          \
     ACL_PROF_L2CACHE | ACL_PROF_HCCL_TRACE | ACL_PROF_TRAINING_TRACE | ACL_PROF_MSPROFTX |       \
     ACL_PROF_RUNTIME_API | ACL_PROF_GE_API_L0 | ACL_PROF_TASK_TIME_L0 | ACL_PROF_TASK_MEMORY |   \
     ACL_PROF_GE_API_L1 | ACL_PROF_TASK_TIME_L2 | ACL_PROF_OP_ATTR | ACL_PROF_TASK_TIME_L3 |      \
     ACL_PROF_API_STATS | ACL_PROF_AICORE_SHAPE)
#define API_TYPES (ACL_PROF_ACL_API | ACL_PROF_RUNTIME_API | ACL_PROF_API_STATS)
#define TASK_TYPES                                                                                \
    (ACL_PROF_TASK_TIME | ACL_PROF_TASK_TIME_L0 | ACL_PROF_TASK_TIME_L2 | ACL_PROF_TASK_TIME_L3 | \
     ACL_PROF_TASK_MEMORY | ACL_PROF_OP_ATTR | ACL_PROF_AICORE_METRICS | ACL_PROF_TRAINING_TRACE)

struct aclprofConfig {
    uint32_t magic;
    uint32_t devNums;
    uint32_t devIdList[ACLSIM_MAX_DEVICES];
    aclprofAicoreMetrics metrics;
    uint64_t dataTypeConfig;
    struct aclprofConfig *next;   /* live configs, under lock */
};

pthread_mutex_t aclsim__prof_lock = PTHREAD_MUTEX_INITIALIZER;
static bool inited;                      /* aclprofInit (or aclprofStart's) */
static char out_dir[PATH_MAX_LEN];
static bool running;                     /* between aclprofStart and aclprofStop */
static struct aclprofConfig started;     /* a copy of the config running */
static struct aclprofConfig *configs;    /* live configs */

/* Every aclprof function: IPV350 has no profiling (CANN's tables). */
aclError aclsim__prof_supported(const char *api)
{
    return aclsim__initialized() ? aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV) : ACL_SUCCESS;
}

/* n zeroed bytes, or NULL with 200000 (out of memory) for api. */
void *aclsim__prof_zalloc(size_t n, const char *api)
{
    void *p = aclsim__calloc(1, n);
    if (!p)
        aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    return p;
}

/* ---- sessions ---------------------------------------------------------------- */

static void apply_bits(const struct aclprofConfig *c)
{
    unsigned bits = 0;
    uint32_t devices = 0;
    if (c) {
        if (c->dataTypeConfig & API_TYPES)
            bits |= ACLSIM_TRACE_API;
        if (c->dataTypeConfig & TASK_TYPES)
            bits |= ACLSIM_TRACE_TASKS;
        if (c->dataTypeConfig & ACL_PROF_MSPROFTX)
            bits |= ACLSIM_TRACE_TX;
        for (uint32_t i = 0; i < c->devNums; i++)
            devices |= 1u << c->devIdList[i];
    }
    aclsim__trace_prof_bits(bits, devices);
}

aclError aclprofInit(const char *profilerResultPath, size_t length)
{
    static const char api[] = "aclprofInit";
    ACLSIM_REQUIRE_INIT(api);
    if (!profilerResultPath)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "profilerResultPath is NULL");
    if (length == 0 || length >= PATH_MAX_LEN)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "length %zu is invalid: the path's length must be 1 to %d bytes",
                            length, PATH_MAX_LEN - 1);
    if (strnlen(profilerResultPath, length + 1) != length)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "length %zu is not the length of profilerResultPath (%zu)", length,
                            strnlen(profilerResultPath, PATH_MAX_LEN));
    aclError err = aclsim__prof_supported(api);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__prof_lock);
    if (inited) {
        pthread_mutex_unlock(&aclsim__prof_lock);
        return aclsim__fail(ACL_ERROR_REPEAT_INITIALIZE, api,
                            "profiling is already initialized (aclprofFinalize first)");
    }
    struct stat st;
    if (stat(profilerResultPath, &st) != 0 && mkdir(profilerResultPath, 0750) != 0 &&
        errno != EEXIST) {
        int e = errno;
        pthread_mutex_unlock(&aclsim__prof_lock);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "cannot create directory \"%s\": %s",
                            profilerResultPath, strerror(e));
    }
    if (stat(profilerResultPath, &st) != 0 || !S_ISDIR(st.st_mode) ||
        access(profilerResultPath, W_OK) != 0) {
        pthread_mutex_unlock(&aclsim__prof_lock);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "\"%s\" is not a writable directory", profilerResultPath);
    }
    memcpy(out_dir, profilerResultPath, length);
    out_dir[length] = 0;
    inited = true;
    pthread_mutex_unlock(&aclsim__prof_lock);
    return ACL_SUCCESS;
}

/* Writes the session's file. Caller holds lock. */
static aclError write_out(const char *api)
{
    char path[PATH_MAX_LEN + 64];
    snprintf(path, sizeof path, "%s/aclsim_prof_%d.json", out_dir, (int)getpid());
    if (!aclsim__trace_write(path))
        return aclsim__fail(ACL_ERROR_PROFILING_FAILURE, api, "cannot write %s: %s", path,
                            strerror(errno));
    return ACL_SUCCESS;
}

aclError aclprofFinalize(void)
{
    static const char api[] = "aclprofFinalize";
    aclError err = aclsim__prof_supported(api);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__prof_lock);
    if (!inited) {   /* as CANN: nothing to finalize is a success */
        pthread_mutex_unlock(&aclsim__prof_lock);
        return ACL_SUCCESS;
    }
    if (running) {
        running = false;
        apply_bits(NULL);
    }
    inited = false;
    err = write_out(api);
    pthread_mutex_unlock(&aclsim__prof_lock);
    return err;
}

void aclsim__prof_finalize(void)
{
    pthread_mutex_lock(&aclsim__prof_lock);
    if (running) {
        running = false;
        apply_bits(NULL);
    }
    if (inited) {
        inited = false;
        (void)write_out("aclFinalize");
    }
    pthread_mutex_unlock(&aclsim__prof_lock);
}

aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                   aclprofAicoreMetrics aicoreMetrics,
                                   const aclprofAicoreEvents *aicoreEvents, uint64_t dataTypeConfig)
{
    static const char api[] = "aclprofCreateConfig";
    if (deviceNums && !deviceIdList) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "deviceIdList is NULL with deviceNums %u",
                     deviceNums);
        return NULL;
    }
    if (aicoreEvents) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "aicoreEvents must be NULL");
        return NULL;
    }
    if (!aclsim__initialized()) {
        aclsim__not_initialized(api);
        return NULL;
    }
    uint32_t count = aclsim__config()->visible_count;
    if (deviceNums > count) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "deviceNums %u is more than the %u devices",
                     deviceNums, count);
        return NULL;
    }
    uint32_t seen = 0;
    for (uint32_t i = 0; i < deviceNums; i++) {
        if (deviceIdList[i] >= count || (seen & (1u << deviceIdList[i]))) {
            aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                         deviceIdList[i] >= count ? "device id %u is not a device (0 to %u)"
                                                  : "device id %u is given twice%.0u",
                         deviceIdList[i], count - 1);
            return NULL;
        }
        seen |= 1u << deviceIdList[i];
    }
    if (deviceNums == 0 && !(dataTypeConfig & ACL_PROF_MSPROFTX)) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                     "deviceNums is 0 (allowed only with ACL_PROF_MSPROFTX)");
        return NULL;
    }
    if (aclsim__prof_supported(api))
        return NULL;
    struct aclprofConfig *c = aclsim__prof_zalloc(sizeof *c, api);
    if (!c)
        return NULL;
    c->magic = CONFIG_MAGIC;
    c->devNums = deviceNums;
    if (deviceNums)
        memcpy(c->devIdList, deviceIdList, deviceNums * sizeof *deviceIdList);
    c->metrics = aicoreMetrics;
    c->dataTypeConfig = dataTypeConfig;
    pthread_mutex_lock(&aclsim__prof_lock);
    c->next = configs;
    configs = c;
    pthread_mutex_unlock(&aclsim__prof_lock);
    return c;
}

/* Whether c is a live config. Caller holds lock. */
static bool config_live(const aclprofConfig *c)
{
    for (struct aclprofConfig *p = configs; p; p = p->next)
        if (p == c)
            return true;
    return false;
}

aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig)
{
    static const char api[] = "aclprofDestroyConfig";
    if (!profilerConfig)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "profilerConfig is NULL");
    aclError err = aclsim__prof_supported(api);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__prof_lock);
    for (struct aclprofConfig **p = &configs; *p; p = &(*p)->next)
        if (*p == profilerConfig) {
            struct aclprofConfig *c = *p;
            *p = c->next;
            pthread_mutex_unlock(&aclsim__prof_lock);
            free(c);
            return ACL_SUCCESS;
        }
    pthread_mutex_unlock(&aclsim__prof_lock);
    return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                        "profilerConfig %p is not a config from aclprofCreateConfig (or was "
                        "destroyed)", (const void *)profilerConfig);
}

/* Checks a config for aclprofStart/Stop (caller holds lock). */
static aclError check_config(const aclprofConfig *c, const char *api)
{
    if (!config_live(c))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "profilerConfig %p is not a config from aclprofCreateConfig (or "
                            "was destroyed)", (const void *)c);
    if (c->dataTypeConfig == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "the config's dataTypeConfig is 0");
    if (c->dataTypeConfig & ~(uint64_t)SUPPORTED_TYPES)
        return aclsim__fail(ACL_ERROR_PROF_MODULES_UNSUPPORTED, api,
                            "dataTypeConfig 0x%llx has switches acl_prof.h does not define "
                            "(0x%llx)", (unsigned long long)c->dataTypeConfig,
                            (unsigned long long)(c->dataTypeConfig & ~(uint64_t)SUPPORTED_TYPES));
    return ACL_SUCCESS;
}

aclError aclprofStart(const aclprofConfig *profilerConfig)
{
    static const char api[] = "aclprofStart";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__prof_supported(api);
    if (err)
        return err;
    struct aclprofConfig def = {.magic = CONFIG_MAGIC,
                                .dataTypeConfig = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME};
    if (!profilerConfig) {   /* CANN: the default config over the devices in use */
        for (uint32_t i = 0; i < aclsim__config()->visible_count; i++)
            if (atomic_load(&aclsim__devices[i].open))
                def.devIdList[def.devNums++] = i;
    }
    pthread_mutex_lock(&aclsim__prof_lock);
    if (profilerConfig && (err = check_config(profilerConfig, api))) {
        pthread_mutex_unlock(&aclsim__prof_lock);
        return err;
    }
    if (running) {
        pthread_mutex_unlock(&aclsim__prof_lock);
        return aclsim__fail(ACL_ERROR_PROF_ALREADY_RUN, api,
                            "profiling is already started (aclprofStop first)");
    }
    if (!inited) {   /* CANN initializes itself, writing to the working directory */
        snprintf(out_dir, sizeof out_dir, ".");
        inited = true;
    }
    started = profilerConfig ? *profilerConfig : def;
    started.next = NULL;
    running = true;
    apply_bits(&started);
    pthread_mutex_unlock(&aclsim__prof_lock);
    return ACL_SUCCESS;
}

aclError aclprofStop(const aclprofConfig *profilerConfig)
{
    static const char api[] = "aclprofStop";
    aclError err = aclsim__prof_supported(api);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__prof_lock);
    if (!inited || (!profilerConfig && !running)) {   /* as CANN: nothing to stop */
        pthread_mutex_unlock(&aclsim__prof_lock);
        return ACL_SUCCESS;
    }
    if (profilerConfig && (err = check_config(profilerConfig, api))) {
        pthread_mutex_unlock(&aclsim__prof_lock);
        return err;
    }
    if (!running) {
        pthread_mutex_unlock(&aclsim__prof_lock);
        return aclsim__fail(ACL_ERROR_PROF_NOT_RUN, api, "profiling is not started (aclprofStart)");
    }
    if (profilerConfig &&
        (profilerConfig->dataTypeConfig != started.dataTypeConfig ||
         profilerConfig->devNums != started.devNums ||
         memcmp(profilerConfig->devIdList, started.devIdList,
                started.devNums * sizeof *started.devIdList) != 0)) {
        pthread_mutex_unlock(&aclsim__prof_lock);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "profilerConfig is not the config profiling was started with "
                            "(devices and dataTypeConfig must be the same)");
    }
    running = false;
    apply_bits(NULL);
    pthread_mutex_unlock(&aclsim__prof_lock);
    return ACL_SUCCESS;
}

aclError aclprofSetConfig(aclprofConfigType configType, const char *config, size_t configLength)
{
    static const char api[] = "aclprofSetConfig";
    if ((int)configType <= ACL_PROF_ARGS_MIN || (int)configType >= ACL_PROF_ARGS_MAX ||
        (int)configType == 2)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "configType %d is not an aclprofConfigType", (int)configType);
    if (configLength > CONFIG_MAX_LEN)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "configLength %zu is more than %d", configLength, CONFIG_MAX_LEN);
    if (!config)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "config is NULL");
    if (strnlen(config, configLength + 1) != configLength)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "configLength %zu is not the length of config", configLength);
    aclError err = aclsim__prof_supported(api);
    if (err)
        return err;
    if (configType == ACL_PROF_PATH) {   /* where aclprofFinalize writes */
        if (configLength == 0)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "the ACL_PROF_PATH path is empty");
        pthread_mutex_lock(&aclsim__prof_lock);
        memcpy(out_dir, config, configLength);
        out_dir[configLength] = 0;
        pthread_mutex_unlock(&aclsim__prof_lock);
        return ACL_SUCCESS;
    }
    if (configType == ACL_PROF_STORAGE_LIMIT) {
        /* "<n>MB", n at least 200 (CANN's range); aclsim's file is bounded by
         * its rings (ACLSIM_TRACE_EVENTS) far below that. */
        char digits[CONFIG_MAX_LEN + 1];
        uint64_t mb = 0;
        if (configLength < 3 || strcmp(config + configLength - 2, "MB") != 0 ||
            (memcpy(digits, config, configLength - 2), digits[configLength - 2] = 0,
             !aclsim__parse_decimal(digits, &mb)) ||
            mb < 200 || mb > 4294967295u)
            return aclsim__fail(ACL_ERROR_INVALID_PROFILING_CONFIG, api,
                                "ACL_PROF_STORAGE_LIMIT \"%s\" is not 200MB to 4294967295MB",
                                config);
        return ACL_SUCCESS;
    }
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "configType %d samples hardware (frequencies, system usage, DVPP, LLC, "
                        "NTS, op types) that a simulated device does not have", (int)configType);
}

/* fork() child (THE FORK RULE): new locks. */
void aclsim__prof_forget_after_fork(void)
{
    pthread_mutex_init(&aclsim__prof_lock, NULL);
    pthread_mutex_init(&aclsim__prof_intern_lock, NULL);
    aclsim__dump_forget_after_fork();   /* dump.c's lock */
}
