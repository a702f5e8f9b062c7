/*
 * The static split, and the moves hints ask for: promote an allocation's
 * mapped regions in order while the budget has room, or demote its
 * resident ones. Pure, like the policy: the table is locked by the caller,
 * and the moves are carried out by the engine.
 */
#ifndef EMBER_SPLIT_H
#define EMBER_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

/*
 * Prepare promotions of a's mapped, unhinted regions in [r0, r1), in order,
 * charging the budget. bulk (the static prefix) moves up to 2 GiB per move,
 * else one span. The split fills to the high watermark, except converted
 * allocations larger than a span, which stop at the low one. Returns the
 * bytes reserved.
 */
uint64_t ember_split_promote(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1, bool bulk,
			     struct ember_moves *out);

/* Prepare demotions of a's resident, unhinted regions in [r0, r1), a span per move. Returns their bytes. */
uint64_t ember_split_demote(struct ember_policy_ctx *pc, struct ember_alloc *a, uint32_t r0, uint32_t r1,
			    struct ember_moves *out);

/*
 * Order the allocations a launch references for the first time, n of
 * them, smallest first: the static split gives them room in that order.
 * The small ones are read most densely per byte (on the H200 at 1.5x, the
 * star queries' dimension tables, looked up at random for every fact row,
 * were left mapped behind the fact columns first referenced with them:
 * 8.0 s against a bound of 1.2 s).
 */
void ember_split_order(struct ember_alloc **v, unsigned n);

#endif
