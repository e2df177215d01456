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
 */
#include "internal.h"

#include "acl/acl_prof.h"
#include "mstx/ms_tools_ext.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_MAX_LEN 4096     /* aclprofInit: the path's length is below this */
#define CONFIG_MAX_LEN 256    /* aclprofSetConfig */
#define STAMP_MSG_MAX 128     /* aclprofSetStampTraceMessage: below this */
#define MARKEX_MSG_MAX 127    /* aclprofMarkEx */
#define PUSH_DEPTH 128        /* nested aclprofPush / aclprofRangePushEx per thread */
#define RANGES_MAX 65536      /* open aclprofRangeStart / mstx ranges */
#define INTERN_MAX 65536      /* distinct mark-task messages */
#define STAMP_MAGIC 0x53544d50u
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
struct aclprofSubscribeConfig { int8_t timeInfo; aclprofAicoreMetrics metrics; void *fd; };
struct aclprofStepInfo { uint64_t start, end; };
struct stamp { uint32_t magic; char msg[STAMP_MSG_MAX]; struct stamp *next; };
struct range { uint64_t id, start; uint32_t thread; const char *domain; char msg[STAMP_MSG_MAX]; };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool inited;                      /* aclprofInit (or aclprofStart's) */
static char out_dir[PATH_MAX_LEN];
static bool running;                     /* between aclprofStart and aclprofStop */
static struct aclprofConfig started;     /* a copy of the config running */
static struct aclprofConfig *configs;    /* live configs */
static struct stamp *stamps;             /* live stamps */
static struct range *ranges;             /* open ranges */
static size_t nranges, cap_ranges;
static uint64_t next_range = 1;

/* aclprofPush / aclprofRangePushEx, per thread: allocated by a thread's
 * first push (18 KiB would be too much static TLS for every thread), freed
 * when it exits. */
struct pushed { uint64_t start; bool ex; char msg[STAMP_MSG_MAX]; };
static _Thread_local struct pushed *tls_stack;
static _Thread_local uint32_t tls_depth;
static pthread_key_t stack_key;
static pthread_once_t stack_once = PTHREAD_ONCE_INIT;

static void make_stack_key(void)
{
    pthread_key_create(&stack_key, free);
}

static const char tx_domain[] = "msproftx";
static const char mstx_domain[] = "mstx";

/* Every aclprof function: IPV350 has no profiling (CANN's tables). */
static aclError supported(const char *api)
{
    return aclsim__initialized() ? aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV) : ACL_SUCCESS;
}

/* n zeroed bytes, or NULL with 200000 (out of memory) for api. */
static void *zalloc(size_t n, const char *api)
{
    void *p = aclsim__calloc(1, n);
    if (!p)
        aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    return p;
}

/* msproftx is on: aclprofStart with ACL_PROF_MSPROFTX, or ACLSIM_TRACE. */
static aclError tx_on(const char *api)
{
    if (aclsim__tracing(ACLSIM_TRACE_TX))
        return ACL_SUCCESS;
    return aclsim__fail(ACL_ERROR_PROF_NOT_RUN, api,
                        "msproftx is not collecting: call aclprofStart with a config that has "
                        "ACL_PROF_MSPROFTX (or set ACLSIM_TRACE) first");
}

/* ---- interned strings (mark tasks' labels live as long as the process) ---- */

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static struct interned { struct interned *next; char text[]; } *interned;
static size_t ninterned;

static const char *intern(const char *s, size_t n)
{
    pthread_mutex_lock(&intern_lock);
    struct interned *i = interned;
    while (i && (strncmp(i->text, s, n) != 0 || i->text[n] != 0))
        i = i->next;
    if (!i && ninterned < INTERN_MAX && (i = aclsim__malloc(sizeof *i + n + 1))) {
        memcpy(i->text, s, n);
        i->text[n] = 0;
        i->next = interned;
        interned = i;
        ninterned++;
    }
    pthread_mutex_unlock(&intern_lock);
    return i ? i->text : "mark";
}

/* Queues a mark task (a slice on the stream's track when it runs). */
static aclError mark_on_stream(aclrtStream stream, const char *msg, size_t len, const char *api)
{
    struct aclsim__sref s;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (err)
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_MARK, .label = intern(msg, len)};
    return aclsim__submit(s, &t, api, NULL);
}

/* aclrtProfTrace (dump.c): the same mark task. */
aclError aclsim__prof_mark(aclrtStream stream, const char *msg, size_t len, const char *api)
{
    return mark_on_stream(stream, msg, len, api);
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
    aclError err = supported(api);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    if (inited) {
        pthread_mutex_unlock(&lock);
        return aclsim__fail(ACL_ERROR_REPEAT_INITIALIZE, api,
                            "profiling is already initialized (aclprofFinalize first)");
    }
    struct stat st;
    if (stat(profilerResultPath, &st) != 0 && mkdir(profilerResultPath, 0750) != 0 &&
        errno != EEXIST) {
        int e = errno;
        pthread_mutex_unlock(&lock);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "cannot create directory \"%s\": %s",
                            profilerResultPath, strerror(e));
    }
    if (stat(profilerResultPath, &st) != 0 || !S_ISDIR(st.st_mode) ||
        access(profilerResultPath, W_OK) != 0) {
        pthread_mutex_unlock(&lock);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "\"%s\" is not a writable directory", profilerResultPath);
    }
    memcpy(out_dir, profilerResultPath, length);
    out_dir[length] = 0;
    inited = true;
    pthread_mutex_unlock(&lock);
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
    aclError err = supported(api);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    if (!inited) {   /* as CANN: nothing to finalize is a success */
        pthread_mutex_unlock(&lock);
        return ACL_SUCCESS;
    }
    if (running) {
        running = false;
        apply_bits(NULL);
    }
    inited = false;
    err = write_out(api);
    pthread_mutex_unlock(&lock);
    return err;
}

void aclsim__prof_finalize(void)
{
    pthread_mutex_lock(&lock);
    if (running) {
        running = false;
        apply_bits(NULL);
    }
    if (inited) {
        inited = false;
        (void)write_out("aclFinalize");
    }
    pthread_mutex_unlock(&lock);
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
    if (supported(api))
        return NULL;
    struct aclprofConfig *c = zalloc(sizeof *c, api);
    if (!c)
        return NULL;
    c->magic = CONFIG_MAGIC;
    c->devNums = deviceNums;
    if (deviceNums)
        memcpy(c->devIdList, deviceIdList, deviceNums * sizeof *deviceIdList);
    c->metrics = aicoreMetrics;
    c->dataTypeConfig = dataTypeConfig;
    pthread_mutex_lock(&lock);
    c->next = configs;
    configs = c;
    pthread_mutex_unlock(&lock);
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
    aclError err = supported(api);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    for (struct aclprofConfig **p = &configs; *p; p = &(*p)->next)
        if (*p == profilerConfig) {
            struct aclprofConfig *c = *p;
            *p = c->next;
            pthread_mutex_unlock(&lock);
            free(c);
            return ACL_SUCCESS;
        }
    pthread_mutex_unlock(&lock);
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
    aclError err = supported(api);
    if (err)
        return err;
    struct aclprofConfig def = {.magic = CONFIG_MAGIC,
                                .dataTypeConfig = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME};
    if (!profilerConfig) {   /* CANN: the default config over the devices in use */
        for (uint32_t i = 0; i < aclsim__config()->visible_count; i++)
            if (atomic_load(&aclsim__devices[i].open))
                def.devIdList[def.devNums++] = i;
    }
    pthread_mutex_lock(&lock);
    if (profilerConfig && (err = check_config(profilerConfig, api))) {
        pthread_mutex_unlock(&lock);
        return err;
    }
    if (running) {
        pthread_mutex_unlock(&lock);
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
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

aclError aclprofStop(const aclprofConfig *profilerConfig)
{
    static const char api[] = "aclprofStop";
    aclError err = supported(api);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    if (!inited || (!profilerConfig && !running)) {   /* as CANN: nothing to stop */
        pthread_mutex_unlock(&lock);
        return ACL_SUCCESS;
    }
    if (profilerConfig && (err = check_config(profilerConfig, api))) {
        pthread_mutex_unlock(&lock);
        return err;
    }
    if (!running) {
        pthread_mutex_unlock(&lock);
        return aclsim__fail(ACL_ERROR_PROF_NOT_RUN, api, "profiling is not started (aclprofStart)");
    }
    if (profilerConfig &&
        (profilerConfig->dataTypeConfig != started.dataTypeConfig ||
         profilerConfig->devNums != started.devNums ||
         memcmp(profilerConfig->devIdList, started.devIdList,
                started.devNums * sizeof *started.devIdList) != 0)) {
        pthread_mutex_unlock(&lock);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "profilerConfig is not the config profiling was started with "
                            "(devices and dataTypeConfig must be the same)");
    }
    running = false;
    apply_bits(NULL);
    pthread_mutex_unlock(&lock);
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
    aclError err = supported(api);
    if (err)
        return err;
    if (configType == ACL_PROF_PATH) {   /* where aclprofFinalize writes */
        if (configLength == 0)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "the ACL_PROF_PATH path is empty");
        pthread_mutex_lock(&lock);
        memcpy(out_dir, config, configLength);
        out_dir[configLength] = 0;
        pthread_mutex_unlock(&lock);
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

/* ---- operator subscription --------------------------------------------------- */

aclprofSubscribeConfig *aclprofCreateSubscribeConfig(int8_t timeInfoSwitch,
                                                     aclprofAicoreMetrics aicoreMetrics, void *fd)
{
    static const char api[] = "aclprofCreateSubscribeConfig";
    if (!fd) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "fd is NULL");
        return NULL;
    }
    if ((aicoreMetrics > ACL_AICORE_MEMORY_ACCESS && aicoreMetrics != ACL_AICORE_NONE) ||
        (int)aicoreMetrics < 0) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "aicoreMetrics %d is not an aclprofAicoreMetrics",
                     (int)aicoreMetrics);
        return NULL;
    }
    if (supported(api))
        return NULL;
    struct aclprofSubscribeConfig *c = zalloc(sizeof *c, api);
    if (c)
        *c = (struct aclprofSubscribeConfig){timeInfoSwitch, aicoreMetrics, fd};
    return c;
}

aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig *profSubscribeConfig)
{
    static const char api[] = "aclprofDestroySubscribeConfig";
    if (!profSubscribeConfig)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "profSubscribeConfig is NULL");
    aclError err = supported(api);
    if (err)
        return err;
    free((void *)profSubscribeConfig);
    return ACL_SUCCESS;
}

static aclError no_model(uint32_t modelId, const char *api)
{
    return aclsim__fail(ACL_ERROR_INVALID_MODEL_ID, api,
                        "no model has id %u: aclsim loads no models (CANN's aclmdl API is not "
                        "part of it), so there is no model to subscribe to", modelId);
}

aclError aclprofModelSubscribe(uint32_t modelId, const aclprofSubscribeConfig *profSubscribeConfig)
{
    static const char api[] = "aclprofModelSubscribe";
    ACLSIM_REQUIRE_INIT(api);
    if (!profSubscribeConfig)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "profSubscribeConfig is NULL");
    aclError err = supported(api);
    return err ? err : no_model(modelId, api);
}

aclError aclprofModelUnSubscribe(uint32_t modelId)
{
    static const char api[] = "aclprofModelUnSubscribe";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = supported(api);
    return err ? err : no_model(modelId, api);
}

/* One operator of subscription data, as aclsim lays it out. */
struct op_desc {
    uint32_t magic, modelId, flag, threadId;
    uint64_t start, end;   /* microseconds, CLOCK_MONOTONIC */
    char type[ACL_PROF_MAX_OP_TYPE_LEN];
    char name[ACL_PROF_MAX_OP_NAME_LEN];
};
#define OP_MAGIC 0x4f504453u

aclError aclprofGetOpDescSize(size_t *opDescSize)
{
    static const char api[] = "aclprofGetOpDescSize";
    if (!opDescSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "opDescSize is NULL");
    aclError err = supported(api);
    if (!err)
        *opDescSize = sizeof(struct op_desc);
    return err;
}

/* The record index of opInfo, or NULL with the failure (its code in *err). */
static const struct op_desc *op_at(const void *opInfo, size_t opInfoLen, uint32_t index,
                                   const char *api, aclError *err)
{
    if (!opInfo) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "opInfo is NULL");
        return NULL;
    }
    if (opInfoLen == 0 || opInfoLen % sizeof(struct op_desc)) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "opInfoLen %zu is not a multiple of the op description size %zu "
                            "(aclprofGetOpDescSize)", opInfoLen, sizeof(struct op_desc));
        return NULL;
    }
    if ((*err = supported(api)))
        return NULL;
    if (index >= opInfoLen / sizeof(struct op_desc)) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "index %u is not below the %zu ops",
                            index, opInfoLen / sizeof(struct op_desc));
        return NULL;
    }
    const struct op_desc *d = (const struct op_desc *)opInfo + index;
    if (d->magic != OP_MAGIC) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "opInfo is not subscription data (op %u has no op description)",
                            index);
        return NULL;
    }
    return d;
}

aclError aclprofGetOpNum(const void *opInfo, size_t opInfoLen, uint32_t *opNumber)
{
    static const char api[] = "aclprofGetOpNum";
    aclError err;
    if (!opNumber)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "opNumber is NULL");
    if (!op_at(opInfo, opInfoLen, 0, api, &err))
        return err;
    *opNumber = (uint32_t)(opInfoLen / sizeof(struct op_desc));
    return ACL_SUCCESS;
}

static aclError text_len(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *len,
                         bool type, const char *api)
{
    aclError err;
    if (!len)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            type ? "opTypeLen" : "opNameLen");
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, api, &err);
    if (d)
        *len = strnlen(type ? d->type : d->name,
                       type ? sizeof d->type - 1 : sizeof d->name - 1) + 1;
    return err;
}

static aclError text_copy(const void *opInfo, size_t opInfoLen, uint32_t index, char *out,
                          size_t outLen, bool type, const char *api)
{
    aclError err;
    if (!out)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", type ? "opType" : "opName");
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, api, &err);
    if (!d)
        return err;
    const char *s = type ? d->type : d->name;
    size_t n = strnlen(s, type ? sizeof d->type - 1 : sizeof d->name - 1);
    if (outLen < n + 1)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "the buffer of %zu bytes is too small: the %s needs %zu", outLen,
                            type ? "op type" : "op name", n + 1);
    memcpy(out, s, n);
    out[n] = 0;
    return ACL_SUCCESS;
}

aclError aclprofGetOpTypeLen(const void *opInfo, size_t opInfoLen, uint32_t index,
                             size_t *opTypeLen)
{
    return text_len(opInfo, opInfoLen, index, opTypeLen, true, "aclprofGetOpTypeLen");
}

aclError aclprofGetOpType(const void *opInfo, size_t opInfoLen, uint32_t index, char *opType,
                          size_t opTypeLen)
{
    return text_copy(opInfo, opInfoLen, index, opType, opTypeLen, true, "aclprofGetOpType");
}

aclError aclprofGetOpNameLen(const void *opInfo, size_t opInfoLen, uint32_t index,
                             size_t *opNameLen)
{
    return text_len(opInfo, opInfoLen, index, opNameLen, false, "aclprofGetOpNameLen");
}

aclError aclprofGetOpName(const void *opInfo, size_t opInfoLen, uint32_t index, char *opName,
                          size_t opNameLen)
{
    return text_copy(opInfo, opInfoLen, index, opName, opNameLen, false, "aclprofGetOpName");
}

uint64_t aclprofGetOpStart(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetOpStart", &err);
    return d ? d->start : 0;
}

uint64_t aclprofGetOpEnd(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetOpEnd", &err);
    return d ? d->end : 0;
}

uint64_t aclprofGetOpDuration(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetOpDuration", &err);
    return d && d->end >= d->start ? d->end - d->start : 0;
}

size_t aclprofGetModelId(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetModelId", &err);
    return d ? d->modelId : 0;
}

aclprofSubscribeOpFlag aclprofGetOpFlag(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetOpFlag", &err);
    return d ? (aclprofSubscribeOpFlag)d->flag : ACL_SUBSCRIBE_NONE;
}

const char *aclprofGetOpAttriValue(const void *opInfo, size_t opInfoLen, uint32_t index,
                                   aclprofSubscribeOpAttri attri)
{
    static const char api[] = "aclprofGetOpAttriValue";
    static _Thread_local char value[16];
    aclError err;
    if (attri != ACL_SUBSCRIBE_ATTRI_THREADID) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "attri %d is not an aclprofSubscribeOpAttri",
                     (int)attri);
        return NULL;
    }
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, api, &err);
    if (!d)
        return NULL;
    snprintf(value, sizeof value, "%u", d->threadId);
    return value;
}

/* ---- steps ---------------------------------------------------------------------- */

aclprofStepInfo *aclprofCreateStepInfo(void)
{
    static const char api[] = "aclprofCreateStepInfo";
    return supported(api) ? NULL : zalloc(sizeof(aclprofStepInfo), api);
}

void aclprofDestroyStepInfo(aclprofStepInfo *stepinfo)
{
    if (stepinfo && !supported("aclprofDestroyStepInfo"))
        free(stepinfo);
}

aclError aclprofGetStepTimestamp(aclprofStepInfo *stepInfo, aclprofStepTag tag, aclrtStream stream)
{
    static const char api[] = "aclprofGetStepTimestamp";
    ACLSIM_REQUIRE_INIT(api);
    if (!stepInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stepInfo is NULL");
    if (tag != ACL_STEP_START && tag != ACL_STEP_END)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "tag %d is not an aclprofStepTag",
                            (int)tag);
    aclError err = supported(api);
    if (err)
        return err;
    const char *what = tag == ACL_STEP_START ? "step start" : "step end";
    if ((err = mark_on_stream(stream, what, strlen(what), api)))
        return err;
    uint64_t now = aclsim__now_ns();
    if (tag == ACL_STEP_START)
        stepInfo->start = now;
    else
        stepInfo->end = now;
    if (aclsim__tracing(ACLSIM_TRACE_TX))
        aclsim__trace_tx(tx_domain, what, now, 0, false, 0);
    return ACL_SUCCESS;
}

/* ---- msproftx stamps, marks and ranges ------------------------------------------- */

void *aclprofCreateStamp(void)
{
    static const char api[] = "aclprofCreateStamp";
    if (supported(api) || tx_on(api))
        return NULL;
    struct stamp *s = zalloc(sizeof *s, api);
    if (!s)
        return NULL;
    s->magic = STAMP_MAGIC;
    pthread_mutex_lock(&lock);
    s->next = stamps;
    stamps = s;
    pthread_mutex_unlock(&lock);
    return s;
}

void aclprofDestroyStamp(void *stamp)
{
    if (!stamp || supported("aclprofDestroyStamp"))
        return;
    pthread_mutex_lock(&lock);
    for (struct stamp **p = &stamps; *p; p = &(*p)->next)
        if (*p == stamp) {
            *p = (*p)->next;
            pthread_mutex_unlock(&lock);
            free(stamp);
            return;
        }
    pthread_mutex_unlock(&lock);
    aclsim__log(ACLSIM_LOG_WARNING, "aclprofDestroyStamp: %p is not a live stamp", stamp);
}

/* Under lock: copies msg (if not NULL, len bytes at most) into live stamp,
 * or its message into out (if not NULL); 100000 if stamp is not live. */
static aclError stamp_access(void *stamp, const char *msg, size_t len, char *out, const char *api)
{
    pthread_mutex_lock(&lock);
    struct stamp *s = stamps;
    while (s && s != stamp)
        s = s->next;
    if (s && msg) {
        size_t n = strnlen(msg, len);
        memcpy(s->msg, msg, n);
        s->msg[n] = 0;
    }
    if (s && out)
        memcpy(out, s->msg, STAMP_MSG_MAX);
    pthread_mutex_unlock(&lock);
    if (!s)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stamp %p is not a stamp from aclprofCreateStamp (or was destroyed)",
                            stamp);
    return ACL_SUCCESS;
}

/* Copies live stamp's message into msg; 100000 if stamp is not live. */
static aclError stamp_message(void *stamp, char msg[STAMP_MSG_MAX], const char *api)
{
    if (!stamp)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stamp is NULL");
    return stamp_access(stamp, NULL, 0, msg, api);
}

aclError aclprofSetStampTraceMessage(void *stamp, const char *msg, uint32_t msgLen)
{
    static const char api[] = "aclprofSetStampTraceMessage";
    if (!stamp || !msg)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !stamp ? "stamp" : "msg");
    if (msgLen >= STAMP_MSG_MAX)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "msgLen %u is too long: less than %d bytes", msgLen, STAMP_MSG_MAX);
    aclError err = supported(api);
    return err ? err : stamp_access(stamp, msg, msgLen, NULL, api);
}

/* The checks every stamp function starts with. */
static aclError stamp_call(void *stamp, char msg[STAMP_MSG_MAX], const char *api)
{
    aclError err = stamp_message(stamp, msg, api);
    if (!err)
        err = supported(api);
    if (!err)
        err = tx_on(api);
    return err;
}

aclError aclprofMark(void *stamp)
{
    static const char api[] = "aclprofMark";
    char msg[STAMP_MSG_MAX];
    aclError err = stamp_call(stamp, msg, api);
    if (!err)
        aclsim__trace_tx(tx_domain, msg, aclsim__now_ns(), 0, false, 0);
    return err;
}

static aclError push(const char *msg, bool ex, const char *api)
{
    if (!tls_stack) {
        pthread_once(&stack_once, make_stack_key);
        if (!(tls_stack = aclsim__malloc(PUSH_DEPTH * sizeof *tls_stack)))
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        pthread_setspecific(stack_key, tls_stack);
    }
    if (tls_depth == PUSH_DEPTH)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%d ranges are open on this thread already (pop some first)",
                            PUSH_DEPTH);
    struct pushed *p = &tls_stack[tls_depth++];
    p->ex = ex;
    snprintf(p->msg, sizeof p->msg, "%s", msg);
    p->start = aclsim__now_ns();
    return ACL_SUCCESS;
}

static aclError pop(bool ex, const char *api)
{
    aclError err = supported(api);
    if (!err)
        err = tx_on(api);
    if (err)
        return err;
    if (!tls_depth || tls_stack[tls_depth - 1].ex != ex)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "no range opened by %s on this thread is open (pops pair with "
                            "pushes of the same thread)", ex ? "aclprofRangePushEx" : "aclprofPush");
    struct pushed *p = &tls_stack[--tls_depth];
    aclsim__trace_tx(tx_domain, p->msg, p->start, aclsim__now_ns() - p->start, true, 0);
    return ACL_SUCCESS;
}

aclError aclprofPush(void *stamp)
{
    static const char api[] = "aclprofPush";
    char msg[STAMP_MSG_MAX];
    aclError err = stamp_call(stamp, msg, api);
    return err ? err : push(msg, false, api);
}

aclError aclprofPop(void)
{
    return pop(false, "aclprofPop");
}

/* Opens a process-wide range; *id gets its id (never 0). */
static aclError range_open(const char *domain, const char *msg, uint64_t *id, const char *api)
{
    pthread_mutex_lock(&lock);
    if (nranges == cap_ranges) {
        size_t cap = cap_ranges ? 2 * cap_ranges : 16;
        struct range *r = cap <= RANGES_MAX ? aclsim__realloc(ranges, cap * sizeof *r) : NULL;
        if (!r) {
            pthread_mutex_unlock(&lock);
            return aclsim__fail(cap > RANGES_MAX ? ACL_ERROR_INVALID_PARAM : ACL_ERROR_BAD_ALLOC,
                                api, "%zu ranges are open already", nranges);
        }
        ranges = r;
        cap_ranges = cap;
    }
    struct range *r = &ranges[nranges++];
    r->id = next_range++;
    if ((uint32_t)next_range == 0)
        next_range++;   /* aclprofRangeStart's ids are 32 bits, never 0 */
    r->domain = domain;
    r->thread = aclsim__trace_thread();
    snprintf(r->msg, sizeof r->msg, "%s", msg);
    r->start = aclsim__now_ns();
    *id = r->id;
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

/* Closes range id (of domain, if not NULL): a slice on the thread that opened it. */
static bool range_close(uint64_t id, const char *domain)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nranges; i++)
        if (ranges[i].id == id && (!domain || ranges[i].domain == domain)) {
            struct range r = ranges[i];
            ranges[i] = ranges[--nranges];
            pthread_mutex_unlock(&lock);
            aclsim__trace_tx(r.domain, r.msg, r.start, aclsim__now_ns() - r.start, true, r.thread);
            return true;
        }
    pthread_mutex_unlock(&lock);
    return false;
}

aclError aclprofRangeStart(void *stamp, uint32_t *rangeId)
{
    static const char api[] = "aclprofRangeStart";
    if (!rangeId)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "rangeId is NULL");
    char msg[STAMP_MSG_MAX];
    uint64_t id;
    aclError err = stamp_call(stamp, msg, api);
    if (!err && !(err = range_open(tx_domain, msg, &id, api)))
        *rangeId = (uint32_t)id;
    return err;
}

aclError aclprofRangeStop(uint32_t rangeId)
{
    static const char api[] = "aclprofRangeStop";
    aclError err = supported(api);
    if (!err)
        err = tx_on(api);
    if (err)
        return err;
    pthread_mutex_lock(&lock);
    uint64_t id = 0;
    for (size_t i = 0; i < nranges && !id; i++)
        if ((uint32_t)ranges[i].id == rangeId && ranges[i].domain == tx_domain)
            id = ranges[i].id;
    pthread_mutex_unlock(&lock);
    if (!id || !range_close(id, tx_domain))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "rangeId %u is not an open range of aclprofRangeStart", rangeId);
    return ACL_SUCCESS;
}

aclError aclprofMarkEx(const char *msg, size_t msgLen, aclrtStream stream)
{
    static const char api[] = "aclprofMarkEx";
    ACLSIM_REQUIRE_INIT(api);
    if (!msg)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "msg is NULL");
    if (msgLen < 1 || msgLen > MARKEX_MSG_MAX)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "msgLen %zu is not 1 to %d", msgLen,
                            MARKEX_MSG_MAX);
    aclError err = supported(api);
    if (!err)
        err = tx_on(api);
    if (!err)
        err = mark_on_stream(stream, msg, strnlen(msg, msgLen), api);
    if (!err) {
        char text[MARKEX_MSG_MAX + 1];
        snprintf(text, sizeof text, "%.*s", (int)msgLen, msg);
        aclsim__trace_tx(tx_domain, text, aclsim__now_ns(), 0, false, 0);
    }
    return err;
}

/* FNV-1a, 64 bits (CANN's ids are its own hash; only equality matters). */
uint64_t aclprofStr2Id(const char *message)
{
    if (!message || supported("aclprofStr2Id"))
        return 0;
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)message; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

aclError aclprofRangePushEx(aclprofEventAttributes *attr)
{
    static const char api[] = "aclprofRangePushEx";
    if (!attr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "attr is NULL");
    if (attr->messageType != ACL_PROF_MESSAGE_TYPE_TENSOR_INFO || !attr->message.tensorInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "attr has messageType %u and tensorInfo %p: expected "
                            "ACL_PROF_MESSAGE_TYPE_TENSOR_INFO with tensor information",
                            attr->messageType, (void *)attr->message.tensorInfo);
    aclError err = supported(api);
    if (!err)
        err = tx_on(api);
    if (err)
        return err;
    const aclprofTensorInfo *t = attr->message.tensorInfo;
    char msg[STAMP_MSG_MAX];
    snprintf(msg, sizeof msg, "op %016llx (%u tensors, %u blocks)",
             (unsigned long long)t->opNameId, t->tensorNum, t->blockNums);
    return push(msg, true, api);
}

aclError aclprofRangePop(void)
{
    return pop(true, "aclprofRangePop");
}

/* ---- mstx ------------------------------------------------------------------------- */

struct mstxDomainRegistration_st { const char *name; char category[80]; };
static struct mstxDomainRegistration_st *domains[256];
static size_t ndomains;

/* mstx never fails loudly (void functions, as CANN's): misuse is logged. */
static void mstx_mark(const char *category, const char *message, aclrtStream stream,
                      const char *api)
{
    if (!message || !aclsim__tracing(ACLSIM_TRACE_TX))
        return;
    aclsim__trace_tx(category, message, aclsim__now_ns(), 0, false, 0);
    if (stream && aclsim__initialized() &&
        mark_on_stream(stream, message, strnlen(message, STAMP_MSG_MAX - 1), api) != ACL_SUCCESS)
        aclsim__log(ACLSIM_LOG_WARNING, "%s: the mark was not queued on stream %p", api, stream);
}

static mstxRangeId mstx_start(const char *category, const char *message, aclrtStream stream,
                              const char *api)
{
    uint64_t id;
    if (!message || !aclsim__tracing(ACLSIM_TRACE_TX) || range_open(category, message, &id, api))
        return MSTX_INVALID_ID;
    if (stream && aclsim__initialized() &&
        mark_on_stream(stream, message, strnlen(message, STAMP_MSG_MAX - 1), api) != ACL_SUCCESS)
        aclsim__log(ACLSIM_LOG_WARNING, "%s: the mark was not queued on stream %p", api, stream);
    return id;
}

void mstxMarkA(const char *message, aclrtStream stream)
{
    mstx_mark(mstx_domain, message, stream, "mstxMarkA");
}

mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream)
{
    return mstx_start(mstx_domain, message, stream, "mstxRangeStartA");
}

void mstxRangeEnd(mstxRangeId id)
{
    if (id != MSTX_INVALID_ID && !range_close(id, mstx_domain))
        aclsim__log(ACLSIM_LOG_WARNING, "mstxRangeEnd: %llu is not an open range",
                    (unsigned long long)id);
}

/* Domains live as long as the process (a name gets the same handle again). */
mstxDomainHandle_t mstxDomainCreateA(const char *name)
{
    if (!name || !*name)
        return NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ndomains; i++)
        if (strcmp(domains[i]->name, name) == 0) {
            pthread_mutex_unlock(&lock);
            return domains[i];
        }
    struct mstxDomainRegistration_st *d = NULL;
    if (ndomains < sizeof domains / sizeof *domains && (d = aclsim__malloc(sizeof *d))) {
        d->name = intern(name, strlen(name));
        snprintf(d->category, sizeof d->category, "mstx:%s", name);
        domains[ndomains++] = d;
    }
    pthread_mutex_unlock(&lock);
    return d;
}

void mstxDomainDestroy(mstxDomainHandle_t domain)
{
    (void)domain;   /* kept: events already recorded name it (see above) */
}

static bool domain_live(mstxDomainHandle_t domain)
{
    pthread_mutex_lock(&lock);
    bool live = false;
    for (size_t i = 0; i < ndomains && !live; i++)
        live = domains[i] == domain;
    pthread_mutex_unlock(&lock);
    return live;
}

void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream)
{
    if (domain_live(domain))
        mstx_mark(domain->category, message, stream, "mstxDomainMarkA");
}

mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message,
                                  aclrtStream stream)
{
    return domain_live(domain)
               ? mstx_start(domain->category, message, stream, "mstxDomainRangeStartA")
               : MSTX_INVALID_ID;
}

void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id)
{
    if (domain_live(domain) && id != MSTX_INVALID_ID && !range_close(id, domain->category))
        aclsim__log(ACLSIM_LOG_WARNING, "mstxDomainRangeEnd: %llu is not an open range of "
                                        "domain %s", (unsigned long long)id, domain->name);
}

/* fork() child (THE FORK RULE): new locks. */
void aclsim__prof_forget_after_fork(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_mutex_init(&intern_lock, NULL);
    aclsim__dump_forget_after_fork();   /* dump.c's lock */
}
