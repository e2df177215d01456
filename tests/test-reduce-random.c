/*
 * Built-in tasks: aclrtReduceAsync (every operation and data type of the
 * configured product, results per type, integer wrap-around, half and
 * bfloat16 rounding, stream order, product limits) and aclrtRandomNumAsync
 * (reproducibility for a seed and counter, statistics of every
 * distribution, the truncation at two standard deviations, parameters by
 * address), with CANN's codes for bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "common.h"

static const aclrtReduceKind kinds[] = {ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX,
                                        ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL};

/* Runs one reduce on device copies of d and s (bytes each); d gets the result. */
static void reduce(void *d, const void *s, size_t bytes, aclrtReduceKind kind, aclDataType type)
{
    void *dd, *ds;
    EXPECT_OK(aclrtMalloc(&dd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&ds, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpy(dd, bytes, d, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(ds, bytes, s, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtReduceAsync(dd, ds, bytes, kind, type, NULL, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtMemcpy(d, bytes, dd, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_OK(aclrtFree(dd));
    EXPECT_OK(aclrtFree(ds));
}

/* CANN's reduce sample: {1,2,3,4} summed into itself gives {2,4,6,8}. */
static void test_reduce_sample(void **state)
{
    (void)state;
    float in[4] = {1, 2, 3, 4}, out[4] = {1, 2, 3, 4};
    reduce(out, in, sizeof out, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT);
    for (int i = 0; i < 4; i++)
        assert_true(out[i] == 2.0f * (float)(i + 1));
}

#define INT_CASE(T, type, a0, b0)                                                     \
    do {                                                                              \
        for (int k = 0; k < 4; k++) {                                                 \
            T d[8], s[8], want[8];                                                    \
            for (int i = 0; i < 8; i++) {                                             \
                d[i] = (T)((int64_t)(a0) + i * 7);                                         \
                s[i] = (T)(i % 3 == 0 ? d[i] : (T)((int64_t)(b0) - i * 5));                \
                T a = d[i], b = s[i];                                                 \
                want[i] = k == 0 ? (T)((int64_t)a + b) : k == 1 ? (a > b ? a : b)              \
                        : k == 2 ? (a < b ? a : b) : (T)(a == b);                     \
            }                                                                         \
            reduce(d, s, sizeof d, kinds[k], type);                                   \
            assert_memory_equal(d, want, sizeof d);                                   \
        }                                                                             \
    } while (0)

static void test_reduce_integers(void **state)
{
    (void)state;
    INT_CASE(int8_t, ACL_INT8, 100, 60);          /* 100 + 60 wraps to -96 */
    INT_CASE(int16_t, ACL_INT16, -30000, 30000);
    INT_CASE(int32_t, ACL_INT32, 2147483600, -5);
    int8_t a[1] = {127}, b[1] = {1};
    reduce(a, b, 1, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT8);
    assert_int_equal(a[0], -128);
}

static uint16_t bf16(float f)   /* exact for the values used here */
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t v)
{
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_reduce_floats(void **state)
{
    (void)state;
    const float a[6] = {1.5f, -2.0f, 0.25f, 100.0f, 3.0f, -0.5f};
    const float b[6] = {2.25f, 4.0f, 0.25f, -100.0f, 3.0f, 0.75f};
    for (int k = 0; k < 4; k++) {
        float want[6];
        for (int i = 0; i < 6; i++)
            want[i] = k == 0 ? a[i] + b[i] : k == 1 ? fmaxf(a[i], b[i]) : k == 2 ? fminf(a[i], b[i])
                    : (a[i] == b[i] ? 1.0f : 0.0f);
        float f32[6];
        memcpy(f32, a, sizeof f32);
        reduce(f32, b, sizeof f32, kinds[k], ACL_FLOAT);
        aclFloat16 h[6], hs[6];
        uint16_t bd[6], bs[6];
        for (int i = 0; i < 6; i++) {
            h[i] = aclFloatToFloat16(a[i]);
            hs[i] = aclFloatToFloat16(b[i]);
            bd[i] = bf16(a[i]);
            bs[i] = bf16(b[i]);
        }
        reduce(h, hs, sizeof h, kinds[k], ACL_FLOAT16);
        reduce(bd, bs, sizeof bd, kinds[k], ACL_BF16);
        for (int i = 0; i < 6; i++) {   /* all exact in every type */
            assert_true(f32[i] == want[i]);
            assert_true(aclFloat16ToFloat(h[i]) == want[i]);
            assert_true(from_bf16(bd[i]) == want[i]);
        }
    }
    /* Rounding: 1 + 2^-11 is not a half; it rounds to nearest even (1). */
    aclFloat16 x[1] = {aclFloatToFloat16(1.0f)}, y[1] = {aclFloatToFloat16(1.0f / 2048)};
    reduce(x, y, 2, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT16);
    assert_true(aclFloat16ToFloat(x[0]) == 1.0f);
    uint16_t p[1] = {bf16(256.0f)}, q[1] = {bf16(1.5f)};   /* 257.5 -> 258 in bf16 */
    reduce(p, q, 2, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_BF16);
    assert_true(from_bf16(p[0]) == 258.0f);
}

/* A reduce is a stream task: it runs after the copy queued before it. */
static void test_reduce_ordered(void **state)
{
    (void)state;
    aclrtStream s;
    EXPECT_OK(aclrtCreateStream(&s));
    int32_t *d, *src, *pinned;
    EXPECT_OK(aclrtMalloc((void **)&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&src, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMallocHost((void **)&pinned, 64));
    for (int i = 0; i < 16; i++)
        pinned[i] = i;
    EXPECT_OK(aclrtMemset(d, 64, 0, 64));
    EXPECT_OK(aclrtMemcpyAsync(src, 64, pinned, 64, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_OK(aclrtReduceAsync(d, src, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT32, s, NULL));
    EXPECT_OK(aclrtReduceAsync(d, src, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT32, s, NULL));
    EXPECT_OK(aclrtMemcpyAsync(pinned, 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    for (int i = 0; i < 16; i++)
        assert_int_equal(pinned[i], 2 * i);
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtFree(d));
    EXPECT_OK(aclrtFree(src));
    EXPECT_OK(aclrtFreeHost(pinned));
}

static void test_reduce_bad_input(void **state)
{
    (void)state;
    void *d, *s, *other;
    EXPECT_OK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&s, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    const aclrtReduceKind sum = ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM;
    int dummy;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dst", aclrtReduceAsync(NULL, s, 64, sum, ACL_FLOAT, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "src", aclrtReduceAsync(d, NULL, 64, sum, ACL_FLOAT, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "reserve", aclrtReduceAsync(d, s, 64, sum, ACL_FLOAT, NULL, &dummy));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "type", aclrtReduceAsync(d, s, 64, sum, ACL_DOUBLE, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "count", aclrtReduceAsync(d, s, 0, sum, ACL_FLOAT, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "kind",
               aclrtReduceAsync(d, s, 64, (aclrtReduceKind)9, ACL_FLOAT, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "kind",
               aclrtReduceAsync(d, s, 64, (aclrtReduceKind)14, ACL_FLOAT, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "4 GiB",
               aclrtReduceAsync(d, s, (5ull << 30), sum, ACL_FLOAT, NULL, NULL));
    /* In CANN's type list, but not for this product (Atlas A2). */
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "data type",
               aclrtReduceAsync(d, s, 64, sum, ACL_UINT32, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "data type", aclrtReduceAsync(d, s, 64, sum, ACL_INT4, NULL, NULL));
    float host[16];
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ordinary host memory",
               aclrtReduceAsync(d, host, 64, sum, ACL_FLOAT, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtReduceAsync(d, s, 68, sum, ACL_FLOAT, NULL, NULL));
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtMalloc(&other, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "stream's device 0",
               aclrtReduceAsync(d, other, 64, sum, ACL_FLOAT, NULL, NULL));
    EXPECT_OK(aclrtFree(d));
    EXPECT_OK(aclrtFree(s));
}

/* On the Atlas inference series only SUM, of fp32, fp16 and int16. */
static int setup_inference(void **state)
{
    setenv("ACLSIM_SOC_VERSION", "Ascend310P1", 1);
    return setup_device0(state);
}

static void test_reduce_inference_product(void **state)
{
    (void)state;
    int16_t d[4] = {1, 2, 3, 4}, s[4] = {10, 20, 30, 40};
    reduce(d, s, sizeof d, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT16);
    assert_int_equal(d[3], 44);
    void *dd;
    EXPECT_OK(aclrtMalloc(&dd, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "only the SUM",
               aclrtReduceAsync(dd, dd, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX, ACL_FLOAT, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "data type",
               aclrtReduceAsync(dd, dd, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT32, NULL, NULL));
    aclrtRandomNumTaskInfo ti = {.dataType = ACL_FLOAT};
    EXPECT_ERR(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend310P1", aclrtRandomNumAsync(&ti, NULL, NULL));
    EXPECT_OK(aclrtFree(dd));
}

/* ---- random numbers --------------------------------------------------------------- */

static void set_param(aclrtRandomParaInfo *p, const void *v, uint8_t size)
{
    memset(p, 0, sizeof *p);
    memcpy(p->valueOrAddr, v, size);
    p->size = size;
}

struct rng {
    void *counter, *out;
    size_t out_bytes;
};

static void rng_open(struct rng *r, size_t out_bytes, uint64_t ctr_lo)
{
    EXPECT_OK(aclrtMalloc(&r->counter, 16, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_OK(aclrtMalloc(&r->out, out_bytes, ACL_MEM_MALLOC_NORMAL_ONLY));
    /* Tests read the whole buffer back, also where a task wrote fewer values:
     * set it first (the checker's uninit detector, docs/checker.md). */
    EXPECT_OK(aclrtMemset(r->out, out_bytes, 0, out_bytes));
    uint64_t c[2] = {ctr_lo, 0};
    EXPECT_OK(aclrtMemcpy(r->counter, 16, c, 16, ACL_MEMCPY_HOST_TO_DEVICE));
    r->out_bytes = out_bytes;
}

static void rng_close(struct rng *r)
{
    EXPECT_OK(aclrtFree(r->counter));
    EXPECT_OK(aclrtFree(r->out));
}

static aclrtRandomNumTaskInfo task(struct rng *r, aclDataType type, aclrtRandomNumFuncType f, uint64_t seed,
                                   uint64_t num)
{
    aclrtRandomNumTaskInfo ti;
    memset(&ti, 0, sizeof ti);
    ti.dataType = type;
    ti.randomNumFuncParaInfo.funcType = f;
    ti.randomCounterAddr = r->counter;
    ti.randomResultAddr = r->out;
    set_param(&ti.randomSeed, &seed, 8);
    set_param(&ti.randomNum, &num, 8);
    return ti;
}

static void run(struct rng *r, const aclrtRandomNumTaskInfo *ti, void *host)
{
    EXPECT_OK(aclrtRandomNumAsync(ti, NULL, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtMemcpy(host, r->out_bytes, r->out, r->out_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
}

static void moments(const float *v, size_t n, double *mean, double *sd)
{
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++)
        s2 += (v[i] - *mean) * (v[i] - *mean);
    *sd = sqrt(s2 / (double)(n - 1));
}

#define N 100000

static void test_random_normal(void **state)
{
    (void)state;
    struct rng r;
    rng_open(&r, N * sizeof(float), 0);
    float mean = 3.0f, sd = 2.0f;
    aclrtRandomNumTaskInfo ti = task(&r, ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, 0, N);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean, &mean, 4);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev, &sd, 4);
    float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
    run(&r, &ti, a);
    double m, s;
    moments(a, N, &m, &s);
    assert_true(fabs(m - 3.0) < 0.03);   /* 5 standard errors */
    assert_true(fabs(s - 2.0) < 0.03);
    size_t within1 = 0, beyond2 = 0;
    for (size_t i = 0; i < N; i++) {
        within1 += fabs(a[i] - 3.0) < 2.0;
        beyond2 += fabs(a[i] - 3.0) > 4.0;
    }
    assert_true(fabs((double)within1 / N - 0.6827) < 0.01);
    assert_true(fabs((double)beyond2 / N - 0.0455) < 0.005);   /* not truncated */
    /* the same seed and counter: the same numbers */
    run(&r, &ti, b);
    assert_memory_equal(a, b, N * sizeof(float));
    /* another seed, or another counter: other numbers */
    uint64_t seed = 1;
    set_param(&ti.randomSeed, &seed, 8);
    run(&r, &ti, b);
    assert_true(memcmp(a, b, 64) != 0);
    seed = 0;
    set_param(&ti.randomSeed, &seed, 8);
    uint64_t c[2] = {0, 1};
    EXPECT_OK(aclrtMemcpy(r.counter, 16, c, 16, ACL_MEMCPY_HOST_TO_DEVICE));
    run(&r, &ti, b);
    assert_true(memcmp(a, b, 64) != 0);
    free(a);
    free(b);
    rng_close(&r);
}

static void test_random_truncated(void **state)
{
    (void)state;
    struct rng r;
    rng_open(&r, N * sizeof(float), 5);
    float mean = -1.0f, sd = 0.5f;
    aclrtRandomNumTaskInfo ti = task(&r, ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS, 42, N);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean, &mean, 4);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev, &sd, 4);
    float *a = malloc(N * sizeof(float));
    run(&r, &ti, a);
    double m, s, lo = 0, hi = -10;
    moments(a, N, &m, &s);
    lo = a[0];
    for (size_t i = 0; i < N; i++) {
        assert_true(a[i] >= -2.0f - 1e-6f && a[i] <= 0.0f + 1e-6f);   /* mean +- 2 sd */
        lo = a[i] < lo ? a[i] : lo;
        hi = a[i] > hi ? a[i] : hi;
    }
    assert_true(lo < -1.95 && hi > -0.05);   /* reaches both ends */
    assert_true(fabs(m + 1.0) < 0.01);
    assert_true(fabs(s - 0.5 * 0.8796) < 0.01);   /* sd of N(0,1) truncated at +-2 */
    free(a);
    rng_close(&r);
}

static void test_random_uniform(void **state)
{
    (void)state;
    struct rng r;
    rng_open(&r, N * sizeof(int64_t), 0);
    /* integers: every value of [-3, 5) about equally often, none outside */
    int32_t lo = -3, hi = 5;
    aclrtRandomNumTaskInfo ti = task(&r, ACL_INT32, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 7, N);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, 4);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &hi, 4);
    int32_t *iv = malloc(N * sizeof(int64_t));
    run(&r, &ti, iv);
    int hist[8] = {0};
    for (size_t i = 0; i < N; i++) {
        assert_true(iv[i] >= -3 && iv[i] < 5);
        hist[iv[i] + 3]++;
    }
    for (int k = 0; k < 8; k++)
        assert_true(abs(hist[k] - N / 8) < 600);
    /* uint64 over a range beyond 32 bits */
    uint64_t ulo = 1ull << 40, uhi = (1ull << 40) + (1ull << 36);
    ti = task(&r, ACL_UINT64, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 7, 1000);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &ulo, 8);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &uhi, 8);
    uint64_t *uv = (uint64_t *)iv;
    run(&r, &ti, uv);
    bool above32 = false;
    for (size_t i = 0; i < 1000; i++) {
        assert_true(uv[i] >= ulo && uv[i] < uhi);
        above32 |= (uv[i] - ulo) > UINT32_MAX;
    }
    assert_true(above32);
    /* fp16 in [0.5, 1.5): mean 1 */
    aclFloat16 flo = aclFloatToFloat16(0.5f), fhi = aclFloatToFloat16(1.5f);
    ti = task(&r, ACL_FLOAT16, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 9, N);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &flo, 2);
    set_param(&ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &fhi, 2);
    aclFloat16 *hv = (aclFloat16 *)iv;
    run(&r, &ti, hv);
    double sum = 0;
    for (size_t i = 0; i < N; i++) {
        float f = aclFloat16ToFloat(hv[i]);
        assert_true(f >= 0.5f && f <= 1.5f);
        sum += f;
    }
    assert_true(fabs(sum / N - 1.0) < 0.005);
    free(iv);
    rng_close(&r);
}

static void test_random_dropout_and_addresses(void **state)
{
    (void)state;
    struct rng r;
    rng_open(&r, N / 8 + 1, 0);
    float ratio = 0.25f;
    uint64_t num = N + 3;   /* 3 bits in a last byte of their own */
    aclrtRandomNumTaskInfo ti = task(&r, ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, 3, num);
    /* the ratio by address, read when the task runs */
    float *dratio;
    EXPECT_OK(aclrtMalloc((void **)&dratio, 4, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_OK(aclrtMemcpy(dratio, 4, &ratio, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    aclrtRandomParaInfo *p = &ti.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation;
    memset(p, 0, sizeof *p);
    p->isAddr = 1;
    memcpy(p->valueOrAddr, &dratio, 8);
    p->size = 8;
    /* randomParaAddr: the parameters are stored there */
    void *para;
    EXPECT_OK(aclrtMalloc(&para, 16, ACL_MEM_MALLOC_NORMAL_ONLY));
    ti.randomParaAddr = para;
    unsigned char *bits = malloc(N / 8 + 1);
    run(&r, &ti, bits);
    size_t ones = 0;
    for (size_t j = 0; j < num; j++)
        ones += (bits[j / 8] >> (j % 8)) & 1;
    assert_true(fabs((double)ones / (double)num - 0.75) < 0.007);
    assert_int_equal(bits[N / 8] >> 3, 0);   /* spare bits 0 */
    uint64_t stored[2];
    EXPECT_OK(aclrtMemcpy(stored, 16, para, 16, ACL_MEMCPY_DEVICE_TO_HOST));
    assert_memory_equal(&stored[0], &dratio, 8);
    free(bits);
    EXPECT_OK(aclrtFree(dratio));
    EXPECT_OK(aclrtFree(para));
    rng_close(&r);
}

static void test_random_bad_input(void **state)
{
    (void)state;
    struct rng r;
    rng_open(&r, 64, 0);
    float mean = 0, sd = 1;
    aclrtRandomNumTaskInfo ok = task(&r, ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, 1, 16);
    set_param(&ok.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean, &mean, 4);
    set_param(&ok.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev, &sd, 4);
    EXPECT_OK(aclrtRandomNumAsync(&ok, NULL, NULL));
    aclrtRandomNumTaskInfo ti;
    int dummy;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "taskInfo", aclrtRandomNumAsync(NULL, NULL, NULL));
    ti = ok;
    ti.dataType = ACL_INT8;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "dataType", aclrtRandomNumAsync(&ti, NULL, NULL));
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "reserve", aclrtRandomNumAsync(&ok, NULL, &dummy));
    ti = ok;
    ti.dataType = ACL_INT32;   /* normal takes floats only */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "normal", aclrtRandomNumAsync(&ti, NULL, NULL));
    ti = ok;
    ti.randomNumFuncParaInfo.funcType = (aclrtRandomNumFuncType)4;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "funcType", aclrtRandomNumAsync(&ti, NULL, NULL));
    ti = ok;
    ti.randomCounterAddr = NULL;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "randomCounterAddr", aclrtRandomNumAsync(&ti, NULL, NULL));
    ti = ok;
    ti.randomResultAddr = NULL;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "randomResultAddr", aclrtRandomNumAsync(&ti, NULL, NULL));
    ti = ok;
    ti.randomSeed.size = 0;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "randomSeed.size", aclrtRandomNumAsync(&ti, NULL, NULL));
    ti = ok;
    ti.randomNum.isAddr = 2;
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "randomNum.isAddr", aclrtRandomNumAsync(&ti, NULL, NULL));
    ti = ok;
    ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev.size = 8;   /* fp32: at most 4 */
    EXPECT_ERR(ACL_ERROR_RT_PARAM_INVALID, "stddev.size", aclrtRandomNumAsync(&ti, NULL, NULL));
    ti = ok;
    uint64_t many = 17;   /* 68 bytes into 64 */
    set_param(&ti.randomNum, &many, 8);
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "overruns", aclrtRandomNumAsync(&ti, NULL, NULL));
    float host[4];
    ti = ok;
    ti.randomCounterAddr = host;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "ordinary host memory", aclrtRandomNumAsync(&ti, NULL, NULL));
    ti = ok;
    ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean.isAddr = 1;
    void *hp = host;
    memcpy(ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean.valueOrAddr, &hp, 8);
    ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean.size = 8;
    EXPECT_ERR(ACL_ERROR_INVALID_PARAM, "mean", aclrtRandomNumAsync(&ti, NULL, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    rng_close(&r);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_device0, teardown_device0)
    const struct CMUnitTest tests[] = {
        T(test_reduce_sample),
        T(test_reduce_integers),
        T(test_reduce_floats),
        T(test_reduce_ordered),
        T(test_reduce_bad_input),
        cmocka_unit_test_setup_teardown(test_reduce_inference_product, setup_inference, teardown_device0),
        T(test_random_normal),
        T(test_random_truncated),
        T(test_random_uniform),
        T(test_random_dropout_and_addresses),
        T(test_random_bad_input),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
