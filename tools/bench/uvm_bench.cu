// ember-uvm-bench: the project's own managed-memory workloads, written the
// way ordinary code is: cudaMallocManaged, no hints, kernels that take
// plain pointers. Run it under each Ember variant (off, mapped, static) and
// compare; it also measures the bandwidths the oracle bound needs.
//
//   ember-uvm-bench probe  BYTES             bandwidths, one JSON record
//   ember-uvm-bench reread BYTES PASSES RUNS  k-means-like re-reads
//   ember-uvm-bench random BYTES READS RUNS   random 4-byte reads
//   ember-uvm-bench phase-shift A_BYTES B_BYTES A_PASSES B_PASSES
//                                             re-read A, then only B; per-pass throughput
//   ember-uvm-bench moving-window WINDOW BUFFER DRIFT_PERCENT PHASES PASSES
//                                             a window read PASSES times per phase, sliding
//
// Each run allocates fresh managed memory, fills it on the host (as data
// read from a file would be), then times the kernels from the first launch
// to the end of the last. Prints one JSON record with every run's seconds.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "wall_clock.h"
#include "host_fill.h"

// One pass: every element read once, 16 bytes a load; a checksum so nothing is optimized away.
__global__ void reread_pass(const float4 *x, size_t n4, float *out)
{
	float acc = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
		float4 v = x[i];
		acc += v.x + v.y + v.z + v.w;
	}
	if (acc == 1234.5f) // never true for the data we write; keeps the loads
		*out = acc;
}

// The same pass with the most ordinary signature: floats and their count.
__global__ void sum_floats(const float *x, size_t n, float *out)
{
	const float4 *x4 = (const float4 *)x; // callers pass 16-byte-aligned windows
	float acc = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n / 4; i += (size_t)gridDim.x * blockDim.x) {
		float4 v = x4[i];
		acc += v.x + v.y + v.z + v.w;
	}
	if (acc == 1234.5f)
		*out = acc;
}

// Random 4-byte reads: a hash of the thread and iteration picks each index.
__global__ void random_reads(const unsigned *x, size_t n, size_t reads, unsigned *out)
{
	unsigned acc = 0;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < reads; i += stride) {
		unsigned long long h = (i + 1) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 32;
		acc += x[h % n];
	}
	if (acc == 0xdeadbeef)
		*out = acc;
}

static int blocks()
{
	int sms = 0;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	return sms * 8;
}

// Ember's ember_flush(), when Ember is loaded: lets a run end settled.
static void ember_flush_if_loaded()
{
	typedef int (*flush_fn)(void);
	flush_fn f = (flush_fn)dlsym(RTLD_DEFAULT, "ember_flush");
	if (f)
		f();
}

static std::string seconds_json(const std::vector<double> &t)
{
	std::string s = "[";
	for (size_t i = 0; i < t.size(); i++) {
		char b[32];
		snprintf(b, sizeof b, "%s%.6f", i ? ", " : "", t[i]);
		s += b;
	}
	return s + "]";
}

static double median(std::vector<double> t)
{
	std::sort(t.begin(), t.end());
	return t[t.size() / 2];
}

// Bandwidths for the oracle: device memory, mapped host memory, prefetch to the GPU.
static int probe(size_t bytes)
{
	float *out;
	CHECK(cudaMalloc(&out, sizeof(float)));
	int nb = blocks();
	cudaEvent_t a, b;
	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	auto time_pass = [&](const void *p, size_t n) {
		reread_pass<<<nb, 256>>>((const float4 *)p, n / 16, out); // warm
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(a));
		for (int i = 0; i < 3; i++)
			reread_pass<<<nb, 256>>>((const float4 *)p, n / 16, out);
		CHECK(cudaEventRecord(b));
		CHECK(cudaEventSynchronize(b));
		float ms;
		CHECK(cudaEventElapsedTime(&ms, a, b));
		return 3.0 * n / (ms / 1e3);
	};
	void *dev;
	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMemset(dev, 1, bytes));
	double hbm = time_pass(dev, bytes);
	size_t reads = 1ull << 26;
	auto time_random = [&](const void *p, size_t n) {
		random_reads<<<nb, 256>>>((const unsigned *)p, n / 4, reads / 16, (unsigned *)out); // warm
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(a));
		random_reads<<<nb, 256>>>((const unsigned *)p, n / 4, reads, (unsigned *)out);
		CHECK(cudaEventRecord(b));
		CHECK(cudaEventSynchronize(b));
		float ms;
		CHECK(cudaEventElapsedTime(&ms, a, b));
		return reads / (ms / 1e3);
	};
	double hbm_random = time_random(dev, bytes);
	CHECK(cudaFree(dev));

	// managed memory, advised mapped by hand (this probe runs without Ember)
	void *m;
	CHECK(cudaMallocManaged(&m, bytes));
	host_fill(m, bytes);
	cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };
	CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, cpu));
	CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetAccessedBy, gpu));
	double mapped = time_pass(m, bytes);
	double mapped_random = time_random(m, bytes);
	// prefetch in 64 MiB spans, as Ember promotes
	size_t span = 64ull << 20;
	double t0 = now_s();
	for (size_t off = 0; off < bytes; off += span)
		CHECK(cudaMemPrefetchAsync((char *)m + off, std::min(span, bytes - off), gpu, 0, 0));
	double issued = now_s() - t0; // how long the calling thread was held
	CHECK(cudaDeviceSynchronize());
	double prefetch = bytes / (now_s() - t0);
	// and in one call, back from the host first
	CHECK(cudaMemPrefetchAsync(m, bytes, cpu, 0, 0));
	CHECK(cudaDeviceSynchronize());
	t0 = now_s();
	CHECK(cudaMemPrefetchAsync(m, bytes, gpu, 0, 0));
	CHECK(cudaDeviceSynchronize());
	double prefetch_bulk = bytes / (now_s() - t0);
	// and back to the host: what a demotion costs
	t0 = now_s();
	CHECK(cudaMemPrefetchAsync(m, bytes, cpu, 0, 0));
	CHECK(cudaDeviceSynchronize());
	double demote_bulk = bytes / (now_s() - t0);
	CHECK(cudaFree(m));
	printf("{\"probe\": true, \"bytes\": %zu, \"device_read_Bps\": %.4g, \"mapped_read_Bps\": %.4g, "
	       "\"prefetch_Bps\": %.4g, \"prefetch_bulk_Bps\": %.4g, \"demote_bulk_Bps\": %.4g, "
	       "\"prefetch_issue_seconds\": %.4f, \"device_random_reads_per_s\": %.4g, \"mapped_random_reads_per_s\": %.4g}\n",
	       bytes, hbm, mapped, prefetch, prefetch_bulk, demote_bulk, issued, hbm_random, mapped_random);
	return 0;
}

// One timed pass of the reread kernel over [p, p + bytes), with events: seconds.
static double timed_pass(const float4 *p, size_t bytes, float *out, int nb)
{
	static cudaEvent_t a, b;
	if (!a) {
		CHECK(cudaEventCreate(&a));
		CHECK(cudaEventCreate(&b));
	}
	CHECK(cudaEventRecord(a));
	reread_pass<<<nb, 256>>>(p, bytes / 16, out);
	CHECK(cudaGetLastError());
	CHECK(cudaEventRecord(b));
	CHECK(cudaEventSynchronize(b));
	float ms;
	CHECK(cudaEventElapsedTime(&ms, a, b));
	return ms / 1e3;
}

// Phase shift (the paper's Figure 7): re-read A, then only B. Prints every pass as
// [seconds since start, GB/s] and the time from the shift to the first pass at 80%
// of resident bandwidth, given as RESIDENT_BPS.
static int phase_shift(size_t a_bytes, size_t b_bytes, int a_passes, int b_passes, double resident_bps)
{
	float *out;
	CHECK(cudaMalloc(&out, sizeof(float)));
	int nb = blocks();
	void *A, *B;
	CHECK(cudaMallocManaged(&A, a_bytes));
	CHECK(cudaMallocManaged(&B, b_bytes));
	host_fill(A, a_bytes);
	host_fill(B, b_bytes);
	CHECK(cudaDeviceSynchronize());
	std::string series = "[";
	double t0 = now_s(), shift = 0, recovered = -1;
	for (int i = 0; i < a_passes + b_passes; i++) {
		bool on_b = i >= a_passes;
		if (i == a_passes)
			shift = now_s() - t0;
		size_t bytes = on_b ? b_bytes : a_bytes;
		double s = timed_pass((const float4 *)(on_b ? B : A), bytes, out, nb);
		double t = now_s() - t0, bps = bytes / s;
		if (on_b && recovered < 0 && bps >= 0.8 * resident_bps)
			recovered = t - shift;
		char b[64];
		snprintf(b, sizeof b, "%s[%.4f, %.2f]", i ? ", " : "", t, bps / 1e9);
		series += b;
	}
	double total = now_s() - t0;
	series += "]";
	printf("{\"bench\": \"phase-shift\", \"working_set_bytes\": %zu, \"a_bytes\": %zu, \"b_bytes\": %zu, "
	       "\"a_passes\": %d, \"b_passes\": %d, \"runs\": 1, \"seconds\": %.6f, \"shift_seconds\": %.6f, "
	       "\"recovery_seconds\": %s, \"series_GBps\": %s}\n",
	       a_bytes + b_bytes, a_bytes, b_bytes, a_passes, b_passes, total, shift,
	       recovered < 0 ? "null" : std::to_string(recovered).c_str(), series.c_str());
	return 0;
}

// Moving hot set (the paper's Table 10): a window read PASSES times per phase; between
// phases it slides by DRIFT% of its size, wrapping inside the buffer. Prints the
// fraction of each phase's window that was new, for the oracle.
static int moving_window(size_t window, size_t buffer, int drift, int phases, int passes)
{
	float *out;
	CHECK(cudaMalloc(&out, sizeof(float)));
	int nb = blocks();
	void *m;
	CHECK(cudaMallocManaged(&m, buffer));
	host_fill(m, buffer);
	CHECK(cudaDeviceSynchronize());
	size_t span = buffer - window, step = (size_t)((double)window * drift / 100) & ~(size_t)((2 << 20) - 1);
	std::string fresh = "[", per_phase = "[";
	size_t prev = 0;
	double t0 = now_s();
	for (int ph = 0; ph < phases; ph++) {
		size_t start = span ? (ph * step) % span : 0;
		size_t overlap = ph == 0 ? 0
				: (start < prev + window && prev < start + window
					   ? std::min(start, prev) + window - std::max(start, prev)
					   : 0);
		double ph0 = now_s();
		for (int p = 0; p < passes; p++) {
			// ordinary code: a pointer to the window and its length in elements
			sum_floats<<<nb, 256>>>((const float *)((char *)m + start), window / 4, out);
			CHECK(cudaGetLastError());
		}
		CHECK(cudaDeviceSynchronize());
		char b[64];
		snprintf(b, sizeof b, "%s%.4f", ph ? ", " : "", 1.0 - (double)overlap / window);
		fresh += b;
		snprintf(b, sizeof b, "%s%.4f", ph ? ", " : "", now_s() - ph0);
		per_phase += b;
		prev = start;
	}
	double total = now_s() - t0;
	printf("{\"bench\": \"moving-window\", \"working_set_bytes\": %zu, \"window_bytes\": %zu, "
	       "\"buffer_bytes\": %zu, \"drift\": %d, \"phases\": %d, \"passes\": %d, \"runs\": 1, "
	       "\"seconds\": %.6f, \"new_fraction\": %s], \"phase_seconds\": %s]}\n",
	       window, window, buffer, drift, phases, passes, total, fresh.c_str(), per_phase.c_str());
	CHECK(cudaFree(m));
	return 0;
}

static int workload(bool random, size_t bytes, size_t count, int runs)
{
	unsigned *out;
	CHECK(cudaMalloc(&out, sizeof(unsigned)));
	int nb = blocks();
	std::vector<double> t;
	for (int r = 0; r < runs; r++) {
		void *m;
		CHECK(cudaMallocManaged(&m, bytes));
		host_fill(m, bytes);
		CHECK(cudaDeviceSynchronize());
		double t0 = now_s();
		if (random) {
			random_reads<<<nb, 256>>>((const unsigned *)m, bytes / 4, count, out);
			CHECK(cudaGetLastError());
		} else {
			for (size_t p = 0; p < count; p++) {
				reread_pass<<<nb, 256>>>((const float4 *)m, bytes / 16, (float *)out);
				CHECK(cudaGetLastError());
			}
		}
		CHECK(cudaDeviceSynchronize());
		t.push_back(now_s() - t0);
		ember_flush_if_loaded();
		CHECK(cudaFree(m));
	}
	printf("{\"bench\": \"%s\", \"working_set_bytes\": %zu, \"%s\": %zu, \"runs\": %d, \"seconds\": %.6f, "
	       "\"run_seconds\": %s}\n",
	       random ? "random" : "reread", bytes, random ? "reads" : "passes", count, runs, median(t),
	       seconds_json(t).c_str());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: ember-uvm-bench probe BYTES | reread BYTES PASSES RUNS | random BYTES READS RUNS\n");
		return 2;
	}
	std::string what = argv[1];
	size_t bytes = strtoull(argv[2], nullptr, 10) & ~(size_t)15;
	CHECK(cudaSetDevice(0));
	if (what == "probe")
		return probe(bytes);
	if (what == "phase-shift" && argc >= 7)
		return phase_shift(bytes, strtoull(argv[3], nullptr, 10), atoi(argv[4]), atoi(argv[5]), atof(argv[6]));
	if (what == "moving-window" && argc >= 7)
		return moving_window(bytes, strtoull(argv[3], nullptr, 10), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
	if (argc < 5)
		return 2;
	size_t count = strtoull(argv[3], nullptr, 10);
	int runs = atoi(argv[4]);
	if (what == "reread" || what == "random")
		return workload(what == "random", bytes, count, runs);
	fprintf(stderr, "ember-uvm-bench: unknown workload %s\n", what.c_str());
	return 2;
}
