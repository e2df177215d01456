// Host code as CANN's samples write it: the generated launch header, typed
// device pointers, ACLRT_LAUNCH_KERNEL.
#include <cstdio>
#include <cstring>
#include "acl/acl.h"
#include "aclrtlaunch_add_custom.h"

// The kernel itself (built by aclsim-cc in launch_kernel.asc), for the
// kernel-launch API: GM_ADDR is a byte pointer.
extern "C" void add_custom(uint8_t *x, uint8_t *y, uint8_t *z, uint32_t n);

/* The same launch through an argument list (aclrtKernelArgs*), with n in a
 * value appended and z given by aclrtFunctionGetParamInfo's count. */
static int launch_with_args(aclrtStream stream, float *x, float *y, float *z, uint32_t n)
{
    aclrtFuncHandle f = nullptr;
    size_t count = 0;
    if (aclrtGetFuncBySymbol((const void *)&add_custom, &f) ||
        aclrtFunctionGetParamCount((const void *)&add_custom, &count) || count != 4)
        return 1;
    aclrtArgsHandle a = nullptr;
    aclrtParamHandle p = nullptr, pn = nullptr;
    if (aclrtKernelArgsInit(f, &a) || aclrtKernelArgsAppend(a, &x, sizeof x, &p) ||
        aclrtKernelArgsAppend(a, &y, sizeof y, &p) || aclrtKernelArgsAppend(a, &z, sizeof z, &p) ||
        aclrtKernelArgsAppend(a, &n, sizeof n, &pn) || aclrtKernelArgsFinalize(a))
        return 2;
    uint32_t half = n / 2;   /* updated: the second launch covers the first half only */
    if (aclrtLaunchKernelWithConfig(f, 8, stream, nullptr, a, nullptr) ||
        aclrtKernelArgsParaUpdate(a, pn, &half, sizeof half) || aclrtKernelArgsFinalize(a) ||
        aclrtLaunchKernelWithConfig(f, 8, stream, nullptr, a, nullptr))
        return 3;
    return 0;
}

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
    /* through an argument list: first all of z, then (after a ParaUpdate) half */
    aclrtMemset(z, sizeof hz, 0, sizeof hz);
    if (launch_with_args(stream, x, y, z, n) || aclrtSynchronizeStream(stream)) {
        const char *m = aclGetRecentErrMsg();
        std::fprintf(stderr, "argument list: %s\n", m ? m : "(no message)");
        return 8;
    }
    aclrtMemcpy(hz, sizeof hz, z, sizeof hz, ACL_MEMCPY_DEVICE_TO_HOST);
    for (uint32_t i = 0; i < n; i++)
        if (hz[i] != (float)i + 100.0f)
            return 9;
    aclrtMemset(z, sizeof hz, 0, sizeof hz);
    uint32_t half = n / 2;
    aclrtFuncHandle f = nullptr;
    aclrtArgsHandle a = nullptr;
    aclrtParamHandle p = nullptr;
    if (aclrtGetFuncBySymbol((const void *)&add_custom, &f) || aclrtKernelArgsInit(f, &a) ||
        aclrtKernelArgsAppend(a, &x, 8, &p) || aclrtKernelArgsAppend(a, &y, 8, &p) ||
        aclrtKernelArgsAppend(a, &z, 8, &p) || aclrtKernelArgsAppend(a, &half, 4, &p) ||
        aclrtKernelArgsFinalize(a) || aclrtLaunchKernelWithConfig(f, 8, stream, nullptr, a, nullptr) ||
        aclrtSynchronizeStream(stream))
        return 10;
    aclrtMemcpy(hz, sizeof hz, z, sizeof hz, ACL_MEMCPY_DEVICE_TO_HOST);
    for (uint32_t i = 0; i < n; i++)
        if (hz[i] != (i < half ? (float)i + 100.0f : 0.0f))
            return 11;
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
