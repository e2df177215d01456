/*
 * CANN's profiling API (acl/acl_prof.h) and the mstx markers
 * (mstx/ms_tools_ext.h) on aclsim (docs/tracing.md#the-aclprof-api):
 * argument checks and codes, session rules (init, start, stop, finalize),
 * what a config turns on (API slices, task slices of its devices,
 * msproftx), stamps, marks, pushes and ranges in the file aclprofFinalize
 * writes, mark tasks on streams, op subscription, IPV350, threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "mstx/ms_tools_ext.h"
#include "common.h"
#include "trace-json.h"

static char dir[64], out[160];

static int setup(void **state)
{
    (void)state;
    unset_config();
    temp_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/aclsim_prof_%d.json", dir, (int)getpid());
    EXPECT_OK(init_devices("2", "64M"));
    EXPECT_OK(aclrtSetDevice(0));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    (void)aclprofFinalize();
    if (runtime_initialized())
        (void)reset_and_finalize();
    unset_config();
    unlink(out);
    rmdir(dir);
    return 0;
}

static void prof_init(void)
{
    EXPECT_OK(aclprofInit(dir, strlen(dir)));
}

/* Finalizes profiling and loads what it wrote. */
static cJSON *prof_done(void)
{
    EXPECT_OK(aclprofFinalize());
    return trace_load(out);
}

static aclprofConfig *config(uint64_t types, uint32_t ndev, uint32_t dev0)
{
    uint32_t devs[2] = {dev0, dev0 ? 0 : 1};
    aclprofConfig *c = aclprofCreateConfig(devs, ndev, ACL_AICORE_NONE, NULL, types);
    assert_non_null(c);
    return c;
}

static void test_init_finalize(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "profilerResultPath is NULL", aclprofInit(NULL, 3));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "length 0", aclprofInit(dir, 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "length 4096", aclprofInit(dir, 4096));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not the length", aclprofInit(dir, strlen(dir) - 1));
    char file[160];
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a writable directory", aclprofInit(file, strlen(file)));
    unlink(file);
    /* finalize without init: nothing to do, a success (as CANN) */
    EXPECT_OK(aclprofFinalize());
    prof_init();
    EXPECT_ERR(ACL_ERROR_REPEAT_INITIALIZE, "already initialized", aclprofInit(dir, strlen(dir)));
    cJSON *root = prof_done();   /* an empty session still writes its file */
    assert_int_equal(trace_count(root, "X", NULL, NULL), 0);
    cJSON_Delete(root);
    EXPECT_OK(aclprofFinalize());
    /* a directory that does not exist yet is created */
    char sub[160];
    snprintf(sub, sizeof sub, "%s/new", dir);
    EXPECT_OK(aclprofInit(sub, strlen(sub)));
    EXPECT_OK(aclprofFinalize());
    char subfile[200];
    snprintf(subfile, sizeof subfile, "%s/aclsim_prof_%d.json", sub, (int)getpid());
    assert_int_equal(access(subfile, R_OK), 0);
    unlink(subfile);
    rmdir(sub);
    /* after aclFinalize: 100001 */
    EXPECT_OK(reset_and_finalize());
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, NULL, aclprofInit(dir, strlen(dir)));
    EXPECT_OK(init_devices("2", "64M"));
    EXPECT_OK(aclrtSetDevice(0));
}

static void test_config(void **state)
{
    (void)state;
    uint32_t devs[3] = {0, 1, 0};
    assert_null(aclprofCreateConfig(NULL, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME));
    expect_msg("deviceIdList is NULL");
    assert_null(aclprofCreateConfig(devs, 1, ACL_AICORE_NONE, (const aclprofAicoreEvents *)devs,
                                    ACL_PROF_TASK_TIME));
    expect_msg("aicoreEvents must be NULL");
    assert_null(aclprofCreateConfig(devs, 3, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME));
    expect_msg("deviceNums 3");
    uint32_t dup[2] = {1, 1}, bad[1] = {7};
    assert_null(aclprofCreateConfig(dup, 2, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME));
    expect_msg("given twice");
    assert_null(aclprofCreateConfig(bad, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME));
    expect_msg("device id 7");
    assert_null(aclprofCreateConfig(devs, 0, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME));
    expect_msg("deviceNums is 0");
    aclprofConfig *tx = aclprofCreateConfig(NULL, 0, ACL_AICORE_NONE, NULL, ACL_PROF_MSPROFTX);
    assert_non_null(tx);
    EXPECT_OK(aclprofDestroyConfig(tx));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a config", aclprofDestroyConfig(tx));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "profilerConfig is NULL", aclprofDestroyConfig(NULL));

    /* start and stop */
    aclprofConfig *c = config(ACL_PROF_TASK_TIME, 1, 0);
    aclprofConfig *other = config(ACL_PROF_TASK_TIME, 2, 0);
    aclprofConfig *zero = config(0, 1, 0);
    aclprofConfig *unknown = config(ACL_PROF_TASK_TIME | 0x10000000ULL, 1, 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataTypeConfig is 0", aclprofStart(zero));
    EXPECT_ERR(ACL_ERROR_PROF_MODULES_UNSUPPORTED, "0x10000000", aclprofStart(unknown));
    prof_init();
    EXPECT_ERR(ACL_ERROR_PROF_NOT_RUN, "not started", aclprofStop(c));
    EXPECT_OK(aclprofStop(NULL));   /* nothing running: nothing to stop */
    EXPECT_OK(aclprofStart(c));
    EXPECT_ERR(ACL_ERROR_PROF_ALREADY_RUN, "already started", aclprofStart(c));
    EXPECT_ERR(ACL_ERROR_PROF_ALREADY_RUN, NULL, aclprofStart(other));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not the config", aclprofStop(other));
    EXPECT_OK(aclprofStop(c));
    EXPECT_ERR(ACL_ERROR_PROF_NOT_RUN, NULL, aclprofStop(c));
    /* a destroyed config is refused, state intact */
    EXPECT_OK(aclprofDestroyConfig(other));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a config", aclprofStart(other));
    EXPECT_OK(aclprofStart(NULL));   /* the default config: the devices in use */
    EXPECT_OK(aclprofStop(NULL));
    EXPECT_OK(aclprofFinalize());
    /* stop after finalize: a success (as CANN) */
    EXPECT_OK(aclprofStop(c));
    EXPECT_OK(aclprofDestroyConfig(c));
    EXPECT_OK(aclprofDestroyConfig(zero));
    EXPECT_OK(aclprofDestroyConfig(unknown));
}

/* Some work on both devices: a memset on each default stream. */
static void work(const char *tag)
{
    (void)tag;
    for (int32_t d = 1; d >= 0; d--) {
        EXPECT_OK(aclrtSetDevice(d));
        void *p;
        EXPECT_OK(aclrtMalloc(&p, 128, ACL_MEM_MALLOC_HUGE_FIRST));
        EXPECT_OK(aclrtMemsetAsync(p, 128, d, 128, NULL));
        EXPECT_OK(aclrtSynchronizeDevice());
        EXPECT_OK(aclrtFree(p));
    }
}

static int tasks_on(const cJSON *root, int device)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, trace_events(root))
        n += ev_is(e, "X", "task", "memset") && ev_num(e, "pid") == device + 1;
    return n;
}

/* What the config selects is what is collected, between start and stop. */
static void test_collection_follows_config(void **state)
{
    (void)state;
    prof_init();
    work("before");   /* not started: not collected */
    aclprofConfig *tasks0 = config(ACL_PROF_TASK_TIME, 1, 0);
    EXPECT_OK(aclprofStart(tasks0));
    work("tasks of device 0");
    EXPECT_OK(aclprofStop(tasks0));
    work("stopped");
    aclprofConfig *api = config(ACL_PROF_ACL_API, 1, 1);
    EXPECT_OK(aclprofStart(api));
    work("api");
    EXPECT_OK(aclprofStop(api));
    cJSON *root = prof_done();
    assert_int_equal(tasks_on(root, 0), 1);   /* only while started, only device 0 */
    assert_int_equal(tasks_on(root, 1), 0);
    assert_int_equal(trace_count(root, "X", "api", "aclrtMemsetAsync"), 2);   /* the api session */
    assert_int_equal(trace_count(root, "X", "api", "aclrtMalloc"), 2);
    assert_int_equal(trace_count(root, "X", "api", "aclprofStart"), 0);
    cJSON_Delete(root);
    EXPECT_OK(aclprofDestroyConfig(tasks0));
    EXPECT_OK(aclprofDestroyConfig(api));
}

static void test_set_config(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "configType 0", aclprofSetConfig(ACL_PROF_ARGS_MIN, "1", 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "configType 17", aclprofSetConfig(ACL_PROF_ARGS_MAX, "1", 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "configType 2", aclprofSetConfig((aclprofConfigType)2, "1", 1));
    char big[300];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "configLength 299", aclprofSetConfig(ACL_PROF_PATH, big, 299));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "config is NULL", aclprofSetConfig(ACL_PROF_PATH, NULL, 3));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not the length", aclprofSetConfig(ACL_PROF_PATH, "abc", 2));
    EXPECT_ERR(ACL_ERROR_INVALID_PROFILING_CONFIG, "200MB",
               aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "100MB", 5));
    EXPECT_ERR(ACL_ERROR_INVALID_PROFILING_CONFIG, NULL,
               aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "x00MB", 5));
    EXPECT_OK(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "500MB", 5));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "hardware",
               aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "50", 2));
    /* ACL_PROF_PATH: where aclprofFinalize writes */
    char sub[160];
    snprintf(sub, sizeof sub, "%s/other", dir);
    prof_init();
    assert_int_equal(mkdir(sub, 0750), 0);
    EXPECT_OK(aclprofSetConfig(ACL_PROF_PATH, sub, strlen(sub)));
    EXPECT_OK(aclprofFinalize());
    char file[220];
    snprintf(file, sizeof file, "%s/aclsim_prof_%d.json", sub, (int)getpid());
    assert_int_equal(access(file, R_OK), 0);
    assert_int_not_equal(access(out, R_OK), 0);
    unlink(file);
    rmdir(sub);
}

struct stop_arg { uint32_t id; aclError rc; };
static void *stop_range(void *p)
{
    struct stop_arg *a = p;
    a->rc = aclprofRangeStop(a->id);
    return NULL;
}

static void test_stamps(void **state)
{
    (void)state;
    /* msproftx off: no stamps, 100043 */
    assert_null(aclprofCreateStamp());
    expect_msg("ACL_PROF_MSPROFTX");
    EXPECT_ERR(ACL_ERROR_PROF_NOT_RUN, NULL, aclprofPop());
    EXPECT_ERR(ACL_ERROR_PROF_NOT_RUN, NULL, aclprofRangeStop(1));
    prof_init();
    aclprofConfig *tx = aclprofCreateConfig(NULL, 0, ACL_AICORE_NONE, NULL, ACL_PROF_MSPROFTX);
    assert_non_null(tx);
    EXPECT_OK(aclprofStart(tx));
    void *stamp = aclprofCreateStamp();
    assert_non_null(stamp);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stamp is NULL", aclprofSetStampTraceMessage(NULL, "x", 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "msg is NULL", aclprofSetStampTraceMessage(stamp, NULL, 1));
    char longmsg[200];
    memset(longmsg, 'm', sizeof longmsg);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "msgLen 128", aclprofSetStampTraceMessage(stamp, longmsg, 128));
    EXPECT_OK(aclprofSetStampTraceMessage(stamp, "mark one", 8));
    EXPECT_OK(aclprofMark(stamp));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stamp is NULL", aclprofMark(NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a stamp", aclprofMark(longmsg));
    /* push/pop: nested slices on this thread */
    void *inner = aclprofCreateStamp();
    EXPECT_OK(aclprofSetStampTraceMessage(inner, "inner", 5));
    EXPECT_OK(aclprofSetStampTraceMessage(stamp, "outer", 5));
    EXPECT_OK(aclprofPush(stamp));
    EXPECT_OK(aclprofPush(inner));
    sleep_ms(1);
    EXPECT_OK(aclprofPop());
    EXPECT_OK(aclprofPop());
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "no range", aclprofPop());
    /* ranges: ids, stop unknown, stop from another thread */
    uint32_t id1, id2;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "rangeId is NULL", aclprofRangeStart(stamp, NULL));
    EXPECT_OK(aclprofSetStampTraceMessage(stamp, "range one", 9));
    EXPECT_OK(aclprofRangeStart(stamp, &id1));
    EXPECT_OK(aclprofRangeStart(inner, &id2));
    assert_int_not_equal(id1, id2);
    assert_int_not_equal(id1, 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not an open range", aclprofRangeStop(id2 + 100));
    EXPECT_OK(aclprofRangeStop(id2));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not an open range", aclprofRangeStop(id2));
    struct stop_arg arg = {id1, -1};
    run_in_thread(stop_range, &arg);
    assert_int_equal(arg.rc, ACL_SUCCESS);
    /* tensor-info ranges pair with aclprofRangePop only */
    aclprofTensorInfo ti = {.opNameId = aclprofStr2Id("MatMul"), .tensorNum = 2, .blockNums = 8};
    aclprofEventAttributes attr = {.version = ACL_PROF_EVENT_ATTR_VERSION, .size = sizeof attr,
                                   .messageType = ACL_PROF_MESSAGE_TYPE_TENSOR_INFO,
                                   .message.tensorInfo = &ti};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "attr is NULL", aclprofRangePushEx(NULL));
    aclprofEventAttributes noinfo = attr;
    noinfo.message.tensorInfo = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "messageType", aclprofRangePushEx(&noinfo));
    EXPECT_OK(aclprofPush(stamp));
    EXPECT_OK(aclprofRangePushEx(&attr));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "aclprofPush", aclprofPop());   /* the top is PushEx's */
    EXPECT_OK(aclprofRangePop());
    EXPECT_OK(aclprofPop());
    /* MarkEx: an instant here and a mark task on the stream */
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "msg is NULL", aclprofMarkEx(NULL, 3, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "msgLen 0", aclprofMarkEx("abc", 0, s));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "msgLen 128", aclprofMarkEx(longmsg, 128, s));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, NULL, aclprofMarkEx("abc", 3, (aclrtStream)longmsg));
    EXPECT_OK(aclprofMarkEx("on the stream", 13, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtDestroyStream(s));
    aclprofDestroyStamp(inner);
    aclprofDestroyStamp(stamp);
    aclprofDestroyStamp(NULL);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a stamp", aclprofPush(stamp));
    EXPECT_OK(aclprofStop(tx));
    EXPECT_ERR(ACL_ERROR_PROF_NOT_RUN, NULL, aclprofPop());

    cJSON *root = prof_done();
    const cJSON *m = trace_find(root, "i", "msproftx", "mark one");
    assert_non_null(m);
    int tid = (int)ev_num(m, "tid");
    const cJSON *outer = trace_find(root, "X", "msproftx", "outer");
    const cJSON *in = trace_find(root, "X", "msproftx", "inner");
    assert_non_null(outer);
    assert_non_null(in);
    assert_int_equal((int)ev_num(outer, "tid"), tid);
    assert_true(ev_num(in, "ts") >= ev_num(outer, "ts"));
    assert_true(ev_num(in, "ts") + ev_num(in, "dur") <= ev_num(outer, "ts") + ev_num(outer, "dur") + 0.0015);
    assert_true(ev_num(in, "dur") >= 900);   /* slept 1 ms inside */
    const cJSON *r1 = trace_find(root, "X", "msproftx", "range one");
    assert_non_null(r1);
    assert_int_equal((int)ev_num(r1, "tid"), tid);   /* the thread that started it */
    assert_int_equal(trace_count(root, "X", "msproftx", "inner"), 2);   /* push and range */
    assert_non_null(trace_find(root, "i", "msproftx", "on the stream"));
    const cJSON *task = trace_find(root, "X", "task", "on the stream");
    assert_non_null(task);
    assert_string_equal(ev_arg_str(task, "kind"), "mark");
    assert_int_equal((int)ev_num(task, "pid"), 1);
    int ex = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, trace_events(root))
        ex += ev_is(e, "X", "msproftx", NULL) && strncmp(ev_str(e, "name"), "op ", 3) == 0;
    assert_int_equal(ex, 1);
    cJSON_Delete(root);
    EXPECT_OK(aclprofDestroyConfig(tx));
}

/* Long messages are cut in the file without splitting a UTF-8 character. */
static void test_long_names(void **state)
{
    (void)state;
    prof_init();
    aclprofConfig *tx = config(ACL_PROF_MSPROFTX, 1, 0);
    EXPECT_OK(aclprofStart(tx));
    char msg[101];
    for (int i = 0; i < 50; i++)
        memcpy(msg + 2 * i, "\xc3\xa9", 2);   /* e-acute, 2 bytes each */
    msg[100] = 0;
    mstxMarkA(msg, NULL);
    memmove(msg, msg + 1, 100);   /* starting in the middle: an odd length */
    mstxMarkA(msg + 1, NULL);
    EXPECT_OK(aclprofStop(tx));
    cJSON *root = prof_done();
    int marks = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, trace_events(root)) {
        if (!ev_is(e, "i", "mstx", NULL))
            continue;
        marks++;
        const char *name = ev_str(e, "name");
        size_t n = strlen(name);
        assert_true(n > 40 && n < 64);
        assert_int_equal(n % 2, 0);   /* whole characters */
        for (size_t i = 0; i < n; i += 2)
            assert_memory_equal(name + i, "\xc3\xa9", 2);
    }
    assert_int_equal(marks, 2);
    cJSON_Delete(root);
    EXPECT_OK(aclprofDestroyConfig(tx));
}

static void test_str2id(void **state)
{
    (void)state;
    assert_int_equal(aclprofStr2Id(NULL), 0);
    assert_true(aclprofStr2Id("MatMul") == aclprofStr2Id("MatMul"));
    assert_true(aclprofStr2Id("MatMul") != aclprofStr2Id("Add"));
    assert_true(aclprofStr2Id("") != 0);
}

static void test_steps(void **state)
{
    (void)state;
    aclprofStepInfo *step = aclprofCreateStepInfo();
    assert_non_null(step);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stepInfo is NULL", aclprofGetStepTimestamp(NULL, ACL_STEP_START, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "tag 5", aclprofGetStepTimestamp(step, (aclprofStepTag)5, NULL));
    prof_init();
    aclprofConfig *c = config(ACL_PROF_TASK_TIME, 1, 0);
    EXPECT_OK(aclprofStart(c));
    EXPECT_OK(aclprofGetStepTimestamp(step, ACL_STEP_START, NULL));
    work("step");
    EXPECT_OK(aclprofGetStepTimestamp(step, ACL_STEP_END, NULL));
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclprofStop(c));
    cJSON *root = prof_done();
    const cJSON *a = trace_find(root, "X", "task", "step start");
    const cJSON *b = trace_find(root, "X", "task", "step end");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(ev_num(b, "ts") > ev_num(a, "ts"));
    cJSON_Delete(root);
    aclprofDestroyStepInfo(step);
    aclprofDestroyStepInfo(NULL);
    EXPECT_OK(aclprofDestroyConfig(c));
}

static void test_subscription(void **state)
{
    (void)state;
    int fd = 1;
    assert_null(aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, NULL));
    expect_msg("fd is NULL");
    assert_null(aclprofCreateSubscribeConfig(1, (aclprofAicoreMetrics)42, &fd));
    expect_msg("aicoreMetrics 42");
    aclprofSubscribeConfig *sc = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &fd);
    assert_non_null(sc);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "profSubscribeConfig is NULL", aclprofModelSubscribe(1, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_MODEL_ID, "no model has id 1", aclprofModelSubscribe(1, sc));
    EXPECT_ERR(ACL_ERROR_INVALID_MODEL_ID, "no model has id 3", aclprofModelUnSubscribe(3));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL, aclprofDestroySubscribeConfig(NULL));
    EXPECT_OK(aclprofDestroySubscribeConfig(sc));
    /* the parsers: sizes, bad buffers */
    size_t size = 0;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "opDescSize is NULL", aclprofGetOpDescSize(NULL));
    EXPECT_OK(aclprofGetOpDescSize(&size));
    assert_true(size >= ACL_PROF_MAX_OP_NAME_LEN + ACL_PROF_MAX_OP_TYPE_LEN);
    char *buf = calloc(2, size);
    uint32_t num;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "opInfo is NULL", aclprofGetOpNum(NULL, size, &num));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "opNumber is NULL", aclprofGetOpNum(buf, size, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not a multiple", aclprofGetOpNum(buf, size + 1, &num));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not subscription data", aclprofGetOpNum(buf, 2 * size, &num));
    size_t len;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "index 2", aclprofGetOpNameLen(buf, 2 * size, 2, &len));
    char name[8];
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "opName is NULL", aclprofGetOpName(buf, size, 0, NULL, 8));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not subscription", aclprofGetOpType(buf, size, 0, name, 8));
    assert_int_equal(aclprofGetOpStart(buf, size, 0), 0);
    assert_int_equal(aclprofGetOpEnd(NULL, size, 0), 0);
    assert_int_equal(aclprofGetOpDuration(buf, size, 0), 0);
    assert_int_equal(aclprofGetModelId(buf, size, 0), 0);
    assert_int_equal(aclprofGetOpFlag(buf, size, 0), ACL_SUBSCRIBE_NONE);
    assert_null(aclprofGetOpAttriValue(buf, size, 0, ACL_SUBSCRIBE_ATTRI_THREADID));
    assert_null(aclprofGetOpAttriValue(buf, size, 0, ACL_SUBSCRIBE_ATTRI_NONE));
    expect_msg("attri 1");
    drain_msg();
    free(buf);
}

static void test_mstx(void **state)
{
    (void)state;
    /* off: nothing recorded, ranges get MSTX_INVALID_ID */
    mstxMarkA("ignored", NULL);
    assert_int_equal(mstxRangeStartA("ignored", NULL), MSTX_INVALID_ID);
    mstxRangeEnd(MSTX_INVALID_ID);
    prof_init();
    aclprofConfig *tx = aclprofCreateConfig(NULL, 0, ACL_AICORE_NONE, NULL,
                                            ACL_PROF_MSPROFTX | ACL_PROF_TASK_TIME);
    assert_non_null(tx);   /* no devices: allowed with ACL_PROF_MSPROFTX */
    EXPECT_OK(aclprofDestroyConfig(tx));
    tx = config(ACL_PROF_MSPROFTX | ACL_PROF_TASK_TIME, 1, 0);
    EXPECT_OK(aclprofStart(tx));
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    mstxMarkA("default mark", NULL);
    mstxMarkA(NULL, NULL);   /* ignored */
    mstxRangeId r = mstxRangeStartA("default range", s);
    assert_int_not_equal(r, MSTX_INVALID_ID);
    mstxRangeEnd(r);
    mstxRangeEnd(r);   /* not open any more: ignored */
    mstxDomainHandle_t q = mstxDomainCreateA("quote\"and\\slash");   /* escaped in the file */
    mstxDomainMarkA(q, "in \"q\"", NULL);
    mstxDomainHandle_t d = mstxDomainCreateA("DoAclAdd_Inner");
    assert_non_null(d);
    assert_ptr_equal(mstxDomainCreateA("DoAclAdd_Inner"), d);
    assert_null(mstxDomainCreateA(NULL));
    mstxDomainMarkA(d, "Create alpha aclScalar", s);
    mstxRangeId dr = mstxDomainRangeStartA(d, "After aclnnAdd", NULL);
    assert_int_not_equal(dr, MSTX_INVALID_ID);
    mstxRangeEnd(dr);   /* another domain's range: not this one */
    mstxDomainRangeEnd(d, dr);
    mstxDomainDestroy(d);
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclprofStop(tx));
    cJSON *root = prof_done();
    assert_non_null(trace_find(root, "i", "mstx", "default mark"));
    assert_non_null(trace_find(root, "i", "mstx:quote\"and\\slash", "in \"q\""));
    assert_int_equal(trace_count(root, "i", "mstx", "ignored"), 0);
    assert_int_equal(trace_count(root, "X", "mstx", "default range"), 1);
    assert_non_null(trace_find(root, "i", "mstx:DoAclAdd_Inner", "Create alpha aclScalar"));
    assert_int_equal(trace_count(root, "X", "mstx:DoAclAdd_Inner", "After aclnnAdd"), 1);
    /* with a stream: a mark task on it */
    assert_non_null(trace_find(root, "X", "task", "Create alpha aclScalar"));
    assert_non_null(trace_find(root, "X", "task", "default range"));
    cJSON_Delete(root);
    EXPECT_OK(aclprofDestroyConfig(tx));
}

static void test_ipv350(void **state)
{
    (void)state;
    reinit_with_soc("IPV350");
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, NULL, aclprofInit(NULL, 1));   /* arguments first */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclprofInit(dir, strlen(dir)));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclprofStart(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "IPV350", aclprofFinalize());
    assert_null(aclprofCreateStamp());
    expect_msg("IPV350");
    assert_int_equal(aclprofStr2Id("x"), 0);
    drain_msg();
}

/* Threads push, pop, mark and range at once; a range started on one thread
 * is stopped on another. */
#define THREADS 4
#define ROUNDS 100
static void *tx_thread(void *arg)
{
    void *stamp = arg;
    for (int i = 0; i < ROUNDS; i++) {
        uint32_t id;
        if (aclprofPush(stamp) || aclprofMark(stamp) || aclprofRangeStart(stamp, &id) ||
            aclprofPop() || aclprofRangeStop(id))
            return (void *)1;
        mstxRangeEnd(mstxRangeStartA("m", NULL));
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    prof_init();
    aclprofConfig *tx = config(ACL_PROF_MSPROFTX, 1, 0);
    EXPECT_OK(aclprofStart(tx));
    void *stamp = aclprofCreateStamp();
    assert_non_null(stamp);
    EXPECT_OK(aclprofSetStampTraceMessage(stamp, "t", 1));
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, tx_thread, stamp), 0);
    for (int i = 0; i < THREADS; i++) {
        void *r;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_null(r);
    }
    aclprofDestroyStamp(stamp);
    EXPECT_OK(aclprofStop(tx));
    cJSON *root = prof_done();
    assert_int_equal(trace_count(root, "i", "msproftx", "t"), THREADS * ROUNDS);
    assert_int_equal(trace_count(root, "X", "msproftx", "t"), 2 * THREADS * ROUNDS);
    assert_int_equal(trace_count(root, "X", "mstx", "m"), THREADS * ROUNDS);
    cJSON_Delete(root);
    EXPECT_OK(aclprofDestroyConfig(tx));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_init_finalize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collection_follows_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stamps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_str2id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subscription, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mstx, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ipv350, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
