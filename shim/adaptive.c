/* Running the pure policy inside the shim. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "adaptive.h"
#include "monitor.h"
#include "shim.h"
#include "worker.h"

#define MS 1000000ull

static struct ember_policy_params params;
static pthread_once_t params_once = PTHREAD_ONCE_INIT;
static CUcontext contexts[EMBER_MAX_DEVICES];

static void load_params(void)
{
	params = (struct ember_policy_params){
		.span_regions = (uint32_t)(ember_cfg.span.bytes >> EMBER_REGION_SHIFT),
		.threshold = ember_cfg.threshold,
		.interval_ns = ember_cfg.interval_ms * MS,
		.batch_regions = ember_cfg.batch_regions,
		.heat_ratio = ember_cfg.heat_ratio,
		.stale_intervals = ember_cfg.stale_intervals,
		.protection = ember_cfg.protection,
		.base_grace_ns = ember_cfg.base_grace_ms * MS,
		.return_window_ns = ember_cfg.return_window_ms * MS,
		.score_grace_ns = ember_cfg.score_grace_ms * MS,
		.max_grace_ns = ember_cfg.max_grace_ms * MS,
		.score_decay_ns = ember_cfg.score_decay_ms * MS,
	};
}

const struct ember_policy_params *ember_adaptive_params(void)
{
	pthread_once(&params_once, load_params);
	return &params;
}

uint64_t ember_adaptive_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ember_adaptive_note_context(int dev, CUcontext ctx)
{
	if (dev >= 0 && dev < EMBER_MAX_DEVICES)
		__atomic_store_n(&contexts[dev], ctx, __ATOMIC_RELAXED);
}

/* A policy move as the worker's migration, on device dev in ctx. */
static struct ember_migration migration_of(const struct ember_move *m, int dev, CUcontext ctx)
{
	return (struct ember_migration){ m->alloc, m->first, m->count, m->promote ? dev : -1, ctx };
}

/* Moves of the policy as worker migrations in ctx, for device dev. */
static struct ember_migration *as_migrations(const struct ember_moves *moves, int dev, CUcontext ctx)
{
	struct ember_migration *m = calloc(moves->n ? moves->n : 1, sizeof *m);
	for (size_t i = 0; m && i < moves->n; i++)
		m[i] = migration_of(&moves->v[i], dev, ctx);
	return m;
}

void ember_adaptive_launch(struct ember_scan *scan, const struct ember_launch_ctx *at)
{
	const struct ember_policy_params *p = ember_adaptive_params();
	uint64_t now = ember_adaptive_now();
	int devs[EMBER_SCAN_MAX_REFS];
	unsigned ndevs = 0;
	scan->stream_key = ember_scan_stream_key(at->stream, at->per_thread);
	ember_regions_lock();
	ember_monitor_launch(scan, now);
	for (unsigned i = 0; i < scan->n; i++) {
		int dev = scan->allocs[i]->device;
		bool seen = false;
		for (unsigned k = 0; k < ndevs; k++)
			seen |= devs[k] == dev;
		if (!seen && dev >= 0)
			devs[ndevs++] = dev;
	}
	ember_regions_unlock();
	ember_monitor_learn(scan);
	size_t waiting = 0;
	for (unsigned k = 0; k < ndevs; k++) {
		ember_adaptive_note_context(devs[k], at->ctx);
		struct ember_moves moves = { 0 };
		ember_regions_lock();
		waiting += ember_policy_promote(p, devs[k], now, scan->allocs, scan->n, &moves);
		ember_regions_unlock();
		struct ember_migration *m = as_migrations(&moves, devs[k], at->ctx);
		if (m) {
			ember_migrations_start(m, moves.n, EMBER_ORDER_STREAM, at->stream, at->per_thread);
		} else {
			for (size_t i = 0; i < moves.n; i++) { /* no memory: give the worker each */
				struct ember_migration mig = migration_of(&moves.v[i], devs[k], at->ctx);
				ember_worker_submit(&mig);
			}
		}
		free(m);
		ember_moves_free(&moves);
	}
	/*
	 * Wake the worker only when hot regions found no room: it reclaims on
	 * its own every interval, and a wake per launch made the worker's
	 * table survey contend with every launch (measured on the H200: token
	 * generation 30x slower with everything already resident).
	 */
	static bool started;
	if (waiting || ember_first_time(&started))
		ember_worker_wake(); /* the first launch starts the worker's interval passes */
}

/*
 * Up to this many batches of demotions are queued at once: one batch at a
 * time leaves the copy engine idle between completion and the next pass
 * (measured on the H200: phase-shift recovery at 2.31 s, of which 8 GiB of
 * demotion at 9.1 GB/s is under one). The policy counts regions already
 * leaving, so passes in a row never evict more than needed.
 */
enum { BATCHES_IN_FLIGHT = 4 };

void ember_adaptive_pass(void)
{
	const struct ember_policy_params *p = ember_adaptive_params();
	uint64_t now = ember_adaptive_now();
	for (int dev = 0; dev < EMBER_MAX_DEVICES; dev++) {
		CUcontext ctx = __atomic_load_n(&contexts[dev], __ATOMIC_RELAXED);
		if (!ctx)
			continue;
		for (int round = 0; round < BATCHES_IN_FLIGHT; round++) {
			struct ember_moves moves = { 0 };
			ember_regions_lock();
			ember_policy_reclaim(p, dev, now, &moves);
			ember_regions_unlock();
			uint64_t regions = 0;
			for (size_t i = 0; i < moves.n; i++) {
				struct ember_migration mig = migration_of(&moves.v[i], dev, ctx);
				ember_worker_submit(&mig);
				regions += moves.v[i].count;
			}
			ember_moves_free(&moves);
			if (regions < p->batch_regions)
				break; /* less than a full batch: nothing more is needed now */
		}
	}
}
