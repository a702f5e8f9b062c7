/*
 * Launches with nothing to decide (shim/mech/settled.h), against the
 * simulated driver: once everything placed is split (static) or resident
 * below the low watermark (adaptive), launches skip their scan; a new
 * allocation, a reused range and a host phase still get what the scan
 * would have given them, and a trace or a GPU over its watermark keeps
 * every scan. The debug log says when launches first skip.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"

#define MiB (1ull << 20)

static void *sim, *shim;
static CUfunction fill, reread;
static char log_path[] = "/tmp/ember-test-settled-XXXXXX";

static void start(const char *mode)
{
	setenv("EMBER_MODE", mode, 1);
	setenv("EMBER_BUDGET", "64M", 1);
	setenv("EMBER_REFRESH_FAULTS", "256", 1);
	setenv("EMBER_LOG", "debug", 1);
	temp_file_env("EMBER_LOG_FILE", log_path);
	sim = load_sim();
	shim = load_shim();
	CUmodule mod = start_context(shim);
	CU_OK(SYM(shim, cuModuleGetFunction)(&fill, mod, "ember_fill_u32"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread, mod, "ember_reread_sum"));
}

/* Untouched by the host: writing it would take page faults, and with them a host phase, which alone sends the next launch through its scan. */
static CUdeviceptr managed(size_t bytes)
{
	CUdeviceptr p = 0;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, bytes, CU_MEM_ATTACH_GLOBAL));
	return p;
}

/* More launches than an unsettled table waits between surveys (EMBER_SETTLED_RECHECK, 256). */
static void launch_many(CUdeviceptr p)
{
	for (int i = 0; i < 300; i++)
		launch_fill(shim, fill, p, 0);
	CU_OK(SYM(shim, cuCtxSynchronize)());
}

static bool launches_skip(void)
{
	char text[1 << 16];
	read_file(log_path, text, sizeof text);
	return lines_with(text, "nothing left to decide on GPU 0") > 0;
}

TestSuite(settled, .timeout = 60);

Test(settled, static_launches_skip_their_scan_once_everything_is_split)
{
	start("static");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 8 * MiB);
	cr_expect_not(launches_skip(), "nothing skipped before a survey");
	launch_many(p);
	cr_expect(launches_skip(), "every allocation split: launches skip their scan");
}

Test(settled, a_new_allocation_still_gets_its_split)
{
	start("static");
	launch_many(resident_allocation(shim, sim, fill, 8 * MiB));
	cr_assert(launches_skip());
	CUdeviceptr q = managed(8 * MiB);
	launch_fill(shim, fill, q, 0);
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)q), 0, "split at its first launch");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(q + 7 * MiB)), 0, "all of it, under the budget");
}

Test(settled, a_freed_and_reused_range_gets_its_split)
{
	start("static");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 8 * MiB);
	launch_many(p);
	cr_assert(launches_skip());
	CU_OK(SYM(shim, cuMemFree_v2)(p));
	CUdeviceptr q = managed(8 * MiB);
	launch_fill(shim, fill, q, 0);
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)q), 0, "split at its first launch");
}

Test(settled, a_host_phase_is_still_refreshed)
{
	start("static");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 16 * MiB);
	launch_many(p);
	cr_assert(launches_skip());
	host_reads_back(shim, sim, fill, p, 16 * MiB, 1024, 0);
	launch_fill(shim, fill, p, 0);
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)p), 0, "prefetched back before the launch");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)(p + 15 * MiB)), 0, "all of it");
}

Test(settled, adaptive_skips_below_its_low_watermark_and_still_promotes_new_demand)
{
	start("adaptive");
	CUdeviceptr p = resident_allocation(shim, sim, fill, 8 * MiB);
	launch_many(p);
	cr_expect(launches_skip(), "all resident, far below the watermark");
	CUdeviceptr q = managed(8 * MiB);
	for (int i = 0; i < 4; i++)
		launch_reread(shim, reread, q, 8 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)q), 0, "the new allocation's demand promoted it");
}

Test(settled, adaptive_with_mapped_regions_keeps_every_scan)
{
	start("adaptive");
	CUdeviceptr p = managed(100 * MiB); /* past the 64 MiB budget: some of it stays mapped */
	launch_reread(shim, reread, p, 100 * MiB);
	launch_many(p); /* launches that read nothing: quick under a sanitizer too */
	sync_and_flush(shim);
	cr_expect_not(launches_skip(), "mapped regions: demand may still promote them");
}

Test(settled, a_trace_keeps_every_scan)
{
	char trace[] = "/tmp/ember-test-settled-trace-XXXXXX";
	temp_file_env("EMBER_TRACE", trace);
	start("static");
	launch_many(resident_allocation(shim, sim, fill, 8 * MiB));
	cr_expect_not(launches_skip(), "a trace records every launch's scan");
	unlink(trace);
}
