/*
 * Kernel binaries. The "operator binary" is a shared object built from C
 * sources that define device variables and kernels: dlopen runs their
 * registration constructors, dlclose their unregistration destructors. Names
 * resolve with dlsym to an address, then through the same registries as
 * aclrtGetFuncBySymbol and the symbol functions: one lookup path for all.
 */
#include "internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

struct binary {
    void *dl;
    char *path;
    void *handle;
    struct binary *prev, *next;   /* loaded, under loaded_lock */
};

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
    dlclose(b->dl);   /* its destructors unregister its variables and kernels */
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

aclError aclrtBinaryLoadFromFile(const char *binPath, aclrtBinaryLoadOptions *options,
                                 aclrtBinHandle *binHandle)
{
    static const char api[] = "aclrtBinaryLoadFromFile";
    ACLSIM_REQUIRE_INIT(api);
    if (!binPath || !binHandle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !binPath ? "binPath" : "binHandle");
    if (options && options->numOpt && !options->options)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "options->options is NULL but options->numOpt is %zu",
                            options->numOpt);
    struct binary *b = aclsim__calloc(1, sizeof *b);
    char *path = aclsim__strdup(binPath);
    if (!b || !path) {
        free(b);
        free(path);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory loading \"%s\"", binPath);
    }
    /* A path without '/' would search the library path; a binary is a file. */
    char *local = NULL;
    if (!strchr(binPath, '/')) {
        if (!(local = aclsim__malloc(strlen(binPath) + 3))) {
            free(b);
            free(path);
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory loading \"%s\"", binPath);
        }
        strcat(strcpy(local, "./"), binPath);
    }
    unsigned long failures = aclsim__tls_registration_failures;
    b->dl = dlopen(local ? local : binPath, RTLD_NOW | RTLD_LOCAL);
    free(local);
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
        free(path);
        return aclsim__fail(code, api, "cannot register the kernels and variables of \"%s\": %s",
                            binPath, why);
    }
    if (!b->dl) {
        const char *why = dlerror();
        free(b);
        free(path);
        return aclsim__fail(ACL_ERROR_INVALID_FILE, api, "cannot load kernel binary \"%s\": %s",
                            binPath, why ? why : "unknown loader error");
    }
    b->path = path;
    void *h = aclsim__handle_new(ACLSIM_H_BINARY, b);
    if (!h) {
        dlclose(b->dl);
        free(b->path);
        free(b);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory loading \"%s\"", binPath);
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

/* After fork(), in the child (internal.h, THE FORK RULE): the binaries stay
 * loaded until aclsim__binaries_finalize. */
void aclsim__binaries_forget_after_fork(void)
{
    pthread_mutex_init(&loaded_lock, NULL);
}
