/*
 * Events: creation and destruction, and the records, resets and waits
 * queued on streams. The host calls that wait for or query events are in
 * event-query.c, IPC events in event-ipc.c; the event object and what the
 * three share are in event.h.
 *
 * Every record gets a sequence number; a stream wait waits for the latest
 * record made before it. Events created by aclrtCreateEvent and
 * aclrtCreateEventWithFlag also behave as CANN's hardware events: a flag that
 * a record sets and aclrtResetEvent clears, so a wait also needs the flag set
 * (after a reset it waits for the next record; an ACL_EVENT_SYNC event starts
 * cleared, so its first wait waits for a record). Events created by
 * aclrtCreateEventExWithFlag are reusable (CANN's "new mode"): a wait needs
 * only its record, a wait before any record passes, and reset/query calls
 * are refused. A wait that cannot pass parks its stream (wait.c).
 */
#include "event.h"

#include <stdlib.h>
#include <string.h>

#define EV_WITH_FLAG_MAX 0x3Fu   /* aclrtCreateEventWithFlag */
#define EV_EX_MAX (ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | EV_DDSYNC | \
                   ACL_EVENT_TIME_LINE | ACL_EVENT_IPC)

/* Events not yet destroyed: aclFinalize destroys what the program forgot. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__event *live_events;
static struct aclsim__idpool event_ids[ACLSIM_MAX_DEVICES] = {
    [0 ... ACLSIM_MAX_DEVICES - 1] = ACLSIM_IDPOOL_INIT};

static void live_unlink(struct aclsim__event *ev)
{
    if (ev->prev_live)
        ev->prev_live->next_live = ev->next_live;
    else
        live_events = ev->next_live;
    if (ev->next_live)
        ev->next_live->prev_live = ev->prev_live;
}
void aclsim__event_unref(struct aclsim__event *ev)
{
    if (atomic_fetch_sub(&ev->refs, 1) == 1) {
        if (ev->ipc_owner)
            aclsim__ipc_close(&ev->ipc);   /* the handle opens nothing from now on */
        if (ev->has_id)
            aclsim__id_give(&event_ids[ev->device], ev->id);
        free(ev->done_after);
        pthread_mutex_destroy(&ev->lock);
        pthread_cond_destroy(&ev->done);
        free(ev);
    }
}

/* Events a device holds at most (CANN's support tables). */
uint32_t aclsim__event_limit(void)
{
    switch (aclsim__soc_current()->family) {
    case ACLSIM_FAMILY_INFERENCE: return 1023;
    case ACLSIM_FAMILY_TRAINING: return 65535;
    default: return 65536;
    }
}

uint32_t aclsim__event_ids_used(int32_t device)
{
    return aclsim__id_used(&event_ids[device]);
}

/* Whether record seq of ev has finished. Caller holds ev->lock. */
bool aclsim__event_reached_locked(const struct aclsim__event *ev, uint64_t seq)
{
    if (seq <= ev->done_upto)
        return true;
    for (uint32_t i = 0; i < ev->ndone_after; i++)
        if (ev->done_after[i] == seq)
            return true;
    return false;
}

/* Whether wait task t may pass. Caller holds the event's lock. */
static bool wait_passes(struct aclsim__task *t)
{
    struct aclsim__event *ev = t->u.sync.obj;
    return aclsim__event_reached_locked(ev, t->u.sync.value) && (ev->ex || ev->set);
}

/* Marks record seq of ev as finished (stamped with the time when it ran, or
 * unstamped when it was discarded) and wakes what waited for it. */
void aclsim__event_complete(struct aclsim__event *ev, uint64_t seq, bool stamp)
{
    struct aclsim__stream *wake = NULL;
    pthread_mutex_lock(&ev->lock);
    if (seq == ev->done_upto + 1) {
        ev->done_upto = seq;
        for (uint32_t i = 0; i < ev->ndone_after;) {   /* absorb what now follows */
            if (ev->done_after[i] == ev->done_upto + 1) {
                ev->done_upto++;
                ev->done_after[i] = ev->done_after[--ev->ndone_after];
                i = 0;
            } else {
                i++;
            }
        }
    } else if (seq > ev->done_upto) {
        if (ev->ndone_after == ev->cap_done_after) {
            uint32_t cap = ev->cap_done_after ? ev->cap_done_after * 2 : 8;
            uint64_t *bigger = aclsim__realloc(ev->done_after, cap * sizeof *bigger);
            if (bigger) {
                ev->done_after = bigger;
                ev->cap_done_after = cap;
            }
        }
        if (ev->ndone_after < ev->cap_done_after)
            ev->done_after[ev->ndone_after++] = seq;
        else   /* out of memory: degrade to "everything up to seq has finished" */
            ev->done_upto = seq;
    }
    if (stamp && seq > ev->stamp_seq && (ev->flags & ACL_EVENT_TIME_LINE)) {
        ev->stamp_seq = seq;
        clock_gettime(CLOCK_MONOTONIC, &ev->stamp);
    }
    ev->set = true;
    aclsim__waitq_release(&ev->waiters, wait_passes, &wake);
    pthread_cond_broadcast(&ev->done);
    pthread_mutex_unlock(&ev->lock);
    aclsim__wake(wake);
}

/* ---- the wait and reset tasks (struct aclsim__wait_ops) -------------------- */

static bool wait_ready(struct aclsim__task *t)
{
    struct aclsim__event *ev = t->u.sync.obj;
    pthread_mutex_lock(&ev->lock);
    bool ok = wait_passes(t);
    pthread_mutex_unlock(&ev->lock);
    return ok;
}

static bool wait_park(struct aclsim__task *t, struct aclsim__stream *s)
{
    struct aclsim__event *ev = t->u.sync.obj;
    pthread_mutex_lock(&ev->lock);
    bool park = !wait_passes(t);
    if (park) {
        aclsim__waitq_push(&ev->waiters, s);
        s->state = ACLSIM_STREAM_PARKED;
    }
    pthread_mutex_unlock(&ev->lock);
    return park;
}

static bool wait_unpark(struct aclsim__task *t, struct aclsim__stream *s)
{
    struct aclsim__event *ev = t->u.sync.obj;
    pthread_mutex_lock(&ev->lock);
    bool found = aclsim__waitq_remove(&ev->waiters, s);
    pthread_mutex_unlock(&ev->lock);
    return found;
}

/* A wait task is done (passed or discarded): aclrtQueryEventWaitStatus. */
void aclsim__event_wait_release(struct aclsim__task *t)
{
    struct aclsim__event *ev = t->u.sync.obj;
    pthread_mutex_lock(&ev->lock);
    ev->waits_done++;
    pthread_mutex_unlock(&ev->lock);
    aclsim__event_unref(ev);
}

static void reset_signal(struct aclsim__task *t, bool discarded)
{
    struct aclsim__event *ev = t->u.sync.obj;
    if (discarded)
        return;
    pthread_mutex_lock(&ev->lock);
    ev->set = false;
    pthread_mutex_unlock(&ev->lock);
}

void aclsim__event_release_task(struct aclsim__task *t)
{
    aclsim__event_unref(t->u.sync.obj);
}

static void retain_event(struct aclsim__task *t)
{
    atomic_fetch_add(&((struct aclsim__event *)t->u.sync.obj)->refs, 1);
}

/* A copy of a wait (a replay's): one more wait issued, another reference. */
static void wait_retain(struct aclsim__task *t)
{
    struct aclsim__event *ev = t->u.sync.obj;
    pthread_mutex_lock(&ev->lock);
    ev->waits_issued++;
    pthread_mutex_unlock(&ev->lock);
    atomic_fetch_add(&ev->refs, 1);
}

static const struct aclsim__wait_ops event_wait_ops = {
    .what = "an event", .ready = wait_ready, .park = wait_park, .unpark = wait_unpark,
    .release = aclsim__event_wait_release, .retain = wait_retain};
static const struct aclsim__wait_ops event_reset_ops = {
    .what = "an event", .signal = reset_signal, .release = aclsim__event_release_task,
    .retain = retain_event};

/* ---- for model runtime instances (modelri-*.c) ---------------------------- */

bool aclsim__is_event_wait(const struct aclsim__task *t)
{
    return t->kind == ACLSIM_TASK_WAIT && t->u.sync.ops == &event_wait_ops;
}

bool aclsim__is_event_reset(const struct aclsim__task *t)
{
    return t->kind == ACLSIM_TASK_SIGNAL && t->u.sync.ops == &event_reset_ops;
}

bool aclsim__event_is_ex(const struct aclsim__event *ev)
{
    return ev->ex;
}

uint32_t aclsim__event_flags(const struct aclsim__event *ev)
{
    return ev->flags;
}

void *aclsim__event_handle(const struct aclsim__event *ev)
{
    return ev->handle;
}

void aclsim__event_ref(struct aclsim__event *ev)
{
    atomic_fetch_add(&ev->refs, 1);
}

bool aclsim__event_external(struct aclsim__event *ev, bool record)
{
    pthread_mutex_lock(&ev->lock);
    bool ext = (record ? ev->record_flag : ev->wait_flag) == 1;
    pthread_mutex_unlock(&ev->lock);
    return ext;
}

uint64_t aclsim__event_latest(struct aclsim__event *ev)
{
    pthread_mutex_lock(&ev->lock);
    uint64_t q = ev->queued;
    pthread_mutex_unlock(&ev->lock);
    return q;
}


/* ---- events --------------------------------------------------------------- */

/* Resolves an event handle and takes a reference on the event (the caller
 * drops it with event_unref). Lookup and reference happen under live_lock,
 * where aclrtDestroyEvent frees the handle, so a racing destroy cannot free
 * the event in between. */
struct aclsim__event *aclsim__event_of(aclrtEvent event, const char *what, const char *api,
                                       aclError *err)
{
    if (!event) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", what);
        return NULL;
    }
    pthread_mutex_lock(&live_lock);
    struct aclsim__event *ev = aclsim__handle_get(event, ACLSIM_H_EVENT);
    if (ev)
        atomic_fetch_add(&ev->refs, 1);
    pthread_mutex_unlock(&live_lock);
    if (!ev)
        *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "%s %p is not a live event (destroyed, or never created)", what, event);
    return ev;
}

/* The SoC check every event function makes after its NULL checks. */
aclError aclsim__events_supported(const char *api)
{
    return aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
}

/* Looks up event for api: init, NULL (100000), SoC (207000), handle (107017). */
struct aclsim__event *aclsim__event_for(aclrtEvent event, const char *api, aclError *err)
{
    ACLSIM_TRACE_API_SCOPE(api);   /* (the event calls check init here, not with ACLSIM_REQUIRE_INIT) */
    if (!aclsim__initialized()) {
        *err = aclsim__not_initialized(api);
        return NULL;
    }
    if (!event) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "event is NULL");
        return NULL;
    }
    if ((*err = aclsim__events_supported(api)))
        return NULL;
    return aclsim__event_of(event, "event", api, err);
}

/* Gives ev an id if it has none (the caller holds ev->lock); 207007 when
 * its device has none left. */
aclError aclsim__event_take_id_locked(struct aclsim__event *ev, const char *api)
{
    if (ev->has_id)
        return ACL_SUCCESS;
    if (!aclsim__id_take(&event_ids[ev->device], aclsim__event_limit(), &ev->id))
        return aclsim__fail(ACL_ERROR_RT_NO_EVENT_RESOURCE, api,
                            "device %d has no event left (%u events hold ids)", ev->device,
                            aclsim__id_used(&event_ids[ev->device]));
    ev->has_id = true;
    return ACL_SUCCESS;
}

static aclError create_event(aclrtEvent *event, uint32_t flags, bool ex, const char *api)
{
    return aclsim__event_create(event, flags, ex, NULL, api);
}

/* opened: an IPC event another process shared (aclrtIpcOpenEventHandle);
 * ACL_EVENT_IPC without it: exported now. */
aclError aclsim__event_create(aclrtEvent *event, uint32_t flags, bool ex,
                              const struct aclsim__ipc_ref *opened, const char *api)
{
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    struct aclsim__event *ev = aclsim__calloc(1, sizeof *ev);
    if (!ev)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating an event");
    if (opened) {
        ev->is_ipc = true;
        ev->ipc = *opened;
    } else if (flags == ACL_EVENT_IPC) {
        err = aclsim__ipc_export(ACLSIM_IPC_EVENT, aclsim__context_device(ctx)->id, -1, 0, 0, 0,
                                 true, NULL, &ev->ipc, api);
        if (err) {
            free(ev);
            return err;
        }
        ev->is_ipc = ev->ipc_owner = true;
    }
    pthread_mutex_init(&ev->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&ev->done, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&ev->refs, 1);
    ev->flags = flags;
    ev->ex = ex;
    ev->device = aclsim__context_device(ctx)->id;
    ev->set = !ex && flags == EV_DEFAULT;   /* a wait before any record passes */
    ev->record_flag = ev->wait_flag = -1;
    /* Events made for synchronization hold an id (and count against the
     * device's limit) from creation, the others from their first record. */
    if (!ex && (flags & (ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL)) &&
        (err = aclsim__event_take_id_locked(ev, api))) {
        aclsim__event_unref(ev);
        return err;
    }
    ev->handle = aclsim__handle_new(ACLSIM_H_EVENT, ev);
    if (!ev->handle) {
        aclsim__event_unref(ev);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating an event");
    }
    /* Once on the live list, an aclFinalize on another thread may free ev:
     * its handle is read before. (That handle is then dead, as after any
     * aclFinalize.) */
    void *handle = ev->handle;
    pthread_mutex_lock(&live_lock);
    ev->next_live = live_events;
    if (live_events)
        live_events->prev_live = ev;
    live_events = ev;
    pthread_mutex_unlock(&live_lock);
    *event = handle;
    return ACL_SUCCESS;
}

/* init, NULL out-pointer, SoC: the checks the three create calls start with. */
static aclError create_checks(aclrtEvent *event, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    if (!event)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "event is NULL");
    return aclsim__events_supported(api);
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
    static const char api[] = "aclrtCreateEvent";
    aclError err = create_checks(event, api);
    return err ? err : create_event(event, EV_DEFAULT, false, api);
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    static const char api[] = "aclrtCreateEventWithFlag";
    aclError err = create_checks(event, api);
    if (err)
        return err;
    if ((flag & EV_WITH_FLAG_MAX) == 0 || flag > EV_WITH_FLAG_MAX)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flag %#x is invalid: an OR of ACL_EVENT_SYNC, "
                            "ACL_EVENT_CAPTURE_STREAM_PROGRESS and ACL_EVENT_TIME_LINE, or "
                            "ACL_EVENT_DEVICE_USE_ONLY or ACL_EVENT_EXTERNAL alone", flag);
    if (((flag & ACL_EVENT_DEVICE_USE_ONLY) && flag != ACL_EVENT_DEVICE_USE_ONLY) ||
        ((flag & ACL_EVENT_EXTERNAL) && flag != ACL_EVENT_EXTERNAL))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flag %#x is invalid: ACL_EVENT_DEVICE_USE_ONLY and "
                            "ACL_EVENT_EXTERNAL cannot be combined with other flags", flag);
    if (flag == ACL_EVENT_DEVICE_USE_ONLY &&
        (err = aclsim__soc_check(api, ~(ACLSIM_FAMILIES(EDGE) | ACLSIM_FAMILIES(TRAINING)))))
        return err;
    return create_event(event, flag, false, api);
}

aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)
{
    static const char api[] = "aclrtCreateEventExWithFlag";
    aclError err = create_checks(event, api);
    if (err)
        return err;
    const uint32_t alone = ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;
    if ((flag & alone) && (flag & ~(flag & alone)))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flag %#x is invalid: ACL_EVENT_IPC cannot be combined with other "
                            "flags", flag);
    if ((flag & EV_EX_MAX) == 0 || flag > EV_EX_MAX)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flag %#x is invalid: an OR of ACL_EVENT_SYNC, "
                            "ACL_EVENT_CAPTURE_STREAM_PROGRESS and ACL_EVENT_TIME_LINE, or "
                            "ACL_EVENT_IPC alone", flag);
    if (flag == ACL_EVENT_IPC && (err = aclsim__soc_check(api, ACLSIM_A5_A3_A2)))
        return err;
    return create_event(event, flag, true, api);
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
    static const char api[] = "aclrtDestroyEvent";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__snapshot_check(api);
    if (err)
        return err;
    struct aclsim__event *ev = aclsim__event_for(event, api, &err);
    if (!ev)
        return err;
    /* Queued records and waits keep their reference; they still run. */
    pthread_mutex_lock(&live_lock);
    bool live = aclsim__handle_free(event);   /* false: a racing destroy won */
    if (live)
        live_unlink(ev);
    pthread_mutex_unlock(&live_lock);
    aclsim__event_unref(ev);   /* ours, from event_of */
    if (!live)
        return aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "event %p is not a live event (destroyed, or never created)", event);
    aclsim__event_unref(ev);   /* the handle's */
    return ACL_SUCCESS;
}

void aclsim__events_finalize(void)
{
    pthread_mutex_lock(&live_lock);
    while (live_events) {
        struct aclsim__event *ev = live_events;
        live_unlink(ev);
        aclsim__handle_free(ev->handle);
        pthread_mutex_unlock(&live_lock);
        aclsim__event_unref(ev);
        pthread_mutex_lock(&live_lock);
    }
    pthread_mutex_unlock(&live_lock);
}

/* Refusals shared by records, waits and resets. */
static aclError check_host_use(struct aclsim__event *ev, const char *api)
{
    if (ev->flags == ACL_EVENT_DEVICE_USE_ONLY)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "the event was created with ACL_EVENT_DEVICE_USE_ONLY: it can only "
                            "be used on the device");
    return ACL_SUCCESS;
}

static bool can_wait(const struct aclsim__event *ev)
{
    return ev->is_ipc || (ev->flags & (ACL_EVENT_SYNC | EV_DDSYNC | ACL_EVENT_EXTERNAL));
}

static aclError refuse_no_sync(const char *api)
{
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "the event was created without ACL_EVENT_SYNC: it cannot be waited for "
                        "or reset");
}

/* The record / wait flag of an event is fixed by its first use, even when
 * that call fails (CANN): a different one later is refused. */
static aclError fix_flag(struct aclsim__event *ev, bool record, uint32_t flag, const char *api)
{
    pthread_mutex_lock(&ev->lock);
    int8_t *fixed = record ? &ev->record_flag : &ev->wait_flag;
    int8_t was = *fixed;
    if (was < 0)
        *fixed = (int8_t)flag;
    pthread_mutex_unlock(&ev->lock);
    if (was >= 0 && (uint32_t)was != flag)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "the %s flag of an event must stay the same: it is %s, this call "
                            "passes %s", record ? "record" : "wait",
                            was ? "EXTERNAL" : "DEFAULT", flag ? "EXTERNAL" : "DEFAULT");
    return ACL_SUCCESS;
}

/* ACL_EVENT_RECORD_EXTERNAL / ACL_EVENT_WAIT_EXTERNAL: graph capture only. */
static aclError external_use(struct aclsim__event *ev, bool record, aclrtStream stream,
                             const char *api)
{
    if (!ev->ex || ev->flags != ACL_EVENT_SYNC)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "the EXTERNAL flag needs an event created by "
                            "aclrtCreateEventExWithFlag with ACL_EVENT_SYNC");
    aclError err = fix_flag(ev, record, 1, api);
    struct aclsim__sref s;
    if (!err && !(err = aclsim__stream_resolve(stream, api, NULL, &s)) &&
        !aclsim__capture_active(s.s))
        err = aclsim__fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, api,
                           "the EXTERNAL flag is for a stream being captured into an ACL graph; "
                           "stream %p is not being captured", stream);
    return err;   /* captured: the record or wait goes on (modelri-capture.c) */
}


static aclError record(struct aclsim__event *ev, aclrtStream stream, uint32_t flag,
                       const char *api)
{
    aclError err = check_host_use(ev, api);
    struct aclsim__sref s;
    if (err || (err = fix_flag(ev, true, flag, api)) ||
        (err = aclsim__stream_resolve(stream, api, NULL, &s)))
        return err;
    return aclsim__event_record_on(ev, s, api);
}

/* A record of ev queued on s (the caller holds a reference on ev). */
aclError aclsim__event_record_on(struct aclsim__event *ev, struct aclsim__sref s, const char *api)
{
    aclError err;
    if (ev->is_ipc)
        return aclsim__event_ipc_record(ev, s, api);
    struct aclsim__task t = {.kind = ACLSIM_TASK_RECORD, .u.event.event = ev};   /* takes our ref */
    /* A record gets a new sequence number. The event lock cannot be held
     * over the submit (lock order is stream -> event). */
    pthread_mutex_lock(&ev->lock);
    err = aclsim__event_take_id_locked(ev, api);
    t.u.event.seq = err ? 0 : ++ev->recorded;
    pthread_mutex_unlock(&ev->lock);
    if (err)
        return err;
    uint64_t seq = t.u.event.seq;
    atomic_fetch_add(&ev->refs, 1);   /* the task may run and drop its reference at once */
    uint64_t task_seq = 0;
    if ((err = aclsim__submit(s, &t, api, &task_seq))) {   /* the number is taken: retire it, unstamped */
        aclsim__event_complete(ev, seq, false);
        aclsim__event_unref(ev);   /* the task's */
    } else {
        aclsim__mempool_note_record(ev->handle, s, task_seq, seq);   /* memory pools' event reuse */
        pthread_mutex_lock(&ev->lock);
        if (seq > ev->queued)
            ev->queued = seq;
        pthread_mutex_unlock(&ev->lock);
    }
    return err;
}

static aclError record_event(aclrtEvent event, aclrtStream stream, uint32_t flag, const char *api)
{
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = aclsim__event_for(event, api, &err);
    if (!ev)
        return err;
    err = flag ? external_use(ev, true, stream, api) : ACL_SUCCESS;
    if (!err)
        err = record(ev, stream, flag, api);
    aclsim__event_unref(ev);
    return err;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    return record_event(event, stream, ACL_EVENT_RECORD_DEFAULT, "aclrtRecordEvent");
}

aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t flag)
{
    static const char api[] = "aclrtRecordEventWithFlag";
    ACLSIM_REQUIRE_INIT(api);
    if (!event)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "event is NULL");
    if (flag != ACL_EVENT_RECORD_DEFAULT && flag != ACL_EVENT_RECORD_EXTERNAL)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "flag %u is invalid: ACL_EVENT_RECORD_DEFAULT (0) or "
                            "ACL_EVENT_RECORD_EXTERNAL (1)", flag);
    aclError err = aclsim__soc_check(api, ACLSIM_A5_A3_A2);
    return err ? err : record_event(event, stream, flag, api);
}

/* Queues a wait for ev on stream (timeout in seconds, 0: none). */
static aclError wait_event(aclrtStream stream, aclrtEvent event, uint32_t timeout_s,
                           uint32_t flag, const char *api)
{
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = aclsim__event_for(event, api, &err);
    if (!ev)
        return err;
    if (!(err = check_host_use(ev, api)) && !can_wait(ev))
        err = refuse_no_sync(api);
    if (!err && flag)
        err = external_use(ev, false, stream, api);
    struct aclsim__sref s;
    if (err || (err = fix_flag(ev, false, flag, api)) ||
        (err = aclsim__stream_resolve(stream, api, NULL, &s))) {
        aclsim__event_unref(ev);
        return err;
    }
    struct aclsim__task t = {.kind = ACLSIM_TASK_WAIT,
                             .u.sync = {.ops = &event_wait_ops, .obj = ev,
                                        .timeout_s = timeout_s}};   /* takes our ref */
    /* The wait waits for the latest record queued before it (see `queued`).
     * A reusable event never recorded: nothing to wait for (CANN queues
     * nothing). */
    pthread_mutex_lock(&ev->lock);
    t.u.sync.value = ev->is_ipc ? aclsim__ipc_event_latest(&ev->ipc, true) : ev->queued;
    if (ev->is_ipc)
        t.u.sync.ops = &aclsim__event_ipc_wait_ops;
    bool nothing = ev->ex && t.u.sync.value == 0 && !flag;   /* (EXTERNAL: captured, modelri-capture.c) */
    if (!nothing)
        ev->waits_issued++;
    pthread_mutex_unlock(&ev->lock);
    if (nothing) {
        aclsim__event_unref(ev);
        return ACL_SUCCESS;
    }
    uint64_t recno = t.u.sync.value;
    if ((err = aclsim__submit(s, &t, api, NULL)))
        aclsim__event_wait_release(&t);   /* counts it done, drops the reference */
    else
        aclsim__mempool_note_wait(s, event, recno);   /* memory pools' event reuse */
    return err;
}

aclError aclsim__stream_wait_event(aclrtStream stream, aclrtEvent event, uint32_t timeout_s,
                                   const char *api)
{
    return wait_event(stream, event, timeout_s, ACL_EVENT_WAIT_DEFAULT, api);
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    /* aclrtSetOpWaitTimeout's value (0: none) bounds the waits queued after it. */
    uint32_t timeout_s = (uint32_t)(aclsim__op_wait_timeout_ns() / 1000000000u);
    return wait_event(stream, event, timeout_s, ACL_EVENT_WAIT_DEFAULT, "aclrtStreamWaitEvent");
}

/* timeout in seconds (CANN's reference; its header comment says
 * milliseconds), 0 never times out; past it the stream's wait fails (107019
 * at the next synchronize, as every timed-out wait). */
aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event, int32_t timeout)
{
    static const char api[] = "aclrtStreamWaitEventWithTimeout";
    ACLSIM_REQUIRE_INIT(api);
    if (timeout < 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "timeout %d is invalid: 0 (never) or a number of seconds", timeout);
    return aclsim__stream_wait_event(stream, event, (uint32_t)timeout, api);
}

aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event, uint32_t timeout,
                                      uint32_t flag)
{
    static const char api[] = "aclrtStreamWaitEventWithFlag";
    ACLSIM_REQUIRE_INIT(api);
    if (!event)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "event is NULL");
    if (flag != ACL_EVENT_WAIT_DEFAULT && flag != ACL_EVENT_WAIT_EXTERNAL)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "flag %u is invalid: ACL_EVENT_WAIT_DEFAULT (0) or "
                            "ACL_EVENT_WAIT_EXTERNAL (1)", flag);
    if (flag == ACL_EVENT_WAIT_EXTERNAL && timeout != 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "timeout %u is invalid: ACL_EVENT_WAIT_EXTERNAL takes 0", timeout);
    aclError err = aclsim__soc_check(api, ACLSIM_A5_A3_A2);
    return err ? err : wait_event(stream, event, timeout, flag, api);
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)
{
    static const char api[] = "aclrtResetEvent";
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = aclsim__event_for(event, api, &err);
    if (!ev)
        return err;
    struct aclsim__sref s;
    if (!(err = check_host_use(ev, api))) {
        if (!can_wait(ev))
            err = refuse_no_sync(api);
        else if (ev->ex)
            err = aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                               "events created by aclrtCreateEventExWithFlag cannot be reset "
                               "(they are reusable: record them again)");
        else
            err = aclsim__stream_resolve(stream, api, NULL, &s);
    }
    struct aclsim__task t = {.kind = ACLSIM_TASK_SIGNAL,
                             .u.sync = {.ops = &event_reset_ops, .obj = ev}};   /* takes our ref */
    if (err || (err = aclsim__submit(s, &t, api, NULL)))
        aclsim__event_unref(ev);
    return err;
}

/* After fork(), in the child (internal.h, THE FORK RULE): the events of the
 * inherited session are freed whatever their references (the tasks and
 * threads holding those are gone). */
void aclsim__events_forget_after_fork(void)
{
    pthread_mutex_init(&live_lock, NULL);
    while (live_events) {
        struct aclsim__event *ev = live_events;
        live_unlink(ev);
        aclsim__handle_free(ev->handle);
        free(ev->done_after);
        free(ev);
    }
    for (int i = 0; i < ACLSIM_MAX_DEVICES; i++)   /* nothing holds an id any more */
        aclsim__idpool_forget_after_fork(&event_ids[i]);
}
