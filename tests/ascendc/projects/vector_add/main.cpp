/* Host program of the vector_add project: random inputs, the kernels through
 * the generated launch headers, results checked against a host reference
 * (half: the exact sum rounded once to nearest even). */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include "acl/acl.h"
#include "aclrtlaunch_add_custom.h"
#include "aclrtlaunch_add_custom_float.h"

#define CHECK_ACL(x)                                                                      \
    do {                                                                                  \
        aclError __ret = (x);                                                             \
        if (__ret != ACL_ERROR_NONE) {                                                    \
            std::fprintf(stderr, "%s:%d aclError:%d %s\n", __FILE__, __LINE__, __ret,     \
                         aclGetRecentErrMsg());                                           \
            std::exit(1);                                                                 \
        }                                                                                 \
    } while (0)

/* The half nearest to d (ties to even), from the candidates around a guess. */
static uint16_t half_nearest(double d)
{
    uint16_t g = aclFloatToFloat16((float)d), best = g;
    for (int k = -1; k <= 1; k++) {
        uint16_t h = (uint16_t)(g + k);
        double e1 = std::fabs((double)aclFloat16ToFloat(h) - d);
        double e0 = std::fabs((double)aclFloat16ToFloat(best) - d);
        if ((h & 0x7fff) <= 0x7bff && (e1 < e0 || (e1 == e0 && !(h & 1))))
            best = h;
    }
    return best;
}

int32_t main()
{
    const uint32_t blockDim = 8;
    const size_t n = 8 * 2048;
    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));
    std::mt19937 rng(2024);
    std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
    int failures = 0;

    /* half */
    {
        size_t bytes = n * sizeof(uint16_t);
        std::vector<uint16_t> x(n), y(n), z(n);
        for (size_t i = 0; i < n; i++) {
            x[i] = aclFloatToFloat16(dist(rng));
            y[i] = aclFloatToFloat16(dist(rng) / 64.0f);
        }
        void *xd, *yd, *zd;
        CHECK_ACL(aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMalloc(&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMalloc(&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMemcpy(xd, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        CHECK_ACL(aclrtMemcpy(yd, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        ACLRT_LAUNCH_KERNEL(add_custom)(blockDim, stream, xd, yd, zd);
        CHECK_ACL(aclrtSynchronizeStream(stream));
        CHECK_ACL(aclrtMemcpy(z.data(), bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            double exact = (double)aclFloat16ToFloat(x[i]) + (double)aclFloat16ToFloat(y[i]);
            if (z[i] != half_nearest(exact) && bad++ < 5)
                std::fprintf(stderr, "half: z[%zu] = 0x%04x, expected 0x%04x\n", i, z[i],
                             half_nearest(exact));
        }
        std::printf("add_custom (half): %zu results, %d wrong\n", n, bad);
        failures += bad;
        aclrtFree(xd);
        aclrtFree(yd);
        aclrtFree(zd);
    }
    /* float */
    {
        size_t bytes = n * sizeof(float);
        std::vector<float> x(n), y(n), z(n);
        for (size_t i = 0; i < n; i++) {
            x[i] = dist(rng);
            y[i] = dist(rng) * 1e-3f;
        }
        void *xd, *yd, *zd;
        CHECK_ACL(aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMalloc(&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMalloc(&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMemcpy(xd, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        CHECK_ACL(aclrtMemcpy(yd, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        ACLRT_LAUNCH_KERNEL(add_custom_float)(blockDim, stream, xd, yd, zd);
        CHECK_ACL(aclrtSynchronizeStream(stream));
        CHECK_ACL(aclrtMemcpy(z.data(), bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            float want = x[i] + y[i];
            if (std::memcmp(&want, &z[i], sizeof want) != 0 && bad++ < 5)
                std::fprintf(stderr, "float: z[%zu] = %.9g, expected %.9g\n", i, z[i], want);
        }
        std::printf("add_custom_float: %zu results, %d wrong\n", n, bad);
        failures += bad;
        aclrtFree(xd);
        aclrtFree(yd);
        aclrtFree(zd);
    }
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    if (failures)
        return 1;
    std::printf("vector_add: all results correct\n");
    return 0;
}
