/*
 * ember-sim links the shim's access-counter reader (shim/signal/counters.c)
 * for its adaptive variant, which calls the reader's pure functions with its
 * own reader and policy context. The file also holds the shim's instance of
 * the reader and its one launch hook, which name the shim's policy context
 * and access monitor; the simulator never calls that hook, and these two
 * stand in for what the shim would link there.
 */
#include "engine.h"
#include "signal/counters.h"

struct ember_policy_ctx ember_shim_ctx;

bool ember_monitor_launch_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now);
bool ember_monitor_launch_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now)
{
	(void)a, (void)addr, (void)bytes, (void)amount, (void)now;
	return false;
}
