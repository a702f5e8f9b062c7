/*
 * Host phases (shim/signal/host_phase.h), against the simulated driver: a
 * host that reads results back between a synchronisation and the next
 * launch takes GPU-resident pages to host memory; when it took page faults
 * doing so, the next launch that references the allocation prefetches its
 * resident regions back first. The launches here touch nothing, so a block
 * found back on the GPU came back by that prefetch, not by a kernel's fault.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"

#define MiB (1ull << 20)

static void *sim, *shim;
static CUfunction fill;

static void start_with_budget(const char *mode, const char *refresh_faults, const char *budget)
{
	setenv("EMBER_MODE", mode, 1);
	setenv("EMBER_BUDGET", budget, 1);
	setenv("EMBER_REFRESH_FAULTS", refresh_faults, 1);
	sim = load_sim();
	shim = load_shim();
	CUmodule mod = start_context(shim);
	CU_OK(SYM(shim, cuModuleGetFunction)(&fill, mod, "ember_fill_u32"));
}

static void start(const char *mode, const char *refresh_faults)
{
	start_with_budget(mode, refresh_faults, "64M");
}

static int location_after_next_launch(CUdeviceptr p)
{
	launch_fill(shim, fill, p, 0);
	sync_and_flush(shim);
	return SYM(sim, ember_sim_block_location)((void *)p);
}

TestSuite(host_phase, .timeout = 60);

Test(host_phase, static_brings_back_what_the_host_read_at_the_next_launch)
{
	start("static", "256");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 16 * MiB);
	host_reads_back(shim, sim, fill, p, 16 * MiB, 1024, 0);
	cr_expect_eq(location_after_next_launch(p), 0, "prefetched back before the launch");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(p + 15 * MiB)), 0, "all of it");
	for (size_t i = 0; i < 16 * MiB; i += 4099)
		cr_assert_eq(((unsigned *)p)[i / 4], 7u, "element %zu", i / 4);
}

Test(host_phase, adaptive_brings_back_what_the_host_read_at_the_next_launch)
{
	start("adaptive", "256");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 16 * MiB);
	host_reads_back(shim, sim, fill, p, 16 * MiB, 1024, 0);
	cr_expect_eq(location_after_next_launch(p), 0, "prefetched back before the launch");
}

/* pathfinder's runs begin with a blocking copy: the phase began at the first wait after the last launch */
Test(host_phase, a_later_synchronisation_before_the_launch_keeps_the_phase)
{
	start("static", "256");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 16 * MiB);
	host_reads_back(shim, sim, fill, p, 16 * MiB, 1024, 0);
	CU_OK(SYM(shim, cuCtxSynchronize)());
	cr_expect_eq(location_after_next_launch(p), 0, "the faults before the second wait still count");
}

Test(host_phase, a_host_phase_without_page_faults_moves_nothing)
{
	start("static", "256");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 16 * MiB);
	host_reads_back(shim, sim, fill, p, 16 * MiB, 0, 0);
	cr_expect_eq(location_after_next_launch(p), EMBER_SIM_HOST, "no faults: no refresh");
}

Test(host_phase, fewer_faults_than_the_threshold_move_nothing)
{
	start("static", "4096");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 16 * MiB);
	host_reads_back(shim, sim, fill, p, 16 * MiB, 1024, 0);
	cr_expect_eq(location_after_next_launch(p), EMBER_SIM_HOST, "1,024 faults, 4,096 needed");
}

Test(host_phase, zero_turns_it_off)
{
	start("static", "0");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 16 * MiB);
	host_reads_back(shim, sim, fill, p, 16 * MiB, 1024, 0);
	cr_expect_eq(location_after_next_launch(p), EMBER_SIM_HOST);
}

Test(host_phase, each_allocation_is_refreshed_once_per_phase)
{
	start("static", "256");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 8 * MiB), q = resident_allocation(shim, sim, fill, 8 * MiB);
	host_reads_back(shim, sim, fill, p, 8 * MiB, 1024, 0);
	SYM(sim, ember_sim_access)((void *)q, 8 * MiB, 0);
	cr_expect_eq(location_after_next_launch(p), 0);
	/* q's first launch after the same phase brings it back too, though launches came between */
	cr_expect_eq(location_after_next_launch(q), 0);
	/* the host takes p again without another synchronisation: nothing tells Ember, so it stays */
	SYM(sim, ember_sim_access)((void *)p, 8 * MiB, 0);
	cr_expect_eq(location_after_next_launch(p), EMBER_SIM_HOST, "the phase was served once");
}

Test(host_phase, mapped_mode_moves_nothing)
{
	start("mapped", "256");
	CUdeviceptr p = 0;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, 8 * MiB, CU_MEM_ATTACH_GLOBAL));
	memset((void *)p, 0x11, 8 * MiB);
	launch_fill(shim, fill, p, 0);
	host_reads_back(shim, sim, fill, p, 8 * MiB, 1024, 0);
	cr_expect_eq(location_after_next_launch(p), EMBER_SIM_HOST);
}

/*
 * A refresh of what never left costs about a millisecond a GiB: a host
 * phase must last ten times what refreshing everything resident would cost
 * (a training loop's data loading takes faults between its steps).
 */
static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The phase is timed on the real clock, so a loaded machine (TSan on two
 * busy cores) can stretch 300 faults past 10 ms. The test times each try
 * from before its synchronisation to after the next launch, which holds
 * the shim's measure, and judges only a try that stayed short.
 */
Test(host_phase, a_phase_shorter_than_ten_times_its_refresh_moves_nothing)
{
	start_with_budget("static", "256", "2G");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 1024 * MiB); /* a refresh of 1 GiB: about 1 ms */
	for (int try = 0; try < 20; try++) {
		uint64_t began = ms_now();
		host_reads_back(shim, sim, fill, p, 2 * MiB, 300, 0); /* 300 faults in well under 10 ms, unloaded */
		int where = location_after_next_launch(p);
		if (ms_now() - began < 9) {
			cr_expect_eq(where, EMBER_SIM_HOST, "too short to pay for a refresh");
			return;
		}
	}
	cr_skip_test("no try stayed under 9 ms on this machine: the premise never held");
}

Test(host_phase, a_phase_long_enough_for_its_refresh_brings_it_back)
{
	start_with_budget("static", "256", "2G");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 1024 * MiB);
	host_reads_back(shim, sim, fill, p, 2 * MiB, 300, 30);
	cr_expect_eq(location_after_next_launch(p), 0, "30 ms of host time: a refresh of 1 GiB may follow");
}

/*
 * Adaptive, a flight then a host phase (policy.h's episodes): `seldom` is
 * read by two launches and fills the budget first, `often` by four. The
 * host's work begins while the arrivals are in their grace, so the worker
 * sees the phase before anything may give way; its passes try the
 * exchange again while the phase lasts, and once the grace is over they
 * exchange seldom for often, before any launch comes. With
 * EMBER_PHASE_EXCHANGE=0 often's tail stays mapped.
 *
 * The arrivals' grace outlasts the flight, however slowly it runs (under
 * TSan a launch of the simulated driver's fill takes some 170 ms, and the
 * passes' older rule took seldom for often within the flight; on CI's two
 * cores a TSan flight outlasted a grace of 3 s, in three cases of four);
 * by its end the flight's demand has decayed, so no pass takes it after.
 */
#define GRACE_MS "8000"

static void grace_outlasts_the_flight(void)
{
	setenv("EMBER_BASE_GRACE_MS", GRACE_MS, 1);
	setenv("EMBER_MAX_GRACE_MS", GRACE_MS, 1);
}

static void flight(CUdeviceptr *seldom, CUdeviceptr *often)
{
	cr_assert_str_eq(getenv("EMBER_BASE_GRACE_MS"), GRACE_MS, "set before the shim starts");
	CU_OK(SYM(shim, cuMemAllocManaged)(seldom, 32 * MiB, CU_MEM_ATTACH_GLOBAL));
	CU_OK(SYM(shim, cuMemAllocManaged)(often, 48 * MiB, CU_MEM_ATTACH_GLOBAL));
	for (int k = 0; k < 2; k++)
		launch_fill(shim, fill, *seldom, 32 * MiB / 4);
	for (int k = 0; k < 4; k++)
		launch_fill(shim, fill, *often, 48 * MiB / 4);
	sync_and_flush(shim);
	cr_assert_eq(SYM(sim, ember_sim_block_location)((void *)(*often + 46 * MiB)), EMBER_SIM_HOST,
		     "the first to come filled the budget");
}

static void host_work(void)
{
	size_t len = 1024 * 4096; /* the host's work: fresh pages, a fault each */
	unsigned char *fresh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(fresh, MAP_FAILED);
	for (size_t i = 0; i < len; i += 4096)
		fresh[i] = 1;
	munmap(fresh, len);
	long ms = atol(GRACE_MS) + 400; /* the arrivals' grace runs out while the phase lasts */
	struct timespec host = { ms / 1000, ms % 1000 * 1000000L };
	nanosleep(&host, NULL);
	cr_assert_eq(SYM(shim, ember_flush)(), 0);
}

static void flight_then_host_phase(CUdeviceptr *seldom, CUdeviceptr *often)
{
	flight(seldom, often);
	host_work();
}

Test(host_phase, adaptive_exchanges_what_the_runs_read_less_while_the_host_phase_lasts)
{
	grace_outlasts_the_flight();
	start("adaptive", "256");
	CUdeviceptr seldom, often;
	flight_then_host_phase(&seldom, &often);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(often + 46 * MiB)), 0,
		     "what the flight read more came in before the next launch");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)seldom), EMBER_SIM_HOST, "what it read less went");
}

Test(host_phase, phase_exchange_off_leaves_the_first_fill)
{
	setenv("EMBER_PHASE_EXCHANGE", "0", 1);
	grace_outlasts_the_flight();
	start("adaptive", "256");
	CUdeviceptr seldom, often;
	flight_then_host_phase(&seldom, &often);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(often + 46 * MiB)), EMBER_SIM_HOST,
		     "it waits for the next launch that names it");
}

/*
 * The flight under adaptive, then a launch on a second stream that credits
 * neither of its arrays (it fills device memory, which Ember does not place).
 */
static CUstream flight_then_a_side_launch(CUdeviceptr *seldom, CUdeviceptr *often, CUdeviceptr *scratch)
{
	grace_outlasts_the_flight();
	start("adaptive", "256");
	flight(seldom, often);
	CUstream side;
	CU_OK(SYM(shim, cuStreamCreate)(&side, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuMemAlloc_v2)(scratch, 4096));
	unsigned value = 7;
	size_t words = 1024;
	void *params[] = { scratch, &value, &words };
	CU_OK(SYM(shim, cuLaunchKernel)(fill, 1, 1, 1, 1, 1, 1, 0, side, params, NULL));
	return side;
}

/*
 * The same flight, then a launch on a second stream and a wait for the
 * first stream alone: the host's phase begins while the second may still
 * run, so no exchange is made beside it. Once the program waits for the
 * second stream too, the worker's next pass makes it.
 */
Test(host_phase, the_exchange_waits_until_every_stream_launched_on_was_waited_for)
{
	CUdeviceptr seldom, often, scratch;
	CUstream side = flight_then_a_side_launch(&seldom, &often, &scratch);
	CU_OK(SYM(shim, cuStreamSynchronize)(NULL));
	host_work();
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(often + 46 * MiB)), EMBER_SIM_HOST,
		     "nothing exchanged while the side stream may run");
	CU_OK(SYM(shim, cuStreamSynchronize)(side));
	struct timespec pass = { 0, 500 * 1000000L }; /* a few of the worker's passes */
	nanosleep(&pass, NULL);
	cr_assert_eq(SYM(shim, ember_flush)(), 0);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(often + 46 * MiB)), 0,
		     "exchanged once every stream was waited for");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)seldom), EMBER_SIM_HOST, "what it read less went");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(side));
	CU_OK(SYM(shim, cuMemFree_v2)(scratch));
}

/*
 * An event's stream is not known to Ember: a wait for an event is taken to
 * cover the one stream launched on, the common case of a program that
 * records an event behind its work and waits for it.
 */
Test(host_phase, an_event_wait_covers_the_one_stream_launched_on)
{
	CUdeviceptr seldom, often, scratch;
	CUstream side = flight_then_a_side_launch(&seldom, &often, &scratch);
	CUevent done;
	CU_OK(SYM(shim, cuEventCreate)(&done, CU_EVENT_DEFAULT));
	CU_OK(SYM(shim, cuEventRecord)(done, side));
	CU_OK(SYM(shim, cuEventSynchronize)(done));
	host_work();
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(often + 46 * MiB)), 0,
		     "exchanged while the host phase lasts");
	CU_OK(SYM(shim, cuEventDestroy_v2)(done));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(side));
	CU_OK(SYM(shim, cuMemFree_v2)(scratch));
}

/*
 * A context's teardown synchronises its work before it frees it: the side
 * launch ran in a context of its own, now destroyed, so the host's phase
 * that follows has the GPU idle and the exchange is made while it lasts.
 */
Test(host_phase, a_context_s_teardown_ends_its_streams_work)
{
	grace_outlasts_the_flight();
	start("adaptive", "256");
	CUdeviceptr seldom, often, scratch;
	flight(&seldom, &often);
	CUcontext primary, own = own_context(shim, &primary);
	CUmodule mod;
	CUfunction own_fill;
	CU_OK(SYM(shim, cuModuleLoadData)(&mod, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&own_fill, mod, "ember_fill_u32"));
	CUstream side;
	CU_OK(SYM(shim, cuStreamCreate)(&side, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuMemAlloc_v2)(&scratch, 4096));
	unsigned value = 7;
	size_t words = 1024;
	void *params[] = { &scratch, &value, &words };
	CU_OK(SYM(shim, cuLaunchKernel)(own_fill, 1, 1, 1, 1, 1, 1, 0, side, params, NULL));
	CU_OK(SYM(shim, cuCtxDestroy_v2)(own));
	CU_OK(SYM(shim, cuCtxSetCurrent)(primary));
	host_work();
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(often + 46 * MiB)), 0,
		     "exchanged while the host phase lasts");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)seldom), EMBER_SIM_HOST, "what it read less went");
}

/* A trace records the phase and who saw it (Q <t> <phase> <seen>), for ember-sim's replay to end the episode there. */
Test(host_phase, a_trace_records_the_host_phase_the_worker_saw)
{
	char path[] = "/tmp/ember-trace-XXXXXX";
	temp_file_env("EMBER_TRACE", path);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(60); /* a child whose assertion failed must not outlive the test */
		grace_outlasts_the_flight();
		start("adaptive", "256");
		CUdeviceptr seldom, often;
		flight_then_host_phase(&seldom, &often);
		exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	unsetenv("EMBER_TRACE");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char buf[16384];
	cr_assert_gt(read_file(path, buf, sizeof buf), 0);
	unlink(path);
	cr_expect(strstr(buf, "\nQ ") && strstr(strstr(buf, "\nQ "), " 1 1\n"), "%s", buf);
}
