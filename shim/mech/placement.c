/* Mapped by default, the static split, and the strategy table. */
#include <stdlib.h>

#include "ember/ember.h"
#include "budget_source.h"
#include "capture.h"
#include "gpus.h"
#include "host_phase.h"
#include "launch_scan.h"
#include "placement.h"
#include "read_dup.h"
#include "shim.h"
#include "split.h"
#include "state.h"
#include "tracer.h"
#include "worker.h"

CUresult ember_placement_advise(struct ember_alloc *a)
{
	return (CUresult)ember_shim_engine.ops->advise_mapped(ember_shim_engine.ops_self, a);
}

void ember_placement_populate(struct ember_alloc *a, const struct ember_at *at, enum ember_order order)
{
	if (ember_strategy->moves)
		ember_engine_split(&ember_shim_engine, a, at, order);
}

/* mapped: nothing moves, but the worker reads the event queue (faults, the driver's own moves) */
static void mapped_launch(struct ember_scan *scan, const struct ember_at *at)
{
	static bool started;
	if (ember_cfg.uvm_events && ember_first_time(&started))
		ember_worker_wake();
}

/*
 * static: an allocation's first reference is its split, and that launch's
 * stream waits for it on the GPU. Allocations first referenced by the same
 * launch are split smallest first (ember_split_order).
 */
static void static_launch(struct ember_scan *scan, const struct ember_at *at)
{
	struct ember_alloc *firsts[EMBER_SCAN_MAX_REFS];
	unsigned n = 0;
	for (unsigned i = 0; i < scan->n; i++) {
		struct ember_alloc *a = scan->allocs[i];
		/* once split, never again: most launches learn that without the lock */
		if (__atomic_load_n(&a->referenced, __ATOMIC_ACQUIRE))
			continue;
		ember_table_lock(EMBER_TABLE);
		bool first = !a->referenced;
		__atomic_store_n(&a->referenced, true, __ATOMIC_RELEASE);
		ember_table_unlock(EMBER_TABLE);
		if (first)
			firsts[n++] = a;
	}
	ember_split_order(firsts, n);
	for (unsigned i = 0; i < n; i++)
		ember_engine_split(&ember_shim_engine, firsts[i], at, EMBER_ORDER_STREAM);
}

/* static decides only at an allocation's first reference: its split */
static bool static_settled(const struct ember_scan *scan, int device)
{
	(void)device;
	for (unsigned i = 0; i < scan->n; i++)
		if (!__atomic_load_n(&scan->allocs[i]->referenced, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static const struct ember_strategy strategy_mapped = { .name = "mapped", .launch = mapped_launch };
static const struct ember_strategy strategy_static = {
	.name = "static", .scans = true, .moves = true, .launch = static_launch, .settled = static_settled
};

const struct ember_strategy *ember_strategy = &strategy_static;

void ember_strategy_choose(enum ember_mode mode)
{
	ember_strategy = mode == EMBER_MODE_ADAPTIVE ? &ember_strategy_adaptive
			 : mode == EMBER_MODE_MAPPED ? &strategy_mapped
						     : &strategy_static;
	if (ember_strategy->pass)
		ember_worker_set_pass(ember_strategy->pass, ember_strategy->period_ns());
}

/* The bytes resident on the launch's GPU: what a refresh would cover at most. */
uint64_t ember_placement_resident_on(void *at)
{
	ember_table_lock(EMBER_TABLE);
	const struct ember_device_account *acc = ember_table_account(EMBER_TABLE, ((const struct ember_at *)at)->device);
	uint64_t bytes = acc ? acc->resident : 0;
	ember_table_unlock(EMBER_TABLE);
	return bytes;
}

/*
 * After a host phase (host_phase.h), the first launch that references an
 * allocation prefetches its resident regions again, ordered before the
 * launch on its stream: what the host took comes back in one prefetch, not
 * in the GPU's faults. Most launches learn that nothing is due without the
 * table lock.
 *
 * Under read-mostly advice (read_dup.h) the host's reads left the GPU its
 * copy, and the prefetch has something to move only where the host wrote:
 * that refresh is not ordered before the launch, which would wait about a
 * millisecond a GiB for it (ab-40's call 6 on an H100: pathfinder's run
 * after the check 0.237 s, the run after a check that took no faults
 * 0.214). What the host wrote is faulted back meanwhile, or brought back
 * by the prefetch, whichever comes first.
 */
static void refresh_after_host_phase(struct ember_scan *scan, const struct ember_at *at)
{
	uint32_t phase = ember_host_phase_at_launch(ember_placement_resident_on, (void *)at);
	if (!phase)
		return;
	unsigned i = 0;
	while (i < scan->n && __atomic_load_n(&scan->allocs[i]->refreshed_phase, __ATOMIC_RELAXED) == phase)
		i++;
	if (i == scan->n)
		return;
	struct ember_moves ordered = { 0 }, behind = { 0 };
	ember_table_lock(EMBER_TABLE);
	for (; i < scan->n; i++) {
		struct ember_alloc *a = scan->allocs[i];
		if (a->refreshed_phase == phase || a->freed || a->device != at->device)
			continue;
		__atomic_store_n(&a->refreshed_phase, phase, __ATOMIC_RELAXED);
		ember_moves_push_refresh(__atomic_load_n(&a->read_dup, __ATOMIC_SEQ_CST) ? &behind : &ordered, a);
	}
	ember_table_unlock(EMBER_TABLE);
	ember_engine_start(&ember_shim_engine, &ordered, at, EMBER_ORDER_STREAM);
	ember_engine_start(&ember_shim_engine, &behind, at, EMBER_ORDER_NONE);
}

bool ember_placement_settled(const struct ember_scan *scan)
{
	return ember_strategy->settled && ember_strategy->settled(scan, ember_budget_current_device());
}

void ember_placement_launch(struct ember_scan *scan, CUstream stream, bool per_thread)
{
	if (scan && scan->n == 0)
		return;
	if (!ember_strategy->scans)
		scan = NULL; /* scanned only for the trace */
	struct ember_at at = { .stream = stream, .per_thread = per_thread };
	EMBER_REAL(cuCtxGetCurrent)((CUcontext *)&at.ctx);
	at.device = scan ? ember_budget_current_device() : -1;
	struct ember_capture_relaxed relaxed = ember_capture_relax(); /* another stream may be captured */
	ember_gpus_launch(scan, at.device, &at); /* several GPUs: gpus.h */
	if (scan && ember_strategy->moves) {
		ember_read_dup_launch(scan);
		refresh_after_host_phase(scan, &at);
	}
	ember_strategy->launch(scan, &at);
	ember_gpus_after_launch(scan, &at); /* the peer tier: gpus.h */
	ember_capture_restore(relaxed);
}

/* A hint's work: prepare moves over each covered range. */
struct hint {
	bool promote;
	struct ember_moves moves;
	uint64_t total;
};

static void hint_range(struct ember_alloc *a, uint32_t r0, uint32_t r1, void *arg)
{
	struct hint *h = arg;
	if (a->device < 0)
		return;
	h->total += h->promote ? ember_split_promote(&ember_shim_ctx, a, r0, r1, false, &h->moves)
			       : ember_split_demote(&ember_shim_ctx, a, r0, r1, &h->moves);
}

static int64_t over_range(CUdeviceptr ptr, size_t bytes, bool promote)
{
	if (!ember_active || !ember_strategy->moves)
		return -1;
	struct hint h = { .promote = promote };
	struct ember_at at = { 0 };
	EMBER_REAL(cuCtxGetCurrent)((CUcontext *)&at.ctx);
	ember_table_lock(EMBER_TABLE);
	ember_table_for_each_overlap(EMBER_TABLE, ptr, bytes, hint_range, &h);
	ember_table_unlock(EMBER_TABLE);
	ember_engine_start(&ember_shim_engine, &h.moves, &at, EMBER_ORDER_NONE);
	return (int64_t)h.total;
}

EMBER_PUBLIC long long ember_promote(const void *ptr, size_t bytes)
{
	return over_range((CUdeviceptr)ptr, bytes, true);
}

EMBER_PUBLIC long long ember_evict(const void *ptr, size_t bytes)
{
	return over_range((CUdeviceptr)ptr, bytes, false);
}

/*
 * The driver's own migrations to host memory (the UVM event queue): a host
 * read of results took pages from resident regions, or the driver evicted.
 * On the H200, each warm run of pathfinder and BFS at 0.5x of the budget
 * then faulted them back page by page (126,462 GPU faults for pathfinder's
 * 8 GiB). Mapped again, the regions are promoted by the next launch that
 * references them, in one prefetch ordered before it: the static split is
 * made again, and adaptive's repeats of the range end.
 */
static void displaced_range(struct ember_alloc *a, uint32_t r0, uint32_t r1, void *arg)
{
	uint64_t *total = arg;
	ember_gpus_displaced(a, r0, r1); /* the peer tier's (gpus.h) */
	uint64_t bytes = ember_regions_displaced(&ember_shim_ctx, a, r0, r1);
	if (!bytes)
		return;
	*total += bytes;
	a->repeat.count = 0;
	__atomic_store_n(&a->referenced, false, __ATOMIC_RELEASE);
}

void ember_placement_displaced(uint64_t addr, uint64_t bytes)
{
	if (!ember_active || !ember_strategy->moves || !bytes)
		return;
	uint64_t total = 0;
	ember_table_lock(EMBER_TABLE);
	ember_table_for_each_overlap(EMBER_TABLE, addr, bytes, displaced_range, &total);
	ember_table_unlock(EMBER_TABLE);
	if (total)
		ember_debug("the driver moved %llu bytes at 0x%llx to host memory: their regions are promoted again "
			    "at their next launch", (unsigned long long)bytes, (unsigned long long)addr);
}

static void mark_hinted(struct ember_alloc *a, uint32_t r0, uint32_t r1, void *arg)
{
	__atomic_store_n(&a->app_advised, true, __ATOMIC_SEQ_CST);
	for (uint32_t r = r0; r < r1; r++)
		a->regions[r].hinted = 1;
	ember_trace_hint(a, (uint64_t)r0 << EMBER_REGION_SHIFT, (uint64_t)(r1 - r0) << EMBER_REGION_SHIFT);
}

void ember_placement_app_hint(CUdeviceptr ptr, size_t bytes)
{
	ember_table_lock(EMBER_TABLE);
	ember_table_for_each_overlap(EMBER_TABLE, ptr, bytes, mark_hinted, NULL);
	ember_table_unlock(EMBER_TABLE);
}

EMBER_PUBLIC int ember_region_info(const void *ptr, struct ember_region_info *out)
{
	if (!out)
		return -1;
	uint64_t addr = (uint64_t)(uintptr_t)ptr;
	uint64_t now = ember_shim_engine.ops->now(ember_shim_engine.ops_self);
	ember_table_lock(EMBER_TABLE);
	struct ember_alloc *a = ember_table_find(EMBER_TABLE, addr);
	int rc = -1;
	if (a && a->kind != EMBER_ALLOC_PLAIN && a->nregions) {
		ember_policy_settle(&ember_shim_ctx, a);
		const struct ember_region *r = &a->regions[(addr - a->base) >> EMBER_REGION_SHIFT];
		*out = (struct ember_region_info){ r->state, a->device, r->hinted, r->demand, r->score,
						   ember_policy_grace_left(r, now) };
		rc = 0;
	}
	ember_table_unlock(EMBER_TABLE);
	return rc;
}
