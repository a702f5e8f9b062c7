/* Launch order: a sliding range departs what it left behind. See launch_order.h. */
#include "launch_order.h"
#include "policy.h"

void ember_launch_order_slide(struct ember_alloc *a, const struct ember_range *was, const struct ember_range *now_r)
{
	if (was->alloc_id != a->id || now_r->alloc_id != a->id || was->end <= was->start || now_r->end <= now_r->start ||
	    was->cycles)
		return;
	uint64_t lo = was->start > now_r->start ? was->start : now_r->start;
	uint64_t hi = was->end < now_r->end ? was->end : now_r->end;
	if (hi <= lo || 2 * (hi - lo) < was->end - was->start)
		return;
	const uint64_t R = 1ull << EMBER_REGION_SHIFT;
	/* whole regions of the old range outside the new one: behind it, and past its end */
	uint64_t behind_end = now_r->start < was->end ? now_r->start : was->end;
	if (behind_end > was->start && (behind_end / R) > (was->start + R - 1) / R)
		ember_policy_depart(a, (uint32_t)((was->start + R - 1) / R), (uint32_t)(behind_end / R));
	uint64_t past_start = now_r->end > was->start ? now_r->end : was->start;
	if (was->end > past_start && was->end / R > (past_start + R - 1) / R)
		ember_policy_depart(a, (uint32_t)((past_start + R - 1) / R), (uint32_t)(was->end / R));
}

bool ember_launch_history_find(const struct ember_launch_history *h, uint64_t key, struct ember_range *out)
{
	for (unsigned i = 0; i < EMBER_LAUNCH_STREAMS; i++)
		if (h->on[i].used && h->on[i].key == key) {
			*out = h->on[i].range;
			return true;
		}
	return false;
}

void ember_launch_history_keep(struct ember_launch_history *h, uint64_t key, const struct ember_range *range,
			       uint64_t clock)
{
	unsigned pick = 0;
	for (unsigned i = 0; i < EMBER_LAUNCH_STREAMS; i++) {
		if (h->on[i].used && h->on[i].key == key) {
			pick = i;
			break;
		}
		if (h->on[i].used < h->on[pick].used)
			pick = i; /* the stalest, or an empty one */
	}
	struct ember_range kept = *range;
	const struct ember_range *last = &h->on[pick].range;
	bool same_stream = h->on[pick].used && h->on[pick].key == key;
	kept.cycles = same_stream && last->alloc_id == range->alloc_id &&
		      (last->cycles || (range->start < last->start && range->end <= last->start));
	h->on[pick].key = key;
	h->on[pick].used = clock;
	h->on[pick].range = kept;
}
