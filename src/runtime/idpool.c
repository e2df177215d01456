/*
 * Id pools: the ids of events and notifies, unique among the live objects of
 * one device and limited in number per device as CANN's products limit them.
 */
#include "internal.h"

#include <stdlib.h>

#define MAX_IDS 65536u

bool aclsim__id_take(struct aclsim__idpool *pool, uint32_t limit, uint32_t *id)
{
    if (limit > MAX_IDS)
        limit = MAX_IDS;
    pthread_mutex_lock(&pool->lock);
    bool ok = false;
    if (!pool->bits)
        pool->bits = aclsim__calloc(MAX_IDS / 8, 1);
    if (pool->bits && pool->used < limit) {
        for (uint32_t k = 0; k < limit; k++) {
            uint32_t i = (pool->next + k) % limit;
            if (!(pool->bits[i / 8] & (1u << (i % 8)))) {
                pool->bits[i / 8] |= (uint8_t)(1u << (i % 8));
                pool->used++;
                pool->next = (i + 1) % limit;   /* ids are not reused at once */
                *id = i;
                ok = true;
                break;
            }
        }
    }
    pthread_mutex_unlock(&pool->lock);
    return ok;
}

void aclsim__id_give(struct aclsim__idpool *pool, uint32_t id)
{
    pthread_mutex_lock(&pool->lock);
    if (pool->bits && (pool->bits[id / 8] & (1u << (id % 8)))) {
        pool->bits[id / 8] &= (uint8_t) ~(1u << (id % 8));
        pool->used--;
    }
    pthread_mutex_unlock(&pool->lock);
}

uint32_t aclsim__id_used(struct aclsim__idpool *pool)
{
    pthread_mutex_lock(&pool->lock);
    uint32_t n = pool->used;
    pthread_mutex_unlock(&pool->lock);
    return n;
}

void aclsim__idpool_forget_after_fork(struct aclsim__idpool *pool)
{
    pthread_mutex_init(&pool->lock, NULL);
    pool->used = pool->next = 0;
    free(pool->bits);
    pool->bits = NULL;
}
