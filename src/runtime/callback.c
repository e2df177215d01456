/*
 * Host code run for streams.
 *
 * aclrtLaunchHostFunc: a host function run by a device worker, in stream
 * order. aclrtLaunchCallback: a callback run by the user's own thread, the
 * one subscribed to the stream with aclrtSubscribeReport, when that thread
 * calls aclrtProcessReport; with ACL_CALLBACK_BLOCK the stream holds until
 * the callback has returned. aclrtSubscribeHostFunc (IPV350) does the same
 * for the host functions of a stream: they run on the subscribed thread in
 * aclrtProcessHostFunc.
 *
 * A subscription ties (stream, its epoch) to a mailbox: one per (thread id,
 * kind). When the stream's callback task runs, the worker posts a report to
 * the mailbox; a blocking one waits until the thread has run it. All of it
 * is under one lock (cb_lock); user code runs without it.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { KIND_REPORT, KIND_HOST_FUNC };
enum { R_QUEUED, R_TAKEN, R_DONE, R_DROPPED };

#define MAX_THREADS 1024        /* subscribed threads, as CANN */
#define DISCARD_POLL_MS 5       /* a blocked worker looks for an abort/reset this often */

struct report {
    struct report *next;
    void (*fn)(void *);
    void *data;
    bool block;
    int kind;
    struct aclsim__stream *s;   /* the stream it was launched on, and its epoch */
    uint32_t epoch;
    int state;                  /* R_*, under cb_lock */
};

struct mailbox {
    struct mailbox *next;
    uint64_t thread;
    int kind;
    int32_t device;             /* all its streams are on one device */
    uint32_t nsubs;
    uint32_t waiters;           /* threads in aclrtProcess* on it */
    bool dead;                  /* unsubscribed from everything: freed by the last waiter */
    struct report *head, *tail;
    pthread_cond_t ready;
};

struct sub {
    struct sub *next;
    struct aclsim__stream *s;
    uint32_t epoch;
    int kind;
    struct mailbox *mb;
};

static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cb_done = PTHREAD_COND_INITIALIZER;   /* a blocking report finished */
static struct mailbox *mailboxes;
static struct sub *subs;
static uint32_t nmailboxes;
static atomic_uint host_func_subs;   /* lets aclrtLaunchHostFunc skip the lookup */

static const char *const kind_api[] = {"aclrtSubscribeReport", "aclrtSubscribeHostFunc"};

/* A subscription whose stream was destroyed (or recycled) since. */
static bool sub_stale(const struct sub *x)
{
    return atomic_load(&x->s->epoch) != x->epoch;
}

static struct sub *find_sub(struct aclsim__stream *s, uint32_t epoch, int kind)
{
    for (struct sub *x = subs; x; x = x->next)
        if (x->s == s && x->epoch == epoch && x->kind == kind)
            return x;
    return NULL;
}

static struct mailbox *find_mailbox(uint64_t thread, int kind)
{
    for (struct mailbox *m = mailboxes; m; m = m->next)
        if (m->thread == thread && m->kind == kind && !m->dead)
            return m;
    return NULL;
}

/* The calling thread's mailbox: its pthread_t or its kernel thread id, either
 * of which a program may have subscribed. */
static struct mailbox *own_mailbox(int kind)
{
    struct mailbox *m = find_mailbox((uint64_t)pthread_self(), kind);
    return m ? m : find_mailbox((uint64_t)gettid(), kind);
}

/* Takes the reports of s out of m (not yet taken by its thread): a blocking
 * one is marked dropped (its worker frees it), others are freed. */
static void drop_reports(struct mailbox *m, const struct aclsim__stream *s)
{
    struct report **p = &m->head, *last = NULL;
    while (*p) {
        struct report *r = *p;
        if (!s || r->s == s) {
            *p = r->next;
            if (r->block) {
                r->state = R_DROPPED;
                pthread_cond_broadcast(&cb_done);
            } else {
                free(r);
            }
        } else {
            last = r;
            p = &r->next;
        }
    }
    m->tail = last;
}

static void mailbox_release(struct mailbox *m)
{
    for (struct mailbox **p = &mailboxes; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    nmailboxes--;
    drop_reports(m, NULL);
    m->dead = true;
    if (m->waiters) {
        pthread_cond_broadcast(&m->ready);   /* the last waiter frees it */
    } else {
        pthread_cond_destroy(&m->ready);
        free(m);
    }
}

static void sub_remove(struct sub *x)
{
    for (struct sub **p = &subs; *p; p = &(*p)->next)
        if (*p == x) {
            *p = x->next;
            break;
        }
    if (x->kind == KIND_HOST_FUNC)
        atomic_fetch_sub(&host_func_subs, 1);
    struct mailbox *m = x->mb;
    drop_reports(m, x->s);
    if (--m->nsubs == 0)
        mailbox_release(m);
    free(x);
}

/* Forgets subscriptions of streams destroyed since. Caller holds cb_lock. */
static void purge_stale(void)
{
    for (struct sub *x = subs, *next; x; x = next) {
        next = x->next;
        if (sub_stale(x))
            sub_remove(x);
    }
}

static aclError subscribe(uint64_t thread, aclrtStream stream, int kind, const char *api)
{
    struct aclsim__sref ref;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &ref);
    if (err)
        return err;
    int32_t device = ref.s->device->id;
    pthread_mutex_lock(&cb_lock);
    purge_stale();
    struct mailbox *m = find_mailbox(thread, kind);
    if (find_sub(ref.s, ref.epoch, kind)) {
        err = aclsim__fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, api,
                           "stream %p already has a subscribed thread (one thread per stream)",
                           stream);
    } else if (m && m->device != device) {
        err = aclsim__fail(ACL_ERROR_RT_THREAD_SUBSCRIBE, api,
                           "thread %llu is subscribed to streams of device %d; one thread "
                           "serves streams of one device only (this stream is on device %d)",
                           (unsigned long long)thread, m->device, device);
    } else if (!m && nmailboxes >= MAX_THREADS) {
        err = aclsim__fail(ACL_ERROR_RT_THREAD_SUBSCRIBE, api,
                           "%u threads are subscribed already, the most CANN supports",
                           nmailboxes);
    } else {
        struct sub *x = aclsim__calloc(1, sizeof *x);
        if (x && !m && (m = aclsim__calloc(1, sizeof *m))) {
            m->thread = thread;
            m->kind = kind;
            m->device = device;
            pthread_cond_init(&m->ready, NULL);
            m->next = mailboxes;
            mailboxes = m;
            nmailboxes++;
        }
        if (!x || !m) {
            free(x);
            err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory subscribing a thread");
        } else {
            *x = (struct sub){subs, ref.s, ref.epoch, kind, m};
            subs = x;
            m->nsubs++;
            if (kind == KIND_HOST_FUNC)
                atomic_fetch_add(&host_func_subs, 1);
        }
    }
    pthread_mutex_unlock(&cb_lock);
    return err;
}

static aclError unsubscribe(uint64_t thread, aclrtStream stream, int kind, const char *api)
{
    struct aclsim__sref ref;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &ref);
    if (err)
        return err;
    pthread_mutex_lock(&cb_lock);
    struct sub *x = find_sub(ref.s, ref.epoch, kind);
    if (!x)
        err = aclsim__fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, api,
                           "stream %p has no subscribed thread (see %s)", stream, kind_api[kind]);
    else if (x->mb->thread != thread)
        err = aclsim__fail(ACL_ERROR_RT_THREAD_SUBSCRIBE, api,
                           "stream %p is subscribed to thread %llu, not to thread %llu", stream,
                           (unsigned long long)x->mb->thread, (unsigned long long)thread);
    else
        sub_remove(x);
    pthread_mutex_unlock(&cb_lock);
    return err;
}

/* The callback task, on a device worker: posts the report to the subscribed
 * thread and, if it blocks, holds the stream until that thread has run it.
 * An abort, forced reset or aclFinalize (the stream discards) ends the wait:
 * a report its thread has not taken yet is dropped. */
static void run_report(void *arg)
{
    struct report *r = arg;
    pthread_mutex_lock(&cb_lock);
    struct sub *x = find_sub(r->s, r->epoch, r->kind);
    if (!x) {
        pthread_mutex_unlock(&cb_lock);
        aclsim__log(ACLSIM_LOG_WARNING, "%s: a callback was dropped: its stream has no "
                    "subscribed thread any more", kind_api[r->kind]);
        free(r);
        return;
    }
    struct mailbox *m = x->mb;
    r->next = NULL;
    r->state = R_QUEUED;
    if (m->tail)
        m->tail->next = r;
    else
        m->head = r;
    m->tail = r;
    pthread_cond_broadcast(&m->ready);
    if (!r->block) {
        pthread_mutex_unlock(&cb_lock);
        return;   /* the thread frees it */
    }
    while (r->state == R_QUEUED || r->state == R_TAKEN) {
        if (r->state == R_QUEUED && atomic_load(&r->s->discard)) {
            /* still queued: take it back (find the mailbox again: it may have changed) */
            for (struct mailbox *mb = mailboxes; mb; mb = mb->next) {
                struct report **p = &mb->head, *last = NULL;
                for (; *p; last = *p, p = &(*p)->next)
                    if (*p == r) {
                        *p = r->next;
                        if (mb->tail == r)
                            mb->tail = last;
                        break;
                    }
            }
            r->state = R_DROPPED;
            break;
        }
        struct timespec ts;
        aclsim__deadline_after(&ts, DISCARD_POLL_MS);
        pthread_cond_timedwait(&cb_done, &cb_lock, &ts);
    }
    pthread_mutex_unlock(&cb_lock);
    free(r);
}

static void drop_report(void *arg)
{
    free(arg);
}

/* Queues a callback task of kind on the resolved stream. */
static aclError launch(struct aclsim__sref ref, void (*fn)(void *), void *data, bool block,
                       int kind, const char *api)
{
    struct report *r = aclsim__calloc(1, sizeof *r);
    if (!r)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory queuing a callback");
    *r = (struct report){.fn = fn, .data = data, .block = block, .kind = kind, .s = ref.s,
                         .epoch = ref.epoch};
    struct aclsim__task t = {.kind = ACLSIM_TASK_CALLBACK, .u.cb = {run_report, drop_report, r}};
    aclError err = aclsim__submit(ref, &t, api, NULL);
    if (err)
        free(r);
    return err;
}

/* aclrtProcessReport / aclrtProcessHostFunc: waits up to timeout ms for the
 * calling thread's reports, then runs every one that is there. */
static aclError process(int32_t timeout, int kind, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (timeout < -1 || timeout == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "timeout %d is invalid: -1 (wait forever) or a positive number of "
                            "milliseconds", timeout);
    aclError err = kind == KIND_HOST_FUNC ? aclsim__soc_check(api, ACLSIM_FAMILIES(IPV)) : 0;
    if (err)
        return err;
    pthread_mutex_lock(&cb_lock);
    struct mailbox *m = own_mailbox(kind);
    if (!m) {
        pthread_mutex_unlock(&cb_lock);
        return aclsim__fail(ACL_ERROR_RT_THREAD_SUBSCRIBE, api,
                            "the calling thread is not subscribed to any stream (see %s)",
                            kind_api[kind]);
    }
    struct timespec ts;
    if (timeout > 0)
        aclsim__deadline_after(&ts, timeout);
    m->waiters++;
    int rc = 0;
    while (!m->head && !m->dead && rc != ETIMEDOUT) {
        if (timeout < 0)
            pthread_cond_wait(&m->ready, &cb_lock);
        else
            rc = pthread_cond_timedwait(&m->ready, &cb_lock, &ts);
    }
    m->waiters--;
    if (m->dead) {
        if (!m->waiters) {
            pthread_cond_destroy(&m->ready);
            free(m);
        }
        pthread_mutex_unlock(&cb_lock);
        return aclsim__fail(ACL_ERROR_RT_THREAD_SUBSCRIBE, api,
                            "the calling thread was unsubscribed (or the runtime finalized) "
                            "while it waited");
    }
    if (!m->head) {
        pthread_mutex_unlock(&cb_lock);
        return aclsim__fail(ACL_ERROR_RT_REPORT_TIMEOUT, api,
                            "no callback arrived within %d ms", timeout);
    }
    struct report *batch = m->head;
    m->head = m->tail = NULL;
    for (struct report *r = batch; r; r = r->next)
        r->state = R_TAKEN;
    pthread_mutex_unlock(&cb_lock);
    while (batch) {
        struct report *r = batch;
        batch = r->next;
        if (r->block) {
            /* Its stream waits for it: a wait for that stream (or its device)
             * from the callback is refused (507000) instead of deadlocking. */
            struct aclsim__stream *was_stream = aclsim__tls_stream;
            struct aclsim__device *was_device = aclsim__tls_device;
            aclsim__tls_stream = r->s;
            aclsim__tls_device = r->s->device;
            r->fn(r->data);
            aclsim__tls_stream = was_stream;
            aclsim__tls_device = was_device;
        } else {
            r->fn(r->data);
        }
        if (r->block) {
            pthread_mutex_lock(&cb_lock);
            r->state = R_DONE;   /* its worker frees it */
            pthread_cond_broadcast(&cb_done);
            pthread_mutex_unlock(&cb_lock);
        } else {
            free(r);
        }
    }
    return ACL_SUCCESS;
}

void aclsim__callbacks_finalize(void)
{
    pthread_mutex_lock(&cb_lock);
    while (subs)
        sub_remove(subs);   /* releases every mailbox with it */
    pthread_mutex_unlock(&cb_lock);
}

/* ---- API ------------------------------------------------------------------- */

/* The shared checks of the launch functions: fn, then the stream. */
static aclError launch_checks(void (*fn)(void *), aclrtStream stream, const char *api,
                              struct aclsim__sref *s)
{
    if (!fn)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "fn is NULL");
    return aclsim__stream_resolve(stream, api, NULL, s);
}

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)
{
    static const char api[] = "aclrtLaunchHostFunc";
    ACLSIM_REQUIRE_INIT(api);
    struct aclsim__sref s;
    aclError err = launch_checks(fn, stream, api, &s);
    if (err)
        return err;
    if (ACLSIM_UNLIKELY(atomic_load_explicit(&host_func_subs, memory_order_relaxed))) {
        /* aclrtSubscribeHostFunc: this stream's host functions may belong to a thread */
        pthread_mutex_lock(&cb_lock);
        bool routed = find_sub(s.s, s.epoch, KIND_HOST_FUNC) != NULL;
        pthread_mutex_unlock(&cb_lock);
        if (routed)
            return launch(s, fn, args, true, KIND_HOST_FUNC, api);
    }
    struct aclsim__task t = {.kind = ACLSIM_TASK_HOST_FUNC, .u.host = {fn, args}};
    return aclsim__submit(s, &t, api, NULL);
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    ACLSIM_REQUIRE_INIT("aclrtSubscribeReport");
    return subscribe(threadId, stream, KIND_REPORT, "aclrtSubscribeReport");
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    ACLSIM_REQUIRE_INIT("aclrtUnSubscribeReport");
    return unsubscribe(threadId, stream, KIND_REPORT, "aclrtUnSubscribeReport");
}

aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
                             aclrtStream stream)
{
    static const char api[] = "aclrtLaunchCallback";
    ACLSIM_REQUIRE_INIT(api);
    if (blockType != ACL_CALLBACK_BLOCK && blockType != ACL_CALLBACK_NO_BLOCK)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "blockType %d is invalid: ACL_CALLBACK_NO_BLOCK (0) or "
                            "ACL_CALLBACK_BLOCK (1)", (int)blockType);
    struct aclsim__sref s;
    aclError err = launch_checks(fn, stream, api, &s);
    if (err)
        return err;
    pthread_mutex_lock(&cb_lock);
    bool subscribed = find_sub(s.s, s.epoch, KIND_REPORT) != NULL;
    pthread_mutex_unlock(&cb_lock);
    if (!subscribed)
        return aclsim__fail(ACL_ERROR_RT_STREAM_NO_CB_REG, api,
                            "stream %p has no thread to run callbacks: call aclrtSubscribeReport "
                            "first", stream);
    return launch(s, fn, userData, blockType == ACL_CALLBACK_BLOCK, KIND_REPORT, api);
}

aclError aclrtProcessReport(int32_t timeout)
{
    return process(timeout, KIND_REPORT, "aclrtProcessReport");
}

/* The host-function subscriptions exist on IPV350 only (CANN's support table). */
static aclError host_func_checks(aclrtStream exeStream, const char *api)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!exeStream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "exeStream is NULL (the default stream cannot be subscribed)");
    return aclsim__soc_check(api, ACLSIM_FAMILIES(IPV));
}

aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)
{
    static const char api[] = "aclrtSubscribeHostFunc";
    aclError err = host_func_checks(exeStream, api);
    return err ? err : subscribe(hostFuncThreadId, exeStream, KIND_HOST_FUNC, api);
}

aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)
{
    static const char api[] = "aclrtUnSubscribeHostFunc";
    aclError err = host_func_checks(exeStream, api);
    return err ? err : unsubscribe(hostFuncThreadId, exeStream, KIND_HOST_FUNC, api);
}

aclError aclrtProcessHostFunc(int32_t timeout)
{
    return process(timeout, KIND_HOST_FUNC, "aclrtProcessHostFunc");
}

/* fork() child: new locks; the subscriptions of the parent's session go
 * (their threads do not exist here; nobody waits on a mailbox). */
void aclsim__callbacks_forget_after_fork(void)
{
    pthread_mutex_init(&cb_lock, NULL);
    pthread_cond_init(&cb_done, NULL);
    while (subs) {
        struct sub *x = subs;
        subs = x->next;
        free(x);
    }
    while (mailboxes) {
        struct mailbox *m = mailboxes;
        mailboxes = m->next;
        for (struct report *r = m->head, *next; r; r = next) {
            next = r->next;
            free(r);
        }
        free(m);   /* its condition variable is the parent's: not destroyed */
    }
    nmailboxes = 0;
    atomic_store(&host_func_subs, 0);
    aclsim__stream_state_forget_after_fork();
}
