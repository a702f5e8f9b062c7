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
//   populate_write_N  the same regions made by madvise(MADV_POPULATE_WRITE)
//              (Linux 5.14), one call a region, from N threads: the kernel
//              faults the pages in without a return to user space for each.
//              Where the driver's mapping refuses it, the case says so
//              (error: the errno's name) and times nothing
#include <cuda_runtime.h>

#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cuda_check.h"
#include "page_touch.h"
#include "passes.cuh"
#include "wall_clock.h"

static const cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };

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
	struct how {
		const char *name;
		bool populate;
		unsigned threads;
	};
	static const how hows[] = { { "touch", false, 1 },          { "touch", false, 2 },  { "touch", false, 4 },
				    { "touch", false, 8 },          { "touch", false, 12 }, { "touch", false, 16 },
				    { "populate_write", true, 1 }, { "populate_write", true, 8 } };
	for (const how &h : hows) {
		if (h.threads > cpus)
			continue;
		char *p = nullptr;
		CHECK(cudaMallocManaged(&p, bytes));
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, cpu));
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu));
		int err = 0;
		double s = page_touch(p, bytes, h.threads, h.populate, &err);
		double w = pass_seconds(p, bytes, 1, sms * 8, nullptr); /* a write pass reads nothing to sum */
		printf("%s\n    {\"case\": \"%s_%u\", \"threads\": %u, ", first ? "" : ",", h.name, h.threads, h.threads);
		if (err)
			printf("\"error\": \"%s\", ", strerrorname_np(err) ? strerrorname_np(err) : "unknown");
		else
			printf("\"seconds\": %.6f, \"gb_per_s\": %.2f, ", s, bytes / s / 1e9);
		printf("\"write_seconds\": %.6f, \"write_gb_per_s\": %.2f}", w, bytes / w / 1e9);
		first = false;
		fflush(stdout);
		CHECK(cudaFree(p));
	}
	printf("\n]}\n");
	return 0;
}
