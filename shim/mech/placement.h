/*
 * Placement: what Ember does to an allocation, by mode, as one strategy
 * table chosen once at start-up (mapped, static or adaptive) in place of
 * mode checks. Every managed allocation is advised once, whole (preferred
 * location the host, accessed-by each GPU in use; a GPU that starts using
 * it later is added at its launch: gpus.h), so it is mapped by default.
 * Static promotes its leading regions at its first launch, or at once for
 * converted plain allocations, up to the budget's high watermark; adaptive
 * moves regions by demand (adaptive.c).
 */
#ifndef EMBER_PLACEMENT_H
#define EMBER_PLACEMENT_H

#include <cuda.h>

#include "config.h"
#include "ops.h"
#include "regions.h"

struct ember_scan;

struct ember_strategy {
	const char *name;
	bool scans; /* launches are scanned for the allocations they reference */
	bool moves; /* Ember moves data: the static split, populating converted memory, hints */
	bool demand; /* access signals (scan, counters) become demand */
	/* a launch about to run at `at`, referencing what scan found (NULL when the strategy does not scan) */
	void (*launch)(struct ember_scan *scan, const struct ember_at *at);
	/*
	 * Whether a launch referencing what scan found leaves nothing to decide
	 * kernel by kernel, so that a graph's kernels can be placed as one
	 * launch (NULL: never)
	 */
	bool (*settled)(const struct ember_scan *scan, int device);
	void (*pass)(void);   /* periodic, on the worker (may be NULL) */
	uint64_t (*period_ns)(void);
};

/* The strategy of EMBER_MODE, chosen by ember_strategy_choose at start-up. */
extern const struct ember_strategy *ember_strategy;
void ember_strategy_choose(enum ember_mode mode);

extern const struct ember_strategy ember_strategy_adaptive; /* adaptive.c */
/* ctx is torn down: adaptive's passes stop issuing moves in it until a launch names a context again. */
void ember_adaptive_forget_context(void *ctx);

/* Advise the whole allocation as mapped. Returns the driver's result. */
CUresult ember_placement_advise(struct ember_alloc *a);

/* Promote a's mapped, unhinted regions from its start while there is room (converted memory at allocation). */
void ember_placement_populate(struct ember_alloc *a, const struct ember_at *at, enum ember_order order);

/* Whether the strategy has nothing to decide kernel by kernel for a launch referencing what scan found. */
bool ember_placement_settled(const struct ember_scan *scan);

/* The bytes resident on at's GPU (at: a struct ember_at), table unlocked: what a host phase's refresh covers. */
uint64_t ember_placement_resident_on(void *at);

/* A launch (a kernel, or a graph's kernels) referencing what scan found is about to run on stream. */
void ember_placement_launch(struct ember_scan *scan, CUstream stream, bool per_thread);

/* The application advised or prefetched [ptr, ptr + bytes): Ember keeps off it. */
void ember_placement_app_hint(CUdeviceptr ptr, size_t bytes);

/* The driver moved [addr, addr + bytes) to host memory on its own: its resident regions are placed again. */
void ember_placement_displaced(uint64_t addr, uint64_t bytes);

#endif
