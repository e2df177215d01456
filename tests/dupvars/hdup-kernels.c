/*
 * A kernel binary whose device variable has the same name as one of the test
 * program's (tests/test-symbol-duplicates.c, linked with -rdynamic so that
 * the program exports its own dup_shared): the two must stay two variables.
 * Here dup_shared has 8 elements, in the program 4.
 */
#include <stdint.h>

#include "aclsim/aclsim.h"

ACLSIM_DEVICE_VAR(int32_t, dup_shared, [8]) = {100, 101, 102, 103, 104, 105, 106, 107};

/* Adds k to this device's instance of the binary's dup_shared, one element per block. */
void hdup_bump(int32_t k) { ACLSIM_DEV(dup_shared)[aclsimGetBlockIdx() % 8] += k; }
ACLSIM_KERNEL_REGISTER(hdup_bump, int32_t);

/* The address this binary's descriptor registered (its own dup_shared). */
const void *hdup_registered_symbol(void);
const void *hdup_registered_symbol(void) { return aclsim__var_dup_shared.symbol; }
