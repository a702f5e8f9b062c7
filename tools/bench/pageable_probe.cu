// ember-pageable-probe [BYTES]: whether plain host memory (mmap, the kernel's
// own pages, with or without transparent huge pages) could back what the
// budget leaves mapped, in place of managed memory's host pages. One JSON
// record, without Ember.
//
// Past a 16 GiB budget, building a 26 GB model waits for some 9.4 GiB of
// managed memory's host pages, which the host's touches make at no more than
// 10.7-15 GB/s from eight threads (ember-touch-probe): the model
// initialisation criterion's floor. Where the driver lets the GPU reach
// pageable memory (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: HMM, or ATS),
// the kernel makes those pages itself, and with huge pages a fault makes
// 2 MiB. The cases, each on a fresh mapping of BYTES (default 4 GiB):
//   make_B_N      mmap'd memory (B: 4k, madvise(MADV_NOHUGEPAGE); thp,
//                 MADV_HUGEPAGE) made by N threads writing a zero to each
//                 4 KiB page, 2 MiB at a time: seconds, GB/s, and how much
//                 the kernel backed with huge pages (smaps' AnonHugePages)
//   managed_N     the same on managed memory advised as Ember leaves a
//                 mapped allocation (preferred location the host, accessed
//                 by the GPU): what Ember does now, in the same process
// and, where the GPU may reach pageable memory, on a thp and a 4k mapping:
//   advice        cudaMemAdvise's answers for the host as preferred location
//                 and the GPU as accessor (what Ember gives a mapped range)
//   read, again   a kernel's streaming read pass over it, twice: GB/s, and
//                 the mapping's resident host bytes after (did the driver
//                 leave the pages in host memory, or migrate them)
//   sparse_128    reads of 128-byte pieces at hashed places (pieces.cuh)
//   write         a kernel's write pass
//   prefetch_in   cudaMemPrefetchAsync of its first GiB to the GPU (Ember's
//                 promotion), then a read pass over that GiB, then the GiB
//                 back to the host (a demotion): GB/s each, or the error
// Where the GPU may not reach pageable memory, the record says so and the
// GPU cases are left out: a kernel's access would fault the context.
// Two backings the GPU reaches without HMM, neither of which the driver
// can migrate:
//   register_thp  thp memory made by 16 threads, then cuMemHostRegister
//                 (mapped for the GPU): each step's seconds, all of it as
//                 GB/s, and a kernel's read and write passes through it
//   vmm_host      cuMemCreate of host-located memory (CUDA 12.2's
//                 CU_MEM_LOCATION_TYPE_HOST), mapped into a reserved range
//                 and made accessible to the GPU: seconds, GB/s, and a
//                 kernel's read and write passes
#include <cuda.h>
#include <cuda_runtime.h>

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "cuda_check.h"
#include "page_touch.h"
#include "passes.cuh"
#include "pieces.cuh"
#include "smaps.h"
#include "wall_clock.h"

static const cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };
static int sms;
static unsigned *sink;

// The smaps fields (kB) of the mapping that holds p: Rss and AnonHugePages, -1 where not found.
static void smaps(const void *p, long *rss_kb, long *huge_kb)
{
	*rss_kb = smaps_kb(p, "Rss");
	*huge_kb = smaps_kb(p, "AnonHugePages");
}

static char *map_anon(size_t bytes, bool huge)
{
	// 2 MiB aligned, so that huge pages can back it from its first byte
	size_t slack = 2u << 20;
	char *raw = (char *)mmap(nullptr, bytes + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		perror("ember-pageable-probe: mmap");
		exit(1);
	}
	char *p = (char *)(((uintptr_t)raw + slack - 1) & ~(uintptr_t)(slack - 1));
	if (p > raw)
		munmap(raw, p - raw);
	munmap(p + bytes, raw + slack - p);
	madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	return p;
}

// A kernel's streaming pass over [p, p + bytes): GB/s.
static double kernel_read(const void *p, size_t bytes)
{
	return bytes / pass_seconds((void *)p, bytes, 0, sms * 8, sink) / 1e9;
}

static double kernel_write(void *p, size_t bytes)
{
	return bytes / pass_seconds(p, bytes, 1, sms * 8, sink) / 1e9;
}

// "GB/s" as a number, or the call's error as a string.
static std::string prefetch(const void *p, size_t bytes, cudaMemLocation to)
{
	CHECK(cudaDeviceSynchronize());
	double t0 = now_s();
	cudaError_t e = cudaMemPrefetchAsync(p, bytes, to, 0, 0);
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		cudaGetLastError();
		return std::string("\"") + cudaGetErrorName(e) + "\"";
	}
	char b[32];
	snprintf(b, sizeof b, "%.2f", bytes / (now_s() - t0) / 1e9);
	return b;
}

static std::string advise_result(cudaError_t e)
{
	if (e != cudaSuccess)
		cudaGetLastError();
	return std::string("\"") + cudaGetErrorName(e) + "\"";
}

// The GPU's cases on one mapping made by the host (pageable memory the GPU may reach).
static void gpu_cases(const char *name, bool huge, size_t bytes, bool *first)
{
	char *p = map_anon(bytes, huge);
	page_touch(p, bytes, 8);
	std::string pref = advise_result(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, cpu));
	std::string by = advise_result(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu));
	double r1 = kernel_read(p, bytes);
	double r2 = kernel_read(p, bytes);
	long rss, hugekb;
	smaps(p, &rss, &hugekb);
	double sparse = pieces_rate((unsigned *)p, bytes, 128, 65536, 0, sms * 8, sink) / 1e9;
	double w = kernel_write(p, bytes);
	size_t gib = bytes < (1ull << 30) ? bytes : 1ull << 30;
	std::string in = prefetch(p, gib, gpu);
	double rin = in[0] == '"' ? 0 : kernel_read(p, gib);
	std::string out = prefetch(p, gib, cpu);
	printf("%s\n    {\"case\": \"gpu_%s\", \"advice_preferred_host\": %s, \"advice_accessed_by_gpu\": %s, "
	       "\"read_gb_per_s\": %.2f, \"again_gb_per_s\": %.2f, \"rss_kb_after_reads\": %ld, "
	       "\"huge_kb_after_reads\": %ld, \"sparse_128_gb_per_s\": %.2f, \"write_gb_per_s\": %.2f, "
	       "\"prefetch_in_gb_per_s\": %s, \"read_after_prefetch_gb_per_s\": %.2f, \"prefetch_out_gb_per_s\": %s}",
	       *first ? "" : ",", name, pref.c_str(), by.c_str(), r1, r2, rss, hugekb, sparse, w, in.c_str(), rin,
	       out.c_str());
	*first = false;
	fflush(stdout);
	munmap(p, bytes);
}

// The driver's answer, for a record: 0 is success.
#define DRV(call) (int)(call)

static void register_case(size_t bytes)
{
	char *p = map_anon(bytes, true);
	double make = page_touch(p, bytes, 16);
	double t0 = now_s();
	cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterMapped);
	double reg = now_s() - t0;
	printf(",\n    {\"case\": \"register_thp_16\", \"make_seconds\": %.6f, \"register_seconds\": %.6f, "
	       "\"register_result\": \"%s\"",
	       make, reg, cudaGetErrorName(e));
	if (e == cudaSuccess) {
		void *d = nullptr;
		CHECK(cudaHostGetDevicePointer(&d, p, 0));
		printf(", \"gb_per_s\": %.2f, \"read_gb_per_s\": %.2f, \"write_gb_per_s\": %.2f", bytes / (make + reg) / 1e9,
		       kernel_read(d, bytes), kernel_write(d, bytes));
		t0 = now_s();
		CHECK(cudaHostUnregister(p));
		printf(", \"unregister_seconds\": %.6f", now_s() - t0);
	} else {
		cudaGetLastError();
	}
	printf("}");
	fflush(stdout);
	munmap(p, bytes);
}

static void vmm_host_case(size_t bytes)
{
	CUmemAllocationProp prop = {};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
	prop.location.id = 0;
	size_t gran = 0;
	int r = DRV(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	printf(",\n    {\"case\": \"vmm_host\", \"granularity_result\": %d, \"granularity\": %zu", r, gran);
	if (r == 0 && gran && bytes % gran == 0) {
		CUmemGenericAllocationHandle h;
		CUdeviceptr va = 0;
		double t0 = now_s();
		r = DRV(cuMemCreate(&h, bytes, &prop, 0));
		double create = now_s() - t0;
		printf(", \"create_result\": %d, \"create_seconds\": %.6f", r, create);
		if (r == 0) {
			CUmemAccessDesc access = {};
			access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
			access.location.id = 0;
			access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
			t0 = now_s();
			int rr = DRV(cuMemAddressReserve(&va, bytes, 0, 0, 0));
			int rm = rr ? rr : DRV(cuMemMap(va, bytes, 0, h, 0));
			int ra = rm ? rm : DRV(cuMemSetAccess(va, bytes, &access, 1));
			double map = now_s() - t0;
			printf(", \"map_result\": %d, \"map_seconds\": %.6f, \"gb_per_s\": %.2f", ra, map,
			       bytes / (create + map) / 1e9);
			if (ra == 0)
				printf(", \"read_gb_per_s\": %.2f, \"write_gb_per_s\": %.2f", kernel_read((void *)va, bytes),
				       kernel_write((void *)va, bytes));
			if (rm == 0)
				cuMemUnmap(va, bytes);
			if (rr == 0)
				cuMemAddressFree(va, bytes);
			cuMemRelease(h);
		}
	}
	printf("}");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t bytes = (argc > 1 ? strtoull(argv[1], nullptr, 0) : 4ull << 30) & ~(size_t)((2 << 20) - 1);
	if (bytes == 0) {
		fprintf(stderr, "ember-pageable-probe: BYTES must be at least 2 MiB\n");
		return 2;
	}
	unsigned cpus = std::thread::hardware_concurrency();
	int pageable = 0, host_tables = 0, concurrent = 0;
	CHECK(cudaSetDevice(0));
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CHECK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0));
	CHECK(cudaDeviceGetAttribute(&host_tables, cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0));
	CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
	CHECK(cudaMalloc(&sink, sizeof *sink));
	printf("{\"bench\": \"pageable-probe\", \"bytes\": %zu, \"cpus\": %u, \"pageable_memory_access\": %d, "
	       "\"uses_host_page_tables\": %d, \"concurrent_managed_access\": %d, \"cases\": [",
	       bytes, cpus, pageable, host_tables, concurrent);
	bool first = true;
	const unsigned threads[] = { 1, 8, 16 };
	for (int huge = 0; huge < 2; huge++)
		for (unsigned n : threads) {
			if (n > cpus)
				continue;
			char *p = map_anon(bytes, huge);
			double s = page_touch(p, bytes, n);
			long rss, hugekb;
			smaps(p, &rss, &hugekb);
			printf("%s\n    {\"case\": \"make_%s_%u\", \"threads\": %u, \"seconds\": %.6f, \"gb_per_s\": %.2f, "
			       "\"rss_kb\": %ld, \"huge_kb\": %ld}",
			       first ? "" : ",", huge ? "thp" : "4k", n, n, s, bytes / s / 1e9, rss, hugekb);
			first = false;
			fflush(stdout);
			munmap(p, bytes);
		}
	for (unsigned n : threads) {
		if (n > cpus)
			continue;
		char *p = nullptr;
		CHECK(cudaMallocManaged(&p, bytes));
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, cpu));
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu));
		double s = page_touch(p, bytes, n);
		double r = kernel_read(p, bytes);
		printf(",\n    {\"case\": \"managed_%u\", \"threads\": %u, \"seconds\": %.6f, \"gb_per_s\": %.2f, "
		       "\"read_gb_per_s\": %.2f}",
		       n, n, s, bytes / s / 1e9, r);
		fflush(stdout);
		CHECK(cudaFree(p));
	}
	if (cpus >= 16)
		register_case(bytes);
	vmm_host_case(bytes);
	if (pageable) {
		gpu_cases("thp", true, bytes, &first);
		gpu_cases("4k", false, bytes, &first);
	}
	printf("\n]%s}\n", pageable ? "" : ", \"gpu_cases\": \"left out: the GPU may not reach pageable memory\"");
	return 0;
}
