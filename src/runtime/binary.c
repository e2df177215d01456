/*
 * Kernel binaries. The "operator binary" is a shared object built from C
 * sources that define device variables and kernels: dlopen runs their
 * registration constructors, dlclose their unregistration destructors. Names
 * resolve with dlsym to an address, then through the same registries as
 * aclrtGetFuncBySymbol and the symbol functions: one lookup path for all.
 */
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct binary {
    void *dl;
    char *path;                   /* or "<memory>" for one loaded from data */
    void *handle;
    struct binary *prev, *next;   /* loaded, under loaded_lock */
    /* Where the loader mapped it (its kernels' functions lie in it) and the
     * size of the file or data it was loaded from. */
    void *base;
    size_t size;
    bool lazy;                    /* ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD 1 */
    /* Loaded from data: its anonymous file, open while it is loaded, so no
     * two live binaries have the same "/proc/self/fd/N" name (the loader
     * would take the second for the first). -1 otherwise. */
    int fd;
    /* aclrtBinarySetExceptionCallback's, under loaded_lock. */
    aclrtOpExceptionCallback on_exception;
    void *on_exception_data;
    /* Loaded with ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE 2: a library of AI
     * CPU kernels, registered one by one with aclrtRegisterCpuFunc (under
     * loaded_lock; freed with the binary). */
    bool cpu;
    struct cpu_func *cpu_funcs;
};

/* An AI CPU kernel: `uint32_t funcName(void *args)` of the binary, named
 * kernelName (CANN's opType). */
struct cpu_func {
    aclsimKernel k;
    char *func_name;
    struct cpu_func *next;
};
static const size_t cpu_param_size = sizeof(struct aclsim__cpu_call);
static const size_t cpu_param_align = _Alignof(struct aclsim__cpu_call);

/* Binaries not yet unloaded: aclFinalize unloads what the program forgot. */
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static struct binary *loaded;

static void unlink_binary(struct binary *b)
{
    if (b->prev)
        b->prev->next = b->next;
    else
        loaded = b->next;
    if (b->next)
        b->next->prev = b->prev;
}

static void unload(struct binary *b)
{
    while (b->cpu_funcs) {
        struct cpu_func *c = b->cpu_funcs;
        b->cpu_funcs = c->next;
        aclsim__handle_free(c->k.handle);
        free((char *)c->k.name);
        free(c->func_name);
        free(c);
    }
    dlclose(b->dl);   /* its destructors unregister its variables and kernels */
    if (b->fd >= 0)
        close(b->fd);
    free(b->path);
    free(b);
}

void aclsim__binaries_finalize(void)
{
    pthread_mutex_lock(&loaded_lock);
    while (loaded) {
        struct binary *b = loaded;
        unlink_binary(b);
        aclsim__handle_free(b->handle);
        unload(b);
    }
    pthread_mutex_unlock(&loaded_lock);
}

static struct binary *binary_of(aclrtBinHandle h, const char *api, aclError *err)
{
    struct binary *b = h ? aclsim__handle_get(h, ACLSIM_H_BINARY) : NULL;
    if (!h)
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "binHandle is NULL");
    else if (!b)
        *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "binHandle %p is not a loaded binary (unloaded, or never loaded)", h);
    return b;
}

/* The load options (aclrtBinaryLoadOptions), checked; *lazy gets LAZY_LOAD,
 * *cpu whether it is a library of AI CPU kernels (data: from memory). */
static aclError check_options(const aclrtBinaryLoadOptions *options, bool data, bool *lazy,
                              bool *cpu, const char *api)
{
    *lazy = *cpu = false;
    if (!options)
        return ACL_SUCCESS;
    if (options->numOpt && !options->options)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "options->options is NULL but options->numOpt is %zu", options->numOpt);
    for (size_t i = 0; i < options->numOpt; i++) {
        const aclrtBinaryLoadOption *o = &options->options[i];
        switch ((int)o->type) {
        case ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD:
            if (o->value.isLazyLoad > 1)
                return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                    "options->options[%zu].value.isLazyLoad is %u: 0 or 1", i,
                                    o->value.isLazyLoad);
            *lazy = o->value.isLazyLoad == 1;
            break;
        case ACL_RT_BINARY_LOAD_OPT_MAGIC:   /* which cores run it: every core here */
            if (o->value.magic != ACL_RT_BINARY_MAGIC_ELF_AICORE &&
                o->value.magic != ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE &&
                o->value.magic != ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE)
                return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                    "options->options[%zu].value.magic 0x%x is not one of the "
                                    "ACL_RT_BINARY_MAGIC_ELF_* values", i, o->value.magic);
            break;
        case ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE:
            if (o->value.cpuKernelMode < 0 || o->value.cpuKernelMode > 2)
                return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                    "options->options[%zu].value.cpuKernelMode is %d: 0, 1 or 2",
                                    i, o->value.cpuKernelMode);
            if (o->value.cpuKernelMode < 2)
                return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                    "cpuKernelMode %d registers AI CPU operators from an operator "
                                    "information file (.json), which is not simulated: load the "
                                    "kernels' library with aclrtBinaryLoadFromData and "
                                    "cpuKernelMode 2, then aclrtRegisterCpuFunc",
                                    o->value.cpuKernelMode);
            if (!data)
                return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                    "cpuKernelMode 2 is for aclrtBinaryLoadFromData");
            *cpu = true;
            break;
        default:
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "options->options[%zu].type %d is not a load option (1 to 3)", i,
                                (int)o->type);
        }
    }
    return ACL_SUCCESS;
}

/* Loads the shared object at path (label names it in messages) and makes
 * its handle. */
static aclError load(const char *path, const char *label, size_t size, bool lazy, bool cpu,
                     int fd, aclrtBinHandle *binHandle, const char *api)
{
    struct binary *b = aclsim__calloc(1, sizeof *b);
    char *name = aclsim__strdup(label);
    if (!b || !name) {
        free(b);
        free(name);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory loading \"%s\"", label);
    }
    unsigned long failures = aclsim__tls_registration_failures;
    b->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (b->dl && aclsim__tls_registration_failures != failures) {
        /* Some of its variables or kernels could not be registered (out of
         * memory, or an address registered by another descriptor: R3 in
         * symbol.c). dlclose runs its destructors, which leave everything
         * registered before it -- the program's variables -- alone. */
        aclError code = aclsim__tls_registration_code;
        char why[sizeof aclsim__tls_registration_error];
        memcpy(why, aclsim__tls_registration_error, sizeof why);
        dlclose(b->dl);
        free(b);
        free(name);
        return aclsim__fail(code, api, "cannot register the kernels and variables of \"%s\": %s",
                            label, why);
    }
    if (!b->dl) {
        const char *why = dlerror();
        free(b);
        free(name);
        return aclsim__fail(ACL_ERROR_INVALID_FILE, api, "cannot load kernel binary \"%s\": %s",
                            label, why ? why : "unknown loader error");
    }
    struct link_map *lm = NULL;
    Dl_info di;
    if (dlinfo(b->dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && dladdr(lm->l_ld, &di))
        b->base = di.dli_fbase;
    b->path = name;
    b->cpu = cpu;
    b->fd = fd;
    b->size = size;
    b->lazy = lazy;
    void *h = aclsim__handle_new(ACLSIM_H_BINARY, b);
    if (!h) {
        dlclose(b->dl);
        free(b->path);
        free(b);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory loading \"%s\"", label);
    }
    b->handle = h;
    pthread_mutex_lock(&loaded_lock);
    b->next = loaded;
    if (loaded)
        loaded->prev = b;
    loaded = b;
    pthread_mutex_unlock(&loaded_lock);
    *binHandle = h;
    return ACL_SUCCESS;
}

aclError aclrtBinaryLoadFromFile(const char *binPath, aclrtBinaryLoadOptions *options,
                                 aclrtBinHandle *binHandle)
{
    static const char api[] = "aclrtBinaryLoadFromFile";
    ACLSIM_REQUIRE_INIT(api);
    if (!binPath || !binHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !binPath ? "binPath" : "binHandle");
    bool lazy, cpu;
    aclError err = check_options(options, false, &lazy, &cpu, api);
    if (err)
        return err;
    /* A path without '/' would search the library path; a binary is a file. */
    char *local = NULL;
    if (!strchr(binPath, '/')) {
        if (!(local = aclsim__malloc(strlen(binPath) + 3)))
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory loading \"%s\"", binPath);
        strcat(strcpy(local, "./"), binPath);
    }
    struct stat st;
    size_t size = stat(local ? local : binPath, &st) == 0 ? (size_t)st.st_size : 0;
    err = load(local ? local : binPath, binPath, size, lazy, false, -1, binHandle, api);
    free(local);
    return err;
}

/* Loads a binary from memory: the bytes go to an anonymous file the loader
 * can open (memfd), closed when the binary is unloaded. */
static aclError load_data(const void *data, size_t length, bool lazy, bool cpu,
                          aclrtBinHandle *binHandle, const char *api)
{
    int fd = memfd_create("aclsim-binary", MFD_CLOEXEC);
    if (fd < 0)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api,
                            "cannot make an anonymous file for the binary's %zu bytes", length);
    const char *p = data;
    size_t left = length;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w <= 0) {
            close(fd);
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api,
                                "cannot write the binary's %zu bytes to an anonymous file", length);
        }
        p += w;
        left -= (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    aclError err = load(path, "<memory>", length, lazy, cpu, fd, binHandle, api);
    if (err)
        close(fd);
    return err;
}

aclError aclrtBinaryLoadFromData(const void *data, size_t length,
                                 const aclrtBinaryLoadOptions *options, aclrtBinHandle *binHandle)
{
    static const char api[] = "aclrtBinaryLoadFromData";
    if (!data || !binHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !data ? "data" : "binHandle");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    if (!length)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "length is 0");
    bool lazy, cpu;
    aclError err = check_options(options, true, &lazy, &cpu, api);
    return err ? err : load_data(data, length, lazy, cpu, binHandle, api);
}

/* aclrtCreateBinary's description: the caller's data, not copied (as CANN). */
struct binary_desc { const void *data; size_t len; };

aclrtBinary aclrtCreateBinary(const void *data, size_t dataLen)
{
    static const char api[] = "aclrtCreateBinary";
    if (!data) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "data is NULL");
        return NULL;
    }
    struct binary_desc *d = aclsim__malloc(sizeof *d);
    void *h = d ? aclsim__handle_new(ACLSIM_H_BINARY_DESC, d) : NULL;
    if (!h) {
        free(d);
        aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        return NULL;
    }
    *d = (struct binary_desc){data, dataLen};
    return h;
}

aclError aclrtDestroyBinary(aclrtBinary binary)
{
    static const char api[] = "aclrtDestroyBinary";
    if (!binary)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "binary is NULL");
    pthread_mutex_lock(&loaded_lock);   /* against aclrtBinaryLoad reading it */
    struct binary_desc *d = aclsim__handle_get(binary, ACLSIM_H_BINARY_DESC);
    bool mine = d && aclsim__handle_free(binary);   /* false: a racing destroy won */
    pthread_mutex_unlock(&loaded_lock);
    if (!mine)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "binary %p is not a live aclrtBinary (destroyed, or never created)",
                            binary);
    free(d);
    return ACL_SUCCESS;
}

aclError aclrtBinaryLoad(const aclrtBinary binary, aclrtBinHandle *binHandle)
{
    static const char api[] = "aclrtBinaryLoad";
    if (!binary || !binHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !binary ? "binary" : "binHandle");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    pthread_mutex_lock(&loaded_lock);
    struct binary_desc *d = aclsim__handle_get(binary, ACLSIM_H_BINARY_DESC);
    struct binary_desc copy = d ? *d : (struct binary_desc){NULL, 0};
    pthread_mutex_unlock(&loaded_lock);
    if (!d)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "binary %p is not a live aclrtBinary (destroyed, or never created)",
                            binary);
    if (!copy.len)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "binary %p describes 0 bytes (aclrtCreateBinary's dataLen)", binary);
    return load_data(copy.data, copy.len, false, false, binHandle, api);
}

aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle)
{
    static const char api[] = "aclrtBinaryUnLoad";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = ACL_SUCCESS;
    struct binary *b = binary_of(binHandle, api, &err);
    if (!b)
        return err;
    /* Queued launches of its kernels still point into the shared object:
     * let every device finish the work queued so far before unmapping it,
     * including devices being reset and contexts being destroyed right now
     * (their streams are off the lists aclsim__device_synchronize walks). */
    pthread_mutex_lock(&aclsim__rt.lock);
    for (uint32_t d = 0; d < aclsim__config()->visible_count; d++) {
        struct aclsim__device *dev = &aclsim__devices[d];
        while (dev->closing || dev->detached) {
            if (aclsim__tls_worker) {   /* it may be waiting for this very host function */
                pthread_mutex_unlock(&aclsim__rt.lock);
                return aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                                    "device %d is being reset; a host function cannot unload "
                                    "a binary until the reset is over", d);
            }
            pthread_cond_wait(&aclsim__rt.changed, &aclsim__rt.lock);
        }
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    for (uint32_t d = 0; d < aclsim__config()->visible_count; d++)
        if (atomic_load(&aclsim__devices[d].open) &&
            (err = aclsim__device_synchronize(&aclsim__devices[d], api)))
            return err;
    pthread_mutex_lock(&loaded_lock);
    bool live = aclsim__handle_get(binHandle, ACLSIM_H_BINARY) == b;   /* not raced away */
    if (live) {
        aclsim__handle_free(binHandle);
        unlink_binary(b);
    }
    pthread_mutex_unlock(&loaded_lock);
    if (!live)
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "binHandle %p is not a loaded binary (unloaded, or never loaded)",
                            binHandle);
    unload(b);
    return ACL_SUCCESS;
}

/* Both lookups hold loaded_lock from the handle check to the end, so a
 * concurrent aclrtBinaryUnLoad cannot unmap the binary under them. */
aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
                                aclrtFuncHandle *funcHandle)
{
    static const char api[] = "aclrtBinaryGetFunction";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&loaded_lock);
    struct binary *b = binary_of(binHandle, api, &err);
    if (!b)
        goto out;
    if (!kernelName || !funcHandle) {
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                           !kernelName ? "kernelName" : "funcHandle");
        goto out;
    }
    void *fn = dlsym(b->dl, kernelName);
    const aclsimKernel *k = fn ? aclsim__kernel_by_function(fn) : NULL;
    if (!k)
        err = aclsim__fail(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, api,
                           "kernel binary \"%s\" has no registered kernel named \"%s\"",
                           b->path, kernelName);
    else
        *funcHandle = k->handle;
out:
    pthread_mutex_unlock(&loaded_lock);
    return err;
}

aclError aclrtBinaryGetGlobal(aclrtBinHandle binHandle, const char *name, void **dptr,
                              size_t *size)
{
    static const char api[] = "aclrtBinaryGetGlobal";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&loaded_lock);
    struct binary *b = binary_of(binHandle, api, &err);
    struct aclsim__context *ctx = NULL;
    if (!b)
        goto out;
    if (!name || !dptr || !size) {
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                           !name ? "name" : !dptr ? "dptr" : "size");
        goto out;
    }
    /* Check order as the symbol functions: context, SoC support, then name. */
    if ((err = aclsim__current_context(api, &ctx)))
        goto out;
    if (!aclsim__config()->symbols_supported) {
        err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                           "device variables are not supported on SoC %s",
                           aclsim__config()->soc_name);
        goto out;
    }
    void *symbol = dlsym(b->dl, name);
    if (!symbol || !aclsim__var_of(symbol)) {
        err = aclsim__fail(ACL_ERROR_RT_SYMBOL_NOT_FOUND, api,
                           "kernel binary \"%s\" has no device variable named \"%s\"",
                           b->path, name);
        goto out;
    }
    aclsimVar *var = NULL;
    char *p = NULL;
    if (!(err = aclsim__symbol_resolve(symbol, api, &ctx, &var, &p))) {
        *size = var->size;
        *dptr = p;
    }
out:
    pthread_mutex_unlock(&loaded_lock);
    return err;
}

/* The loaded binary whose mapping holds kernel k's function (loaded_lock
 * held), or NULL: a kernel of the program itself. */
static struct binary *binary_of_kernel(const aclsimKernel *k)
{
    Dl_info di;
    if (!dladdr(k->function, &di))
        return NULL;
    for (struct binary *b = loaded; b; b = b->next)
        if (b->base && b->base == di.dli_fbase)
            return b;
    return NULL;
}

aclError aclrtBinaryGetDevAddress(const aclrtBinHandle binHandle, void **binAddr, size_t *binSize)
{
    static const char api[] = "aclrtBinaryGetDevAddress";
    if (!binHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "binHandle is NULL");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    if (!binAddr || !binSize)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL",
                            !binAddr ? "binAddr" : "binSize");
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&loaded_lock);
    struct binary *b = binary_of(binHandle, api, &err);
    if (b) {   /* device memory is this address space: where the loader mapped it */
        *binAddr = b->lazy ? NULL : b->base;
        *binSize = b->size;
    }
    pthread_mutex_unlock(&loaded_lock);
    return err;
}

aclError aclrtBinaryGetFunctionByEntry(aclrtBinHandle binHandle, uint64_t funcEntry,
                                       aclrtFuncHandle *funcHandle)
{
    static const char api[] = "aclrtBinaryGetFunctionByEntry";
    if (!binHandle || !funcHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !binHandle ? "binHandle" : "funcHandle");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&loaded_lock);
    struct binary *b = binary_of(binHandle, api, &err);
    if (b) {
        /* A kernel's entry is its function's address (aclrtGetFunctionAddr). */
        const aclsimKernel *k = aclsim__kernel_by_function((const void *)(uintptr_t)funcEntry);
        if (!k || binary_of_kernel(k) != b)
            err = aclsim__fail(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, api,
                               "kernel binary \"%s\" has no registered kernel at entry 0x%llx "
                               "(an entry is a kernel's address, as aclrtGetFunctionAddr gives)",
                               b->path, (unsigned long long)funcEntry);
        else
            *funcHandle = k->handle;
    }
    pthread_mutex_unlock(&loaded_lock);
    return err;
}

aclError aclrtBinarySetExceptionCallback(aclrtBinHandle binHandle,
                                         aclrtOpExceptionCallback callback, void *userData)
{
    static const char api[] = "aclrtBinarySetExceptionCallback";
    if (!binHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "binHandle is NULL");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&loaded_lock);
    struct binary *b = binary_of(binHandle, api, &err);
    if (b) {   /* the last one set wins; NULL removes it */
        b->on_exception = callback;
        b->on_exception_data = userData;
    }
    pthread_mutex_unlock(&loaded_lock);
    return err;
}

void aclsim__binary_exception(void *func, aclrtExceptionInfo *info)
{
    const aclsimKernel *k = aclsim__handle_get(func, ACLSIM_H_FUNC);
    if (!k)
        return;
    pthread_mutex_lock(&loaded_lock);
    struct binary *b = binary_of_kernel(k);
    aclrtOpExceptionCallback cb = b ? b->on_exception : NULL;
    void *data = b ? b->on_exception_data : NULL;
    pthread_mutex_unlock(&loaded_lock);
    if (cb)
        cb(info, data);
}

aclError aclrtFunctionGetBinary(const aclrtFuncHandle funcHandle, aclrtBinHandle *binHandle)
{
    static const char api[] = "aclrtFunctionGetBinary";
    if (!funcHandle || !binHandle)   /* CANN's runtime checks these */
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is NULL",
                            !funcHandle ? "funcHandle" : "binHandle");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&loaded_lock);
    const aclsimKernel *k = aclsim__handle_get(funcHandle, ACLSIM_H_FUNC);
    struct binary *b = k ? binary_of_kernel(k) : NULL;
    if (!k)
        err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                           "funcHandle %p is not a live kernel handle (its binary may have been "
                           "unloaded)", funcHandle);
    else if (!b)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "kernel %s belongs to no loaded binary: the program registers it "
                           "itself (aclrtGetFuncBySymbol's kernels have no binary)", k->name);
    else
        *binHandle = b->handle;
    pthread_mutex_unlock(&loaded_lock);
    return err;
}

aclError aclrtRegisterCpuFunc(const aclrtBinHandle handle, const char *funcName,
                              const char *kernelName, aclrtFuncHandle *funcHandle)
{
    static const char api[] = "aclrtRegisterCpuFunc";
    if (!handle || !funcName || !kernelName || !funcHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !handle ? "handle" : !funcName ? "funcName"
                                               : !kernelName ? "kernelName" : "funcHandle");
    ACLSIM_REQUIRE_INIT_SOC(api, ACLSIM_ALL_BUT_IPV);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&loaded_lock);
    struct binary *b = binary_of(handle, api, &err);
    if (!b)
        goto out;
    if (!b->cpu) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "kernel binary \"%s\" holds AI Core kernels: aclrtRegisterCpuFunc is "
                           "for AI CPU operators only (load them with aclrtBinaryLoadFromData and "
                           "ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE 2; find AI Core kernels with "
                           "aclrtBinaryGetFunction)", b->path);
        goto out;
    }
    for (struct cpu_func *c = b->cpu_funcs; c; c = c->next)
        if (!strcmp(c->func_name, funcName) && !strcmp(c->k.name, kernelName)) {
            *funcHandle = c->k.handle;   /* registered already */
            goto out;
        }
    void *fn = dlsym(b->dl, funcName);
    if (!fn) {
        err = aclsim__fail(ACL_ERROR_RT_INVALID_DEVICE_FUNCTION, api,
                           "the AI CPU library \"%s\" exports no function named \"%s\"", b->path,
                           funcName);
        goto out;
    }
    struct cpu_func *c = aclsim__calloc(1, sizeof *c);
    char *name = aclsim__strdup(kernelName), *func_name = aclsim__strdup(funcName);
    void *h = c && name && func_name ? aclsim__handle_new(ACLSIM_H_FUNC, &c->k) : NULL;
    if (!h) {
        free(c);
        free(name);
        free(func_name);
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory registering %s", kernelName);
        goto out;
    }
    c->k = (aclsimKernel){.function = fn, .name = name, .file = b->path, .num_params = 1,
                          .param_size = &cpu_param_size, .param_align = &cpu_param_align,
                          .invoke = aclsim__cpu_invoke, .handle = h, .registrations = 1};
    c->func_name = func_name;
    c->next = b->cpu_funcs;
    b->cpu_funcs = c;
    *funcHandle = h;
out:
    pthread_mutex_unlock(&loaded_lock);
    return err;
}

/* After fork(), in the child (internal.h, THE FORK RULE): the binaries stay
 * loaded until aclsim__binaries_finalize. */
void aclsim__binaries_forget_after_fork(void)
{
    pthread_mutex_init(&loaded_lock, NULL);
}
