/* Host phases from page faults between a synchronisation and the next launch (host_phase.h). */
#include <sys/resource.h>

#include "gpu_busy.h"
#include "host_phase.h"
#include "ops_driver.h"
#include "shim.h"
#include "tracer.h"

static bool pending;          /* a sync returned, and no launch has looked since */
static uint64_t faults_at_sync; /* the process's page faults when it did */
static uint64_t ns_at_sync;     /* and the time */
static uint32_t sync_seq;     /* syncs that began such a wait */
static uint32_t declared_seq; /* the last of them whose host phase was declared, by a launch or the worker */
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
	__atomic_add_fetch(&sync_seq, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&pending, true, __ATOMIC_RELEASE);
}

/*
 * Declare sync seq's host phase, once whoever looks (a launch or the
 * worker): it is one when the wait since the sync took enough page faults
 * and host time enough to pay for a refresh. A launch-and-wait loop (under
 * EMBER_HOST_PHASE_MIN_NS) takes no getrusage, nor does a phase already
 * declared. Whether this call declared it.
 */
static bool declare_if_host_phase(uint32_t seq, uint64_t (*resident)(void *arg), void *arg, bool by_worker)
{
	uint64_t host_ns = ember_driver_now() - __atomic_load_n(&ns_at_sync, __ATOMIC_RELAXED);
	uint32_t prev = __atomic_load_n(&declared_seq, __ATOMIC_RELAXED);
	if (host_ns < EMBER_HOST_PHASE_MIN_NS || prev == seq)
		return false;
	uint64_t faults = process_faults() - __atomic_load_n(&faults_at_sync, __ATOMIC_RELAXED);
	if (faults < ember_cfg.refresh_faults || faults >= (uint64_t)1 << 62 ||
	    host_ns < 10 * ((resident(arg) >> 20) * EMBER_REFRESH_NS_PER_GIB >> 10) ||
	    !__atomic_compare_exchange_n(&declared_seq, &prev, seq, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return false;
	uint32_t now = __atomic_add_fetch(&phase, 1, __ATOMIC_RELAXED);
	ember_trace_host_phase(ember_driver_now(), now, by_worker);
	ember_debug("host phase %u: %llu page faults since the GPU was last waited for (seen %s); resident regions "
		    "are prefetched again at their next launch",
		    now, (unsigned long long)faults, by_worker ? "while it lasts" : "at the launch after it");
	return true;
}

uint32_t ember_host_phase_at_launch(uint64_t (*resident)(void *arg), void *arg)
{
	if (__atomic_load_n(&pending, __ATOMIC_RELAXED) && __atomic_exchange_n(&pending, false, __ATOMIC_ACQUIRE))
		declare_if_host_phase(__atomic_load_n(&sync_seq, __ATOMIC_RELAXED), resident, arg, false);
	return __atomic_load_n(&phase, __ATOMIC_RELAXED);
}

bool ember_host_phase_poll(uint64_t (*resident)(void *arg), void *arg, uint32_t *ended, bool *first)
{
	if (!ember_active || !ember_cfg.refresh_faults || !__atomic_load_n(&pending, __ATOMIC_ACQUIRE))
		return false;
	/* the program waited for one stream while another may still run: not the GPU's idle time (yet) */
	if (!ember_gpu_idle())
		return false;
	uint32_t seq = __atomic_load_n(&sync_seq, __ATOMIC_RELAXED);
	*first = __atomic_load_n(&declared_seq, __ATOMIC_RELAXED) != seq;
	if (*first && !declare_if_host_phase(seq, resident, arg, true))
		return false;
	/* declared for this sync, by the worker or a launch on its way: it lasts until a launch takes the sync */
	*ended = __atomic_load_n(&phase, __ATOMIC_RELAXED) - 1;
	return __atomic_load_n(&pending, __ATOMIC_ACQUIRE);
}

uint32_t ember_host_phase_current(void)
{
	return __atomic_load_n(&phase, __ATOMIC_RELAXED);
}
