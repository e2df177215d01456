// Plain C++ host code: calls the launch functions of the Ascend C files.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "acl/acl.h"

int32_t run_add(uint32_t blocks, aclrtStream stream, void *x, void *y, void *z, uint32_t perBlock,
                int32_t bias);
int32_t run_scale(uint32_t blocks, aclrtStream stream, void *data, uint32_t perBlock);

#define CHECK(x)                                                                          \
    do {                                                                                  \
        int32_t r_ = (int32_t)(x);                                                        \
        if (r_ != 0) {                                                                    \
            std::fprintf(stderr, "%s:%d: %s = %d %s\n", __FILE__, __LINE__, #x, r_,       \
                         aclGetRecentErrMsg());                                           \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

int main()
{
    const uint32_t blocks = 4, perBlock = 64, n = blocks * perBlock;
    const size_t bytes = n * sizeof(int32_t);
    std::vector<int32_t> x(n), y(n), z(n);
    for (uint32_t i = 0; i < n; i++) {
        x[i] = (int32_t)i;
        y[i] = 1000;
    }
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream;
    CHECK(aclrtCreateStream(&stream));
    void *dx, *dy, *dz;
    CHECK(aclrtMalloc(&dx, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dy, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dz, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(dx, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(dy, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(run_add(blocks, stream, dx, dy, dz, perBlock, 7));
    CHECK(run_scale(blocks, stream, dz, perBlock));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(z.data(), bytes, dz, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (z[i] != ((int32_t)i + 1000 + 7) * 3) {
            std::fprintf(stderr, "z[%u] = %d, expected %d\n", i, z[i], ((int32_t)i + 1007) * 3);
            bad = 1;
            break;
        }
    }
    CHECK(aclrtFree(dx));
    CHECK(aclrtFree(dy));
    CHECK(aclrtFree(dz));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    if (!bad) {
        std::printf("asc_mixed: %u results correct\n", n);
    }
    return bad;
}
