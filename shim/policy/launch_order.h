/*
 * Launch order: what the ranges that one argument of one kernel covers, at
 * successive launches on one stream, say about the regions left behind.
 * Pure, like the policy: the shim's access monitor and ember-sim's replay
 * of a trace both call it with the range they remembered.
 */
#ifndef EMBER_LAUNCH_ORDER_H
#define EMBER_LAUNCH_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "regions.h"

/* Bytes [start, end) of allocation alloc_id, as one argument of a launch covered them. */
struct ember_range {
	uint64_t alloc_id, start, end;
	/*
	 * Kept by the history: the argument has jumped back to where its
	 * slides began, so it sweeps in cycles (a per-layer view through a
	 * KV cache, once a token) and what a slide leaves behind comes back.
	 */
	bool cycles;
};

/*
 * What one argument of one kernel covered at its latest launch on each of
 * its latest streams, so that streams running the same kernel over
 * different data do not mistake each other's ranges for a slide.
 */
enum { EMBER_LAUNCH_STREAMS = 4 };
struct ember_launch_history {
	struct {
		uint64_t key, used; /* used: a clock value, to replace the stalest (0: empty) */
		struct ember_range range;
	} on[EMBER_LAUNCH_STREAMS];
};

/* The range the argument covered last on the stream with this key: whether it is known. */
bool ember_launch_history_find(const struct ember_launch_history *h, uint64_t key, struct ember_range *out);

/*
 * Keep range as the argument's latest on the stream, replacing that
 * stream's or the stalest; clock > 0, rising. A range that starts before
 * the stream's last one, in the same allocation and apart from it, marks
 * the argument as cycling there from then on (range->cycles is ignored).
 */
void ember_launch_history_keep(struct ember_launch_history *h, uint64_t key, const struct ember_range *range,
			       uint64_t clock);

/*
 * The argument covered was at its previous launch on this stream and covers
 * now_r (of allocation a) at this one. If it slid (the two overlap by at
 * least half of was, but the range moved), the whole regions of was outside
 * now_r are departed (ember_policy_depart). A sweep in chunks overlaps its
 * previous chunk by a halo at most, and a kernel run once per layer jumps
 * between buffers: neither departs anything. Nor does an argument that
 * cycles (was->cycles).
 */
void ember_launch_order_slide(struct ember_alloc *a, const struct ember_range *was, const struct ember_range *now_r);

#endif
