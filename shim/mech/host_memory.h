/*
 * What the host can still give: the host's touches (host_touch.h) make
 * pages that stay made, and cuMemCreate memory made in host memory
 * (physical.h) is page-locked, so together they are held to part of it.
 */
#ifndef EMBER_HOST_MEMORY_H
#define EMBER_HOST_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Bytes the host can give before reclaim: MemAvailable of meminfo (a
 * /proc/meminfo), and, where cgroup names a cgroup v2 folder whose
 * memory.max is a number, no more than memory.max less memory.current (a
 * container's limit, which /proc/meminfo does not show). UINT64_MAX when
 * neither says.
 */
uint64_t ember_host_memory_available(const char *meminfo, const char *cgroup);

/* The same for this process: /proc/meminfo and its own cgroup (/proc/self/cgroup). */
uint64_t ember_host_memory_available_now(void);

/*
 * What the host's touches may still make: half of what the host could
 * give at the first of them, less what they made since, plus what frees
 * of their allocations gave back. The caller serialises its use.
 */
struct ember_host_allowance {
	uint64_t left;
	bool measured;
};

/*
 * Whether bytes may be made now, when the host can give available_now:
 * within the allowance and within half of available_now. If so, they are
 * taken from the allowance.
 */
bool ember_host_allowance_take(struct ember_host_allowance *al, uint64_t bytes, uint64_t available_now);

/* Pages the touches made, bytes of them, were freed. */
void ember_host_allowance_give(struct ember_host_allowance *al, uint64_t bytes);

#endif
