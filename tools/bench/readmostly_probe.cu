// ember-readmostly-probe [BYTES]: whether read duplication could bring data
// that a cycle reads once to the GPU faster than kernels read it mapped, and
// give its room back for nothing. One JSON record, without Ember.
//
// llama.cpp's kernels read the layers left past the budget mapped at 42-43
// GB/s on the H200 (ab-22; ab-32's rows probe: a plain matrix-vector product
// draws 51.4), where a prefetch brings 49-51 GB/s. A weight read once a token
// could instead be copied in ahead of its launch and dropped after, if the
// drop costs no copy back: under read-mostly advice a prefetch to the GPU
// makes a read-only duplicate and the host keeps its copy. Each case runs
// over BYTES (default 1 GiB, a layer's weights several times over) of
// managed memory written on the host, timed by events:
//   mapped_read            a kernel reads it mapped (preferred location the
//                          host, accessed by the GPU): what kernels draw
//   prefetch_to_gpu        a plain prefetch to the GPU, then
//   device_read            a kernel reads it there, then
//   demote_to_host         a prefetch back: what evicting a page costs
//   readmostly_prefetch    under read-mostly advice, a prefetch to the GPU:
//                          the duplicate, with the GPU's free memory before
//                          and after (whether a duplicate takes device memory)
//   readmostly_read        a kernel reads the duplicate
//   readmostly_to_host     a prefetch to the host of the duplicated range:
//                          its time (a copy, or none), and
//   readmostly_read_after  a kernel reads it after: at the device's rate the
//                          duplicate stayed, at the mapped rate it went
//   unset_readmostly       the advice withdrawn: its time, and the read after
//   host_check_*           a host that reads results back between runs, as
//                          pathfinder's check does (a few words of each 2 MiB
//                          block of a GPU-resident array that kernels only
//                          read): _plain with the array resident as Ember's
//                          promotions leave it (preferred location the GPU,
//                          accessed by it), _readmostly with read-mostly advice
//                          given once it arrived. Each reports the host's reads
//                          (host_seconds), a kernel's read after them
//                          (seconds: at the device's rate the GPU's copy
//                          stayed), then a prefetch to the GPU, as Ember's
//                          refresh makes it (refresh_seconds), and a read
//                          after that (refreshed_read_seconds)
//   readmostly_demote_*    the read-mostly array, after another check, given
//                          back to the mapped tier: the host preferred and the
//                          advice withdrawn (_prefer_first, as read_dup.c did
//                          before ab-40's call 6, or _unset_first, as it does
//                          now), a prefetch to the host
//                          (demote_seconds), then a kernel's read (seconds: at
//                          the mapped rate it is mapped, far slower it faults)
//   copy_into_*            a copy of BYTES from pinned host memory into the
//                          array, resident as Ember's promotions leave it,
//                          _plain or _readmostly (advised once it arrived):
//                          what a loader's cudaMemcpy into memory kernels
//                          only read costs under the advice (seconds), and a
//                          kernel's read after it (read_after_seconds: at the
//                          device's rate the copy landed on the GPU)
//   beside_compute         a read-mostly prefetch of BYTES on one stream while
//                          a kernel reads BYTES of device memory, pass after
//                          pass, on another: each one's time against alone
//   mapped_read_grid_G     a kernel of G blocks reads it mapped: fewer blocks
//                          keep fewer reads in flight and draw less of the
//                          link, as llama.cpp's kernels (43 GB/s) do
//   beside_mapped_grid_G   that kernel on one stream, a read-mostly prefetch
//                          of another BYTES on the other: whether the copy
//                          engine adds what the kernel leaves of the link
//                          (both_gb_per_s: 2 BYTES over the span of both)
// Rates are GB/s of BYTES. Read nothing into a case's rate alone that the
// next case's read does not confirm: where a page lives after each step is
// what the reads after it show.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cuda_check.h"
#include "host_fill.h"

static const cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };

// Sums every 16-byte word of p once: as many blocks as stay resident, each striding the array.
__global__ void sum_once(const uint4 *p, size_t n, unsigned long long *sink)
{
	unsigned long long acc = 0;
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
		const uint4 w = p[i];
		acc += (unsigned long long)w.x + w.y + w.z + w.w;
	}
	if (acc == 42ull)
		atomicAdd(sink, acc);
}

struct probe {
	char *data;     // BYTES of managed memory, written on the host
	char *second;   // another BYTES of it, for beside_mapped's prefetch
	char *busy;     // BYTES of device memory, for beside_compute's kernel
	char *pinned;   // BYTES of pinned host memory, for copy_into's copies
	size_t bytes;
	int grid, threads;
	unsigned long long *sink;
	cudaStream_t s, other;
	bool first = true;
};

static double seconds(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;
	CHECK(cudaEventElapsedTime(&ms, a, b));
	return ms / 1e3;
}

static size_t free_bytes()
{
	size_t free = 0, total = 0;
	CHECK(cudaMemGetInfo(&free, &total));
	return free;
}

// One record of the cases array: a name, seconds, the rate over BYTES, and an extra field when given.
static void report(probe &pr, const char *name, double s, const char *extra = "")
{
	printf("%s\n    {\"case\": \"%s\", \"seconds\": %.6f, \"gb_per_s\": %.2f%s}", pr.first ? "" : ",", name, s,
	       s > 0 ? (double)pr.bytes / s / 1e9 : 0.0, extra);
	pr.first = false;
	fflush(stdout);
}

// The time of what `step` issues on stream `on` (pr.s unless given), by events around it.
template <class F> static double timed(probe &pr, F step, cudaStream_t on = nullptr)
{
	if (!on)
		on = pr.s;
	cudaEvent_t a, b;
	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	CHECK(cudaEventRecord(a, on));
	step();
	CHECK(cudaEventRecord(b, on));
	CHECK(cudaEventSynchronize(b));
	double t = seconds(a, b);
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return t;
}

// One read pass over pr.data by `grid` blocks on stream `on`, not waited for.
static void sum_data(probe &pr, int grid, cudaStream_t on)
{
	sum_once<<<grid, pr.threads, 0, on>>>((const uint4 *)pr.data, pr.bytes / 16, pr.sink);
	CHECK(cudaGetLastError());
}

// The time of one read pass over pr.data: pr.grid blocks on pr.s unless given.
static double read_data(probe &pr, int grid = 0, cudaStream_t on = nullptr)
{
	grid = grid ? grid : pr.grid;
	on = on ? on : pr.s;
	return timed(pr, [&] { sum_data(pr, grid, on); }, on);
}

static double prefetch(probe &pr, cudaMemLocation to)
{
	return timed(pr, [&] { CHECK(cudaMemPrefetchAsync(pr.data, pr.bytes, to, 0, pr.s)); });
}

// Host wall time of one advice call, which is not stream-ordered.
template <class F> static double wall(F call)
{
	auto t0 = std::chrono::steady_clock::now();
	call();
	CHECK(cudaDeviceSynchronize());
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The data back in host memory with no advice left on it, as it was written.
static void reset(probe &pr)
{
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseUnsetReadMostly, gpu));
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseUnsetPreferredLocation, gpu));
	CHECK(cudaMemPrefetchAsync(pr.data, pr.bytes, cpu, 0, pr.s));
	CHECK(cudaStreamSynchronize(pr.s));
}

static void plain_cases(probe &pr)
{
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetPreferredLocation, cpu));
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetAccessedBy, gpu));
	read_data(pr); // the GPU's mappings made, as Ember's mapped tier has them
	report(pr, "mapped_read", read_data(pr));
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetPreferredLocation, gpu));
	report(pr, "prefetch_to_gpu", prefetch(pr, gpu));
	report(pr, "device_read", read_data(pr));
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetPreferredLocation, cpu));
	report(pr, "demote_to_host", prefetch(pr, cpu));
	reset(pr);
}

static void readmostly_cases(probe &pr)
{
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetReadMostly, gpu));
	CHECK(cudaDeviceSynchronize());
	size_t before = free_bytes();
	double s = prefetch(pr, gpu);
	size_t after = free_bytes();
	char extra[128];
	snprintf(extra, sizeof extra, ", \"gpu_free_before\": %zu, \"gpu_free_after\": %zu", before, after);
	report(pr, "readmostly_prefetch", s, extra);
	report(pr, "readmostly_read", read_data(pr));
	before = free_bytes();
	s = prefetch(pr, cpu);
	after = free_bytes();
	snprintf(extra, sizeof extra, ", \"gpu_free_before\": %zu, \"gpu_free_after\": %zu", before, after);
	report(pr, "readmostly_to_host", s, extra);
	report(pr, "readmostly_read_after", read_data(pr));
	prefetch(pr, gpu); // the duplicate again, for the advice's withdrawal
	before = free_bytes();
	s = wall([&] { CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseUnsetReadMostly, gpu)); });
	after = free_bytes();
	snprintf(extra, sizeof extra, ", \"gpu_free_before\": %zu, \"gpu_free_after\": %zu", before, after);
	report(pr, "unset_readmostly", s, extra);
	report(pr, "unset_readmostly_read_after", read_data(pr));
	reset(pr);
}

// The array on the GPU as Ember's promotions leave it (preferred location the GPU, accessed by it), with
// read-mostly advice given once it arrived or not, and read there once.
static void resident_as_ember_leaves_it(probe &pr, bool readmostly)
{
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetAccessedBy, gpu));
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetPreferredLocation, gpu));
	prefetch(pr, gpu);
	if (readmostly)
		CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetReadMostly, gpu));
	read_data(pr);
}

// What a host check of the results costs: 3 words of each 2 MiB block read, each at its own 4 KiB page.
static double host_check(probe &pr)
{
	auto t0 = std::chrono::steady_clock::now();
	unsigned long long acc = 0;
	for (size_t block = 0; block < pr.bytes; block += 2 << 20)
		for (size_t k = 0; k < 3; k++)
			acc += *(volatile const unsigned *)(pr.data + block + k * (640 << 10));
	double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	if (acc == 42ull)
		printf(" ");
	return t;
}

// The array resident as Ember's promotions leave it, read-mostly or not; a host check; a kernel's read after;
// then the refresh Ember would make, a prefetch to the GPU; read-mostly, then the demotion, in the order
// read_dup.c made it before ab-40's call 6 (the host preferred first, then the advice withdrawn) or the
// other (unset first), as it makes it now.
enum check_mode { PLAIN, READMOSTLY_PREFER_FIRST, READMOSTLY_UNSET_FIRST };

static void host_check_case(probe &pr, check_mode mode)
{
	bool readmostly = mode != PLAIN;
	resident_as_ember_leaves_it(pr, readmostly);
	double resident = read_data(pr), host = host_check(pr), after = read_data(pr);
	double refresh = prefetch(pr, gpu), refreshed = read_data(pr);
	char extra[256];
	snprintf(extra, sizeof extra,
		 ", \"host_seconds\": %.6f, \"resident_read_seconds\": %.6f, \"refresh_seconds\": %.6f, "
		 "\"refreshed_read_seconds\": %.6f",
		 host, resident, refresh, refreshed);
	report(pr, readmostly ? "host_check_readmostly" : "host_check_plain", after, extra);
	if (readmostly) { // back to the mapped tier as a demotion would take it
		host_check(pr); // host copies of some pages again, as a demotion after a check would find them
		double demote = wall([&] {
			if (mode == READMOSTLY_PREFER_FIRST)
				CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetPreferredLocation, cpu));
			CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseUnsetReadMostly, gpu));
			if (mode == READMOSTLY_UNSET_FIRST)
				CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetPreferredLocation, cpu));
			CHECK(cudaMemPrefetchAsync(pr.data, pr.bytes, cpu, 0, pr.s));
		});
		snprintf(extra, sizeof extra, ", \"demote_seconds\": %.6f", demote);
		report(pr, mode == READMOSTLY_PREFER_FIRST ? "readmostly_demote_prefer_first" : "readmostly_demote_unset_first",
		       read_data(pr), extra);
	}
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseUnsetAccessedBy, gpu));
	reset(pr);
}

// The array resident as Ember's promotions leave it, read-mostly or not; a copy into all of it from pinned
// host memory; a kernel's read after.
static void copy_into_case(probe &pr, bool readmostly)
{
	resident_as_ember_leaves_it(pr, readmostly);
	double copy = timed(pr, [&] {
		CHECK(cudaMemcpyAsync(pr.data, pr.pinned, pr.bytes, cudaMemcpyHostToDevice, pr.s));
	});
	char extra[96];
	snprintf(extra, sizeof extra, ", \"read_after_seconds\": %.6f", read_data(pr));
	report(pr, readmostly ? "copy_into_readmostly" : "copy_into_plain", copy, extra);
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseUnsetAccessedBy, gpu));
	reset(pr);
}

// A kernel over device memory on pr.other for about `target` seconds, beside a read-mostly prefetch on pr.s.
static void beside_compute(probe &pr, double target)
{
	cudaEvent_t k0, k1;
	CHECK(cudaEventCreate(&k0));
	CHECK(cudaEventCreate(&k1));
	auto run_kernels = [&](int passes) {
		CHECK(cudaEventRecord(k0, pr.other));
		for (int i = 0; i < passes; i++)
			sum_once<<<pr.grid, pr.threads, 0, pr.other>>>((const uint4 *)pr.busy, pr.bytes / 16, pr.sink);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(k1, pr.other));
	};
	run_kernels(1);
	CHECK(cudaEventSynchronize(k1));
	double one = seconds(k0, k1);
	int passes = (int)(target / (one > 1e-5 ? one : 1e-5)) + 1;
	run_kernels(passes);
	CHECK(cudaEventSynchronize(k1));
	double kernels_alone = seconds(k0, k1);
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetReadMostly, gpu));
	double copy_alone = prefetch(pr, gpu);
	reset(pr);
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetReadMostly, gpu));
	run_kernels(passes);
	double copy_beside = prefetch(pr, gpu);
	CHECK(cudaEventSynchronize(k1));
	double kernels_beside = seconds(k0, k1);
	char extra[192];
	snprintf(extra, sizeof extra,
		 ", \"copy_alone_s\": %.6f, \"kernel_passes\": %d, \"kernels_alone_s\": %.6f, \"kernels_beside_s\": %.6f",
		 copy_alone, passes, kernels_alone, kernels_beside);
	report(pr, "beside_compute", copy_beside, extra);
	reset(pr);
	cudaEventDestroy(k0);
	cudaEventDestroy(k1);
}

// A mapped read of pr.data with `grid` blocks alone, then beside a read-mostly prefetch of pr.second.
static void beside_mapped(probe &pr, int grid)
{
	char name[64], extra[256];
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetPreferredLocation, cpu));
	CHECK(cudaMemAdvise(pr.data, pr.bytes, cudaMemAdviseSetAccessedBy, gpu));
	read_data(pr, grid, pr.other); // the mappings made
	snprintf(name, sizeof name, "mapped_read_grid_%d", grid);
	report(pr, name, read_data(pr, grid, pr.other));

	CHECK(cudaMemAdvise(pr.second, pr.bytes, cudaMemAdviseSetReadMostly, gpu));
	CHECK(cudaDeviceSynchronize());
	cudaEvent_t k0, k1, c0, c1;
	CHECK(cudaEventCreate(&k0));
	CHECK(cudaEventCreate(&k1));
	CHECK(cudaEventCreate(&c0));
	CHECK(cudaEventCreate(&c1));
	CHECK(cudaEventRecord(k0, pr.other));
	CHECK(cudaEventRecord(c0, pr.s));
	sum_data(pr, grid, pr.other);
	CHECK(cudaMemPrefetchAsync(pr.second, pr.bytes, gpu, 0, pr.s));
	CHECK(cudaEventRecord(k1, pr.other));
	CHECK(cudaEventRecord(c1, pr.s));
	CHECK(cudaDeviceSynchronize());
	double kernel = seconds(k0, k1), copy = seconds(c0, c1);
	double copy_start = seconds(k0, c0), copy_end = seconds(k0, c1); // both from the kernel's start, signed
	double span = (kernel > copy_end ? kernel : copy_end) - (copy_start < 0 ? copy_start : 0);
	snprintf(extra, sizeof extra, ", \"copy_s\": %.6f, \"copy_gb_per_s\": %.2f, \"both_gb_per_s\": %.2f", copy,
		 copy > 0 ? (double)pr.bytes / copy / 1e9 : 0.0, span > 0 ? 2.0 * pr.bytes / span / 1e9 : 0.0);
	snprintf(name, sizeof name, "beside_mapped_grid_%d", grid);
	report(pr, name, kernel, extra);
	CHECK(cudaMemAdvise(pr.second, pr.bytes, cudaMemAdviseUnsetReadMostly, gpu));
	CHECK(cudaMemPrefetchAsync(pr.second, pr.bytes, cpu, 0, pr.s));
	CHECK(cudaStreamSynchronize(pr.s));
	reset(pr);
	cudaEventDestroy(k0);
	cudaEventDestroy(k1);
	cudaEventDestroy(c0);
	cudaEventDestroy(c1);
}

int main(int argc, char **argv)
{
	probe pr;
	pr.bytes = (argc > 1 ? strtoull(argv[1], nullptr, 0) : 1ull << 30) & ~(size_t)((2 << 20) - 1);
	if (pr.bytes == 0) {
		fprintf(stderr, "ember-readmostly-probe: BYTES must be at least 2 MiB\n");
		return 2;
	}
	int sms = 0, per_sm = 0;
	pr.threads = 256;
	CHECK(cudaSetDevice(0));
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sum_once, pr.threads, 0));
	pr.grid = sms * (per_sm > 0 ? per_sm : 1);
	if (free_bytes() < 4 * pr.bytes) { // the busy array, two duplicates and a migrated copy at most, never more
		fprintf(stderr, "ember-readmostly-probe: %zu bytes need %zu free on the GPU, %zu are\n", pr.bytes,
			4 * pr.bytes, free_bytes());
		return 2;
	}
	CHECK(cudaStreamCreateWithFlags(&pr.s, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&pr.other, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&pr.sink, sizeof *pr.sink));
	CHECK(cudaMalloc(&pr.busy, pr.bytes));
	CHECK(cudaMemset(pr.busy, 1, pr.bytes));
	CHECK(cudaMallocHost(&pr.pinned, pr.bytes));
	host_fill(pr.pinned, pr.bytes);
	CHECK(cudaMallocManaged(&pr.data, pr.bytes));
	host_fill(pr.data, pr.bytes);
	CHECK(cudaMallocManaged(&pr.second, pr.bytes));
	host_fill(pr.second, pr.bytes);
	printf("{\"bench\": \"readmostly-probe\", \"bytes\": %zu, \"sms\": %d, \"grid\": %d, \"cases\": [", pr.bytes, sms,
	       pr.grid);
	plain_cases(pr);
	readmostly_cases(pr);
	host_check_case(pr, PLAIN);
	host_check_case(pr, READMOSTLY_PREFER_FIRST);
	host_check_case(pr, READMOSTLY_UNSET_FIRST);
	copy_into_case(pr, false);
	copy_into_case(pr, true);
	beside_compute(pr, 0.5);
	for (int g : { sms / 4, sms / 2, sms, pr.grid })
		beside_mapped(pr, g);
	printf("\n]}\n");
	CHECK(cudaFree(pr.data));
	CHECK(cudaFree(pr.second));
	CHECK(cudaFree(pr.busy));
	CHECK(cudaFreeHost(pr.pinned));
	CHECK(cudaFree(pr.sink));
	return 0;
}
