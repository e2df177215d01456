/*
 * aclInit / aclFinalize: the runtime's sessions. The configuration they read
 * is checked in config.c.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct aclsim__config no_config;   /* before the first aclInit */
struct aclsim__runtime aclsim__rt = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                     .changed = PTHREAD_COND_INITIALIZER,
                                     .config = &no_config};
static struct config_node { struct config_node *next; struct aclsim__config config; } *configs;

aclError aclInit(const char *configPath)
{
    pthread_mutex_lock(&aclsim__rt.lock);
    if (aclsim__initialized()) {
        pthread_mutex_unlock(&aclsim__rt.lock);
        return aclsim__fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit",
                            "the runtime is already initialized (aclFinalize first)");
    }
    struct aclsim__config config;
    bool per_process = false;
    aclError err = aclsim__configure(configPath, &config, &per_process);
    if (err == ACL_SUCCESS) {
        /* Published as a new immutable object: threads that still read the
         * previous one (a call racing a re-init) keep a valid copy. Old ones
         * stay on a list until exit; there is one per aclInit. */
        struct config_node *node = aclsim__malloc(sizeof *node);
        if (!node) {
            pthread_mutex_unlock(&aclsim__rt.lock);
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, "aclInit", "out of memory");
        }
        node->config = config;
        node->next = configs;
        configs = node;
        atomic_store_explicit(&aclsim__rt.config, &node->config, memory_order_release);
        atomic_store(&aclsim__rt.err_msg_per_process, per_process);
        for (uint32_t i = 0; i < config.visible_count; i++) {
            if (aclsim__devices[i].id != (int32_t)i)   /* slot = logical id, set once */
                aclsim__devices[i].id = (int32_t)i;
            if (aclsim__devices[i].physical_id != config.visible[i])
                aclsim__devices[i].physical_id = config.visible[i];
        }
        atomic_store_explicit(&aclsim__rt.initialized, true, memory_order_release);
        aclsim__log(ACLSIM_LOG_INFO, "aclInit: %u device(s) visible of %u, SoC %s, %zu bytes each",
                    config.visible_count, config.physical_devices, config.soc_name,
                    config.device_memory);
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    return err;
}

aclError aclFinalize(void)
{
    pthread_mutex_lock(&aclsim__rt.lock);
    if (!aclsim__initialized()) {
        pthread_mutex_unlock(&aclsim__rt.lock);
        return aclsim__fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize",
                            "the runtime is not initialized (already finalized, or aclInit "
                            "was never called)");
    }
    if (aclsim__tls_worker) {
        pthread_mutex_unlock(&aclsim__rt.lock);
        return aclsim__refuse_self_wait("aclFinalize", "a device");
    }
    /* Live streams lose work not yet started; running tasks finish first.
     * Devices drain with rt.lock released: finalizing keeps any of them
     * (one already passed, too) from being opened again meanwhile. */
    aclsim__rt.finalizing = true;
    for (uint32_t i = 0; i < aclsim__config()->visible_count; i++) {
        struct aclsim__device *dev = &aclsim__devices[i];
        while (dev->closing)   /* a reset in another thread: let it finish */
            pthread_cond_wait(&aclsim__rt.changed, &aclsim__rt.lock);
        if (atomic_load(&dev->open))
            aclsim__device_release((int32_t)i, true, "aclFinalize");
        aclsim__heap_destroy(&dev->heap);
    }
    /* Lock order is binary lock -> rt.lock (aclrtBinaryGetGlobal may open the
     * default device): unload without rt.lock; finalizing still holds. */
    pthread_mutex_unlock(&aclsim__rt.lock);
    aclsim__binaries_finalize();
    pthread_mutex_lock(&aclsim__rt.lock);
    aclsim__events_finalize();
    aclsim__memory_finalize();
    atomic_store_explicit(&aclsim__rt.initialized, false, memory_order_release);
    aclsim__rt.finalizing = false;
    pthread_mutex_unlock(&aclsim__rt.lock);
    return ACL_SUCCESS;
}

const char *aclrtGetSocName(void)
{
    return aclsim__initialized() ? aclsim__config()->soc_name : NULL;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    ACLSIM_REQUIRE_INIT("aclrtGetRunMode");
    if (!runMode)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode", "runMode is NULL");
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{
    if (!majorVersion || !minorVersion || !patchVersion)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion",
                            "%s is NULL", !majorVersion ? "majorVersion"
                                          : !minorVersion ? "minorVersion" : "patchVersion");
    *majorVersion = 1;
    *minorVersion = 17;
    *patchVersion = 0;
    return ACL_SUCCESS;
}
