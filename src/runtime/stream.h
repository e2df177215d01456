/*
 * Streams: what stream.c (lifetimes, lookups, waits) and submit.c (the
 * submitting side, THE INBOX RULE, THE SPARES) share.
 */
#ifndef ACLSIM_STREAM_H
#define ACLSIM_STREAM_H

#include "internal.h"

#include <sched.h>

/* sub_lock (THE INBOX RULE) is a spin lock: its unlock is a plain store, so
 * a submit does not wait there for its stores to reach memory. It is held
 * for a few dozen instructions; a thread that finds it taken lets the
 * holder run. */
static inline void aclsim__sub_lock(struct aclsim__stream *s)
{
    while (ACLSIM_UNLIKELY(pthread_spin_trylock(&s->sub_lock)))
        sched_yield();
}

static inline void aclsim__sub_unlock(struct aclsim__stream *s)
{
    pthread_spin_unlock(&s->sub_lock);
}

/* Frees a stream's spare tasks and gives their budget back (submit.c); for
 * a struct going back to the pool, with s->lock held. */
void aclsim__spares_free(struct aclsim__stream *s);

#endif /* ACLSIM_STREAM_H */
