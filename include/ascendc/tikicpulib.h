/*
 * tikicpulib.h -- Ascend's CPU-debug mode ("CPU twin debugging") on aclsim.
 *
 * Programs written for it build unchanged (CMake: RUN_MODE=cpu before
 * ascendc.cmake, or find_package(tikicpulib) and tikicpulib::${SOC_VERSION},
 * which defines ASCENDC_CPU_DEBUG and puts this header on the include path):
 *
 *     #include "tikicpulib.h"
 *     extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z);
 *     ...
 *     uint8_t *x = (uint8_t *)AscendC::GmAlloc(bytes);
 *     AscendC::SetKernelMode(KernelMode::AIV_MODE);
 *     ICPU_SET_TILING_KEY(1);                      // optional
 *     ICPU_RUN_KF(add_custom, blockDim, x, y, z);  // runs the kernel, returns when done
 *     AscendC::GmFree(x);
 *
 * Differences from CANN's (docs/ascendc.md): the blocks run as threads of this
 * process on aclsim's runtime (one simulated device), not as forked processes,
 * so GmAlloc memory, globals and __gm__ variables are shared by all blocks;
 * ICPU_RUN_KF needs no aclInit (it initializes the runtime for the run when
 * the program has not, and finalizes it after); a kernel that fails (trap,
 * assert, any launch error) makes the program exit with status 1 after
 * printing a message naming the kernel, instead of being swallowed.
 */
#ifndef ACLSIM_ASCENDC_TIKICPULIB_H
#define ACLSIM_ASCENDC_TIKICPULIB_H

#ifndef __cplusplus
#error "tikicpulib.h is C++ (Ascend's CPU-debug mode)"
#endif

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "acl/acl.h"
#include "aclsim/aclsim.h"

#if defined(__has_include)
#if __has_include("kernel_operator.h")
#include "kernel_operator.h"   /* __global__, __aicore__, GM_ADDR, ... */
#endif
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t *
#endif

/* The core type a CPU-debug run simulates (separate-mode SoCs). aclsim runs
 * each block once as one core whatever the mode; SetKernelMode records it. */
enum class KernelMode {
    MIX_MODE = 0,
    AIC_MODE,
    AIV_MODE
};

namespace aclsim_cpudebug {

inline KernelMode &kernel_mode()
{
    static KernelMode mode = KernelMode::MIX_MODE;
    return mode;
}

/* One ICPU_RUN_KF at a time in the process (it may own the runtime's init). */
inline std::mutex &run_lock()
{
    static std::mutex lock;
    return lock;
}

[[noreturn]] inline void fail(const char *kernel, const char *file, int line, const char *what,
                              aclError err)
{
    const char *msg = aclGetRecentErrMsg();
    std::fprintf(stderr, "%s:%d: ICPU_RUN_KF: kernel %s failed: %s returned %d%s%s\n", file, line,
                 kernel, what, (int)err, msg && *msg ? ": " : "", msg ? msg : "");
    std::fflush(stderr);
    std::exit(EXIT_FAILURE);
}

/* The kernel descriptor ICPU_RUN_KF registers for a kernel the driver did not
 * register (a kernel file compiled by the plain C++ compiler): args[0] holds
 * the function pointer, args[1..] the kernel's parameters. */
template <typename... P>
struct Invoker {
    using Fn = void (*)(P...);
    template <std::size_t... I>
    static void call(void *const *args, std::index_sequence<I...>)
    {
        Fn f = *static_cast<const Fn *>(args[0]);
        f(*static_cast<typename std::decay<P>::type *>(args[I + 1])...);
    }
    static void invoke(void *const *args) { call(args, std::index_sequence_for<P...>{}); }
};

/* out[i] = &std::get<i>(values) */
template <typename T, std::size_t... I>
inline void point_at(void **out, T &values, std::index_sequence<I...>)
{
    int unused[] = {0, ((out[I] = &std::get<I>(values)), 0)...};
    (void)unused;
    (void)out;
    (void)values;
}

template <typename... P, typename... A>
inline void run_kernel(const char *name, const char *file, int line, void (*fn)(P...),
                       uint32_t num_blocks, A &&...a)
{
    static_assert(sizeof...(P) == sizeof...(A),
                  "ICPU_RUN_KF: the number of arguments differs from the kernel's parameters");
    static_assert(sizeof...(P) < 16, "ICPU_RUN_KF: aclsim supports kernels of up to 15 parameters");
    using Fn = void (*)(P...);
    std::lock_guard<std::mutex> guard(run_lock());

    aclError err = aclInit(nullptr);
    bool own_init = err == ACL_SUCCESS;
    if (!own_init && err != ACL_ERROR_REPEAT_INITIALIZE)
        fail(name, file, line, "aclInit", err);
    int32_t device = 0;
    bool own_device = aclrtGetDevice(&device) != ACL_SUCCESS;
    if (own_device && (err = aclrtSetDevice(0)) != ACL_SUCCESS)
        fail(name, file, line, "aclrtSetDevice", err);

    Fn f = fn;
    std::tuple<typename std::decay<P>::type...> values(std::forward<A>(a)...);
    void *argv[sizeof...(P) + 1];
    argv[0] = &f;
    point_at(argv + 1, values, std::index_sequence_for<P...>{});

    static const std::size_t sizes[] = {sizeof(Fn), sizeof(typename std::decay<P>::type)...};
    static const std::size_t aligns[] = {alignof(Fn), alignof(typename std::decay<P>::type)...};
    aclsimKernel desc = {(const void *)fn, name, file, line, (uint32_t)(sizeof...(P) + 1),
                         sizes, aligns, &Invoker<P...>::invoke, nullptr, 0};
    aclrtFuncHandle handle = nullptr;
    void **launch_args = argv + 1;          /* kernels the driver registered */
    bool own_desc = aclrtGetFuncBySymbol((const void *)fn, &handle) != ACL_SUCCESS;
    if (own_desc) {
        aclsimRegisterKernel(&desc);
        if ((err = aclrtGetFuncBySymbol((const void *)fn, &handle)) != ACL_SUCCESS)
            fail(name, file, line, "registering the kernel", err);
        launch_args = argv;
    }
    err = aclrtLaunchKernelWithArgsArray(handle, num_blocks, nullptr, nullptr, launch_args);
    if (err != ACL_SUCCESS)
        fail(name, file, line, "the launch", err);
    if ((err = aclrtSynchronizeStream(nullptr)) != ACL_SUCCESS)
        fail(name, file, line, "the kernel", err);
    if (own_desc)
        aclsimUnregisterKernel(&desc);
    if (own_device)
        (void)aclrtResetDevice(0);
    if (own_init)
        (void)aclFinalize();
}

} /* namespace aclsim_cpudebug */

namespace AscendC {

/* Memory for kernel arguments in a CPU-debug run: zeroed, 512-byte aligned,
 * shared by all blocks (they are threads of this process). */
inline void *GmAlloc(size_t size)
{
    void *p = nullptr;
    if (posix_memalign(&p, 512, size ? size : 1) != 0)
        return nullptr;
    std::memset(p, 0, size);
    return p;
}

inline void GmFree(void *ptr)
{
    std::free(ptr);
}

inline void SetKernelMode(KernelMode mode)
{
    aclsim_cpudebug::kernel_mode() = mode;
}

} /* namespace AscendC */

/* ICPU_RUN_KF(kernel, numBlocks, args...): runs the kernel over numBlocks
 * blocks and returns when all are done; exits the program (status 1) with a
 * message naming the kernel if it fails. */
#define ICPU_RUN_KF(func, numBlocks, ...)                                                   \
    ::aclsim_cpudebug::run_kernel(#func, __FILE__, __LINE__, func, (uint32_t)(numBlocks),  \
                                  ##__VA_ARGS__)

/* ICPU_SET_TILING_KEY(key): the tiling key the next runs use (TILING_KEY_IS in
 * kernels). 0 warns, as CANN's, and is used. */
#define ICPU_SET_TILING_KEY(tilingKey)                                                      \
    do {                                                                                   \
        uint64_t aclsim_key_ = (uint64_t)(tilingKey);                                      \
        if (aclsim_key_ == 0)                                                              \
            std::fprintf(stderr, "%s:%d: ICPU_SET_TILING_KEY: tiling key 0 (use a "          \
                         "positive key)\n", __FILE__, __LINE__);                           \
        aclsimSetTilingKey(aclsim_key_);                                                   \
    } while (0)

#endif /* ACLSIM_ASCENDC_TIKICPULIB_H */
