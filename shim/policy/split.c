/* The static split and hinted moves. */
#include "split.h"

/* One 2 GiB prefetch runs at 48.7 GB/s against 44-47 for 64 MiB calls (DESIGN.md). */
enum { BULK_REGIONS = (2u << 30) >> EMBER_REGION_SHIFT };

static bool movable(const struct ember_region *r, enum ember_region_state want)
{
	return r->state == want && !r->hinted;
}

uint64_t ember_split_promote(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1, bool bulk,
			     struct ember_moves *out)
{
	struct ember_device_account *acc = ember_table_account(pc->table, a->device);
	if (!acc)
		return 0;
	uint32_t span = ember_span_regions(&pc->params);
	uint32_t per_move = bulk && BULK_REGIONS > span ? BULK_REGIONS : span;
	/*
	 * Converted allocations are made before the program's later small ones
	 * (activations, workspaces): they stop at the low watermark and leave
	 * the gap for those.
	 */
	uint64_t ceiling = a->kind == EMBER_ALLOC_CONVERTED && a->size > ((uint64_t)span << EMBER_REGION_SHIFT)
				   ? acc->low
				   : acc->high;
	uint64_t room = ember_budget_room(acc, ceiling), reserved = 0;
	for (uint32_t r = r0; r < r1 && !a->freed;) {
		if (!movable(&a->regions[r], EMBER_REGION_MAPPED)) {
			r++;
			continue;
		}
		uint32_t first = r, count = 0;
		uint64_t bytes = 0;
		while (r < r1 && count < per_move && movable(&a->regions[r], EMBER_REGION_MAPPED) &&
		       bytes + ember_region_bytes(a, r) <= room) {
			bytes += ember_region_bytes(a, r);
			count++;
			r++;
		}
		if (count == 0 || !ember_moves_push(out, a, first, count, true))
			break; /* the budget is full (or memory is short): stop here */
		ember_budget_reserve(acc, bytes);
		room -= bytes;
		reserved += bytes;
	}
	return reserved;
}

uint64_t ember_split_demote(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1,
			    struct ember_moves *out)
{
	uint32_t span = ember_span_regions(&pc->params);
	uint64_t bytes = 0;
	for (uint32_t r = r0; r < r1 && !a->freed;) {
		if (!movable(&a->regions[r], EMBER_REGION_RESIDENT)) {
			r++;
			continue;
		}
		uint32_t first = r, count = 0;
		uint64_t run = 0;
		while (r < r1 && count < span && movable(&a->regions[r], EMBER_REGION_RESIDENT)) {
			run += ember_region_bytes(a, r);
			count++;
			r++;
		}
		if (!ember_moves_push(out, a, first, count, false))
			break;
		bytes += run;
	}
	return bytes;
}

void ember_split_order(struct ember_alloc **v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) { /* insertion: a launch references a few allocations */
		struct ember_alloc *a = v[i];
		unsigned j = i;
		for (; j > 0 && v[j - 1]->size > a->size; j--)
			v[j] = v[j - 1];
		v[j] = a;
	}
}
