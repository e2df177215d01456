/* Error messages (aclGetRecentErrMsg) and logging. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ACLSIM_MSG_MAX 1024

/* err_msg_mode "0": each thread sees its own most recent error. */
static _Thread_local char tls_message[ACLSIM_MSG_MAX];
static _Thread_local bool tls_has_message;
/* What aclGetRecentErrMsg last returned to this thread (valid until its next call). */
static _Thread_local char tls_returned[ACLSIM_MSG_MAX];

/* err_msg_mode "1": one most recent error for the whole process. */
static pthread_mutex_t process_lock = PTHREAD_MUTEX_INITIALIZER;
static char process_message[ACLSIM_MSG_MAX];
static bool process_has_message;

static atomic_int log_level = ACLSIM_LOG_ERROR;
static atomic_bool log_print = false;

static const char *level_name(int level)
{
    static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    return level >= 0 && level < 4 ? names[level] : "?";
}

static void log_v(int level, const char *fmt, va_list ap)
{
    if (!atomic_load_explicit(&log_print, memory_order_relaxed) ||
        level < atomic_load_explicit(&log_level, memory_order_relaxed))
        return;
    char line[ACLSIM_MSG_MAX + 64];
    int n = snprintf(line, sizeof line, "[%s] ACLSIM(%d): ", level_name(level), (int)getpid());
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    fprintf(stderr, "%s\n", line);
}

void aclsim__log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_v(level, fmt, ap);
    va_end(ap);
}

/* Application logs go through the same filter and sink as the runtime's
 * (ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT), tagged APP with
 * the caller's function, file and line. */
void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line,
               const char *fmt, ...)
{
    if (!fmt || (int)logLevel < ACLSIM_LOG_DEBUG || (int)logLevel > ACLSIM_LOG_ERROR)
        return;
    char text[ACLSIM_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    const char *base = file ? strrchr(file, '/') : NULL;
    aclsim__log((int)logLevel, "APP %s:%u %s: %s", base ? base + 1 : file ? file : "?", line,
                func ? func : "?", text);
}

/* Logging as configured by aclInit (config.c checks the ASCEND_* variables). */
void aclsim__log_set(int level, bool print)
{
    atomic_store(&log_level, level);
    atomic_store(&log_print, print);
}

aclError aclsim__fail(aclError code, const char *api, const char *fmt, ...)
{
    char text[ACLSIM_MSG_MAX];
    int n = snprintf(text, sizeof text, "%s: ", api);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    va_end(ap);
    size_t len = strlen(text);
    snprintf(text + len, sizeof text - len, " (error %d)", code);

    if (atomic_load_explicit(&aclsim__rt.err_msg_per_process, memory_order_relaxed)) {
        pthread_mutex_lock(&process_lock);
        memcpy(process_message, text, sizeof text);
        process_has_message = true;
        pthread_mutex_unlock(&process_lock);
    } else {
        memcpy(tls_message, text, sizeof text);
        tls_has_message = true;
    }
    aclsim__log(ACLSIM_LOG_ERROR, "%s", text);
    return code;
}

const char *aclGetRecentErrMsg(void)
{
    if (atomic_load_explicit(&aclsim__rt.err_msg_per_process, memory_order_relaxed)) {
        bool has;
        pthread_mutex_lock(&process_lock);
        has = process_has_message;
        if (has)
            memcpy(tls_returned, process_message, sizeof tls_returned);
        process_has_message = false;
        pthread_mutex_unlock(&process_lock);
        return has ? tls_returned : NULL;
    }
    if (!tls_has_message)
        return NULL;
    memcpy(tls_returned, tls_message, sizeof tls_returned);
    tls_has_message = false;
    return tls_returned;
}

/* After fork(), in the child (internal.h, THE FORK RULE). */
void aclsim__errors_forget_after_fork(void)
{
    pthread_mutex_init(&process_lock, NULL);
}
