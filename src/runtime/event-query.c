/*
 * Events, the host side: waiting on the host for an event's latest record
 * (aclrtSynchronizeEvent*), the status queries (aclrtQueryEvent*), elapsed
 * time and timestamps of records, event ids and how many a device has left.
 * The events themselves, their records and stream waits are in event.c, IPC
 * events in event-ipc.c (their records live in ipc.c's shared slot, so for
 * them the host wait here polls that slot and the queries read it); event.h
 * has the object.
 */
#include "event.h"

/* 207000 for the calls an ACL_EVENT_EXTERNAL event refuses. */
static aclError refuse_external(const struct aclsim__event *ev, const char *api)
{
    aclError err = aclsim__capture_refuse_event(ev, api);   /* 107028 during a capture */
    if (err)
        return err;
    if (ev->flags == ACL_EVENT_EXTERNAL)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "an ACL_EVENT_EXTERNAL event (for task capture) does not support "
                            "this call");
    return ACL_SUCCESS;
}

/* Waits (on the host) for the latest record of ev made before the call;
 * timeout_ms < 0: forever. False on timeout. */
static bool host_wait(struct aclsim__event *ev, int32_t timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout_ms > 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
    }
    bool ok = true;
    if (ev->is_ipc) {   /* no other process signals ev->done: poll, 100 us apart */
        uint64_t target = aclsim__ipc_event_latest(&ev->ipc, false);
        struct timespec nap = {0, 100000};
        while (target && !aclsim__ipc_event_reached(&ev->ipc, target)) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (timeout_ms > 0 && (now.tv_sec > until.tv_sec ||
                                   (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec)))
                return false;
            nanosleep(&nap, NULL);
        }
        return true;
    }
    pthread_mutex_lock(&ev->lock);
    uint64_t target = ev->recorded;   /* the latest record made before this call */
    while (!aclsim__event_reached_locked(ev, target)) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&ev->done, &ev->lock);
        } else if (pthread_cond_timedwait(&ev->done, &ev->lock, &until) != 0 &&
                   !aclsim__event_reached_locked(ev, target)) {
            ok = false;
            break;
        }
    }
    pthread_mutex_unlock(&ev->lock);
    return ok;
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    static const char api[] = "aclrtSynchronizeEvent";
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = aclsim__event_for(event, api, &err);
    if (!ev)
        return err;
    if (!(err = refuse_external(ev, api)))
        host_wait(ev, -1);
    aclsim__event_unref(ev);
    return err;
}

aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)
{
    static const char api[] = "aclrtSynchronizeEventWithTimeout";
    ACLSIM_REQUIRE_INIT(api);
    if (timeout < -1)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "timeout %d is invalid: -1 (wait forever) or a positive number of "
                            "milliseconds", timeout);
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = aclsim__event_for(event, api, &err);
    if (!ev)
        return err;
    if (timeout == 0)
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                           "timeout 0 is invalid: -1 (wait forever) or a positive number of "
                           "milliseconds");
    else if (!(err = refuse_external(ev, api)) && !host_wait(ev, timeout))
        err = aclsim__fail(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, api,
                           "event %p was not reached within %d ms", event, timeout);
    aclsim__event_unref(ev);
    return err;
}

/* The state of the latest record: 0 none, 1 queued or running, 2 done. */
static int latest_record(struct aclsim__event *ev)
{
    if (ev->is_ipc) {
        uint64_t latest = aclsim__ipc_event_latest(&ev->ipc, false);
        return latest == 0 ? 0 : aclsim__ipc_event_reached(&ev->ipc, latest) ? 2 : 1;
    }
    pthread_mutex_lock(&ev->lock);
    int st = ev->recorded == 0 ? 0 : aclsim__event_reached_locked(ev, ev->recorded) ? 2 : 1;
    pthread_mutex_unlock(&ev->lock);
    return st;
}

/* init, the out-pointer, then event_for: the checks the queries start with. */
static struct aclsim__event *query_checks(aclrtEvent event, const void *out, const char *name,
                                          const char *api, aclError *err)
{
    ACLSIM_TRACE_API_SCOPE(api);   /* (as event_for) */
    if (!aclsim__initialized()) {
        *err = aclsim__not_initialized(api);
        return NULL;
    }
    if (!out && event) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
        return NULL;
    }
    struct aclsim__event *ev = aclsim__event_for(event, api, err);
    if (ev && !out) {
        aclsim__event_unref(ev);
        ev = NULL;
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
    }
    return ev;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    static const char api[] = "aclrtQueryEventStatus";
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = query_checks(event, status, "status", api, &err);
    if (!ev)
        return err;
    if (!(err = refuse_external(ev, api))) {
        int st = latest_record(ev);
        /* Before its first record a reusable event has nothing to wait for. */
        bool done = st == 2 || (st == 0 && ev->ex);
        *status = done ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    }
    aclsim__event_unref(ev);
    return err;
}

/* 207000 for the queries an aclrtCreateEventExWithFlag event refuses. */
static aclError refuse_ex(const struct aclsim__event *ev, const char *api)
{
    if (ev->ex)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "events created by aclrtCreateEventExWithFlag do not support this "
                            "call (use aclrtQueryEventStatus)");
    return refuse_external(ev, api);
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
    static const char api[] = "aclrtQueryEvent";
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = query_checks(event, status, "status", api, &err);
    if (!ev)
        return err;
    if (!(err = refuse_ex(ev, api)))
        *status = latest_record(ev) == 1 ? ACL_EVENT_STATUS_NOT_READY : ACL_EVENT_STATUS_COMPLETE;
    aclsim__event_unref(ev);
    return err;
}

aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status)
{
    static const char api[] = "aclrtQueryEventWaitStatus";
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = query_checks(event, status, "status", api, &err);
    if (!ev)
        return err;
    if (!(err = refuse_ex(ev, api))) {
        pthread_mutex_lock(&ev->lock);
        bool done = ev->waits_done == ev->waits_issued;
        pthread_mutex_unlock(&ev->lock);
        *status = done ? ACL_EVENT_WAIT_STATUS_COMPLETE : ACL_EVENT_WAIT_STATUS_NOT_READY;
    }
    aclsim__event_unref(ev);
    return err;
}

/* The timestamp of ev's latest record, if that record has run (and ev keeps
 * timestamps). */
static bool event_stamp(struct aclsim__event *ev, struct timespec *ts)
{
    pthread_mutex_lock(&ev->lock);
    bool ok = ev->recorded > 0 && ev->stamp_seq == ev->recorded;
    *ts = ev->stamp;
    pthread_mutex_unlock(&ev->lock);
    return ok;
}

static aclError refuse_no_timeline(const struct aclsim__event *ev, const char *what,
                                   const char *api)
{
    aclError err = refuse_external(ev, api);
    if (!err && !(ev->flags & ACL_EVENT_TIME_LINE))
        err = aclsim__fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, api,
                           "%s was created without ACL_EVENT_TIME_LINE: it has no timestamps",
                           what);
    return err;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    static const char api[] = "aclrtEventElapsedTime";
    ACLSIM_REQUIRE_INIT(api);
    if (!ms)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ms is NULL");
    if (!startEvent || !endEvent)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            !startEvent ? "startEvent" : "endEvent");
    aclError err = aclsim__events_supported(api);
    if (err)
        return err;
    struct aclsim__event *a = aclsim__event_of(startEvent, "startEvent", api, &err);
    if (!a)
        return err;
    struct aclsim__event *b = aclsim__event_of(endEvent, "endEvent", api, &err);
    if (!b) {
        aclsim__event_unref(a);
        return err;
    }
    struct timespec ta, tb;
    if (!(err = refuse_no_timeline(a, "startEvent", api)))
        err = refuse_no_timeline(b, "endEvent", api);
    bool a_ok = event_stamp(a, &ta), b_ok = event_stamp(b, &tb);
    aclsim__event_unref(a);
    aclsim__event_unref(b);
    if (err)
        return err;
    if (!a_ok)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "startEvent %p has not completed a record (record it on a stream "
                            "and synchronize first)", startEvent);
    if (!b_ok)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "endEvent %p has not completed a record (record it on a stream "
                            "and synchronize first)", endEvent);
    *ms = (float)((double)(tb.tv_sec - ta.tv_sec) * 1e3 + (double)(tb.tv_nsec - ta.tv_nsec) / 1e6);
    return ACL_SUCCESS;
}

aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)
{
    static const char api[] = "aclrtEventGetTimestamp";
    ACLSIM_REQUIRE_INIT(api);
    if (!timestamp)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "timestamp is NULL");
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = aclsim__event_for(event, api, &err);
    if (!ev)
        return err;
    struct timespec ts = {0, 0};
    if (!(err = refuse_external(ev, api))) {
        if (latest_record(ev) == 0)
            err = aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                               "event %p has never been recorded", event);
        else if (!(err = refuse_no_timeline(ev, "the event", api)) && !event_stamp(ev, &ts))
            err = aclsim__fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, api,
                               "the latest record of event %p has not run yet (synchronize "
                               "first)", event);
    }
    aclsim__event_unref(ev);
    if (!err)   /* microseconds since the (simulated) device started: the monotonic clock */
        *timestamp = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
    return err;
}

aclError aclrtGetEventId(aclrtEvent event, uint32_t *eventId)
{
    static const char api[] = "aclrtGetEventId";
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = query_checks(event, eventId, "eventId", api, &err);
    if (!ev)
        return err;
    pthread_mutex_lock(&ev->lock);
    bool has = ev->has_id;
    uint32_t id = ev->id;
    pthread_mutex_unlock(&ev->lock);
    aclsim__event_unref(ev);
    if (!has)
        return aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api,
                            "event %p has no id yet: events made without ACL_EVENT_SYNC get one "
                            "when first recorded", event);
    *eventId = id;
    return ACL_SUCCESS;
}

aclError aclrtGetEventAvailNum(uint32_t *eventCount)
{
    static const char api[] = "aclrtGetEventAvailNum";
    ACLSIM_REQUIRE_INIT(api);
    if (!eventCount)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "eventCount is NULL");
    aclError err = aclsim__events_supported(api);
    struct aclsim__context *ctx = NULL;
    if (err || (err = aclsim__current_context(api, &ctx)))
        return err;
    uint32_t used = aclsim__event_ids_used(aclsim__context_device(ctx)->id);
    uint32_t limit = aclsim__event_limit();
    *eventCount = used < limit ? limit - used : 0;
    return ACL_SUCCESS;
}
