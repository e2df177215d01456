/*
 * Custom memory allocators (acl/acl_rt_allocator.h): descriptors that bundle
 * a user's allocator object with its callbacks, and a registry of them per
 * stream, for the code that allocates memory for work on a stream (CANN's
 * operator and model runtimes; aclsim has neither, so the registry serves
 * programs and libraries that look allocators up themselves).
 *
 * Live descriptors are kept in a list, so that a destroyed or forged one is
 * recognised (100000) instead of dereferenced (the handle table's kinds are
 * all taken).
 * Registering stores a copy of the descriptor's contents, as CANN does: later
 * changes to the descriptor (or its destruction) do not change what is
 * registered; registering again on a stream replaces the entry. The registry
 * is keyed by the stream handle; stream handles are never reused with the
 * same value, so an entry left behind by a destroyed stream never answers
 * for another stream. See docs/memory-copies.md.
 */
#include "internal.h"

#include <stdlib.h>

#include "acl/acl_rt_allocator.h"

struct allocator_desc {
    struct allocator_desc *next;   /* the live list, under registry_lock */
    aclrtAllocator obj;
    aclrtAllocatorAllocFunc alloc;
    aclrtAllocatorFreeFunc free;
    aclrtAllocatorAllocAdviseFunc advise;
    aclrtAllocatorGetAddrFromBlockFunc addr;
};

struct entry {
    const void *stream;          /* the user's stream handle */
    aclrtAllocatorDesc desc;     /* the user's descriptor handle */
    struct allocator_desc copy;  /* its contents when registered */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *entries;
static size_t nentries, cap_entries;

static struct allocator_desc *live;   /* every descriptor not yet destroyed */

/* The live descriptor d, or NULL (with the message). Caller holds
 * registry_lock. */
static struct allocator_desc *desc_locked(aclrtAllocatorDesc d, const char *api)
{
    if (!d) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "allocatorDesc is NULL");
        return NULL;
    }
    for (struct allocator_desc *a = live; a; a = a->next)
        if (a == d)
            return a;
    aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                 "allocatorDesc %p is not a live allocator descriptor (destroyed, or never "
                 "created)", d);
    return NULL;
}

aclrtAllocatorDesc aclrtAllocatorCreateDesc(void)
{
    struct allocator_desc *a = aclsim__calloc(1, sizeof *a);
    if (!a) {
        aclsim__fail(ACL_ERROR_BAD_ALLOC, "aclrtAllocatorCreateDesc", "out of memory");
        return NULL;
    }
    pthread_mutex_lock(&registry_lock);
    a->next = live;
    live = a;
    pthread_mutex_unlock(&registry_lock);
    return a;
}

aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)
{
    pthread_mutex_lock(&registry_lock);
    struct allocator_desc *a = desc_locked(allocatorDesc, "aclrtAllocatorDestroyDesc");
    if (a) {
        struct allocator_desc **p = &live;
        while (*p != a)
            p = &(*p)->next;
        *p = a->next;
    }
    pthread_mutex_unlock(&registry_lock);
    free(a);
    return a ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

/* The setters: descriptor and value must not be NULL. */
#define SETTER(fn, type, field, what)                                                       \
    aclError fn(aclrtAllocatorDesc allocatorDesc, type value)                                \
    {                                                                                       \
        pthread_mutex_lock(&registry_lock);                                                 \
        struct allocator_desc *a = desc_locked(allocatorDesc, #fn);                         \
        if (a && value)                                                                     \
            a->field = value;                                                               \
        pthread_mutex_unlock(&registry_lock);                                               \
        if (a && !value)                                                                    \
            return aclsim__fail(ACL_ERROR_INVALID_PARAM, #fn, "%s is NULL", what);          \
        return a ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;                                   \
    }

SETTER(aclrtAllocatorSetObjToDesc, aclrtAllocator, obj, "allocator")
SETTER(aclrtAllocatorSetAllocFuncToDesc, aclrtAllocatorAllocFunc, alloc, "func")
SETTER(aclrtAllocatorSetFreeFuncToDesc, aclrtAllocatorFreeFunc, free, "func")
SETTER(aclrtAllocatorSetAllocAdviseFuncToDesc, aclrtAllocatorAllocAdviseFunc, advise, "func")
SETTER(aclrtAllocatorSetGetAddrFromBlockFuncToDesc, aclrtAllocatorGetAddrFromBlockFunc, addr, "func")

/* The entry of stream, or NULL. Caller holds registry_lock. */
static struct entry *find(const void *stream)
{
    for (size_t i = 0; i < nentries; i++)
        if (entries[i].stream == stream)
            return &entries[i];
    return NULL;
}

aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc)
{
    static const char api[] = "aclrtAllocatorRegister";
    ACLSIM_REQUIRE_INIT(api);
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stream is NULL: an allocator is registered for a created stream");
    if (!allocatorDesc)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "allocatorDesc is NULL");
    struct aclsim__sref s;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (err)
        return err;
    pthread_mutex_lock(&registry_lock);
    struct allocator_desc *a = desc_locked(allocatorDesc, api);
    const char *missing = !a ? NULL
                        : !a->obj ? "allocatorDesc->obj (aclrtAllocatorSetObjToDesc)"
                        : !a->alloc ? "allocatorDesc->allocFunc (aclrtAllocatorSetAllocFuncToDesc)"
                        : !a->free ? "allocatorDesc->freeFunc (aclrtAllocatorSetFreeFuncToDesc)"
                        : !a->addr ? "allocatorDesc->getAddrFromBlockFunc "
                                     "(aclrtAllocatorSetGetAddrFromBlockFuncToDesc)"
                        : NULL;
    if (!a || missing) {
        pthread_mutex_unlock(&registry_lock);
        return a ? aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is not set", missing)
                 : ACL_ERROR_INVALID_PARAM;
    }
    struct entry *e = find(stream);
    if (!e && nentries == cap_entries) {
        size_t cap = cap_entries ? 2 * cap_entries : 8;
        struct entry *bigger = aclsim__realloc(entries, cap * sizeof *bigger);
        if (!bigger) {
            pthread_mutex_unlock(&registry_lock);
            return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        }
        entries = bigger;
        cap_entries = cap;
    }
    if (!e)
        e = &entries[nentries++];
    *e = (struct entry){stream, allocatorDesc, *a};
    pthread_mutex_unlock(&registry_lock);
    return ACL_SUCCESS;
}

aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
                                   aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
                                   aclrtAllocatorFreeFunc *freeFunc,
                                   aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
                                   aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)
{
    static const char api[] = "aclrtAllocatorGetByStream";
    if (!allocatorDesc)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "allocatorDesc is NULL");
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "stream is NULL");
    pthread_mutex_lock(&registry_lock);
    struct entry *e = find(stream);
    struct entry got = e ? *e : (struct entry){0};
    pthread_mutex_unlock(&registry_lock);
    if (!e)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "stream %p is not registered with any allocator", stream);
    *allocatorDesc = got.desc;
    if (allocator)
        *allocator = got.copy.obj;
    if (allocFunc)
        *allocFunc = got.copy.alloc;
    if (freeFunc)
        *freeFunc = got.copy.free;
    if (allocAdviseFunc)
        *allocAdviseFunc = got.copy.advise;
    if (getAddrFromBlockFunc)
        *getAddrFromBlockFunc = got.copy.addr;
    return ACL_SUCCESS;
}

/* An unknown or already unregistered stream: nothing to do, success (CANN). */
aclError aclrtAllocatorUnregister(aclrtStream stream)
{
    if (!stream)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, "aclrtAllocatorUnregister", "stream is NULL");
    pthread_mutex_lock(&registry_lock);
    struct entry *e = find(stream);
    if (e)
        *e = entries[--nentries];
    if (!nentries) {   /* nothing registered: give the table back */
        free(entries);
        entries = NULL;
        cap_entries = 0;
    }
    pthread_mutex_unlock(&registry_lock);
    return ACL_SUCCESS;
}
