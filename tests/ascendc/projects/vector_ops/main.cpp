// Plain C++ host code: runs each operator of the project on random data and
// compares with a host reference.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include "acl/acl.h"
#include "tiling.h"

int32_t run_leaky_relu(uint32_t blocks, aclrtStream stream, void *x, void *y, void *y2,
                       uint32_t blockLength, uint32_t tileLength, float alpha);
int32_t run_reduce_sync(uint32_t blocks, aclrtStream stream, void *x, void *y, void *ws,
                        void *sum, uint32_t blockLength);
int32_t run_pad_add(uint32_t blocks, aclrtStream stream, void *x, void *z, uint32_t length,
                    uint32_t tileLength, float value);
int32_t run_tiled_scale(uint32_t blocks, aclrtStream stream, void *x, void *y, void *tilingDevice,
                        const TilingData *byValue);

#define CHECK_ACL(x)                                                                      \
    do {                                                                                  \
        aclError __ret = (x);                                                             \
        if (__ret != ACL_ERROR_NONE) {                                                    \
            std::fprintf(stderr, "%s:%d aclError:%d %s\n", __FILE__, __LINE__, __ret,     \
                         aclGetRecentErrMsg());                                           \
            std::exit(1);                                                                 \
        }                                                                                 \
    } while (0)

static aclrtStream stream;
static std::mt19937 rng(99);
static int failures;

static void *dev(size_t n)
{
    void *p;
    CHECK_ACL(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
    return p;
}
static void put(void *d, const void *h, size_t n)
{
    CHECK_ACL(aclrtMemcpy(d, n, h, n, ACL_MEMCPY_HOST_TO_DEVICE));
}
static void get(void *h, const void *d, size_t n)
{
    CHECK_ACL(aclrtMemcpy(h, n, d, n, ACL_MEMCPY_DEVICE_TO_HOST));
}
static double hf(uint16_t h) { return (double)aclFloat16ToFloat(h); }
/* The half nearest to d (ties to even). */
static uint16_t half_nearest(double d)
{
    uint16_t g = aclFloatToFloat16((float)d), best = g;
    for (int k = -1; k <= 1; k++) {
        uint16_t h = (uint16_t)(g + k);
        double e1 = std::fabs(hf(h) - d), e0 = std::fabs(hf(best) - d);
        if ((h & 0x7fff) <= 0x7bff && (e1 < e0 || (e1 == e0 && !(h & 1))))
            best = h;
    }
    return best;
}
static void report(const char *what, size_t n, int bad)
{
    std::printf("%s: %zu results, %d wrong\n", what, n, bad);
    failures += bad;
}

static void leaky_relu()
{
    const uint32_t blocks = 4, blockLength = 2048, tileLength = 256;
    const size_t n = blocks * blockLength;
    const float alpha = 0.125f;
    std::uniform_real_distribution<float> d(-50.0f, 50.0f);
    std::vector<uint16_t> x(n), y(n), y2(n);
    for (auto &v : x)
        v = aclFloatToFloat16(d(rng));
    void *xd = dev(n * 2), *yd = dev(n * 2), *y2d = dev(n * 2);
    put(xd, x.data(), n * 2);
    CHECK_ACL(run_leaky_relu(blocks, stream, xd, yd, y2d, blockLength, tileLength, alpha));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    get(y.data(), yd, n * 2);
    get(y2.data(), y2d, n * 2);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double v = hf(x[i]);
        uint16_t want = half_nearest(v >= 0 ? v : v * alpha);
        bad += y[i] != want || y2[i] != want;
    }
    report("leaky_relu (TBuf and LeakyRelu)", n, bad);
    aclrtFree(xd);
    aclrtFree(yd);
    aclrtFree(y2d);
}

static void reduce_sync(uint32_t blocks)
{
    const uint32_t blockLength = 512;
    const size_t n = (size_t)blocks * blockLength;
    std::uniform_real_distribution<float> d(-1000.0f, 1000.0f);
    std::vector<float> x(n), y(n), sum(8);
    for (auto &v : x)
        v = std::round(d(rng)) / 4.0f;   /* quarters: every partial sum is exact */
    void *xd = dev(n * 4), *yd = dev(n * 4), *ws = dev((size_t)blocks * 32), *sd = dev(32);
    put(xd, x.data(), n * 4);
    CHECK_ACL(run_reduce_sync(blocks, stream, xd, yd, ws, sd, blockLength));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    get(y.data(), yd, n * 4);
    get(sum.data(), sd, 32);
    float gmax = x[0];
    double gsum = 0;
    for (float v : x) {
        gmax = v > gmax ? v : gmax;
        gsum += v;
    }
    int bad = sum[0] != (float)gsum || sum[1] != gmax;
    for (size_t i = 0; i < n; i++)
        bad += y[i] != x[i] - gmax;
    char what[64];
    std::snprintf(what, sizeof what, "reduce_sync (SyncAll, %u blocks)", blocks);
    report(what, n, bad);
    aclrtFree(xd);
    aclrtFree(yd);
    aclrtFree(ws);
    aclrtFree(sd);
}

static void pad_add()
{
    const uint32_t blocks = 3, length = 1000, tileLength = 232;   /* 1000 = 4 * 232 + 72 */
    const size_t n = blocks * length;
    std::uniform_real_distribution<float> d(-8.0f, 8.0f);
    std::vector<uint16_t> x(n), z(n + 16, 0x7e00);   /* NaN sentinels past the end */
    for (auto &v : x)
        v = aclFloatToFloat16(d(rng));
    void *xd = dev(n * 2), *zd = dev((n + 16) * 2);
    put(xd, x.data(), n * 2);
    put(zd, z.data(), (n + 16) * 2);
    CHECK_ACL(run_pad_add(blocks, stream, xd, zd, length, tileLength, 0.75f));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    get(z.data(), zd, (n + 16) * 2);
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += z[i] != half_nearest(hf(x[i]) + 0.75);
    for (size_t i = n; i < n + 16; i++)
        bad += z[i] != 0x7e00;   /* nothing written past the data */
    report("pad_add (DataCopyPad, unaligned lengths)", n, bad);
    aclrtFree(xd);
    aclrtFree(zd);
}

static void tiled_scale()
{
    const uint32_t blocks = 8;
    TilingData t = {8 * 4096, 8, 1.5f, -2.0f};
    std::uniform_real_distribution<float> d(-100.0f, 100.0f);
    std::vector<float> x(t.totalLength), y(t.totalLength);
    for (auto &v : x)
        v = d(rng);
    void *xd = dev(x.size() * 4), *yd = dev(y.size() * 4), *td = dev(sizeof t);
    put(xd, x.data(), x.size() * 4);
    put(td, &t, sizeof t);
    for (int byValue = 0; byValue < 2; byValue++) {
        CHECK_ACL(aclrtMemset(yd, y.size() * 4, 0, y.size() * 4));
        CHECK_ACL(run_tiled_scale(blocks, stream, xd, yd, td, byValue ? &t : nullptr));
        CHECK_ACL(aclrtSynchronizeStream(stream));
        get(y.data(), yd, y.size() * 4);
        int bad = 0;
        for (size_t i = 0; i < x.size(); i++) {
            float want = x[i] * t.scale;   /* rounded once per operation, as Muls then Adds */
            want = want + t.bias;
            bad += std::memcmp(&want, &y[i], 4) != 0;
        }
        report(byValue ? "tiled_scale (tiling by value)" : "tiled_scale (GET_TILING_DATA)",
               x.size(), bad);
    }
    aclrtFree(xd);
    aclrtFree(yd);
    aclrtFree(td);
}

int main()
{
    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(0));
    CHECK_ACL(aclrtCreateStream(&stream));
    leaky_relu();
    reduce_sync(8);
    reduce_sync(48);
    pad_add();
    tiled_scale();
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    if (failures)
        return 1;
    std::printf("vector_ops: all results correct\n");
    return 0;
}
