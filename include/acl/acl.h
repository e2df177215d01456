/*
 * aclsim: umbrella header (acl/acl.h). CANN's version also pulls in the
 * operator and model headers; aclsim provides the runtime part only.
 */
#ifndef ACLSIM_ACL_ACL_H
#define ACLSIM_ACL_ACL_H

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#endif /* ACLSIM_ACL_ACL_H */
