/*
 * Small tables read densely (tables.h): the room made for them at a launch,
 * the margin above the high watermark they may take, and the wanted ones
 * the worker brings in once room is made. Every function runs with the
 * table locked.
 */
#include <stdlib.h>

#include "candidates.h"
#include "demand.h"
#include "tables.h"

/* Mark a region wanted, or no longer, keeping pc->wanted the count of the marks. */
void ember_tables_set_wanted(struct ember_policy_ctx *pc, struct ember_region *reg, bool wanted)
{
	if (reg->wanted == wanted)
		return;
	reg->wanted = wanted;
	if (wanted)
		pc->wanted++;
	else if (pc->wanted)
		pc->wanted--;
}

void ember_tables_make_room(struct ember_policy_ctx *pc, int dev, uint64_t now, const struct slots *hot, uint64_t room,
			    struct ember_moves *out)
{
	const struct ember_policy_params *p = &pc->params;
	uint64_t need = 0;
	for (size_t h = 0; h < hot->n; h++)
		if (ember_small_and_dense(p, hot->v[h].a, &hot->v[h].a->regions[hot->v[h].r]))
			need += ember_region_bytes(hot->v[h].a, hot->v[h].r);
	if (need <= room)
		return;
	struct ember_device_account *acc = ember_table_account(pc->table, dev);
	struct slots resident = { 0 };
	ember_survey(pc, dev, now, &resident, NULL);
	ember_slots_sort(resident.v, resident.n, ember_victim_order);
	size_t n = 0;
	uint64_t freed = 0;
	for (size_t i = 0; i < resident.n && room + freed < need; i++) {
		struct slot *v = &resident.v[i];
		if (v->protected_ || v->dense) /* ember_survey found them so */
			continue;
		freed += ember_region_bytes(v->a, v->r);
		resident.v[n++] = *v;
	}
	for (size_t i = 0; i < n; i++)
		ember_pass_note_victim(&pc->note, EMBER_VICTIM_WANTED, resident.v[i].a, resident.v[i].r, NULL, 0);
	ember_slots_sort(resident.v, n, ember_by_address);
	ember_slots_demote_released(acc, resident.v, n, out);
	free(resident.v);
}

/*
 * The room a small table read densely may take: up to the budget itself,
 * past the high watermark. When it is read at a launch and no resident can
 * give way (every one in flight or in its grace), the watermarks' margin
 * holds it at once, and reclamation brings residency back under the high
 * watermark later. On the H200, star's first run at 97/93 waited 2.4 s for
 * the demotion that made its tables' room (ab-28's call 8): that demotion's
 * copy took 26 ms, yet it began only once the queries issued before it had
 * ended, the queries reading their tables mapped all the while.
 */
static uint64_t dense_room(const struct ember_device_account *acc)
{
	return ember_budget_room(acc, acc->budget);
}

/* Reserve a small table's bytes, counting what of them went past the high watermark. */
static void reserve_dense(struct ember_device_account *acc, uint64_t bytes)
{
	uint64_t below = ember_budget_room(acc, acc->high);
	acc->bytes_margin += bytes > below ? bytes - below : 0;
	ember_budget_reserve(acc, bytes);
}

/* Promote the launch's small tables read densely first, into the margin if need be. */
void ember_tables_promote(const struct ember_policy_params *p, struct ember_device_account *acc, const struct slots *hot,
			  struct ember_moves *out)
{
	for (size_t h = 0; h < hot->n; h++) {
		struct ember_alloc *a = hot->v[h].a;
		uint32_t r = hot->v[h].r;
		if (a->regions[r].state != EMBER_REGION_MAPPED || !ember_small_and_dense(p, a, &a->regions[r]))
			continue;
		reserve_dense(acc, ember_promote_range(a, r, r + 1, dense_room(acc), out));
	}
}

size_t ember_policy_promote_wanted(struct ember_policy_ctx *pc, int dev, struct ember_moves *out)
{
	struct ember_device_account *acc = ember_budgeted_account(pc, dev);
	if (!pc->wanted || !acc)
		return 0;
	uint64_t room = dense_room(acc);
	size_t first_promotion = out->n, left = 0;
	uint32_t seen = 0;
	for (unsigned i = 0; i < ember_table_count(pc->table); i++) {
		struct ember_alloc *a = ember_table_at(pc->table, i);
		if (a->device != dev || a->kind == EMBER_ALLOC_PLAIN)
			continue;
		for (uint32_t r = 0; r < a->nregions; r++) {
			struct ember_region *reg = &a->regions[r];
			if (!reg->wanted)
				continue;
			seen++;
			if (reg->state != EMBER_REGION_MAPPED || a->freed)
				continue;
			uint64_t bytes = ember_region_bytes(a, r);
			if (reg->hinted || bytes > room || !ember_moves_push(out, a, r, 1, true)) {
				left++;
				continue;
			}
			room -= bytes;
			reserve_dense(acc, bytes);
			acc->bytes_wanted += bytes;
		}
	}
	pc->wanted = seen; /* a freed allocation's marks leave the count with it */
	ember_merge_promotions(out, first_promotion);
	return left;
}

void ember_policy_wanted_wait(struct ember_policy_ctx *pc, int dev, uint64_t now, struct ember_wanted_wait *w)
{
	const struct ember_policy_params *p = &pc->params;
	struct ember_device_account *acc = ember_budgeted_account(pc, dev);
	*w = (struct ember_wanted_wait){ 0 };
	if (!acc)
		return;
	uint32_t epoch = ember_demand_epoch(p, now);
	for (unsigned i = 0; i < ember_table_count(pc->table); i++) {
		const struct ember_alloc *a = ember_table_at(pc->table, i);
		if (a->device != dev || a->kind == EMBER_ALLOC_PLAIN)
			continue;
		for (uint32_t r = 0; r < a->nregions; r++)
			if (a->regions[r].wanted && a->regions[r].state == EMBER_REGION_MAPPED) {
				w->wanted++;
				if (a->regions[r].ref_demand > w->wanted_demand)
					w->wanted_demand = a->regions[r].ref_demand;
			}
	}
	for (unsigned i = 0; i < ember_table_count(pc->table); i++) {
		const struct ember_alloc *a = ember_table_at(pc->table, i);
		if (a->device != dev || a->kind == EMBER_ALLOC_PLAIN)
			continue;
		for (uint32_t r = 0; r < a->nregions; r++) {
			const struct ember_region *reg = &a->regions[r];
			if (reg->hinted)
				continue;
			if (reg->state == EMBER_REGION_DEMOTING && !reg->released)
				w->leaving += ember_region_bytes(a, r);
			if (reg->state != EMBER_REGION_RESIDENT)
				continue;
			w->resident++;
			uint64_t grace = p->protection ? ember_policy_grace_left(reg, now) : 0;
			if (grace) {
				w->in_grace++;
				w->grace_left_ns = grace > w->grace_left_ns ? grace : w->grace_left_ns;
			} else if (reg->departed) {
				continue;
			} else if ((double)w->wanted_demand < p->heat_ratio * (double)ember_demand_at(p, reg, epoch)) {
				w->warm++;
			} else if (ember_small_and_dense(p, a, reg)) {
				w->dense++;
			}
		}
	}
	w->room = dense_room(acc);
}
