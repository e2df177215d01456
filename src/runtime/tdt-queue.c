/*
 * Shared queues (acl/acl_tdt_queue.h): the bounded message queue that
 * channels also use (THE KILL RULE in tdt.h), queues by id on the current
 * device, queue attributes, routes between queues (a bound route moves each
 * message of its source queue to its destination queues), and the process
 * grants, which CANN supports on no product.
 *
 * Routes: a message enqueued into a queue with bound routes is forwarded,
 * whole, to every destination once all of them have room (a full destination
 * holds it back in the source, which then fills up: back-pressure). Forwarding
 * happens under tdt_lock right after every change that can allow it (pump()).
 * Bound routes never form a cycle (refused at bind), so forwarding ends.
 */
#include "tdt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t aclsim__tdt_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t left = PTHREAD_COND_INITIALIZER;   /* a waiter left a killed queue */

static struct aclsim__tdtq *queues;   /* shared queues, by qid */
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

struct route { uint32_t src, dst; int32_t device; };
static struct route *routes;          /* bound routes */
static size_t nroutes, cap_routes;

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

static void pump(void);

/* Appends m to q / takes q's head (there is one); wakes q's waiters. */
static void append(struct aclsim__tdtq *q, struct aclsim__tdt_msg *m)
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

static struct aclsim__tdt_msg *pop(struct aclsim__tdtq *q)
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
    append(q, m);
    if (q->qid && nroutes)
        pump();
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
    *out = pop(q);
    if (nroutes)
        pump();
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

static struct aclsim__tdtq *find(int32_t device, uint32_t qid)
{
    for (struct aclsim__tdtq *q = queues; q; q = q->next)
        if (q->qid == qid && q->device == device)
            return q;
    return NULL;
}

/* The calling thread's current device (107002 without a context). */
static aclError current_device(const char *api, int32_t *device)
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
        err = current_device(api, &device);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__tdt_lock);
    *q = find(device, qid);
    if (!*q) {
        pthread_mutex_unlock(&aclsim__tdt_lock);
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "qid %u is not a queue of device %d (never created with "
                            "acltdtCreateQueue there, or destroyed)", qid, (int)device);
    }
    return ACL_SUCCESS;
}

struct tagMemQueueAttr {
    char name[ACLSIM_TDT_NAME_MAX];
    uint32_t depth;
};

#define DEFAULT_DEPTH 8u   /* CANN's default queue depth */

aclError acltdtCreateQueue(const acltdtQueueAttr *attr, uint32_t *qid)
{
    static const char api[] = "acltdtCreateQueue";
    ACLSIM_REQUIRE_INIT(api);
    if (!qid)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "qid is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    int32_t device = -1;
    if (!err)
        err = current_device(api, &device);
    if (err)
        return err;
    uint32_t depth = attr ? attr->depth : DEFAULT_DEPTH;
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
    for (struct aclsim__tdtq *o = queues; o && q->name[0]; o = o->next)
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
    while (q->qid == 0 || find(device, q->qid));
    if (!q->name[0])   /* CANN names a queue without a name itself */
        snprintf(q->name, sizeof q->name, "queue-%u", q->qid);
    q->next = queues;
    queues = q;
    *qid = q->qid;
    pthread_mutex_unlock(&aclsim__tdt_lock);
    return ACL_SUCCESS;
}

static bool routed(const struct aclsim__tdtq *q)
{
    for (size_t i = 0; i < nroutes; i++)
        if (routes[i].device == q->device && (routes[i].src == q->qid || routes[i].dst == q->qid))
            return true;
    return false;
}

static void unlink_queue(struct aclsim__tdtq *q)
{
    for (struct aclsim__tdtq **p = &queues; *p; p = &(*p)->next)
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
    if (routed(q)) {
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

/* ---- attributes ----------------------------------------------------------------- */

/* CANN's parameter copy: len must cover the value exactly (a longer len is
 * refused by CANN too; aclsim also refuses a shorter one, which would copy
 * part of a value). */
static aclError check_len(const char *api, size_t len, size_t want, const char *what)
{
    if (len != want)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "len %zu is wrong for %s: it must be %zu",
                            len, what, want);
    return ACL_SUCCESS;
}

/* The plain host objects (attributes, routes, lists, queries): a zeroed one
 * (NULL with 200000 when out of memory), and its destruction (100000 for NULL). */
static void *new_object(size_t size, const char *api)
{
    void *p = aclsim__calloc(1, size);
    if (!p)
        aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    return p;
}

static aclError free_object(const void *p, const char *api, const char *name)
{
    if (!p)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
    free((void *)p);
    return ACL_SUCCESS;
}

/* A setter's copy of a value of size bytes (len checked); *set (if any) then true. */
static aclError copy_in(const char *api, const void *value, size_t len, void *dst, size_t size,
                        bool *set, const char *what)
{
    aclError err = check_len(api, len, size, what);
    if (err)
        return err;
    memcpy(dst, value, size);
    if (set)
        *set = true;
    return ACL_SUCCESS;
}

acltdtQueueAttr *acltdtCreateQueueAttr(void)
{
    acltdtQueueAttr *a = new_object(sizeof *a, "acltdtCreateQueueAttr");
    if (a)
        a->depth = DEFAULT_DEPTH;
    return a;
}

aclError acltdtDestroyQueueAttr(const acltdtQueueAttr *attr)
{
    return free_object(attr, "acltdtDestroyQueueAttr", "attr");
}

aclError acltdtSetQueueAttr(acltdtQueueAttr *attr, acltdtQueueAttrType type, size_t len,
                            const void *param)
{
    static const char api[] = "acltdtSetQueueAttr";
    if (!attr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "attr is NULL");
    if (!param)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "param is NULL");
    aclError err;
    switch (type) {
    case ACL_TDT_QUEUE_NAME_PTR: {
        if ((err = check_len(api, len, sizeof(char *), "ACL_TDT_QUEUE_NAME_PTR (a char *)")))
            return err;
        const char *name;
        memcpy(&name, param, sizeof name);
        if (!name)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "the name param points to is NULL");
        size_t n = strnlen(name, ACLSIM_TDT_NAME_MAX);
        if (n + 1 > ACLSIM_TDT_NAME_MAX)
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                                "the queue name is too long: at most %u characters",
                                ACLSIM_TDT_NAME_MAX - 1);
        memcpy(attr->name, name, n + 1);
        return ACL_SUCCESS;
    }
    case ACL_TDT_QUEUE_DEPTH_UINT32:
        return copy_in(api, param, len, &attr->depth, sizeof attr->depth, NULL,
                       "ACL_TDT_QUEUE_DEPTH_UINT32");
    default:
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "type %d is invalid: ACL_TDT_QUEUE_NAME_PTR or "
                            "ACL_TDT_QUEUE_DEPTH_UINT32", (int)type);
    }
}

/* CANN's "copy out": len must hold the value; *ret gets its size. */
static aclError copy_out(const char *api, const void *value, size_t size, void *param, size_t len,
                         size_t *ret)
{
    if (len < size)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "len %zu is too small: the value has %zu bytes", len, size);
    memcpy(param, value, size);
    *ret = size;
    return ACL_SUCCESS;
}

/* The NULL checks of a getter (object, param, paramRetSize), in CANN's order. */
static aclError check_getter(const char *api, const void *obj, const char *name, const void *param,
                             const size_t *ret)
{
    if (!obj)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", name);
    if (!param)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "param is NULL");
    if (!ret)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "paramRetSize is NULL");
    return ACL_SUCCESS;
}

aclError acltdtGetQueueAttr(const acltdtQueueAttr *attr, acltdtQueueAttrType type, size_t len,
                            size_t *paramRetSize, void *param)
{
    static const char api[] = "acltdtGetQueueAttr";
    aclError err = check_getter(api, attr, "attr", param, paramRetSize);
    if (err)
        return err;
    switch (type) {
    case ACL_TDT_QUEUE_NAME_PTR: {
        const char *name = attr->name;
        return copy_out(api, &name, sizeof name, param, len, paramRetSize);
    }
    case ACL_TDT_QUEUE_DEPTH_UINT32:
        return copy_out(api, &attr->depth, sizeof attr->depth, param, len, paramRetSize);
    default:
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "type %d is invalid: ACL_TDT_QUEUE_NAME_PTR or "
                            "ACL_TDT_QUEUE_DEPTH_UINT32", (int)type);
    }
}

/* ---- routes, route lists, queries ------------------------------------------------- */

struct acltdtQueueRoute {
    uint32_t srcId, dstId;
    int32_t status;
};
struct acltdtQueueRouteList {
    acltdtQueueRoute *items;
    size_t n, cap;
};
struct acltdtQueueRouteQueryInfo {
    int32_t mode;
    uint32_t srcId, dstId;
    bool has_mode, has_src, has_dst;
};

acltdtQueueRoute *acltdtCreateQueueRoute(uint32_t srcId, uint32_t dstId)
{
    acltdtQueueRoute *r = new_object(sizeof *r, "acltdtCreateQueueRoute");
    if (r) {
        r->srcId = srcId;
        r->dstId = dstId;
    }
    return r;
}

aclError acltdtDestroyQueueRoute(const acltdtQueueRoute *route)
{
    return free_object(route, "acltdtDestroyQueueRoute", "route");
}

aclError acltdtGetQueueRouteParam(const acltdtQueueRoute *route, acltdtQueueRouteParamType type,
                                  size_t len, size_t *paramRetSize, void *param)
{
    static const char api[] = "acltdtGetQueueRouteParam";
    aclError err = check_getter(api, route, "route", param, paramRetSize);
    if (err)
        return err;
    switch (type) {
    case ACL_TDT_QUEUE_ROUTE_SRC_UINT32:
        return copy_out(api, &route->srcId, sizeof(uint32_t), param, len, paramRetSize);
    case ACL_TDT_QUEUE_ROUTE_DST_UINT32:
        return copy_out(api, &route->dstId, sizeof(uint32_t), param, len, paramRetSize);
    case ACL_TDT_QUEUE_ROUTE_STATUS_INT32:
        return copy_out(api, &route->status, sizeof(int32_t), param, len, paramRetSize);
    default:
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "type %d is invalid: ACL_TDT_QUEUE_ROUTE_SRC_UINT32, _DST_UINT32 or "
                            "_STATUS_INT32", (int)type);
    }
}

acltdtQueueRouteList *acltdtCreateQueueRouteList(void)
{
    return new_object(sizeof(acltdtQueueRouteList), "acltdtCreateQueueRouteList");
}

aclError acltdtDestroyQueueRouteList(const acltdtQueueRouteList *routeList)
{
    if (routeList)
        free(routeList->items);
    return free_object(routeList, "acltdtDestroyQueueRouteList", "routeList");
}

static bool list_push(acltdtQueueRouteList *l, acltdtQueueRoute r)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        acltdtQueueRoute *items = aclsim__realloc(l->items, cap * sizeof *items);
        if (!items)
            return false;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = r;
    return true;
}

aclError acltdtAddQueueRoute(acltdtQueueRouteList *routeList, const acltdtQueueRoute *route)
{
    static const char api[] = "acltdtAddQueueRoute";
    if (!routeList)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "routeList is NULL");
    if (!route)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "route is NULL");
    if (!list_push(routeList, *route))
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    return ACL_SUCCESS;
}

aclError acltdtGetQueueRoute(const acltdtQueueRouteList *routeList, size_t index,
                             acltdtQueueRoute *route)
{
    static const char api[] = "acltdtGetQueueRoute";
    if (!routeList)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "routeList is NULL");
    if (!route)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "route is NULL");
    if (index >= routeList->n)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "index %zu must be less than the list's %zu routes", index,
                            routeList->n);
    *route = routeList->items[index];
    return ACL_SUCCESS;
}

size_t acltdtGetQueueRouteNum(const acltdtQueueRouteList *routeList)
{
    if (!routeList) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, "acltdtGetQueueRouteNum", "routeList is NULL");
        return 0;
    }
    return routeList->n;
}

acltdtQueueRouteQueryInfo *acltdtCreateQueueRouteQueryInfo(void)
{
    return new_object(sizeof(acltdtQueueRouteQueryInfo), "acltdtCreateQueueRouteQueryInfo");
}

aclError acltdtDestroyQueueRouteQueryInfo(const acltdtQueueRouteQueryInfo *info)
{
    return free_object(info, "acltdtDestroyQueueRouteQueryInfo", "info");
}

aclError acltdtSetQueueRouteQueryInfo(acltdtQueueRouteQueryInfo *param,
                                      acltdtQueueRouteQueryInfoParamType type, size_t len,
                                      const void *value)
{
    static const char api[] = "acltdtSetQueueRouteQueryInfo";
    if (!param)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "param is NULL");
    if (!value)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "value is NULL");
    switch (type) {
    case ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM:
        return copy_in(api, value, len, &param->mode, sizeof param->mode, &param->has_mode,
                       "ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM");
    case ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32:
        return copy_in(api, value, len, &param->srcId, sizeof param->srcId, &param->has_src,
                       "ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32");
    case ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32:
        return copy_in(api, value, len, &param->dstId, sizeof param->dstId, &param->has_dst,
                       "ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32");
    default:
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "type %d is invalid: ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, "
                            "_SRC_ID_UINT32 or _DST_ID_UINT32", (int)type);
    }
}

static long route_index(int32_t device, uint32_t src, uint32_t dst)
{
    for (size_t i = 0; i < nroutes; i++)
        if (routes[i].device == device && routes[i].src == src && routes[i].dst == dst)
            return (long)i;
    return -1;
}

/* Whether bound routes lead from a to b (depth-first; routes are acyclic). */
static bool reaches(int32_t device, uint32_t a, uint32_t b, unsigned depth)
{
    if (a == b)
        return true;
    if (depth > nroutes)
        return false;
    for (size_t i = 0; i < nroutes; i++)
        if (routes[i].device == device && routes[i].src == a &&
            reaches(device, routes[i].dst, b, depth + 1))
            return true;
    return false;
}

/* Forwards messages along bound routes while any can move (tdt_lock held). */
static void pump(void)
{
    bool moved = true;
    while (moved) {
        moved = false;
        for (struct aclsim__tdtq *q = queues; q; q = q->next) {
            while (q->head && !q->dead) {
                bool has = false, room = true;
                for (size_t i = 0; i < nroutes && room; i++) {
                    if (routes[i].device != q->device || routes[i].src != q->qid)
                        continue;
                    has = true;
                    struct aclsim__tdtq *d = find(q->device, routes[i].dst);
                    room = d && !d->dead && d->count < d->depth;
                }
                if (!has || !room)
                    break;
                /* Copies for every destination but the last, which takes the original. */
                struct aclsim__tdt_msg *m = q->head;
                size_t ndst = 0, done = 0;
                for (size_t i = 0; i < nroutes; i++)
                    ndst += routes[i].device == q->device && routes[i].src == q->qid;
                struct aclsim__tdt_msg *copies[ndst];
                bool ok = true;
                for (size_t k = 0; k + 1 < ndst; k++) {
                    copies[k] = aclsim__tdt_msg_new(m->size);
                    if (!copies[k]) {
                        for (size_t j = 0; j < k; j++)
                            free(copies[j]);
                        ok = false;
                        break;
                    }
                    memcpy(copies[k], m, sizeof *m + m->size);
                }
                if (!ok)
                    break;   /* out of memory: it stays in the source */
                copies[ndst - 1] = pop(q);
                for (size_t i = 0; i < nroutes; i++) {
                    if (routes[i].device != q->device || routes[i].src != q->qid)
                        continue;
                    append(find(q->device, routes[i].dst), copies[done++]);
                }
                moved = true;
            }
        }
    }
}

/* Binds (bind) or unbinds each route of l on the current device; each
 * route's status says what it is now. 500001 if any could not be. */
static aclError apply_routes(acltdtQueueRouteList *l, bool bind, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!l)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "qRouteList is NULL");
    int32_t device = -1;
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = current_device(api, &device);
    if (err)
        return err;
    char first[200] = "";
    size_t failed = 0;
    bool oom = false;
    pthread_mutex_lock(&aclsim__tdt_lock);
    for (size_t i = 0; i < l->n; i++) {
        acltdtQueueRoute *r = &l->items[i];
        long k = route_index(device, r->srcId, r->dstId);
        const char *why = NULL;
        if (!bind)
            why = k < 0 ? "is not bound" : NULL;
        else if (!find(device, r->srcId) || !find(device, r->dstId))
            why = "names no queue of the current device";
        else if (k >= 0)
            why = "is already bound";
        else if (reaches(device, r->dstId, r->srcId, 0))
            why = "would close a cycle";
        else if (nroutes == cap_routes) {
            size_t cap = cap_routes ? cap_routes * 2 : 16;
            struct route *n = aclsim__realloc(routes, cap * sizeof *n);
            if (n) {
                routes = n;
                cap_routes = cap;
            } else {
                why = "could not be bound: out of memory";
                oom = true;
            }
        }
        if (why) {
            if (bind)
                r->status = ACL_TDT_QUEUE_ROUTE_UNBIND;
            if (!failed++)
                snprintf(first, sizeof first, "route %zu (%u -> %u) %s", i, r->srcId, r->dstId,
                         why);
        } else if (bind) {
            routes[nroutes++] = (struct route){r->srcId, r->dstId, device};
            r->status = ACL_TDT_QUEUE_ROUTE_BIND;
        } else {
            routes[k] = routes[--nroutes];
            r->status = ACL_TDT_QUEUE_ROUTE_UNBIND;
        }
    }
    if (bind)
        pump();
    pthread_mutex_unlock(&aclsim__tdt_lock);
    if (failed)
        return aclsim__fail(oom ? ACL_ERROR_BAD_ALLOC : ACL_ERROR_FAILURE, api,
                            "%zu of %zu routes were not %s (their status says which); the "
                            "first: %s", failed, l->n, bind ? "bound" : "unbound", first);
    return ACL_SUCCESS;
}

aclError acltdtBindQueueRoutes(acltdtQueueRouteList *qRouteList)
{
    return apply_routes(qRouteList, true, "acltdtBindQueueRoutes");
}

aclError acltdtUnbindQueueRoutes(acltdtQueueRouteList *qRouteList)
{
    return apply_routes(qRouteList, false, "acltdtUnbindQueueRoutes");
}

aclError acltdtQueryQueueRoutes(const acltdtQueueRouteQueryInfo *queryInfo,
                                acltdtQueueRouteList *qRouteList)
{
    static const char api[] = "acltdtQueryQueueRoutes";
    ACLSIM_REQUIRE_INIT(api);
    if (!qRouteList)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "qRouteList is NULL");
    if (!queryInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "queryInfo is NULL");
    qRouteList->n = 0;   /* as CANN: cleared before the checks */
    if (!queryInfo->has_mode)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "queryInfo has no mode: set ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM with "
                            "acltdtSetQueueRouteQueryInfo");
    bool want_src = false, want_dst = false;
    switch (queryInfo->mode) {
    case ACL_TDT_QUEUE_ROUTE_QUERY_SRC: want_src = true; break;
    case ACL_TDT_QUEUE_ROUTE_QUERY_DST: want_dst = true; break;
    case ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST: want_src = want_dst = true; break;
    case ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL: break;
    default:
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "mode %d is invalid: ACL_TDT_QUEUE_ROUTE_QUERY_SRC, _DST, "
                            "_SRC_AND_DST or _ABNORMAL", (int)queryInfo->mode);
    }
    if ((want_src && !queryInfo->has_src) || (want_dst && !queryInfo->has_dst))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "the mode queries by %s queue, but queryInfo has no %s id: set it with "
                            "acltdtSetQueueRouteQueryInfo",
                            want_src && want_dst ? "source and destination"
                            : want_src           ? "source" : "destination",
                            want_src && !queryInfo->has_src ? "source" : "destination");
    int32_t device = -1;
    aclError err = aclsim__soc_check(api, ACLSIM_ALL_BUT_IPV);
    if (!err)
        err = current_device(api, &device);
    if (err)
        return err;
    if (queryInfo->mode == ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL)
        return ACL_SUCCESS;   /* a bound route never becomes abnormal here (docs/tdt.md) */
    pthread_mutex_lock(&aclsim__tdt_lock);
    for (size_t i = 0; i < nroutes && !err; i++) {
        const struct route *r = &routes[i];
        if (r->device != device || (want_src && r->src != queryInfo->srcId) ||
            (want_dst && r->dst != queryInfo->dstId))
            continue;
        if (!list_push(qRouteList, (acltdtQueueRoute){r->src, r->dst, ACL_TDT_QUEUE_ROUTE_BIND}))
            err = ACL_ERROR_BAD_ALLOC;
    }
    pthread_mutex_unlock(&aclsim__tdt_lock);
    if (err) {
        qRouteList->n = 0;
        return aclsim__fail(err, api, "out of memory");
    }
    return ACL_SUCCESS;
}

/* ---- lifetime ------------------------------------------------------------------- */

static void drop_queues(int32_t device, const char *why_fmt)
{
    for (struct aclsim__tdtq **p = &queues; *p;) {
        struct aclsim__tdtq *q = *p;
        if (device >= 0 && q->device != device) {
            p = &q->next;
            continue;
        }
        *p = q->next;
        for (size_t i = 0; i < nroutes;)
            if (routes[i].device == q->device && (routes[i].src == q->qid || routes[i].dst == q->qid))
                routes[i] = routes[--nroutes];
            else
                i++;
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
    free(routes);
    routes = NULL;
    nroutes = cap_routes = 0;
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
    for (struct aclsim__tdtq *q = queues; q;) {
        struct aclsim__tdtq *next = q->next;
        q->waiters = 0;
        pthread_cond_init(&q->changed, NULL);
        aclsim__tdtq_free(q);
        q = next;
    }
    queues = NULL;
    waiting = NULL;
    memset(closing, 0, sizeof closing);
    free(routes);
    routes = NULL;
    nroutes = cap_routes = 0;
    next_qid = 1;
    aclsim__tdt_channels_forget_after_fork();
    aclsim__mbufs_forget_after_fork();
}
