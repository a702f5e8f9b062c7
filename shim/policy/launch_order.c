/* Launch order: a sliding range departs what it left behind. See launch_order.h. */
#include "launch_order.h"
#include "policy.h"

void ember_launch_order_slide(struct ember_alloc *a, const struct ember_range *was, const struct ember_range *now_r)
{
	if (was->alloc_id != a->id || now_r->alloc_id != a->id || was->end <= was->start || now_r->end <= now_r->start)
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
