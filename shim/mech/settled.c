/* Launches with nothing to decide (settled.h). */
#include "settled.h"

#include "budget_source.h"
#include "config.h"
#include "gpus.h"
#include "host_phase.h"
#include "placement.h"
#include "shim.h"
#include "state.h"

/*
 * What was found, for which table generation (0: nothing found). Written
 * with the table locked, read without: a reader takes the generation
 * before and after the rest and trusts it only if both equal the table's.
 */
static uint64_t found_gen;
static int found_dev;
static uint32_t found_phase;
static unsigned unsettled_left; /* launches before an unsettled table is surveyed again */
static uint64_t skipped;        /* launches that found nothing to decide */

/* Every allocation placed and on dev, nothing moving, nothing left to decide (table locked). */
static bool settled_on(int dev, uint32_t phase)
{
	const struct ember_device_account *acc = ember_table_account(EMBER_TABLE, dev);
	bool adaptive = ember_strategy->demand;
	if (!acc || !acc->budget || (adaptive && !ember_budget_room(acc, acc->low)))
		return false;
	for (unsigned i = 0, n = ember_table_count(EMBER_TABLE); i < n; i++) {
		const struct ember_alloc *a = ember_table_at(EMBER_TABLE, i);
		if (a->kind == EMBER_ALLOC_PLAIN || a->freed)
			continue;
		if (a->device != dev || a->in_flight)
			return false;
		if (!ember_alloc_none_mapped(a) && (adaptive || !a->referenced))
			return false; /* mapped regions: adaptive's demand, or static's split still to come, may promote */
		if (phase && a->refreshed_phase != phase && a->charged)
			return false; /* resident regions the host may have taken: refreshed at its next launch */
	}
	return true;
}

/* Survey the table, and keep the answer for the generation that this unlock makes. */
static bool survey(int dev, uint32_t phase)
{
	static bool said; /* the table lock guards it */
	ember_table_lock(EMBER_TABLE);
	bool settled = settled_on(dev, phase), first = settled && !said;
	said = said || settled;
	__atomic_store_n(&found_gen, 0, __ATOMIC_RELEASE);
	if (settled) {
		__atomic_store_n(&found_dev, dev, __ATOMIC_RELAXED);
		__atomic_store_n(&found_phase, phase, __ATOMIC_RELAXED);
		__atomic_store_n(&found_gen, EMBER_TABLE->generation + 1, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&unsettled_left, EMBER_SETTLED_RECHECK, __ATOMIC_RELAXED);
	}
	ember_table_unlock(EMBER_TABLE);
	if (first)
		ember_debug("nothing left to decide on GPU %d: launches skip their scan until an allocation, a free, a move "
			    "or a host phase changes that", dev);
	return settled;
}

bool ember_settled_launch(void)
{
	if (!ember_strategy->moves || ember_cfg.uvm_events)
		return false;
	uint32_t in_use = ember_gpus_in_use();
	if (in_use & (in_use - 1))
		return false; /* several GPUs: the peer tier decides at launches */
	int dev = ember_budget_current_device();
	if (dev < 0)
		return false;
	struct ember_at at = { .device = dev };
	/* a host phase that ends at this launch is seen here, and its refreshes are the scan's to make */
	uint32_t phase = ember_host_phase_at_launch(ember_placement_resident_on, &at);
	uint64_t seen = __atomic_load_n(&found_gen, __ATOMIC_ACQUIRE);
	if (seen && seen == ember_table_generation(EMBER_TABLE)) {
		bool same = __atomic_load_n(&found_dev, __ATOMIC_RELAXED) == dev &&
			    __atomic_load_n(&found_phase, __ATOMIC_RELAXED) == phase;
		if (__atomic_load_n(&found_gen, __ATOMIC_ACQUIRE) == seen) {
			if (same) /* else a new host phase, or another GPU: the scan's, and a survey at the next change */
				__atomic_fetch_add(&skipped, 1, __ATOMIC_RELAXED);
			return same;
		}
	}
	unsigned left = __atomic_load_n(&unsettled_left, __ATOMIC_RELAXED);
	if (left) {
		__atomic_store_n(&unsettled_left, left - 1, __ATOMIC_RELAXED); /* racy between threads: a count, not a lock */
		return false;
	}
	if (!survey(dev, phase))
		return false;
	__atomic_fetch_add(&skipped, 1, __ATOMIC_RELAXED);
	return true;
}

uint64_t ember_settled_launches(void)
{
	return __atomic_load_n(&skipped, __ATOMIC_RELAXED);
}
