/*
 * A kernel binary whose kernel has the name of a plain function the test
 * program exports (dup_plain_function, not a kernel there): under -rdynamic
 * its `&fn` resolves to the program's function, so the registered kernel
 * would run the program's code. The load must be refused.
 */
#include <stdint.h>

#include "aclsim/aclsim.h"

void dup_plain_function(int32_t k);
void dup_plain_function(int32_t k) { (void)k; }
ACLSIM_KERNEL_REGISTER(dup_plain_function, int32_t);
