/* Both styles mixed: a C file with ACLSIM_DEVICE_VAR and ACLSIM_KERNEL_REGISTER
 * that uses the __gm__ variable of extern_def.asc, and whose variable the
 * Ascend C code of extern_use.cpp uses. */
#include "acl/acl.h"
#include "aclsim/aclsim.h"

ACLSIM_DEVICE_VAR(int, c_counter, ) = 3;
ACLSIM_DEVICE_VAR_EXTERN(int, table, [4]);

void c_read_table(int *out)
{
    uint32_t i = aclsimGetBlockIdx();
    out[i] = ACLSIM_DEV(table)[i] + ACLSIM_DEV(c_counter);
}
ACLSIM_KERNEL_REGISTER(c_read_table, int *);
