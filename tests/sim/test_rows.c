/* A grid read a row a launch (rows.c): the scan's guess kept, the launch's row read, rows counted from each flush. */
#include <criterion/criterion.h>

#include "rows.h"

static const uint64_t MiB = 1 << 20;

static void row_launch(struct sim_events *e)
{
	struct sim_range r[3] = { { .alloc_id = 0, .bytes = 16 * MiB, .touched = 16 * MiB }, /* the grid: 4 rows */
				  { .alloc_id = 1, .bytes = 4 * MiB, .touched = 4 * MiB },
				  { .alloc_id = 2, .bytes = 4 * MiB, .touched = 4 * MiB } };
	cr_assert_eq(sim_events_launch(e, 0, 3, r, 0), 0);
}

Test(rows, each_launch_reads_its_row_counted_from_the_flush)
{
	struct sim_events e = { 0 };
	cr_assert_eq(sim_events_mark(&e), 0);
	for (int i = 0; i < 3; i++)
		row_launch(&e);
	cr_assert_eq(sim_events_mark(&e), 0);
	row_launch(&e);
	cr_assert_eq(sim_row_reads(&e), 4);
	const uint64_t want[] = { 4, 8, 12, 4 }; /* MiB: rows 1, 2, 3, then row 1 again after the flush */
	for (size_t i = 0, k = 0; i < e.n; i++) {
		if (e.ev[i].kind != SIM_EV_LAUNCH)
			continue;
		const struct sim_launch *l = &e.ev[i].launch;
		cr_assert_eq(l->n, 4);
		cr_expect_eq(l->ranges[0].seen, SIM_SEEN_SCAN, "the grid whole: credited, not read");
		cr_expect_eq(l->ranges[3].alloc_id, 0);
		cr_expect_eq(l->ranges[3].offset, want[k] * MiB, "launch %zu", k);
		cr_expect_eq(l->ranges[3].bytes, 4 * MiB);
		cr_expect_eq(l->ranges[3].seen, SIM_SEEN_KERNEL);
		k++;
	}
	sim_events_clear(&e);
}

Test(rows, other_launches_are_left_alone)
{
	struct sim_events e = { 0 };
	struct sim_range odd[3] = { { .alloc_id = 0, .bytes = 10 * MiB }, { .alloc_id = 1, .bytes = 4 * MiB },
				    { .alloc_id = 2, .bytes = 4 * MiB } };
	struct sim_range two[2] = { { .alloc_id = 0, .bytes = 16 * MiB }, { .alloc_id = 1, .bytes = 4 * MiB } };
	cr_assert_eq(sim_events_launch(&e, 0, 3, odd, 0), 0);
	cr_assert_eq(sim_events_launch(&e, 0, 2, two, 0), 0);
	cr_expect_eq(sim_row_reads(&e), 0, "no whole multiple, or no pair of rows");
	sim_events_clear(&e);
}
