/*
 * The migration worker: one thread that carries out promotions and
 * demotions with cuMemPrefetchAsync on a private stream per context, tracks
 * them until they complete, and never blocks an application thread.
 *
 * A caller prepares a migration under the table lock (regions marked in
 * flight, bytes reserved in the budget, a reference taken on the
 * allocation), then submits it. The worker issues it without holding any
 * lock, and on completion marks the regions resident (or mapped), updates
 * the statistics and drops the reference. A migration of an allocation that
 * was freed before it was issued is dropped.
 */
#ifndef EMBER_WORKER_H
#define EMBER_WORKER_H

#include <cuda.h>

#include "regions.h"

struct ember_migration {
	struct ember_alloc *alloc; /* holds one reference, dropped on completion */
	uint32_t first, count;     /* regions [first, first + count) */
	int to_device;             /* a device ordinal, or -1 for the host */
	CUcontext ctx;             /* the context to issue it in */
};

/* Queue a prepared migration; starts the worker on first use. */
void ember_worker_submit(const struct ember_migration *m);

/* How the caller of ember_migrations_start waits for its migrations. */
enum ember_order {
	EMBER_ORDER_NONE,   /* not at all: the worker tracks them */
	EMBER_ORDER_STREAM, /* the given stream waits for them on the GPU; the thread does not */
	EMBER_ORDER_SYNC,   /* the calling thread waits until they complete */
};

/*
 * Issue prepared migrations now, on the calling thread, in the context's
 * private stream, then hand them to the worker to complete. With
 * EMBER_ORDER_STREAM, `stream` (per-thread default when per_thread is set
 * and stream is 0) waits for them: the kernel about to be launched there
 * starts on a settled placement, and the launching thread does not block.
 */
void ember_migrations_start(const struct ember_migration *ms, size_t n, enum ember_order order, CUstream stream,
			    bool per_thread);

/* Ask for a policy pass soon (adaptive mode); starts the worker on first use. */
void ember_worker_wake(void);

/* Wait until nothing is queued or in flight. Returns 0. */
int ember_worker_flush(void);

/* Wait until no migration of `a` is queued or in flight (cuMemFree). */
void ember_worker_wait_alloc(struct ember_alloc *a);

/* Free `ptr` once `event` has completed (cuMemFreeAsync of converted memory). */
void ember_worker_free_after(CUdeviceptr ptr, CUevent event, CUcontext ctx);

/* Stop the thread at exit, after finishing what is in flight. */
void ember_worker_stop(void);

/* In a child after fork(): no worker thread exists there; start afresh. */
void ember_worker_after_fork_child(void);

#endif
