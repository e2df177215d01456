/*
 * IPC events (ACL_EVENT_IPC, or opened from another process's handle): their
 * record and wait tasks and the two handle calls, aclrtIpcGetEventHandle and
 * aclrtIpcOpenEventHandle. Their records and completions live in the shared
 * slot of ipc.c's registry, where every process that has the event records
 * and waits. Creation, the stream calls that pick these tasks for an IPC
 * event and destruction are in event.c, the host waits and queries in
 * event-query.c; event.h has the object.
 */
#include "event.h"

#include <string.h>

#define ACLSIM_IPC_EVENT_KEY (ACL_IPC_EVENT_HANDLE_SIZE + 1)

/* IPC events: a record is a signal task that marks its number finished in
 * the shared slot (also when discarded: nobody waits forever); a wait is
 * polled by the watcher (wait.c), as no other process can wake this one's
 * streams. */
static void ipc_record_signal(struct aclsim__task *t, bool discarded)
{
    struct aclsim__event *ev = t->u.sync.obj;
    (void)discarded;
    aclsim__ipc_event_done(&ev->ipc, t->u.sync.value);
}

static bool ipc_wait_passes(struct aclsim__task *t)
{
    struct aclsim__event *ev = t->u.sync.obj;
    return aclsim__ipc_event_reached(&ev->ipc, t->u.sync.value);
}

static bool ipc_wait_park(struct aclsim__task *t, struct aclsim__stream *s)
{
    if (ipc_wait_passes(t))
        return false;
    s->state = ACLSIM_STREAM_PARKED;   /* only the watcher's list holds it */
    return true;
}

static const struct aclsim__wait_ops ipc_record_ops = {
    .what = "an IPC event", .signal = ipc_record_signal, .release = aclsim__event_release_task};
const struct aclsim__wait_ops aclsim__event_ipc_wait_ops = {
    .what = "an IPC event", .ready = ipc_wait_passes, .park = ipc_wait_park,
    .poll = ipc_wait_passes, .release = aclsim__event_wait_release};

/* An IPC event's record (the task takes the caller's reference): numbered
 * in the shared slot, marked queued once it is on the stream. */
aclError aclsim__event_ipc_record(struct aclsim__event *ev, struct aclsim__sref s, const char *api)
{
    pthread_mutex_lock(&ev->lock);
    aclError err = aclsim__event_take_id_locked(ev, api);
    pthread_mutex_unlock(&ev->lock);
    if (err)
        return err;
    uint64_t seq = aclsim__ipc_event_next(&ev->ipc);
    struct aclsim__task t = {.kind = ACLSIM_TASK_SIGNAL,
                             .u.sync = {.ops = &ipc_record_ops, .obj = ev, .value = seq}};
    atomic_fetch_add(&ev->refs, 1);   /* the task's (the caller keeps its own) */
    if ((err = aclsim__submit(s, &t, api, NULL))) {
        aclsim__ipc_event_done(&ev->ipc, seq);   /* the number is taken: retire it */
        aclsim__event_unref(ev);
    } else {
        aclsim__ipc_event_queued(&ev->ipc, seq);
    }
    return err;
}

aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle)
{
    static const char api[] = "aclrtIpcGetEventHandle";
    ACLSIM_REQUIRE_INIT(api);
    if (!handle || !event)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !handle ? "handle" : "event");
    aclError err = aclsim__soc_check(api, ACLSIM_A5_A3_A2);
    if (err)
        return err;
    struct aclsim__event *ev = aclsim__event_of(event, "event", api, &err);
    if (!ev)
        return err;
    if (!ev->ipc_owner)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "event %p %s", event,
                           ev->is_ipc ? "was opened from another process's handle: only the "
                                        "process that created it shares it"
                                      : "was not created by aclrtCreateEventExWithFlag with "
                                        "ACL_EVENT_IPC");
    else if (!aclsim__ipc_live(&ev->ipc))
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "event %p is no longer shared", event);
    if (!err) {
        char key[ACLSIM_IPC_KEY_LEN] = {0};
        aclsim__ipc_key(&ev->ipc, key);
        memcpy(handle->reserved, key, sizeof handle->reserved);   /* keys are < 64 bytes */
    }
    aclsim__event_unref(ev);
    return err;
}

aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent *event)
{
    static const char api[] = "aclrtIpcOpenEventHandle";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!event)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "event is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_A5_A3_A2);
    if (err)
        return err;
    char key[ACLSIM_IPC_EVENT_KEY];
    memcpy(key, handle.reserved, sizeof handle.reserved);
    key[sizeof key - 1] = 0;
    struct aclsim__ipc_ref r;
    if ((err = aclsim__ipc_open(key, ACLSIM_IPC_EVENT, "an IPC event", &r, api)))
        return err;
    return aclsim__event_create(event, ACL_EVENT_IPC, true, &r, api);
}
