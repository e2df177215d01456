/*
 * Sharing between processes (docs/ipc.md): IPC memory (aclrtIpcMem*),
 * shareable handles of physical memory (aclrtMem*ShareableHandle*), and the
 * registry behind them and behind IPC events (event-ipc.c) and IPC notifies
 * (notify.c).
 *
 * The registry. Each process that exports something has one table: a memfd
 * named "aclsim-ipc-table" of IPC_SLOTS fixed-size slots, mapped MAP_SHARED.
 * A slot describes one exported object (its kind, the pid whitelist, where
 * its memory is, an event's counters, a notify's flag) and is live while its
 * nonce (a random 64-bit number, never 0) is set. A key names a slot:
 * "aclsim-<owner pid>-<slot>-<nonce>". Another process finds the owner's
 * table by looking for that memfd among /proc/<pid>/fd (which only the same
 * user may open), maps it, and checks the nonce: a closed or reused slot, an
 * exited owner or a recycled pid never match. Exported memory is opened the
 * same way: device heaps are memfds (heap.c) and so are physical
 * allocations (vmm-phys.c); the slot holds the owner's descriptor number and the
 * file's inode, which the importer verifies after opening
 * /proc/<pid>/fd/<n>.
 *
 * Nothing has a name in any shared-memory namespace: every object is a
 * memfd, freed by the kernel when the last process that maps or holds it
 * ends, however it ends (SIGKILL included). There is nothing to reclaim.
 *
 * Ordering: an exporter fills a slot, then publishes its nonce with a
 * release store; importers read the nonce with acquire and read the fields
 * after it; fields that change while live (whitelist, counters, flag) are
 * atomics. The whitelist is append-only: an entry is written before the
 * count that covers it (release). Only the owner writes a slot's immutable
 * fields, under own_lock.
 *
 * This file is the registry and the shared state of IPC events and notifies;
 * the public calls of IPC memory are in ipc-mem.c, those of shareable
 * handles in ipc-share.c, and what the three share in ipc.h.
 */
#include "ipc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#define IPC_MAGIC 0x61636c73696d4950ull   /* "aclsimIP" */
#define TABLE_NAME "aclsim-ipc-table"

/* This process's table (made at the first export) and the tables of other
 * processes mapped so far. Both stay mapped for the life of the process
 * (MADV_DONTFORK: a fork() child has neither, see forget_after_fork), so a
 * slot pointer held by a task or an opened object never dangles; a closed
 * slot simply no longer matches. */
pthread_mutex_t aclsim__ipc_own_lock = PTHREAD_MUTEX_INITIALIZER;
struct table *aclsim__ipc_own;
static int own_fd = -1;
static uint32_t cursor;            /* next slot to try (reuse as late as possible) */

struct peer { struct peer *next; pid_t pid; struct table *table; };
static struct peer *peers;         /* under own_lock */

struct exported *aclsim__ipc_export_list;   /* under own_lock */
struct imported *aclsim__ipc_import_list;   /* under own_lock */
atomic_uint aclsim__ipc_exports;   /* memory exports live: aclrtFree looks only then */

static uint64_t new_nonce(void)
{
    uint64_t n = 0;
    if (getrandom(&n, sizeof n, GRND_NONBLOCK) != (ssize_t)sizeof n)
        n = aclsim__now_ns() * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
    return n ? n : 1;
}

/* Caller holds own_lock. Creates this process's table if needed. */
static aclError own_table_locked(const char *api)
{
    if (aclsim__ipc_own)
        return ACL_SUCCESS;
    int fd = memfd_create(TABLE_NAME, MFD_CLOEXEC);
    void *p = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, sizeof(struct table)) == 0)
        p = mmap(NULL, sizeof(struct table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return aclsim__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api,
                            "cannot create the shared table of exported objects: %s", strerror(e));
    }
    madvise(p, sizeof(struct table), MADV_DONTFORK);
    struct table *t = p;
    t->pid = getpid();
    t->nslots = IPC_SLOTS;
    __atomic_store_n(&t->magic, IPC_MAGIC, __ATOMIC_RELEASE);
    aclsim__ipc_own = t;
    own_fd = fd;
    return ACL_SUCCESS;
}

/* Maps the table of process pid (caller holds own_lock): NULL with errno
 * ESRCH (no such process), EACCES (not ours to open) or ENOENT (it exports
 * nothing). */
static struct table *map_peer_locked(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    if (!d) {
        errno = errno == ENOENT ? ESRCH : EACCES;
        return NULL;
    }
    struct table *found = NULL;
    int why = ENOENT;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[320], link[128];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = 0;
        if (strncmp(link, "/memfd:" TABLE_NAME, strlen("/memfd:" TABLE_NAME)) != 0)
            continue;
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            why = EACCES;
            continue;
        }
        struct stat st;
        void *p = MAP_FAILED;
        if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(struct table))
            p = mmap(NULL, sizeof(struct table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED)
            continue;
        struct table *t = p;
        if (__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) == IPC_MAGIC && t->pid == pid &&
            t->nslots == IPC_SLOTS) {
            madvise(p, sizeof(struct table), MADV_DONTFORK);
            found = t;
        } else {
            munmap(p, sizeof(struct table));
        }
    }
    closedir(d);
    if (!found)
        errno = why;
    return found;
}

/* The table of pid: ours, a mapped one, or mapped now (refresh: map again,
 * the pid may belong to another process by now). Caller holds own_lock. */
struct table *aclsim__ipc_table_of_locked(pid_t pid, bool refresh)
{
    if (pid == getpid()) {
        errno = ENOENT;
        return aclsim__ipc_own;
    }
    struct peer *pr = peers;
    while (pr && pr->pid != pid)
        pr = pr->next;
    if (pr && !refresh)
        return pr->table;
    struct table *t = map_peer_locked(pid);
    if (!t)
        return NULL;
    if (!pr) {
        pr = aclsim__calloc(1, sizeof *pr);
        if (!pr) {
            munmap(t, sizeof *t);
            errno = ENOMEM;
            return NULL;
        }
        pr->pid = pid;
        pr->next = peers;
        peers = pr;
    }
    /* A replaced table stays mapped: slot pointers into it may be held. */
    pr->table = t;
    return t;
}

/* ---- keys ------------------------------------------------------------------ */

void aclsim__ipc_key(const struct aclsim__ipc_ref *r, char key[ACLSIM_IPC_KEY_LEN])
{
    snprintf(key, ACLSIM_IPC_KEY_LEN, "aclsim-%d-%u-%016" PRIx64, (int)r->owner, r->index,
             r->nonce);
}

bool aclsim__ipc_parse_key(const char *key, pid_t *pid, uint32_t *index, uint64_t *nonce)
{
    int p = 0, used = 0;
    unsigned i = 0;
    uint64_t n = 0;
    if (strnlen(key, ACLSIM_IPC_KEY_LEN) >= ACLSIM_IPC_KEY_LEN ||
        sscanf(key, "aclsim-%d-%u-%16" SCNx64 "%n", &p, &i, &n, &used) != 3 ||
        key[used] != 0 || p <= 0 || i >= IPC_SLOTS || n == 0)
        return false;
    *pid = p;
    *index = i;
    *nonce = n;
    return true;
}

bool aclsim__ipc_live(const struct aclsim__ipc_ref *r)
{
    return atomic_load_explicit(&r->slot->nonce, memory_order_acquire) == r->nonce;
}

/* ---- exporting ------------------------------------------------------------- */

aclError aclsim__ipc_export(int kind, int32_t device, int fd, uint64_t offset, uint64_t size,
                            uint64_t map_size, bool no_check, const void *alloc,
                            struct aclsim__ipc_ref *out, const char *api)
{
    struct exported *x = aclsim__calloc(1, sizeof *x);
    if (!x)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    struct stat st = {0};
    if (fd >= 0 && fstat(fd, &st) != 0) {
        free(x);
        return aclsim__fail(ACL_ERROR_RT_INTERNAL_ERROR, api, "cannot stat shared memory: %s",
                            strerror(errno));
    }
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    aclError err = own_table_locked(api);
    uint32_t index = IPC_SLOTS;
    for (uint32_t k = 0; !err && k < IPC_SLOTS; k++) {
        uint32_t i = (cursor + k) % IPC_SLOTS;
        if (atomic_load_explicit(&aclsim__ipc_own->slots[i].nonce, memory_order_relaxed) == 0) {
            index = i;
            break;
        }
    }
    if (!err && index == IPC_SLOTS)
        err = aclsim__fail(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, api,
                           "this process already exports %u objects (close some first)",
                           IPC_SLOTS);
    if (err) {
        pthread_mutex_unlock(&aclsim__ipc_own_lock);
        free(x);
        return err;
    }
    cursor = (index + 1) % IPC_SLOTS;
    struct aclsim__ipc_slot *s = &aclsim__ipc_own->slots[index];
    s->kind = (uint32_t)kind;
    s->device = device;
    s->fd = fd;
    s->ino = (uint64_t)st.st_ino;
    s->offset = offset;
    s->size = size;
    s->map_size = map_size;
    atomic_store_explicit(&s->no_check, no_check, memory_order_relaxed);
    atomic_store_explicit(&s->npids, 0, memory_order_relaxed);
    atomic_store_explicit(&s->attr, 0, memory_order_relaxed);
    atomic_store_explicit(&s->recorded, 0, memory_order_relaxed);
    atomic_store_explicit(&s->queued, 0, memory_order_relaxed);
    atomic_store_explicit(&s->done_upto, 0, memory_order_relaxed);
    for (uint32_t i = 0; i < ACLSIM_IPC_RING; i++) {
        atomic_store_explicit(&s->ring[i], 0, memory_order_relaxed);
        atomic_store_explicit(&s->ring_pid[i], 0, memory_order_relaxed);
    }
    atomic_store_explicit(&s->flag, 0, memory_order_relaxed);
    uint64_t nonce = new_nonce();
    atomic_store_explicit(&s->nonce, nonce, memory_order_release);
    *x = (struct exported){aclsim__ipc_export_list, index, nonce, (uint32_t)kind, alloc, device};
    aclsim__ipc_export_list = x;
    if (kind == ACLSIM_IPC_MEMORY)
        atomic_fetch_add(&aclsim__ipc_exports, 1);
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
    *out = (struct aclsim__ipc_ref){s, nonce, getpid(), index};
    return ACL_SUCCESS;
}

/* Caller holds own_lock: closes export *pp (the slot no longer matches any
 * key) and unlinks it. */
static void close_export_locked(struct exported **pp)
{
    struct exported *x = *pp;
    struct aclsim__ipc_slot *s = &aclsim__ipc_own->slots[x->slot];
    uint64_t expect = x->nonce;
    atomic_compare_exchange_strong(&s->nonce, &expect, 0);
    if (x->kind == ACLSIM_IPC_MEMORY)
        atomic_fetch_sub(&aclsim__ipc_exports, 1);
    *pp = x->next;
    free(x);
}

void aclsim__ipc_close(const struct aclsim__ipc_ref *r)
{
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    for (struct exported **pp = &aclsim__ipc_export_list; *pp; pp = &(*pp)->next)
        if ((*pp)->slot == r->index && (*pp)->nonce == r->nonce) {
            close_export_locked(pp);
            break;
        }
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
}

/* Closes the memory exports matching (alloc, or every one of device). */
static void close_exports(const void *alloc, int32_t device)
{
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    for (struct exported **pp = &aclsim__ipc_export_list; *pp;) {
        struct exported *x = *pp;
        if (x->kind == ACLSIM_IPC_MEMORY && (alloc ? x->alloc == alloc : x->device == device))
            close_export_locked(pp);
        else
            pp = &x->next;
    }
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
}

void aclsim__ipc_memory_freed(const void *alloc)
{
    if (atomic_load_explicit(&aclsim__ipc_exports, memory_order_acquire))
        close_exports(alloc, -1);
}

void aclsim__ipc_device_closed(struct aclsim__device *dev)
{
    if (atomic_load_explicit(&aclsim__ipc_exports, memory_order_acquire))
        close_exports(NULL, dev->id);
}

/* A physical allocation freed (vmm-phys.c): its exports close. */
void aclsim__ipc_physical_freed(const void *handle)
{
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    for (struct exported **pp = &aclsim__ipc_export_list; *pp;) {
        if ((*pp)->kind == ACLSIM_IPC_PHYSICAL && (*pp)->alloc == handle)
            close_export_locked(pp);
        else
            pp = &(*pp)->next;
    }
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
}

/* The pid whitelist: appends pids (107000 when it would exceed the table). */
aclError aclsim__ipc_allow(const struct aclsim__ipc_ref *r, const int32_t *pid, size_t num,
                           const char *api)
{
    for (size_t i = 0; i < num; i++)
        if (pid[i] <= 0)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "pid[%zu] is %d: not a process id", i, (int)pid[i]);
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    struct aclsim__ipc_slot *s = r->slot;
    aclError err = ACL_SUCCESS;
    if (!aclsim__ipc_live(r)) {
        err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "the object was closed");
    } else {
        uint32_t n = atomic_load_explicit(&s->npids, memory_order_relaxed);
        for (size_t i = 0; i < num; i++) {
            bool known = false;
            for (uint32_t k = 0; k < n && !known; k++)
                known = atomic_load_explicit(&s->pids[k], memory_order_relaxed) == pid[i];
            if (known)
                continue;
            if (n == ACLSIM_IPC_MAX_PIDS) {
                err = aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                   "the whitelist is full (%u processes); pid[%zu] = %d and "
                                   "those after it were not added", ACLSIM_IPC_MAX_PIDS, i,
                                   (int)pid[i]);
                break;
            }
            atomic_store_explicit(&s->pids[n], pid[i], memory_order_relaxed);
            atomic_store_explicit(&s->npids, ++n, memory_order_release);
        }
    }
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
    return err;
}

/* ---- importing ------------------------------------------------------------- */

aclError aclsim__ipc_open(const char *key, int kind, const char *what,
                          struct aclsim__ipc_ref *out, const char *api)
{
    pid_t pid;
    uint32_t index;
    uint64_t nonce;
    if (!aclsim__ipc_parse_key(key, &pid, &index, &nonce))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "key \"%.64s\" is not a key aclsim exported (expected "
                            "\"aclsim-<pid>-<slot>-<nonce>\")", key);
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    struct aclsim__ipc_slot *s = NULL;
    int why = 0;
    for (int attempt = 0; attempt < 2 && !s; attempt++) {
        struct table *t = aclsim__ipc_table_of_locked(pid, attempt > 0);
        if (!t) {
            why = errno;
            break;
        }
        if (atomic_load_explicit(&t->slots[index].nonce, memory_order_acquire) == nonce)
            s = &t->slots[index];
        else
            why = ENOENT;
        if (pid == getpid())
            break;
    }
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
    if (!s)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "key \"%s\": %s", key,
                            why == ESRCH ? "the process that exported it has exited"
                            : why == EACCES ? "the exporting process belongs to another user "
                                              "(or cannot be inspected): its objects cannot be "
                                              "opened"
                                            : "no such object (closed, freed, or never exported)");
    if (s->kind != (uint32_t)kind)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "key \"%s\" does not name %s", key,
                            what);
    int32_t self = getpid();
    bool ok = pid == self || atomic_load_explicit(&s->no_check, memory_order_acquire);
    uint32_t n = atomic_load_explicit(&s->npids, memory_order_acquire);
    for (uint32_t k = 0; k < n && !ok; k++)
        ok = atomic_load_explicit(&s->pids[k], memory_order_relaxed) == self;
    if (!ok)
        return aclsim__fail(ACL_ERROR_RT_NO_PERMISSION, api,
                            "process %d is not in the whitelist of %s \"%s\" (the exporter, "
                            "process %d, allows %u process(es); see %s)", (int)self, what, key,
                            (int)pid, n,
                            kind == ACLSIM_IPC_NOTIFY     ? "aclrtNotifySetImportPid"
                            : kind == ACLSIM_IPC_PHYSICAL ? "aclrtMemSetPidToShareableHandle"
                                                          : "aclrtIpcMemSetImportPid");
    *out = (struct aclsim__ipc_ref){s, nonce, pid, index};
    return ACL_SUCCESS;
}

/* The exported memfd of r, opened in this process (-1 with a message). */
int aclsim__ipc_open_memory(const struct aclsim__ipc_ref *r, const char *api)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)r->owner, r->slot->fd);
    int fd = r->owner == getpid() ? fcntl(r->slot->fd, F_DUPFD_CLOEXEC, 0)
                                  : open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != r->slot->ino)) {
        close(fd);
        fd = -1;
        errno = ESTALE;
    }
    if (fd < 0 || !aclsim__ipc_live(r)) {
        int e = fd < 0 ? errno : ESTALE;
        if (fd >= 0)
            close(fd);
        aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                     "cannot open the memory of process %d: %s", (int)r->owner,
                     e == ENOENT || e == ESTALE ? "it was freed or its process exited"
                                                : strerror(e));
        return -1;
    }
    return fd;
}

/* ---- what the public calls share (ipc-mem.c, ipc-share.c) ------------------ */

/* init, NULL checks (100000), SoC (207000), current context (107002). */
aclError aclsim__ipc_first_checks(const char *api, const void *a, const char *an, const void *b,
                                  const char *bn, unsigned socs, struct aclsim__context **ctx)
{
    ACLSIM_REQUIRE_INIT(api);
    if (!a || !b)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "%s is NULL", !a ? an : bn);
    aclError err = aclsim__soc_check(api, socs);
    if (!err && ctx)
        err = aclsim__current_context(api, ctx);
    return err;
}

/* ---- IPC events and notifies: the shared state ------------------------------ */

uint64_t aclsim__ipc_event_next(const struct aclsim__ipc_ref *r)
{
    struct aclsim__ipc_slot *s = r->slot;
    uint64_t seq = atomic_fetch_add(&s->recorded, 1) + 1;
    atomic_store(&s->ring_pid[seq % ACLSIM_IPC_RING], (int32_t)getpid());
    return seq;
}

void aclsim__ipc_event_queued(const struct aclsim__ipc_ref *r, uint64_t seq)
{
    uint64_t q = atomic_load(&r->slot->queued);
    while (q < seq && !atomic_compare_exchange_weak(&r->slot->queued, &q, seq)) {
    }
}

uint64_t aclsim__ipc_event_latest(const struct aclsim__ipc_ref *r, bool queued)
{
    return atomic_load_explicit(queued ? &r->slot->queued : &r->slot->recorded,
                                memory_order_acquire);
}

void aclsim__ipc_event_done(const struct aclsim__ipc_ref *r, uint64_t seq)
{
    struct aclsim__ipc_slot *s = r->slot;
    if (!aclsim__ipc_live(r))
        return;
    uint64_t upto = atomic_load(&s->done_upto);
    if (seq <= upto)
        return;
    if (seq - upto > ACLSIM_IPC_RING) {
        /* More records in flight than the ring holds: everything up to
         * seq - RING counts as finished (documented in docs/ipc.md). */
        uint64_t floor = seq - ACLSIM_IPC_RING;
        while (upto < floor && !atomic_compare_exchange_weak(&s->done_upto, &upto, floor)) {
        }
    }
    atomic_store_explicit(&s->ring[seq % ACLSIM_IPC_RING], seq, memory_order_release);
    /* Absorb what now follows done_upto. */
    upto = atomic_load(&s->done_upto);
    while (atomic_load_explicit(&s->ring[(upto + 1) % ACLSIM_IPC_RING], memory_order_acquire) ==
           upto + 1) {
        if (atomic_compare_exchange_weak(&s->done_upto, &upto, upto + 1))
            upto++;
    }
}

/* Whether process pid is gone (or a zombie: it will never run anything). */
static bool process_gone(int32_t pid)
{
    if (pid <= 0 || pid == getpid())
        return false;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return true;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool zombie = false;
    if (fgets(buf, sizeof buf, f)) {
        const char *close_paren = strrchr(buf, ')');
        zombie = close_paren && (close_paren[1] == ' ') &&
                 (close_paren[2] == 'Z' || close_paren[2] == 'X');
    }
    fclose(f);
    return zombie;
}

bool aclsim__ipc_event_reached(const struct aclsim__ipc_ref *r, uint64_t seq)
{
    struct aclsim__ipc_slot *s = r->slot;
    if (!aclsim__ipc_live(r))
        return true;   /* closed: nothing will ever record it */
    if (atomic_load_explicit(&s->done_upto, memory_order_acquire) >= seq ||
        atomic_load_explicit(&s->ring[seq % ACLSIM_IPC_RING], memory_order_acquire) == seq)
        return true;
    /* A record queued by a process that died never runs: like a discarded
     * record, it counts as reached, so that nobody waits forever. */
    if (process_gone(atomic_load(&s->ring_pid[seq % ACLSIM_IPC_RING]))) {
        aclsim__log(ACLSIM_LOG_WARNING, "IPC event record %" PRIu64 " was queued by process %d, "
                    "which has exited: it counts as reached", seq,
                    (int)atomic_load(&s->ring_pid[seq % ACLSIM_IPC_RING]));
        aclsim__ipc_event_done(r, seq);
        return true;
    }
    return false;
}

void aclsim__ipc_notify_set(const struct aclsim__ipc_ref *r, uint32_t value)
{
    if (aclsim__ipc_live(r))
        atomic_store_explicit(&r->slot->flag, value, memory_order_release);
}

bool aclsim__ipc_notify_take(const struct aclsim__ipc_ref *r)
{
    uint32_t one = 1;
    return atomic_compare_exchange_strong(&r->slot->flag, &one, 0);
}

/* ---- lifetime ------------------------------------------------------------------ */

/* aclFinalize: every export closes and every import is unmapped (vmm.c's
 * finalize unmaps the reservations; this forgets them). The tables stay
 * mapped (see own_lock). */
void aclsim__ipc_finalize(void)
{
    pthread_mutex_lock(&aclsim__ipc_own_lock);
    while (aclsim__ipc_export_list)
        close_export_locked(&aclsim__ipc_export_list);
    while (aclsim__ipc_import_list) {
        struct imported *im = aclsim__ipc_import_list;
        aclsim__ipc_import_list = im->next;
        free(im);
    }
    pthread_mutex_unlock(&aclsim__ipc_own_lock);
}

/* After fork(), in the child (THE FORK RULE): the tables were not inherited
 * (MADV_DONTFORK) and the exports are the parent's. */
void aclsim__ipc_forget_after_fork(void)
{
    for (int i = 0; i < ACLSIM_MAX_DEVICES; i++)   /* device memory is the parent's */
        aclsim__heap_unshare_after_fork(&aclsim__devices[i].heap);
    pthread_mutex_init(&aclsim__ipc_own_lock, NULL);
    if (own_fd >= 0)
        close(own_fd);
    aclsim__ipc_own = NULL;
    own_fd = -1;
    peers = NULL;     /* the nodes are the parent's: leaked, a few bytes */
    aclsim__ipc_export_list = NULL;
    aclsim__ipc_import_list = NULL;
    atomic_store(&aclsim__ipc_exports, 0);
}
