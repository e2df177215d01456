/*
 * Batched and described copies (issue 10): aclrtMemcpyBatch / Async / V2 /
 * AsyncV2, aclrtMemcpyAsyncWithOffset, aclrtMemcpyAsyncWithCondition and
 * the copy descriptors (aclrtGetMemcpyDescSize, aclrtSetMemcpyDesc,
 * aclrtMemcpyAsyncWithDesc). An asynchronous batch is one stream task that
 * moves every entry in order. See docs/memory-copies.md.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* What an ACLSIM_TASK_BATCH task owns: its copies. */
struct batch {
    size_t n;
    struct batch_entry { void *dst; const void *src; size_t size; } e[];
};

void aclsim__execute_batch(struct aclsim__task *t)
{
    const struct batch *b = t->u.batch.data;
    for (size_t i = 0; i < b->n; i++)
        memmove(b->e[i].dst, b->e[i].src, b->e[i].size);
}
