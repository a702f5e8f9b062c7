/* Demand as the policy reads it (demand.c): its decay, its heat, its score. Policy-internal. */
#ifndef EMBER_POLICY_DEMAND_H
#define EMBER_POLICY_DEMAND_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

/* The interval now falls in: demand halves once per interval. */
uint32_t ember_demand_epoch(const struct ember_policy_params *p, uint64_t now);

/* Bring reg's demand up to epoch, halving it once per interval since it was last brought up to date. */
void ember_demand_catch_up(struct ember_region *reg, uint32_t epoch);

/* Whether mapped region r earns promotion now. */
bool ember_demand_hot(const struct ember_policy_params *p, const struct ember_region *r, uint64_t now);

/* Demand as reclamation sees it: a region silent for stale_intervals is cold. */
uint32_t ember_demand_effective(const struct ember_policy_params *p, const struct ember_region *r, uint32_t epoch);

/* ember_demand_effective at epoch, without catching the region up. */
uint32_t ember_demand_at(const struct ember_policy_params *p, const struct ember_region *r, uint32_t epoch);

/* The protection score, decayed to now. */
float ember_demand_score(const struct ember_policy_params *p, const struct ember_region *r, uint64_t now);

#endif
