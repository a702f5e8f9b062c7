/*
 * Candidates for the policy's moves (candidates.c): regions collected as
 * slots, the orders they are taken in, and the moves made of them.
 * Policy-internal; every function runs with the table locked.
 */
#ifndef EMBER_POLICY_CANDIDATES_H
#define EMBER_POLICY_CANDIDATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/* A region of the table, for sorting candidates. */
struct slot {
	struct ember_alloc *a;
	uint32_t r;
	bool protected_;
	bool departed; /* left behind by a sliding range */
	bool dense;    /* resident: a small table read densely (ember_small_and_dense) */
	uint64_t protect_until;
	float score;
	uint64_t arrived;
	uint32_t demand;
	uint64_t last_ref; /* when it was last referenced */
	uint64_t gap;      /* mapped: its reuse gap (UINT64_MAX: referenced once) */
	bool partial;      /* hot: ranked at half its demand (ember_slot_hot) */
	enum ember_victim_reason why; /* a victim: for what it gave way (EXCHANGE: a region read more a cycle) */
	struct ember_alloc *for_a;    /* a victim of replacement: the hot region it gave way for (NULL: none) */
	uint32_t for_r;
};

struct slots {
	struct slot *v;
	size_t n, cap;
};

/* dev's account, or NULL while its budget is not known (nothing to place against yet). */
static inline struct ember_device_account *ember_budgeted_account(struct ember_policy_ctx *pc, int dev)
{
	struct ember_device_account *acc = ember_table_account(pc->table, dev);
	return acc && acc->budget ? acc : NULL;
}

/* A small allocation read as densely as density credit counts: a lookup table beside larger arrays. */
bool ember_small_and_dense(const struct ember_policy_params *p, const struct ember_alloc *a,
			   const struct ember_region *reg);

/* qsort orders of slots: victims first (ember_victim_order), hottest first, by address. */
int ember_victim_order(const void *x, const void *y);
int ember_hottest_first(const void *x, const void *y);
int ember_by_address(const void *x, const void *y);

void ember_slots_push(struct slots *s, struct slot x);
void ember_slots_sort(struct slot *v, size_t n, int (*cmp)(const void *, const void *));

/* A hot mapped region r of a, as a candidate. */
struct slot ember_slot_hot(const struct ember_policy_params *p, struct ember_alloc *a, uint32_t r);

/* Resident victims and (unless hot is NULL) hot mapped candidates of dev; returns the bytes already leaving. */
uint64_t ember_survey(struct ember_policy_ctx *pc, int dev, uint64_t now, struct slots *resident, struct slots *hot);

/* Whether every region of dev's placed allocations is resident or on its way (none mapped). */
bool ember_nothing_mapped(struct ember_policy_ctx *pc, int dev);

/* What ember_survey does to the table, without collecting slots: repeats credited, demand decayed. */
void ember_upkeep(struct ember_policy_ctx *pc, int dev, uint64_t now);

/* Mark the slots demoting, as moves of neighbouring regions. */
void ember_slots_demote(struct slot *v, size_t n, struct ember_moves *out);

/* The same, their bytes released from acc at once: promotions queued behind them may use the room. */
void ember_slots_demote_released(struct ember_device_account *acc, struct slot *v, size_t n, struct ember_moves *out);

/*
 * Victims v[n] exchanged for the hot regions in bring: demoted released,
 * and the hot regions promoted behind them on the same stream, from the
 * same pass. Both are sorted by address.
 */
void ember_slots_exchange(struct ember_device_account *acc, struct slot *v, size_t n, struct slots *bring,
			  struct ember_moves *out);

/* Promote the mapped regions of [from, to) of a, in runs, until room runs out; returns the bytes. */
uint64_t ember_promote_range(struct ember_alloc *a, uint32_t from, uint32_t to, uint64_t room, struct ember_moves *out);

/* Promote the span around region c of a within room; returns the bytes. */
uint64_t ember_promote_span(const struct ember_policy_params *p, struct ember_alloc *a, uint32_t c, uint64_t room,
			    struct ember_moves *out);

/* Join the promotions of out from `from` on that are neighbours into single moves. */
void ember_merge_promotions(struct ember_moves *m, size_t from);

#endif
