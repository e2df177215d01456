/*
 * aclsim: the mstx markers (mstx/ms_tools_ext.h, as CANN ships it): marks
 * and ranges in the default domain or in named domains. On aclsim they are
 * instants and slices on the calling thread's track of the trace file, and
 * with a stream a mark task on that stream (docs/tracing.md#mstx).
 */
#ifndef ACLSIM_MSTX_MS_TOOLS_EXT_H
#define ACLSIM_MSTX_MS_TOOLS_EXT_H

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MSTX_INVALID_ID 0

typedef uint64_t mstxRangeId;

struct mstxDomainRegistration_st;
typedef struct mstxDomainRegistration_st mstxDomainRegistration_t;
typedef mstxDomainRegistration_t *mstxDomainHandle_t;

ACL_FUNC_VISIBILITY void mstxMarkA(const char *message, aclrtStream stream);
ACL_FUNC_VISIBILITY mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream);
ACL_FUNC_VISIBILITY void mstxRangeEnd(mstxRangeId id);

ACL_FUNC_VISIBILITY mstxDomainHandle_t mstxDomainCreateA(const char *name);
ACL_FUNC_VISIBILITY void mstxDomainDestroy(mstxDomainHandle_t domain);
ACL_FUNC_VISIBILITY void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message,
                                         aclrtStream stream);
ACL_FUNC_VISIBILITY mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain,
                                                      const char *message, aclrtStream stream);
ACL_FUNC_VISIBILITY void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_MSTX_MS_TOOLS_EXT_H */
