/*
 * aclsim example: a kernel binary (Ascend's "operator binary").
 *
 * kernels.c is built into a shared object. This program loads it with
 * aclrtBinaryLoadFromFile, finds the kernel `poly` with aclrtBinaryGetFunction
 * and the device variables `coeffs` and `launches` with aclrtBinaryGetGlobal
 * (device address + size on the current device), writes the coefficients,
 * launches with aclrtLaunchKernel (arguments packed in one buffer), reads
 * the results and the variable back, shows the errors for unknown names,
 * unloads the binary, and checks that its handles are dead afterwards.
 *
 * Usage: binary [path/to/libbinary_kernels.so]   (default: the one built
 * next to this example). Prints what it verified; exits 1 on any mismatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "../example-check.h"

#ifndef EXAMPLE_KERNELS_PATH
#define EXAMPLE_KERNELS_PATH "./libbinary_kernels.so"
#endif

#define N 1000
#define BLOCKS 8



/* Expects `call` to fail with `code`; prints the message it left. */
static void expect_error(aclError got, aclError code, const char *what)
{
    const char *msg = aclGetRecentErrMsg();
    printf("  [%s] %s -> %d\n         %s\n", got == code ? "ok" : "MISMATCH", what, got,
           msg ? msg : "(no message)");
    failures += got != code;
}

/* poly's parameters (const float *, float *, uint32_t) packed in order with
 * natural alignment: what aclrtLaunchKernel's argsData holds. */
struct poly_args {
    const float *x;
    float *y;
    uint32_t n;
};

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : EXAMPLE_KERNELS_PATH;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream;
    CHECK(aclrtCreateStream(&stream));

    aclrtBinHandle bin;
    CHECK(aclrtBinaryLoadFromFile(path, NULL, &bin));
    printf("binary example: loaded %s\n", path);

    aclrtFuncHandle poly;
    CHECK(aclrtBinaryGetFunction(bin, "poly", &poly));
    void *coeffs_dev, *launches_dev;
    size_t coeffs_size, launches_size;
    CHECK(aclrtBinaryGetGlobal(bin, "coeffs", &coeffs_dev, &coeffs_size));
    CHECK(aclrtBinaryGetGlobal(bin, "launches", &launches_dev, &launches_size));
    verify(coeffs_size == 4 * sizeof(float) && launches_size == sizeof(uint32_t),
           "aclrtBinaryGetGlobal: coeffs is 16 bytes, launches 4 bytes");

    float initial[4];
    CHECK(aclrtMemcpy(initial, sizeof initial, coeffs_dev, sizeof initial,
                      ACL_MEMCPY_DEVICE_TO_HOST));
    verify(initial[0] == 1.0f && initial[1] == 0.0f && initial[3] == 0.0f,
           "coeffs on device 0 starts from its initializer {1, 0, 0, 0}");

    /* y = 1 - 2x + 0.5x^3: write the variable through its device address. */
    const float c[4] = {1.0f, -2.0f, 0.0f, 0.5f};
    CHECK(aclrtMemcpy(coeffs_dev, coeffs_size, c, sizeof c, ACL_MEMCPY_HOST_TO_DEVICE));

    float *x_host, *y_host;
    CHECK(aclrtMallocHost((void **)&x_host, sizeof(float) * N));
    CHECK(aclrtMallocHost((void **)&y_host, sizeof(float) * N));
    for (int i = 0; i < N; i++)
        x_host[i] = (float)(i % 16) * 0.25f;   /* exact in binary floating point */
    void *x_dev, *y_dev;
    CHECK(aclrtMalloc(&x_dev, sizeof(float) * N, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&y_dev, sizeof(float) * N, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpyAsync(x_dev, sizeof(float) * N, x_host, sizeof(float) * N,
                           ACL_MEMCPY_HOST_TO_DEVICE, stream));

    /* Launch twice: poly<<<BLOCKS, 0, stream>>>(x, y, N). */
    struct poly_args args = {x_dev, y_dev, N};
    CHECK(aclrtLaunchKernel(poly, BLOCKS, &args, sizeof args, stream));
    CHECK(aclrtLaunchKernel(poly, BLOCKS, &args, sizeof args, stream));
    CHECK(aclrtMemcpyAsync(y_host, sizeof(float) * N, y_dev, sizeof(float) * N,
                           ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK(aclrtSynchronizeStream(stream));

    int y_ok = 1;
    for (int i = 0; i < N; i++) {
        float xv = x_host[i];
        float want = c[0] + xv * (c[1] + xv * (c[2] + xv * c[3]));
        y_ok &= y_host[i] == want;
    }
    verify(y_ok, "poly over 8 blocks computed y = 1 - 2x + 0.5x^3 for all 1000 elements");

    uint32_t launches;
    CHECK(aclrtMemcpy(&launches, sizeof launches, launches_dev, sizeof launches,
                      ACL_MEMCPY_DEVICE_TO_HOST));
    verify(launches == 2, "the kernel incremented the binary's device variable once per launch");

    /* Unknown names: CANN's codes, with a message naming the binary and the name. */
    aclrtFuncHandle none;
    void *p;
    size_t sz;
    expect_error(aclrtBinaryGetFunction(bin, "no_such_kernel", &none),
                 ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, "aclrtBinaryGetFunction(\"no_such_kernel\")");
    expect_error(aclrtBinaryGetGlobal(bin, "no_such_variable", &p, &sz),
                 ACL_ERROR_RT_SYMBOL_NOT_FOUND, "aclrtBinaryGetGlobal(\"no_such_variable\")");

    /* Unload: the binary's handles die with it. */
    CHECK(aclrtBinaryUnLoad(bin));
    expect_error(aclrtBinaryGetFunction(bin, "poly", &none), ACL_ERROR_RT_INVALID_HANDLE,
                 "aclrtBinaryGetFunction after aclrtBinaryUnLoad");
    expect_error(aclrtLaunchKernel(poly, BLOCKS, &args, sizeof args, stream),
                 ACL_ERROR_RT_INVALID_HANDLE, "aclrtLaunchKernel with the unloaded kernel");

    aclrtBinHandle missing;
    expect_error(aclrtBinaryLoadFromFile("/nonexistent/kernels.so", NULL, &missing),
                 ACL_ERROR_INVALID_FILE, "aclrtBinaryLoadFromFile(\"/nonexistent/kernels.so\")");

    CHECK(aclrtFree(x_dev));
    CHECK(aclrtFree(y_dev));
    CHECK(aclrtFreeHost(x_host));
    CHECK(aclrtFreeHost(y_host));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());

    printf("binary example %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
