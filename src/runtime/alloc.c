/* Internal allocation with failure injection for out-of-memory tests. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* -1: never fail. k >= 0: k more allocations succeed, then one fails. */
static atomic_long countdown = -1;
static atomic_long failed;

void aclsim__fail_allocation_after(long n)
{
    atomic_store(&countdown, n < 0 ? -1 : n);
}

long aclsim__allocations_failed(void) { return atomic_load(&failed); }

static bool inject(void)
{
    long c = atomic_load_explicit(&countdown, memory_order_relaxed);
    while (c >= 0) {
        if (atomic_compare_exchange_weak(&countdown, &c, c - 1)) {
            if (c == 0) {
                atomic_fetch_add(&failed, 1);
                return true;
            }
            return false;
        }
    }
    return false;
}

void *aclsim__malloc(size_t size) { return inject() ? NULL : malloc(size); }
void *aclsim__calloc(size_t count, size_t size) { return inject() ? NULL : calloc(count, size); }
void *aclsim__realloc(void *p, size_t size) { return inject() ? NULL : realloc(p, size); }
char *aclsim__strdup(const char *s) { return inject() ? NULL : strdup(s); }

void *aclsim__aligned_alloc(size_t align, size_t size)
{
    void *p = NULL;
    if (inject())
        return NULL;
    if (align < sizeof(void *))
        align = sizeof(void *);
    return posix_memalign(&p, align, size) == 0 ? p : NULL;
}
