/*
 * CANN's dump API (acl/acl_dump.h, aclmdlInitDump/SetDump/FinalizeDump) and
 * the last-task information of acl_rt.h (aclrtCacheLastTaskOpInfo/
 * ExtendInfo, aclrtProfTrace, aclrtGetHardwareSyncAddr, aclrtMemMapSetLink).
 *
 * What has an effect on a CPU: the dump paths (a dump config of
 * aclmdlSetDump, NPU_COLLECT_PATH, ASCEND_WORK_PATH), the exception dump (a
 * failed kernel's argument block and the info cached for its task written to
 * a file under <base>/extra-info/data-dump/<device>/, and
 * acldumpSaveExceptionInfo's tensors), the dump data callback (which then
 * receives the files' data instead of the disk) and aclrtProfTrace's mark
 * task. docs/dump.md documents every function.
 */
#include "internal.h"

#include "acl/acl_dump.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define PATH_LEN ACL_DUMP_MAX_FILE_PATH_LENGTH
#define EXTEND_MAX 4096u       /* aclrtCacheLastTaskExtendInfo keeps at most this */
#define CACHE_SLOTS 64         /* tasks whose cached info is remembered */
#define PROF_TRACE_MAX 18      /* sizeof CANN's packed rtProfTraceUserData */

typedef int32_t (*message_cb)(const acldumpChunk *, int32_t);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool mdl_init;                /* aclmdlInitDump .. aclmdlFinalizeDump */
static char data_path[PATH_LEN];     /* "dump_path" of the dump config ("": none) */
static bool exception_scene;         /* "dump_scene" of the dump config is an exception one */
static message_cb callback;          /* acldumpRegCallback */
static char extra_buf[PATH_LEN];     /* what acldumpGetPath returns */
static char data_buf[PATH_LEN];

/* aclrtCacheLastTaskOpInfo / ExtendInfo, per task id (a small ring). */
static struct cached {
    uint32_t task;
    bool used;
    void *op;
    size_t op_len;
    char *ext;
    size_t ext_len;
} cache[CACHE_SLOTS];
static unsigned cache_next;

/* ---- paths ---------------------------------------------------------------------- */

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Exception dump is on with NPU_COLLECT_PATH or an exception dump_scene. Lock held. */
static bool exception_enabled(void)
{
    return env("NPU_COLLECT_PATH") || exception_scene;
}

/* The base directory: NPU_COLLECT_PATH > ASCEND_WORK_PATH > dump_path > ".". Lock held. */
static const char *base_path(void)
{
    const char *p = env("NPU_COLLECT_PATH");
    if (!p)
        p = env("ASCEND_WORK_PATH");
    if (!p && data_path[0])
        p = data_path;
    return p ? p : ".";
}

static bool mkdirs(const char *path)
{
    char buf[PATH_LEN];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return false;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0750) != 0 && errno != EEXIST)
            return false;
        *p = '/';
    }
    return mkdir(buf, 0750) == 0 || errno == EEXIST;
}

static int32_t thread_device(void)
{
    return aclsim__tls_device ? aclsim__tls_device->id : 0;
}

/* <base>/extra-info/data-dump/<device>/ into buf; false if it does not fit. Lock held. */
static bool exception_root(int32_t device, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s/extra-info/data-dump/%d/", base_path(), device);
    return n > 0 && (size_t)n < cap;
}

/* ".custom.20260721153012345": local time to the millisecond. */
static void timestamp(char *buf, size_t cap)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, cap, "%Y%m%d%H%M%S", &tm);
    snprintf(buf + n, cap - n, "%03d", (int)(ts.tv_nsec / 1000000) % 1000);
}

/* ---- output: a file, or the registered callback --------------------------------- */

struct out {
    char path[PATH_LEN];
    char *data;
    size_t len, cap;
    bool failed;
};

static void put(struct out *o, const void *p, size_t n)
{
    if (o->failed || n == 0)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n)
            cap *= 2;
        char *d = realloc(o->data, cap);
        if (!d) {
            o->failed = true;
            return;
        }
        o->data = d;
        o->cap = cap;
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(o, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Writes o (to the callback if one is registered, else to o->path); true on success. */
static bool flush(struct out *o, message_cb cb)
{
    bool ok = !o->failed;
    if (ok && cb) {
        acldumpChunk *c = calloc(1, sizeof *c + o->len);
        if (!c)
            ok = false;
        else {
            snprintf(c->fileName, sizeof c->fileName, "%s", o->path);
            c->bufLen = (uint32_t)o->len;
            c->isLastChunk = 1;
            c->offset = 0;
            if (o->len)
                memcpy(c->dataBuf, o->data, o->len);
            ok = cb(c, (int32_t)(sizeof *c + o->len)) == 0;
            free(c);
        }
    } else if (ok) {
        char dir[PATH_LEN];
        snprintf(dir, sizeof dir, "%s", o->path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir)
            *slash = 0;
        FILE *f = slash && !mkdirs(dir) ? NULL : fopen(o->path, "wb");
        ok = f && fwrite(o->data, 1, o->len, f) == o->len;
        if (f && fclose(f) != 0)
            ok = false;
    }
    free(o->data);
    o->data = NULL;
    return ok;
}

/* ---- the exception dump of a failed kernel (failure.c) -------------------------- */

static struct cached *cache_find(uint32_t task)
{
    for (unsigned i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].used && cache[i].task == task)
            return &cache[i];
    return NULL;
}

static void put_hex(struct out *o, const char *name, const void *p, size_t n)
{
    putf(o, "%s: %zu bytes\n", name, n);
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        putf(o, "%02x%s", b[i], i + 1 == n || i % 32 == 31 ? "\n" : " ");
}

void aclsim__dump_kernel_failed(int32_t device, uint32_t stream, uint32_t task,
                                const char *kernel, const char *why, const void *args,
                                uint32_t args_len)
{
    pthread_mutex_lock(&lock);
    if (!exception_enabled()) {
        pthread_mutex_unlock(&lock);
        return;
    }
    struct out o = {0};
    char root[PATH_LEN], ts[64];
    timestamp(ts, sizeof ts);
    bool fits = exception_root(device, root, sizeof root) &&
                snprintf(o.path, sizeof o.path, "%s%s.%u.%u.%s", root, kernel ? kernel : "kernel",
                         stream, task, ts) < (int)sizeof o.path;
    putf(&o, "aclsim exception dump\nkernel: %s\ndevice: %d\nstream: %u\ntask: %u\nreason: %s\n",
         kernel ? kernel : "", device, stream, task, why);
    put_hex(&o, "args", args, args ? args_len : 0);
    struct cached *c = cache_find(task);
    if (c && c->op)
        put_hex(&o, "op_info", c->op, c->op_len);
    if (c && c->ext) {
        putf(&o, "extend_info: %zu bytes\n", c->ext_len);
        put(&o, c->ext, c->ext_len);
        put(&o, "\n", 1);
    }
    message_cb cb = callback;
    pthread_mutex_unlock(&lock);   /* the callback and the disk run unlocked */
    if (!fits || !flush(&o, cb))
        aclsim__log(ACLSIM_LOG_WARNING, "exception dump of task %u to \"%s\" failed", task, o.path);
    free(o.data);
}

/* ---- aclmdlInitDump / SetDump / FinalizeDump -------------------------------------- */

aclError aclmdlInitDump(void)
{
    static const char api[] = "aclmdlInitDump";
    ACLSIM_REQUIRE_INIT(api);
    pthread_mutex_lock(&lock);
    bool again = mdl_init;
    mdl_init = true;
    pthread_mutex_unlock(&lock);
    if (again)
        return aclsim__fail(ACL_ERROR_REPEAT_INITIALIZE, api, "This API cannot be called repeatedly");
    return ACL_SUCCESS;
}

static bool exception_scene_name(const char *s)
{
    static const char *const names[] = {"lite_exception", "aic_err_brief_dump", "aic_err_norm_dump",
                                        "aic_err_detail_dump"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(s, names[i]) == 0)
            return true;
    return false;
}

/* The "dump" object of a config file: "dump_path" and "dump_scene" are used,
 * other keys are accepted and have no effect. */
static aclError apply_config(const char *api, const char *file, const cJSON *root)
{
    const cJSON *dump = cJSON_GetObjectItemCaseSensitive(root, "dump");
    if (!dump)
        return ACL_SUCCESS;
    if (!cJSON_IsObject(dump))
        return aclsim__fail(ACL_ERROR_INVALID_DUMP_CONFIG, api, "\"dump\" in \"%s\" is not an object",
                            file);
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(dump, "dump_path");
    const cJSON *scene = cJSON_GetObjectItemCaseSensitive(dump, "dump_scene");
    if (path && (!cJSON_IsString(path) || strlen(path->valuestring) >= PATH_LEN))
        return aclsim__fail(ACL_ERROR_INVALID_DUMP_CONFIG, api,
                            "\"dump\".\"dump_path\" in \"%s\" is not a string below %d bytes", file,
                            PATH_LEN);
    if (scene && (!cJSON_IsString(scene) || (!exception_scene_name(scene->valuestring) &&
                                             strcmp(scene->valuestring, "normal") != 0)))
        return aclsim__fail(ACL_ERROR_INVALID_DUMP_CONFIG, api,
                            "\"dump\".\"dump_scene\" in \"%s\" is not \"normal\", \"lite_exception\", "
                            "\"aic_err_brief_dump\", \"aic_err_norm_dump\" or \"aic_err_detail_dump\"",
                            file);
    pthread_mutex_lock(&lock);
    if (path)
        snprintf(data_path, sizeof data_path, "%s", path->valuestring);
    if (scene)
        exception_scene = exception_scene_name(scene->valuestring);
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

aclError aclmdlSetDump(const char *dumpCfgPath)
{
    static const char api[] = "aclmdlSetDump";
    ACLSIM_REQUIRE_INIT(api);
    pthread_mutex_lock(&lock);
    bool on = mdl_init;
    pthread_mutex_unlock(&lock);
    if (!on)
        return aclsim__fail(ACL_ERROR_DUMP_NOT_RUN, api,
                            "aclmdlInitDump must be executed before aclmdlSetDump is called");
    if (!dumpCfgPath)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dumpCfgPath is NULL");
    FILE *f = fopen(dumpCfgPath, "rb");
    if (!f)
        return aclsim__fail(ACL_ERROR_INVALID_FILE, api, "cannot open dump config \"%s\": %s",
                            dumpCfgPath, strerror(errno));
    struct out o = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        put(&o, buf, n);
    put(&o, "", 1);
    bool bad = ferror(f) || o.failed;
    fclose(f);
    if (bad) {
        free(o.data);
        return aclsim__fail(ACL_ERROR_INVALID_FILE, api, "cannot read dump config \"%s\"", dumpCfgPath);
    }
    if (o.len == 1) {   /* an empty file: nothing to set */
        free(o.data);
        return ACL_SUCCESS;
    }
    cJSON *root = cJSON_Parse(o.data);
    free(o.data);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return aclsim__fail(ACL_ERROR_PARSE_FILE, api, "dump config \"%s\" is not a JSON object",
                            dumpCfgPath);
    }
    aclError err = apply_config(api, dumpCfgPath, root);
    cJSON_Delete(root);
    return err;
}

aclError aclmdlFinalizeDump(void)
{
    static const char api[] = "aclmdlFinalizeDump";
    ACLSIM_REQUIRE_INIT(api);
    pthread_mutex_lock(&lock);
    bool on = mdl_init;
    if (on) {
        mdl_init = false;
        data_path[0] = 0;
        exception_scene = false;
    }
    pthread_mutex_unlock(&lock);
    if (!on)
        return aclsim__fail(ACL_ERROR_DUMP_NOT_RUN, api,
                            "aclmdlInitDump must be executed before aclmdlFinalizeDump is called");
    return ACL_SUCCESS;
}

/* ---- acl_dump.h ------------------------------------------------------------------- */

aclError acldumpRegCallback(int32_t (*const messageCallback)(const acldumpChunk *, int32_t), int32_t flag)
{
    static const char api[] = "acldumpRegCallback";
    if (!messageCallback)
        return aclsim__fail(ACL_ERROR_FAILURE, api, "messageCallback is NULL");
    if (flag != 0)
        return aclsim__fail(ACL_ERROR_FAILURE, api, "flag %d is reserved and must be 0", flag);
    pthread_mutex_lock(&lock);
    callback = messageCallback;
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

void acldumpUnregCallback(void)
{
    pthread_mutex_lock(&lock);
    callback = NULL;
    pthread_mutex_unlock(&lock);
}

aclError aclopStartDumpArgs(uint32_t dumpType, const char *path)
{
    static const char api[] = "aclopStartDumpArgs";
    if (!path)
        return aclsim__fail(ACL_ERROR_FAILURE, api, "path is NULL");
    if (!(dumpType & ACL_OP_DUMP_OP_AICORE_ARGS))
        return aclsim__fail(ACL_ERROR_FAILURE, api,
                            "dumpType %u does not have ACL_OP_DUMP_OP_AICORE_ARGS (1) set", dumpType);
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "the operator argument dump of launched kernels is not simulated");
}

aclError aclopStopDumpArgs(uint32_t dumpType)
{
    (void)dumpType;   /* no argument dump is ever running (aclopStartDumpArgs) */
    return ACL_SUCCESS;
}

const char *acldumpGetPath(acldumpType dumpType)
{
    const char *r = NULL;
    pthread_mutex_lock(&lock);
    switch (dumpType) {
    case AIC_ERR_BRIEF_DUMP:
    case AIC_ERR_NORM_DUMP:
    case AIC_ERR_DETAIL_DUMP:
        if (exception_enabled() && exception_root(thread_device(), extra_buf, sizeof extra_buf) &&
            mkdirs(extra_buf))
            r = extra_buf;
        break;
    case DATA_DUMP:
    case OVERFLOW_DUMP:
        if (data_path[0]) {
            snprintf(data_buf, sizeof data_buf, "%s", data_path);
            r = data_buf;
        }
        break;
    default:
        break;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

aclError acldumpGetExceptionInfoPath(char *path, size_t maxLen)
{
    static const char api[] = "acldumpGetExceptionInfoPath";
    if (!path)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "path is NULL");
    if (maxLen <= 1)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "maxLen %zu is not greater than 1", maxLen);
    char root[PATH_LEN];
    pthread_mutex_lock(&lock);
    bool on = exception_enabled();
    bool fits = on && exception_root(thread_device(), root, sizeof root);
    pthread_mutex_unlock(&lock);
    if (!on)
        return aclsim__fail(ACL_ERROR_FAILURE, api,
                            "exception dump is not enabled (NPU_COLLECT_PATH or an exception "
                            "\"dump_scene\"), required by %s", api);
    if (!fits)
        return aclsim__fail(ACL_ERROR_FAILURE, api, "the exception dump path is too long");
    if (strlen(root) + 1 > maxLen)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "maxLen %zu is smaller than the %zu bytes needed",
                            maxLen, strlen(root) + 1);
    memcpy(path, root, strlen(root) + 1);
    return ACL_SUCCESS;
}

static bool has_parent_segment(const char *s)
{
    for (const char *p = s; (p = strstr(p, "..")) != NULL; p += 2)
        if ((p == s || p[-1] == '/') && (p[2] == 0 || p[2] == '/'))
            return true;
    return false;
}

static aclError check_tensor(const char *api, const acldumpTensorInfo *t, size_t i)
{
    if (t->shapeNum > ACL_DUMP_MAX_SHAPE_NUM || t->originShapeNum > ACL_DUMP_MAX_SHAPE_NUM)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "tensors[%zu]: shapeNum %u / originShapeNum %u exceeds %d", i,
                            t->shapeNum, t->originShapeNum, ACL_DUMP_MAX_SHAPE_NUM);
    if ((unsigned)t->type > ACL_DUMP_TENSOR_WORKSPACE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "tensors[%zu].type %d is not supported", i,
                            (int)t->type);
    if (t->addrType != ACL_DUMP_ADDR_RAW)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "tensors[%zu].addrType %d is not ACL_DUMP_ADDR_RAW", i, (int)t->addrType);
    if (t->placement != ACL_DUMP_PLACEMENT_DEVICE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "tensors[%zu].placement %d is not ACL_DUMP_PLACEMENT_DEVICE", i,
                            (int)t->placement);
    if (!t->tensorAddr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "tensors[%zu].tensorAddr is NULL", i);
    if (t->tensorSize == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "tensors[%zu].tensorSize is 0", i);
    struct aclsim__where w = aclsim__classify(t->tensorAddr);
    if (w.kind != ACLSIM_DEVICE && w.kind != ACLSIM_VIRTUAL && w.kind != ACLSIM_MANAGED)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "tensors[%zu].tensorAddr %p is not device memory", i, (void *)t->tensorAddr);
    char name[48];
    snprintf(name, sizeof name, "tensors[%zu].tensorAddr", i);
    return aclsim__check_range(api, name, t->tensorAddr, t->tensorSize, w);
}

aclError acldumpSaveExceptionInfo(const char *fileName, const char *userTag,
                                  const acldumpTensorInfo *tensors, size_t tensorCount)
{
    static const char api[] = "acldumpSaveExceptionInfo";
    if (!fileName)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "fileName is NULL");
    if (!fileName[0])
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "fileName is empty");
    if (has_parent_segment(fileName))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "fileName \"%s\" has a \"..\" segment",
                            fileName);
    if (!tensors)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "tensors is NULL");
    if (tensorCount == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "tensorCount is 0");
    pthread_mutex_lock(&lock);
    bool on = exception_enabled();
    pthread_mutex_unlock(&lock);
    if (!on)
        return aclsim__fail(ACL_ERROR_FAILURE, api,
                            "exception dump is not enabled (NPU_COLLECT_PATH or an exception "
                            "\"dump_scene\"), required by %s", api);
    for (size_t i = 0; i < tensorCount; i++) {
        aclError err = check_tensor(api, &tensors[i], i);
        if (err)
            return err;
    }
    struct out o = {0};
    char root[PATH_LEN], ts[64];
    timestamp(ts, sizeof ts);
    pthread_mutex_lock(&lock);
    bool fits = exception_root(thread_device(), root, sizeof root) &&
                snprintf(o.path, sizeof o.path, "%s%s.custom.%s", root,
                         fileName + (fileName[0] == '/'), ts) < (int)sizeof o.path;
    putf(&o, "aclsim exception info\nuser_tag: %s\ntensors: %zu\n", userTag ? userTag : "",
         tensorCount);
    for (size_t i = 0; i < tensorCount; i++) {
        const acldumpTensorInfo *t = &tensors[i];
        putf(&o, "tensor %zu: type %d format %d dataType %d size %zu shape [", i, (int)t->type,
             t->format, t->dataType, t->tensorSize);
        for (uint32_t k = 0; k < t->shapeNum; k++)
            putf(&o, "%s%llu", k ? "," : "", (unsigned long long)t->shape[k]);
        putf(&o, "] originShape [");
        for (uint32_t k = 0; k < t->originShapeNum; k++)
            putf(&o, "%s%llu", k ? "," : "", (unsigned long long)t->originShape[k]);
        putf(&o, "]\n");
    }
    putf(&o, "data:\n");
    for (size_t i = 0; i < tensorCount; i++)
        put(&o, tensors[i].tensorAddr, tensors[i].tensorSize);
    message_cb cb = callback;
    pthread_mutex_unlock(&lock);   /* the callback and the disk run unlocked */
    bool ok = fits && flush(&o, cb);
    free(o.data);
    if (!ok)
        return aclsim__fail(ACL_ERROR_FAILURE, api, "cannot write \"%s\"", o.path);
    return ACL_SUCCESS;
}

/* ---- acl_rt.h: last-task information, profiling trace, hardware -------------------- */

static aclError cache_last(const char *api, const void *p, size_t n, bool extend)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!p)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            extend ? "extendInfoPtr" : "infoPtr");
    if (n == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "infoSize is 0");
    uint32_t task = aclsim__tls_last_task_id;
    if (!task)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "this thread has not submitted a task whose info could be cached");
    if (extend && n > EXTEND_MAX)
        n = EXTEND_MAX;
    void *copy = malloc(n);
    if (!copy)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    memcpy(copy, p, n);
    pthread_mutex_lock(&lock);
    struct cached *c = cache_find(task);
    if (!c) {
        c = &cache[cache_next++ % CACHE_SLOTS];
        free(c->op);
        free(c->ext);
        *c = (struct cached){.task = task, .used = true};
    }
    if (extend) {
        free(c->ext);
        c->ext = copy;
        c->ext_len = n;
    } else {
        free(c->op);
        c->op = copy;
        c->op_len = n;
    }
    pthread_mutex_unlock(&lock);
    return ACL_SUCCESS;
}

aclError aclrtCacheLastTaskOpInfo(const void *const infoPtr, const size_t infoSize)
{
    return cache_last("aclrtCacheLastTaskOpInfo", infoPtr, infoSize, false);
}

aclError aclrtCacheLastTaskExtendInfo(const char *const extendInfoPtr, const size_t infoSize)
{
    return cache_last("aclrtCacheLastTaskExtendInfo", extendInfoPtr, infoSize, true);
}

aclError aclsim__dump_configure(const struct cJSON *root, const char *path)
{
    return apply_config("aclInit", path, root);
}

/* fork() child (THE FORK RULE): a new lock. */
void aclsim__dump_forget_after_fork(void)
{
    pthread_mutex_init(&lock, NULL);
}

/* aclFinalize: forgets the dump configuration and the cached task info (task ids start again). */
void aclsim__dump_finalize(void)
{
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < CACHE_SLOTS; i++) {
        free(cache[i].op);
        free(cache[i].ext);
        cache[i] = (struct cached){0};
    }
    cache_next = 0;
    mdl_init = false;   /* the dump configuration belongs to the session */
    data_path[0] = 0;
    exception_scene = false;
    pthread_mutex_unlock(&lock);
}

aclError aclrtProfTrace(void *userdata, int32_t length, aclrtStream stream)
{
    static const char api[] = "aclrtProfTrace";
    ACLSIM_REQUIRE_INIT(api);
    if (!userdata)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "userdata is NULL");
    if (length <= 0 || length > PROF_TRACE_MAX)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "length %d is not in (0, %d]", length,
                            PROF_TRACE_MAX);
    unsigned char d[PROF_TRACE_MAX] = {0};   /* id (8), modelId (8), tagId (2), packed */
    memcpy(d, userdata, (size_t)length);
    uint64_t id, model;
    uint16_t tag;
    memcpy(&id, d, 8);
    memcpy(&model, d + 8, 8);
    memcpy(&tag, d + 16, 2);
    char msg[96];
    int n = snprintf(msg, sizeof msg, "aclrtProfTrace id %llu modelId %llu tagId %u",
                     (unsigned long long)id, (unsigned long long)model, (unsigned)tag);
    return aclsim__prof_mark(stream, msg, (size_t)n, api);
}

aclError aclrtGetHardwareSyncAddr(void **addr)
{
    static const char api[] = "aclrtGetHardwareSyncAddr";
    ACLSIM_REQUIRE_INIT(api);
    if (!addr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "addr is NULL");
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "the simulated device has no hardware synchronization register");
}

aclError aclrtMemMapSetLink(aclrtDrvMemHandle handle, aclrtMemLinkType adviceLink)
{
    static const char api[] = "aclrtMemMapSetLink";
    ACLSIM_REQUIRE_INIT(api);
    if (!handle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    if ((unsigned)adviceLink > ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH)
        return aclsim__fail(ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED, api, "adviceLink %d is not a link type",
                            (int)adviceLink);
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "the simulated SoC has no memory access links (SIO, HCCS, UB) to choose from");
}
