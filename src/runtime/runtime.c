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

/* The message of every call refused for want of a session (ACLSIM_REQUIRE_INIT). */
aclError aclsim__not_initialized(const char *api)
{
    if (atomic_load_explicit(&aclsim__rt.forked, memory_order_acquire))
        return aclsim__fail(ACL_ERROR_UNINITIALIZE, api, ACLSIM_FORKED_MESSAGE);
    return aclsim__fail(ACL_ERROR_UNINITIALIZE, api,
                        "the runtime is not initialized (call aclInit first)");
}

/* Another thread's aclFinalize is tearing a session down: a call that would
 * start or end one waits for it (bounded by the drain of running work). A
 * host function or kernel cannot wait: the teardown may be waiting for it. */
static aclError wait_for_finalize(const char *api)
{
    while (aclsim__rt.finalizing) {
        if (aclsim__tls_worker)
            return aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                                "called from a host function or kernel while aclFinalize is in "
                                "progress: it would wait for itself (do this from a host thread)");
        pthread_cond_wait(&aclsim__rt.changed, &aclsim__rt.lock);
    }
    return ACL_SUCCESS;
}

static aclError finalize(bool run_callbacks);

aclError aclInit(const char *configPath)
{
    pthread_mutex_lock(&aclsim__rt.lock);
    aclError err = wait_for_finalize("aclInit");
    if (err) {
        pthread_mutex_unlock(&aclsim__rt.lock);
        return err;
    }
    if (atomic_load(&aclsim__rt.forked)) {
        pthread_mutex_unlock(&aclsim__rt.lock);
        return aclsim__fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit", ACLSIM_FORKED_MESSAGE);
    }
    if (aclsim__initialized()) {
        aclsim__rt.init_refs++;   /* CANN counts repeats for aclFinalizeReference */
        pthread_mutex_unlock(&aclsim__rt.lock);
        return aclsim__fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit",
                            "the runtime is already initialized (aclFinalize first)");
    }
    struct aclsim__config config;
    bool per_process = false;
    err = aclsim__configure(configPath, &config, &per_process);
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
        atomic_fetch_add(&aclsim__rt.session, 1);
        aclsim__rt.init_refs = 1;
        aclsim__memory_open();
        aclsim__trace_configure(&node->config);   /* ACLSIM_TRACE, ACLSIM_PROFILE */
        aclsim__check_start(config.check, config.check_stop);   /* checker mode (check.c) */
        atomic_store_explicit(&aclsim__rt.initialized, true, memory_order_release);
        aclsim__log(ACLSIM_LOG_INFO, "aclInit: %u device(s) visible of %u, SoC %s, %zu bytes each",
                    config.visible_count, config.physical_devices, config.soc_name,
                    config.device_memory);
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    /* The init callbacks run on the initialized runtime, without its lock;
     * one that fails undoes the initialization. */
    int type = 0;
    if (!err && (err = aclsim__init_callbacks_run(configPath, &type))) {
        finalize(false);
        return aclsim__fail(err, "aclInit",
                            "the init callback of type %d returned %d: the runtime is not "
                            "initialized", type, err);
    }
    return err;
}

static aclError already_finalized(void)
{
    pthread_mutex_unlock(&aclsim__rt.lock);
    return aclsim__fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize",
                        "the runtime is not initialized (already finalized, by this or another "
                        "thread, or aclInit was never called)");
}

/* aclFinalize in a fork() child: the parent's session is discarded without
 * its threads (which do not exist here). Caller holds rt.lock. */
static void finalize_forked(void)
{
    aclsim__check_forget_after_fork();   /* first: heaps record what they free */
    aclsim__streams_forget_after_fork();
    aclsim__contexts_forget_after_fork();
    aclsim__devices_forget_after_fork();
    aclsim__modelri_forget_after_fork();   /* before the events its tasks reference */
    aclsim__events_forget_after_fork();
    aclsim__notifies_forget_after_fork();
    aclsim__waits_forget_after_fork();
    aclsim__binaries_forget_after_fork();
    aclsim__kargs_forget_after_fork();
    aclsim__memory_forget_after_fork();
    aclsim__ranges_forget_after_fork();
    aclsim__mempools_forget_after_fork();
    aclsim__ranges_finalize();
    aclsim__memory_finalize();
    aclsim__check_finalize();
    aclsim__devctl_finalize();
    aclsim__failures_finalize();
    aclsim__snapshot_finalize();
    aclsim__handles_forget_after_fork(true);
    aclsim__rt.init_refs = 0;
    atomic_store(&aclsim__rt.forked, false);
    aclsim__log(ACLSIM_LOG_INFO, "aclFinalize: the session inherited over fork() is discarded");
}

aclError aclFinalize(void)
{
    return finalize(true);
}

/* run_callbacks false: undoing an aclInit whose init callback failed. */
static aclError finalize(bool run_callbacks)
{
    /* The session this call is for: the one live when it was made. A later
     * aclInit's session is never torn down by it. */
    uint64_t session = atomic_load(&aclsim__rt.session);
    pthread_mutex_lock(&aclsim__rt.lock);
    if (atomic_load(&aclsim__rt.forked)) {
        finalize_forked();
        pthread_mutex_unlock(&aclsim__rt.lock);
        aclsim__binaries_finalize();
        aclsim__kargs_finalize();
        return ACL_SUCCESS;
    }
    if (!aclsim__initialized())
        return already_finalized();
    if (aclsim__tls_worker) {
        pthread_mutex_unlock(&aclsim__rt.lock);
        return aclsim__refuse_self_wait("aclFinalize", "a device");
    }
    /* Concurrent calls serialise: exactly one tears the session down, the
     * others wait for it and get 100037 (or, if a finalize callback made it
     * fail and the session is still there, try again). */
    wait_for_finalize("aclFinalize");
    if (!aclsim__initialized() ||
        atomic_load(&aclsim__rt.session) != session)   /* re-initialized since the call */
        return already_finalized();
    /* Live streams lose work not yet started; running tasks finish first.
     * Devices drain with rt.lock released: finalizing keeps any of them
     * (one already passed, too) from being opened again meanwhile, and
     * keeps aclInit and other aclFinalize calls waiting. */
    aclsim__rt.finalizing = true;
    /* The finalize callbacks first, without the lock (they may call the
     * runtime); one that fails leaves the session as it was. */
    pthread_mutex_unlock(&aclsim__rt.lock);
    aclError cb_err = run_callbacks ? aclsim__finalize_callbacks_run() : ACL_SUCCESS;
    pthread_mutex_lock(&aclsim__rt.lock);
    if (cb_err) {
        aclsim__rt.finalizing = false;
        pthread_cond_broadcast(&aclsim__rt.changed);
        pthread_mutex_unlock(&aclsim__rt.lock);
        return cb_err;
    }
    /* Threads blocked on queues and channels (host functions among them,
     * which the devices' drains wait for) are woken first. */
    aclsim__tdt_finalize();
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
    aclsim__kargs_finalize();
    pthread_mutex_lock(&aclsim__rt.lock);
    aclsim__modelri_finalize();   /* before the events its tasks hold */
    aclsim__events_finalize();
    aclsim__callbacks_finalize();
    aclsim__notifies_finalize();
    aclsim__tdt_finalize();   /* again: what host functions made while the devices drained */
    aclsim__waits_finalize();
    aclsim__ipc_finalize();   /* before ranges: imports are reservations */
    aclsim__ranges_finalize();
    aclsim__memory_finalize();
    aclsim__check_finalize();
    aclsim__failures_finalize();
    aclsim__devctl_finalize();
    atomic_store_explicit(&aclsim__rt.initialized, false, memory_order_release);
    aclsim__rt.init_refs = 0;
    aclsim__snapshot_finalize();   /* wakes calls waiting for an unlock */
    aclsim__prof_finalize();       /* aclprof* state of the session */
    aclsim__dump_finalize();       /* forgets the dump config and cached task info */
    aclsim__trace_finalize();      /* writes ACLSIM_TRACE's file: the devices have drained */
    aclsim__rt.finalizing = false;
    pthread_cond_broadcast(&aclsim__rt.changed);
    pthread_mutex_unlock(&aclsim__rt.lock);
    return ACL_SUCCESS;
}

/* CANN: every aclInit (repeats included) takes a reference; the last
 * aclFinalizeReference finalizes, while aclFinalize always does. */
aclError aclFinalizeReference(uint64_t *refCount)
{
    pthread_mutex_lock(&aclsim__rt.lock);
    if (atomic_load(&aclsim__rt.forked)) {   /* a fork() child discards the parent's session */
        pthread_mutex_unlock(&aclsim__rt.lock);
        if (refCount)
            *refCount = 0;
        return aclFinalize();
    }
    uint64_t refs = aclsim__initialized() ? aclsim__rt.init_refs : 0;
    if (refs > 1) {
        refs = --aclsim__rt.init_refs;
        pthread_mutex_unlock(&aclsim__rt.lock);
        if (refCount)
            *refCount = refs;
        return ACL_SUCCESS;
    }
    pthread_mutex_unlock(&aclsim__rt.lock);
    if (refCount)
        *refCount = refs;
    if (refs < 1)
        return aclsim__fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference",
                            "the runtime is not initialized (already finalized, or aclInit was "
                            "never called)");
    aclError err = aclFinalize();
    if (!err && refCount)
        *refCount = 0;
    return err;
}

/* ---- fork() ------------------------------------------------------------------ */

/* The parent's locks that guard what a child keeps (the session state, the
 * variable registry) are taken around fork(), so that the child finds them
 * consistent; their holders never wait for anything unbounded meanwhile. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&aclsim__rt.lock);
    pthread_mutex_lock(&aclsim__registry_lock);
    aclsim__tdt_fork_prepare();
}

static void atfork_parent(void)
{
    aclsim__tdt_fork_parent();
    pthread_mutex_unlock(&aclsim__registry_lock);
    pthread_mutex_unlock(&aclsim__rt.lock);
}

/* The child has one thread, the one that called fork(): every lock is made
 * new (whoever held one in the parent does not exist here), and a session
 * the parent had (or was finalizing) becomes "forked": refused until the
 * child calls aclFinalize (finalize_forked) and aclInit again. */
static void atfork_child(void)
{
    pthread_mutex_init(&aclsim__rt.lock, NULL);
    pthread_cond_init(&aclsim__rt.changed, NULL);
    aclsim__symbols_forget_after_fork();
    aclsim__kernels_forget_after_fork();
    aclsim__fibers_forget_after_fork();
    aclsim__handles_forget_after_fork(false);
    aclsim__errors_forget_after_fork();
    aclsim__callbacks_forget_after_fork();
    aclsim__failures_forget_after_fork();
    aclsim__devctl_forget_after_fork();
    aclsim__initcb_forget_after_fork();
    aclsim__snapshot_forget_after_fork();
    aclsim__ipc_forget_after_fork();
    aclsim__tdt_forget_after_fork();
    aclsim__trace_forget_after_fork();
    aclsim__tls_worker = false;   /* fork() from a host function or kernel */
    aclsim__tls_device = NULL;
    aclsim__tls_stream = NULL;
    if (aclsim__initialized() || aclsim__rt.finalizing) {
        atomic_store(&aclsim__rt.forked, true);
        atomic_store_explicit(&aclsim__rt.initialized, false, memory_order_release);
        aclsim__rt.finalizing = false;
    }
}

__attribute__((constructor)) static void install_atfork(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
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
