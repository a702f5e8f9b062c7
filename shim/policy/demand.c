/*
 * Demand: what launches and hints credit each region (ember_policy_demand
 * and its kin in policy.h), how it decays, and when a region counts as hot.
 * Every function runs with the table locked.
 */
#include <math.h>
#include <stdlib.h>

#include "demand.h"

/*
 * Demand halves once per interval. Each region keeps the interval its
 * demand was last brought up to date in and catches up when it is next
 * read or added to, so decay costs nothing for regions nobody looks at.
 */
uint32_t ember_demand_epoch(const struct ember_policy_params *p, uint64_t now)
{
	return p->interval_ns ? (uint32_t)(now / p->interval_ns) : 0;
}

void ember_demand_catch_up(struct ember_region *reg, uint32_t epoch)
{
	if (epoch <= reg->demand_epoch)
		return;
	uint32_t halvings = epoch - reg->demand_epoch;
	reg->demand = halvings >= 32 ? 0 : reg->demand >> halvings;
	reg->demand_epoch = epoch;
}

/* a + b, held at UINT32_MAX */
static uint32_t add_saturating(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* a * n, held at UINT32_MAX */
static uint32_t times_saturating(uint32_t a, uint32_t n)
{
	uint64_t t = (uint64_t)a * n;
	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/*
 * A region's reuse gap, from the gap it had and the one just seen: it may
 * grow at once, but shrinks by half a touch at most. One token of hf-llama
 * 13b (about 470 ms) reads its last layers' weights twice, 102 ms apart;
 * taken at once, that gap made such a weight look read every 102 ms, and
 * the first layers' weights, read some 400 ms before, gave way to it as
 * older (ab-34's recorded replay). On the H200 at 1.5x under adaptive
 * (ab-35's calls 1-3, processes in turn) hf-llama made 8 tokens in 1.575 s
 * against 1.650 (seven and eight processes), though it demoted more there
 * (2.4-4.7 GiB a process against 1.0-2.0), llama.cpp in 1.645 against
 * 1.660; star, bfs and hf-mixtral moved within their spreads.
 */
static uint64_t next_gap(uint64_t was, uint64_t seen)
{
	if (was == UINT64_MAX || seen >= was / 2)
		return seen;
	return was / 2;
}

/* Regions [r0, r1) of a credited amount each, but the first first and the last last (struct ember_share), by refs references. */
static void credit(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1,
		   struct ember_share share, uint32_t refs, uint64_t now)
{
	const struct ember_policy_params *p = &pc->params;
	uint32_t epoch = ember_demand_epoch(p, now);
	for (uint32_t r = r0; r < r1 && r < a->nregions; r++) {
		struct ember_region *reg = &a->regions[r];
		uint32_t amount = r == r0 ? share.first : r + 1 == r1 ? share.last : share.amount;
		ember_demand_catch_up(reg, epoch);
		reg->demand = add_saturating(reg->demand, amount);
		reg->active_epoch = epoch;
		/*
		 * The reuse gap is the time between touches. References less
		 * than an interval apart are one touch (a burst of launches over
		 * one layer) and keep the gap the cycle showed, until the touch
		 * has lasted an interval: then the region is in steady use, and
		 * its gap is the time between references. A touch's demand is
		 * what it reads a cycle (policy.c's read_more_per_cycle).
		 */
		if (!reg->last_ref || now >= reg->last_ref + p->interval_ns) {
			reg->gap = reg->last_ref ? next_gap(reg->gap, now - reg->touch_start) : UINT64_MAX;
			reg->touch_start = now;
			reg->touch_demand = amount;
			reg->touch_refs = refs;
			reg->touch_partial = 0;
		} else {
			if (now - reg->touch_start >= p->interval_ns)
				reg->gap = now - reg->last_ref;
			reg->touch_demand = add_saturating(reg->touch_demand, amount);
			reg->touch_refs = add_saturating(reg->touch_refs, refs);
		}
		if (reg->episode != pc->episode) { /* a region never credited counts nothing in episode 0 either */
			reg->episode = pc->episode;
			reg->episode_demand = 0;
			reg->episode_partial = 0;
		}
		reg->episode_demand = add_saturating(reg->episode_demand, amount);
		reg->last_ref = now;
		reg->ref_demand = reg->demand;
		reg->departed = 0;
	}
}

/*
 * The regions credited since the launch promotion last looked, as one
 * range: a launch's promotion surveys what the launch referenced, not
 * every region of its allocations (llama.cpp keeps all weights in one
 * 24 GiB buffer: 12,000 regions walked per launch, each launch reading
 * one tensor of 30 to 70).
 */
static void note_fresh(struct ember_alloc *a, uint32_t r0, uint32_t r1)
{
	if (r0 >= r1)
		return;
	if (a->fresh_r0 >= a->fresh_r1) {
		a->fresh_r0 = r0;
		a->fresh_r1 = r1;
		return;
	}
	a->fresh_r0 = r0 < a->fresh_r0 ? r0 : a->fresh_r0;
	a->fresh_r1 = r1 > a->fresh_r1 ? r1 : a->fresh_r1;
}

/*
 * A launch loop over big arrays references the same regions launch after
 * launch; crediting each region at each launch made the launch path cost
 * one step per region (on the H200, NW's 2,043 launches over two 4 GiB
 * arrays took 37 ms longer in adaptive than in static). A repeat of the
 * range credited last, within a quarter interval (one touch), is counted
 * instead, and the count is credited as one reference at the latest
 * repeat when the range changes, the quarter ends, or the regions are read.
 */
bool ember_policy_demand_shared(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1,
				struct ember_share share, uint64_t now)
{
	struct ember_repeat *rep = &a->repeat;
	if (rep->count && rep->r0 == r0 && rep->r1 == r1 && rep->share.amount == share.amount &&
	    rep->share.first == share.first && rep->share.last == share.last && now >= rep->first &&
	    now - rep->first < pc->params.interval_ns / 4) {
		rep->count++;
		rep->last = now;
		return false;
	}
	ember_policy_settle(pc, a);
	credit(pc, a, r0, r1, share, 1, now);
	*rep = (struct ember_repeat){ r0, r1, 1, share, now, now };
	note_fresh(a, r0, r1 < a->nregions ? r1 : a->nregions);
	return true;
}

bool ember_policy_demand(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1, uint32_t amount,
			 uint64_t now)
{
	return ember_policy_demand_shared(pc, a, r0, r1, (struct ember_share){ amount, amount, amount }, now);
}

/* Where a launch's extent [offset, offset + bytes) of a ends: bytes 0, or past a's end, is to a's end. */
static uint64_t extent_end(const struct ember_alloc *a, uint64_t offset, uint64_t bytes)
{
	return bytes && bytes <= a->size - offset ? offset + bytes : a->size;
}

/* amount's share for covered bytes of a region of size bytes: at least 1, so the reference still counts. */
static uint32_t part_of(uint32_t amount, uint64_t covered, uint64_t size)
{
	uint64_t part = size ? (uint64_t)amount * covered / size : amount;
	return part ? (uint32_t)part : 1;
}

struct ember_share ember_policy_share(const struct ember_policy_params *p, const struct ember_alloc *a,
				      uint64_t offset, uint64_t bytes, uint32_t amount)
{
	struct ember_share share = { amount, amount, amount };
	if (!p->pieces || !a->nregions || offset >= a->size)
		return share;
	uint64_t end = extent_end(a, offset, bytes);
	uint32_t r0 = (uint32_t)(offset >> EMBER_REGION_SHIFT), rl = (uint32_t)((end - 1) >> EMBER_REGION_SHIFT);
	uint64_t first_end = r0 == rl ? end : ((uint64_t)r0 + 1) << EMBER_REGION_SHIFT;
	share.first = part_of(amount, first_end - offset, ember_region_bytes(a, r0));
	share.last = r0 == rl ? share.first
			      : part_of(amount, end - ((uint64_t)rl << EMBER_REGION_SHIFT), ember_region_bytes(a, rl));
	return share;
}

uint32_t ember_policy_launch_amount(uint64_t regions, uint64_t largest)
{
	uint64_t times = regions && largest > regions ? largest / regions : 1;
	return EMBER_LAUNCH_DEMAND * (uint32_t)(times < EMBER_DENSITY_MAX ? times : EMBER_DENSITY_MAX);
}

void ember_policy_settle(struct ember_policy_ctx *pc, struct ember_alloc *a)
{
	struct ember_repeat *rep = &a->repeat;
	if (rep->count > 1) {
		uint32_t n = rep->count - 1;
		struct ember_share total = { times_saturating(rep->share.amount, n), times_saturating(rep->share.first, n),
					     times_saturating(rep->share.last, n) };
		credit(pc, a, rep->r0, rep->r1, total, n, rep->last);
		rep->count = 1; /* all credited; later repeats of the range are counted again */
	}
}

/* A launch covered region r of a in part. */
static void covered_in_part(struct ember_alloc *a, uint32_t r)
{
	a->regions[r].touch_partial = 1;
	a->regions[r].episode_partial = 1;
}

void ember_policy_extent_edges(struct ember_alloc *a, uint64_t offset, uint64_t bytes)
{
	if (!a->nregions || offset >= a->size)
		return;
	uint64_t end = extent_end(a, offset, bytes);
	if (offset & (EMBER_REGION_BYTES - 1))
		covered_in_part(a, (uint32_t)(offset >> EMBER_REGION_SHIFT));
	if ((end & (EMBER_REGION_BYTES - 1)) && end != a->size)
		covered_in_part(a, (uint32_t)((end - 1) >> EMBER_REGION_SHIFT));
}

void ember_policy_depart(struct ember_alloc *a, uint32_t r0, uint32_t r1)
{
	if (r0 < r1 && r0 < a->repeat.r1 && a->repeat.r0 < r1)
		a->repeat.count = 0; /* what the repeats referenced was left behind: their demand is void */
	if (r0 < r1)
		a->any_departed = true;
	for (uint32_t r = r0; r < r1 && r < a->nregions; r++) {
		struct ember_region *reg = &a->regions[r];
		reg->departed = 1;
		reg->demand = reg->ref_demand = 0;
	}
}

/*
 * A mapped region earns promotion while the demand it had when last
 * referenced is past the threshold and it is still within its own reuse
 * cycle: referenced once per launch, a region stays hot for as long as its
 * launches keep coming, however long each one runs.
 */
bool ember_demand_hot(const struct ember_policy_params *p, const struct ember_region *r, uint64_t now)
{
	if (r->wanted)
		return true;
	if (r->ref_demand < p->threshold || !r->last_ref || now < r->last_ref)
		return r->ref_demand >= p->threshold && r->last_ref;
	uint64_t silent = now - r->last_ref;
	uint64_t cycle = r->gap != UINT64_MAX && r->gap > p->interval_ns ? r->gap : p->interval_ns;
	return (double)silent <= p->heat_ratio * (double)cycle;
}

/* Demand as reclamation sees it: a region silent for stale_intervals is cold. */
uint32_t ember_demand_effective(const struct ember_policy_params *p, const struct ember_region *r, uint32_t epoch)
{
	return epoch - r->active_epoch >= p->stale_intervals ? 0 : r->demand;
}

float ember_demand_score(const struct ember_policy_params *p, const struct ember_region *r, uint64_t now)
{
	if (r->score <= 0 || now <= r->score_at || !p->score_decay_ns)
		return r->score;
	return r->score * (float)exp2(-(double)(now - r->score_at) / (double)p->score_decay_ns);
}

uint64_t ember_policy_grace_left(const struct ember_region *r, uint64_t now)
{
	return r->protect_until > now ? r->protect_until - now : 0;
}

/* Demand as ember_demand_effective sees it at epoch, without catching the region up. */
uint32_t ember_demand_at(const struct ember_policy_params *p, const struct ember_region *r, uint32_t epoch)
{
	uint32_t halvings = epoch > r->demand_epoch ? epoch - r->demand_epoch : 0;
	uint32_t decayed = halvings >= 32 ? 0 : r->demand >> halvings;
	return epoch - r->active_epoch >= p->stale_intervals ? 0 : decayed;
}
