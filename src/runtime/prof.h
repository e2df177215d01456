/*
 * Profiling (acl/acl_prof.h, mstx/ms_tools_ext.h): what its files share.
 *
 *   prof.c     profiling sessions (aclprofInit, configs, aclprofStart/Stop,
 *              aclprofSetConfig, aclprofFinalize) and the helpers below
 *   prof-op.c  operator subscription and the op description readers
 *   prof-tx.c  msproftx stamps, marks and ranges, training steps, mark
 *              tasks on streams, the mstx markers and domains
 *
 * One lock (aclsim__prof_lock) guards the session (prof.c) and the live
 * stamps, open ranges and mstx domains (prof-tx.c); the interned labels of
 * mark tasks have their own (aclsim__prof_intern_lock).
 */
#ifndef ACLSIM_PROF_H
#define ACLSIM_PROF_H

#include "internal.h"

#include "acl/acl_prof.h"
#include "mstx/ms_tools_ext.h"

extern pthread_mutex_t aclsim__prof_lock;
extern pthread_mutex_t aclsim__prof_intern_lock;   /* prof-tx.c */

/* Every aclprof function: IPV350 has no profiling (CANN's tables). */
aclError aclsim__prof_supported(const char *api);
/* n zeroed bytes, or NULL with 200000 (out of memory) for api. */
void *aclsim__prof_zalloc(size_t n, const char *api);

#endif /* ACLSIM_PROF_H */
