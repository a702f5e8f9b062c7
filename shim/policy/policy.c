/* The adaptive placement policy. See policy.h; every function runs with the table locked. */
#include <stdlib.h>

#include "candidates.h"
#include "demand.h"
#include "grow.h"
#include "policy.h"
#include "tables.h"

/* Its last touch was a burst (references less than an interval apart), not steady use. */
static bool touched_in_bursts(const struct ember_policy_params *p, const struct ember_region *r)
{
	return r->last_ref && r->last_ref - r->touch_start < p->interval_ns;
}

/*
 * The two last touches are of one cycle: they began less than the shorter
 * reuse gap apart, so the region read more often has not begun another
 * cycle since the other's touch, and their demands count the same
 * launches. Touches of different cycles do not: on the H200, bfs at 1.5x
 * took a burst of three short levels' launches that read an edge region
 * (768, begun some 320 ms before the pass, a 600 ms gap) for more a cycle
 * than one long level's launch that read a vertex-array region (256, 41 ms
 * before, a 245 ms gap), and exchanged 128 MiB of each array back and
 * forth between its runs (ab-33's call 1: 1.0-2.0 GiB demoted a process,
 * the returns by the same rule).
 */
static bool touches_of_one_cycle(const struct ember_region *cold, const struct ember_region *hot)
{
	uint64_t apart = hot->touch_start > cold->touch_start ? hot->touch_start - cold->touch_start :
								 cold->touch_start - hot->touch_start;
	return apart < (hot->gap < cold->gap ? hot->gap : cold->gap);
}

/*
 * Both read in cycles, the hot region is read heat_ratio times as much a
 * cycle as the cold one (the demand of its touch over its reuse gap): a
 * query flight issued in one burst references the column every query reads
 * eight times and a column of one query twice, at the same reuse gap, so the
 * order of references cannot rank them. On the H200, star at 1.5x kept the
 * columns that filled the budget first (read twice a flight) and left
 * columns read four and six times mapped: 0.51 s a warm flight against a
 * bound of 0.35. The swap is stable: the loser reads less a cycle, so it
 * never beats the winner back. The hot region must be referenced
 * heat_ratio times as often as well: the density credit alone (an output a
 * quarter of its input's size earns four times a region) does not say it is
 * read more. Under EMBER_PIECES on an H100, cnn's pooled activations, each
 * written and read once a run, were exchanged for a pool's smaller output
 * credited twice as much, and ran 5% slower (ab-44's call 4); radix's
 * buffers, read by four launches a run against its input's one, and star's
 * columns are exchanged as before (their replays). Only whole cycles are
 * ranked: both reuse gaps known, the cold region's touch over, neither
 * covered in part by a launch (a region two packed tensors share is
 * referenced twice a token, yet read once), unless EMBER_PIECES credited
 * such a region only the parts the launches cover.
 */
/* Whether hot's count over its reuse gap is at least heat_ratio times cold's over its own. */
static bool heat_ratio_a_cycle(const struct ember_policy_params *p, const struct ember_region *cold,
			       const struct ember_region *hot, uint32_t cold_count, uint32_t hot_count)
{
	return (double)hot_count * (double)cold->gap >= p->heat_ratio * (double)cold_count * (double)hot->gap;
}

static bool read_more_per_cycle(const struct ember_policy_params *p, const struct ember_region *cold,
				const struct ember_region *hot, uint64_t now)
{
	if (!touched_in_bursts(p, cold) || !touched_in_bursts(p, hot))
		return false;
	if (!p->pieces && (cold->touch_partial || hot->touch_partial))
		return false; /* each launch credited it whole: its demand is not what it reads a cycle */
	if (p->pieces && (double)(hot->gap > cold->gap ? hot->gap : cold->gap) >
					p->heat_ratio * (double)(hot->gap < cold->gap ? hot->gap : cold->gap))
		return false; /* cycles of different lengths: recency ranks them (replaceable's older) */
	if (now < cold->last_ref + p->interval_ns)
		return false; /* the cold region's touch may not have ended: what it reads a cycle is not known yet */
	if (hot->gap == UINT64_MAX || cold->gap == UINT64_MAX)
		return false;
	if (!touches_of_one_cycle(cold, hot))
		return false;
	if (!heat_ratio_a_cycle(p, cold, hot, cold->touch_refs, hot->touch_refs))
		return false; /* not referenced more often: only the scan's density credit sets them apart */
	return heat_ratio_a_cycle(p, cold, hot, cold->touch_demand, hot->touch_demand);
}

/*
 * Whether the cold resident region may give way to the hot mapped one, and
 * how. Colder in time means last referenced heat_ratio reuse gaps of the
 * hot region before the hot region's own last reference: the order of
 * references, not the silence until now, so that data read in a cycle
 * (every weight once per token) is never swapped within it, nor once the
 * program stops launching and every region's silence grows alike. Read
 * less a cycle is read_more_per_cycle's. Where it goes, *why says for
 * what (the debug log's note, pass_note.h).
 */
enum replacement {
	KEEP,     /* it stays */
	REPLACE,  /* it goes; the hot region comes with the next launch that names it */
	EXCHANGE, /* it goes and the hot region comes in its place at once (read_more_per_cycle) */
};

static enum replacement replaceable(const struct ember_policy_params *p, const struct slot *cold,
				    const struct slot *hot, uint64_t now, enum ember_victim_reason *why)
{
	if (cold->protected_)
		return KEEP;
	if (cold->departed) {
		*why = EMBER_VICTIM_DEPARTED;
		return REPLACE;
	}
	if ((double)hot->demand < p->heat_ratio * (double)cold->demand)
		return KEEP;
	/* a wanted table: no reuse gap to rank it by, its density instead (ember_small_and_dense) */
	if (hot->a->regions[hot->r].wanted) {
		*why = EMBER_VICTIM_WANTED;
		return ember_small_and_dense(p, cold->a, &cold->a->regions[cold->r]) ? KEEP : REPLACE;
	}
	if (hot->gap != UINT64_MAX && hot->last_ref > cold->last_ref &&
	    (double)(hot->last_ref - cold->last_ref) > p->heat_ratio * (double)hot->gap) {
		*why = EMBER_VICTIM_OLDER;
		return REPLACE;
	}
	*why = EMBER_VICTIM_EXCHANGE;
	return read_more_per_cycle(p, &cold->a->regions[cold->r], &hot->a->regions[hot->r], now) ? EXCHANGE : KEEP;
}

/*
 * Whether the replacement in ember_policy_reclaim would choose no victim
 * when no reclamation is due, found without sorting: the hot regions are
 * taken hottest first while the room holds them (by selection, at most
 * SELECTED_MAX of them), and the first it cannot hold beats no resident.
 * Undecided (false) past that many. It may reorder hot, which is sorted
 * afterwards by a total order. Over the budget, the two sorts were three
 * quarters of adaptive's time replaying hf-llama's trace, most passes
 * choosing nothing.
 */
enum { SELECTED_MAX = 8 };

static bool replacement_finds_nothing(const struct ember_policy_params *p, const struct slots *resident,
				      struct slots *hot, uint64_t room, uint64_t now)
{
	for (size_t k = 0; k < SELECTED_MAX; k++) {
		if (k == hot->n)
			return true; /* every hot region fits */
		size_t best = k;
		for (size_t i = k + 1; i < hot->n; i++)
			if (ember_hottest_first(&hot->v[i], &hot->v[best]) < 0)
				best = i;
		struct slot h = hot->v[best];
		hot->v[best] = hot->v[k];
		hot->v[k] = h;
		uint64_t need = ember_region_bytes(h.a, h.r);
		if (room >= need) {
			room -= need;
			continue;
		}
		enum ember_victim_reason why;
		for (size_t i = 0; i < resident->n; i++)
			if (replaceable(p, &resident->v[i], &h, now, &why) != KEEP)
				return false;
		return true;
	}
	return false;
}

/* Why each victim [0, n) gave way, for the debug log (pass_note.h). */
static void note_victims(struct ember_policy_ctx *pc, const struct slot *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ember_pass_note_victim(&pc->note, v[i].why, v[i].a, v[i].r, v[i].for_a, v[i].for_r);
}

void ember_policy_reclaim(struct ember_policy_ctx *pc, int dev, uint64_t now, struct ember_moves *out)
{
	const struct ember_policy_params *p = &pc->params;
	struct ember_device_account *acc = ember_budgeted_account(pc, dev);
	if (!acc)
		return;
	if (acc->resident + acc->other <= acc->high && ember_nothing_mapped(pc, dev)) {
		/*
		 * Nothing past the high watermark to reclaim, and no mapped region
		 * to make room for: no victim can be chosen. The check after the
		 * survey would find that too, but a model that fits is this case
		 * at every pass, and the survey's collection of every resident
		 * region is not needed, only its upkeep: replaying hf-llama's
		 * trace with everything resident, adaptive took 0.13-0.15 s of
		 * CPU with the survey and 0.08 without (static 0.07), under the
		 * table lock that launches take.
		 */
		ember_upkeep(pc, dev, now);
		return;
	}
	struct slots resident = { 0 }, hot = { 0 };
	uint64_t leaving = ember_survey(pc, dev, now, &resident, &hot);
	uint64_t used = acc->resident + acc->other;
	uint64_t staying = used > leaving ? used - leaving : 0;
	if (staying <= acc->high && replacement_finds_nothing(p, &resident, &hot, acc->high - staying, now)) {
		free(resident.v);
		free(hot.v);
		return;
	}
	ember_slots_sort(resident.v, resident.n, ember_victim_order);
	ember_slots_sort(hot.v, hot.n, ember_hottest_first);

	/* Reclamation: above the high watermark, evict down to the low one, a batch at a time. */
	size_t nvictims = 0;
	if (staying > acc->high) {
		uint64_t goal = staying - acc->low, freed = 0;
		while (nvictims < resident.n && nvictims < p->batch_regions && freed < goal) {
			freed += ember_region_bytes(resident.v[nvictims].a, resident.v[nvictims].r);
			resident.v[nvictims++].why = EMBER_VICTIM_WATERMARK;
		}
		staying -= freed;
	}

	/*
	 * Replacement: when the hottest mapped regions will not fit even after
	 * the demotions under way, evict the coldest unprotected residents
	 * that they beat (see replaceable). A stale resident has demand 0.
	 */
	uint64_t room_later = acc->high > staying ? acc->high - staying : 0;
	size_t next = nvictims; /* candidates are taken in victim order, skipping those that stay */
	/*
	 * A pass gives up a batch at most, of which exchange_regions may be
	 * exchanges, or that many when it is more: an exchange brings its
	 * region in at once, so it never evicts more than it is for (on the
	 * H200 star's 5.8 GiB took 1.3 s of a flight in batches of 16).
	 */
	size_t most = p->batch_regions > p->exchange_regions ? p->batch_regions : p->exchange_regions;
	size_t nreplaced = nvictims, nexchanged = 0;
	struct slots bring = { 0 }; /* hot regions exchanged for residents */
	for (size_t h = 0; h < hot.n; h++) {
		uint64_t need = ember_region_bytes(hot.v[h].a, hot.v[h].r);
		bool exchanged = false;
		for (; room_later < need && nvictims < most && next < resident.n; next++) {
			enum ember_victim_reason why;
			enum replacement how = replaceable(p, &resident.v[next], &hot.v[h], now, &why);
			if (how == KEEP || (how == REPLACE && nreplaced >= p->batch_regions) ||
			    (how == EXCHANGE && nexchanged >= p->exchange_regions))
				continue;
			*(how == EXCHANGE ? &nexchanged : &nreplaced) += 1;
			struct slot chosen = resident.v[next];
			chosen.why = why;
			chosen.for_a = hot.v[h].a;
			chosen.for_r = hot.v[h].r;
			exchanged |= how == EXCHANGE;
			resident.v[next] = resident.v[nvictims];
			resident.v[nvictims++] = chosen;
			room_later += ember_region_bytes(chosen.a, chosen.r);
		}
		if (room_later < need)
			break;
		room_later -= need;
		if (exchanged)
			ember_slots_push(&bring, hot.v[h]);
	}
	note_victims(pc, resident.v, nvictims);
	size_t replaced = 0; /* victims [0, replaced) are replaced, the rest exchanged */
	for (size_t i = 0; i < nvictims; i++)
		if (resident.v[i].why != EMBER_VICTIM_EXCHANGE) {
			struct slot v = resident.v[i];
			resident.v[i] = resident.v[replaced];
			resident.v[replaced++] = v;
		}
	ember_slots_sort(resident.v, replaced, ember_by_address);
	ember_slots_demote(resident.v, replaced, out);
	ember_slots_exchange(acc, resident.v + replaced, nvictims - replaced, &bring, out);
	free(bring.v);
	free(resident.v);
	free(hot.v);
}

/*
 * Launch order, at a launch: the departed residents of the launch's own
 * allocations make room for its hot regions at once. Their demotions go
 * first in out, and their bytes leave the account now (released), so the
 * promotions queued behind them on the same stream can use the room: the
 * GPU never holds both.
 */
static void swap_out_departed(struct ember_policy_ctx *pc, int dev, uint64_t now, struct ember_alloc *const *only,
			      size_t nonly, uint64_t need, struct ember_moves *out)
{
	const struct ember_policy_params *p = &pc->params;
	struct ember_device_account *acc = ember_table_account(pc->table, dev);
	struct slots gone = { 0 };
	uint64_t freed = 0;
	for (size_t i = 0; i < nonly && freed < need; i++) {
		struct ember_alloc *a = only[i];
		if (a->device != dev || a->kind == EMBER_ALLOC_PLAIN || a->freed || !a->any_departed)
			continue;
		bool seen = false; /* a departed region, resident or not: the flag stays */
		uint32_t r = 0;
		for (; r < a->nregions && freed < need; r++) {
			struct ember_region *reg = &a->regions[r];
			seen |= reg->departed;
			if (reg->state != EMBER_REGION_RESIDENT || !reg->departed || reg->hinted ||
			    (p->protection && ember_policy_grace_left(reg, now) > 0))
				continue;
			ember_slots_push(&gone, (struct slot){ .a = a, .r = r });
			freed += ember_region_bytes(a, r);
		}
		if (r == a->nregions && !seen)
			a->any_departed = false; /* walked it all and found none: later launches skip it */
	}
	for (size_t i = 0; i < gone.n; i++)
		ember_pass_note_victim(&pc->note, EMBER_VICTIM_LAUNCH, gone.v[i].a, gone.v[i].r, NULL, 0);
	ember_slots_demote_released(acc, gone.v, gone.n, out);
	free(gone.v);
}

bool ember_policy_nothing_to_decide(struct ember_policy_ctx *pc, int dev, struct ember_alloc *const *allocs,
				    size_t n)
{
	const struct ember_device_account *acc = ember_budgeted_account(pc, dev);
	if (!acc || !ember_budget_room(acc, acc->low))
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct ember_alloc *a = allocs[i];
		if (a->device != dev || a->in_flight || !ember_alloc_none_mapped(a))
			return false;
	}
	return true;
}

void ember_policy_named_idle(struct ember_alloc *const *allocs, size_t n, uint64_t now)
{
	for (size_t i = 0; i < n; i++)
		allocs[i]->idle_ref = now;
}

static void sort_once(struct slots *hot, bool *sorted)
{
	if (!*sorted)
		ember_slots_sort(hot->v, hot->n, ember_hottest_first);
	*sorted = true;
}

static bool any_small_and_dense(const struct ember_policy_params *p, const struct slots *hot)
{
	for (size_t h = 0; h < hot->n; h++)
		if (ember_small_and_dense(p, hot->v[h].a, &hot->v[h].a->regions[hot->v[h].r]))
			return true;
	return false;
}

/*
 * Whether room holds any region a hot region's span could promote: a
 * whole region, or the shorter last region of a hot region's allocation,
 * mapped (a span reaches no further than its own allocation).
 */
static bool fits_any(const struct slots *hot, uint64_t room)
{
	if (room >= EMBER_REGION_BYTES)
		return true;
	for (size_t h = 0; h < hot->n; h++) {
		const struct ember_alloc *a = hot->v[h].a;
		uint32_t last = a->nregions - 1;
		const struct ember_region *reg = &a->regions[last];
		if (ember_region_bytes(a, last) <= room && reg->state == EMBER_REGION_MAPPED && !reg->hinted)
			return true;
	}
	return false;
}

size_t ember_policy_promote(struct ember_policy_ctx *pc, int dev, uint64_t now, struct ember_alloc *const *only,
			    size_t nonly, struct ember_moves *out)
{
	const struct ember_policy_params *p = &pc->params;
	struct ember_device_account *acc = ember_budgeted_account(pc, dev);
	if (!acc)
		return 0;
	struct slots hot = { 0 };
	uint32_t epoch = ember_demand_epoch(p, now);
	/* a launch's own allocations only, when given: the cost follows the launch, not the table */
	unsigned n = nonly ? (unsigned)nonly : ember_table_count(pc->table);
	for (unsigned i = 0; i < n; i++) {
		struct ember_alloc *a = nonly ? only[i] : ember_table_at(pc->table, i);
		if (a->device != dev || a->kind == EMBER_ALLOC_PLAIN || a->freed)
			continue;
		ember_policy_settle(pc, a);
		/* at a launch, what it referenced; in the worker's pass, everything */
		uint32_t r0 = nonly ? a->fresh_r0 : 0, r1 = nonly ? a->fresh_r1 : a->nregions;
		if (nonly)
			a->fresh_r0 = a->fresh_r1 = 0;
		for (uint32_t r = r0; r < r1 && r < a->nregions; r++) {
			struct ember_region *reg = &a->regions[r];
			if (reg->state != EMBER_REGION_MAPPED || reg->hinted)
				continue;
			ember_demand_catch_up(reg, epoch);
			if (ember_demand_hot(p, reg, now))
				ember_slots_push(&hot, ember_slot_hot(p, a, r));
		}
	}
	/*
	 * Hottest first, sorted only where the order can matter: over the
	 * budget, hot regions without room are the rule, and sorting them for
	 * nothing at every launch was most of a graph replay's time
	 * (ember-callbench --graph). The decisions are the same either way.
	 */
	bool sorted = false;
	uint64_t room = ember_budget_room(acc, acc->high);
	size_t first_promotion = out->n;
	if (nonly) {
		uint64_t want = 0;
		for (size_t h = 0; h < hot.n; h++)
			want += ember_region_bytes(hot.v[h].a, hot.v[h].r);
		if (want > room) {
			swap_out_departed(pc, dev, now, only, nonly, want - room, out);
			room = ember_budget_room(acc, acc->high);
			if (any_small_and_dense(p, &hot)) { /* otherwise both below find nothing to do */
				sort_once(&hot, &sorted);
				ember_tables_make_room(pc, dev, now, &hot, room, out);
				ember_tables_promote(p, acc, &hot, out);
			}
			room = ember_budget_room(acc, acc->high);
		}
	}
	/* a room that holds no region it could be given promotes nothing, in any order */
	bool promoting = room > 0 && (sorted || fits_any(&hot, room));
	if (promoting)
		sort_once(&hot, &sorted);
	for (size_t h = 0; promoting && h < hot.n && room > 0; h++) {
		struct ember_alloc *a = hot.v[h].a;
		if (a->regions[hot.v[h].r].state != EMBER_REGION_MAPPED)
			continue; /* taken by an earlier span */
		uint64_t moved = ember_promote_span(p, a, hot.v[h].r, room, out);
		room -= moved;
		ember_budget_reserve(acc, moved);
	}
	ember_merge_promotions(out, first_promotion);
	/*
	 * A small table read densely that found no room (every resident in
	 * flight or in its grace: star's queries are issued in one burst, 11 ms
	 * on the H200, before the columns of the first have landed) stays
	 * wanted until it arrives, so that the worker's replacement makes its
	 * room once victims can be had. Its heat alone would not last: it was
	 * referenced once, 50 ms of heat, and the first fill takes longer.
	 */
	for (size_t h = 0; h < hot.n; h++) {
		struct ember_region *reg = &hot.v[h].a->regions[hot.v[h].r];
		if (reg->state == EMBER_REGION_MAPPED && ember_small_and_dense(p, hot.v[h].a, reg))
			ember_tables_set_wanted(pc, reg, true);
	}
	/*
	 * Hot regions left without room are tried again when their range next
	 * changes or its repeats' quarter interval ends, not at every launch:
	 * over the budget that is nearly every launch, and NW's base-pointer
	 * launches credit both 12 GiB arrays whole (on the H200 at 1.5x,
	 * adaptive took 1.36 s against static's 0.38 s, with the same regions
	 * resident).
	 */
	size_t left = 0;
	for (size_t h = 0; h < hot.n; h++)
		left += hot.v[h].a->regions[hot.v[h].r].state == EMBER_REGION_MAPPED;
	free(hot.v);
	return left;
}

void ember_policy_run(struct ember_policy_ctx *pc, int dev, uint64_t now, struct ember_moves *out)
{
	ember_policy_reclaim(pc, dev, now, out);
	ember_policy_promote(pc, dev, now, NULL, 0, out);
}

void ember_policy_moved(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t first, uint32_t count,
			bool promote, bool ok, uint64_t now)
{
	const struct ember_policy_params *p = &pc->params;
	if (!ok) {
		a->repeat.count = 0; /* a failed move is retried by the next launch: it is not a repeat */
		for (uint32_t r = first; r < first + count && r < a->nregions; r++)
			ember_tables_set_wanted(pc, &a->regions[r], false); /* nor by every pass of the worker's, failing each time */
		return;
	}
	for (uint32_t r = first; r < first + count && r < a->nregions; r++) {
		struct ember_region *reg = &a->regions[r];
		if (!promote) {
			reg->evicted_at = now;
			reg->protect_until = 0;
			continue;
		}
		reg->arrived_at = now;
		ember_tables_set_wanted(pc, reg, false);
		if (!p->protection)
			continue;
		/* a quick return means the eviction was a mistake: score it, and protect longer */
		reg->score = ember_demand_score(p, reg, now);
		reg->score_at = now;
		if (reg->evicted_at && now - reg->evicted_at <= p->return_window_ns)
			reg->score += 1.0f;
		uint64_t grace = p->base_grace_ns + (uint64_t)(reg->score * (double)p->score_grace_ns);
		reg->protect_until = now + (grace < p->max_grace_ns ? grace : p->max_grace_ns);
	}
}
