/*
 * --launches async (replay_async.c) against a stub variant that notes when
 * each of its hooks is called: the host issues at its recorded pace while
 * the GPU runs the kernels in turn, a wait, a flush and a free hold the
 * host until the GPU is done, and the variant's clock never runs back.
 * The stub's kernels cost 10 ms a GiB read (its access), so times are exact.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "replay.h"

struct call {
	char hook; /* i issue, b before_launch, a after_launch, v advance, f free */
	uint64_t at;
};

struct stub {
	struct call calls[256];
	unsigned n;
	uint64_t ready_after_ns; /* what issue says the launch waits for */
	uint64_t latest;         /* the latest time any hook was given */
	bool ran_back;
};

static struct stub the_stub;

static void note(char hook, uint64_t at)
{
	struct stub *s = &the_stub;
	if (at < s->latest)
		s->ran_back = true;
	s->latest = at > s->latest ? at : s->latest;
	if (s->n < sizeof s->calls / sizeof s->calls[0] && hook != 'v')
		s->calls[s->n++] = (struct call){ hook, at };
}

static void *st_start(const struct sim_env *env) { return &the_stub; }
static uint64_t st_alloc(void *v, uint64_t id, uint64_t size, unsigned flags, uint64_t now) { return 0; }
static void st_free(void *v, uint64_t id, uint64_t now) { note('f', now); }
static uint64_t st_before(void *v, const struct sim_launch *l, uint64_t now)
{
	note('b', now);
	return now;
}
static uint64_t st_issue(void *v, const struct sim_launch *l, uint64_t now)
{
	note('i', now);
	return now + the_stub.ready_after_ns;
}
static double st_access(void *v, uint64_t id, uint64_t block, uint64_t bytes, uint64_t touched, enum sim_pattern pat,
			bool write, uint64_t now)
{
	return (double)bytes / SIM_GIB * 10e6;
}
static void st_after(void *v, const struct sim_launch *l, uint64_t end) { note('a', end); }
static void st_advance(void *v, uint64_t now) { note('v', now); }
static void st_counts(void *v, struct sim_counts *out) { memset(out, 0, sizeof *out); }
static void st_finish(void *v) {}

static const struct sim_variant with_issue = {
	.name = "stub", .start = st_start, .alloc = st_alloc, .free = st_free, .before_launch = st_before,
	.issue = st_issue, .access = st_access, .after_launch = st_after, .advance = st_advance,
	.counts = st_counts, .finish = st_finish,
};
static struct sim_variant without_issue;

static struct sim_profile profile;
static struct sim_events ev;
static const struct sim_range one_gib = { .alloc_id = 0, .offset = 0, .bytes = SIM_GIB, .pattern = SIM_STREAM,
					  .touched = SIM_GIB };

static const uint64_t ms = 1000000;

static void setup(void)
{
	memset(&the_stub, 0, sizeof the_stub);
	sim_profile_default(&profile);
	profile.launch_us = 0; /* the kernels' cost is their reads alone */
	without_issue = with_issue;
	without_issue.issue = NULL;
	memset(&ev, 0, sizeof ev);
}

static void teardown(void) { sim_events_clear(&ev); }

/* A launch reading the 1 GiB allocation 0 (10 ms on the stub), issued at t. */
static void launch_at(uint64_t t)
{
	cr_assert(!sim_events_launch(&ev, 0, 1, &one_gib, 0));
	ev.ev[ev.n - 1].t = t;
}

/* Three launches issued 1 ms apart, then the host waits from 3 ms to 100 ms (as recorded), and frees. */
static void burst(void)
{
	cr_assert(!sim_events_alloc(&ev, 0, SIM_GIB));
	ev.ev[ev.n - 1].t = 1;
	launch_at(1 * ms);
	launch_at(2 * ms);
	launch_at(3 * ms);
	cr_assert(!sim_events_wait(&ev, 3 * ms, 100 * ms));
	cr_assert(!sim_events_free(&ev, 0));
	ev.ev[ev.n - 1].t = 101 * ms;
}

static struct sim_result run(const struct sim_variant *v, bool async)
{
	struct sim_env env = { .profile = &profile, .budget = 16 * SIM_GIB, .launches = async ? SIM_LAUNCHES_ASYNC : SIM_LAUNCHES_SYNC };
	struct sim_result r;
	cr_assert(!sim_run(v, &env, &ev, &r));
	return r;
}

static uint64_t nth(char hook, unsigned k)
{
	for (unsigned i = 0; i < the_stub.n; i++)
		if (the_stub.calls[i].hook == hook && !k--)
			return the_stub.calls[i].at;
	cr_assert_fail("no call %c #%u", hook, k);
	return 0;
}

/* The replay was sync: issue never called. */
static void expect_replayed_sync(const char *why)
{
	for (unsigned i = 0; i < the_stub.n; i++)
		cr_expect_neq(the_stub.calls[i].hook, 'i', "%s", why);
}

Test(async, the_host_issues_ahead_of_its_gpu, .init = setup, .fini = teardown)
{
	burst();
	struct sim_result r = run(&with_issue, true);
	/* the policy decides when the host issues, not when the GPU gets there */
	cr_expect_eq(nth('i', 0), 1 * ms);
	cr_expect_eq(nth('i', 1), 2 * ms);
	cr_expect_eq(nth('i', 2), 3 * ms);
	/* the kernels run back to back from the first issue: 1 + 3 x 10 ms */
	cr_expect_eq(r.launches, 3);
	cr_expect(fabs(r.seconds - 0.031) < 1e-9, "ended at %g s", r.seconds);
	cr_expect(fabs(r.window_seconds - 0.030) < 1e-9, "window %g s", r.window_seconds);
	/* the free waits for the GPU: 31 ms, then the recorded 1 ms of host work after the wait */
	cr_expect_eq(nth('f', 0), 32 * ms);
	cr_expect(!the_stub.ran_back, "a hook was given a time before an earlier one");
}

Test(async, a_kernel_starts_when_what_it_waits_for_has_landed, .init = setup, .fini = teardown)
{
	burst();
	the_stub.ready_after_ns = 25 * ms; /* each launch's promotions take 25 ms from its issue */
	struct sim_result r = run(&with_issue, true);
	/* 26, 36 (27 is earlier: the GPU is busy until 36), 46; the last ends at 56 */
	cr_expect(fabs(r.seconds - 0.056) < 1e-9, "ended at %g s", r.seconds);
	cr_expect(!the_stub.ran_back);
}

Test(async, a_variant_without_a_host_part_runs_at_the_kernels_start, .init = setup, .fini = teardown)
{
	burst();
	struct sim_result r = run(&without_issue, true);
	cr_expect_eq(nth('b', 0), 1 * ms);
	cr_expect_eq(nth('b', 1), 11 * ms);
	cr_expect_eq(nth('b', 2), 21 * ms);
	cr_expect_eq(nth('a', 2), 31 * ms);
	cr_expect(fabs(r.seconds - 0.031) < 1e-9);
	cr_expect(!the_stub.ran_back);
}

Test(async, sync_issues_each_launch_once_the_one_before_has_ended, .init = setup, .fini = teardown)
{
	burst();
	run(&with_issue, false);
	cr_expect_eq(nth('b', 0), 1 * ms);
	cr_expect_eq(nth('b', 1), 11 * ms); /* the policy sees the launch when the GPU gets to it */
	cr_expect_eq(nth('b', 2), 21 * ms);
	expect_replayed_sync("sync called issue");
}

Test(async, a_trace_without_waits_replays_sync, .init = setup, .fini = teardown)
{
	cr_assert(!sim_events_alloc(&ev, 0, SIM_GIB));
	launch_at(1 * ms);
	launch_at(2 * ms);
	run(&with_issue, true);
	nth('b', 1);
	expect_replayed_sync("a trace without waits was replayed async");
}

Test(async, a_flush_marks_the_window_once_the_gpu_is_done, .init = setup, .fini = teardown)
{
	cr_assert(!sim_events_alloc(&ev, 0, SIM_GIB));
	launch_at(1 * ms);
	launch_at(2 * ms);
	cr_assert(!sim_events_wait(&ev, 2 * ms, 21 * ms)); /* the program synchronises: its kernels end at 21 ms */
	cr_assert(!sim_events_mark(&ev));                  /* then ember_flush(), recorded as it returned */
	ev.ev[ev.n - 1].t = 21 * ms;
	launch_at(22 * ms);
	cr_assert(!sim_events_wait(&ev, 22 * ms, 40 * ms));
	struct sim_result r = run(&with_issue, true);
	cr_expect(fabs(r.window_seconds - 0.011) < 1e-9, "window %g s: from the flush at 21 ms to 32", r.window_seconds);
	cr_expect(!the_stub.ran_back);
}
