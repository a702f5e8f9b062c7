/*
 * Small tables read densely (tables.c): a lookup table beside the larger
 * arrays a launch reads (ember_small_and_dense). Policy-internal; the
 * worker's side is ember_policy_promote_wanted and ember_policy_wanted_wait
 * (policy.h).
 */
#ifndef EMBER_POLICY_TABLES_H
#define EMBER_POLICY_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include "candidates.h"
#include "policy.h"

/* Mark a region wanted, or no longer, keeping pc->wanted the count of the marks. */
void ember_tables_set_wanted(struct ember_policy_ctx *pc, struct ember_region *reg, bool wanted);

/* At a launch: demote the coldest unprotected residents that are not such tables, released, for hot's tables. */
void ember_tables_make_room(struct ember_policy_ctx *pc, int dev, uint64_t now, const struct slots *hot, uint64_t room,
			    struct ember_moves *out);

/* At a launch: promote hot's tables first, into the margin above the high watermark if need be. */
void ember_tables_promote(const struct ember_policy_params *p, struct ember_device_account *acc, const struct slots *hot,
			  struct ember_moves *out);

#endif
