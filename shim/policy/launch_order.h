/*
 * Launch order: what the ranges that one argument of one kernel covers, at
 * successive launches on one stream, say about the regions left behind.
 * Pure, like the policy: the shim's access monitor and ember-sim's replay
 * of a trace both call it with the range they remembered.
 */
#ifndef EMBER_LAUNCH_ORDER_H
#define EMBER_LAUNCH_ORDER_H

#include <stdint.h>

#include "regions.h"

/* Bytes [start, end) of allocation alloc_id, as one argument of a launch covered them. */
struct ember_range {
	uint64_t alloc_id, start, end;
};

/*
 * The argument covered was at its previous launch on this stream and covers
 * now_r (of allocation a) at this one. If it slid (the two overlap by at
 * least half of was, but the range moved), the whole regions of was outside
 * now_r are departed (ember_policy_depart). A sweep in chunks overlaps its
 * previous chunk by a halo at most, and a kernel run once per layer jumps
 * between buffers: neither departs anything.
 */
void ember_launch_order_slide(struct ember_alloc *a, const struct ember_range *was, const struct ember_range *now_r);

#endif
