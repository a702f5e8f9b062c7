/*
 * The simulated driver's EMBER_SIM_HAZARDS: work on one stream that touches
 * an allocation while another stream's work on it may still run, in
 * virtual time, is counted; work ordered by a synchronisation or an event,
 * or on one stream, is not, nor is work on disjoint parts of one
 * allocation; and nothing is counted unless asked for.
 */
#include <stdlib.h>

#include "ember_sim.h"
#include "harness.h"

#define MiB (1ull << 20)

struct two_streams {
	void *sim;
	CUstream a, b;
	CUdeviceptr p;
};

static struct two_streams start(bool hazards)
{
	if (hazards)
		setenv("EMBER_SIM_HAZARDS", "1", 1);
	else
		unsetenv("EMBER_SIM_HAZARDS");
	struct two_streams t = { .sim = load_sim() };
	CUcontext ctx;
	CU_OK(SYM(t.sim, cuInit)(0));
	CU_OK(SYM(t.sim, cuDevicePrimaryCtxRetain)(&ctx, 0));
	CU_OK(SYM(t.sim, cuCtxSetCurrent)(ctx));
	CU_OK(SYM(t.sim, cuStreamCreate)(&t.a, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(t.sim, cuStreamCreate)(&t.b, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(t.sim, cuMemAlloc_v2)(&t.p, 64 * MiB));
	return t;
}

/* 64 MiB written on stream s: some microseconds of work, queued. */
static void write_on(const struct two_streams *t, CUstream s)
{
	CU_OK(SYM(t->sim, cuMemsetD32Async)(t->p, 7, 16 * MiB, s));
}

static unsigned long long hazards(const struct two_streams *t)
{
	return SYM(t->sim, ember_sim_hazard_count)();
}

Test(sim_hazards, a_write_on_another_stream_while_the_first_still_writes_is_one)
{
	struct two_streams t = start(true);
	write_on(&t, t.a);
	write_on(&t, t.b);
	cr_expect_eq(hazards(&t), 1);
}

Test(sim_hazards, a_copy_that_reads_what_another_stream_still_writes_is_one)
{
	struct two_streams t = start(true);
	static char host[MiB];
	write_on(&t, t.a);
	CU_OK(SYM(t.sim, cuMemcpyDtoHAsync_v2)(host, t.p, sizeof host, t.b));
	cr_expect_eq(hazards(&t), 1);
}

Test(sim_hazards, work_after_a_synchronisation_is_none)
{
	struct two_streams t = start(true);
	write_on(&t, t.a);
	CU_OK(SYM(t.sim, cuCtxSynchronize)());
	write_on(&t, t.b);
	cr_expect_eq(hazards(&t), 0);
}

Test(sim_hazards, work_ordered_by_an_event_or_on_one_stream_is_none)
{
	struct two_streams t = start(true);
	CUevent done;
	CU_OK(SYM(t.sim, cuEventCreate)(&done, CU_EVENT_DISABLE_TIMING));
	write_on(&t, t.a);
	write_on(&t, t.a);
	CU_OK(SYM(t.sim, cuEventRecord)(done, t.a));
	CU_OK(SYM(t.sim, cuStreamWaitEvent)(t.b, done, 0));
	write_on(&t, t.b);
	cr_expect_eq(hazards(&t), 0);
}

/* 8 MiB at offset MiB into the allocation, written on stream s. */
static void write_part_on(const struct two_streams *t, size_t offset_mib, CUstream s)
{
	CU_OK(SYM(t->sim, cuMemsetD32Async)(t->p + offset_mib * MiB, 7, 2 * MiB, s));
}

Test(sim_hazards, writes_on_two_streams_to_disjoint_parts_are_none)
{
	struct two_streams t = start(true);
	write_part_on(&t, 0, t.a);
	write_part_on(&t, 8, t.b);
	write_part_on(&t, 16, t.a);
	write_part_on(&t, 24, t.b);
	cr_expect_eq(hazards(&t), 0);
}

Test(sim_hazards, a_write_overlapping_another_stream_s_part_is_one)
{
	struct two_streams t = start(true);
	write_part_on(&t, 0, t.a);
	write_part_on(&t, 8, t.a);
	write_part_on(&t, 12, t.b); /* its first 4 MiB are the second write's last */
	cr_expect_eq(hazards(&t), 1);
}

Test(sim_hazards, reads_of_one_part_on_two_streams_are_none)
{
	struct two_streams t = start(true);
	static char host[MiB];
	CU_OK(SYM(t.sim, cuMemcpyDtoHAsync_v2)(host, t.p, sizeof host, t.a));
	CU_OK(SYM(t.sim, cuMemcpyDtoHAsync_v2)(host, t.p, sizeof host, t.b));
	cr_expect_eq(hazards(&t), 0);
}

Test(sim_hazards, nothing_is_counted_unless_asked_for)
{
	struct two_streams t = start(false);
	write_on(&t, t.a);
	write_on(&t, t.b);
	cr_expect_eq(hazards(&t), 0);
}
