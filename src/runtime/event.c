/*
 * Events: records and waits queued on streams, and the host calls that wait
 * for or query them.
 *
 * Every record gets a sequence number; a stream wait waits for the latest
 * record made before it. A stream whose head task is such a wait and whose
 * record has not run is PARKED on the event (off its device's ready list) and
 * rescheduled by the record's completion.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct aclsim__event {
    void *handle;
    pthread_mutex_t lock;
    pthread_cond_t done;            /* broadcast when a record finishes */
    uint64_t recorded;              /* sequence number of the latest record */
    /* Records finish out of order when they sit on different streams, and a
     * wait must wait for its own record, not for any later one: records
     * 1..done_upto have all finished, and done_after[] lists the finished
     * ones above that (few: only records racing on different streams). */
    uint64_t done_upto;
    uint64_t *done_after;
    uint32_t ndone_after, cap_done_after;
    uint64_t stamp_seq;             /* latest record with a timestamp, and its time */
    struct timespec stamp;
    struct aclsim__stream *waiters; /* PARKED streams; each waits for wait_seq */
    atomic_uint refs;               /* handle + tasks + waiting host threads */
    struct aclsim__event *prev_live, *next_live;   /* live_events, under live_lock */
};

/* Events not yet destroyed: aclFinalize destroys what the program forgot. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__event *live_events;

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
        free(ev->done_after);
        pthread_mutex_destroy(&ev->lock);
        pthread_cond_destroy(&ev->done);
        free(ev);
    }
}

/* Whether record seq of ev has finished. Caller holds ev->lock. */
static bool reached_locked(const struct aclsim__event *ev, uint64_t seq)
{
    if (seq <= ev->done_upto)
        return true;
    for (uint32_t i = 0; i < ev->ndone_after; i++)
        if (ev->done_after[i] == seq)
            return true;
    return false;
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
    if (stamp && seq > ev->stamp_seq) {
        ev->stamp_seq = seq;
        clock_gettime(CLOCK_MONOTONIC, &ev->stamp);
    }
    for (struct aclsim__stream **p = &ev->waiters; *p;) {
        struct aclsim__stream *s = *p;
        if (reached_locked(ev, s->wait_seq)) {
            *p = s->next_waiting;
            s->next_waiting = wake;
            wake = s;
        } else {
            p = &s->next_waiting;
        }
    }
    pthread_cond_broadcast(&ev->done);
    pthread_mutex_unlock(&ev->lock);
    while (wake) {
        struct aclsim__stream *s = wake;
        wake = s->next_waiting;
        pthread_mutex_lock(&s->lock);
        s->state = ACLSIM_STREAM_QUEUED;
        pthread_mutex_unlock(&s->lock);
        aclsim__schedule(s);
    }
}

bool aclsim__event_reached(struct aclsim__event *ev, uint64_t seq)
{
    pthread_mutex_lock(&ev->lock);
    bool ok = reached_locked(ev, seq);
    pthread_mutex_unlock(&ev->lock);
    return ok;
}

bool aclsim__event_park(struct aclsim__event *ev, uint64_t seq, struct aclsim__stream *s)
{
    pthread_mutex_lock(&ev->lock);
    bool park = !reached_locked(ev, seq);
    if (park) {
        s->wait_seq = seq;
        s->next_waiting = ev->waiters;
        ev->waiters = s;
        s->state = ACLSIM_STREAM_PARKED;
    }
    pthread_mutex_unlock(&ev->lock);
    return park;
}

bool aclsim__event_unpark(struct aclsim__event *ev, struct aclsim__stream *s)
{
    bool found = false;
    pthread_mutex_lock(&ev->lock);
    for (struct aclsim__stream **p = &ev->waiters; *p; p = &(*p)->next_waiting)
        if (*p == s) {
            *p = s->next_waiting;
            found = true;
            break;
        }
    pthread_mutex_unlock(&ev->lock);
    return found;
}

/* ---- events --------------------------------------------------------------- */

/* Resolves an event handle and takes a reference on the event (the caller
 * drops it with event_unref). Lookup and reference happen under live_lock,
 * where aclrtDestroyEvent frees the handle, so a racing destroy cannot free
 * the event in between. */
static struct aclsim__event *event_of(aclrtEvent event, const char *what, const char *api,
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

aclError aclrtCreateEvent(aclrtEvent *event)
{
    static const char api[] = "aclrtCreateEvent";
    ACLSIM_REQUIRE_INIT(api);
    aclError gate = aclsim__snapshot_check(api);
    if (gate)
        return gate;
    if (!event)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "event is NULL");
    struct aclsim__context *ctx = NULL;
    aclError err = aclsim__current_context(api, &ctx);
    if (err)
        return err;
    struct aclsim__event *ev = aclsim__calloc(1, sizeof *ev);
    if (!ev)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating an event");
    pthread_mutex_init(&ev->lock, NULL);
    pthread_cond_init(&ev->done, NULL);
    atomic_init(&ev->refs, 1);
    ev->handle = aclsim__handle_new(ACLSIM_H_EVENT, ev);
    if (!ev->handle) {
        aclsim__event_unref(ev);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory creating an event");
    }
    pthread_mutex_lock(&live_lock);
    ev->next_live = live_events;
    if (live_events)
        live_events->prev_live = ev;
    live_events = ev;
    pthread_mutex_unlock(&live_lock);
    *event = ev->handle;
    return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
    static const char api[] = "aclrtDestroyEvent";
    ACLSIM_REQUIRE_INIT(api);
    aclError gate = aclsim__snapshot_check(api);
    if (gate)
        return gate;
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = event_of(event, "event", api, &err);
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

static aclError queue_event_task(aclrtEvent event, aclrtStream stream, int kind, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = event_of(event, "event", api, &err);
    if (!ev)
        return err;
    struct aclsim__sref s;
    if ((err = aclsim__stream_resolve(stream, api, NULL, &s))) {
        aclsim__event_unref(ev);
        return err;
    }
    struct aclsim__task t = {.kind = (uint8_t)kind, .u.event.event = ev};   /* takes our ref */
    /* A record gets a new sequence number; a wait waits for the latest record
     * made before it (none: it passes at once). The event lock cannot be held
     * over the submit (lock order is stream -> event). */
    pthread_mutex_lock(&ev->lock);
    t.u.event.seq = kind == ACLSIM_TASK_RECORD ? ++ev->recorded : ev->recorded;
    pthread_mutex_unlock(&ev->lock);
    if ((err = aclsim__submit(s, &t, api, NULL))) {
        if (kind == ACLSIM_TASK_RECORD)   /* the number is taken: retire it, unstamped */
            aclsim__event_complete(ev, t.u.event.seq, false);
        aclsim__event_unref(ev);
    }
    return err;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    return queue_event_task(event, stream, ACLSIM_TASK_RECORD, "aclrtRecordEvent");
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    return queue_event_task(event, stream, ACLSIM_TASK_WAIT, "aclrtStreamWaitEvent");
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    static const char api[] = "aclrtSynchronizeEvent";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = event_of(event, "event", api, &err);
    if (!ev)
        return err;
    pthread_mutex_lock(&ev->lock);
    uint64_t target = ev->recorded;   /* the latest record made before this call */
    while (!reached_locked(ev, target))
        pthread_cond_wait(&ev->done, &ev->lock);
    pthread_mutex_unlock(&ev->lock);
    aclsim__event_unref(ev);
    return ACL_SUCCESS;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    static const char api[] = "aclrtQueryEventStatus";
    ACLSIM_REQUIRE_INIT(api);
    if (!status)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "status is NULL");
    aclError err = ACL_SUCCESS;
    struct aclsim__event *ev = event_of(event, "event", api, &err);
    if (!ev)
        return err;
    pthread_mutex_lock(&ev->lock);
    bool done = ev->recorded > 0 && reached_locked(ev, ev->recorded);
    pthread_mutex_unlock(&ev->lock);
    aclsim__event_unref(ev);
    *status = done ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    return ACL_SUCCESS;
}

/* The timestamp of ev's latest record, if that record has run. */
static bool event_stamp(struct aclsim__event *ev, struct timespec *ts)
{
    pthread_mutex_lock(&ev->lock);
    bool ok = ev->recorded > 0 && ev->stamp_seq == ev->recorded;
    *ts = ev->stamp;
    pthread_mutex_unlock(&ev->lock);
    return ok;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    static const char api[] = "aclrtEventElapsedTime";
    ACLSIM_REQUIRE_INIT(api);
    if (!ms)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "ms is NULL");
    aclError err = ACL_SUCCESS;
    struct aclsim__event *a = event_of(startEvent, "startEvent", api, &err);
    if (!a)
        return err;
    struct aclsim__event *b = event_of(endEvent, "endEvent", api, &err);
    if (!b) {
        aclsim__event_unref(a);
        return err;
    }
    struct timespec ta, tb;
    bool a_ok = event_stamp(a, &ta), b_ok = event_stamp(b, &tb);
    aclsim__event_unref(a);
    aclsim__event_unref(b);
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
}
