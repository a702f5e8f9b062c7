// ember-suite: the evaluation suite's shared harness. Each workload is an
// ordinary CUDA program: its data in cudaMallocManaged memory with no hints,
// filled on the host as a loader would, kernels that take plain pointers.
// The harness times whole runs and prints one JSON record; run.sh adds the
// variant, the statistics and the oracle bound.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cuda_check.h"

// What one run did, in the workload's own accounting.
struct suite_result {
	double read_bytes = 0;      // bytes its kernels read from managed memory
	double written_bytes = 0;   // bytes they wrote to it
	bool sparse = false;        // reads land in small pieces scattered over the data
	// Each array's bytes and the bytes its kernels read and wrote of it (suite_traffic), so that
	// the bound's oracle keeps the busiest bytes resident, not an even share of all: a small
	// array read at every step (pathfinder's rows) is not spread over the data it sits beside.
	// `at` is where the array lies, so that a run placed by hand (ember-suite's `placed`) can
	// give the same arrays the same residency.
	struct array_traffic {
		const void *at;
		double bytes, read, written;
	};
	std::vector<array_traffic> arrays;
	bool verified = false;      // the answer was checked against an independent one
	std::string note;           // what was checked, or why it failed
};

// Count a run's traffic to one array: where it lies, its size and the bytes read and written of it.
inline void suite_traffic(suite_result *r, const void *at, double bytes, double read, double written)
{
	r->arrays.push_back({ at, bytes, read, written });
	r->read_bytes += read;
	r->written_bytes += written;
}

// A workload. make() allocates and fills about `bytes` of data (untimed);
// run() is the timed algorithm and ends synchronised; check() verifies the
// answer on the host (untimed); destroy() frees everything.
struct suite_workload {
	const char *name;
	const char *what;
	void *(*make)(size_t bytes);
	void (*run)(void *state, suite_result *r);
	void (*check)(void *state, suite_result *r);
	void (*destroy)(void *state);
};

// Managed memory as the program asks for it, no hints; the harness knows
// every allocation, so a resident run can move them all before it starts.
void *suite_managed(size_t bytes);
void suite_free(void *p);
// Fill with all cores: element i of n gets fn(i).
void suite_fill_u32(uint32_t *p, size_t n, uint32_t (*fn)(size_t i, uint64_t seed), uint64_t seed);
void suite_fill_f32(float *p, size_t n, float (*fn)(size_t i, uint64_t seed), uint64_t seed);
// A well-mixed 64-bit hash (splitmix64), for generated data.
__host__ __device__ inline uint64_t suite_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}
// Host threads for the host's share of the work: the cores, at most 16.
inline unsigned suite_workers()
{
	return std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
}
// fn(t, lo, hi) on worker t for an equal share [lo, hi) of [0, n).
template <typename F> void suite_for_shares(size_t n, F fn)
{
	unsigned k = suite_workers();
	std::vector<std::thread> pool;
	for (unsigned t = 0; t < k; t++)
		pool.emplace_back([=] { fn(t, n * t / k, n * (t + 1) / k); });
	for (auto &th : pool)
		th.join();
}
// fn(lo, hi) over [0, n) in chunks of grain handed out as workers free up:
// for work that equal shares would split unevenly (a graph's hubs).
template <typename F> void suite_for_chunks(size_t n, size_t grain, F fn)
{
	std::atomic<size_t> next{ 0 };
	std::vector<std::thread> pool;
	for (unsigned t = 0; t < suite_workers(); t++)
		pool.emplace_back([&] {
			for (size_t lo; (lo = next.fetch_add(grain)) < n;)
				fn(lo, std::min(n, lo + grain));
		});
	for (auto &th : pool)
		th.join();
}
// Grid size for grid-stride kernels: 8 blocks per SM.
int suite_blocks();

extern const suite_workload suite_pathfinder, suite_kmeans, suite_cnn, suite_bitonic, suite_radix,
	suite_bfs, suite_nw, suite_star;
