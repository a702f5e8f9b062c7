/*
 * Candidates: the regions a pass or a launch could move, collected, ordered
 * and turned into moves (candidates.h). Every function runs with the table
 * locked.
 */
#include <stdlib.h>

#include "candidates.h"
#include "demand.h"
#include "grow.h"

/*
 * A small allocation that a launch reads as densely as density credit
 * counts (EMBER_DENSITY_MAX times the launch's largest extent per region:
 * a lookup table beside the columns it is joined with) takes its room at
 * that launch from the coldest residents, on the launch's stream. Launch
 * times cannot rank it: on the H200, star's queries are issued within
 * 11 ms and run for 5 s, so its dimension tables, first read after the
 * fact columns filled the budget, were never promoted, and each of 714
 * million lookups per query crossed the link. When no resident can give
 * way yet (all in flight or in their grace), it is wanted: the worker's
 * replacement makes its room as soon as one can. What it costs is bounded
 * by the span: an allocation larger than that is never taken so.
 */
bool ember_small_and_dense(const struct ember_policy_params *p, const struct ember_alloc *a,
			   const struct ember_region *reg)
{
	return a->size <= (uint64_t)ember_span_regions(p) * EMBER_REGION_BYTES &&
	       reg->ref_demand >= (uint32_t)EMBER_DENSITY_MAX * EMBER_LAUNCH_DEMAND;
}

/*
 * The paper's victim order: unprotected first, then lowest score, oldest
 * residency, lowest demand; Ember puts small tables read densely after
 * all of them, and regions a sliding range left behind right after
 * protection. Oldest first, star's 9.6 KB of per-group sums, the first
 * allocation every query references and so the oldest resident, went in
 * the first reclamation of its first run on the H200, beside the only
 * column regions out of their grace (ab-30's calls 2 and 3): each query's
 * atomic adds then crossed the link, 11 s against 0.9.
 */
int ember_victim_order(const void *x, const void *y)
{
	const struct slot *a = x, *b = y;
	if (a->dense != b->dense)
		return a->dense ? 1 : -1;
	if (a->protected_ != b->protected_)
		return a->protected_ ? 1 : -1;
	if (a->departed != b->departed)
		return a->departed ? -1 : 1;
	if (a->protected_ && a->protect_until != b->protect_until) /* all protected: first to expire */
		return a->protect_until < b->protect_until ? -1 : 1;
	if (a->score != b->score)
		return a->score < b->score ? -1 : 1;
	if (a->arrived != b->arrived)
		return a->arrived < b->arrived ? -1 : 1;
	return (a->demand > b->demand) - (a->demand < b->demand);
}

/*
 * Hottest first. Among equals, the smaller allocation first: launches that
 * reference several arrays whole credit each alike, yet read a few
 * elements per work item from each, so the small array is used more
 * densely, and often at random. On the H200 at 1.5x of the budget, BFS
 * left its 2.3 GB vertex offsets mapped for the 18 GB edge list (1.52 s
 * against static's 1.08 s), and the star queries their dimension tables.
 * Then in address order, so that spans come out adjacent and merge.
 */
static uint32_t rank_demand(const struct slot *s)
{
	return s->partial ? s->demand / 2 : s->demand;
}

int ember_hottest_first(const void *x, const void *y)
{
	const struct slot *a = x, *b = y;
	uint32_t da = rank_demand(a), db = rank_demand(b);
	if (da != db)
		return (da < db) - (da > db);
	if (a->a != b->a && a->a->size != b->a->size)
		return a->a->size < b->a->size ? -1 : 1;
	if (a->a != b->a)
		return a->a->base < b->a->base ? -1 : 1;
	return (a->r > b->r) - (a->r < b->r);
}

void ember_slots_push(struct slots *s, struct slot x)
{
	if (ember_grow(&s->v, s->n, &s->cap, sizeof *s->v, 256))
		s->v[s->n++] = x;
}

/* qsort, which may not be given a null array even to sort nothing. */
void ember_slots_sort(struct slot *v, size_t n, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, sizeof *v, cmp);
}

/*
 * A hot mapped region r of a, as a candidate. Under partial_rank, one
 * that a launch of its last touch covered only in part ranks at half its
 * demand: two launches that each read part of it (radix sort's chunk
 * edges, two tensors packed in one buffer) each credit it whole, so it
 * looks twice as hot as what it holds of either, and as the hottest hot
 * region it ended every pass of radix at 1.5x (its exchange may not rank
 * it, policy.c). Only the order changes; whether it beats a resident
 * does not.
 */
struct slot ember_slot_hot(const struct ember_policy_params *p, struct ember_alloc *a, uint32_t r)
{
	const struct ember_region *reg = &a->regions[r];
	return (struct slot){ .a = a,
			      .r = r,
			      .demand = reg->ref_demand,
			      .last_ref = reg->last_ref,
			      .gap = reg->gap,
			      /* under EMBER_PIECES its demand is already the parts it was read in */
			      .partial = p->partial_rank && !p->pieces && reg->touch_partial };
}

/* A resident region r of a, as a candidate victim. */
static struct slot resident_slot(const struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r, uint64_t now,
				 uint32_t epoch)
{
	const struct ember_policy_params *p = &pc->params;
	const struct ember_region *reg = &a->regions[r];
	return (struct slot){ .a = a,
			      .r = r,
			      .protected_ = p->protection && ember_policy_grace_left(reg, now) > 0,
			      .departed = reg->departed,
			      .dense = ember_small_and_dense(p, a, reg),
			      .protect_until = reg->protect_until,
			      .score = ember_demand_score(p, reg, now),
			      .arrived = reg->arrived_at,
			      .demand = ember_demand_effective(p, reg, epoch),
			      .last_ref = ember_region_last_named(a, reg) };
}

/* Resident victims and (unless hot is NULL) hot mapped candidates of dev, and the bytes already on their way out. */
uint64_t ember_survey(struct ember_policy_ctx *pc, int dev, uint64_t now, struct slots *resident, struct slots *hot)
{
	const struct ember_policy_params *p = &pc->params;
	uint64_t leaving = 0;
	uint32_t epoch = ember_demand_epoch(p, now);
	for (unsigned i = 0; i < ember_table_count(pc->table); i++) {
		struct ember_alloc *a = ember_table_at(pc->table, i);
		if (a->device != dev || a->kind == EMBER_ALLOC_PLAIN)
			continue;
		ember_policy_settle(pc, a);
		for (uint32_t r = 0; r < a->nregions; r++) {
			struct ember_region *reg = &a->regions[r];
			if (reg->hinted)
				continue;
			ember_demand_catch_up(reg, epoch);
			if (reg->state == EMBER_REGION_DEMOTING && !reg->released) /* released: out of the account already */
				leaving += ember_region_bytes(a, r);
			else if (reg->state == EMBER_REGION_RESIDENT)
				ember_slots_push(resident, resident_slot(pc, a, r, now, epoch));
			else if (hot && reg->state == EMBER_REGION_MAPPED && ember_demand_hot(p, reg, now))
				ember_slots_push(hot, ember_slot_hot(p, a, r));
		}
	}
	return leaving;
}

/* Whether every region of dev's placed allocations is resident or on its way (none mapped). */
bool ember_nothing_mapped(struct ember_policy_ctx *pc, int dev)
{
	for (unsigned i = 0; i < ember_table_count(pc->table); i++) {
		const struct ember_alloc *a = ember_table_at(pc->table, i);
		if (a->device == dev && a->kind != EMBER_ALLOC_PLAIN && !ember_alloc_none_mapped(a))
			return false;
	}
	return true;
}

/* What ember_survey does to the table, without collecting slots: repeats credited, demand decayed. */
void ember_upkeep(struct ember_policy_ctx *pc, int dev, uint64_t now)
{
	uint32_t epoch = ember_demand_epoch(&pc->params, now);
	for (unsigned i = 0; i < ember_table_count(pc->table); i++) {
		struct ember_alloc *a = ember_table_at(pc->table, i);
		if (a->device != dev || a->kind == EMBER_ALLOC_PLAIN)
			continue;
		ember_policy_settle(pc, a);
		for (uint32_t r = 0; r < a->nregions; r++)
			if (!a->regions[r].hinted)
				ember_demand_catch_up(&a->regions[r], epoch);
	}
}

/* Mark the chosen victims demoting, grouping neighbours of one allocation into one move. */
void ember_slots_demote(struct slot *v, size_t n, struct ember_moves *out)
{
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && v[j].a == v[i].a && v[j].r == v[j - 1].r + 1)
			j++;
		if (!ember_moves_push(out, v[i].a, v[i].r, (uint32_t)(j - i), false))
			return;
		i = j;
	}
}

int ember_by_address(const void *x, const void *y)
{
	const struct slot *a = x, *b = y;
	if (a->a != b->a)
		return a->a->base < b->a->base ? -1 : 1;
	return (a->r > b->r) - (a->r < b->r);
}

/* Promote the mapped regions of [from, to) of a that are not the application's, in runs, until the room runs out. */
uint64_t ember_promote_range(struct ember_alloc *a, uint32_t from, uint32_t to, uint64_t room, struct ember_moves *out)
{
	uint64_t used = 0;
	for (uint32_t r = from; r < to;) {
		if (a->regions[r].state != EMBER_REGION_MAPPED || a->regions[r].hinted) {
			r++;
			continue;
		}
		uint32_t run = r;
		uint64_t bytes = 0;
		while (run < to && a->regions[run].state == EMBER_REGION_MAPPED && !a->regions[run].hinted &&
		       used + bytes + ember_region_bytes(a, run) <= room) {
			bytes += ember_region_bytes(a, run);
			run++;
		}
		if (run == r || !ember_moves_push(out, a, r, run - r, true))
			break;
		used += bytes;
		r = run;
	}
	return used;
}

/*
 * Promote the span around region c of a: centred on it, shifted to fit
 * inside the allocation. When the room is short of it, from c itself
 * onwards and then the part before it, until the room runs out: the room may
 * be just what a replacement freed for c, which filled from the span's
 * start went to c's colder neighbours (replaying the H200's llama.cpp trace
 * at 1.5x: 28.2 s, 6.1 GiB demoted; from c, 27.9 s and 4.2 GiB).
 */
uint64_t ember_promote_span(const struct ember_policy_params *p, struct ember_alloc *a, uint32_t c, uint64_t room,
			     struct ember_moves *out)
{
	uint32_t span = ember_span_regions(p);
	uint32_t first = c >= span / 2 ? c - span / 2 : 0;
	if (first + span > a->nregions)
		first = a->nregions > span ? a->nregions - span : 0;
	uint32_t end = first + span < a->nregions ? first + span : a->nregions;
	uint64_t want = 0;
	for (uint32_t r = first; r < end; r++)
		if (a->regions[r].state == EMBER_REGION_MAPPED && !a->regions[r].hinted)
			want += ember_region_bytes(a, r);
	if (want <= room)
		return ember_promote_range(a, first, end, room, out); /* all of it: in address order, as few moves */
	uint64_t used = ember_promote_range(a, c, end, room, out);
	return used + ember_promote_range(a, first, c, room - used, out);
}

/*
 * Promotions of neighbouring spans as one move, up to 2 GiB: the driver
 * moves a few large prefetches faster than many span-sized ones (H200:
 * 49 GB/s against 43 GB/s, tools/bench/results/probe.json).
 */
enum { MERGED_REGIONS_MAX = 1024 };

void ember_merge_promotions(struct ember_moves *m, size_t from)
{
	size_t w = from;
	for (size_t i = from; i < m->n; i++) {
		struct ember_move *last = w > from ? &m->v[w - 1] : NULL;
		struct ember_move *mv = &m->v[i];
		if (last && last->promote && mv->promote && last->alloc == mv->alloc &&
		    last->first + last->count == mv->first && last->count + mv->count <= MERGED_REGIONS_MAX) {
			last->count += mv->count;
			mv->alloc->refs--; /* one move, one reference */
			continue;
		}
		m->v[w++] = *mv;
	}
	m->n = w;
}

/*
 * Demote v now: its bytes leave the account at once (released), so that
 * promotions queued behind the demotions on the same stream can use the
 * room; the GPU never holds both.
 */
void ember_slots_demote_released(struct ember_device_account *acc, struct slot *v, size_t n, struct ember_moves *out)
{
	size_t first_move = out->n;
	ember_slots_demote(v, n, out);
	for (size_t m = first_move; m < out->n; m++)
		for (uint32_t r = out->v[m].first; r < out->v[m].first + out->v[m].count; r++) {
			out->v[m].alloc->regions[r].released = 1;
			ember_budget_release(acc, ember_region_bytes(out->v[m].alloc, r));
		}
}

/*
 * Victims v[n] exchanged for the hot regions in bring (candidates.h): the
 * hot regions come in this pass. Left to the next launch that names them,
 * as replacement leaves its hot regions, the room went to the next query's
 * columns, read less, which the pass then took back (star's flight,
 * replayed).
 */
void ember_slots_exchange(struct ember_device_account *acc, struct slot *v, size_t n, struct slots *bring,
			  struct ember_moves *out)
{
	ember_slots_sort(v, n, ember_by_address);
	ember_slots_demote_released(acc, v, n, out);
	ember_slots_sort(bring->v, bring->n, ember_by_address);
	size_t first_promotion = out->n;
	for (size_t i = 0; i < bring->n; i++) {
		struct ember_alloc *a = bring->v[i].a;
		uint32_t r = bring->v[i].r;
		if (a->regions[r].state != EMBER_REGION_MAPPED || !ember_moves_push(out, a, r, 1, true))
			continue;
		ember_budget_reserve(acc, ember_region_bytes(a, r));
	}
	ember_merge_promotions(out, first_promotion);
}
