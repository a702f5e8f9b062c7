/*
 * Virtual time. One clock for the simulated host, in nanoseconds. It moves
 * only when the host would have waited: a synchronous call, a
 * synchronisation, a query of pending work. Work queued on streams carries
 * its own completion times (stream.c).
 */
#include <stdatomic.h>

#include "sim.h"

static _Atomic uint64_t now_ns;

uint64_t sim_clock_now(void)
{
	return atomic_load_explicit(&now_ns, memory_order_acquire);
}

void sim_clock_advance_to(uint64_t t)
{
	uint64_t cur = atomic_load_explicit(&now_ns, memory_order_relaxed);
	while (cur < t && !atomic_compare_exchange_weak_explicit(&now_ns, &cur, t, memory_order_acq_rel,
								  memory_order_relaxed))
		;
}

void sim_clock_advance_by(uint64_t ns)
{
	atomic_fetch_add_explicit(&now_ns, ns, memory_order_acq_rel);
}

uint64_t sim_transfer_ns(uint64_t bytes, double bytes_per_second)
{
	double ns = (double)bytes * 1e9 / bytes_per_second;
	uint64_t whole = (uint64_t)ns;
	return whole + (ns > (double)whole);
}

EMBER_SIM_API uint64_t ember_sim_now_ns(void)
{
	return sim_clock_now();
}
