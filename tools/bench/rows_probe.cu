// ember-rows-probe BYTES: what ordinary kernels draw from mapped memory,
// against the sparse probe's streaming kernel, and whether the host
// backing changes it. Token generation reads its weights past the budget
// through matrix-vector products (llama.cpp's kernels at some 42 GB/s,
// PyTorch's at 40-41, the probe's stream at 51): is that the kernels'
// shape or how the host pages were made and mapped?
//
// Kernels, each reading the whole allocation once per launch:
//   stream        grid-stride 16-byte loads (the sparse probe's shape)
//   rows-half2    a matrix-vector product over rows of ROW halves, a block
//                 of 128 threads a row, half2 loads strided by the block
//                 (llama.cpp's F16 mat-vec is of this shape)
//   rows-16B      the same with 16-byte loads
//   rows-warp     a warp a row, half2 loads, eight rows a block
// Backings of the same BYTES (managed, preferred location host, accessed
// by the GPU, as Ember maps what it leaves in host memory):
//   device        cudaMalloc, for scale
//   host-16       filled by 16 host threads (EMBER_POPULATE_HOST's way)
//   host-1        filled by one host thread (a loader's read into the buffer)
//   prefetched    prefetched to the host in one call, then filled by 16 threads
//   on-fault      preferred host but no accessed-by advice: the GPU maps
//                 pages as it faults on them (timed from the second pass)
// Rates are bytes read per second, the best of three launches after a warm
// one. Prints one JSON record; a line per rate on stderr.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "wall_clock.h"

namespace {

const int row_halves = 5120; // a 13B model's hidden size: 10 KiB rows

__global__ void stream(const uint4 *p, size_t n, float *out)
{
	unsigned acc = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		uint4 v = p[i];
		acc ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (acc == 0x12345678u)
		*out = 1;
}

__device__ float warp_sum(float v)
{
	for (int o = 16; o; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// A block of 128 threads per row; y[row] = dot(W[row], x).
__global__ void rows_half2(const half2 *w, const half2 *x, float *y, int row2)
{
	const half2 *r = w + (size_t)blockIdx.x * row2;
	float acc = 0;
	for (int k = threadIdx.x; k < row2; k += blockDim.x) {
		float2 a = __half22float2(r[k]), b = __half22float2(x[k]);
		acc += a.x * b.x + a.y * b.y;
	}
	__shared__ float part[4];
	acc = warp_sum(acc);
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = acc;
	__syncthreads();
	if (threadIdx.x == 0)
		y[blockIdx.x] = part[0] + part[1] + part[2] + part[3];
}

__global__ void rows_16B(const uint4 *w, const uint4 *x, float *y, int row16)
{
	const uint4 *r = w + (size_t)blockIdx.x * row16;
	float acc = 0;
	for (int k = threadIdx.x; k < row16; k += blockDim.x) {
		uint4 a = r[k], b = x[k];
		const half2 *ha = (const half2 *)&a, *hb = (const half2 *)&b;
		for (int j = 0; j < 4; j++) {
			float2 fa = __half22float2(ha[j]), fb = __half22float2(hb[j]);
			acc += fa.x * fb.x + fa.y * fb.y;
		}
	}
	__shared__ float part[4];
	acc = warp_sum(acc);
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = acc;
	__syncthreads();
	if (threadIdx.x == 0)
		y[blockIdx.x] = part[0] + part[1] + part[2] + part[3];
}

// A warp per row, eight rows a block.
__global__ void rows_warp(const half2 *w, const half2 *x, float *y, int row2, int rows)
{
	const int row = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (row >= rows)
		return;
	const half2 *r = w + (size_t)row * row2;
	float acc = 0;
	for (int k = lane; k < row2; k += 32) {
		float2 a = __half22float2(r[k]), b = __half22float2(x[k]);
		acc += a.x * b.x + a.y * b.y;
	}
	acc = warp_sum(acc);
	if (lane == 0)
		y[row] = acc;
}

void host_fill(char *p, size_t bytes, unsigned threads)
{
	std::vector<std::thread> pool;
	size_t chunk = (bytes / threads + 4095) & ~(size_t)4095;
	for (unsigned t = 0; t < threads; t++)
		pool.emplace_back([=] {
			size_t lo = std::min(bytes, t * chunk), hi = std::min(bytes, lo + chunk);
			for (size_t i = lo; i < hi; i += 2) // small halves: the products stay finite
				*(unsigned short *)(p + i) = (unsigned short)(0x2c00 | (i >> 1 & 0xff));
		});
	for (auto &th : pool)
		th.join();
}

enum backing { device, host16, host1, prefetched, on_fault };
const char *backing_name[] = { "device", "host-16", "host-1", "prefetched", "on-fault" };

char *make(size_t bytes, backing how)
{
	char *p;
	if (how == device) {
		CHECK(cudaMalloc(&p, bytes));
		CHECK(cudaMemset(p, 0x2c, bytes));
		CHECK(cudaDeviceSynchronize());
		return p;
	}
	CHECK(cudaMallocManaged(&p, bytes));
	cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };
	CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, cpu));
	if (how != on_fault)
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu));
	if (how == prefetched) {
		CHECK(cudaMemPrefetchAsync(p, bytes, cpu, 0, 0));
		CHECK(cudaDeviceSynchronize());
	}
	host_fill(p, bytes, how == host1 ? 1 : 16);
	return p;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ember-rows-probe BYTES\n");
		return 2;
	}
	const size_t row_bytes = row_halves * 2;
	const size_t bytes = strtoull(argv[1], nullptr, 10) / row_bytes * row_bytes;
	const int rows = (int)(bytes / row_bytes);
	int sms;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	float *y;
	char *x;
	CHECK(cudaMalloc(&y, rows * sizeof(float)));
	CHECK(cudaMalloc(&x, row_bytes));
	CHECK(cudaMemset(x, 0x2c, row_bytes));
	std::string json = "{\"rows_probe\": true, \"bytes\": " + std::to_string(bytes) +
	                   ", \"row_bytes\": " + std::to_string(row_bytes) + ", \"rates_Bps\": {";
	const char *kernels[] = { "stream", "rows-half2", "rows-16B", "rows-warp" };
	for (int how = device; how <= on_fault; how++) {
		double t0 = now_s();
		char *w = make(bytes, (backing)how);
		double made_s = now_s() - t0;
		for (int k = 0; k < 4; k++) {
			double best = 1e30;
			for (int pass = 0; pass < 4; pass++) {
				CHECK(cudaDeviceSynchronize());
				double t = now_s();
				switch (k) {
				case 0: stream<<<sms * 8, 256>>>((const uint4 *)w, bytes / 16, y); break;
				case 1: rows_half2<<<rows, 128>>>((const half2 *)w, (const half2 *)x, y, row_halves / 2); break;
				case 2: rows_16B<<<rows, 128>>>((const uint4 *)w, (const uint4 *)x, y, (int)(row_bytes / 16)); break;
				case 3: rows_warp<<<(rows + 7) / 8, 256>>>((const half2 *)w, (const half2 *)x, y, row_halves / 2, rows); break;
				}
				CHECK(cudaGetLastError());
				CHECK(cudaDeviceSynchronize());
				if (pass) // the first pass warms (and, on-fault, maps)
					best = std::min(best, now_s() - t);
			}
			char b[160];
			snprintf(b, sizeof b, "%s\"%s/%s\": %.4g", json.back() == '{' ? "" : ", ", backing_name[how], kernels[k],
				 bytes / best);
			json += b;
			fprintf(stderr, "%-10s %-10s %8.2f GB/s (made in %.2f s)\n", backing_name[how], kernels[k], bytes / best / 1e9,
				made_s);
		}
		CHECK(cudaFree(w));
	}
	json += "}}";
	printf("%s\n", json.c_str());
	return 0;
}
