/*
 * The checker's hook for the Ascend C layer (internal to aclsim, not an API;
 * docs/checker.md): aclsim_vector.h passes every GM access of DataCopy,
 * DataCopyPad and GlobalTensor's GetValue / SetValue / operator() through
 * aclsimCheckGm while checker mode has oob, uninit or race on. With checking
 * off the layer pays one load and one branch (aclsim__check_mask is written
 * only by aclInit and aclFinalize). C and C++.
 */
#ifndef ACLSIM_ASCENDC_CHECK_H
#define ACLSIM_ASCENDC_CHECK_H

#include <stdint.h>

#include "aclsim/aclsim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The detectors switched on (ACLSIM_CHECK): the runtime's own mask. */
extern ACLSIM_API unsigned aclsim__check_mask;

/* Its bits the layer looks at (the runtime's values, src/internal.h). */
enum { ACLSIM_GM_CHECK_OOB = 1u, ACLSIM_GM_CHECK_RACE = 16u, ACLSIM_GM_CHECK_UNINIT = 32u,
       ACLSIM_GM_CHECK_ANY = 1u | 16u | 32u };

/* How an access uses GM: reads, writes, or a reference that may do either
 * (GlobalTensor::operator(): bounds only; counted as a read by race). */
enum { ACLSIM_GM_READ = 1, ACLSIM_GM_WRITE = 2, ACLSIM_GM_REF = 3 };

/* Inside a kernel, before an access of the Ascend C layer to GM: count
 * blocks of len bytes, block i at base + off + i * step; limit: the bytes
 * the GlobalTensor has from base (the size given to SetGlobalBuffer),
 * UINT64_MAX when not known; api names the access ("DataCopy (UB to GM)").
 * oob: an access outside the live allocation (or device variable instance)
 * base points into, or past limit, is reported at once and fails the launch
 * (507015 at the next synchronize): returns 1, and the caller skips the
 * access. uninit: a read of bytes nothing wrote is reported the same way
 * (returns 0: the read is done). race: the bytes are counted as the
 * launch's (docs/checker.md). Returns 0 otherwise, and outside a kernel. */
ACLSIM_API int aclsimCheckGm(const void *base, uint64_t limit, uint64_t off, uint64_t count,
                             uint64_t len, uint64_t step, int how, const char *api);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ASCENDC_CHECK_H */
