/*
 * Per-GPU budgets. A device's budget is fixed the first time Ember needs it,
 * with a context current on that device: EMBER_BUDGET_<n>, else
 * EMBER_BUDGET (a share is of the device's total memory), else the free
 * memory at that moment less EMBER_HEADROOM. The watermarks are shares of it.
 */
#ifndef EMBER_BUDGET_SOURCE_H
#define EMBER_BUDGET_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

/* The device of the current context, its budget made known; -1 without a context. */
int ember_budget_current_device(void);

/* Whether the user set a budget for dev (then cuMemGetInfo reports it). */
bool ember_budget_is_explicit(int dev);

/* Plain device memory Ember saw being allocated or freed on dev. */
void ember_budget_plain(int dev, int64_t delta);

#endif
