// Host code as CANN's samples write it: the generated launch header, typed
// device pointers, ACLRT_LAUNCH_KERNEL.
#include <cstdio>
#include <cstring>
#include "acl/acl.h"
#include "aclrtlaunch_add_custom.h"

int main()
{
    if (aclInit(nullptr) || aclrtSetDevice(0))
        return 1;
    aclrtStream stream;
    aclrtCreateStream(&stream);
    const uint32_t n = 64;
    float hx[n], hy[n], hz[n];
    for (uint32_t i = 0; i < n; i++) {
        hx[i] = (float)i;
        hy[i] = 100.0f;
    }
    float *x, *y, *z;
    aclrtMalloc((void **)&x, sizeof hx, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&y, sizeof hy, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&z, sizeof hz, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, sizeof hx, hx, sizeof hx, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(y, sizeof hy, hy, sizeof hy, ACL_MEMCPY_HOST_TO_DEVICE);
    if (ACLRT_LAUNCH_KERNEL(add_custom)(8, stream, x, y, z, n) != 0)
        return 2;
    if (aclrtlaunch_add_custom(8, stream, x, y, z, n) != 0)
        return 3;
    if (aclrtSynchronizeStream(stream))
        return 4;
    aclrtMemcpy(hz, sizeof hz, z, sizeof hz, ACL_MEMCPY_DEVICE_TO_HOST);
    for (uint32_t i = 0; i < n; i++)
        if (hz[i] != (float)i + 100.0f)
            return 5;
    /* a bad launch: the value is the error, and the message names the call site */
    if (aclrtlaunch_add_custom(0, stream, x, y, z, n) != ACL_ERROR_INVALID_PARAM)
        return 6;
    const char *m = aclGetRecentErrMsg();
    if (!m || !std::strstr(m, "launch_kernel.asc") || !std::strstr(m, "numBlocks 0")) {
        std::fprintf(stderr, "message: %s\n", m ? m : "(none)");
        return 7;
    }
    aclrtFree(x);
    aclrtFree(y);
    aclrtFree(z);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    std::printf("launch header: all checks passed\n");
    return 0;
}
