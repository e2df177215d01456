/* Reading trace files in tests (trace-json.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace-json.h"

cJSON *trace_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("trace file %s was not written", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = 0;
    fclose(f);
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        char near[64];
        snprintf(near, sizeof near, "%s", cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "?");
        free(text);
        fail_msg("trace file %s is not JSON (near: %s)", path, near);
    }
    free(text);
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "traceEvents")));
    return root;
}

const cJSON *trace_events(const cJSON *root)
{
    return cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
}

const char *ev_str(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

double ev_num(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

const char *ev_arg_str(const cJSON *e, const char *key)
{
    return ev_str(cJSON_GetObjectItemCaseSensitive(e, "args"), key);
}

double ev_arg_num(const cJSON *e, const char *key)
{
    return ev_num(cJSON_GetObjectItemCaseSensitive(e, "args"), key);
}

bool ev_is(const cJSON *e, const char *ph, const char *cat, const char *name)
{
    return (!ph || strcmp(ev_str(e, "ph"), ph) == 0) && (!cat || strcmp(ev_str(e, "cat"), cat) == 0) &&
           (!name || strcmp(ev_str(e, "name"), name) == 0);
}

int trace_count(const cJSON *root, const char *ph, const char *cat, const char *name)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, trace_events(root))
        n += ev_is(e, ph, cat, name);
    return n;
}

const cJSON *trace_find(const cJSON *root, const char *ph, const char *cat, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, trace_events(root))
        if (ev_is(e, ph, cat, name))
            return e;
    return NULL;
}

static const char *meta(const cJSON *root, const char *what, int pid, int tid)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, trace_events(root))
        if (ev_is(e, "M", NULL, what) && ev_num(e, "pid") == pid && ev_num(e, "tid") == tid)
            return ev_arg_str(e, "name");
    return NULL;
}

const char *trace_thread_name(const cJSON *root, int pid, int tid)
{
    return meta(root, "thread_name", pid, tid);
}

const char *trace_process_name(const cJSON *root, int pid)
{
    return meta(root, "process_name", pid, 0);
}

double trace_other(const cJSON *root, const char *key)
{
    return ev_num(cJSON_GetObjectItemCaseSensitive(root, "otherData"), key);
}

void temp_dir(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/aclsim-trace-XXXXXX");
    assert_non_null(mkdtemp(dir));
}
