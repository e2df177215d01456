/*
 * Stream memory operations: aclrtValueWrite queues a task that stores a
 * 64-bit value in device memory; aclrtValueWait queues a task that holds its
 * stream until the 64-bit value there satisfies a comparison (GEQ, EQ, AND,
 * NOR). Whatever writes the memory releases the wait: a value write on any
 * stream, a copy, memset or kernel, a host aclrtMemcpy. A waiting stream is
 * parked on the watcher (wait.c), which evaluates it when something that
 * writes device memory finishes and periodically, reading the memory
 * atomically under the memory guard so the accesses are ordered with the
 * writers.
 */
#include "internal.h"

#define VALUE_SOCS ACLSIM_A5_A3_A2

static bool compare(uint64_t cur, uint64_t value, uint32_t flag)
{
    switch (flag) {
    case ACL_STREAM_WAIT_VALUE_GEQ: return (int64_t)(cur - value) >= 0;
    case ACL_STREAM_WAIT_VALUE_EQ: return cur == value;
    case ACL_STREAM_WAIT_VALUE_AND: return (cur & value) != 0;
    default: return ~(cur | value) != 0;   /* NOR */
    }
}

/* Whether the 8 bytes at p are still in a live allocation. Freeing memory a
 * queued wait or write uses is the program's error; this keeps it from
 * touching memory a device reset has unmapped (freed memory reads as 0). */
static bool still_allocated(const void *p)
{
    struct aclsim__where w = aclsim__classify(p);
    struct aclsim__alloc a;
    return w.kind == ACLSIM_DEVICE && aclsim__heap_find(&w.device->heap, p, &a) &&
           (uintptr_t)p + 8 <= a.addr + a.size;
}

/* With the memory guard held (or nobody writing): the comparison now. */
static bool value_poll(struct aclsim__task *t)
{
    const uint64_t *p = t->u.sync.obj;
    uint64_t cur = still_allocated(p) ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : 0;
    return compare(cur, t->u.sync.value, t->u.sync.mode);
}

static bool value_ready(struct aclsim__task *t)
{
    return aclsim__memory_check(t);
}

static bool value_park(struct aclsim__task *t, struct aclsim__stream *s)
{
    if (aclsim__memory_check(t))
        return false;
    s->state = ACLSIM_STREAM_PARKED;   /* only the watcher's list holds it */
    return true;
}

static void value_write(struct aclsim__task *t, bool discarded)
{
    if (discarded)
        return;
    if (!still_allocated(t->u.sync.obj))
        return;
    bool guard = aclsim__memory_write_begin();   /* tells parked waits to look */
    __atomic_store_n((uint64_t *)t->u.sync.obj, t->u.sync.value, __ATOMIC_RELEASE);
    aclsim__memory_write_end(guard);
}

static const struct aclsim__wait_ops wait_ops = {
    .what = "a memory value", .ready = value_ready, .park = value_park, .poll = value_poll};
static const struct aclsim__wait_ops write_ops = {.what = "a memory value", .signal = value_write};

/* The checks both calls share after their flag check: devAddr must be 8
 * bytes of device memory, 8-byte aligned; then the stream. */
static aclError check_addr_and_stream(void *devAddr, aclrtStream stream, const char *api,
                                      struct aclsim__sref *s)
{
    struct aclsim__where w = aclsim__classify(devAddr);
    struct aclsim__alloc a;
    if (w.kind != ACLSIM_DEVICE || !aclsim__heap_find(&w.device->heap, devAddr, &a))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "devAddr %p is not device memory (allocate it with aclrtMalloc)",
                            devAddr);
    if ((uintptr_t)devAddr % 8 != 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "devAddr %p is not 8-byte aligned (the value is 64 bits)", devAddr);
    if ((uintptr_t)devAddr - a.addr > a.size || a.size - ((uintptr_t)devAddr - a.addr) < 8)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "devAddr %p: the 8 bytes there run past the end of its allocation "
                            "(%zu bytes at %#lx)", devAddr, a.size, (unsigned long)a.addr);
    return aclsim__stream_resolve(stream, api, NULL, s);
}

static aclError first_checks(void *devAddr, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!devAddr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "devAddr is NULL");
    return aclsim__soc_check(api, VALUE_SOCS);
}

aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)
{
    static const char api[] = "aclrtValueWrite";
    aclError err = first_checks(devAddr, api);
    if (err)
        return err;
    if (flag != 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flag %u is invalid: it is reserved and must be 0", flag);
    struct aclsim__sref s;
    if ((err = check_addr_and_stream(devAddr, stream, api, &s)))
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_SIGNAL, .bytes = 8,
                             .u.sync = {.ops = &write_ops, .obj = devAddr, .value = value}};
    return aclsim__submit(s, &t, api, NULL);
}

aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)
{
    static const char api[] = "aclrtValueWait";
    aclError err = first_checks(devAddr, api);
    if (err)
        return err;
    if (flag > ACL_STREAM_WAIT_VALUE_NOR)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flag %u is invalid: ACL_STREAM_WAIT_VALUE_GEQ (0), EQ (1), AND (2) "
                            "or NOR (3)", flag);
    struct aclsim__sref s;
    if ((err = check_addr_and_stream(devAddr, stream, api, &s)))
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_WAIT, .bytes = 8,
                             .u.sync = {.ops = &wait_ops, .obj = devAddr, .value = value,
                                        .mode = flag}};
    return aclsim__submit(s, &t, api, NULL);
}
