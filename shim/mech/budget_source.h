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

/* dev's budget in bytes; 0 while it is not known. */
uint64_t ember_budget_bytes(int dev);

/* Plain device memory Ember saw being allocated or freed on dev. */
void ember_budget_plain(int dev, int64_t delta);

/*
 * Charge bytes of plain device memory to dev only if they fit under its
 * high watermark (or its budget is not known yet). Whether they were.
 */
bool ember_budget_plain_if_room(int dev, uint64_t bytes);

/*
 * Charge what of bytes fits under dev's high watermark, in whole units (0:
 * none, or its budget is not known yet). How many bytes were charged.
 */
uint64_t ember_budget_plain_up_to(int dev, uint64_t bytes, uint64_t unit);

/* Device memory of the virtual memory API that Ember made in host memory instead (physical.h). */
void ember_budget_vmm_on_host(int dev, uint64_t bytes);

#endif
