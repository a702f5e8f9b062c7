/*
 * The accounts: per-GPU budgets and what is charged against them. This file
 * owns every change to an account; callers hold the lock of the table the
 * accounts belong to (regions.h), so a reservation and the region states it
 * pays for change together.
 */
#ifndef EMBER_BUDGET_H
#define EMBER_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define EMBER_MAX_DEVICES 16

/* One GPU's account, in bytes. */
struct ember_device_account {
	uint64_t budget;           /* 0: not yet known */
	uint64_t high, low;        /* budget x watermarks */
	uint64_t resident;         /* Ember's resident + promoting regions */
	uint64_t other;            /* plain allocations Ember saw (cuMemAlloc & co.) */
	uint64_t peak;             /* high-water mark of resident + other */
	uint64_t promotions, demotions, bytes_promoted, bytes_demoted, migrate_ns;
	uint64_t refreshes, bytes_refreshed; /* resident ranges prefetched again after host phases */
	uint64_t bytes_populated;            /* mapped bytes the host touched into being (host_touch.h) */
	uint64_t bytes_wanted;               /* promoted by the worker for tables that found no room at their launch */
	uint64_t bytes_margin;               /* of small tables read densely, placed past the high watermark (policy.c) */
	uint64_t bytes_phase_exchanged;      /* promoted by the exchanges at host phases (episode.c) */
	uint64_t bytes_vmm_on_host;          /* cuMemCreate memory past the budget made in host memory (physical.h) */
};

struct ember_accounts {
	struct ember_device_account dev[EMBER_MAX_DEVICES];
};

/* The account of dev, or NULL for an ordinal out of range. */
struct ember_device_account *ember_budget_account(struct ember_accounts *accs, int dev);

/* Fix a budget and its watermarks (percentages of it). */
void ember_budget_set(struct ember_device_account *acc, uint64_t budget, unsigned high_pct, unsigned low_pct);

/* Bytes that may still be charged before the account reaches ceiling (its high or low watermark). */
uint64_t ember_budget_room(const struct ember_device_account *acc, uint64_t ceiling);

/* Charge bytes of residency (a promotion being prepared), and note the peak. */
void ember_budget_reserve(struct ember_device_account *acc, uint64_t bytes);

/* Take bytes of residency out, never below zero (a demotion, a failed promotion, a free). */
void ember_budget_release(struct ember_device_account *acc, uint64_t bytes);

/* Plain device memory seen allocated (delta > 0) or freed. */
void ember_budget_other(struct ember_device_account *acc, int64_t delta);

/* A completed move, for the statistics. */
void ember_budget_moved(struct ember_device_account *acc, bool promote, uint64_t bytes, uint64_t ns);

#endif
