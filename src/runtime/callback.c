/*
 * Host functions: user callbacks queued on a stream, run by a device worker
 * in stream order.
 */
#include "internal.h"

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)
{
    static const char api[] = "aclrtLaunchHostFunc";
    ACLSIM_REQUIRE_INIT(api);
    if (!fn)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "fn is NULL");
    struct aclsim__sref s;
    aclError err = aclsim__stream_resolve(stream, api, NULL, &s);
    if (err)
        return err;
    struct aclsim__task t = {.kind = ACLSIM_TASK_HOST_FUNC, .u.host = {fn, args}};
    return aclsim__submit(s, &t, api, NULL);
}

