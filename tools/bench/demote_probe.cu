// ember-demote-probe [MAPPED_BYTES]: whether a move Ember issues on its
// private stream waits for a kernel that runs on the program's stream. One
// JSON record, without Ember.
//
// On the H200, star's first run at 97/93 of its budget waited 2.4 s for a
// 42 MiB demotion whose copy took 26 ms once it began, while the queries ran
// reading their dimension tables mapped (ab-28's call 8). Each case here
// moves a 64 MiB victim as shim/mech/ops_driver.c does (advice to prefer
// the destination, then a prefetch between two events on a non-blocking
// stream), issued 100 ms after a kernel of about a second began on another
// stream:
//   idle                        no kernel: the move alone
//   demote_under_mapped_resident_blocks   the kernel reads MAPPED_BYTES (2 GiB)
//                               of mapped memory pass after pass, its grid as
//                               many blocks as fit at once (a grid-stride
//                               loop: no block ends before the kernel does)
//   demote_under_mapped_short_blocks      the same reads by many blocks that
//                               each read one piece once and end
//   demote_under_device_resident_blocks   the first kernel over device memory
//                               (nothing mapped read)
//   promote_under_mapped_resident_blocks  the victim brought back to the GPU
//                               under the first kernel: the other direction
//   demote_under_mapped_random_lookups    as star's queries: each row looks a
//                               word up at random in 16 MiB of mapped memory
//                               and adds one with an atomic to one of 1,223
//                               sums in device memory
//   demote_under_legacy_stream_mapped_resident_blocks  the first kernel on the
//                               legacy default stream, where star launches
// Each case reports, in seconds from the kernel's start by the events, when
// the move began and ended and when the kernel ended, the copy's own time,
// and waited_for_kernel: the move began within 10 ms of the kernel's end or
// after it.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cuda_check.h"
#include "host_fill.h"

static const size_t victim_bytes = 64ull << 20;
static const cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };
static const int threads = 256;

// Every block reads the whole array, pass after pass, in a grid-stride loop.
__global__ void read_resident_blocks(const uint4 *p, size_t n, int passes, unsigned *sink)
{
	unsigned acc = 0;
	for (int k = 0; k < passes; k++)
		for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
			uint4 v = p[i];
			acc ^= v.x ^ v.y ^ v.z ^ v.w;
		}
	if (acc == 0x9e3779b9u)
		atomicAdd(sink, 1u);
}

// Block b reads piece b modulo the pieces once: blocks end all the time.
__global__ void read_short_blocks(const uint4 *p, size_t n, unsigned *sink)
{
	size_t per_block = (size_t)blockDim.x * 16, pieces = (n + per_block - 1) / per_block;
	size_t first = (blockIdx.x % pieces) * per_block;
	unsigned acc = 0;
	for (size_t i = first + threadIdx.x; i < first + per_block && i < n; i += blockDim.x) {
		uint4 v = p[i];
		acc ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (acc == 0x9e3779b9u)
		atomicAdd(sink, 1u);
}

// Each row looks a word up at random in the table and counts it in one of the sums, pass after pass.
__global__ void lookup_and_add(const unsigned *table, size_t words, unsigned *sums, unsigned nsums, size_t rows,
			       int passes)
{
	for (int k = 0; k < passes; k++)
		for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows; i += (size_t)gridDim.x * blockDim.x) {
			unsigned long long h = (i + (unsigned long long)k * rows + 1) * 0x9e3779b97f4a7c15ull;
			unsigned v = table[(h >> 20) % words];
			atomicAdd(&sums[(v ^ (unsigned)h) % nsums], 1u);
		}
}

__global__ void write_words(unsigned *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned)i;
}

struct source {
	const uint4 *p;
	size_t n;
	int resident_grid;
};

enum kernel_kind { NONE, RESIDENT_BLOCKS, SHORT_BLOCKS, LOOKUPS };

static const size_t lookup_table_bytes = 16ull << 20, lookup_rows = 1ull << 24;
static const unsigned nsums = 1223;

// Launch one kernel of the kind over src on s, reading it `passes` times.
static void launch(kernel_kind kind, const source &src, int passes, unsigned *sink, cudaStream_t s)
{
	if (kind == RESIDENT_BLOCKS) {
		read_resident_blocks<<<src.resident_grid, threads, 0, s>>>(src.p, src.n, passes, sink);
	} else if (kind == LOOKUPS) {
		size_t table_bytes = src.n * 16 < lookup_table_bytes ? src.n * 16 : lookup_table_bytes;
		lookup_and_add<<<src.resident_grid, threads, 0, s>>>((const unsigned *)src.p, table_bytes / 4, sink, nsums,
								      lookup_rows, passes);
	} else if (kind == SHORT_BLOCKS) {
		size_t per_block = (size_t)threads * 16, pieces = (src.n + per_block - 1) / per_block;
		read_short_blocks<<<(unsigned)(pieces * (size_t)passes), threads, 0, s>>>(src.p, src.n, sink);
	}
	CHECK(cudaGetLastError());
}

// Passes of kind over src that take about `target` seconds.
static int passes_for(kernel_kind kind, const source &src, unsigned *sink, cudaStream_t s, double target)
{
	cudaEvent_t a, b;
	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	CHECK(cudaEventRecord(a, s));
	launch(kind, src, 1, sink, s);
	CHECK(cudaEventRecord(b, s));
	CHECK(cudaEventSynchronize(b));
	float ms = 0;
	CHECK(cudaEventElapsedTime(&ms, a, b));
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	int passes = (int)(target * 1000.0 / (ms > 0.01f ? ms : 0.01f)) + 1;
	return passes < 1 ? 1 : passes > 100000 ? 100000 : passes;
}

static float between(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;
	CHECK(cudaEventElapsedTime(&ms, a, b));
	return ms / 1000.0f;
}

// The victim resident on the GPU, preferring it, as a promoted region is.
static void make_resident(char *victim, cudaStream_t s)
{
	CHECK(cudaMemAdvise(victim, victim_bytes, cudaMemAdviseSetPreferredLocation, gpu));
	CHECK(cudaMemPrefetchAsync(victim, victim_bytes, gpu, 0, s));
	write_words<<<132, threads, 0, s>>>((unsigned *)victim, victim_bytes / 4);
	CHECK(cudaStreamSynchronize(s));
}

// The victim in host memory, preferring it, as a demoted region is.
static void make_mapped(char *victim, cudaStream_t s)
{
	CHECK(cudaMemAdvise(victim, victim_bytes, cudaMemAdviseSetPreferredLocation, cpu));
	CHECK(cudaMemPrefetchAsync(victim, victim_bytes, cpu, 0, s));
	CHECK(cudaStreamSynchronize(s));
}

static void run_case(const char *name, kernel_kind kind, const source &src, int passes, char *victim, bool promote,
		     unsigned *sink, cudaStream_t app, cudaStream_t priv, bool *first)
{
	if (promote)
		make_mapped(victim, priv);
	else
		make_resident(victim, priv);
	CHECK(cudaDeviceSynchronize());
	cudaEvent_t k0, k1, m0, m1;
	for (cudaEvent_t *e : { &k0, &k1, &m0, &m1 })
		CHECK(cudaEventCreate(e));
	CHECK(cudaEventRecord(k0, app));
	launch(kind, src, passes, sink, app);
	CHECK(cudaEventRecord(k1, app));
	if (kind != NONE)
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	cudaMemLocation to = promote ? gpu : cpu;
	auto t0 = std::chrono::steady_clock::now();
	CHECK(cudaMemAdvise(victim, victim_bytes, cudaMemAdviseSetPreferredLocation, to));
	CHECK(cudaEventRecord(m0, priv));
	CHECK(cudaMemPrefetchAsync(victim, victim_bytes, to, 0, priv));
	CHECK(cudaEventRecord(m1, priv));
	double issue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	CHECK(cudaEventSynchronize(m1));
	CHECK(cudaEventSynchronize(k1));
	float begin = between(k0, m0), end = between(k0, m1), kernel_end = between(k0, k1);
	bool waited = kind != NONE && begin >= kernel_end - 0.010f;
	printf("%s\n    {\"case\": \"%s\", \"kernel_passes\": %d, \"issue_s\": %.6f, \"move_begin_s\": %.6f, "
	       "\"move_end_s\": %.6f, \"copy_s\": %.6f, \"kernel_end_s\": %.6f, \"waited_for_kernel\": %s}",
	       *first ? "" : ",", name, kind == NONE ? 0 : passes, issue_s, begin, end, end - begin, kernel_end,
	       waited ? "true" : "false");
	*first = false;
	for (cudaEvent_t e : { k0, k1, m0, m1 })
		cudaEventDestroy(e);
}

int main(int argc, char **argv)
{
	size_t mapped_bytes = argc > 1 ? strtoull(argv[1], nullptr, 0) : 2ull << 30;
	mapped_bytes &= ~(size_t)15;
	int dev = 0, sms = 0, per_sm = 0;
	CHECK(cudaSetDevice(dev));
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_resident_blocks, threads, 0));
	cudaStream_t app, priv;
	CHECK(cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&priv, cudaStreamNonBlocking));
	unsigned *sink; /* the lookups' sums; the other kernels add to its first word */
	CHECK(cudaMalloc(&sink, nsums * sizeof *sink));

	// the mapped source, as Ember leaves a mapped allocation: written on the host, preferring it, mapped for the GPU
	char *mapped;
	CHECK(cudaMallocManaged(&mapped, mapped_bytes));
	CHECK(cudaMemAdvise(mapped, mapped_bytes, cudaMemAdviseSetPreferredLocation, cpu));
	CHECK(cudaMemAdvise(mapped, mapped_bytes, cudaMemAdviseSetAccessedBy, gpu));
	host_fill(mapped, mapped_bytes);
	char *device;
	CHECK(cudaMalloc(&device, mapped_bytes));
	CHECK(cudaMemset(device, 1, mapped_bytes));
	char *victim;
	CHECK(cudaMallocManaged(&victim, victim_bytes));
	CHECK(cudaMemAdvise(victim, victim_bytes, cudaMemAdviseSetAccessedBy, gpu));
	host_fill(victim, victim_bytes);

	int grid = sms * (per_sm > 0 ? per_sm : 1);
	source on_host = { (const uint4 *)mapped, mapped_bytes / 16, grid };
	source on_gpu = { (const uint4 *)device, mapped_bytes / 16, grid };
	int p_resident = passes_for(RESIDENT_BLOCKS, on_host, sink, app, 1.0);
	int p_short = passes_for(SHORT_BLOCKS, on_host, sink, app, 1.0);
	int p_device = passes_for(RESIDENT_BLOCKS, on_gpu, sink, app, 1.0);
	int p_lookups = passes_for(LOOKUPS, on_host, sink, app, 1.0);

	printf("{\"bench\": \"demote-probe\", \"mapped_bytes\": %zu, \"victim_bytes\": %zu, \"sms\": %d, "
	       "\"resident_grid\": %d, \"cases\": [",
	       mapped_bytes, victim_bytes, sms, grid);
	bool first = true;
	run_case("idle", NONE, on_host, 0, victim, false, sink, app, priv, &first);
	run_case("demote_under_mapped_resident_blocks", RESIDENT_BLOCKS, on_host, p_resident, victim, false, sink, app,
		 priv, &first);
	run_case("demote_under_mapped_short_blocks", SHORT_BLOCKS, on_host, p_short, victim, false, sink, app, priv,
		 &first);
	run_case("demote_under_device_resident_blocks", RESIDENT_BLOCKS, on_gpu, p_device, victim, false, sink, app, priv,
		 &first);
	run_case("promote_under_mapped_resident_blocks", RESIDENT_BLOCKS, on_host, p_resident, victim, true, sink, app,
		 priv, &first);
	run_case("demote_under_mapped_random_lookups", LOOKUPS, on_host, p_lookups, victim, false, sink, app, priv,
		 &first);
	run_case("demote_under_legacy_stream_mapped_resident_blocks", RESIDENT_BLOCKS, on_host, p_resident, victim, false,
		 sink, cudaStreamLegacy, priv, &first);
	printf("\n]}\n");
	CHECK(cudaFree(victim));
	CHECK(cudaFree(device));
	CHECK(cudaFree(mapped));
	CHECK(cudaFree(sink));
	return 0;
}
