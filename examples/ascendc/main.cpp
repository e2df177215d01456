// Host program: plain C++ against acl/acl.h; launches through the wrapper and
// through the generated aclrtlaunch_scale.h.
#include <cstdio>
#include "acl/acl.h"
#include "aclrtlaunch_scale.h"

int32_t set_weights(const float *w, size_t count);
int32_t scale_do(uint32_t blockDim, aclrtStream stream, float *out, float k);

#define CHECK(x)                                                                          \
    do {                                                                                  \
        int32_t r_ = (int32_t)(x);                                                        \
        if (r_ != 0) {                                                                    \
            std::fprintf(stderr, "%s failed: %d %s\n", #x, r_, aclGetRecentErrMsg());     \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

int main()
{
    float w[16], result[16];
    for (int i = 0; i < 16; i++) {
        w[i] = (float)i;
    }
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream;
    CHECK(aclrtCreateStream(&stream));
    CHECK(set_weights(w, 16));
    void *out;
    CHECK(aclrtMalloc(&out, sizeof result, ACL_MEM_MALLOC_HUGE_FIRST));

    CHECK(scale_do(16, stream, (float *)out, 2.0f));            // scale<<<16, nullptr, stream>>>
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(result, sizeof result, out, sizeof result, ACL_MEMCPY_DEVICE_TO_HOST));
    int bad = 0;
    for (int i = 0; i < 16; i++) {
        bad |= result[i] != 2.0f * (float)i;
    }

    CHECK(ACLRT_LAUNCH_KERNEL(scale)(16, stream, out, 3.0f));  // aclrtlaunch_scale
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(result, sizeof result, out, sizeof result, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 16; i++) {
        bad |= result[i] != 3.0f * (float)i;
    }
    std::printf("scale_demo: weights * 2 and * 3 on 16 blocks: %s (result[15] = %g)\n",
                bad ? "WRONG" : "correct", result[15]);

    CHECK(aclrtFree(out));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return bad;
}
