/*
 * Placement: what Ember does to an allocation, by mode. Every managed
 * allocation is advised once, whole (preferred location the host,
 * accessed-by each GPU), so it is mapped by default. In static mode its
 * leading regions are then promoted in spans at its first launch, or at once
 * for converted plain allocations, until the budget's high watermark.
 */
#ifndef EMBER_PLACEMENT_H
#define EMBER_PLACEMENT_H

#include <cuda.h>

#include "regions.h"

/* Advise the whole allocation as mapped. Returns the driver's result. */
CUresult ember_placement_advise(struct ember_alloc *a);

#include "worker.h"

/* The launch, if any, that a placement decision is made for. */
struct ember_launch_ctx {
	CUcontext ctx;
	CUstream stream;
	bool per_thread; /* a _ptsz launch: stream 0 is the per-thread default stream */
};

/*
 * Promote a's mapped, unhinted regions from its start while there is room,
 * ordered as `order` says (see ember_migrations_start).
 */
void ember_placement_promote_prefix(struct ember_alloc *a, const struct ember_launch_ctx *at, enum ember_order order);

/*
 * A launch referenced a: the static split happens on its first reference,
 * and that launch's stream waits for it on the GPU.
 */
void ember_placement_referenced(struct ember_alloc *a, const struct ember_launch_ctx *at);

struct ember_scan;

/*
 * A launch (a kernel, or a graph's kernels) referencing what scan found is
 * about to run on stream: static mode makes each allocation's first
 * reference its static split; adaptive mode records demand and promotes.
 */
void ember_placement_launch(struct ember_scan *scan, CUstream stream, bool per_thread);

/* The application advised or prefetched [ptr, ptr + bytes): Ember keeps off it. */
void ember_placement_app_hint(CUdeviceptr ptr, size_t bytes);

#endif
