/*
 * The exchange at the end of an episode (policy.h): at a host phase, the
 * regions the episode read least give way to mapped regions it read at
 * least heat_ratio times as much. The table is locked by the caller.
 */
#include <stdlib.h>

#include "candidates.h"
#include "demand.h"
#include "policy.h"

/* What the episode brought region r of a: its summed demand, or 0 when another episode last named it. */
static uint32_t episode_demand(const struct ember_alloc *a, uint32_t r, uint32_t episode)
{
	const struct ember_region *reg = &a->regions[r];
	return reg->episode == episode ? reg->episode_demand : 0;
}

/* Read least first; among equals, the victim order (unprotected, lowest score, oldest residency). */
static int least_read_first(const void *x, const void *y)
{
	const struct slot *a = x, *b = y;
	if (a->demand != b->demand)
		return a->demand < b->demand ? -1 : 1;
	return ember_victim_order(x, y);
}

/* Resident regions that may give way, and mapped ones the episode read, each with its episode demand. */
static void collect(struct ember_policy_ctx *pc, int dev, uint32_t episode, uint64_t now, struct slots *resident,
		    struct slots *mapped)
{
	const struct ember_policy_params *p = &pc->params;
	for (unsigned i = 0; i < ember_table_count(pc->table); i++) {
		struct ember_alloc *a = ember_table_at(pc->table, i);
		if (a->device != dev || a->kind == EMBER_ALLOC_PLAIN || a->freed)
			continue;
		ember_policy_settle(pc, a); /* repeats still counted are the episode's too */
		for (uint32_t r = 0; r < a->nregions; r++) {
			const struct ember_region *reg = &a->regions[r];
			if (reg->hinted || (!p->pieces && reg->episode == episode && reg->episode_partial))
				continue;
			uint32_t demand = episode_demand(a, r, episode);
			if (reg->state == EMBER_REGION_RESIDENT) {
				if ((p->protection && ember_policy_grace_left(reg, now) > 0) ||
				    ember_small_and_dense(p, a, reg))
					continue;
				ember_slots_push(resident, (struct slot){ .a = a, .r = r, .demand = demand,
									  .score = ember_demand_score(p, reg, now),
									  .arrived = reg->arrived_at });
			} else if (reg->state == EMBER_REGION_MAPPED && demand) {
				ember_slots_push(mapped, (struct slot){ .a = a, .r = r, .demand = demand });
			}
		}
	}
}

void ember_policy_episode_end(struct ember_policy_ctx *pc, int dev, uint32_t episode, uint64_t now, bool fill_room,
			      struct ember_moves *out)
{
	const struct ember_policy_params *p = &pc->params;
	struct ember_device_account *acc = ember_budgeted_account(pc, dev);
	if (!acc || !p->exchange_regions)
		return;
	struct slots resident = { 0 }, mapped = { 0 }, bring = { 0 };
	collect(pc, dev, episode, now, &resident, &mapped);
	ember_slots_sort(mapped.v, mapped.n, ember_hottest_first);
	ember_slots_sort(resident.v, resident.n, least_read_first);
	/* the room under the high watermark first (on the first try), then the residents read least, while the hot beat them */
	uint64_t used = acc->resident + acc->other, room = fill_room && acc->high > used ? acc->high - used : 0;
	size_t nvictims = 0;
	for (size_t h = 0; h < mapped.n; h++) {
		uint64_t need = ember_region_bytes(mapped.v[h].a, mapped.v[h].r);
		while (room < need && nvictims < resident.n &&
		       (double)mapped.v[h].demand >= p->heat_ratio * (double)resident.v[nvictims].demand) {
			resident.v[nvictims].why = EMBER_VICTIM_EPISODE;
			ember_pass_note_victim(&pc->note, EMBER_VICTIM_EPISODE, resident.v[nvictims].a,
					       resident.v[nvictims].r, mapped.v[h].a, mapped.v[h].r);
			room += ember_region_bytes(resident.v[nvictims].a, resident.v[nvictims].r);
			nvictims++;
		}
		if (room < need)
			break; /* the hottest left beats no resident left: neither do those after it */
		room -= need;
		ember_slots_push(&bring, mapped.v[h]);
	}
	/* the room too, on the first try: the GPU is idle now, where the next run's launches would wait for these */
	size_t first_move = out->n;
	ember_slots_exchange(acc, resident.v, nvictims, &bring, out);
	for (size_t m = first_move; m < out->n; m++)
		if (out->v[m].promote)
			acc->bytes_phase_exchanged += ember_move_bytes(&out->v[m]);
	free(bring.v);
	free(resident.v);
	free(mapped.v);
}
