/* The trace reader on good, malformed and truncated input. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "trace.h"

static int read_str(const char *text, struct sim_events *e, struct sim_trace_info *info, char *err)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	cr_assert(f);
	int rc = sim_trace_read(f, "mem", e, info, err, 256);
	fclose(f);
	return rc;
}

static const char good[] =
	"ember-trace 1\n"
	"# a comment\n"
	"D 1 8589934592 1 1\n"
	"D 0 4294967296 3865470566 3435973836\n"
	"A 10 0 0 1048576 m\n"
	"A 11 1 0 8388608 c\n"
	"P 12 0 1048576\n"
	"L 20 5 2 0:0:1048576 1:4096:65536\n"
	"M 30 1 0 1 P 1 123456\n"
	"H 31 0 0 4096\n"
	"P 40 0 -1048576\n"
	"F 50 0\n"
	"E 60\n";

Test(trace, good)
{
	struct sim_events e = { 0 };
	struct sim_trace_info info;
	char err[256];
	cr_assert_eq(read_str(good, &e, &info, err), 0, "%s", err);
	cr_expect_eq(info.skipped, 0);
	cr_expect_eq(info.budget, 4294967296ull, "device 0's D line wins");
	cr_expect(info.ended);
	cr_expect_eq(info.working_set, 1048576 + 8388608);
	/* A A P L P F E: M, H and D add no events; E ends the replay's timers */
	cr_assert_eq(e.n, 7);
	cr_expect_eq(e.ev[0].kind, SIM_EV_ALLOC);
	cr_expect_eq(e.ev[1].size, 8388608);
	cr_expect_eq(e.ev[2].plain, 1048576);
	const struct sim_launch *l = &e.ev[3].launch;
	cr_assert_eq(e.ev[3].kind, SIM_EV_LAUNCH);
	cr_expect_eq(l->stream, 5);
	cr_assert_eq(l->n, 2);
	cr_expect_eq(l->ranges[1].alloc_id, 1);
	cr_expect_eq(l->ranges[1].offset, 4096);
	cr_expect_eq(l->ranges[1].bytes, 65536);
	cr_expect_eq(l->ranges[1].touched, 65536, "trace ranges are streaming reads of all their bytes");
	cr_expect_eq(l->ranges[1].pattern, SIM_STREAM);
	cr_expect_eq(e.ev[4].plain, -1048576);
	cr_expect_eq(e.ev[5].kind, SIM_EV_FREE);
	cr_expect_eq(e.ev[6].kind, SIM_EV_END);
	cr_expect_eq(e.ev[3].t, 20, "events keep their recorded times");
	cr_expect_eq(e.ev[1].flags, SIM_ALLOC_CONVERTED, "kind c is a converted allocation");
	sim_events_clear(&e);
}

Test(trace, version_2_names_the_kernel_and_the_arguments_launch_order_follows)
{
	struct sim_events e = { 0 };
	struct sim_trace_info info;
	char err[256];
	static const char v2[] = "ember-trace 2\n"
				 "A 10 0 0 67108864 m\n"
				 "L 20 5 7 3 0:0:4194304:1 0:8388608:4194304 0:16777216:4194304:2\n"
				 "L 21 5 - 1 0:0:4194304:1\n"
				 "L 22 5 7 1 0:0:4194304:99\n"
				 "L 23 5 1 0:0:4194304\n"
				 "E 30\n";
	cr_assert_eq(read_str(v2, &e, &info, err), 0, "%s", err);
	cr_expect_eq(info.skipped, 2, "an argument past 63 and a line without its kernel are malformed");
	cr_assert_eq(e.n, 4);
	const struct sim_launch *l = &e.ev[1].launch;
	cr_expect_eq(l->n, 3);
	cr_expect_eq(l->kernel, 7);
	cr_assert_eq(l->nfollow, 2, "only the ranges with an argument are followed");
	cr_expect_eq(l->follow[0].arg, 1);
	cr_expect_eq(l->follow[1].arg, 2);
	cr_expect_eq(l->follow[1].offset, 16777216);
	cr_expect_eq(l->follow[1].bytes, 4194304);
	cr_expect_eq(e.ev[2].launch.nfollow, 0, "an unknown kernel ('-') is not followed");
	cr_expect_eq(e.ev[2].launch.n, 1);
	sim_events_clear(&e);
}

Test(trace, malformed_lines_skipped_and_counted)
{
	static const char text[] =
		"ember-trace 1\n"
		"A 10 0 0 1048576 m\n"
		"A 10 1 0 1048576 x\n"          /* bad kind */
		"L 20 5 2 0:0:4096\n"           /* says 2 ranges, has 1 */
		"L 20 5 1 0:0:4096 extra\n"     /* trailing junk */
		"L 20 5 1 0-0-4096\n"           /* bad range syntax */
		"Z 1 2 3\n"                     /* unknown record */
		"Q 15 0 1\n"                    /* a host phase numbered 0 */
		"Q 15 1 2\n"                    /* seen neither 0 nor 1 */
		"F x\n"                         /* not a number */
		"D 0 1 2\n"                     /* a field short */
		"M 30 1 0 1 X 1 5\n"            /* neither P nor D */
		"L 21 5 1 0:0:4096\n"
		"E 60\n";
	struct sim_events e = { 0 };
	struct sim_trace_info info;
	char err[256];
	cr_assert_eq(read_str(text, &e, &info, err), 0, "%s", err);
	cr_expect_eq(info.skipped, 10);
	cr_expect_eq(info.first_bad, 3);
	cr_expect_eq(info.budget, 0, "the bad D line was not applied");
	cr_assert_eq(e.n, 3);
	cr_expect_eq(e.ev[1].kind, SIM_EV_LAUNCH);
	cr_expect_eq(e.ev[2].kind, SIM_EV_END);
	sim_events_clear(&e);
}

Test(trace, truncated_replays_what_is_there)
{
	/* cut mid-line by a crash: no E, last line partial */
	static const char text[] = "ember-trace 1\nA 10 0 0 4194304 m\nL 20 5 1 0:0:4194304\nL 21 5 1 0:0:41";
	struct sim_events e = { 0 };
	struct sim_trace_info info;
	char err[256];
	cr_assert_eq(read_str(text, &e, &info, err), 0, "%s", err);
	cr_expect_not(info.ended);
	cr_expect_eq(e.n, 3, "the partial launch still parses: its range is shorter");
	sim_events_clear(&e);
	static const char cut[] = "ember-trace 1\nA 10 0 0 4194304 m\nL 20 5 2 0:0:4";
	cr_assert_eq(read_str(cut, &e, &info, err), 0, "%s", err);
	cr_expect_eq(info.skipped, 1);
	cr_expect_eq(e.n, 1);
	sim_events_clear(&e);
}

Test(trace, unknown_header_is_an_error)
{
	struct sim_events e = { 0 };
	struct sim_trace_info info;
	char err[256];
	cr_expect_eq(read_str("ember-trace 3\nE 1\n", &e, &info, err), -1);
	cr_expect_eq(read_str("ember-trace 0\nE 1\n", &e, &info, err), -1);
	cr_expect(strstr(err, "unknown trace header"), "%s", err);
	cr_expect_eq(read_str("A 10 0 0 1 m\n", &e, &info, err), -1);
	cr_expect_eq(read_str("ember-trace 1 extra\n", &e, &info, err), -1);
	cr_expect_eq(read_str("", &e, &info, err), -1);
	cr_expect(strstr(err, "empty"), "%s", err);
	sim_events_clear(&e);
}

Test(trace, waits_are_read_and_mark_the_trace)
{
	static const char text[] =
		"ember-trace 1\n"
		"A 10 0 0 1048576 m\n"
		"L 20 5 1 0:0:4096\n"
		"W 30 900030\n"        /* the host waited 900 us */
		"W 40 30\n"            /* ends before it starts: malformed */
		"L 900040 5 1 0:0:4096\n"
		"E 900100\n";
	struct sim_events e = { 0 };
	struct sim_trace_info info;
	char err[256];
	cr_assert_eq(read_str(text, &e, &info, err), 0, "%s", err);
	cr_expect_eq(info.skipped, 1);
	cr_expect(e.waits_recorded);
	cr_assert_eq(e.n, 5);
	cr_expect_eq(e.ev[2].kind, SIM_EV_WAIT);
	cr_expect_eq(e.ev[2].t, 30);
	cr_expect_eq(e.ev[2].until, 900030);
	sim_events_clear(&e);
}

Test(trace, ranges_are_kept_inside_their_allocations)
{
	/* found by fuzz_trace: a range of 2^64 bytes had the replay walk blocks that do not exist */
	static const char text[] =
		"ember-trace 1\n"
		"A 10 0 0 4194304 m\n"
		"L 20 5 3 0:1048576:18446744073709551615 7:0:4096 0:8388608:4096\n"
		"E 30\n";
	struct sim_events e = { 0 };
	struct sim_trace_info info;
	char err[256];
	cr_assert_eq(read_str(text, &e, &info, err), 0, "%s", err);
	cr_assert_eq(e.n, 3);
	const struct sim_launch *l = &e.ev[1].launch;
	cr_assert_eq(l->n, 1, "the range of an allocation never made, and one past the end, are dropped");
	cr_expect_eq(l->ranges[0].offset, 1048576);
	cr_expect_eq(l->ranges[0].bytes, 3145728, "cut at the allocation's end");
	sim_events_clear(&e);
}

Test(trace, host_phases_are_read)
{
	static const char text[] =
		"ember-trace 2\n"
		"A 10 0 0 1048576 m\n"
		"Q 20 1 1\n" /* seen by the worker while it lasted */
		"Q 30 2 0\n" /* seen at the launch after it */
		"E 40\n";
	struct sim_events e = { 0 };
	struct sim_trace_info info;
	char err[256];
	cr_assert_eq(read_str(text, &e, &info, err), 0, "%s", err);
	cr_expect_eq(info.skipped, 0);
	cr_assert_eq(e.n, 4);
	cr_expect_eq(e.ev[1].kind, SIM_EV_HOST_PHASE);
	cr_expect_eq(e.ev[1].t, 20);
	cr_expect_eq(e.ev[1].phase, 1);
	cr_expect(e.ev[1].seen);
	cr_expect_eq(e.ev[2].phase, 2);
	cr_expect_not(e.ev[2].seen);
	sim_events_clear(&e);
}
