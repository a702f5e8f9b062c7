/* The access monitor's launch-scan source, and the one way demand enters the policy. */
#include "adaptive.h"
#include "monitor.h"
#include "policy.h"

uint64_t ember_monitor_extent(const struct ember_scan *s, unsigned i, unsigned *learned)
{
	*learned = 0;
	const struct ember_alloc *a = s->ptrs[i].alloc;
	uint64_t addr = s->ptrs[i].addr, limit = a->base + a->size - addr;
	for (unsigned j = 0; j < s->nptrs; j++)
		if (s->ptrs[j].alloc == a && s->ptrs[j].addr > addr && s->ptrs[j].addr - addr < limit)
			limit = s->ptrs[j].addr - addr;
	/* 1: a base pointer with a count that spans the whole allocation, at any element size */
	static const unsigned sizes[] = { 16, 8, 4, 2, 1 };
	unsigned param = s->ptrs[i].param;
	if (addr == a->base && limit == a->size)
		for (unsigned k = 0; k < s->nscalars; k++)
			for (unsigned e = 0; e < sizeof sizes / sizeof sizes[0]; e++)
				if (s->scalars[k] * sizes[e] == limit) {
					*learned = sizes[e];
					return limit;
				}
	/* 2: the element size an earlier launch of this kernel showed, else 4 bytes (float, int) */
	unsigned elem = param < EMBER_SCAN_LEARNED && s->elem_size[param] ? s->elem_size[param] : 4;
	uint64_t best = 0;
	for (unsigned k = 0; k < s->nscalars; k++)
		if (s->scalars[k] * elem <= limit && s->scalars[k] * elem > best)
			best = s->scalars[k] * elem;
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

void ember_monitor_launch(struct ember_scan *s, uint64_t now)
{
	for (unsigned i = 0; i < s->nptrs; i++) {
		unsigned learned;
		uint64_t extent = ember_monitor_extent(s, i, &learned);
		ember_monitor_demand(s->ptrs[i].alloc, s->ptrs[i].addr, extent, EMBER_LAUNCH_DEMAND, now);
		unsigned param = s->ptrs[i].param;
		if (learned && param < EMBER_SCAN_LEARNED && s->elem_size[param] != learned) {
			s->elem_size[param] = (uint8_t)learned;
			s->newly_learned |= 1u << param; /* kept by ember_monitor_learn */
		}
	}
}

void ember_monitor_learn(const struct ember_scan *s)
{
	for (unsigned param = 0; s->newly_learned >> param; param++)
		if (s->newly_learned & (1u << param))
			ember_scan_learn(s->f, param, s->elem_size[param]);
}
