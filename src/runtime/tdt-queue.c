/*
 * Shared queues (acl/acl_tdt_queue.h): the bounded message queue that
 * channels also use (THE KILL RULE in tdt.h), queues by id on the current
 * device, queue attributes, routes between queues (a bound route moves each
 * message of its source queue to its destination queues), and the process
 * grants, which CANN supports on no product.
 *
 * This file holds the queue itself (its waits, THE KILL RULE), the shared
 * queues by id and their messages, and the lifetime of everything tdt (device
 * reset, aclFinalize, fork). Queue attributes and the routes between queues
 * are in tdt-route.c: a message put into or taken from a shared queue is
 * forwarded there (aclsim__tdt_pump) when routes are bound. Shared: tdt.h.
 */
#include "tdt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t aclsim__tdt_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t left = PTHREAD_COND_INITIALIZER;   /* a waiter left a killed queue */

struct aclsim__tdtq *aclsim__tdt_queues;   /* shared queues, by qid */
static uint64_t finalized_session;    /* the last session aclFinalize tore down */

/* A thread blocked in await(). A host function (on a device worker) waiting
 * for a queue of another device would keep its own device's reset from ever
 * draining: the reset interrupts the waits of its workers. */
struct waiter {
    struct waiter *next;
    struct aclsim__tdtq *q;
    int32_t worker_device;   /* the device whose worker waits, or -1 */
    bool interrupted;
};
static struct waiter *waiting;
/* Devices being reset (from the start of the reset to their next open): the
 * host functions of such a device do not start to wait either. */
static bool closing[ACLSIM_MAX_DEVICES];
static uint32_t next_qid = 1;

/* ---- the queue ------------------------------------------------------------ */

struct aclsim__tdt_msg *aclsim__tdt_msg_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(struct aclsim__tdt_msg))
        return NULL;
    struct aclsim__tdt_msg *m = aclsim__malloc(sizeof *m + size);
    if (!m)
        return NULL;
    m->next = NULL;
    m->size = size;
    m->user_size = 0;
    memset(m->user, 0, sizeof m->user);
    return m;
}

struct aclsim__tdtq *aclsim__tdtq_new(int32_t device, const char *name, uint32_t depth)
{
    struct aclsim__tdtq *q = aclsim__calloc(1, sizeof *q);
    if (!q)
        return NULL;
    pthread_cond_init(&q->changed, NULL);
    q->device = device;
    q->depth = depth;
    snprintf(q->name, sizeof q->name, "%s", name ? name : "");
    return q;
}

void aclsim__tdtq_free(struct aclsim__tdtq *q)
{
    aclsim__tdtq_clean_locked(q);
    pthread_cond_destroy(&q->changed);
    free(q);
}

void aclsim__tdtq_kill_locked(struct aclsim__tdtq *q, aclError code, const char *why)
{
    if (!q->dead) {
        q->dead = code;
        snprintf(q->dead_why, sizeof q->dead_why, "%s", why);
    }
    pthread_cond_broadcast(&q->changed);
    while (q->waiters)
        pthread_cond_wait(&left, &aclsim__tdt_lock);
}

aclError aclsim__tdt_copy(const char *api, const char *name, void *dst, const void *src, size_t n,
                          bool into_user)
{
    const void *user = into_user ? dst : src;
    struct aclsim__heap_hold hold;
    aclError err = aclsim__hold_heaps(api, &hold, user, NULL);
    if (err)
        return err;
    err = aclsim__check_range(api, name, user, n, aclsim__classify(user));
    if (!err) {
        bool guard = into_user && aclsim__memory_write_begin();   /* value waits (wait.c) */
        memcpy(dst, src, n);
        aclsim__memory_write_end(guard);
    }
    aclsim__release_heaps(&hold);
    return err;
}

aclError aclsim__tdt_session_check_locked(uint64_t session, const char *api)
{
    return session <= finalized_session ? aclsim__not_initialized(api) : ACL_SUCCESS;
}

aclError aclsim__tdt_check_timeout(int32_t timeout, const char *api)
{
    if (timeout < -1)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "timeout %d is invalid: -1 (wait forever), 0 (do not wait) or a "
                            "number of milliseconds", (int)timeout);
    return ACL_SUCCESS;
}

static void describe(const struct aclsim__tdtq *q, char *buf, size_t len)
{
    if (q->qid)
        snprintf(buf, len, "queue %u (\"%s\", device %d, depth %u)", q->qid, q->name,
                 (int)q->device, q->depth);
    else
        snprintf(buf, len, "channel \"%s\" (device %d, capacity %u)", q->name, (int)q->device,
                 q->depth);
}

/* Waits (tdt_lock held) until q has room (put) or a message (!put). */
static aclError await(struct aclsim__tdtq *q, bool put, int32_t timeout, const char *api)
{
    struct timespec deadline;
    if (timeout > 0)
        aclsim__deadline_after(&deadline, timeout);
    bool expired = false;
    aclError err = ACL_SUCCESS;
    char what[200];
    struct waiter me = {waiting, q, aclsim__tls_device ? aclsim__tls_device->id : -1, false};
    waiting = &me;
    q->waiters++;
    for (;;) {
        if (q->dead) {
            err = aclsim__fail(q->dead, api, "%s", q->dead_why);
            break;
        }
        if (q->stopped) {
            describe(q, what, sizeof what);
            err = aclsim__fail(ACL_ERROR_FAILURE, api, "%s was stopped (acltdtStopChannel)", what);
            break;
        }
        if (put ? q->count < q->depth : q->head != NULL)
            break;
        if (timeout == 0 || expired) {
            describe(q, what, sizeof what);
            if (put)
                err = aclsim__fail(ACL_ERROR_RT_QUEUE_FULL, api, "%s is full%s", what,
                                   expired ? " (timed out)" : "");
            else
                err = aclsim__fail(ACL_ERROR_RT_QUEUE_EMPTY, api, "%s is empty%s", what,
                                   expired ? " (timed out)" : "");
            break;
        }
        if (me.interrupted || (me.worker_device >= 0 && closing[me.worker_device])) {
            err = aclsim__fail(ACL_ERROR_FAILURE, api,
                               "device %d is being reset: a host function of it stops waiting",
                               (int)me.worker_device);
            break;
        }
        int rc = timeout < 0 ? pthread_cond_wait(&q->changed, &aclsim__tdt_lock)
                             : pthread_cond_timedwait(&q->changed, &aclsim__tdt_lock, &deadline);
        if (rc == ETIMEDOUT)
            expired = true;
    }
    for (struct waiter **w = &waiting; *w; w = &(*w)->next)
        if (*w == &me) {
            *w = me.next;
            break;
        }
    if (--q->waiters == 0 && q->dead)
        pthread_cond_broadcast(&left);
    return err;
}

/* Appends m to q / takes q's head (there is one); wakes q's waiters. */
void aclsim__tdtq_append(struct aclsim__tdtq *q, struct aclsim__tdt_msg *m)
{
    m->next = NULL;
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    q->count++;
    pthread_cond_broadcast(&q->changed);
}

struct aclsim__tdt_msg *aclsim__tdtq_pop(struct aclsim__tdtq *q)
{
    struct aclsim__tdt_msg *m = q->head;
    q->head = m->next;
    if (!q->head)
        q->tail = NULL;
    q->count--;
    m->next = NULL;
    pthread_cond_broadcast(&q->changed);
    return m;
}

aclError aclsim__tdtq_put_locked(struct aclsim__tdtq *q, struct aclsim__tdt_msg *m,
                                 int32_t timeout, const char *api)
{
    aclError err = await(q, true, timeout, api);
    if (err)
        return err;
    aclsim__tdtq_append(q, m);
    if (q->qid && aclsim__tdt_has_routes())
        aclsim__tdt_pump();
    return ACL_SUCCESS;
}

aclError aclsim__tdtq_take_locked(struct aclsim__tdtq *q, int32_t timeout, size_t limit,
                                  size_t *need, struct aclsim__tdt_msg **out, const char *api)
{
    aclError err = await(q, false, timeout, api);
    if (err)
        return err;
    struct aclsim__tdt_msg *m = q->head;
    if (need)
        *need = m->size;
    if (m->size > limit) {
        char what[200];
        describe(q, what, sizeof what);
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "the next message of %s has %zu bytes, more than dataSize %zu: it "
                            "stays in the queue", what, m->size, limit);
    }
    *out = aclsim__tdtq_pop(q);
    if (aclsim__tdt_has_routes())
        aclsim__tdt_pump();
    return ACL_SUCCESS;
}

void aclsim__tdtq_clean_locked(struct aclsim__tdtq *q)
{
    while (q->head) {
        struct aclsim__tdt_msg *m = q->head;
        q->head = m->next;
        free(m);
    }
    q->tail = NULL;
    q->count = 0;
    pthread_cond_broadcast(&q->changed);
}

/* ---- queues by id ------------------------------------------------------------- */

struct aclsim__tdtq *aclsim__tdtq_find(int32_t device, uint32_t qid)
{
    for (struct aclsim__tdtq *q = aclsim__tdt_queues; q; q = q->next)
        if (q->qid == qid && q->device == device)
            return q;
    return NULL;
}

/* The calling thread's current device (107002 without a context). */
aclError aclsim__tdt_current_device(const char *api, int32_t *device)
{
    struct aclsim__context *ctx;
    aclError err = aclsim__current_context(api, &ctx);
    if (!err)
        *device = aclsim__context_device(ctx)->id;
    return err;
}

/* Entry steps of the qid functions: init, SoC, current device; then, with
 * tdt_lock held on success, the queue. */
static aclError lookup(uint32_t qid, const char *api, struct aclsim__tdtq **q)
{
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    int32_t device = -1;
    if (!err)
        err = aclsim__tdt_current_device(api, &device);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__tdt_lock);
    *q = aclsim__tdtq_find(device, qid);
    if (!*q) {
        pthread_mutex_unlock(&aclsim__tdt_lock);
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "qid %u is not a queue of device %d (never created with "
                            "acltdtCreateQueue there, or destroyed)", qid, (int)device);
    }
    return ACL_SUCCESS;
}

aclError acltdtCreateQueue(const acltdtQueueAttr *attr, uint32_t *qid)
{
    static const char api[] = "acltdtCreateQueue";
    ACLSIM_REQUIRE_INIT(api);
    if (!qid)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "qid is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    int32_t device = -1;
    if (!err)
        err = aclsim__tdt_current_device(api, &device);
    if (err)
        return err;
    uint32_t depth = attr ? attr->depth : ACLSIM_TDT_DEPTH_DEFAULT;
    if (depth < ACLSIM_TDT_DEPTH_MIN || depth > ACLSIM_TDT_DEPTH_MAX)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "queue depth %u is out of range [%u, %u]", depth,
                            ACLSIM_TDT_DEPTH_MIN, ACLSIM_TDT_DEPTH_MAX);
    struct aclsim__tdtq *q = aclsim__tdtq_new(device, attr ? attr->name : "", depth);
    if (!q)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    uint64_t session = aclsim__tdt_session();
    pthread_mutex_lock(&aclsim__tdt_lock);
    if ((err = aclsim__tdt_session_check_locked(session, api))) {
        pthread_mutex_unlock(&aclsim__tdt_lock);
        aclsim__tdtq_free(q);
        return err;
    }
    for (struct aclsim__tdtq *o = aclsim__tdt_queues; o && q->name[0]; o = o->next)
        if (o->device == device && strcmp(o->name, q->name) == 0) {
            uint32_t other = o->qid;
            pthread_mutex_unlock(&aclsim__tdt_lock);
            aclsim__tdtq_free(q);
            /* As CANN: queue names are unique on a device. */
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "queue name \"%s\" is taken on device %d (queue %u)",
                                attr->name, (int)device, other);
        }
    do
        q->qid = next_qid++;
    while (q->qid == 0 || aclsim__tdtq_find(device, q->qid));
    if (!q->name[0])   /* CANN names a queue without a name itself */
        snprintf(q->name, sizeof q->name, "queue-%u", q->qid);
    q->next = aclsim__tdt_queues;
    aclsim__tdt_queues = q;
    *qid = q->qid;
    pthread_mutex_unlock(&aclsim__tdt_lock);
    return ACL_SUCCESS;
}

static void unlink_queue(struct aclsim__tdtq *q)
{
    for (struct aclsim__tdtq **p = &aclsim__tdt_queues; *p; p = &(*p)->next)
        if (*p == q) {
            *p = q->next;
            return;
        }
}

aclError acltdtDestroyQueue(uint32_t qid)
{
    static const char api[] = "acltdtDestroyQueue";
    struct aclsim__tdtq *q;
    aclError err = lookup(qid, api, &q);
    if (err)
        return err;
    if (aclsim__tdt_routed(q)) {
        pthread_mutex_unlock(&aclsim__tdt_lock);
        return aclsim__fail(ACL_ERROR_FAILURE, api,
                            "queue %u has bound routes: unbind them first "
                            "(acltdtUnbindQueueRoutes)", qid);
    }
    unlink_queue(q);
    char why[256];
    snprintf(why, sizeof why, "queue %u was destroyed (acltdtDestroyQueue) while waiting", qid);
    aclsim__tdtq_kill_locked(q, ACL_ERROR_FAILURE, why);
    aclsim__tdtq_free(q);
    pthread_mutex_unlock(&aclsim__tdt_lock);
    return ACL_SUCCESS;
}

/* The argument checks of acltdtEnqueueData / acltdtDequeueData, in CANN's
 * order (ret: retDataSize, or anything non-NULL for an enqueue). */
static aclError check_data_args(const char *api, const void *data, const size_t *ret,
                                size_t dataSize, const void *userData, size_t userDataSize,
                                int32_t timeout)
{
    if (!data)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "data is NULL");
    if (!ret)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "retDataSize is NULL");
    if (dataSize == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataSize is 0: it must be positive");
    if (userDataSize > ACLSIM_TDT_USER_DATA)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "userDataSize %zu is more than %u bytes", userDataSize,
                            ACLSIM_TDT_USER_DATA);
    if (!userData && userDataSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "userData is NULL but userDataSize is %zu", userDataSize);
    return aclsim__tdt_check_timeout(timeout, api);
}

aclError acltdtEnqueueData(uint32_t qid, const void *data, size_t dataSize, const void *userData,
                           size_t userDataSize, int32_t timeout, uint32_t rsv)
{
    static const char api[] = "acltdtEnqueueData";
    (void)rsv;   /* reserved, as CANN */
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_data_args(api, data, &dataSize, dataSize, userData, userDataSize, timeout);
    if (err)
        return err;
    struct aclsim__tdt_msg *m = aclsim__tdt_msg_new(dataSize);
    if (!m)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory (%zu bytes)", dataSize);
    if ((err = aclsim__tdt_copy(api, "data", m->data, data, dataSize, false))) {
        free(m);
        return err;
    }
    if (userDataSize)
        memcpy(m->user, userData, userDataSize);
    m->user_size = userDataSize;
    struct aclsim__tdtq *q;
    err = lookup(qid, api, &q);
    if (err) {
        free(m);
        return err;
    }
    err = aclsim__tdtq_put_locked(q, m, timeout, api);
    pthread_mutex_unlock(&aclsim__tdt_lock);
    if (err)
        free(m);
    return err;
}

aclError acltdtDequeueData(uint32_t qid, void *data, size_t dataSize, size_t *retDataSize,
                           void *userData, size_t userDataSize, int32_t timeout)
{
    static const char api[] = "acltdtDequeueData";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = check_data_args(api, data, retDataSize, dataSize, userData, userDataSize,
                                   timeout);
    /* The destination as declared, before anything is taken: a bad range loses nothing. */
    if (!err)
        err = aclsim__check_range(api, "data", data, dataSize, aclsim__classify(data));
    if (err)
        return err;
    struct aclsim__tdtq *q;
    err = lookup(qid, api, &q);
    if (err)
        return err;
    struct aclsim__tdt_msg *m = NULL;
    size_t need = 0;
    err = aclsim__tdtq_take_locked(q, timeout, dataSize, &need, &m, api);
    pthread_mutex_unlock(&aclsim__tdt_lock);
    if (err) {
        if (need)
            *retDataSize = need;
        return err;
    }
    *retDataSize = m->size;
    err = aclsim__tdt_copy(api, "data", data, m->data, m->size, true);
    if (userDataSize)
        memcpy(userData, m->user, userDataSize);
    free(m);
    return err;
}

/* acltdtEnqueue / acltdtDequeue / grants: CANN's product tables support them
 * on no product (its host implementation answers "not supported"). */
static aclError nowhere(const char *api, const char *what)
{
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "not supported: CANN supports %s on no product", what);
}

aclError acltdtEnqueue(uint32_t qid, acltdtBuf buf, int32_t timeout)
{
    (void)qid;
    (void)timeout;
    ACLSIM_REQUIRE_INIT("acltdtEnqueue");
    if (!buf)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "acltdtEnqueue", "buf is NULL");
    return nowhere("acltdtEnqueue", "enqueueing shared buffers (use acltdtEnqueueData)");
}

aclError acltdtDequeue(uint32_t qid, acltdtBuf *buf, int32_t timeout)
{
    (void)qid;
    (void)timeout;
    ACLSIM_REQUIRE_INIT("acltdtDequeue");
    if (!buf)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "acltdtDequeue", "buf is NULL");
    return nowhere("acltdtDequeue", "dequeueing shared buffers (use acltdtDequeueData)");
}

aclError acltdtGrantQueue(uint32_t qid, int32_t pid, uint32_t permission, int32_t timeout)
{
    (void)qid;
    (void)pid;
    (void)permission;
    (void)timeout;
    ACLSIM_REQUIRE_INIT("acltdtGrantQueue");
    return nowhere("acltdtGrantQueue", "granting queues to other processes");
}

aclError acltdtAttachQueue(uint32_t qid, int32_t timeout, uint32_t *permission)
{
    (void)qid;
    (void)timeout;
    ACLSIM_REQUIRE_INIT("acltdtAttachQueue");
    if (!permission)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "acltdtAttachQueue", "permission is NULL");
    return nowhere("acltdtAttachQueue", "attaching queues granted by other processes");
}

/* ---- lifetime ------------------------------------------------------------------- */

static void drop_queues(int32_t device, const char *why_fmt)
{
    for (struct aclsim__tdtq **p = &aclsim__tdt_queues; *p;) {
        struct aclsim__tdtq *q = *p;
        if (device >= 0 && q->device != device) {
            p = &q->next;
            continue;
        }
        *p = q->next;
        aclsim__tdt_routes_drop(q);
        char why[256];
        snprintf(why, sizeof why, why_fmt, q->qid, (int)q->device);
        aclsim__tdtq_kill_locked(q, ACL_ERROR_FAILURE, why);
        aclsim__tdtq_free(q);
    }
}

void aclsim__tdt_device_closed(int32_t device)
{
    pthread_mutex_lock(&aclsim__tdt_lock);
    closing[device] = true;
    for (struct waiter *w = waiting; w; w = w->next)
        if (w->worker_device == device) {
            w->interrupted = true;
            pthread_cond_broadcast(&w->q->changed);
        }
    drop_queues(device, "queue %u was destroyed by the reset of device %d");
    aclsim__tdt_channels_device_closed_locked(device);
    pthread_mutex_unlock(&aclsim__tdt_lock);
}

void aclsim__tdt_device_opened(int32_t device)
{
    pthread_mutex_lock(&aclsim__tdt_lock);
    closing[device] = false;
    pthread_mutex_unlock(&aclsim__tdt_lock);
}

void aclsim__tdt_finalize(void)
{
    pthread_mutex_lock(&aclsim__tdt_lock);
    finalized_session = aclsim__tdt_session();
    drop_queues(-1, "queue %u (device %d) was destroyed by aclFinalize");
    aclsim__tdt_routes_free();
    next_qid = 1;
    aclsim__tdt_channels_finalize_locked();
    pthread_mutex_unlock(&aclsim__tdt_lock);
    aclsim__mbufs_finalize();
}

void aclsim__tdt_fork_prepare(void)
{
    pthread_mutex_lock(&aclsim__tdt_lock);
    aclsim__mbufs_fork_prepare();
}

void aclsim__tdt_fork_parent(void)
{
    aclsim__mbufs_fork_parent();
    pthread_mutex_unlock(&aclsim__tdt_lock);
}

void aclsim__tdt_forget_after_fork(void)
{
    /* No thread of the parent exists here: nobody waits on any queue. */
    pthread_mutex_init(&aclsim__tdt_lock, NULL);
    pthread_cond_init(&left, NULL);
    for (struct aclsim__tdtq *q = aclsim__tdt_queues; q;) {
        struct aclsim__tdtq *next = q->next;
        q->waiters = 0;
        pthread_cond_init(&q->changed, NULL);
        aclsim__tdtq_free(q);
        q = next;
    }
    aclsim__tdt_queues = NULL;
    waiting = NULL;
    memset(closing, 0, sizeof closing);
    aclsim__tdt_routes_free();
    next_qid = 1;
    aclsim__tdt_channels_forget_after_fork();
    aclsim__mbufs_forget_after_fork();
}
