/* The shim's core objects, configured from the EMBER_* table. */
#include "ops_driver.h"
#include "shim.h"
#include "state.h"
#include "tracer.h"
#include "worker.h"

/* Completed moves go to the trace; refreshes do not (ember-sim models no host phases). */
static void finished(void *sink, const struct ember_op *op, bool ok, uint64_t ns)
{
	if (!op->move.refresh)
		ember_trace_move(&op->move, ok, ns);
}

struct ember_accounts ember_shim_accounts;
struct ember_table ember_shim_table = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .accounts = &ember_shim_accounts, .placed_lo = UINT64_MAX
};
struct ember_policy_ctx ember_shim_ctx = { .table = &ember_shim_table, .accounts = &ember_shim_accounts };
struct ember_engine ember_shim_engine = {
	.pc = &ember_shim_ctx,
	.ops = &ember_driver_ops,
	.track = ember_worker_track,
	.defer = ember_worker_defer,
	.failed = ember_worker_failed,
	.finished = finished,
};

void ember_state_init(void)
{
	ember_shim_ctx.params = (struct ember_policy_params){
		.span_regions = (uint32_t)(ember_cfg.span.bytes >> EMBER_REGION_SHIFT),
		.threshold = ember_cfg.threshold,
		.interval_ns = ember_cfg.interval_ms * EMBER_NS_PER_MS,
		.batch_regions = ember_cfg.batch_regions,
		.exchange_regions = ember_cfg.exchange_regions,
		.heat_ratio = ember_cfg.heat_ratio,
		.partial_rank = ember_cfg.partial_rank,
		.pieces = ember_cfg.pieces,
		.stale_intervals = ember_cfg.stale_intervals,
		.protection = ember_cfg.protection,
		.base_grace_ns = ember_cfg.base_grace_ms * EMBER_NS_PER_MS,
		.return_window_ns = ember_cfg.return_window_ms * EMBER_NS_PER_MS,
		.score_grace_ns = ember_cfg.score_grace_ms * EMBER_NS_PER_MS,
		.max_grace_ns = ember_cfg.max_grace_ms * EMBER_NS_PER_MS,
		.score_decay_ns = ember_cfg.score_decay_ms * EMBER_NS_PER_MS,
	};
	ember_shim_ctx.adaptive = ember_cfg.mode == EMBER_MODE_ADAPTIVE;
}
