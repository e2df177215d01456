/*
 * aclsim: CANN-compatible base header (acl/acl_base.h). As in CANN it
 * gathers the runtime base definitions (acl/acl_base_rt.h) and the error
 * codes; CANN's model-side part (acl_base_mdl.h) is not part of aclsim.
 */
#ifndef ACLSIM_ACL_ACL_BASE_H
#define ACLSIM_ACL_ACL_BASE_H

#include "acl/acl_base_rt.h"
#include "acl/error_codes/rt_error_codes.h"

#endif /* ACLSIM_ACL_ACL_BASE_H */
