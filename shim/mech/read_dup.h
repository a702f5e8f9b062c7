/*
 * Read duplication for resident memory that kernels only read
 * (EMBER_READ_MOSTLY, on by default: measured on the H200 in ab-41's
 * call 1, pathfinder 1.6x faster and BFS 1.12x, the other kernels the same).
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

/*
 * Copies and memsets (hooks_copy.c). Under the advice a copy into a
 * GPU-resident range collapses its copies page by page: on the H200 one
 * from pinned host memory into 4 GiB took 21.4 s (0.2 GB/s), against
 * 0.084 s into a plain range (ember-readmostly-probe, ab-41's call 1). So
 * a copy or memset into an allocation a launch has read is a write to it,
 * as a kernel's would be: its advice is withdrawn before the copy is
 * issued, and it is not advised again. A loader's copies, before any
 * launch has read the memory, leave it as it was. While a stream is
 * captured the withdrawal waits (an advice call might invalidate the
 * capture): for the graph's instantiation, which finds the copy's node,
 * or the next copy or write. Until a launch has read
 * an allocation under EMBER_READ_MOSTLY, a copy costs one load.
 */
extern bool ember_read_dup_watching; /* atomic */
void ember_read_dup_copy_into(CUdeviceptr dst, size_t bytes);

/* Before a copy or memset writes [dst, dst + bytes). */
static inline void ember_read_dup_before_copy(CUdeviceptr dst, size_t bytes)
{
	if (__atomic_load_n(&ember_read_dup_watching, __ATOMIC_RELAXED))
		ember_read_dup_copy_into(dst, bytes);
}

/* What the advice did so far, for the exit statistics: bytes advised, and bytes it was withdrawn from. */
struct ember_read_dup_counts {
	uint64_t bytes_advised;   /* promoted (or refreshed) ranges given the advice, each time */
	uint64_t bytes_withdrawn; /* ranges a withdrawal was issued for: demotions from an advised allocation, those written */
	uint64_t written;         /* allocations advised, then passed to a launch that may write them, or copied into */
};
void ember_read_dup_counts(struct ember_read_dup_counts *out);

#endif
