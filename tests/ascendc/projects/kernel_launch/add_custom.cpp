/* z = (x + y) * g_scale[0] + SCALE_OFFSET, one tile of TILE_LENGTH floats per block. */
#include "kernel_operator.h"
#include "acl/acl.h"
#include "add_custom_kernel.h"

__gm__ float g_scale[1] = {1.0f};   // a device variable: the host sets it with aclrtMemcpyToSymbol

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    uint32_t offset = AscendC::GetBlockIdx() * TILE_LENGTH;
    AddTile((__gm__ float *)x + offset, (__gm__ float *)y + offset, (__gm__ float *)z + offset,
            g_scale[0]);
}

extern "C" __global__ __aicore__ void report_arch(GM_ADDR out)
{
    if (AscendC::GetBlockIdx() == 0) {
        *(__gm__ int32_t *)out = __NPU_ARCH__;
    }
}

#ifndef ASCENDC_CPU_DEBUG
// The <<<>>> wrapper of CANN's older kernel-launch samples.
int32_t add_custom_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z, float scale)
{
    aclError ret = aclrtMemcpyToSymbol(g_scale, &scale, sizeof(scale), 0, ACL_MEMCPY_HOST_TO_DEVICE);
    if (ret != ACL_SUCCESS) {
        return ret;
    }
    return (int32_t)(add_custom<<<blockDim, nullptr, stream>>>(x, y, z));
}
#endif
