/*
 * The dump API (acl/acl_dump.h, aclmdlInitDump/SetDump/FinalizeDump) and the
 * last-task functions of acl_rt.h (dump.c, docs/dump.md): the call order and
 * codes of the model dump functions; the dump paths and their precedence
 * (NPU_COLLECT_PATH > ASCEND_WORK_PATH > dump_path); exception info saved to
 * files (or given to the registered callback) with its checks; a failed
 * kernel's argument block and cached task info in the exception dump;
 * aclrtProfTrace's mark in the trace file; the 207000s.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_dump.h"
#include "aclsim/aclsim.h"
#include "common.h"

static char tmp[256];

static int setup(void **state)
{
    snprintf(tmp, sizeof tmp, "/tmp/aclsim-dump-XXXXXX");
    assert_non_null(mkdtemp(tmp));
    unsetenv("NPU_COLLECT_PATH");
    unsetenv("ASCEND_WORK_PATH");
    return setup_device0(state);
}

static int teardown(void **state)
{
    (void)aclmdlFinalizeDump();
    acldumpUnregCallback();
    unsetenv("NPU_COLLECT_PATH");
    unsetenv("ASCEND_WORK_PATH");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    assert_int_equal(system(cmd), 0);
    return teardown_device0(state);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The file's contents (NUL-terminated; *len bytes), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = calloc(1, 1 << 20);
    size_t n = fread(b, 1, (1 << 20) - 1, f);
    fclose(f);
    if (len)
        *len = n;
    return b;
}

/* The one file in dir whose name starts with prefix (full path into out); how many there are. */
static int find_file(const char *dir, const char *prefix, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            snprintf(out, cap, "%s%s", dir, e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

static void set_config(const char *json)
{
    char cfg[300];
    snprintf(cfg, sizeof cfg, "%s/dump.json", tmp);
    write_text(cfg, json);
    EXPECT_OK(aclmdlSetDump(cfg));
}

static void test_before_acl_init(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclmdlInitDump());
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclmdlSetDump("x"));
    EXPECT_ERR(ACL_ERROR_UNINITIALIZE, "aclInit", aclmdlFinalizeDump());
}

static void test_model_dump_sequence(void **state)
{
    (void)state;
    char cfg[300], dp[300];
    EXPECT_ERR(ACL_ERROR_DUMP_NOT_RUN, "aclmdlInitDump", aclmdlSetDump("x"));
    EXPECT_ERR(ACL_ERROR_DUMP_NOT_RUN, "aclmdlInitDump", aclmdlFinalizeDump());
    EXPECT_OK(aclmdlInitDump());
    EXPECT_ERR(ACL_ERROR_REPEAT_INITIALIZE, "repeatedly", aclmdlInitDump());
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dumpCfgPath", aclmdlSetDump(NULL));
    snprintf(cfg, sizeof cfg, "%s/missing.json", tmp);
    EXPECT_ERR(ACL_ERROR_INVALID_FILE, "missing.json", aclmdlSetDump(cfg));
    snprintf(cfg, sizeof cfg, "%s/bad.json", tmp);
    write_text(cfg, "{\"dump\": ");
    EXPECT_ERR(ACL_ERROR_PARSE_FILE, "bad.json", aclmdlSetDump(cfg));
    write_text(cfg, "{\"dump\": {\"dump_scene\": \"sometimes\"}}");
    EXPECT_ERR(ACL_ERROR_INVALID_DUMP_CONFIG, "dump_scene", aclmdlSetDump(cfg));
    write_text(cfg, "{\"dump\": {\"dump_path\": 5}}");
    EXPECT_ERR(ACL_ERROR_INVALID_DUMP_CONFIG, "dump_path", aclmdlSetDump(cfg));
    assert_null(acldumpGetPath(DATA_DUMP));   /* refused configs changed nothing */

    snprintf(dp, sizeof dp, "%s/data", tmp);
    char json[400];
    snprintf(json, sizeof json, "{\"dump\": {\"dump_path\": \"%s\", \"dump_mode\": \"all\"}}", dp);
    set_config(json);
    assert_string_equal(acldumpGetPath(DATA_DUMP), dp);
    assert_string_equal(acldumpGetPath(OVERFLOW_DUMP), dp);
    assert_null(acldumpGetPath(AIC_ERR_BRIEF_DUMP));   /* no exception dump configured */
    assert_null(acldumpGetPath((acldumpType)9));
    EXPECT_OK(aclmdlFinalizeDump());
    assert_null(acldumpGetPath(DATA_DUMP));
    EXPECT_ERR(ACL_ERROR_DUMP_NOT_RUN, "aclmdlInitDump", aclmdlFinalizeDump());
}

static void test_acl_init_dump_section(void **state)
{
    (void)state;
    char cfg[300], dp[300], json[400];
    snprintf(cfg, sizeof cfg, "%s/init.json", tmp);
    snprintf(dp, sizeof dp, "%s/from-init", tmp);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    write_text(cfg, "{\"dump\": {\"dump_scene\": \"often\"}}");
    EXPECT_ERR(ACL_ERROR_INVALID_DUMP_CONFIG, "dump_scene", aclInit(cfg));
    snprintf(json, sizeof json, "{\"dump\": {\"dump_path\": \"%s\", \"dump_scene\": \"aic_err_norm_dump\"}}",
             dp);
    write_text(cfg, json);
    EXPECT_OK(aclInit(cfg));
    EXPECT_OK(aclrtSetDevice(0));
    assert_string_equal(acldumpGetPath(DATA_DUMP), dp);
    char got[400], want[400];
    snprintf(want, sizeof want, "%s/extra-info/data-dump/0/", dp);
    EXPECT_OK(acldumpGetExceptionInfoPath(got, sizeof got));
    assert_string_equal(got, want);
    EXPECT_OK(aclrtResetDevice(0));
    assert_int_equal(aclFinalize(), ACL_SUCCESS);   /* forgets it */
    assert_int_equal(init_devices("2", "64M"), ACL_SUCCESS);
    EXPECT_OK(aclrtSetDevice(0));
    assert_null(acldumpGetPath(DATA_DUMP));
    EXPECT_ERR(ACL_ERROR_FAILURE, "not enabled", acldumpGetExceptionInfoPath(got, sizeof got));
}

static void expect_root(const char *base)
{
    char want[400], got[400];
    snprintf(want, sizeof want, "%s/extra-info/data-dump/0/", base);
    EXPECT_OK(acldumpGetExceptionInfoPath(got, sizeof got));
    assert_string_equal(got, want);
    const char *p = acldumpGetPath(AIC_ERR_NORM_DUMP);
    assert_non_null(p);
    assert_string_equal(p, want);
    struct stat st;
    assert_int_equal(stat(want, &st), 0);   /* acldumpGetPath created it */
    assert_true(S_ISDIR(st.st_mode));
}

static void test_exception_path_precedence(void **state)
{
    (void)state;
    char got[400], a[300], b[300], c[300], json[400];
    EXPECT_ERR(ACL_ERROR_FAILURE, "not enabled", acldumpGetExceptionInfoPath(got, sizeof got));
    assert_null(acldumpGetPath(AIC_ERR_BRIEF_DUMP));
    snprintf(a, sizeof a, "%s/a", tmp);
    snprintf(b, sizeof b, "%s/b", tmp);
    snprintf(c, sizeof c, "%s/c", tmp);
    setenv("NPU_COLLECT_PATH", a, 1);
    setenv("ASCEND_WORK_PATH", b, 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "path", acldumpGetExceptionInfoPath(NULL, 10));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "maxLen", acldumpGetExceptionInfoPath(got, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "maxLen", acldumpGetExceptionInfoPath(got, 8));
    expect_root(a);

    unsetenv("NPU_COLLECT_PATH");   /* exception dump now comes from the config */
    EXPECT_ERR(ACL_ERROR_FAILURE, "not enabled", acldumpGetExceptionInfoPath(got, sizeof got));
    EXPECT_OK(aclmdlInitDump());
    snprintf(json, sizeof json, "{\"dump\": {\"dump_path\": \"%s\", \"dump_scene\": \"lite_exception\"}}",
             c);
    set_config(json);
    expect_root(b);
    unsetenv("ASCEND_WORK_PATH");
    expect_root(c);
}

static void save_args(acldumpTensorInfo *t, void *dev, size_t n)
{
    memset(t, 0, sizeof *t);
    t->type = ACL_DUMP_TENSOR_OUTPUT;
    t->tensorSize = n;
    t->tensorAddr = dev;
    t->addrType = ACL_DUMP_ADDR_RAW;
    t->placement = ACL_DUMP_PLACEMENT_DEVICE;
    t->shapeNum = 2;
    t->shape[0] = 2;
    t->shape[1] = 4;
}

static void test_save_exception_info_checks(void **state)
{
    (void)state;
    void *dev;
    EXPECT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    acldumpTensorInfo t;
    save_args(&t, dev, 8);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "fileName", acldumpSaveExceptionInfo(NULL, NULL, &t, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "empty", acldumpSaveExceptionInfo("", NULL, &t, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "..", acldumpSaveExceptionInfo("a/../b", NULL, &t, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "tensors", acldumpSaveExceptionInfo("f", NULL, NULL, 1));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "tensorCount", acldumpSaveExceptionInfo("f", NULL, &t, 0));
    EXPECT_ERR(ACL_ERROR_FAILURE, "not enabled", acldumpSaveExceptionInfo("f", NULL, &t, 1));
    setenv("NPU_COLLECT_PATH", tmp, 1);
    t.shapeNum = 26;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "shapeNum", acldumpSaveExceptionInfo("f", NULL, &t, 1));
    save_args(&t, dev, 8);
    t.addrType = ACL_DUMP_ADDR_PTR;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "addrType", acldumpSaveExceptionInfo("f", NULL, &t, 1));
    save_args(&t, dev, 8);
    t.placement = ACL_DUMP_PLACEMENT_HOST;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "placement", acldumpSaveExceptionInfo("f", NULL, &t, 1));
    save_args(&t, NULL, 8);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "tensorAddr", acldumpSaveExceptionInfo("f", NULL, &t, 1));
    save_args(&t, dev, 0);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "tensorSize", acldumpSaveExceptionInfo("f", NULL, &t, 1));
    save_args(&t, dev, (size_t)128 << 20);   /* past the allocation */
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "tensors[0].tensorAddr",
               acldumpSaveExceptionInfo("f", NULL, &t, 1));
    int64_t host[2];
    save_args(&t, host, 8);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "not device memory", acldumpSaveExceptionInfo("f", NULL, &t, 1));
    char root[400], found[700];
    EXPECT_OK(acldumpGetExceptionInfoPath(root, sizeof root));
    assert_int_equal(find_file(root, "f", found, sizeof found), 0);   /* nothing written */
    EXPECT_OK(aclrtFree(dev));
}

static void test_save_exception_info_writes_file(void **state)
{
    (void)state;
    setenv("NPU_COLLECT_PATH", tmp, 1);
    uint8_t *dev;
    EXPECT_OK(aclrtMalloc((void **)&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    const char bytes[] = "TENSOR-A-BYTES!";
    EXPECT_OK(aclrtMemcpy(dev, 64, bytes, sizeof bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    acldumpTensorInfo t[2];
    save_args(&t[0], dev, 8);
    save_args(&t[1], dev + 8, 8);
    EXPECT_OK(acldumpSaveExceptionInfo("sub/info", "my-tag", t, 2));

    char root[400], dir[500], found[700];
    EXPECT_OK(acldumpGetExceptionInfoPath(root, sizeof root));
    snprintf(dir, sizeof dir, "%ssub/", root);
    assert_int_equal(find_file(dir, "info.custom.", found, sizeof found), 1);
    const char *stamp = strstr(found, "info.custom.") + strlen("info.custom.");
    assert_int_equal(strlen(stamp), 17);   /* YYYYMMDDhhmmssmmm */
    assert_int_equal(strspn(stamp, "0123456789"), 17);
    size_t len = 0;
    char *text = slurp(found, &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "user_tag: my-tag"));
    assert_non_null(strstr(text, "tensors: 2"));
    assert_non_null(strstr(text, "shape [2,4]"));
    assert_true(len >= 16);
    assert_memory_equal(text + len - 16, bytes, 16);   /* both tensors' data, in order */
    free(text);
    EXPECT_OK(aclrtFree(dev));
}

static int chunks;
static char chunk_name[ACL_DUMP_MAX_FILE_PATH_LENGTH];
static char chunk_data[4096];
static uint32_t chunk_len, chunk_last;

static int32_t on_chunk(const acldumpChunk *c, int32_t len)
{
    chunks++;
    snprintf(chunk_name, sizeof chunk_name, "%s", c->fileName);
    chunk_len = c->bufLen;
    chunk_last = c->isLastChunk;
    assert_int_equal(len, (int32_t)(sizeof *c + c->bufLen));
    memcpy(chunk_data, c->dataBuf, c->bufLen < sizeof chunk_data ? c->bufLen : sizeof chunk_data);
    return 0;
}

static void test_callback_receives_dump_data(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_FAILURE, "messageCallback", acldumpRegCallback(NULL, 0));
    EXPECT_ERR(ACL_ERROR_FAILURE, "flag", acldumpRegCallback(on_chunk, 1));
    EXPECT_OK(acldumpRegCallback(on_chunk, 0));
    setenv("NPU_COLLECT_PATH", tmp, 1);
    void *dev;
    EXPECT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(dev, 64, 0x5a, 64));
    acldumpTensorInfo t;
    save_args(&t, dev, 4);
    chunks = 0;
    EXPECT_OK(acldumpSaveExceptionInfo("cb", NULL, &t, 1));
    assert_int_equal(chunks, 1);
    assert_int_equal(chunk_last, 1);
    char root[400], found[700];
    EXPECT_OK(acldumpGetExceptionInfoPath(root, sizeof root));
    assert_memory_equal(chunk_name, root, strlen(root));
    assert_non_null(strstr(chunk_name, "cb.custom."));
    assert_memory_equal(chunk_data + chunk_len - 4, "\x5a\x5a\x5a\x5a", 4);
    assert_int_equal(find_file(root, "cb.custom.", found, sizeof found), 0);   /* not on disk */

    acldumpUnregCallback();
    EXPECT_OK(acldumpSaveExceptionInfo("cb", NULL, &t, 1));
    assert_int_equal(chunks, 1);
    assert_int_equal(find_file(root, "cb.custom.", found, sizeof found), 1);
    EXPECT_OK(aclrtFree(dev));
}

/* Race: threads save exception info while another registers and unregisters
 * a callback and reads the paths; every save lands exactly once (a chunk or a
 * file). Bounded by alarm(). */
#define RACE_THREADS 4
#define RACE_SAVES 25
static atomic_int race_chunks;
static atomic_bool race_done;
static void *race_dev;

static int32_t race_chunk(const acldumpChunk *c, int32_t len)
{
    (void)c;
    (void)len;
    atomic_fetch_add(&race_chunks, 1);
    return 0;
}

static void *race_saver(void *arg)
{
    int id = (int)(intptr_t)arg;
    if (aclrtSetDevice(0) != ACL_SUCCESS)
        return (void *)1;
    acldumpTensorInfo t;
    save_args(&t, race_dev, 16);
    for (int i = 0; i < RACE_SAVES; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d-%d", id, i);
        if (acldumpSaveExceptionInfo(name, "race", &t, 1) != ACL_SUCCESS)
            return (void *)1;
    }
    return NULL;
}

static void *race_toggler(void *arg)
{
    (void)arg;
    while (!atomic_load(&race_done)) {
        (void)acldumpRegCallback(race_chunk, 0);
        (void)acldumpGetPath(AIC_ERR_BRIEF_DUMP);
        acldumpUnregCallback();
    }
    return NULL;
}

static void test_race_saves_and_callbacks(void **state)
{
    (void)state;
    alarm(60);   /* a hang is a failure */
    setenv("NPU_COLLECT_PATH", tmp, 1);
    EXPECT_OK(aclrtMalloc(&race_dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    atomic_store(&race_chunks, 0);
    atomic_store(&race_done, false);
    pthread_t tog, th[RACE_THREADS];
    assert_int_equal(pthread_create(&tog, NULL, race_toggler, NULL), 0);
    for (int i = 0; i < RACE_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race_saver, (void *)(intptr_t)i), 0);
    int bad = 0;
    for (int i = 0; i < RACE_THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += r != NULL;
    }
    atomic_store(&race_done, true);
    pthread_join(tog, NULL);
    alarm(0);
    assert_int_equal(bad, 0);
    char root[400], found[700];
    EXPECT_OK(acldumpGetExceptionInfoPath(root, sizeof root));
    int files = find_file(root, "t", found, sizeof found);
    assert_int_equal(files + atomic_load(&race_chunks), RACE_THREADS * RACE_SAVES);
    EXPECT_OK(aclrtFree(race_dev));
}

static void k_dump_fail(int x)
{
    if (x == 42)
        aclsimTrap("dump me");
}
ACLSIM_KERNEL_REGISTER(k_dump_fail, int);

static void test_failed_kernel_is_dumped(void **state)
{
    (void)state;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "infoPtr", aclrtCacheLastTaskOpInfo(NULL, 4));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "infoSize", aclrtCacheLastTaskOpInfo("x", 0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "extendInfoPtr", aclrtCacheLastTaskExtendInfo(NULL, 4));
    setenv("NPU_COLLECT_PATH", tmp, 1);
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    int x = 7;   /* a kernel that succeeds: nothing dumped */
    void *args[] = {&x};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(k_dump_fail), 1, s, NULL, args));
    EXPECT_OK(aclrtSynchronizeStream(s));
    x = 42;
    /* The stream is held until the op info is cached: otherwise the kernel
     * may fail, and be dumped, before the info reaches it. */
    struct blocker hold;
    blocker_init(&hold);
    EXPECT_OK(aclrtLaunchHostFunc(s, blocker_fn, &hold));
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(FUNC(k_dump_fail), 1, s, NULL, args));
    const uint8_t op[4] = {0xde, 0xad, 0xbe, 0xef};
    EXPECT_OK(aclrtCacheLastTaskOpInfo(op, sizeof op));
    EXPECT_OK(aclrtCacheLastTaskExtendInfo("shape=[2,4] note", 11));   /* the first 11 bytes */
    blocker_release(&hold);
    EXPECT_ERR(ACL_ERROR_RT_AICORE_EXCEPTION, "dump me", aclrtSynchronizeStream(s));

    char root[400], found[700];
    EXPECT_OK(acldumpGetExceptionInfoPath(root, sizeof root));
    assert_int_equal(find_file(root, "k_dump_fail.", found, sizeof found), 1);
    char *text = slurp(found, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "kernel: k_dump_fail"));
    assert_non_null(strstr(text, "dump me"));
    assert_non_null(strstr(text, "2a 00 00 00"));   /* the argument block: int 42 */
    assert_non_null(strstr(text, "op_info: 4 bytes\nde ad be ef\n"));
    assert_non_null(strstr(text, "extend_info: 11 bytes\nshape=[2,4]\n"));
    free(text);
    EXPECT_OK(aclrtDestroyStream(s));
}

static void test_prof_trace_mark(void **state)
{
    (void)state;
    char trace[300];
    snprintf(trace, sizeof trace, "%s/trace.json", tmp);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    setenv("ACLSIM_TRACE", trace, 1);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    unsetenv("ACLSIM_TRACE");
    EXPECT_OK(aclrtSetDevice(0));
    struct __attribute__((packed)) { uint64_t id, model; uint16_t tag; } d = {7, 3, 9};
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "userdata", aclrtProfTrace(NULL, 18, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "length", aclrtProfTrace(&d, 0, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "length", aclrtProfTrace(&d, 19, NULL));
    EXPECT_ERR(ACL_ERROR_RT_INVALID_HANDLE, NULL, aclrtProfTrace(&d, 18, (aclrtStream)&d));
    EXPECT_OK(aclrtProfTrace(&d, 18, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtResetDevice(0));
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    char *text = slurp(trace, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "aclrtProfTrace id 7 modelId 3 tagId 9"));
    free(text);
    assert_int_equal(init_devices("2", "64M"), ACL_SUCCESS);
    EXPECT_OK(aclrtSetDevice(0));
}

static void test_not_supported(void **state)
{
    (void)state;
    void *addr = NULL;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "addr", aclrtGetHardwareSyncAddr(NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "synchronization", aclrtGetHardwareSyncAddr(&addr));
    assert_null(addr);
    int h;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "handle", aclrtMemMapSetLink(NULL, ACL_RT_MEM_ACCESS_LINK_HCCS));
    EXPECT_ERR(ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED, "adviceLink",
               aclrtMemMapSetLink(&h, (aclrtMemLinkType)9));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "link",
               aclrtMemMapSetLink(&h, ACL_RT_MEM_ACCESS_LINK_SIO));
    EXPECT_ERR(ACL_ERROR_FAILURE, "path", aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, NULL));
    EXPECT_ERR(ACL_ERROR_FAILURE, "dumpType", aclopStartDumpArgs(2, tmp));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not simulated",
               aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, tmp));
    EXPECT_OK(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_before_acl_init, setup_clean, teardown_clean),
        cmocka_unit_test_setup_teardown(test_model_dump_sequence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acl_init_dump_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exception_path_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_exception_info_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_exception_info_writes_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callback_receives_dump_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_kernel_is_dumped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_race_saves_and_callbacks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prof_trace_mark, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_supported, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
