/*
 * The worker: one thread and its timers. It issues the moves deferred to
 * it (off the application's threads), polls every issued move until it
 * completes and finishes it into the table (policy/engine.h), runs the
 * placement strategy's periodic pass, and calls the periodic subscribers
 * (the UVM event queue reader, the live view) without naming them.
 */
#ifndef EMBER_WORKER_H
#define EMBER_WORKER_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#include "ops.h"

/* The engine's sinks (state.c): an issued op to complete, an op to issue, a failure to report. */
void ember_worker_track(void *sink, struct ember_op *op);
void ember_worker_defer(void *sink, struct ember_op *op);
void ember_worker_failed(void *sink, const struct ember_op *op);

/* Something the worker runs every loop while active() says so, at least every period_ns. */
struct ember_periodic {
	bool (*active)(void);
	void (*start)(void);           /* once, on the worker thread, before the first run (may be NULL) */
	void (*run)(bool changed);     /* changed: a move completed or a pass ran since the last run */
	uint64_t period_ns;            /* the worker wakes at least this often while active */
};

/* Register a subscriber (library constructor, before any thread exists). */
void ember_worker_subscribe(const struct ember_periodic *p);

/* The strategy's periodic pass (adaptive), run every period_ns and when asked. */
void ember_worker_set_pass(void (*pass)(void), uint64_t period_ns);

/* Ask for a pass soon, and start the worker on first use. */
void ember_worker_wake(void);

/*
 * Have the worker run subscriber p soon (as if changed), without a pass:
 * the UVM event queue, when a launch finds entries in it. Takes the
 * worker's lock; callers on the launch path ask once per run of p.
 */
void ember_worker_nudge(const struct ember_periodic *p);

/* Wait until nothing is queued or in flight, and no pass that was asked for is pending. Returns 0. */
int ember_worker_flush(void);

/* Wait until no migration of `a` is queued or in flight (cuMemFree). */
struct ember_alloc;
void ember_worker_wait_alloc(struct ember_alloc *a);

/* Free `ptr` once `event` has completed (cuMemFreeAsync of converted memory). */
void ember_worker_free_after(CUdeviceptr ptr, CUevent event, CUcontext ctx);

/*
 * Wait until every deferred free has been made: before a context's
 * teardown, which frees its memory itself and would leave a free to come
 * to an address the driver may hand out again.
 */
void ember_worker_wait_frees(void);

/* Stop the thread at exit, after finishing what is in flight. */
void ember_worker_stop(void);

/* In the child no worker thread exists: forget the parent's moves and start afresh on demand. */
void ember_worker_after_fork_child(void);

#endif
