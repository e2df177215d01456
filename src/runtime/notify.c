/*
 * Notifies and counting notifies: synchronization objects that tasks on
 * streams set and wait for.
 *
 * A notify is a flag: aclrtRecordNotify queues a task that sets it,
 * aclrtWaitAndResetNotify a task that waits until it is set and clears it
 * (so one record releases one wait), aclrtNotifyBatchReset clears flags from
 * the host. A counting notify (CANN's CntNotify) holds a 32-bit count that
 * records set, add to, OR or AND, and that waits compare (less, equal,
 * bigger, bigger-or-equal, all mask bits set), optionally clearing it when
 * they pass. Waits that cannot pass park their stream (wait.c); a record
 * releases, in queue order, the parked waits that now pass.
 */
#include "internal.h"

#include <stdlib.h>

#define RESET_MODE 0xFFu        /* SIGNAL mode of aclrtCntNotifyReset */
#define CLEAR_BIT 0x100u        /* WAIT mode bit: isClear */

struct aclsim__notify {
    void *handle;
    pthread_mutex_t lock;
    struct aclsim__waitq waiters;   /* streams parked on a wait */
    uint32_t value;                 /* notify: 0 or 1; counting: the count (under lock) */
    bool counting;
    int32_t device;
    uint32_t id;
    atomic_uint refs;               /* handle + queued tasks */
    struct aclsim__notify *prev_live, *next_live;   /* under live_lock */
    /* IPC notifies (docs/ipc.md): once is_ipc is set (release; ipc and
     * ipc_owner are written before it, under lock, and never change), the
     * flag lives in the shared slot: records set it there, the creator's
     * waits poll and clear it. ipc_owner: exported by this process. */
    atomic_bool is_ipc;
    bool ipc_owner;
    struct aclsim__ipc_ref ipc;
};

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__notify *live_notifies;
static struct aclsim__idpool notify_ids[ACLSIM_MAX_DEVICES] = {
    [0 ... ACLSIM_MAX_DEVICES - 1] = ACLSIM_IDPOOL_INIT};

/* Notifies a device holds at most (CANN's support tables). */
static uint32_t notify_limit(void)
{
    switch (aclsim__soc_current()->family) {
    case ACLSIM_FAMILY_A5: return 65535;
    case ACLSIM_FAMILY_A3:
    case ACLSIM_FAMILY_A2: return 8192;
    case ACLSIM_FAMILY_EDGE: return 2048;
    default: return 1024;
    }
}

static void notify_unref(struct aclsim__notify *n)
{
    if (atomic_fetch_sub(&n->refs, 1) == 1) {
        if (n->ipc_owner)
            aclsim__ipc_close(&n->ipc);   /* its key opens nothing from now on */
        aclsim__id_give(&notify_ids[n->device], n->id);
        pthread_mutex_destroy(&n->lock);
        free(n);
    }
}

static void live_unlink(struct aclsim__notify *n)
{
    if (n->prev_live)
        n->prev_live->next_live = n->next_live;
    else
        live_notifies = n->next_live;
    if (n->next_live)
        n->next_live->prev_live = n->prev_live;
}

/* ---- tasks (struct aclsim__wait_ops) ---------------------------------------- */

/* Whether wait task t passes now; if so it takes what it consumes. Caller
 * holds the notify's lock. */
static bool wait_passes(struct aclsim__task *t)
{
    struct aclsim__notify *n = t->u.sync.obj;
    if (!n->counting) {
        if (!n->value)
            return false;
        n->value = 0;   /* wait and reset */
        return true;
    }
    uint32_t v = n->value, want = (uint32_t)t->u.sync.value;
    bool ok;
    switch (t->u.sync.mode & 0xFFu) {
    case ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE: ok = v < want; break;
    case ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE: ok = v == want; break;
    case ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE: ok = v > want; break;
    case ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE: ok = v >= want; break;
    default: ok = (v & want) == want; break;   /* EQUAL_WITH_BITMASK */
    }
    if (ok && (t->u.sync.mode & CLEAR_BIT))
        n->value = 0;
    return ok;
}

static bool wait_ready(struct aclsim__task *t)
{
    struct aclsim__notify *n = t->u.sync.obj;
    pthread_mutex_lock(&n->lock);
    bool ok = wait_passes(t);
    pthread_mutex_unlock(&n->lock);
    return ok;
}

static bool wait_park(struct aclsim__task *t, struct aclsim__stream *s)
{
    struct aclsim__notify *n = t->u.sync.obj;
    pthread_mutex_lock(&n->lock);
    bool park = !wait_passes(t);
    if (park) {
        aclsim__waitq_push(&n->waiters, s);
        s->state = ACLSIM_STREAM_PARKED;
    }
    pthread_mutex_unlock(&n->lock);
    return park;
}

static bool wait_unpark(struct aclsim__task *t, struct aclsim__stream *s)
{
    struct aclsim__notify *n = t->u.sync.obj;
    pthread_mutex_lock(&n->lock);
    bool found = aclsim__waitq_remove(&n->waiters, s);
    pthread_mutex_unlock(&n->lock);
    return found;
}

/* Changes the value (under lock) and wakes the waits that now pass. */
static void update(struct aclsim__notify *n, uint32_t mode, uint32_t value)
{
    struct aclsim__stream *wake = NULL;
    pthread_mutex_lock(&n->lock);
    if (!n->counting || mode == ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE || mode == RESET_MODE)
        n->value = mode == RESET_MODE ? 0 : value;
    else if (mode == ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE)
        n->value += value;   /* wraps, as a 32-bit register does */
    else if (mode == ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE)
        n->value |= value;
    else
        n->value &= value;   /* BIT_AND */
    aclsim__waitq_release(&n->waiters, wait_passes, &wake);
    pthread_mutex_unlock(&n->lock);
    aclsim__wake(wake);
}

static void record_signal(struct aclsim__task *t, bool discarded)
{
    if (!discarded)
        update(t->u.sync.obj, t->u.sync.mode, (uint32_t)t->u.sync.value);
}

static void release(struct aclsim__task *t)
{
    notify_unref(t->u.sync.obj);
}

static void retain(struct aclsim__task *t)
{
    atomic_fetch_add(&((struct aclsim__notify *)t->u.sync.obj)->refs, 1);
}

static const struct aclsim__wait_ops notify_wait_ops = {
    .what = "a notify", .ready = wait_ready, .park = wait_park, .unpark = wait_unpark,
    .release = release, .retain = retain};
static const struct aclsim__wait_ops cnt_wait_ops = {
    .what = "a counting notify", .ready = wait_ready, .park = wait_park, .unpark = wait_unpark,
    .release = release, .retain = retain};
static const struct aclsim__wait_ops record_ops = {
    .what = "a notify", .signal = record_signal, .release = release, .retain = retain};

/* IPC notifies: the flag is in the shared slot; another process's record
 * cannot wake this one's streams, so waits are polled by the watcher. */
static void ipc_record_signal(struct aclsim__task *t, bool discarded)
{
    struct aclsim__notify *n = t->u.sync.obj;
    if (!discarded)
        aclsim__ipc_notify_set(&n->ipc, 1);
}

static bool ipc_wait_take(struct aclsim__task *t)
{
    struct aclsim__notify *n = t->u.sync.obj;
    return aclsim__ipc_notify_take(&n->ipc);
}

static bool ipc_wait_park(struct aclsim__task *t, struct aclsim__stream *s)
{
    if (ipc_wait_take(t))
        return false;
    s->state = ACLSIM_STREAM_PARKED;   /* only the watcher's list holds it */
    return true;
}

static const struct aclsim__wait_ops ipc_wait_ops = {
    .what = "an IPC notify", .ready = ipc_wait_take, .park = ipc_wait_park,
    .poll = ipc_wait_take, .release = release};
static const struct aclsim__wait_ops ipc_record_ops = {
    .what = "an IPC notify", .signal = ipc_record_signal, .release = release};

/* ---- shared steps ------------------------------------------------------------- */

/* init, NULL (100000), SoC (207000): the checks every call starts with. */
static aclError first_checks(const void *arg, const char *name, unsigned socs, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!arg)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
    return aclsim__soc_check(api, socs);
}

#define NOTIFY_SOCS ACLSIM_ALL_BUT_IPV
#define CNT_SOCS ACLSIM_FAMILIES(A5)

/* Creating and destroying wait while the process is locked for a snapshot. */
static aclError lifetime_checks(const void *arg, const char *name, unsigned socs, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__snapshot_check(api);
    return err ? err : first_checks(arg, name, socs, api);
}

/* The notify behind a handle, referenced (107017 if not live). */
static struct aclsim__notify *notify_of(const void *handle, bool counting, const char *api,
                                        aclError *err)
{
    pthread_mutex_lock(&live_lock);
    struct aclsim__notify *n = aclsim__handle_get(handle, ACLSIM_H_NOTIFY);
    if (n && n->counting != counting)   /* one handle kind for both */
        n = NULL;
    if (n)
        atomic_fetch_add(&n->refs, 1);
    pthread_mutex_unlock(&live_lock);
    if (!n)
        *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "%p is not a live %s (destroyed, or never created)", handle,
                            counting ? "counting notify" : "notify");
    return n;
}

static aclError create(void **out, bool counting, const char *api)
{
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    struct aclsim__notify *n = aclsim__calloc(1, sizeof *n);
    if (!n)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating a notify");
    pthread_mutex_init(&n->lock, NULL);
    atomic_init(&n->refs, 1);
    n->counting = counting;
    n->device = aclsim__context_device(ctx)->id;
    if (!aclsim__id_take(&notify_ids[n->device], notify_limit(), &n->id)) {
        pthread_mutex_destroy(&n->lock);
        free(n);
        return aclsim__fail(ACL_ERROR_RT_NO_NOTIFY_RESOURCE, api,
                            "device %d has no notify left (%u in use)", aclsim__context_device(ctx)->id,
                            aclsim__id_used(&notify_ids[aclsim__context_device(ctx)->id]));
    }
    n->handle = aclsim__handle_new(ACLSIM_H_NOTIFY, n);
    if (!n->handle) {
        notify_unref(n);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating a notify");
    }
    pthread_mutex_lock(&live_lock);
    n->next_live = live_notifies;
    if (live_notifies)
        live_notifies->prev_live = n;
    live_notifies = n;
    pthread_mutex_unlock(&live_lock);
    *out = n->handle;
    return ACL_SUCCESS;
}

static aclError destroy(void *handle, bool counting, const char *api)
{
    aclError err = ACL_SUCCESS;
    struct aclsim__notify *n = notify_of(handle, counting, api, &err);
    if (!n)
        return err;
    /* Queued records and waits keep their reference; they still run. */
    pthread_mutex_lock(&live_lock);
    bool live = aclsim__handle_free(handle);   /* false: a racing destroy won */
    if (live)
        live_unlink(n);
    pthread_mutex_unlock(&live_lock);
    notify_unref(n);
    if (!live)
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "%p is not a live notify (destroyed, or never created)", handle);
    notify_unref(n);   /* the handle's */
    return ACL_SUCCESS;
}

void aclsim__notifies_finalize(void)
{
    pthread_mutex_lock(&live_lock);
    while (live_notifies) {
        struct aclsim__notify *n = live_notifies;
        live_unlink(n);
        aclsim__handle_free(n->handle);
        pthread_mutex_unlock(&live_lock);
        notify_unref(n);
        pthread_mutex_lock(&live_lock);
    }
    pthread_mutex_unlock(&live_lock);
}

/* Queues task t (ops, value, mode, timeout filled in) for handle on stream. */
static aclError queue(void *handle, bool counting, aclrtStream stream, struct aclsim__task t,
                      const char *api)
{
    aclError err = ACL_SUCCESS;
    struct aclsim__notify *n = notify_of(handle, counting, api, &err);
    if (!n)
        return err;
    struct aclsim__sref s;
    t.u.sync.obj = n;   /* the task takes our reference */
    if (atomic_load_explicit(&n->is_ipc, memory_order_acquire)) {
        if (t.u.sync.ops == &notify_wait_ops && !n->ipc_owner) {
            notify_unref(n);
            return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                                "notify %p was imported from another process "
                                "(aclrtNotifyImportByKey): only the process that created it "
                                "may wait for it", handle);
        }
        t.u.sync.ops = t.u.sync.ops == &notify_wait_ops ? &ipc_wait_ops : &ipc_record_ops;
    }
    if ((err = aclsim__stream_resolve(stream, api, NULL, &s)) ||
        (err = aclsim__submit(s, &t, api, NULL)))
        notify_unref(n);
    return err;
}

static aclError get_id(void *handle, bool counting, uint32_t *id, const char *api)
{
    aclError err = ACL_SUCCESS;
    struct aclsim__notify *n = notify_of(handle, counting, api, &err);
    if (!n)
        return err;
    *id = n->id;
    notify_unref(n);
    return ACL_SUCCESS;
}

/* ---- notifies ------------------------------------------------------------------ */

aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag)
{
    static const char api[] = "aclrtCreateNotify";
    aclError err = lifetime_checks(notify, "notify", NOTIFY_SOCS, api);
    if (err)
        return err;
    if (flag != ACL_NOTIFY_DEFAULT && flag != ACL_NOTIFY_DEVICE_USE_ONLY)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flag %#llx is invalid: ACL_NOTIFY_DEFAULT or "
                            "ACL_NOTIFY_DEVICE_USE_ONLY", (unsigned long long)flag);
    return create(notify, false, api);
}

aclError aclrtDestroyNotify(aclrtNotify notify)
{
    static const char api[] = "aclrtDestroyNotify";
    aclError err = lifetime_checks(notify, "notify", NOTIFY_SOCS, api);
    return err ? err : destroy(notify, false, api);
}

aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream)
{
    static const char api[] = "aclrtRecordNotify";
    aclError err = first_checks(notify, "notify", NOTIFY_SOCS, api);
    struct aclsim__task t = {.kind = ACLSIM_TASK_SIGNAL, .u.sync = {.ops = &record_ops, .value = 1}};
    return err ? err : queue(notify, false, stream, t, api);
}

aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout)
{
    static const char api[] = "aclrtWaitAndResetNotify";
    aclError err = first_checks(notify, "notify", NOTIFY_SOCS, api);
    struct aclsim__task t = {.kind = ACLSIM_TASK_WAIT,
                             .u.sync = {.ops = &notify_wait_ops, .timeout_s = timeout}};
    return err ? err : queue(notify, false, stream, t, api);
}

aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t *notifyId)
{
    static const char api[] = "aclrtGetNotifyId";
    ACLSIM_REQUIRE_INIT(api);
    if (notify && !notifyId)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "notifyId is NULL");
    aclError err = first_checks(notify, "notify", NOTIFY_SOCS, api);
    return err ? err : get_id(notify, false, notifyId, api);
}

aclError aclrtNotifyBatchReset(aclrtNotify *notifies, size_t num)
{
    static const char api[] = "aclrtNotifyBatchReset";
    aclError err = first_checks(notifies, "notifies", ACLSIM_A5_A3_A2, api);
    if (err)
        return err;
    if (num == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "num is 0");
    /* All handles are checked before any notify changes. */
    struct aclsim__notify **list = aclsim__calloc(num, sizeof *list);
    if (!list)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    size_t got = 0;
    for (; got < num; got++) {
        if (!notifies[got]) {
            err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "notifies[%zu] is NULL", got);
            break;
        }
        if (!(list[got] = notify_of(notifies[got], false, api, &err)))
            break;
    }
    for (size_t i = 0; i < got; i++) {
        if (!err) {
            pthread_mutex_lock(&list[i]->lock);
            list[i]->value = 0;
            if (atomic_load(&list[i]->is_ipc))
                aclsim__ipc_notify_set(&list[i]->ipc, 0);
            pthread_mutex_unlock(&list[i]->lock);
        }
        notify_unref(list[i]);
    }
    free(list);
    return err;
}

/* ---- IPC notifies (docs/ipc.md) ------------------------------------------------------ */

#define IPC_NOTIFY_SOCS (ACLSIM_A5_A3_A2 | ACLSIM_FAMILIES(INFERENCE) | ACLSIM_FAMILIES(TRAINING))

aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key, size_t len, uint64_t flags)
{
    static const char api[] = "aclrtNotifyGetExportKey";
    ACLSIM_REQUIRE_INIT(api);
    if (!notify || !key)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !notify ? "notify" : "key");
    if (len == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "len is 0");
    aclError err = aclsim__soc_check(api, IPC_NOTIFY_SOCS);
    if (err)
        return err;
    if (flags != ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT &&
        flags != ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flags %#llx is invalid: ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT (0) or "
                            "ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION (2)",
                            (unsigned long long)flags);
    if (len < ACLSIM_IPC_KEY_LEN)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "len %zu is too short: a key takes %d bytes (at least 65)", len,
                            ACLSIM_IPC_KEY_LEN);
    struct aclsim__notify *n = notify_of(notify, false, api, &err);
    if (!n)
        return err;
    bool no_check = flags == ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION;
    pthread_mutex_lock(&n->lock);
    if (atomic_load(&n->is_ipc) && !n->ipc_owner) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "notify %p was imported from another process: only its creator "
                           "exports it", notify);
    } else if (!atomic_load(&n->is_ipc)) {
        /* From now on the flag lives in the shared slot (it carries over). */
        err = aclsim__ipc_export(ACLSIM_IPC_NOTIFY, n->device, -1, 0, 0, 0, no_check, NULL,
                                 &n->ipc, api);
        if (!err) {
            aclsim__ipc_notify_set(&n->ipc, n->value);
            n->ipc_owner = true;
            atomic_store_explicit(&n->is_ipc, true, memory_order_release);
        }
    }
    if (!err)
        aclsim__ipc_key(&n->ipc, key);
    pthread_mutex_unlock(&n->lock);
    notify_unref(n);
    return err;
}

aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t *pid, size_t num)
{
    static const char api[] = "aclrtNotifySetImportPid";
    ACLSIM_REQUIRE_INIT(api);
    if (!notify || !pid)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !notify ? "notify" : "pid");
    aclError err = aclsim__soc_check(api, IPC_NOTIFY_SOCS);
    if (err)
        return err;
    if (num == 0 || num > INT32_MAX)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "num %zu is invalid: 1..%d", num,
                            INT32_MAX);
    struct aclsim__notify *n = notify_of(notify, false, api, &err);
    if (!n)
        return err;
    if (!n->ipc_owner || !atomic_load_explicit(&n->is_ipc, memory_order_acquire))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "notify %p is not shared by this process: call "
                           "aclrtNotifyGetExportKey first", notify);
    else
        err = aclsim__ipc_allow(&n->ipc, pid, num, api);
    notify_unref(n);
    return err;
}

aclError aclrtNotifySetImportPidInterServer(aclrtNotify notify, aclrtServerPid *serverPids,
                                            size_t num)
{
    static const char api[] = "aclrtNotifySetImportPidInterServer";
    ACLSIM_REQUIRE_INIT(api);
    if (!notify || !serverPids || num == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s",
                            !notify ? "notify is NULL" : !serverPids ? "serverPids is NULL"
                                                                     : "num is 0");
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(A3));
    return err ? err
               : aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                              "whitelisting processes of other servers (super-node sharing) "
                              "needs several servers; aclsim simulates one host (use "
                              "aclrtNotifySetImportPid for processes on this host)");
}

aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key, uint64_t flags)
{
    static const char api[] = "aclrtNotifyImportByKey";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!notify || !key)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !notify ? "notify" : "key");
    aclError err = aclsim__soc_check(api, IPC_NOTIFY_SOCS);
    if (err)
        return err;
    if (flags != ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT &&
        flags != ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flags %#llx is invalid: ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT (0) or "
                            "ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS (2)",
                            (unsigned long long)flags);
    struct aclsim__ipc_ref r;
    if ((err = aclsim__ipc_open(key, ACLSIM_IPC_NOTIFY, "an IPC notify", &r, api)))
        return err;
    aclrtNotify out = NULL;
    if ((err = create(&out, false, api)))
        return err;
    struct aclsim__notify *n = notify_of(out, false, api, &err);
    if (n) {   /* nobody else has the handle yet */
        pthread_mutex_lock(&n->lock);
        n->ipc = r;
        atomic_store_explicit(&n->is_ipc, true, memory_order_release);
        pthread_mutex_unlock(&n->lock);
        notify_unref(n);
    }
    *notify = out;
    return ACL_SUCCESS;
}

/* ---- counting notifies ---------------------------------------------------------- */

aclError aclrtCntNotifyCreate(aclrtCntNotify *cntNotify, uint64_t flag)
{
    static const char api[] = "aclrtCntNotifyCreate";
    aclError err = lifetime_checks(cntNotify, "cntNotify", CNT_SOCS, api);
    if (err)
        return err;
    if (flag != 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flag %#llx is invalid: it is reserved and must be 0",
                            (unsigned long long)flag);
    return create(cntNotify, true, api);
}

aclError aclrtCntNotifyDestroy(aclrtCntNotify cntNotify)
{
    static const char api[] = "aclrtCntNotifyDestroy";
    aclError err = lifetime_checks(cntNotify, "cntNotify", CNT_SOCS, api);
    return err ? err : destroy(cntNotify, true, api);
}

aclError aclrtCntNotifyRecord(aclrtCntNotify cntNotify, aclrtStream stream,
                              aclrtCntNotifyRecordInfo *info)
{
    static const char api[] = "aclrtCntNotifyRecord";
    ACLSIM_REQUIRE_INIT(api);
    if (!info)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "info is NULL");
    aclError err = first_checks(cntNotify, "cntNotify", CNT_SOCS, api);
    if (err)
        return err;
    uint32_t mode = (uint32_t)info->mode;
    if (mode != ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE && mode != ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE &&
        mode != ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE && mode != ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "info->mode %u is invalid: SET_VALUE (0), ADD (1), BIT_OR (2) or "
                            "BIT_AND (4)", mode);
    struct aclsim__task t = {.kind = ACLSIM_TASK_SIGNAL,
                             .u.sync = {.ops = &record_ops, .value = info->value, .mode = mode}};
    return queue(cntNotify, true, stream, t, api);
}

aclError aclrtCntNotifyWaitWithTimeout(aclrtCntNotify cntNotify, aclrtStream stream,
                                       aclrtCntNotifyWaitInfo *info)
{
    static const char api[] = "aclrtCntNotifyWaitWithTimeout";
    ACLSIM_REQUIRE_INIT(api);
    if (!info)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "info is NULL");
    aclError err = first_checks(cntNotify, "cntNotify", CNT_SOCS, api);
    if (err)
        return err;
    uint32_t mode = (uint32_t)info->mode;
    if (mode > ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "info->mode %u is invalid: LESS (0), EQUAL (1), BIGGER (2), "
                            "BIGGER_OR_EQUAL (3) or EQUAL_WITH_BITMASK (4)", mode);
    struct aclsim__task t = {.kind = ACLSIM_TASK_WAIT,
                             .u.sync = {.ops = &cnt_wait_ops, .value = info->value,
                                        .mode = mode | (info->isClear ? CLEAR_BIT : 0),
                                        .timeout_s = info->timeout}};
    return queue(cntNotify, true, stream, t, api);
}

aclError aclrtCntNotifyReset(aclrtCntNotify cntNotify, aclrtStream stream)
{
    static const char api[] = "aclrtCntNotifyReset";
    aclError err = first_checks(cntNotify, "cntNotify", CNT_SOCS, api);
    struct aclsim__task t = {.kind = ACLSIM_TASK_SIGNAL,
                             .u.sync = {.ops = &record_ops, .mode = RESET_MODE}};
    return err ? err : queue(cntNotify, true, stream, t, api);
}

aclError aclrtCntNotifyGetId(aclrtCntNotify cntNotify, uint32_t *notifyId)
{
    static const char api[] = "aclrtCntNotifyGetId";
    ACLSIM_REQUIRE_INIT(api);
    if (cntNotify && !notifyId)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "notifyId is NULL");
    aclError err = first_checks(cntNotify, "cntNotify", CNT_SOCS, api);
    return err ? err : get_id(cntNotify, true, notifyId, api);
}

/* After fork(), in the child (internal.h, THE FORK RULE): the inherited
 * notifies are freed whatever their references (the tasks holding those are
 * gone), and no id is held any more. */
void aclsim__notifies_forget_after_fork(void)
{
    pthread_mutex_init(&live_lock, NULL);
    while (live_notifies) {
        struct aclsim__notify *n = live_notifies;
        live_unlink(n);
        aclsim__handle_free(n->handle);
        free(n);
    }
    for (int i = 0; i < ACLSIM_MAX_DEVICES; i++)
        aclsim__idpool_forget_after_fork(&notify_ids[i]);
}
