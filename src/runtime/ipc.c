/*
 * Sharing between processes (docs/ipc.md): IPC memory (aclrtIpcMem*),
 * shareable handles of physical memory (aclrtMem*ShareableHandle*), and the
 * registry behind them and behind IPC events (event.c) and IPC notifies
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
 * allocations (vmm.c); the slot holds the owner's descriptor number and the
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
 */
#include "internal.h"

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

#define IPC_SLOTS 4096u
#define IPC_MAGIC 0x61636c73696d4950ull   /* "aclsimIP" */
#define TABLE_NAME "aclsim-ipc-table"
#define PAGE 4096u

struct aclsim__ipc_slot {
    _Atomic uint64_t nonce;        /* 0: free */
    uint32_t kind;                 /* enum aclsim__ipc_kind */
    int32_t device;                /* the owner's device (memory), or -1 */
    int32_t fd;                    /* memory: the owner's descriptor of the memfd */
    uint64_t ino;                  /* ... and its inode */
    uint64_t offset, size;         /* memory: the bytes exported, in that memfd */
    uint64_t map_size;             /* physical: the memfd's size (the mapping unit) */
    _Atomic uint32_t no_check;     /* pid validation disabled */
    _Atomic uint32_t npids;
    _Atomic int32_t pids[ACLSIM_IPC_MAX_PIDS];
    _Atomic uint64_t attr;         /* aclrtIpcMemSetAttr's link */
    /* IPC events (event.c): record numbers, the latest queued record, and
     * completions: records 1..done_upto finished, ring[s % RING] == s says
     * record s finished above that; ring_pid: the process that queued it. */
    _Atomic uint64_t recorded, queued, done_upto;
    _Atomic uint64_t ring[ACLSIM_IPC_RING];
    _Atomic int32_t ring_pid[ACLSIM_IPC_RING];
    _Atomic uint32_t flag;         /* IPC notifies (notify.c): 0 or 1 */
};

struct table {
    uint64_t magic;
    int32_t pid;
    uint32_t nslots;
    struct aclsim__ipc_slot slots[IPC_SLOTS];
};

/* This process's table (made at the first export) and the tables of other
 * processes mapped so far. Both stay mapped for the life of the process
 * (MADV_DONTFORK: a fork() child has neither, see forget_after_fork), so a
 * slot pointer held by a task or an opened object never dangles; a closed
 * slot simply no longer matches. */
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
static struct table *own;
static int own_fd = -1;
static uint32_t cursor;            /* next slot to try (reuse as late as possible) */

struct peer { struct peer *next; pid_t pid; struct table *table; };
static struct peer *peers;         /* under own_lock */

/* What this process exported (memory: the allocation it came from) and
 * imported (memory: the mapping), for close, free and device reset. */
struct exported { struct exported *next; uint32_t slot; uint64_t nonce; uint32_t kind;
                  const void *alloc; int32_t device; };
struct imported { struct imported *next; char key[ACLSIM_IPC_KEY_LEN]; void *base; void *ptr; };
static struct exported *exports;   /* under own_lock */
static struct imported *imports;   /* under own_lock */
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
    if (own)
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
    own = t;
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
static struct table *table_of_locked(pid_t pid, bool refresh)
{
    if (pid == getpid()) {
        errno = ENOENT;
        return own;
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

static bool parse_key(const char *key, pid_t *pid, uint32_t *index, uint64_t *nonce)
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
    pthread_mutex_lock(&own_lock);
    aclError err = own_table_locked(api);
    uint32_t index = IPC_SLOTS;
    for (uint32_t k = 0; !err && k < IPC_SLOTS; k++) {
        uint32_t i = (cursor + k) % IPC_SLOTS;
        if (atomic_load_explicit(&own->slots[i].nonce, memory_order_relaxed) == 0) {
            index = i;
            break;
        }
    }
    if (!err && index == IPC_SLOTS)
        err = aclsim__fail(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, api,
                           "this process already exports %u objects (close some first)",
                           IPC_SLOTS);
    if (err) {
        pthread_mutex_unlock(&own_lock);
        free(x);
        return err;
    }
    cursor = (index + 1) % IPC_SLOTS;
    struct aclsim__ipc_slot *s = &own->slots[index];
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
    *x = (struct exported){exports, index, nonce, (uint32_t)kind, alloc, device};
    exports = x;
    if (kind == ACLSIM_IPC_MEMORY)
        atomic_fetch_add(&aclsim__ipc_exports, 1);
    pthread_mutex_unlock(&own_lock);
    *out = (struct aclsim__ipc_ref){s, nonce, getpid(), index};
    return ACL_SUCCESS;
}

/* Caller holds own_lock: closes export *pp (the slot no longer matches any
 * key) and unlinks it. */
static void close_export_locked(struct exported **pp)
{
    struct exported *x = *pp;
    struct aclsim__ipc_slot *s = &own->slots[x->slot];
    uint64_t expect = x->nonce;
    atomic_compare_exchange_strong(&s->nonce, &expect, 0);
    if (x->kind == ACLSIM_IPC_MEMORY)
        atomic_fetch_sub(&aclsim__ipc_exports, 1);
    *pp = x->next;
    free(x);
}

void aclsim__ipc_close(const struct aclsim__ipc_ref *r)
{
    pthread_mutex_lock(&own_lock);
    for (struct exported **pp = &exports; *pp; pp = &(*pp)->next)
        if ((*pp)->slot == r->index && (*pp)->nonce == r->nonce) {
            close_export_locked(pp);
            break;
        }
    pthread_mutex_unlock(&own_lock);
}

/* Closes the memory exports matching (alloc, or every one of device). */
static void close_exports(const void *alloc, int32_t device)
{
    pthread_mutex_lock(&own_lock);
    for (struct exported **pp = &exports; *pp;) {
        struct exported *x = *pp;
        if (x->kind == ACLSIM_IPC_MEMORY && (alloc ? x->alloc == alloc : x->device == device))
            close_export_locked(pp);
        else
            pp = &x->next;
    }
    pthread_mutex_unlock(&own_lock);
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

/* The pid whitelist: appends pids (107000 when it would exceed the table). */
aclError aclsim__ipc_allow(const struct aclsim__ipc_ref *r, const int32_t *pid, size_t num,
                           const char *api)
{
    for (size_t i = 0; i < num; i++)
        if (pid[i] <= 0)
            return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                "pid[%zu] is %d: not a process id", i, (int)pid[i]);
    pthread_mutex_lock(&own_lock);
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
    pthread_mutex_unlock(&own_lock);
    return err;
}

/* ---- importing ------------------------------------------------------------- */

aclError aclsim__ipc_open(const char *key, int kind, const char *what,
                          struct aclsim__ipc_ref *out, const char *api)
{
    pid_t pid;
    uint32_t index;
    uint64_t nonce;
    if (!parse_key(key, &pid, &index, &nonce))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "key \"%.64s\" is not a key aclsim exported (expected "
                            "\"aclsim-<pid>-<slot>-<nonce>\")", key);
    pthread_mutex_lock(&own_lock);
    struct aclsim__ipc_slot *s = NULL;
    int why = 0;
    for (int attempt = 0; attempt < 2 && !s; attempt++) {
        struct table *t = table_of_locked(pid, attempt > 0);
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
    pthread_mutex_unlock(&own_lock);
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
static int open_memory(const struct aclsim__ipc_ref *r, const char *api)
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

/* ---- the public calls: IPC memory ----------------------------------------- */

#define IPC_MEM_SOCS (ACLSIM_A5_A3_A2 | ACLSIM_FAMILIES(INFERENCE) | ACLSIM_FAMILIES(TRAINING))

/* The export of this process named by key, or NULL (107000 with a message). */
static bool own_export(const char *key, int kind, struct aclsim__ipc_ref *r, const char *api,
                       const char *what)
{
    pid_t pid;
    uint32_t index;
    uint64_t nonce;
    if (!parse_key(key, &pid, &index, &nonce)) {
        aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                     "key \"%.64s\" is not a key aclsim exported", key);
        return false;
    }
    bool found = false;
    pthread_mutex_lock(&own_lock);
    for (struct exported *x = exports; x && !found; x = x->next)
        if (pid == getpid() && x->slot == index && x->nonce == nonce && x->kind == (uint32_t)kind) {
            *r = (struct aclsim__ipc_ref){&own->slots[index], nonce, pid, index};
            found = true;
        }
    pthread_mutex_unlock(&own_lock);
    if (!found)
        aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                     "key \"%s\" is not %s this process exported (or it was closed)", key, what);
    return found;
}

/* init, NULL checks (100000), SoC (207000), current context (107002). */
static aclError first_checks(const char *api, const void *a, const char *an, const void *b,
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

aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags)
{
    static const char api[] = "aclrtIpcMemGetExportKey";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    struct aclsim__context *ctx = NULL;
    aclError err = first_checks(api, devPtr, "devPtr", key, "key", IPC_MEM_SOCS, &ctx);
    if (err)
        return err;
    if (size == 0 || len == 0)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s is 0", size ? "len" : "size");
    if (flags > ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flags %#" PRIx64 " is invalid: ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT or "
                            "ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION", flags);
    if (len < ACLSIM_IPC_KEY_LEN)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "len %zu is too short: a key takes %d bytes (CANN: 65)", len,
                            ACLSIM_IPC_KEY_LEN);
    struct aclsim__where w = aclsim__classify(devPtr);
    struct aclsim__alloc a;
    if (w.kind != ACLSIM_DEVICE || !aclsim__heap_find(&w.device->heap, devPtr, &a) ||
        a.kind != ACLSIM_ALLOC_MALLOC) {
        char what[256];
        aclsim__describe(devPtr, what, sizeof what);
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "devPtr %p is not aclrtMalloc device memory: it is %s (physical "
                            "memory is shared with aclrtMemExportToShareableHandle)", devPtr, what);
    }
    if ((uintptr_t)devPtr % PAGE)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "devPtr %p is not page aligned (%u bytes): CANN refuses to share "
                            "memory that shares pages with other allocations (allocate at least "
                            "%u bytes: aclrtMalloc then aligns to a page)", devPtr, PAGE, PAGE);
    uintptr_t off = (uintptr_t)devPtr - a.addr;
    if (size > a.size - off)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "%zu bytes at devPtr %p run past the end of its allocation (%zu bytes "
                            "at %#" PRIxPTR ")", size, devPtr, a.size, a.addr);
    struct aclsim__ipc_ref r;
    err = aclsim__ipc_export(ACLSIM_IPC_MEMORY, w.device->id, w.device->heap.fd,
                             (uint64_t)((char *)devPtr - w.device->heap.base), size, 0,
                             flags & ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                             (const void *)a.addr, &r, api);
    if (!err)
        aclsim__ipc_key(&r, key);
    (void)ctx;
    return err;
}

aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num)
{
    static const char api[] = "aclrtIpcMemSetImportPid";
    aclError err = first_checks(api, key, "key", pid, "pid", IPC_MEM_SOCS, NULL);
    if (err)
        return err;
    if (num == 0 || num > INT32_MAX)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "num %zu is invalid: 1..%d", num,
                            INT32_MAX);
    struct aclsim__ipc_ref r;
    if (!own_export(key, ACLSIM_IPC_MEMORY, &r, api, "memory"))
        return ACL_ERROR_RT_PARAM_INVALID;
    return aclsim__ipc_allow(&r, pid, num, api);
}

aclError aclrtIpcMemImportPidInterServer(const char *key, aclrtServerPid *serverPids, size_t num)
{
    static const char api[] = "aclrtIpcMemImportPidInterServer";
    ACLSIM_REQUIRE_INIT(api);
    if (!key || !serverPids || num == 0)   /* checked by CANN's runtime layer: 107000 */
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "%s",
                            !key ? "key is NULL" : !serverPids ? "serverPids is NULL" : "num is 0");
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(A3));
    if (err)
        return err;
    return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                        "whitelisting processes of other servers (super-node sharing) needs "
                        "several servers; aclsim simulates one host (use "
                        "aclrtIpcMemSetImportPid for processes on this host)");
}

aclError aclrtIpcMemSetAttr(const char *key, aclrtIpcMemAttrType type, uint64_t attr)
{
    static const char api[] = "aclrtIpcMemSetAttr";
    ACLSIM_REQUIRE_INIT(api);
    if (!key)   /* checked by CANN's runtime layer: 107000 */
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api, "key is NULL");
    aclError err = aclsim__soc_check(api, ACLSIM_FAMILIES(A3));
    if (err)
        return err;
    if ((int)type != ACL_RT_IPC_MEM_ATTR_ACCESS_LINK)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "type %d is invalid: ACL_RT_IPC_MEM_ATTR_ACCESS_LINK (0)", (int)type);
    if (attr > ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "attr %" PRIu64 " is invalid: ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO (0) "
                            "or ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS (1)", attr);
    if (attr > ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "attr %" PRIu64 ": UB links are Ascend 950 only", attr);
    struct aclsim__ipc_ref r;
    if (!own_export(key, ACLSIM_IPC_MEMORY, &r, api, "memory"))
        return ACL_ERROR_RT_PARAM_INVALID;
    /* The link between the two dies: recorded (one host has no dies, the
     * bytes are the same either way). */
    atomic_store(&r.slot->attr, attr);
    return ACL_SUCCESS;
}

aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags)
{
    static const char api[] = "aclrtIpcMemImportByKey";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    struct aclsim__context *ctx = NULL;
    aclError err = first_checks(api, devPtr, "devPtr", key, "key", IPC_MEM_SOCS, &ctx);
    if (err)
        return err;
    if (flags > ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flags %#" PRIx64 " is invalid: ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT or "
                            "ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS", flags);
    struct aclsim__ipc_ref r;
    if ((err = aclsim__ipc_open(key, ACLSIM_IPC_MEMORY, "memory", &r, api)))
        return err;
    struct imported *im = aclsim__calloc(1, sizeof *im);
    if (!im)
        return aclsim__fail(ACL_ERROR_BAD_ALLOC, api, "out of host memory");
    int fd = open_memory(&r, api);
    if (fd < 0) {
        free(im);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    uint64_t off = r.slot->offset, size = r.slot->size;
    uint64_t from = off & ~(uint64_t)(PAGE - 1), to = (off + size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
    void *base = NULL;
    err = aclsim__vmm_import(api, fd, from, (size_t)(to - from), aclsim__context_device(ctx), &base);
    close(fd);
    if (err || !aclsim__ipc_live(&r)) {   /* closed meanwhile: its bytes may be reused */
        if (!err)
            aclsim__vmm_unimport(base);
        free(im);
        return err ? err : aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                        "key \"%s\" was closed while it was being imported", key);
    }
    snprintf(im->key, sizeof im->key, "%s", key);
    im->base = base;
    im->ptr = (char *)base + (off - from);
    *devPtr = im->ptr;   /* before im is published: another thread's close may free it */
    pthread_mutex_lock(&own_lock);
    im->next = imports;
    imports = im;
    pthread_mutex_unlock(&own_lock);
    return ACL_SUCCESS;
}

aclError aclrtIpcMemClose(const char *key)
{
    static const char api[] = "aclrtIpcMemClose";
    ACLSIM_REQUIRE_INIT(api);
    ACLSIM_SNAPSHOT_GATE(api);
    aclError err = first_checks(api, key, "key", key, "key", IPC_MEM_SOCS, NULL);
    if (err)
        return err;
    /* An import of the key (the oldest first, as CANN) ... */
    pthread_mutex_lock(&own_lock);
    struct imported *im = NULL;
    struct imported **found = NULL;
    for (struct imported **pp = &imports; *pp; pp = &(*pp)->next)
        if (strncmp((*pp)->key, key, ACLSIM_IPC_KEY_LEN) == 0)
            found = pp;   /* pushed at the front: the last match is the oldest */
    if (found) {
        im = *found;
        *found = im->next;
    }
    pthread_mutex_unlock(&own_lock);
    if (im) {
        aclsim__vmm_unimport(im->base);
        free(im);
        return ACL_SUCCESS;
    }
    /* ... or this process's export: nobody can import it any more. */
    struct aclsim__ipc_ref r;
    if (!own_export(key, ACLSIM_IPC_MEMORY, &r, api, "memory this process imported or"))
        return ACL_ERROR_RT_PARAM_INVALID;
    aclsim__ipc_close(&r);
    return ACL_SUCCESS;
}

aclError aclrtDeviceGetBareTgid(int32_t *pid)
{
    static const char api[] = "aclrtDeviceGetBareTgid";
    ACLSIM_REQUIRE_INIT(api);
    if (!pid)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "pid is NULL");
    /* The host's process id: what the whitelists compare (one host, no
     * container translation). */
    *pid = (int32_t)getpid();
    return ACL_SUCCESS;
}

/* ---- shareable handles of physical memory ---------------------------------- */

/* A shareable handle: owner pid (bits 63..32), slot (31..20), low 20 bits
 * of the nonce (19..0); the slot's nonce is chosen so those bits are never 0. */
static uint64_t shareable_of(const struct aclsim__ipc_ref *r)
{
    return (uint64_t)(uint32_t)r->owner << 32 | (uint64_t)r->index << 20 | (r->nonce & 0xFFFFF);
}

/* The slot a shareable handle names, as a key (false: cannot be one). */
static bool parse_shareable(uint64_t h, pid_t *pid, uint32_t *index, uint32_t *low)
{
    *pid = (pid_t)(h >> 32);
    *index = (uint32_t)(h >> 20) & 0xFFF;
    *low = (uint32_t)h & 0xFFFFF;
    return *pid > 0 && *low != 0;
}

/* Resolves a shareable handle to its slot (with the full nonce). */
static aclError shareable_slot(uint64_t h, struct aclsim__ipc_ref *r, bool own_only,
                               const char *api)
{
    pid_t pid;
    uint32_t index, low;
    if (!parse_shareable(h, &pid, &index, &low))
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "shareableHandle %#" PRIx64 " is not a handle aclsim exported", h);
    if (own_only && pid != getpid())
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "shareableHandle %#" PRIx64 " was exported by process %d, not by "
                            "this one", h, (int)pid);
    pthread_mutex_lock(&own_lock);
    struct table *t = table_of_locked(pid, false);
    uint64_t nonce = t ? atomic_load_explicit(&t->slots[index].nonce, memory_order_acquire) : 0;
    if (t && (nonce & 0xFFFFF) != low && pid != getpid()) {
        t = table_of_locked(pid, true);
        nonce = t ? atomic_load_explicit(&t->slots[index].nonce, memory_order_acquire) : 0;
    }
    pthread_mutex_unlock(&own_lock);
    if (!t || nonce == 0 || (nonce & 0xFFFFF) != low || t->slots[index].kind != ACLSIM_IPC_PHYSICAL)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "shareableHandle %#" PRIx64 " names no exported physical memory (its "
                            "process exited, or it was freed)", h);
    *r = (struct aclsim__ipc_ref){&t->slots[index], nonce, pid, index};
    return ACL_SUCCESS;
}

#define SHARE_SOCS ACLSIM_ALL_BUT_IPV

static aclError export_shareable(const char *api, aclrtDrvMemHandle handle, uint64_t flags,
                                 uint64_t *out)
{
    int fd = -1;
    size_t size = 0;
    int32_t device = -1;
    aclError err = aclsim__vmm_phys_share(api, handle, &fd, &size, &device);
    if (err)
        return err;
    if (flags > ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "flags %#" PRIx64 " is invalid: ACL_RT_VMM_EXPORT_FLAG_DEFAULT or "
                            "ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION", flags);
    /* One shareable handle per physical handle (CANN refuses a second export). */
    bool again = false;
    pthread_mutex_lock(&own_lock);
    for (struct exported *x = exports; x && !again; x = x->next)
        again = x->kind == ACLSIM_IPC_PHYSICAL && x->alloc == handle;
    pthread_mutex_unlock(&own_lock);
    if (again)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "handle %p is already exported: a physical handle has one shareable "
                            "handle", handle);
    struct aclsim__ipc_ref r;
    /* Retry until the nonce's low 20 bits (the part the handle holds) are
     * not 0: export draws a fresh nonce each time. */
    for (;;) {
        err = aclsim__ipc_export(ACLSIM_IPC_PHYSICAL, device, fd, 0, size, size,
                                 flags & ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, handle, &r,
                                 api);
        if (err || (r.nonce & 0xFFFFF))
            break;
        aclsim__ipc_close(&r);
    }
    if (!err)
        *out = shareable_of(&r);
    return err;
}

aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
                                         uint64_t flags, uint64_t *shareableHandle)
{
    static const char api[] = "aclrtMemExportToShareableHandle";
    aclError err = first_checks(api, handle, "handle", shareableHandle, "shareableHandle",
                                SHARE_SOCS, NULL);
    if (err)
        return err;
    if (handleType != ACL_MEM_HANDLE_TYPE_NONE)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "handleType %d is invalid: ACL_MEM_HANDLE_TYPE_NONE", (int)handleType);
    return export_shareable(api, handle, flags, shareableHandle);
}

/* V2's handle storage: a uint64_t (DEFAULT) or an aclrtMemFabricHandle. */
static aclError share_type(const char *api, aclrtMemSharedHandleType t)
{
    if (t != ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT && t != ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
        return aclsim__fail(ACL_ERROR_RT_PARAM_INVALID, api,
                            "shareType %d is invalid: ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT (1) or "
                            "ACL_MEM_SHARE_HANDLE_TYPE_FABRIC (2)", (int)t);
    if (t == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
        return aclsim__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                            "fabric handles share memory between servers over the fabric; "
                            "aclsim simulates one host (use ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT)");
    return ACL_SUCCESS;
}

aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags,
                                           aclrtMemSharedHandleType shareType,
                                           void *shareableHandle)
{
    static const char api[] = "aclrtMemExportToShareableHandleV2";
    aclError err = first_checks(api, handle, "handle", shareableHandle, "shareableHandle",
                                SHARE_SOCS, NULL);
    if (!err)
        err = share_type(api, shareType);
    return err ? err : export_shareable(api, handle, flags, shareableHandle);
}

static aclError import_shareable(const char *api, uint64_t h, int32_t device,
                                 aclrtDrvMemHandle *handle)
{
    aclError err = aclsim__device_check_id(device, api);
    if (err)
        return err;
    if (!atomic_load_explicit(&aclsim__devices[device].open, memory_order_acquire))
        return aclsim__fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                            "device %d is not open: call aclrtSetDevice(%d) first", device, device);
    struct aclsim__ipc_ref r;
    if ((err = shareable_slot(h, &r, false, api)))
        return err;
    /* The whitelist, as for keys. */
    char key[ACLSIM_IPC_KEY_LEN];
    aclsim__ipc_key(&r, key);
    if ((err = aclsim__ipc_open(key, ACLSIM_IPC_PHYSICAL, "physical memory", &r, api)))
        return err;
    int fd = open_memory(&r, api);
    if (fd < 0)
        return ACL_ERROR_RT_PARAM_INVALID;
    err = aclsim__vmm_phys_adopt(api, fd, (size_t)r.slot->map_size, &aclsim__devices[device],
                                 handle);
    if (err)
        close(fd);
    return err;
}

aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                           aclrtDrvMemHandle *handle)
{
    static const char api[] = "aclrtMemImportFromShareableHandle";
    aclError err = first_checks(api, handle, "handle", handle, "handle", SHARE_SOCS, NULL);
    return err ? err : import_shareable(api, shareableHandle, deviceId, handle);
}

aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle,
                                             aclrtMemSharedHandleType shareType, uint64_t flags,
                                             aclrtDrvMemHandle *handle)
{
    static const char api[] = "aclrtMemImportFromShareableHandleV2";
    aclError err = first_checks(api, shareableHandle, "shareableHandle", handle, "handle",
                                SHARE_SOCS, NULL);
    if (err)
        return err;
    if (flags != 0)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api,
                            "flags %#" PRIx64 " is reserved and must be 0", flags);
    struct aclsim__context *ctx = NULL;   /* CANN imports into the current device */
    if ((err = share_type(api, shareType)) || (err = aclsim__current_context(api, &ctx)))
        return err;
    uint64_t h;
    memcpy(&h, shareableHandle, sizeof h);
    return import_shareable(api, h, aclsim__context_device(ctx)->id, handle);
}

static aclError set_pids_shareable(const char *api, uint64_t h, int32_t *pid, size_t num)
{
    if (num == 0 || num > INT32_MAX)
        return aclsim__fail(ACL_ERROR_INVALID_PARAM, api, "pidNum %zu is invalid: 1..%d", num,
                            INT32_MAX);
    struct aclsim__ipc_ref r;
    aclError err = shareable_slot(h, &r, true, api);
    return err ? err : aclsim__ipc_allow(&r, pid, num, api);
}

aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum)
{
    static const char api[] = "aclrtMemSetPidToShareableHandle";
    aclError err = first_checks(api, pid, "pid", pid, "pid", SHARE_SOCS, NULL);
    return err ? err : set_pids_shareable(api, shareableHandle, pid, pidNum);
}

aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle,
                                           aclrtMemSharedHandleType shareType, int32_t *pid,
                                           size_t pidNum)
{
    static const char api[] = "aclrtMemSetPidToShareableHandleV2";
    aclError err = first_checks(api, shareableHandle, "shareableHandle", pid, "pid", SHARE_SOCS,
                                NULL);
    if (err || (err = share_type(api, shareType)))
        return err;
    uint64_t h;
    memcpy(&h, shareableHandle, sizeof h);
    return set_pids_shareable(api, h, pid, pidNum);
}

/* A physical allocation freed (vmm.c): its exports close. */
void aclsim__ipc_physical_freed(const void *handle)
{
    pthread_mutex_lock(&own_lock);
    for (struct exported **pp = &exports; *pp;) {
        if ((*pp)->kind == ACLSIM_IPC_PHYSICAL && (*pp)->alloc == handle)
            close_export_locked(pp);
        else
            pp = &(*pp)->next;
    }
    pthread_mutex_unlock(&own_lock);
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
    pthread_mutex_lock(&own_lock);
    while (exports)
        close_export_locked(&exports);
    while (imports) {
        struct imported *im = imports;
        imports = im->next;
        free(im);
    }
    pthread_mutex_unlock(&own_lock);
}

/* After fork(), in the child (THE FORK RULE): the tables were not inherited
 * (MADV_DONTFORK) and the exports are the parent's. */
void aclsim__ipc_forget_after_fork(void)
{
    for (int i = 0; i < ACLSIM_MAX_DEVICES; i++)   /* device memory is the parent's */
        aclsim__heap_unshare_after_fork(&aclsim__devices[i].heap);
    pthread_mutex_init(&own_lock, NULL);
    if (own_fd >= 0)
        close(own_fd);
    own = NULL;
    own_fd = -1;
    peers = NULL;     /* the nodes are the parent's: leaked, a few bytes */
    exports = NULL;
    imports = NULL;
    atomic_store(&aclsim__ipc_exports, 0);
}
