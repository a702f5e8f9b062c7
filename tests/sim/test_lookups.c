/* A star-schema join's lookups (lookups.c): tables beside columns become random reads, a 4-byte read a row. */
#include <criterion/criterion.h>

#include "lookups.h"

static const uint64_t MiB = 1 << 20, GiB = 1ull << 30;

static const struct sim_range *ranges_of(const struct sim_events *e, size_t i)
{
	cr_assert_eq(e->ev[i].kind, SIM_EV_LAUNCH);
	return e->ev[i].launch.ranges;
}

Test(lookups, a_table_beside_a_column_is_read_a_row_at_a_time)
{
	struct sim_events e = { 0 };
	struct sim_range q[3] = {
		{ .alloc_id = 0, .bytes = 2 * GiB, .touched = 2 * GiB },  /* a fact column */
		{ .alloc_id = 1, .bytes = 14 * MiB, .touched = 14 * MiB }, /* a dimension table */
		{ .alloc_id = 2, .bytes = 16 * 1024, .touched = 16 * 1024 }, /* the results */
	};
	cr_assert_eq(sim_events_launch(&e, 0, 3, q, 0), 0);
	cr_expect_eq(sim_lookup_reads(&e, 64 * MiB), 2);
	const struct sim_range *r = ranges_of(&e, 0);
	cr_expect_eq(r[0].pattern, SIM_STREAM, "the column is streamed as recorded");
	cr_expect_eq(r[0].touched, 2 * GiB);
	for (int k = 1; k < 3; k++) {
		cr_expect_eq(r[k].pattern, SIM_RANDOM);
		cr_expect_eq(r[k].touched, 2 * GiB, "a 4-byte read for each of the column's 512 Mi rows");
		cr_expect_eq(r[k].bytes, q[k].bytes, "over the same range");
	}
	sim_events_clear(&e);
}

Test(lookups, ranges_of_like_sizes_and_large_tables_are_left_alone)
{
	struct sim_events e = { 0 };
	struct sim_range like[2] = { { .alloc_id = 0, .bytes = 2 * GiB, .touched = 2 * GiB },
				     { .alloc_id = 1, .bytes = 1 * GiB, .touched = 1 * GiB } };
	struct sim_range large[2] = { { .alloc_id = 0, .bytes = 64 * GiB, .touched = 64 * GiB },
				      { .alloc_id = 1, .bytes = 128 * MiB, .touched = 128 * MiB } };
	cr_assert_eq(sim_events_launch(&e, 0, 2, like, 0), 0);
	cr_assert_eq(sim_events_launch(&e, 0, 2, large, 0), 0);
	cr_expect_eq(sim_lookup_reads(&e, 64 * MiB), 0, "no table: a half-size range, and one past 64 MiB");
	cr_expect_eq(ranges_of(&e, 1)[1].pattern, SIM_STREAM);
	sim_events_clear(&e);
}
