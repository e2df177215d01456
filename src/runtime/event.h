/*
 * Events: the event object and the helpers its files share.
 *
 *   event.c        creation and destruction, records, resets, stream waits
 *                  (the wait and reset tasks), completion of records, the
 *                  accessors for model runtime instances, aclFinalize, fork
 *   event-query.c  the host side: aclrtSynchronizeEvent*, aclrtQueryEvent*,
 *                  elapsed time, timestamps, event ids, aclrtGetEventAvailNum
 *   event-ipc.c    IPC events: their record and wait tasks (the records live
 *                  in ipc.c's shared slot), aclrtIpcGetEventHandle and
 *                  aclrtIpcOpenEventHandle
 *
 * Locking: each event has its own lock (ev->lock; lock order stream ->
 * event, so it is never held over a submit); live_lock (event.c) guards the
 * list of live events and makes a handle lookup and its reference one step.
 */
#ifndef ACLSIM_EVENT_H
#define ACLSIM_EVENT_H

#include "internal.h"

/* CANN's runtime flags: ACL_EVENT_* plus DDSYNC, which aclrtCreateEvent's
 * events carry (RT_EVENT_DEFAULT = DDSYNC | TIME_LINE | STREAM_MARK). */
#define EV_DDSYNC 0x04u
#define EV_DEFAULT (EV_DDSYNC | ACL_EVENT_TIME_LINE | ACL_EVENT_CAPTURE_STREAM_PROGRESS)

struct aclsim__event {
    void *handle;
    pthread_mutex_t lock;
    pthread_cond_t done;            /* broadcast when a record finishes (monotonic clock) */
    uint64_t recorded;              /* sequence number of the latest record */
    /* The latest record already queued on its stream. A record takes its
     * number before it is queued (the event lock cannot be held over the
     * submit), so a stream wait samples this one, never a number still on
     * its way: otherwise two threads recording and waiting crosswise on two
     * streams could queue each wait ahead of the record the other waits for,
     * and both streams would wait forever. */
    uint64_t queued;
    /* Records finish out of order when they sit on different streams, and a
     * wait must wait for its own record, not for any later one: records
     * 1..done_upto have all finished, and done_after[] lists the finished
     * ones above that (few: only records racing on different streams). */
    uint64_t done_upto;
    uint64_t *done_after;
    uint32_t ndone_after, cap_done_after;
    uint64_t stamp_seq;             /* latest record with a timestamp, and its time */
    struct timespec stamp;
    struct aclsim__waitq waiters;   /* streams parked on a wait */
    atomic_uint refs;               /* handle + tasks + waiting host threads */
    struct aclsim__event *prev_live, *next_live;   /* live_events, under live_lock */
    /* Fixed at creation. */
    uint32_t flags;                 /* runtime flags (EV_DEFAULT for aclrtCreateEvent) */
    bool ex;                        /* aclrtCreateEventExWithFlag */
    int32_t device;                 /* where it was created */
    /* Under lock. */
    bool set;                       /* the hardware flag (not for ex events) */
    bool has_id;
    uint32_t id;
    int8_t record_flag, wait_flag;  /* -1 until the first record / wait fixes them */
    uint64_t waits_issued, waits_done;
    /* IPC events (ACL_EVENT_IPC, or opened from a handle): the records and
     * their completions live in the shared slot (ipc.c), where any process
     * that has the event records and waits; ipc_owner: this process created
     * it (destroying it closes the handle). Fixed at creation. */
    bool is_ipc, ipc_owner;
    struct aclsim__ipc_ref ipc;
};

/* event.c */
/* Resolves an event handle and takes a reference (dropped with
 * aclsim__event_unref); what names the argument in messages. */
struct aclsim__event *aclsim__event_of(aclrtEvent event, const char *what, const char *api,
                                       aclError *err);
/* Looks up event for api: init, NULL (100000), SoC (207000), handle (107017). */
struct aclsim__event *aclsim__event_for(aclrtEvent event, const char *api, aclError *err);
/* The SoC check every event function makes after its NULL checks. */
aclError aclsim__events_supported(const char *api);
/* Whether record seq of ev has finished. Caller holds ev->lock. */
bool aclsim__event_reached_locked(const struct aclsim__event *ev, uint64_t seq);
/* Gives ev an id if it has none (the caller holds ev->lock); 207007 when
 * its device has none left. */
aclError aclsim__event_take_id_locked(struct aclsim__event *ev, const char *api);
/* Events a device holds at most, and how many of device's hold ids now. */
uint32_t aclsim__event_limit(void);
uint32_t aclsim__event_ids_used(int32_t device);
/* Makes an event; opened: an IPC event another process shared
 * (aclrtIpcOpenEventHandle); ACL_EVENT_IPC without it: exported now. */
aclError aclsim__event_create(aclrtEvent *event, uint32_t flags, bool ex,
                              const struct aclsim__ipc_ref *opened, const char *api);
/* The release of a record task / of a wait task (counts it done). */
void aclsim__event_release_task(struct aclsim__task *t);
void aclsim__event_wait_release(struct aclsim__task *t);

/* event-ipc.c */
extern const struct aclsim__wait_ops aclsim__event_ipc_wait_ops;
/* An IPC event's record on s (the task takes the caller's reference). */
aclError aclsim__event_ipc_record(struct aclsim__event *ev, struct aclsim__sref s, const char *api);

#endif /* ACLSIM_EVENT_H */
