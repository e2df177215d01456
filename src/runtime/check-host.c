/*
 * Checker mode, early-host-access detector (docs/checker.md): host code
 * touching a page-locked buffer that a queued copy or memset will still read
 * or write.
 *
 * With this detector the page-locked heap is one memfd mapped twice (heap.c):
 * the program's addresses, and an alias the runtime's own accesses use.
 * Page-locked allocations get pages of their own. While queued copies or
 * memsets (and nothing else: a kernel or host function would touch the
 * program's addresses itself) use an allocation, its pages are protected;
 * the executor runs those tasks through the alias (aclsim__check_task_run).
 * A host access then faults: the SIGSEGV handler writes the report prepared
 * when the pages were protected (the buffer and the pending task), makes the
 * pages accessible again and returns, so the program goes on (or, with
 * ACLSIM_CHECK_STOP, ends it with abort()).
 *
 * Host code that runs in the stream -- a host function, a kernel's block --
 * is ordered after the tasks queued before it and before those queued after
 * it: when every pending task using the buffer is on that stream, its access
 * is not early. The handler then lends the pages to that stream (makes them
 * accessible, no report); they are protected again when the next piece of
 * user code queued on any stream has finished (aclsim__check_reprotect).
 *
 * The handler only reads the table of protected ranges (atomics) and calls
 * write(2), mprotect and abort; a fault elsewhere goes to the handler that
 * was installed before (or the default action).
 */
#include "internal.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOTS 256
static struct protected_range {
    _Atomic uintptr_t start;   /* 0: free */
    uintptr_t end;
    atomic_bool reported;
    /* The one stream whose pending tasks use the range (NULL: several), and
     * the stream it is lent to (its pages accessible without a report). */
    _Atomic(const void *) stream, lent;
    char report[640];
} ranges[SLOTS];
static atomic_int lent_count;   /* ranges lent: aclsim__check_reprotect has work */

static struct sigaction previous;
/* Faults in page-locked memory not (or no longer) in the table that this
 * thread retried: a fault can race the unprotection of its pages. */
static _Thread_local unsigned retries;
#define MAX_RETRIES 100000

static void on_fault(int sig, siginfo_t *info, void *uctx)
{
    uintptr_t p = (uintptr_t)info->si_addr;
    for (int i = 0; i < SLOTS; i++) {
        uintptr_t start = atomic_load_explicit(&ranges[i].start, memory_order_acquire);
        if (start && p >= start && p < ranges[i].end) {
            const void *own = atomic_load_explicit(&ranges[i].stream, memory_order_acquire);
            if (own && own == (const void *)aclsim__tls_stream) {
                /* In stream order: lent to the stream (accessible first, then
                 * marked, so that a re-protection never misses it). */
                mprotect((void *)start, ranges[i].end - start, PROT_READ | PROT_WRITE);
                const void *none = NULL;
                if (atomic_compare_exchange_strong(&ranges[i].lent, &none, own))
                    atomic_fetch_add(&lent_count, 1);
                retries = 0;
                return;
            }
            if (!atomic_exchange(&ranges[i].reported, true)) {
                ssize_t r = write(2, ranges[i].report, strlen(ranges[i].report));
                (void)r;
                if (aclsim__check_stop)
                    aclsim__check_stop_now();
            }
            mprotect((void *)start, ranges[i].end - start, PROT_READ | PROT_WRITE);
            retries = 0;
            return;
        }
    }
    /* Page-locked memory whose pages were unprotected meanwhile: retry. */
    struct aclsim__heap *h = &aclsim__host_heap;
    if (__atomic_load_n(&h->alias, __ATOMIC_ACQUIRE) && aclsim__heap_contains(h, (void *)p) &&
        ++retries < MAX_RETRIES)
        return;
    retries = 0;
    /* Not ours: as if this handler were not there. */
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, info, uctx);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
    } else {
        signal(sig, SIG_DFL);   /* the access faults again, with the default action */
    }
}

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

/* Installs on_fault unless it is the handler already (a test framework or
 * the program may have installed its own since: that one becomes the
 * previous, to which faults that are not ours go). */
static void install(void)
{
    pthread_mutex_lock(&install_lock);
    struct sigaction now;
    sigaction(SIGSEGV, NULL, &now);
    if (!(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != on_fault) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, &previous);
    }
    pthread_mutex_unlock(&install_lock);
}

void aclsim__check_host_start(void)
{
    install();
}

int aclsim__check_protect(uintptr_t start, size_t len, const char *report, const void *stream)
{
    for (int i = 0; i < SLOTS; i++) {
        uintptr_t none = 0;
        if (atomic_load_explicit(&ranges[i].start, memory_order_relaxed))
            continue;
        ranges[i].end = start + len;
        snprintf(ranges[i].report, sizeof ranges[i].report, "aclsim check: early-host-access: %s\n",
                 report);
        atomic_store(&ranges[i].reported, false);
        atomic_store(&ranges[i].stream, stream);
        if (atomic_exchange(&ranges[i].lent, NULL))
            atomic_fetch_sub(&lent_count, 1);
        if (!atomic_compare_exchange_strong(&ranges[i].start, &none, start))
            continue;
        install();
        mprotect((void *)start, len, PROT_NONE);
        return i;
    }
    return -1;   /* (more buffers pending at once than slots: that one is unchecked) */
}

void aclsim__check_protect_stream(int slot, const void *stream)
{
    atomic_store(&ranges[slot].stream, stream);
}

bool aclsim__check_lent(void)
{
    return atomic_load_explicit(&lent_count, memory_order_relaxed) > 0;
}

void aclsim__check_reprotect(void)
{
    for (int i = 0; i < SLOTS && atomic_load(&lent_count) > 0; i++) {
        /* (Unmarked first: a fault after the protection lends it again.) */
        if (!atomic_exchange(&ranges[i].lent, NULL))
            continue;
        atomic_fetch_sub(&lent_count, 1);
        uintptr_t start = atomic_load(&ranges[i].start);
        if (start)
            mprotect((void *)start, ranges[i].end - start, PROT_NONE);
    }
}

void aclsim__check_unprotect(int slot)
{
    uintptr_t start = atomic_load(&ranges[slot].start);
    mprotect((void *)start, ranges[slot].end - start, PROT_READ | PROT_WRITE);
    atomic_store_explicit(&ranges[slot].start, 0, memory_order_release);
}

/* The alias of page-locked address p, or p. */
static void *alias_of(const void *p)
{
    struct aclsim__heap *h = &aclsim__host_heap;
    char *alias = __atomic_load_n(&h->alias, __ATOMIC_ACQUIRE);
    if (!alias || !aclsim__heap_contains(h, p))
        return (void *)p;
    return alias + ((const char *)p - __atomic_load_n(&h->base, __ATOMIC_ACQUIRE));
}

const void *aclsim__check_unalias(const void *p)
{
    struct aclsim__heap *h = &aclsim__host_heap;
    char *alias = __atomic_load_n(&h->alias, __ATOMIC_ACQUIRE);
    if (!alias || (const char *)p < alias ||
        (size_t)((const char *)p - alias) >= __atomic_load_n(&h->reserved, __ATOMIC_RELAXED))
        return p;
    return __atomic_load_n(&h->base, __ATOMIC_ACQUIRE) + ((const char *)p - alias);
}

void *aclsim__check_alias(const void *p)
{
    return alias_of(p);
}

void aclsim__check_task_run(struct aclsim__stream *s, struct aclsim__task *t)
{
    if (t->kind == ACLSIM_TASK_COPY)
        aclsim__check_copy_run(s, t);   /* uninit (check-uninit.c) */
    if (!ACLSIM_CHECKING(ACLSIM_CHECK_EARLY_HOST))
        return;
    switch (t->kind) {   /* the runtime's accesses go through the alias */
    case ACLSIM_TASK_COPY:
        t->u.copy.dst = alias_of(t->u.copy.dst);
        t->u.copy.src = alias_of(t->u.copy.src);
        break;
    case ACLSIM_TASK_MEMSET:
        t->u.memset.dst = alias_of(t->u.memset.dst);
        break;
    case ACLSIM_TASK_COPY2D:
        t->u.copy2d.dst = alias_of(t->u.copy2d.dst);
        t->u.copy2d.src = alias_of(t->u.copy2d.src);
        break;
    case ACLSIM_TASK_MEMSET32:
        t->u.memset32.dst = alias_of(t->u.memset32.dst);
        break;
    default:
        break;
    }
}

bool aclsim__check_protectable(uint8_t kind)
{
    return kind == ACLSIM_TASK_COPY || kind == ACLSIM_TASK_MEMSET ||
           kind == ACLSIM_TASK_COPY2D || kind == ACLSIM_TASK_MEMSET32;
}
