/*
 * Ascend C's vector programming API for aclsim (included by
 * kernel_operator.h): TPipe, TQue, TQueBind, TBuf, GlobalTensor,
 * LocalTensor, DataCopy / DataCopyPad, vector math (level 2 "count" forms
 * and level 0 mask/repeat forms), masks, PipeBarrier, SetFlag/WaitFlag,
 * SyncAll. See docs/ascendc-vector.md.
 *
 * Every block has its own unified buffer (UB) of the size of the simulated
 * SoC's (aclsimKernelUbSize), owned by the block (aclsimBlockAlloc). The
 * layer checks what the NPU does not: each misuse fails the launch like an
 * AI Core exception (aclsimTrap: 507015 at the next synchronize) with a
 * message naming the API, the buffer and the limit; aclGetRecentErrMsg adds
 * the kernel and the block.
 *
 * Numerics: operations compute in double and round once to the result type
 * (round to nearest even), which makes add, sub, mul, the scalar forms, max,
 * min, abs, relu, leaky relu, duplicate and cast bit-exact for half,
 * bfloat16_t and float; division and the transcendental functions are
 * correctly rounded results of the double computation (well within CANN's
 * tolerances). A finite result too large for the type is a float overflow
 * (aclrtGetOverflowStatus) and saturates in saturation mode, as half's
 * operators do.
 */
#ifndef ACLSIM_ASCENDC_VECTOR_H
#define ACLSIM_ASCENDC_VECTOR_H
#pragma GCC system_header

#include <cmath>
#include <cstdio>
#include <limits>

#include "aclsim_ascendc.h"
#include "aclsim_check.h"

/* ---- pipes and events (global, as CANN's compiler builtins) ------------------ */
enum pipe_t : int {
    PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5,
    PIPE_V2, PIPE_FIX, VIRTUAL_PIPE_MTE2_L1A, VIRTUAL_PIPE_MTE2_L1B, PIPE_NUM
};
enum event_t : int {
    EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7
};

namespace AscendC {

enum class TPosition : uint8_t {
    GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM,
    SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX
};
using QuePosition = TPosition;
enum class HardEvent : uint8_t {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V,
    MTE3_MTE1, MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3,
    S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3,
    MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};
using TEventID = int8_t;
enum class RoundMode : uint8_t {
    CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD,
    CAST_HYBRID
};
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t {
    VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE
};
enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };
enum class ReduceOrder : uint8_t {
    ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX
};
enum class CacheMode : uint8_t { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL, CACHE_MODE_LAST,
                                 CACHE_MODE_PERSISTENT };

constexpr uint32_t ONE_BLK_SIZE = 32;      /* bytes of a data block */
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr uint32_t DEFAULT_BLK_NUM = 8;    /* blocks per repeat */
constexpr uint32_t DEFAULT_BLK_STRIDE = 1;
constexpr uint32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr int32_t MAX_REPEAT_TIMES = 255;

struct BinaryRepeatParams {
    BinaryRepeatParams() = default;
    BinaryRepeatParams(uint8_t dstBlkStrideIn, uint8_t src0BlkStrideIn, uint8_t src1BlkStrideIn,
                       uint8_t dstRepStrideIn, uint8_t src0RepStrideIn, uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn),
          src1BlkStride(src1BlkStrideIn), dstRepStride(dstRepStrideIn),
          src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};
struct UnaryRepeatParams {
    UnaryRepeatParams() = default;
    UnaryRepeatParams(uint16_t dstBlkStrideIn, uint16_t srcBlkStrideIn, uint8_t dstRepStrideIn,
                      uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn),
          dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint16_t srcBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t srcRepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};
struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn, uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};
struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn,
                      uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn),
          rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};
struct DataCopyPadParams {
    DataCopyPadParams() = default;
    DataCopyPadParams(bool isPadIn, uint8_t left, uint8_t right, uint64_t value)
        : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};
template <typename T> struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool isPadIn, uint8_t left, uint8_t right, T value)
        : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = T();
};

template <typename T> class LocalTensor;
template <typename T> class GlobalTensor;
class TPipe;

} // namespace AscendC

/* ---- support: checks, per-block state, numerics ------------------------------ */
namespace aclsim_asc {

/* Fails the launch (aclsimTrap) with a formatted message. */
[[noreturn]] __attribute__((format(printf, 1, 2))) inline void fail(const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    __builtin_vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    aclsimTrap(msg);
}
__attribute__((format(printf, 1, 2))) inline void warn(const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    __builtin_vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    aclsimKernelWarn(msg);
}

/* The words of aclsimBlockLocal this layer uses. */
enum : unsigned {
    BL_UB = 0,          /* the block's UB (uint8_t *) */
    BL_PIPE = 1,        /* the block's TPipe (GetTPipePtr) */
    BL_MASK_MODE = 2,   /* 1: counter mode (SetMaskCount) */
    BL_MASK_LO = 3,     /* the vector mask (SetVectorMask) */
    BL_MASK_HI = 4,
    BL_FLAGS = 5,       /* 6 words: SetFlag bits per HardEvent x event id */
};
inline uint64_t *local() { return aclsimBlockLocal(); }
inline uint8_t *ub_base()
{
    uint64_t *l = local();
    if (!l[BL_UB]) {
        void *p = aclsimBlockAlloc(aclsimKernelUbSize());
        if (!p)
            fail("TPipe: out of host memory for the block's unified buffer (%u bytes)",
                 aclsimKernelUbSize());
        l[BL_UB] = (uint64_t)(uintptr_t)p;
    }
    return (uint8_t *)(uintptr_t)l[BL_UB];
}

inline const char *pos_name(AscendC::TPosition p)
{
    static const char *const n[] = {"GM", "A1", "A2", "B1", "B2", "C1", "C2", "CO1", "CO2",
                                    "VECIN", "VECOUT", "VECCALC", "TSCM", "SPM", "TSCM",
                                    "C2PIPE2GM", "C2PIPE2LOCAL", "MAX"};
    unsigned i = (unsigned)p;
    if (p == AscendC::TPosition::SPM)
        return "SPM";
    return i < sizeof n / sizeof *n ? n[i] : "?";
}

/* One buffer of a queue or TBuf in the UB. Tensors remember the generation
 * they were handed out with: FreeTensor and TPipe::Reset advance it, so a
 * later use of the tensor is caught. */
enum rec_state : uint8_t { REC_FREE = 0, REC_ALLOCATED, REC_QUEUED };
struct buf_rec {
    uint8_t *base = nullptr;
    uint32_t len = 0;
    uint32_t gen = 1;
    uint8_t state = REC_FREE;
    uint8_t index = 0;
    const char *owner = "?";   /* "TQue<VECIN, 2>", "TBuf<VECCALC>" */
};

/* ---- numerics ---- */
template <class T> struct is_lowf : std::false_type {};
template <> struct is_lowf<half> : std::true_type {};
template <> struct is_lowf<bfloat16_t> : std::true_type {};
template <class T> struct is_fp
    : std::integral_constant<bool, is_lowf<T>::value || std::is_floating_point<T>::value> {};

/* half <-> float, inline (the vector loops' hot path): the same results as
 * aclFloat16ToFloat / aclFloatToFloat16 (round to nearest even, NaN kept
 * quiet with its payload). */
inline float h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f)
        bits = sign | 0x7f800000u | (man << 13);
    else if (exp)
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    else {
        float f = (float)man * 5.9604644775390625e-8f;   /* subnormal: man * 2^-24, exact */
        return sign ? -f : f;
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
inline uint16_t f2h(float value)
{
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t exp = (bits >> 23) & 0xffu, man = bits & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int e = (int)exp - 112;                 /* the half's biased exponent */
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00u);
    uint32_t m = man | (exp ? 0x800000u : 0);
    int shift = e > 0 ? 13 : 14 - e;
    if (shift > 24)
        return sign;
    uint32_t kept = m >> shift, rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    kept += rest > halfway || (rest == halfway && (kept & 1));
    return (uint16_t)(sign | (e > 0 ? ((uint32_t)(e - 1) << 10) + kept : kept));
}

template <class T> inline double to_d(T v) { return (double)v; }
inline double to_d(half v) { return (double)h2f(v.bits); }
inline double to_d(bfloat16_t v) { return (double)(float)v; }

/* Rounds the signed value q (scaled so that the result is an integer) by mode. */
inline double round_by(double q, AscendC::RoundMode m)
{
    switch (m) {
    case AscendC::RoundMode::CAST_FLOOR: return std::floor(q);
    case AscendC::RoundMode::CAST_CEIL: return std::ceil(q);
    case AscendC::RoundMode::CAST_ROUND: return std::round(q);
    case AscendC::RoundMode::CAST_TRUNC: return std::trunc(q);
    case AscendC::RoundMode::CAST_ODD: {
        double t = std::trunc(q);
        if (t != q && std::fmod(t, 2.0) == 0.0)
            t += q > 0 ? 1.0 : -1.0;
        return t;
    }
    default: return std::nearbyint(q);   /* round to nearest even */
    }
}

/* d rounded once to a binary format with M mantissa bits and exponent bias
 * B (half: 10, 15; bfloat16: 7, 127): the bits. */
template <int M, int B> inline uint16_t encode(double d, AscendC::RoundMode m)
{
    uint16_t sign = std::signbit(d) ? 0x8000u : 0;
    const uint16_t inf = (uint16_t)(((2 * B + 1) << M));
    if (std::isnan(d))
        return (uint16_t)(sign | inf | (1u << (M - 1)));
    if (std::isinf(d))
        return (uint16_t)(sign | inf);
    double a = std::fabs(d);
    const double maxf = std::ldexp(2.0 - std::ldexp(1.0, -M), B);
    int e;
    std::frexp(a, &e);                /* a = f * 2^e, f in [0.5, 1) */
    int exp = e - 1;                  /* a in [2^exp, 2^(exp+1)) */
    if (a == 0.0)
        return sign;
    if (exp < 1 - B)
        exp = 1 - B;                  /* subnormal: the smallest exponent's quantum */
    double q = std::ldexp(d, M - exp);   /* signed, integer after rounding */
    double r = std::fabs(round_by(q, m));
    if (r >= std::ldexp(1.0, M + 1)) {   /* rounded up to the next binade */
        r /= 2;
        exp++;
    }
    double result = std::ldexp(r, exp - M);
    if (result > maxf) {   /* past the largest finite value */
        bool toward_zero = m == AscendC::RoundMode::CAST_TRUNC ||
                           m == AscendC::RoundMode::CAST_ODD ||
                           (m == AscendC::RoundMode::CAST_FLOOR && !sign) ||
                           (m == AscendC::RoundMode::CAST_CEIL && sign);
        return (uint16_t)(sign | (toward_zero ? inf - 1 : inf));
    }
    if (r < std::ldexp(1.0, M))          /* subnormal (or zero) */
        return (uint16_t)(sign | (uint16_t)r);
    return (uint16_t)(sign | (uint16_t)((exp + B) << M) | (uint16_t)(r - std::ldexp(1.0, M)));
}

/* The value of type T nearest to d by mode, and a float overflow reported
 * (saturating in saturation mode) when d is finite and the result is not. */
template <class T> struct conv;
template <> struct conv<half> {
    static half from(double d, AscendC::RoundMode m = AscendC::RoundMode::CAST_RINT)
    {
        return half::from_bits(encode<10, 15>(d, m));
    }
};
template <> struct conv<bfloat16_t> {
    static bfloat16_t from(double d, AscendC::RoundMode m = AscendC::RoundMode::CAST_RINT)
    {
        return bfloat16_t::from_bits(encode<7, 127>(d, m));
    }
};
template <> struct conv<float> {
    static float from(double d, AscendC::RoundMode m = AscendC::RoundMode::CAST_RINT)
    {
        if (m == AscendC::RoundMode::CAST_RINT || m == AscendC::RoundMode::CAST_NONE ||
            std::isnan(d) || std::isinf(d))
            return (float)d;
        /* directed modes: through the scaled integer, as encode does */
        if (d == 0.0)
            return (float)d;
        int e;
        std::frexp(std::fabs(d), &e);
        int exp = e - 1 < -126 ? -126 : e - 1;
        double r = round_by(std::ldexp(d, 23 - exp), m);
        return (float)std::ldexp(r, exp - 23);
    }
};
template <> struct conv<double> {
    static double from(double d, AscendC::RoundMode = AscendC::RoundMode::CAST_RINT) { return d; }
};
/* Integers: rounded by mode, saturated to the type's range (NaN: 0). */
template <class T> struct conv {
    static T from(double d, AscendC::RoundMode m = AscendC::RoundMode::CAST_TRUNC)
    {
        if (std::isnan(d))
            return T(0);
        double r = round_by(d, m);
        if (r <= (double)std::numeric_limits<T>::min())
            return std::numeric_limits<T>::min();
        if (r >= (double)std::numeric_limits<T>::max())
            return std::numeric_limits<T>::max();
        return (T)r;
    }
};

/* A result computed in double, rounded once to T (RNE), with overflow. */
template <class T> inline T fin(double d)
{
    T r = conv<T>::from(d, is_fp<T>::value ? AscendC::RoundMode::CAST_RINT
                                           : AscendC::RoundMode::CAST_TRUNC);
    if (is_fp<T>::value && std::isfinite(d) && std::isinf(to_d(r))) {
        aclsimReportFloatOverflow();
        if (aclsimFloatOverflowMode() == 0)   /* saturation: the largest finite value */
            r = conv<T>::from(d, AscendC::RoundMode::CAST_TRUNC);
    }
    return r;
}

} // namespace aclsim_asc

namespace AscendC {

/* ---- GlobalTensor ------------------------------------------------------------ */
template <typename T> class GlobalTensor {
public:
    using PrimType = T;
    GlobalTensor() = default;
    /* bufferSize: elements. Without it, the size is what remains of the
     * aclrtMalloc allocation holding buffer, when buffer is device memory. */
    void SetGlobalBuffer(__gm__ T *buffer, uint64_t bufferSize)
    {
        addr_ = buffer;
        size_ = bufferSize;
        known_ = true;
    }
    void SetGlobalBuffer(__gm__ T *buffer)
    {
        addr_ = buffer;
        size_t room = aclsimDeviceRoom(buffer);
        known_ = room != SIZE_MAX;
        size_ = known_ ? room / sizeof(T) : 0;
    }
    __gm__ T *GetPhyAddr() const { return addr_; }
    __gm__ T *GetPhyAddr(uint64_t offset) const { return addr_ + offset; }
    uint64_t GetSize() const { return size_; }
    T GetValue(uint64_t offset) const
    {
        if (!gm(offset, 1, ACLSIM_GM_READ, "GlobalTensor::GetValue"))
            return T();
        return addr_[offset];
    }
    void SetValue(uint64_t offset, T value)
    {
        if (gm(offset, 1, ACLSIM_GM_WRITE, "GlobalTensor::SetValue"))
            addr_[offset] = value;
    }
    T &operator()(uint64_t offset)
    {
        if (!gm(offset, 1, ACLSIM_GM_REF, "GlobalTensor::operator()")) {
            static thread_local T skipped;   /* an access the checker skipped */
            return skipped;
        }
        return addr_[offset];
    }
    GlobalTensor operator[](uint64_t offset) const
    {
        if (known_ && offset > size_)
            aclsim_asc::fail("GlobalTensor::operator[]: offset %llu is outside the buffer of "
                             "%llu elements set by SetGlobalBuffer", (unsigned long long)offset,
                             (unsigned long long)size_);
        GlobalTensor g = *this;
        g.addr_ = addr_ + offset;
        g.size_ = known_ ? size_ - offset : 0;
        return g;
    }
    void SetL2CacheHint(CacheMode) {}
    /* The elements [offset, offset + n) must lie in the buffer. */
    void check(uint64_t offset, uint64_t n, const char *api) const
    {
        if (!addr_)
            aclsim_asc::fail("%s: the GlobalTensor has no buffer (SetGlobalBuffer)", api);
        if (known_ && (offset > size_ || n > size_ - offset))
            aclsim_asc::fail("%s: elements [%llu, %llu) are outside the GlobalTensor's buffer "
                             "of %llu elements (%llu bytes)", api, (unsigned long long)offset,
                             (unsigned long long)(offset + n), (unsigned long long)size_,
                             (unsigned long long)(size_ * sizeof(T)));
    }

    /* Before an access to GM of the elements [offset, offset + n) -- or of
     * count blocks of len bytes, step bytes apart, from offset, within them
     * -- how: ACLSIM_GM_READ, _WRITE or _REF. Whether to do it: without the
     * checker (one load and branch) the layer's own check (a failure traps);
     * in checker mode also the checker's hook (aclsim_check.h), which with
     * oob on checks instead and says to skip an access out of bounds. */
    bool gm(uint64_t offset, uint64_t n, int how, const char *api, uint64_t count = 0,
            uint64_t len = 0, uint64_t step = 0) const
    {
        unsigned m = __atomic_load_n(&aclsim__check_mask, __ATOMIC_RELAXED);
        if (__builtin_expect(!(m & ACLSIM_GM_CHECK_ANY), 1)) {
            check(offset, n, api);
            return true;
        }
        if (!addr_ || !(m & ACLSIM_GM_CHECK_OOB))
            check(offset, n, api);
        if (!count) {   /* contiguous */
            count = 1;
            len = step = n * sizeof(T);
        }
        return aclsimCheckGm(addr_, known_ ? size_ * sizeof(T) : UINT64_MAX,
                             offset * sizeof(T), count, len, step, how, api) == 0;
    }

private:
    T *addr_ = nullptr;
    uint64_t size_ = 0;
    bool known_ = false;
};

/* ---- LocalTensor ------------------------------------------------------------- */
template <typename T> class LocalTensor {
public:
    using PrimType = T;
    LocalTensor() = default;
    LocalTensor(aclsim_asc::buf_rec *rec, T *addr, uint32_t size)
        : addr_(addr), size_(size), rec_(rec), gen_(rec ? rec->gen : 0) {}
    uint32_t GetSize() const { return size_; }
    uint32_t GetLength() const { return size_ * (uint32_t)sizeof(T); }
    void SetSize(uint32_t size)
    {
        if (rec_ && (uint64_t)size * sizeof(T) > room())
            aclsim_asc::fail("LocalTensor::SetSize: %u elements (%llu bytes) do not fit in "
                             "%s buffer %u (%u bytes)", size,
                             (unsigned long long)size * sizeof(T), rec_->owner, rec_->index,
                             rec_->len);
        size_ = size;
    }
    T *GetPhyAddr() const { return addr_; }
    T *GetPhyAddr(uint32_t offset) const { return addr_ + offset; }
    int32_t GetPosition() const { return 0; }
    T GetValue(uint32_t index) const
    {
        check("LocalTensor::GetValue");
        range(index, 1, "LocalTensor::GetValue");
        return addr_[index];
    }
    void SetValue(uint32_t index, T value) const
    {
        check("LocalTensor::SetValue");
        range(index, 1, "LocalTensor::SetValue");
        addr_[index] = value;
    }
    T &operator()(uint32_t index) const
    {
        check("LocalTensor::operator()");
        range(index, 1, "LocalTensor::operator()");
        return addr_[index];
    }
    LocalTensor operator[](uint32_t offset) const
    {
        check("LocalTensor::operator[]");
        if (offset > size_)
            aclsim_asc::fail("LocalTensor::operator[]: offset %u is outside the tensor of %u "
                             "elements (%s)", offset, size_, where());
        LocalTensor t = *this;
        t.addr_ = addr_ + offset;
        t.size_ = size_ - offset;
        return t;
    }
    template <typename U> LocalTensor<U> ReinterpretCast() const
    {
        LocalTensor<U> t;
        t.set((U *)(void *)addr_, (uint32_t)((uint64_t)size_ * sizeof(T) / sizeof(U)), rec_, gen_);
        return t;
    }
    /* aclsim: the tensor is live (not freed, not reset), or fail naming api. */
    void check(const char *api) const
    {
        if (!addr_)
            aclsim_asc::fail("%s: the LocalTensor has no buffer (from AllocTensor, DeQue or "
                             "TBuf::Get)", api);
        if (rec_ && (rec_->gen != gen_ || rec_->state == aclsim_asc::REC_FREE))
            aclsim_asc::fail("%s: use of a freed tensor (%s buffer %u was released by "
                             "FreeTensor or TPipe::Reset)", api, rec_->owner, rec_->index);
    }
    /* Elements [index, index + n) lie in the tensor. */
    void range(uint64_t index, uint64_t n, const char *api) const
    {
        if (index > size_ || n > size_ - index)
            aclsim_asc::fail("%s: elements [%llu, %llu) are outside the LocalTensor of %u "
                             "elements (%s)", api, (unsigned long long)index,
                             (unsigned long long)(index + n), size_, where());
    }
    /* The UB address is 32-byte aligned. */
    void aligned(const char *api, const char *operand) const
    {
        if (((uintptr_t)addr_ & 31u) != 0)
            aclsim_asc::fail("%s: %s's UB address is not 32-byte aligned (offset %llu bytes "
                             "into %s)", api, operand, (unsigned long long)offset_bytes(),
                             where());
    }
    /* The bytes from the tensor's start to the end of its buffer. */
    uint64_t room() const
    {
        return rec_ ? rec_->len - offset_bytes() : (uint64_t)size_ * sizeof(T);
    }
    uint64_t offset_bytes() const
    {
        return rec_ ? (uint64_t)((uint8_t *)addr_ - rec_->base) : 0;
    }
    const char *where() const
    {
        static thread_local char w[96];
        if (!rec_)
            return "no buffer";
        __builtin_snprintf(w, sizeof w, "%s buffer %u", rec_->owner, rec_->index);
        return w;
    }
    void set(T *addr, uint32_t size, aclsim_asc::buf_rec *rec, uint32_t gen)
    {
        addr_ = addr;
        size_ = size;
        rec_ = rec;
        gen_ = gen;
    }
    aclsim_asc::buf_rec *rec() const { return rec_; }

private:
    T *addr_ = nullptr;
    uint32_t size_ = 0;
    aclsim_asc::buf_rec *rec_ = nullptr;
    uint32_t gen_ = 0;
};

/* ---- queues and buffers -------------------------------------------------------- */
} // namespace AscendC

namespace aclsim_asc {
constexpr unsigned MAX_QUE_BUFS = 64;   /* buffers per queue aclsim keeps */
struct queue_base {
    buf_rec recs[MAX_QUE_BUFS];
    uint32_t num = 0;          /* buffers given by InitBuffer */
    int32_t depth = 1;         /* tensors the queue holds */
    uint32_t ring[MAX_QUE_BUFS];
    uint32_t head = 0, count = 0;
    char name[48] = "TQue";
    void init_name(const char *kind, AscendC::TPosition a, AscendC::TPosition b, bool bind,
                   int32_t d)
    {
        if (bind)
            __builtin_snprintf(name, sizeof name, "%s<%s, %s, %d>", kind, pos_name(a),
                               pos_name(b), (int)d);
        else
            __builtin_snprintf(name, sizeof name, "%s<%s, %d>", kind, pos_name(a), (int)d);
        for (unsigned i = 0; i < MAX_QUE_BUFS; i++) {
            recs[i].owner = name;
            recs[i].index = (uint8_t)i;
        }
    }
    void reset_bufs()
    {
        for (unsigned i = 0; i < num; i++) {
            recs[i].gen++;
            recs[i].state = REC_FREE;
        }
        num = 0;
        head = count = 0;
    }
    buf_rec *own(const void *rec, const char *api)
    {
        const buf_rec *r = (const buf_rec *)rec;
        if (!r || r < recs || r >= recs + num)
            fail("%s::%s: the tensor does not belong to this queue", name, api);
        return const_cast<buf_rec *>(r);
    }
    template <class T> AscendC::LocalTensor<T> alloc()
    {
        if (!num)
            fail("%s::AllocTensor: the queue has no buffers (TPipe::InitBuffer)", name);
        for (unsigned i = 0; i < num; i++)
            if (recs[i].state == REC_FREE) {
                recs[i].state = REC_ALLOCATED;
                return AscendC::LocalTensor<T>(&recs[i], (T *)(void *)recs[i].base,
                                               recs[i].len / (uint32_t)sizeof(T));
            }
        fail("%s::AllocTensor: all %u buffers are allocated and not freed (FreeTensor them "
             "first; on the NPU this waits forever)", name, num);
    }
    template <class T> bool enque(const AscendC::LocalTensor<T> &t)
    {
        t.check("EnQue");
        buf_rec *r = own(t.rec(), "EnQue");
        if (r->state == REC_QUEUED)
            fail("%s::EnQue: buffer %u is in the queue already", name, r->index);
        if ((int32_t)count >= depth)
            fail("%s::EnQue: the queue is full (depth %d; DeQue first)", name, (int)depth);
        r->state = REC_QUEUED;
        ring[(head + count) % MAX_QUE_BUFS] = r->index;
        count++;
        return true;
    }
    template <class T> AscendC::LocalTensor<T> deque()
    {
        if (!count)
            fail("%s::DeQue: the queue is empty (EnQue first; on the NPU this waits forever)",
                 name);
        buf_rec *r = &recs[ring[head]];
        head = (head + 1) % MAX_QUE_BUFS;
        count--;
        r->state = REC_ALLOCATED;
        return AscendC::LocalTensor<T>(r, (T *)(void *)r->base, r->len / (uint32_t)sizeof(T));
    }
    template <class T> void free_tensor(const AscendC::LocalTensor<T> &t)
    {
        buf_rec *r = own(t.rec(), "FreeTensor");
        if (r->state == REC_FREE)
            fail("%s::FreeTensor: buffer %u is free already (double FreeTensor)", name,
                 r->index);
        t.check("FreeTensor");
        if (r->state == REC_QUEUED)
            fail("%s::FreeTensor: buffer %u is in the queue (DeQue it first)", name, r->index);
        r->state = REC_FREE;
        r->gen++;
    }
    bool has_idle() const
    {
        for (unsigned i = 0; i < num; i++)
            if (recs[i].state == REC_FREE)
                return true;
        return false;
    }
};
} // namespace aclsim_asc

namespace AscendC {

template <TPosition src, TPosition dst, int32_t D
#if __cplusplus >= 201703L
          , auto mask = 0
#endif
          >
class TQueBind : public aclsim_asc::queue_base {
public:
    TQueBind()
    {
        this->depth = D;
        init_name(src == dst ? "TQue" : "TQueBind", src, dst, src != dst, D);
    }
    TQueBind(const TQueBind &) = delete;
    TQueBind &operator=(const TQueBind &) = delete;
    template <typename T> LocalTensor<T> AllocTensor() { return alloc<T>(); }
    template <typename T> void FreeTensor(LocalTensor<T> &t) { free_tensor(t); }
    template <typename T> bool EnQue(const LocalTensor<T> &t) { return enque(t); }
    template <typename T> LocalTensor<T> DeQue() { return deque<T>(); }
    bool VacantInQue() { return (int32_t)count < this->depth; }
    bool HasTensorInQue() { return count > 0; }
    int32_t GetTensorCountInQue() { return (int32_t)count; }
    bool HasIdleBuffer() { return has_idle(); }
    void FreeAllEvent() {}
};

template <TPosition pos, int32_t D
#if __cplusplus >= 201703L
          , auto mask = 0
#endif
          >
class TQue : public TQueBind<pos, pos, D> {};

template <TPosition pos = TPosition::VECCALC> class TBuf {
public:
    TBuf()
    {
        __builtin_snprintf(name_, sizeof name_, "TBuf<%s>", aclsim_asc::pos_name(pos));
        rec_.owner = name_;
    }
    TBuf(const TBuf &) = delete;
    TBuf &operator=(const TBuf &) = delete;
    template <typename T> LocalTensor<T> Get() { return Get<T>(rec_.len / (uint32_t)sizeof(T)); }
    template <typename T> LocalTensor<T> Get(uint32_t len)
    {
        if (rec_.state == aclsim_asc::REC_FREE)
            aclsim_asc::fail("%s::Get: the buffer has no memory (TPipe::InitBuffer)", name_);
        if ((uint64_t)len * sizeof(T) > rec_.len)
            aclsim_asc::fail("%s::Get: %u elements (%llu bytes) do not fit in the buffer of %u "
                             "bytes", name_, len, (unsigned long long)len * sizeof(T), rec_.len);
        return LocalTensor<T>(&rec_, (T *)(void *)rec_.base, len);
    }
    template <typename T> LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset)
    {
        if (bufOffset % 32)
            aclsim_asc::fail("%s::GetWithOffset: offset %u is not 32-byte aligned", name_,
                             bufOffset);
        if ((uint64_t)bufOffset + (uint64_t)size * sizeof(T) > rec_.len)
            aclsim_asc::fail("%s::GetWithOffset: %u elements at byte %u do not fit in the "
                             "buffer of %u bytes", name_, size, bufOffset, rec_.len);
        LocalTensor<T> t = Get<T>(0);
        t.set((T *)(void *)(rec_.base + bufOffset), size, &rec_, rec_.gen);
        return t;
    }
    aclsim_asc::buf_rec rec_;
    char name_[32];
};

/* ---- TPipe ------------------------------------------------------------------- */
class TPipe {
public:
    TPipe() { aclsim_asc::local()[aclsim_asc::BL_PIPE] = (uint64_t)(uintptr_t)this; }
    /* The queues and buffers may be gone already (destroyed before the
     * pipe, or out of scope): the destructor does not touch them. */
    ~TPipe() { forget(); }
    TPipe(const TPipe &) = delete;
    TPipe &operator=(const TPipe &) = delete;

    /* num buffers of len bytes each (len rounded up to 32 bytes). */
    template <class Q, typename std::enable_if<
                           std::is_base_of<aclsim_asc::queue_base, Q>::value, int>::type = 0>
    bool InitBuffer(Q &que, uint8_t num, uint32_t len)
    {
        return init_queue(que, num, len);
    }
    template <TPosition pos> bool InitBuffer(TBuf<pos> &buf, uint32_t len)
    {
        uint8_t *p = carve(buf.name_, 1, len);
        if (buf.rec_.state != aclsim_asc::REC_FREE)
            aclsim_asc::fail("TPipe::InitBuffer: %s has memory already", buf.name_);
        buf.rec_.base = p;
        buf.rec_.len = len;
        buf.rec_.state = aclsim_asc::REC_ALLOCATED;
        track(&buf.rec_, nullptr);
        return true;
    }
    /* Releases every buffer: tensors from before are invalid afterwards. */
    void Reset()
    {
        for (unsigned i = 0; i < nq_; i++) {
            if (queues_[i])
                queues_[i]->reset_bufs();
            else if (bufs_[i]) {
                bufs_[i]->gen++;
                bufs_[i]->state = aclsim_asc::REC_FREE;
                bufs_[i]->len = 0;
            }
        }
        nq_ = 0;
        used_ = 0;
    }
    void Destroy()
    {
        Reset();
        forget();
    }
    void Init() {}
    template <HardEvent evt> TEventID AllocEventID() { return 0; }
    template <HardEvent evt> void ReleaseEventID(TEventID) {}
    TEventID FetchEventID(HardEvent) { return 0; }
    template <HardEvent evt> TEventID FetchEventID() { return 0; }
    /* aclsim: bytes of UB in use. */
    uint32_t used() const { return used_; }

private:
    void forget()
    {
        uint64_t *l = aclsimKernelDeviceSlot() != ACLSIM_HOST_SLOT ? aclsim_asc::local() : nullptr;
        if (l && l[aclsim_asc::BL_PIPE] == (uint64_t)(uintptr_t)this)
            l[aclsim_asc::BL_PIPE] = 0;
        nq_ = 0;
        used_ = 0;
    }
    template <class Q> bool init_queue(Q &que, uint8_t num, uint32_t len)
    {
        if (num == 0 || num > aclsim_asc::MAX_QUE_BUFS)
            aclsim_asc::fail("TPipe::InitBuffer: %s: %u buffers (1 to %u)", que.name,
                             (unsigned)num, aclsim_asc::MAX_QUE_BUFS);
        if (que.num)
            aclsim_asc::fail("TPipe::InitBuffer: %s has buffers already", que.name);
        uint8_t *p = carve(que.name, num, len);
        uint32_t each = (len + 31u) & ~31u;
        for (unsigned i = 0; i < num; i++) {
            que.recs[i].base = p + (size_t)i * each;
            que.recs[i].len = len;
            que.recs[i].state = aclsim_asc::REC_FREE;
        }
        que.num = num;
        que.head = que.count = 0;
        track(nullptr, &que);
        return true;
    }
    uint8_t *carve(const char *what, unsigned num, uint32_t len)
    {
        uint64_t each = ((uint64_t)len + 31u) & ~(uint64_t)31u;
        uint64_t need = each * num;
        uint32_t ub = aclsimKernelUbSize();
        if (len == 0 || (uint64_t)used_ + need > ub)
            aclsim_asc::fail("TPipe::InitBuffer: %s: %u x %u bytes at UB offset %u need %llu "
                             "bytes; the unified buffer has %u bytes (%s)", what, num, len,
                             used_, (unsigned long long)(used_ + need), ub,
                             len == 0 ? "a length of 0" : "UB capacity exceeded");
        uint8_t *p = aclsim_asc::ub_base() + used_;
        used_ += (uint32_t)need;
        return p;
    }
    void track(aclsim_asc::buf_rec *b, aclsim_asc::queue_base *q)
    {
        if (nq_ == sizeof queues_ / sizeof *queues_)
            aclsim_asc::fail("TPipe::InitBuffer: more than %u queues and buffers",
                             (unsigned)(sizeof queues_ / sizeof *queues_));
        bufs_[nq_] = b;
        queues_[nq_++] = q;
    }
    uint32_t used_ = 0;
    unsigned nq_ = 0;
    aclsim_asc::queue_base *queues_[64] = {};
    aclsim_asc::buf_rec *bufs_[64] = {};
};

inline TPipe *GetTPipePtr()
{
    return (TPipe *)(uintptr_t)aclsim_asc::local()[aclsim_asc::BL_PIPE];
}

/* ---- LocalMemAllocator (static tensor programming, without TPipe) ------------- */
enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

/* Hands out consecutive pieces of the block's UB (each rounded up to 32
 * bytes), from its start. Not to be mixed with a TPipe (checked). */
template <Hardware hard = Hardware::UB> class LocalMemAllocator {
    static_assert(hard == Hardware::UB, "aclsim: LocalMemAllocator supports Hardware::UB only");

public:
    LocalMemAllocator() {}
    uint32_t GetCurAddr() const { return cur_; }
    template <class DataType, uint32_t tileSize> LocalTensor<DataType> Alloc()
    {
        return take<DataType>(tileSize);
    }
    template <TPosition pos, class DataType, uint32_t tileSize> LocalTensor<DataType> Alloc()
    {
        return take<DataType>(tileSize);
    }
    template <class DataType> LocalTensor<DataType> Alloc(uint32_t tileSize)
    {
        return take<DataType>(tileSize);
    }
    template <TPosition pos, class DataType> LocalTensor<DataType> Alloc(uint32_t tileSize)
    {
        return take<DataType>(tileSize);
    }

private:
    template <class T> LocalTensor<T> take(uint32_t n)
    {
        if (aclsim_asc::local()[aclsim_asc::BL_PIPE])
            aclsim_asc::fail("LocalMemAllocator::Alloc: the block has a TPipe (the static "
                             "tensor style does not mix with TPipe)");
        uint64_t bytes = ((uint64_t)n * sizeof(T) + 31) & ~31ull;
        uint32_t ub = aclsimKernelUbSize();
        if (cur_ + bytes > ub)
            aclsim_asc::fail("LocalMemAllocator::Alloc: %u elements (%llu bytes) at UB offset %u "
                             "need %llu bytes; the unified buffer has %u bytes (UB capacity "
                             "exceeded)", n, (unsigned long long)n * sizeof(T), cur_,
                             (unsigned long long)(cur_ + bytes), ub);
        LocalTensor<T> t(nullptr, (T *)(void *)(aclsim_asc::ub_base() + cur_), n);
        cur_ += (uint32_t)bytes;
        return t;
    }
    uint32_t cur_ = 0;
};

} // namespace AscendC


/* ---- operations: checks and engines -------------------------------------------- */
namespace aclsim_asc {

/* A LocalTensor operand of api used for n elements: live, 32-byte aligned,
 * large enough. */
template <class T>
inline void operand(const AscendC::LocalTensor<T> &t, uint64_t n, const char *api,
                    const char *name)
{
    t.check(api);
    t.aligned(api, name);
    if (n > t.GetSize())
        fail("%s: %s: %llu elements needed, the tensor has %u (%s)", api, name,
             (unsigned long long)n, t.GetSize(), t.where());
}
inline void count_ok(int64_t count, const char *api)
{
    if (count < 0)
        fail("%s: count %lld is negative", api, (long long)count);
}

/* Rounds double to float to odd (so that a second rounding to a narrower
 * format is correct: float has more than twice half's precision plus 2). */
inline float to_float_odd(double d)
{
    float f = (float)d;
    if ((double)f != d && std::isfinite(f)) {
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        if (!(u & 1u)) {
            bool away = std::fabs(d) > std::fabs((double)f);
            u = away ? u + 1 : u - 1;
            std::memcpy(&f, &u, sizeof f);
        }
    }
    return f;
}
template <> inline half fin<half>(double d)
{
    half h = half::from_bits(f2h(to_float_odd(d)));
    if ((h.bits & 0x7fffu) == 0x7c00u && std::isfinite(d)) {
        aclsimReportFloatOverflow();
        if (aclsimFloatOverflowMode() == 0)
            h.bits = (uint16_t)((h.bits & 0x8000u) | 0x7bffu);
    }
    return h;
}
template <> inline bfloat16_t fin<bfloat16_t>(double d)
{
    bfloat16_t h(to_float_odd(d));
    if ((h.bits & 0x7fffu) == 0x7f80u && std::isfinite(d)) {
        aclsimReportFloatOverflow();
        if (aclsimFloatOverflowMode() == 0)
            h.bits = (uint16_t)((h.bits & 0x8000u) | 0x7f7fu);
    }
    return h;
}
template <> inline float fin<float>(double d)
{
    float f = (float)d;
    if (std::isinf(f) && std::isfinite(d)) {
        aclsimReportFloatOverflow();
        if (aclsimFloatOverflowMode() == 0)
            f = d > 0 ? std::numeric_limits<float>::max() : -std::numeric_limits<float>::max();
    }
    return f;
}

/* Element operations: on doubles for floating types (rounded once by fin),
 * on 64-bit integers for integer types (wrapped to the type). */
template <class T, class Op>
inline typename std::enable_if<is_fp<T>::value, T>::type apply2(T a, T b)
{
    return fin<T>(Op::f(to_d(a), to_d(b)));
}
template <class T, class Op>
inline typename std::enable_if<!is_fp<T>::value, T>::type apply2(T a, T b)
{
    return (T)Op::i((long long)a, (long long)b);
}
template <class T, class Op>
inline typename std::enable_if<is_fp<T>::value, T>::type apply1(T a, double k)
{
    return fin<T>(Op::f(to_d(a), k));
}
template <class T, class Op>
inline typename std::enable_if<!is_fp<T>::value, T>::type apply1(T a, double k)
{
    return (T)Op::i((long long)a, (long long)k);
}

#define ACLSIM_ASC_OP2(name, fexpr, iexpr)                                                  \
    struct op_##name {                                                                      \
        static double f(double a, double b) { (void)b; return fexpr; }                      \
        static long long i(long long a, long long b) { (void)b; return iexpr; }             \
    };
ACLSIM_ASC_OP2(add, a + b, a + b)
ACLSIM_ASC_OP2(sub, a - b, a - b)
ACLSIM_ASC_OP2(mul, a * b, a * b)
ACLSIM_ASC_OP2(div, a / b, b ? a / b : 0)
ACLSIM_ASC_OP2(max, a > b || std::isnan(a) ? a : b, a > b ? a : b)
ACLSIM_ASC_OP2(min, a < b || std::isnan(a) ? a : b, a < b ? a : b)
ACLSIM_ASC_OP2(leaky, a >= 0 ? a : a * b, a >= 0 ? a : a * b)
ACLSIM_ASC_OP2(abs, std::fabs(a), a < 0 ? -a : a)
ACLSIM_ASC_OP2(relu, a > 0 ? a : 0.0, a > 0 ? a : 0)
ACLSIM_ASC_OP2(exp, std::exp(a), a)
ACLSIM_ASC_OP2(ln, std::log(a), a)
ACLSIM_ASC_OP2(sqrt, std::sqrt(a), a)
ACLSIM_ASC_OP2(rsqrt, 1.0 / std::sqrt(a), a)
ACLSIM_ASC_OP2(recip, 1.0 / a, a)
ACLSIM_ASC_OP2(first, a, a)
#undef ACLSIM_ASC_OP2

/* Level 0: which elements a call touches. */
struct l0_opnd {
    uint32_t size;   /* elements of the tensor */
    uint32_t blk, rep;
    const char *name;
};
struct l0_mask {
    bool bits;
    uint64_t cont;
    uint64_t b[2];
};
/* Calls f(offsets) for every element selected by the mask in each repeat;
 * offsets[k] is operand k's element (blk / rep strides in 32-byte blocks). */
template <class T, unsigned N, class F>
inline void level0(const char *api, l0_mask m, uint32_t repeats, bool isSetMask,
                   const l0_opnd (&o)[N], F f)
{
    const uint32_t epb = 32 / sizeof(T), per = 256 / sizeof(T);
    uint64_t *l = local();
    bool counter = l[BL_MASK_MODE] == 1;
    uint64_t total = 0;
    if (counter) {
        total = l[BL_MASK_LO];
        repeats = (uint32_t)((total + per - 1) / per);
    } else if (!isSetMask) {
        m.bits = true;
        m.b[0] = l[BL_MASK_LO];
        m.b[1] = l[BL_MASK_HI];
    } else if (!m.bits && (m.cont == 0 || m.cont > per)) {
        fail("%s: mask %llu is out of range: 1 to %u elements per repeat for %u-byte elements",
             api, (unsigned long long)m.cont, per, (unsigned)sizeof(T));
    }
    for (uint32_t r = 0; r < repeats; r++) {
        uint32_t upto = counter ? (uint32_t)(total - (uint64_t)r * per < per
                                                 ? total - (uint64_t)r * per : per)
                                : per;
        for (uint32_t j = 0; j < upto; j++) {
            if (!counter) {
                bool on = m.bits ? ((m.b[j / 64] >> (j % 64)) & 1u) != 0 : j < m.cont;
                if (!on)
                    continue;
            }
            size_t off[N];
            for (unsigned k = 0; k < N; k++) {
                off[k] = (size_t)r * o[k].rep * epb + (size_t)(j / epb) * o[k].blk * epb +
                         j % epb;
                if (off[k] >= o[k].size)
                    fail("%s: repeat %u element %u of %s is element %zu, outside the tensor "
                         "of %u elements (strides: block %u, repeat %u)", api, r, j,
                         o[k].name, off[k], o[k].size, o[k].blk, o[k].rep);
            }
            f(off);
        }
    }
}
inline l0_mask cont_mask(uint64_t m) { return l0_mask{false, m, {0, 0}}; }
inline l0_mask bits_mask(const uint64_t mask[]) { return l0_mask{true, 0, {mask[0], mask[1]}}; }

template <class T> inline T scalar_as(double v) { return conv<T>::from(v); }

} // namespace aclsim_asc

namespace AscendC {

/* ---- DataCopy ------------------------------------------------------------------ */
namespace detail_copy {
/* count elements rounded down to whole 32-byte blocks (warned). */
template <class T> inline uint32_t whole_blocks(uint32_t count, const char *api)
{
    uint64_t bytes = (uint64_t)count * sizeof(T);
    if (bytes % 32) {
        aclsim_asc::warn("%s: %u elements (%llu bytes) are not whole 32-byte blocks: %llu bytes "
                         "are copied (rounded down, as CANN documents; DataCopyPad copies "
                         "unaligned lengths)", api, count, (unsigned long long)bytes,
                         (unsigned long long)(bytes & ~31ull));
        return (uint32_t)((bytes & ~31ull) / sizeof(T));
    }
    return count;
}
} // namespace detail_copy

template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const uint32_t count)
{
    const char *api = "DataCopy (GM to UB)";
    uint32_t n = detail_copy::whole_blocks<T>(count, api);
    aclsim_asc::operand(dst, n, api, "dst");
    if (src.gm(0, n, ACLSIM_GM_READ, api))
        std::memcpy((void *)dst.GetPhyAddr(), (const void *)src.GetPhyAddr(), (size_t)n * sizeof(T));
}
template <typename T>
inline void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const uint32_t count)
{
    const char *api = "DataCopy (UB to GM)";
    uint32_t n = detail_copy::whole_blocks<T>(count, api);
    aclsim_asc::operand(src, n, api, "src");
    if (dst.gm(0, n, ACLSIM_GM_WRITE, api))
        std::memcpy((void *)dst.GetPhyAddr(), (const void *)src.GetPhyAddr(), (size_t)n * sizeof(T));
}
template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint32_t count)
{
    const char *api = "DataCopy (UB to UB)";
    uint32_t n = detail_copy::whole_blocks<T>(count, api);
    aclsim_asc::operand(dst, n, api, "dst");
    aclsim_asc::operand(src, n, api, "src");
    std::memmove((void *)dst.GetPhyAddr(), (const void *)src.GetPhyAddr(), (size_t)n * sizeof(T));
}

namespace detail_copy {
/* blockCount blocks of blockLen bytes; the source / destination of block i
 * at i * (blockLen + gap) bytes. Each side checked by its callback (with
 * the bytes spanned, the blocks, their length and step), which says whether
 * to copy (the checker skips an access out of bounds). */
template <class D, class S>
inline void strided(uint8_t *dst, const uint8_t *src, uint32_t count, uint64_t len,
                    uint64_t sgap, uint64_t dgap, D dcheck, S scheck)
{
    if (!count || !len)
        return;
    bool go = dcheck((count - 1) * (len + dgap) + len, count, len, len + dgap);
    go = scheck((count - 1) * (len + sgap) + len, count, len, len + sgap) && go;
    if (!go)
        return;
    for (uint32_t i = 0; i < count; i++)
        std::memmove(dst + i * (len + dgap), src + i * (len + sgap), len);
}
template <class T> inline auto local_room(const LocalTensor<T> &t, const char *api,
                                          const char *name)
{
    return [&t, api, name](uint64_t bytes, uint64_t, uint64_t, uint64_t) {
        aclsim_asc::operand(t, (bytes + sizeof(T) - 1) / sizeof(T), api, name);
        return true;
    };
}
template <class T> inline auto global_room(const GlobalTensor<T> &g, const char *api, int how)
{
    return [&g, api, how](uint64_t bytes, uint64_t count, uint64_t len, uint64_t step) {
        return g.gm(0, (bytes + sizeof(T) - 1) / sizeof(T), how, api, count, len, step);
    };
}
} // namespace detail_copy

/* DataCopyParams: blockLen and the strides in 32-byte blocks. */
template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
                     const DataCopyParams &p)
{
    const char *api = "DataCopy (GM to UB, DataCopyParams)";
    detail_copy::strided((uint8_t *)dst.GetPhyAddr(), (const uint8_t *)src.GetPhyAddr(),
                         p.blockCount, p.blockLen * 32ull, p.srcStride * 32ull,
                         p.dstStride * 32ull, detail_copy::local_room(dst, api, "dst"),
                         detail_copy::global_room(src, api, ACLSIM_GM_READ));
}
template <typename T>
inline void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
                     const DataCopyParams &p)
{
    const char *api = "DataCopy (UB to GM, DataCopyParams)";
    detail_copy::strided((uint8_t *)dst.GetPhyAddr(), (const uint8_t *)src.GetPhyAddr(),
                         p.blockCount, p.blockLen * 32ull, p.srcStride * 32ull,
                         p.dstStride * 32ull, detail_copy::global_room(dst, api, ACLSIM_GM_WRITE),
                         detail_copy::local_room(src, api, "src"));
}
template <typename T>
inline void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src,
                     const DataCopyParams &p)
{
    const char *api = "DataCopy (UB to UB, DataCopyParams)";
    detail_copy::strided((uint8_t *)dst.GetPhyAddr(), (const uint8_t *)src.GetPhyAddr(),
                         p.blockCount, p.blockLen * 32ull, p.srcStride * 32ull,
                         p.dstStride * 32ull, detail_copy::local_room(dst, api, "dst"),
                         detail_copy::local_room(src, api, "src"));
}

/* DataCopyPad, GM to UB: blockLen bytes per block (any length); in the UB
 * each block starts on a 32-byte boundary, after leftPadding elements, and
 * is followed by rightPadding elements (paddingValue when isPad; with
 * isPad the rest of the last 32-byte block is paddingValue too). srcStride:
 * bytes between GM blocks; dstStride: 32-byte blocks between UB blocks. */
template <typename T>
inline void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
                        const DataCopyExtParams &p, const DataCopyPadExtParams<T> &pad)
{
    const char *api = "DataCopyPad (GM to UB)";
    if (p.blockLen % sizeof(T))
        aclsim_asc::fail("%s: blockLen %u bytes is not a whole number of %u-byte elements",
                         api, p.blockLen, (unsigned)sizeof(T));
    if (pad.leftPadding * sizeof(T) > 32 || pad.rightPadding * sizeof(T) > 32)
        aclsim_asc::fail("%s: leftPadding %u / rightPadding %u elements: at most 32 bytes each",
                         api, pad.leftPadding, pad.rightPadding);
    uint64_t body = pad.leftPadding * sizeof(T) + p.blockLen + pad.rightPadding * sizeof(T);
    uint64_t slot = (body + 31) & ~31ull;   /* a block's place in the UB */
    uint64_t ustep = slot + p.dstStride * 32ull, gstep = (uint64_t)p.blockLen + p.srcStride;
    if (!p.blockCount || !p.blockLen)
        return;
    aclsim_asc::operand(dst, ((p.blockCount - 1) * ustep + slot) / sizeof(T), api, "dst");
    if (!src.gm(0, ((p.blockCount - 1) * gstep + p.blockLen) / sizeof(T), ACLSIM_GM_READ, api,
                p.blockCount, p.blockLen, gstep))
        return;
    uint8_t *d = (uint8_t *)dst.GetPhyAddr();
    const uint8_t *s = (const uint8_t *)src.GetPhyAddr();
    for (uint32_t i = 0; i < p.blockCount; i++) {
        T *b = (T *)(void *)(d + i * ustep);
        uint64_t elems = slot / sizeof(T), left = pad.leftPadding,
                 data = p.blockLen / sizeof(T);
        std::memmove(b + left, s + i * gstep, p.blockLen);
        if (pad.isPad) {
            for (uint64_t k = 0; k < left; k++)
                b[k] = pad.paddingValue;
            for (uint64_t k = left + data; k < elems; k++)
                b[k] = pad.paddingValue;
        }
    }
}
/* DataCopyPad, UB to GM: blockLen bytes of each block; UB blocks start on
 * 32-byte boundaries, srcStride 32-byte blocks apart; dstStride: bytes
 * between GM blocks. */
template <typename T>
inline void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
                        const DataCopyExtParams &p)
{
    const char *api = "DataCopyPad (UB to GM)";
    if (p.blockLen % sizeof(T))
        aclsim_asc::fail("%s: blockLen %u bytes is not a whole number of %u-byte elements",
                         api, p.blockLen, (unsigned)sizeof(T));
    if (!p.blockCount || !p.blockLen)
        return;
    uint64_t slot = ((uint64_t)p.blockLen + 31) & ~31ull;
    uint64_t ustep = slot + p.srcStride * 32ull, gstep = (uint64_t)p.blockLen + p.dstStride;
    aclsim_asc::operand(src, ((p.blockCount - 1) * ustep + p.blockLen) / sizeof(T), api, "src");
    if (!dst.gm(0, ((p.blockCount - 1) * gstep + p.blockLen) / sizeof(T), ACLSIM_GM_WRITE, api,
                p.blockCount, p.blockLen, gstep))
        return;
    for (uint32_t i = 0; i < p.blockCount; i++)
        std::memmove((uint8_t *)dst.GetPhyAddr() + i * gstep,
                     (const uint8_t *)src.GetPhyAddr() + i * ustep, p.blockLen);
}
/* The DataCopyParams forms (blockLen in bytes, as DataCopyPad's). */
template <typename T>
inline void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
                        const DataCopyParams &p, const DataCopyPadParams &pad)
{
    T v;
    std::memcpy(&v, &pad.paddingValue, sizeof(T) < 8 ? sizeof(T) : 8);
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0),
                DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, v));
}
template <typename T>
inline void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
                        const DataCopyParams &p)
{
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0));
}

/* ---- vector math: level 2 (count) and level 0 (mask, repeatTimes, strides) ---- */
#define ACLSIM_ASC_BINARY(Name, op)                                                          \
    template <typename T>                                                                    \
    inline void Name(const LocalTensor<T> &dst, const LocalTensor<T> &src0,                  \
                     const LocalTensor<T> &src1, const int32_t &count)                       \
    {                                                                                        \
        aclsim_asc::count_ok(count, #Name);                                                  \
        aclsim_asc::operand(dst, (uint32_t)count, #Name, "dst");                             \
        aclsim_asc::operand(src0, (uint32_t)count, #Name, "src0");                           \
        aclsim_asc::operand(src1, (uint32_t)count, #Name, "src1");                           \
        T *d = dst.GetPhyAddr();                                                             \
        const T *a = src0.GetPhyAddr(), *b = src1.GetPhyAddr();                              \
        for (int32_t i = 0; i < count; i++)                                                  \
            d[i] = aclsim_asc::apply2<T, aclsim_asc::op>(a[i], b[i]);                        \
    }                                                                                        \
    template <typename T, bool isSetMask = true>                                             \
    inline void Name(const LocalTensor<T> &dst, const LocalTensor<T> &src0,                  \
                     const LocalTensor<T> &src1, uint64_t mask, const uint8_t repeatTimes,   \
                     const BinaryRepeatParams &p)                                            \
    {                                                                                        \
        aclsim_asc::Name##_l0<T>(dst, src0, src1, aclsim_asc::cont_mask(mask), repeatTimes,  \
                                 isSetMask, p);                                              \
    }                                                                                        \
    template <typename T, bool isSetMask = true>                                             \
    inline void Name(const LocalTensor<T> &dst, const LocalTensor<T> &src0,                  \
                     const LocalTensor<T> &src1, const uint64_t mask[],                      \
                     const uint8_t repeatTimes, const BinaryRepeatParams &p)                 \
    {                                                                                        \
        aclsim_asc::Name##_l0<T>(dst, src0, src1, aclsim_asc::bits_mask(mask), repeatTimes,  \
                                 isSetMask, p);                                              \
    }

} // namespace AscendC

namespace aclsim_asc {
template <class T, class Op>
inline void binary_l0(const char *api, const AscendC::LocalTensor<T> &dst,
                      const AscendC::LocalTensor<T> &src0, const AscendC::LocalTensor<T> &src1,
                      l0_mask m, uint8_t repeats, bool isSetMask,
                      const AscendC::BinaryRepeatParams &p)
{
    operand(dst, 0, api, "dst");
    operand(src0, 0, api, "src0");
    operand(src1, 0, api, "src1");
    l0_opnd o[3] = {{dst.GetSize(), p.dstBlkStride, p.dstRepStride, "dst"},
                    {src0.GetSize(), p.src0BlkStride, p.src0RepStride, "src0"},
                    {src1.GetSize(), p.src1BlkStride, p.src1RepStride, "src1"}};
    T *d = dst.GetPhyAddr();
    const T *a = src0.GetPhyAddr(), *b = src1.GetPhyAddr();
    level0<T>(api, m, repeats, isSetMask, o,
              [&](const size_t *off) { d[off[0]] = apply2<T, Op>(a[off[1]], b[off[2]]); });
}
#define ACLSIM_ASC_BINARY_L0(Name, op)                                                       \
    template <class T>                                                                       \
    inline void Name##_l0(const AscendC::LocalTensor<T> &dst,                                \
                          const AscendC::LocalTensor<T> &src0,                               \
                          const AscendC::LocalTensor<T> &src1, l0_mask m, uint8_t repeats,   \
                          bool isSetMask, const AscendC::BinaryRepeatParams &p)              \
    {                                                                                        \
        binary_l0<T, op>(#Name, dst, src0, src1, m, repeats, isSetMask, p);                  \
    }
ACLSIM_ASC_BINARY_L0(Add, op_add)
ACLSIM_ASC_BINARY_L0(Sub, op_sub)
ACLSIM_ASC_BINARY_L0(Mul, op_mul)
ACLSIM_ASC_BINARY_L0(Div, op_div)
ACLSIM_ASC_BINARY_L0(Max, op_max)
ACLSIM_ASC_BINARY_L0(Min, op_min)
#undef ACLSIM_ASC_BINARY_L0

/* dst = op(src, k) for the scalar forms and the unary functions. */
template <class T, class Op>
inline void unary_l2(const char *api, const AscendC::LocalTensor<T> &dst,
                     const AscendC::LocalTensor<T> &src, double k, int32_t count)
{
    count_ok(count, api);
    operand(dst, (uint32_t)count, api, "dst");
    operand(src, (uint32_t)count, api, "src");
    T *d = dst.GetPhyAddr();
    const T *a = src.GetPhyAddr();
    for (int32_t i = 0; i < count; i++)
        d[i] = apply1<T, Op>(a[i], k);
}
template <class T, class Op>
inline void unary_l0(const char *api, const AscendC::LocalTensor<T> &dst,
                     const AscendC::LocalTensor<T> &src, double k, l0_mask m, uint8_t repeats,
                     bool isSetMask, const AscendC::UnaryRepeatParams &p)
{
    operand(dst, 0, api, "dst");
    operand(src, 0, api, "src");
    l0_opnd o[2] = {{dst.GetSize(), p.dstBlkStride, p.dstRepStride, "dst"},
                    {src.GetSize(), p.srcBlkStride, p.srcRepStride, "src"}};
    T *d = dst.GetPhyAddr();
    const T *a = src.GetPhyAddr();
    level0<T>(api, m, repeats, isSetMask, o,
              [&](const size_t *off) { d[off[0]] = apply1<T, Op>(a[off[1]], k); });
}
/* A scalar argument as the operation sees it: converted to T first. */
template <class T, class U> inline double scalar_d(U v) { return to_d(conv<T>::from(to_d(v))); }
} // namespace aclsim_asc

namespace AscendC {
ACLSIM_ASC_BINARY(Add, op_add)
ACLSIM_ASC_BINARY(Sub, op_sub)
ACLSIM_ASC_BINARY(Mul, op_mul)
ACLSIM_ASC_BINARY(Div, op_div)
ACLSIM_ASC_BINARY(Max, op_max)
ACLSIM_ASC_BINARY(Min, op_min)
#undef ACLSIM_ASC_BINARY

#define ACLSIM_ASC_SCALAR(Name, op)                                                          \
    template <typename T, typename U>                                                        \
    inline void Name(const LocalTensor<T> &dst, const LocalTensor<T> &src, const U &scalar,  \
                     const int32_t &count)                                                   \
    {                                                                                        \
        aclsim_asc::unary_l2<T, aclsim_asc::op>(#Name, dst, src,                             \
                                                aclsim_asc::scalar_d<T>(scalar), count);     \
    }                                                                                        \
    template <typename T, typename U, bool isSetMask = true>                                 \
    inline void Name(const LocalTensor<T> &dst, const LocalTensor<T> &src, const U &scalar,  \
                     uint64_t mask, const uint8_t repeatTimes, const UnaryRepeatParams &p)   \
    {                                                                                        \
        aclsim_asc::unary_l0<T, aclsim_asc::op>(#Name, dst, src,                             \
                                                aclsim_asc::scalar_d<T>(scalar),             \
                                                aclsim_asc::cont_mask(mask), repeatTimes,    \
                                                isSetMask, p);                               \
    }                                                                                        \
    template <typename T, typename U, bool isSetMask = true>                                 \
    inline void Name(const LocalTensor<T> &dst, const LocalTensor<T> &src, const U &scalar,  \
                     const uint64_t mask[], const uint8_t repeatTimes,                       \
                     const UnaryRepeatParams &p)                                             \
    {                                                                                        \
        aclsim_asc::unary_l0<T, aclsim_asc::op>(#Name, dst, src,                             \
                                                aclsim_asc::scalar_d<T>(scalar),             \
                                                aclsim_asc::bits_mask(mask), repeatTimes,    \
                                                isSetMask, p);                               \
    }
ACLSIM_ASC_SCALAR(Adds, op_add)
ACLSIM_ASC_SCALAR(Muls, op_mul)
ACLSIM_ASC_SCALAR(Maxs, op_max)
ACLSIM_ASC_SCALAR(Mins, op_min)
ACLSIM_ASC_SCALAR(LeakyRelu, op_leaky)
#undef ACLSIM_ASC_SCALAR

#define ACLSIM_ASC_UNARY(Name, op)                                                           \
    template <typename T>                                                                    \
    inline void Name(const LocalTensor<T> &dst, const LocalTensor<T> &src,                   \
                     const int32_t &count)                                                   \
    {                                                                                        \
        aclsim_asc::unary_l2<T, aclsim_asc::op>(#Name, dst, src, 0.0, count);                \
    }                                                                                        \
    template <typename T, bool isSetMask = true>                                             \
    inline void Name(const LocalTensor<T> &dst, const LocalTensor<T> &src, uint64_t mask,    \
                     const uint8_t repeatTimes, const UnaryRepeatParams &p)                  \
    {                                                                                        \
        aclsim_asc::unary_l0<T, aclsim_asc::op>(#Name, dst, src, 0.0,                        \
                                                aclsim_asc::cont_mask(mask), repeatTimes,    \
                                                isSetMask, p);                               \
    }                                                                                        \
    template <typename T, bool isSetMask = true>                                             \
    inline void Name(const LocalTensor<T> &dst, const LocalTensor<T> &src,                   \
                     const uint64_t mask[], const uint8_t repeatTimes,                       \
                     const UnaryRepeatParams &p)                                             \
    {                                                                                        \
        aclsim_asc::unary_l0<T, aclsim_asc::op>(#Name, dst, src, 0.0,                        \
                                                aclsim_asc::bits_mask(mask), repeatTimes,    \
                                                isSetMask, p);                               \
    }
ACLSIM_ASC_UNARY(Abs, op_abs)
ACLSIM_ASC_UNARY(Relu, op_relu)
ACLSIM_ASC_UNARY(Exp, op_exp)
ACLSIM_ASC_UNARY(Ln, op_ln)
ACLSIM_ASC_UNARY(Sqrt, op_sqrt)
ACLSIM_ASC_UNARY(Rsqrt, op_rsqrt)
ACLSIM_ASC_UNARY(Reciprocal, op_recip)
#undef ACLSIM_ASC_UNARY

/* Duplicate: every element the scalar. */
template <typename T, typename U>
inline void Duplicate(const LocalTensor<T> &dst, const U &scalar, const int32_t &count)
{
    aclsim_asc::count_ok(count, "Duplicate");
    aclsim_asc::operand(dst, (uint32_t)count, "Duplicate", "dst");
    T v = aclsim_asc::conv<T>::from(aclsim_asc::to_d(scalar));
    T *d = dst.GetPhyAddr();
    for (int32_t i = 0; i < count; i++)
        d[i] = v;
}
template <typename T, typename U, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T> &dst, const U &scalar, uint64_t mask,
                      const uint8_t repeatTimes, const uint16_t dstBlockStride,
                      const uint8_t dstRepeatStride)
{
    aclsim_asc::operand(dst, 0, "Duplicate", "dst");
    T v = aclsim_asc::conv<T>::from(aclsim_asc::to_d(scalar));
    aclsim_asc::l0_opnd o[1] = {{dst.GetSize(), dstBlockStride, dstRepeatStride, "dst"}};
    T *d = dst.GetPhyAddr();
    aclsim_asc::level0<T>("Duplicate", aclsim_asc::cont_mask(mask), repeatTimes, isSetMask, o,
                          [&](const size_t *off) { d[off[0]] = v; });
}

/* Cast: each element converted with one rounding by roundMode (CAST_NONE:
 * to nearest even; integers saturate). */
template <typename D, typename S>
inline void Cast(const LocalTensor<D> &dst, const LocalTensor<S> &src, const RoundMode &roundMode,
                 const uint32_t count)
{
    aclsim_asc::operand(dst, count, "Cast", "dst");
    aclsim_asc::operand(src, count, "Cast", "src");
    RoundMode m = roundMode == RoundMode::CAST_NONE ? RoundMode::CAST_RINT : roundMode;
    D *d = dst.GetPhyAddr();
    const S *a = src.GetPhyAddr();
    for (uint32_t i = 0; i < count; i++) {
        double v = aclsim_asc::to_d(a[i]);
        D r = aclsim_asc::conv<D>::from(v, m);
        if (aclsim_asc::is_fp<D>::value && std::isfinite(v) &&
            std::isinf(aclsim_asc::to_d(r))) {
            aclsimReportFloatOverflow();
            if (aclsimFloatOverflowMode() == 0)
                r = aclsim_asc::conv<D>::from(v, RoundMode::CAST_TRUNC);
        }
        d[i] = r;
    }
}

/* ---- Compare and Select ---------------------------------------------------------- */
namespace detail_cmp {
inline bool cmp(double a, double b, CMPMODE m)
{
    switch (m) {
    case CMPMODE::LT: return a < b;
    case CMPMODE::GT: return a > b;
    case CMPMODE::EQ: return a == b;
    case CMPMODE::LE: return a <= b;
    case CMPMODE::GE: return a >= b;
    default: return a != b;
    }
}
template <class T, class U, class F>
inline void compare(const char *api, const LocalTensor<U> &dst, const LocalTensor<T> &src0,
                    uint32_t count, F b)
{
    if ((uint64_t)count * sizeof(T) % 256)
        aclsim_asc::fail("%s: count %u (%llu bytes) is not a multiple of 256 bytes", api, count,
                         (unsigned long long)count * sizeof(T));
    aclsim_asc::operand(src0, count, api, "src0");
    aclsim_asc::operand(dst, (count / 8 + sizeof(U) - 1) / sizeof(U), api, "dst");
    uint8_t *d = (uint8_t *)dst.GetPhyAddr();
    std::memset(d, 0, count / 8);
    const T *a = src0.GetPhyAddr();
    for (uint32_t i = 0; i < count; i++)
        if (b(aclsim_asc::to_d(a[i]), i))
            d[i / 8] = (uint8_t)(d[i / 8] | (1u << (i % 8)));
}
} // namespace detail_cmp

/* dst: one bit per element (bit i % 8 of byte i / 8), set where the comparison holds. */
template <typename T, typename U>
inline void Compare(const LocalTensor<U> &dst, const LocalTensor<T> &src0,
                    const LocalTensor<T> &src1, CMPMODE cmpMode, uint32_t count)
{
    aclsim_asc::operand(src1, count, "Compare", "src1");
    const T *b = src1.GetPhyAddr();
    detail_cmp::compare("Compare", dst, src0, count, [&](double a, uint32_t i) {
        return detail_cmp::cmp(a, aclsim_asc::to_d(b[i]), cmpMode);
    });
}
template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const T src1Scalar,
                          CMPMODE cmpMode, uint32_t count)
{
    double k = aclsim_asc::to_d(src1Scalar);
    detail_cmp::compare("CompareScalar", dst, src0, count,
                        [&](double a, uint32_t) { return detail_cmp::cmp(a, k, cmpMode); });
}

namespace detail_cmp {
template <class T, class U, class F>
inline void select(const char *api, const LocalTensor<T> &dst, const LocalTensor<U> &mask,
                   const LocalTensor<T> &src0, SELMODE mode, SELMODE want, uint32_t count, F other)
{
    if (mode != want)
        aclsim_asc::fail("%s: selMode %d is not supported with these operands (aclsim: "
                         "VSEL_TENSOR_TENSOR_MODE with two tensors, VSEL_TENSOR_SCALAR_MODE "
                         "with a scalar)", api, (int)mode);
    aclsim_asc::operand(dst, count, api, "dst");
    aclsim_asc::operand(src0, count, api, "src0");
    aclsim_asc::operand(mask, ((count + 7) / 8 + sizeof(U) - 1) / sizeof(U), api, "selMask");
    const uint8_t *m = (const uint8_t *)mask.GetPhyAddr();
    T *d = dst.GetPhyAddr();
    const T *a = src0.GetPhyAddr();
    for (uint32_t i = 0; i < count; i++)
        d[i] = (m[i / 8] >> (i % 8)) & 1u ? a[i] : other(i);
}
} // namespace detail_cmp
/* dst[i] = bit i of selMask ? src0[i] : src1[i] (or the scalar). */
template <typename T, typename U>
inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask,
                   const LocalTensor<T> &src0, const LocalTensor<T> &src1, SELMODE selMode,
                   uint32_t count)
{
    aclsim_asc::operand(src1, count, "Select", "src1");
    const T *b = src1.GetPhyAddr();
    detail_cmp::select("Select", dst, selMask, src0, selMode, SELMODE::VSEL_TENSOR_TENSOR_MODE,
                       count, [&](uint32_t i) { return b[i]; });
}
template <typename T, typename U>
inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask,
                   const LocalTensor<T> &src0, T src1, SELMODE selMode, uint32_t count)
{
    detail_cmp::select("Select", dst, selMask, src0, selMode, SELMODE::VSEL_TENSOR_SCALAR_MODE,
                       count, [&](uint32_t) { return src1; });
}

/* ---- reductions ---------------------------------------------------------------- */
/* ReduceSum: dst[0] = the sum of src[0..count), accumulated in index order in
 * double and rounded once. workLocal must be a live tensor (not written). */
template <typename T>
inline void ReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src,
                      const LocalTensor<T> &workLocal, const int32_t count)
{
    aclsim_asc::count_ok(count, "ReduceSum");
    aclsim_asc::operand(dst, 1, "ReduceSum", "dst");
    aclsim_asc::operand(src, (uint32_t)count, "ReduceSum", "src");
    workLocal.check("ReduceSum");
    double s = 0;
    const T *a = src.GetPhyAddr();
    for (int32_t i = 0; i < count; i++)
        s += aclsim_asc::to_d(a[i]);
    dst.GetPhyAddr()[0] = aclsim_asc::fin<T>(s);
}
namespace detail_red {
/* The index written next to a value: its bits as an unsigned integer of T's size. */
template <class T> inline T index_as(uint32_t idx)
{
    T v;
    if (sizeof(T) == 2) {
        uint16_t u = (uint16_t)idx;
        std::memcpy(&v, &u, 2);
    } else {
        uint32_t u = idx;
        std::memcpy(&v, &u, sizeof(T) < 4 ? sizeof(T) : 4);
    }
    return v;
}
template <class T>
inline void reduce_ext(const char *api, const LocalTensor<T> &dst, const LocalTensor<T> &src,
                       const LocalTensor<T> &work, int32_t count, bool calIndex, bool max)
{
    aclsim_asc::count_ok(count, api);
    if (!count)
        aclsim_asc::fail("%s: count is 0", api);
    aclsim_asc::operand(dst, calIndex ? 2 : 1, api, "dst");
    aclsim_asc::operand(src, (uint32_t)count, api, "src");
    work.check(api);
    const T *a = src.GetPhyAddr();
    uint32_t best = 0;
    for (int32_t i = 1; i < count; i++) {
        double v = aclsim_asc::to_d(a[i]), b = aclsim_asc::to_d(a[best]);
        if (max ? v > b : v < b)
            best = (uint32_t)i;
    }
    dst.GetPhyAddr()[0] = a[best];
    if (calIndex)
        dst.GetPhyAddr()[1] = index_as<T>(best);
}
} // namespace detail_red
/* ReduceMax / ReduceMin: dst[0] the extreme value (the first one on ties);
 * with calIndex, dst[1] holds its index as an integer of T's size (read it
 * through ReinterpretCast / memcpy, as on the NPU). */
template <typename T>
inline void ReduceMax(const LocalTensor<T> &dst, const LocalTensor<T> &src,
                      const LocalTensor<T> &workLocal, const int32_t count, bool calIndex = false)
{
    detail_red::reduce_ext("ReduceMax", dst, src, workLocal, count, calIndex, true);
}
template <typename T>
inline void ReduceMin(const LocalTensor<T> &dst, const LocalTensor<T> &src,
                      const LocalTensor<T> &workLocal, const int32_t count, bool calIndex = false)
{
    detail_red::reduce_ext("ReduceMin", dst, src, workLocal, count, calIndex, false);
}

namespace detail_red {
/* The elements of one repeat of a whole/block reduction: f(j, value). */
template <class T, class F>
inline void repeat_elems(const char *api, const LocalTensor<T> &src, int32_t mask, int32_t r,
                         int32_t srcBlkStride, int32_t srcRepStride, F f)
{
    const uint32_t epb = 32 / sizeof(T), per = 256 / sizeof(T);
    if (mask < 1 || (uint32_t)mask > per)
        aclsim_asc::fail("%s: mask %d is out of range: 1 to %u", api, mask, per);
    const T *a = src.GetPhyAddr();
    for (uint32_t j = 0; j < (uint32_t)mask; j++) {
        size_t off = (size_t)r * srcRepStride * epb + (size_t)(j / epb) * srcBlkStride * epb +
                     j % epb;
        if (off >= src.GetSize())
            aclsim_asc::fail("%s: repeat %d element %u is element %zu, outside src of %u "
                             "elements", api, r, j, off, src.GetSize());
        f(j, a[off]);
    }
}
template <class T>
inline void whole_ext(const char *api, const LocalTensor<T> &dst, const LocalTensor<T> &src,
                      int32_t mask, int32_t repeatTimes, int32_t dstRepStride,
                      int32_t srcBlkStride, int32_t srcRepStride, ReduceOrder order, bool max)
{
    aclsim_asc::operand(src, 0, api, "src");
    bool both = order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE;
    uint32_t width = both ? 2 : 1;
    if (repeatTimes > 0)
        aclsim_asc::operand(dst, (uint64_t)(repeatTimes - 1) * dstRepStride * width + width, api,
                            "dst");
    for (int32_t r = 0; r < repeatTimes; r++) {
        uint32_t bi = 0;
        double bv = 0;
        bool any = false;
        T bt = T();
        repeat_elems(api, src, mask, r, srcBlkStride, srcRepStride, [&](uint32_t j, T v) {
            double x = aclsim_asc::to_d(v);
            if (!any || (max ? x > bv : x < bv)) {
                any = true;
                bv = x;
                bi = j;
                bt = v;
            }
        });
        T *o = dst.GetPhyAddr() + (size_t)r * dstRepStride * width;
        switch (order) {
        case ReduceOrder::ORDER_VALUE_INDEX: o[0] = bt; o[1] = index_as<T>(bi); break;
        case ReduceOrder::ORDER_INDEX_VALUE: o[0] = index_as<T>(bi); o[1] = bt; break;
        case ReduceOrder::ORDER_ONLY_VALUE: o[0] = bt; break;
        default: o[0] = index_as<T>(bi); break;
        }
    }
}
} // namespace detail_red

/* WholeReduceSum: per repeat, the sum of its first mask elements (in order,
 * in double, rounded once) into dst[r * dstRepStride]. */
template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src,
                           const int32_t mask, const int32_t repeatTimes,
                           const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride)
{
    aclsim_asc::operand(src, 0, "WholeReduceSum", "src");
    if (repeatTimes > 0)
        aclsim_asc::operand(dst, (uint64_t)(repeatTimes - 1) * dstRepStride + 1,
                            "WholeReduceSum", "dst");
    for (int32_t r = 0; r < repeatTimes; r++) {
        double s = 0;
        detail_red::repeat_elems("WholeReduceSum", src, mask, r, srcBlkStride, srcRepStride,
                                 [&](uint32_t, T v) { s += aclsim_asc::to_d(v); });
        dst.GetPhyAddr()[(size_t)r * dstRepStride] = aclsim_asc::fin<T>(s);
    }
}
/* WholeReduceMax / Min: per repeat the extreme value and its index in the
 * repeat, in the order given (dstRepStride counts results: pairs for the
 * orders with both). */
template <typename T, bool isSetMask = true>
inline void WholeReduceMax(const LocalTensor<T> &dst, const LocalTensor<T> &src,
                           const int32_t mask, const int32_t repeatTimes,
                           const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride,
                           ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    detail_red::whole_ext("WholeReduceMax", dst, src, mask, repeatTimes, dstRepStride,
                          srcBlkStride, srcRepStride, order, true);
}
template <typename T, bool isSetMask = true>
inline void WholeReduceMin(const LocalTensor<T> &dst, const LocalTensor<T> &src,
                           const int32_t mask, const int32_t repeatTimes,
                           const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride,
                           ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    detail_red::whole_ext("WholeReduceMin", dst, src, mask, repeatTimes, dstRepStride,
                          srcBlkStride, srcRepStride, order, false);
}
/* BlockReduceSum: per repeat, the sum of each of its 8 blocks' selected
 * elements (the first mask of the repeat) into dst[r * dstRepStride * 8 + b]. */
template <typename T, bool isSetMask = true>
inline void BlockReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src,
                           const int32_t repeatTimes, const int32_t mask,
                           const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride)
{
    aclsim_asc::operand(src, 0, "BlockReduceSum", "src");
    if (repeatTimes > 0)
        aclsim_asc::operand(dst, (uint64_t)(repeatTimes - 1) * dstRepStride * 8 + 8,
                            "BlockReduceSum", "dst");
    const uint32_t epb = 32 / sizeof(T);
    for (int32_t r = 0; r < repeatTimes; r++) {
        double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        detail_red::repeat_elems("BlockReduceSum", src, mask, r, srcBlkStride, srcRepStride,
                                 [&](uint32_t j, T v) { s[j / epb] += aclsim_asc::to_d(v); });
        for (unsigned b = 0; b < 8; b++)
            dst.GetPhyAddr()[(size_t)r * dstRepStride * 8 + b] = aclsim_asc::fin<T>(s[b]);
    }
}

/* ---- masks ------------------------------------------------------------------------ */
inline void SetMaskCount() { aclsim_asc::local()[aclsim_asc::BL_MASK_MODE] = 1; }
inline void SetMaskNorm() { aclsim_asc::local()[aclsim_asc::BL_MASK_MODE] = 0; }
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow)
{
    uint64_t *l = aclsim_asc::local();
    l[aclsim_asc::BL_MASK_LO] = maskLow;
    l[aclsim_asc::BL_MASK_HI] = maskHigh;
}
template <typename T, MaskMode mode = MaskMode::NORMAL> inline void SetVectorMask(int32_t len)
{
    uint64_t *l = aclsim_asc::local();
    if (mode == MaskMode::COUNTER || l[aclsim_asc::BL_MASK_MODE] == 1) {
        l[aclsim_asc::BL_MASK_LO] = (uint64_t)len;
        l[aclsim_asc::BL_MASK_HI] = 0;
        return;
    }
    uint64_t n = len < 0 ? 0 : (uint64_t)len;
    l[aclsim_asc::BL_MASK_LO] = n >= 64 ? ~0ull : ((1ull << n) - 1);
    l[aclsim_asc::BL_MASK_HI] = n >= 128 ? ~0ull : n > 64 ? ((1ull << (n - 64)) - 1) : 0;
}
inline void ResetMask()
{
    uint64_t *l = aclsim_asc::local();
    l[aclsim_asc::BL_MASK_LO] = ~0ull;
    l[aclsim_asc::BL_MASK_HI] = ~0ull;
}

/* ---- synchronisation -------------------------------------------------------------- */
/* No effect on the CPU, where every operation completes before the next. */
template <pipe_t pipe> inline void PipeBarrier() {}
template <HardEvent event> inline void SetFlag(int32_t eventID)
{
    if (eventID < 0 || eventID > 7)
        aclsim_asc::fail("SetFlag<%d>: eventID %d is out of range (0 to 7)", (int)event, eventID);
    unsigned bit = (unsigned)event * 8 + (unsigned)eventID;
    aclsim_asc::local()[aclsim_asc::BL_FLAGS + bit / 64] |= 1ull << (bit % 64);
}
/* A WaitFlag without a SetFlag of the same event and id before it would wait
 * forever on the NPU: it fails the launch. */
template <HardEvent event> inline void WaitFlag(int32_t eventID)
{
    if (eventID < 0 || eventID > 7)
        aclsim_asc::fail("WaitFlag<%d>: eventID %d is out of range (0 to 7)", (int)event,
                         eventID);
    unsigned bit = (unsigned)event * 8 + (unsigned)eventID;
    uint64_t &w = aclsim_asc::local()[aclsim_asc::BL_FLAGS + bit / 64];
    if (!(w & (1ull << (bit % 64))))
        aclsim_asc::fail("WaitFlag<HardEvent %d>(%d): no SetFlag of that event and id before "
                         "it (on the NPU this waits forever)", (int)event, eventID);
    w &= ~(1ull << (bit % 64));
}

/* SyncAll: a barrier across all blocks of the launch (aclsimSyncAll). */
template <bool isAIVOnly = true> inline void SyncAll() { aclsimSyncAll(); }
/* The software form: the workspaces must hold 32 bytes per block (aclsim
 * checks their sizes; the barrier itself is the same). usedCores: 0 or the
 * launch's block count. */
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t> &gmWorkspace,
                    const LocalTensor<int32_t> &ubWorkspace, const int32_t usedCores = 0)
{
    uint32_t n = aclsimGetBlockNum();
    if (usedCores != 0 && (uint32_t)usedCores != n)
        aclsim_asc::fail("SyncAll: usedCores %d differs from the launch's %u blocks (aclsim "
                         "synchronizes all blocks of a launch only)", (int)usedCores, n);
    gmWorkspace.check(0, (uint64_t)n * 8, "SyncAll (gmWorkspace)");
    aclsim_asc::operand(ubWorkspace, (uint64_t)n * 8, "SyncAll", "ubWorkspace");
    aclsimSyncAll();
}

/* ---- queries ----------------------------------------------------------------------- */
/* One core per block: a block is a whole AI Core (or vector core) on aclsim. */
inline int64_t GetTaskRation() { return 1; }
inline int64_t GetSubBlockIdx() { return 0; }
inline int64_t GetSubBlockNum() { return 1; }
inline void InitSocState() {}

} // namespace AscendC

/* Tiling data: a struct read from the kernel's tiling argument (a GM pointer). */
namespace aclsim_asc {
template <class T> inline void copy_tiling(T *dst, const void *src)
{
    if (!src)
        fail("GET_TILING_DATA: the tiling pointer is NULL");
    std::memcpy((void *)dst, src, sizeof(T));
}
} // namespace aclsim_asc
#define GET_TILING_DATA_WITH_STRUCT(type, var, ptr)                                          \
    type var;                                                                                \
    ::aclsim_asc::copy_tiling(&var, (const void *)(ptr))
#ifndef GET_TILING_DATA
#define GET_TILING_DATA(var, ptr) GET_TILING_DATA_WITH_STRUCT(TilingData, var, ptr)
#endif

#endif /* ACLSIM_ASCENDC_VECTOR_H */
