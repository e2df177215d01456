/*
 * The tracer (docs/tracing.md): ACLSIM_TRACE writes a Chrome Trace Event
 * JSON file at aclFinalize (and at exit); ACLSIM_TRACE_EVENTS bounds the
 * per-thread rings; ACLSIM_PROFILE prints the summary at exit.
 *
 * Each test runs a scripted program, finalizes, parses the file with cJSON
 * and checks its structure: one process per device, a track per stream with
 * a slice per task in stream order, copies with direction, bytes and
 * variable, kernels with their blocks on worker tracks, host functions,
 * event flow arrows between streams, a slice per runtime call on the host
 * thread's track, and the dropped-event accounting.
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
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"
#include "trace-json.h"

ACLSIM_DEVICE_VAR(float, tr_weights, [64]) = {1, 2, 3};

void tr_scale(float *out, float k)
{
    uint32_t i = aclsimGetBlockIdx();
    out[i] = ACLSIM_DEV(tr_weights)[i] * k;
}
ACLSIM_KERNEL_REGISTER(tr_scale, float *, float);

static void tr_host_fn(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

static char dir[64], path[128];

static int setup(void **state)
{
    (void)state;
    unset_config();
    temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/trace.json", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (runtime_initialized())
        (void)reset_and_finalize();
    unset_config();
    unlink(path);
    rmdir(dir);
    return 0;
}

/* Starts a traced session with two devices, device 0 current. */
static void start_traced(const char *events)
{
    setenv("ACLSIM_TRACE", path, 1);
    if (events)
        setenv("ACLSIM_TRACE_EVENTS", events, 1);
    EXPECT_OK(init_devices("2", "64M"));
    EXPECT_OK(aclrtSetDevice(0));
}

static int by_ts(const void *a, const void *b)
{
    double x = ev_num(*(const cJSON *const *)a, "ts"), y = ev_num(*(const cJSON *const *)b, "ts");
    return x < y ? -1 : x > y;
}

/* The slices (ph X, cat task) of one stream track, in time order (the file
 * lists each thread's record in turn: a stream's tasks run by two workers
 * are in two places). */
static int stream_slices(const cJSON *root, int pid, int tid, const cJSON **out, int max)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, trace_events(root))
        if (ev_is(e, "X", "task", NULL) && ev_num(e, "pid") == pid && ev_num(e, "tid") == tid &&
            n < max)
            out[n++] = e;
    qsort(out, (size_t)n, sizeof *out, by_ts);
    return n;
}

/* The track (pid, tid) of the first task slice named name. */
static const cJSON *task_named(const cJSON *root, const char *name)
{
    const cJSON *e = trace_find(root, "X", "task", name);
    if (!e)
        fail_msg("no task slice named \"%s\"", name);
    return e;
}

static void test_timeline(void **state)
{
    (void)state;
    start_traced(NULL);
    aclrtStream a, b;
    EXPECT_OK(aclrtCreateStream(&a));
    EXPECT_OK(aclrtCreateStream(&b));
    int32_t id_a, id_b;
    EXPECT_OK(aclrtStreamGetId(a, &id_a));
    EXPECT_OK(aclrtStreamGetId(b, &id_b));
    float w[64];
    for (int i = 0; i < 64; i++)
        w[i] = (float)i;
    float *host, *out;
    EXPECT_OK(aclrtMallocHost((void **)&host, sizeof w));
    memcpy(host, w, sizeof w);
    EXPECT_OK(aclrtMalloc((void **)&out, sizeof w, ACL_MEM_MALLOC_HUGE_FIRST));
    aclrtEvent ev;
    EXPECT_OK(aclrtCreateEvent(&ev));
    atomic_int ran = 0;
    /* stream a: copy to the variable, kernel of 4 blocks, host function, record */
    EXPECT_OK(aclrtMemcpyToSymbolAsync(tr_weights, host, 40, 0, ACL_MEMCPY_HOST_TO_DEVICE, a));
    float k = 2.0f;
    void *args[] = {&out, &k};
    EXPECT_OK(aclrtLaunchKernelWithArgsArray(func_by_symbol((const void *)tr_scale), 4, a, NULL, args));
    EXPECT_OK(aclrtLaunchHostFunc(a, tr_host_fn, &ran));
    EXPECT_OK(aclrtRecordEvent(ev, a));
    /* stream b: waits for the record, then copies the result back */
    EXPECT_OK(aclrtStreamWaitEvent(b, ev));
    EXPECT_OK(aclrtMemcpyAsync(host, sizeof w, out, 16, ACL_MEMCPY_DEVICE_TO_HOST, b));
    EXPECT_OK(aclrtSynchronizeStream(b));
    EXPECT_OK(aclrtSynchronizeStream(a));
    assert_int_equal(atomic_load(&ran), 1);
    /* a synchronous copy, and device 1 */
    EXPECT_OK(aclrtMemcpyFromSymbol(w, sizeof w, tr_weights, 8, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtMemcpyToSymbol(tr_weights, w, 12, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtDestroyEvent(ev));
    EXPECT_OK(aclrtFree(out));
    EXPECT_OK(aclrtFreeHost(host));
    EXPECT_OK(aclrtDestroyStream(a));
    EXPECT_OK(aclrtDestroyStream(b));
    EXPECT_OK(aclrtResetDevice(1));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());

    cJSON *root = trace_load(path);
    assert_string_equal(trace_process_name(root, 0), "host");
    assert_string_equal(trace_process_name(root, 1), "device 0");
    assert_int_equal((int)trace_other(root, "dropped_events"), 0);

    /* stream a: its four tasks in stream order */
    const cJSON *copy = task_named(root, "H2D tr_weights");
    int pid = (int)ev_num(copy, "pid"), ta = (int)ev_num(copy, "tid");
    assert_int_equal(pid, 1);
    char want[64];
    snprintf(want, sizeof want, "stream %d", id_a);
    assert_string_equal(trace_thread_name(root, pid, ta), want);
    const cJSON *sa[16];
    int n = stream_slices(root, pid, ta, sa, 16);
    assert_int_equal(n, 4);
    assert_string_equal(ev_str(sa[0], "name"), "H2D tr_weights");
    assert_string_equal(ev_arg_str(sa[0], "direction"), "H2D");
    assert_string_equal(ev_arg_str(sa[0], "variable"), "tr_weights");
    assert_int_equal((int)ev_arg_num(sa[0], "bytes"), 40);
    assert_string_equal(ev_str(sa[1], "name"), "tr_scale");
    assert_string_equal(ev_arg_str(sa[1], "kind"), "kernel");
    assert_int_equal((int)ev_arg_num(sa[1], "blocks"), 4);
    assert_string_equal(ev_arg_str(sa[2], "kind"), "host function");
    assert_string_equal(ev_str(sa[3], "name"), "event record");
    for (int i = 0; i < n; i++) {
        /* sequence numbers in the stream, consecutive */
        assert_int_equal((int)ev_arg_num(sa[i], "task"), (int)ev_arg_num(sa[0], "task") + i);
        assert_int_equal((int)ev_arg_num(sa[i], "stream"), id_a);
        if (i)   /* in order: each starts after the one before ended */
            assert_true(ev_num(sa[i], "ts") >= ev_num(sa[i - 1], "ts") + ev_num(sa[i - 1], "dur") - 0.0015);
    }
    /* the kernel's blocks: one slice each, on device 0's worker tracks, inside the kernel */
    int blocks = 0;
    bool seen[4] = {false};
    const cJSON *e;
    cJSON_ArrayForEach(e, trace_events(root)) {
        if (!ev_is(e, "X", "block", NULL))
            continue;
        blocks++;
        assert_int_equal((int)ev_num(e, "pid"), 1);
        assert_string_equal(ev_arg_str(e, "kernel"), "tr_scale");
        int idx = (int)ev_arg_num(e, "block");
        assert_true(idx >= 0 && idx < 4);
        seen[idx] = true;
        assert_true(ev_num(e, "ts") >= ev_num(sa[1], "ts") - 0.0015);
        assert_true(ev_num(e, "ts") + ev_num(e, "dur") <=
                    ev_num(sa[1], "ts") + ev_num(sa[1], "dur") + 0.0015);
        const char *tn = trace_thread_name(root, 1, (int)ev_num(e, "tid"));
        assert_non_null(tn);
        assert_non_null(strstr(tn, "worker"));
    }
    assert_int_equal(blocks, 4);
    assert_true(seen[0] && seen[1] && seen[2] && seen[3]);

    /* stream b: the wait, then the copy back; an arrow from a's record to b's wait */
    const cJSON *sb[8];
    const cJSON *back = task_named(root, "D2H memcpy");
    int tb = (int)ev_num(back, "tid");
    assert_int_not_equal(tb, ta);
    n = stream_slices(root, 1, tb, sb, 8);
    assert_int_equal(n, 2);
    assert_string_equal(ev_str(sb[0], "name"), "event wait");
    assert_int_equal((int)ev_arg_num(sb[1], "bytes"), 16);
    assert_true(ev_num(sb[0], "ts") >= ev_num(sa[3], "ts") - 0.0015);   /* after the record */
    const cJSON *out_flow = NULL, *in_flow = NULL;
    cJSON_ArrayForEach(e, trace_events(root)) {
        if (ev_is(e, "s", "event", NULL) && ev_num(e, "tid") == ta)
            out_flow = e;
        if (ev_is(e, "f", "event", NULL) && ev_num(e, "tid") == tb)
            in_flow = e;
    }
    assert_non_null(out_flow);
    assert_non_null(in_flow);
    assert_true(ev_num(out_flow, "id") == ev_num(in_flow, "id"));
    assert_string_equal(ev_str(in_flow, "bp"), "e");

    /* every call of the script: a slice on the host thread's track */
    static const char *const calls[] = {
        "aclrtSetDevice", "aclrtCreateStream", "aclrtStreamGetId", "aclrtMallocHost",
        "aclrtMalloc", "aclrtCreateEvent", "aclrtMemcpyToSymbolAsync",
        "aclrtLaunchKernelWithArgsArray", "aclrtLaunchHostFunc", "aclrtRecordEvent",
        "aclrtStreamWaitEvent", "aclrtMemcpyAsync", "aclrtSynchronizeStream",
        "aclrtMemcpyFromSymbol", "aclrtMemcpyToSymbol", "aclrtDestroyEvent", "aclrtFree",
        "aclrtFreeHost", "aclrtDestroyStream", "aclrtResetDevice"};
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        const cJSON *c = trace_find(root, "X", "api", calls[i]);
        if (!c)
            fail_msg("no slice for %s", calls[i]);
        assert_int_equal((int)ev_num(c, "pid"), 0);
        assert_non_null(trace_thread_name(root, 0, (int)ev_num(c, "tid")));
    }
    assert_int_equal(trace_count(root, "X", "api", "aclrtSynchronizeStream"), 2);
    /* the synchronous copies: slices with direction and bytes, on the host */
    const cJSON *sync = trace_find(root, "X", "copy", "D2H tr_weights");
    assert_non_null(sync);
    assert_int_equal((int)ev_arg_num(sync, "bytes"), 8);
    assert_int_equal((int)ev_arg_num(sync, "device"), 0);
    sync = trace_find(root, "X", "copy", "H2D tr_weights");
    assert_non_null(sync);
    assert_int_equal((int)ev_arg_num(sync, "device"), 1);
    /* an arrow from the launching call to the kernel task */
    int launches_out = trace_count(root, "s", "launch", NULL);
    int launches_in = trace_count(root, "f", "launch", NULL);
    assert_true(launches_out >= 6);
    assert_true(launches_in >= 6 && launches_in <= launches_out);
    cJSON_Delete(root);
}

/* A notify recorded on one stream releases a wait on another: an arrow
 * (cat notify) from the record's slice to the wait's. */
static void test_notify_flow(void **state)
{
    (void)state;
    start_traced(NULL);
    aclrtStream a, b;
    EXPECT_OK(aclrtCreateStream(&a));
    EXPECT_OK(aclrtCreateStream(&b));
    aclrtNotify n;
    EXPECT_OK(aclrtCreateNotify(&n, 0));
    EXPECT_OK(aclrtWaitAndResetNotify(n, b, 0));   /* b waits until a records */
    /* Give b's worker time to start waiting, so that the record releases a
     * waiting stream (the arrow does not depend on it: the released wait can
     * be traced before the record, and the arrow must join them anyway). */
    sleep_ms(2);
    EXPECT_OK(aclrtRecordNotify(n, a));
    EXPECT_OK(aclrtSynchronizeStream(b));
    EXPECT_OK(aclrtSynchronizeStream(a));
    EXPECT_OK(aclrtDestroyNotify(n));
    EXPECT_OK(aclrtDestroyStream(a));
    EXPECT_OK(aclrtDestroyStream(b));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    cJSON *root = trace_load(path);
    const cJSON *rec = task_named(root, "notify record"), *wait = task_named(root, "notify wait");
    assert_int_not_equal((int)ev_num(rec, "tid"), (int)ev_num(wait, "tid"));
    assert_true(ev_num(wait, "ts") >= ev_num(rec, "ts") - 0.0015);
    const cJSON *out_flow = trace_find(root, "s", "notify", NULL);
    const cJSON *in_flow = trace_find(root, "f", "notify", NULL);
    assert_non_null(out_flow);
    assert_non_null(in_flow);
    assert_true(ev_num(out_flow, "id") == ev_num(in_flow, "id"));
    assert_true(ev_num(out_flow, "tid") == ev_num(rec, "tid"));
    assert_true(ev_num(in_flow, "tid") == ev_num(wait, "tid"));
    cJSON_Delete(root);
}

/* Three rounds in which the record comes first and the wait finds the notify
 * already set: every wait still gets its record's arrow, and the three arrows
 * are distinct (each starts at a record and ends at a wait). */
static void test_notify_flow_rounds(void **state)
{
    (void)state;
    start_traced(NULL);
    aclrtStream a, b;
    EXPECT_OK(aclrtCreateStream(&a));
    EXPECT_OK(aclrtCreateStream(&b));
    aclrtNotify n;
    EXPECT_OK(aclrtCreateNotify(&n, 0));
    for (int round = 0; round < 3; round++) {
        EXPECT_OK(aclrtRecordNotify(n, a));
        EXPECT_OK(aclrtSynchronizeStream(a));
        EXPECT_OK(aclrtWaitAndResetNotify(n, b, 0));
        EXPECT_OK(aclrtSynchronizeStream(b));
    }
    EXPECT_OK(aclrtDestroyNotify(n));
    EXPECT_OK(aclrtDestroyStream(a));
    EXPECT_OK(aclrtDestroyStream(b));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    cJSON *root = trace_load(path);
    assert_int_equal(trace_count(root, "s", "notify", NULL), 3);
    assert_int_equal(trace_count(root, "f", "notify", NULL), 3);
    double outs[3], ins[3];
    int no = 0, ni = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, trace_events(root)) {
        if (ev_is(e, "s", "notify", NULL))
            outs[no++] = ev_num(e, "id");
        else if (ev_is(e, "f", "notify", NULL))
            ins[ni++] = ev_num(e, "id");
    }
    for (int i = 0; i < 3; i++) {
        int matches = 0;
        for (int j = 0; j < 3; j++)
            matches += ins[j] == outs[i];
        assert_int_equal(matches, 1);
        assert_true(outs[i] != outs[(i + 1) % 3]);
    }
    cJSON_Delete(root);
}

/* A ring of 16 events per thread: the oldest go, and the file says how many. */
static void test_dropped(void **state)
{
    (void)state;
    start_traced("16");
    void *p;
    EXPECT_OK(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < 200; i++)
        EXPECT_OK(aclrtMemsetAsync(p, 4096, i, 4096, NULL));
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtFree(p));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    cJSON *root = trace_load(path);
    assert_int_equal((int)trace_other(root, "ring_events_per_thread"), 16);
    double dropped = trace_other(root, "dropped_events");
    assert_true(dropped >= 200);   /* at least the host's API slices and arrows */
    const cJSON *note = NULL, *e;
    cJSON_ArrayForEach(e, trace_events(root))
        if (ev_is(e, "i", "aclsim", NULL) && strstr(ev_str(e, "name"), "earlier events dropped"))
            note = e;
    assert_non_null(note);
    assert_true(ev_arg_num(note, "dropped") > 0);
    /* what is kept is bounded: 16 per ring, plus the pending call slice and notes */
    assert_true(trace_other(root, "events") <= 16.0 * 8);
    /* the kept memsets (the newest of each worker's ring) in stream order */
    const cJSON *kept[32];
    int n = 0;
    cJSON_ArrayForEach(e, trace_events(root))
        if (ev_is(e, "X", "task", "memset") && n < 32)
            kept[n++] = e;
    qsort(kept, (size_t)n, sizeof *kept, by_ts);
    assert_true(n > 0 && n <= 32);   /* (a ring per worker) */
    for (int i = 1; i < n; i++)
        assert_true(ev_arg_num(kept[i], "task") > ev_arg_num(kept[i - 1], "task"));
    cJSON_Delete(root);
}

static void test_bad_settings(void **state)
{
    (void)state;
    setenv("ACLSIM_TRACE_EVENTS", "15", 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ACLSIM_TRACE_EVENTS", aclInit(NULL));
    setenv("ACLSIM_TRACE_EVENTS", "16777217", 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "16 to 16777216", aclInit(NULL));
    unsetenv("ACLSIM_TRACE_EVENTS");
    setenv("ACLSIM_PROFILE", "2", 1);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ACLSIM_PROFILE", aclInit(NULL));
    unsetenv("ACLSIM_PROFILE");
    assert_false(runtime_initialized());
    /* a file that cannot be written: aclFinalize still succeeds (logged) */
    setenv("ACLSIM_TRACE", "/nonexistent-dir/x/trace.json", 1);
    EXPECT_OK(init_devices("1", "64M"));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
}

/* The aclInit file's "aclsim" settings work as the variables do. */
static void test_config_file(void **state)
{
    (void)state;
    char cfg[160];
    snprintf(cfg, sizeof cfg, "%s/acl.json", dir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "{\"aclsim\": {\"trace\": \"%s\", \"trace_events\": 64}}", path);
    fclose(f);
    EXPECT_OK(aclInit(cfg));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    cJSON *root = trace_load(path);
    assert_int_equal((int)trace_other(root, "ring_events_per_thread"), 64);
    assert_non_null(trace_find(root, "X", "api", "aclrtSetDevice"));
    cJSON_Delete(root);
    unlink(cfg);
}

/* Off, nothing is recorded: a later session without ACLSIM_TRACE leaves
 * the file alone and adds nothing. */
static void test_off(void **state)
{
    (void)state;
    start_traced(NULL);
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    struct stat before;
    assert_int_equal(stat(path, &before), 0);
    unsetenv("ACLSIM_TRACE");
    EXPECT_OK(init_devices("2", "64M"));
    EXPECT_OK(aclrtSetDevice(0));
    void *p;
    EXPECT_OK(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemsetAsync(p, 64, 1, 64, NULL));
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtFree(p));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    /* the next traced session's file has none of the untraced calls */
    start_traced(NULL);
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    cJSON *root = trace_load(path);
    assert_int_equal(trace_count(root, "X", "api", "aclrtMemsetAsync"), 0);
    assert_int_equal(trace_count(root, "X", "task", "memset"), 0);
    assert_int_equal(trace_count(root, "X", "api", "aclrtSetDevice"), 1);   /* this session's */
    cJSON_Delete(root);
}

/* Runs fn in a child process with the given environment and stderr in a
 * file; returns that file's text (malloc'ed). */
static char *run_child(void (*fn)(void), const char *trace, const char *profile)
{
    char err_path[160];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = freopen(err_path, "w", stderr);
        if (!f)
            _exit(3);
        unset_config();
        if (trace)
            setenv("ACLSIM_TRACE", trace, 1);
        if (profile)
            setenv("ACLSIM_PROFILE", profile, 1);
        fn();
        exit(0);   /* atexit handlers run: the trace and the summary */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    FILE *f = fopen(err_path, "r");
    assert_non_null(f);
    static char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    unlink(err_path);
    return strdup(text);
}

/* A program that never calls aclFinalize. */
static void forgetful_program(void)
{
    if (aclInit(NULL) || aclrtSetDevice(0))
        _exit(4);
    float w[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r[8];
    for (int i = 0; i < 3; i++)
        if (aclrtMemcpyToSymbol(tr_weights, w, sizeof w, 0, ACL_MEMCPY_HOST_TO_DEVICE))
            _exit(5);
    if (aclrtMemcpyFromSymbol(r, sizeof r, tr_weights, 16, 0, ACL_MEMCPY_DEVICE_TO_HOST))
        _exit(6);
    float *out;
    if (aclrtMalloc((void **)&out, 64 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST))
        _exit(7);
    float k = 1;
    void *args[] = {&out, &k};
    for (int i = 0; i < 2; i++)
        if (aclrtLaunchKernelWithArgsArray(func_by_symbol((const void *)tr_scale), 8, NULL, NULL, args))
            _exit(8);
    if (aclrtSynchronizeDevice())
        _exit(9);
}

static void test_written_at_exit(void **state)
{
    (void)state;
    free(run_child(forgetful_program, path, NULL));
    cJSON *root = trace_load(path);
    assert_int_equal(trace_count(root, "X", "api", "aclrtMemcpyToSymbol"), 3);
    assert_int_equal(trace_count(root, "X", "task", "tr_scale"), 2);
    assert_int_equal(trace_count(root, "X", "block", NULL), 16);
    cJSON_Delete(root);
}

static void test_profile_summary(void **state)
{
    (void)state;
    char *text = run_child(forgetful_program, NULL, "1");
    /* the variable: 3 copies to the device, 1 from it, 120 and 16 bytes */
    const char *line = strstr(text, "\ntr_weights ");
    if (!line)
        fail_msg("no summary line for tr_weights in:\n%s", text);
    unsigned to, from;
    unsigned long long to_bytes, from_bytes;
    double t1, m1;
    assert_int_equal(sscanf(line, " tr_weights %u %llu %lf %lf %u %llu", &to, &to_bytes, &t1, &m1,
                            &from, &from_bytes), 6);
    assert_int_equal(to, 3);
    assert_int_equal(to_bytes, 96);
    assert_int_equal(from, 1);
    assert_int_equal(from_bytes, 16);
    assert_non_null(strstr(line, "dev0:4"));
    line = strstr(text, "\ntr_scale ");
    assert_non_null(line);
    unsigned launches, blocks;
    assert_int_equal(sscanf(line, " tr_scale %u %u", &launches, &blocks), 2);
    assert_int_equal(launches, 2);
    assert_int_equal(blocks, 16);
    free(text);
    /* no trace file without ACLSIM_TRACE */
    assert_int_not_equal(access(path, F_OK), 0);
}

/* Threads racing: every thread's calls land on its own track; the writer at
 * aclFinalize runs while other threads still call (rings are locked). */
#define RACERS 4
#define ROUNDS 200
static void *racer(void *arg)
{
    aclrtContext ctx = arg;
    if (aclrtSetCurrentContext(ctx))
        return (void *)1;
    void *p;
    if (aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST))
        return (void *)1;
    aclrtStream s;
    if (aclrtCreateStream(&s))
        return (void *)1;
    for (int i = 0; i < ROUNDS; i++)
        if (aclrtMemsetAsync(p, 256, i, 256, s))
            return (void *)1;
    if (aclrtSynchronizeStream(s) || aclrtDestroyStream(s) || aclrtFree(p))
        return (void *)1;
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    start_traced(NULL);
    pthread_t t[RACERS];
    for (int i = 0; i < RACERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, racer, current_context()), 0);
    for (int i = 0; i < RACERS; i++) {
        void *r;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_null(r);
    }
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    cJSON *root = trace_load(path);
    assert_int_equal(trace_count(root, "X", "api", "aclrtMemsetAsync"), RACERS * ROUNDS);
    assert_int_equal(trace_count(root, "X", "task", "memset"), RACERS * ROUNDS);
    /* a track per stream, its tasks consecutive and in order */
    const cJSON *e;
    int tids[RACERS], tracks = 0;
    cJSON_ArrayForEach(e, trace_events(root)) {
        if (!ev_is(e, "X", "task", "memset"))
            continue;
        int tid = (int)ev_num(e, "tid"), k = 0;
        while (k < tracks && tids[k] != tid)
            k++;
        if (k < tracks)
            continue;
        assert_true(tracks < RACERS);
        tids[tracks++] = tid;
        const cJSON *s[ROUNDS + 1];
        int n = stream_slices(root, (int)ev_num(e, "pid"), tid, s, ROUNDS + 1);
        assert_int_equal(n, ROUNDS);
        for (int i = 1; i < n; i++)   /* in time order, the stream's order */
            assert_int_equal((int)ev_arg_num(s[i], "task"), (int)ev_arg_num(s[0], "task") + i);
    }
    assert_int_equal(tracks, RACERS);
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_timeline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_notify_flow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_notify_flow_rounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_written_at_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_profile_summary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
