/*
 * Read duplication for resident memory that kernels only read
 * (EMBER_READ_MOSTLY, off by default until measured on a GPU).
 *
 * A host that reads results back between runs takes each GPU-resident
 * page it touches to host memory, one fault each, and the next run's
 * first launch prefetches them back (the refresh, host_phase.h): on the
 * H200 pathfinder's check at 1.5x of the budget took 15,888 faults of its
 * wall, and the refresh held the GPU 117 ms. Under read-mostly advice a
 * host read makes a copy and the GPU keeps its own. The advice is given
 * only to an allocation that every launch so far has passed through
 * pointers to const (kernel_types.h), once its promoted regions have
 * landed, and withdrawn from the whole allocation at the first launch that
 * may write it, and from a range before its demotion: a write to a
 * duplicated page, or a demotion that left the GPU's copy, would cost what
 * the advice saves. An allocation the application advised or prefetched
 * itself, in part or whole, gets none, and what was given before keeps off
 * its ranges when withdrawn.
 */
#ifndef EMBER_READ_DUP_H
#define EMBER_READ_DUP_H

#include "launch_scan.h"
#include "regions.h"

/* What launches have done to an allocation's memory, as far as their kernels' names say; it only rises. */
enum ember_gpu_access {
	EMBER_GPU_UNSEEN, /* no launch has referenced it */
	EMBER_GPU_READS,  /* every launch passed it through a pointer to const */
	EMBER_GPU_WRITES, /* a launch passed it otherwise: a pointer that may be written through, a struct, a packed buffer */
};

/* Before a launch, under EMBER_READ_MOSTLY: what it does to each allocation it references; the advice withdrawn from those it may write. */
void ember_read_dup_launch(const struct ember_scan *s);

/* A promotion of [start, start + bytes) of a has landed: the advice, if a is read only. */
void ember_read_dup_arrived(struct ember_alloc *a, CUdeviceptr start, size_t bytes);

/* Before a demotion of [start, start + bytes) of a: the advice withdrawn there, so the GPU's copy goes. */
void ember_read_dup_leaving(struct ember_alloc *a, CUdeviceptr start, size_t bytes);

/* What the advice did so far, for the exit statistics: bytes advised, and bytes it was withdrawn from. */
struct ember_read_dup_counts {
	uint64_t bytes_advised;   /* promoted (or refreshed) ranges given the advice, each time */
	uint64_t bytes_withdrawn; /* ranges a withdrawal was issued for: demotions from an advised allocation, those written */
	uint64_t written;         /* allocations advised, then passed to a launch that may write them */
};
void ember_read_dup_counts(struct ember_read_dup_counts *out);

#endif
