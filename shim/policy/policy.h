/*
 * The adaptive placement policy of the paper (§5.2-§5.3, §6.1, Table 1):
 * threshold promotion with a span, demand that halves every interval,
 * reclamation between the watermarks in batches, replacement by heat ratio,
 * stale regions, and migration-aware protection.
 *
 * Pure: no CUDA call, no clock of its own and no state of its own. Its
 * context (parameters, region table, accounts) is an argument, time is an
 * argument, decisions are returned as moves for the caller to carry out
 * (engine.h), and the caller reports back when a move completes
 * (ember_move_finish). All calls run with the context's table locked.
 */
#ifndef EMBER_POLICY_H
#define EMBER_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "moves.h"
#include "pass_note.h"
#include "regions.h"

/*
 * Table 1's parameters, in Ember's units (nanoseconds, 2 MiB regions).
 *
 * One addition, for the launch scan: a region is referenced in pulses (once
 * per launch), not in the steady stream of counter notifications the paper
 * had, so between two references its decayed demand says little.
 * Replacement therefore also requires the resident region's last reference
 * to come heat_ratio reuse gaps of the hot region before the hot region's
 * own: data read once per token, or once per pass, is never swapped for
 * data read at the same rate, and nothing is swapped once the program stops
 * launching. A reuse gap runs from touch to touch, where references less
 * than an interval apart are one touch (a burst of launches over one
 * layer), until a touch lasts an interval (steady use).
 *
 * A second addition, from launch order: a region that a sliding range left
 * behind (ember_policy_depart) is cold at once. It goes first among the
 * unprotected victims, and a hot region may replace it without the wait
 * above, even on its first reference.
 */
/* The policy's times are nanoseconds; its options are given in milliseconds. */
#define EMBER_NS_PER_MS 1000000ull

struct ember_policy_params {
	uint32_t span_regions;      /* promotion span: 64 MiB = 32 regions */
	uint32_t threshold;         /* demand that earns promotion: 256 */
	uint64_t interval_ns;       /* demand halves every 25 ms */
	uint32_t batch_regions;     /* regions per demotion batch: 16 */
	uint32_t exchange_regions;  /* regions a pass may exchange for regions read more a cycle (0: none) */
	double heat_ratio;          /* hottest mapped / coldest resident to replace: 2 */
	bool partial_rank;          /* hot regions covered in part rank at half their demand (EMBER_PARTIAL_RANK) */
	bool pieces;                /* allocations taken in pieces are pools: policy.h, EMBER_PIECES */
	uint32_t stale_intervals;   /* silent intervals until a resident region counts as cold: 5 */
	bool protection;            /* migration-aware protection on */
	uint64_t base_grace_ns;     /* grace after arrival: 100 ms */
	uint64_t return_window_ns;  /* a return within 500 ms of eviction scores */
	uint64_t score_grace_ns;    /* grace per score point: 250 ms */
	uint64_t max_grace_ns;      /* grace cap: 2 s */
	uint64_t score_decay_ns;    /* score halves every 1 s */
};

/* The promotion span in regions: at least one, whatever span_regions says. */
static inline uint32_t ember_span_regions(const struct ember_policy_params *p)
{
	return p->span_regions ? p->span_regions : 1;
}

/* Demand one launch reference adds to each region it covers: one counter notification's worth. */
#define EMBER_LAUNCH_DEMAND 256
/* The most times EMBER_LAUNCH_DEMAND a launch adds to a region of a small extent (ember_policy_launch_amount). */
#define EMBER_DENSITY_MAX 64

/*
 * The demand a launch adds to each region of one of its extents, of
 * `regions` regions, when its largest covers `largest`: a launch reads
 * about as many elements of each array it is passed, so each region of a
 * smaller extent takes that many times more of them, up to
 * EMBER_DENSITY_MAX. Access counters would count them; the launch scan
 * has only the extents.
 */
uint32_t ember_policy_launch_amount(uint64_t regions, uint64_t largest);

/* Everything the policy reads and writes, passed explicitly. */
struct ember_policy_ctx {
	struct ember_policy_params params;
	struct ember_table *table;       /* its lock is held around every call below */
	struct ember_accounts *accounts; /* the table's */
	bool adaptive;                   /* completed moves feed protection (adaptive mode) */
	uint32_t episode;                /* the episode launches are credited to: host phases so far (host_phase.h) */
	uint32_t wanted;                 /* regions marked wanted (policy.c), 0 when the last pass found none */
	struct ember_pass_note note;     /* why victims gave way, until the caller takes it (the debug log) */
};

/*
 * Demand arrived at now for regions [r0, r1) of a (a launch referenced them,
 * or a hint). False: a repeat of the range credited last, within a quarter
 * interval; it is counted, and credited (as one reference at the latest
 * repeat) by ember_policy_settle, which every reader of the regions' demand
 * calls first. A launch whose demands were all repeats changes nothing a
 * promotion would see.
 */
bool ember_policy_demand(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1,
			 uint32_t amount, uint64_t now);

/* The same, with share's first and last for the range's first and last regions (ember_policy_share). */
bool ember_policy_demand_shared(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1,
				struct ember_share share, uint64_t now);

/*
 * What a launch's extent [offset, offset + bytes) of a (bytes 0: to its
 * end) credits its regions when it brings amount: amount each, but under
 * EMBER_PIECES its first and last regions, where it covers them only in
 * part, that part of amount (at least 1). Two launches that each read half
 * of a region (radix sort's chunk edges, two tensors packed in one buffer)
 * then credit it one launch's amount, as much as it holds of either.
 */
struct ember_share ember_policy_share(const struct ember_policy_params *p, const struct ember_alloc *a,
				      uint64_t offset, uint64_t bytes, uint32_t amount);
void ember_policy_settle(struct ember_policy_ctx *pc, struct ember_alloc *a);

/*
 * A launch's extent [offset, offset + bytes) of a, just credited: its first
 * and last regions, where it covers them only in part (tensors packed in
 * one buffer), have touches that cannot say how much of them a cycle reads,
 * so the per-cycle ranking leaves them be (policy.c, read_more_per_cycle),
 * unless EMBER_PIECES credited them only the part they cover.
 */
void ember_policy_extent_edges(struct ember_alloc *a, uint64_t offset, uint64_t bytes);

/*
 * Regions [r0, r1) of a were left behind by a sliding range (the launch
 * scan's launch order, monitor.c): their demand is void until they are
 * referenced again, and a hot region may replace them at once.
 */
void ember_policy_depart(struct ember_alloc *a, uint32_t r0, uint32_t r1);

/*
 * Reclamation and replacement for device dev at time now: above the high
 * watermark evict down to the low one; below it, evict cold residents that
 * hot mapped regions beat. Only demotions.
 */
void ember_policy_reclaim(struct ember_policy_ctx *pc, int dev, uint64_t now, struct ember_moves *out);

/*
 * The worker's promotions for dev: small tables read densely that found
 * no room at their launch (wanted) take the room reclamation made for
 * them, in the table's order, region by region while it lasts, instead of
 * waiting for the next launch that names them, which in a burst comes a
 * run later. Returns how many wanted regions it left mapped.
 */
size_t ember_policy_promote_wanted(struct ember_policy_ctx *pc, int dev, struct ember_moves *out);

/*
 * Why wanted regions still wait on dev at now, for the log: what keeps each
 * resident from giving way to the hottest of them (replaceable). Reads the
 * table without changing it (decay is computed, not applied).
 */
struct ember_wanted_wait {
	uint32_t wanted;         /* wanted regions still mapped */
	uint32_t wanted_demand;  /* the largest demand among them */
	uint32_t resident;       /* resident regions, not on their way out */
	uint32_t in_grace;       /* of those, protected */
	uint32_t warm;           /* unprotected, with demand the wanted do not beat by heat_ratio */
	uint32_t dense;          /* small tables read densely themselves, which a table never replaces */
	uint64_t grace_left_ns;  /* the longest grace among them */
	uint64_t room;           /* bytes under the high watermark */
	uint64_t leaving;        /* bytes of demotions under way */
};
void ember_policy_wanted_wait(struct ember_policy_ctx *pc, int dev, uint64_t now, struct ember_wanted_wait *w);

/*
 * Whether a launch on dev that references allocs[0..n) has nothing to
 * decide (table locked): each is resident on dev with nothing in flight,
 * and dev is below its low watermark, so no reclamation is near. Its
 * demand is then not counted: the monitor and the promotion call it leads
 * to cost 0.2 to 0.6 us a launch on the development machine (ember-callbench
 * --launch), paid by every launch of a model that fits.
 */
bool ember_policy_nothing_to_decide(struct ember_policy_ctx *pc, int dev, struct ember_alloc *const *allocs,
				    size_t n);

/*
 * Such a launch's allocations were named at now, though none of their
 * regions was credited (table locked): a victim's last reference is its
 * region's or this, whichever is later (candidates.c). Without it, the
 * first pressure found the regions that every launch before it had read
 * never referenced, and replaced them first as older than anything hot:
 * a training step's fp32 weights, cast at every step while the budget
 * had room, gave way to its optimizer's moments at the first step.
 */
void ember_policy_named_idle(struct ember_alloc *const *allocs, size_t n, uint64_t now);

/*
 * Promotions for dev at time now: mapped regions past the threshold,
 * hottest first, a span around each, while there is room. With n > 0 only
 * regions of the allocations in only[] that were credited since the last
 * such call are considered (what a launch is about to use, so that it can
 * wait for them; the cost follows the launch, not the allocations' size).
 */
size_t ember_policy_promote(struct ember_policy_ctx *pc, int dev, uint64_t now, struct ember_alloc *const *only,
			    size_t n, struct ember_moves *out);
/* (Returns how many hot regions found no room: a reason to reclaim.) */

/*
 * Both, as one pass: reclaim
 * above the high watermark down to the low one, replace cold residents by
 * hot mapped regions, and promote regions whose demand crossed the
 * threshold while there is room. Regions chosen are marked in flight and
 * accounted; their moves are appended to out.
 */
void ember_policy_run(struct ember_policy_ctx *pc, int dev, uint64_t now, struct ember_moves *out);

/*
 * Episodes: the launches between two host phases (the program waited for
 * the GPU, then worked on the host: a check of results, a query flight's
 * answer), each region's demand in one summed undecayed. When a host phase
 * has lasted long enough to be seen while it lasts, the GPU is idle and
 * the episode is whole: ember_policy_episode_end exchanges resident
 * regions for mapped ones that the episode read at least heat_ratio times
 * as much, the moves to be issued at once, in the host's time. Within the
 * episode that showed it, the per-cycle exchange cannot: a region read
 * once so far has no reuse gap to rank it by, and the runs of a program
 * that checks its results each end in a host phase. On the H200 at 1.5x,
 * star's first run filled the budget with the columns its first query
 * reads (twice a flight) and left those read four to eight times mapped;
 * the exchange then took the whole second run (0.55-0.60 s against the
 * third's 0.30).
 *
 * Regions a launch covered in part are left out on both sides (a region
 * that two packed tensors share is credited twice, yet read once), as are
 * regions in flight, the application's own, protected residents and small
 * tables read densely. With fill_room (the phase's first try), the room
 * under the high watermark is filled first, with the regions the episode
 * read most; later tries exchange only (at a program's exit, its frees
 * make room that must not be filled with the arrays it frees next). Moves
 * go to out: the victims' demotions, released, then the promotions behind
 * them.
 */
void ember_policy_episode_end(struct ember_policy_ctx *pc, int dev, uint32_t episode, uint64_t now, bool fill_room,
			      struct ember_moves *out);

/* A move finished (ok) or failed; the caller has already set the region states. */
void ember_policy_moved(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t first,
			uint32_t count, bool promote, bool ok, uint64_t now);

/* The grace a region has at now, in nanoseconds (0: unprotected). */
uint64_t ember_policy_grace_left(const struct ember_region *r, uint64_t now);

#endif
