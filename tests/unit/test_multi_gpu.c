/*
 * Several GPUs (issue 13, part 1), on the simulated driver with
 * EMBER_SIM_DEVICES of 2 and more: CUDA_VISIBLE_DEVICES renumbers the
 * GPUs as the driver does, budgets follow the ordinal the process sees and
 * the log names the physical GPU, every GPU that uses an allocation is
 * advised accessed-by, and residency goes to the GPU whose launches
 * reference an allocation (shim/mech/gpus.h). The bytes always come back
 * intact. test_placement's two_gpus_each_keep_their_own_budget is the
 * first of these.
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"

#define MiB (1ull << 20)

static void *sim, *shim;

TestSuite(multi_gpu, .init = table1_watermarks, .timeout = 60);

/* ---- the simulated driver alone ---- */

static void sim_only(const char *devices, const char *visible)
{
	setenv("EMBER_SIM_DEVICES", devices, 1);
	if (visible)
		setenv("CUDA_VISIBLE_DEVICES", visible, 1);
	else
		unsetenv("CUDA_VISIBLE_DEVICES");
	sim = load_sim();
	CU_OK(SYM(sim, cuInit)(0));
}

static int count(void)
{
	int n = -1;
	CU_OK(SYM(sim, cuDeviceGetCount)(&n));
	return n;
}

static void bus_id(int dev, char *out)
{
	CU_OK(SYM(sim, cuDeviceGetPCIBusId)(out, 32, dev));
}

static int uuid_last(int dev)
{
	CUuuid u;
	CU_OK(SYM(sim, cuDeviceGetUuid_v2)(&u, dev));
	return (unsigned char)u.bytes[15];
}

Test(multi_gpu, cuda_visible_devices_renumbers_the_simulated_gpus_by_index)
{
	sim_only("4", "2,0");
	cr_assert_eq(count(), 2);
	char bus[32];
	bus_id(0, bus);
	cr_expect_str_eq(bus, "00000000:1A:00.0", "ordinal 0 is simulated GPU 2");
	bus_id(1, bus);
	cr_expect_str_eq(bus, "00000000:18:00.0", "ordinal 1 is simulated GPU 0");
	cr_expect_eq(uuid_last(0), 2, "the UUID is the physical GPU's");
	cr_expect_eq(uuid_last(1), 0);
	int v = -1;
	CU_OK(SYM(sim, cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0));
	cr_expect_eq(v, 0x1a);
	CUdevice d = -1;
	CU_OK(SYM(sim, cuDeviceGetByPCIBusId)(&d, "0000:18:00.0"));
	cr_expect_eq(d, 1, "a bus id finds the ordinal the process sees");
	cr_expect_eq(SYM(sim, cuDeviceGetByPCIBusId)(&d, "0000:19:00.0"), CUDA_ERROR_INVALID_DEVICE,
		     "a hidden GPU is not found");
	cr_expect_eq(SYM(sim, cuDeviceGet)(&d, 2), CUDA_ERROR_INVALID_DEVICE);
}

Test(multi_gpu, cuda_visible_devices_takes_uuid_prefixes_and_stops_at_a_bad_entry)
{
	/* simulated GPU 3's UUID, then GPU 1, then one that does not exist, then 0 (not reached) */
	sim_only("4", "GPU-456d6265-7253-696d-4750-550000000003, 1,7,0");
	cr_assert_eq(count(), 2, "the list ends at the first entry that is not a GPU");
	cr_expect_eq(uuid_last(0), 3);
	cr_expect_eq(uuid_last(1), 1);
}

Test(multi_gpu, cuda_visible_devices_stops_at_a_repeated_gpu)
{
	sim_only("3", "1,1,2");
	cr_assert_eq(count(), 1);
	cr_expect_eq(uuid_last(0), 1);
}

Test(multi_gpu, a_list_naming_no_simulated_gpu_leaves_them_all_visible)
{
	sim_only("2", "GPU-37055aa0-a27d-54da-e72e-ab9deeee66cc");
	cr_expect_eq(count(), 2);
}

static int can_access_peer(int dev, int peer)
{
	int can = -1;
	CU_OK(SYM(sim, cuDeviceCanAccessPeer)(&can, dev, peer));
	return can;
}

/* EMBER_SIM_PEERS: the peer topology, by physical GPU, whatever ordinals CUDA_VISIBLE_DEVICES gives them. */
Test(multi_gpu, the_simulated_peer_topology_is_all_none_or_pairs)
{
	setenv("EMBER_SIM_PEERS", "0-2,1-x,1-3", 1); /* a bad entry ends the list */
	sim_only("4", "2,1,0");
	cr_expect_eq(can_access_peer(0, 2), 1, "physical 2 and 0");
	cr_expect_eq(can_access_peer(2, 0), 1, "both ways");
	cr_expect_eq(can_access_peer(0, 1), 0);
	cr_expect_eq(can_access_peer(1, 2), 0);
	cr_expect_eq(can_access_peer(0, 0), 0, "a GPU is not its own peer");
}

Test(multi_gpu, the_simulated_gpus_are_all_peers_by_default)
{
	sim_only("3", NULL);
	cr_expect_eq(can_access_peer(0, 1) + can_access_peer(1, 2) + can_access_peer(2, 0), 3);
}

Test(multi_gpu, no_simulated_gpu_is_a_peer_under_none)
{
	setenv("EMBER_SIM_PEERS", "none", 1);
	sim_only("3", NULL);
	cr_expect_eq(can_access_peer(0, 1) + can_access_peer(1, 2) + can_access_peer(2, 0), 0);
}

/* ---- through the shim ---- */

static CUfunction reread[2];
static CUcontext ctxs[2];

/* The environment every shim case starts from: the GPUs, the mode, a 64 MiB budget unless the case set one. */
static void shim_env(const char *mode, const char *devices)
{
	setenv("EMBER_SIM_DEVICES", devices, 1);
	setenv("EMBER_MODE", mode, 1);
	if (!getenv("EMBER_BUDGET"))
		setenv("EMBER_BUDGET", "64M", 1);
	sim = load_sim();
	shim = load_shim();
}

/* GPU d's primary context retained and made current, the reread kernel loaded in it (once). */
static void open_gpu(int d)
{
	if (ctxs[d])
		return;
	CUdevice dev;
	CUmodule mod;
	CU_OK(SYM(shim, cuDeviceGet)(&dev, d));
	CU_OK(SYM(shim, cuDevicePrimaryCtxRetain)(&ctxs[d], dev));
	CU_OK(SYM(shim, cuCtxSetCurrent)(ctxs[d]));
	CU_OK(SYM(shim, cuModuleLoadData)(&mod, "ember-sim:"));
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread[d], mod, "ember_reread_sum"));
}

/* The shim over two (or more) simulated GPUs, a primary context on GPUs 0 and 1, the reread kernel in each; GPU 0 current. */
static void start(const char *mode, const char *devices)
{
	shim_env(mode, devices);
	CU_OK(SYM(shim, cuInit)(0));
	for (int d = 1; d >= 0; d--)
		open_gpu(d);
}

/* Only GPU 0's context: GPU 1 is not in use until use_gpu(1). */
static void start_on_gpu0(const char *mode)
{
	setenv("EMBER_BUDGET", "64M", 1);
	shim_env(mode, "2");
	CUmodule mod = start_context(shim);
	CU_OK(SYM(shim, cuCtxGetCurrent)(&ctxs[0]));
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread[0], mod, "ember_reread_sum"));
}

static void use_gpu(int d)
{
	open_gpu(d);
	CU_OK(SYM(shim, cuCtxSetCurrent)(ctxs[d]));
}

static CUdeviceptr managed(size_t bytes, unsigned char fill)
{
	CUdeviceptr p = 0;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, bytes, CU_MEM_ATTACH_GLOBAL));
	memset((void *)p, fill, bytes);
	return p;
}

/* A launch on GPU d reading all of [p, p + bytes). */
static void read_on(int d, CUdeviceptr p, size_t bytes)
{
	use_gpu(d);
	launch_reread(shim, reread[d], p, bytes);
}

static uint64_t resident(int d)
{
	return SYM(sim, ember_sim_device_resident_bytes)(d);
}

/* What GPU d's account holds, as cuMemGetInfo reports it under a budget (total less free); GPU d is current after. */
static uint64_t account_used(int d)
{
	size_t free_b, total_b;
	use_gpu(d);
	CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total_b));
	return total_b - free_b;
}

static void expect_accounts_empty(void)
{
	for (int d = 0; d < 2; d++)
		cr_expect_eq(account_used(d), 0, "GPU %d's account is empty", d);
}

static void expect_peaks_under_high_watermark(uint64_t budget)
{
	for (int d = 0; d < 2; d++)
		cr_expect_leq(SYM(sim, ember_sim_device_peak_resident_bytes)(d), budget / 100 * 90, "GPU %d", d);
}

static uint32_t accessed_by(CUdeviceptr p)
{
	struct ember_sim_block_info info;
	cr_assert_eq(SYM(sim, ember_sim_block_info)((void *)p, &info), 0);
	return info.accessed_by & ~(1u << 31);
}

/* The GPU Ember places p's allocation for (ember_region_info's device). */
static int placed_for(CUdeviceptr p)
{
	struct ember_region_info info;
	cr_assert_eq(SYM(shim, ember_region_info)((void *)p, &info), 0);
	return info.device;
}

static unsigned resident_regions(CUdeviceptr p, size_t bytes)
{
	unsigned n = 0;
	for (size_t off = 0; off < bytes; off += 2 * MiB) {
		struct ember_region_info info;
		if (SYM(shim, ember_region_info)((void *)(p + off), &info) == 0 && info.state == 2)
			n++;
	}
	return n;
}

static void expect_bytes(CUdeviceptr p, size_t bytes, unsigned char fill)
{
	for (size_t i = 0; i < bytes; i += 4093)
		cr_assert_eq(((unsigned char *)p)[i], fill, "byte %zu of %#llx", i, (unsigned long long)p);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };
	nanosleep(&ts, NULL);
}

/*
 * Four simulated GPUs, the process sees 3 and 1 as ordinals 0 and 1:
 * EMBER_BUDGET_<n> is by the ordinal, cuMemGetInfo on each reports its
 * own, and each budget's line names the physical GPU it is.
 */
Test(multi_gpu, budgets_follow_the_ordinal_the_process_sees_and_the_log_names_the_physical_gpu)
{
	char log[] = "/tmp/ember-multi-gpu-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "info", 1);
	setenv("CUDA_VISIBLE_DEVICES", "3,1", 1);
	setenv("EMBER_BUDGET_0", "32M", 1);
	setenv("EMBER_BUDGET_1", "48M", 1);
	start("static", "4");
	size_t free_b, total[2];
	for (int d = 0; d < 2; d++) {
		use_gpu(d);
		CU_OK(SYM(shim, cuMemGetInfo_v2)(&free_b, &total[d]));
	}
	cr_expect_eq(total[0], 32 * MiB, "ordinal 0 (simulated GPU 3) has EMBER_BUDGET_0");
	cr_expect_eq(total[1], 48 * MiB, "ordinal 1 (simulated GPU 1) has EMBER_BUDGET_1");
	char buf[16384];
	read_file(log, buf, sizeof buf);
	unlink(log);
	cr_expect_eq(lines_with(buf, "GPU 0: budget 0.03 GiB (EMBER_BUDGET_<n>)"), 1, "%s", buf);
	cr_expect_eq(lines_with(buf, "physical GPU 00000000:1B:00.0 GPU-456d6265-7253-696d-4750-550000000003 "
				     "(CUDA_VISIBLE_DEVICES=3,1)"),
		     1, "%s", buf);
	cr_expect_eq(lines_with(buf, "GPU 1: budget 0.05 GiB (EMBER_BUDGET_<n>)"), 1, "%s", buf);
	cr_expect_eq(lines_with(buf, "physical GPU 00000000:19:00.0 GPU-456d6265-7253-696d-4750-550000000001 "
				     "(CUDA_VISIBLE_DEVICES=3,1)"),
		     1, "%s", buf);
}

/*
 * The exit statistics carry each GPU's physical identity beside its
 * account. They are written at exit, so a fresh process of this program
 * makes them: the constructor below, run before Criterion's main when
 * MULTI_GPU_STATS_CHILD is set (spawned, not forked: a fork of this
 * threaded process that goes on with the shim cannot run under TSan).
 */
__attribute__((constructor)) static void stats_child(void)
{
	if (!getenv("MULTI_GPU_STATS_CHILD"))
		return;
	void *s = load_sim(), *e = load_shim();
	(void)s;
	CUresult (*init)(unsigned) = must_dlsym(e, "cuInit");
	CUresult (*get)(CUdevice *, int) = must_dlsym(e, "cuDeviceGet");
	CUresult (*retain)(CUcontext *, CUdevice) = must_dlsym(e, "cuDevicePrimaryCtxRetain");
	CUresult (*set)(CUcontext) = must_dlsym(e, "cuCtxSetCurrent");
	CUresult (*info)(size_t *, size_t *) = must_dlsym(e, "cuMemGetInfo_v2");
	if (init(0) != CUDA_SUCCESS)
		_exit(2);
	CUcontext ctx[2];
	for (int d = 1; d >= 0; d--) {
		CUdevice dev;
		size_t free_b, total_b;
		if (get(&dev, d) || retain(&ctx[d], dev) || set(ctx[d]) || info(&free_b, &total_b)) /* its budget made known */
			_exit(3);
	}
	if (!strcmp(getenv("MULTI_GPU_STATS_CHILD"), "peer")) {
		/* GPU 0 current: a re-read of 64 MiB past its budget, what it cannot hold lent to GPU 1 */
		CUmodule mod;
		CUfunction f;
		CUdeviceptr p;
		CUresult (*load)(CUmodule *, const void *) = must_dlsym(e, "cuModuleLoadData");
		CUresult (*fn)(CUfunction *, CUmodule, const char *) = must_dlsym(e, "cuModuleGetFunction");
		CUresult (*alloc)(CUdeviceptr *, size_t, unsigned) = must_dlsym(e, "cuMemAllocManaged");
		CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				   CUstream, void **, void **) = must_dlsym(e, "cuLaunchKernel");
		CUresult (*sync)(void) = must_dlsym(e, "cuCtxSynchronize");
		float sum;
		float *out = &sum;
		size_t n = 64 * MiB / sizeof(float);
		unsigned passes = 1;
		void *params[] = { &p, &n, &passes, &out };
		if (load(&mod, "ember-sim:") || fn(&f, mod, "ember_reread_sum") || alloc(&p, 64 * MiB, CU_MEM_ATTACH_GLOBAL) ||
		    launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL) || sync())
			_exit(4);
	}
	exit(0); /* the shim writes its statistics at exit */
}

/* The statistics child run as `what` ("1", or "peer"), its EMBER_STATS report read into buf. */
static void stats_of_child(const char *what, char *buf, size_t size)
{
	char path[] = "/tmp/ember-multi-gpu-stats-XXXXXX";
	temp_file_env("EMBER_STATS", path);
	setenv("EMBER_MODE", "static", 1);
	if (!getenv("EMBER_BUDGET"))
		setenv("EMBER_BUDGET", "64M", 1);
	setenv("MULTI_GPU_STATS_CHILD", what, 1);
	extern char **environ;
	char *argv[] = { "test_multi_gpu", NULL };
	pid_t pid;
	cr_assert_eq(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ), 0);
	unsetenv("MULTI_GPU_STATS_CHILD");
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child: status %d", status);
	read_file(path, buf, size);
	unlink(path);
}

Test(multi_gpu, the_statistics_name_each_gpus_pci_bus_id_and_uuid)
{
	setenv("CUDA_VISIBLE_DEVICES", "3,1", 1);
	setenv("EMBER_SIM_DEVICES", "4", 1);
	char buf[16384];
	stats_of_child("1", buf, sizeof buf);
	cr_expect_not_null(strstr(buf, "{\"device\": 0, \"pci_bus_id\": \"00000000:1B:00.0\", "
				       "\"uuid\": \"GPU-456d6265-7253-696d-4750-550000000003\", \"budget_bytes\": 67108864"),
			   "%s", buf);
	cr_expect_not_null(strstr(buf, "{\"device\": 1, \"pci_bus_id\": \"00000000:19:00.0\", "
				       "\"uuid\": \"GPU-456d6265-7253-696d-4750-550000000001\""),
			   "%s", buf);
	cr_expect_null(strstr(buf, "peer_bytes"), "no peer tier, no peer figures: %s", buf);
}

/*
 * The peer tier's figures in the statistics: GPU 0's bytes placed on
 * peers, GPU 1's held, placed (in all) and pushed out, and an exit line
 * saying the same.
 */
Test(multi_gpu, the_statistics_count_the_bytes_placed_on_peers)
{
	char log[] = "/tmp/ember-multi-gpu-log-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "info", 1);
	setenv("EMBER_SIM_DEVICES", "2", 1);
	setenv("EMBER_BUDGET_0", "16M", 1);
	setenv("EMBER_BUDGET_1", "256M", 1);
	char buf[16384];
	stats_of_child("peer", buf, sizeof buf);
	/* 7 regions fit under 90% of 16 MiB: 50 MiB on GPU 1 */
	cr_expect_not_null(strstr(buf, "\"bytes_placed_on_peers\": 52428800}"), "%s", buf);
	cr_expect_not_null(strstr(buf, "\"peer_bytes_held\": 52428800, \"peer_bytes_placed\": 52428800, "
				       "\"peer_bytes_pushed_out\": 0, \"bytes_placed_on_peers\": 0}"),
			   "%s", buf);
	char text[16384];
	read_file(log, text, sizeof text);
	unlink(log);
	/* the simulated links measured by 32 MiB copies, their fixed cost with them (sim/cost.h: 300 and 55.4 GB/s) */
	cr_expect_eq(lines_with(text, "GPU 0 reads GPU 1's memory at 294.7 GB/s and host memory at 55.2 GB/s"), 1, "%s",
		     text);
	cr_expect_eq(lines_with(text, "GPU 0 at exit, the peer tier: 0.05 GiB of its allocations placed on peers"), 1,
		     "%s", text);
	cr_expect_eq(lines_with(text, "GPU 1 at exit, the peer tier: 0.00 GiB of its allocations placed on peers; it "
				      "held 0.05 GiB for other GPUs (0.05 GiB now)"),
		     1, "%s", text);
}

/*
 * Accessed-by for the GPUs in use, not every GPU the process can see: an
 * allocation made while only GPU 0 is in use is advised for GPU 0; a
 * launch on GPU 1 that references it adds GPU 1 before it runs, so GPU 1
 * reads it through the mapping instead of faulting page by page.
 */
Test(multi_gpu, every_gpu_that_uses_an_allocation_is_advised_accessed_by)
{
	start_on_gpu0("static");
	CUdeviceptr p = managed(8 * MiB, 0x5a);
	cr_expect_eq(accessed_by(p), 1u, "advised for GPU 0 alone: GPU 1 is not in use");
	read_on(1, p, 8 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(accessed_by(p), 3u, "GPU 1 added at its first launch that references it");
	cr_expect_eq(accessed_by(p + 6 * MiB), 3u, "over the whole allocation");
	CUdeviceptr q = managed(8 * MiB, 0x6b);
	cr_expect_eq(accessed_by(q), 3u, "a later allocation: both GPUs are in use");
	expect_bytes(p, 8 * MiB, 0x5a);
	expect_bytes(q, 8 * MiB, 0x6b);
}

/* Mapped mode scans no launch, so it advises every GPU at allocation, as before. */
Test(multi_gpu, mapped_mode_advises_every_gpu_at_allocation)
{
	start_on_gpu0("mapped");
	CUdeviceptr p = managed(4 * MiB, 1);
	cr_expect_eq(accessed_by(p), 3u);
}

/*
 * Allocated in GPU 0's context, first launched on GPU 1: nothing of it is
 * on GPU 0, so it is placed for GPU 1, and the static split lands there,
 * under GPU 1's budget.
 */
Test(multi_gpu, an_allocation_first_launched_on_another_gpu_is_split_onto_that_gpu)
{
	setenv("EMBER_BUDGET_1", "32M", 1);
	setenv("EMBER_SIM_PEERS", "none", 1); /* what GPU 1 has no room for stays in host memory, not on GPU 0 */
	start("static", "2");
	use_gpu(0);
	CUdeviceptr p = managed(100 * MiB, 0x33);
	cr_expect_eq(placed_for(p), 0, "made in GPU 0's context");
	read_on(1, p, 100 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(placed_for(p), 1, "placed for the GPU whose launch referenced it");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)p), 1, "its prefix on GPU 1");
	cr_expect_eq(resident(0), 0, "nothing on GPU 0");
	cr_expect_leq(resident(1), 32 * MiB / 100 * 90, "GPU 1 under its own high watermark");
	cr_expect_gt(resident(1), 16 * MiB);
	cr_expect_eq(account_used(1), resident(1), "GPU 1's account holds it");
	cr_expect_eq(account_used(0), 0, "GPU 0's account holds nothing");
	expect_bytes(p, 100 * MiB, 0x33);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
	sync_and_flush(shim);
	cr_expect_eq(resident(0) + resident(1), 0);
}

/*
 * Static splits once: split on GPU 0, then read on GPU 1, it stays on
 * GPU 0 (GPU 1 reads it over the peer link), and GPU 1 promotes nothing.
 */
Test(multi_gpu, static_keeps_a_split_where_it_was_made)
{
	start("static", "2");
	CUdeviceptr p = managed(32 * MiB, 0x44);
	read_on(0, p, 32 * MiB);
	sync_and_flush(shim);
	uint64_t on0 = resident(0);
	cr_expect_eq(on0, 32 * MiB);
	read_on(1, p, 32 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(placed_for(p), 0);
	cr_expect_eq(resident(0), on0);
	cr_expect_eq(resident(1), 0);
	cr_expect_eq(accessed_by(p), 3u);
	expect_bytes(p, 32 * MiB, 0x44);
}

/*
 * The simulated driver's peer link (sim/cost.h): GPU 1 reading a split
 * that lives on GPU 0 runs at the peer rate, GPU 1 reading mapped host
 * memory at the host-mapped rate, and their ratio is the gain the rates
 * predict (peer.h), within the launch's fixed cost.
 */
/* The virtual time of `n` launches on GPU d reading all of [p, p + bytes), after one untimed (which places and maps it). */
static double timed_reads(int d, CUdeviceptr p, size_t bytes, unsigned n)
{
	read_on(d, p, bytes);
	sync_and_flush(shim);
	uint64_t t0 = SYM(sim, ember_sim_now_ns)();
	for (unsigned i = 0; i < n; i++)
		read_on(d, p, bytes);
	CU_OK(SYM(shim, cuCtxSynchronize)());
	return (double)(SYM(sim, ember_sim_now_ns)() - t0);
}

Test(multi_gpu, the_simulated_peer_link_reads_at_its_rate)
{
	setenv("EMBER_BUDGET_1", "1M", 1); /* no room for a region on GPU 1: what it reads stays where it is */
	setenv("EMBER_BUDGET_0", "36M", 1); /* GPU 0 past its low watermark with its split: no room to lend */
	start("static", "2");
	CUdeviceptr on0 = managed(32 * MiB, 0x55), host = managed(32 * MiB, 0x66);
	read_on(0, on0, 32 * MiB); /* split onto GPU 0 */
	sync_and_flush(shim);
	cr_assert_eq(resident(0), 32 * MiB);
	double ns[2];
	CUdeviceptr what[2] = { on0, host };
	for (int i = 0; i < 2; i++)
		ns[i] = timed_reads(1, what[i], 32 * MiB, 1);
	double bytes = 32.0 * MiB;
	cr_expect(ns[0] > bytes / 300e9 * 1e9 && ns[0] < bytes / 300e9 * 1e9 * 1.2, "peer: %.0f ns", ns[0]);
	cr_expect(ns[1] > bytes / 51e9 * 1e9 && ns[1] < bytes / 51e9 * 1e9 * 1.2, "host-mapped: %.0f ns", ns[1]);
	double gain = ns[1] / ns[0], predicted = 300.0 / 51.0;
	cr_expect(gain > predicted * 0.8 && gain < predicted * 1.25, "gain %.2f against %.2f predicted", gain, predicted);
	cr_expect_eq(resident(1), 0);
	expect_bytes(on0, 32 * MiB, 0x55);
}

/* Adaptive mode over two GPUs, on a short interval and span: a few launches make a region hot. */
static void start_adaptive(void)
{
	setenv("EMBER_INTERVAL_MS", "5", 1);
	setenv("EMBER_SPAN", "8M", 1);
	start("adaptive", "2");
}

/* Read p on GPU d until `done` holds (at most n tries, 5 ms apart). */
#define READ_UNTIL(d, p, bytes, n, done)                                          \
	for (int try_ = 0; try_ < (n) && !(done); try_++) {                       \
		read_on((d), (p), (bytes));                                       \
		sleep_ms(5);                                                      \
	}

/* Read 16 MiB at p on GPU d until all of it is resident (60 tries), flushed; returns its resident regions. */
static unsigned hot_on(int d, CUdeviceptr p)
{
	READ_UNTIL(d, p, 16 * MiB, 60, resident_regions(p, 16 * MiB) == 8);
	sync_and_flush(shim);
	return resident_regions(p, 16 * MiB);
}

/*
 * Adaptive: hot on GPU 0, promoted there; then only GPU 1 reads it. Once
 * GPU 0 has not referenced it for EMBER_STALE_INTERVALS, a launch on GPU 1
 * sends GPU 0's regions back to the host, the next launch places it for
 * GPU 1, and its promotions bring it to GPU 1. Neither budget is passed.
 */
Test(multi_gpu, adaptive_hands_an_allocation_over_to_the_gpu_that_now_uses_it)
{
	start_adaptive();
	CUdeviceptr p = managed(16 * MiB, 0x77);
	cr_assert_eq(hot_on(0, p), 8, "hot on GPU 0: promoted there");
	cr_expect_eq(resident(0), 16 * MiB);
	READ_UNTIL(1, p, 16 * MiB, 200, placed_for(p) == 1 && resident_regions(p, 16 * MiB) == 8);
	sync_and_flush(shim);
	cr_expect_eq(placed_for(p), 1, "placed for GPU 1 now");
	cr_expect_eq(resident_regions(p, 16 * MiB), 8, "and promoted there");
	cr_expect_eq(resident(1), 16 * MiB);
	cr_expect_eq(resident(0), 0, "GPU 0 gave it back");
	cr_expect_eq(SYM(sim, ember_sim_block_location)((void *)p), 1);
	cr_expect_eq(account_used(0), 0, "GPU 0's account is empty");
	expect_peaks_under_high_watermark(64 * MiB);
	expect_bytes(p, 16 * MiB, 0x77);
}

/*
 * Adaptive, an allocation both GPUs keep reading: it stays where it is
 * (GPU 1 reads GPU 0's regions over the peer link), and launches on
 * GPU 1 promote nothing onto GPU 0 nor GPU 1.
 */
Test(multi_gpu, adaptive_leaves_an_allocation_both_gpus_use_where_it_is)
{
	setenv("EMBER_STALE_INTERVALS", "200", 1); /* GPU 0 counts as using it for 1 s after each launch, however slow the build */
	start_adaptive();
	CUdeviceptr p = managed(16 * MiB, 0x12);
	cr_assert_eq(hot_on(0, p), 8);
	for (int i = 0; i < 40; i++) {
		read_on(i % 2, p, 16 * MiB);
		sleep_ms(2);
	}
	sync_and_flush(shim);
	cr_expect_eq(placed_for(p), 0);
	cr_expect_eq(resident(0), 16 * MiB);
	cr_expect_eq(resident(1), 0);
	expect_bytes(p, 16 * MiB, 0x12);
}

/*
 * Adaptive, a launch on GPU 1 of data placed for GPU 0 but hot only on
 * GPU 1 from the start: never promoted onto GPU 0 (the launch's GPU is the
 * only one a launch promotes for), but onto GPU 1 once placed for it.
 */
Test(multi_gpu, adaptive_promotes_onto_the_launching_gpu_only)
{
	start_adaptive();
	use_gpu(0);
	CUdeviceptr p = managed(16 * MiB, 0x21);
	cr_expect_eq(hot_on(1, p), 8);
	cr_expect_eq(placed_for(p), 1);
	cr_expect_eq(resident(0), 0);
	cr_expect_eq(resident(1), 16 * MiB);
	expect_bytes(p, 16 * MiB, 0x21);
}

/*
 * Two threads, one per GPU, launching at once over an allocation of their
 * own and one they share, in adaptive mode with small budgets: the
 * allocations' GPU may move under them, but neither budget is passed, the
 * accounts end empty after the frees, and the bytes come back intact.
 */
static CUdeviceptr shared_p, own_p[2];

static void *gpu_thread(void *arg)
{
	int d = (int)(intptr_t)arg;
	CU_OK(SYM(shim, cuCtxSetCurrent)(ctxs[d]));
	float sum; /* each thread's own: launch_reread's is one for all */
	float *out = &sum;
	size_t n = 8 * MiB / sizeof(float);
	unsigned passes = 1;
	for (int i = 0; i < 80; i++) {
		CUdeviceptr p = (i % 3) ? own_p[d] : shared_p;
		void *params[] = { &p, &n, &passes, &out };
		CU_OK(SYM(shim, cuLaunchKernel)(reread[d], 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
		if (i % 10 == 0)
			sleep_ms(1);
	}
	CU_OK(SYM(shim, cuCtxSynchronize)());
	return NULL;
}

Test(multi_gpu, two_threads_on_two_gpus_sharing_an_allocation_keep_both_budgets)
{
	setenv("EMBER_BUDGET", "16M", 1); /* one allocation fits, not two */
	start_adaptive();
	shared_p = managed(8 * MiB, 0xa1);
	own_p[0] = managed(8 * MiB, 0xb2);
	own_p[1] = managed(8 * MiB, 0xc3);
	pthread_t t[2];
	for (intptr_t d = 0; d < 2; d++)
		cr_assert_eq(pthread_create(&t[d], NULL, gpu_thread, (void *)d), 0);
	for (int d = 0; d < 2; d++)
		pthread_join(t[d], NULL);
	use_gpu(0);
	sync_and_flush(shim);
	expect_peaks_under_high_watermark(16 * MiB);
	cr_expect_eq(accessed_by(shared_p), 3u);
	expect_bytes(shared_p, 8 * MiB, 0xa1);
	expect_bytes(own_p[0], 8 * MiB, 0xb2);
	expect_bytes(own_p[1], 8 * MiB, 0xc3);
	CU_OK(SYM(shim, cuMemFree_v2)(shared_p));
	CU_OK(SYM(shim, cuMemFree_v2)(own_p[0]));
	CU_OK(SYM(shim, cuMemFree_v2)(own_p[1]));
	sync_and_flush(shim);
	cr_expect_eq(resident(0) + resident(1), 0);
	expect_accounts_empty();
}

/* ---- the peer tier (shim/policy/peer_tier.h, wired in shim/mech/gpus.c) ---- */

/* Bytes of [p, p + bytes) whose blocks the simulated driver has on GPU d. */
static uint64_t bytes_on(int d, CUdeviceptr p, size_t bytes)
{
	uint64_t n = 0;
	for (size_t off = 0; off < bytes; off += 2 * MiB)
		if (SYM(sim, ember_sim_block_location)((void *)(p + off)) == d)
			n += 2 * MiB;
	return n;
}

/*
 * The re-read workload on two GPUs: GPU 0 budgeted far below its working
 * set (16 MiB of 128 MiB), GPU 1 idle with 256 MiB. Its budget made known
 * (the program asked for its memory, as frameworks do), it is in use.
 */
enum { REREAD_MIB = 128, REREADS = 4 };

static void start_reread(void)
{
	setenv("EMBER_BUDGET_0", "16M", 1);
	setenv("EMBER_BUDGET_1", "256M", 1);
	start("static", "2");
	cr_assert_eq(account_used(1), 0, "GPU 1: idle");
	use_gpu(0);
}

/*
 * Host-only (the simulated GPUs have no peer link: EMBER_SIM_PEERS=none)
 * against host+peer placement: with the link, what GPU 0's budget cannot
 * take goes to GPU 1 and GPU 0 reads it there, faster than host memory by
 * about the ratio of the simulated peer and host-mapped rates (300 and
 * 51 GB/s, sim/cost.h), the few regions resident on GPU 0 and the launch's
 * fixed cost aside. GPU 1's account holds what it holds for GPU 0.
 */
static double reread_ns(bool peers, uint64_t *lent)
{
	if (!peers)
		setenv("EMBER_SIM_PEERS", "none", 1);
	start_reread();
	CUdeviceptr p = managed(REREAD_MIB * MiB, 0x3c);
	double ns = timed_reads(0, p, REREAD_MIB * MiB, REREADS);
	*lent = bytes_on(1, p, REREAD_MIB * MiB);
	cr_expect_leq(resident(0), 16 * MiB / 100 * 90, "GPU 0 under its high watermark");
	cr_expect_eq(account_used(1), *lent, "GPU 1's account holds what it holds for GPU 0");
	cr_expect_leq(*lent, 256 * MiB / 100 * 85, "below GPU 1's low watermark");
	expect_bytes(p, REREAD_MIB * MiB, 0x3c);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
	sync_and_flush(shim);
	expect_accounts_empty();
	cr_expect_eq(resident(0) + resident(1), 0);
	return ns;
}

Test(multi_gpu, reread_host_only_leaves_what_gpu0_cannot_hold_in_host_memory)
{
	uint64_t lent;
	double ns = reread_ns(false, &lent);
	cr_expect_eq(lent, 0, "no peer link: nothing on GPU 1");
	double mapped = (REREAD_MIB - 14) * MiB / 51e9 * 1e9 * REREADS; /* 7 regions fit under 90% of 16 MiB */
	cr_expect(ns > mapped && ns < mapped * 1.2, "host-only: %.0f ns, against %.0f ns of mapped reads", ns, mapped);
}

Test(multi_gpu, reread_peer_tier_places_what_gpu0_cannot_hold_on_gpu1)
{
	uint64_t lent;
	double ns = reread_ns(true, &lent);
	cr_expect_eq(lent, (REREAD_MIB - 14) * MiB, "every region GPU 0 has no room for is on GPU 1");
	double peer = (REREAD_MIB - 14) * MiB / 300e9 * 1e9 * REREADS;
	cr_expect(ns > peer && ns < peer * 1.3, "host+peer: %.0f ns, against %.0f ns of peer reads", ns, peer);
}

/* The two in one process each, compared: the peer tier's gain is the rates' ratio, within 25%. */
static double ns_of(bool peers)
{
	char path[] = "/tmp/ember-multi-gpu-reread-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	extern char **environ;
	setenv("MULTI_GPU_REREAD_CHILD", peers ? "peer" : "host", 1);
	setenv("MULTI_GPU_REREAD_OUT", path, 1);
	/* a Criterion run of its own: without this sandbox's variables, or it takes itself for one of its workers */
	unsetenv("IS_SANDBOX");
	unsetenv("BXFI_MAP");
	char *argv[] = { "test_multi_gpu", "--filter", "multi_gpu/reread_child", NULL };
	pid_t pid;
	cr_assert_eq(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ), 0);
	unsetenv("MULTI_GPU_REREAD_CHILD");
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the %s child: status %d", peers ? "peer" : "host",
		  status);
	char buf[64];
	read_file(path, buf, sizeof buf);
	unlink(path);
	return atof(buf);
}

/* Run in a child by ns_of: one variant's virtual time, written to MULTI_GPU_REREAD_OUT. */
Test(multi_gpu, reread_child)
{
	const char *variant = getenv("MULTI_GPU_REREAD_CHILD"), *out = getenv("MULTI_GPU_REREAD_OUT");
	if (!variant || !out)
		cr_skip_test("run by reread_peer_tier_beats_host_only_by_the_rates_ratio");
	uint64_t lent;
	double ns = reread_ns(!strcmp(variant, "peer"), &lent);
	FILE *f = fopen(out, "w");
	cr_assert_not_null(f);
	fprintf(f, "%.0f\n", ns);
	fclose(f);
}

Test(multi_gpu, reread_peer_tier_beats_host_only_by_the_rates_ratio)
{
	double host = ns_of(false), peer = ns_of(true);
	double gain = host / peer, predicted = 300.0 / 51.0;
	cr_expect(gain > predicted * 0.75 && gain < predicted * 1.25, "host %.0f ns, peer %.0f ns: gain %.2f against %.2f",
		  host, peer, gain, predicted);
}

/*
 * GPU 1's own use comes first: with 128 MiB of budget it holds what GPU 0
 * cannot (below its low watermark, 108 MiB); then its own allocation of
 * 64 MiB, launched on GPU 1, sends as much as it needs of GPU 0's regions
 * back to host memory before its split, which lands whole on GPU 1. For
 * the stale period after, GPU 0's launches lend nothing more to GPU 1.
 * The free of GPU 0's allocation leaves GPU 1's account with its own.
 */
Test(multi_gpu, gpu1s_own_demand_pushes_gpu0s_borrowed_regions_out)
{
	setenv("EMBER_BUDGET_0", "16M", 1);
	setenv("EMBER_BUDGET_1", "128M", 1);
	setenv("EMBER_STALE_INTERVALS", "400", 1); /* 10 s quiet after a push-out, however slow the build */
	start("static", "2");
	account_used(1);
	use_gpu(0);
	CUdeviceptr a = managed(REREAD_MIB * MiB, 0x4d);
	read_on(0, a, REREAD_MIB * MiB);
	sync_and_flush(shim);
	uint64_t lent = bytes_on(1, a, REREAD_MIB * MiB);
	cr_assert_eq(lent, 108 * MiB, "GPU 1 holds for GPU 0 up to its low watermark: %llu MiB",
		     (unsigned long long)(lent / MiB));
	cr_expect_eq(account_used(1), lent);
	CUdeviceptr b = managed(64 * MiB, 0x5e); /* GPU 1 current: its own */
	cr_expect_eq(placed_for(b), 1);
	read_on(1, b, 64 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(bytes_on(1, b, 64 * MiB), 64 * MiB, "GPU 1's own allocation split whole onto it");
	uint64_t left = bytes_on(1, a, REREAD_MIB * MiB);
	cr_expect_lt(left, lent, "GPU 0's regions pushed out of GPU 1");
	cr_expect_leq(left + 64 * MiB, 128 * MiB / 100 * 90, "GPU 1 under its high watermark: %llu MiB of GPU 0's left",
		      (unsigned long long)(left / MiB));
	cr_expect_eq(account_used(1), left + 64 * MiB);
	cr_expect_leq(SYM(sim, ember_sim_device_peak_resident_bytes)(1), 128 * MiB / 100 * 90);
	read_on(0, a, REREAD_MIB * MiB);
	sync_and_flush(shim);
	cr_expect_eq(bytes_on(1, a, REREAD_MIB * MiB), left, "nothing lent to GPU 1 while it is quiet");
	expect_bytes(a, REREAD_MIB * MiB, 0x4d);
	expect_bytes(b, 64 * MiB, 0x5e);
	CU_OK(SYM(shim, cuMemFree_v2)(a));
	sync_and_flush(shim);
	cr_expect_eq(account_used(1), 64 * MiB, "GPU 1's account: its own, once GPU 0's allocation is freed");
	cr_expect_eq(resident(1), 64 * MiB);
}

/*
 * Adaptive: GPU 0's promotions fill its budget, and what stays mapped of
 * the allocation its launches keep referencing goes to GPU 1; GPU 0 never
 * passes its high watermark nor GPU 1 its low one, and the free leaves
 * both accounts empty.
 */
Test(multi_gpu, adaptive_lends_what_gpu0s_promotions_leave_mapped)
{
	setenv("EMBER_BUDGET_0", "16M", 1);
	setenv("EMBER_BUDGET_1", "256M", 1);
	start_adaptive();
	account_used(1);
	use_gpu(0);
	CUdeviceptr p = managed(64 * MiB, 0x6f);
	READ_UNTIL(0, p, 64 * MiB, 100, bytes_on(1, p, 64 * MiB) == 50 * MiB);
	sync_and_flush(shim);
	cr_expect_eq(resident_regions(p, 64 * MiB), 7, "GPU 0 full: 7 regions under 90%% of 16 MiB");
	cr_expect_eq(bytes_on(1, p, 64 * MiB), 50 * MiB, "the rest on GPU 1");
	cr_expect_eq(account_used(1), 50 * MiB);
	cr_expect_leq(SYM(sim, ember_sim_device_peak_resident_bytes)(0), 16 * MiB / 100 * 90);
	cr_expect_leq(SYM(sim, ember_sim_device_peak_resident_bytes)(1), 256 * MiB / 100 * 85);
	expect_bytes(p, 64 * MiB, 0x6f);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
	sync_and_flush(shim);
	expect_accounts_empty();
}
