/*
 * Operator subscription of CANN's profiling API (acl/acl_prof.h): subscribe
 * configs, aclprofModelSubscribe (aclsim loads no models, so there is none
 * to subscribe to) and the readers of op descriptions. The sessions are in
 * prof.c, what the profiling files share in prof.h.
 */
#include "prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct aclprofSubscribeConfig { int8_t timeInfo; aclprofAicoreMetrics metrics; void *fd; };

/* ---- operator subscription --------------------------------------------------- */

aclprofSubscribeConfig *aclprofCreateSubscribeConfig(int8_t timeInfoSwitch,
                                                     aclprofAicoreMetrics aicoreMetrics, void *fd)
{
    static const char api[] = "aclprofCreateSubscribeConfig";
    if (!fd) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "fd is NULL");
        return NULL;
    }
    if ((aicoreMetrics > ACL_AICORE_MEMORY_ACCESS && aicoreMetrics != ACL_AICORE_NONE) ||
        (int)aicoreMetrics < 0) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "aicoreMetrics %d is not an aclprofAicoreMetrics",
                     (int)aicoreMetrics);
        return NULL;
    }
    if (aclsim__prof_supported(api))
        return NULL;
    struct aclprofSubscribeConfig *c = aclsim__prof_zalloc(sizeof *c, api);
    if (c)
        *c = (struct aclprofSubscribeConfig){timeInfoSwitch, aicoreMetrics, fd};
    return c;
}

aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig *profSubscribeConfig)
{
    static const char api[] = "aclprofDestroySubscribeConfig";
    if (!profSubscribeConfig)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "profSubscribeConfig is NULL");
    aclError err = aclsim__prof_supported(api);
    if (err)
        return err;
    free((void *)profSubscribeConfig);
    return ACL_SUCCESS;
}

static aclError no_model(uint32_t modelId, const char *api)
{
    return aclsim__fail(ACL_ERROR_INVALID_MODEL_ID, api,
                        "no model has id %u: aclsim loads no models (CANN's aclmdl API is not "
                        "part of it), so there is no model to subscribe to", modelId);
}

aclError aclprofModelSubscribe(uint32_t modelId, const aclprofSubscribeConfig *profSubscribeConfig)
{
    static const char api[] = "aclprofModelSubscribe";
    ACLSIM_REQUIRE_INIT(api);
    if (!profSubscribeConfig)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "profSubscribeConfig is NULL");
    aclError err = aclsim__prof_supported(api);
    return err ? err : no_model(modelId, api);
}

aclError aclprofModelUnSubscribe(uint32_t modelId)
{
    static const char api[] = "aclprofModelUnSubscribe";
    ACLSIM_REQUIRE_INIT(api);
    aclError err = aclsim__prof_supported(api);
    return err ? err : no_model(modelId, api);
}

/* One operator of subscription data, as aclsim lays it out. */
struct op_desc {
    uint32_t magic, modelId, flag, threadId;
    uint64_t start, end;   /* microseconds, CLOCK_MONOTONIC */
    char type[ACL_PROF_MAX_OP_TYPE_LEN];
    char name[ACL_PROF_MAX_OP_NAME_LEN];
};
#define OP_MAGIC 0x4f504453u

aclError aclprofGetOpDescSize(size_t *opDescSize)
{
    static const char api[] = "aclprofGetOpDescSize";
    if (!opDescSize)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "opDescSize is NULL");
    aclError err = aclsim__prof_supported(api);
    if (!err)
        *opDescSize = sizeof(struct op_desc);
    return err;
}

/* The record index of opInfo, or NULL with the failure (its code in *err). */
static const struct op_desc *op_at(const void *opInfo, size_t opInfoLen, uint32_t index,
                                   const char *api, aclError *err)
{
    if (!opInfo) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "opInfo is NULL");
        return NULL;
    }
    if (opInfoLen == 0 || opInfoLen % sizeof(struct op_desc)) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "opInfoLen %zu is not a multiple of the op description size %zu "
                            "(aclprofGetOpDescSize)", opInfoLen, sizeof(struct op_desc));
        return NULL;
    }
    if ((*err = aclsim__prof_supported(api)))
        return NULL;
    if (index >= opInfoLen / sizeof(struct op_desc)) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "index %u is not below the %zu ops",
                            index, opInfoLen / sizeof(struct op_desc));
        return NULL;
    }
    const struct op_desc *d = (const struct op_desc *)opInfo + index;
    if (d->magic != OP_MAGIC) {
        *err = aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "opInfo is not subscription data (op %u has no op description)",
                            index);
        return NULL;
    }
    return d;
}

aclError aclprofGetOpNum(const void *opInfo, size_t opInfoLen, uint32_t *opNumber)
{
    static const char api[] = "aclprofGetOpNum";
    aclError err;
    if (!opNumber)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "opNumber is NULL");
    if (!op_at(opInfo, opInfoLen, 0, api, &err))
        return err;
    *opNumber = (uint32_t)(opInfoLen / sizeof(struct op_desc));
    return ACL_SUCCESS;
}

static aclError text_len(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *len,
                         bool type, const char *api)
{
    aclError err;
    if (!len)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL",
                            type ? "opTypeLen" : "opNameLen");
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, api, &err);
    if (d)
        *len = strnlen(type ? d->type : d->name,
                       type ? sizeof d->type - 1 : sizeof d->name - 1) + 1;
    return err;
}

static aclError text_copy(const void *opInfo, size_t opInfoLen, uint32_t index, char *out,
                          size_t outLen, bool type, const char *api)
{
    aclError err;
    if (!out)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", type ? "opType" : "opName");
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, api, &err);
    if (!d)
        return err;
    const char *s = type ? d->type : d->name;
    size_t n = strnlen(s, type ? sizeof d->type - 1 : sizeof d->name - 1);
    if (outLen < n + 1)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "the buffer of %zu bytes is too small: the %s needs %zu", outLen,
                            type ? "op type" : "op name", n + 1);
    memcpy(out, s, n);
    out[n] = 0;
    return ACL_SUCCESS;
}

aclError aclprofGetOpTypeLen(const void *opInfo, size_t opInfoLen, uint32_t index,
                             size_t *opTypeLen)
{
    return text_len(opInfo, opInfoLen, index, opTypeLen, true, "aclprofGetOpTypeLen");
}

aclError aclprofGetOpType(const void *opInfo, size_t opInfoLen, uint32_t index, char *opType,
                          size_t opTypeLen)
{
    return text_copy(opInfo, opInfoLen, index, opType, opTypeLen, true, "aclprofGetOpType");
}

aclError aclprofGetOpNameLen(const void *opInfo, size_t opInfoLen, uint32_t index,
                             size_t *opNameLen)
{
    return text_len(opInfo, opInfoLen, index, opNameLen, false, "aclprofGetOpNameLen");
}

aclError aclprofGetOpName(const void *opInfo, size_t opInfoLen, uint32_t index, char *opName,
                          size_t opNameLen)
{
    return text_copy(opInfo, opInfoLen, index, opName, opNameLen, false, "aclprofGetOpName");
}

uint64_t aclprofGetOpStart(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetOpStart", &err);
    return d ? d->start : 0;
}

uint64_t aclprofGetOpEnd(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetOpEnd", &err);
    return d ? d->end : 0;
}

uint64_t aclprofGetOpDuration(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetOpDuration", &err);
    return d && d->end >= d->start ? d->end - d->start : 0;
}

size_t aclprofGetModelId(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetModelId", &err);
    return d ? d->modelId : 0;
}

aclprofSubscribeOpFlag aclprofGetOpFlag(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    aclError err;
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, "aclprofGetOpFlag", &err);
    return d ? (aclprofSubscribeOpFlag)d->flag : ACL_SUBSCRIBE_NONE;
}

const char *aclprofGetOpAttriValue(const void *opInfo, size_t opInfoLen, uint32_t index,
                                   aclprofSubscribeOpAttri attri)
{
    static const char api[] = "aclprofGetOpAttriValue";
    static _Thread_local char value[16];
    aclError err;
    if (attri != ACL_SUBSCRIBE_ATTRI_THREADID) {
        aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "attri %d is not an aclprofSubscribeOpAttri",
                     (int)attri);
        return NULL;
    }
    const struct op_desc *d = op_at(opInfo, opInfoLen, index, api, &err);
    if (!d)
        return NULL;
    snprintf(value, sizeof value, "%u", d->threadId);
    return value;
}

