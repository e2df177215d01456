/*
 * Process snapshots (aclrtSnapShot*): lock the process against runtime calls
 * that change device state, back the devices' memory up on the host, restore
 * it, unlock. States, as CANN documents them:
 *
 *   RUNNING --Lock--> LOCKED --Backup--> BACKED_UP --Restore--> LOCKED
 *   LOCKED or BACKED_UP --Unlock--> RUNNING
 *
 * While the process is locked, calls that set or reset devices, allocate,
 * free, copy or set memory, create or destroy contexts, streams and events, or
 * queue tasks wait (aclsim__snapshot_check) until it is unlocked; aclFinalize
 * ends the wait too (the call then gets 100001). The thread that locked the
 * process, and host functions and kernels (which a backup may be waiting for),
 * get 507000 instead of waiting for themselves.
 *
 * A backup drains every open device, then copies every live allocation of its
 * memory (program allocations and device-variable instances) to the host; a
 * restore copies them back. Stage callbacks are called once per open device.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum state { RUNNING, LOCKED, BACKED_UP };
enum { NSTAGES = ACL_RT_SNAPSHOT_UNLOCK_POST + 1 };

atomic_bool aclsim__snapshot_locked;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t unlocked = PTHREAD_COND_INITIALIZER;
static enum state state;
static pthread_t owner;
static uint64_t locked_session;

struct saved { int32_t device; uintptr_t addr; size_t size; unsigned char *bytes; };
static struct saved *saved;
static size_t nsaved;

struct callback { aclrtSnapShotCallBack fn; void *args; };
static struct callback *callbacks[NSTAGES];
static size_t ncallbacks[NSTAGES];

aclError aclsim__snapshot_wait(const char *api)
{
    pthread_mutex_lock(&lock);
    aclError err = ACL_SUCCESS;
    if (state != RUNNING && (aclsim__tls_worker || pthread_equal(owner, pthread_self())))
        err = aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                           "the process is locked for a snapshot (aclrtSnapShotProcessLock) and "
                           "this %s would wait for the unlock forever",
                           aclsim__tls_worker ? "host function or kernel" : "thread, which locked it,");
    while (!err && state != RUNNING && atomic_load(&aclsim__rt.session) == locked_session &&
           aclsim__initialized())
        pthread_cond_wait(&unlocked, &lock);
    pthread_mutex_unlock(&lock);
    if (!err && !aclsim__initialized())
        err = aclsim__not_initialized(api);
    return err;
}

static void drop_backup(void)
{
    for (size_t i = 0; i < nsaved; i++)
        free(saved[i].bytes);
    free(saved);
    saved = NULL;
    nsaved = 0;
}

void aclsim__snapshot_finalize(void)
{
    pthread_mutex_lock(&lock);
    state = RUNNING;
    atomic_store(&aclsim__snapshot_locked, false);
    drop_backup();
    pthread_cond_broadcast(&unlocked);
    pthread_mutex_unlock(&lock);
}

/* Product support: A2, A3 and Ascend 950PR (not 950DT). */
static aclError check(const char *api, int pid, bool null_arg, const char *arg_name)
{
    ACLSIM_REQUIRE_INIT(api);
    if (pid != (int)getpid())
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "pid %d is not this process (%d): snapshots of other processes are "
                            "not supported", pid, (int)getpid());
    if (!null_arg)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is reserved and must be NULL", arg_name);
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(A2) | ACLSIM_FAMILIES(A3) |
                                              ACLSIM_FAMILIES(A5));
    if (!err && strcmp(aclsim__soc_current()->name, "Ascend950DT") == 0)
        err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api, "not supported on Ascend950DT");
    return err;
}

static const char *state_name(enum state s)
{
    return s == RUNNING ? "RUNNING" : s == LOCKED ? "LOCKED" : "BACKED_UP";
}

/* Calls the callbacks of stage once per open device; the first failure wins. */
static aclError run_stage(const char *api, aclrtSnapShotStage stage)
{
    pthread_mutex_lock(&lock);
    size_t n = ncallbacks[stage];
    struct callback *copy = n ? aclsim__malloc(n * sizeof *copy) : NULL;
    if (copy)
        memcpy(copy, callbacks[stage], n * sizeof *copy);
    pthread_mutex_unlock(&lock);
    if (n && !copy)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    aclError err = ACL_SUCCESS;
    for (uint32_t d = 0; d < aclsim__config()->visible_count && !err; d++) {
        if (!atomic_load(&aclsim__devices[d].open))
            continue;
        for (size_t i = 0; i < n && !err; i++) {
            uint32_t rc = copy[i].fn((int32_t)d, copy[i].args);
            if (rc)
                err = aclsim__fail(ACL_ERROR_SNAPSHOT_CALLBACK_FAILED, api,
                                   "the snapshot callback for stage %d returned %u on device %u",
                                   (int)stage, rc, d);
        }
    }
    free(copy);
    return err;
}

/* Moves from one of the states in from (bitmask) to next; code otherwise. */
static aclError transition(const char *api, unsigned from, enum state next, aclError code)
{
    pthread_mutex_lock(&lock);
    enum state now = state;
    bool ok = from & (1u << now);
    if (ok) {
        state = next;
        if (next == RUNNING) {
            atomic_store(&aclsim__snapshot_locked, false);
            pthread_cond_broadcast(&unlocked);
        } else if (now == RUNNING) {
            owner = pthread_self();
            locked_session = atomic_load(&aclsim__rt.session);
            atomic_store(&aclsim__snapshot_locked, true);
        }
    }
    pthread_mutex_unlock(&lock);
    if (!ok)
        return aclsim__fail(code, api, "the process is %s: this call needs it %s", state_name(now),
                            next == LOCKED && from == (1u << RUNNING) ? "RUNNING"
                            : next == BACKED_UP                       ? "LOCKED"
                            : next == LOCKED                          ? "BACKED_UP"
                                                                      : "LOCKED or BACKED_UP");
    return ACL_SUCCESS;
}

static bool in_state(unsigned states)
{
    pthread_mutex_lock(&lock);
    bool ok = states & (1u << state);
    pthread_mutex_unlock(&lock);
    return ok;
}

aclError aclrtSnapShotProcessLock(int pid, void *reserve)
{
    static const char api[] = "aclrtSnapShotProcessLock";
    aclError err = check(api, pid, !reserve, "reserve");
    if (!err && in_state(1u << RUNNING))
        err = run_stage(api, ACL_RT_SNAPSHOT_LOCK_PRE);
    return err ? err : transition(api, 1u << RUNNING, LOCKED, ACL_ERROR_SNAPSHOT_LOCK_FAILED);
}

aclError aclrtSnapShotProcessUnlock(int pid, void *reserve)
{
    static const char api[] = "aclrtSnapShotProcessUnlock";
    aclError err = check(api, pid, !reserve, "reserve");
    if (!err)
        err = transition(api, (1u << LOCKED) | (1u << BACKED_UP), RUNNING,
                         ACL_ERROR_SNAPSHOT_UNLOCK_FAILED);
    return err ? err : run_stage(api, ACL_RT_SNAPSHOT_UNLOCK_POST);
}

aclError aclrtSnapShotProcessBackup(int pid, aclrtSnapShotBackupArgs *args)
{
    static const char api[] = "aclrtSnapShotProcessBackup";
    aclError err = check(api, pid, !args, "args");
    if (err)
        return err;
    if (!in_state(1u << LOCKED))
        return transition(api, 1u << LOCKED, BACKED_UP, ACL_ERROR_SNAPSHOT_BACKUP_FAILED);
    if ((err = run_stage(api, ACL_RT_SNAPSHOT_BACKUP_PRE)))
        return err;
    /* Work queued before the lock finishes first, then memory is copied. */
    struct saved *list = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t d = 0; d < aclsim__config()->visible_count && !err; d++) {
        struct aclsim__device *dev = &aclsim__devices[d];
        if (!atomic_load(&dev->open) || (err = aclsim__device_synchronize(dev, api)))
            continue;
        pthread_rwlock_rdlock(&dev->heap.lock);
        for (size_t i = 0; i < dev->heap.nallocs && !err; i++) {
            const struct aclsim__alloc *a = &dev->heap.allocs[i];
            if (n == cap) {
                struct saved *bigger = aclsim__realloc(list, (cap = cap ? cap * 2 : 16) * sizeof *list);
                if (!bigger) {
                    err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory for the backup");
                    break;
                }
                list = bigger;
            }
            unsigned char *bytes = aclsim__malloc(a->size ? a->size : 1);
            if (!bytes) {
                err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory for the backup");
                break;
            }
            memcpy(bytes, (const void *)a->addr, a->size);
            list[n++] = (struct saved){(int32_t)d, a->addr, a->size, bytes};
        }
        pthread_rwlock_unlock(&dev->heap.lock);
    }
    pthread_mutex_lock(&lock);
    if (!err) {   /* the latest backup replaces the previous one */
        drop_backup();
        saved = list;
        nsaved = n;
        list = NULL;
        n = 0;
    }
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < n; i++)
        free(list[i].bytes);
    free(list);
    if (!err)
        err = transition(api, 1u << LOCKED, BACKED_UP, ACL_ERROR_SNAPSHOT_BACKUP_FAILED);
    return err ? err : run_stage(api, ACL_RT_SNAPSHOT_BACKUP_POST);
}

aclError aclrtSnapShotProcessRestore(int pid, aclrtSnapShotRestoreArgs *args)
{
    static const char api[] = "aclrtSnapShotProcessRestore";
    aclError err = check(api, pid, !args, "args");
    if (err)
        return err;
    if (!in_state(1u << BACKED_UP))
        return transition(api, 1u << BACKED_UP, LOCKED, ACL_ERROR_SNAPSHOT_RESTORE_FAILED);
    if ((err = run_stage(api, ACL_RT_SNAPSHOT_RESTORE_PRE)))
        return err;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nsaved && !err; i++) {
        struct aclsim__device *dev = &aclsim__devices[saved[i].device];
        struct aclsim__alloc a;
        /* The process stayed locked since the backup: the allocation is live. */
        if (!atomic_load(&dev->open) || !aclsim__heap_find(&dev->heap, (void *)saved[i].addr, &a) ||
            a.addr != saved[i].addr || a.size != saved[i].size)
            err = aclsim__fail(ACL_ERROR_RT_DEVICE_MEM_ERROR, api,
                               "device %d memory at 0x%lx (%zu bytes) is gone since the backup",
                               saved[i].device, (unsigned long)saved[i].addr, saved[i].size);
        else
            memcpy((void *)saved[i].addr, saved[i].bytes, saved[i].size);
    }
    pthread_mutex_unlock(&lock);
    if (!err)
        err = transition(api, 1u << BACKED_UP, LOCKED, ACL_ERROR_SNAPSHOT_RESTORE_FAILED);
    return err ? err : run_stage(api, ACL_RT_SNAPSHOT_RESTORE_POST);
}

aclError aclrtSnapShotCallbackRegister(aclrtSnapShotStage stage, aclrtSnapShotCallBack callback,
                                       void *args)
{
    static const char api[] = "aclrtSnapShotCallbackRegister";
    if (!callback)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "callback is NULL");
    if ((unsigned)stage >= NSTAGES)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stage %d is not an aclrtSnapShotStage",
                            (int)stage);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ncallbacks[stage] && !err; i++)
        if (callbacks[stage][i].fn == callback)
            err = aclsim__fail(ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED, api,
                               "this callback is registered for stage %d already", (int)stage);
    if (!err) {
        struct callback *bigger = aclsim__realloc(callbacks[stage],
                                                  (ncallbacks[stage] + 1) * sizeof *bigger);
        if (!bigger) {
            err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        } else {
            callbacks[stage] = bigger;
            callbacks[stage][ncallbacks[stage]++] = (struct callback){callback, args};
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
}

aclError aclrtSnapShotCallbackUnregister(aclrtSnapShotStage stage, aclrtSnapShotCallBack callback)
{
    static const char api[] = "aclrtSnapShotCallbackUnregister";
    if (!callback)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "callback is NULL");
    if ((unsigned)stage >= NSTAGES)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stage %d is not an aclrtSnapShotStage",
                            (int)stage);
    bool found = false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ncallbacks[stage] && !found; i++)
        if (callbacks[stage][i].fn == callback) {
            memmove(&callbacks[stage][i], &callbacks[stage][i + 1],
                    (ncallbacks[stage] - i - 1) * sizeof callbacks[stage][0]);
            ncallbacks[stage]--;
            found = true;
        }
    pthread_mutex_unlock(&lock);
    return found ? ACL_SUCCESS
                 : aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "this callback is not registered for stage %d", (int)stage);
}

/* After fork(), in the child (internal.h, THE FORK RULE): new
 * synchronisation; the inherited state goes with aclsim__snapshot_finalize. */
void aclsim__snapshot_forget_after_fork(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&unlocked, NULL);
}
