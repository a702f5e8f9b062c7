/* Expert gathers (gathers.c): the source kept as the scan's guess, two whole experts read instead. */
#include <criterion/criterion.h>

#include "gathers.h"

static const uint64_t MiB = 1 << 20;

static void gather(struct sim_events *e)
{
	struct sim_range r[3] = {
		{ .alloc_id = 9, .bytes = 112 * MiB, .touched = 112 * MiB },  /* the destination: 2 of 8 */
		{ .alloc_id = 4, .bytes = 448 * MiB, .touched = 448 * MiB },  /* the layer's stacked experts */
		{ .alloc_id = 8, .offset = 4096, .bytes = 32, .touched = 32 }, /* the index */
	};
	cr_assert_eq(sim_events_launch(e, 0, 3, r, 0), 0);
}

Test(gathers, the_source_is_the_scans_guess_and_two_experts_are_read)
{
	struct sim_events e = { 0 };
	gather(&e);
	cr_assert_eq(sim_gather_reads(&e, 8, 2, 1), 1);
	const struct sim_launch *l = &e.ev[0].launch;
	cr_assert_eq(l->n, 5);
	cr_expect_eq(l->ranges[1].seen, SIM_SEEN_SCAN, "the whole tensor: credited, not read");
	cr_expect_eq(l->ranges[0].seen, SIM_SEEN_BOTH, "the destination as it was");
	uint64_t first = l->ranges[3].offset, second = l->ranges[4].offset;
	for (int k = 3; k < 5; k++) {
		cr_expect_eq(l->ranges[k].alloc_id, 4);
		cr_expect_eq(l->ranges[k].bytes, 56 * MiB, "one expert");
		cr_expect_eq(l->ranges[k].offset % (56 * MiB), 0, "a whole one");
		cr_expect_lt(l->ranges[k].offset, 448 * MiB);
		cr_expect_eq(l->ranges[k].seen, SIM_SEEN_KERNEL);
	}
	cr_expect_neq(first, second, "two experts, not one twice");
	sim_events_clear(&e);
}

Test(gathers, the_same_seed_routes_alike)
{
	struct sim_events a = { 0 }, b = { 0 };
	for (int i = 0; i < 16; i++) {
		gather(&a);
		gather(&b);
	}
	cr_assert_eq(sim_gather_reads(&a, 8, 2, 7), 16);
	cr_assert_eq(sim_gather_reads(&b, 8, 2, 7), 16);
	unsigned seen = 0;
	for (int i = 0; i < 16; i++) {
		cr_expect_eq(a.ev[i].launch.ranges[3].offset, b.ev[i].launch.ranges[3].offset);
		seen |= 1u << (a.ev[i].launch.ranges[3].offset / (56 * MiB));
	}
	cr_expect_gt(__builtin_popcount(seen), 2, "and the routing varies between tokens");
	sim_events_clear(&a);
	sim_events_clear(&b);
}

Test(gathers, other_launches_are_left_alone)
{
	struct sim_events e = { 0 };
	struct sim_range halves[3] = { { .alloc_id = 1, .bytes = 224 * MiB }, { .alloc_id = 2, .bytes = 448 * MiB },
				       { .alloc_id = 3, .bytes = 32 } };
	struct sim_range two[2] = { { .alloc_id = 1, .bytes = 112 * MiB }, { .alloc_id = 2, .bytes = 448 * MiB } };
	cr_assert_eq(sim_events_launch(&e, 0, 3, halves, 0), 0);
	cr_assert_eq(sim_events_launch(&e, 0, 2, two, 0), 0);
	cr_expect_eq(sim_gather_reads(&e, 8, 2, 1), 0, "half the size, or no index: not a gather");
	cr_expect_eq(e.ev[0].launch.n, 3);
	cr_expect_eq(sim_gather_reads(&e, 8, 3, 1), 0, "top 3 of 8: no whole ratio, refused");
	sim_events_clear(&e);
}
