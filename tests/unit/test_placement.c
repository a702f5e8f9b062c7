/*
 * Mapped-by-default placement under a budget, against the simulated driver:
 * the budget holds, bytes stay intact, allocations of every shape work,
 * frees during promotion are safe and the application's hints win.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"
#include "host_memory.h"

#define MiB (1ull << 20)

static void *sim, *shim;
static CUfunction fill, reread;
static uint64_t budget = 64 * MiB;

/* The shim over the simulated driver, a primary context, and two kernels. */
static void start(const char *mode, const char *budget_text)
{
	setenv("EMBER_MODE", mode, 1);
	setenv("EMBER_BUDGET", budget_text, 1);
	sim = load_sim();
	shim = load_shim();
	CUmodule mod = start_context(shim);
	CU_OK(SYM(shim, cuModuleGetFunction)(&fill, mod, "ember_fill_u32"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread, mod, "ember_reread_sum"));
}

static void start_static(void)
{
	start("static", "64M");
}

static CUdeviceptr managed(size_t bytes)
{
	CUdeviceptr p = 0;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, bytes, CU_MEM_ATTACH_GLOBAL));
	return p;
}

static uint64_t resident(void)
{
	return SYM(sim, ember_sim_device_resident_bytes)(0);
}

static uint64_t peak(void)
{
	return SYM(sim, ember_sim_device_peak_resident_bytes)(0);
}

static void expect_within_budget(void)
{
	uint64_t high = budget / 100 * 90;
	cr_expect_leq(peak(), high, "the GPU held %llu bytes, over the %llu-byte high watermark",
		      (unsigned long long)peak(), (unsigned long long)high);
}

TestSuite(placement, .init = table1_watermarks, .timeout = 60);

Test(placement, allocations_start_mapped_and_advised)
{
	start_static();
	CUdeviceptr p = managed(8 * MiB);
	struct ember_sim_block_info b;
	cr_assert_eq(SYM(sim, ember_sim_block_info)((void *)p, &b), 0);
	cr_expect_eq(b.preferred, EMBER_SIM_HOST, "preferred location is the host");
	cr_expect(b.accessed_by & 1u, "GPU 0 maps it");
	cr_expect_eq(resident(), 0, "nothing moves before a launch");
}

/*
 * A driver call that holds the thread issuing a move is named in the debug
 * log, with the move's size: `call` made slow once, as the static split of
 * 32 MiB (under a span, so advised as its promotion is issued) goes out.
 */
static void expect_slow_call_named(const char *call, const char *line)
{
	char log[] = "/tmp/ember-slow-call-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "debug", 1);
	start_static();
	CUdeviceptr p = managed(32 * MiB);
	memset((void *)p, 0x5a, 32 * MiB);
	SYM(sim, ember_sim_slow_call)(call, 0, 1, 40 * 1000 * 1000);
	launch_reread(shim, reread, p, 32 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)p), 0, "the promotion went ahead");
	char buf[16384];
	read_file(log, buf, sizeof buf);
	unlink(log);
	cr_expect_eq(lines_with(buf, line), 1, "%s", buf);
	cr_expect_eq(lines_with(buf, " took "), 1, "only the slow one: %s", buf);
}

/* Advice is not stream-ordered: it holds the thread that gives it. */
Test(placement, a_slow_advice_is_named_in_the_debug_log)
{
	expect_slow_call_named("cuMemAdvise_v2", "advice to prefer the GPU for 32 MiB took");
}

/* So is a prefetch that held its thread before it was queued. */
Test(placement, a_slow_prefetch_is_named_in_the_debug_log)
{
	expect_slow_call_named("cuMemPrefetchAsync_v2", "a prefetch to the GPU for 32 MiB took");
}

/* A conversion that held the program's thread is named too, step by step: here the driver's allocation. */
Test(placement, a_slow_conversion_is_named_in_the_debug_log)
{
	char log[] = "/tmp/ember-slow-conversion-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "debug", 1);
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUdeviceptr fast, slow;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&fast, 2 * MiB));
	SYM(sim, ember_sim_slow_call)("cuMemAllocManaged", 0, 1, 40 * 1000 * 1000);
	CU_OK(SYM(shim, cuMemAlloc_v2)(&slow, 4 * MiB));
	char buf[16384];
	read_file(log, buf, sizeof buf);
	unlink(log);
	cr_expect_eq(lines_with(buf, "(4 MiB) took "), 1, "%s", buf);
	/* the 2 MiB one only if it too held the thread 5 ms (a sanitizer's build on a busy machine may) */
	for (const char *at = buf; (at = strstr(at, " MiB) took ")); at++) {
		double ms = 0;
		cr_expect(sscanf(at, " MiB) took %lf ms", &ms) == 1 && ms >= 5.0, "only conversions of 5 ms or more: %s",
			  buf);
	}
	char *line = strstr(buf, "(4 MiB) took ");
	double total = 0, allocating = 0;
	cr_assert(line && sscanf(line, "(4 MiB) took %lf ms: %lf allocating", &total, &allocating) == 2, "%s", buf);
	cr_expect_geq(allocating, 40.0, "the driver's allocation held it: %s", line);
	CU_OK(SYM(shim, cuMemFree_v2)(slow));
	CU_OK(SYM(shim, cuMemFree_v2)(fast));
}

/*
 * The program frees an allocation while the worker holds demotions of it
 * that it has not issued yet: they are dropped, and nothing is reported as
 * a failure. They used to be reported as CUresult 201 (invalid context),
 * which on the H200 looked like a driver fault at every program's exit.
 * Here a plain allocation takes the budget from a resident one, the worker
 * reclaims it in several batches, the first batch's advice holds the
 * worker, and the free comes meanwhile.
 */
Test(placement, demotions_of_an_allocation_freed_before_their_issue_are_dropped_quietly)
{
	char log[] = "/tmp/ember-freed-moves-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "debug", 1);
	start("adaptive", "64M");
	CUdeviceptr p = managed(56 * MiB);
	memset((void *)p, 0x5a, 56 * MiB);
	launch_reread(shim, reread, p, 56 * MiB);
	sync_and_flush(shim);
	cr_assert_gt(resident(), 48 * MiB, "the allocation is resident");
	SYM(sim, ember_sim_slow_call)("cuMemAdvise_v2", 0, 1, 1000 * 1000 * 1000);
	CUdeviceptr plain = 0;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&plain, 56 * MiB)); /* over the budget: the worker reclaims it all, in batches */
	char buf[16384];
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	/* the pass names its victims as it hands the batches over; the first one's advice then holds the worker */
	for (int i = 0; i < 500 && (read_file(log, buf, sizeof buf), !lines_with(buf, "over the watermark")); i++)
		nanosleep(&tick, NULL);
	cr_assert_eq(lines_with(buf, "over the watermark"), 1, "%s", buf);
	nanosleep(&tick, NULL);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
	CU_OK(SYM(shim, cuMemFree_v2)(plain));
	sync_and_flush(shim);
	read_file(log, buf, sizeof buf);
	unlink(log);
	cr_expect_eq(lines_with(buf, "failed (CUresult"), 0, "%s", buf);
	cr_expect_geq(lines_with(buf, "refused at issue: its allocation was freed"), 1, "%s", buf);
}

Test(placement, the_first_launch_promotes_a_prefix_within_the_budget)
{
	start_static();
	CUdeviceptr p = managed(200 * MiB); /* more than the budget */
	memset((void *)p, 0x5a, 200 * MiB);
	launch_reread(shim, reread, p, 200 * MiB);
	sync_and_flush(shim);
	uint64_t high = budget / 100 * 90;
	cr_expect_gt(resident(), high - 2 * MiB, "the prefix fills the budget to the watermark");
	expect_within_budget();
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)p), 0, "the first region is on the GPU");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(p + 199 * MiB)), EMBER_SIM_HOST,
		     "the tail stays in host memory");
	for (size_t i = 0; i < 200 * MiB; i += 4099)
		cr_assert_eq(((unsigned char *)p)[i], 0x5a, "byte %zu changed", i);
	/* a second launch moves nothing more */
	uint64_t moved = SYM(sim, ember_sim_bytes_migrated)(EMBER_SIM_TO_DEVICE);
	launch_reread(shim, reread, p, 200 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_bytes_migrated)(EMBER_SIM_TO_DEVICE), moved);
}

/*
 * A promoted range prefers the GPU, so a host touch (the driver migrates
 * the page to the host) is undone at its next GPU access instead of
 * leaving it read remotely while the budget counts it resident; a demoted
 * one prefers the host again.
 */
Test(placement, promoted_ranges_prefer_the_gpu_and_demoted_ones_the_host)
{
	start_static();
	CUdeviceptr p = managed(200 * MiB);
	launch_reread(shim, reread, p, 200 * MiB);
	sync_and_flush(shim);
	struct ember_sim_block_info head, tail;
	cr_assert_eq(SYM(sim, ember_sim_block_info)((void *)p, &head), 0);
	cr_assert_eq(SYM(sim, ember_sim_block_info)((void *)(p + 199 * MiB), &tail), 0);
	cr_expect_eq(head.preferred, 0, "the promoted prefix prefers GPU 0");
	cr_expect_eq(tail.preferred, EMBER_SIM_HOST, "the mapped tail prefers the host");
	cr_expect(tail.accessed_by & 1u, "and GPU 0 still maps it");
	cr_expect_gt(SYM(shim, ember_evict)((void *)p, 200 * MiB), 0);
	sync_and_flush(shim);
	cr_assert_eq(SYM(sim, ember_sim_block_info)((void *)p, &head), 0);
	cr_expect_eq(head.preferred, EMBER_SIM_HOST, "demoted, it prefers the host again");
	cr_expect(head.accessed_by & 1u, "mapped by GPU 0 as before");
}

/*
 * A range larger than a promotion span is advised once its prefetch has
 * landed (on host pages the advice would hold the prefetch up): after
 * the move it prefers the GPU all the same, and a move that failed leaves
 * it preferring the host, read where it is.
 */
Test(placement, a_large_promotion_prefers_the_gpu_once_it_lands)
{
	start("static", "1G");
	CUdeviceptr p = managed(200 * MiB); /* the static split's bulk move: one of 200 MiB */
	memset((void *)p, 0x5a, 200 * MiB); /* the program's input, in host memory */
	launch_reread(shim, reread, p, 200 * MiB);
	sync_and_flush(shim);
	struct ember_sim_block_info head, tail;
	cr_assert_eq(SYM(sim, ember_sim_block_info)((void *)p, &head), 0);
	cr_assert_eq(SYM(sim, ember_sim_block_info)((void *)(p + 199 * MiB), &tail), 0);
	cr_expect_eq(head.preferred, 0, "the head prefers GPU 0");
	cr_expect_eq(tail.preferred, 0, "and so does the tail");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(p + 199 * MiB)), 0, "the tail is on the GPU");
}

Test(placement, a_large_promotion_that_fails_keeps_the_host_preference)
{
	start("static", "1G");
	SYM(sim, ember_sim_fail_prefetches)(EMBER_SIM_TO_DEVICE, 1, CUDA_ERROR_OUT_OF_MEMORY);
	CUdeviceptr p = managed(200 * MiB);
	launch_reread(shim, reread, p, 200 * MiB);
	sync_and_flush(shim);
	struct ember_sim_block_info b;
	cr_assert_eq(SYM(sim, ember_sim_block_info)((void *)(p + 100 * MiB), &b), 0);
	cr_expect_eq(b.preferred, EMBER_SIM_HOST, "the failed move left its range preferring the host");
	cr_expect(b.accessed_by & 1u, "and mapped by GPU 0");
}

/*
 * Output that a kernel writes first (never touched by the host): the static
 * split's prefetch of untouched pages populates nothing under the host
 * preference, so the split must make the GPU the preferred location before
 * the kernel's first writes land, or they land in host memory while the
 * budget counts them resident (the H200's BFS and generate() runs).
 */
Test(placement, a_kernels_first_writes_to_a_split_allocation_land_on_the_gpu)
{
	start_static();
	CUdeviceptr out = managed(100 * MiB); /* never touched by the host */
	unsigned value = 0xabcd;
	size_t n = 100 * MiB / sizeof(unsigned);
	void *params[] = { &out, &value, &n };
	CU_OK(SYM(shim, cuLaunchKernel)(fill, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
	CU_OK(SYM(shim, cuCtxSynchronize)());
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)out), 0, "the split's first block was written on GPU 0");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(out + 99 * MiB)), EMBER_SIM_HOST,
		     "past the budget, in host memory");
	for (size_t i = 0; i < n; i += 4099)
		cr_assert_eq(((unsigned *)out)[i], 0xabcd, "element %zu", i);
	expect_within_budget();
}

Test(placement, the_budget_holds_across_many_allocations)
{
	start_static();
	CUdeviceptr p[12];
	for (int i = 0; i < 12; i++) {
		p[i] = managed((size_t)(i + 1) * 3 * MiB + 12345);
		launch_reread(shim, reread, p[i], 4096);
		expect_within_budget();
	}
	sync_and_flush(shim);
	expect_within_budget();
	for (int i = 0; i < 12; i++)
		CU_OK(SYM(shim, cuMemFree_v2)(p[i]));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0);
}

Test(placement, bytes_survive_promotion_and_eviction)
{
	start_static();
	size_t bytes = 40 * MiB + 777;
	CUdeviceptr p = managed(bytes);
	unsigned char *h = (unsigned char *)p;
	for (size_t i = 0; i < bytes; i++)
		h[i] = (unsigned char)(i * 2654435761u >> 13);
	for (int round = 0; round < 3; round++) {
		launch_reread(shim, reread, p, bytes);
		cr_expect_geq(SYM(shim, ember_promote)((void *)p, bytes), 0);
		sync_and_flush(shim);
		cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)p), 0);
		cr_expect_gt(SYM(shim, ember_evict)((void *)p, bytes), 0);
		sync_and_flush(shim);
		cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)p), EMBER_SIM_HOST);
		cr_expect_eq(resident(), 0);
	}
	for (size_t i = 0; i < bytes; i++)
		cr_assert_eq(h[i], (unsigned char)(i * 2654435761u >> 13), "byte %zu changed", i);
	expect_within_budget();
}

Test(placement, allocation_edge_cases)
{
	start_static();
	CUdeviceptr p = 0;
	cr_expect_eq(SYM(shim, cuMemAllocManaged)(&p, 0, CU_MEM_ATTACH_GLOBAL),
		     SYM(sim, cuMemAllocManaged)(&p, 0, CU_MEM_ATTACH_GLOBAL), "0 bytes: the driver's answer");
	const size_t sizes[] = { 1, 4096, 2 * MiB - 1, 2 * MiB, 2 * MiB + 1, 3 * MiB + 5, 63 * MiB };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		p = managed(sizes[i]);
		memset((void *)p, (int)i + 1, sizes[i]);
		launch_reread(shim, reread, p, sizes[i]);
		sync_and_flush(shim);
		expect_within_budget();
		cr_expect_eq(((unsigned char *)p)[sizes[i] - 1], (unsigned char)(i + 1));
		CU_OK(SYM(shim, cuMemFree_v2)(p));
	}
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0, "every promoted byte left with its allocation");
}

Test(placement, ten_thousand_small_allocations)
{
	start_static();
	enum { N = 10000 };
	static CUdeviceptr p[N];
	for (int i = 0; i < N; i++) {
		p[i] = managed(512 + i % 4096);
		((unsigned char *)p[i])[0] = (unsigned char)i;
	}
	for (int i = 0; i < N; i += 97)
		launch_reread(shim, reread, p[i], 512);
	sync_and_flush(shim);
	expect_within_budget();
	for (int i = 0; i < N; i++) {
		cr_assert_eq(((unsigned char *)p[i])[0], (unsigned char)i);
		CU_OK(SYM(shim, cuMemFree_v2)(p[i]));
	}
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0);
}

Test(placement, free_during_a_promotion_is_safe)
{
	start_static();
	for (int i = 0; i < 20; i++) {
		CUdeviceptr p = managed(48 * MiB);
		launch_reread(shim, reread, p, 48 * MiB); /* starts the promotion: about 1 ms of virtual time */
		CU_OK(SYM(shim, cuMemFree_v2)(p));
	}
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0);
	expect_within_budget();
	/* the table forgot them: new allocations get the whole budget again */
	CUdeviceptr q = managed(48 * MiB);
	launch_reread(shim, reread, q, 4096);
	sync_and_flush(shim);
	cr_expect_eq(resident(), 48 * MiB);
}

Test(placement, application_hints_win)
{
	start_static();
	CUdeviceptr p = managed(32 * MiB);
	/* the application keeps the second half on the host, its own way */
	CUmemLocation host = { .type = CU_MEM_LOCATION_TYPE_HOST };
	CU_OK(SYM(shim, cuMemAdvise_v2)(p + 16 * MiB, 16 * MiB, CU_MEM_ADVISE_SET_READ_MOSTLY, host));
	launch_reread(shim, reread, p, 32 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)p), 0);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(p + 20 * MiB)), EMBER_SIM_HOST,
		     "Ember left the advised range alone");
	struct ember_sim_block_info b;
	SYM(sim, ember_sim_block_info)((void *)(p + 20 * MiB), &b);
	cr_expect(b.read_mostly, "the application's advice stands");
	cr_expect_eq(SYM(shim, ember_promote)((void *)(p + 16 * MiB), 16 * MiB), 0, "even a hint does not move it");

	/* a range the application prefetched itself is left alone too */
	CUdeviceptr q = managed(8 * MiB);
	CUmemLocation gpu = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
	CU_OK(SYM(shim, cuMemPrefetchAsync_v2)(q, 8 * MiB, gpu, 0, NULL));
	CU_OK(SYM(shim, cuCtxSynchronize)());
	cr_expect_eq(SYM(shim, ember_evict)((void *)q, 8 * MiB), 0);
}

Test(placement, mapped_mode_never_promotes)
{
	start("mapped", "64M");
	CUdeviceptr p = managed(16 * MiB);
	launch_reread(shim, reread, p, 16 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0);
	cr_expect_eq(SYM(shim, ember_promote)((void *)p, MiB), -1);
	struct ember_sim_block_info b;
	SYM(sim, ember_sim_block_info)((void *)p, &b);
	cr_expect_eq(b.preferred, EMBER_SIM_HOST, "still advised mapped");
}

Test(placement, off_mode_is_stock_behaviour)
{
	start("off", "64M");
	CUdeviceptr p = managed(16 * MiB);
	struct ember_sim_block_info b;
	SYM(sim, ember_sim_block_info)((void *)p, &b);
	cr_expect_eq(b.preferred, EMBER_SIM_NOWHERE, "no advice");
	cr_expect_eq(SYM(shim, ember_is_active)(), 0);
}

Test(placement, get_info_reports_the_budget)
{
	start_static();
	size_t free_b = 0, total_b = 0;
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(total_b, budget);
	cr_expect_eq(free_b, budget);
	CUdeviceptr p = managed(8 * MiB);
	launch_reread(shim, reread, p, 8 * MiB);
	sync_and_flush(shim);
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, budget - 8 * MiB);
	CUdeviceptr plain;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&plain, 4 * MiB));
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, budget - 12 * MiB, "plain allocations count against the budget");
	CU_OK(SYM(shim, cuMemFree_v2)(plain));
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, budget - 8 * MiB);
	/* physical allocations of the virtual memory API, from creation to release */
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUmemGenericAllocationHandle h;
	CU_OK(SYM(shim, cuMemCreate)(&h, 6 * MiB, &prop, 0));
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, budget - 14 * MiB, "cuMemCreate counts against the budget");
	CU_OK(SYM(shim, cuMemRelease)(h));
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, budget - 8 * MiB, "and cuMemRelease gives it back");
	/* a pool's allocations, until they are freed */
	CUdeviceptr pooled;
	CUmemoryPool pool;
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&pool, 0));
	CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&pooled, 2 * MiB, pool, NULL));
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, budget - 10 * MiB, "pool allocations count against the budget");
	CU_OK(SYM(shim, cuMemFreeAsync)(pooled, NULL));
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, budget - 8 * MiB);
}

/* A one-block launch of reread with params, appended to graph. */
static void add_reread_node(CUgraph graph, void **params)
{
	CUgraphNode node;
	CUDA_KERNEL_NODE_PARAMS kp = { .func = reread, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 1,
				       .blockDimY = 1, .blockDimZ = 1, .kernelParams = params };
	CU_OK(SYM(shim, cuGraphAddKernelNode_v2)(&node, graph, NULL, 0, &kp));
}

/* The arguments of one reread launch over [p, p + bytes), for a graph's kernel node. */
struct reread_args {
	CUdeviceptr p;
	size_t n;
	unsigned passes;
	float *out;
	void *params[4];
};

static void reread_args_over(struct reread_args *r, CUdeviceptr p, size_t bytes)
{
	static float sum;
	*r = (struct reread_args){ .p = p, .n = bytes / sizeof(float), .passes = 1, .out = &sum };
	r->params[0] = &r->p;
	r->params[1] = &r->n;
	r->params[2] = &r->passes;
	r->params[3] = &r->out;
}

/* Under static, 16 MiB of managed memory and the arguments of a reread over it. */
static CUdeviceptr static_with_16_mib_to_read(struct reread_args *r)
{
	start_static();
	CUdeviceptr p = managed(16 * MiB);
	reread_args_over(r, p, 16 * MiB);
	return p;
}

Test(placement, graph_kernels_get_the_static_split_at_their_first_launch)
{
	struct reread_args args;
	CUdeviceptr p = static_with_16_mib_to_read(&args);
	CUgraph graph;
	CUgraphExec exec;
	CU_OK(SYM(shim, cuGraphCreate)(&graph, 0));
	add_reread_node(graph, args.params);
	CU_OK(SYM(shim, cuGraphInstantiateWithFlags)(&exec, graph, 0));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0, "instantiating moves nothing");
	CU_OK(SYM(shim, cuGraphLaunch)(exec, NULL));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 16 * MiB, "the graph's first launch made the split");
	CU_OK(SYM(shim, cuGraphExecDestroy)(exec));
	CU_OK(SYM(shim, cuGraphDestroy)(graph));
	CU_OK(SYM(shim, cuMemFree_v2)(p));
}

/* Capture a launch of reread over p on stream into a new graph; nothing runs. */
static CUgraph capture_reread(CUstream stream, CUdeviceptr *p, size_t *n, unsigned *passes, float **out)
{
	void *params[] = { p, n, passes, out };
	CUgraph graph = NULL;
	CU_OK(SYM(shim, cuStreamBeginCapture_v2)(stream, CU_STREAM_CAPTURE_MODE_RELAXED));
	CUstreamCaptureStatus status;
	CU_OK(SYM(shim, cuStreamIsCapturing)(stream, &status));
	cr_expect_eq(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
	CU_OK(SYM(shim, cuLaunchKernel)(reread, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
	CU_OK(SYM(shim, cuStreamEndCapture)(stream, &graph));
	return graph;
}

Test(placement, launches_captured_into_a_graph_are_placed_when_the_graph_runs)
{
	start_static();
	CUdeviceptr p = managed(16 * MiB);
	static float sum = -1;
	size_t n = 16 * MiB / sizeof(float);
	unsigned passes = 1;
	float *out = &sum;
	CUstream stream;
	CU_OK(SYM(shim, cuStreamCreate)(&stream, CU_STREAM_NON_BLOCKING));
	CUgraph graph = capture_reread(stream, &p, &n, &passes, &out);
	sync_and_flush(shim);
	cr_expect_eq(sum, -1, "a captured launch does not run");
	cr_expect_eq(resident(), 0, "so nothing is placed for it");
	CUgraphExec exec;
	CU_OK(SYM(shim, cuGraphInstantiateWithFlags)(&exec, graph, 0));
	CU_OK(SYM(shim, cuGraphLaunch)(exec, stream));
	sync_and_flush(shim);
	cr_expect_eq(sum, 0, "the graph's launch ran it");
	cr_expect_eq(resident(), 16 * MiB, "and made the split");
	CU_OK(SYM(shim, cuGraphExecDestroy)(exec));
	CU_OK(SYM(shim, cuGraphDestroy)(graph));
	cr_expect_eq(SYM(shim, cuStreamEndCapture)(stream, &graph), CUDA_ERROR_ILLEGAL_STATE, "no capture to end");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
	CU_OK(SYM(shim, cuMemFree_v2)(p));
}

/*
 * While the test's thread captures `captured` in mode, a launch of reread
 * over 16 MiB of managed memory on another stream: Ember places it, and
 * its worker advises, prefetches and polls its events meanwhile. Returns
 * how the capture ended.
 */
static CUresult capture_beside_a_placed_launch(CUstreamCaptureMode mode)
{
	start_static();
	CUdeviceptr p = managed(16 * MiB);
	CUstream captured, other;
	CU_OK(SYM(shim, cuStreamCreate)(&captured, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamCreate)(&other, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamBeginCapture_v2)(captured, mode));
	launch_reread_on(shim, reread, p, 16 * MiB, other);
	cr_assert_eq(SYM(shim, ember_flush)(), 0); /* the worker's moves done: no driver call here */
	CUgraph graph = NULL;
	CUresult end = SYM(shim, cuStreamEndCapture)(captured, &graph);
	if (graph)
		CU_OK(SYM(shim, cuGraphDestroy)(graph));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 16 * MiB, "the launch beside the capture was placed");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(captured));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(other));
	CU_OK(SYM(shim, cuMemFree_v2)(p));
	return end;
}

/*
 * Ember's own calls must not break a program's capture. On an H100,
 * cuMemAdvise, cuEventQuery and the other calls the worker makes
 * invalidate a global capture made by any thread whose own mode is global
 * (ember-capture-probe, ab-42's call 1), and before the worker took
 * relaxed mode, 47 of 60 torch.cuda.graph captures failed under adaptive
 * (call 2). The simulated driver applies the same rules.
 */
Test(placement, a_global_capture_survives_the_worker_s_calls)
{
	cr_expect_eq(capture_beside_a_placed_launch(CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
}

/* A thread-local capture: only the capturing thread's calls count, Ember's in its launch hook included. */
Test(placement, a_thread_local_capture_survives_the_launch_hook_s_calls)
{
	cr_expect_eq(capture_beside_a_placed_launch(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
}

/*
 * Under manage-all, an allocation into a stream being captured stays the
 * driver's (a node of the graph, in the driver): converted memory would be
 * made outside the graph, by calls that break the capture.
 */
Test(placement, an_allocation_into_a_captured_stream_is_left_to_the_graph)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUstream captured;
	CU_OK(SYM(shim, cuStreamCreate)(&captured, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamBeginCapture_v2)(captured, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocAsync)(&p, 4 * MiB, captured));
	int managed_flag = 1;
	CU_OK(SYM(shim, cuPointerGetAttribute)(&managed_flag, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
	cr_expect_eq(managed_flag, 0, "not converted");
	CUgraph graph = NULL;
	cr_expect_eq(SYM(shim, cuStreamEndCapture)(captured, &graph), CUDA_SUCCESS);
	if (graph)
		CU_OK(SYM(shim, cuGraphDestroy)(graph));
	CU_OK(SYM(shim, cuMemFreeAsync)(p, captured));
	CUdeviceptr q;
	CU_OK(SYM(shim, cuMemAllocAsync)(&q, 4 * MiB, captured));
	CU_OK(SYM(shim, cuPointerGetAttribute)(&managed_flag, CU_POINTER_ATTRIBUTE_IS_MANAGED, q));
	cr_expect_eq(managed_flag, 1, "once the capture ended, converted again");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, captured));
	sync_and_flush(shim);
	CU_OK(SYM(shim, cuStreamDestroy_v2)(captured));
}

/*
 * A free of converted memory into a stream being captured gets the driver's
 * answer, for memory that is not the graph's: refused, still allocated and
 * still Ember's, the capture whole.
 */
Test(placement, a_free_into_a_captured_stream_gets_the_driver_s_answer)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&p, 4 * MiB));
	launch_reread(shim, reread, p, 4 * MiB);
	sync_and_flush(shim);
	cr_assert_eq(resident(), 4 * MiB);
	CUstream captured;
	CU_OK(SYM(shim, cuStreamCreate)(&captured, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamBeginCapture_v2)(captured, CU_STREAM_CAPTURE_MODE_GLOBAL));
	cr_expect_eq(SYM(shim, cuMemFreeAsync)(p, captured), CUDA_ERROR_INVALID_VALUE, "not the graph's memory");
	CUgraph graph = NULL;
	cr_expect_eq(SYM(shim, cuStreamEndCapture)(captured, &graph), CUDA_SUCCESS);
	if (graph)
		CU_OK(SYM(shim, cuGraphDestroy)(graph));
	struct ember_region_info info;
	cr_expect_eq(SYM(shim, ember_region_info)((void *)p, &info), 0, "still Ember's");
	CU_OK(SYM(shim, cuMemFree_v2)(p));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0, "freed once, by the program's later free");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(captured));
}

/* The simulated driver's rule, as the probe found it: the test's own unsafe call does break it. */
Test(placement, a_capture_is_broken_by_the_program_s_own_unsafe_call)
{
	start_static();
	CUstream captured;
	CU_OK(SYM(shim, cuStreamCreate)(&captured, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamBeginCapture_v2)(captured, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	CUevent e;
	CU_OK(SYM(shim, cuEventCreate)(&e, 0));
	cr_expect_eq(SYM(shim, cuEventQuery)(e), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CUgraph graph = NULL;
	cr_expect_eq(SYM(shim, cuStreamEndCapture)(captured, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	cr_expect_null(graph);
	CU_OK(SYM(shim, cuEventDestroy_v2)(e));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(captured));
}

/* Whether the region at p is resident (ember_region_info's state 2). */
static bool region_resident(CUdeviceptr p)
{
	struct ember_region_info info;
	return SYM(shim, ember_region_info)((void *)p, &info) == 0 && info.state == 2;
}

/*
 * An executable updated from another graph (llama.cpp's instance takes
 * each token's capture so) places what the new graph's kernels read; an
 * update the driver refuses leaves the old graph's.
 */
Test(placement, an_updated_graph_places_what_its_new_kernels_read)
{
	start_static();
	CUdeviceptr a = managed(16 * MiB), b = managed(16 * MiB), c = managed(16 * MiB);
	static float sum;
	size_t n = 16 * MiB / sizeof(float);
	unsigned passes = 1;
	float *out = &sum;
	void *pa[] = { &a, &n, &passes, &out }, *pb[] = { &b, &n, &passes, &out }, *pc[] = { &c, &n, &passes, &out };
	CUgraph first, second, other;
	CUgraphExec exec;
	CU_OK(SYM(shim, cuGraphCreate)(&first, 0));
	add_reread_node(first, pa);
	CU_OK(SYM(shim, cuGraphCreate)(&second, 0));
	add_reread_node(second, pb);
	CU_OK(SYM(shim, cuGraphCreate)(&other, 0)); /* two kernels: not the instance's shape */
	add_reread_node(other, pc);
	add_reread_node(other, pc);
	CU_OK(SYM(shim, cuGraphInstantiateWithFlags)(&exec, first, 0));
	CUgraphExecUpdateResultInfo info;
	CU_OK(SYM(shim, cuGraphExecUpdate_v2)(exec, second, &info));
	cr_expect_eq(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
	cr_expect_eq(SYM(shim, cuGraphExecUpdate_v2)(exec, other, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	CU_OK(SYM(shim, cuGraphLaunch)(exec, NULL));
	sync_and_flush(shim);
	cr_expect(region_resident(b), "the updated graph's allocation was placed at its launch");
	cr_expect(!region_resident(a), "not the first graph's");
	cr_expect(!region_resident(c), "nor the refused update's");
	CU_OK(SYM(shim, cuGraphExecDestroy)(exec));
	CU_OK(SYM(shim, cuGraphDestroy)(first));
	CU_OK(SYM(shim, cuGraphDestroy)(second));
	CU_OK(SYM(shim, cuGraphDestroy)(other));
	CU_OK(SYM(shim, cuMemFree_v2)(a));
	CU_OK(SYM(shim, cuMemFree_v2)(b));
	CU_OK(SYM(shim, cuMemFree_v2)(c));
}

/* The same through the first forms of instantiation and update, as cuGetProcAddress answers them at CUDA 10.2. */
Test(placement, graphs_made_through_the_first_forms_are_placed_too)
{
	start_static();
	CUdeviceptr a = managed(16 * MiB), b = managed(16 * MiB);
	static float sum;
	size_t n = 16 * MiB / sizeof(float);
	unsigned passes = 1;
	float *out = &sum;
	void *pa[] = { &a, &n, &passes, &out }, *pb[] = { &b, &n, &passes, &out };
	CUresult(CUDAAPI * instantiate)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t) = NULL;
	CUresult(CUDAAPI * update)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *) = NULL;
	CUdriverProcAddressQueryResult found;
	CU_OK(SYM(shim, cuGetProcAddress_v2)("cuGraphInstantiate", (void **)&instantiate, 10020, 0, &found));
	CU_OK(SYM(shim, cuGetProcAddress_v2)("cuGraphExecUpdate", (void **)&update, 10020, 0, &found));
	CUgraph first, second;
	CUgraphExec exec;
	CU_OK(SYM(shim, cuGraphCreate)(&first, 0));
	add_reread_node(first, pa);
	CU_OK(SYM(shim, cuGraphCreate)(&second, 0));
	add_reread_node(second, pb);
	char log[64];
	CUgraphNode error_node;
	CU_OK(instantiate(&exec, first, &error_node, log, sizeof log));
	CUgraphExecUpdateResult result;
	CU_OK(update(exec, second, &error_node, &result));
	cr_expect_eq(result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
	CU_OK(SYM(shim, cuGraphLaunch)(exec, NULL));
	sync_and_flush(shim);
	cr_expect(region_resident(b), "the updated graph's allocation was placed at its launch");
	cr_expect(!region_resident(a), "not the first graph's");
	CU_OK(SYM(shim, cuGraphExecDestroy)(exec));
	CU_OK(SYM(shim, cuGraphDestroy)(first));
	CU_OK(SYM(shim, cuGraphDestroy)(second));
}

/*
 * A graph executable instantiated in a context the program then destroys,
 * and a later one the driver gives the same handle: the later one's
 * launches place only what it reads (here nothing: it has no kernel).
 */
Test(placement, a_graph_handle_reused_after_its_context_s_teardown_places_only_its_own_reads)
{
	struct reread_args reads_a_args;
	CUdeviceptr a = static_with_16_mib_to_read(&reads_a_args);
	CUgraphExec olds[64], empty_exec = NULL;
	bool reused = false;
	for (int tries = 0; tries < 64 && !reused; tries++) {
		CUcontext primary, own = own_context(shim, &primary);
		CUmodule mod;
		CUgraph reads_a, empty;
		CU_OK(SYM(shim, cuModuleLoadData)(&mod, "ember-sim:"));
		CU_OK(SYM(shim, cuModuleGetFunction)(&reread, mod, "ember_reread_sum"));
		CU_OK(SYM(shim, cuGraphCreate)(&reads_a, 0));
		add_reread_node(reads_a, reads_a_args.params);
		CU_OK(SYM(shim, cuGraphInstantiateWithFlags)(&olds[tries], reads_a, 0));
		CU_OK(SYM(shim, cuGraphCreate)(&empty, 0));
		CU_OK(SYM(shim, cuCtxDestroy_v2)(own));
		CU_OK(SYM(shim, cuCtxSetCurrent)(primary));
		CU_OK(SYM(shim, cuGraphInstantiateWithFlags)(&empty_exec, empty, 0));
		for (int k = 0; k <= tries && !reused; k++)
			reused = empty_exec == olds[k];
	}
	if (!reused)
		cr_skip_test("the simulated driver never reused the handle");
	CU_OK(SYM(shim, cuGraphLaunch)(empty_exec, NULL));
	sync_and_flush(shim);
	cr_expect(!region_resident(a), "the torn-down graph's allocation was not placed");
}

/*
 * Under adaptive, a graph whose allocations are all resident below the low
 * watermark is placed once per launch; one that is not, kernel by kernel:
 * both keep placing what the graph reads.
 */
Test(placement, adaptive_graph_launches_promote_until_settled_and_stay_resident)
{
	start("adaptive", "64M");
	CUdeviceptr a = managed(16 * MiB), b = managed(8 * MiB);
	static float sum;
	size_t na = 16 * MiB / sizeof(float), nb = 8 * MiB / sizeof(float);
	unsigned passes = 1;
	float *out = &sum;
	void *pa[] = { &a, &na, &passes, &out }, *pb[] = { &b, &nb, &passes, &out };
	CUgraph graph;
	CUgraphExec exec;
	CU_OK(SYM(shim, cuGraphCreate)(&graph, 0));
	add_reread_node(graph, pa);
	add_reread_node(graph, pb);
	CU_OK(SYM(shim, cuGraphInstantiateWithFlags)(&exec, graph, 0));
	for (int i = 0; i < 20 && resident() < 24 * MiB; i++) {
		CU_OK(SYM(shim, cuGraphLaunch)(exec, NULL));
		sync_and_flush(shim);
	}
	cr_expect_eq(resident(), 24 * MiB, "both allocations promoted by the graph's launches");
	for (int i = 0; i < 20; i++)
		CU_OK(SYM(shim, cuGraphLaunch)(exec, NULL));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 24 * MiB, "settled launches keep them resident");
	expect_within_budget();
	CU_OK(SYM(shim, cuGraphExecDestroy)(exec));
	CU_OK(SYM(shim, cuGraphDestroy)(graph));
	CU_OK(SYM(shim, cuMemFree_v2)(a));
	CU_OK(SYM(shim, cuMemFree_v2)(b));
}

/* The star queries' shape: a big fact column and a small lookup table, first referenced by one launch. */
Test(placement, the_static_split_of_one_launch_gives_the_smaller_allocation_room_first)
{
	start_static();
	CUfunction saxpy;
	CU_OK(SYM(shim, cuModuleGetFunction)(&saxpy, start_context(shim), "ember_saxpy"));
	CUdeviceptr big = managed(56 * MiB), small = managed(16 * MiB);
	memset((void *)big, 1, 56 * MiB); /* made on the host, as a loader would */
	memset((void *)small, 1, 16 * MiB);
	float a = 2.0f;
	unsigned n = 16 * MiB / sizeof(float);
	void *params[] = { &a, &big, &small, &n };
	CU_OK(SYM(shim, cuLaunchKernel)(saxpy, n / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	sync_and_flush(shim);
	expect_within_budget();
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)small), 0, "the small allocation's start is on the GPU");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(small + 15 * MiB)), 0, "and its end");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(big + 55 * MiB)), EMBER_SIM_HOST,
		     "the big one's tail stays in host memory");
	cr_expect_gt(resident(), 16 * MiB + 16 * MiB, "the big one has the rest of the room");
}

Test(placement, the_live_file_shows_the_region_map)
{
	setenv("EMBER_LIVE", "1", 1);
	start_static();
	CUdeviceptr p = managed(100 * MiB); /* more than the budget: a resident prefix, a mapped tail */
	launch_reread(shim, reread, p, 100 * MiB);
	sync_and_flush(shim);
	char path[64];
	snprintf(path, sizeof path, "/dev/shm/ember-%d.live", (int)getpid());
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "no %s", path);
	char buf[8192] = "";
	cr_assert_gt(fread(buf, 1, sizeof buf - 1, f), 0);
	fclose(f);
	cr_expect_not_null(strstr(buf, "ember-live 1\n"), "%s", buf);
	cr_expect_not_null(strstr(buf, "mode static\n"), "%s", buf);
	cr_expect_not_null(strstr(buf, "device 0 budget 67108864"), "%s", buf);
	/* 50 regions: 28 resident under the 57.6 MiB watermark, then mapped */
	cr_expect_not_null(strstr(buf, " managed ############################......................\n"), "%s", buf);
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600, "the live file holds allocation addresses: private to its owner");
	char tmp[80];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	cr_expect_neq(access(tmp, F_OK), 0, "no predictable temporary name is used");
	unlink(path);
}

Test(placement, hints_on_plain_memory_do_nothing)
{
	start_static();
	CUdeviceptr plain;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&plain, 8 * MiB));
	cr_expect_eq(SYM(shim, ember_promote)((void *)plain, 8 * MiB), 0);
	cr_expect_eq(SYM(shim, ember_evict)((void *)plain, 8 * MiB), 0);
	struct ember_region_info info;
	cr_expect_eq(SYM(shim, ember_region_info)((void *)plain, &info), -1);
	CU_OK(SYM(shim, cuMemFree_v2)(plain));
}

Test(placement, manage_all_says_why_pitched_memory_stays_plain)
{
	char log[] = "/tmp/ember-manage-all-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "info", 1);
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUdeviceptr p;
	size_t pitch = 0;
	CU_OK(SYM(shim, cuMemAllocPitch_v2)(&p, &pitch, 1000, 100, 4));
	int managed_flag = 1;
	CU_OK(SYM(shim, cuPointerGetAttribute)(&managed_flag, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
	cr_expect_eq(managed_flag, 0);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
	char buf[4096];
	cr_assert_gt(read_file(log, buf, sizeof buf), 0);
	unlink(log);
	cr_expect_not_null(strstr(buf, "EMBER_MANAGE_ALL: cuMemAllocPitch memory stays plain device memory"), "%s", buf);
}

/*
 * Under EMBER_MANAGE_ALL, logging to log (a mkstemp template): an 8 MiB
 * allocation, converted, and width x height bytes of pitched memory, which
 * stays plain.
 */
static void converted_and_plain(char *log, CUdeviceptr *converted, CUdeviceptr *pitched, size_t width,
				size_t height)
{
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	size_t pitch = 0;
	CU_OK(SYM(shim, cuMemAlloc_v2)(converted, 8 * MiB));
	CU_OK(SYM(shim, cuMemAllocPitch_v2)(pitched, &pitch, width, height, 4));
}

/* Both freed, and the log read into buf (size bytes) and removed. */
static void freed_and_logged(char *log, CUdeviceptr converted, CUdeviceptr pitched, char *buf, size_t size)
{
	CU_OK(SYM(shim, cuMemFree_v2)(converted));
	CU_OK(SYM(shim, cuMemFree_v2)(pitched));
	cr_assert_gt(read_file(log, buf, size), 0);
	unlink(log);
}

/*
 * CUDA IPC cannot share managed memory. A converted allocation's handle is
 * refused as the driver refuses it, with one warning that names the way
 * out; memory that stays plain is shared as before.
 */
Test(placement, manage_all_says_once_why_ipc_refuses_converted_memory)
{
	char log[] = "/tmp/ember-ipc-XXXXXX", buf[8192];
	CUdeviceptr converted, pitched;
	converted_and_plain(log, &converted, &pitched, 1000, 100);
	CUipcMemHandle handle;
	cr_expect_eq(SYM(shim, cuIpcGetMemHandle)(&handle, converted + 4096), CUDA_ERROR_INVALID_VALUE);
	cr_expect_eq(SYM(shim, cuIpcGetMemHandle)(&handle, converted), CUDA_ERROR_INVALID_VALUE);
	CU_OK(SYM(shim, cuIpcGetMemHandle)(&handle, pitched));
	int capable = -1;
	CU_OK(SYM(shim, cuPointerGetAttribute)(&capable, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, converted));
	cr_expect_eq(capable, 0);
	CU_OK(SYM(shim, cuPointerGetAttribute)(&capable, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, pitched));
	cr_expect_eq(capable, 1);
	freed_and_logged(log, converted, pitched, buf, sizeof buf);
	cr_expect_eq(lines_with(buf, "cuIpcGetMemHandle:"), 1, "one warning for two refusals: %s", buf);
	cr_expect_not_null(strstr(buf, "EMBER_MANAGE_ALL=0"), "%s", buf);
}

/* The same for a dma-buf export of a range (cuMemGetHandleForAddressRange), which the driver refuses alike. */
Test(placement, manage_all_says_once_why_a_dma_buf_export_of_converted_memory_is_refused)
{
	char log[] = "/tmp/ember-dmabuf-XXXXXX", buf[8192];
	CUdeviceptr converted, pitched;
	converted_and_plain(log, &converted, &pitched, 4096, 512); /* 2 MiB: page-aligned */
	int fd = -1;
	for (int k = 0; k < 2; k++)
		cr_expect_eq(SYM(shim, cuMemGetHandleForAddressRange)(&fd, converted + k * MiB, MiB,
								      CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
			     CUDA_ERROR_INVALID_VALUE);
	cr_expect_eq(fd, -1);
	CU_OK(SYM(shim, cuMemGetHandleForAddressRange)(&fd, pitched, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
	cr_expect_geq(fd, 0, "plain memory exported");
	close(fd);
	freed_and_logged(log, converted, pitched, buf, sizeof buf);
	cr_expect_eq(lines_with(buf, "cuMemGetHandleForAddressRange:"), 1, "one warning for two refusals: %s", buf);
	cr_expect_not_null(strstr(buf, "dma-buf"), "%s", buf);
}

/* ---- cuMemCreate under EMBER_MANAGE_ALL: on the device within the budget, in host memory past it ---- */

static CUmemGenericAllocationHandle vmm_create(size_t bytes, unsigned long long handle_types)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
				     .requestedHandleTypes = (CUmemAllocationHandleType)handle_types };
	CUmemGenericAllocationHandle h = 0;
	CU_OK(SYM(shim, cuMemCreate)(&h, bytes, &prop, 0));
	return h;
}

static int vmm_location(CUmemGenericAllocationHandle h)
{
	return SYM(sim, ember_sim_physical_location)(h);
}

static uint64_t device_used(void)
{
	return SYM(sim, ember_sim_device_used_bytes)(0);
}

/*
 * Under a 64 MiB budget (high watermark 90% in these tests, 57.6 MiB): 56 MiB fits on the
 * device and leaves less than the 2 MiB a split falls on, so the next 40
 * are made in host memory, as is a shareable one (on the GPU's host NUMA
 * node, which may share it); a release gives the device's bytes back, and
 * the next allocation that fits goes to the device again.
 */
#define NEARLY_THE_BUDGET (56 * MiB)
Test(placement, manage_all_makes_cuMemCreate_memory_past_the_budget_in_host_memory)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	uint64_t before = device_used();
	CUmemGenericAllocationHandle within = vmm_create(NEARLY_THE_BUDGET, 0), past = vmm_create(40 * MiB, 0);
	CUmemGenericAllocationHandle shared = vmm_create(20 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	cr_expect_eq(vmm_location(within), 0, "within the budget: on the device");
	cr_expect_eq(vmm_location(past), EMBER_SIM_HOST, "past it: in host memory");
	cr_expect_eq(vmm_location(shared), EMBER_SIM_HOST, "a shareable one too");
	cr_expect_eq(device_used(), before + NEARLY_THE_BUDGET);
	CU_OK(SYM(shim, cuMemRelease)(past));
	CU_OK(SYM(shim, cuMemRelease)(shared));
	CU_OK(SYM(shim, cuMemRelease)(within));
	cr_expect_eq(device_used(), before);
	CUmemGenericAllocationHandle again = vmm_create(40 * MiB, 0);
	cr_expect_eq(vmm_location(again), 0, "room again once the first was released");
	CU_OK(SYM(shim, cuMemRelease)(again));
}

/* Under manage-all with EMBER_SPLIT_VMM at its default, the 64 MiB static budget: the GPU's bytes in use at the start. */
static uint64_t start_splitting(void)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	unsetenv("EMBER_SPLIT_VMM"); /* on by default */
	start_static();
	return device_used();
}

static const CUmemAccessDesc gpu_access = { .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
					    .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };

/* A reservation of bytes with handle mapped at its start, the GPU given access: its address. */
static CUdeviceptr vmm_map(CUmemGenericAllocationHandle handle, size_t bytes)
{
	CUdeviceptr va = 0;
	CU_OK(SYM(shim, cuMemAddressReserve)(&va, bytes, 0, 0, 0));
	CU_OK(SYM(shim, cuMemMap)(va, bytes, 0, handle, 0));
	CU_OK(SYM(shim, cuMemSetAccess)(va, bytes, &gpu_access, 1));
	return va;
}

/* Where the driver's memory mapped at va lies: a device, or EMBER_SIM_HOST. */
static int driver_location_at(CUdeviceptr va)
{
	CUmemGenericAllocationHandle part;
	CU_OK(SYM(sim, cuMemRetainAllocationHandle)(&part, (void *)va));
	int at = vmm_location(part);
	CU_OK(SYM(sim, cuMemRelease)(part));
	return at;
}

/*
 * Past 40 MiB of a 64 MiB budget (its high watermark 57.6 MiB), 40 MiB more
 * is split: 16 MiB on the GPU (whole 2 MiB units of the room), 24 in host
 * memory, behind one handle. The program maps it, gives the GPU access,
 * asks for its handle back from an address and for its properties, and
 * unmaps and releases it as one allocation; the budget gets its bytes back.
 */
Test(placement, cuMemCreate_memory_the_budget_has_room_for_in_part_is_split)
{
	uint64_t before = start_splitting();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0), split = vmm_create(40 * MiB, 0);
	cr_expect_eq(device_used(), before + 56 * MiB, "40 MiB, and 16 of the next 40");
	CUdeviceptr va = vmm_map(split, 40 * MiB);
	cr_expect_eq(driver_location_at(va), 0, "its start on the GPU");
	cr_expect_eq(driver_location_at(va + 16 * MiB - 1), 0);
	cr_expect_eq(driver_location_at(va + 16 * MiB), EMBER_SIM_HOST, "past 16 MiB in host memory");
	CUmemGenericAllocationHandle again = 0;
	CU_OK(SYM(shim, cuMemRetainAllocationHandle)(&again, (void *)(va + 30 * MiB)));
	cr_expect_eq(again, split, "an address in its host part gives the program's handle");
	CUmemAllocationProp prop;
	CU_OK(SYM(shim, cuMemGetAllocationPropertiesFromHandle)(&prop, split));
	cr_expect(prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE && prop.location.id == 0, "as the program asked");
	for (size_t at = MiB; at < 40 * MiB; at += 29 * MiB) {
		CUdeviceptr base = 0;
		size_t size = 0;
		CU_OK(SYM(shim, cuMemGetAddressRange_v2)(&base, &size, va + at));
		cr_expect(base == va && size == 40 * MiB, "the whole mapping around %zu MiB, not its part's", at / MiB);
	}
	CU_OK(SYM(shim, cuMemRelease)(again));
	cr_expect_neq(SYM(shim, cuMemMap)(va, 40 * MiB, 0, split, 0), CUDA_SUCCESS, "onto its own mapping");
	cr_expect_eq(SYM(shim, cuMemMap)(va + 64 * MiB, 40 * MiB, 2 * MiB, split, 0), CUDA_ERROR_INVALID_VALUE,
		     "an offset, which the driver refuses");
	CU_OK(SYM(shim, cuMemUnmap)(va, 40 * MiB));
	CU_OK(SYM(shim, cuMemRelease)(split));
	cr_expect_eq(device_used(), before + 40 * MiB, "the split's 16 MiB given back");
	CU_OK(SYM(shim, cuMemRelease)(within));
	cr_expect_eq(device_used(), before);
}

/* With EMBER_SPLIT_VMM=0, the same allocation goes whole to host memory. */
Test(placement, cuMemCreate_memory_is_not_split_with_EMBER_SPLIT_VMM_0)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	setenv("EMBER_SPLIT_VMM", "0", 1);
	start_static();
	uint64_t before = device_used();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0), past = vmm_create(40 * MiB, 0);
	cr_expect_eq(vmm_location(past), EMBER_SIM_HOST, "whole in host memory");
	cr_expect_eq(device_used(), before + 40 * MiB);
	CU_OK(SYM(shim, cuMemRelease)(past));
	CU_OK(SYM(shim, cuMemRelease)(within));
}

/*
 * Made whole in host memory, an allocation's mapping answers
 * cuMemGetAddressRange as the program's, where the driver answers a base
 * outside it (the simulated driver 0, as an H100 did): at each of two
 * mappings, after the first is unmapped, and once released, retained from
 * an address and mapped again. Unmapped, the driver's answer stands again.
 */
Test(placement, cuMemCreate_memory_made_whole_in_host_memory_answers_its_mappings_range)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	setenv("EMBER_SPLIT_VMM", "0", 1);
	start_static();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0), past = vmm_create(40 * MiB, 0);
	CUmemGenericAllocationHandle small = vmm_create(4 * MiB, 0);
	cr_assert_eq(vmm_location(past), EMBER_SIM_HOST, "whole in host memory");
	cr_assert_eq(vmm_location(small), 0, "on the GPU");
	CUdeviceptr va = 0, base = 0;
	size_t size = 0;
	CU_OK(SYM(shim, cuMemAddressReserve)(&va, 120 * MiB, 0, 0, 0));
	CUdeviceptr first = va, second = va + 40 * MiB, third = va + 80 * MiB;
	CU_OK(SYM(shim, cuMemMap)(first, 40 * MiB, 0, past, 0));
	CU_OK(SYM(shim, cuMemMap)(second, 40 * MiB, 0, past, 0));
	CU_OK(SYM(shim, cuMemRelease)(past));
	CU_OK(SYM(sim, cuMemGetAddressRange_v2)(&base, &size, first + MiB));
	cr_expect_eq(base, 0, "the driver's answer begins outside the mapping");
	CU_OK(SYM(shim, cuMemGetAddressRange_v2)(&base, &size, first + MiB));
	cr_expect(base == first && size == 40 * MiB, "the first mapping");
	CU_OK(SYM(shim, cuMemGetAddressRange_v2)(&base, &size, second + 39 * MiB));
	cr_expect(base == second && size == 40 * MiB, "the second mapping");
	CU_OK(SYM(shim, cuMemUnmap)(first, 40 * MiB));
	CU_OK(SYM(shim, cuMemGetAddressRange_v2)(&base, &size, second));
	cr_expect(base == second && size == 40 * MiB, "the second, the first gone");
	CUmemGenericAllocationHandle again = 0;
	CU_OK(SYM(shim, cuMemRetainAllocationHandle)(&again, (void *)second));
	CU_OK(SYM(shim, cuMemMap)(third, 40 * MiB, 0, again, 0));
	CU_OK(SYM(shim, cuMemRelease)(again));
	CU_OK(SYM(shim, cuMemGetAddressRange_v2)(&base, &size, third + 20 * MiB));
	cr_expect(base == third && size == 40 * MiB, "released, retained and mapped again: the new mapping");
	CU_OK(SYM(shim, cuMemUnmap)(second, 80 * MiB));
	CU_OK(SYM(shim, cuMemMap)(third, 4 * MiB, 0, small, 0));
	CU_OK(SYM(shim, cuMemGetAddressRange_v2)(&base, &size, third + MiB));
	cr_expect(base == third && size == 4 * MiB, "GPU memory mapped where it was: the driver's answer");
	CU_OK(SYM(shim, cuMemUnmap)(third, 4 * MiB));
	CU_OK(SYM(shim, cuMemAddressFree)(va, 120 * MiB));
	CU_OK(SYM(shim, cuMemRelease)(small));
	CU_OK(SYM(shim, cuMemRelease)(within));
}

/* One cuMemUnmap or cuMemSetAccess over a split's mapping and a plain one beside it reaches every part. */
Test(placement, a_range_over_a_split_and_its_neighbour_is_unmapped_and_given_access_whole)
{
	uint64_t before = start_splitting();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0), split = vmm_create(40 * MiB, 0);
	CUmemGenericAllocationHandle plain = vmm_create(4 * MiB, 0);
	CUdeviceptr va = 0;
	CU_OK(SYM(shim, cuMemAddressReserve)(&va, 48 * MiB, 0, 0, 0));
	CU_OK(SYM(shim, cuMemMap)(va, 4 * MiB, 0, plain, 0));
	CU_OK(SYM(shim, cuMemMap)(va + 4 * MiB, 40 * MiB, 0, split, 0));
	CU_OK(SYM(shim, cuMemSetAccess)(va, 44 * MiB, &gpu_access, 1));
	CU_OK(SYM(shim, cuMemRelease)(plain));
	CU_OK(SYM(shim, cuMemRelease)(split));
	CU_OK(SYM(shim, cuMemRelease)(within));
	cr_expect_gt(device_used(), before, "still mapped: the driver keeps the memory");
	CU_OK(SYM(shim, cuMemUnmap)(va, 44 * MiB));
	cr_expect_eq(device_used(), before, "every part unmapped, and so freed");
}

/*
 * The idiom of releasing a handle once it is mapped, the mapping holding
 * the memory, and asking for it again from an address later: a split gives
 * the program's handle, the whole allocation's properties, from either
 * part, held again until released; unmapped, its memory is freed and its
 * parts' handles are no longer taken for it.
 */
Test(placement, a_split_released_while_mapped_is_retained_whole_from_an_address)
{
	uint64_t before = start_splitting();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0), split = vmm_create(40 * MiB, 0);
	CUdeviceptr va = vmm_map(split, 40 * MiB);
	CU_OK(SYM(shim, cuMemRelease)(split));
	cr_expect_eq(device_used(), before + 56 * MiB, "mapped: the driver keeps both parts");
	CUmemGenericAllocationHandle from_gpu = 0, from_host = 0;
	CU_OK(SYM(shim, cuMemRetainAllocationHandle)(&from_gpu, (void *)(va + MiB)));
	cr_expect_eq(from_gpu, split, "an address in its GPU part gives the program's handle");
	CU_OK(SYM(shim, cuMemRetainAllocationHandle)(&from_host, (void *)(va + 30 * MiB)));
	cr_expect_eq(from_host, split, "so does one in its host part");
	CUmemAllocationProp prop;
	CU_OK(SYM(shim, cuMemGetAllocationPropertiesFromHandle)(&prop, split));
	cr_expect(prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE && prop.location.id == 0, "as the program asked");
	CU_OK(SYM(shim, cuMemRelease)(from_host));
	CU_OK(SYM(shim, cuMemRelease)(from_gpu));
	cr_expect_neq(SYM(shim, cuMemGetAllocationPropertiesFromHandle)(&prop, split), CUDA_SUCCESS,
		      "released again: the program's handle is no longer one");
	CU_OK(SYM(shim, cuMemUnmap)(va, 40 * MiB));
	cr_expect_eq(device_used(), before + 40 * MiB, "unmapped: both parts freed");
	CUmemGenericAllocationHandle next = vmm_create(40 * MiB, 0);
	cr_expect_eq(device_used(), before + 56 * MiB, "the budget gave the split's room back once: the next is split alike");
	CU_OK(SYM(shim, cuMemRelease)(next));
	CUmemGenericAllocationHandle plain = vmm_create(4 * MiB, 0);
	CUdeviceptr plain_va = vmm_map(plain, 4 * MiB);
	CUmemGenericAllocationHandle again = 0;
	CU_OK(SYM(shim, cuMemRetainAllocationHandle)(&again, (void *)plain_va));
	cr_expect_eq(again, plain, "a plain allocation's own handle");
	CU_OK(SYM(shim, cuMemRelease)(again));
	CU_OK(SYM(shim, cuMemUnmap)(plain_va, 4 * MiB));
	CU_OK(SYM(shim, cuMemRelease)(plain));
	CU_OK(SYM(shim, cuMemRelease)(within));
	cr_expect_eq(device_used(), before);
}

/*
 * Mapped whole in two places (a ring buffer maps one allocation twice) and
 * released: once the first mapping goes, the second still answers as the
 * whole allocation, and the memory goes with the second.
 */
Test(placement, a_split_mapped_in_two_places_answers_whole_at_each_until_its_last_unmap)
{
	uint64_t before = start_splitting();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0), split = vmm_create(40 * MiB, 0);
	CUdeviceptr first = vmm_map(split, 40 * MiB), second = vmm_map(split, 40 * MiB);
	CU_OK(SYM(shim, cuMemRelease)(split));
	CUdeviceptr base = 0;
	size_t size = 0;
	CU_OK(SYM(shim, cuMemGetAddressRange_v2)(&base, &size, second + 30 * MiB));
	cr_expect(base == second && size == 40 * MiB, "the second mapping whole, while the first is there too");
	CU_OK(SYM(shim, cuMemUnmap)(first, 40 * MiB));
	cr_expect_eq(device_used(), before + 56 * MiB, "still mapped at the second: the driver keeps both parts");
	CU_OK(SYM(shim, cuMemGetAddressRange_v2)(&base, &size, second + MiB));
	cr_expect(base == second && size == 40 * MiB, "the second mapping whole, the first gone");
	CUmemGenericAllocationHandle again = 0;
	CU_OK(SYM(shim, cuMemRetainAllocationHandle)(&again, (void *)(second + 30 * MiB)));
	cr_expect_eq(again, split, "the program's handle, held again from its host part");
	CU_OK(SYM(shim, cuMemRelease)(again));
	CU_OK(SYM(shim, cuMemUnmap)(second, 40 * MiB));
	cr_expect_eq(device_used(), before + 40 * MiB, "its last mapping gone: both parts freed");
	CU_OK(SYM(shim, cuMemRelease)(within));
	cr_expect_eq(device_used(), before);
}

/* As many whole mappings as the program makes are kept: the fifth answers whole once the first four are gone. */
Test(placement, a_split_mapped_in_five_places_answers_whole_at_the_last)
{
	uint64_t before = start_splitting();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0), split = vmm_create(40 * MiB, 0);
	CUdeviceptr at[5];
	for (int k = 0; k < 5; k++)
		at[k] = vmm_map(split, 40 * MiB);
	CU_OK(SYM(shim, cuMemRelease)(split));
	for (int k = 0; k < 4; k++)
		CU_OK(SYM(shim, cuMemUnmap)(at[k], 40 * MiB));
	CUdeviceptr base = 0;
	size_t size = 0;
	CU_OK(SYM(shim, cuMemGetAddressRange_v2)(&base, &size, at[4] + 30 * MiB));
	cr_expect(base == at[4] && size == 40 * MiB, "the fifth mapping whole");
	CUmemGenericAllocationHandle again = 0;
	CU_OK(SYM(shim, cuMemRetainAllocationHandle)(&again, (void *)(at[4] + 30 * MiB)));
	cr_expect_eq(again, split, "the program's handle, from its host part");
	CU_OK(SYM(shim, cuMemRelease)(again));
	CU_OK(SYM(shim, cuMemUnmap)(at[4], 40 * MiB));
	cr_expect_eq(device_used(), before + 40 * MiB, "its last mapping gone: both parts freed");
	CU_OK(SYM(shim, cuMemRelease)(within));
}

/* Mapped only in its GPU part and released, a split's part goes alone: an address in it gives the part's handle. */
Test(placement, a_split_released_while_mapped_in_part_gives_its_part)
{
	uint64_t before = start_splitting();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0), split = vmm_create(40 * MiB, 0);
	CUdeviceptr va = vmm_map(split, 8 * MiB);
	CU_OK(SYM(shim, cuMemRelease)(split));
	CUmemGenericAllocationHandle part = 0;
	CU_OK(SYM(shim, cuMemRetainAllocationHandle)(&part, (void *)va));
	cr_expect_neq(part, split, "not the program's handle, whose host part is gone");
	cr_expect_eq(vmm_location(part), 0, "its GPU part");
	CU_OK(SYM(shim, cuMemRelease)(part));
	CU_OK(SYM(shim, cuMemUnmap)(va, 8 * MiB));
	CU_OK(SYM(shim, cuMemRelease)(within));
	cr_expect_eq(device_used(), before);
}

/*
 * One with a shareable handle type (PyTorch's expandable segments and JAX
 * ask for one) is split too, its host part on the GPU's host NUMA node; no
 * one handle can share its two parts, so its export is refused.
 */
Test(placement, a_shareable_allocation_is_split_and_its_export_refused)
{
	uint64_t before = start_splitting();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0);
	CUmemGenericAllocationHandle split = vmm_create(40 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	cr_expect_eq(device_used(), before + 56 * MiB, "16 MiB of it on the GPU");
	CUdeviceptr va = vmm_map(split, 40 * MiB);
	cr_expect_eq(driver_location_at(va + 16 * MiB), EMBER_SIM_HOST);
	int fd = -1;
	cr_expect_eq(SYM(shim, cuMemExportToShareableHandle)(&fd, split, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
		     CUDA_ERROR_NOT_SUPPORTED);
	CU_OK(SYM(shim, cuMemUnmap)(va, 40 * MiB));
	CU_OK(SYM(shim, cuMemRelease)(split));
	CU_OK(SYM(shim, cuMemRelease)(within));
	cr_expect_eq(device_used(), before);
}

/*
 * Under a 512 MiB budget (room to 460.8 MiB), a shareable allocation smaller
 * than a 64th of it (8 MiB) that fits only in part goes whole to host memory,
 * the driver's own handle that the program may export, where a plain one of
 * the same size is split.
 */
Test(placement, a_small_shareable_allocation_is_kept_whole_and_exportable)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start("static", "512M");
	uint64_t before = device_used();
	CUmemGenericAllocationHandle within = vmm_create(456 * MiB, 0);
	CUmemGenericAllocationHandle shared = vmm_create(6 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	cr_expect_eq(vmm_location(shared), EMBER_SIM_HOST, "the driver's own handle, whole in host memory");
	cr_expect_eq(device_used(), before + 456 * MiB);
	CUmemGenericAllocationHandle plain = vmm_create(6 * MiB, 0);
	cr_expect_eq(device_used(), before + 460 * MiB, "4 MiB of the plain one on the GPU");
	CU_OK(SYM(shim, cuMemRelease)(plain));
	CU_OK(SYM(shim, cuMemRelease)(shared));
	CU_OK(SYM(shim, cuMemRelease)(within));
	cr_expect_eq(device_used(), before);
}

/*
 * The host refusing a split's host part: its GPU part is released and
 * uncharged, and the allocation is made whole in host memory instead.
 */
Test(placement, a_split_whose_host_part_is_refused_goes_whole_to_host_memory)
{
	uint64_t before = start_splitting();
	CUmemGenericAllocationHandle within = vmm_create(40 * MiB, 0);
	SYM(sim, ember_sim_fail_call)("cuMemCreate", 1, 1, CUDA_ERROR_OUT_OF_MEMORY); /* the GPU part made, not the host's */
	CUmemGenericAllocationHandle past = vmm_create(40 * MiB, 0);
	SYM(sim, ember_sim_fail_call)("cuMemCreate", 0, 0, CUDA_SUCCESS);
	cr_expect_eq(vmm_location(past), EMBER_SIM_HOST, "made whole in host memory");
	cr_expect_eq(device_used(), before + 40 * MiB, "the GPU part given back");
	CU_OK(SYM(shim, cuMemRelease)(past));
	CU_OK(SYM(shim, cuMemRelease)(within));
}

/*
 * cuMemCreate memory made in host memory is page-locked: with the host's
 * touches it stays within half of what the host could give at the first
 * claim (host_touch.h). Under a budget that one allocation of a ninth of
 * that fills (no room left to split the next at), one goes to the device
 * and about four to the host (what the
 * host can give moves while the test runs: three to five); the next stays
 * on the device, past the budget. A release gives its share back, and the
 * next goes to the host again.
 */
Test(placement, cuMemCreate_memory_in_host_memory_stays_within_half_of_what_the_host_can_give)
{
	uint64_t avail = ember_host_memory_available_now();
	if (avail == UINT64_MAX || avail < 9 * 64 * MiB)
		cr_skip_test("what the host can give is not known, or under 576 MiB");
	uint64_t each = avail / 9 / (2 * MiB) * (2 * MiB);
	char budget_text[32], memory[32];
	/* one allocation fills the budget's high watermark (90%) but for less than a split's 2 MiB */
	snprintf(budget_text, sizeof budget_text, "%lluM", (unsigned long long)(each / MiB * 10 / 9 + 2));
	snprintf(memory, sizeof memory, "%lluM", (unsigned long long)(4 * each / MiB));
	setenv("EMBER_SIM_MEMORY", memory, 1);
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start("static", budget_text);
	CUmemGenericAllocationHandle within = vmm_create(each, 0), past[8];
	cr_assert_eq(vmm_location(within), 0, "within the budget: on the device");
	unsigned on_host = 0, n = 0;
	while (n < 8) {
		past[n] = vmm_create(each, 0);
		if (vmm_location(past[n++]) != EMBER_SIM_HOST)
			break;
		on_host++;
	}
	cr_expect(on_host >= 3 && on_host <= 5, "%u allocations of a ninth of what the host could give made there",
		  on_host);
	cr_assert_eq(vmm_location(past[n - 1]), 0, "then one stays on the device");
	CU_OK(SYM(shim, cuMemRelease)(past[0]));
	CUmemGenericAllocationHandle again = vmm_create(each, 0);
	cr_expect_eq(vmm_location(again), EMBER_SIM_HOST, "a release gives its share back");
	CU_OK(SYM(shim, cuMemRelease)(again));
	for (unsigned i = 1; i < n; i++)
		CU_OK(SYM(shim, cuMemRelease)(past[i]));
	CU_OK(SYM(shim, cuMemRelease)(within));
}

/* In a child: 56 MiB within the 64 MiB budget, then 40 and 20 past it. */
static void create_past_the_budget_in_child(void)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	vmm_create(NEARLY_THE_BUDGET, 0);
	vmm_create(40 * MiB, 0);
	vmm_create(20 * MiB, 0);
}

Test(placement, the_statistics_count_cuMemCreate_memory_made_in_host_memory)
{
	char buf[16384];
	output_of_child("EMBER_STATS", create_past_the_budget_in_child, buf, sizeof buf);
	cr_expect_not_null(strstr(buf, "\"bytes_vmm_on_host\": 62914560,"), "60 MiB in host memory: %s", buf);
}

/*
 * Past the budget, a request that a NIC may reach the memory (PyTorch's and
 * XLA's) is dropped for host memory; one for compression keeps it on the
 * device, which alone has it.
 */
Test(placement, manage_all_drops_rdma_for_host_memory_and_keeps_compression_on_the_device)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUmemGenericAllocationHandle within = vmm_create(NEARLY_THE_BUDGET, 0), rdma, compressed;
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	prop.allocFlags.gpuDirectRDMACapable = 1;
	CU_OK(SYM(shim, cuMemCreate)(&rdma, 20 * MiB, &prop, 0));
	cr_expect_eq(vmm_location(rdma), EMBER_SIM_HOST);
	prop.allocFlags.gpuDirectRDMACapable = 0;
	prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
	CU_OK(SYM(shim, cuMemCreate)(&compressed, 20 * MiB, &prop, 0));
	cr_expect_eq(vmm_location(compressed), 0);
	CU_OK(SYM(shim, cuMemRelease)(compressed));
	CU_OK(SYM(shim, cuMemRelease)(rdma));
	CU_OK(SYM(shim, cuMemRelease)(within));
}

/* Without EMBER_MANAGE_ALL, or larger than the budget (a framework's pool), it stays on the device. */
Test(placement, cuMemCreate_memory_stays_on_the_device_without_manage_all)
{
	start_static();
	CUmemGenericAllocationHandle a = vmm_create(40 * MiB, 0), b = vmm_create(40 * MiB, 0);
	cr_expect_eq(vmm_location(b), 0, "the driver's, past the budget all the same");
	size_t free_b = 0, total_b = 0;
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, 0, "both counted against the budget");
	CU_OK(SYM(shim, cuMemRelease)(a));
	CU_OK(SYM(shim, cuMemRelease)(b));
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, budget, "until their release");
}

/* A pool larger than the budget stays on the device, with a warning that says how JAX avoids one. */
Test(placement, manage_all_leaves_a_cuMemCreate_pool_larger_than_the_budget_on_the_device)
{
	char log[] = "/tmp/ember-vmm-pool-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUmemGenericAllocationHandle pool = vmm_create(96 * MiB, 0);
	cr_expect_eq(vmm_location(pool), 0);
	CU_OK(SYM(shim, cuMemRelease)(pool));
	char buf[8192];
	cr_assert_gt(read_file(log, buf, sizeof buf), 0);
	unlink(log);
	cr_expect_not_null(strstr(buf, "warn: EMBER_MANAGE_ALL: cuMemCreate memory past GPU 0's budget stays on the "
				       "device where it is larger than the budget: a framework's pool (JAX's "
				       "preallocation: XLA_PYTHON_CLIENT_PREALLOCATE=false, which ember-run sets, "
				       "grows the pool instead, split at the budget; XLA_PYTHON_CLIENT_ALLOCATOR=platform "
				       "makes an allocation per array) (the first: 96 MiB)"),
			   "%s", buf);
}

/* The driver refusing host memory: the allocation is made on the device, as before, and one warning says so. */
Test(placement, manage_all_makes_cuMemCreate_memory_on_the_device_when_the_host_refuses)
{
	char log[] = "/tmp/ember-vmm-log-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "info", 1);
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	uint64_t before = device_used();
	CUmemGenericAllocationHandle within = vmm_create(NEARLY_THE_BUDGET, 0);
	SYM(sim, ember_sim_fail_call)("cuMemCreate", 0, 1, CUDA_ERROR_NOT_SUPPORTED);
	CUmemGenericAllocationHandle past = vmm_create(40 * MiB, 0);
	cr_expect_eq(vmm_location(past), 0, "the program still gets its memory");
	CU_OK(SYM(shim, cuMemRelease)(past));
	CU_OK(SYM(shim, cuMemRelease)(within));
	cr_expect_eq(device_used(), before);
	char buf[8192];
	cr_assert_gt(read_file(log, buf, sizeof buf), 0);
	unlink(log);
	cr_expect_not_null(strstr(buf, "warn: EMBER_MANAGE_ALL: cuMemCreate memory past GPU 0's budget stays on the "
				       "device where the driver will not make it in host memory, CUresult 801 (the first: 40 MiB)"),
			   "%s", buf);
}

/* ---- stream-ordered pools under EMBER_MANAGE_ALL ---- */

static int is_managed(CUdeviceptr p)
{
	int managed_flag = -1;
	CU_OK(SYM(shim, cuPointerGetAttribute)(&managed_flag, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
	return managed_flag;
}

static CUmemoryPool created_pool(CUmemAllocationHandleType handles, size_t cap)
{
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED, .handleTypes = handles,
				 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 }, .maxSize = cap };
	CUmemoryPool pool;
	CU_OK(SYM(shim, cuMemPoolCreate)(&pool, &props));
	return pool;
}

/*
 * An allocation of 4 MiB from pool (NULL: cuMemAllocAsync's, from the
 * device's current pool), freed in stream order; whether it was managed memory.
 */
static int pool_allocation_managed(CUmemoryPool pool)
{
	CUdeviceptr p;
	if (pool)
		CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&p, 4 * MiB, pool, NULL));
	else
		CU_OK(SYM(shim, cuMemAllocAsync)(&p, 4 * MiB, NULL));
	int managed_flag = is_managed(p);
	CU_OK(SYM(shim, cuMemFreeAsync)(p, NULL));
	CU_OK(SYM(shim, cuCtxSynchronize)());
	return managed_flag;
}

/*
 * The default pool's allocations and those of a pool made plainly are
 * converted (JAX's cuda_async allocator takes one of them); a pool with
 * shareable handles or a size cap keeps the driver's memory, and so does
 * every pool without EMBER_MANAGE_ALL.
 */
Test(placement, manage_all_converts_allocations_from_plain_pools)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUmemoryPool fallback, plain = created_pool(CU_MEM_HANDLE_TYPE_NONE, 0);
	CUmemoryPool shared = created_pool(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
	CUmemoryPool capped = created_pool(CU_MEM_HANDLE_TYPE_NONE, 64 * MiB);
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&fallback, 0));
	cr_expect_eq(pool_allocation_managed(fallback), 1, "the default pool's");
	cr_expect_eq(pool_allocation_managed(plain), 1, "a plain pool's");
	cr_expect_eq(pool_allocation_managed(shared), 0, "a pool that may share its memory keeps it");
	cr_expect_eq(pool_allocation_managed(capped), 0, "a capped pool keeps its memory");
	CU_OK(SYM(shim, cuMemPoolDestroy)(plain));
	CU_OK(SYM(shim, cuMemPoolDestroy)(shared));
	CU_OK(SYM(shim, cuMemPoolDestroy)(capped));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0, "every converted allocation freed");
}

/* Converted memory is placed on the current GPU: a plain pool of another keeps its memory. */
Test(placement, a_plain_pool_of_another_gpu_keeps_its_memory)
{
	setenv("EMBER_SIM_DEVICES", "2", 1);
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 1 } };
	CUmemoryPool other;
	CU_OK(SYM(shim, cuMemPoolCreate)(&other, &props));
	cr_expect_eq(pool_allocation_managed(other), 0);
	CU_OK(SYM(shim, cuMemPoolDestroy)(other));
}

/*
 * cuMemAllocAsync takes the device's current pool: one the program made
 * shareable and current (to export its pointers) keeps the driver's
 * memory, and the default made current again is converted again.
 */
Test(placement, async_allocations_follow_the_device_s_current_pool)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	cr_expect_eq(pool_allocation_managed(NULL), 1, "from the default pool");
	CUmemoryPool fallback, shared = created_pool(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
	CUmemoryPool plain = created_pool(CU_MEM_HANDLE_TYPE_NONE, 0);
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&fallback, 0));
	CU_OK(SYM(shim, cuDeviceSetMemPool)(0, shared));
	cr_expect_eq(pool_allocation_managed(NULL), 0, "from a current pool that may share its memory");
	CU_OK(SYM(shim, cuDeviceSetMemPool)(0, plain));
	cr_expect_eq(pool_allocation_managed(NULL), 1, "from a plain pool made current");
	CU_OK(SYM(shim, cuDeviceSetMemPool)(0, fallback));
	cr_expect_eq(pool_allocation_managed(NULL), 1, "from the default made current again");
	CU_OK(SYM(shim, cuMemPoolDestroy)(shared));
	CU_OK(SYM(shim, cuMemPoolDestroy)(plain));
}

/*
 * A pool's allocation into a stream being captured is the graph's, as
 * cuMemAllocAsync's is: not converted, and not counted against the budget,
 * since the graph frees it at each launch without a call Ember sees.
 */
Test(placement, a_pool_allocation_into_a_captured_stream_is_left_to_the_graph)
{
	start_static();
	CUmemoryPool fallback;
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&fallback, 0));
	CUstream captured;
	CU_OK(SYM(shim, cuStreamCreate)(&captured, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamBeginCapture_v2)(captured, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&p, 4 * MiB, fallback, captured));
	CUgraph graph = NULL;
	cr_expect_eq(SYM(shim, cuStreamEndCapture)(captured, &graph), CUDA_SUCCESS);
	if (graph)
		CU_OK(SYM(shim, cuGraphDestroy)(graph));
	size_t free_b = 0, total_b = 0;
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	cr_expect_eq(free_b, budget, "the graph's allocation is not counted");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(captured));
}

Test(placement, pool_allocations_stay_the_driver_s_without_manage_all)
{
	start_static();
	CUmemoryPool fallback;
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&fallback, 0));
	cr_expect_eq(pool_allocation_managed(fallback), 0);
}

/* Wall-clock nanoseconds. */
static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A converted stream-ordered allocation is populated on the GPU in order
 * with its own stream, not by a wait of the program's thread, which would
 * wait for every move queued before it on Ember's stream (here each wait
 * made to hold its thread 40 ms). A plain cuMemAlloc still waits: its
 * memory is usable at once, from any stream or the host.
 */
Test(placement, a_stream_ordered_conversion_does_not_wait_for_ember_s_moves)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUstream stream;
	CU_OK(SYM(shim, cuStreamCreate)(&stream, CU_STREAM_NON_BLOCKING));
	CUdeviceptr p, q;
	SYM(sim, ember_sim_slow_call)("cuStreamSynchronize", 0, 1000, 40 * 1000 * 1000);
	uint64_t t0 = wall_ns();
	CU_OK(SYM(shim, cuMemAllocAsync)(&p, 2 * MiB, stream));
	uint64_t t1 = wall_ns();
	CU_OK(SYM(shim, cuMemAlloc_v2)(&q, 2 * MiB));
	uint64_t t2 = wall_ns();
	SYM(sim, ember_sim_slow_call)("cuStreamSynchronize", 0, 0, 0);
	cr_expect_lt(t1 - t0, 40 * 1000 * 1000, "the async conversion held the thread %llu ns",
		     (unsigned long long)(t1 - t0));
	cr_expect_geq(t2 - t1, 40 * 1000 * 1000, "the plain conversion waits: %llu ns", (unsigned long long)(t2 - t1));
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)p), 0, "made on the GPU all the same");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)q), 0);
	cr_expect_eq(is_managed(p), 1);
	CU_OK(SYM(shim, cuMemFreeAsync)(p, stream));
	CU_OK(SYM(shim, cuMemFree_v2)(q));
	sync_and_flush(shim);
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/* ---- EMBER_KEEP_FREED: freed stream-ordered conversions kept for reuse ---- */

/* A pool that keeps up to threshold bytes of freed memory, as PyTorch and JAX set theirs. */
static void pool_keeps(CUmemoryPool pool, cuuint64_t threshold)
{
	CU_OK(SYM(shim, cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
}

/*
 * Under manage-all with EMBER_KEEP_FREED=keep (NULL: its default), the
 * default pool keeping all it is given, and a stream.
 */
static CUstream start_keeping(const char *keep)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	if (keep)
		setenv("EMBER_KEEP_FREED", keep, 1);
	else
		unsetenv("EMBER_KEEP_FREED");
	start_static();
	CUmemoryPool fallback;
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&fallback, 0));
	pool_keeps(fallback, UINT64_MAX);
	CUstream stream;
	CU_OK(SYM(shim, cuStreamCreate)(&stream, CU_STREAM_NON_BLOCKING));
	return stream;
}

/* Free q on stream, wait for it, and destroy the stream. */
static void end_keeping(CUdeviceptr q, CUstream stream)
{
	CU_OK(SYM(shim, cuMemFreeAsync)(q, stream));
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/* A stream-ordered allocation of bytes on stream, the driver's managed allocation failing if it is asked for one. */
static CUdeviceptr alloc_without_the_driver(size_t bytes, CUstream stream)
{
	SYM(sim, ember_sim_fail_call)("cuMemAllocManaged", 0, 1, CUDA_ERROR_OUT_OF_MEMORY);
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocAsync)(&p, bytes, stream));
	SYM(sim, ember_sim_fail_call)("cuMemAllocManaged", 0, 0, CUDA_SUCCESS);
	return p;
}

/* A stream-ordered allocation of bytes on stream, freed there at once: its address. */
static CUdeviceptr freed_on(CUstream stream, size_t bytes)
{
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocAsync)(&p, bytes, stream));
	CU_OK(SYM(shim, cuMemFreeAsync)(p, stream));
	return p;
}

/*
 * The memory freed on a stream goes to that stream's next allocation of
 * the same size at once, still managed and placed, without a managed
 * allocation of the driver's (here made to fail: the allocation would
 * then be the driver's plain memory); one of another size gets its own.
 */
Test(placement, freed_stream_ordered_memory_is_kept_for_the_same_stream)
{
	CUstream stream = start_keeping("16M");
	CUdeviceptr p = freed_on(stream, 4 * MiB);
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, stream);
	cr_expect_eq(q, p, "the kept memory");
	cr_expect_eq(is_managed(q), 1);
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)q), 0, "placed as it was");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, stream));
	CUdeviceptr other = alloc_without_the_driver(2 * MiB, stream);
	cr_expect_eq(is_managed(other), 0, "another size: a new allocation (the driver's, here)");
	end_keeping(other, stream);
}

/* By default up to 2% of the budget of freed memory is kept: here 1.28 MiB of 64. */
Test(placement, freed_stream_ordered_memory_is_kept_by_default)
{
	CUstream stream = start_keeping(NULL);
	CUdeviceptr p = freed_on(stream, 1 * MiB);
	CUdeviceptr q = alloc_without_the_driver(1 * MiB, stream);
	cr_expect(q == p && is_managed(q) == 1, "the kept memory");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, stream));
	CU_OK(SYM(shim, cuMemAllocAsync)(&p, 2 * MiB, stream));
	cr_expect_eq(is_managed(p), 1);
	CU_OK(SYM(shim, cuMemFreeAsync)(p, stream));
	q = alloc_without_the_driver(2 * MiB, stream);
	cr_expect_eq(is_managed(q), 0, "past 2%: not kept, a new allocation (the driver's, here)");
	end_keeping(q, stream);
}

/* With EMBER_KEEP_FREED=0 each free frees. */
Test(placement, freed_stream_ordered_memory_is_not_kept_at_0)
{
	CUstream stream = start_keeping("0");
	(void)freed_on(stream, 4 * MiB);
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, stream);
	cr_expect_eq(is_managed(q), 0, "a new allocation (the driver's, here)");
	end_keeping(q, stream);
}

/*
 * Another stream gets it once the freeing stream has passed the free, and
 * so does a stream made after the freeing one was destroyed (which may get
 * its handle), never at sight.
 */
Test(placement, kept_memory_goes_to_another_stream_once_the_free_is_passed)
{
	CUstream stream = start_keeping("16M"), other;
	CU_OK(SYM(shim, cuStreamCreate)(&other, CU_STREAM_NON_BLOCKING));
	CUdeviceptr p, q;
	p = freed_on(stream, 4 * MiB);
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	q = alloc_without_the_driver(4 * MiB, other);
	cr_expect_eq(q, p, "after the freeing stream passed the free");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, other));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(other));
	CUstream again;
	CU_OK(SYM(shim, cuStreamCreate)(&again, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamSynchronize)(again));
	CU_OK(SYM(shim, cuCtxSynchronize)());
	q = alloc_without_the_driver(4 * MiB, again);
	cr_expect_eq(q, p, "by its event, whatever handle the new stream has");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, again));
	CU_OK(SYM(shim, cuStreamSynchronize)(again));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(again));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/*
 * Kept memory that another stream still uses is passed over for the next
 * oldest, whose stream has passed its free: an allocation on a third
 * stream gets that, not a new one.
 */
Test(placement, kept_memory_another_stream_still_uses_is_passed_over_for_the_next)
{
	CUstream idle = start_keeping("16M"), busy, asking;
	CU_OK(SYM(shim, cuStreamCreate)(&busy, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(shim, cuStreamCreate)(&asking, CU_STREAM_NON_BLOCKING));
	CUdeviceptr slow, in_use, passed, got;
	CU_OK(SYM(shim, cuMemAllocAsync)(&slow, 128 * MiB, busy)); /* past the budget: mostly in host memory */
	CU_OK(SYM(shim, cuMemAllocAsync)(&in_use, 4 * MiB, busy));
	CU_OK(SYM(shim, cuMemAllocAsync)(&passed, 4 * MiB, idle));
	/* milliseconds of virtual time queued on busy, which has not passed the free behind them */
	CU_OK(SYM(shim, cuMemsetD32Async)(slow, 0, 32 * MiB, busy));
	CU_OK(SYM(shim, cuMemFreeAsync)(in_use, busy));
	CU_OK(SYM(shim, cuMemFreeAsync)(passed, idle));
	got = alloc_without_the_driver(4 * MiB, asking);
	cr_expect_eq(got, passed, "the next oldest, whose stream passed its free, not the oldest");
	CU_OK(SYM(shim, cuMemFreeAsync)(got, asking));
	CU_OK(SYM(shim, cuMemFreeAsync)(slow, busy));
	CU_OK(SYM(shim, cuCtxSynchronize)());
	CU_OK(SYM(shim, cuStreamDestroy_v2)(asking));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(busy));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(idle));
}

/* Two stream-ordered allocations of 4 MiB on stream, freed there in order. */
static void free_two(CUstream stream, CUdeviceptr *a, CUdeviceptr *b)
{
	CU_OK(SYM(shim, cuMemAllocAsync)(a, 4 * MiB, stream));
	CU_OK(SYM(shim, cuMemAllocAsync)(b, 4 * MiB, stream));
	CU_OK(SYM(shim, cuMemFreeAsync)(*a, stream));
	CU_OK(SYM(shim, cuMemFreeAsync)(*b, stream));
}

/* Past the amount kept, the oldest is freed for good: its residency leaves the GPU and the budget. */
Test(placement, past_the_amount_kept_the_oldest_is_freed)
{
	CUstream stream = start_keeping("4M");
	CUdeviceptr a, b;
	free_two(stream, &a, &b);
	sync_and_flush(shim);
	cr_expect_eq(resident(), 4 * MiB, "one kept, one freed");
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, stream);
	cr_expect_eq(q, b, "the newest was kept");
	end_keeping(q, stream);
}

/*
 * A second free of kept memory is refused as the driver refuses a pointer
 * it does not know, so that no two allocations get it; a synchronous free
 * of it frees it for good.
 */
Test(placement, kept_memory_freed_again_is_refused_or_freed_for_good)
{
	CUstream stream = start_keeping("16M");
	CUdeviceptr p = freed_on(stream, 4 * MiB);
	cr_expect_eq(SYM(shim, cuMemFreeAsync)(p, stream), CUDA_ERROR_INVALID_VALUE);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0, "freed for good");
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, stream);
	cr_expect_eq(is_managed(q), 0, "nothing kept: a new allocation (the driver's, here)");
	end_keeping(q, stream);
}

/* Each tiny allocation kept counts as a 64 KiB page against the amount: 16 MiB keeps 256 of 4 KiB. */
Test(placement, tiny_kept_allocations_count_as_pages)
{
	CUstream stream = start_keeping("16M");
	enum { N = 300 };
	static CUdeviceptr p[N];
	for (int i = 0; i < N; i++)
		CU_OK(SYM(shim, cuMemAllocAsync)(&p[i], 4096, stream));
	for (int i = 0; i < N; i++)
		CU_OK(SYM(shim, cuMemFreeAsync)(p[i], stream));
	int given = 0;
	for (int i = 0; i < N; i++) {
		p[i] = alloc_without_the_driver(4096, stream);
		given += is_managed(p[i]);
	}
	cr_expect_eq(given, 256, "kept and given again: %d", given);
	for (int i = 1; i < N; i++)
		CU_OK(SYM(shim, cuMemFreeAsync)(p[i], stream));
	end_keeping(p[0], stream);
}

/* A context's teardown frees what was kept in it: the next context's allocations are its own. */
Test(placement, a_teardown_forgets_what_was_kept)
{
	CUstream stream = start_keeping("16M");
	(void)freed_on(stream, 4 * MiB);
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	CU_OK(SYM(shim, cuDevicePrimaryCtxReset_v2)(0));
	CUcontext ctx;
	CU_OK(SYM(shim, cuDevicePrimaryCtxRetain)(&ctx, 0));
	CU_OK(SYM(shim, cuCtxSetCurrent)(ctx));
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, NULL);
	cr_expect_eq(is_managed(q), 0, "nothing kept: a new allocation (the driver's, here)");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, NULL));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0);
}

/* A pool's allocation gets only memory freed from that pool: the default pool's is not another pool's. */
Test(placement, kept_memory_goes_only_to_its_own_pool)
{
	CUstream stream = start_keeping("16M");
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUmemoryPool pool, fallback;
	CU_OK(SYM(shim, cuMemPoolCreate)(&pool, &props));
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&fallback, 0));
	CUdeviceptr p, q;
	p = freed_on(stream, 4 * MiB);
	SYM(sim, ember_sim_fail_call)("cuMemAllocManaged", 0, 1, CUDA_ERROR_OUT_OF_MEMORY);
	CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&q, 4 * MiB, pool, stream));
	cr_expect_eq(is_managed(q), 0, "another pool's allocation: not the kept memory (the driver's, here)");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, stream));
	CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&q, 4 * MiB, fallback, stream));
	SYM(sim, ember_sim_fail_call)("cuMemAllocManaged", 0, 0, CUDA_SUCCESS);
	cr_expect_eq(q, p, "the default pool, named, is cuMemAllocAsync's");
	end_keeping(q, stream);
	CU_OK(SYM(shim, cuMemPoolDestroy)(pool));
}

/*
 * As the driver's pool, a pool keeps what passes its release threshold
 * only until the program's next synchronisation: at 0, the default, freed
 * memory is given again before it and let go at it; past a threshold, the
 * pool's oldest is let go.
 */
Test(placement, kept_memory_past_the_pool_s_release_threshold_goes_at_a_synchronisation)
{
	CUstream stream = start_keeping("16M");
	CUmemoryPool fallback;
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&fallback, 0));
	pool_keeps(fallback, 0);
	CUdeviceptr p = freed_on(stream, 4 * MiB);
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, stream);
	cr_expect_eq(q, p, "before a synchronisation: kept");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, stream));
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0, "a threshold of 0: let go at the synchronisation");
	pool_keeps(fallback, 4 * MiB);
	CUdeviceptr a, b;
	free_two(stream, &a, &b);
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 4 * MiB, "4 MiB kept: the newer");
	q = alloc_without_the_driver(4 * MiB, stream);
	cr_expect_eq(q, b);
	end_keeping(q, stream);
}

/* Another stream is given the oldest memory kept of the size: the likeliest to be past its free. */
Test(placement, another_stream_is_given_the_oldest_kept_memory)
{
	CUstream stream = start_keeping("16M"), other;
	CUdeviceptr a, b;
	free_two(stream, &a, &b);
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	CU_OK(SYM(shim, cuStreamCreate)(&other, CU_STREAM_NON_BLOCKING));
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, other);
	cr_expect_eq(q, a, "the older of the two");
	CU_OK(SYM(shim, cuMemFreeAsync)(q, other));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(other));
	end_keeping(alloc_without_the_driver(4 * MiB, stream), stream);
}

/*
 * A forked child gets none of its parent's kept memory (the real driver
 * refuses a CUDA parent's child its calls; the simulated one serves it):
 * its allocation is a new one.
 */
static CUstream kept_stream;
static CUdeviceptr kept_base;

static void allocate_the_kept_size(void)
{
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, kept_stream);
	if (q == kept_base || is_managed(q))
		exit(1); /* given the parent's kept memory */
}

Test(placement, a_forked_child_is_not_given_its_parent_s_kept_memory)
{
	kept_stream = start_keeping("16M");
	kept_base = freed_on(kept_stream, 4 * MiB);
	run_in_child(allocate_the_kept_size);
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, kept_stream);
	cr_expect_eq(q, kept_base, "the parent still has it");
	end_keeping(q, kept_stream);
}

/* A thread's use of its per-thread default stream (the _ptsz entry points, stream 0). */
struct per_thread_use {
	CUcontext ctx;
	CUdeviceptr p;          /* what it allocated */
	pthread_t self;
};

/* Allocate 4 MiB, fill 32 MiB of a buffer and the allocation, and free it, all in order on the stream. */
static void *free_after_filling(void *arg)
{
	struct per_thread_use *u = arg;
	u->self = pthread_self();
	CU_OK(SYM(shim, cuCtxSetCurrent)(u->ctx));
	CUdeviceptr big = managed(32 * MiB);
	CU_OK(SYM(shim, cuMemAllocAsync_ptsz)(&u->p, 4 * MiB, NULL));
	unsigned value = 7;
	size_t n = 8 * MiB;
	void *params[] = { &big, &value, &n };
	CU_OK(SYM(shim, cuLaunchKernel_ptsz)(fill, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
	CU_OK(SYM(shim, cuMemFreeAsync_ptsz)(u->p, NULL));
	return NULL;
}

/* Allocate 4 MiB on the thread's stream, the driver's managed allocation made to fail. */
static void *allocate_without_the_driver(void *arg)
{
	struct per_thread_use *u = arg;
	u->self = pthread_self();
	CU_OK(SYM(shim, cuCtxSetCurrent)(u->ctx));
	SYM(sim, ember_sim_fail_call)("cuMemAllocManaged", 0, 1, CUDA_ERROR_OUT_OF_MEMORY);
	CU_OK(SYM(shim, cuMemAllocAsync_ptsz)(&u->p, 4 * MiB, NULL));
	SYM(sim, ember_sim_fail_call)("cuMemAllocManaged", 0, 0, CUDA_SUCCESS);
	return NULL;
}

static void in_thread(void *(*fn)(void *), struct per_thread_use *u)
{
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, fn, u), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
}

/*
 * Memory freed on an exited thread's per-thread stream goes to a later
 * thread only once that stream has passed the free, though the later
 * thread may have the exited one's pthread_self().
 */
Test(placement, a_new_thread_waits_for_an_exited_thread_s_stream_to_pass_its_free)
{
	CUstream stream = start_keeping("16M");
	struct per_thread_use first = { 0 }, later = { 0 };
	CU_OK(SYM(shim, cuCtxGetCurrent)(&first.ctx));
	later.ctx = first.ctx;
	in_thread(free_after_filling, &first);
	in_thread(allocate_without_the_driver, &later);
	cr_log_info("the later thread %s the exited one's pthread_self()",
		    pthread_equal(first.self, later.self) ? "has" : "has not");
	cr_expect_neq(later.p, first.p, "given memory that the exited thread's stream may still be using");
	CU_OK(SYM(shim, cuMemFreeAsync)(later.p, stream));
	sync_and_flush(shim);
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/* However many pools keep memory, a synchronisation looks at each one's threshold. */
Test(placement, a_synchronisation_lets_go_of_every_pool_s_kept_memory)
{
	CUstream stream = start_keeping("64M");
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	enum { POOLS = 12 };
	CUmemoryPool pools[POOLS];
	for (int i = 0; i < POOLS; i++) {
		CUdeviceptr p;
		CU_OK(SYM(shim, cuMemPoolCreate)(&pools[i], &props));
		CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&p, 1 * MiB, pools[i], stream));
		CU_OK(SYM(shim, cuMemFreeAsync)(p, stream));
	}
	cr_assert_eq(SYM(shim, ember_flush)(), 0);
	cr_expect_eq(resident(), POOLS * MiB, "before a synchronisation: all kept");
	CU_OK(SYM(shim, cuStreamSynchronize)(stream));
	cr_assert_eq(SYM(shim, ember_flush)(), 0);
	cr_expect_eq(resident(), 0, "every pool's threshold is 0: all let go at one synchronisation");
	for (int i = 0; i < POOLS; i++)
		CU_OK(SYM(shim, cuMemPoolDestroy)(pools[i]));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/*
 * A trim lets go of the pool's oldest, past more than one batch of entries,
 * and leaves another pool's, kept in between, where they were: the newest
 * of the trimmed pool and all of the other are given again, in order.
 */
Test(placement, a_trim_past_many_entries_keeps_the_newest_and_another_pool_s)
{
	CUstream stream = start_keeping("64M");
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	enum { EACH = 100, KEEP = 10, UNIT = 256 << 10 }; /* all of it within the 64 MiB budget */
	CUmemoryPool trimmed, other;
	CU_OK(SYM(shim, cuMemPoolCreate)(&trimmed, &props));
	CU_OK(SYM(shim, cuMemPoolCreate)(&other, &props));
	pool_keeps(trimmed, UINT64_MAX);
	pool_keeps(other, UINT64_MAX);
	CUdeviceptr t[EACH], o[EACH];
	for (int i = 0; i < EACH; i++) {
		CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&t[i], UNIT, trimmed, stream));
		CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&o[i], UNIT, other, stream));
	}
	for (int i = 0; i < EACH; i++) { /* kept interleaved, oldest first */
		CU_OK(SYM(shim, cuMemFreeAsync)(t[i], stream));
		CU_OK(SYM(shim, cuMemFreeAsync)(o[i], stream));
	}
	CU_OK(SYM(shim, cuMemPoolTrimTo)(trimmed, KEEP * UNIT));
	sync_and_flush(shim);
	cr_expect_eq(resident(), (uint64_t)(EACH + KEEP) * UNIT, "the other pool's and the trimmed pool's newest");
	SYM(sim, ember_sim_fail_call)("cuMemAllocManaged", 0, 1, CUDA_ERROR_OUT_OF_MEMORY);
	CUdeviceptr p;
	for (int i = EACH; i-- > EACH - KEEP;) {
		CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&p, UNIT, trimmed, stream));
		cr_expect_eq(p, t[i], "the trimmed pool's newest, newest first");
	}
	for (int i = EACH; i-- > 0;) {
		CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&p, UNIT, other, stream));
		cr_expect_eq(p, o[i], "the other pool's, all there");
	}
	SYM(sim, ember_sim_fail_call)("cuMemAllocManaged", 0, 0, CUDA_SUCCESS);
	CU_OK(SYM(shim, cuMemPoolDestroy)(trimmed));
	CU_OK(SYM(shim, cuMemPoolDestroy)(other));
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

/*
 * Trimming a pool (cuMemPoolTrimTo: PyTorch's empty_cache) frees its kept
 * memory past what the program asks to keep, oldest first, and destroying
 * a pool frees all of it: its residency leaves the GPU and the budget.
 */
Test(placement, trimming_or_destroying_a_pool_frees_its_kept_memory)
{
	CUstream stream = start_keeping("16M");
	CUdeviceptr a, b;
	free_two(stream, &a, &b);
	CUmemoryPool fallback;
	CU_OK(SYM(shim, cuDeviceGetDefaultMemPool)(&fallback, 0));
	CU_OK(SYM(shim, cuMemPoolTrimTo)(fallback, 4 * MiB));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 4 * MiB, "4 MiB kept, as asked: the newer");
	CUdeviceptr q = alloc_without_the_driver(4 * MiB, stream);
	cr_expect_eq(q, b);
	CU_OK(SYM(shim, cuMemFreeAsync)(q, stream));
	CU_OK(SYM(shim, cuMemPoolTrimTo)(fallback, 0));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0, "trimmed to nothing");
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUmemoryPool pool;
	CU_OK(SYM(shim, cuMemPoolCreate)(&pool, &props));
	pool_keeps(pool, UINT64_MAX);
	CU_OK(SYM(shim, cuMemAllocFromPoolAsync)(&a, 4 * MiB, pool, stream));
	CU_OK(SYM(shim, cuMemFreeAsync)(a, stream));
	CU_OK(SYM(shim, cuMemPoolDestroy)(pool));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0, "its pool destroyed");
	CU_OK(SYM(shim, cuStreamDestroy_v2)(stream));
}

Test(placement, manage_all_converts_plain_allocations)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUdeviceptr small, big;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&small, 4 * MiB));
	CU_OK(SYM(shim, cuMemAlloc_v2)(&big, 100 * MiB));
	int managed_flag = 0;
	CU_OK(SYM(shim, cuPointerGetAttribute)(&managed_flag, CU_POINTER_ATTRIBUTE_IS_MANAGED, small));
	cr_expect_eq(managed_flag, 1, "cuMemAlloc returned managed memory");
	size_t free_e, total_e, free_d, total_d;
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_e, &total_e));
	CU_OK(SYM(sim, cuMemGetInfo_v2)(&free_d, &total_d));
	cr_expect(total_e == total_d && free_e == free_d,
		  "under manage-all the budget caps residency, not capacity: the GPU's own figures");
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)small), 0, "made on the GPU while it fits");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(big + 99 * MiB)), EMBER_SIM_NOWHERE,
		     "past the budget it stays unpopulated, mapped");
	expect_within_budget();
	CU_OK(SYM(shim, cuMemFree_v2)(small));
	CU_OK(SYM(shim, cuMemFree_v2)(big));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0);
	/* stream-ordered frees of converted memory wait for the stream */
	CUdeviceptr a;
	CU_OK(SYM(shim, cuMemAllocAsync)(&a, 2 * MiB, NULL));
	CU_OK(SYM(shim, cuMemFreeAsync)(a, NULL));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0);
}

/*
 * By default (EMBER_POPULATE_HOST) what the budget leaves mapped of
 * converted memory is made in host memory by the host's touches, reading
 * zero as untouched memory does; what fits is made on the GPU. With
 * EMBER_POPULATE_ASYNC=0 the touches are made before cuMemAlloc returns.
 * A budget of 512 MiB, 400 of it taken first: 104 MiB of the next 200 are
 * past it, enough for several threads to touch.
 */
static CUdeviceptr converted_past_the_budget(void)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start("static", "512M");
	CUdeviceptr first, big;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&first, 400 * MiB));
	CU_OK(SYM(shim, cuMemAlloc_v2)(&big, 200 * MiB));
	cr_expect_leq(peak(), 512 * MiB / 100 * 90, "the GPU held %llu bytes, over the high watermark",
		      (unsigned long long)peak());
	return big;
}

Test(placement, converted_memory_past_the_budget_is_made_in_host_memory_before_the_allocation_returns)
{
	setenv("EMBER_POPULATE_ASYNC", "0", 1);
	CUdeviceptr big = converted_past_the_budget();
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)big), 0, "made on the GPU while it fits");
	for (size_t off = 100 * MiB; off < 200 * MiB; off += 2 * MiB)
		cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(big + off)), EMBER_SIM_HOST,
			     "past the budget, made in host memory (%zu MiB in)", off / MiB);
	for (size_t off = 0; off < 200 * MiB; off += 4099)
		cr_assert_eq(((unsigned char *)big)[off], 0, "byte %zu reads zero", off);
	CU_OK(SYM(shim, cuMemFree_v2)(big));
}

Test(placement, populate_host_0_leaves_converted_memory_past_the_budget_unmade)
{
	setenv("EMBER_POPULATE_HOST", "0", 1);
	CUdeviceptr big = converted_past_the_budget();
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)big), 0, "made on the GPU while it fits");
	for (size_t off = 100 * MiB; off < 200 * MiB; off += 2 * MiB)
		cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(big + off)), EMBER_SIM_NOWHERE,
			     "past the budget, not made (%zu MiB in)", off / MiB);
}

/*
 * By default (EMBER_POPULATE_ASYNC) a pool makes the same pages while the
 * program goes on. The program's own writes, made at once and racing the
 * pool, keep what they wrote; every page past the budget ends up in host
 * memory.
 */
Test(placement, converted_memory_past_the_budget_is_made_in_the_background_and_keeps_what_the_program_wrote)
{
	char log[] = "/tmp/ember-populate-async-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "info", 1);
	CUdeviceptr big = converted_past_the_budget();
	unsigned char *p = (unsigned char *)big;
	for (size_t off = 100 * MiB; off < 200 * MiB; off += 4096)
		p[off + 8] = (unsigned char)(off >> 12 | 1);
	bool all = false;
	for (int tries = 0; tries < 500 && !all; tries++) {
		all = true;
		for (size_t off = 100 * MiB; off < 200 * MiB && all; off += 2 * MiB)
			all = SYM(sim, ember_sim_block_location)((void *)(big + off)) == EMBER_SIM_HOST;
		if (!all)
			usleep(10000);
	}
	cr_expect(all, "past the budget, made in host memory");
	for (size_t off = 100 * MiB; off < 200 * MiB; off += 4096)
		cr_assert_eq(p[off + 8], (unsigned char)(off >> 12 | 1), "byte %zu kept the program's write", off + 8);
	cr_expect_eq(__atomic_load_n(&p[100 * MiB], __ATOMIC_RELAXED), 0, "a byte the program left reads zero"); /* the pool's */
	CU_OK(SYM(shim, cuMemFree_v2)(big));
	char buf[16384];
	read_file(log, buf, sizeof buf);
	unlink(log);
	cr_expect_eq(lines_with(buf, "threads make converted memory past the budget in the background"), 1,
		     "the pool, not the allocating thread, made them: %s", buf);
}

/* 400 MiB that fill a 512 MiB budget, then twenty allocations of 200 MiB, each freed at once; returns the first. */
static CUdeviceptr allocate_and_free_past_the_budget(void)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start("static", "512M");
	CUdeviceptr first;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&first, 400 * MiB));
	for (int i = 0; i < 20; i++) {
		CUdeviceptr big;
		CU_OK(SYM(shim, cuMemAlloc_v2)(&big, 200 * MiB));
		CU_OK(SYM(shim, cuMemFree_v2)(big));
	}
	return first;
}

static void allocate_and_free_past_the_budget_in_child(void)
{
	allocate_and_free_past_the_budget();
}

/* The first "bytes_populated" figure of a stats report: the GPU's account. */
static unsigned long long populated_in(const char *stats)
{
	const char *at = strstr(stats, "\"bytes_populated\": ");
	cr_assert_not_null(at, "%s", stats);
	return strtoull(at + strlen("\"bytes_populated\": "), NULL, 10);
}

/*
 * The statistics count what the pool made, not what it was given: twenty
 * allocations freed as soon as they are made leave it little to touch
 * (each would have 140 MiB past the budget, 2.8 GB in all, made at some
 * 10-15 GB/s), where the touches before returning make all of it.
 */
Test(placement, the_pool_counts_the_pages_it_made)
{
	char buf[16384];
	setenv("EMBER_POPULATE_ASYNC", "0", 1);
	output_of_child("EMBER_STATS", allocate_and_free_past_the_budget_in_child, buf, sizeof buf);
	unsigned long long before_returning = populated_in(buf);
	cr_expect_gt(before_returning, 20 * 100 * MiB, "every allocation touched past the budget: %llu",
		     before_returning);
	setenv("EMBER_POPULATE_ASYNC", "1", 1);
	output_of_child("EMBER_STATS", allocate_and_free_past_the_budget_in_child, buf, sizeof buf);
	unsigned long long pool = populated_in(buf);
	cr_expect_lt(pool, before_returning, "the pool counts only the regions it came to: %llu", pool);
}

/* Freed while the pool may still be touching it: the free waits for the touch under way and nothing faults. */
Test(placement, converted_allocations_freed_while_the_pool_touches_them_are_left_alone)
{
	CUdeviceptr first = allocate_and_free_past_the_budget();
	CU_OK(SYM(shim, cuMemFree_v2)(first));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0);
}

/*
 * A context's teardown frees its memory without a cuMemFree each: the pool
 * stops touching first, or its threads would touch pages no longer mapped
 * and end the program. Here 800 MiB past the budget are still being made
 * when the primary context is reset.
 */
Test(placement, a_context_reset_while_the_pool_touches_its_memory_ends_nothing)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start("static", "512M");
	CUdeviceptr first, more[4];
	CU_OK(SYM(shim, cuMemAlloc_v2)(&first, 400 * MiB));
	for (int i = 0; i < 4; i++)
		CU_OK(SYM(shim, cuMemAlloc_v2)(&more[i], 200 * MiB));
	CUdevice d;
	CU_OK(SYM(shim, cuDeviceGet)(&d, 0));
	CU_OK(SYM(shim, cuDevicePrimaryCtxReset_v2)(d));
	usleep(100 * 1000); /* a thread still touching would fault by now */
	cr_expect_eq(resident(), 0, "the reset freed everything");
}

/* Retain the primary context again after its reset, as the runtime does, and reload the kernels. */
static void restart_primary(void)
{
	CUmodule mod = start_context(shim);
	CU_OK(SYM(shim, cuModuleGetFunction)(&fill, mod, "ember_fill_u32"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread, mod, "ember_reread_sum"));
}

/* 40 MiB allocated, advised by Ember, read and made resident: the last of its blocks is on the GPU. */
static CUdeviceptr resident_40_mib(void)
{
	CUdeviceptr p = managed(40 * MiB);
	struct ember_sim_block_info b;
	cr_assert_eq(SYM(sim, ember_sim_block_info)((void *)p, &b), 0);
	cr_expect_eq(b.preferred, EMBER_SIM_HOST, "tracked by Ember: advised mapped");
	launch_reread(shim, reread, p, 40 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(p + 38 * MiB)), 0, "promoted whole");
	return p;
}

/*
 * cudaDeviceReset between a program's phases (test suites, samples): the
 * driver frees the context's memory without a cuMemFree each. Ember forgets
 * it with the context, so its residency leaves the budget (two 40 MiB
 * allocations in turn would not fit a 64 MiB budget together), an address
 * the driver hands out again is tracked afresh, and moves are issued on a
 * stream of the new context, not the old one's.
 */
Test(placement, a_context_reset_forgets_the_memory_it_freed)
{
	char log[] = "/tmp/ember-reset-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "info", 1);
	start_static();
	resident_40_mib();
	CUdevice d;
	CU_OK(SYM(shim, cuDeviceGet)(&d, 0));
	CU_OK(SYM(shim, cuDevicePrimaryCtxReset_v2)(d));
	restart_primary();
	resident_40_mib();
	/* the first form, as cuGetProcAddress answers it at CUDA 7.0's version */
	CUresult(CUDAAPI * first_reset)(CUdevice) = NULL;
	CUdriverProcAddressQueryResult found;
	CU_OK(SYM(shim, cuGetProcAddress_v2)("cuDevicePrimaryCtxReset", (void **)&first_reset, 7000, 0, &found));
	CU_OK(first_reset(d));
	restart_primary();
	resident_40_mib();
	expect_within_budget();
	char buf[16384];
	read_file(log, buf, sizeof buf);
	unlink(log);
	cr_expect_eq(lines_with(buf, "is torn down: Ember forgets its 1 allocation\n"), 2, "one line a reset: %s", buf);
}

/* The same for a context the program created and destroys, its last release included. */
Test(placement, a_destroyed_context_takes_its_memory_out_of_the_budget)
{
	start_static();
	CUdevice d;
	CU_OK(SYM(shim, cuDeviceGet)(&d, 0));
	CUcontext primary, own = own_context(shim, &primary);
	CUmodule mod;
	CU_OK(SYM(shim, cuModuleLoadData)(&mod, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread, mod, "ember_reread_sum"));
	resident_40_mib();
	CU_OK(SYM(shim, cuCtxDestroy_v2)(own));
	CU_OK(SYM(shim, cuCtxSetCurrent)(primary));
	restart_primary();
	resident_40_mib();
	/* the primary's last release destroys it too: retained by start_static and restart_primary */
	CU_OK(SYM(shim, cuDevicePrimaryCtxRelease_v2)(d));
	CU_OK(SYM(shim, cuDevicePrimaryCtxRelease_v2)(d));
	restart_primary();
	resident_40_mib();
	expect_within_budget();
}

/* A converted allocation larger than the budget is a pool (JAX preallocates 75% of the GPU): left unmade. */
Test(placement, a_converted_pool_larger_than_the_budget_is_not_touched)
{
	setenv("EMBER_MANAGE_ALL", "1", 1);
	start_static();
	CUdeviceptr pool;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&pool, 200 * MiB)); /* the budget is 64 MiB */
	for (size_t off = 64 * MiB; off < 200 * MiB; off += 2 * MiB)
		cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(pool + off)), EMBER_SIM_NOWHERE,
			     "past the budget, not made (%zu MiB in)", off / MiB);
	expect_within_budget();
}

static void read_20_mib(void)
{
	start_static();
	CUdeviceptr p = managed(20 * MiB);
	launch_reread(shim, reread, p, 20 * MiB);
	sync_and_flush(shim);
}

Test(placement, stats_are_written_at_exit)
{
	char buf[4096];
	output_of_child("EMBER_STATS", read_20_mib, buf, sizeof buf);
	cr_expect_not_null(strstr(buf, "\"budget_bytes\": 67108864"), "%s", buf);
	cr_expect_not_null(strstr(buf, "\"bytes_promoted\": 20971520"), "%s", buf);
	cr_expect_not_null(strstr(buf, "\"mode\": \"static\""), "%s", buf);
	cr_expect_not_null(strstr(buf, "\"entry_points\": {\"cuMemAllocManaged\": {\"calls\": 1, \"bytes\": 20971520, "
				       "\"converted\": 0}}"), "the allocation census: %s", buf);
}

/* Run child() in a process with EMBER_STATS=pattern; return whether it left a report at path. */
static bool report_of(const char *pattern, const char *path, void (*child)(void))
{
	setenv("EMBER_STATS", pattern, 1);
	pid_t pid = run_in_child(child);
	char real[64];
	snprintf(real, sizeof real, path, (int)pid);
	bool there = access(real, F_OK) == 0;
	unlink(real);
	return there;
}

static void load_without_calling_the_driver(void)
{
	setenv("EMBER_MODE", "static", 1);
	shim = load_shim();
}

static void use_the_driver(void)
{
	start_static();
	managed(2 * MiB);
}

Test(placement, only_a_process_that_used_the_driver_writes_a_report)
{
	/* a wrapper (a shell, `timeout`) must not overwrite its CUDA child's report */
	cr_expect_not(report_of("/tmp/ember-stats-quiet.json", "/tmp/ember-stats-quiet.json",
				load_without_calling_the_driver));
	cr_expect(report_of("/tmp/ember-stats-%p.json", "/tmp/ember-stats-%d.json", use_the_driver),
		  "%%p in EMBER_STATS is the process ID");
}

static void read_and_free_20_mib(void)
{
	start_static();
	CUdeviceptr p = managed(20 * MiB);
	launch_reread(shim, reread, p, 20 * MiB);
	sync_and_flush(shim);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
}

/* The trace child() records under EMBER_TRACE, into buf, and the file's permission bits. */
static mode_t trace_of_child(void (*child)(void), char *buf, size_t len)
{
	char path[] = "/tmp/ember-trace-XXXXXX";
	temp_file_env("EMBER_TRACE", path);
	run_in_child(child);
	cr_assert_gt(read_file(path, buf, len), 0);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	unlink(path);
	return st.st_mode & 0777;
}

Test(placement, a_trace_records_budgets_allocations_launches_moves_and_frees)
{
	char buf[8192];
	mode_t mode = trace_of_child(read_and_free_20_mib, buf, sizeof buf);
	cr_expect_eq(mode, 0600, "a trace holds addresses: private to its owner");
	cr_expect_eq(strncmp(buf, "ember-trace 2\n", 14), 0, "%s", buf);
	cr_expect_not_null(strstr(buf, "\nD 0 67108864 "), "the budget: %s", buf);
	cr_expect_not_null(strstr(buf, " 0 0 20971520 m\n"), "the allocation: %s", buf);
	cr_expect_not_null(strstr(buf, " 1 0:0:20971520:0\n"), "the launch, its range and its argument: %s", buf);
	cr_expect_not_null(strstr(buf, " 0 0 10 P 1 "), "the promotion, whole: %s", buf);
	cr_expect_not_null(strstr(buf, "\nF "), "the free: %s", buf);
	cr_expect_not_null(strstr(buf, "\nE "), "the end: %s", buf);
}

/* The same 20 MiB read through the NULL handle and through CU_STREAM_LEGACY: one stream. */
static void read_on_both_names_of_the_legacy_stream(void)
{
	start_static();
	CUdeviceptr p = managed(20 * MiB);
	launch_reread_on(shim, reread, p, 20 * MiB, NULL);
	launch_reread_on(shim, reread, p, 20 * MiB, CU_STREAM_LEGACY);
	sync_and_flush(shim);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
}

/* A launch's stream key (the trace's L lines, the launch history) names a stream, not a handle. */
Test(placement, the_legacy_handle_and_null_are_one_stream)
{
	char buf[8192];
	trace_of_child(read_on_both_names_of_the_legacy_stream, buf, sizeof buf);
	unsigned launches = 0, on_null = 0;
	for (const char *l = strstr(buf, "\nL "); l; l = strstr(l + 1, "\nL ")) {
		unsigned long long t, key;
		launches++;
		if (sscanf(l, "\nL %llu %llu ", &t, &key) == 2 && key == 0)
			on_null++;
	}
	cr_expect_eq(launches, 2, "%s", buf);
	cr_expect_eq(on_null, 2, "both launches keyed as the NULL stream: %s", buf);
}

/* Printable bytes where the next calls' frames will be, so that a buffer left unwritten shows. */
static __attribute__((noinline)) void dirty_the_stack(void)
{
	volatile char junk[65536];
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = 'x';
}

/* A launch on plain device memory only: it names nothing Ember places. */
static void launch_on_plain_memory(void)
{
	start_static();
	CUdeviceptr plain;
	CU_OK(SYM(shim, cuMemAlloc_v2)(&plain, 4096));
	for (int k = 0; k < 4; k++) {
		dirty_the_stack();
		launch_fill(shim, fill, plain, 1024);
	}
	sync_and_flush(shim);
	CU_OK(SYM(shim, cuMemFree_v2)(plain));
}

/* Every L line ends at its count of ranges when it has none (ab-37's radix trace held stack bytes there). */
Test(placement, a_launch_naming_no_placed_memory_is_traced_with_no_ranges)
{
	char buf[8192];
	trace_of_child(launch_on_plain_memory, buf, sizeof buf);
	unsigned launches = 0;
	for (const char *l = strstr(buf, "\nL "); l; l = strstr(l + 1, "\nL ")) {
		unsigned long long t, key;
		char kernel[16];
		unsigned written;
		int end = 0;
		launches++;
		cr_expect_eq(sscanf(l, "\nL %llu %llu %15s %u%n", &t, &key, kernel, &written, &end), 4, "%s", buf);
		cr_expect_eq(written, 0, "%s", buf);
		cr_expect_eq(l[end], '\n', "the line ends after its count: %.40s", l + 1);
	}
	cr_expect_eq(launches, 4, "%s", buf);
}

Test(placement, output_files_are_never_written_through_a_planted_link)
{
	char target[] = "/tmp/ember-victim-XXXXXX";
	int fd = mkstemp(target);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "keep", 4), 4);
	close(fd);
	const char *links[] = { "/tmp/ember-link-trace", "/tmp/ember-link-stats", "/tmp/ember-link-log" };
	const char *vars[] = { "EMBER_TRACE", "EMBER_STATS", "EMBER_LOG_FILE" };
	for (int i = 0; i < 3; i++) {
		unlink(links[i]);
		cr_assert_eq(symlink(target, links[i]), 0);
		setenv(vars[i], links[i], 1);
	}
	run_in_child(read_and_free_20_mib);
	char buf[64];
	cr_expect_eq(read_file(target, buf, sizeof buf), 4);
	cr_expect_str_eq(buf, "keep", "the link's target is untouched");
	for (int i = 0; i < 3; i++) {
		unlink(links[i]);
		unsetenv(vars[i]);
	}
	unlink(target);
}

/* The child's stderr, into a file the test reads. */
static char child_err[64];

static void stderr_to_file(void)
{
	int fd = open(child_err, O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

static void read_and_free_20_mib_stderr_captured(void)
{
	stderr_to_file();
	read_and_free_20_mib();
}

Test(placement, write_errors_are_reported_with_one_line)
{
	snprintf(child_err, sizeof child_err, "/tmp/ember-stderr-XXXXXX");
	int fd = mkstemp(child_err);
	cr_assert_geq(fd, 0);
	close(fd);
	setenv("EMBER_STATS", "/dev/full", 1);
	setenv("EMBER_LOG_FILE", "/dev/full", 1);
	setenv("EMBER_LOG", "info", 1);
	run_in_child(read_and_free_20_mib_stderr_captured);
	char buf[8192];
	read_file(child_err, buf, sizeof buf);
	unlink(child_err);
	unsetenv("EMBER_LOG_FILE");
	unsetenv("EMBER_STATS");
	cr_expect_eq(lines_with(buf, "writing EMBER_LOG_FILE failed"), 1, "%s", buf);
	cr_expect_eq(lines_with(buf, "writing EMBER_STATS file /dev/full failed"), 1, "%s", buf);
}

Test(placement, files_are_private)
{
	char path[] = "/tmp/ember-log-mode-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(path); /* Ember creates it */
	setenv("EMBER_LOG_FILE", path, 1);
	setenv("EMBER_LOG", "info", 1);
	run_in_child(read_and_free_20_mib);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	unlink(path);
	unsetenv("EMBER_LOG_FILE");
	cr_expect_eq(st.st_mode & 0777, 0600, "the log names addresses and paths: private to its owner");
}

static void does_nothing(const struct ember_sim_launch *launch, void **params)
{
}

/*
 * A module is unloaded and another loaded, and the driver hands the new
 * kernel the old kernel's handle. Before cuModuleUnload was hooked, the
 * scan read the new kernel's arguments with the old kernel's cached
 * layout, past the end of its argument array (SIGSEGV).
 */
/* Something placed, so that launches are scanned; a kernel of eight pointers and one of one; w: the eight's arguments. */
struct wide_args {
	uint64_t args[8];
	void *params[8];
};

static void wide_and_narrow_kernels(struct wide_args *w)
{
	start_static();
	CUdeviceptr p = managed(4 * MiB);
	static const size_t wide[8] = { 8, 8, 8, 8, 8, 8, 8, 8 }, narrow[1] = { 8 };
	int (*reg)(const char *, ember_sim_kernel_fn, const size_t *, unsigned) = SYM(sim, ember_sim_register_kernel);
	cr_assert_eq(reg("ember_test_wide8", does_nothing, wide, 8), 0);
	cr_assert_eq(reg("ember_test_narrow1", does_nothing, narrow, 1), 0);
	for (int i = 0; i < 8; i++) {
		w->args[i] = p;
		w->params[i] = &w->args[i];
	}
}

/* Launch narrow with its one-argument array ending where an unreadable page begins. */
static void launch_narrow_at_a_page_end(CUfunction narrow, uint64_t *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(two, MAP_FAILED);
	cr_assert_eq(mprotect(two + page, (size_t)page, PROT_NONE), 0);
	void **params1 = (void **)(two + page - sizeof(void *));
	params1[0] = arg;
	CU_OK(SYM(shim, cuLaunchKernel)(narrow, 1, 1, 1, 1, 1, 1, 0, NULL, params1, NULL));
	munmap(two, 2 * (size_t)page);
}

Test(placement, a_kernel_handle_reused_after_an_unload_is_scanned_with_its_own_layout)
{
	struct wide_args w;
	wide_and_narrow_kernels(&w);
	CUmodule m1, m2;
	CUfunction f1, f2 = NULL;
	CU_OK(SYM(shim, cuModuleLoadData)(&m1, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&f1, m1, "ember_test_wide8"));
	CU_OK(SYM(shim, cuLaunchKernel)(f1, 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL));
	CU_OK(SYM(shim, cuModuleUnload)(m1));
	for (int tries = 0; tries < 64 && f2 != f1; tries++) {
		CU_OK(SYM(shim, cuModuleLoadData)(&m2, "ember-sim:"));
		CU_OK(SYM(shim, cuModuleGetFunction)(&f2, m2, "ember_test_narrow1"));
		if (f2 != f1)
			CU_OK(SYM(shim, cuModuleUnload)(m2));
	}
	if (f2 != f1)
		cr_skip_test("the simulated driver never reused the handle");
	launch_narrow_at_a_page_end(f2, &w.args[0]);
	CU_OK(SYM(shim, cuModuleUnload)(m2));
}

/*
 * A module's unload forgets its own kernels, and a library's kernels (whose
 * module the driver does not name), but not another module's: each launch
 * below is traced with its kernel's number, given at first sight and again
 * after the kernel is forgotten.
 */
static void unload_one_of_two_modules(void)
{
	struct wide_args w;
	wide_and_narrow_kernels(&w);
	CUmodule kept, unloaded, again;
	CUlibrary lib;
	CUkernel from_lib;
	CUfunction wide, narrow, narrow_again;
	CU_OK(SYM(shim, cuModuleLoadData)(&kept, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleLoadData)(&unloaded, "ember-sim:"));
	CU_OK(SYM(shim, cuLibraryLoadData)(&lib, "ember-sim:", NULL, NULL, 0, NULL, NULL, 0));
	CU_OK(SYM(shim, cuModuleGetFunction)(&wide, kept, "ember_test_wide8"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&narrow, unloaded, "ember_test_narrow1"));
	CU_OK(SYM(shim, cuLibraryGetKernel)(&from_lib, lib, "ember_test_narrow1"));
	CU_OK(SYM(shim, cuLaunchKernel)(wide, 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL));                 /* 0 */
	CU_OK(SYM(shim, cuLaunchKernel)(narrow, 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL));               /* 1 */
	CU_OK(SYM(shim, cuLaunchKernel)((CUfunction)from_lib, 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL)); /* 2 */
	CU_OK(SYM(shim, cuModuleUnload)(unloaded));
	CU_OK(SYM(shim, cuLaunchKernel)(wide, 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL));                 /* 0 still */
	CU_OK(SYM(shim, cuLaunchKernel)((CUfunction)from_lib, 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL)); /* 3 */
	CU_OK(SYM(shim, cuModuleLoadData)(&again, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&narrow_again, again, "ember_test_narrow1"));
	CU_OK(SYM(shim, cuLaunchKernel)(narrow_again, 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL));         /* 4 */
	CU_OK(SYM(shim, cuLibraryUnload)(lib));
	CU_OK(SYM(shim, cuLaunchKernel)(wide, 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL)); /* 5: a library's unload forgets all */
	sync_and_flush(shim);
	CU_OK(SYM(shim, cuModuleUnload)(again));
	CU_OK(SYM(shim, cuModuleUnload)(kept));
}

/* The kernel number of each launch a trace records (its L lines), in order, up to max (UINT_MAX where a line names
 * none): how many launches it records. */
static size_t traced_kernel_numbers(const char *trace, unsigned *numbers, size_t max)
{
	size_t n = 0;
	for (const char *line = strstr(trace, "\nL "); line; line = strstr(line + 1, "\nL "), n++)
		if (n < max && sscanf(line, "\nL %*s %*s %u", &numbers[n]) != 1)
			numbers[n] = UINT_MAX;
	return n;
}

Test(placement, a_module_s_unload_forgets_its_kernels_and_keeps_another_module_s)
{
	char buf[16384];
	static const unsigned expected[] = { 0, 1, 2, 0, 3, 4, 5 };
	unsigned got[16];
	trace_of_child(unload_one_of_two_modules, buf, sizeof buf);
	size_t n = traced_kernel_numbers(buf, got, 16);
	cr_expect(n == 7 && !memcmp(got, expected, sizeof expected), "kernel numbers of the launches in turn: %s", buf);
}

/*
 * Many modules' kernels in the table, every other module unloaded: each
 * removal moves later records of its probe run back, and every kernel of
 * a module still loaded keeps its number (the first launches number them
 * 0 to MODULES - 1 in turn; the second round must show each even one's).
 */
enum { MODULES = 400 };

static void unload_every_other_of_many_modules(void)
{
	struct wide_args w;
	wide_and_narrow_kernels(&w);
	static CUmodule mods[MODULES];
	static CUfunction fns[MODULES];
	for (int i = 0; i < MODULES; i++) {
		CU_OK(SYM(shim, cuModuleLoadData)(&mods[i], "ember-sim:"));
		CU_OK(SYM(shim, cuModuleGetFunction)(&fns[i], mods[i], "ember_test_narrow1"));
		CU_OK(SYM(shim, cuLaunchKernel)(fns[i], 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL));
	}
	for (int i = 1; i < MODULES; i += 2)
		CU_OK(SYM(shim, cuModuleUnload)(mods[i]));
	for (int i = 0; i < MODULES; i += 2)
		CU_OK(SYM(shim, cuLaunchKernel)(fns[i], 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL));
	sync_and_flush(shim);
	for (int i = 0; i < MODULES; i += 2)
		CU_OK(SYM(shim, cuModuleUnload)(mods[i]));
}

Test(placement, unloading_many_modules_keeps_every_loaded_module_s_kernels)
{
	static char buf[1 << 20];
	static unsigned got[2 * MODULES];
	trace_of_child(unload_every_other_of_many_modules, buf, sizeof buf);
	size_t launches = traced_kernel_numbers(buf, got, 2 * MODULES);
	int wrong = 0;
	for (size_t launch = 0; launch < launches && launch < 2 * MODULES; launch++) {
		unsigned expected = launch < MODULES ? (unsigned)launch : 2u * (unsigned)(launch - MODULES);
		wrong += got[launch] != expected;
	}
	cr_expect_eq(launches, MODULES + MODULES / 2, "every launch traced");
	cr_expect_eq(wrong, 0, "%d launches with another kernel number than their kernel's first", wrong);
}

/*
 * The same when the kernel's context is torn down (cudaDeviceReset), which
 * unloads its modules without a cuModuleUnload: the teardown forgets what
 * was learnt of kernels as an unload does. Each try learns the wide
 * kernel's layout in a context of its own, destroys it, and asks the
 * primary context for the narrow kernel; nothing is unloaded.
 */
Test(placement, a_kernel_handle_reused_after_its_context_s_teardown_is_scanned_with_its_own_layout)
{
	struct wide_args w;
	wide_and_narrow_kernels(&w);
	CUfunction wides[64], narrow1 = NULL;
	bool reused = false;
	for (int tries = 0; tries < 64 && !reused; tries++) {
		CUcontext primary, own = own_context(shim, &primary);
		CUmodule m1, m2;
		CU_OK(SYM(shim, cuModuleLoadData)(&m1, "ember-sim:"));
		CU_OK(SYM(shim, cuModuleGetFunction)(&wides[tries], m1, "ember_test_wide8"));
		CU_OK(SYM(shim, cuLaunchKernel)(wides[tries], 1, 1, 1, 1, 1, 1, 0, NULL, w.params, NULL));
		CU_OK(SYM(shim, cuCtxSynchronize)());
		CU_OK(SYM(shim, cuCtxDestroy_v2)(own));
		CU_OK(SYM(shim, cuCtxSetCurrent)(primary));
		CU_OK(SYM(shim, cuModuleLoadData)(&m2, "ember-sim:"));
		CU_OK(SYM(shim, cuModuleGetFunction)(&narrow1, m2, "ember_test_narrow1"));
		for (int k = 0; k <= tries && !reused; k++)
			reused = narrow1 == wides[k]; /* a wide kernel's handle, its context torn down since */
	}
	if (!reused)
		cr_skip_test("the simulated driver never reused the handle");
	launch_narrow_at_a_page_end(narrow1, &w.args[0]);
}

/* ---- driver errors in the middle of Ember's work: the program's results stand, one line says what Ember gave up ---- */

static const char *fault_call;
static CUresult fault_result;
static unsigned fault_count;

/* Managed data written, read by a launch (Ember places it) and checked, with one driver call failing. */
static void work_under_a_fault(void)
{
	stderr_to_file();
	start_static();
	if (!strcmp(fault_call, "cuMemPrefetchAsync_v2")) /* promotions toward the GPU */
		SYM(sim, ember_sim_fail_prefetches)(EMBER_SIM_TO_DEVICE, fault_count, fault_result);
	else
		SYM(sim, ember_sim_fail_call)(fault_call, 0, fault_count, fault_result);
	size_t bytes = 20 * MiB + 333;
	CUdeviceptr p = managed(bytes);
	unsigned char *h = (unsigned char *)p;
	for (size_t i = 0; i < bytes; i++)
		h[i] = (unsigned char)(i * 2654435761u >> 13);
	launch_reread(shim, reread, p, bytes);
	sync_and_flush(shim);
	for (size_t i = 0; i < bytes; i++)
		if (h[i] != (unsigned char)(i * 2654435761u >> 13))
			exit(3); /* a byte changed */
	CU_OK(SYM(shim, cuMemFree_v2)(p));
}

/* Run work_under_a_fault in a child; its stderr (Ember's log) in buf. */
static void run_fault(const char *call, unsigned count, CUresult result, char *buf, size_t len)
{
	fault_call = call;
	fault_count = count;
	fault_result = result;
	snprintf(child_err, sizeof child_err, "/tmp/ember-fault-XXXXXX");
	int fd = mkstemp(child_err);
	cr_assert_geq(fd, 0);
	close(fd);
	setenv("EMBER_LOG", "warn", 1);
	run_in_child(work_under_a_fault); /* exits 0 only with every byte intact */
	read_file(child_err, buf, len);
	unlink(child_err);
}

static unsigned ember_lines(const char *log)
{
	return lines_with(log, "ember[");
}

Test(placement, advice_that_fails_leaves_the_allocation_to_the_driver)
{
	char log[8192];
	run_fault("cuMemAdvise_v2", 1, CUDA_ERROR_INVALID_VALUE, log, sizeof log);
	cr_expect_eq(ember_lines(log), 1, "%s", log);
	cr_expect_not_null(strstr(log, "the driver places it"), "%s", log);
}

Test(placement, no_private_stream_leaves_the_data_mapped)
{
	char log[8192];
	run_fault("cuStreamCreate", 100, CUDA_ERROR_OUT_OF_MEMORY, log, sizeof log);
	cr_expect_eq(ember_lines(log), 1, "%s", log);
	cr_expect_not_null(strstr(log, "promotion of"), "%s", log);
	cr_expect_not_null(strstr(log, "stay mapped"), "%s", log);
}

Test(placement, no_events_make_migrations_wait_where_they_are_issued)
{
	char log[8192];
	run_fault("cuEventCreate", 100, CUDA_ERROR_OUT_OF_MEMORY, log, sizeof log);
	cr_expect_eq(ember_lines(log), 1, "%s", log);
	cr_expect_not_null(strstr(log, "cannot create or record events"), "%s", log);
}

Test(placement, a_prefetch_out_of_memory_leaves_the_data_mapped)
{
	char log[8192];
	run_fault("cuMemPrefetchAsync_v2", 1, CUDA_ERROR_OUT_OF_MEMORY, log, sizeof log);
	cr_expect_eq(ember_lines(log), 1, "%s", log);
	cr_expect_not_null(strstr(log, "promotion of"), "%s", log);
}

Test(placement, a_module_that_fails_to_load_fails_the_same_through_ember)
{
	start_static();
	SYM(sim, ember_sim_fail_call)("cuModuleLoadData", 0, 1, CUDA_ERROR_INVALID_IMAGE);
	CUmodule m;
	cr_expect_eq(SYM(shim, cuModuleLoadData)(&m, "ember-sim:"), CUDA_ERROR_INVALID_IMAGE, "the driver's own result");
	CU_OK(SYM(shim, cuModuleLoadData)(&m, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleUnload)(m));
}

/*
 * Two simulated GPUs, a context on each, each with its own budget
 * (EMBER_BUDGET_<n>): an allocation made in a context is charged to that
 * context's GPU, its static split lands there, neither budget is passed,
 * and the bytes come back intact.
 */
Test(placement, two_gpus_each_keep_their_own_budget)
{
	setenv("EMBER_SIM_DEVICES", "2", 1);
	setenv("EMBER_BUDGET_1", "32M", 1);
	start_static(); /* GPU 0: 64M */
	CUdevice d1;
	CUcontext c0, c1;
	CU_OK(SYM(shim, cuCtxGetCurrent)(&c0));
	CU_OK(SYM(shim, cuDeviceGet)(&d1, 1));
	CU_OK(SYM(shim, cuDevicePrimaryCtxRetain)(&c1, d1));
	CUdeviceptr on0 = managed(100 * MiB);
	memset((void *)on0, 0x11, 100 * MiB);
	launch_reread(shim, reread, on0, 100 * MiB);
	CU_OK(SYM(shim, cuCtxSetCurrent)(c1));
	CUmodule mod1;
	CUfunction reread1;
	CU_OK(SYM(shim, cuModuleLoadData)(&mod1, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread1, mod1, "ember_reread_sum"));
	CUdeviceptr on1 = managed(100 * MiB);
	memset((void *)on1, 0x22, 100 * MiB);
	launch_reread(shim, reread1, on1, 100 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)on0), 0, "GPU 0's allocation split onto GPU 0");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)on1), 1, "GPU 1's onto GPU 1");
	size_t free1, total1, free0, total0;
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free1, &total1));
	cr_expect_eq(total1, 32 * MiB, "GPU 1 reports its own budget");
	cr_expect_leq(total1 - free1, 32 * MiB / 100 * 90, "GPU 1 stays under its high watermark");
	cr_expect_gt(total1 - free1, 16 * MiB, "and used it");
	CU_OK(SYM(shim, cuCtxSetCurrent)(c0));
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free0, &total0));
	cr_expect_eq(total0, 64 * MiB);
	cr_expect_leq(total0 - free0, 64 * MiB / 100 * 90, "GPU 0 under its own");
	cr_expect_gt(total0 - free0, 32 * MiB, "and used more than GPU 1's whole budget");
	for (size_t i = 0; i < 100 * MiB; i += 4093) {
		cr_assert_eq(((unsigned char *)on0)[i], 0x11, "GPU 0's byte %zu", i);
		cr_assert_eq(((unsigned char *)on1)[i], 0x22, "GPU 1's byte %zu", i);
	}
	CU_OK(SYM(shim, cuMemFree_v2)(on1));
	CU_OK(SYM(shim, cuMemFree_v2)(on0));
	sync_and_flush(shim);
	cr_expect_eq(resident(), 0, "both budgets empty after the frees");
}

/*
 * No UVM tools event queue to read (the simulated driver opens no
 * /dev/nvidia-uvm, as a container without the device would not): exactly
 * one line says Ember reads no events, and placement goes on without them.
 */
Test(placement, without_the_uvm_tools_device_one_line_and_placement_goes_on)
{
	char log[] = "/tmp/ember-uvm-absent-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "info", 1);
	setenv("EMBER_UVM_EVENTS", "1", 1);
	start_static();
	CUdeviceptr p = managed(40 * MiB);
	memset((void *)p, 0x3c, 40 * MiB);
	for (int i = 0; i < 5; i++)
		launch_reread(shim, reread, p, 40 * MiB);
	sync_and_flush(shim);
	cr_expect_gt(resident(), 16 * MiB, "the split went ahead");
	for (size_t i = 0; i < 40 * MiB; i += 4099)
		cr_assert_eq(((unsigned char *)p)[i], 0x3c, "byte %zu", i);
	char buf[8192];
	cr_assert_gt(read_file(log, buf, sizeof buf), 0);
	unlink(log);
	cr_expect_eq(lines_with(buf, "UVM tools event queue not used"), 1, "one line: %s", buf);
	cr_expect_not_null(strstr(buf, "the process has no /dev/nvidia-uvm open"), "%s", buf);
}

/* A kernel of the simulated driver that reads nothing, with these arguments' sizes, loaded through the shim. */
static CUfunction kernel_reading_nothing(const char *name, const size_t *params, unsigned n)
{
	cr_assert_eq(SYM(sim, ember_sim_register_kernel)(name, does_nothing, params, n), 0);
	CUmodule m;
	CUfunction f;
	CU_OK(SYM(shim, cuModuleLoadData)(&m, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&f, m, name));
	return f;
}

/*
 * In a child: one launch whose one argument is a structure of 40 pointers
 * into 40 allocations, as PyTorch's foreach and fused optimizers pass their
 * tensor lists, past the 32 a launch scan holds.
 */
static void launch_past_the_scan_in_child(void)
{
	start_static();
	enum { LISTED = 40 };
	static const size_t lists[1] = { LISTED * sizeof(uint64_t) };
	CUfunction f = kernel_reading_nothing("ember_test_lists", lists, 1);
	uint64_t addresses[LISTED];
	for (int i = 0; i < LISTED; i++)
		addresses[i] = managed(MiB);
	void *params[1] = { addresses };
	CU_OK(SYM(shim, cuLaunchKernel)(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
	CU_OK(SYM(shim, cuCtxSynchronize)());
}

Test(placement, a_launch_past_the_scan_s_allocations_is_counted)
{
	char buf[65536];
	output_of_child("EMBER_STATS", launch_past_the_scan_in_child, buf, sizeof buf);
	cr_expect_not_null(strstr(buf, "\"launches_past_scan\": 1,"), "one launch past the scan: %s", buf);
}

/*
 * The addresses of depth lists at the start of a tensor-list structure of
 * slots per list: in each, an 8 MiB tensor in slot 0 and one an earlier
 * launch left in slot 1 (allocations 0 and 1, 2 and 3, ...:
 * expect_second_halves).
 */
static void live_and_stale(unsigned char *lists, int depth, int slots)
{
	for (int d = 0; d < depth; d++) {
		uint64_t live = managed(8 * MiB), stale = managed(8 * MiB);
		memcpy(lists + 8 * (d * slots + 0), &live, 8);
		memcpy(lists + 8 * (d * slots + 1), &stale, 8);
	}
}

/*
 * PyTorch's fused AdamW as PyTorch 2.9 and later build it for CUDA 13: one
 * structure of four lists of 252 slots (25,544 bytes), its blocks naming a
 * slot and a chunk of 65,536 elements each. The launch works on the second
 * half of one 8 MiB float tensor in each list; the structure's second slot
 * still holds another tensor from an earlier launch, as PyTorch leaves it.
 */
static void fused_adamw_in_child(void)
{
	start_static();
	enum { DEPTH = 4, SLOTS = 252, BLOCKS = 2240, SIZE = 25544 };
	static const size_t params[3] = { SIZE, 1, 8 }; /* the lists, the functor, the learning rate's address */
	const char *name = "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_32FusedOptimizerTensorList"
			   "MetadataILi4EEENS1_20FusedAdamMathFunctorIfLi4EEEJPKfEEEvT_T0_DpT1_";
	CUfunction f = kernel_reading_nothing(name, params, 3);
	static unsigned char lists[SIZE];
	uint64_t numel = 2 * MiB; /* floats: 32 chunks */
	live_and_stale(lists, DEPTH, SLOTS);
	uint64_t step = managed(4096);
	memcpy(lists + 8 * DEPTH * SLOTS, &numel, 8);         /* numel_for_tensor[0] */
	memcpy(lists + 8 * DEPTH * SLOTS + 8, &numel, 8);     /* [1], stale */
	memcpy(lists + 8 * (DEPTH + 1) * SLOTS, &step, 8);    /* state_steps_addresses[0] */
	unsigned block_slot_at = 8 * (DEPTH + 2) * SLOTS, block_chunk_at = block_slot_at + 2 * BLOCKS;
	for (int32_t b = 0; b < 16; b++) {
		uint16_t slot = 0;
		int32_t chunk = 16 + b;
		memcpy(lists + block_slot_at + 2 * b, &slot, 2);
		memcpy(lists + block_chunk_at + 4 * b, &chunk, 4);
	}
	unsigned char functor = 0;
	uint64_t lr = step + 8;
	void *args[3] = { lists, &functor, &lr };
	CU_OK(SYM(shim, cuLaunchKernel)(f, 16, 1, 1, 512, 1, 1, 0, NULL, args, NULL));
	CU_OK(SYM(shim, cuCtxSynchronize)());
}

/* The trace's line of the first launch of a child: what the scan credited, " id:offset:bytes" each. */
static void first_launch_line(void (*child)(void), char *line, size_t n)
{
	char buf[65536];
	trace_of_child(child, buf, sizeof buf);
	const char *l = strstr(buf, "\nL ");
	cr_assert_not_null(l, "%s", buf);
	char format[16];
	snprintf(format, sizeof format, "%%%zu[^\n]", n - 1);
	cr_assert_eq(sscanf(l + 1, format, line), 1);
}

/*
 * The traced launch of a child that launches over four lists' tensors
 * (allocations 0, 2, 4 and 6, 8 MiB each) with a stale slot beside each
 * (1, 3, 5 and 7): each live tensor's second half credited, no stale one.
 */
static void expect_second_halves(void (*child)(void), char *line, size_t n)
{
	first_launch_line(child, line, n);
	for (int id = 0; id < 8; id += 2) {
		char want[64];
		snprintf(want, sizeof want, " %d:4194304:4194304", id);
		cr_expect_not_null(strstr(line, want), "tensor %d's second half: %s", id, line);
		snprintf(want, sizeof want, " %d:", id + 1);
		cr_expect_null(strstr(line, want), "the stale tensor %d: %s", id + 1, line);
	}
}

/* Each list's tensor is credited the chunks the blocks work on; the stale slot, nothing. */
Test(placement, a_tensor_list_credits_the_chunks_its_blocks_name)
{
	char line[1024];
	expect_second_halves(fused_adamw_in_child, line, sizeof line); /* allocation 8 is the step */
	cr_expect_not_null(strstr(line, " 8:0:8"), "the step counter, one element (8 bytes at most): %s", line);
	cr_expect_not_null(strstr(line, " 8:8:"), "the learning rate, an argument of its own: %s", line);
}

/*
 * apex's fused Adam (and DeepSpeed's copy of it): the chunk's elements
 * (here 32,768, half PyTorch's), the no-op flag's address, then a
 * structure of four lists of 36 slots with 4-byte element counts (2,904
 * bytes). The launch's 32 blocks work on the second half of one 8 MiB
 * float tensor in each list; the second slot is an earlier launch's.
 */
static void apex_adam_in_child(void)
{
	start_static();
	enum { DEPTH = 4, SLOTS = 36, BLOCKS = 320, SIZE = 2904 };
	static const size_t params[5] = { 8, 8, SIZE, 1, 4 };
	const char *name = "_Z25multi_tensor_apply_kernelI18TensorListMetadataILi4EE11AdamFunctorJfEEvxPViT_T0_DpT1_";
	CUfunction f = kernel_reading_nothing(name, params, 5);
	static unsigned char lists[SIZE];
	live_and_stale(lists, DEPTH, SLOTS);
	int32_t sizes[2] = { 2 * MiB, 2 * MiB }; /* floats: 64 chunks of 32,768 */
	memcpy(lists + 8 * DEPTH * SLOTS, sizes, sizeof sizes);
	unsigned block_slot_at = 8 * DEPTH * SLOTS + 4 * SLOTS, block_chunk_at = block_slot_at + BLOCKS;
	for (int32_t b = 0; b < 32; b++) {
		uint8_t slot = 0;
		int32_t chunk = 32 + b;
		memcpy(lists + block_slot_at + b, &slot, 1);
		memcpy(lists + block_chunk_at + 4 * b, &chunk, 4);
	}
	int64_t chunk_size = 32768;
	uint64_t noop = managed(4096);
	unsigned char functor = 0;
	float lr = 1e-3f;
	void *args[5] = { &chunk_size, &noop, lists, &functor, &lr };
	CU_OK(SYM(shim, cuLaunchKernel)(f, 32, 1, 1, 512, 1, 1, 0, NULL, args, NULL));
	CU_OK(SYM(shim, cuCtxSynchronize)());
}

/* Each list's tensor is credited the chunks of the launch's own size that its blocks name; the stale slot, nothing. */
Test(placement, apex_s_tensor_list_credits_the_chunks_its_blocks_name)
{
	char line[1024];
	expect_second_halves(apex_adam_in_child, line, sizeof line);
	cr_expect_not_null(strstr(line, " 8:0:"), "the no-op flag, an argument of its own: %s", line);
}

Test(placement, a_launch_read_as_tensor_lists_is_counted)
{
	char buf[65536];
	output_of_child("EMBER_STATS", fused_adamw_in_child, buf, sizeof buf);
	cr_expect_not_null(strstr(buf, "\"launches_tensor_lists\": 1,"), "%s", buf);
}

/* torch.cat's structure as PyTorch passes it (cat_inputs.h); another size is not taken for it */
enum { CAT_SLOTS = 128, CAT_STRUCTURE = 2720, CAT_NUMEL_AT = 2048 };
static size_t cat_structure_bytes = CAT_STRUCTURE;

/*
 * torch.cat of two [1, 1Mi] half tensors into a [2, 1Mi] output, as a
 * caching allocator places them: the inputs 2 MiB each at 0 and 32 MiB of
 * one 64 MiB segment (allocation 0), the output 4 MiB from the start of
 * another (1). The structure's third slot holds an earlier cat's input
 * (allocation 2), as the host's stack left it; the launch has two rows.
 */
static void cat_in_child(void)
{
	start_static();
	const size_t sizes[5] = { 8, cat_structure_bytes, 32, 4, 4 }; /* output, inputs, shape, dimension, stride */
	const char *name = "_ZN2at6native12_GLOBAL__N_126CatArrayBatchedCopy_contigINS1_10OpaqueTypeILj2EEEjLi2ELi128E"
			   "Li1EEEvPT_NS1_25CatArrInputTensorMetadataIS5_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_";
	CUfunction f = kernel_reading_nothing(name, sizes, 5);
	uint64_t segment = managed(64 * MiB), out_segment = managed(16 * MiB), earlier = managed(8 * MiB);
	static unsigned char meta[CAT_STRUCTURE + 8];
	uint64_t inputs[3] = { segment, segment + 32 * MiB, earlier };
	uint32_t numel[3] = { MiB, MiB, 1000 }, offset[2] = { 0, 1 }, dim_size[2] = { 1, 1 };
	memcpy(meta, inputs, sizeof inputs);
	memcpy(meta + 8 * CAT_SLOTS, offset, sizeof offset);
	memcpy(meta + 12 * CAT_SLOTS, dim_size, sizeof dim_size);
	memcpy(meta + CAT_NUMEL_AT, numel, sizeof numel);
	uint32_t shape[8] = { 2, MiB, 0, 0, MiB, 1, 0, 0 }; /* sizes, then strides */
	uint64_t out = out_segment + 4 * MiB;
	int cat_dim = 0;
	uint32_t dim_stride = MiB;
	void *args[5] = { &out, meta, shape, &cat_dim, &dim_stride };
	CU_OK(SYM(shim, cuLaunchKernel)(f, 64, 2, 1, 512, 1, 1, 0, NULL, args, NULL));
	CU_OK(SYM(shim, cuCtxSynchronize)());
}

/* The traced launch of cat_in_child, with the structure at this size. */
static void cat_launch_line(size_t structure_bytes, char *line, size_t n)
{
	cat_structure_bytes = structure_bytes;
	first_launch_line(cat_in_child, line, n);
}

/* Each row's input is credited its elements, the output as far as its shape reaches, the stale slot nothing. */
Test(placement, torch_cat_credits_the_inputs_its_rows_copy)
{
	char line[1024];
	cat_launch_line(CAT_STRUCTURE, line, sizeof line);
	cr_expect_not_null(strstr(line, " 0:0:2097152"), "the first input, 1Mi halves: %s", line);
	cr_expect_not_null(strstr(line, " 0:33554432:2097152"), "the second: %s", line);
	cr_expect_not_null(strstr(line, " 1:4194304:4194304"), "the output, 2 x 1Mi halves: %s", line);
	cr_expect_null(strstr(line, " 2:"), "the earlier cat's input: %s", line);
	/* a structure of another size is scanned word by word: the stale slot is credited */
	cat_launch_line(CAT_STRUCTURE + 8, line, sizeof line);
	cr_expect_not_null(strstr(line, " 2:"), "word by word, the earlier cat's input: %s", line);
}

Test(placement, a_launch_read_as_cat_inputs_is_counted)
{
	char buf[65536];
	cat_structure_bytes = CAT_STRUCTURE;
	output_of_child("EMBER_STATS", cat_in_child, buf, sizeof buf);
	cr_expect_not_null(strstr(buf, "\"launches_cat_inputs\": 1,"), "%s", buf);
}
