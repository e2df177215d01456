/*
 * Shared buffers (mbufs) and buffer chains: aclrtAllocBuf & co. (acl/acl_rt.h)
 * and their acltdt* twins (acl/acl_tdt_queue.h, supported by CANN on the
 * Atlas 200I/500 A2 only). A buffer is a header (valid data length, 96 bytes
 * of private "user" data, its chain) pointing at a reference-counted data
 * area; aclrtCopyBufRef makes a second header on the same area. A chain is a
 * head buffer and up to MAX_CHAIN - 1 buffers appended to it; freeing the head
 * frees the chain.
 *
 * Every live header is in a registry (addresses -> header), so a freed or
 * forged buffer is refused (100000) instead of dereferenced. One lock guards
 * headers, chains and reference counts; the data bytes are the program's.
 */
#include "tdt.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CHAIN 128u                     /* buffers in a chain, head included (CANN) */
#define MAX_SIZE ((size_t)4 << 30)         /* "not more than 4G" */

struct area {
    size_t refs;
    size_t size;
    unsigned char *bytes;
};

struct mbuf {
    struct area *area;
    size_t len;                             /* valid data (aclrtSetBufDataLen) */
    unsigned char user[ACLSIM_TDT_USER_DATA];
    struct mbuf *chain_next;                /* next in its chain */
    struct mbuf *head;                      /* its chain's head (itself for a head) */
    uint32_t chain_len;                     /* head only: buffers in the chain */
    struct mbuf *all_next, *all_prev;       /* every live buffer */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclsim__addr_map live = {.lock = PTHREAD_MUTEX_INITIALIZER};
static struct mbuf *all;
static uint64_t finalized_session;   /* as tdt's: nothing is made into a finished session */

/* Lock held: a new header may be made for a call that read session. */
static aclError session_ok(uint64_t session, const char *api)
{
    return session <= finalized_session ? aclsim__not_initialized(api) : ACL_SUCCESS;
}

/* Lock held: the header of a live buffer, or NULL with 100000 recorded. */
static struct mbuf *resolve(const void *buf, const char *api, const char *name, aclError *err)
{
    struct mbuf *b = buf ? aclsim__map_get(&live, buf) : NULL;
    if (!b)
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            buf ? "%s is not a live shared buffer (freed, or never allocated)"
                                : "%s is NULL", name);
    return b;
}

static struct mbuf *header_new(struct area *a)
{
    struct mbuf *b = aclsim__calloc(1, sizeof *b);
    if (!b)
        return NULL;
    if (!aclsim__map_insert(&live, b, b)) {
        free(b);
        return NULL;
    }
    b->area = a;
    b->head = b;
    b->chain_len = 1;
    a->refs++;
    b->all_next = all;
    if (all)
        all->all_prev = b;
    all = b;
    return b;
}

static void header_free(struct mbuf *b)
{
    aclsim__map_remove(&live, b);
    if (b->all_prev)
        b->all_prev->all_next = b->all_next;
    else
        all = b->all_next;
    if (b->all_next)
        b->all_next->all_prev = b->all_prev;
    if (--b->area->refs == 0) {
        free(b->area->bytes);
        free(b->area);
    }
    free(b);
}

/* ---- the shared implementation (arguments' NULL checks done by callers) ---- */

static aclError do_alloc(void **buf, size_t size, const char *api)
{
    if (size == 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is 0: it must be positive");
    if (size > MAX_SIZE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size %zu is more than 4 GiB", size);
    struct area *a = aclsim__calloc(1, sizeof *a);
    unsigned char *bytes = a ? aclsim__calloc(1, size) : NULL;
    if (!bytes) {
        free(a);
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory (%zu bytes)", size);
    }
    a->bytes = bytes;
    a->size = size;
    uint64_t session = aclsim__tdt_session();
    pthread_mutex_lock(&lock);
    aclError err = session_ok(session, api);
    struct mbuf *b = err ? NULL : header_new(a);
    pthread_mutex_unlock(&lock);
    if (!b) {
        free(bytes);
        free(a);
        return err ? err : aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    }
    *buf = b;
    return ACL_SUCCESS;
}

static aclError do_free(void *buf, const char *api)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&lock);
    struct mbuf *b = resolve(buf, api, "buf", &err);
    if (b && b->head != b)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           "buf is in the chain of another buffer: free that chain's head");
    else if (b)
        for (struct mbuf *next; b; b = next) {
            next = b->chain_next;
            header_free(b);
        }
    pthread_mutex_unlock(&lock);
    return err;
}

static aclError do_get_data(const void *buf, void **dataPtr, size_t *size, const char *api)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&lock);
    struct mbuf *b = resolve(buf, api, "buf", &err);
    if (b) {
        *dataPtr = b->area->bytes;
        *size = b->area->size;
    }
    pthread_mutex_unlock(&lock);
    return err;
}

static aclError do_data_len(void *buf, size_t *get, size_t set, const char *api)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&lock);
    struct mbuf *b = resolve(buf, api, "buf", &err);
    if (b && get)
        *get = b->len;
    else if (b && set > b->area->size)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           "len %zu is more than the buffer's %zu bytes of data", set,
                           b->area->size);
    else if (b)
        b->len = set;
    pthread_mutex_unlock(&lock);
    return err;
}

static aclError do_user_data(void *buf, void *out, const void *in, size_t size, size_t offset,
                             const char *api)
{
    if (size > ACLSIM_TDT_USER_DATA || offset > ACLSIM_TDT_USER_DATA ||
        size + offset > ACLSIM_TDT_USER_DATA)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "size %zu + offset %zu is more than the %u bytes of private data",
                            size, offset, ACLSIM_TDT_USER_DATA);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&lock);
    struct mbuf *b = resolve(buf, api, "buf", &err);
    if (b && out)
        memcpy(out, b->user + offset, size);
    else if (b)
        memcpy(b->user + offset, in, size);
    pthread_mutex_unlock(&lock);
    return err;
}

static aclError do_copy_ref(const void *buf, void **newBuf, const char *api)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&lock);
    struct mbuf *b = resolve(buf, api, "buf", &err);
    struct mbuf *c = b ? header_new(b->area) : NULL;
    if (c) {
        c->len = b->len;
        memcpy(c->user, b->user, sizeof c->user);
        *newBuf = c;
    } else if (b) {
        err = aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
    }
    pthread_mutex_unlock(&lock);
    return err;
}

static aclError do_append(void *headBuf, void *buf, const char *api)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&lock);
    struct mbuf *h = resolve(headBuf, api, "headBuf", &err);
    struct mbuf *b = h ? resolve(buf, api, "buf", &err) : NULL;
    if (b && h->head != h)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           "headBuf is not the head of a chain (it was appended to another)");
    else if (b && (b == h || b->head != b || b->chain_len != 1))
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           b == h ? "buf is headBuf itself"
                                  : "buf is already in a chain (its own or another's)");
    else if (b && h->chain_len >= MAX_CHAIN)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "the chain already holds %u buffers",
                           MAX_CHAIN);
    else if (b) {
        struct mbuf *t = h;
        while (t->chain_next)
            t = t->chain_next;
        t->chain_next = b;
        b->head = h;
        h->chain_len++;
    }
    pthread_mutex_unlock(&lock);
    return err;
}

static aclError do_chain_num(void *headBuf, uint32_t *num, const char *api)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&lock);
    struct mbuf *h = resolve(headBuf, api, "headBuf", &err);
    if (h && h->head != h)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "headBuf is not the head of a chain");
    else if (h)
        *num = h->chain_len;
    pthread_mutex_unlock(&lock);
    return err;
}

static aclError do_chain_get(void *headBuf, uint32_t index, void **buf, const char *api)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&lock);
    struct mbuf *h = resolve(headBuf, api, "headBuf", &err);
    if (h && h->head != h)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "headBuf is not the head of a chain");
    else if (h && index >= h->chain_len)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           "index %u is out of range: the chain holds %u buffers", index,
                           h->chain_len);
    else if (h) {
        struct mbuf *b = h;
        for (uint32_t i = 0; i < index; i++)
            b = b->chain_next;
        *buf = b;
    }
    pthread_mutex_unlock(&lock);
    return err;
}

void aclsim__mbufs_finalize(void)
{
    pthread_mutex_lock(&lock);
    finalized_session = aclsim__tdt_session();
    while (all)
        header_free(all);
    pthread_mutex_unlock(&lock);
}

void aclsim__mbufs_fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

void aclsim__mbufs_fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

void aclsim__mbufs_forget_after_fork(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_mutex_init(&live.lock, NULL);
    while (all)
        header_free(all);
}

/* ---- the API: argument checks (100000), then runtime and product --------------- */

#define NOT_NULL(p)                                                                     \
    do {                                                                                \
        if (!(p))                                                                       \
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", #p);        \
    } while (0)

/* After the runtime and argument checks: aclrt*: CANN's chapter 20
 * (reserved), every product; acltdt*: the Atlas 200I/500 A2 only, as CANN's
 * product tables say. */
static aclError gate(const char *api, bool tdt)
{
    return tdt ? aclsim__soc_check(api, ACLSIM_FAMILIES(EDGE)) : ACL_SUCCESS;
}


aclError aclrtAllocBuf(aclrtMbuf *buf, size_t size)
{
    static const char api[] = "aclrtAllocBuf";
    ACLSIM_REQUIRE_INIT(api);
    NOT_NULL(buf);
    aclError err = gate(api, false);
    return err ? err : do_alloc(buf, size, api);
}

aclError acltdtAllocBuf(size_t size, uint32_t type, acltdtBuf *buf)
{
    static const char api[] = "acltdtAllocBuf";
    ACLSIM_REQUIRE_INIT(api);
    if (type != ACL_TDT_NORMAL_MEM && type != ACL_TDT_DVPP_MEM)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "type %u is invalid: ACL_TDT_NORMAL_MEM or ACL_TDT_DVPP_MEM", type);
    NOT_NULL(buf);
    aclError err = gate(api, true);
    return err ? err : do_alloc(buf, size, api);
}

/* One API function: the runtime, the arguments (checks), the product, then call. */
#define MBUF_FN(name, tdt, params, checks, call)                                         \
    aclError name params                                                                 \
    {                                                                                    \
        static const char api[] = #name;                                                 \
        ACLSIM_REQUIRE_INIT(api);                                                        \
        checks                                                                           \
        aclError err = gate(api, tdt);                                                   \
        return err ? err : call;                                                         \
    }
/* The aclrt* function and its acltdt* twin. */
#define MBUF_FNS(suffix, params, checks, call)                                           \
    MBUF_FN(aclrt##suffix, false, params, checks, call)                                  \
    MBUF_FN(acltdt##suffix, true, params, checks, call)

MBUF_FNS(FreeBuf, (void *buf), NOT_NULL(buf);, do_free(buf, api))
MBUF_FNS(GetBufData, (void *const buf, void **dataPtr, size_t *size),
         NOT_NULL(buf); NOT_NULL(dataPtr); NOT_NULL(size);,
         do_get_data(buf, dataPtr, size, api))
MBUF_FNS(GetBufDataLen, (void *buf, size_t *len), NOT_NULL(buf); NOT_NULL(len);,
         do_data_len(buf, len, 0, api))
MBUF_FNS(SetBufDataLen, (void *buf, size_t len), NOT_NULL(buf);, do_data_len(buf, NULL, len, api))
MBUF_FNS(GetBufUserData, (void *const buf, void *dataPtr, size_t size, size_t offset),
         NOT_NULL(buf); NOT_NULL(dataPtr);,
         do_user_data(buf, dataPtr, NULL, size, offset, api))
MBUF_FNS(SetBufUserData, (void *buf, const void *dataPtr, size_t size, size_t offset),
         NOT_NULL(buf); NOT_NULL(dataPtr);,
         do_user_data(buf, NULL, dataPtr, size, offset, api))
MBUF_FNS(CopyBufRef, (void *const buf, void **newBuf), NOT_NULL(buf); NOT_NULL(newBuf);,
         do_copy_ref(buf, newBuf, api))
MBUF_FNS(AppendBufChain, (void *headBuf, void *buf), NOT_NULL(headBuf); NOT_NULL(buf);,
         do_append(headBuf, buf, api))
MBUF_FNS(GetBufChainNum, (void *headBuf, uint32_t *num), NOT_NULL(headBuf); NOT_NULL(num);,
         do_chain_num(headBuf, num, api))
MBUF_FNS(GetBufFromChain, (void *headBuf, uint32_t index, void **buf),
         NOT_NULL(headBuf); NOT_NULL(buf);,
         do_chain_get(headBuf, index, buf, api))
