/*
 * Handle table. A handle is (generation << 32 | index << ACLSIM_HANDLE_KIND_BITS | kind): never NULL,
 * never a pointer. Slots live in chunks that are allocated once and never
 * freed, so aclsim__handle_get can read them without a lock; a slot's
 * generation changes when its object is destroyed, so stale handles fail.
 */
#include "internal.h"

#include <stdlib.h>

#define CHUNK_BITS 10
#define CHUNK_SLOTS (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096u /* 4M live handles */

struct slot {
    atomic_uint generation;   /* odd while live */
    atomic_int kind;
    void *_Atomic object;
    uint32_t next_free;       /* under lock */
};

static struct slot *_Atomic chunks[MAX_CHUNKS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t free_head;     /* 0 = none; index 0 is never used */
static uint32_t next_unused = 1;

static struct slot *slot_at(uint32_t index)
{
    if (index == 0 || index >= MAX_CHUNKS * CHUNK_SLOTS)
        return NULL;
    struct slot *chunk = atomic_load_explicit(&chunks[index >> CHUNK_BITS], memory_order_acquire);
    return chunk ? &chunk[index & (CHUNK_SLOTS - 1)] : NULL;
}

void *aclsim__handle_new(int kind, void *object)
{
    pthread_mutex_lock(&lock);
    uint32_t index = free_head;
    struct slot *s;
    if (index) {
        s = slot_at(index);
        free_head = s->next_free;
    } else {
        index = next_unused;
        uint32_t c = index >> CHUNK_BITS;
        if (c >= MAX_CHUNKS) {
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        if (!atomic_load_explicit(&chunks[c], memory_order_relaxed)) {
            struct slot *chunk = aclsim__calloc(CHUNK_SLOTS, sizeof *chunk);
            if (!chunk) {
                pthread_mutex_unlock(&lock);
                return NULL;
            }
            atomic_store_explicit(&chunks[c], chunk, memory_order_release);
        }
        next_unused++;
        s = slot_at(index);
    }
    uint32_t gen = atomic_load_explicit(&s->generation, memory_order_relaxed) + 1; /* odd: live */
    atomic_store_explicit(&s->kind, kind, memory_order_relaxed);
    atomic_store_explicit(&s->object, object, memory_order_relaxed);
    atomic_store_explicit(&s->generation, gen, memory_order_release);
    pthread_mutex_unlock(&lock);
    return (void *)(((uintptr_t)gen << 32) | ((uintptr_t)index << ACLSIM_HANDLE_KIND_BITS) | (uintptr_t)kind);
}

void *aclsim__handle_get(const void *handle, int kind)
{
    uintptr_t h = (uintptr_t)handle;
    if ((int)(h & ((1u << ACLSIM_HANDLE_KIND_BITS) - 1)) != kind)
        return NULL;
    struct slot *s = slot_at((uint32_t)((h & 0xffffffffu) >> ACLSIM_HANDLE_KIND_BITS));
    if (!s || atomic_load_explicit(&s->generation, memory_order_acquire) != (uint32_t)(h >> 32) ||
        atomic_load_explicit(&s->kind, memory_order_relaxed) != kind)
        return NULL;
    return atomic_load_explicit(&s->object, memory_order_relaxed);
}

bool aclsim__handle_free(const void *handle)
{
    uintptr_t h = (uintptr_t)handle;
    uint32_t index = (uint32_t)((h & 0xffffffffu) >> ACLSIM_HANDLE_KIND_BITS);
    bool freed = false;
    pthread_mutex_lock(&lock);
    struct slot *s = slot_at(index);
    if (s && atomic_load_explicit(&s->generation, memory_order_relaxed) == (uint32_t)(h >> 32)) {
        freed = true;
        atomic_store_explicit(&s->generation, (uint32_t)(h >> 32) + 1, memory_order_release);
        atomic_store_explicit(&s->object, NULL, memory_order_relaxed);
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
        struct slot *s = slot_at(index);
        uint32_t gen = atomic_load_explicit(&s->generation, memory_order_relaxed);
        int kind = atomic_load_explicit(&s->kind, memory_order_relaxed);
        if ((gen & 1) && (kind == ACLSIM_H_CONTEXT || kind == ACLSIM_H_STREAM ||
                          kind == ACLSIM_H_EVENT))
            aclsim__handle_free((void *)(((uintptr_t)gen << 32) | ((uintptr_t)index << ACLSIM_HANDLE_KIND_BITS) |
                                         (uintptr_t)kind));
    }
}
