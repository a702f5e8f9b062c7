/*
 * Ember's private streams: one per context, shared by the worker and the
 * launching threads, on which every promotion and demotion is issued, so
 * that moves of one context run in the order they were issued.
 */
#ifndef EMBER_STREAMS_H
#define EMBER_STREAMS_H

#include <cuda.h>

/* The private stream of ctx, which must be current on the calling thread; NULL if none can be made. */
CUstream ember_private_stream(CUcontext ctx);

/*
 * ctx is being torn down, its streams with it: a context made later may
 * reuse its handle (a primary context's stays the same across a reset),
 * and must not be given the dead stream.
 */
void ember_streams_forget(CUcontext ctx);

/* In a child after fork(): the parent's streams are not the child's. */
void ember_streams_after_fork_child(void);

#endif
