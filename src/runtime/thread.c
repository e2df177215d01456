/*
 * Thread exit: what a thread keeps in its thread-locals (a spare task, kernel
 * block memory, its system argument list, its push stack, its symbol-copy
 * slot, its trace ring) is given back when the thread exits. One pthread key
 * serves them all: a part armed by aclsim__thread_keep (internal.h) has its cleanup called
 * by the key's destructor, each part's own function (the table below).
 *
 * The library's destructor deletes the key. Without that, a thread that had
 * used the runtime and exited after dlclose() of the library would call a
 * destructor that was no longer mapped (a crash; test-unload). After it, such
 * a thread's parts stay allocated: the library is gone, and with it whatever
 * could still use them.
 */
#include "internal.h"

static pthread_key_t key;
static bool key_ok;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
_Thread_local unsigned aclsim__thread_armed;   /* (internal.h) */

static void (*const cleanup[ACLSIM_THREAD_PARTS])(void) = {
    [ACLSIM_THREAD_HAND] = aclsim__submit_thread_exit,
    [ACLSIM_THREAD_BLOCK_MEM] = aclsim__block_thread_exit,
    [ACLSIM_THREAD_KARGS] = aclsim__kargs_thread_exit,
    [ACLSIM_THREAD_TX_STACK] = aclsim__tx_thread_exit,
    [ACLSIM_THREAD_SYMBOL_SLOT] = aclsim__symbol_thread_exit,
    [ACLSIM_THREAD_TRACE_RING] = aclsim__trace_thread_exit,
};

/* A cleanup may arm its part again (a submit from a later destructor): the
 * key's value is then set again, and pthread calls this once more. */
static void thread_exit(void *unused)
{
    (void)unused;
    unsigned parts = aclsim__thread_armed;
    aclsim__thread_armed = 0;
    for (int i = 0; i < ACLSIM_THREAD_PARTS; i++)
        if (parts & (1u << i))
            cleanup[i]();
}

static void make_key(void)
{
    key_ok = pthread_key_create(&key, thread_exit) == 0;
}

/* aclsim__thread_keep's first call for part on this thread. */
bool aclsim__thread_arm(enum aclsim__thread_part part)
{
    pthread_once(&key_once, make_key);
    if (!__atomic_load_n(&key_ok, __ATOMIC_ACQUIRE) || pthread_setspecific(key, (void *)1) != 0)
        return false;
    aclsim__thread_armed |= 1u << part;
    return true;
}

/* At dlclose() of the library, or at process exit. */
__attribute__((destructor)) static void unload(void)
{
    if (__atomic_exchange_n(&key_ok, false, __ATOMIC_ACQ_REL))
        pthread_key_delete(key);
}
