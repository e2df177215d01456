/*
 * A kernel binary that registers a second descriptor for an address the test
 * program already registered (what an object built without the hidden
 * descriptors could do under symbol interposition): the load must be refused
 * and leave the program's variable alone.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "aclsim/aclsim.h"

static aclsimVar impostor;

__attribute__((constructor)) static void hdup_conflict_register(void)
{
    const void *program_var = dlsym(RTLD_DEFAULT, "dup_shared");
    if (!program_var)
        return;
    impostor.symbol = program_var;
    impostor.size = 4;
    impostor.align = 4;
    impostor.name = "dup_shared";
    impostor.file = __FILE__;
    impostor.line = __LINE__;
    aclsimRegisterVar(&impostor);
}

__attribute__((destructor)) static void hdup_conflict_unregister(void)
{
    if (impostor.symbol)
        aclsimUnregisterVar(&impostor);
}
