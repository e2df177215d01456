/*
 * Floating-point overflow: each device's saturation mode (aclrtSetDeviceSatMode:
 * streams created afterwards use it), each stream's overflow-detection switch,
 * and the device's overflow status, which kernels raise through
 * aclsimReportFloatOverflow and stream tasks read into device memory or clear
 * (aclrtGetOverflowStatus / aclrtResetOverflowStatus and their aliases). As on
 * the A2/A3/950 products, the status is per process and device, not per stream.
 *
 * Status layout (ours: CANN does not document the bytes): the 64-byte buffer
 * is zeroed, and its first uint32_t is 1 when an overflow was recorded.
 */
#include "internal.h"

#include <string.h>

#define STATUS_SIZE 64

_Thread_local struct aclsim__device *aclsim__tls_kernel_device;
_Thread_local uint8_t aclsim__tls_sat_mode;
_Thread_local bool aclsim__tls_overflow_check;

void aclsimReportFloatOverflow(void)
{
    struct aclsim__device *dev = aclsim__tls_kernel_device;
    if (!dev || !aclsim__tls_overflow_check)
        return;
    atomic_store_explicit(&dev->float_overflow, true, memory_order_relaxed);
    /* The context's overflow word, if the program asked for its address. */
    struct aclsim__stream *s = aclsim__tls_stream;
    uint32_t *word = s ? atomic_load(&s->context->overflow_addr) : NULL;
    if (word)
        __atomic_store_n(word, 1u, __ATOMIC_RELAXED);
}

aclError aclrtCtxGetFloatOverflowAddr(void **overflowAddr)
{
    static const char api[] = "aclrtCtxGetFloatOverflowAddr";
    ACLSIM_REQUIRE_INIT(api);
    if (!overflowAddr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "overflowAddr is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    void *addr = atomic_load(&ctx->overflow_addr);
    if (!addr) {
        void *fresh = aclsim__heap_alloc(&aclsim__context_device(ctx)->heap, STATUS_SIZE, 64,
                                         ACLSIM_ALLOC_MALLOC, NULL);
        if (!fresh)
            return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                                "device %d has no room for the %d-byte overflow word",
                                aclsim__context_device(ctx)->id, STATUS_SIZE);
        memset(fresh, 0, STATUS_SIZE);
        if (atomic_compare_exchange_strong(&ctx->overflow_addr, &addr, fresh))
            addr = fresh;
        else   /* another thread made it first */
            aclsim__heap_free(&aclsim__context_device(ctx)->heap, fresh, ACLSIM_ALLOC_MALLOC);
    }
    *overflowAddr = addr;
    return ACL_SUCCESS;
}

int aclsimFloatOverflowMode(void)
{
    if (aclsim__tls_kernel_device)
        return aclsim__tls_sat_mode;
    struct aclsim__context *ctx = NULL;   /* outside a kernel: the current device's */
    if (!aclsim__initialized() || aclsim__current_context("aclsimFloatOverflowMode", &ctx))
        return ACL_RT_OVERFLOW_MODE_SATURATION;
    return atomic_load(&aclsim__context_device(ctx)->sat_mode);
}

void aclsim__execute_overflow(struct aclsim__device *dev, struct aclsim__task *t)
{
    if (t->u.overflow.clear) {
        atomic_store(&dev->float_overflow, false);
        return;
    }
    uint32_t flag = atomic_load(&dev->float_overflow) ? 1 : 0;
    memset(t->u.overflow.dst, 0, t->bytes);
    memcpy(t->u.overflow.dst, &flag, sizeof flag);
}

/* Products with a per-stream overflow switch and status: A2, A3, Ascend 950. */
#define MODERN (ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A5))

aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode)
{
    static const char api[] = "aclrtSetDeviceSatMode";
    ACLSIM_REQUIRE_INIT(api);
    if (mode != ACL_RT_OVERFLOW_MODE_SATURATION && mode != ACL_RT_OVERFLOW_MODE_INFNAN)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "mode %d is invalid: ACL_RT_OVERFLOW_MODE_SATURATION (0) or "
                            "ACL_RT_OVERFLOW_MODE_INFNAN (1)", (int)mode);
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__current_context(api, &ctx);
    if (!err)
        atomic_store(&aclsim__context_device(ctx)->sat_mode, (unsigned char)mode);
    return err;
}

aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode)
{
    static const char api[] = "aclrtGetDeviceSatMode";
    ACLSIM_REQUIRE_INIT(api);
    if (!mode)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "mode is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = aclsim__current_context(api, &ctx);
    if (!err)
        *mode = (aclrtFloatOverflowMode)atomic_load(&aclsim__context_device(ctx)->sat_mode);
    return err;
}

aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag)
{
    static const char api[] = "aclrtSetStreamOverflowSwitch";
    ACLSIM_REQUIRE_INIT(api);
    if (flag > 1)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "flag %u is invalid: 0 (off) or 1 (on)",
                            flag);
    struct aclsim__sref ref;
    aclError err = aclsim__soc_check(api, MODERN);
    if (!err)
        err = aclsim__stream_resolve(stream, api, NULL, &ref);
    if (!err)   /* tasks already queued keep the switch they were launched with */
        atomic_store(&ref.s->overflow_check, flag == 1);
    return err;
}

aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag)
{
    static const char api[] = "aclrtGetStreamOverflowSwitch";
    ACLSIM_REQUIRE_INIT(api);
    if (!flag)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "flag is NULL");
    struct aclsim__sref ref;
    aclError err = aclsim__soc_check(api, MODERN);
    if (!err)
        err = aclsim__stream_resolve(stream, api, NULL, &ref);
    if (!err)
        *flag = atomic_load(&ref.s->overflow_check) ? 1 : 0;
    return err;
}

/* Queues a status read (into outputAddr) or clear on stream. */
static aclError queue_status(const char *api, void *outputAddr, uint64_t outputSize,
                             aclrtStream stream, bool clear)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!clear) {
        if (!outputAddr)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "outputAddr is NULL");
        if (outputSize != STATUS_SIZE)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "outputSize %llu is invalid: the status takes %d bytes",
                                (unsigned long long)outputSize, STATUS_SIZE);
    }
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (err)
        return err;
    if (!clear) {
        struct aclsim__where w = aclsim__classify(outputAddr);
        if (w.kind != ACLSIM_DEVICE)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "outputAddr %p is not device memory (aclrtMalloc)", outputAddr);
        if ((err = aclsim__check_range(api, "outputAddr", outputAddr, STATUS_SIZE, w)))
            return err;
    }
    struct aclsim__sref ref;
    if ((err = aclsim__stream_resolve(stream, api, NULL, &ref)))
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_OVERFLOW, .bytes = clear ? 0 : STATUS_SIZE,
                             .u.overflow = {outputAddr, clear}};
    return aclsim__submit(ref, &t, api, NULL);
}

aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize, aclrtStream stream)
{
    return queue_status("aclrtGetOverflowStatus", outputAddr, outputSize, stream, false);
}

aclError aclrtResetOverflowStatus(aclrtStream stream)
{
    return queue_status("aclrtResetOverflowStatus", NULL, 0, stream, true);
}

aclError aclrtGetFloatOverflowStatus(void *outputAddr, uint64_t outputSize, aclrtStream stream)
{
    return queue_status("aclrtGetFloatOverflowStatus", outputAddr, outputSize, stream, false);
}

aclError aclrtResetFloatOverflowStatus(aclrtStream stream)
{
    return queue_status("aclrtResetFloatOverflowStatus", NULL, 0, stream, true);
}

/* checkMode selects which status the NPU reports; aclsim keeps one. */
aclError aclrtNpuGetFloatOverFlowStatus(void *outputAddr, uint64_t outputSize, uint32_t checkMode,
                                        aclrtStream stream)
{
    (void)checkMode;
    return queue_status("aclrtNpuGetFloatOverFlowStatus", outputAddr, outputSize, stream, false);
}

aclError aclrtNpuClearFloatOverFlowStatus(uint32_t checkMode, aclrtStream stream)
{
    (void)checkMode;
    return queue_status("aclrtNpuClearFloatOverFlowStatus", NULL, 0, stream, true);
}
