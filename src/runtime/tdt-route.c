/*
 * Queue attributes, routes, route lists and route queries (the plain host
 * objects of acl/acl_tdt_queue.h), and the routes bound between shared
 * queues (tdt-queue.c has the queues; tdt.h what both share).
 *
 * Routes: a message enqueued into a queue with bound routes is forwarded,
 * whole, to every destination once all of them have room (a full destination
 * holds it back in the source, which then fills up: back-pressure). Forwarding
 * happens under tdt_lock right after every change that can allow it (pump()).
 * Bound routes never form a cycle (refused at bind), so forwarding ends.
 */
#include "tdt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct route { uint32_t src, dst; int32_t device; };
static struct route *routes;          /* bound routes */
static size_t nroutes, cap_routes;

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
        a->depth = ACLSIM_TDT_DEPTH_DEFAULT;
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
void aclsim__tdt_pump(void)
{
    bool moved = true;
    while (moved) {
        moved = false;
        for (struct aclsim__tdtq *q = aclsim__tdt_queues; q; q = q->next) {
            while (q->head && !q->dead) {
                bool has = false, room = true;
                for (size_t i = 0; i < nroutes && room; i++) {
                    if (routes[i].device != q->device || routes[i].src != q->qid)
                        continue;
                    has = true;
                    struct aclsim__tdtq *d = aclsim__tdtq_find(q->device, routes[i].dst);
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
                copies[ndst - 1] = aclsim__tdtq_pop(q);
                for (size_t i = 0; i < nroutes; i++) {
                    if (routes[i].device != q->device || routes[i].src != q->qid)
                        continue;
                    aclsim__tdtq_append(aclsim__tdtq_find(q->device, routes[i].dst), copies[done++]);
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
        err = aclsim__tdt_current_device(api, &device);
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
        else if (!aclsim__tdtq_find(device, r->srcId) || !aclsim__tdtq_find(device, r->dstId))
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
        aclsim__tdt_pump();
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
        err = aclsim__tdt_current_device(api, &device);
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

/* ---- what tdt-queue.c asks (tdt_lock held) ------------------------------------- */

bool aclsim__tdt_has_routes(void)
{
    return nroutes != 0;
}

bool aclsim__tdt_routed(const struct aclsim__tdtq *q)
{
    for (size_t i = 0; i < nroutes; i++)
        if (routes[i].device == q->device && (routes[i].src == q->qid || routes[i].dst == q->qid))
            return true;
    return false;
}

/* The routes from or to q go (q is destroyed). */
void aclsim__tdt_routes_drop(const struct aclsim__tdtq *q)
{
    for (size_t i = 0; i < nroutes;)
        if (routes[i].device == q->device && (routes[i].src == q->qid || routes[i].dst == q->qid))
            routes[i] = routes[--nroutes];
        else
            i++;
}

/* aclFinalize, fork: no route is left. */
void aclsim__tdt_routes_free(void)
{
    free(routes);
    routes = NULL;
    nroutes = cap_routes = 0;
}
