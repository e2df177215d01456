/*
 * aclsim extensions: declaring device variables and kernels in plain C.
 *
 * Ascend C writes `__gm__ float w[16];` and `__global__ __aicore__ void k(...)`.
 * C has neither keyword, so a program built for aclsim writes:
 *
 *     ACLSIM_DEVICE_VAR(float, w, [16]) = {1, 2};     // __gm__ float w[16] = {1, 2};
 *     ACLSIM_DEVICE_VAR(int, counter, ) = 5;          // __gm__ int counter = 5;
 *
 *     void scale(float *out, float k) {               // a kernel: returns void
 *         uint32_t i = aclsimGetBlockIdx();
 *         out[i] = ACLSIM_DEV(w)[i] * k;              // this device's instance of w
 *     }
 *     ACLSIM_KERNEL_REGISTER(scale, float *, float);
 *
 * The host passes the C object's address as the symbol (`w`, `&counter`) to
 * aclrtGetSymbolAddress, aclrtMemcpyToSymbol, ... exactly as with CANN.
 *
 * GNU extensions used (documented in docs/device-variables.md): __typeof__,
 * __attribute__((constructor/destructor)), and __builtin_types_compatible_p for
 * the kernel signature check. Registration runs when the executable or shared
 * object is loaded (before main, before aclInit); dlclose unregisters.
 */
#ifndef ACLSIM_ACLSIM_H
#define ACLSIM_ACLSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#include <type_traits>
extern "C" {
#endif

#ifndef ACLSIM_API
#define ACLSIM_API __attribute__((visibility("default")))
#endif

/* Most devices a process can see; instance[] below has one slot per device
 * plus one (ACLSIM_HOST_SLOT) that always points at the host C object. */
#define ACLSIM_MAX_DEVICES 32
#define ACLSIM_HOST_SLOT ACLSIM_MAX_DEVICES

/* Descriptor of one device variable. The macros below define one per variable;
 * fields after `line` belong to the runtime. */
typedef struct aclsimVar {
    const void *symbol;  /* address of the host C object: the CANN "symbol" */
    size_t size;         /* sizeof the object */
    size_t align;        /* _Alignof its element type */
    const char *name;
    const char *file;
    int line;
    /* Runtime-owned. instance[d] is the variable's memory on logical device d
     * (NULL until first use there); instance[ACLSIM_HOST_SLOT] == symbol (set
     * at registration), so
     * ACLSIM_DEV outside a kernel names the host object, as Ascend's CPU-debug
     * mode does. Written by the runtime with atomics, read by ACLSIM_DEV. */
    void *instance[ACLSIM_MAX_DEVICES + 1];
    /* Runtime-owned: a copy of the object's bytes taken at registration
     * (before main), so instances start from the initializer even if the
     * host object was written since; NULL for objects over 1 MiB, which
     * start from the host object's bytes at first use. */
    void *initial;
    /* Runtime-owned: how many times this descriptor is registered (a second
     * registration of the same descriptor is counted, not duplicated). */
    unsigned registrations;
} aclsimVar;

/* Descriptor of one kernel (ACLSIM_KERNEL_REGISTER defines it). */
typedef struct aclsimKernel {
    const void *function;        /* address of the C function: the CANN "symbol" */
    const char *name;
    const char *file;
    int line;
    uint32_t num_params;
    const size_t *param_size;    /* num_params entries */
    const size_t *param_align;
    void (*invoke)(void *const *args); /* calls function(*(T0 *)args[0], ...) */
    void *handle;                /* runtime-owned: the aclrtFuncHandle */
    unsigned registrations;      /* runtime-owned: registrations of this descriptor */
} aclsimKernel;

ACLSIM_API void aclsimRegisterVar(aclsimVar *var);
ACLSIM_API void aclsimUnregisterVar(aclsimVar *var);
ACLSIM_API void aclsimRegisterKernel(aclsimKernel *kernel);
ACLSIM_API void aclsimUnregisterKernel(aclsimKernel *kernel);
/* As aclsimRegisterKernel, except that when the function is registered
 * already (by another descriptor) this one shares its handle instead of
 * failing: Ascend C's launches (aclsim-cc) use it, so a C kernel registered
 * with ACLSIM_KERNEL_REGISTER can be launched with <<<>>>. */
ACLSIM_API void aclsimRegisterKernelAlias(aclsimKernel *kernel);

/* Inside a kernel: block index (0..num-1) and block count of this launch.
 * Outside a kernel: 0 and 1. */
ACLSIM_API uint32_t aclsimGetBlockIdx(void);
ACLSIM_API uint32_t aclsimGetBlockNum(void);
/* Inside a kernel: the logical device it runs on; outside: ACLSIM_HOST_SLOT. */
ACLSIM_API uint32_t aclsimKernelDeviceSlot(void);

/* Inside a kernel: stops this block and fails the launch like an AI Core
 * exception. Blocks not yet started are skipped, blocks already running
 * finish; the next synchronize of the stream (or of its device) returns
 * ACL_ERROR_RT_AICORE_EXCEPTION (507015), aclGetRecentErrMsg names the
 * kernel, device, stream, block and reason, and the exception callbacks
 * (aclrtExceptionInfoCallbackRegister) are called. The block is left with
 * longjmp: C++ destructors of its frames do not run. Outside a kernel it
 * prints the reason and aborts the process. See docs/failures.md. */
ACLSIM_API void aclsimTrap(const char *reason) __attribute__((noreturn));

/* Inside a kernel: waits until every block of the launch has called it
 * (Ascend C's SyncAll: a barrier across all blocks, which all run at once as
 * far as this is concerned; docs/ascendc-vector.md). A barrier that can never
 * complete (blocks ended without reaching it) fails the launch like
 * aclsimTrap. Outside a kernel it aborts the process. */
ACLSIM_API void aclsimSyncAll(void);

/* The unified buffer (UB) per core of the SoC the runtime simulates
 * (ACLSIM_SOC_VERSION), in bytes: what Ascend C's TPipe may carve up. */
ACLSIM_API uint32_t aclsimKernelUbSize(void);

/* Inside a kernel: a warning about something CANN documents as allowed but
 * that is usually a mistake (Ascend C's layer: DataCopy lengths rounded
 * down). Logged as a warning naming the kernel and block; with
 * ACLSIM_ASCENDC_STRICT=1 in the environment it fails the launch instead,
 * like aclsimTrap. */
ACLSIM_API void aclsimKernelWarn(const char *what);

/* Inside a kernel: size bytes (64-byte aligned, contents undefined) that the
 * running block owns until it ends, also when it fails; NULL when out of
 * memory. For per-block storage such as Ascend C's unified buffer. */
ACLSIM_API void *aclsimBlockAlloc(size_t size);

/* Inside a kernel: ACLSIM_BLOCK_LOCAL_WORDS words private to the running
 * block, zero when it starts (the Ascend C layer's per-block state). */
#define ACLSIM_BLOCK_LOCAL_WORDS 16
ACLSIM_API uint64_t *aclsimBlockLocal(void);

/* The bytes from p to the end of the aclrtMalloc allocation holding it; 0
 * when p is device memory that is not allocated, SIZE_MAX when p is not
 * device memory (ordinary host memory cannot be checked). */
ACLSIM_API size_t aclsimDeviceRoom(const void *p);

/* Kernel output (Ascend C's printf): appends text to the calling thread's
 * line; each complete line is written to file descriptor 1 with one write(2),
 * prefixed "[device D, block B] " inside a kernel. A block's unfinished line
 * is written when the block ends (or fails). */
ACLSIM_API void aclsimPrint(const char *text, size_t len);

/* The launch behind Ascend C's k<<<blocks, ctrl, stream>>>(args) (aclsim-cc):
 * aclrtLaunchKernelWithArgsArray on kernel's handle; a failure's message
 * starts with "file:line: k<<<>>>". Returns the aclError. */
ACLSIM_API int aclsimLaunchAt(const aclsimKernel *kernel, uint32_t blocks, void *stream,
                                   void **args, const char *file, int line);

/* The tiling key of Ascend's CPU-debug mode: ICPU_SET_TILING_KEY (tikicpulib.h)
 * sets it, kernels compare against it (TILING_KEY_IS). 0 until set. */
ACLSIM_API void aclsimSetTilingKey(uint64_t key);
ACLSIM_API uint64_t aclsimGetTilingKey(void);

/* Float overflow, for kernels that compute in floating point (the Ascend C
 * layer's half/float operations call these). Inside a kernel,
 * aclsimReportFloatOverflow records that a result overflowed: it sets the
 * device's overflow status (aclrtGetOverflowStatus) when overflow detection is
 * on for the kernel's stream (aclrtSetStreamOverflowSwitch). Outside a kernel
 * it does nothing. aclsimFloatOverflowMode gives the saturation mode the
 * kernel runs in (0 ACL_RT_OVERFLOW_MODE_SATURATION: overflowing results
 * saturate; 1 ACL_RT_OVERFLOW_MODE_INFNAN: they become inf/NaN), which is its
 * stream's (aclrtSetDeviceSatMode before the stream was created). */
ACLSIM_API void aclsimReportFloatOverflow(void);
ACLSIM_API int aclsimFloatOverflowMode(void);

/* ---- device variables ------------------------------------------------- */

#ifdef __cplusplus
#define ACLSIM__ALIGNOF(t) alignof(t)
#else
#define ACLSIM__ALIGNOF(t) _Alignof(t)
#endif

/* A descriptor belongs to the executable or shared object that defines its
 * variable, and the macros must reach that object's own descriptor and own C
 * object even when another object (a program linked with -rdynamic) exports
 * the same names: references to default-visibility symbols from a shared
 * object are interposable, so the descriptor is hidden (ACLSIM_DEVICE_VAR_EXTERN
 * still reaches it from every file of the same object) and its `symbol` is a
 * hidden alias of the variable (the variable itself keeps default visibility,
 * so that aclrtBinaryGetGlobal can find it by name). */
#define ACLSIM__HIDDEN __attribute__((visibility("hidden")))

#define ACLSIM__VAR_DESC(storage, type, name, self)                             \
    storage aclsimVar aclsim__var_##name = {                                    \
        (const void *)(self), sizeof(name), ACLSIM__ALIGNOF(type), #name,       \
        __FILE__, __LINE__, {0}, 0, 0};                                         \
    __attribute__((constructor)) static void aclsim__reg_##name(void)           \
    {                                                                           \
        aclsimRegisterVar(&aclsim__var_##name);                                 \
    }                                                                           \
    __attribute__((destructor)) static void aclsim__unreg_##name(void)          \
    {                                                                           \
        aclsimUnregisterVar(&aclsim__var_##name);                               \
    }

/* Defines `type name dims` with external linkage; an initializer may follow.
 * Use it at file scope (the alias names the object by its symbol name). */
#define ACLSIM_DEVICE_VAR(type, name, dims)                                     \
    extern type name dims;                                                      \
    extern type aclsim__self_##name dims ACLSIM__HIDDEN                         \
        __attribute__((alias(#name)));                                          \
    extern ACLSIM__HIDDEN aclsimVar aclsim__var_##name;                         \
    ACLSIM__VAR_DESC(ACLSIM__HIDDEN, type, name, &aclsim__self_##name)          \
    type name dims

/* The same with internal linkage (C only: it relies on a tentative definition).
 * The other macros work in C and C++. */
#define ACLSIM_DEVICE_VAR_STATIC(type, name, dims)                              \
    static type name dims;                                                      \
    ACLSIM__VAR_DESC(static, type, name, &name)                                 \
    static type name dims

/* Declares a device variable defined (with ACLSIM_DEVICE_VAR) in another file
 * of the same executable or shared object. */
#define ACLSIM_DEVICE_VAR_EXTERN(type, name, dims)                              \
    extern ACLSIM__HIDDEN aclsimVar aclsim__var_##name;                         \
    extern type name dims

/* Inside a kernel: the lvalue of `name`'s instance on the kernel's device.
 * One thread-local read and two loads: no lock, no hashing, cannot fail. */
#define ACLSIM_DEV(name)                                                        \
    (*(__typeof__(name) *)aclsim__var_##name.instance[aclsimKernelDeviceSlot()])

/* ---- kernels ------------------------------------------------------------ */

#define ACLSIM__CAT(a, b) ACLSIM__CAT_(a, b)
#define ACLSIM__CAT_(a, b) a##b
#define ACLSIM__NARGS(...)                                                      \
    ACLSIM__NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4,   \
                   3, 2, 1, 0)
#define ACLSIM__NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13,  \
                       _14, _15, _16, n, ...) n
/* ACLSIM__IS_VOID(t) is 1 when t is the single token `void`, else 0. */
#define ACLSIM__PROBE_void ~, 1
#define ACLSIM__SECOND(a, b, ...) b
#define ACLSIM__SECOND_(...) ACLSIM__SECOND(__VA_ARGS__)
#define ACLSIM__IS_VOID(t) ACLSIM__SECOND_(ACLSIM__CAT_(ACLSIM__PROBE_, t), 0, ~)

#define ACLSIM__MAP1(m, t0) m(0, t0)
#define ACLSIM__MAP2(m, t0, t1) m(0, t0), m(1, t1)
#define ACLSIM__MAP3(m, t0, t1, t2) m(0, t0), m(1, t1), m(2, t2)
#define ACLSIM__MAP4(m, t0, t1, t2, t3) m(0, t0), m(1, t1), m(2, t2), m(3, t3)
#define ACLSIM__MAP5(m, t0, t1, t2, t3, t4) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4)
#define ACLSIM__MAP6(m, t0, t1, t2, t3, t4, t5) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5)
#define ACLSIM__MAP7(m, t0, t1, t2, t3, t4, t5, t6) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6)
#define ACLSIM__MAP8(m, t0, t1, t2, t3, t4, t5, t6, t7) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6), m(7, t7)
#define ACLSIM__MAP9(m, t0, t1, t2, t3, t4, t5, t6, t7, t8) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6), m(7, t7), m(8, t8)
#define ACLSIM__MAP10(m, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6), m(7, t7), m(8, t8), m(9, t9)
#define ACLSIM__MAP11(m, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6), m(7, t7), m(8, t8), m(9, t9), m(10, t10)
#define ACLSIM__MAP12(m, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6), m(7, t7), m(8, t8), m(9, t9), m(10, t10), m(11, t11)
#define ACLSIM__MAP13(m, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6), m(7, t7), m(8, t8), m(9, t9), m(10, t10), m(11, t11), m(12, t12)
#define ACLSIM__MAP14(m, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6), m(7, t7), m(8, t8), m(9, t9), m(10, t10), m(11, t11), m(12, t12), m(13, t13)
#define ACLSIM__MAP15(m, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6), m(7, t7), m(8, t8), m(9, t9), m(10, t10), m(11, t11), m(12, t12), m(13, t13), m(14, t14)
#define ACLSIM__MAP16(m, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15) m(0, t0), m(1, t1), m(2, t2), m(3, t3), m(4, t4), m(5, t5), m(6, t6), m(7, t7), m(8, t8), m(9, t9), m(10, t10), m(11, t11), m(12, t12), m(13, t13), m(14, t14), m(15, t15)

#define ACLSIM__ARG(i, t) (*(t *)args[i])
#define ACLSIM__SIZE(i, t) sizeof(t)
#define ACLSIM__ALIGN(i, t) ACLSIM__ALIGNOF(t)
#define ACLSIM__TYPE(i, t) t

#ifdef __cplusplus
#define ACLSIM__CHECK_SIGNATURE(fn, ...)                                        \
    static_assert(std::is_same<decltype(&fn), void (*)(__VA_ARGS__)>::value,    \
                  "ACLSIM_KERNEL_REGISTER: parameter types do not match " #fn)
#else
#define ACLSIM__CHECK_SIGNATURE(fn, ...)                                        \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&fn),                \
                                                void (*)(__VA_ARGS__)),         \
                   "ACLSIM_KERNEL_REGISTER: parameter types do not match " #fn)
#endif

#define ACLSIM__KERNEL_DESC(fn, n, sizes, aligns)                               \
    static aclsimKernel aclsim__kernel_##fn = {                                 \
        (const void *)&fn, #fn, __FILE__, __LINE__, n, sizes, aligns,           \
        aclsim__invoke_##fn, 0, 0};                                             \
    __attribute__((constructor)) static void aclsim__kreg_##fn(void)            \
    {                                                                           \
        aclsimRegisterKernel(&aclsim__kernel_##fn);                             \
    }                                                                           \
    __attribute__((destructor)) static void aclsim__kunreg_##fn(void)           \
    {                                                                           \
        aclsimUnregisterKernel(&aclsim__kernel_##fn);                           \
    }                                                                           \
    extern int aclsim__kernel_semicolon_##fn

#define ACLSIM__KREG_N(fn, n, ...)                                              \
    ACLSIM__CHECK_SIGNATURE(fn, ACLSIM__CAT(ACLSIM__MAP, n)(ACLSIM__TYPE,       \
                                                           __VA_ARGS__));       \
    static void aclsim__invoke_##fn(void *const *args)                          \
    {                                                                           \
        fn(ACLSIM__CAT(ACLSIM__MAP, n)(ACLSIM__ARG, __VA_ARGS__));              \
    }                                                                           \
    static const size_t aclsim__ksize_##fn[] = {                                \
        ACLSIM__CAT(ACLSIM__MAP, n)(ACLSIM__SIZE, __VA_ARGS__)};                \
    static const size_t aclsim__kalign_##fn[] = {                               \
        ACLSIM__CAT(ACLSIM__MAP, n)(ACLSIM__ALIGN, __VA_ARGS__)};               \
    ACLSIM__KERNEL_DESC(fn, n, aclsim__ksize_##fn, aclsim__kalign_##fn)

#define ACLSIM__KREG_VOID(fn)                                                   \
    ACLSIM__CHECK_SIGNATURE(fn, void);                                          \
    static void aclsim__invoke_##fn(void *const *args)                          \
    {                                                                           \
        (void)args;                                                             \
        fn();                                                                   \
    }                                                                           \
    ACLSIM__KERNEL_DESC(fn, 0, 0, 0)

#define ACLSIM__KREG_ONE_0(fn, t) ACLSIM__KREG_N(fn, 1, t)
#define ACLSIM__KREG_ONE_1(fn, t) ACLSIM__KREG_VOID(fn)
#define ACLSIM__KREG_1(fn, t) ACLSIM__CAT(ACLSIM__KREG_ONE_, ACLSIM__IS_VOID(t))(fn, t)

/*
 * ACLSIM_KERNEL_REGISTER(fn, T0, T1, ...): registers `void fn(T0, T1, ...)` as
 * a kernel (up to 16 parameters; `ACLSIM_KERNEL_REGISTER(fn, void)` for none).
 * A mismatch between the listed types and fn's signature is a compile error.
 * Parameter types must be usable as `T *` (use a typedef for function pointers
 * and arrays). Use it at file scope, followed by a semicolon.
 */
#define ACLSIM_KERNEL_REGISTER(fn, ...)                                         \
    ACLSIM__CAT(ACLSIM__KREG_SEL_, ACLSIM__NARGS(__VA_ARGS__))                  \
    (fn, ACLSIM__NARGS(__VA_ARGS__), __VA_ARGS__)
#define ACLSIM__KREG_SEL_1(fn, n, t) ACLSIM__KREG_1(fn, t)
#define ACLSIM__KREG_SEL_2 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_3 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_4 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_5 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_6 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_7 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_8 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_9 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_10 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_11 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_12 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_13 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_14 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_15 ACLSIM__KREG_N
#define ACLSIM__KREG_SEL_16 ACLSIM__KREG_N

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLSIM_H */
