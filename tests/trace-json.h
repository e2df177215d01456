/*
 * Reading aclsim's trace files (Chrome Trace Event JSON) in tests:
 * test-trace.c and test-prof.c. Functions that assert run on the test thread.
 */
#ifndef ACLSIM_TEST_TRACE_JSON_H
#define ACLSIM_TEST_TRACE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Parses the file (asserting it is one JSON object with "traceEvents"). */
cJSON *trace_load(const char *path);
const cJSON *trace_events(const cJSON *root);
/* The event's string member key ("" if none) and number member key (-1). */
const char *ev_str(const cJSON *e, const char *key);
double ev_num(const cJSON *e, const char *key);
/* Its args.key as a string ("" if none) or a number (-1). */
const char *ev_arg_str(const cJSON *e, const char *key);
double ev_arg_num(const cJSON *e, const char *key);
/* Whether e has phase ph, and category cat and name (either NULL: any). */
bool ev_is(const cJSON *e, const char *ph, const char *cat, const char *name);
/* The number of events that match, and the first (NULL if none). */
int trace_count(const cJSON *root, const char *ph, const char *cat, const char *name);
const cJSON *trace_find(const cJSON *root, const char *ph, const char *cat, const char *name);
/* The name a thread_name/process_name record gives (pid, tid); NULL if none. */
const char *trace_thread_name(const cJSON *root, int pid, int tid);
const char *trace_process_name(const cJSON *root, int pid);
/* otherData.key. */
double trace_other(const cJSON *root, const char *key);
/* A fresh temporary directory (mkdtemp) and a path in it. */
void temp_dir(char *dir, size_t len);

#endif
