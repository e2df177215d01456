/*
 * Data transmission internals shared by tdt-queue.c (the queue, shared
 * queues), tdt-route.c (queue attributes, routes), tdt-channel.c (tensor
 * channels), tdt-data.c (data items, datasets) and mbuf.c (shared buffers).
 *
 * A queue (struct aclsim__tdtq) is a bounded FIFO of messages. Everything
 * about queues, routes and channels is guarded by one lock, aclsim__tdt_lock
 * (a leaf: nothing else is locked under it, and the hooks of internal.h take
 * it under rt.lock). Blocking puts and takes wait on the queue's condition
 * variable with the lock released; every such wait ends when its timeout
 * passes, when there is room/a message, when the channel is stopped, or when
 * the queue is killed (destroyed, its device reset, aclFinalize).
 *
 * THE KILL RULE. A killed queue has dead set (the code its callers get) and
 * is never waited on again; aclsim__tdtq_kill_locked returns only once no
 * thread is inside a wait on it (waiters == 0), so the caller may then free
 * it. A waiter keeps waiters counted until it has read everything it needs
 * from the queue, and never touches it after releasing the lock.
 */
#ifndef ACLSIM_TDT_H
#define ACLSIM_TDT_H

#include "internal.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"

#define ACLSIM_TDT_USER_DATA 96u     /* private (user) data of a message / buffer */
#define ACLSIM_TDT_NAME_MAX 128u     /* queue and channel names, with the NUL (CANN's RT_MQ_MAX_NAME_LEN) */
#define ACLSIM_TDT_DEPTH_MIN 2u      /* queue depth / channel capacity range, as CANN's */
#define ACLSIM_TDT_DEPTH_MAX 8192u

struct aclsim__tdt_msg {
    struct aclsim__tdt_msg *next;
    size_t size;                               /* bytes in data */
    size_t user_size;                          /* bytes of user set at enqueue */
    unsigned char user[ACLSIM_TDT_USER_DATA];  /* zero beyond user_size */
    unsigned char data[];
};

struct aclsim__tdtq {
    struct aclsim__tdtq *next;     /* on its registry (queues by qid, or channels) */
    uint32_t qid;                  /* shared queues; 0 for a channel's queue */
    int32_t device;
    char name[ACLSIM_TDT_NAME_MAX];
    uint32_t depth, count;
    struct aclsim__tdt_msg *head, *tail;
    pthread_cond_t changed;        /* broadcast on every change */
    uint32_t waiters;              /* threads inside a wait on it */
    bool stopped;                  /* channels: acltdtStopChannel */
    aclError dead;                 /* THE KILL RULE: 0 while alive */
    char dead_why[256];
    /* channels (tdt-channel.c) */
    uint32_t refs;                 /* handles sharing it */
    uint8_t flavour;               /* enum in tdt-channel.c */
};

extern pthread_mutex_t aclsim__tdt_lock;

/* A call that makes a queue or channel reads the session (before taking
 * tdt_lock) and checks it with tdt_lock held: 100001 if aclFinalize tore that
 * session down meanwhile, so nothing is made into a finished session. */
static inline uint64_t aclsim__tdt_session(void)
{
    return atomic_load(&aclsim__rt.session);
}
aclError aclsim__tdt_session_check_locked(uint64_t session, const char *api);

/* A new queue (not on any registry), or NULL out of memory. */
struct aclsim__tdtq *aclsim__tdtq_new(int32_t device, const char *name, uint32_t depth);
/* Frees a queue nobody waits on (killed, or never shared) and its messages. */
void aclsim__tdtq_free(struct aclsim__tdtq *q);
/* THE KILL RULE: wakes every waiter with code and why; returns when none is left. */
void aclsim__tdtq_kill_locked(struct aclsim__tdtq *q, aclError code, const char *why);
/* Appends m (owned by the queue on success), waiting for room as timeout
 * says (-1 forever, 0 not at all, > 0 ms): 207014 when full. */
aclError aclsim__tdtq_put_locked(struct aclsim__tdtq *q, struct aclsim__tdt_msg *m,
                                 int32_t timeout, const char *api);
/* Waits for a message as timeout says (207013 when empty) and takes it. If
 * its size exceeds limit, *need gets the size and it stays (100000). */
aclError aclsim__tdtq_take_locked(struct aclsim__tdtq *q, int32_t timeout, size_t limit,
                                  size_t *need, struct aclsim__tdt_msg **out, const char *api);
/* Drops every message (waking blocked senders). */
void aclsim__tdtq_clean_locked(struct aclsim__tdtq *q);
/* A message of size data bytes (uninitialised) and no user data, or NULL. */
struct aclsim__tdt_msg *aclsim__tdt_msg_new(size_t size);
/* Copies n bytes between the program's memory (user: dst if into_user, else
 * src; host or device memory) and aclsim's, as a synchronous copy does: the
 * program's range checked where it can be (device, page-locked memory:
 * 100000 outside one allocation), the heaps held against a racing reset. */
aclError aclsim__tdt_copy(const char *api, const char *name, void *dst, const void *src, size_t n,
                          bool into_user);
/* 100000 unless timeout is -1 or >= 0. */
aclError aclsim__tdt_check_timeout(int32_t timeout, const char *api);

/* tdt-queue.c, tdt_lock held: the shared queues (by qid), the one of qid on a
 * device (or NULL), and appending m to q / taking q's head (there is one),
 * which wake q's waiters. */
extern struct aclsim__tdtq *aclsim__tdt_queues;
struct aclsim__tdtq *aclsim__tdtq_find(int32_t device, uint32_t qid);
void aclsim__tdtq_append(struct aclsim__tdtq *q, struct aclsim__tdt_msg *m);
struct aclsim__tdt_msg *aclsim__tdtq_pop(struct aclsim__tdtq *q);
/* The calling thread's current device (107002 without a context). */
aclError aclsim__tdt_current_device(const char *api, int32_t *device);

/* tdt-route.c: queue attributes (acltdtCreateQueue reads them), and the
 * routes bound between shared queues (tdt_lock held): whether any is bound,
 * forwarding messages along them while any can move, whether q has any, and
 * dropping those of q / all of them. */
struct tagMemQueueAttr {
    char name[ACLSIM_TDT_NAME_MAX];
    uint32_t depth;
};
#define ACLSIM_TDT_DEPTH_DEFAULT 8u   /* CANN's default queue depth */
bool aclsim__tdt_has_routes(void);
void aclsim__tdt_pump(void);
bool aclsim__tdt_routed(const struct aclsim__tdtq *q);
void aclsim__tdt_routes_drop(const struct aclsim__tdtq *q);
void aclsim__tdt_routes_free(void);

/* tdt-data.c: a dataset as one message, and back (into an empty dataset,
 * whose items then own their data). */
aclError aclsim__tdt_pack(const acltdtDataset *ds, struct aclsim__tdt_msg **out, const char *api);
aclError aclsim__tdt_unpack(const struct aclsim__tdt_msg *m, acltdtDataset *ds, const char *api);
/* 100000 unless ds is empty (a receive fills only an empty dataset, as CANN). */
aclError aclsim__tdt_check_empty(const acltdtDataset *ds, const char *api);

/* tdt-channel.c, tdt_lock held: kills the channels of a device / frees all. */
void aclsim__tdt_channels_device_closed_locked(int32_t device);
void aclsim__tdt_channels_finalize_locked(void);
void aclsim__tdt_channels_forget_after_fork(void);

/* mbuf.c: fork handlers of the buffer registry (THE FORK RULE). */
void aclsim__mbufs_fork_prepare(void);
void aclsim__mbufs_fork_parent(void);
void aclsim__mbufs_forget_after_fork(void);

#endif /* ACLSIM_TDT_H */
