/*
 * Tensor channels (acl/acl_tdt.h). A channel is a queue of datasets on a
 * device (struct aclsim__tdtq, tdt.h): acltdtSendTensor packs a dataset into
 * one message and appends it, acltdtReceiveTensor takes the oldest one and
 * unpacks it into an empty dataset. Handles created for the same device and
 * name share one queue (a producer and a consumer thread may each create
 * their own); the queue goes with the last of them.
 *
 * Two kinds, as CANN:
 *  - acltdtCreateChannelWithCapacity: a queue of the given capacity; send
 *    and receive honour their timeouts (-1 forever, 0 at once, > 0 ms), a
 *    full channel gives 207014 and an empty one 207013.
 *  - acltdtCreateChannel (Atlas training series only): CANN's TDT channels.
 *    Timeouts must be -1. A channel named "TF_RECEIVE_<x>" receives what the
 *    channel "<x>" of the same device sends: the device side that consumes
 *    and produces on hardware is a loopback here (docs/tdt.md). Capacity
 *    DEFAULT_TDT_DEPTH; acltdtCleanChannel and acltdtQueryChannelSize answer
 *    200006 as CANN's do for these channels.
 * acltdtStopChannel wakes every thread blocked on the channel; from then on
 * its sends and receives fail with 500001. Destroying the last handle, a
 * reset of the channel's device, and aclFinalize wake them as well (500001).
 */
#include "tdt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TDT_DEPTH 128u
#define RECEIVE_PREFIX "TF_RECEIVE_"

enum { FLAVOUR_CAPACITY = 1, FLAVOUR_TDT };

struct channel {
    struct channel *next;          /* every live channel (under tdt_lock) */
    void *handle;                  /* what the program holds */
    struct aclsim__tdtq *q;        /* shared with the other handles of its name */
    bool tdt, receive;
};

static struct channel *channels;
static struct aclsim__tdtq *shared;   /* live channel queues, by device, name, flavour */

/* tdt_lock held: the channel of handle, or NULL with 107017 recorded. */
static struct channel *resolve_locked(const acltdtChannelHandle *handle, const char *api,
                                      aclError *err)
{
    struct channel *ch = aclsim__handle_get(handle, ACLSIM_H_TDT_CHANNEL);
    if (!ch)
        *err = aclsim__fail(ACL_ERROR_RT_INVALID_HANDLE, api,
                            "handle is not a live channel (destroyed, or never created)");
    return ch;
}

static void drop_shared(struct aclsim__tdtq *q)
{
    for (struct aclsim__tdtq **p = &shared; *p; p = &(*p)->next)
        if (*p == q) {
            *p = q->next;
            return;
        }
}

/* Drops a handle's reference to its queue; the last kills and frees it. */
static void release_queue(struct aclsim__tdtq *q, const char *why)
{
    if (--q->refs)
        return;
    drop_shared(q);
    aclsim__tdtq_kill_locked(q, ACL_ERROR_FAILURE, why);
    aclsim__tdtq_free(q);
}

static acltdtChannelHandle *create(uint32_t deviceId, const char *name, size_t capacity, bool tdt,
                                   const char *api)
{
    if (!aclsim__initialized()) {
        aclsim__not_initialized(api);
        return NULL;
    }
    if (!name) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "name is NULL");
        return NULL;
    }
    size_t len = strnlen(name, ACLSIM_TDT_NAME_MAX);
    if (len + 1 > ACLSIM_TDT_NAME_MAX) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                     "name is too long: at most %u characters", ACLSIM_TDT_NAME_MAX - 1);
        return NULL;
    }
    unsigned families = tdt ? ACLSIM_FAMILIES(TRAINING)
                            : ACLSIM_A5_A3_A2 | ACLSIM_FAMILIES(TRAINING);
    if (aclsim__soc_check(api, families) ||
        aclsim__device_check_id(deviceId > INT32_MAX ? -1 : (int32_t)deviceId, api))
        return NULL;
    if (!tdt && (capacity < ACLSIM_TDT_DEPTH_MIN || capacity > ACLSIM_TDT_DEPTH_MAX)) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "capacity %zu is out of range [%u, %u]",
                     capacity, ACLSIM_TDT_DEPTH_MIN, ACLSIM_TDT_DEPTH_MAX);
        return NULL;
    }
    bool receive = tdt && strncmp(name, RECEIVE_PREFIX, strlen(RECEIVE_PREFIX)) == 0;
    const char *key = receive ? name + strlen(RECEIVE_PREFIX) : name;
    uint8_t flavour = tdt ? FLAVOUR_TDT : FLAVOUR_CAPACITY;
    struct channel *ch = aclsim__calloc(1, sizeof *ch);
    if (!ch) {
        aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        return NULL;
    }
    ch->tdt = tdt;
    ch->receive = receive;
    uint64_t session = aclsim__tdt_session();
    pthread_mutex_lock(&aclsim__tdt_lock);
    if (aclsim__tdt_session_check_locked(session, api)) {
        pthread_mutex_unlock(&aclsim__tdt_lock);
        free(ch);
        return NULL;
    }
    struct aclsim__tdtq *q = shared;
    while (q && (q->device != (int32_t)deviceId || q->flavour != flavour || strcmp(q->name, key)))
        q = q->next;
    if (q && !tdt && q->depth != capacity) {
        pthread_mutex_unlock(&aclsim__tdt_lock);
        free(ch);
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                     "channel \"%s\" of device %u exists with capacity %u, not %zu", name,
                     deviceId, q->depth, capacity);
        return NULL;
    }
    bool fresh = !q;
    if (fresh) {
        q = aclsim__tdtq_new((int32_t)deviceId, key, tdt ? DEFAULT_TDT_DEPTH : (uint32_t)capacity);
        if (q) {
            q->flavour = flavour;
            q->next = shared;
            shared = q;
        }
    }
    if (q)
        ch->handle = aclsim__handle_new(ACLSIM_H_TDT_CHANNEL, ch);
    if (!ch->handle) {
        if (q && fresh) {
            drop_shared(q);
            aclsim__tdtq_free(q);
        }
        pthread_mutex_unlock(&aclsim__tdt_lock);
        free(ch);
        aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of memory");
        return NULL;
    }
    q->refs++;
    ch->q = q;
    ch->next = channels;
    channels = ch;
    void *handle = ch->handle;
    pthread_mutex_unlock(&aclsim__tdt_lock);
    return handle;
}

acltdtChannelHandle *acltdtCreateChannelWithCapacity(uint32_t deviceId, const char *name,
                                                     size_t capacity)
{
    return create(deviceId, name, capacity, false, "acltdtCreateChannelWithCapacity");
}

acltdtChannelHandle *acltdtCreateChannel(uint32_t deviceId, const char *name)
{
    return create(deviceId, name, 0, true, "acltdtCreateChannel");
}

/* The checks every channel call starts with; on success tdt_lock is held
 * and *ch is the live channel. */
static aclError enter(const acltdtChannelHandle *handle, const char *api, struct channel **ch)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!handle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "handle is NULL");
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&aclsim__tdt_lock);
    *ch = resolve_locked(handle, api, &err);
    if (!*ch)
        pthread_mutex_unlock(&aclsim__tdt_lock);
    return err;
}

/* enter() for a send or receive: the dataset and the timeout checked too. */
static aclError enter_transfer(const acltdtChannelHandle *handle, const acltdtDataset *dataset,
                               int32_t timeout, const char *api, struct channel **ch)
{
    if (!dataset && aclsim__initialized() && handle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "dataset is NULL");
    aclError err = enter(handle, api, ch);
    if (err)
        return err;
    if ((*ch)->tdt && timeout != -1)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           "timeout %d is invalid: a channel made by acltdtCreateChannel only "
                           "waits forever (-1)", (int)timeout);
    else
        err = aclsim__tdt_check_timeout(timeout, api);
    if (err)
        pthread_mutex_unlock(&aclsim__tdt_lock);
    return err;
}

aclError acltdtSendTensor(const acltdtChannelHandle *handle, const acltdtDataset *dataset,
                          int32_t timeout)
{
    static const char api[] = "acltdtSendTensor";
    struct channel *ch = NULL;   /* (set when enter_transfer succeeds) */
    aclError err = enter_transfer(handle, dataset, timeout, api, &ch);
    if (err)
        return err;
    pthread_mutex_unlock(&aclsim__tdt_lock);   /* packing needs no lock */
    struct aclsim__tdt_msg *m;
    if ((err = aclsim__tdt_pack(dataset, &m, api)))
        return err;
    if ((err = enter(handle, api, &ch))) {
        free(m);
        return err;
    }
    err = aclsim__tdtq_put_locked(ch->q, m, timeout, api);
    pthread_mutex_unlock(&aclsim__tdt_lock);
    if (err)
        free(m);
    return err;
}

aclError acltdtReceiveTensor(const acltdtChannelHandle *handle, acltdtDataset *dataset,
                             int32_t timeout)
{
    static const char api[] = "acltdtReceiveTensor";
    struct channel *ch = NULL;   /* (set when enter_transfer succeeds) */
    aclError err = enter_transfer(handle, dataset, timeout, api, &ch);
    if (err)
        return err;
    if (ch->tdt && !ch->receive)
        err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                           "channel \"%s\" is not a receive channel: acltdtCreateChannel makes "
                           "one from a name starting with \"" RECEIVE_PREFIX "\"", ch->q->name);
    if (!err)
        err = aclsim__tdt_check_empty(dataset, api);
    struct aclsim__tdt_msg *m = NULL;
    if (!err)
        err = aclsim__tdtq_take_locked(ch->q, timeout, SIZE_MAX, NULL, &m, api);
    pthread_mutex_unlock(&aclsim__tdt_lock);
    if (err)
        return err;
    err = aclsim__tdt_unpack(m, dataset, api);
    free(m);
    return err;
}

aclError acltdtStopChannel(acltdtChannelHandle *handle)
{
    struct channel *ch;
    aclError err = enter(handle, "acltdtStopChannel", &ch);
    if (err)
        return err;
    ch->q->stopped = true;
    pthread_cond_broadcast(&ch->q->changed);
    pthread_mutex_unlock(&aclsim__tdt_lock);
    return ACL_SUCCESS;
}

static aclError refuse_tdt(const struct channel *ch, const char *api)
{
    if (!ch->tdt)
        return ACL_SUCCESS;
    return aclsim__fail(ACL_ERROR_FEATURE_UNSUPPORTED, api,
                        "not available for a channel made by acltdtCreateChannel (as CANN): "
                        "use acltdtCreateChannelWithCapacity");
}

aclError acltdtCleanChannel(acltdtChannelHandle *handle)
{
    static const char api[] = "acltdtCleanChannel";
    struct channel *ch;
    aclError err = enter(handle, api, &ch);
    if (err)
        return err;
    if (!(err = refuse_tdt(ch, api)))
        aclsim__tdtq_clean_locked(ch->q);
    pthread_mutex_unlock(&aclsim__tdt_lock);
    return err;
}

aclError acltdtQueryChannelSize(const acltdtChannelHandle *handle, size_t *size)
{
    static const char api[] = "acltdtQueryChannelSize";
    if (!size && aclsim__initialized() && handle)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "size is NULL");
    struct channel *ch;
    aclError err = enter(handle, api, &ch);
    if (err)
        return err;
    if (!(err = refuse_tdt(ch, api))) {
        if (ch->q->dead)
            err = aclsim__fail(ch->q->dead, api, "%s", ch->q->dead_why);
        else
            *size = ch->q->count;
    }
    pthread_mutex_unlock(&aclsim__tdt_lock);
    return err;
}

static void unlink_channel(struct channel *ch)
{
    for (struct channel **p = &channels; *p; p = &(*p)->next)
        if (*p == ch) {
            *p = ch->next;
            return;
        }
}

aclError acltdtDestroyChannel(acltdtChannelHandle *handle)
{
    struct channel *ch;
    aclError err = enter(handle, "acltdtDestroyChannel", &ch);
    if (err)
        return err;
    aclsim__handle_free(ch->handle);
    unlink_channel(ch);
    char why[256];
    snprintf(why, sizeof why, "channel \"%s\" was destroyed (acltdtDestroyChannel) while waiting",
             ch->q->name);
    release_queue(ch->q, why);
    free(ch);
    pthread_mutex_unlock(&aclsim__tdt_lock);
    return ACL_SUCCESS;
}

void aclsim__tdt_channels_device_closed_locked(int32_t device)
{
    for (struct aclsim__tdtq **p = &shared; *p;) {
        struct aclsim__tdtq *q = *p;
        if (q->device != device) {
            p = &q->next;
            continue;
        }
        *p = q->next;   /* a new channel of that name gets a new queue */
        q->next = NULL;
        char why[256];
        snprintf(why, sizeof why,
                 "device %d was reset: channel \"%s\" lost its queue (destroy the channel)",
                 (int)device, q->name);
        aclsim__tdtq_kill_locked(q, ACL_ERROR_FAILURE, why);
    }
}

void aclsim__tdt_channels_finalize_locked(void)
{
    while (channels) {
        struct channel *ch = channels;
        channels = ch->next;
        aclsim__handle_free(ch->handle);
        release_queue(ch->q, "aclFinalize destroyed the channel while waiting");
        free(ch);
    }
}

void aclsim__tdt_channels_forget_after_fork(void)
{
    while (channels) {
        struct channel *ch = channels;
        channels = ch->next;
        aclsim__handle_free(ch->handle);
        if (--ch->q->refs == 0) {
            drop_shared(ch->q);
            pthread_cond_init(&ch->q->changed, NULL);
            aclsim__tdtq_free(ch->q);
        }
        free(ch);
    }
}
