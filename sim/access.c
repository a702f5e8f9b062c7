/*
 * ember_sim_access: a kernel's memory traffic, reported by the kernel.
 * Its cost, by where the bytes live, is added to the running kernel's
 * virtual time; outside a kernel it is the CPU's, and the host clock pays.
 */
#include "cost.h"
#include "sim.h"

/* n bytes at p, all inside a (or in no allocation when a is NULL), touched from dev (< 0: the CPU). */
static uint64_t touch(struct sim_alloc *a, uintptr_t p, size_t n, bool write, int dev)
{
	bool gpu = dev >= 0;
	if (!a) /* pageable host memory: reached through a mapping, if at all */
		return gpu ? sim_transfer_ns(n, SIM_MAPPED_BPS) : 0;
	switch (a->kind) {
	case SIM_MEM_DEVICE:
		if (!gpu)
			return 0;
		return sim_transfer_ns(n, dev == a->device		  ? SIM_DEVICE_MEMORY_BPS
					  : sim_peer_link(dev, a->device) ? SIM_PEER_BPS
									  : SIM_MAPPED_BPS);
	case SIM_MEM_HOST:
		return gpu ? sim_transfer_ns(n, SIM_MAPPED_BPS) : 0;
	case SIM_MEM_MANAGED:
		return sim_managed_access(a, p, n, write, dev);
	}
	return 0;
}

EMBER_SIM_API void ember_sim_access(const void *ptr, size_t bytes, int write)
{
	if (!ptr || bytes == 0)
		return;
	const struct ember_sim_launch *launch = sim_current_launch();
	int dev = launch ? launch->device : -1;
	uintptr_t p = (uintptr_t)ptr;
	bytes = SIM_MIN(bytes, UINTPTR_MAX - p);
	if (launch)
		sim_launch_note_use(p, bytes, write != 0);
	uint64_t cost = 0;
	pthread_mutex_lock(&sim_mem_lock);
	while (bytes > 0) { /* a range may run over several allocations */
		struct sim_alloc *a = sim_alloc_find(p);
		size_t n = a ? SIM_MIN(bytes, a->size - (p - a->base)) : bytes;
		cost += touch(a, p, n, write != 0, dev);
		p += n;
		bytes -= n;
	}
	pthread_mutex_unlock(&sim_mem_lock);
	if (launch)
		sim_launch_charge(cost);
	else
		sim_clock_advance_by(cost);
}
