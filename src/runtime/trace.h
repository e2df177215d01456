/*
 * The tracer's files and what they share (docs/tracing.md).
 *
 *   trace.c        configuration, and recording: each thread's ring of
 *                  events, the hooks that record calls, tasks, blocks,
 *                  copies and marks; fork
 *   trace-write.c  the ACLSIM_PROFILE summary, and writing the rings as
 *                  Chrome Trace Event JSON (at aclFinalize and at exit)
 *
 * Locking: aclsim__trace_list_lock guards the list of rings; each ring has
 * its own lock, which only its thread and the writer take (list lock first).
 */
#ifndef ACLSIM_TRACE_H
#define ACLSIM_TRACE_H

#include "internal.h"

#define TEXT_MAX 64

enum ph { PH_SLICE, PH_INSTANT, PH_FLOW_OUT, PH_FLOW_IN };
enum track { TRK_HOST, TRK_WORKER, TRK_STREAM, TRK_STREAM_DEFAULT };
enum cat { CAT_API, CAT_TASK, CAT_BLOCK, CAT_COPY, CAT_TX, CAT_FLOW_EVENT, CAT_FLOW_CALL,
           CAT_NOTE, CAT_FLOW_NOTIFY };

struct ev {
    uint64_t ts, dur;   /* ns */
    uint64_t value;     /* copies: bytes; kernels and blocks: blocks; flows: id */
    uint64_t aux;       /* tasks: sequence number in the stream; blocks: index */
    uint32_t pid, tid;
    uint32_t stream;    /* stream tracks: the stream id; its life (epoch) in aux2 */
    uint32_t aux2;
    uint8_t ph, cat, trk, kind;   /* kind: the task kind (CAT_TASK) */
    char dir[4];                  /* copies: H2D, D2H, D2D, H2H */
    char text[TEXT_MAX];          /* name, or the copy's variable */
};

struct ring {
    pthread_mutex_t lock;
    struct ev *ev;
    uint32_t cap, head, count;   /* the events are [head, head + count) mod cap */
    uint64_t dropped;
    /* The thread's last runtime call, kept open after it returned until the
     * thread's next call: work it does after the function holding
     * ACLSIM_REQUIRE_INIT returned (a copy, a submission: a call may check
     * its arguments in a helper) extends it. The writer includes it. */
    struct ev pending;
    bool has_pending;
    bool owned;                  /* a live thread records into it (under list_lock) */
    struct ring *next;
};

/* The rings (trace.c): every one made so far (never freed: a thread that
 * exits leaves its ring to the next new thread), under the list lock. */
extern pthread_mutex_t aclsim__trace_list_lock;
extern struct ring *aclsim__trace_rings;
extern atomic_uint aclsim__trace_ring_events;   /* capacity of new rings */
extern atomic_uint_fast64_t aclsim__trace_lost;   /* events with no ring (out of memory) */
/* Events recorded so far / recorded when the file was last written: exit
 * writes the file again only if they differ. */
extern atomic_uint_fast64_t aclsim__trace_recorded, aclsim__trace_written;
/* The ACLSIM_TRACE path of this session ("" for none), copied into path. */
void aclsim__trace_path(char *path, size_t len);

/* trace-write.c: the summary's counts (from the task and copy hooks), the
 * exit handler (writes what was recorded since the last write, prints the
 * summary), and fork. */
void aclsim__trace_summary_copy(const char *label, const char *dir, size_t bytes, uint64_t ns,
                                int32_t device);
void aclsim__trace_summary_kernel(const char *name, uint32_t blocks, uint64_t ns);
void aclsim__trace_at_exit(void);
void aclsim__trace_summary_forget_after_fork(void);

#endif /* ACLSIM_TRACE_H */
