/* Shared by the examples: stop at the first failing ACL call, with its code
 * and aclGetRecentErrMsg(); and print what was verified. */
#ifndef ACLSIM_EXAMPLE_CHECK_H
#define ACLSIM_EXAMPLE_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"

#define CHECK(call)                                                                   \
    do {                                                                              \
        aclError err_ = (call);                                                       \
        if (err_ != ACL_SUCCESS) {                                                    \
            const char *msg_ = aclGetRecentErrMsg();                                  \
            fprintf(stderr, "%s:%d: %s failed: %d %s\n", __FILE__, __LINE__, #call,   \
                    err_, msg_ ? msg_ : "");                                          \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* Mismatches counted by verify(); main returns non-zero if there were any. */
static int failures __attribute__((unused));

static inline void verify(int ok, const char *what)
{
    printf("  [%s] %s\n", ok ? "ok" : "MISMATCH", what);
    failures += !ok;
}

#endif
