/*
 * Whether the program's GPU work may still be running, from what Ember
 * sees: the streams launched on since a synchronisation last covered
 * them. A host phase's exchange (policy.h's episodes) moves data while
 * the GPU is idle; a program that waits for one stream while another
 * still runs is not idle, and the exchange must not run beside its
 * kernels.
 *
 * A context's synchronisation (and its teardown, which synchronises it)
 * covers every stream, a stream's its own
 * (and the blocking copies to the host theirs: the legacy stream, or the
 * thread's own default stream). An event's stream is not known: it is
 * taken to be the one stream launched on, where there is one. Past
 * EMBER_BUSY_STREAMS streams at once the answer is "may be busy" until a
 * context's synchronisation. Copies and memsets the program issues are
 * not launches and are not tracked.
 */
#ifndef EMBER_GPU_BUSY_H
#define EMBER_GPU_BUSY_H

#include <cuda.h>
#include <stdbool.h>

enum { EMBER_BUSY_STREAMS = 8 };

enum ember_wait_scope {
	EMBER_WAIT_CONTEXT, /* cuCtxSynchronize */
	EMBER_WAIT_STREAM,  /* cuStreamSynchronize, and a blocking copy on its stream */
	EMBER_WAIT_EVENT,   /* cuEventSynchronize: the event's stream is not known */
};

/* A kernel or a graph was launched on stream (per_thread: the _ptsz entry point). */
void ember_gpu_busy_launch(CUstream stream, bool per_thread);

/* A synchronisation of that scope returned (stream and per_thread matter for EMBER_WAIT_STREAM). */
void ember_gpu_busy_waited(enum ember_wait_scope scope, CUstream stream, bool per_thread);

/* Whether no stream launched on may still run work, as far as Ember has seen. */
bool ember_gpu_idle(void);

/* fork(): the child's streams are not the parent's. */
void ember_gpu_busy_after_fork_child(void);

#endif
