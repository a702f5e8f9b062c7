/*
 * What the fuzz targets that drive the policy (fuzz_counters,
 * fuzz_launch_scan) share: their input read a byte at a time, and the
 * shim's region table and policy context (state.h), which each target
 * defines, made as a small shim would make them. A target is one
 * translation unit: these are static.
 */
#ifndef EMBER_FUZZ_COMMON_H
#define EMBER_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "state.h"

/* The input, read from the front; past its end every byte reads 0. */
struct input {
	const uint8_t *p;
	size_t left;
};

static inline unsigned take(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static inline uint64_t take16(struct input *in)
{
	return take(in) | (uint64_t)take(in) << 8;
}

static inline uint32_t take32(struct input *in)
{
	return (uint32_t)(take16(in) | take16(in) << 16);
}

/*
 * ember_shim_table over accounts, and ember_shim_ctx adaptive with 4-region
 * spans, a threshold of 256 and 25 ms intervals: once, before the first input.
 */
static inline void fuzz_policy_init(struct ember_accounts *accounts)
{
	ember_table_init(&ember_shim_table, accounts);
	ember_shim_ctx = (struct ember_policy_ctx){
		.params = { .span_regions = 4, .threshold = 256, .interval_ns = 25000000, .heat_ratio = 2.0,
			    .stale_intervals = 5 },
		.table = &ember_shim_table,
		.accounts = accounts,
		.adaptive = true,
	};
}

#endif
