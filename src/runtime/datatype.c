/*
 * Data types: element sizes, IEEE half-precision conversion, and data
 * buffers (an address and a size the buffer does not own). A data buffer is
 * a handle (handle.c), so a destroyed or forged one is recognised: 100000
 * from the calls that return a code, NULL/0 and a recorded error from the
 * getters (which CANN gives for NULL).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

size_t aclDataTypeSize(aclDataType dataType)
{
    switch (dataType) {
    case ACL_STRING:
    case ACL_DT_UNDEFINED: return 0;
    case ACL_UINT1:
    case ACL_INT4:            /* sub-byte types: one byte holds an element's storage unit */
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0: return 1;
    case ACL_FLOAT16:
    case ACL_INT16:
    case ACL_UINT16:
    case ACL_BF16: return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32: return 4;
    case ACL_COMPLEX128: return 16;
    default: return 8;        /* 64-bit types, and (as CANN) any other value */
    }
}

float aclFloat16ToFloat(aclFloat16 value)
{
    uint32_t sign = (uint32_t)(value & 0x8000u) << 16;
    uint32_t exp = (value >> 10) & 0x1fu, man = value & 0x3ffu, bits;
    if (exp == 0x1f) {                       /* infinity or NaN (payload kept) */
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp) {                        /* normal */
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man) {                        /* subnormal: normalise */
        int shift = 0;
        while (!(man & 0x400u)) {
            man <<= 1;
            shift++;
        }
        bits = sign | ((uint32_t)(113 - shift) << 23) | ((man & 0x3ffu) << 13);
    } else {
        bits = sign;                         /* signed zero */
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

aclFloat16 aclFloatToFloat16(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t exp = (bits >> 23) & 0xffu, man = bits & 0x7fffffu;
    if (exp == 0xff)                         /* infinity, or NaN kept quiet */
        return (aclFloat16)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;             /* the half's biased exponent */
    if (e >= 0x1f)
        return (aclFloat16)(sign | 0x7c00u); /* too large: infinity */
    uint32_t m = man | (exp ? 0x800000u : 0);  /* 24-bit significand */
    int shift = e > 0 ? 13 : 14 - e;         /* bits dropped to fit 10 (or fewer) */
    if (shift > 24)
        return sign;                         /* rounds to zero */
    uint32_t kept = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
        kept++;                              /* round to nearest, ties to even */
    /* A normal result carries its implicit bit in kept (bit 10); adding the
     * exponent field then carries rounding overflow into the exponent. */
    uint32_t out = e > 0 ? ((uint32_t)(e - 1) << 10) + kept : kept;
    return (aclFloat16)(sign | out);
}

struct aclDataBuffer {
    void *handle;
    void *data;
    size_t size;
};

static struct aclDataBuffer *buffer_of(const aclDataBuffer *b, const char *api)
{
    if (!b) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataBuffer is NULL");
        return NULL;
    }
    struct aclDataBuffer *d = aclsim__handle_get(b, ACLSIM_H_DATA_BUFFER);
    if (!d)
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                     "dataBuffer %p is not a live data buffer (destroyed, or never created)",
                     (const void *)b);
    return d;
}

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
    struct aclDataBuffer *d = aclsim__calloc(1, sizeof *d);
    if (!d || !(d->handle = aclsim__handle_new(ACLSIM_H_DATA_BUFFER, d))) {
        free(d);
        aclsim__fail(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer", "out of memory");
        return NULL;
    }
    d->data = data;
    d->size = size;
    return d->handle;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
    static const char api[] = "aclDestroyDataBuffer";
    struct aclDataBuffer *d = buffer_of(dataBuffer, api);
    if (!d)
        return ACL_ERROR_INVALID_PARAM;
    if (!aclsim__handle_free(dataBuffer))   /* a racing destroy won */
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "dataBuffer %p is not a live data buffer (destroyed, or never created)",
                            (const void *)dataBuffer);
    free(d);
    return ACL_SUCCESS;
}

/* A data buffer is not thread-safe, as in CANN: updating one while another
 * thread reads it is the program's race. */
aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size)
{
    struct aclDataBuffer *d = buffer_of(dataBuffer, "aclUpdateDataBuffer");
    if (!d)
        return ACL_ERROR_INVALID_PARAM;
    d->data = data;
    d->size = size;
    return ACL_SUCCESS;
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer)
{
    struct aclDataBuffer *d = buffer_of(dataBuffer, "aclGetDataBufferAddr");
    return d ? d->data : NULL;
}

uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer)
{
    struct aclDataBuffer *d = buffer_of(dataBuffer, "aclGetDataBufferSize");
    return d ? (uint32_t)d->size : 0;
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer)
{
    struct aclDataBuffer *d = buffer_of(dataBuffer, "aclGetDataBufferSizeV2");
    return d ? d->size : 0;
}
