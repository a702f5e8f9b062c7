/* The access monitor's launch-scan source, and the one way demand enters the policy. */
#include "adaptive.h"
#include "monitor.h"
#include "policy.h"

uint64_t ember_monitor_extent(const struct ember_scan *s, unsigned i)
{
	const struct ember_alloc *a = s->ptrs[i].alloc;
	uint64_t addr = s->ptrs[i].addr, limit = a->base + a->size - addr;
	for (unsigned j = 0; j < s->nptrs; j++)
		if (s->ptrs[j].alloc == a && s->ptrs[j].addr > addr && s->ptrs[j].addr - addr < limit)
			limit = s->ptrs[j].addr - addr;
	/* 1: a base pointer with a count that spans the whole allocation, at any element size */
	static const unsigned sizes[] = { 16, 8, 4, 2, 1 };
	if (addr == a->base && limit == a->size)
		for (unsigned k = 0; k < s->nscalars; k++)
			for (unsigned e = 0; e < sizeof sizes / sizeof sizes[0]; e++)
				if (s->scalars[k] * sizes[e] == limit)
					return limit;
	/* 2: else 4-byte elements (float, int), the commonest, for the largest count that fits */
	uint64_t best = 0;
	for (unsigned k = 0; k < s->nscalars; k++)
		if (s->scalars[k] * 4 <= limit && s->scalars[k] * 4 > best)
			best = s->scalars[k] * 4;
	if (best)
		return best;
	/* 3: else the largest count that fits at any element size */
	for (unsigned k = 0; k < s->nscalars; k++)
		for (unsigned e = 0; e < sizeof sizes / sizeof sizes[0]; e++) {
			uint64_t len = s->scalars[k] * sizes[e];
			if (len <= limit && len > best)
				best = len;
		}
	return best ? best : limit;
}

void ember_monitor_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now)
{
	if (a->kind == EMBER_ALLOC_PLAIN || a->nregions == 0 || addr < a->base || addr >= a->base + a->size)
		return;
	uint64_t end = addr + (bytes ? bytes : 1);
	if (end > a->base + a->size)
		end = a->base + a->size;
	uint32_t r0 = (uint32_t)((addr - a->base) >> EMBER_REGION_SHIFT);
	uint32_t r1 = (uint32_t)(((end - 1 - a->base) >> EMBER_REGION_SHIFT) + 1);
	ember_policy_demand(ember_adaptive_params(), a, r0, r1, amount, now);
}

void ember_monitor_launch(const struct ember_scan *s, uint64_t now)
{
	for (unsigned i = 0; i < s->nptrs; i++)
		ember_monitor_demand(s->ptrs[i].alloc, s->ptrs[i].addr, ember_monitor_extent(s, i), EMBER_LAUNCH_DEMAND,
				     now);
}
