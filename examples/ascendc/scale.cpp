// Ascend C kernel file: compiled by the NPU compiler on CANN, by aclsim-cc here.
#include "kernel_operator.h"
#include "acl/acl.h"

__gm__ float weights[16] = {1, 2};              // a device variable, one instance per device

extern "C" __global__ __aicore__ void scale(GM_ADDR out, float k)
{
    uint32_t i = AscendC::GetBlockIdx();
    ((__gm__ float *)out)[i] = weights[i] * k;  // this device's instance
}

// Host code in the same file: the symbol, and the <<<>>> launch.
int32_t set_weights(const float *w, size_t count)
{
    return aclrtMemcpyToSymbol(weights, w, count * sizeof(float), 0, ACL_MEMCPY_HOST_TO_DEVICE);
}

int32_t scale_do(uint32_t blockDim, aclrtStream stream, float *out, float k)
{
    return (int32_t)(scale<<<blockDim, nullptr, stream>>>((GM_ADDR)out, k));
}
