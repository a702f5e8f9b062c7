/*
 * Converted memory past the budget, made in host memory by the host's own
 * touches (EMBER_POPULATE_HOST).
 */
#ifndef EMBER_HOST_TOUCH_H
#define EMBER_HOST_TOUCH_H

#include "regions.h"

/*
 * Touch every page of a's mapped regions from the host, so that the driver
 * makes them in host memory: by the background pool (EMBER_POPULATE_ASYNC,
 * touch_pool.h), else now from up to eight threads. Only for memory whose
 * address the program does not have yet: a touch made now writes a zero to
 * each page, where a never-touched page reads zero. An allocation larger
 * than its GPU's budget (a framework's pool) is left alone, and what the
 * touches made for allocations still live stays within half of what the
 * host, or the process's cgroup, could give at the first of them
 * (host_memory.h). Returns the bytes to touch, taken from that allowance.
 * The account and the allocation's statistics count what is touched: all
 * of it before returning, or what the background pool (touch_pool.h) finds
 * still mapped and live when it comes to each region.
 */
uint64_t ember_host_touch_mapped(struct ember_alloc *a);

/* bytes of a's pages made by the touches: counted in its statistics and its GPU's account. */
void ember_host_touch_counted(struct ember_alloc *a, uint64_t bytes);

/* a, whose pages the touches may have made, is being freed: what they made is the touches' to make again. */
void ember_host_touch_freed(const struct ember_alloc *a);

/*
 * The host memory Ember makes for itself has one allowance, which the
 * touches above and cuMemCreate memory made in host memory (physical.h)
 * share: half of what the host could give at the first claim, less what
 * is claimed and not given back, and never past half of what it can give
 * now (host_memory.h). Whether bytes were claimed; takes the table lock.
 */
bool ember_host_claim(uint64_t bytes);

/* Claimed bytes given back: their memory was freed. Takes the table lock. */
void ember_host_unclaim(uint64_t bytes);

#endif
