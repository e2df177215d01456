/*
 * Failures (docs/failures.md): what their files share.
 *
 *   failure.c         failed tasks and what follows from them: the failure
 *                     records, failure mode, exception callbacks and their
 *                     getters, aclrtGetThreadLastTaskId, op timeouts,
 *                     aclFinalize and fork
 *   failure-device.c  the device side: status, state callbacks, task abort
 *                     (and its callbacks), verbose errors, error and memory
 *                     UCE repair
 */
#ifndef ACLSIM_FAILURE_H
#define ACLSIM_FAILURE_H

#include "internal.h"

#define NOT_IPV350 ACLSIM_ALL_BUT_IPV
#define FAST_RECOVER (ACLSIM_FAMILIES(A5) | ACLSIM_FAMILIES(A3) | ACLSIM_FAMILIES(A2))

/* A stream's context: written atomically when a pooled stream starts a new life. */
static inline struct aclsim__context *aclsim__stream_context(const struct aclsim__stream *s)
{
    return __atomic_load_n(&s->context, __ATOMIC_RELAXED);
}

/* failure.c */
/* The checks that open most functions of failure*.c (NULL output, init, product). */
aclError aclsim__failure_prologue(const char *api, const void *out, const char *out_name,
                                  unsigned families);
/* Stops s (its tasks not yet started are discarded), with code as its pending fault. */
void aclsim__stop_stream(struct aclsim__stream *s, aclError code, const char *text);
/* The device's latest failure (aclrtGetErrorVerbose), or ACL_SUCCESS. */
aclError aclsim__device_latest_fault(int32_t id);

/* failure-device.c: aclFinalize (forgets the named callbacks) and fork() child
 * (re-creates the registries' locks), called by failure.c's. */
void aclsim__failure_device_finalize(void);
void aclsim__failure_device_forget_after_fork(void);

#endif /* ACLSIM_FAILURE_H */
