/*
 * Copy and set variants: 2D copies (aclrtMemcpy2d[Async]) and 32-bit memsets
 * (aclrtMemsetD32[Async]). Like every asynchronous call they queue one task
 * on their stream; an async copy with ordinary (pageable) host memory waits
 * for its task, and a 32-bit memset of host memory runs at once, as CANN
 * documents.
 */
#include "internal.h"

#include <string.h>

void aclsim__execute_copy_variant(struct aclsim__task *t)
{
    if (t->kind == ACLSIM_TASK_MEMSET32) {
        uint32_t *p = t->u.memset32.dst;
        for (size_t i = 0, n = t->bytes / 4; i < n; i++)
            p[i] = t->u.memset32.value;
        return;
    }
    char *dst = t->u.copy2d.dst;
    const char *src = t->u.copy2d.src;
    size_t width = t->u.copy2d.width, rows = width ? t->bytes / width : 0;
    for (size_t r = 0; r < rows; r++)
        memmove(dst + r * t->u.copy2d.dpitch, src + r * t->u.copy2d.spitch, width);
}

/* The checks of both 2D copies; on success *task describes the copy. */
static aclError check_2d(const char *api, void *dst, size_t dpitch, const void *src, size_t spitch,
                         size_t width, size_t height, aclrtMemcpyKind kind, struct aclsim__task *task,
                         bool *pageable)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!dst || !src)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !dst ? "dst" : "src");
    if (kind != ACL_MEMCPY_HOST_TO_DEVICE && kind != ACL_MEMCPY_DEVICE_TO_HOST)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "kind %d is not supported: 2D copies are ACL_MEMCPY_HOST_TO_DEVICE or "
                            "ACL_MEMCPY_DEVICE_TO_HOST", (int)kind);
    if (width == 0 || height == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is 0", width ? "height" : "width");
    if (dpitch < width || spitch < width)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%s %zu is smaller than width %zu (rows would overlap)",
                            dpitch < width ? "dpitch" : "spitch", dpitch < width ? dpitch : spitch,
                            width);
    size_t dspan, sspan, bytes;
    if (__builtin_mul_overflow(dpitch, height - 1, &dspan) || __builtin_add_overflow(dspan, width, &dspan) ||
        __builtin_mul_overflow(spitch, height - 1, &sspan) || __builtin_add_overflow(sspan, width, &sspan) ||
        __builtin_mul_overflow(width, height, &bytes))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "the copy's extent (pitch x height) overflows the address space");
    /* Each side is checked over the whole extent its rows cover. */
    struct aclsim__where wd, ws;
    aclError err = aclsim__check_copy(api, dst, src, 1, (int)kind, &wd, &ws);
    if (!err)
        err = aclsim__check_range(api, "dst", dst, dspan, wd);
    if (!err)
        err = aclsim__check_range(api, "src", src, sspan, ws);
    if (!err && (char *)dst < (const char *)src + sspan && (const char *)src < (char *)dst + dspan)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "src and dst overlap");
    if (err)
        return err;
    *task = (struct aclsim__task){.kind = ACLSIM_TASK_COPY2D, .bytes = bytes,
                                  .u.copy2d = {dst, src, dpitch, spitch, width}};
    *pageable = wd.kind == ACLSIM_HOST || ws.kind == ACLSIM_HOST;
    return ACL_SUCCESS;
}

aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                       size_t height, aclrtMemcpyKind kind)
{
    static const char api[] = "aclrtMemcpy2d";
    struct aclsim__task t;
    bool pageable;
    aclError err = check_2d(api, dst, dpitch, src, spitch, width, height, kind, &t, &pageable);
    if (!err)
        err = aclsim__snapshot_check(api);
    struct aclsim__context *ctx = NULL;
    if (!err)
        err = aclsim__current_context(api, &ctx);
    if (!err)
        err = aclsim__capture_mode_check(api);   /* 107030 during a capture (modelri-capture.c) */
    struct aclsim__heap_hold hold;
    if (err || (err = aclsim__hold_heaps(api, &hold, dst, src)))
        return err;
    /* Checked again under the locks, then synchronous and (like aclrtMemcpy)
     * not ordered with queued work. */
    err = check_2d(api, dst, dpitch, src, spitch, width, height, kind, &t, &pageable);
    if (!err) {
        bool guard = aclsim__memory_write_begin();   /* memory waits (wait.c) */
        aclsim__execute_copy_variant(&t);
        aclsim__memory_write_end(guard);
    }
    aclsim__release_heaps(&hold);
    return err;
}

aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                            size_t height, aclrtMemcpyKind kind, aclrtStream stream)
{
    static const char api[] = "aclrtMemcpy2dAsync";
    struct aclsim__task t;
    bool pageable;
    aclError err = check_2d(api, dst, dpitch, src, spitch, width, height, kind, &t, &pageable);
    struct aclsim__sref s;
    if (!err)
        err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (!err && pageable && s.s == aclsim__tls_stream)
        err = aclsim__refuse_self_wait(api, "this stream (a copy with ordinary host memory "
                                            "waits for the stream)");
    return err ? err : aclsim__submit_maybe_wait(s, &t, pageable, "2D copy", api);
}

/* The checks of both 32-bit memsets; *w tells where ptr lives. */
static aclError check_d32(const char *api, void *ptr, size_t memSize, size_t n,
                          struct aclsim__where *w)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!ptr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ptr is NULL");
    if ((uintptr_t)ptr % 4)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ptr %p is not 4-byte aligned", ptr);
    if (n > memSize / 4)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "N %zu values of 4 bytes do not fit in memSize %zu", n, memSize);
    *w = aclsim__classify(ptr);
    if (w->kind == ACLSIM_HOST)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "ptr %p is ordinary host memory (aclrtMalloc or aclrtMallocHost "
                            "memory expected)", ptr);
    return aclsim__check_range(api, "ptr", ptr, n * 4, *w);
}

/* A 32-bit memset at once, on the caller's thread, holding the heap lock. */
static aclError memset32_now(const char *api, void *ptr, size_t memSize, uint32_t value, size_t n)
{
    struct aclsim__heap_hold hold;
    aclError err = aclsim__hold_heaps(api, &hold, ptr, NULL);
    if (err)
        return err;
    struct aclsim__where w;
    if (!(err = check_d32(api, ptr, memSize, n, &w))) {
        struct aclsim__task t = {.kind = ACLSIM_TASK_MEMSET32, .bytes = n * 4,
                                 .u.memset32 = {ptr, value}};
        bool guard = aclsim__memory_write_begin();   /* memory waits (wait.c) */
        aclsim__execute_copy_variant(&t);            /* no stream or device sync */
        aclsim__memory_write_end(guard);
    }
    aclsim__release_heaps(&hold);
    return err;
}

aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value, size_t N)
{
    static const char api[] = "aclrtMemsetD32";
    struct aclsim__where w;
    aclError err = check_d32(api, ptr, memSize, N, &w);
    if (!err)
        err = aclsim__snapshot_check(api);   /* before any heap lock is held */
    return err ? err : memset32_now(api, ptr, memSize, value, N);
}

aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value, size_t N, aclrtStream stream)
{
    static const char api[] = "aclrtMemsetD32Async";
    struct aclsim__where w;
    aclError err = check_d32(api, ptr, memSize, N, &w);
    if (!err)
        err = aclsim__snapshot_check(api);
    if (err)
        return err;
    if (w.kind == ACLSIM_PINNED || w.kind == ACLSIM_REGISTERED)   /* host memory: at once (CANN) */
        return memset32_now(api, ptr, memSize, value, N);
    struct aclsim__task t = {.kind = ACLSIM_TASK_MEMSET32, .bytes = N * 4, .u.memset32 = {ptr, value}};
    struct aclsim__sref s;
    if ((err = aclsim__stream_resolve(stream, api, NULL, &s)))
        return err;
    return aclsim__submit(s, &t, api, NULL);
}
