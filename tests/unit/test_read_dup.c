/*
 * Read-mostly advice for memory kernels only read (EMBER_READ_MOSTLY,
 * shim/mech/read_dup.h), against the simulated driver: given once a
 * promotion of an allocation every launch passed through pointers to const
 * has landed; never to one a launch may write; withdrawn from all of it at
 * its first such launch or copy, and from a range before its demotion,
 * which then leaves no copy on the GPU; its refresh after a host phase not
 * ordered before the launch. The kernels' names are mangled as nvcc
 * mangles them, so the shim reads their parameter types.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"

#define MiB (1ull << 20)

static void *sim, *shim;
static CUfunction reader, writer;

/* read(float const*, unsigned long) and write(float*, unsigned long): what they say, over n floats. */
static void k_read(const struct ember_sim_launch *l, void **params)
{
	SYM(sim, ember_sim_access)(*(const float **)params[0], *(size_t *)params[1] * sizeof(float), 0);
}

static void k_write(const struct ember_sim_launch *l, void **params)
{
	SYM(sim, ember_sim_access)(*(float **)params[0], *(size_t *)params[1] * sizeof(float), 1);
}

static void start(const char *mode, const char *read_mostly)
{
	setenv("EMBER_MODE", mode, 1);
	setenv("EMBER_BUDGET", "64M", 1);
	setenv("EMBER_INTERVAL_MS", "5", 1);
	setenv("EMBER_SPAN", "8M", 1);
	if (read_mostly)
		setenv("EMBER_READ_MOSTLY", read_mostly, 1);
	else
		unsetenv("EMBER_READ_MOSTLY");
	sim = load_sim();
	shim = load_shim();
	/* a CUDA program's host code is C++: its runtime, whose demangler the shim reads kernel names with */
	cr_assert_not_null(dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL), "%s", dlerror());
	static const size_t two[] = { 8, 8 };
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("_Z4readPKfm", k_read, two, 2), 0);
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("_Z5writePfm", k_write, two, 2), 0);
	CUmodule mod = start_context(shim);
	CU_OK(SYM(shim, cuModuleGetFunction)(&reader, mod, "_Z4readPKfm"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&writer, mod, "_Z5writePfm"));
}

TestSuite(read_dup, .init = table1_watermarks, .timeout = 60);

/* Managed memory the host wrote, as a program's input is. */
static CUdeviceptr input(size_t bytes)
{
	CUdeviceptr p = 0;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, bytes, CU_MEM_ATTACH_GLOBAL));
	memset((void *)p, 1, bytes);
	return p;
}

static void launch(CUfunction f, CUdeviceptr p, size_t bytes)
{
	size_t n = bytes / sizeof(float);
	CU_OK(SYM(shim, cuLaunchKernel)(f, 1, 1, 1, 1, 1, 1, 0, NULL, (void *[]){ &p, &n }, NULL));
}

/* The 2 MiB blocks of a range: where they are, and what the advice and the mappings make of them. */
struct block_counts {
	unsigned on_gpu;         /* on GPU 0 */
	unsigned read_mostly;    /* carrying read-mostly advice */
	unsigned host_copies;    /* with a read-mostly copy in host memory as well */
	unsigned on_host;        /* in host memory */
	unsigned mapped_on_host; /* in host memory, GPU 0 reading them through a mapping, with no fault */
};

static struct block_counts count_blocks(CUdeviceptr p, size_t bytes)
{
	struct block_counts c = { 0 };
	for (size_t at = 0; at < bytes; at += 2 * MiB) {
		struct ember_sim_block_info b;
		cr_assert_eq(SYM(sim, ember_sim_block_info)((const void *)(p + at), &b), 0);
		c.on_gpu += b.location == 0;
		c.read_mostly += b.read_mostly != 0;
		c.host_copies += b.host_copy != 0;
		c.on_host += b.location == EMBER_SIM_HOST;
		c.mapped_on_host += b.location == EMBER_SIM_HOST && (b.mapped & 1u);
	}
	return c;
}

/* How many of the 2 MiB blocks of [p, p + bytes) are on GPU 0, and how many carry read-mostly advice. */
static void blocks(CUdeviceptr p, size_t bytes, unsigned *on_gpu, unsigned *read_mostly, unsigned *host_copies)
{
	struct block_counts c = count_blocks(p, bytes);
	*on_gpu = c.on_gpu;
	*read_mostly = c.read_mostly;
	if (host_copies)
		*host_copies = c.host_copies;
}

/* Static mode, EMBER_READ_MOSTLY as given (NULL: unset): 16 MiB of input read once, its blocks counted after. */
static CUdeviceptr read_once(const char *read_mostly, unsigned *on_gpu, unsigned *advised)
{
	start("static", read_mostly);
	CUdeviceptr p = input(16 * MiB);
	launch(reader, p, 16 * MiB);
	sync_and_flush(shim);
	blocks(p, 16 * MiB, on_gpu, advised, NULL);
	return p;
}

Test(read_dup, what_kernels_only_read_is_advised_once_resident_and_withdrawn_at_its_first_write)
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once("1", &on_gpu, &advised);
	cr_expect_eq(on_gpu, 8, "promoted whole at its first launch");
	cr_expect_eq(advised, 8, "and advised read-mostly once there");
	launch(writer, p, 16 * MiB);
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 0, "withdrawn before the launch that may write it runs");
	sync_and_flush(shim);
	launch(reader, p, 16 * MiB);
	sync_and_flush(shim);
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 0, "written once, never advised again");
}

/*
 * A host reading the results back (pathfinder's check between runs): under
 * the advice its reads make copies and the GPU keeps its own, where without
 * it every block it touched leaves the GPU. Returns the 16 MiB read.
 */
static CUdeviceptr checked_on_the_host(const char *read_mostly)
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once(read_mostly, &on_gpu, &advised);
	cr_assert_eq(on_gpu, 8);
	for (size_t at = 0; at < 16 * MiB; at += 2 * MiB) /* a word of each block, as a check reads a column */
		SYM(sim, ember_sim_access)((const void *)(p + at + 4096), sizeof(float), 0);
	return p;
}

Test(read_dup, a_host_read_leaves_the_gpu_its_copy)
{
	unsigned on_gpu, advised, copies;
	blocks(checked_on_the_host("1"), 16 * MiB, &on_gpu, &advised, &copies);
	cr_expect_eq(on_gpu, 8);
	cr_expect_eq(copies, 8, "a host copy beside each");
}

Test(read_dup, without_the_advice_a_host_read_takes_the_blocks)
{
	unsigned on_gpu, advised, copies;
	blocks(checked_on_the_host("0"), 16 * MiB, &on_gpu, &advised, &copies);
	cr_expect_eq(on_gpu, 0);
	cr_expect_eq(copies, 0);
}

/* What the next launch after the check (a host phase: its reads and 1,024 page faults) moved to the GPU. */
static uint64_t moved_by_the_next_launch(CUdeviceptr p)
{
	host_faults(1024, 0);
	uint64_t before = SYM(sim, ember_sim_bytes_migrated)(EMBER_SIM_TO_DEVICE);
	launch(reader, p, 16 * MiB);
	sync_and_flush(shim);
	unsigned on_gpu, advised;
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(on_gpu, 8, "all of it on the GPU for the launch");
	return SYM(sim, ember_sim_bytes_migrated)(EMBER_SIM_TO_DEVICE) - before;
}

/* pathfinder's next run: under the advice its refresh has nothing to bring back (117 ms on the H200 without). */
Test(read_dup, the_next_run_has_nothing_to_bring_back)
{
	CUdeviceptr p = checked_on_the_host("1");
	cr_expect_eq(moved_by_the_next_launch(p), 0);
}

Test(read_dup, without_the_advice_the_next_run_brings_back_what_the_check_took)
{
	CUdeviceptr p = checked_on_the_host("0");
	cr_expect_eq(moved_by_the_next_launch(p), 16 * MiB, "the refresh, ordered before the launch");
}

/* The virtual milliseconds step(p) took on the legacy stream, from its issue to its end. */
static float stream_ms(void (*step)(CUdeviceptr), CUdeviceptr p)
{
	CUevent before, after;
	CU_OK(SYM(shim, cuEventCreate)(&before, 0));
	CU_OK(SYM(shim, cuEventCreate)(&after, 0));
	CU_OK(SYM(shim, cuEventRecord)(before, NULL));
	step(p);
	CU_OK(SYM(shim, cuEventRecord)(after, NULL));
	CU_OK(SYM(shim, cuEventSynchronize)(after));
	float ms = 0;
	CU_OK(SYM(shim, cuEventElapsedTime)(&ms, before, after));
	CU_OK(SYM(shim, cuEventDestroy_v2)(before));
	CU_OK(SYM(shim, cuEventDestroy_v2)(after));
	return ms;
}

static void read_all(CUdeviceptr p)
{
	launch(reader, p, 16 * MiB);
}

/* The virtual milliseconds the launch after the check took on its stream, the refresh it waited for included. */
static float next_launch_ms(CUdeviceptr p)
{
	host_faults(1024, 0);
	return stream_ms(read_all, p);
}

/* Under the advice the refresh finds the GPU's copy and is not ordered before the launch (placement.c). */
Test(read_dup, the_next_run_does_not_wait_for_its_refresh)
{
	float ms = next_launch_ms(checked_on_the_host("1"));
	cr_expect_lt(ms, 0.088f, "%.3f ms: less than one prefetch call of the simulated driver (88 us)", ms);
}

/* A block the host wrote loses the GPU's copy: the refresh behind the launch brings it back all the same. */
Test(read_dup, what_the_host_wrote_the_refresh_brings_back)
{
	CUdeviceptr p = checked_on_the_host("1");
	SYM(sim, ember_sim_access)((const void *)(p + 4096), sizeof(float), 1);
	unsigned on_gpu, advised;
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_assert_eq(on_gpu, 7, "the written block left the GPU");
	cr_expect_eq(moved_by_the_next_launch(p), 2 * MiB);
}

Test(read_dup, without_the_advice_the_next_run_waits_for_its_refresh)
{
	float ms = next_launch_ms(checked_on_the_host("0"));
	cr_expect_geq(ms, 0.34f, "%.3f ms: 16 MiB brought back at 48.7 GB/s before the launch", ms);
}

/*
 * A graph of kernels that only read: launched again and again, once its
 * launches have nothing left to decide they are placed as one merged scan
 * (hooks_graph.c), which names no kernel and so takes nothing back.
 */
Test(read_dup, a_graph_of_readers_keeps_the_advice)
{
	start("static", "1");
	CUdeviceptr p = input(16 * MiB);
	size_t n = 16 * MiB / sizeof(float);
	void *params[] = { &p, &n };
	CUgraph graph;
	CUgraphExec exec = one_kernel_graph(shim, reader, params, &graph);
	for (int i = 0; i < 300; i++) /* past the launches an unsettled table waits between surveys */
		CU_OK(SYM(shim, cuGraphLaunch)(exec, NULL));
	sync_and_flush(shim);
	unsigned on_gpu, advised;
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(on_gpu, 8);
	cr_expect_eq(advised, 8, "still advised after the graph's launches (%u)", advised);
	CU_OK(SYM(shim, cuGraphExecDestroy)(exec));
	CU_OK(SYM(shim, cuGraphDestroy)(graph));
}

/* The application's own read-mostly advice is its own: Ember's withdrawal keeps off it, and gives none after it. */
Test(read_dup, the_application_s_own_advice_stays)
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once("1", &on_gpu, &advised);
	cr_assert_eq(advised, 8);
	CUmemLocation gpu = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
	CU_OK(SYM(shim, cuMemAdvise_v2)(p, 2 * MiB, CU_MEM_ADVISE_SET_READ_MOSTLY, gpu)); /* its first 2 MiB */
	launch(writer, p, 16 * MiB);
	sync_and_flush(shim);
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 1, "withdrawn from all but the application's range (%u advised)", advised);
	struct ember_sim_block_info b;
	cr_assert_eq(SYM(sim, ember_sim_block_info)((const void *)p, &b), 0);
	cr_expect(b.read_mostly, "the application's advice on its first block stays");
	CUdeviceptr q = input(8 * MiB);
	CU_OK(SYM(shim, cuMemAdvise_v2)(q, 2 * MiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, gpu));
	launch(reader, q, 8 * MiB);
	sync_and_flush(shim);
	blocks(q, 8 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 0, "placed by the application in part: Ember advises none of it");
}

static void advised_then_written(void)
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once("1", &on_gpu, &advised);
	launch(writer, p, 16 * MiB);
	sync_and_flush(shim);
}

/* The exit statistics say what the advice did (EMBER_READ_MOSTLY's A/B reads them), and the debug log when. */
Test(read_dup, the_statistics_count_what_was_advised_and_withdrawn)
{
	char log_path[] = "/tmp/ember-test-read-dup-XXXXXX", log[8192];
	setenv("EMBER_LOG", "debug", 1);
	temp_file_env("EMBER_LOG_FILE", log_path);
	char buf[8192];
	output_of_child("EMBER_STATS", advised_then_written, buf, sizeof buf);
	read_file(log_path, log, sizeof log);
	unlink(log_path);
	cr_expect_eq(lines_with(log, "every launch reads it through pointers to const"), 1, "%s", log);
	cr_expect_eq(lines_with(log, "a launch may write it; its read-mostly advice is withdrawn"), 1, "%s", log);
	cr_expect_eq(lines_with(log, "read-mostly advice (EMBER_READ_MOSTLY) on 0.02 GiB of resident ranges that kernels "
				     "only read, withdrawn from 0.02 GiB; 1 allocations written after it"),
		     1, "the exit summary: %s", log);
	cr_expect_not_null(strstr(buf, "\"read_mostly\": {\"bytes_advised\": 16777216, \"bytes_withdrawn\": 16777216, "
				       "\"allocations_written\": 1}"),
			   "%s", buf);
	cr_expect_not_null(strstr(buf, "\"EMBER_READ_MOSTLY\": \"1\""), "the settings name it: %s", buf);
}

Test(read_dup, on_by_default)
{
	unsigned on_gpu, advised;
	read_once(NULL, &on_gpu, &advised);
	cr_expect_eq(on_gpu, 8);
	cr_expect_eq(advised, 8);
}

Test(read_dup, zero_turns_it_off)
{
	unsigned on_gpu, advised;
	read_once("0", &on_gpu, &advised);
	cr_expect_eq(on_gpu, 8);
	cr_expect_eq(advised, 0);
}

Test(read_dup, memory_a_launch_may_write_is_never_advised)
{
	start("static", "1");
	CUdeviceptr p = input(16 * MiB), q = input(8 * MiB);
	unsigned on_gpu, advised;
	launch(writer, p, 16 * MiB); /* its first launch writes it */
	launch(reader, p, 16 * MiB);
	/* one launch reading q through a pointer to const and writing it through another: written */
	size_t n = 8 * MiB / sizeof(float);
	static const size_t three[] = { 8, 8, 8 };
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)("_Z4copyPKfPfm", k_read, three, 3), 0);
	CUfunction copy;
	CU_OK(SYM(shim, cuModuleGetFunction)(&copy, start_context(shim), "_Z4copyPKfPfm"));
	CU_OK(SYM(shim, cuLaunchKernel)(copy, 1, 1, 1, 1, 1, 1, 0, NULL, (void *[]){ &q, &q, &n }, NULL));
	sync_and_flush(shim);
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(on_gpu, 8);
	cr_expect_eq(advised, 0, "written by its first launch");
	blocks(q, 8 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(on_gpu, 4);
	cr_expect_eq(advised, 0, "passed to a pointer that may be written through");
}

/*
 * Copies and memsets (shim/abi/copies.def). Under the advice a copy into a
 * resident range collapses its copies page by page: 4 GiB from pinned host
 * memory took 21.4 s on the H200, against 0.084 s without it. A copy into
 * memory launches have read is a write to it.
 */
static float host_words[1024];

static void copy_htod(CUdeviceptr p)
{
	CU_OK(SYM(shim, cuMemcpyHtoD_v2)(p + 4096, host_words, sizeof host_words));
}

static void copy_htod_async(CUdeviceptr p)
{
	CU_OK(SYM(shim, cuMemcpyHtoDAsync_v2)(p + 4096, host_words, sizeof host_words, NULL));
}

static void copy_unified(CUdeviceptr p) /* cudaMemcpy with cudaMemcpyDefault: a synchronisation point too */
{
	CU_OK(SYM(shim, cuMemcpy)(p + 4096, (CUdeviceptr)host_words, sizeof host_words));
}

static void copy_dtod_async(CUdeviceptr p)
{
	CU_OK(SYM(shim, cuMemcpyDtoDAsync_v2)(p + 4096, p + 8 * MiB, 4096, NULL));
}

static void memset_d8(CUdeviceptr p)
{
	CU_OK(SYM(shim, cuMemsetD8_v2)(p + 4096, 0, 4096));
}

static void memset_d32_async(CUdeviceptr p)
{
	CU_OK(SYM(shim, cuMemsetD32Async)(p + 4096, 0, 1024, NULL));
}

/* Each test its own process: the advice on 16 MiB read once, then one copy into it. */
static void copied_into_after_the_advice(void (*copy)(CUdeviceptr))
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once("1", &on_gpu, &advised);
	cr_assert_eq(advised, 8);
	copy(p);
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 0, "withdrawn from all of it before the copy");
	launch(reader, p, 16 * MiB);
	sync_and_flush(shim);
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 0, "copied into once, never advised again");
}

#define COPY_WITHDRAWS(copy) \
	Test(read_dup, copy##_withdraws_the_advice) { copied_into_after_the_advice(copy); }
COPY_WITHDRAWS(copy_htod)
COPY_WITHDRAWS(copy_htod_async)
COPY_WITHDRAWS(copy_unified)
COPY_WITHDRAWS(copy_dtod_async)
COPY_WITHDRAWS(memset_d8)
COPY_WITHDRAWS(memset_d32_async)

/* A graph's memset node writes its destination at every launch of the graph: its instantiation withdraws the advice. */
Test(read_dup, a_graph_s_memset_node_withdraws_the_advice)
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once("1", &on_gpu, &advised);
	cr_assert_eq(advised, 8);
	CUgraph g;
	CUgraphNode node;
	CUgraphExec exec;
	CU_OK(SYM(shim, cuGraphCreate)(&g, 0));
	CUDA_MEMSET_NODE_PARAMS m = { .dst = p + 4096, .pitch = 0, .value = 7, .elementSize = 4, .width = 16, .height = 1 };
	CU_OK(SYM(shim, cuGraphAddMemsetNode)(&node, g, NULL, 0, &m, NULL));
	CU_OK(SYM(shim, cuGraphInstantiateWithFlags)(&exec, g, 0));
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 0, "withdrawn at the instantiation");
	CU_OK(SYM(shim, cuGraphLaunch)(exec, NULL));
	sync_and_flush(shim);
	cr_expect_eq(((const unsigned *)(p + 4096))[15], 7u, "the node ran");
	CU_OK(SYM(shim, cuGraphExecDestroy)(exec));
	CU_OK(SYM(shim, cuGraphDestroy)(g));
}

/* An allocation advised read-mostly by a first read, and a capture begun on a new *stream. */
static CUdeviceptr capturing_after_a_read(CUstream *stream)
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once("1", &on_gpu, &advised);
	cr_assert_eq(advised, 8);
	CU_OK(SYM(shim, cuStreamCreate)(stream, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamBeginCapture_v2)(*stream, CU_STREAM_CAPTURE_MODE_RELAXED));
	return p;
}

/* The blocks of p still advised after a copy into it. */
static unsigned advised_after_a_copy(CUdeviceptr p)
{
	unsigned on_gpu, advised;
	memset_d8(p);
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	return advised;
}

/*
 * While a stream is captured, an advice call might invalidate the capture:
 * a copy then writes the allocation down and leaves the advice, which the
 * next copy outside the capture (or the graph's instantiation) withdraws.
 */
Test(read_dup, a_copy_during_a_capture_leaves_the_advice_until_after_it)
{
	unsigned on_gpu, advised;
	CUstream stream;
	CUgraph graph;
	CUdeviceptr p = capturing_after_a_read(&stream);
	CU_OK(SYM(shim, cuMemsetD32Async)(p + 4096, 0, 1024, stream));
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 8, "no advice call while the capture lasts");
	CU_OK(SYM(shim, cuStreamEndCapture)(stream, &graph));
	CU_OK(SYM(shim, cuGraphDestroy)(graph));
	memset_d8(p);
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 0, "withdrawn at the first copy after it");
}

/* A capture that ends with its stream's destruction ends as far as the advice is concerned too. */
Test(read_dup, a_capture_ended_by_its_stream_s_destruction_holds_nothing_back)
{
	CUstream stream;
	CUdeviceptr p = capturing_after_a_read(&stream);
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
	cr_expect_eq(advised_after_a_copy(p), 0, "withdrawn at once");
}

/* A capture on a stream of a context the program then destroys ends with it (cudaDeviceReset mid-capture). */
Test(read_dup, a_capture_ended_by_its_context_s_teardown_holds_nothing_back)
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once("1", &on_gpu, &advised);
	cr_assert_eq(advised, 8);
	CUcontext primary, own = own_context(shim, &primary);
	CUstream stream;
	CU_OK(SYM(shim, cuStreamCreate)(&stream, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamBeginCapture_v2)(stream, CU_STREAM_CAPTURE_MODE_RELAXED));
	CU_OK(SYM(shim, cuCtxDestroy_v2)(own));
	CU_OK(SYM(shim, cuCtxSetCurrent)(primary));
	cr_expect_eq(advised_after_a_copy(p), 0, "withdrawn at once");
}

/*
 * A capture that forks: side waits for an event recorded in the captured
 * stream, which draws it into the capture, and queues a memset of its own.
 * joined: the captured stream then waits for side's work.
 */
static void fork_into(CUstream captured, CUstream side, CUdeviceptr p, bool joined)
{
	CUevent forked, back;
	CU_OK(SYM(shim, cuEventCreate)(&forked, CU_EVENT_DISABLE_TIMING));
	CU_OK(SYM(shim, cuEventCreate)(&back, CU_EVENT_DISABLE_TIMING));
	CU_OK(SYM(shim, cuEventRecord)(forked, captured));
	CU_OK(SYM(shim, cuStreamWaitEvent)(side, forked, 0));
	CU_OK(SYM(shim, cuMemsetD32Async)(p + 8192, 0, 1024, side));
	if (joined) {
		CU_OK(SYM(shim, cuEventRecord)(back, side));
		CU_OK(SYM(shim, cuStreamWaitEvent)(captured, back, 0));
	}
	CU_OK(SYM(shim, cuEventDestroy_v2)(forked));
	CU_OK(SYM(shim, cuEventDestroy_v2)(back));
}

/* An allocation advised read-mostly by a first read, and a capture begun on *stream that forked into *side. */
static CUdeviceptr forked_capture(CUstream *stream, CUstream *side, bool joined)
{
	CUdeviceptr p = capturing_after_a_read(stream);
	CU_OK(SYM(shim, cuStreamCreate)(side, CU_STREAM_NON_BLOCKING));
	fork_into(*stream, *side, p, joined);
	return p;
}

/* An end that fails because a fork was not joined back still ends the capture, and holds nothing back. */
Test(read_dup, a_capture_ended_by_an_unjoined_fork_holds_nothing_back)
{
	CUstream stream, side;
	CUgraph graph = NULL;
	CUdeviceptr p = forked_capture(&stream, &side, false);
	cr_expect_eq(SYM(shim, cuStreamEndCapture)(stream, &graph), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
	cr_expect_null(graph);
	cr_expect_eq(advised_after_a_copy(p), 0, "withdrawn at once");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(side));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/*
 * Ending a capture on a stream it forked into invalidates the capture but
 * does not end it, and destroying that stream ends nothing: the advice
 * waits for the end on the stream that began it (ab-43's call 2 on an H100).
 */
Test(read_dup, a_forked_stream_ends_nothing)
{
	CUstream stream, side;
	CUgraph graph = NULL;
	CUdeviceptr p = forked_capture(&stream, &side, true);
	cr_expect_eq(SYM(shim, cuStreamEndCapture)(side, &graph), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	CU_OK(SYM(shim, cuStreamDestroy_v2)(side));
	cr_expect_eq(advised_after_a_copy(p), 8, "no advice call while the capture lasts");
	cr_expect_eq(SYM(shim, cuStreamEndCapture)(stream, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	cr_expect_null(graph);
	cr_expect_eq(advised_after_a_copy(p), 0, "withdrawn at the first copy after it");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/* An end on the legacy stream, which never captures, fails and ends no capture of another stream. */
Test(read_dup, an_end_on_the_legacy_stream_ends_nothing)
{
	CUstream stream;
	CUgraph graph = NULL;
	CUdeviceptr p = capturing_after_a_read(&stream);
	cr_expect_neq(SYM(shim, cuStreamEndCapture)(NULL, &graph), CUDA_SUCCESS);
	cr_expect_eq(advised_after_a_copy(p), 8, "no advice call while the capture lasts");
	CU_OK(SYM(shim, cuStreamEndCapture)(stream, &graph));
	CU_OK(SYM(shim, cuGraphDestroy)(graph));
	cr_expect_eq(advised_after_a_copy(p), 0, "withdrawn at the first copy after it");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/* One 64 KiB copy from the host into p's second block, on the legacy stream. */
static void copy_64k(CUdeviceptr p)
{
	static char words[64 << 10];
	CU_OK(SYM(shim, cuMemcpyHtoDAsync_v2)(p + 2 * MiB, words, sizeof words, NULL));
}

/*
 * What the hook saves, in the simulated driver's time: 64 KiB into memory
 * Ember advised goes at the link's rate once the first copy has withdrawn
 * the advice; into
 * a range the application advised itself (which Ember leaves alone) at the
 * 0.2 GB/s measured for copies under the advice.
 */
Test(read_dup, a_copy_into_advised_memory_runs_at_the_link_s_rate)
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once("1", &on_gpu, &advised);
	cr_assert_eq(advised, 8);
	stream_ms(copy_64k, p); /* the advice withdrawn, about 0.3 ms of advice calls for 16 MiB, once */
	float ms = stream_ms(copy_64k, p);
	cr_expect_lt(ms, 0.05f, "%.3f ms: the advice withdrawn", ms);
	CUmemLocation gpu = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
	CU_OK(SYM(shim, cuMemAdvise_v2)(p + 2 * MiB, 2 * MiB, CU_MEM_ADVISE_SET_READ_MOSTLY, gpu));
	ms = stream_ms(copy_64k, p);
	cr_expect_geq(ms, 0.3f, "%.3f ms: 64 KiB at 0.2 GB/s under the application's own advice", ms);
}

/* A loader's copies come before any launch has read the memory: they leave it to be advised. */
Test(read_dup, copies_before_the_first_launch_leave_it_to_be_advised)
{
	start("static", "1");
	CUdeviceptr p = input(16 * MiB);
	copy_htod(p);
	memset_d8(p);
	launch(reader, p, 16 * MiB);
	sync_and_flush(shim);
	unsigned on_gpu, advised;
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 8);
}

/* Copies into other memory leave an advised allocation alone. */
Test(read_dup, a_copy_elsewhere_leaves_the_advice)
{
	unsigned on_gpu, advised;
	CUdeviceptr p = read_once("1", &on_gpu, &advised);
	CUdeviceptr q = input(4 * MiB);
	copy_htod(q);
	memset_d8(q);
	float back[4];
	CU_OK(SYM(shim, cuMemcpyDtoH_v2)(back, p + 4096, sizeof back));
	blocks(p, 16 * MiB, &on_gpu, &advised, NULL);
	cr_expect_eq(advised, 8);
}

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 }, NULL);
}

/* b, 40 MiB, read again and again, and a no longer, until b has taken some of a's room. */
static void b_takes_the_room_of(CUdeviceptr a, CUdeviceptr b)
{
	unsigned on_gpu = 20, advised;
	for (int i = 0; i < 400 && on_gpu == 20; i++) {
		if (i)
			sleep_ms(5);
		launch(reader, b, 40 * MiB);
		sync_and_flush(shim);
		blocks(a, 40 * MiB, &on_gpu, &advised, NULL);
	}
	cr_assert_lt(on_gpu, 20, "a gave way to b");
}

/*
 * A demotion after a host's check has made a host copy of each block: the
 * advice withdrawn under the GPU preference, the copies collapse onto the
 * GPU, and the demotion then moves a mapped range to the host. Preferring
 * the host first would drop the GPU's copy and its mapping with it (an
 * H100, ember-readmostly-probe in ab-40's call 6: read back faulting, at
 * 12.7 GB/s against 51 mapped).
 */
Test(read_dup, a_demotion_after_a_host_check_leaves_the_range_mapped)
{
	start("adaptive", "1");
	CUdeviceptr a = input(40 * MiB), b = input(40 * MiB);
	unsigned on_gpu, advised, copies;
	launch(reader, a, 40 * MiB);
	sync_and_flush(shim);
	for (size_t at = 0; at < 40 * MiB; at += 2 * MiB)
		SYM(sim, ember_sim_access)((const void *)(a + at + 4096), sizeof(float), 0);
	blocks(a, 40 * MiB, &on_gpu, &advised, &copies);
	cr_assert_eq(on_gpu, 20);
	cr_assert_eq(copies, 20, "the check made a host copy of each block");
	b_takes_the_room_of(a, b);
	struct block_counts c = count_blocks(a, 40 * MiB);
	cr_expect_gt(c.on_host, 0);
	cr_expect_eq(c.mapped_on_host, c.on_host, "every block that left is read mapped, with no fault (%u of %u)",
		     c.mapped_on_host, c.on_host);
}

/* A demotion withdraws the advice, then prefers the host: no copy stays on the GPU. */
Test(read_dup, a_demotion_leaves_no_copy_on_the_gpu)
{
	start("adaptive", "1");
	CUdeviceptr a = input(40 * MiB), b = input(40 * MiB);
	unsigned on_gpu, advised, copies;
	launch(reader, a, 40 * MiB);
	sync_and_flush(shim);
	blocks(a, 40 * MiB, &on_gpu, &advised, NULL);
	cr_assert_eq(on_gpu, 20, "a, read, fills its room");
	cr_expect_eq(advised, 20);
	b_takes_the_room_of(a, b);
	blocks(a, 40 * MiB, &on_gpu, &advised, &copies);
	unsigned left = 20 - on_gpu;
	cr_expect_eq(advised, on_gpu, "the advice withdrawn from every block that left (%u of 20 left, %u advised)",
		     left, advised);
	blocks(b, 40 * MiB, &on_gpu, &advised, NULL);
	cr_expect_gt(on_gpu, 0);
	cr_expect_eq(advised, on_gpu, "b's promoted blocks advised in turn");
	cr_expect_leq(SYM(sim, ember_sim_device_resident_bytes)(0), 64 * MiB, "no duplicate left on the GPU past the budget");
}
