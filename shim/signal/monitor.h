/*
 * The access monitor: observations in, demand per region out, through one
 * interface (ember_monitor_demand). Sources: the launch scan (here), the
 * explicit hints of ember.h, and the UVM tools event queue (uvm_events.c).
 */
#ifndef EMBER_MONITOR_H
#define EMBER_MONITOR_H

#include <stdint.h>

#include "launch_scan.h"


/*
 * The byte range a pointer of a launch covers, [addr, addr + *len):
 *  - up to the next pointer into the same allocation in the same launch, if
 *    any (several pointers into one buffer split it);
 *  - within that, from the count arguments (kernel(x + offset, n) reads n
 *    elements from x + offset), element size unknown: a count times 128,
 *    64, 32, 16, 8, 4, 2 or 1 bytes that spans a whole allocation from its
 *    base wins; so does a base pointer with two counts (rows and columns)
 *    whose product, at some element size, is at least half the allocation:
 *    the whole of it; so does a base pointer whose counts cover under 1/64
 *    of it even at 16 bytes, in a kernel that never showed its element size
 *    nor passed that argument inside an allocation (a frontier's length
 *    beside a graph's edges, not a tensor at a pool's base); else the largest count
 *    at 4 bytes (float, int) that fits; else the largest that fits at any
 *    size;
 *  - with no count that fits, to the limit: a base pointer alone is taken
 *    to mean the whole allocation.
 * An element size learned from an earlier launch of the same kernel (one
 * that covered a whole allocation exactly) comes before the 4-byte guess;
 * *learned_elem_size reports a new one. Without it, a count of 16-byte
 * elements (float4) on an interior pointer is credited a quarter of its
 * range: both measured in test_adaptive.c.
 */
uint64_t ember_monitor_extent(const struct ember_scan *s, unsigned ptr_index, unsigned *learned_elem_size);

/*
 * Whether launch order follows pointer ptr_index (it is the only pointer
 * its argument gave): its range is remembered, and a slide departs.
 */
bool ember_monitor_follows(const struct ember_scan *s, unsigned ptr_index);

/* Turn a scanned launch into demand (table locked). Call ember_monitor_learn after unlocking. */
void ember_monitor_launch(struct ember_scan *s, uint64_t now);

/*
 * The same for a repeat of this thread's last launch (launch_repeat.h),
 * from the extents that launch found (table locked). The kernel's
 * ranges on this stream are the launch's own, so nothing departs, and
 * nothing is learned: only the demand is credited, as at every launch.
 * A launch of the same kernel on the same stream from another thread in
 * between is not compared with, nor does a repeat refresh the stream's
 * place among the kernel's latest streams (launch_order.h).
 */
void ember_monitor_repeat(struct ember_scan *s, uint64_t now);

/* Remember what the launch taught about its kernel's arguments (table not locked). */
void ember_monitor_learn(const struct ember_scan *s);

/* Demand for [addr, addr + bytes) from any source (table locked); false: a repeat (policy.h). */
bool ember_monitor_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now);

/*
 * The same for a launch's extent, whose first and last regions, where it
 * covers them only in part, get that part of amount under
 * EMBER_PIECES (ember_policy_share); an event's point does not.
 */
bool ember_monitor_launch_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now);

#endif
