// ember-touch-probe [BYTES]: how fast the host's touches make never-touched
// managed memory in host memory, by the number of threads, and whether a
// kernel then writes it at the mapped tier's rate. One JSON record, without
// Ember.
//
// Under EMBER_MANAGE_ALL, what the budget leaves mapped of each converted
// allocation is made by the host's touches before cuMemAlloc returns
// (shim/mech/host_touch.c, touch_threads.h: a 2 MiB region at a time, up to
// eight threads). Building a 26 GB model past a 16 GiB budget makes some
// 9.4 GiB that way, and the build waits for it. Each case, on BYTES (default
// 4 GiB) of managed memory set up as Ember leaves a mapped allocation
// (preferred location the host, accessed by the GPU), never touched:
//   touch_N    N threads take 2 MiB regions in turn and write a zero to each
//              4 KiB page: seconds and GB/s, then a kernel's write pass over
//              it (write_gb_per_s: the GPU's mappings made, or faulted in)
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cuda_check.h"

static const cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };

__global__ void write_all(unsigned *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned)i;
}

static double now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Touch every 4 KiB page of [p, p + bytes) from `threads` threads, 2 MiB at a time. Returns seconds.
static double touch(char *p, size_t bytes, unsigned threads)
{
	const size_t chunk = 2u << 20;
	std::atomic<size_t> next{ 0 };
	double t0 = now_s();
	std::vector<std::thread> pool;
	for (unsigned t = 0; t < threads; t++)
		pool.emplace_back([&] {
			for (size_t off; (off = next.fetch_add(chunk)) < bytes;) {
				volatile char *q = p + off;
				size_t n = bytes - off < chunk ? bytes - off : chunk;
				for (size_t b = 0; b < n; b += 4096)
					q[b] = 0;
			}
		});
	for (auto &th : pool)
		th.join();
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	size_t bytes = (argc > 1 ? strtoull(argv[1], nullptr, 0) : 4ull << 30) & ~(size_t)((2 << 20) - 1);
	if (bytes == 0) {
		fprintf(stderr, "ember-touch-probe: BYTES must be at least 2 MiB\n");
		return 2;
	}
	unsigned cpus = std::thread::hardware_concurrency();
	int sms = 0;
	CHECK(cudaSetDevice(0));
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	printf("{\"bench\": \"touch-probe\", \"bytes\": %zu, \"cpus\": %u, \"cases\": [", bytes, cpus);
	bool first = true;
	for (unsigned threads : { 1u, 2u, 4u, 8u, 12u, 16u, 24u, 32u }) {
		if (threads > cpus)
			break;
		char *p = nullptr;
		CHECK(cudaMallocManaged(&p, bytes));
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, cpu));
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu));
		double s = touch(p, bytes, threads);
		double w0 = now_s();
		write_all<<<sms * 8, 256>>>((unsigned *)p, bytes / 4);
		CHECK(cudaGetLastError());
		CHECK(cudaDeviceSynchronize());
		double w = now_s() - w0;
		printf("%s\n    {\"case\": \"touch_%u\", \"threads\": %u, \"seconds\": %.6f, \"gb_per_s\": %.2f, "
		       "\"write_seconds\": %.6f, \"write_gb_per_s\": %.2f}",
		       first ? "" : ",", threads, threads, s, bytes / s / 1e9, w, bytes / w / 1e9);
		first = false;
		fflush(stdout);
		CHECK(cudaFree(p));
	}
	printf("\n]}\n");
	return 0;
}
