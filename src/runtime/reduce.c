/*
 * aclrtReduceAsync: a built-in stream task that combines src into dst
 * element-wise over count bytes, dst[i] = dst[i] op src[i], with op SUM, MAX,
 * MIN or EQUAL (1 where the elements are equal, else 0), as CANN's reduce
 * sample shows.
 *
 * Integers are exact (SUM wraps around in two's complement); fp32 is computed
 * in float; fp16 and bf16 are widened to float, combined and rounded back to
 * nearest even, so a result is within half a unit in the last place of the
 * exact one. MAX and MIN of a NaN give NaN. Whole elements only: trailing
 * bytes of a count that is not a multiple of the element size are left alone.
 * See docs/memory-copies.md.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

float aclsim__bf16_to_float(uint16_t v)
{
    uint32_t bits = (uint32_t)v << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t aclsim__float_to_bf16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)   /* NaN: keep it a (quiet) NaN */
        return (uint16_t)((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u);      /* round to nearest even */
    return (uint16_t)(bits >> 16);
}

static float combine_float(float a, float b, int kind)
{
    switch (kind) {
    case ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM: return a + b;
    case ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX: return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
    case ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN: return isnan(a) || isnan(b) ? NAN : (a < b ? a : b);
    default: return a == b ? 1.0f : 0.0f;
    }
}

/* One loop per integer type: the sum is done in the unsigned type (wraps). */
#define REDUCE_INT(T, U)                                                            \
    do {                                                                            \
        T *d = dst;                                                                 \
        const T *s = src;                                                           \
        for (size_t i = 0; i < n; i++) {                                            \
            T a = d[i], b = s[i];                                                   \
            switch (kind) {                                                         \
            case ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM: d[i] = (T)(U)((U)a + (U)b); break; \
            case ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX: d[i] = a > b ? a : b; break;       \
            case ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN: d[i] = a < b ? a : b; break;       \
            default: d[i] = (T)(a == b); break;                                      \
            }                                                                       \
        }                                                                           \
    } while (0)

static size_t element_size(int type)
{
    switch (type) {
    case ACL_INT8: case ACL_UINT8: return 1;
    case ACL_INT16: case ACL_UINT16: case ACL_FLOAT16: case ACL_BF16: return 2;
    case ACL_INT32: case ACL_UINT32: case ACL_FLOAT: return 4;
    default: return 0;
    }
}

void aclsim__execute_reduce(struct aclsim__task *t)
{
    void *dst = t->u.reduce.dst;
    const void *src = t->u.reduce.src;
    int kind = t->u.reduce.kind, type = t->u.reduce.type;
    size_t n = t->bytes / element_size(type);
    switch (type) {
    case ACL_INT8: REDUCE_INT(int8_t, uint8_t); break;
    case ACL_UINT8: REDUCE_INT(uint8_t, uint8_t); break;
    case ACL_INT16: REDUCE_INT(int16_t, uint16_t); break;
    case ACL_UINT16: REDUCE_INT(uint16_t, uint16_t); break;
    case ACL_INT32: REDUCE_INT(int32_t, uint32_t); break;
    case ACL_UINT32: REDUCE_INT(uint32_t, uint32_t); break;
    case ACL_FLOAT: {
        float *d = dst;
        const float *s = src;
        for (size_t i = 0; i < n; i++)
            d[i] = combine_float(d[i], s[i], kind);
        break;
    }
    case ACL_FLOAT16: {
        aclFloat16 *d = dst;
        const aclFloat16 *s = src;
        for (size_t i = 0; i < n; i++)
            d[i] = aclFloatToFloat16(combine_float(aclFloat16ToFloat(d[i]), aclFloat16ToFloat(s[i]), kind));
        break;
    }
    case ACL_BF16: {
        uint16_t *d = dst;
        const uint16_t *s = src;
        for (size_t i = 0; i < n; i++)
            d[i] = aclsim__float_to_bf16(
                combine_float(aclsim__bf16_to_float(d[i]), aclsim__bf16_to_float(s[i]), kind));
        break;
    }
    default:
        break;
    }
}

static const char *kind_name(int kind)
{
    static const char *const names[] = {"SUM", "MAX", "MIN", "EQUAL"};
    return names[kind - ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM];
}

/* CANN's per-product lists of data types (and operations). */
static aclError check_product(const char *api, int kind, int type)
{
    const struct aclsim__soc *soc = aclsim__soc_current();
    static const int a5[] = {ACL_INT8, ACL_INT16, ACL_INT32, ACL_UINT32, ACL_FLOAT16, ACL_FLOAT, ACL_BF16, -1};
    static const int a2[] = {ACL_INT8, ACL_INT16, ACL_INT32, ACL_FLOAT16, ACL_FLOAT, ACL_BF16, -1};
    static const int edge[] = {ACL_INT8, ACL_INT16, ACL_INT32, ACL_FLOAT16, ACL_FLOAT, -1};
    static const int inference[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT16, -1};
    static const int training[] = {ACL_FLOAT, -1};
    const int *types;
    switch (soc->family) {
    case ACLSIM_FAMILY_A5: types = a5; break;
    case ACLSIM_FAMILY_A2: case ACLSIM_FAMILY_A3: types = a2; break;
    case ACLSIM_FAMILY_EDGE: types = edge; break;
    case ACLSIM_FAMILY_INFERENCE: types = inference; break;
    default: types = training; break;
    }
    bool ok = false;
    for (int i = 0; types[i] >= 0; i++)
        ok |= types[i] == type;
    if (!ok)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "data type %d is not supported by reduce tasks on %s", type, soc->name);
    if (soc->family == ACLSIM_FAMILY_INFERENCE && kind != ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "%s supports only the SUM reduce, not %s", soc->name, kind_name(kind));
    if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL && soc->family != ACLSIM_FAMILY_A2 &&
        soc->family != ACLSIM_FAMILY_A3 && soc->family != ACLSIM_FAMILY_A5)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "the EQUAL reduce needs STARS hardware, which %s does not have", soc->name);
    return ACL_SUCCESS;
}

#define MAX_REDUCE_SUM_BYTES (4ull << 30)   /* CANN's limit for SUM */

aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count, aclrtReduceKind kind,
                          aclDataType type, aclrtStream stream, void *reserve)
{
    static const char api[] = "aclrtReduceAsync";
    ACLSIM_REQUIRE_INIT(api);
    if (!dst || !src)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !dst ? "dst" : "src");
    if (reserve)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "reserve must be NULL");
    if (element_size((int)type) == 0 && type != ACL_INT4)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "type %d is not a data type reduce tasks know", (int)type);
    if (count == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "count is 0");
    if ((int)kind < ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM || (int)kind > ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "kind %d is not an aclrtReduceKind value (10..13)", (int)kind);
    if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM && count > MAX_REDUCE_SUM_BYTES)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "count %llu exceeds 4 GiB, the limit of the SUM reduce",
                            (unsigned long long)count);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = check_product(api, (int)kind, (int)type);
    struct aclsim__context *ctx = NULL;
    struct aclsim__sref s;
    if (!err)
        err = aclsim__stream_resolve(stream, api, &ctx, &s);
    if (err)
        return err;
    /* Both sides: memory of the stream's device, count bytes each. */
    if ((err = aclsim__check_on_device(api, "dst", dst, (size_t)count, s.s->device)) ||
        (err = aclsim__check_on_device(api, "src", src, (size_t)count, s.s->device)))
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_REDUCE, .bytes = (size_t)count,
                             .u.reduce = {dst, src, (int32_t)kind, (int32_t)type}};
    return aclsim__submit(s, &t, api, NULL);
}
