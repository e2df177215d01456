/*
 * The basic layer of Ascend C for aclsim (included by kernel_operator.h, and
 * at the top of every source aclsim-cc compiles): the qualifiers, GM_ADDR,
 * __NPU_ARCH__, block indices, printf, assert and trap, dcci, half and
 * bfloat16_t, and the support code the driver's rewriting calls into
 * (namespace aclsim_asc: kernel registration, <<<>>> launches, __gm__
 * variables). Everything is C++11; the driver compiles as C++17 by default.
 *
 * Kernel code runs on the CPU, on the simulated device's worker threads:
 * the qualifiers are empty, memory is coherent (dcci does nothing), and
 * block_idx / GetBlockIdx() read the running block's thread-local index.
 */
#ifndef ACLSIM_ASCENDC_H
#define ACLSIM_ASCENDC_H
/* Users' warning flags (-Wpedantic, -Wshadow, ...) are for their code, not this one. */
#pragma GCC system_header

#ifndef __cplusplus
#error "Ascend C is C++: compile it with aclsim-cc (or a C++ compiler)"
#endif

#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "acl/acl.h"
#include "aclsim/aclsim.h"

/* ---- qualifiers (empty on the CPU; aclsim-cc reads them before this) ---- */
#define __global__
#define __aicore__
#define __vector__
#define __cube__
#define __gm__
#define __ubuf__
#define __ca__
#define __cb__
#define __cc__
#define __cbuf__
#define __fbuf__
#define GM_ADDR __gm__ uint8_t *

/* The architecture compiled for: aclsim-cc defines these from --aclsim-soc /
 * SOC_VERSION (2201: Ascend910B and Ascend910_93 families). */
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif
#ifndef __CCE_AICORE__
#define __CCE_AICORE__ (__NPU_ARCH__ / 10)
#endif
#ifndef ACLSIM_ASCENDC_SOC
#define ACLSIM_ASCENDC_SOC "Ascend910B1"
#endif

/* ---- blocks ---------------------------------------------------------------- */
namespace AscendC {
__aicore__ inline int64_t GetBlockIdx() { return (int64_t)aclsimGetBlockIdx(); }
__aicore__ inline int64_t GetBlockNum() { return (int64_t)aclsimGetBlockNum(); }
} // namespace AscendC
using AscendC::GetBlockIdx;
using AscendC::GetBlockNum;
#define block_idx (::AscendC::GetBlockIdx())
#define block_num (::AscendC::GetBlockNum())

/* ---- printf ------------------------------------------------------------------ */
namespace AscendC {
/* Formats as C's printf and prints on standard output (file descriptor 1),
 * each line prefixed with "[device D, block B] " and written with a single
 * write(2), so lines of concurrent blocks never mix. A line without its
 * newline yet is kept until the newline, or the block's end. */
__attribute__((format(printf, 1, 2))) inline void printf(const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = __builtin_vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        aclsimPrint(small, (size_t)n);
        return;
    }
    char *big = new char[(size_t)n + 1];
    va_start(ap, fmt);
    __builtin_vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    aclsimPrint(big, (size_t)n);
    delete[] big;
}
} // namespace AscendC
#define PRINTF(...) ::AscendC::printf(__VA_ARGS__)

/* ---- trap and assert: fail the launch like an AI Core exception ------------- */
__aicore__ inline void trap() { aclsimKernelFail("trap() called"); }
namespace AscendC {
using ::trap;
namespace detail {
[[noreturn]] inline void assert_fail(const char *expr, const char *file, int line,
                                     const char *fmt = nullptr, ...)
{
    char msg[512];
    int n = __builtin_snprintf(msg, sizeof msg, "assertion failed: %s (%s:%d)", expr, file, line);
    if (fmt && n > 0 && (size_t)n < sizeof msg - 2) {
        va_list ap;
        va_start(ap, fmt);
        msg[n] = ':';
        msg[n + 1] = ' ';
        __builtin_vsnprintf(msg + n + 2, sizeof msg - (size_t)n - 2, fmt, ap);
        va_end(ap);
    }
    aclsimKernelFail(msg);
}
} // namespace detail
} // namespace AscendC
/* assert(expr) and ASSERT(expr [, fmt, args...]): inside a kernel a false
 * expr fails the launch (507015 at the next synchronize, with the expression,
 * file and line); outside a kernel it aborts the process with that message.
 * Disabled by NDEBUG, as C's assert. This replaces <cassert>'s assert for the
 * rest of the file (include <cassert> before kernel_operator.h, not after). */
#undef assert
#ifdef NDEBUG
#define assert(expr) ((void)0)
#define ASSERT(expr, ...) ((void)0)
#else
#define assert(expr)                                                                     \
    ((expr) ? (void)0 : ::AscendC::detail::assert_fail(#expr, __FILE__, __LINE__))
#define ASSERT(expr, ...)                                                                \
    ((expr) ? (void)0 : ::AscendC::detail::assert_fail(#expr, __FILE__, __LINE__, ##__VA_ARGS__))
#endif

/* ---- data cache (no effect: CPU memory is coherent) ------------------------- */
enum class cache_line_t : int { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE = 1 };
enum class dcci_dst_t : int { CACHELINE_ALL = 0, CACHELINE_UB = 1, CACHELINE_OUT = 2,
                              CACHELINE_ATOMIC = 3 };
__aicore__ inline void dcci(const volatile void *addr, cache_line_t entire,
                            dcci_dst_t dst = dcci_dst_t::CACHELINE_ALL)
{
    (void)addr;
    (void)entire;
    (void)dst;
#if defined(__SANITIZE_THREAD__)
    __atomic_signal_fence(__ATOMIC_SEQ_CST);   /* TSan rejects thread fences (-Wtsan) */
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}
namespace AscendC {
enum class CacheLine : int { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE = 1 };
enum class DcciDst : int { CACHELINE_ALL = 0, CACHELINE_UB = 1, CACHELINE_OUT = 2,
                           CACHELINE_ATOMIC = 3 };
} // namespace AscendC

/* ---- half and bfloat16_t ------------------------------------------------------ */
/* IEEE binary16, converted exactly as aclFloatToFloat16 / aclFloat16ToFloat
 * (round to nearest even). Arithmetic between halves computes in float and
 * rounds the result to half (an overflow is reported and saturates in
 * saturation mode, see aclsim_asc::finish); with another arithmetic type the
 * half converts to float and the usual C++ rules apply (half + float is a
 * float). */
struct half {
    uint16_t bits;
    static constexpr uint16_t inf_bits = 0x7c00, max_bits = 0x7bff;
    half() = default;
    half(float f) : bits(aclFloatToFloat16(f)) {}
    half(double d) : bits(aclFloatToFloat16((float)d)) {}
    template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
    half(T v) : bits(aclFloatToFloat16((float)v)) {}
    operator float() const { return aclFloat16ToFloat(bits); }
    static half from_bits(uint16_t b) { half h; h.bits = b; return h; }
    half &operator+=(half o);
    half &operator-=(half o);
    half &operator*=(half o);
    half &operator/=(half o);
    half &operator++() { return *this += half(1.0f); }
    half &operator--() { return *this -= half(1.0f); }
    half operator++(int) { half t = *this; ++*this; return t; }
    half operator--(int) { half t = *this; --*this; return t; }
};

/* bfloat16: the upper half of a float, rounded to nearest even; NaN stays NaN. */
struct bfloat16_t {
    uint16_t bits;
    static constexpr uint16_t inf_bits = 0x7f80, max_bits = 0x7f7f;
    bfloat16_t() = default;
    bfloat16_t(float f) : bits(from_float(f)) {}
    bfloat16_t(double d) : bits(from_float((float)d)) {}
    template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
    bfloat16_t(T v) : bits(from_float((float)v)) {}
    operator float() const
    {
        uint32_t u = (uint32_t)bits << 16;
        float f;
        std::memcpy(&f, &u, sizeof f);
        return f;
    }
    static bfloat16_t from_bits(uint16_t b) { bfloat16_t h; h.bits = b; return h; }
    static uint16_t from_float(float f)
    {
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        if ((u & 0x7fffffffu) > 0x7f800000u)          /* NaN: keep it a (quiet) NaN */
            return (uint16_t)((u >> 16) | 0x0040u);
        u += 0x7fffu + ((u >> 16) & 1u);              /* round to nearest even */
        return (uint16_t)(u >> 16);
    }
    bfloat16_t &operator+=(bfloat16_t o);
    bfloat16_t &operator-=(bfloat16_t o);
    bfloat16_t &operator*=(bfloat16_t o);
    bfloat16_t &operator/=(bfloat16_t o);
};

namespace aclsim_asc {
template <class T> struct is_low_float : std::false_type {};
template <> struct is_low_float<half> : std::true_type {};
template <> struct is_low_float<bfloat16_t> : std::true_type {};
template <class T, class U>
using mixed = typename std::enable_if<is_low_float<T>::value && std::is_arithmetic<U>::value,
                                      int>::type;
} // namespace aclsim_asc

namespace aclsim_asc {
/* The result of an operation between two halves (or bfloat16s), computed in
 * float: rounded to T; a finite result too large for T is a float overflow
 * (reported to the runtime: aclrtGetOverflowStatus) and, in saturation mode
 * (aclrtSetDeviceSatMode), becomes T's largest finite value. */
template <class T> inline T finish(float r)
{
    T h(r);
    if ((h.bits & 0x7fffu) == T::inf_bits && __builtin_isfinite(r)) {
        aclsimReportFloatOverflow();
        if (aclsimFloatOverflowMode() == 0)   /* ACL_RT_OVERFLOW_MODE_SATURATION */
            h.bits = (uint16_t)((h.bits & 0x8000u) | T::max_bits);
    }
    return h;
}
} // namespace aclsim_asc

#define ACLSIM_ASC_LOWFLOAT_OPS(T)                                                          \
    inline T operator+(T a, T b) { return aclsim_asc::finish<T>((float)a + (float)b); }     \
    inline T operator-(T a, T b) { return aclsim_asc::finish<T>((float)a - (float)b); }     \
    inline T operator*(T a, T b) { return aclsim_asc::finish<T>((float)a * (float)b); }     \
    inline T operator/(T a, T b) { return aclsim_asc::finish<T>((float)a / (float)b); }     \
    inline T &T::operator+=(T o) { return *this = *this + o; }                              \
    inline T &T::operator-=(T o) { return *this = *this - o; }                              \
    inline T &T::operator*=(T o) { return *this = *this * o; }                              \
    inline T &T::operator/=(T o) { return *this = *this / o; }                              \
    inline T operator-(T a) { T r = a; r.bits ^= 0x8000u; return r; }                       \
    inline T operator+(T a) { return a; }                                                   \
    inline bool operator==(T a, T b) { return (float)a == (float)b; }                       \
    inline bool operator!=(T a, T b) { return (float)a != (float)b; }                       \
    inline bool operator<(T a, T b) { return (float)a < (float)b; }                         \
    inline bool operator<=(T a, T b) { return (float)a <= (float)b; }                       \
    inline bool operator>(T a, T b) { return (float)a > (float)b; }                         \
    inline bool operator>=(T a, T b) { return (float)a >= (float)b; }
ACLSIM_ASC_LOWFLOAT_OPS(half)
ACLSIM_ASC_LOWFLOAT_OPS(bfloat16_t)
#undef ACLSIM_ASC_LOWFLOAT_OPS

/* half or bfloat16_t with another arithmetic type: computed in float (or the
 * wider type), as if the half were converted first. */
#define ACLSIM_ASC_MIXED_OP(op)                                                             \
    template <class T, class U, aclsim_asc::mixed<T, U> = 0>                                \
    inline auto operator op(T a, U b)->decltype((float)a op b) { return (float)a op b; }    \
    template <class T, class U, aclsim_asc::mixed<T, U> = 0>                                \
    inline auto operator op(U a, T b)->decltype(a op (float)b) { return a op (float)b; }
ACLSIM_ASC_MIXED_OP(+)
ACLSIM_ASC_MIXED_OP(-)
ACLSIM_ASC_MIXED_OP(*)
ACLSIM_ASC_MIXED_OP(/)
ACLSIM_ASC_MIXED_OP(==)
ACLSIM_ASC_MIXED_OP(!=)
ACLSIM_ASC_MIXED_OP(<)
ACLSIM_ASC_MIXED_OP(<=)
ACLSIM_ASC_MIXED_OP(>)
ACLSIM_ASC_MIXED_OP(>=)
#undef ACLSIM_ASC_MIXED_OP

/* ---- support for aclsim-cc's rewriting ----------------------------------------- */
namespace aclsim_asc {

template <std::size_t... I> struct index_seq {};
template <std::size_t N, std::size_t... I> struct make_seq : make_seq<N - 1, N - 1, I...> {};
template <std::size_t... I> struct make_seq<0, I...> { typedef index_seq<I...> type; };

template <bool...> struct all_true : std::true_type {};
template <bool B, bool... R> struct all_true<B, R...>
    : std::integral_constant<bool, B && all_true<R...>::value> {};

/* A type a kernel parameter may have: copied by value into the launch. */
template <class P> struct param_ok
    : std::integral_constant<bool, !std::is_reference<P>::value &&
                                       std::is_trivially_copyable<P>::value> {};

template <class F> struct kernel_traits {
    static constexpr bool is_kernel = false;
    static constexpr unsigned count = 0;
    static constexpr bool params_ok = false;
};
template <class... P> struct kernel_traits<void (*)(P...)> {
    static constexpr bool is_kernel = true;
    static constexpr unsigned count = sizeof...(P);
    static constexpr bool params_ok = all_true<param_ok<P>::value...>::value;
};

/* One descriptor per kernel function (per template instantiation), made and
 * registered the first time it is needed (by the registration line aclsim-cc
 * puts after the kernel, or by a launch) and unregistered at exit / dlclose. */
template <class F, F f> struct kernel;
template <class... P, void (*f)(P...)> struct kernel<void (*)(P...), f> {
    typedef std::tuple<typename std::decay<P>::type...> values;

    template <std::size_t... I> static void call(void *const *args, index_seq<I...>)
    {
        (void)args;
        f(*static_cast<typename std::decay<P>::type *>(args[I])...);
    }
    static void invoke(void *const *args)
    {
        call(args, typename make_seq<sizeof...(P)>::type());
    }
    struct holder {
        std::size_t sizes[sizeof...(P) + 1];
        std::size_t aligns[sizeof...(P) + 1];
        aclsimKernel desc;
        holder(const char *name, const char *file, int line)
            : sizes{sizeof(typename std::decay<P>::type)..., 0},
              aligns{alignof(typename std::decay<P>::type)..., 0}, desc()
        {
            desc.function = reinterpret_cast<const void *>(f);
            desc.name = name;
            desc.file = file;
            desc.line = line;
            desc.num_params = sizeof...(P);
            desc.param_size = sizes;
            desc.param_align = aligns;
            desc.invoke = &invoke;
            aclsimRegisterKernelAlias(&desc);
        }
        ~holder() { aclsimUnregisterKernel(&desc); }
        holder(const holder &) = delete;
        holder &operator=(const holder &) = delete;
    };
    static aclsimKernel &get(const char *name, const char *file, int line)
    {
        static holder h(name, file, line);
        return h.desc;
    }
};

/* Argument conversion for <<<>>>: a pointer parameter takes any pointer
 * (device pointers are often held as uint8_t * or void *), other parameters
 * convert implicitly. */
template <class P, class A,
          typename std::enable_if<std::is_pointer<P>::value &&
                                      (std::is_pointer<typename std::decay<A>::type>::value ||
                                       std::is_same<typename std::decay<A>::type,
                                                    std::nullptr_t>::value),
                                  int>::type = 0>
inline P convert(A &&a) { return (P)(a); }
template <class P, class A,
          typename std::enable_if<!(std::is_pointer<P>::value &&
                                    (std::is_pointer<typename std::decay<A>::type>::value ||
                                     std::is_same<typename std::decay<A>::type,
                                                  std::nullptr_t>::value)),
                                  int>::type = 0>
inline P convert(A &&a) { return std::forward<A>(a); }

/* k<<<n, ctrl, stream>>>(args...) becomes
 * aclsim_asc::fn<decltype(&k)>::template launcher<&k>("k", __FILE__, __LINE__, n, ctrl, stream)(args...)
 * (no comma outside parentheses, so it works inside macro arguments): its
 * value is the launch's aclError. */
template <class F> struct fn;
template <class... P> struct fn<void (*)(P...)> {
    template <void (*f)(P...)> struct launcher {
        const char *name, *file;
        int line;
        uint32_t blocks;
        aclrtStream stream;
        template <class C>
        launcher(const char *name_, const char *file_, int line_, uint32_t blocks_, C &&ctrl,
                 aclrtStream stream_)
            : name(name_), file(file_), line(line_), blocks(blocks_), stream(stream_)
        {
            (void)ctrl;   /* l2ctrl / dynamic UB size: no equivalent on the CPU */
        }
        template <class Tuple, std::size_t... I>
        aclError go(Tuple &t, index_seq<I...>)
        {
            void *args[sizeof...(P) + 1] = {static_cast<void *>(&std::get<I>(t))..., nullptr};
            aclsimKernel &k = kernel<void (*)(P...), f>::get(name, file, line);
            return aclsimLaunchAt(&k, blocks, stream, args, file, line);
        }
        template <class... A> aclError operator()(A &&...a)
        {
            static_assert(sizeof...(A) == sizeof...(P),
                          "aclsim: <<<>>> launch: the number of arguments differs from the "
                          "number of the kernel's parameters");
            typename kernel<void (*)(P...), f>::values t(
                convert<typename std::decay<P>::type>(std::forward<A>(a))...);
            return go(t, typename make_seq<sizeof...(P)>::type());
        }
    };
    /* The registration line after each non-template __global__ kernel. */
    template <void (*f)(P...)> struct registrar {
        registrar(const char *name, const char *file, int line)
        {
            kernel<void (*)(P...), f>::get(name, file, line);
        }
    };
};

/* A file-scope __gm__ variable: its descriptor registered for the whole
 * program run (the driver defines one registrar after each definition). */
struct var_registrar {
    aclsimVar *var;
    explicit var_registrar(aclsimVar *v) : var(v) { aclsimRegisterVar(v); }
    ~var_registrar() { aclsimUnregisterVar(var); }
    var_registrar(const var_registrar &) = delete;
    var_registrar &operator=(const var_registrar &) = delete;
};
/* The descriptor of a __gm__ variable (fields the runtime owns start zero). */
inline aclsimVar make_var(const void *symbol, std::size_t size, std::size_t align,
                          const char *name, const char *file, int line)
{
    aclsimVar v;
    std::memset(&v, 0, sizeof v);
    v.symbol = symbol;
    v.size = size;
    v.align = align;
    v.name = name;
    v.file = file;
    v.line = line;
    return v;
}
template <class T> struct var_ok
    : std::integral_constant<bool, std::is_trivially_copyable<T>::value &&
                                       !std::is_reference<T>::value> {};

} // namespace aclsim_asc

/* Inside kernel code, aclsim-cc writes each use of a __gm__ variable v as
 * ACLSIM_ASC_DEV(v, aclsim__var_v): the instance on the kernel's device. */
#define ACLSIM_ASC_DEV(name, desc)                                                          \
    (*(decltype(name) *)(desc).instance[aclsimKernelDeviceSlot()])

#endif /* ACLSIM_ASCENDC_H */
