/*
 * Checker mode, early-host-access detector (docs/checker.md): host code
 * touching a page-locked buffer that a queued copy or memset will still read
 * or write.
 *
 * With this detector the page-locked heap is one memfd mapped twice (heap.c):
 * the program's addresses, and an alias the runtime's own accesses use.
 * Page-locked allocations get pages of their own. Each queued copy or memset
 * (and nothing else: a kernel or host function would touch the program's
 * addresses itself) has an entry here for the pages of each page-locked
 * allocation it uses -- only the pages its bytes are on -- and those pages
 * are protected while it is pending: a page is protected when its first
 * pending user comes and made accessible when its last one ends. While the
 * allocation also has other pending users, its entries are off (nothing
 * protected). The executor runs copies and memsets through the alias
 * (aclsim__check_task_run). A host access then faults: the SIGSEGV handler
 * writes the report prepared for the pending task that covers the page,
 * makes that page accessible again and returns, so the program goes on (or,
 * with ACLSIM_CHECK_STOP, ends it with abort()).
 *
 * Host code that runs in the stream -- a host function, a kernel's block --
 * is ordered after the tasks queued before it and before those queued after
 * it: when every pending task covering the page is on that stream, its access
 * is not early. The handler then lends the entry's pages to that stream
 * (accessible, no report; only the page if a pending task of another stream
 * covers one of them); they are protected again when the next piece of user
 * code queued on any stream has finished (aclsim__check_reprotect).
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

#define PAGE ((uintptr_t)4096)
#define SLOTS 1024
/* One pending copy or memset's pages of one page-locked allocation: a page
 * is protected while at least one entry covering it is on (the count of
 * pending users of a page is the number of entries covering it). */
static struct protected_range {
    _Atomic uintptr_t start;   /* 0: free */
    uintptr_t end;
    uintptr_t buffer;          /* the allocation (its pages are its own) */
    uint32_t count;            /* pending tasks (under check.c's use lock) */
    /* Protected; false while the allocation has pending users that are not
     * copies or memsets (a kernel touches the program's addresses). */
    atomic_bool on;
    atomic_bool reported;
    /* The stream of the pending tasks (with buffer, start and end: the
     * key), and the stream the entry is lent to
     * (pages of it accessible without a report). */
    _Atomic(const void *) stream, lent;
    char report[640];
} ranges[SLOTS];
static atomic_int lent_count;   /* entries lent: aclsim__check_reprotect has work */
static atomic_int used;         /* no entry at or above it */

static struct sigaction previous;
/* Faults in page-locked memory not (or no longer) in the table that this
 * thread retried: a fault can race the unprotection of its pages. */
static _Thread_local unsigned retries;
#define MAX_RETRIES 100000

static bool covers(int i, uintptr_t from, uintptr_t to)
{
    uintptr_t start = atomic_load_explicit(&ranges[i].start, memory_order_acquire);
    return start && atomic_load_explicit(&ranges[i].on, memory_order_acquire) && start < to &&
           from < ranges[i].end;
}

static void on_fault(int sig, siginfo_t *info, void *uctx)
{
    uintptr_t p = (uintptr_t)info->si_addr, page = p & ~(PAGE - 1);
    const void *own = (const void *)aclsim__tls_stream;
    /* The entries covering p: the first (its pages then), and the first of
     * another stream. */
    int hit = -1, foreign = -1;
    uintptr_t from = 0, to = 0;
    int n = atomic_load(&used);
    for (int i = 0; i < n && foreign < 0; i++) {
        if (!covers(i, p, p + 1))
            continue;
        if (hit < 0) {
            hit = i;
            from = atomic_load(&ranges[i].start);
            to = ranges[i].end;
        }
        if (!own || atomic_load_explicit(&ranges[i].stream, memory_order_acquire) != own)
            foreign = i;
    }
    if (hit >= 0 && foreign < 0 && from && from <= page && page < to) {
        /* Only the stream's own copies use the page, and host code in its
         * order touched it: lent to the stream (accessible first, then
         * marked, so that a re-protection never misses it). All of the
         * entry's pages if no other stream's copy uses one of them. */
        for (int i = 0; i < n; i++)
            if (covers(i, from, to) && atomic_load(&ranges[i].stream) != own) {
                from = page, to = page + PAGE;
                break;
            }
        mprotect((void *)from, to - from, PROT_READ | PROT_WRITE);
        const void *none = NULL;
        if (atomic_compare_exchange_strong(&ranges[hit].lent, &none, own))
            atomic_fetch_add(&lent_count, 1);
        retries = 0;
        return;
    }
    if (foreign >= 0) {
        /* Early: the report of the pending task, that page accessible. */
        if (!atomic_exchange(&ranges[foreign].reported, true)) {
            ssize_t r = write(2, ranges[foreign].report, strlen(ranges[foreign].report));
            (void)r;
            if (aclsim__check_stop)
                aclsim__check_stop_now();
        }
        mprotect((void *)page, PAGE, PROT_READ | PROT_WRITE);
        retries = 0;
        return;
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

/* The entry with that key (hint first), or -1. */
static int find(int hint, uintptr_t buffer, uintptr_t start, uintptr_t end, const void *stream)
{
    int n = atomic_load_explicit(&used, memory_order_relaxed);
    for (int i = hint >= 0 && hint < n ? hint : 0, tries = 0; tries < n; i = (i + 1) % n, tries++)
        if (atomic_load_explicit(&ranges[i].start, memory_order_relaxed) == start &&
            ranges[i].end == end && ranges[i].buffer == buffer &&
            atomic_load_explicit(&ranges[i].stream, memory_order_relaxed) == stream)
            return i;
    return -1;
}

#define PAGES(start, end) start &= ~(PAGE - 1), end = (end + PAGE - 1) & ~(PAGE - 1)

int aclsim__check_protect_again(int hint, uintptr_t buffer, uintptr_t start, uintptr_t end,
                                const void *stream)
{
    PAGES(start, end);
    int i = find(hint, buffer, start, end, stream);
    if (i >= 0)
        ranges[i].count++;
    return i;
}

int aclsim__check_protect(uintptr_t buffer, uintptr_t start, uintptr_t end, const void *stream,
                          bool on, const char *report)
{
    PAGES(start, end);
    for (int i = 0; i < SLOTS; i++) {
        if (atomic_load_explicit(&ranges[i].start, memory_order_relaxed))
            continue;
        ranges[i].end = end;
        ranges[i].buffer = buffer;
        ranges[i].count = 1;
        snprintf(ranges[i].report, sizeof ranges[i].report, "aclsim check: early-host-access: %s\n",
                 report);
        atomic_store(&ranges[i].reported, false);
        atomic_store(&ranges[i].stream, stream);
        atomic_store(&ranges[i].on, on);
        if (atomic_exchange(&ranges[i].lent, NULL))
            atomic_fetch_sub(&lent_count, 1);
        atomic_store_explicit(&ranges[i].start, start, memory_order_release);
        if (i >= atomic_load(&used))
            atomic_store(&used, i + 1);
        install();
        /* (Pages another entry covers are protected already, or were made
         * accessible by the handler: then this task is reported anew.) */
        if (on)
            mprotect((void *)start, end - start, PROT_NONE);
        return i;
    }
    return -1;   /* (more pending at once than slots: that one is unchecked) */
}

/* Makes [from, to) accessible but the pages entries of buffer other than
 * slot skip cover (they stay protected). */
static void open_uncovered(uintptr_t buffer, int skip, uintptr_t from, uintptr_t to)
{
    int n = atomic_load(&used);
    while (from < to) {
        /* The first covered piece at or after from. */
        uintptr_t lo = to, hi = to;
        for (int i = 0; i < n; i++) {
            if (i == skip || ranges[i].buffer != buffer || !covers(i, from, to))
                continue;
            uintptr_t s = atomic_load(&ranges[i].start);
            s = s < from ? from : s;
            if (s < lo)
                lo = s, hi = ranges[i].end < to ? ranges[i].end : to;
        }
        if (lo > from)
            mprotect((void *)from, lo - from, PROT_READ | PROT_WRITE);
        from = hi;
    }
}

int aclsim__check_unprotect(int hint, uintptr_t buffer, uintptr_t start, uintptr_t end,
                            const void *stream)
{
    PAGES(start, end);
    int i = find(hint, buffer, start, end, stream);
    if (i < 0 || --ranges[i].count > 0)
        return i;
    if (atomic_load(&ranges[i].on))
        open_uncovered(buffer, i, start, end);
    if (atomic_exchange(&ranges[i].lent, NULL))
        atomic_fetch_sub(&lent_count, 1);
    atomic_store_explicit(&ranges[i].start, 0, memory_order_release);
    int n = atomic_load(&used);
    while (n > 0 && !atomic_load_explicit(&ranges[n - 1].start, memory_order_relaxed))
        n--;
    atomic_store(&used, n);
    return -1;
}

void aclsim__check_protect_buffer(uintptr_t buffer, bool on)
{
    for (int i = 0, n = atomic_load(&used); i < n; i++) {
        uintptr_t start = atomic_load(&ranges[i].start);
        if (!start || ranges[i].buffer != buffer || atomic_load(&ranges[i].on) == on)
            continue;
        if (atomic_exchange(&ranges[i].lent, NULL))
            atomic_fetch_sub(&lent_count, 1);
        atomic_store(&ranges[i].reported, false);
        atomic_store(&ranges[i].on, on);
        mprotect((void *)start, ranges[i].end - start, on ? PROT_NONE : PROT_READ | PROT_WRITE);
    }
}

bool aclsim__check_lent(void)
{
    return atomic_load_explicit(&lent_count, memory_order_relaxed) > 0;
}

void aclsim__check_reprotect(void)
{
    for (int i = 0, n = atomic_load(&used); i < n && atomic_load(&lent_count) > 0; i++) {
        /* (Unmarked first: a fault after the protection lends it again.) */
        if (!atomic_exchange(&ranges[i].lent, NULL))
            continue;
        atomic_fetch_sub(&lent_count, 1);
        uintptr_t start = atomic_load(&ranges[i].start);
        if (start && atomic_load(&ranges[i].on))
            mprotect((void *)start, ranges[i].end - start, PROT_NONE);
    }
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
