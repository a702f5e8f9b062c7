/* A trace's launches given a model's reads (overlay.c): the happy path and each refusal. */
#include <criterion/criterion.h>
#include <string.h>

#include "overlay.h"

static const struct sim_range whole = { .alloc_id = 0, .offset = 0, .bytes = 64 << 20, .touched = 64 << 20 };

/* A recorded run: one 64 MiB allocation, `launches` launches on stream 7 naming it whole, a mark between. */
static void recorded(struct sim_events *e, unsigned launches, uint64_t size)
{
	cr_assert_eq(sim_events_alloc(e, 0, size), 0);
	for (unsigned i = 0; i < launches; i++) {
		if (i == 1)
			cr_assert_eq(sim_events_mark(e), 0);
		cr_assert_eq(sim_events_launch(e, 7, 1, &whole, 0), 0);
		e->ev[e->n - 1].t = 1000 * (i + 1);
	}
}

/* Its model: the same allocation, two launches reading a thin piece each, and the scan's guess. */
static void model(struct sim_events *e)
{
	cr_assert_eq(sim_events_alloc(e, 0, 64 << 20), 0);
	for (unsigned i = 0; i < 2; i++) {
		struct sim_range r[2] = {
			{ .alloc_id = 0, .offset = i << 21, .bytes = 1 << 21, .touched = 4096, .pattern = SIM_PIECES,
			  .seen = SIM_SEEN_KERNEL },
			{ .alloc_id = 0, .offset = 0, .bytes = 64 << 20, .seen = SIM_SEEN_SCAN },
		};
		cr_assert_eq(sim_events_launch(e, 0, 2, r, 5.0 * i), 0);
	}
}

Test(overlay, launches_read_the_models_ranges_and_keep_the_recorded_rest)
{
	struct sim_events t = { 0 }, m = { 0 };
	recorded(&t, 2, 64 << 20);
	model(&m);
	char err[256] = "";
	cr_assert_eq(sim_overlay_reads(&t, &m, err, sizeof err), 0, "%s", err);
	unsigned k = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct sim_launch *l = &t.ev[i].launch;
		if (t.ev[i].kind != SIM_EV_LAUNCH)
			continue;
		cr_expect_eq(l->n, 2);
		cr_expect_eq(l->ranges[0].offset, (uint64_t)k << 21, "launch %u reads the model's piece", k);
		cr_expect_eq(l->ranges[0].seen, SIM_SEEN_KERNEL);
		cr_expect_eq(l->ranges[1].seen, SIM_SEEN_SCAN, "the scan's guess stays a guess");
		cr_expect_eq(l->compute_ns, 5.0 * k);
		cr_expect_eq(l->stream, 7, "the recorded stream stays");
		cr_expect_eq(t.ev[i].t, 1000 * (k + 1), "the recorded issue time stays");
		k++;
	}
	cr_expect_eq(k, 2);
	cr_expect_eq(t.ev[2].kind, SIM_EV_MARK, "the recorded mark stays where it was");
	sim_events_clear(&t);
	sim_events_clear(&m);
}

/* A refusal leaves the trace as it was: its launches still name the whole allocation. */
static void untouched(const struct sim_events *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].kind == SIM_EV_LAUNCH) {
			cr_expect_eq(t->ev[i].launch.n, 1);
			cr_expect_eq(t->ev[i].launch.ranges[0].bytes, whole.bytes);
		}
}

/* A recorded run of `launches` launches over `size` bytes, given the model's reads: refused, saying why. */
static void expect_refused(unsigned launches, uint64_t size, const char *why)
{
	struct sim_events t = { 0 }, m = { 0 };
	recorded(&t, launches, size);
	model(&m);
	char err[256] = "";
	cr_expect_eq(sim_overlay_reads(&t, &m, err, sizeof err), -1);
	cr_expect(strstr(err, why), "%s", err);
	untouched(&t);
	sim_events_clear(&t);
	sim_events_clear(&m);
}

Test(overlay, another_launch_count_is_refused)
{
	expect_refused(3, 64 << 20, "the model has 2 launches, the trace 3");
}

Test(overlay, another_allocation_size_is_refused)
{
	expect_refused(2, 32 << 20, "allocation 0 (67108864 bytes) is not the trace's");
}
