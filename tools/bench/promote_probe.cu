// ember-promote-probe BYTES: what one promotion costs on this GPU, and what
// a launch over managed memory costs, without Ember. One JSON record.
//
// Ember promotes a span (64 MiB) by setting its preferred location to the
// GPU, then prefetching it on a private stream (shim/mech/ops_driver.c).
// The cases, each on BYTES of managed memory set up as Ember leaves a
// mapped allocation (written on the host, preferred location the host,
// accessed by the GPU):
//   prefetch_spans          the prefetches alone, 64 MiB calls
//   advise_then_prefetch    Ember's promotion: advice, then prefetch, per span
//   prefetch_then_advise    the prefetches queued first, the advice after them
//   advise_only_host        the advice alone, on pages in host memory
//                           (each case also times the first and the second
//                           read pass after it: a cold run's kernels and a
//                           warm run's, where the advice may cost)
//   advise_only_resident    the advice alone, on pages already on the GPU
//   untouched_*             never-touched memory: does a prefetch place it on
//                           the GPU (device memory used before and after),
//                           and how fast a kernel then writes all of it
//   mapped_first_write_*    never-touched memory left mapped, first written by a
//                           kernel: as is, or populated on the host first by
//                           one prefetch to the host or one per span, or from
//                           eight threads (prefetches, or the host's touches)
//   launch_*                empty launches of three pointers into device
//                           memory, into resident managed memory, and into
//                           managed memory while 256 managed allocations live
//   read_*                  one read pass over resident data: cudaMalloc
//                           against managed memory prefetched to the GPU
//   prefetch_resident_*     a prefetch of pages already on the GPU, in spans
//                           and whole (a refresh where the host took nothing)
//   *_host_read*            the host reads a page in each 4 KiB, then one
//                           prefetch brings them back
//   mapped_read_pages_made_by_*  streaming reads of mapped memory whose host
//                           pages the host's touches made, or a prefetch to
//                           the host before them (larger chunks, larger GPU pages?)
//   mincore_*               what mincore() reports of GPU-resident managed
//                           memory, before and after the host reads some of
//                           it back: whether a refresh could know what left
#include <cuda_runtime.h>

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "wall_clock.h"
#include "host_fill.h"

static const size_t span = 64ull << 20;
static const cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };

// Managed memory as Ember leaves a mapped allocation; written on the host unless untouched.
static char *mapped_alloc(size_t bytes, bool touch)
{
	char *p = nullptr;
	CHECK(cudaMallocManaged(&p, bytes));
	CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, cpu));
	CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu));
	if (touch)
		host_fill(p, bytes);
	return p;
}

static size_t device_used()
{
	size_t free_b = 0, total = 0;
	CHECK(cudaMemGetInfo(&free_b, &total));
	return total - free_b;
}

enum order { PREFETCH_ONLY, ADVISE_FIRST, ADVISE_AFTER, ADVISE_ONLY };

// Promote [p, p+bytes) span by span; returns seconds to completion, and the host seconds spent in advice.
static double promote(char *p, size_t bytes, cudaStream_t s, order o, double *advise_s)
{
	double t0 = now_s(), in_advice = 0;
	for (size_t off = 0; off < bytes; off += span) {
		size_t n = std::min(span, bytes - off);
		if (o == ADVISE_FIRST || o == ADVISE_ONLY) {
			double a = now_s();
			CHECK(cudaMemAdvise(p + off, n, cudaMemAdviseSetPreferredLocation, gpu));
			in_advice += now_s() - a;
		}
		if (o != ADVISE_ONLY)
			CHECK(cudaMemPrefetchAsync(p + off, n, gpu, 0, s));
	}
	if (o == ADVISE_AFTER)
		for (size_t off = 0; off < bytes; off += span) {
			double a = now_s();
			CHECK(cudaMemAdvise(p + off, std::min(span, bytes - off), cudaMemAdviseSetPreferredLocation, gpu));
			in_advice += now_s() - a;
		}
	CHECK(cudaStreamSynchronize(s));
	*advise_s = in_advice;
	return now_s() - t0;
}

__global__ void write_all(unsigned *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned)i | 1u;
}

__global__ void read_all(const float4 *x, size_t n4, float *out)
{
	float acc = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
		float4 v = x[i];
		acc += v.x + v.y + v.z + v.w;
	}
	if (acc == 1234.5f)
		*out = acc;
}

__global__ void empty3(const float *a, const float *b, float *c, int n)
{
	if (n < 0 && threadIdx.x == 0)
		c[0] = a[0] + b[0];
}

static int blocks()
{
	int sms = 0;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	return sms * 8;
}

// Median ns per launch over rounds of 2,000 launches.
static double launch_ns(float *a, float *b, float *c)
{
	std::vector<double> per;
	for (int round = 0; round < 9; round++) {
		CHECK(cudaDeviceSynchronize());
		double t0 = now_s();
		for (int i = 0; i < 2000; i++)
			empty3<<<1, 32>>>(a, b, c, i);
		double issued = now_s() - t0;
		CHECK(cudaDeviceSynchronize());
		if (round)
			per.push_back(issued / 2000 * 1e9);
	}
	std::sort(per.begin(), per.end());
	return per[per.size() / 2];
}

// One read pass over [p, p + bytes), timed with events.
static double pass_seconds(const void *p, size_t bytes, float *out)
{
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	CHECK(cudaEventRecord(e0));
	read_all<<<blocks(), 256>>>((const float4 *)p, bytes / 16, out);
	CHECK(cudaEventRecord(e1));
	CHECK(cudaEventSynchronize(e1));
	float ms = 0;
	CHECK(cudaEventElapsedTime(&ms, e0, e1));
	CHECK(cudaEventDestroy(e0));
	CHECK(cudaEventDestroy(e1));
	return ms / 1e3;
}

static double read_seconds(const void *p, size_t bytes, float *out)
{
	std::vector<double> t;
	for (int r = 0; r < 5; r++)
		t.push_back(pass_seconds(p, bytes, out));
	std::sort(t.begin(), t.end());
	return t[t.size() / 2];
}

/* mincore() over p: the pages it reports present, and how long the call took */
static void mincore_case(const char *name, void *p, size_t bytes, std::vector<unsigned char> &vec)
{
	double t0 = now_s();
	int rc = mincore(p, bytes, vec.data());
	double t = now_s() - t0;
	size_t present = 0;
	for (unsigned char v : vec)
		present += v & 1;
	printf(", \"%s\": {\"rc\": %d, \"pages\": %zu, \"present\": %zu, \"seconds\": %.6f}", name,
	       rc == 0 ? 0 : errno, vec.size(), rc == 0 ? present : 0, t);
}

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoull(argv[1], nullptr, 10) : (4ull << 30);
	bytes = std::max(span, bytes / span * span);
	CHECK(cudaSetDevice(0));
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	double gb = bytes / 1e9, adv = 0;
	float *sink = nullptr;
	CHECK(cudaMalloc(&sink, 4096));
	printf("{\"bench\": \"promote-probe\", \"bytes\": %zu, \"span_bytes\": %zu", bytes, span);

	struct {
		const char *name;
		order o;
	} cases[] = { { "prefetch_spans", PREFETCH_ONLY },
		      { "advise_then_prefetch", ADVISE_FIRST },
		      { "prefetch_then_advise", ADVISE_AFTER },
		      { "advise_only_host", ADVISE_ONLY } };
	for (int rep = 0; rep < 2; rep++)
		for (auto &c : cases) {
			char *p = mapped_alloc(bytes, true);
			double t = promote(p, bytes, s, c.o, &adv);
			// the first read pass after it, and the second: a cold run's kernels against a warm run's
			double first = pass_seconds(p, bytes, sink), second = pass_seconds(p, bytes, sink);
			printf(", \"%s_%d\": {\"seconds\": %.6f, \"gbps\": %.2f, \"advice_seconds\": %.6f, "
			       "\"first_read_seconds\": %.6f, \"second_read_seconds\": %.6f}",
			       c.name, rep, t, gb / t, adv, first, second);
			if (c.o == PREFETCH_ONLY && rep == 0) {
				// the same advice on pages already on the GPU
				double a0 = now_s();
				for (size_t off = 0; off < bytes; off += span)
					CHECK(cudaMemAdvise(p + off, span, cudaMemAdviseSetPreferredLocation, gpu));
				printf(", \"advise_only_resident\": {\"seconds\": %.6f}", now_s() - a0);
			}
			CHECK(cudaFree(p));
		}

	// A prefetch of pages already on the GPU (what a refresh costs where the host took nothing),
	// and one after the host read every page back (what it moves where the host took everything)
	{
		char *p = mapped_alloc(bytes, true);
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, gpu));
		CHECK(cudaMemPrefetchAsync(p, bytes, gpu, 0, s));
		CHECK(cudaStreamSynchronize(s));
		double t0 = now_s();
		for (size_t off = 0; off < bytes; off += span)
			CHECK(cudaMemPrefetchAsync(p + off, span, gpu, 0, s));
		CHECK(cudaStreamSynchronize(s));
		double noop = now_s() - t0;
		t0 = now_s();
		CHECK(cudaMemPrefetchAsync(p, bytes, gpu, 0, s));
		CHECK(cudaStreamSynchronize(s));
		double noop_whole = now_s() - t0;
		// Can the CPU's page tables say what the host took back? A GPU-resident page should have no
		// CPU mapping until the host faults it in: mincore() before, after the host reads one page
		// in each span, and after it reads every page (pages reported, and the call's time)
		std::vector<unsigned char> vec(bytes / 4096);
		mincore_case("mincore_gpu_resident", p, bytes, vec);
		volatile unsigned sink = 0;
		for (size_t off = 0; off < bytes; off += span)
			sink += *(volatile unsigned *)(p + off);
		mincore_case("mincore_one_page_a_span_read", p, bytes, vec);
		t0 = now_s();
		for (size_t off = 0; off < bytes; off += 4096)
			sink += *(volatile unsigned *)(p + off);
		double host_read = now_s() - t0;
		mincore_case("mincore_every_page_read", p, bytes, vec);
		t0 = now_s();
		CHECK(cudaMemPrefetchAsync(p, bytes, gpu, 0, s));
		CHECK(cudaStreamSynchronize(s));
		double back = now_s() - t0;
		printf(", \"prefetch_resident_spans_seconds\": %.6f, \"prefetch_resident_whole_seconds\": %.6f, "
		       "\"host_read_back_seconds\": %.6f, \"prefetch_after_host_read_seconds\": %.6f, "
		       "\"prefetch_after_host_read_gbps\": %.2f",
		       noop, noop_whole, host_read, back, gb / back);
		CHECK(cudaFree(p));
	}

	// The mapped tier's read rate by how its host pages were made: by the host's first touches (what a
	// loader does), or by one prefetch to the host first (the driver may then back them with larger
	// chunks, and the GPU map them with larger pages), then the same touches. Streaming read passes.
	for (int made_by_prefetch = 0; made_by_prefetch < 2; made_by_prefetch++) {
		char *p = mapped_alloc(bytes, false);
		double t0 = now_s();
		if (made_by_prefetch) {
			CHECK(cudaMemPrefetchAsync(p, bytes, cpu, 0, s));
			CHECK(cudaStreamSynchronize(s));
		}
		double made = now_s() - t0;
		t0 = now_s();
		host_fill(p, bytes);
		double fill = now_s() - t0;
		double read = read_seconds(p, bytes, sink);
		printf(", \"mapped_read_pages_made_by_%s\": {\"prefetch_seconds\": %.6f, \"fill_seconds\": %.6f, "
		       "\"read_seconds\": %.6f, \"read_gbps\": %.2f}",
		       made_by_prefetch ? "prefetch" : "host", made, fill, read, gb / read);
		CHECK(cudaFree(p));
	}

	// Never-touched memory: does a prefetch place it, and how fast do kernels then first-write it?
	for (int prefer_gpu = 0; prefer_gpu < 2; prefer_gpu++) {
		char *p = mapped_alloc(bytes, false);
		size_t used0 = device_used();
		double t0 = now_s();
		for (size_t off = 0; off < bytes; off += span) {
			if (prefer_gpu)
				CHECK(cudaMemAdvise(p + off, span, cudaMemAdviseSetPreferredLocation, gpu));
			CHECK(cudaMemPrefetchAsync(p + off, span, gpu, 0, s));
		}
		CHECK(cudaStreamSynchronize(s));
		double pf = now_s() - t0;
		size_t used1 = device_used();
		t0 = now_s();
		write_all<<<blocks(), 256>>>((unsigned *)p, bytes / 4);
		CHECK(cudaDeviceSynchronize());
		double wr = now_s() - t0;
		size_t used2 = device_used();
		printf(", \"untouched_%s\": {\"prefetch_seconds\": %.6f, \"device_bytes_after_prefetch\": %lld, "
		       "\"write_seconds\": %.6f, \"write_gbps\": %.2f, \"device_bytes_after_write\": %lld}",
		       prefer_gpu ? "prefer_gpu" : "prefer_host", pf, (long long)(used1 - used0), wr, gb / wr,
		       (long long)(used2 - used0));
		CHECK(cudaFree(p));
	}

	// Never-touched memory that stays mapped (host-preferred, accessed by the GPU), first written by a
	// kernel: as is, or populated in host memory first by a prefetch to the host, whole or span by span.
	for (int populate = 0; populate < 3; populate++) {
		char *p = mapped_alloc(bytes, false);
		size_t used0 = device_used();
		double t0 = now_s();
		if (populate == 1)
			CHECK(cudaMemPrefetchAsync(p, bytes, cpu, 0, s));
		for (size_t off = 0; populate == 2 && off < bytes; off += span)
			CHECK(cudaMemPrefetchAsync(p + off, span, cpu, 0, s));
		CHECK(cudaStreamSynchronize(s));
		double pop = now_s() - t0;
		t0 = now_s();
		write_all<<<blocks(), 256>>>((unsigned *)p, bytes / 4);
		CHECK(cudaDeviceSynchronize());
		double wr = now_s() - t0;
		t0 = now_s();
		write_all<<<blocks(), 256>>>((unsigned *)p, bytes / 4);
		CHECK(cudaDeviceSynchronize());
		double wr2 = now_s() - t0;
		size_t used1 = device_used();
		static const char *names[] = { "as_is", "populated_whole", "populated_spans" };
		printf(", \"mapped_first_write_%s\": {\"populate_seconds\": %.6f, \"write_seconds\": %.6f, "
		       "\"second_write_seconds\": %.6f, \"total_gbps\": %.2f, \"device_bytes_after\": %lld}",
		       names[populate], pop, wr, wr2, gb / (pop + wr), (long long)(used1 - used0));
		CHECK(cudaFree(p));
	}

	// The same population from eight threads at once: by prefetches to the host, each on its own
	// stream, and by the host's own first touches. Does the driver populate host memory faster in
	// parallel than the 4 GB/s of one thread?
	for (int how = 0; how < 2; how++) {
		char *p = mapped_alloc(bytes, false);
		const int nthreads = 8;
		size_t slice = bytes / nthreads;
		double t0 = now_s();
		std::vector<std::thread> workers;
		for (int t = 0; t < nthreads; t++)
			workers.emplace_back([=] {
				char *q = p + t * slice;
				if (how == 0) {
					cudaStream_t own;
					CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
					CHECK(cudaMemPrefetchAsync(q, slice, cpu, 0, own));
					CHECK(cudaStreamSynchronize(own));
					CHECK(cudaStreamDestroy(own));
				} else {
					for (size_t off = 0; off < slice; off += 4096)
						q[off] = 1;
				}
			});
		for (auto &w : workers)
			w.join();
		double pop = now_s() - t0;
		t0 = now_s();
		write_all<<<blocks(), 256>>>((unsigned *)p, bytes / 4);
		CHECK(cudaDeviceSynchronize());
		double wr = now_s() - t0;
		printf(", \"mapped_first_write_populated_%s_8_threads\": {\"populate_seconds\": %.6f, "
		       "\"populate_gbps\": %.2f, \"write_seconds\": %.6f}",
		       how == 0 ? "prefetch" : "host_touch", pop, gb / pop, wr);
		CHECK(cudaFree(p));
	}

	// Launch cost and a read pass: device memory against resident managed memory.
	size_t rb = std::min(bytes, (size_t)1 << 30);
	float *d = nullptr, *m = nullptr, *out = nullptr;
	CHECK(cudaMalloc(&d, rb));
	CHECK(cudaMalloc(&out, 4096));
	CHECK(cudaMemset(d, 0x3f, rb));
	m = (float *)mapped_alloc(rb, true);
	CHECK(cudaMemAdvise(m, rb, cudaMemAdviseSetPreferredLocation, gpu));
	CHECK(cudaMemPrefetchAsync(m, rb, gpu, 0, 0));
	CHECK(cudaDeviceSynchronize());
	printf(", \"read_device_gbps\": %.1f, \"read_managed_resident_gbps\": %.1f", rb / 1e9 / read_seconds(d, rb, out),
	       rb / 1e9 / read_seconds(m, rb, out));
	printf(", \"launch_device_ns\": %.0f", launch_ns(d, d + 1024, d + 2048));
	printf(", \"launch_managed_ns\": %.0f", launch_ns(m, m + 1024, m + 2048));
	std::vector<void *> many;
	for (int i = 0; i < 256; i++) {
		void *q = nullptr;
		CHECK(cudaMallocManaged(&q, 2u << 20));
		CHECK(cudaMemPrefetchAsync(q, 2u << 20, gpu, 0, 0));
		many.push_back(q);
	}
	CHECK(cudaDeviceSynchronize());
	printf(", \"launch_device_256_managed_live_ns\": %.0f", launch_ns(d, d + 1024, d + 2048));
	printf(", \"launch_managed_256_managed_live_ns\": %.0f",
	       launch_ns((float *)many[0], (float *)many[1], (float *)many[2]));
	printf("}\n");
	for (void *q : many)
		CHECK(cudaFree(q));
	CHECK(cudaFree(m));
	CHECK(cudaFree(d));
	CHECK(cudaFree(out));
	CHECK(cudaFree(sink));
	return 0;
}
