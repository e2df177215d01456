/*
 * aclsim demo: CANN's device-symbol sample (9_device_symbol_io), on two
 * simulated devices.
 *
 * A device variable `weights` holds 16 floats. The host writes them with
 * aclrtMemcpyToSymbolAsync from page-locked memory, a kernel running on 4
 * blocks scales `input` by the weights into `output`, and the host reads
 * the weights back with both aclrtMemcpyFromSymbol variants. Each device has
 * its own instance of `weights`: what device 0 writes, device 1 never sees.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "example-check.h"
#include "aclsim/aclsim.h"

#define N 16
#define BLOCKS 4

ACLSIM_DEVICE_VAR(float, weights, [N]) = {1, 1, 1, 1};

/* __global__ __aicore__ void scale(__gm__ float *in, __gm__ float *out, float bias) */
void scale(float *in, float *out, float bias)
{
    uint32_t per = N / aclsimGetBlockNum(), first = aclsimGetBlockIdx() * per;
    for (uint32_t i = first; i < first + per; i++)
        out[i] = in[i] * ACLSIM_DEV(weights)[i] + bias;
}
ACLSIM_KERNEL_REGISTER(scale, float *, float *, float);


static int run_on_device(int32_t device)
{
    CHECK(aclrtSetDevice(device));
    aclrtStream stream;
    CHECK(aclrtCreateStream(&stream));

    float *host_w, *host_back;
    CHECK(aclrtMallocHost((void **)&host_w, sizeof(float) * N));
    CHECK(aclrtMallocHost((void **)&host_back, sizeof(float) * N));

    void *addr;
    size_t size;
    CHECK(aclrtGetSymbolAddress(weights, &addr));
    CHECK(aclrtGetSymbolSize(weights, &size));
    printf("device %d: weights at %p, %zu bytes (initial value %g)\n", device, addr, size,
           (double)weights[0]);

    for (int i = 0; i < N; i++)
        host_w[i] = (float)(10 * (device + 1) + i);
    CHECK(aclrtMemcpyToSymbolAsync(weights, host_w, sizeof(float) * N, 0,
                                   ACL_MEMCPY_HOST_TO_DEVICE, stream));

    float in_host[N], out_host[N];
    for (int i = 0; i < N; i++)
        in_host[i] = 2.0f;
    void *in_dev, *out_dev;
    CHECK(aclrtMalloc(&in_dev, sizeof in_host, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&out_dev, sizeof out_host, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpyAsync(in_dev, sizeof in_host, in_host, sizeof in_host,
                           ACL_MEMCPY_HOST_TO_DEVICE, stream));

    aclrtFuncHandle func;
    CHECK(aclrtGetFuncBySymbol((const void *)&scale, &func));
    float bias = 0.5f;
    void *args[] = {&in_dev, &out_dev, &bias};
    CHECK(aclrtLaunchKernelWithArgsArray(func, BLOCKS, stream, NULL, args));
    CHECK(aclrtSynchronizeStream(stream));

    CHECK(aclrtMemcpy(out_host, sizeof out_host, out_dev, sizeof out_host,
                      ACL_MEMCPY_DEVICE_TO_HOST));
    memset(host_back, 0, sizeof(float) * N);
    CHECK(aclrtMemcpyFromSymbol(host_back, sizeof(float) * N, weights, sizeof(float) * N, 0,
                                ACL_MEMCPY_DEVICE_TO_HOST));
    float tail[4];
    CHECK(aclrtMemcpyFromSymbolAsync(tail, sizeof tail, weights, sizeof tail,
                                     sizeof(float) * (N - 4), ACL_MEMCPY_DEFAULT, stream));

    int bad = 0;
    for (int i = 0; i < N; i++) {
        float want = 2.0f * host_w[i] + bias;
        if (out_host[i] != want || host_back[i] != host_w[i])
            bad++;
    }
    for (int i = 0; i < 4; i++)
        if (tail[i] != host_w[N - 4 + i])
            bad++;
    printf("device %d: kernel over %d blocks: out[0]=%g out[%d]=%g; read back %s\n", device,
           BLOCKS, (double)out_host[0], N - 1, (double)out_host[N - 1],
           bad ? "WRONG" : "matches what was written (sync and async)");

    CHECK(aclrtFree(in_dev));
    CHECK(aclrtFree(out_dev));
    CHECK(aclrtDestroyStreamForce(stream));
    CHECK(aclrtFreeHost(host_w));
    CHECK(aclrtFreeHost(host_back));
    return bad;
}

int main(void)
{
    CHECK(aclInit(NULL));
    uint32_t count;
    CHECK(aclrtGetDeviceCount(&count));
    printf("aclsim: %u simulated %s device(s)\n", count, aclrtGetSocName());

    int bad = run_on_device(0);
    bad += run_on_device(1);

    /* Isolation: device 0's instance still holds device 0's weights. */
    float w0;
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtMemcpyFromSymbol(&w0, sizeof w0, weights, sizeof w0, 0, ACL_MEMCPY_DEFAULT));
    printf("device 0 after device 1 wrote its own weights: weights[0] = %g (%s)\n", (double)w0,
           w0 == 10.0f ? "isolated" : "NOT isolated");
    bad += w0 != 10.0f;

    /* A misuse is an error code with a message, never a crash. */
    int not_a_symbol;
    aclError err = aclrtMemcpyToSymbol(&not_a_symbol, &w0, sizeof w0, 0, ACL_MEMCPY_HOST_TO_DEVICE);
    printf("misuse: aclrtMemcpyToSymbol(&not_a_symbol) -> %d: %s\n", err, aclGetRecentErrMsg());
    bad += err != ACL_ERROR_RT_INVALID_SYMBOL;

    CHECK(aclrtResetDeviceForce(0));
    CHECK(aclrtResetDeviceForce(1));
    CHECK(aclFinalize());
    printf("%s\n", bad ? "demo FAILED" : "demo passed");
    return bad ? 1 : 0;
}
