/*
 * aclrtRandomNumAsync: a built-in stream task that writes random numbers,
 * generated with Philox4x32-10 (the counter-based generator CANN's hardware
 * uses for every distribution it offers), keyed by the 64-bit seed and
 * started at the 128-bit counter read from randomCounterAddr when the task
 * runs. The same seed, counter and parameters give the same numbers on every
 * run and device; the counter is read, never written.
 *
 * Element i uses Philox block counter + i (the low 64 bits carry into the
 * high ones):
 *  - uniform: integers min + r mod (max - min) from 64 random bits (min when
 *    max <= min); floats min + u (max - min), u in [0, 1) with 24 bits;
 *  - normal: Box-Muller, mean + stddev z;
 *  - truncated normal: z restricted to [-2, 2] (two standard deviations): a
 *    draw outside is replaced by the block's second Box-Muller value, then by
 *    fresh blocks (the high 64 bits of the counter count the attempts);
 *  - dropout bitmask: bit j (least significant bit first in each byte) is 1,
 *    kept, with probability 1 - ratio; randomNum bits, ceil(randomNum / 8)
 *    bytes, spare bits of the last byte 0.
 * Parameters given by address (isAddr 1) are read when the task runs.
 * See docs/memory-copies.md.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Philox4x32-10 ------------------------------------------------------------ */

static void philox(uint32_t ctr[4], uint32_t k0, uint32_t k1, uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0;
        c1 = (uint32_t)p1;
        c2 = n2;
        c3 = (uint32_t)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

struct gen {
    uint32_t k0, k1;
    uint64_t lo, hi;   /* the task's starting counter */
};

/* Block i of attempt a. */
static void block(const struct gen *g, uint64_t i, uint64_t a, uint32_t out[4])
{
    uint64_t lo = g->lo + i, hi = g->hi + (lo < g->lo) + a;
    uint32_t ctr[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi, (uint32_t)(hi >> 32)};
    philox(ctr, g->k0, g->k1, out);
}

static double unit_open(uint32_t a, uint32_t b)   /* (0, 1], 53 bits */
{
    uint64_t x = (((uint64_t)a << 32) | b) >> 11;
    return ((double)x + 1.0) * (1.0 / 9007199254740992.0);
}

/* Two standard normal values from one block (Box-Muller). */
static void normal_pair(const uint32_t w[4], double *z0, double *z1)
{
    double r = sqrt(-2.0 * log(unit_open(w[0], w[1])));
    double th = 6.283185307179586 * unit_open(w[2], w[3]);
    *z0 = r * cos(th);
    *z1 = r * sin(th);
}

/* ---- the task ------------------------------------------------------------------- */

struct random_info {
    aclrtRandomNumTaskInfo ti;
    size_t elem;            /* bytes per value of ti.dataType */
};

static size_t type_size(int type)
{
    switch (type) {
    case ACL_INT32: case ACL_UINT32: case ACL_FLOAT: return 4;
    case ACL_INT64: case ACL_UINT64: return 8;
    case ACL_BF16: case ACL_FLOAT16: return 2;
    default: return 0;
    }
}

/* The raw bytes of a parameter: its value, or what its address holds now. */
static uint64_t raw_param(const aclrtRandomParaInfo *p, size_t bytes)
{
    uint64_t v = 0;
    if (p->isAddr) {
        const void *addr;
        memcpy(&addr, p->valueOrAddr, sizeof addr);
        memcpy(&v, addr, bytes);
    } else {
        memcpy(&v, p->valueOrAddr, p->size);
    }
    return v;
}

/* A parameter of the task's data type as a double (integers exactly up to
 * 2^53) and as a 64-bit integer (integer types). */
static double param_double(const struct random_info *r, const aclrtRandomParaInfo *p, int64_t *as_int)
{
    uint64_t v = raw_param(p, r->elem);
    double d = 0;
    int64_t n = 0;
    switch (r->ti.dataType) {
    case ACL_FLOAT: { float f; uint32_t b = (uint32_t)v; memcpy(&f, &b, 4); d = f; break; }
    case ACL_FLOAT16: d = aclFloat16ToFloat((aclFloat16)v); break;
    case ACL_BF16: d = aclsim__bf16_to_float((uint16_t)v); break;
    case ACL_INT32: n = (int32_t)(uint32_t)v; d = (double)n; break;
    case ACL_UINT32: n = (uint32_t)v; d = (double)n; break;
    default: n = (int64_t)v; d = (double)n; break;   /* INT64, UINT64 (bits) */
    }
    if (as_int)
        *as_int = n;
    return d;
}

static void store_float(void *out, uint64_t i, int type, double v)
{
    if (type == ACL_FLOAT)
        ((float *)out)[i] = (float)v;
    else if (type == ACL_FLOAT16)
        ((aclFloat16 *)out)[i] = aclFloatToFloat16((float)v);
    else
        ((uint16_t *)out)[i] = aclsim__float_to_bf16((float)v);
}

static void uniform(const struct random_info *r, const struct gen *g, void *out, uint64_t num)
{
    const aclrtUniformDisInfo *u = &r->ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo;
    int type = r->ti.dataType;
    int64_t imin, imax;
    double fmin = param_double(r, &u->min, &imin), fmax = param_double(r, &u->max, &imax);
    bool is_unsigned = type == ACL_UINT32 || type == ACL_UINT64;
    uint64_t range = (uint64_t)imax - (uint64_t)imin;
    bool empty = is_unsigned ? (uint64_t)imax <= (uint64_t)imin : imax <= imin;
    for (uint64_t i = 0; i < num; i++) {
        uint32_t w[4];
        block(g, i, 0, w);
        uint64_t bits = ((uint64_t)w[0] << 32) | w[1];
        uint64_t v = empty ? (uint64_t)imin : (uint64_t)imin + bits % range;
        switch (type) {
        case ACL_INT32: case ACL_UINT32: ((uint32_t *)out)[i] = (uint32_t)v; break;
        case ACL_INT64: case ACL_UINT64: ((uint64_t *)out)[i] = v; break;
        default:
            store_float(out, i, type, fmin + (double)(w[0] >> 8) * (1.0 / 16777216.0) * (fmax - fmin));
        }
    }
}

static void normal(const struct random_info *r, const struct gen *g, void *out, uint64_t num,
                   bool truncated)
{
    const aclrtNormalDisInfo *n = &r->ti.randomNumFuncParaInfo.paramInfo.normalDisInfo;
    double mean = param_double(r, &n->mean, NULL), sd = param_double(r, &n->stddev, NULL);
    for (uint64_t i = 0; i < num; i++) {
        double z0 = 0, z1 = 0;
        for (uint64_t a = 0;; a++) {
            uint32_t w[4];
            block(g, i, a, w);
            normal_pair(w, &z0, &z1);
            if (!truncated || fabs(z0) <= 2.0)
                break;
            if (fabs(z1) <= 2.0) {
                z0 = z1;
                break;
            }
        }
        store_float(out, i, r->ti.dataType, mean + sd * z0);
    }
}

static void dropout(const struct random_info *r, const struct gen *g, uint8_t *out, uint64_t num)
{
    double ratio = param_double(r, &r->ti.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation,
                                NULL);
    memset(out, 0, (size_t)((num + 7) / 8));
    uint32_t w[4];
    for (uint64_t j = 0; j < num; j++) {
        if (j % 4 == 0)
            block(g, j / 4, 0, w);
        double u = (double)w[j % 4] * (1.0 / 4294967296.0);
        if (u >= ratio)
            out[j / 8] |= (uint8_t)(1u << (j % 8));
    }
}

/* Bytes the result of num values takes. */
static uint64_t result_bytes(const aclrtRandomNumTaskInfo *ti, size_t elem, uint64_t num)
{
    if (ti->randomNumFuncParaInfo.funcType == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK)
        return (num + 7) / 8;
    return num > UINT64_MAX / elem ? UINT64_MAX : num * elem;
}

void aclsim__execute_random(struct aclsim__task *t)
{
    const struct random_info *r = t->u.random.data;
    const aclrtRandomNumTaskInfo *ti = &r->ti;
    uint64_t seed = raw_param(&ti->randomSeed, 8), num = raw_param(&ti->randomNum, 8);
    uint32_t c[4];
    memcpy(c, ti->randomCounterAddr, sizeof c);
    struct gen g = {(uint32_t)seed, (uint32_t)(seed >> 32), ((uint64_t)c[1] << 32) | c[0],
                    ((uint64_t)c[3] << 32) | c[2]};
    /* A count given by address is only known now: never write past the
     * result's allocation. */
    struct aclsim__where w = aclsim__classify(ti->randomResultAddr);
    struct aclsim__alloc a;
    if (w.kind == ACLSIM_DEVICE && aclsim__heap_find(&w.device->heap, ti->randomResultAddr, &a)) {
        uint64_t room = a.size - ((uintptr_t)ti->randomResultAddr - a.addr);
        if (result_bytes(ti, r->elem, num) > room) {
            aclsim__log(ACLSIM_LOG_ERROR,
                        "aclrtRandomNumAsync: %llu values do not fit in the result's allocation; "
                        "only the %llu bytes that do are written", (unsigned long long)num,
                        (unsigned long long)room);
            num = ti->randomNumFuncParaInfo.funcType == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK
                      ? room * 8 : room / r->elem;
        }
    }
    switch (ti->randomNumFuncParaInfo.funcType) {
    case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK: dropout(r, &g, ti->randomResultAddr, num); break;
    case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS: uniform(r, &g, ti->randomResultAddr, num); break;
    case ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS: normal(r, &g, ti->randomResultAddr, num, false); break;
    default: normal(r, &g, ti->randomResultAddr, num, true); break;
    }
}

/* ---- checks ------------------------------------------------------------------------ */

static const char *const func_names[] = {"dropout bitmask", "uniform", "normal", "truncated normal"};

/* CANN's check of one parameter: isAddr 0 or 1, size 1..max (8 for an
 * address); an address must hold need bytes of the stream's device memory. */
static aclError check_param(const char *api, const char *name, const aclrtRandomParaInfo *p,
                            size_t data_size, size_t need, struct aclsim__device *dev)
{
    if (p->isAddr > 1)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s.isAddr %u is neither 0 nor 1", name,
                            p->isAddr);
    size_t max = p->isAddr ? 8 : data_size;
    if (p->size == 0 || p->size > max)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s.size %u is not in [1, %zu]", name,
                            p->size, max);
    if (!p->isAddr)
        return ACL_SUCCESS;
    void *addr;
    memcpy(&addr, p->valueOrAddr, sizeof addr);
    struct aclsim__where w = aclsim__classify(addr);
    if (!addr || w.kind != ACLSIM_DEVICE || w.device != dev)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%s is given by address %p, which is not memory of the stream's device %d",
                            name, addr, dev->id);
    return aclsim__check_range(api, name, addr, need, w);
}

/* A pointer field of the task: memory of the stream's device, bytes long. */
static aclError check_buffer(const char *api, const char *name, void *p, uint64_t bytes,
                             struct aclsim__device *dev)
{
    return aclsim__check_on_device(api, name, p, bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes, dev);
}

static aclError check_task(const char *api, const aclrtRandomNumTaskInfo *ti, size_t elem,
                           struct aclsim__device *dev)
{
    int f = ti->randomNumFuncParaInfo.funcType;
    int type = ti->dataType;
    if (f < ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK || f > ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "funcType %d is not an aclrtRandomNumFuncType value", f);
    bool is_float = type == ACL_FLOAT || type == ACL_FLOAT16 || type == ACL_BF16;
    if (f != ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS && !is_float)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "the %s distribution takes bf16, fp16 or fp32, not data type %d",
                            func_names[f], type);
    if (!ti->randomCounterAddr || !ti->randomResultAddr)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "taskInfo->%s is NULL",
                            !ti->randomCounterAddr ? "randomCounterAddr" : "randomResultAddr");
    aclError err = check_param(api, "randomSeed", &ti->randomSeed, 8, 8, dev);
    if (!err)
        err = check_param(api, "randomNum", &ti->randomNum, 8, 8, dev);
    const aclrtRandomNumFuncParaInfo *fp = &ti->randomNumFuncParaInfo;
    if (!err && f == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK)
        err = check_param(api, "dropoutRation", &fp->paramInfo.dropoutBitmaskInfo.dropoutRation, elem,
                          elem, dev);
    else if (!err && f == ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS) {
        err = check_param(api, "min", &fp->paramInfo.uniformDisInfo.min, elem, elem, dev);
        if (!err)
            err = check_param(api, "max", &fp->paramInfo.uniformDisInfo.max, elem, elem, dev);
    } else if (!err) {
        err = check_param(api, "mean", &fp->paramInfo.normalDisInfo.mean, elem, elem, dev);
        if (!err)
            err = check_param(api, "stddev", &fp->paramInfo.normalDisInfo.stddev, elem, elem, dev);
    }
    if (!err)
        err = check_buffer(api, "randomCounterAddr", ti->randomCounterAddr, 16, dev);
    if (!err && !ti->randomNum.isAddr) {
        uint64_t num = raw_param(&ti->randomNum, 8);
        err = check_buffer(api, "randomResultAddr", ti->randomResultAddr,
                           num ? result_bytes(ti, elem, num) : 1, dev);
    } else if (!err) {
        err = check_buffer(api, "randomResultAddr", ti->randomResultAddr, 1, dev);
    }
    if (!err && ti->randomParaAddr)
        err = check_buffer(api, "randomParaAddr", ti->randomParaAddr, 16, dev);
    return err;
}

/* Writes the two distribution parameters (raw, 8 bytes each) where the
 * caller asked for them, as CANN does before it queues the task. */
static aclError write_params(const char *api, const aclrtRandomNumTaskInfo *ti)
{
    const aclrtRandomNumFuncParaInfo *f = &ti->randomNumFuncParaInfo;
    const aclrtRandomParaInfo *first, *second = NULL;
    if (f->funcType == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK)
        first = &f->paramInfo.dropoutBitmaskInfo.dropoutRation;
    else if (f->funcType == ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS)
        first = &f->paramInfo.uniformDisInfo.min, second = &f->paramInfo.uniformDisInfo.max;
    else
        first = &f->paramInfo.normalDisInfo.mean, second = &f->paramInfo.normalDisInfo.stddev;
    uint64_t block[2] = {0, 0};
    memcpy(&block[0], first->valueOrAddr, first->size);
    if (second)
        memcpy(&block[1], second->valueOrAddr, second->size);
    struct aclsim__heap_hold hold;
    aclError err = aclsim__hold_heaps(api, &hold, ti->randomParaAddr, NULL);
    if (err)
        return err;
    err = aclsim__check_range(api, "randomParaAddr", ti->randomParaAddr, sizeof block,
                              aclsim__classify(ti->randomParaAddr));
    if (!err)
        memcpy(ti->randomParaAddr, block, sizeof block);
    aclsim__release_heaps(&hold);
    return err;
}

aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo, const aclrtStream stream,
                             void *reserve)
{
    static const char api[] = "aclrtRandomNumAsync";
    ACLSIM_REQUIRE_INIT(api);
    if (!taskInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "taskInfo is NULL");
    size_t elem = type_size(taskInfo->dataType);
    if (!elem)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "taskInfo->dataType %d is not supported: ACL_INT32, ACL_INT64, "
                            "ACL_UINT32, ACL_UINT64, ACL_BF16, ACL_FLOAT16 or ACL_FLOAT",
                            (int)taskInfo->dataType);
    if (reserve)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "reserve must be NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3));
    struct aclsim__context *ctx = NULL;
    struct aclsim__sref s;
    if (!err)
        err = aclsim__stream_resolve(stream, api, &ctx, &s);
    if (!err)
        err = check_task(api, taskInfo, elem, s.s->device);
    if (!err && taskInfo->randomParaAddr)
        err = write_params(api, taskInfo);
    if (err)
        return err;
    struct random_info *r = aclsim__malloc(sizeof *r);
    if (!r)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    r->ti = *taskInfo;
    r->elem = elem;
    struct aclsim__task t = {.kind = ACLSIM_TASK_RANDOM, .bytes = 0, .u.random = {r}};
    err = aclsim__submit(s, &t, api, NULL);
    if (err)
        free(r);
    return err;
}
