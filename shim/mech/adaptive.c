/*
 * The adaptive strategy in the shim: a launch's references become demand
 * (the monitor), its hot regions are promoted at the launch, ordered before
 * it on the GPU (migrating data that kernels are reading over the
 * interconnect at the same time ran at 1.5 GB/s on the H200), and the
 * worker's periodic pass reclaims. The decisions are the pure policy's,
 * carried out by the engine (shim/policy).
 */
#include "host_phase.h"
#include "launch_scan.h"
#include "monitor.h"
#include "placement.h"
#include "shim.h"
#include "state.h"
#include "uvm_events.h"
#include "worker.h"

/* The context moves for each GPU are issued in: the last one a launch on it used. */
static CUcontext contexts[EMBER_MAX_DEVICES];

static void note_context(int dev, void *ctx)
{
	if (dev >= 0 && dev < EMBER_MAX_DEVICES)
		__atomic_store_n(&contexts[dev], (CUcontext)ctx, __ATOMIC_RELAXED);
}

void ember_adaptive_forget_context(void *ctx)
{
	for (int dev = 0; dev < EMBER_MAX_DEVICES; dev++) {
		CUcontext was = (CUcontext)ctx;
		__atomic_compare_exchange_n(&contexts[dev], &was, NULL, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
}

/*
 * Over its budget, nearly every launch has hot regions without room, and a
 * wake per launch had the worker survey and sort the whole table per
 * launch, each time under the table lock the launches take (llama.cpp at
 * 1.5x of the budget on the H200: adaptive 1.5x slower than static). A
 * quarter interval between wakes is soon enough for reclamation.
 */
static bool wake_due(uint64_t now)
{
	static uint64_t last;
	uint64_t prev = __atomic_load_n(&last, __ATOMIC_RELAXED);
	if (prev && now >= prev && now - prev < ember_shim_ctx.params.interval_ns / 4)
		return false;
	return __atomic_compare_exchange_n(&last, &prev, now, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static void adaptive_launch(struct ember_scan *scan, const struct ember_at *at)
{
	uint64_t now = ember_shim_engine.ops->now(ember_shim_engine.ops_self);
	/*
	 * Promotions go to the launch's own GPU only: an allocation whose
	 * regions another GPU holds stays there (read over the peer link or
	 * the host) and is handed over once that GPU stops using it (gpus.h).
	 */
	int devs[1];
	unsigned ndevs = at->device >= 0 ? 1 : 0;
	devs[0] = at->device;
	scan->stream_key = ember_scan_stream_key((CUstream)at->stream, at->per_thread);
	ember_table_lock(EMBER_TABLE);
	ember_shim_ctx.episode = ember_host_phase_current();
	bool idle = ndevs && ember_policy_nothing_to_decide(&ember_shim_ctx, devs[0], scan->allocs, scan->n);
	if (idle) {
		scan->fresh_demand = false;
		ember_policy_named_idle(scan->allocs, scan->n, now);
	} else if (scan->repeat)
		ember_monitor_repeat(scan, now); /* the extents of the launch it repeats */
	else
		ember_monitor_launch(scan, now);
	ember_table_unlock(EMBER_TABLE);
	if (!idle)
		ember_monitor_learn(scan);
	size_t waiting = 0;
	for (unsigned k = 0; k < ndevs; k++) {
		note_context(devs[k], at->ctx);
		/* only repeats: the launch before it promoted what they reference, and the worker sees the rest */
		if (scan->fresh_demand)
			waiting += ember_engine_launch_promote(&ember_shim_engine, devs[k], now, scan->allocs, scan->n, at);
	}
	/*
	 * Wake the worker only when hot regions found no room: it reclaims on
	 * its own every interval, and a wake per launch made the worker's
	 * table survey contend with every launch (measured on the H200: token
	 * generation 30x slower with everything already resident).
	 */
	static bool started;
	if (ember_first_time(&started) || (waiting && wake_due(now)))
		ember_worker_wake(); /* the first launch starts the worker's interval passes */
	/* notifications the kernels before this one raised: drained by the worker, demand by the next launch */
	ember_uvm_events_at_launch();
}

/* Nothing to decide: resident, nothing in flight, the GPU below its low watermark (policy.h). */
static bool adaptive_settled(const struct ember_scan *scan, int device)
{
	if (device < 0)
		return false;
	ember_table_lock(EMBER_TABLE);
	bool idle = ember_policy_nothing_to_decide(&ember_shim_ctx, device, scan->allocs, scan->n);
	if (idle) /* the clock read only when there is something to stamp */
		ember_policy_named_idle(scan->allocs, scan->n, ember_shim_engine.ops->now(ember_shim_engine.ops_self));
	ember_table_unlock(EMBER_TABLE);
	return idle;
}

/*
 * With EMBER_LOG=debug, what keeps small tables that found no room at their
 * launch from arriving, at most every WANTED_LOG_NS while any wait. On the
 * H200, star's tables at 97/93 arrived 2.5 s after the columns' fill, where
 * a replay of the same trace brings them in at once.
 */
#define WANTED_LOG_NS (100 * 1000 * 1000ull)

static void log_wanted_wait(int dev, uint64_t now)
{
	static uint64_t last;
	if (!ember_log_enabled(EMBER_LOG_DEBUG) || (last && now - last < WANTED_LOG_NS))
		return;
	struct ember_wanted_wait w = { 0 };
	ember_table_lock(EMBER_TABLE);
	if (ember_shim_ctx.wanted)
		ember_policy_wanted_wait(&ember_shim_ctx, dev, now, &w);
	ember_table_unlock(EMBER_TABLE);
	if (!w.wanted)
		return;
	last = now;
	ember_debug("GPU %d: %u wanted regions wait (demand %u); %llu MiB of room, %llu MiB leaving; of %u residents "
		    "%u in grace (up to %llu ms more), %u too warm to replace, %u dense tables",
		    dev, w.wanted, w.wanted_demand, (unsigned long long)(w.room >> 20),
		    (unsigned long long)(w.leaving >> 20), w.resident, w.in_grace,
		    (unsigned long long)(w.grace_left_ns / 1000000), w.warm, w.dense);
}

/*
 * With EMBER_LOG=debug, why regions gave way since the last such line, at
 * most every WANTED_LOG_NS: on the H200, bfs at 1.5x gave up vertex
 * arrays for edge regions between its runs where a replay of its trace
 * moves nothing.
 */
static void log_victims(uint64_t now)
{
	static uint64_t last;
	if (!ember_log_enabled(EMBER_LOG_DEBUG) || (last && now - last < WANTED_LOG_NS))
		return;
	struct ember_pass_note note;
	ember_table_lock(EMBER_TABLE);
	bool any = ember_pass_note_take(&ember_shim_ctx.note, &note);
	ember_table_unlock(EMBER_TABLE);
	if (!any)
		return;
	last = now;
	char line[EMBER_PASS_NOTE_LINE];
	ember_debug("gave way: %s", ember_pass_note_format(&note, now, line, sizeof line));
}

/* The bytes resident on every GPU a launch has used: what a refresh would cover at most. */
static uint64_t resident_anywhere(void *unused)
{
	(void)unused;
	uint64_t bytes = 0;
	for (int dev = 0; dev < EMBER_MAX_DEVICES; dev++)
		if (__atomic_load_n(&contexts[dev], __ATOMIC_RELAXED))
			bytes += ember_placement_resident_on(&(struct ember_at){ .device = dev });
	return bytes;
}

/*
 * A host phase seen while it lasts ends the episode of launches before it:
 * its exchange (policy.h) is issued now, while the GPU is idle, not in the
 * next run's time; at each pass while the phase lasts, as residents leave
 * their grace (once made, it finds nothing more to move), the room left
 * filled on the first try only.
 */
static void end_episode_at_host_phase(void)
{
	uint32_t ended;
	bool first;
	if (!ember_cfg.phase_exchange || !ember_host_phase_poll(resident_anywhere, NULL, &ended, &first))
		return;
	for (int dev = 0; dev < EMBER_MAX_DEVICES; dev++) {
		CUcontext ctx = __atomic_load_n(&contexts[dev], __ATOMIC_RELAXED);
		if (ctx)
			ember_engine_episode_end(&ember_shim_engine, dev, ended, first, &(struct ember_at){ .ctx = ctx });
	}
}

/* Reclamation and replacement over every GPU a launch has used; demotions go to the worker. */
static void adaptive_pass(void)
{
	end_episode_at_host_phase();
	for (int dev = 0; dev < EMBER_MAX_DEVICES; dev++) {
		CUcontext ctx = __atomic_load_n(&contexts[dev], __ATOMIC_RELAXED);
		if (!ctx)
			continue;
		ember_engine_reclaim(&ember_shim_engine, dev, &(struct ember_at){ .ctx = ctx });
		log_wanted_wait(dev, ember_shim_engine.ops->now(ember_shim_engine.ops_self));
	}
	log_victims(ember_shim_engine.ops->now(ember_shim_engine.ops_self));
}

static uint64_t adaptive_period(void)
{
	return ember_shim_ctx.params.interval_ns;
}

const struct ember_strategy ember_strategy_adaptive = {
	.name = "adaptive",
	.scans = true,
	.moves = true,
	.demand = true,
	.launch = adaptive_launch,
	.settled = adaptive_settled,
	.pass = adaptive_pass,
	.period_ns = adaptive_period,
};
