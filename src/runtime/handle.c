/*
 * Handle table. A handle is (generation << 32 | index << ACLSIM_HANDLE_KIND_BITS | kind): never NULL,
 * never a pointer. Slots live in chunks that are allocated once and never
 * freed, so aclsim__handle_get can read them without a lock; a slot's
 * generation changes when its object is destroyed, so stale handles fail.
 */
#include "internal.h"

#include <stdlib.h>

#define CHUNK_BITS ACLSIM_HANDLE_CHUNK_BITS
#define CHUNK_SLOTS (1u << CHUNK_BITS)
#define MAX_CHUNKS ACLSIM_HANDLE_CHUNKS

struct aclsim__handle_slot *_Atomic aclsim__handle_chunks[MAX_CHUNKS];   /* (internal.h) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t free_head;     /* 0 = none; index 0 is never used */
static uint32_t next_unused = 1;

void *aclsim__handle_new(int kind, void *object)
{
    pthread_mutex_lock(&lock);
    uint32_t index = free_head;
    struct aclsim__handle_slot *s;
    if (index) {
        s = aclsim__handle_slot(index);
        free_head = s->next_free;
    } else {
        index = next_unused;
        uint32_t c = index >> CHUNK_BITS;
        if (c >= MAX_CHUNKS) {
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        if (!atomic_load_explicit(&aclsim__handle_chunks[c], memory_order_relaxed)) {
            struct aclsim__handle_slot *chunk = aclsim__calloc(CHUNK_SLOTS, sizeof *chunk);
            if (!chunk) {
                pthread_mutex_unlock(&lock);
                return NULL;
            }
            atomic_store_explicit(&aclsim__handle_chunks[c], chunk, memory_order_release);
        }
        next_unused++;
        s = aclsim__handle_slot(index);
    }
    uint32_t gen = atomic_load_explicit(&s->generation, memory_order_relaxed) + 1; /* odd: live */
    /* Release: a reader of the old handle that loads these also sees the
     * generation its free wrote (aclsim__handle_get reads it again). */
    atomic_store_explicit(&s->kind, kind, memory_order_release);
    atomic_store_explicit(&s->object, object, memory_order_release);
    atomic_store_explicit(&s->generation, gen, memory_order_release);
    pthread_mutex_unlock(&lock);
    return (void *)(((uintptr_t)gen << 32) | ((uintptr_t)index << ACLSIM_HANDLE_KIND_BITS) | (uintptr_t)kind);
}

bool aclsim__handle_free(const void *handle)
{
    uintptr_t h = (uintptr_t)handle;
    uint32_t index = (uint32_t)((h & 0xffffffffu) >> ACLSIM_HANDLE_KIND_BITS);
    bool freed = false;
    pthread_mutex_lock(&lock);
    struct aclsim__handle_slot *s = aclsim__handle_slot(index);
    if (s && atomic_load_explicit(&s->generation, memory_order_relaxed) == (uint32_t)(h >> 32)) {
        freed = true;
        atomic_store_explicit(&s->generation, (uint32_t)(h >> 32) + 1, memory_order_release);
        atomic_store_explicit(&s->object, NULL, memory_order_release);
        s->next_free = free_head;
        free_head = index;
    }
    pthread_mutex_unlock(&lock);
    return freed;
}

/* After fork(), in the child (internal.h, THE FORK RULE): a new lock; with
 * discard, every inherited context, stream and event handle is freed, so
 * that it reads as destroyed (107017) in the child's later sessions. */
void aclsim__handles_forget_after_fork(bool discard)
{
    pthread_mutex_init(&lock, NULL);
    for (uint32_t index = 1; discard && index < next_unused; index++) {
        struct aclsim__handle_slot *s = aclsim__handle_slot(index);
        uint32_t gen = atomic_load_explicit(&s->generation, memory_order_relaxed);
        int kind = atomic_load_explicit(&s->kind, memory_order_relaxed);
        if ((gen & 1) && (kind == ACLSIM_H_CONTEXT || kind == ACLSIM_H_STREAM ||
                          kind == ACLSIM_H_EVENT))
            aclsim__handle_free((void *)(((uintptr_t)gen << 32) | ((uintptr_t)index << ACLSIM_HANDLE_KIND_BITS) |
                                         (uintptr_t)kind));
    }
}
