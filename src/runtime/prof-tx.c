/*
 * msproftx and mstx (acl/acl_prof.h, mstx/ms_tools_ext.h): stamps, marks and
 * ranges, training steps, and the mstx markers and domains. They are instants
 * and slices on the calling thread's track in the tracer (trace.c);
 * aclprofMarkEx, aclprofGetStepTimestamp and the mstx marks with a stream
 * also queue a mark task on that stream, which shows on the stream's track
 * when it runs (as does aclrtProfTrace, dump.c). The sessions that turn
 * msproftx on are in prof.c, what the profiling files share in prof.h.
 */
#include "prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STAMP_MSG_MAX 128     /* aclprofSetStampTraceMessage: below this */
#define MARKEX_MSG_MAX 127    /* aclprofMarkEx */
#define PUSH_DEPTH 128        /* nested aclprofPush / aclprofRangePushEx per thread */
#define RANGES_MAX 65536      /* open aclprofRangeStart / mstx ranges */
#define INTERN_MAX 65536      /* distinct mark-task messages */
#define STAMP_MAGIC 0x53544d50u

struct aclprofStepInfo { uint64_t start, end; };
struct stamp { uint32_t magic; char msg[STAMP_MSG_MAX]; struct stamp *next; };
struct range { uint64_t id, start; uint32_t thread; const char *domain; char msg[STAMP_MSG_MAX]; };

static struct stamp *stamps;             /* live stamps */
static struct range *ranges;             /* open ranges */
static size_t nranges, cap_ranges;
static uint64_t next_range = 1;

/* aclprofPush / aclprofRangePushEx, per thread: allocated by a thread's
 * first push (18 KiB would be too much static TLS for every thread), freed
 * when it exits. */
struct pushed { uint64_t start; bool ex; char msg[STAMP_MSG_MAX]; };
static _Thread_local struct pushed *tls_stack;
static _Thread_local uint32_t tls_depth;

void aclsim__tx_thread_exit(void)
{
    free(tls_stack);
    tls_stack = NULL;
    tls_depth = 0;
}

static const char tx_domain[] = "msproftx";
static const char mstx_domain[] = "mstx";

/* msproftx is on: aclprofStart with ACL_PROF_MSPROFTX, or ACLSIM_TRACE. */
static aclError tx_on(const char *api)
{
    if (aclsim__tracing(ACLSIM_TRACE_TX))
        return ACL_SUCCESS;
    return aclsim__fail(ACL_ERROR_PROF_NOT_RUN, api,
                        "msproftx is not collecting: call aclprofStart with a config that has "
                        "ACL_PROF_MSPROFTX (or set ACLSIM_TRACE) first");
}

/* ---- interned strings (mark tasks' labels live as long as the process) ---- */

pthread_mutex_t aclsim__prof_intern_lock = PTHREAD_MUTEX_INITIALIZER;
static struct interned { struct interned *next; char text[]; } *interned;
static size_t ninterned;

static const char *intern(const char *s, size_t n)
{
    pthread_mutex_lock(&aclsim__prof_intern_lock);
    struct interned *i = interned;
    while (i && (strncmp(i->text, s, n) != 0 || i->text[n] != 0))
        i = i->next;
    if (!i && ninterned < INTERN_MAX && (i = aclsim__malloc(sizeof *i + n + 1))) {
        memcpy(i->text, s, n);
        i->text[n] = 0;
        i->next = interned;
        interned = i;
        ninterned++;
    }
    pthread_mutex_unlock(&aclsim__prof_intern_lock);
    return i ? i->text : "mark";
}

/* Queues a mark task (a slice on the stream's track when it runs). */
static aclError mark_on_stream(aclrtStream stream, const char *msg, size_t len, const char *api)
{
    struct aclsim__sref s;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (err)
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_MARK, .label = intern(msg, len)};
    return aclsim__submit(s, &t, api, NULL);
}

/* aclrtProfTrace (dump.c): the same mark task. */
aclError aclsim__prof_mark(aclrtStream stream, const char *msg, size_t len, const char *api)
{
    return mark_on_stream(stream, msg, len, api);
}

/* ---- steps ---------------------------------------------------------------------- */

aclprofStepInfo *aclprofCreateStepInfo(void)
{
    static const char api[] = "aclprofCreateStepInfo";
    return aclsim__prof_supported(api) ? NULL : aclsim__prof_zalloc(sizeof(aclprofStepInfo), api);
}

void aclprofDestroyStepInfo(aclprofStepInfo *stepinfo)
{
    if (stepinfo && !aclsim__prof_supported("aclprofDestroyStepInfo"))
        free(stepinfo);
}

aclError aclprofGetStepTimestamp(aclprofStepInfo *stepInfo, aclprofStepTag tag, aclrtStream stream)
{
    static const char api[] = "aclprofGetStepTimestamp";
    ACLSIM_REQUIRE_INIT(api);
    if (!stepInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stepInfo is NULL");
    if (tag != ACL_STEP_START && tag != ACL_STEP_END)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "tag %d is not an aclprofStepTag",
                            (int)tag);
    aclError err = aclsim__prof_supported(api);
    if (err)
        return err;
    const char *what = tag == ACL_STEP_START ? "step start" : "step end";
    if ((err = mark_on_stream(stream, what, strlen(what), api)))
        return err;
    uint64_t now = aclsim__now_ns();
    if (tag == ACL_STEP_START)
        stepInfo->start = now;
    else
        stepInfo->end = now;
    if (aclsim__tracing(ACLSIM_TRACE_TX))
        aclsim__trace_tx(tx_domain, what, now, 0, false, 0);
    return ACL_SUCCESS;
}

/* ---- msproftx stamps, marks and ranges ------------------------------------------- */

void *aclprofCreateStamp(void)
{
    static const char api[] = "aclprofCreateStamp";
    if (aclsim__prof_supported(api) || tx_on(api))
        return NULL;
    struct stamp *s = aclsim__prof_zalloc(sizeof *s, api);
    if (!s)
        return NULL;
    s->magic = STAMP_MAGIC;
    pthread_mutex_lock(&aclsim__prof_lock);
    s->next = stamps;
    stamps = s;
    pthread_mutex_unlock(&aclsim__prof_lock);
    return s;
}

void aclprofDestroyStamp(void *stamp)
{
    if (!stamp || aclsim__prof_supported("aclprofDestroyStamp"))
        return;
    pthread_mutex_lock(&aclsim__prof_lock);
    for (struct stamp **p = &stamps; *p; p = &(*p)->next)
        if (*p == stamp) {
            *p = (*p)->next;
            pthread_mutex_unlock(&aclsim__prof_lock);
            free(stamp);
            return;
        }
    pthread_mutex_unlock(&aclsim__prof_lock);
    aclsim__log(ACLSIM_LOG_WARNING, "aclprofDestroyStamp: %p is not a live stamp", stamp);
}

/* Under lock: copies msg (if not NULL, len bytes at most) into live stamp,
 * or its message into out (if not NULL); 100000 if stamp is not live. */
static aclError stamp_access(void *stamp, const char *msg, size_t len, char *out, const char *api)
{
    pthread_mutex_lock(&aclsim__prof_lock);
    struct stamp *s = stamps;
    while (s && s != stamp)
        s = s->next;
    if (s && msg) {
        size_t n = strnlen(msg, len);
        memcpy(s->msg, msg, n);
        s->msg[n] = 0;
    }
    if (s && out)
        memcpy(out, s->msg, STAMP_MSG_MAX);
    pthread_mutex_unlock(&aclsim__prof_lock);
    if (!s)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stamp %p is not a stamp from aclprofCreateStamp (or was destroyed)",
                            stamp);
    return ACL_SUCCESS;
}

/* Copies live stamp's message into msg; 100000 if stamp is not live. */
static aclError stamp_message(void *stamp, char msg[STAMP_MSG_MAX], const char *api)
{
    if (!stamp)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stamp is NULL");
    return stamp_access(stamp, NULL, 0, msg, api);
}

aclError aclprofSetStampTraceMessage(void *stamp, const char *msg, uint32_t msgLen)
{
    static const char api[] = "aclprofSetStampTraceMessage";
    if (!stamp || !msg)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !stamp ? "stamp" : "msg");
    if (msgLen >= STAMP_MSG_MAX)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "msgLen %u is too long: less than %d bytes", msgLen, STAMP_MSG_MAX);
    aclError err = aclsim__prof_supported(api);
    return err ? err : stamp_access(stamp, msg, msgLen, NULL, api);
}

/* The checks every stamp function starts with. */
static aclError stamp_call(void *stamp, char msg[STAMP_MSG_MAX], const char *api)
{
    aclError err = stamp_message(stamp, msg, api);
    if (!err)
        err = aclsim__prof_supported(api);
    if (!err)
        err = tx_on(api);
    return err;
}

aclError aclprofMark(void *stamp)
{
    static const char api[] = "aclprofMark";
    char msg[STAMP_MSG_MAX];
    aclError err = stamp_call(stamp, msg, api);
    if (!err)
        aclsim__trace_tx(tx_domain, msg, aclsim__now_ns(), 0, false, 0);
    return err;
}

static aclError push(const char *msg, bool ex, const char *api)
{
    if (!tls_stack) {
        if (!aclsim__thread_keep(ACLSIM_THREAD_TX_STACK) ||   /* (given back at exit) */
            !(tls_stack = aclsim__malloc(PUSH_DEPTH * sizeof *tls_stack)))
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    }
    if (tls_depth == PUSH_DEPTH)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "%d ranges are open on this thread already (pop some first)",
                            PUSH_DEPTH);
    struct pushed *p = &tls_stack[tls_depth++];
    p->ex = ex;
    snprintf(p->msg, sizeof p->msg, "%s", msg);
    p->start = aclsim__now_ns();
    return ACL_SUCCESS;
}

static aclError pop(bool ex, const char *api)
{
    aclError err = aclsim__prof_supported(api);
    if (!err)
        err = tx_on(api);
    if (err)
        return err;
    if (!tls_depth || tls_stack[tls_depth - 1].ex != ex)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "no range opened by %s on this thread is open (pops pair with "
                            "pushes of the same thread)", ex ? "aclprofRangePushEx" : "aclprofPush");
    struct pushed *p = &tls_stack[--tls_depth];
    aclsim__trace_tx(tx_domain, p->msg, p->start, aclsim__now_ns() - p->start, true, 0);
    return ACL_SUCCESS;
}

aclError aclprofPush(void *stamp)
{
    static const char api[] = "aclprofPush";
    char msg[STAMP_MSG_MAX];
    aclError err = stamp_call(stamp, msg, api);
    return err ? err : push(msg, false, api);
}

aclError aclprofPop(void)
{
    return pop(false, "aclprofPop");
}

/* Opens a process-wide range; *id gets its id (never 0). */
static aclError range_open(const char *domain, const char *msg, uint64_t *id, const char *api)
{
    pthread_mutex_lock(&aclsim__prof_lock);
    if (nranges == cap_ranges) {
        size_t cap = cap_ranges ? 2 * cap_ranges : 16;
        struct range *r = cap <= RANGES_MAX ? aclsim__realloc(ranges, cap * sizeof *r) : NULL;
        if (!r) {
            pthread_mutex_unlock(&aclsim__prof_lock);
            return aclsim__fail(cap > RANGES_MAX ? ACL_ERROR_INVALID_PARAM : ACL_ERROR_BAD_ALLOC,
                                api, "%zu ranges are open already", nranges);
        }
        ranges = r;
        cap_ranges = cap;
    }
    struct range *r = &ranges[nranges++];
    r->id = next_range++;
    if ((uint32_t)next_range == 0)
        next_range++;   /* aclprofRangeStart's ids are 32 bits, never 0 */
    r->domain = domain;
    r->thread = aclsim__trace_thread();
    snprintf(r->msg, sizeof r->msg, "%s", msg);
    r->start = aclsim__now_ns();
    *id = r->id;
    pthread_mutex_unlock(&aclsim__prof_lock);
    return ACL_SUCCESS;
}

/* Closes range id (of domain, if not NULL): a slice on the thread that opened it. */
static bool range_close(uint64_t id, const char *domain)
{
    pthread_mutex_lock(&aclsim__prof_lock);
    for (size_t i = 0; i < nranges; i++)
        if (ranges[i].id == id && (!domain || ranges[i].domain == domain)) {
            struct range r = ranges[i];
            ranges[i] = ranges[--nranges];
            pthread_mutex_unlock(&aclsim__prof_lock);
            aclsim__trace_tx(r.domain, r.msg, r.start, aclsim__now_ns() - r.start, true, r.thread);
            return true;
        }
    pthread_mutex_unlock(&aclsim__prof_lock);
    return false;
}

aclError aclprofRangeStart(void *stamp, uint32_t *rangeId)
{
    static const char api[] = "aclprofRangeStart";
    if (!rangeId)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "rangeId is NULL");
    char msg[STAMP_MSG_MAX];
    uint64_t id;
    aclError err = stamp_call(stamp, msg, api);
    if (!err && !(err = range_open(tx_domain, msg, &id, api)))
        *rangeId = (uint32_t)id;
    return err;
}

aclError aclprofRangeStop(uint32_t rangeId)
{
    static const char api[] = "aclprofRangeStop";
    aclError err = aclsim__prof_supported(api);
    if (!err)
        err = tx_on(api);
    if (err)
        return err;
    pthread_mutex_lock(&aclsim__prof_lock);
    uint64_t id = 0;
    for (size_t i = 0; i < nranges && !id; i++)
        if ((uint32_t)ranges[i].id == rangeId && ranges[i].domain == tx_domain)
            id = ranges[i].id;
    pthread_mutex_unlock(&aclsim__prof_lock);
    if (!id || !range_close(id, tx_domain))
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "rangeId %u is not an open range of aclprofRangeStart", rangeId);
    return ACL_SUCCESS;
}

aclError aclprofMarkEx(const char *msg, size_t msgLen, aclrtStream stream)
{
    static const char api[] = "aclprofMarkEx";
    ACLSIM_REQUIRE_INIT(api);
    if (!msg)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "msg is NULL");
    if (msgLen < 1 || msgLen > MARKEX_MSG_MAX)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "msgLen %zu is not 1 to %d", msgLen,
                            MARKEX_MSG_MAX);
    aclError err = aclsim__prof_supported(api);
    if (!err)
        err = tx_on(api);
    if (!err)
        err = mark_on_stream(stream, msg, strnlen(msg, msgLen), api);
    if (!err) {
        char text[MARKEX_MSG_MAX + 1];
        snprintf(text, sizeof text, "%.*s", (int)msgLen, msg);
        aclsim__trace_tx(tx_domain, text, aclsim__now_ns(), 0, false, 0);
    }
    return err;
}

/* FNV-1a, 64 bits (CANN's ids are its own hash; only equality matters). */
uint64_t aclprofStr2Id(const char *message)
{
    if (!message || aclsim__prof_supported("aclprofStr2Id"))
        return 0;
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)message; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

aclError aclprofRangePushEx(aclprofEventAttributes *attr)
{
    static const char api[] = "aclprofRangePushEx";
    if (!attr)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "attr is NULL");
    if (attr->messageType != ACL_PROF_MESSAGE_TYPE_TENSOR_INFO || !attr->message.tensorInfo)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "attr has messageType %u and tensorInfo %p: expected "
                            "ACL_PROF_MESSAGE_TYPE_TENSOR_INFO with tensor information",
                            attr->messageType, (void *)attr->message.tensorInfo);
    aclError err = aclsim__prof_supported(api);
    if (!err)
        err = tx_on(api);
    if (err)
        return err;
    const aclprofTensorInfo *t = attr->message.tensorInfo;
    char msg[STAMP_MSG_MAX];
    snprintf(msg, sizeof msg, "op %016llx (%u tensors, %u blocks)",
             (unsigned long long)t->opNameId, t->tensorNum, t->blockNums);
    return push(msg, true, api);
}

aclError aclprofRangePop(void)
{
    return pop(true, "aclprofRangePop");
}

/* ---- mstx ------------------------------------------------------------------------- */

struct mstxDomainRegistration_st { const char *name; char category[80]; };
static struct mstxDomainRegistration_st *domains[256];
static size_t ndomains;

/* mstx never fails loudly (void functions, as CANN's): misuse is logged. */
static void mstx_mark(const char *category, const char *message, aclrtStream stream,
                      const char *api)
{
    if (!message || !aclsim__tracing(ACLSIM_TRACE_TX))
        return;
    aclsim__trace_tx(category, message, aclsim__now_ns(), 0, false, 0);
    if (stream && aclsim__initialized() &&
        mark_on_stream(stream, message, strnlen(message, STAMP_MSG_MAX - 1), api) != ACL_SUCCESS)
        aclsim__log(ACLSIM_LOG_WARNING, "%s: the mark was not queued on stream %p", api, stream);
}

static mstxRangeId mstx_start(const char *category, const char *message, aclrtStream stream,
                              const char *api)
{
    uint64_t id;
    if (!message || !aclsim__tracing(ACLSIM_TRACE_TX) || range_open(category, message, &id, api))
        return MSTX_INVALID_ID;
    if (stream && aclsim__initialized() &&
        mark_on_stream(stream, message, strnlen(message, STAMP_MSG_MAX - 1), api) != ACL_SUCCESS)
        aclsim__log(ACLSIM_LOG_WARNING, "%s: the mark was not queued on stream %p", api, stream);
    return id;
}

void mstxMarkA(const char *message, aclrtStream stream)
{
    mstx_mark(mstx_domain, message, stream, "mstxMarkA");
}

mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream)
{
    return mstx_start(mstx_domain, message, stream, "mstxRangeStartA");
}

void mstxRangeEnd(mstxRangeId id)
{
    if (id != MSTX_INVALID_ID && !range_close(id, mstx_domain))
        aclsim__log(ACLSIM_LOG_WARNING, "mstxRangeEnd: %llu is not an open range",
                    (unsigned long long)id);
}

/* Domains live as long as the process (a name gets the same handle again). */
mstxDomainHandle_t mstxDomainCreateA(const char *name)
{
    if (!name || !*name)
        return NULL;
    pthread_mutex_lock(&aclsim__prof_lock);
    for (size_t i = 0; i < ndomains; i++)
        if (strcmp(domains[i]->name, name) == 0) {
            pthread_mutex_unlock(&aclsim__prof_lock);
            return domains[i];
        }
    struct mstxDomainRegistration_st *d = NULL;
    if (ndomains < sizeof domains / sizeof *domains && (d = aclsim__malloc(sizeof *d))) {
        d->name = intern(name, strlen(name));
        snprintf(d->category, sizeof d->category, "mstx:%s", name);
        domains[ndomains++] = d;
    }
    pthread_mutex_unlock(&aclsim__prof_lock);
    return d;
}

void mstxDomainDestroy(mstxDomainHandle_t domain)
{
    (void)domain;   /* kept: events already recorded name it (see above) */
}

static bool domain_live(mstxDomainHandle_t domain)
{
    pthread_mutex_lock(&aclsim__prof_lock);
    bool live = false;
    for (size_t i = 0; i < ndomains && !live; i++)
        live = domains[i] == domain;
    pthread_mutex_unlock(&aclsim__prof_lock);
    return live;
}

void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream)
{
    if (domain_live(domain))
        mstx_mark(domain->category, message, stream, "mstxDomainMarkA");
}

mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message,
                                  aclrtStream stream)
{
    return domain_live(domain)
               ? mstx_start(domain->category, message, stream, "mstxDomainRangeStartA")
               : MSTX_INVALID_ID;
}

void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id)
{
    if (domain_live(domain) && id != MSTX_INVALID_ID && !range_close(id, domain->category))
        aclsim__log(ACLSIM_LOG_WARNING, "mstxDomainRangeEnd: %llu is not an open range of "
                                        "domain %s", (unsigned long long)id, domain->name);
}
