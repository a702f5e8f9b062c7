/*
 * What the host can still give: the host's touches (host_touch.h) make
 * pages that stay made, so they are held to part of it.
 */
#ifndef EMBER_HOST_MEMORY_H
#define EMBER_HOST_MEMORY_H

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

#endif
