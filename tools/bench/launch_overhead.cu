// ember-launch-overhead LAUNCHES: how long one kernel launch holds the
// calling thread, in a loop of launches whose arguments are managed
// pointers, as an ordinary program's are. Run it with and without Ember
// (run.sh launch-overhead does, in one session) and compare the medians.
// Launches go in batches of 64 followed by a synchronisation, so the
// driver's queue never fills and each call is timed alone. Prints one
// JSON record: the median, the 10th and 90th percentiles, in ns.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

// Reads a few elements of each array, so the launch is a real one.
__global__ void axpy_head(const float *x, float *y, const float *scale, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n && i < 256)
		y[i] += *scale * x[i];
}

int main(int argc, char **argv)
{
	long launches = argc > 1 ? atol(argv[1]) : 20000;
	if (launches < 64) {
		fprintf(stderr, "usage: ember-launch-overhead LAUNCHES (at least 64)\n");
		return 2;
	}
	const size_t n = 64u << 20; // 256 MiB arrays: several regions each
	float *x, *y, *scale;
	CHECK(cudaMallocManaged(&x, n * sizeof(float)));
	CHECK(cudaMallocManaged(&y, n * sizeof(float)));
	CHECK(cudaMallocManaged(&scale, sizeof(float)));
	*scale = 2;
	for (size_t i = 0; i < 256; i++)
		x[i] = 1, y[i] = 0;
	axpy_head<<<1, 256>>>(x, y, scale, n); // warm: module load, first placement
	CHECK(cudaDeviceSynchronize());
	std::vector<double> ns;
	ns.reserve(launches);
	for (long done = 0; done < launches; done += 64) {
		for (int k = 0; k < 64; k++) {
			auto t0 = std::chrono::steady_clock::now();
			axpy_head<<<1, 256>>>(x, y, scale, n);
			auto t1 = std::chrono::steady_clock::now();
			ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
		}
		CHECK(cudaDeviceSynchronize());
	}
	CHECK(cudaGetLastError());
	float expect = 2.0f * (1 + (float)ns.size());
	if (y[0] != expect) {
		fprintf(stderr, "ember-launch-overhead: y[0] is %g, not %g: launches were lost\n", y[0], expect);
		return 1;
	}
	std::sort(ns.begin(), ns.end());
	auto at = [&](double q) { return ns[(size_t)(q * (ns.size() - 1))]; };
	printf("{\"launches\": %zu, \"median_ns\": %.1f, \"p10_ns\": %.1f, \"p90_ns\": %.1f}\n", ns.size(), at(0.5),
	       at(0.1), at(0.9));
	return 0;
}
