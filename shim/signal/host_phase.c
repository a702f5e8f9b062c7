/* Host phases from page faults between a synchronisation and the next launch (host_phase.h). */
#include <sys/resource.h>

#include "host_phase.h"
#include "ops_driver.h"
#include "shim.h"

static bool pending;          /* a sync returned, and no launch has looked since */
static uint64_t faults_at_sync; /* the process's page faults when it did */
static uint64_t ns_at_sync;     /* and the time */
static uint32_t phase;        /* host phases so far */

static uint64_t process_faults(void)
{
	struct rusage u;
	if (getrusage(RUSAGE_SELF, &u) != 0)
		return 0;
	return (uint64_t)u.ru_minflt + (uint64_t)u.ru_majflt;
}

/*
 * The phase runs from the first synchronisation after a launch: a later one
 * before the next launch must not move its start past the faults taken so
 * far (pathfinder's runs begin with a synchronisation after the host's
 * check, and on the H200 its read-back went unseen).
 */
void ember_host_phase_sync(void)
{
	if (!ember_active || !ember_cfg.refresh_faults || __atomic_load_n(&pending, __ATOMIC_RELAXED))
		return;
	/* two threads' syncs at once both write a start: either will do */
	__atomic_store_n(&faults_at_sync, process_faults(), __ATOMIC_RELAXED);
	__atomic_store_n(&ns_at_sync, ember_driver_now(), __ATOMIC_RELAXED);
	__atomic_store_n(&pending, true, __ATOMIC_RELEASE);
}

uint32_t ember_host_phase_at_launch(uint64_t (*resident)(void *arg), void *arg)
{
	if (__atomic_load_n(&pending, __ATOMIC_RELAXED) && __atomic_exchange_n(&pending, false, __ATOMIC_ACQUIRE)) {
		uint64_t host_ns = ember_driver_now() - __atomic_load_n(&ns_at_sync, __ATOMIC_RELAXED);
		if (host_ns < EMBER_HOST_PHASE_MIN_NS) /* a launch-and-wait loop: no second getrusage */
			return __atomic_load_n(&phase, __ATOMIC_RELAXED);
		uint64_t since = process_faults() - __atomic_load_n(&faults_at_sync, __ATOMIC_RELAXED);
		if (since >= ember_cfg.refresh_faults && since < (uint64_t)1 << 62 &&
		    host_ns >= 10 * ((resident(arg) >> 20) * EMBER_REFRESH_NS_PER_GIB >> 10)) {
			uint32_t now = __atomic_add_fetch(&phase, 1, __ATOMIC_RELAXED);
			ember_debug("host phase %u: %llu page faults since the GPU was last waited for; resident regions "
				    "are prefetched again at their next launch",
				    now, (unsigned long long)since);
			return now;
		}
	}
	return __atomic_load_n(&phase, __ATOMIC_RELAXED);
}
