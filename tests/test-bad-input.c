/*
 * Bad-input matrix (issue 5, part 5).
 *
 * A table-driven test: every public function of acl/acl_base.h and
 * acl/acl_rt.h (52 functions) x every invalid-argument class that applies to
 * it: NULL pointers, zero where zero is invalid, too large (count > destMax,
 * offset + count > size, numBlocks 65536, sizes beyond the device capacity,
 * timeout -2, out-of-range enum values), wrong copy kind, destroyed / garbage /
 * forged / wrong-kind handles, handles of another device or context, before
 * aclInit and after aclFinalize, and handles from a finalized session.
 *
 * Each row is one call with the exact CANN code it must return
 * (/work/shared/reference/cann-runtime-facts.md, docs/runtime.md,
 * docs/device-variables.md). For every row the runner checks:
 *   - the return code;
 *   - for a failure: aclGetRecentErrMsg() is non-NULL, non-empty, names the
 *     function ("<function>: ...", docs/runtime.md) and mentions the row's
 *     needle (the argument or the reason);
 *   - for a failure: the out-parameters the call was given are not written;
 *   - NO STATE CHANGE: a snapshot of observable state taken before and after
 *     the row is equal: free/total memory of devices 0 and 1, the current
 *     context and device, two device variables on devices 0 and 1, a device
 *     buffer on each device, a page-locked buffer, an ordinary host buffer,
 *     and that the streams and the event used by the rows still work.
 * Copies and memsets of count 0 succeed before any check (CANN): they are rows
 * expecting 0, with no state change, and no message check.
 *
 * Rows of class "no current context" run on a fresh thread that never set a
 * device; rows of class "destroyed current context" run on a thread whose
 * current context was created and destroyed just before the call.
 *
 * Rows that fail are all reported (one line each) before the test fails, so
 * one run lists every deviation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclsim/aclsim.h"
#include "common.h"

#ifndef ACLSIM_TEST_KERNELS_PATH
#error "ACLSIM_TEST_KERNELS_PATH is not defined (no tests/kernels/*.c?)"
#endif
static const char kPath[] = ACLSIM_TEST_KERNELS_PATH;
static const char kNotAnObject[] = ACLSIM_TEST_SOURCE_DIR "/test-bad-input.c";

#define DEVICE_MEMORY ((size_t)64 << 20)   /* ACLSIM_DEVICE_MEMORY=64M */
#define BUF 256                             /* device and page-locked buffers */
#define HBUF 1024                           /* ordinary host buffer */

/* The codes as integer constant expressions (ACL_ERROR_* are static const
 * int, not usable in static initializers); test_codes checks them. */
enum {
    E_OK = 0,
    E_PARAM = 100000,     /* ACL_ERROR_INVALID_PARAM */
    E_UNINIT = 100001,    /* ACL_ERROR_UNINITIALIZE */
    E_REINIT = 100002,    /* ACL_ERROR_REPEAT_INITIALIZE */
    E_FILE = 100003,      /* ACL_ERROR_INVALID_FILE */
    E_PARSE = 100006,     /* ACL_ERROR_PARSE_FILE */
    E_REFINAL = 100037,   /* ACL_ERROR_REPEAT_FINALIZE */
    E_FAILURE = 500001,   /* ACL_ERROR_FAILURE */
    E_RTPARAM = 107000,   /* ACL_ERROR_RT_PARAM_INVALID */
    E_DEVID = 107001,     /* ACL_ERROR_RT_INVALID_DEVICEID */
    E_CTXNULL = 107002,   /* ACL_ERROR_RT_CONTEXT_NULL */
    E_STREAMCTX = 107003, /* ACL_ERROR_RT_STREAM_CONTEXT */
    E_HANDLE = 107017,    /* ACL_ERROR_RT_INVALID_HANDLE */
    E_SYMNF = 107042,     /* ACL_ERROR_RT_SYMBOL_NOT_FOUND */
    E_SYMBOL = 107043,    /* ACL_ERROR_RT_INVALID_SYMBOL */
    E_FUNC = 107044,      /* ACL_ERROR_RT_INVALID_DEVICE_FUNCTION */
    E_MEMALLOC = 207001,  /* ACL_ERROR_RT_MEMORY_ALLOCATION */
};

/* Where a row runs. */
enum where {
    W_DEV0,     /* main thread, current context = device 0's default context */
    W_DEV1,     /* main thread, current context = device 1's default context */
    W_USER,     /* main thread, current context = a user context on device 0 */
    W_NOCTX,    /* a fresh thread without a current context */
    W_DEADCTX,  /* a fresh thread whose current context was destroyed */
    W_UNINIT,   /* runtime not initialized (before aclInit / after aclFinalize) */
};

/* ---- device variables and kernels of this program -------------------------- */

ACLSIM_DEVICE_VAR(int32_t, hbad_var0, [16]) = {1, 2, 3, 4};
ACLSIM_DEVICE_VAR(double, hbad_var1, [4]) = {0.5, -1.5};

/* A kernel that changes state: a launch that should have failed is caught. */
void hbad_poke(int32_t v)
{
    if (aclsimGetBlockIdx() == 0)
        ACLSIM_DEV(hbad_var0)[0] = v;
}
ACLSIM_KERNEL_REGISTER(hbad_poke, int32_t);

/* A function that is not registered as a kernel. */
static void hbad_not_a_kernel(void)
{
}

/* A host function that changes state (the host buffer). */
static void host_poke(void *arg)
{
    ((unsigned char *)arg)[0] ^= 0xFF;
}

/* ---- the fixture ------------------------------------------------------------ */

static struct fixture {
    aclrtContext ctx[2];        /* default contexts of devices 0 and 1 */
    aclrtContext user;          /* a user context on device 0 */
    aclrtStream s0, s1, s_user; /* on ctx[0], ctx[1], user */
    aclrtStream s_dead;         /* destroyed */
    aclrtEvent e0;              /* recorded and completed */
    aclrtEvent e_unrec;         /* never recorded */
    aclrtEvent e_dead;          /* destroyed */
    aclrtContext ctx_dead;      /* destroyed user context */
    aclrtFuncHandle fh;         /* hbad_poke */
    aclrtFuncHandle fh_stale;   /* hbin_nop of an unloaded binary */
    aclrtBinHandle bh;          /* the test kernels binary, loaded */
    aclrtBinHandle bh_stale;    /* unloaded */
    void *d0, *d1;              /* BUF bytes on devices 0 and 1 */
    void *d_freed;              /* freed device 0 memory */
    void *pin;                  /* BUF bytes of page-locked memory */
    void *inst0;                /* hbad_var0's instance on device 0 */
} F, OLD;

static unsigned char hbuf[HBUF];    /* ordinary host memory */
static unsigned char dummy[HBUF];   /* stands for buffers before aclInit */

/* Handles that are not handles: low bits name no handle kind; a live handle
 * with another generation. */
#define GARBAGE ((void *)(uintptr_t)0x5eed1234567ull)
#define FORGED(h) ((void *)((uintptr_t)(h) ^ ((uintptr_t)2 << 32)))

/* Outputs given to the calls: a failing call must not write them. */
static struct scratch {
    void *ptr;
    size_t size, free_b, total_b;
    int32_t i32, major, minor, patch;
    uint32_t u32;
    aclrtContext ctx;
    aclrtStream stream;
    aclrtEvent event;
    aclrtFuncHandle func;
    aclrtBinHandle bin;
    float ms;
    aclrtEventRecordedStatus status;
    aclrtRunMode mode;
} S, S_SENTINEL;

/* Arguments for launches and loads. */
static int32_t G_argbuf[4] = {42, 43, 44, 45};
static void *G_args[1] = {&G_argbuf[0]};
static void *G_args_null[1] = {NULL};
static aclrtLaunchKernelCfg G_cfg_bad = {NULL, 1};
static aclrtBinaryLoadOptions G_opts_bad = {NULL, 1};

static char bad_json_path[512], array_json_path[512];

#define H2H ACL_MEMCPY_HOST_TO_HOST
#define H2D ACL_MEMCPY_HOST_TO_DEVICE
#define D2H ACL_MEMCPY_DEVICE_TO_HOST
#define D2D ACL_MEMCPY_DEVICE_TO_DEVICE
#define DEFAULT ACL_MEMCPY_DEFAULT
#define H2BD ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE
#define INNER ACL_MEMCPY_INNER_DEVICE_TO_DEVICE
#define INTER ACL_MEMCPY_INTER_DEVICE_TO_DEVICE
#define KIND(k) ((aclrtMemcpyKind)(k))
#define HUGE_FIRST ACL_MEM_MALLOC_HUGE_FIRST
#define OFF(p, n) ((void *)((char *)(p) + (n)))

/* ---- helpers used by row expressions ----------------------------------------- */

/* aclInit with one environment variable set to a bad value (restored after). */
static aclError init_with_env(const char *var, const char *value)
{
    const char *old = getenv(var);
    char saved[256];
    if (old)
        snprintf(saved, sizeof saved, "%s", old);
    setenv(var, value, 1);
    aclError rc = aclInit(NULL);
    if (old)
        setenv(var, saved, 1);
    else
        unsetenv(var);
    return rc;
}

/* aclGetRecentErrMsg: after one failure it returns the message once, then NULL. */
static aclError errmsg_read_once(void)
{
    (void)aclrtGetRunMode(NULL);
    const char *m = aclGetRecentErrMsg();
    if (!m || !*m || !strstr(m, "aclrtGetRunMode"))
        return -1;
    return aclGetRecentErrMsg() == NULL ? E_OK : -2;
}

/* aclGetRecentErrMsg is NULL when nothing failed since the last read. */
static aclError errmsg_null_after_success(void)
{
    (void)aclGetRecentErrMsg();
    int32_t major, minor, patch;
    if (aclrtGetVersion(&major, &minor, &patch) != ACL_SUCCESS)
        return -1;
    return aclGetRecentErrMsg() == NULL ? E_OK : -2;
}

/* aclrtGetSocName without a runtime: NULL. */
static aclError socname_is_null(void)
{
    return aclrtGetSocName() == NULL ? E_OK : -1;
}

/* ---- the rows ------------------------------------------------------------------ */

/* X(id, function, class, where, expected code, needle, call expression) */

#define ROWS_DEVICE(X) \
    X(errmsg_once, "aclGetRecentErrMsg", "read twice after one failure: message, then NULL", W_DEV0, E_OK, NULL, errmsg_read_once()) \
    X(errmsg_success, "aclGetRecentErrMsg", "after a successful call: NULL", W_DEV0, E_OK, NULL, errmsg_null_after_success()) \
    X(init_again, "aclInit", "already initialized", W_DEV0, E_REINIT, "already initialized", aclInit(NULL)) \
    X(init_again_badpath, "aclInit", "already initialized, unreadable path", W_DEV1, E_REINIT, "already initialized", aclInit("/nonexistent/hbad.json")) \
    X(runmode_null, "aclrtGetRunMode", "NULL runMode", W_DEV0, E_PARAM, "runMode", aclrtGetRunMode(NULL)) \
    X(version_null_major, "aclrtGetVersion", "NULL majorVersion", W_DEV0, E_PARAM, "majorVersion", aclrtGetVersion(NULL, &S.minor, &S.patch)) \
    X(version_null_minor, "aclrtGetVersion", "NULL minorVersion", W_DEV0, E_PARAM, "minorVersion", aclrtGetVersion(&S.major, NULL, &S.patch)) \
    X(version_null_patch, "aclrtGetVersion", "NULL patchVersion", W_DEV0, E_PARAM, "patchVersion", aclrtGetVersion(&S.major, &S.minor, NULL)) \
    X(setdev_neg, "aclrtSetDevice", "deviceId -1", W_DEV1, E_DEVID, "deviceId -1", aclrtSetDevice(-1)) \
    X(setdev_count, "aclrtSetDevice", "deviceId 2 (== device count)", W_DEV0, E_DEVID, "deviceId 2", aclrtSetDevice(2)) \
    X(setdev_max, "aclrtSetDevice", "deviceId INT32_MAX", W_USER, E_DEVID, "deviceId 2147483647", aclrtSetDevice(INT32_MAX)) \
    X(setdev_min_noctx, "aclrtSetDevice", "deviceId INT32_MIN, no current context", W_NOCTX, E_DEVID, "deviceId -2147483648", aclrtSetDevice(INT32_MIN)) \
    X(reset_neg, "aclrtResetDevice", "deviceId -1", W_DEV0, E_DEVID, "deviceId -1", aclrtResetDevice(-1)) \
    X(reset_count, "aclrtResetDevice", "deviceId 2 (== device count)", W_DEV1, E_DEVID, "deviceId 2", aclrtResetDevice(2)) \
    X(resetf_neg, "aclrtResetDeviceForce", "deviceId -1", W_DEV0, E_DEVID, "deviceId -1", aclrtResetDeviceForce(-1)) \
    X(resetf_max, "aclrtResetDeviceForce", "deviceId 32 (ACLSIM_MAX_DEVICES)", W_DEV0, E_DEVID, "deviceId 32", aclrtResetDeviceForce(32)) \
    X(getdev_null, "aclrtGetDevice", "NULL deviceId", W_DEV0, E_PARAM, "deviceId is NULL", aclrtGetDevice(NULL)) \
    X(getdev_noctx, "aclrtGetDevice", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtGetDevice(&S.i32)) \
    X(getdev_deadctx, "aclrtGetDevice", "destroyed current context", W_DEADCTX, E_CTXNULL, "destroyed", aclrtGetDevice(&S.i32)) \
    X(devcount_null, "aclrtGetDeviceCount", "NULL count", W_DEV0, E_PARAM, "count is NULL", aclrtGetDeviceCount(NULL)) \
    X(syncdev_noctx, "aclrtSynchronizeDevice", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtSynchronizeDevice()) \
    X(syncdev_deadctx, "aclrtSynchronizeDevice", "destroyed current context", W_DEADCTX, E_CTXNULL, "destroyed", aclrtSynchronizeDevice())

#define ROWS_CONTEXT(X) \
    X(ctx_create_null, "aclrtCreateContext", "NULL context", W_DEV0, E_PARAM, "context is NULL", aclrtCreateContext(NULL, 0)) \
    X(ctx_create_neg, "aclrtCreateContext", "deviceId -1", W_DEV0, E_DEVID, "deviceId -1", aclrtCreateContext(&S.ctx, -1)) \
    X(ctx_create_count, "aclrtCreateContext", "deviceId 2 (== device count)", W_DEV1, E_DEVID, "deviceId 2", aclrtCreateContext(&S.ctx, 2)) \
    X(ctx_destroy_null, "aclrtDestroyContext", "NULL context", W_DEV0, E_PARAM, "context is NULL", aclrtDestroyContext(NULL)) \
    X(ctx_destroy_dead, "aclrtDestroyContext", "destroyed context", W_DEV0, E_HANDLE, "not a live context", aclrtDestroyContext(F.ctx_dead)) \
    X(ctx_destroy_garbage, "aclrtDestroyContext", "garbage handle", W_DEV0, E_HANDLE, "not a live context", aclrtDestroyContext(GARBAGE)) \
    X(ctx_destroy_forged, "aclrtDestroyContext", "live context with another generation", W_DEV0, E_HANDLE, "not a live context", aclrtDestroyContext(FORGED(F.user))) \
    X(ctx_destroy_kind, "aclrtDestroyContext", "a stream handle", W_DEV0, E_HANDLE, "not a live context", aclrtDestroyContext(F.s0)) \
    X(ctx_destroy_default, "aclrtDestroyContext", "device 0's default context", W_DEV1, E_PARAM, "default context", aclrtDestroyContext(F.ctx[0])) \
    X(ctx_setcur_null, "aclrtSetCurrentContext", "NULL context", W_DEV1, E_PARAM, "context is NULL", aclrtSetCurrentContext(NULL)) \
    X(ctx_setcur_dead, "aclrtSetCurrentContext", "destroyed context", W_USER, E_HANDLE, "not a live context", aclrtSetCurrentContext(F.ctx_dead)) \
    X(ctx_setcur_garbage, "aclrtSetCurrentContext", "garbage handle", W_DEV0, E_HANDLE, "not a live context", aclrtSetCurrentContext(GARBAGE)) \
    X(ctx_setcur_kind, "aclrtSetCurrentContext", "an event handle", W_DEV1, E_HANDLE, "not a live context", aclrtSetCurrentContext(F.e0)) \
    X(ctx_getcur_null, "aclrtGetCurrentContext", "NULL context", W_DEV0, E_PARAM, "context is NULL", aclrtGetCurrentContext(NULL)) \
    X(ctx_getcur_noctx, "aclrtGetCurrentContext", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtGetCurrentContext(&S.ctx)) \
    X(ctx_getcur_deadctx, "aclrtGetCurrentContext", "destroyed current context", W_DEADCTX, E_CTXNULL, "destroyed", aclrtGetCurrentContext(&S.ctx))

#define ROWS_STREAM(X) \
    X(st_create_null, "aclrtCreateStream", "NULL stream", W_DEV0, E_PARAM, "stream is NULL", aclrtCreateStream(NULL)) \
    X(st_create_noctx, "aclrtCreateStream", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtCreateStream(&S.stream)) \
    X(st_create_deadctx, "aclrtCreateStream", "destroyed current context", W_DEADCTX, E_CTXNULL, "destroyed", aclrtCreateStream(&S.stream)) \
    X(st_createcfg_null, "aclrtCreateStreamWithConfig", "NULL stream", W_DEV1, E_PARAM, "stream is NULL", aclrtCreateStreamWithConfig(NULL, 0, 0)) \
    X(st_createcfg_noctx, "aclrtCreateStreamWithConfig", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtCreateStreamWithConfig(&S.stream, 0, ACL_STREAM_FAST_LAUNCH)) \
    X(st_destroy_null, "aclrtDestroyStream", "NULL (the default stream)", W_DEV0, E_PARAM, "stream is NULL", aclrtDestroyStream(NULL)) \
    X(st_destroy_dead, "aclrtDestroyStream", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtDestroyStream(F.s_dead)) \
    X(st_destroy_garbage, "aclrtDestroyStream", "garbage handle", W_DEV0, E_HANDLE, "not a live stream", aclrtDestroyStream(GARBAGE)) \
    X(st_destroy_forged, "aclrtDestroyStream", "live stream with another generation", W_DEV0, E_HANDLE, "not a live stream", aclrtDestroyStream(FORGED(F.s0))) \
    X(st_destroy_kind, "aclrtDestroyStream", "an event handle", W_DEV0, E_HANDLE, "not a live stream", aclrtDestroyStream(F.e0)) \
    X(st_destroyf_null, "aclrtDestroyStreamForce", "NULL (the default stream)", W_DEV0, E_PARAM, "stream is NULL", aclrtDestroyStreamForce(NULL)) \
    X(st_destroyf_dead, "aclrtDestroyStreamForce", "destroyed stream", W_DEV1, E_HANDLE, "not a live stream", aclrtDestroyStreamForce(F.s_dead)) \
    X(st_destroyf_garbage, "aclrtDestroyStreamForce", "garbage handle", W_DEV0, E_HANDLE, "not a live stream", aclrtDestroyStreamForce(GARBAGE)) \
    X(st_destroyf_kind, "aclrtDestroyStreamForce", "a context handle", W_DEV0, E_HANDLE, "not a live stream", aclrtDestroyStreamForce(F.user)) \
    X(st_sync_dead, "aclrtSynchronizeStream", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtSynchronizeStream(F.s_dead)) \
    X(st_sync_garbage, "aclrtSynchronizeStream", "garbage handle", W_DEV0, E_HANDLE, "not a live stream", aclrtSynchronizeStream(GARBAGE)) \
    X(st_sync_kind, "aclrtSynchronizeStream", "a context handle", W_DEV0, E_HANDLE, "not a live stream", aclrtSynchronizeStream(F.ctx[0])) \
    X(st_sync_otherdev, "aclrtSynchronizeStream", "stream of device 1 while device 0 is current", W_DEV0, E_STREAMCTX, "belongs to", aclrtSynchronizeStream(F.s1)) \
    X(st_sync_otherctx, "aclrtSynchronizeStream", "stream of device 0's default context while a user context is current", W_USER, E_STREAMCTX, "belongs to", aclrtSynchronizeStream(F.s0)) \
    X(st_sync_userctx, "aclrtSynchronizeStream", "stream of the user context while the default context is current", W_DEV0, E_STREAMCTX, "belongs to", aclrtSynchronizeStream(F.s_user)) \
    X(st_sync_noctx, "aclrtSynchronizeStream", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtSynchronizeStream(NULL)) \
    X(st_synct_m2, "aclrtSynchronizeStreamWithTimeout", "timeout -2", W_DEV0, E_PARAM, "timeout -2", aclrtSynchronizeStreamWithTimeout(F.s0, -2)) \
    X(st_synct_min, "aclrtSynchronizeStreamWithTimeout", "timeout INT32_MIN", W_DEV0, E_PARAM, "timeout -2147483648", aclrtSynchronizeStreamWithTimeout(F.s0, INT32_MIN)) \
    X(st_synct_zero, "aclrtSynchronizeStreamWithTimeout", "timeout 0", W_DEV0, E_PARAM, "timeout 0", aclrtSynchronizeStreamWithTimeout(NULL, 0)) \
    X(st_synct_dead, "aclrtSynchronizeStreamWithTimeout", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtSynchronizeStreamWithTimeout(F.s_dead, 1000)) \
    X(st_synct_otherdev, "aclrtSynchronizeStreamWithTimeout", "stream of device 0 while device 1 is current", W_DEV1, E_STREAMCTX, "belongs to", aclrtSynchronizeStreamWithTimeout(F.s0, 1000)) \
    X(st_synct_noctx, "aclrtSynchronizeStreamWithTimeout", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtSynchronizeStreamWithTimeout(NULL, 1000))

#define ROWS_EVENT(X) \
    X(ev_create_null, "aclrtCreateEvent", "NULL event", W_DEV0, E_PARAM, "event is NULL", aclrtCreateEvent(NULL)) \
    X(ev_create_noctx, "aclrtCreateEvent", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtCreateEvent(&S.event)) \
    X(ev_destroy_null, "aclrtDestroyEvent", "NULL event", W_DEV0, E_PARAM, "event is NULL", aclrtDestroyEvent(NULL)) \
    X(ev_destroy_dead, "aclrtDestroyEvent", "destroyed event", W_DEV0, E_HANDLE, "not a live event", aclrtDestroyEvent(F.e_dead)) \
    X(ev_destroy_garbage, "aclrtDestroyEvent", "garbage handle", W_DEV1, E_HANDLE, "not a live event", aclrtDestroyEvent(GARBAGE)) \
    X(ev_destroy_forged, "aclrtDestroyEvent", "live event with another generation", W_DEV0, E_HANDLE, "not a live event", aclrtDestroyEvent(FORGED(F.e0))) \
    X(ev_destroy_kind, "aclrtDestroyEvent", "a stream handle", W_DEV0, E_HANDLE, "not a live event", aclrtDestroyEvent(F.s0)) \
    X(ev_record_null, "aclrtRecordEvent", "NULL event", W_DEV0, E_PARAM, "event is NULL", aclrtRecordEvent(NULL, F.s0)) \
    X(ev_record_dead, "aclrtRecordEvent", "destroyed event", W_DEV0, E_HANDLE, "not a live event", aclrtRecordEvent(F.e_dead, F.s0)) \
    X(ev_record_dead_stream, "aclrtRecordEvent", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtRecordEvent(F.e0, F.s_dead)) \
    X(ev_record_garbage_stream, "aclrtRecordEvent", "garbage stream", W_DEV0, E_HANDLE, "not a live stream", aclrtRecordEvent(F.e0, GARBAGE)) \
    X(ev_record_otherdev, "aclrtRecordEvent", "stream of device 1 while device 0 is current", W_DEV0, E_STREAMCTX, "belongs to", aclrtRecordEvent(F.e0, F.s1)) \
    X(ev_record_noctx, "aclrtRecordEvent", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtRecordEvent(F.e0, NULL)) \
    X(ev_wait_null, "aclrtStreamWaitEvent", "NULL event", W_DEV0, E_PARAM, "event is NULL", aclrtStreamWaitEvent(F.s0, NULL)) \
    X(ev_wait_dead, "aclrtStreamWaitEvent", "destroyed event", W_DEV0, E_HANDLE, "not a live event", aclrtStreamWaitEvent(F.s0, F.e_dead)) \
    X(ev_wait_dead_stream, "aclrtStreamWaitEvent", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtStreamWaitEvent(F.s_dead, F.e0)) \
    X(ev_wait_otherctx, "aclrtStreamWaitEvent", "stream of another context of device 0", W_USER, E_STREAMCTX, "belongs to", aclrtStreamWaitEvent(F.s0, F.e0)) \
    X(ev_wait_otherdev, "aclrtStreamWaitEvent", "stream of device 0 while device 1 is current", W_DEV1, E_STREAMCTX, "belongs to", aclrtStreamWaitEvent(F.s0, F.e0)) \
    X(ev_wait_noctx, "aclrtStreamWaitEvent", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtStreamWaitEvent(NULL, F.e0)) \
    X(ev_sync_null, "aclrtSynchronizeEvent", "NULL event", W_DEV0, E_PARAM, "event is NULL", aclrtSynchronizeEvent(NULL)) \
    X(ev_sync_dead, "aclrtSynchronizeEvent", "destroyed event", W_DEV0, E_HANDLE, "not a live event", aclrtSynchronizeEvent(F.e_dead)) \
    X(ev_sync_garbage, "aclrtSynchronizeEvent", "garbage handle", W_DEV0, E_HANDLE, "not a live event", aclrtSynchronizeEvent(GARBAGE)) \
    X(ev_sync_kind, "aclrtSynchronizeEvent", "a stream handle", W_DEV0, E_HANDLE, "not a live event", aclrtSynchronizeEvent(F.s1)) \
    X(ev_query_null_status, "aclrtQueryEventStatus", "NULL status", W_DEV0, E_PARAM, "status is NULL", aclrtQueryEventStatus(F.e0, NULL)) \
    X(ev_query_null, "aclrtQueryEventStatus", "NULL event", W_DEV0, E_PARAM, "event is NULL", aclrtQueryEventStatus(NULL, &S.status)) \
    X(ev_query_dead, "aclrtQueryEventStatus", "destroyed event", W_DEV0, E_HANDLE, "not a live event", aclrtQueryEventStatus(F.e_dead, &S.status)) \
    X(ev_query_kind, "aclrtQueryEventStatus", "a context handle", W_DEV0, E_HANDLE, "not a live event", aclrtQueryEventStatus(F.ctx[0], &S.status)) \
    X(ev_elapsed_null_ms, "aclrtEventElapsedTime", "NULL ms", W_DEV0, E_PARAM, "ms is NULL", aclrtEventElapsedTime(NULL, F.e0, F.e0)) \
    X(ev_elapsed_null_start, "aclrtEventElapsedTime", "NULL startEvent", W_DEV0, E_PARAM, "startEvent is NULL", aclrtEventElapsedTime(&S.ms, NULL, F.e0)) \
    X(ev_elapsed_null_end, "aclrtEventElapsedTime", "NULL endEvent", W_DEV0, E_PARAM, "endEvent is NULL", aclrtEventElapsedTime(&S.ms, F.e0, NULL)) \
    X(ev_elapsed_dead_start, "aclrtEventElapsedTime", "destroyed startEvent", W_DEV0, E_HANDLE, "startEvent", aclrtEventElapsedTime(&S.ms, F.e_dead, F.e0)) \
    X(ev_elapsed_dead_end, "aclrtEventElapsedTime", "destroyed endEvent", W_DEV0, E_HANDLE, "endEvent", aclrtEventElapsedTime(&S.ms, F.e0, F.e_dead)) \
    X(ev_elapsed_unrec_end, "aclrtEventElapsedTime", "endEvent never recorded", W_DEV0, E_PARAM, "has not completed a record", aclrtEventElapsedTime(&S.ms, F.e0, F.e_unrec)) \
    X(ev_elapsed_unrec_start, "aclrtEventElapsedTime", "startEvent never recorded", W_DEV1, E_PARAM, "has not completed a record", aclrtEventElapsedTime(&S.ms, F.e_unrec, F.e0)) \
    X(hostfn_null, "aclrtLaunchHostFunc", "NULL fn", W_DEV0, E_PARAM, "fn is NULL", aclrtLaunchHostFunc(F.s0, NULL, hbuf)) \
    X(hostfn_dead_stream, "aclrtLaunchHostFunc", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtLaunchHostFunc(F.s_dead, host_poke, hbuf)) \
    X(hostfn_otherdev, "aclrtLaunchHostFunc", "stream of device 0 while device 1 is current", W_DEV1, E_STREAMCTX, "belongs to", aclrtLaunchHostFunc(F.s0, host_poke, hbuf)) \
    X(hostfn_noctx, "aclrtLaunchHostFunc", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtLaunchHostFunc(NULL, host_poke, hbuf))

#define ROWS_MEMORY(X) \
    X(malloc_null, "aclrtMalloc", "NULL devPtr", W_DEV0, E_PARAM, "devPtr is NULL", aclrtMalloc(NULL, 64, HUGE_FIRST)) \
    X(malloc_zero, "aclrtMalloc", "size 0", W_DEV0, E_PARAM, "size is 0", aclrtMalloc(&S.ptr, 0, HUGE_FIRST)) \
    X(malloc_policy999, "aclrtMalloc", "policy 999", W_DEV0, E_PARAM, "policy", aclrtMalloc(&S.ptr, 64, (aclrtMemMallocPolicy)999)) \
    X(malloc_policy8, "aclrtMalloc", "policy 8 (one past HUGE1G_ONLY_P2P)", W_DEV1, E_PARAM, "policy", aclrtMalloc(&S.ptr, 64, (aclrtMemMallocPolicy)8)) \
    X(malloc_sizemax, "aclrtMalloc", "size SIZE_MAX", W_DEV0, E_MEMALLOC, "cannot allocate", aclrtMalloc(&S.ptr, SIZE_MAX, HUGE_FIRST)) \
    X(malloc_1t, "aclrtMalloc", "size 1T on a 64M device", W_DEV1, E_MEMALLOC, "cannot allocate", aclrtMalloc(&S.ptr, (size_t)1 << 40, HUGE_FIRST)) \
    X(malloc_cap_plus1, "aclrtMalloc", "size capacity + 1", W_DEV0, E_MEMALLOC, "cannot allocate", aclrtMalloc(&S.ptr, DEVICE_MEMORY + 1, HUGE_FIRST)) \
    X(malloc_cap, "aclrtMalloc", "size == capacity while some memory is in use", W_DEV1, E_MEMALLOC, "cannot allocate", aclrtMalloc(&S.ptr, DEVICE_MEMORY, ACL_MEM_MALLOC_NORMAL_ONLY)) \
    X(malloc_noctx, "aclrtMalloc", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtMalloc(&S.ptr, 64, HUGE_FIRST)) \
    X(malloc_deadctx, "aclrtMalloc", "destroyed current context", W_DEADCTX, E_CTXNULL, "destroyed", aclrtMalloc(&S.ptr, 64, HUGE_FIRST)) \
    X(free_null, "aclrtFree", "NULL devPtr", W_DEV0, E_PARAM, "devPtr is NULL", aclrtFree(NULL)) \
    X(free_host, "aclrtFree", "ordinary host memory", W_DEV0, E_PARAM, "ordinary host memory", aclrtFree(hbuf)) \
    X(free_garbage, "aclrtFree", "garbage address 0x10", W_DEV0, E_PARAM, "not the start of a live aclrtMalloc allocation", aclrtFree((void *)(uintptr_t)0x10)) \
    X(free_interior, "aclrtFree", "interior pointer of an allocation", W_DEV0, E_PARAM, "offset 64", aclrtFree(OFF(F.d0, 64))) \
    X(free_freed, "aclrtFree", "already freed", W_DEV1, E_PARAM, "outside any live allocation", aclrtFree(F.d_freed)) \
    X(free_pinned, "aclrtFree", "page-locked memory", W_DEV0, E_PARAM, "page-locked", aclrtFree(F.pin)) \
    X(free_symbol, "aclrtFree", "a device-variable instance", W_DEV0, E_PARAM, "hbad_var0", aclrtFree(F.inst0)) \
    X(mallochost_null, "aclrtMallocHost", "NULL hostPtr", W_DEV0, E_PARAM, "hostPtr is NULL", aclrtMallocHost(NULL, 64)) \
    X(mallochost_zero, "aclrtMallocHost", "size 0", W_DEV0, E_PARAM, "size is 0", aclrtMallocHost(&S.ptr, 0)) \
    X(mallochost_sizemax, "aclrtMallocHost", "size SIZE_MAX", W_DEV0, E_MEMALLOC, "cannot allocate", aclrtMallocHost(&S.ptr, SIZE_MAX)) \
    X(freehost_null, "aclrtFreeHost", "NULL hostPtr", W_DEV0, E_PARAM, "hostPtr is NULL", aclrtFreeHost(NULL)) \
    X(freehost_host, "aclrtFreeHost", "ordinary host memory", W_DEV0, E_PARAM, "ordinary host memory", aclrtFreeHost(hbuf)) \
    X(freehost_device, "aclrtFreeHost", "device memory", W_DEV0, E_PARAM, "device 0 memory", aclrtFreeHost(F.d0)) \
    X(freehost_interior, "aclrtFreeHost", "interior pointer of a page-locked allocation", W_DEV0, E_PARAM, "offset 64", aclrtFreeHost(OFF(F.pin, 64))) \
    X(meminfo_null_free, "aclrtGetMemInfo", "NULL free", W_DEV0, E_PARAM, "free is NULL", aclrtGetMemInfo(ACL_HBM_MEM, NULL, &S.total_b)) \
    X(meminfo_null_total, "aclrtGetMemInfo", "NULL total", W_DEV0, E_PARAM, "total is NULL", aclrtGetMemInfo(ACL_HBM_MEM, &S.free_b, NULL)) \
    X(meminfo_attr999, "aclrtGetMemInfo", "attr 999", W_DEV0, E_PARAM, "attr 999", aclrtGetMemInfo((aclrtMemAttr)999, &S.free_b, &S.total_b)) \
    X(meminfo_attrneg, "aclrtGetMemInfo", "attr -1", W_DEV1, E_PARAM, "attr -1", aclrtGetMemInfo((aclrtMemAttr)-1, &S.free_b, &S.total_b)) \
    X(meminfo_noctx, "aclrtGetMemInfo", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtGetMemInfo(ACL_HBM_MEM, &S.free_b, &S.total_b))

#define ROWS_COPY(X) \
    X(cpy_c0_null, "aclrtMemcpy", "count 0 with NULL dst and src", W_DEV0, E_OK, NULL, aclrtMemcpy(NULL, 0, NULL, 0, H2D)) \
    X(cpy_c0_kind, "aclrtMemcpy", "count 0 with kind 999", W_DEV0, E_OK, NULL, aclrtMemcpy(F.d0, BUF, hbuf, 0, KIND(999))) \
    X(cpy_c0_noctx, "aclrtMemcpy", "count 0 without a current context", W_NOCTX, E_OK, NULL, aclrtMemcpy(F.d0, BUF, hbuf, 0, H2D)) \
    X(cpy_null_dst, "aclrtMemcpy", "NULL dst", W_DEV0, E_PARAM, "dst is NULL", aclrtMemcpy(NULL, BUF, hbuf, 16, H2D)) \
    X(cpy_null_src, "aclrtMemcpy", "NULL src", W_DEV0, E_PARAM, "src is NULL", aclrtMemcpy(F.d0, BUF, NULL, 16, H2D)) \
    X(cpy_count_gt_max, "aclrtMemcpy", "count 32 > destMax 16", W_DEV0, E_PARAM, "larger than destMax", aclrtMemcpy(F.d0, 16, hbuf, 32, H2D)) \
    X(cpy_kind999, "aclrtMemcpy", "kind 999", W_DEV0, E_PARAM, "kind 999", aclrtMemcpy(F.d0, BUF, hbuf, 16, KIND(999))) \
    X(cpy_kindneg, "aclrtMemcpy", "kind -1", W_DEV0, E_PARAM, "kind -1", aclrtMemcpy(F.d0, BUF, hbuf, 16, KIND(-1))) \
    X(cpy_h2d_pinned_dst, "aclrtMemcpy", "HOST_TO_DEVICE into page-locked (host) memory", W_DEV0, E_PARAM, "HOST_TO_DEVICE but dst", aclrtMemcpy(F.pin, BUF, hbuf, 16, H2D)) \
    X(cpy_h2d_dev_src, "aclrtMemcpy", "HOST_TO_DEVICE from device memory", W_DEV0, E_PARAM, "HOST_TO_DEVICE but src", aclrtMemcpy(F.d0, BUF, F.d1, 16, H2D)) \
    X(cpy_d2h_host_src, "aclrtMemcpy", "DEVICE_TO_HOST from page-locked memory", W_DEV0, E_PARAM, "DEVICE_TO_HOST but src", aclrtMemcpy(hbuf, HBUF, F.pin, 16, D2H)) \
    X(cpy_d2h_dev_dst, "aclrtMemcpy", "DEVICE_TO_HOST into device memory", W_DEV1, E_PARAM, "DEVICE_TO_HOST but dst", aclrtMemcpy(F.d1, BUF, F.d0, 16, D2H)) \
    X(cpy_d2d_host_src, "aclrtMemcpy", "DEVICE_TO_DEVICE from host memory", W_DEV0, E_PARAM, "DEVICE_TO_DEVICE but src", aclrtMemcpy(F.d0, BUF, hbuf, 16, D2D)) \
    X(cpy_h2h_dev_dst, "aclrtMemcpy", "HOST_TO_HOST into device memory", W_DEV0, E_PARAM, "HOST_TO_HOST but dst", aclrtMemcpy(F.d0, BUF, hbuf, 16, H2H)) \
    X(cpy_h2bd_host_dst, "aclrtMemcpy", "HOST_TO_BUF_TO_DEVICE into host memory", W_DEV0, E_PARAM, "HOST_TO_BUF_TO_DEVICE but dst", aclrtMemcpy(hbuf, HBUF, F.pin, 16, H2BD)) \
    X(cpy_inner_cross, "aclrtMemcpy", "INNER_DEVICE_TO_DEVICE across devices", W_DEV0, E_PARAM, "INNER_DEVICE_TO_DEVICE", aclrtMemcpy(F.d0, BUF, F.d1, 16, INNER)) \
    X(cpy_no_peer, "aclrtMemcpy", "DEVICE_TO_DEVICE across devices without peer access", W_DEV0, E_RTPARAM, "peer access", aclrtMemcpy(F.d0, BUF, F.d1, 16, D2D)) \
    X(cpy_inter_same, "aclrtMemcpy", "INTER_DEVICE_TO_DEVICE within device 0", W_DEV0, E_PARAM, "both on device 0", aclrtMemcpy(F.d0, BUF, OFF(F.d0, 128), 16, INTER)) \
    X(cpy_dst_overrun, "aclrtMemcpy", "dst range past its allocation", W_DEV0, E_PARAM, "dst range", aclrtMemcpy(F.d0, 2 * BUF, hbuf, 2 * BUF, H2D)) \
    X(cpy_interior_overrun, "aclrtMemcpy", "dst at offset 200, count 100, of a 256-byte allocation", W_DEV1, E_PARAM, "overruns", aclrtMemcpy(OFF(F.d0, 200), 100, hbuf, 100, H2D)) \
    X(cpy_src_overrun_pinned, "aclrtMemcpy", "page-locked src range past its allocation", W_DEV0, E_PARAM, "src range", aclrtMemcpy(F.d0, BUF, OFF(F.pin, 200), 100, H2D)) \
    X(cpy_freed_dst, "aclrtMemcpy", "freed device dst", W_DEV0, E_PARAM, "freed", aclrtMemcpy(F.d_freed, BUF, hbuf, 16, H2D)) \
    X(cpy_freed_src_default, "aclrtMemcpy", "freed device src, kind DEFAULT", W_DEV0, E_PARAM, "freed", aclrtMemcpy(hbuf, HBUF, F.d_freed, 16, DEFAULT)) \
    X(cpy_noctx, "aclrtMemcpy", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtMemcpy(F.d0, BUF, hbuf, 16, H2D)) \
    X(cpya_c0_dead, "aclrtMemcpyAsync", "count 0 with a destroyed stream", W_DEV0, E_OK, NULL, aclrtMemcpyAsync(F.d0, BUF, F.pin, 0, H2D, F.s_dead)) \
    X(cpya_c0_null, "aclrtMemcpyAsync", "count 0 with NULLs, kind 999, garbage stream", W_DEV0, E_OK, NULL, aclrtMemcpyAsync(NULL, 0, NULL, 0, KIND(999), GARBAGE)) \
    X(cpya_c0_noctx, "aclrtMemcpyAsync", "count 0 without a current context", W_NOCTX, E_OK, NULL, aclrtMemcpyAsync(F.d0, BUF, F.pin, 0, H2D, NULL)) \
    X(cpya_null_dst, "aclrtMemcpyAsync", "NULL dst", W_DEV0, E_PARAM, "dst is NULL", aclrtMemcpyAsync(NULL, BUF, F.pin, 16, H2D, F.s0)) \
    X(cpya_null_src, "aclrtMemcpyAsync", "NULL src", W_DEV0, E_PARAM, "src is NULL", aclrtMemcpyAsync(F.d0, BUF, NULL, 16, H2D, F.s0)) \
    X(cpya_count_gt_max, "aclrtMemcpyAsync", "count 32 > destMax 16", W_DEV0, E_PARAM, "larger than destMax", aclrtMemcpyAsync(F.d0, 16, F.pin, 32, H2D, F.s0)) \
    X(cpya_kind999, "aclrtMemcpyAsync", "kind 999", W_DEV0, E_PARAM, "kind 999", aclrtMemcpyAsync(F.d0, BUF, F.pin, 16, KIND(999), F.s0)) \
    X(cpya_d2h_pinned_src, "aclrtMemcpyAsync", "DEVICE_TO_HOST from page-locked memory", W_DEV0, E_PARAM, "DEVICE_TO_HOST but src", aclrtMemcpyAsync(F.d0, BUF, F.pin, 16, D2H, F.s0)) \
    X(cpya_inner_cross, "aclrtMemcpyAsync", "INNER_DEVICE_TO_DEVICE across devices", W_DEV0, E_PARAM, "INNER_DEVICE_TO_DEVICE", aclrtMemcpyAsync(F.d1, BUF, F.d0, 16, INNER, F.s0)) \
    X(cpya_overrun, "aclrtMemcpyAsync", "dst range past its allocation", W_DEV0, E_PARAM, "dst range", aclrtMemcpyAsync(F.d0, 2 * BUF, hbuf, 2 * BUF, H2D, F.s0)) \
    X(cpya_dead_stream, "aclrtMemcpyAsync", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtMemcpyAsync(F.d0, BUF, F.pin, 16, H2D, F.s_dead)) \
    X(cpya_forged_stream, "aclrtMemcpyAsync", "live stream with another generation", W_DEV0, E_HANDLE, "not a live stream", aclrtMemcpyAsync(F.d0, BUF, F.pin, 16, H2D, FORGED(F.s0))) \
    X(cpya_otherdev, "aclrtMemcpyAsync", "stream of device 1 while device 0 is current", W_DEV0, E_STREAMCTX, "belongs to", aclrtMemcpyAsync(F.d0, BUF, F.pin, 16, H2D, F.s1)) \
    X(cpya_otherctx, "aclrtMemcpyAsync", "stream of another context of device 0", W_USER, E_STREAMCTX, "belongs to", aclrtMemcpyAsync(F.d0, BUF, F.pin, 16, H2D, F.s0)) \
    X(cpya_noctx, "aclrtMemcpyAsync", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtMemcpyAsync(F.d0, BUF, F.pin, 16, H2D, NULL)) \
    X(set_c0_null, "aclrtMemset", "count 0 with NULL devPtr", W_DEV0, E_OK, NULL, aclrtMemset(NULL, 0, 0x77, 0)) \
    X(set_c0_host, "aclrtMemset", "count 0 on ordinary host memory", W_DEV0, E_OK, NULL, aclrtMemset(hbuf, 0, 0x77, 0)) \
    X(set_null, "aclrtMemset", "NULL devPtr", W_DEV0, E_PARAM, "devPtr is NULL", aclrtMemset(NULL, BUF, 0x77, 16)) \
    X(set_count_gt_max, "aclrtMemset", "count 32 > maxCount 16", W_DEV0, E_PARAM, "larger than maxCount", aclrtMemset(F.d0, 16, 0x77, 32)) \
    X(set_host, "aclrtMemset", "ordinary host memory", W_DEV0, E_PARAM, "ordinary host memory", aclrtMemset(hbuf, HBUF, 0x77, 16)) \
    X(set_overrun, "aclrtMemset", "range past its allocation", W_DEV0, E_PARAM, "overruns", aclrtMemset(F.d0, 2 * BUF, 0x77, 2 * BUF)) \
    X(set_interior_overrun, "aclrtMemset", "offset 250, count 16, of a 256-byte allocation", W_DEV1, E_PARAM, "overruns", aclrtMemset(OFF(F.d1, 250), 16, 0x77, 16)) \
    X(set_pinned_overrun, "aclrtMemset", "page-locked range past its allocation", W_DEV0, E_PARAM, "overruns", aclrtMemset(F.pin, 2 * BUF, 0x77, 2 * BUF)) \
    X(set_freed, "aclrtMemset", "freed device memory", W_DEV0, E_PARAM, "freed", aclrtMemset(F.d_freed, BUF, 0x77, 16)) \
    X(seta_c0_dead, "aclrtMemsetAsync", "count 0 with NULL devPtr and a destroyed stream", W_DEV0, E_OK, NULL, aclrtMemsetAsync(NULL, 0, 0x77, 0, F.s_dead)) \
    X(seta_null, "aclrtMemsetAsync", "NULL devPtr", W_DEV0, E_PARAM, "devPtr is NULL", aclrtMemsetAsync(NULL, BUF, 0x77, 16, F.s0)) \
    X(seta_count_gt_max, "aclrtMemsetAsync", "count 32 > maxCount 16", W_DEV0, E_PARAM, "larger than maxCount", aclrtMemsetAsync(F.d0, 16, 0x77, 32, F.s0)) \
    X(seta_host, "aclrtMemsetAsync", "ordinary host memory", W_DEV0, E_PARAM, "ordinary host memory", aclrtMemsetAsync(hbuf, HBUF, 0x77, 16, F.s0)) \
    X(seta_overrun, "aclrtMemsetAsync", "range past its allocation", W_DEV0, E_PARAM, "overruns", aclrtMemsetAsync(F.d0, 2 * BUF, 0x77, 2 * BUF, F.s0)) \
    X(seta_dead_stream, "aclrtMemsetAsync", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtMemsetAsync(F.d0, BUF, 0x77, 16, F.s_dead)) \
    X(seta_garbage_stream, "aclrtMemsetAsync", "garbage stream", W_DEV0, E_HANDLE, "not a live stream", aclrtMemsetAsync(F.d0, BUF, 0x77, 16, GARBAGE)) \
    X(seta_otherdev, "aclrtMemsetAsync", "stream of device 0 while device 1 is current", W_DEV1, E_STREAMCTX, "belongs to", aclrtMemsetAsync(F.d1, BUF, 0x77, 16, F.s0)) \
    X(seta_noctx, "aclrtMemsetAsync", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtMemsetAsync(F.d0, BUF, 0x77, 16, NULL))

#define ROWS_SYMBOL(X) \
    X(addr_null_sym, "aclrtGetSymbolAddress", "NULL symbol", W_DEV0, E_PARAM, "symbol is NULL", aclrtGetSymbolAddress(NULL, &S.ptr)) \
    X(addr_null_out, "aclrtGetSymbolAddress", "NULL devPtr", W_DEV0, E_PARAM, "devPtr is NULL", aclrtGetSymbolAddress(hbad_var0, NULL)) \
    X(addr_interior, "aclrtGetSymbolAddress", "interior pointer &var[1]", W_DEV0, E_SYMBOL, "not the address of a registered device variable", aclrtGetSymbolAddress(&hbad_var0[1], &S.ptr)) \
    X(addr_plain, "aclrtGetSymbolAddress", "an ordinary global", W_DEV1, E_SYMBOL, "not the address of a registered device variable", aclrtGetSymbolAddress(hbuf, &S.ptr)) \
    X(addr_instance, "aclrtGetSymbolAddress", "a device address (the variable's instance)", W_DEV0, E_SYMBOL, "not the address of a registered device variable", aclrtGetSymbolAddress(F.inst0, &S.ptr)) \
    X(addr_kernel, "aclrtGetSymbolAddress", "a kernel function", W_DEV0, E_SYMBOL, "not the address of a registered device variable", aclrtGetSymbolAddress((const void *)&hbad_poke, &S.ptr)) \
    X(addr_noctx, "aclrtGetSymbolAddress", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtGetSymbolAddress(hbad_var0, &S.ptr)) \
    X(addr_deadctx, "aclrtGetSymbolAddress", "destroyed current context", W_DEADCTX, E_CTXNULL, "destroyed", aclrtGetSymbolAddress(hbad_var0, &S.ptr)) \
    X(size_null_sym, "aclrtGetSymbolSize", "NULL symbol", W_DEV0, E_PARAM, "symbol is NULL", aclrtGetSymbolSize(NULL, &S.size)) \
    X(size_null_out, "aclrtGetSymbolSize", "NULL size", W_DEV0, E_PARAM, "size is NULL", aclrtGetSymbolSize(hbad_var1, NULL)) \
    X(size_interior, "aclrtGetSymbolSize", "interior pointer (var + 1 byte)", W_DEV0, E_SYMBOL, "not the address of a registered device variable", aclrtGetSymbolSize(OFF(hbad_var1, 1), &S.size)) \
    X(size_garbage, "aclrtGetSymbolSize", "garbage address", W_DEV1, E_SYMBOL, "not the address of a registered device variable", aclrtGetSymbolSize(GARBAGE, &S.size)) \
    X(size_noctx, "aclrtGetSymbolSize", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtGetSymbolSize(hbad_var1, &S.size)) \
    X(to_c0_null, "aclrtMemcpyToSymbol", "count 0 with NULL symbol and src", W_DEV0, E_OK, NULL, aclrtMemcpyToSymbol(NULL, NULL, 0, 0, H2D)) \
    X(to_c0_bad, "aclrtMemcpyToSymbol", "count 0 with kind 999 and offset past the end", W_DEV0, E_OK, NULL, aclrtMemcpyToSymbol(hbad_var0, hbuf, 0, 1000, KIND(999))) \
    X(to_c0_noctx, "aclrtMemcpyToSymbol", "count 0 without a current context", W_NOCTX, E_OK, NULL, aclrtMemcpyToSymbol(hbad_var0, hbuf, 0, 0, H2D)) \
    X(to_null_sym, "aclrtMemcpyToSymbol", "NULL symbol", W_DEV0, E_PARAM, "symbol is NULL", aclrtMemcpyToSymbol(NULL, hbuf, 4, 0, H2D)) \
    X(to_null_src, "aclrtMemcpyToSymbol", "NULL src", W_DEV0, E_PARAM, "src is NULL", aclrtMemcpyToSymbol(hbad_var0, NULL, 4, 0, H2D)) \
    X(to_kind_d2h, "aclrtMemcpyToSymbol", "kind DEVICE_TO_HOST", W_DEV0, E_PARAM, "kind 2", aclrtMemcpyToSymbol(hbad_var0, hbuf, 4, 0, D2H)) \
    X(to_kind_h2h, "aclrtMemcpyToSymbol", "kind HOST_TO_HOST", W_DEV0, E_PARAM, "kind 0", aclrtMemcpyToSymbol(hbad_var0, hbuf, 4, 0, H2H)) \
    X(to_kind_d2d, "aclrtMemcpyToSymbol", "kind DEVICE_TO_DEVICE", W_DEV1, E_PARAM, "kind 3", aclrtMemcpyToSymbol(hbad_var0, hbuf, 4, 0, D2D)) \
    X(to_kind999, "aclrtMemcpyToSymbol", "kind 999", W_DEV0, E_PARAM, "kind 999", aclrtMemcpyToSymbol(hbad_var0, hbuf, 4, 0, KIND(999))) \
    X(to_unknown, "aclrtMemcpyToSymbol", "an ordinary global as symbol", W_DEV0, E_SYMBOL, "not the address of a registered device variable", aclrtMemcpyToSymbol(hbuf, hbuf, 4, 0, H2D)) \
    X(to_interior, "aclrtMemcpyToSymbol", "interior pointer &var[2]", W_DEV0, E_SYMBOL, "not the address of a registered device variable", aclrtMemcpyToSymbol(&hbad_var0[2], hbuf, 4, 0, H2D)) \
    X(to_past_end, "aclrtMemcpyToSymbol", "offset 60 + count 8 > 64", W_DEV0, E_PARAM, "exceeds", aclrtMemcpyToSymbol(hbad_var0, hbuf, 8, 60, H2D)) \
    X(to_count_gt_size, "aclrtMemcpyToSymbol", "count 65 > size 64", W_DEV1, E_PARAM, "exceeds", aclrtMemcpyToSymbol(hbad_var0, hbuf, 65, 0, DEFAULT)) \
    X(to_overflow, "aclrtMemcpyToSymbol", "offset SIZE_MAX + count 2 overflows", W_DEV0, E_FAILURE, "overflows", aclrtMemcpyToSymbol(hbad_var0, hbuf, 2, SIZE_MAX, H2D)) \
    X(to_src_device, "aclrtMemcpyToSymbol", "src in device memory", W_DEV0, E_PARAM, "must be host memory", aclrtMemcpyToSymbol(hbad_var0, F.d0, 4, 0, H2D)) \
    X(to_src_device_default, "aclrtMemcpyToSymbol", "src in device memory, kind DEFAULT", W_DEV0, E_PARAM, "must be host memory", aclrtMemcpyToSymbol(hbad_var0, F.d0, 4, 0, DEFAULT)) \
    X(to_noctx, "aclrtMemcpyToSymbol", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtMemcpyToSymbol(hbad_var0, hbuf, 4, 0, H2D)) \
    X(to_deadctx, "aclrtMemcpyToSymbol", "destroyed current context", W_DEADCTX, E_CTXNULL, "destroyed", aclrtMemcpyToSymbol(hbad_var0, hbuf, 4, 0, H2D)) \
    X(from_c0_null, "aclrtMemcpyFromSymbol", "count 0 with NULL dst and symbol", W_DEV0, E_OK, NULL, aclrtMemcpyFromSymbol(NULL, 0, NULL, 0, 0, D2H)) \
    X(from_c0_bad, "aclrtMemcpyFromSymbol", "count 0 with dstMax 0, kind 999, offset past the end", W_DEV0, E_OK, NULL, aclrtMemcpyFromSymbol(hbuf, 0, hbad_var0, 0, 1000, KIND(999))) \
    X(from_null_dst, "aclrtMemcpyFromSymbol", "NULL dst", W_DEV0, E_PARAM, "dst is NULL", aclrtMemcpyFromSymbol(NULL, 64, hbad_var0, 4, 0, D2H)) \
    X(from_null_sym, "aclrtMemcpyFromSymbol", "NULL symbol", W_DEV0, E_PARAM, "symbol is NULL", aclrtMemcpyFromSymbol(hbuf, 64, NULL, 4, 0, D2H)) \
    X(from_count_gt_max, "aclrtMemcpyFromSymbol", "count 8 > dstMax 4", W_DEV0, E_PARAM, "larger than dstMax", aclrtMemcpyFromSymbol(hbuf, 4, hbad_var0, 8, 0, D2H)) \
    X(from_kind_h2d, "aclrtMemcpyFromSymbol", "kind HOST_TO_DEVICE", W_DEV0, E_PARAM, "kind 1", aclrtMemcpyFromSymbol(hbuf, 64, hbad_var0, 4, 0, H2D)) \
    X(from_kind999, "aclrtMemcpyFromSymbol", "kind 999", W_DEV1, E_PARAM, "kind 999", aclrtMemcpyFromSymbol(hbuf, 64, hbad_var0, 4, 0, KIND(999))) \
    X(from_unknown, "aclrtMemcpyFromSymbol", "an ordinary global as symbol", W_DEV0, E_SYMBOL, "not the address of a registered device variable", aclrtMemcpyFromSymbol(hbuf, 64, hbuf + 512, 4, 0, D2H)) \
    X(from_past_end, "aclrtMemcpyFromSymbol", "offset 28 + count 8 > 32", W_DEV0, E_PARAM, "exceeds", aclrtMemcpyFromSymbol(hbuf, 64, hbad_var1, 8, 28, D2H)) \
    X(from_overflow, "aclrtMemcpyFromSymbol", "offset SIZE_MAX-3 + count 8 overflows", W_DEV0, E_FAILURE, "overflows", aclrtMemcpyFromSymbol(hbuf, 64, hbad_var0, 8, SIZE_MAX - 3, D2H)) \
    X(from_dst_device, "aclrtMemcpyFromSymbol", "dst in device memory", W_DEV0, E_PARAM, "must be host memory", aclrtMemcpyFromSymbol(F.d0, BUF, hbad_var0, 4, 0, D2H)) \
    X(from_noctx, "aclrtMemcpyFromSymbol", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtMemcpyFromSymbol(hbuf, 64, hbad_var0, 4, 0, D2H)) \
    X(toa_c0, "aclrtMemcpyToSymbolAsync", "count 0 with NULLs, kind 999, destroyed stream", W_DEV0, E_OK, NULL, aclrtMemcpyToSymbolAsync(NULL, NULL, 0, 0, KIND(999), F.s_dead)) \
    X(toa_null_sym, "aclrtMemcpyToSymbolAsync", "NULL symbol", W_DEV0, E_PARAM, "symbol is NULL", aclrtMemcpyToSymbolAsync(NULL, F.pin, 4, 0, H2D, F.s0)) \
    X(toa_null_src, "aclrtMemcpyToSymbolAsync", "NULL src", W_DEV0, E_PARAM, "src is NULL", aclrtMemcpyToSymbolAsync(hbad_var0, NULL, 4, 0, H2D, F.s0)) \
    X(toa_kind_d2h, "aclrtMemcpyToSymbolAsync", "kind DEVICE_TO_HOST", W_DEV0, E_PARAM, "kind 2", aclrtMemcpyToSymbolAsync(hbad_var0, F.pin, 4, 0, D2H, F.s0)) \
    X(toa_kind999, "aclrtMemcpyToSymbolAsync", "kind 999", W_DEV0, E_PARAM, "kind 999", aclrtMemcpyToSymbolAsync(hbad_var0, F.pin, 4, 0, KIND(999), F.s0)) \
    X(toa_unknown, "aclrtMemcpyToSymbolAsync", "an ordinary global as symbol", W_DEV0, E_SYMBOL, "not the address of a registered device variable", aclrtMemcpyToSymbolAsync(hbuf, F.pin, 4, 0, H2D, F.s0)) \
    X(toa_past_end, "aclrtMemcpyToSymbolAsync", "offset 32 + count 1 > 32", W_DEV0, E_PARAM, "exceeds", aclrtMemcpyToSymbolAsync(hbad_var1, F.pin, 1, 32, H2D, F.s0)) \
    X(toa_overflow, "aclrtMemcpyToSymbolAsync", "offset SIZE_MAX + count 1 overflows", W_DEV0, E_FAILURE, "overflows", aclrtMemcpyToSymbolAsync(hbad_var1, F.pin, 1, SIZE_MAX, H2D, F.s0)) \
    X(toa_src_device, "aclrtMemcpyToSymbolAsync", "src in device memory", W_DEV0, E_PARAM, "must be host memory", aclrtMemcpyToSymbolAsync(hbad_var0, F.d0, 4, 0, H2D, F.s0)) \
    X(toa_dead_stream, "aclrtMemcpyToSymbolAsync", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtMemcpyToSymbolAsync(hbad_var0, F.pin, 4, 0, H2D, F.s_dead)) \
    X(toa_garbage_stream, "aclrtMemcpyToSymbolAsync", "garbage stream", W_DEV0, E_HANDLE, "not a live stream", aclrtMemcpyToSymbolAsync(hbad_var0, F.pin, 4, 0, H2D, GARBAGE)) \
    X(toa_otherdev, "aclrtMemcpyToSymbolAsync", "stream of device 1 while device 0 is current", W_DEV0, E_STREAMCTX, "belongs to", aclrtMemcpyToSymbolAsync(hbad_var0, F.pin, 4, 0, H2D, F.s1)) \
    X(toa_otherctx, "aclrtMemcpyToSymbolAsync", "stream of another context of device 0", W_USER, E_STREAMCTX, "belongs to", aclrtMemcpyToSymbolAsync(hbad_var0, F.pin, 4, 0, H2D, F.s0)) \
    X(toa_noctx, "aclrtMemcpyToSymbolAsync", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtMemcpyToSymbolAsync(hbad_var0, F.pin, 4, 0, H2D, NULL)) \
    X(froma_c0, "aclrtMemcpyFromSymbolAsync", "count 0 with NULLs, kind 999, garbage stream", W_DEV0, E_OK, NULL, aclrtMemcpyFromSymbolAsync(NULL, 0, NULL, 0, 0, KIND(999), GARBAGE)) \
    X(froma_null_dst, "aclrtMemcpyFromSymbolAsync", "NULL dst", W_DEV0, E_PARAM, "dst is NULL", aclrtMemcpyFromSymbolAsync(NULL, 64, hbad_var0, 4, 0, D2H, F.s0)) \
    X(froma_null_sym, "aclrtMemcpyFromSymbolAsync", "NULL symbol", W_DEV0, E_PARAM, "symbol is NULL", aclrtMemcpyFromSymbolAsync(F.pin, 64, NULL, 4, 0, D2H, F.s0)) \
    X(froma_count_gt_max, "aclrtMemcpyFromSymbolAsync", "count 8 > dstMax 4", W_DEV0, E_PARAM, "larger than dstMax", aclrtMemcpyFromSymbolAsync(F.pin, 4, hbad_var0, 8, 0, D2H, F.s0)) \
    X(froma_kind_d2d, "aclrtMemcpyFromSymbolAsync", "kind DEVICE_TO_DEVICE", W_DEV0, E_PARAM, "kind 3", aclrtMemcpyFromSymbolAsync(F.pin, 64, hbad_var0, 4, 0, D2D, F.s0)) \
    X(froma_unknown, "aclrtMemcpyFromSymbolAsync", "interior pointer &var[15]", W_DEV0, E_SYMBOL, "not the address of a registered device variable", aclrtMemcpyFromSymbolAsync(F.pin, 64, &hbad_var0[15], 4, 0, D2H, F.s0)) \
    X(froma_past_end, "aclrtMemcpyFromSymbolAsync", "offset 0 + count 65 > 64", W_DEV0, E_PARAM, "exceeds", aclrtMemcpyFromSymbolAsync(F.pin, BUF, hbad_var0, 65, 0, D2H, F.s0)) \
    X(froma_overflow, "aclrtMemcpyFromSymbolAsync", "offset SIZE_MAX + count 4 overflows", W_DEV0, E_FAILURE, "overflows", aclrtMemcpyFromSymbolAsync(F.pin, 64, hbad_var0, 4, SIZE_MAX, D2H, F.s0)) \
    X(froma_dst_device, "aclrtMemcpyFromSymbolAsync", "dst in device memory", W_DEV0, E_PARAM, "must be host memory", aclrtMemcpyFromSymbolAsync(F.d0, BUF, hbad_var0, 4, 0, D2H, F.s0)) \
    X(froma_dead_stream, "aclrtMemcpyFromSymbolAsync", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtMemcpyFromSymbolAsync(F.pin, 64, hbad_var0, 4, 0, D2H, F.s_dead)) \
    X(froma_otherdev, "aclrtMemcpyFromSymbolAsync", "stream of device 0 while device 1 is current", W_DEV1, E_STREAMCTX, "belongs to", aclrtMemcpyFromSymbolAsync(F.pin, 64, hbad_var0, 4, 0, D2H, F.s0)) \
    X(froma_userctx, "aclrtMemcpyFromSymbolAsync", "stream of the user context while the default context is current", W_DEV0, E_STREAMCTX, "belongs to", aclrtMemcpyFromSymbolAsync(F.pin, 64, hbad_var0, 4, 0, D2H, F.s_user)) \
    X(froma_noctx, "aclrtMemcpyFromSymbolAsync", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtMemcpyFromSymbolAsync(F.pin, 64, hbad_var0, 4, 0, D2H, NULL))

#define ROWS_KERNEL(X) \
    X(func_null_sym, "aclrtGetFuncBySymbol", "NULL symbol", W_DEV0, E_PARAM, "symbol is NULL", aclrtGetFuncBySymbol(NULL, &S.func)) \
    X(func_null_out, "aclrtGetFuncBySymbol", "NULL funcHandle", W_DEV0, E_PARAM, "funcHandle is NULL", aclrtGetFuncBySymbol((const void *)&hbad_poke, NULL)) \
    X(func_unregistered, "aclrtGetFuncBySymbol", "a function not registered as a kernel", W_DEV0, E_FUNC, "not a registered kernel", aclrtGetFuncBySymbol((const void *)&hbad_not_a_kernel, &S.func)) \
    X(func_interior, "aclrtGetFuncBySymbol", "kernel address + 1", W_DEV0, E_FUNC, "not a registered kernel", aclrtGetFuncBySymbol(OFF((const void *)&hbad_poke, 1), &S.func)) \
    X(func_var, "aclrtGetFuncBySymbol", "a device variable", W_DEV1, E_FUNC, "not a registered kernel", aclrtGetFuncBySymbol(hbad_var0, &S.func)) \
    X(lk_null, "aclrtLaunchKernel", "NULL funcHandle", W_DEV0, E_PARAM, "funcHandle is NULL", aclrtLaunchKernel(NULL, 1, G_argbuf, 4, F.s0)) \
    X(lk_stale, "aclrtLaunchKernel", "function handle of an unloaded binary", W_DEV0, E_HANDLE, "not a live kernel handle", aclrtLaunchKernel(F.fh_stale, 1, NULL, 0, F.s0)) \
    X(lk_garbage, "aclrtLaunchKernel", "garbage function handle", W_DEV0, E_HANDLE, "not a live kernel handle", aclrtLaunchKernel(GARBAGE, 1, G_argbuf, 4, F.s0)) \
    X(lk_forged, "aclrtLaunchKernel", "live function handle with another generation", W_DEV0, E_HANDLE, "not a live kernel handle", aclrtLaunchKernel(FORGED(F.fh), 1, G_argbuf, 4, F.s0)) \
    X(lk_kind, "aclrtLaunchKernel", "a stream handle as function", W_DEV0, E_HANDLE, "not a live kernel handle", aclrtLaunchKernel(F.s0, 1, G_argbuf, 4, F.s0)) \
    X(lk_blocks0, "aclrtLaunchKernel", "numBlocks 0", W_DEV0, E_PARAM, "numBlocks 0", aclrtLaunchKernel(F.fh, 0, G_argbuf, 4, F.s0)) \
    X(lk_blocks65536, "aclrtLaunchKernel", "numBlocks 65536", W_DEV0, E_PARAM, "numBlocks 65536", aclrtLaunchKernel(F.fh, 65536, G_argbuf, 4, F.s0)) \
    X(lk_blocksmax, "aclrtLaunchKernel", "numBlocks UINT32_MAX", W_DEV1, E_PARAM, "numBlocks 4294967295", aclrtLaunchKernel(F.fh, UINT32_MAX, G_argbuf, 4, F.s1)) \
    X(lk_args_null_size, "aclrtLaunchKernel", "NULL argsData with argsSize 4", W_DEV0, E_PARAM, "argsData is NULL", aclrtLaunchKernel(F.fh, 1, NULL, 4, F.s0)) \
    X(lk_args_missing, "aclrtLaunchKernel", "NULL argsData, argsSize 0, kernel takes an int32_t", W_DEV0, E_PARAM, "argsSize 0", aclrtLaunchKernel(F.fh, 1, NULL, 0, F.s0)) \
    X(lk_args_small, "aclrtLaunchKernel", "argsSize 2 for an int32_t", W_DEV0, E_PARAM, "argsSize 2", aclrtLaunchKernel(F.fh, 1, G_argbuf, 2, F.s0)) \
    X(lk_args_large, "aclrtLaunchKernel", "argsSize 8 for an int32_t", W_DEV0, E_PARAM, "argsSize 8", aclrtLaunchKernel(F.fh, 1, G_argbuf, 8, F.s0)) \
    X(lk_dead_stream, "aclrtLaunchKernel", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtLaunchKernel(F.fh, 1, G_argbuf, 4, F.s_dead)) \
    X(lk_otherdev, "aclrtLaunchKernel", "stream of device 0 while device 1 is current", W_DEV1, E_STREAMCTX, "belongs to", aclrtLaunchKernel(F.fh, 1, G_argbuf, 4, F.s0)) \
    X(lk_otherctx, "aclrtLaunchKernel", "stream of another context of device 0", W_USER, E_STREAMCTX, "belongs to", aclrtLaunchKernel(F.fh, 1, G_argbuf, 4, F.s0)) \
    X(lk_noctx, "aclrtLaunchKernel", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtLaunchKernel(F.fh, 1, G_argbuf, 4, NULL)) \
    X(lk_deadctx, "aclrtLaunchKernel", "destroyed current context", W_DEADCTX, E_CTXNULL, "destroyed", aclrtLaunchKernel(F.fh, 1, G_argbuf, 4, NULL)) \
    X(lka_null, "aclrtLaunchKernelWithArgsArray", "NULL func", W_DEV0, E_PARAM, "funcHandle is NULL", aclrtLaunchKernelWithArgsArray(NULL, 1, F.s0, NULL, G_args)) \
    X(lka_stale, "aclrtLaunchKernelWithArgsArray", "function handle of an unloaded binary", W_DEV0, E_HANDLE, "not a live kernel handle", aclrtLaunchKernelWithArgsArray(F.fh_stale, 1, F.s0, NULL, NULL)) \
    X(lka_garbage, "aclrtLaunchKernelWithArgsArray", "garbage function handle", W_DEV0, E_HANDLE, "not a live kernel handle", aclrtLaunchKernelWithArgsArray(GARBAGE, 1, F.s0, NULL, G_args)) \
    X(lka_kind, "aclrtLaunchKernelWithArgsArray", "a binary handle as function", W_DEV0, E_HANDLE, "not a live kernel handle", aclrtLaunchKernelWithArgsArray(F.bh, 1, F.s0, NULL, G_args)) \
    X(lka_blocks0, "aclrtLaunchKernelWithArgsArray", "numBlocks 0", W_DEV0, E_PARAM, "numBlocks 0", aclrtLaunchKernelWithArgsArray(F.fh, 0, F.s0, NULL, G_args)) \
    X(lka_blocks65536, "aclrtLaunchKernelWithArgsArray", "numBlocks 65536", W_DEV0, E_PARAM, "numBlocks 65536", aclrtLaunchKernelWithArgsArray(F.fh, 65536, F.s0, NULL, G_args)) \
    X(lka_args_null, "aclrtLaunchKernelWithArgsArray", "NULL args for a kernel with an argument", W_DEV0, E_PARAM, "args is NULL", aclrtLaunchKernelWithArgsArray(F.fh, 1, F.s0, NULL, NULL)) \
    X(lka_arg0_null, "aclrtLaunchKernelWithArgsArray", "args[0] NULL", W_DEV0, E_PARAM, "args[0] is NULL", aclrtLaunchKernelWithArgsArray(F.fh, 1, F.s0, NULL, G_args_null)) \
    X(lka_cfg_attrs_null, "aclrtLaunchKernelWithArgsArray", "cfg with numAttrs 1 and NULL attrs", W_DEV0, E_PARAM, "cfg->attrs is NULL", aclrtLaunchKernelWithArgsArray(F.fh, 1, F.s0, &G_cfg_bad, G_args)) \
    X(lka_dead_stream, "aclrtLaunchKernelWithArgsArray", "destroyed stream", W_DEV0, E_HANDLE, "not a live stream", aclrtLaunchKernelWithArgsArray(F.fh, 1, F.s_dead, NULL, G_args)) \
    X(lka_otherdev, "aclrtLaunchKernelWithArgsArray", "stream of device 1 while device 0 is current", W_DEV0, E_STREAMCTX, "belongs to", aclrtLaunchKernelWithArgsArray(F.fh, 1, F.s1, NULL, G_args)) \
    X(lka_noctx, "aclrtLaunchKernelWithArgsArray", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtLaunchKernelWithArgsArray(F.fh, 1, NULL, NULL, G_args))

#define ROWS_BINARY(X) \
    X(bl_null_path, "aclrtBinaryLoadFromFile", "NULL binPath", W_DEV0, E_PARAM, "binPath is NULL", aclrtBinaryLoadFromFile(NULL, NULL, &S.bin)) \
    X(bl_null_out, "aclrtBinaryLoadFromFile", "NULL binHandle", W_DEV0, E_PARAM, "binHandle is NULL", aclrtBinaryLoadFromFile(kPath, NULL, NULL)) \
    X(bl_opts, "aclrtBinaryLoadFromFile", "options with numOpt 1 and NULL options", W_DEV0, E_PARAM, "options->options is NULL", aclrtBinaryLoadFromFile(kPath, &G_opts_bad, &S.bin)) \
    X(bl_missing, "aclrtBinaryLoadFromFile", "nonexistent file", W_DEV0, E_FILE, "cannot load kernel binary", aclrtBinaryLoadFromFile("/nonexistent/hbad.so", NULL, &S.bin)) \
    X(bl_text, "aclrtBinaryLoadFromFile", "not a shared object (a C source file)", W_DEV1, E_FILE, "cannot load kernel binary", aclrtBinaryLoadFromFile(kNotAnObject, NULL, &S.bin)) \
    X(bl_dir, "aclrtBinaryLoadFromFile", "a directory", W_DEV0, E_FILE, "cannot load kernel binary", aclrtBinaryLoadFromFile("/", NULL, &S.bin)) \
    X(bu_null, "aclrtBinaryUnLoad", "NULL binHandle", W_DEV0, E_PARAM, "binHandle is NULL", aclrtBinaryUnLoad(NULL)) \
    X(bu_stale, "aclrtBinaryUnLoad", "already unloaded", W_DEV0, E_HANDLE, "not a loaded binary", aclrtBinaryUnLoad(F.bh_stale)) \
    X(bu_garbage, "aclrtBinaryUnLoad", "garbage handle", W_DEV0, E_HANDLE, "not a loaded binary", aclrtBinaryUnLoad(GARBAGE)) \
    X(bu_forged, "aclrtBinaryUnLoad", "loaded binary with another generation", W_DEV0, E_HANDLE, "not a loaded binary", aclrtBinaryUnLoad(FORGED(F.bh))) \
    X(bu_kind, "aclrtBinaryUnLoad", "a function handle", W_DEV0, E_HANDLE, "not a loaded binary", aclrtBinaryUnLoad(F.fh)) \
    X(bf_null_bin, "aclrtBinaryGetFunction", "NULL binHandle", W_DEV0, E_PARAM, "binHandle is NULL", aclrtBinaryGetFunction(NULL, "hbin_nop", &S.func)) \
    X(bf_stale, "aclrtBinaryGetFunction", "unloaded binary", W_DEV0, E_HANDLE, "not a loaded binary", aclrtBinaryGetFunction(F.bh_stale, "hbin_nop", &S.func)) \
    X(bf_kind, "aclrtBinaryGetFunction", "a stream handle as binary", W_DEV0, E_HANDLE, "not a loaded binary", aclrtBinaryGetFunction(F.s0, "hbin_nop", &S.func)) \
    X(bf_null_name, "aclrtBinaryGetFunction", "NULL kernelName", W_DEV0, E_PARAM, "kernelName is NULL", aclrtBinaryGetFunction(F.bh, NULL, &S.func)) \
    X(bf_null_out, "aclrtBinaryGetFunction", "NULL funcHandle", W_DEV0, E_PARAM, "funcHandle is NULL", aclrtBinaryGetFunction(F.bh, "hbin_nop", NULL)) \
    X(bf_unknown, "aclrtBinaryGetFunction", "no such kernel", W_DEV0, E_FUNC, "no registered kernel named", aclrtBinaryGetFunction(F.bh, "hbad_no_such_kernel", &S.func)) \
    X(bf_var, "aclrtBinaryGetFunction", "the name of a device variable", W_DEV1, E_FUNC, "no registered kernel named", aclrtBinaryGetFunction(F.bh, "hbin_counter", &S.func)) \
    X(bg_null_bin, "aclrtBinaryGetGlobal", "NULL binHandle", W_DEV0, E_PARAM, "binHandle is NULL", aclrtBinaryGetGlobal(NULL, "hbin_counter", &S.ptr, &S.size)) \
    X(bg_stale, "aclrtBinaryGetGlobal", "unloaded binary", W_DEV0, E_HANDLE, "not a loaded binary", aclrtBinaryGetGlobal(F.bh_stale, "hbin_counter", &S.ptr, &S.size)) \
    X(bg_null_name, "aclrtBinaryGetGlobal", "NULL name", W_DEV0, E_PARAM, "name is NULL", aclrtBinaryGetGlobal(F.bh, NULL, &S.ptr, &S.size)) \
    X(bg_null_dptr, "aclrtBinaryGetGlobal", "NULL dptr", W_DEV0, E_PARAM, "dptr is NULL", aclrtBinaryGetGlobal(F.bh, "hbin_counter", NULL, &S.size)) \
    X(bg_null_size, "aclrtBinaryGetGlobal", "NULL size", W_DEV0, E_PARAM, "size is NULL", aclrtBinaryGetGlobal(F.bh, "hbin_counter", &S.ptr, NULL)) \
    X(bg_unknown, "aclrtBinaryGetGlobal", "no such variable", W_DEV0, E_SYMNF, "no device variable named", aclrtBinaryGetGlobal(F.bh, "hbad_no_such_var", &S.ptr, &S.size)) \
    X(bg_kernel, "aclrtBinaryGetGlobal", "the name of a kernel", W_DEV1, E_SYMNF, "no device variable named", aclrtBinaryGetGlobal(F.bh, "hbin_bump", &S.ptr, &S.size)) \
    X(bg_noctx, "aclrtBinaryGetGlobal", "no current context", W_NOCTX, E_CTXNULL, "no current context", aclrtBinaryGetGlobal(F.bh, "hbin_counter", &S.ptr, &S.size))

/* Without a runtime (before aclInit, after aclFinalize): every function that
 * needs it answers 100001 whatever its (plausible) arguments; the documented
 * exceptions are rows of their own. Host-only pointers are used so that a
 * call that wrongly went ahead could not touch unmapped memory. */
#define ROWS_UNINIT(X) \
    X(u_init_missing, "aclInit", "unreadable config file", W_UNINIT, E_FILE, "cannot open", aclInit("/nonexistent/hbad.json")) \
    X(u_init_dir, "aclInit", "config path is a directory", W_UNINIT, E_FILE, "cannot read", aclInit("/")) \
    X(u_init_badjson, "aclInit", "malformed JSON", W_UNINIT, E_PARSE, "not a JSON object", aclInit(bad_json_path)) \
    X(u_init_array, "aclInit", "a JSON array, not an object", W_UNINIT, E_PARSE, "not a JSON object", aclInit(array_json_path)) \
    X(u_init_count0, "aclInit", "ACLSIM_DEVICE_COUNT=0", W_UNINIT, E_PARAM, "ACLSIM_DEVICE_COUNT", init_with_env("ACLSIM_DEVICE_COUNT", "0")) \
    X(u_init_count33, "aclInit", "ACLSIM_DEVICE_COUNT=33", W_UNINIT, E_PARAM, "ACLSIM_DEVICE_COUNT", init_with_env("ACLSIM_DEVICE_COUNT", "33")) \
    X(u_init_mem0, "aclInit", "ACLSIM_DEVICE_MEMORY=0", W_UNINIT, E_PARAM, "ACLSIM_DEVICE_MEMORY", init_with_env("ACLSIM_DEVICE_MEMORY", "0")) \
    X(u_init_mem2t, "aclInit", "ACLSIM_DEVICE_MEMORY=2T", W_UNINIT, E_PARAM, "ACLSIM_DEVICE_MEMORY", init_with_env("ACLSIM_DEVICE_MEMORY", "2T")) \
    X(u_init_workers1, "aclInit", "ACLSIM_WORKERS=1", W_UNINIT, E_PARAM, "ACLSIM_WORKERS", init_with_env("ACLSIM_WORKERS", "1")) \
    X(u_init_workers65, "aclInit", "ACLSIM_WORKERS=65", W_UNINIT, E_PARAM, "ACLSIM_WORKERS", init_with_env("ACLSIM_WORKERS", "65")) \
    X(u_init_soc, "aclInit", "unknown ACLSIM_SOC_VERSION", W_UNINIT, E_PARAM, "ACLSIM_SOC_VERSION", init_with_env("ACLSIM_SOC_VERSION", "Ascend910B9")) \
    X(u_finalize, "aclFinalize", "not initialized", W_UNINIT, E_REFINAL, "not initialized", aclFinalize()) \
    X(u_errmsg, "aclGetRecentErrMsg", "works without a runtime", W_UNINIT, E_OK, NULL, errmsg_read_once()) \
    X(u_socname, "aclrtGetSocName", "NULL without a runtime", W_UNINIT, E_OK, NULL, socname_is_null()) \
    X(u_version, "aclrtGetVersion", "works without a runtime (documented exception)", W_UNINIT, E_OK, NULL, aclrtGetVersion(&S.major, &S.minor, &S.patch)) \
    X(u_version_null, "aclrtGetVersion", "NULL minorVersion without a runtime: 100000", W_UNINIT, E_PARAM, "minorVersion", aclrtGetVersion(&S.major, NULL, &S.patch)) \
    X(u_runmode, "aclrtGetRunMode", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtGetRunMode(&S.mode)) \
    X(u_setdev, "aclrtSetDevice", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtSetDevice(0)) \
    X(u_reset, "aclrtResetDevice", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtResetDevice(0)) \
    X(u_resetf, "aclrtResetDeviceForce", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtResetDeviceForce(0)) \
    X(u_getdev, "aclrtGetDevice", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtGetDevice(&S.i32)) \
    X(u_devcount, "aclrtGetDeviceCount", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtGetDeviceCount(&S.u32)) \
    X(u_syncdev, "aclrtSynchronizeDevice", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtSynchronizeDevice()) \
    X(u_ctx_create, "aclrtCreateContext", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtCreateContext(&S.ctx, 0)) \
    X(u_ctx_destroy, "aclrtDestroyContext", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtDestroyContext(F.user)) \
    X(u_ctx_setcur, "aclrtSetCurrentContext", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtSetCurrentContext(F.ctx[0])) \
    X(u_ctx_getcur, "aclrtGetCurrentContext", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtGetCurrentContext(&S.ctx)) \
    X(u_st_create, "aclrtCreateStream", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtCreateStream(&S.stream)) \
    X(u_st_createcfg, "aclrtCreateStreamWithConfig", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtCreateStreamWithConfig(&S.stream, 0, 0)) \
    X(u_st_destroy, "aclrtDestroyStream", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtDestroyStream(F.s0)) \
    X(u_st_destroyf, "aclrtDestroyStreamForce", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtDestroyStreamForce(F.s1)) \
    X(u_st_sync, "aclrtSynchronizeStream", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtSynchronizeStream(F.s0)) \
    X(u_st_synct, "aclrtSynchronizeStreamWithTimeout", "not initialized (valid timeout)", W_UNINIT, E_UNINIT, "not initialized", aclrtSynchronizeStreamWithTimeout(F.s0, 100)) \
    X(u_ev_create, "aclrtCreateEvent", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtCreateEvent(&S.event)) \
    X(u_ev_destroy, "aclrtDestroyEvent", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtDestroyEvent(F.e0)) \
    X(u_ev_record, "aclrtRecordEvent", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtRecordEvent(F.e0, F.s0)) \
    X(u_ev_wait, "aclrtStreamWaitEvent", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtStreamWaitEvent(F.s0, F.e0)) \
    X(u_ev_sync, "aclrtSynchronizeEvent", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtSynchronizeEvent(F.e0)) \
    X(u_ev_query, "aclrtQueryEventStatus", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtQueryEventStatus(F.e0, &S.status)) \
    X(u_ev_elapsed, "aclrtEventElapsedTime", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtEventElapsedTime(&S.ms, F.e0, F.e0)) \
    X(u_hostfn, "aclrtLaunchHostFunc", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtLaunchHostFunc(F.s0, host_poke, hbuf)) \
    X(u_malloc, "aclrtMalloc", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMalloc(&S.ptr, 64, HUGE_FIRST)) \
    X(u_free, "aclrtFree", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtFree(F.d0)) \
    X(u_mallochost, "aclrtMallocHost", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMallocHost(&S.ptr, 64)) \
    X(u_freehost, "aclrtFreeHost", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtFreeHost(F.pin)) \
    X(u_cpy, "aclrtMemcpy", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMemcpy(hbuf, HBUF, hbuf + 512, 16, H2H)) \
    X(u_cpy_c0, "aclrtMemcpy", "count 0 without a runtime", W_UNINIT, E_OK, NULL, aclrtMemcpy(hbuf, HBUF, hbuf + 512, 0, H2H)) \
    X(u_cpya, "aclrtMemcpyAsync", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMemcpyAsync(hbuf, HBUF, hbuf + 512, 16, H2H, F.s0)) \
    X(u_cpya_c0, "aclrtMemcpyAsync", "count 0 without a runtime", W_UNINIT, E_OK, NULL, aclrtMemcpyAsync(hbuf, HBUF, hbuf + 512, 0, H2H, F.s0)) \
    X(u_set, "aclrtMemset", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMemset(hbuf, HBUF, 0x77, 16)) \
    X(u_set_c0, "aclrtMemset", "count 0 without a runtime", W_UNINIT, E_OK, NULL, aclrtMemset(hbuf, HBUF, 0x77, 0)) \
    X(u_seta, "aclrtMemsetAsync", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMemsetAsync(hbuf, HBUF, 0x77, 16, NULL)) \
    X(u_seta_c0, "aclrtMemsetAsync", "count 0 without a runtime", W_UNINIT, E_OK, NULL, aclrtMemsetAsync(hbuf, HBUF, 0x77, 0, NULL)) \
    X(u_meminfo, "aclrtGetMemInfo", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtGetMemInfo(ACL_HBM_MEM, &S.free_b, &S.total_b)) \
    X(u_addr, "aclrtGetSymbolAddress", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtGetSymbolAddress(hbad_var0, &S.ptr)) \
    X(u_size, "aclrtGetSymbolSize", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtGetSymbolSize(hbad_var0, &S.size)) \
    X(u_to, "aclrtMemcpyToSymbol", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMemcpyToSymbol(hbad_var0, hbuf, 4, 0, H2D)) \
    X(u_to_c0, "aclrtMemcpyToSymbol", "count 0 without a runtime", W_UNINIT, E_OK, NULL, aclrtMemcpyToSymbol(hbad_var0, hbuf, 0, 0, H2D)) \
    X(u_from, "aclrtMemcpyFromSymbol", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMemcpyFromSymbol(hbuf, 64, hbad_var0, 4, 0, D2H)) \
    X(u_from_c0, "aclrtMemcpyFromSymbol", "count 0 without a runtime", W_UNINIT, E_OK, NULL, aclrtMemcpyFromSymbol(hbuf, 64, hbad_var0, 0, 0, D2H)) \
    X(u_toa, "aclrtMemcpyToSymbolAsync", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMemcpyToSymbolAsync(hbad_var0, hbuf, 4, 0, H2D, NULL)) \
    X(u_toa_c0, "aclrtMemcpyToSymbolAsync", "count 0 without a runtime", W_UNINIT, E_OK, NULL, aclrtMemcpyToSymbolAsync(hbad_var0, hbuf, 0, 0, H2D, NULL)) \
    X(u_froma, "aclrtMemcpyFromSymbolAsync", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtMemcpyFromSymbolAsync(hbuf, 64, hbad_var0, 4, 0, D2H, NULL)) \
    X(u_froma_c0, "aclrtMemcpyFromSymbolAsync", "count 0 without a runtime", W_UNINIT, E_OK, NULL, aclrtMemcpyFromSymbolAsync(hbuf, 64, hbad_var0, 0, 0, D2H, NULL)) \
    X(u_func, "aclrtGetFuncBySymbol", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtGetFuncBySymbol((const void *)&hbad_poke, &S.func)) \
    X(u_lk, "aclrtLaunchKernel", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtLaunchKernel(F.fh, 1, G_argbuf, 4, NULL)) \
    X(u_lka, "aclrtLaunchKernelWithArgsArray", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtLaunchKernelWithArgsArray(F.fh, 1, NULL, NULL, G_args)) \
    X(u_bl, "aclrtBinaryLoadFromFile", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtBinaryLoadFromFile(kPath, NULL, &S.bin)) \
    X(u_bu, "aclrtBinaryUnLoad", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtBinaryUnLoad(F.bh)) \
    X(u_bf, "aclrtBinaryGetFunction", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtBinaryGetFunction(F.bh, "hbin_nop", &S.func)) \
    X(u_synct_bad, "aclrtSynchronizeStreamWithTimeout", "timeout -2 without a runtime: the init check first", W_UNINIT, E_UNINIT, "not initialized", aclrtSynchronizeStreamWithTimeout(F.s0, -2)) \
    X(u_lk_bad, "aclrtLaunchKernel", "NULL argsData with argsSize 4 without a runtime: the init check first", W_UNINIT, E_UNINIT, "not initialized", aclrtLaunchKernel(F.fh, 1, NULL, 4, NULL)) \
    X(u_lka_bad, "aclrtLaunchKernelWithArgsArray", "cfg with NULL attrs without a runtime: the init check first", W_UNINIT, E_UNINIT, "not initialized", aclrtLaunchKernelWithArgsArray(F.fh, 1, NULL, &G_cfg_bad, G_args)) \
    X(u_malloc_bad, "aclrtMalloc", "NULL devPtr, size 0, policy 999 without a runtime", W_UNINIT, E_UNINIT, "not initialized", aclrtMalloc(NULL, 0, (aclrtMemMallocPolicy)999)) \
    X(u_getdev_null, "aclrtGetDevice", "NULL deviceId without a runtime", W_UNINIT, E_UNINIT, "not initialized", aclrtGetDevice(NULL)) \
    X(u_cpy_bad, "aclrtMemcpy", "NULLs, count > destMax, kind 999 without a runtime", W_UNINIT, E_UNINIT, "not initialized", aclrtMemcpy(NULL, 0, NULL, 16, KIND(999))) \
    X(u_to_bad, "aclrtMemcpyToSymbol", "NULL symbol, kind 999 without a runtime", W_UNINIT, E_UNINIT, "not initialized", aclrtMemcpyToSymbol(NULL, hbuf, 4, 0, KIND(999))) \
    X(u_bg, "aclrtBinaryGetGlobal", "not initialized", W_UNINIT, E_UNINIT, "not initialized", aclrtBinaryGetGlobal(F.bh, "hbin_counter", &S.ptr, &S.size))

/* After aclFinalize and a new aclInit: handles of the finalized session are
 * destroyed handles (aclFinalize releases every resource of the process). */
#define ROWS_FINALIZED(X) \
    X(fin_stream, "aclrtSynchronizeStream", "stream from before aclFinalize", W_DEV0, E_HANDLE, "not a live stream", aclrtSynchronizeStream(OLD.s0)) \
    X(fin_stream_destroy, "aclrtDestroyStream", "stream from before aclFinalize", W_DEV0, E_HANDLE, "not a live stream", aclrtDestroyStream(OLD.s1)) \
    X(fin_ctx, "aclrtSetCurrentContext", "default context from before aclFinalize", W_DEV1, E_HANDLE, "not a live context", aclrtSetCurrentContext(OLD.ctx[0])) \
    X(fin_userctx, "aclrtDestroyContext", "user context from before aclFinalize", W_DEV0, E_HANDLE, "not a live context", aclrtDestroyContext(OLD.user)) \
    X(fin_event_query, "aclrtQueryEventStatus", "event from before aclFinalize", W_DEV0, E_HANDLE, "not a live event", aclrtQueryEventStatus(OLD.e_unrec, &S.status)) \
    X(fin_event_destroy, "aclrtDestroyEvent", "event from before aclFinalize", W_DEV0, E_HANDLE, "not a live event", aclrtDestroyEvent(OLD.e0)) \
    X(fin_bin_func, "aclrtBinaryGetFunction", "binary from before aclFinalize", W_DEV0, E_HANDLE, "not a loaded binary", aclrtBinaryGetFunction(OLD.bh, "hbin_nop", &S.func)) \
    X(fin_bin_unload, "aclrtBinaryUnLoad", "binary from before aclFinalize", W_DEV0, E_HANDLE, "not a loaded binary", aclrtBinaryUnLoad(OLD.bh))

/* ---- the tables -------------------------------------------------------------- */

struct row {
    const char *id;
    const char *fn;       /* the public function under test */
    const char *cls;      /* the invalid-argument class */
    int where;
    aclError want;
    const char *needle;   /* the message must mention it (besides fn), or NULL */
    aclError (*call)(void);
};

#define DEFINE_CALL(id, fn, cls, where, want, needle, ...) \
    static aclError call_##id(void) { return (__VA_ARGS__); }
#define ROW_ENTRY(id, fn, cls, where, want, needle, ...) \
    {#id, fn, cls, where, want, needle, call_##id},

ROWS_DEVICE(DEFINE_CALL)
ROWS_CONTEXT(DEFINE_CALL)
ROWS_STREAM(DEFINE_CALL)
ROWS_EVENT(DEFINE_CALL)
ROWS_MEMORY(DEFINE_CALL)
ROWS_COPY(DEFINE_CALL)
ROWS_SYMBOL(DEFINE_CALL)
ROWS_KERNEL(DEFINE_CALL)
ROWS_BINARY(DEFINE_CALL)
ROWS_UNINIT(DEFINE_CALL)
ROWS_FINALIZED(DEFINE_CALL)

static const struct row initialized_rows[] = {
    ROWS_DEVICE(ROW_ENTRY) ROWS_CONTEXT(ROW_ENTRY) ROWS_STREAM(ROW_ENTRY)
    ROWS_EVENT(ROW_ENTRY) ROWS_MEMORY(ROW_ENTRY) ROWS_COPY(ROW_ENTRY)
    ROWS_SYMBOL(ROW_ENTRY) ROWS_KERNEL(ROW_ENTRY) ROWS_BINARY(ROW_ENTRY)
};
static const struct row uninit_rows[] = {ROWS_UNINIT(ROW_ENTRY)};
static const struct row finalized_rows[] = {ROWS_FINALIZED(ROW_ENTRY)};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Every function declared in acl/acl_base.h and acl/acl_rt.h. */
static const char *const kFunctions[] = {
    "aclInit", "aclFinalize", "aclGetRecentErrMsg", "aclrtGetSocName",
    "aclrtGetRunMode", "aclrtGetVersion", "aclrtSetDevice", "aclrtResetDevice",
    "aclrtResetDeviceForce", "aclrtGetDevice", "aclrtGetDeviceCount", "aclrtSynchronizeDevice",
    "aclrtCreateContext", "aclrtDestroyContext", "aclrtSetCurrentContext",
    "aclrtGetCurrentContext", "aclrtCreateStream", "aclrtCreateStreamWithConfig",
    "aclrtDestroyStream", "aclrtDestroyStreamForce", "aclrtSynchronizeStream",
    "aclrtSynchronizeStreamWithTimeout", "aclrtCreateEvent", "aclrtDestroyEvent",
    "aclrtRecordEvent", "aclrtStreamWaitEvent", "aclrtSynchronizeEvent",
    "aclrtQueryEventStatus", "aclrtEventElapsedTime", "aclrtLaunchHostFunc", "aclrtMalloc",
    "aclrtFree", "aclrtMallocHost", "aclrtFreeHost", "aclrtMemcpy", "aclrtMemcpyAsync",
    "aclrtMemset", "aclrtMemsetAsync", "aclrtGetMemInfo", "aclrtGetSymbolAddress",
    "aclrtGetSymbolSize", "aclrtMemcpyFromSymbol", "aclrtMemcpyFromSymbolAsync",
    "aclrtMemcpyToSymbol", "aclrtMemcpyToSymbolAsync", "aclrtGetFuncBySymbol",
    "aclrtLaunchKernel", "aclrtLaunchKernelWithArgsArray", "aclrtBinaryLoadFromFile",
    "aclrtBinaryUnLoad", "aclrtBinaryGetFunction", "aclrtBinaryGetGlobal",
};
static bool g_covered[COUNT(kFunctions)];
static unsigned g_rows_run, g_rows_failed;

/* ---- state snapshots ------------------------------------------------------------ */

struct snap {
    /* always */
    const char *soc;
    aclError count_rc;
    uint32_t count;
    unsigned char host[HBUF];
    int32_t hvar0[16];
    double hvar1[4];
    /* with a runtime */
    aclError cur_rc, dev_rc, switch_rc;
    aclrtContext cur;
    int32_t dev;
    aclError mem_rc[2];
    size_t free_b[2], total_b[2];
    aclError var_rc[2];
    int32_t var0[2][16];
    double var1[2][4];
    aclError buf_rc[2];
    unsigned char d0[BUF], d1[BUF], pin[BUF];
    aclError sync_rc[5];      /* device 0, device 1, s0, s1, s_user */
    aclError ev_rc;
    aclrtEventRecordedStatus ev;
};

/* Reads the recent error message until there is none (common.h's drain_msg
 * reads it once). */
static void drain_all_msgs(void)
{
    while (aclGetRecentErrMsg() != NULL) {
    }
}

static void take_snapshot(struct snap *s, bool initialized)
{
    memset(s, 0, sizeof *s);
    s->soc = aclrtGetSocName();
    s->count_rc = aclrtGetDeviceCount(&s->count);
    memcpy(s->host, hbuf, sizeof s->host);
    memcpy(s->hvar0, hbad_var0, sizeof s->hvar0);
    memcpy(s->hvar1, hbad_var1, sizeof s->hvar1);
    if (initialized) {
        s->cur_rc = aclrtGetCurrentContext(&s->cur);
        s->dev_rc = aclrtGetDevice(&s->dev);
        for (int d = 0; d < 2; d++) {
            s->switch_rc |= aclrtSetCurrentContext(F.ctx[d]);
            s->sync_rc[d] = aclrtSynchronizeDevice();
            s->mem_rc[d] = aclrtGetMemInfo(ACL_HBM_MEM, &s->free_b[d], &s->total_b[d]);
            s->var_rc[d] = aclrtMemcpyFromSymbol(s->var0[d], sizeof s->var0[d], hbad_var0,
                                                 sizeof hbad_var0, 0, D2H);
            if (!s->var_rc[d])
                s->var_rc[d] = aclrtMemcpyFromSymbol(s->var1[d], sizeof s->var1[d], hbad_var1,
                                                     sizeof hbad_var1, 0, D2H);
            s->sync_rc[2 + d] = aclrtSynchronizeStream(d ? F.s1 : F.s0);
        }
        s->switch_rc |= aclrtSetCurrentContext(F.user);
        s->sync_rc[4] = aclrtSynchronizeStream(F.s_user);
        s->buf_rc[0] = aclrtMemcpy(s->d0, sizeof s->d0, F.d0, BUF, D2H);
        s->buf_rc[1] = aclrtMemcpy(s->d1, sizeof s->d1, F.d1, BUF, D2H);
        memcpy(s->pin, F.pin, BUF);
        s->ev_rc = aclrtQueryEventStatus(F.e0, &s->ev);
        if (s->cur_rc == ACL_SUCCESS)
            s->switch_rc |= aclrtSetCurrentContext(s->cur);
    }
    drain_all_msgs();
}

/* Appends the names of the fields that differ to out; false if any. */
static bool same_state(const struct snap *a, const struct snap *b, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
#define SAME(field)                                                              \
    if (memcmp(&a->field, &b->field, sizeof a->field) != 0 && n + 40 < len)      \
        n += (size_t)snprintf(out + n, len - n, " " #field);
    SAME(soc) SAME(count_rc) SAME(count) SAME(host) SAME(hvar0) SAME(hvar1)
    SAME(cur_rc) SAME(dev_rc) SAME(cur) SAME(dev) SAME(mem_rc) SAME(free_b) SAME(total_b)
    SAME(var_rc) SAME(var0) SAME(var1) SAME(buf_rc) SAME(d0) SAME(d1) SAME(pin)
    SAME(sync_rc) SAME(ev_rc) SAME(ev)
#undef SAME
    /* The resources the rows use must still work afterwards. */
    if (b->switch_rc && n + 40 < len)
        n += (size_t)snprintf(out + n, len - n, " (contexts no longer usable)");
    for (int i = 0; i < 5; i++)
        if (b->sync_rc[i] && n + 40 < len)
            n += (size_t)snprintf(out + n, len - n, " (stream %d no longer works: %d)", i,
                                  b->sync_rc[i]);
    return n == 0;
}

/* ---- the runner ------------------------------------------------------------------ */

struct outcome {
    aclError got;
    aclError setup_rc;   /* W_DEADCTX: creating/destroying the context */
    bool has_msg;
    char msg[1200];
};

struct thread_job {
    const struct row *r;
    struct outcome *o;
};

static void call_and_collect(const struct row *r, struct outcome *o)
{
    drain_all_msgs();
    o->got = r->call();
    const char *m = aclGetRecentErrMsg();
    o->has_msg = m != NULL;
    snprintf(o->msg, sizeof o->msg, "%s", m ? m : "");
}

static void *row_thread(void *arg)
{
    struct thread_job *j = arg;
    if (j->r->where == W_DEADCTX) {
        aclrtContext c = NULL;
        j->o->setup_rc = aclrtCreateContext(&c, 0);
        if (!j->o->setup_rc)
            j->o->setup_rc = aclrtDestroyContext(c);
    }
    call_and_collect(j->r, j->o);
    return NULL;
}

static void select_where(int where)
{
    aclError rc = ACL_SUCCESS;
    switch (where) {
    case W_DEV1: rc = aclrtSetCurrentContext(F.ctx[1]); break;
    case W_USER: rc = aclrtSetCurrentContext(F.user); break;
    case W_DEV0: case W_NOCTX: case W_DEADCTX: rc = aclrtSetCurrentContext(F.ctx[0]); break;
    default: break;
    }
    assert_int_equal(rc, ACL_SUCCESS);
}

static void cover(const char *fn)
{
    for (size_t i = 0; i < COUNT(kFunctions); i++)
        if (strcmp(kFunctions[i], fn) == 0) {
            g_covered[i] = true;
            return;
        }
    fail_msg("row names \"%s\", which is not a function of acl_base.h / acl_rt.h", fn);
}

static const char *where_name(int w)
{
    static const char *const names[] = {"device 0", "device 1", "user context",
                                        "no context", "destroyed context", "no runtime"};
    return names[w];
}

/* Runs one row; returns false (after printing why) if it failed. */
static bool run_row(const struct row *r, const char *phase)
{
    bool initialized = r->where != W_UNINIT;
    cover(r->fn);
    g_rows_run++;
    memset(&S, 0xCB, sizeof S);
    memcpy(&S_SENTINEL, &S, sizeof S);
    if (initialized)
        select_where(r->where);
    struct snap before, after;
    take_snapshot(&before, initialized);

    struct outcome o = {0};
    if (r->where == W_NOCTX || r->where == W_DEADCTX) {
        struct thread_job j = {r, &o};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, row_thread, &j), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
    } else {
        call_and_collect(r, &o);
    }
    /* A failed aclInit row that wrongly succeeded: put the phase back. */
    bool recovered = !initialized && aclrtGetSocName() != NULL && aclFinalize() == ACL_SUCCESS;
    take_snapshot(&after, initialized);

    char why[1600];
    size_t n = 0;
    why[0] = '\0';
#define WHY(...)                                                                 \
    do {                                                                         \
        if (n + 200 < sizeof why)                                                \
            n += (size_t)snprintf(why + n, sizeof why - n, __VA_ARGS__);         \
    } while (0)
    if (o.setup_rc)
        WHY(" [setup of the destroyed context failed: %d]", o.setup_rc);
    if (o.got != r->want)
        WHY(" [returned %d, expected %d]", o.got, r->want);
    if (r->want != ACL_SUCCESS) {
        if (!o.has_msg)
            WHY(" [aclGetRecentErrMsg() is NULL]");
        else if (!o.msg[0])
            WHY(" [aclGetRecentErrMsg() is empty]");
        else if (!strstr(o.msg, r->fn) || (r->needle && !strstr(o.msg, r->needle)))
            WHY(" [message \"%.300s\" does not mention \"%s\"%s%s%s]", o.msg, r->fn,
                r->needle ? " and \"" : "", r->needle ? r->needle : "", r->needle ? "\"" : "");
        if (memcmp(&S, &S_SENTINEL, sizeof S) != 0)
            WHY(" [an out-parameter was written]");
    }
    if (recovered)
        WHY(" [aclInit succeeded]");
    char diff[400];
    if (!same_state(&before, &after, diff, sizeof diff))
        WHY(" [state changed:%s]", diff);
#undef WHY
    if (n == 0)
        return true;
    g_rows_failed++;
    print_error("FAIL %s row %s: %s(%s) on %s:%s\n", phase, r->id, r->fn, r->cls,
                where_name(r->where), why);
    return false;
}

static void run_rows(const struct row *rows, size_t count, const char *phase)
{
    unsigned failed = 0;
    for (size_t i = 0; i < count; i++)
        failed += !run_row(&rows[i], phase);
    if (failed)
        fail_msg("%u of %zu %s row(s) failed (listed above)", failed, count, phase);
}

/* ---- fixture setup ---------------------------------------------------------------- */

static void configure_env(void)
{
    setenv("ACLSIM_DEVICE_COUNT", "2", 1);
    setenv("ACLSIM_DEVICE_MEMORY", "64M", 1);
    setenv("ACLSIM_WORKERS", "2", 1);
    unsetenv("ACLSIM_SOC_VERSION");
    unsetenv("ASCEND_RT_VISIBLE_DEVICES");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void fixture_setup(void)
{
    memset(&F, 0, sizeof F);
    OK(aclrtSetDevice(1));
    OK(aclrtGetCurrentContext(&F.ctx[1]));
    OK(aclrtCreateStream(&F.s1));
    OK(aclrtMalloc(&F.d1, BUF, HUGE_FIRST));
    OK(aclrtSetDevice(0));
    OK(aclrtGetCurrentContext(&F.ctx[0]));
    OK(aclrtCreateStream(&F.s0));
    OK(aclrtMalloc(&F.d0, BUF, HUGE_FIRST));
    OK(aclrtMallocHost(&F.pin, BUF));

    /* Destroyed handles. */
    OK(aclrtCreateStream(&F.s_dead));
    OK(aclrtDestroyStream(F.s_dead));
    OK(aclrtCreateEvent(&F.e_dead));
    OK(aclrtDestroyEvent(F.e_dead));
    OK(aclrtCreateContext(&F.ctx_dead, 0));
    OK(aclrtDestroyContext(F.ctx_dead));
    OK(aclrtCreateContext(&F.user, 0));   /* becomes current */
    OK(aclrtCreateStream(&F.s_user));
    OK(aclrtSetCurrentContext(F.ctx[0]));

    /* A function handle and a binary handle that died with an unload, then
     * the binary loaded for good. */
    OK(aclrtBinaryLoadFromFile(kPath, NULL, &F.bh_stale));
    OK(aclrtBinaryGetFunction(F.bh_stale, "hbin_nop", &F.fh_stale));
    OK(aclrtBinaryUnLoad(F.bh_stale));
    OK(aclrtBinaryLoadFromFile(kPath, NULL, &F.bh));
    OK(aclrtGetFuncBySymbol((const void *)&hbad_poke, &F.fh));

    /* Every registered variable gets its instance on both devices (a launch
     * instantiates them all), then distinct contents per device. */
    for (int d = 0; d < 2; d++) {
        OK(aclrtSetCurrentContext(F.ctx[d]));
        int32_t v = 100 + d;
        OK(aclrtLaunchKernel(F.fh, 1, &v, sizeof v, NULL));
        OK(aclrtSynchronizeStream(NULL));
        int32_t w0[16];
        double w1[4];
        for (int i = 0; i < 16; i++)
            w0[i] = 1000 * (d + 1) + i;
        for (int i = 0; i < 4; i++)
            w1[i] = (d + 1) * 0.25 + i;
        OK(aclrtMemcpyToSymbol(hbad_var0, w0, sizeof w0, 0, H2D));
        OK(aclrtMemcpyToSymbol(hbad_var1, w1, sizeof w1, 0, H2D));
    }
    OK(aclrtSetCurrentContext(F.ctx[0]));
    OK(aclrtGetSymbolAddress(hbad_var0, &F.inst0));

    OK(aclrtMemset(F.d0, BUF, 0xA5, BUF));
    OK(aclrtMemset(F.d1, BUF, 0x5A, BUF));
    memset(F.pin, 0x3C, BUF);
    for (size_t i = 0; i < HBUF; i++)
        hbuf[i] = (unsigned char)(i * 7 + 1);

    /* A freed device pointer: the last device allocation of the fixture, so
     * no later allocation reuses it. */
    OK(aclrtMalloc(&F.d_freed, BUF, HUGE_FIRST));
    OK(aclrtFree(F.d_freed));

    OK(aclrtCreateEvent(&F.e0));
    OK(aclrtRecordEvent(F.e0, F.s0));
    OK(aclrtSynchronizeStream(F.s0));
    OK(aclrtCreateEvent(&F.e_unrec));
    drain_all_msgs();
}

static void fixture_teardown(void)
{
    OK(aclrtSetCurrentContext(F.ctx[0]));
    OK(aclrtDestroyStream(F.s0));
    OK(aclrtDestroyStream(F.s1));
    OK(aclrtDestroyStream(F.s_user));
    OK(aclrtDestroyEvent(F.e0));
    OK(aclrtDestroyEvent(F.e_unrec));
    OK(aclrtDestroyContext(F.user));
    OK(aclrtFree(F.d0));
    OK(aclrtFree(F.d1));
    OK(aclrtFreeHost(F.pin));
    OK(aclrtBinaryUnLoad(F.bh));
    OK(aclrtResetDevice(1));
    OK(aclrtResetDevice(0));
}

/* Before the first aclInit: F holds stand-ins (garbage handles, host buffers). */
static void fixture_uninit_standins(void)
{
    F.ctx[0] = F.ctx[1] = F.user = F.ctx_dead = GARBAGE;
    F.s0 = F.s1 = F.s_user = F.s_dead = GARBAGE;
    F.e0 = F.e_unrec = F.e_dead = GARBAGE;
    F.fh = F.fh_stale = F.bh = F.bh_stale = GARBAGE;
    F.d0 = F.d1 = F.d_freed = F.pin = F.inst0 = dummy;
}

/* ---- the tests ---------------------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    configure_env();
    snprintf(bad_json_path, sizeof bad_json_path, "%s/hmatrix-bad.json", ACLSIM_TEST_BINARY_DIR);
    snprintf(array_json_path, sizeof array_json_path, "%s/hmatrix-array.json",
             ACLSIM_TEST_BINARY_DIR);
    write_text(bad_json_path, "{\"aclsim\": {\"device_count\": ");
    write_text(array_json_path, "[1, 2, 3]");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    remove(bad_json_path);
    remove(array_json_path);
    return 0;
}

/* The literal codes of the tables are CANN's. */
static void test_codes(void **state)
{
    (void)state;
    assert_int_equal(E_PARAM, ACL_ERROR_INVALID_PARAM);
    assert_int_equal(E_UNINIT, ACL_ERROR_UNINITIALIZE);
    assert_int_equal(E_REINIT, ACL_ERROR_REPEAT_INITIALIZE);
    assert_int_equal(E_FILE, ACL_ERROR_INVALID_FILE);
    assert_int_equal(E_PARSE, ACL_ERROR_PARSE_FILE);
    assert_int_equal(E_REFINAL, ACL_ERROR_REPEAT_FINALIZE);
    assert_int_equal(E_FAILURE, ACL_ERROR_FAILURE);
    assert_int_equal(E_DEVID, ACL_ERROR_RT_INVALID_DEVICEID);
    assert_int_equal(E_CTXNULL, ACL_ERROR_RT_CONTEXT_NULL);
    assert_int_equal(E_STREAMCTX, ACL_ERROR_RT_STREAM_CONTEXT);
    assert_int_equal(E_HANDLE, ACL_ERROR_RT_INVALID_HANDLE);
    assert_int_equal(E_SYMNF, ACL_ERROR_RT_SYMBOL_NOT_FOUND);
    assert_int_equal(E_SYMBOL, ACL_ERROR_RT_INVALID_SYMBOL);
    assert_int_equal(E_FUNC, ACL_ERROR_RT_INVALID_DEVICE_FUNCTION);
    assert_int_equal(E_MEMALLOC, ACL_ERROR_RT_MEMORY_ALLOCATION);
    assert_int_equal(E_RTPARAM, ACL_ERROR_RT_PARAM_INVALID);
}

/* Before the first aclInit of the process. */
static void test_before_init(void **state)
{
    (void)state;
    assert_null(aclrtGetSocName());
    fixture_uninit_standins();
    for (size_t i = 0; i < HBUF; i++)
        hbuf[i] = (unsigned char)(i * 3 + 5);
    run_rows(uninit_rows, COUNT(uninit_rows), "before-aclInit");
    /* The failed aclInit calls left the runtime usable. */
    OK(aclInit(NULL));
    OK(aclFinalize());
}

/* Every function x every invalid class with a runtime, two devices, and the
 * fixture's live and dead resources. */
static void test_initialized(void **state)
{
    (void)state;
    OK(aclInit(NULL));
    fixture_setup();
    unsigned before = g_rows_failed;
    for (size_t i = 0; i < COUNT(initialized_rows); i++)
        run_row(&initialized_rows[i], "initialized");
    /* Everything the rows used still works: a real launch and copy. */
    OK(aclrtSetCurrentContext(F.ctx[0]));
    int32_t v = 77, got = 0;
    OK(aclrtLaunchKernel(F.fh, 1, &v, sizeof v, F.s0));
    OK(aclrtSynchronizeStream(F.s0));
    OK(aclrtMemcpyFromSymbol(&got, sizeof got, hbad_var0, sizeof got, 0, D2H));
    assert_int_equal(got, 77);
    fixture_teardown();
    OK(aclFinalize());
    if (g_rows_failed != before)
        fail_msg("%u of %zu initialized row(s) failed (listed above)", g_rows_failed - before,
                 COUNT(initialized_rows));
}

/* After aclFinalize with live resources: the same rows as before aclInit,
 * given the finalized session's (stale) handles and pointers. */
static void test_after_finalize(void **state)
{
    (void)state;
    OK(aclInit(NULL));
    fixture_setup();
    OLD = F;
    OK(aclFinalize());
    run_rows(uninit_rows, COUNT(uninit_rows), "after-aclFinalize");
}

/* A new session: handles of the finalized one are dead. */
static void test_finalized_handles(void **state)
{
    (void)state;
    assert_non_null(OLD.s0);   /* test_after_finalize ran */
    OK(aclInit(NULL));
    fixture_setup();
    unsigned before = g_rows_failed;
    for (size_t i = 0; i < COUNT(finalized_rows); i++)
        run_row(&finalized_rows[i], "finalized-session");
    /* Whatever survived the finalize (a bug reported above) goes now. */
    (void)aclrtDestroyEvent(OLD.e0);
    (void)aclrtDestroyEvent(OLD.e_unrec);
    (void)aclrtBinaryUnLoad(OLD.bh);
    drain_all_msgs();
    fixture_teardown();
    OK(aclFinalize());
    if (g_rows_failed != before)
        fail_msg("%u of %zu finalized-session row(s) failed (listed above)",
                 g_rows_failed - before, COUNT(finalized_rows));
}

/* Every public function has rows; one summary line. */
static void test_summary(void **state)
{
    (void)state;
    unsigned covered = 0;
    for (size_t i = 0; i < COUNT(kFunctions); i++) {
        if (g_covered[i])
            covered++;
        else
            print_error("no row for %s\n", kFunctions[i]);
    }
    printf("test-bad-input: %u rows run (%u failed), %u of %zu public functions covered\n",
           g_rows_run, g_rows_failed, covered, COUNT(kFunctions));
    fflush(stdout);
    assert_int_equal(COUNT(kFunctions), 52);
    assert_int_equal(covered, COUNT(kFunctions));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes),
        cmocka_unit_test(test_before_init),
        cmocka_unit_test(test_initialized),
        cmocka_unit_test(test_after_finalize),
        cmocka_unit_test(test_finalized_handles),
        cmocka_unit_test(test_summary),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
