// radix: CUB's radix sort of uint32 keys with uint32 values (each key's
// input position), one sort a run. The run starts by copying the input
// keys into the work buffers (a kernel, as a program keeps its input);
// cub::DeviceRadixSort::SortPairs then sorts them through a DoubleBuffer,
// so its own temporary storage is small, and a plain cudaMalloc, beside
// the managed keys and values. CUB's onesweep sort for 32-bit keys reads
// the keys once for its histograms, then makes four passes of 8 bits, each
// reading and scattering keys and values: streaming reads, scattered
// writes in runs of a digit's keys.
#include "suite.h"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>

namespace {

struct state {
	uint32_t *input;            // n keys, kept as they were made
	uint32_t *keys[2], *vals[2]; // the work buffers and their alternates
	size_t n;
	void *temp;                 // CUB's temporary storage, a plain allocation
	size_t temp_bytes;
	uint32_t *sorted_keys, *sorted_vals; // where the sort left its answer
};

__global__ void start(const uint32_t *input, uint32_t *keys, uint32_t *vals, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		keys[i] = input[i];
		vals[i] = (uint32_t)i;
	}
}

__host__ __device__ uint32_t key(size_t i, uint64_t seed)
{
	return (uint32_t)(suite_mix(i ^ (seed << 56)) >> 32);
}

const uint64_t seed = 4;

// out: [0] neighbours out of order, [1] keys not the input's key at their
// value (made again from the generator: no gather from the input, wherever
// it lies), [2] equal keys whose values descend (the sort is stable),
// [3..5] the values' sum, sum of squares and xor.
__global__ void verify(const uint32_t *keys, const uint32_t *vals, size_t n, unsigned long long *out)
{
	unsigned long long c[6] = {};
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		uint32_t k = keys[i], v = vals[i];
		if (i + 1 < n) {
			uint32_t k1 = keys[i + 1];
			c[0] += k > k1;
			c[2] += k == k1 && v > vals[i + 1];
		}
		c[1] += v >= n || key(v, seed) != k;
		c[3] += v;
		c[4] += (unsigned long long)v * v;
		c[5] ^= v;
	}
	for (int d = 16; d > 0; d /= 2) {
		for (int j = 0; j < 5; j++)
			c[j] += __shfl_down_sync(0xffffffffu, c[j], d);
		c[5] ^= __shfl_down_sync(0xffffffffu, c[5], d);
	}
	if (threadIdx.x % 32 == 0) {
		for (int j = 0; j < 5; j++)
			atomicAdd(&out[j], c[j]);
		atomicXor(&out[5], c[5]);
	}
}

void *make(size_t bytes)
{
	state *s = new state;
	// five arrays of n: the input, the keys and values, their alternates
	s->n = std::max<size_t>(2, bytes / (5 * sizeof(uint32_t)));
	s->input = (uint32_t *)suite_managed(s->n * sizeof(uint32_t));
	for (int j = 0; j < 2; j++) {
		s->keys[j] = (uint32_t *)suite_managed(s->n * sizeof(uint32_t));
		s->vals[j] = (uint32_t *)suite_managed(s->n * sizeof(uint32_t));
	}
	suite_fill_u32(s->input, s->n, key, seed);
	cub::DoubleBuffer<uint32_t> k(s->keys[0], s->keys[1]), v(s->vals[0], s->vals[1]);
	s->temp = nullptr;
	s->temp_bytes = 0;
	CHECK(cub::DeviceRadixSort::SortPairs(nullptr, s->temp_bytes, k, v, s->n));
	CHECK(cudaMalloc(&s->temp, s->temp_bytes));
	s->sorted_keys = s->sorted_vals = nullptr;
	return s;
}

void run(void *p, suite_result *r)
{
	state *s = (state *)p;
	start<<<suite_blocks(), 256>>>(s->input, s->keys[0], s->vals[0], s->n);
	CHECK(cudaGetLastError());
	cub::DoubleBuffer<uint32_t> k(s->keys[0], s->keys[1]), v(s->vals[0], s->vals[1]);
	CHECK(cub::DeviceRadixSort::SortPairs(s->temp, s->temp_bytes, k, v, s->n));
	s->sorted_keys = k.Current();
	s->sorted_vals = v.Current();
	// the copy reads the input and writes keys and values; the sort reads
	// the keys for its histograms, then four times reads keys and values
	// from one buffer of each pair and writes them to the other, ending
	// where it began
	double n = (double)s->n * sizeof(uint32_t);
	suite_traffic(r, s->input, n, n, 0);             // the input
	suite_traffic(r, s->keys[0], n, n + 2 * n, 3 * n); // keys[0]: histograms, passes 1 and 3; the copy, passes 2 and 4
	suite_traffic(r, s->vals[0], n, 2 * n, 3 * n);     // vals[0]
	suite_traffic(r, s->keys[1], n, 2 * n, 2 * n);     // keys[1]: read by passes 2 and 4, written by 1 and 3
	suite_traffic(r, s->vals[1], n, 2 * n, 2 * n);     // vals[1]
}

// A kernel over the whole answer: keys in order, each key the input's key
// at its value's position, equal keys in input order, and the values a
// permutation of 0..n-1 by their sum, sum of squares and xor.
void check(void *p, suite_result *r)
{
	state *s = (state *)p;
	unsigned long long *out, h[6];
	CHECK(cudaMalloc(&out, sizeof(h)));
	CHECK(cudaMemset(out, 0, sizeof(h)));
	verify<<<suite_blocks(), 256>>>(s->sorted_keys, s->sorted_vals, s->n, out);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK(cudaFree(out));
	// 0 + 1 + ... + (n-1), their squares and their xor, mod 2^64
	unsigned __int128 m = s->n;
	unsigned long long sum = (unsigned long long)(m * (m - 1) / 2);
	unsigned long long squares = (unsigned long long)((m - 1) * m * (2 * m - 1) / 6);
	unsigned long long last = s->n - 1, xr = last % 4 == 0 ? last : last % 4 == 1 ? 1 : last % 4 == 2 ? last + 1 : 0;
	if (h[0] || h[1] || h[2]) {
		r->note = std::to_string(h[0]) + " pairs out of order, " + std::to_string(h[1]) + " keys not their input's, " +
		          std::to_string(h[2]) + " ties out of input order";
		return;
	}
	if (h[3] != sum || h[4] != squares || h[5] != xr) {
		r->note = "the values are not a permutation of the positions";
		return;
	}
	r->verified = true;
	r->note = "all " + std::to_string(s->n) + " pairs: keys in order and stable, each its input's, values a permutation (" +
	          std::to_string(s->temp_bytes >> 20) + " MiB of plain temporaries)";
}

void destroy(void *p)
{
	state *s = (state *)p;
	suite_free(s->input);
	for (int j = 0; j < 2; j++) {
		suite_free(s->keys[j]);
		suite_free(s->vals[j]);
	}
	CHECK(cudaFree(s->temp));
	delete s;
}

} // namespace

const suite_workload suite_radix = { "radix", "CUB radix sort of uint32 pairs, managed buffers, plain temporaries",
	                             make, run, check, destroy };
