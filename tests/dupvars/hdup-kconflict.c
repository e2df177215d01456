/*
 * A kernel binary whose kernel has the name of a kernel the test program
 * registers and exports (dup_prog_bump): under -rdynamic its `&fn` resolves to
 * the program's function, which the program's descriptor already registered.
 * The load must be refused; the program's kernel keeps working.
 */
#include <stdint.h>

#include "aclsim/aclsim.h"

void dup_prog_bump(int32_t k);
void dup_prog_bump(int32_t k) { (void)k; }
ACLSIM_KERNEL_REGISTER(dup_prog_bump, int32_t);
