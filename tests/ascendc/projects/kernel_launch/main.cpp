/* Host program of the kernel_launch project: checks both launch styles. */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "acl/acl.h"
#include "aclrtlaunch_add_custom.h"
#include "aclrtlaunch_report_arch.h"

#define CHECK_ACL(x)                                                                      \
    do {                                                                                  \
        aclError __ret = (x);                                                             \
        if (__ret != ACL_ERROR_NONE) {                                                    \
            std::fprintf(stderr, "%s:%d aclError:%d %s\n", __FILE__, __LINE__, __ret,     \
                         aclGetRecentErrMsg());                                           \
            std::exit(1);                                                                 \
        }                                                                                 \
    } while (0)

extern int32_t add_custom_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z,
                             float scale);

static int check(const std::vector<float> &x, const std::vector<float> &y,
                 const std::vector<float> &z, float scale, const char *what)
{
    for (size_t i = 0; i < z.size(); i++) {
        float want = (x[i] + y[i]) * scale + 0.5f;
        if (std::fabs(z[i] - want) > 1e-5f) {
            std::fprintf(stderr, "%s: z[%zu] = %g, expected %g\n", what, i, z[i], want);
            return 1;
        }
    }
    std::printf("%s: %zu results correct\n", what, z.size());
    return 0;
}

int32_t main(int32_t argc, char *argv[])
{
    (void)argc;
    (void)argv;
    const uint32_t blockDim = 8;
    const size_t n = blockDim * 256;
    const size_t bytes = n * sizeof(float);
    std::vector<float> x(n), y(n), z(n);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)i;
        y[i] = (float)(2 * i) + 1;
    }

    CHECK_ACL(aclInit(nullptr));
    int32_t deviceId = 0;
    CHECK_ACL(aclrtSetDevice(deviceId));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));
    void *xDevice, *yDevice, *zDevice, *archDevice;
    CHECK_ACL(aclrtMalloc(&xDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc(&yDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc(&zDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc(&archDevice, sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMemcpy(xDevice, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(yDevice, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    int failed = 0;
    ACLRT_LAUNCH_KERNEL(add_custom)(blockDim, stream, xDevice, yDevice, zDevice);
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDevice, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    failed |= check(x, y, z, 1.0f, "ACLRT_LAUNCH_KERNEL(add_custom)");

    CHECK_ACL(add_custom_do(blockDim, stream, (uint8_t *)xDevice, (uint8_t *)yDevice,
                            (uint8_t *)zDevice, 3.0f));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDevice, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    failed |= check(x, y, z, 3.0f, "add_custom<<<>>>");

    CHECK_ACL(aclrtlaunch_report_arch(1, stream, archDevice));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    int32_t arch = 0;
    CHECK_ACL(aclrtMemcpy(&arch, sizeof arch, archDevice, sizeof arch, ACL_MEMCPY_DEVICE_TO_HOST));
    std::printf("kernel __NPU_ARCH__ = %d\n", arch);
    const char *expect = std::getenv("EXPECT_NPU_ARCH");
    if (expect && std::atoi(expect) != arch) {
        std::fprintf(stderr, "expected __NPU_ARCH__ %s\n", expect);
        failed = 1;
    }

    CHECK_ACL(aclrtFree(xDevice));
    CHECK_ACL(aclrtFree(yDevice));
    CHECK_ACL(aclrtFree(zDevice));
    CHECK_ACL(aclrtFree(archDevice));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(deviceId));
    CHECK_ACL(aclFinalize());
    return failed;
}
