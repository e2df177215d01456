/*
 * Sharing between processes (docs/ipc.md): what its files share.
 *
 *   ipc.c        the registry (each exporting process's table of slots, keys,
 *                exporting, opening, whitelists), the shared state of IPC
 *                events and notifies, aclFinalize and fork
 *   ipc-mem.c    IPC memory (aclrtIpcMem*)
 *   ipc-share.c  shareable handles of physical memory
 *                (aclrtMem*ShareableHandle*)
 *
 * The registry's design, its ordering rules and own_lock are described at the
 * top of ipc.c.
 */
#ifndef ACLSIM_IPC_H
#define ACLSIM_IPC_H

#include "internal.h"

#define IPC_SLOTS 4096u
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
    /* IPC events (event-ipc.c): record numbers, the latest queued record, and
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

/* What this process exported (memory: the allocation it came from) and
 * imported (memory: the mapping), for close, free and device reset. */
struct exported { struct exported *next; uint32_t slot; uint64_t nonce; uint32_t kind;
                  const void *alloc; int32_t device; };
struct imported { struct imported *next; char key[ACLSIM_IPC_KEY_LEN]; void *base; void *ptr; };

/* ipc.c: this process's table and its lock, what it exported and imported. */
extern pthread_mutex_t aclsim__ipc_own_lock;
extern struct table *aclsim__ipc_own;
extern struct exported *aclsim__ipc_export_list;   /* under own_lock */
extern struct imported *aclsim__ipc_import_list;   /* under own_lock */

/* A key's owner, slot and nonce (false: it cannot be a key). */
bool aclsim__ipc_parse_key(const char *key, pid_t *pid, uint32_t *index, uint64_t *nonce);
/* The table of process pid (own_lock held), mapped if needed (refresh: again). */
struct table *aclsim__ipc_table_of_locked(pid_t pid, bool refresh);
/* The exported memfd of r, opened in this process (-1 with a message). */
int aclsim__ipc_open_memory(const struct aclsim__ipc_ref *r, const char *api);
/* init, NULL checks (100000), SoC (207000), current context (107002). */
aclError aclsim__ipc_first_checks(const char *api, const void *a, const char *an, const void *b,
                                  const char *bn, unsigned socs, struct aclsim__context **ctx);

#endif /* ACLSIM_IPC_H */
