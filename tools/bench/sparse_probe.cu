// ember-sparse-probe BYTES: what sparse access costs in each tier, for the
// oracle of sparse workloads (BFS, the wavefront) and for issue 9's
// question of why mapped memory collapses under it. Each case touches
// `pieces` pieces of PIECE bytes at hashed places spread over BYTES, one
// warp a piece, in one timed launch, and reports bytes touched per second:
//   device           cudaMalloc memory, read
//   mapped-read      managed, advised mapped (preferred host, accessed by
//                    the GPU), filled by the host first: the GPU reads host pages
//   mapped-first-write  the same advice, never touched: the GPU's writes are
//                    the pages' first touch (the wavefront's score matrix)
//   mapped-populated-write  never touched, but prefetched to the host in one
//                    call before the launch: pages exist and are mapped (also
//                    in 128-byte pieces: the wavefront's rows of tile cells)
//   managed-first-write  no advice at all, never touched (stock UVM)
//   mapped-read-write  half the warps read pieces of a filled mapped
//                    allocation while the other half write pieces of a
//                    populated one: both of the link's directions at once,
//                    each stream free of the other (a wavefront or a sort
//                    reads and writes its mapped share in the same kernels);
//                    the rate counts the bytes read and written together
//   mapped-copy      the same bytes, each warp writing what it read: a
//                    write waits for its read, as in a copy
// and what one prefetch to the host of the whole allocation costs when it
// was never touched (populate_seconds) and after the host filled it
// (repopulate_seconds).
// Each mapped case uses a fresh allocation. Prints one JSON record.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "pieces.cuh"

// One warp per piece. Copying (dependent): its lanes copy the piece from src
// to another hashed place in dst. Otherwise the even warps read pieces of src
// and the odd ones write pieces of dst, `pieces` of each.
__global__ void read_write(const unsigned *src, unsigned *dst, size_t words, size_t piece_words, size_t pieces,
			   int copying, unsigned *out)
{
	size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	size_t warps = (size_t)gridDim.x * blockDim.x / 32, slots = words / piece_words;
	unsigned acc = 0;
	if (copying) {
		for (size_t p = warp; p < pieces; p += warps) {
			size_t from = pieces_mix(p) % slots * piece_words;
			size_t to = pieces_mix(p ^ 0x5bd1e995ull) % slots * piece_words;
			for (size_t w = lane; w < piece_words; w += 32)
				dst[to + w] = src[from + w];
		}
		return;
	}
	bool reader = warp % 2 == 0;
	for (size_t p = warp / 2; p < pieces; p += warps / 2) {
		size_t at = pieces_mix(reader ? p : p ^ 0x5bd1e995ull) % slots * piece_words;
		for (size_t w = lane; w < piece_words; w += 32) {
			if (reader)
				acc += src[at + w];
			else
				dst[at + w] = (unsigned)(at + w);
		}
	}
	if (acc == 0xdeadbeef)
		*out = acc;
}

static unsigned *out;
static int nb;

// Bytes touched per second in one launch.
static double rate(unsigned *p, size_t bytes, size_t piece, size_t pieces, int write)
{
	return pieces_rate(p, bytes, piece, pieces, write, nb, out);
}

// Bytes read and written together per second in one launch that reads and writes `pieces` each.
static double read_write_rate(const unsigned *src, unsigned *dst, size_t bytes, size_t piece, size_t pieces,
			      int copying)
{
	CHECK(cudaDeviceSynchronize());
	double t0 = now_s();
	read_write<<<nb, 256>>>(src, dst, bytes / 4, piece / 4, pieces, copying, out);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	return 2.0 * piece * (double)pieces / (now_s() - t0);
}

static void host_fill(unsigned *p, size_t bytes)
{
	std::vector<std::thread> pool;
	unsigned threads = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
	size_t n = bytes / 4, chunk = (n + threads - 1) / threads;
	for (unsigned t = 0; t < threads; t++)
		pool.emplace_back([=] {
			for (size_t i = t * chunk; i < std::min(n, (t + 1) * chunk); i++)
				p[i] = (unsigned)i;
		});
	for (auto &th : pool)
		th.join();
}

enum prep { filled, untouched, populated, stock };

static unsigned *managed(size_t bytes, prep how)
{
	unsigned *p;
	CHECK(cudaMallocManaged(&p, bytes));
	cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };
	if (how != stock) {
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, cpu));
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu));
	}
	if (how == filled)
		host_fill(p, bytes);
	if (how == populated)
		CHECK(cudaMemPrefetchAsync(p, bytes, cpu, 0, 0));
	CHECK(cudaDeviceSynchronize());
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ember-sparse-probe BYTES\n");
		return 2;
	}
	size_t bytes = strtoull(argv[1], nullptr, 10) & ~(size_t)((1 << 21) - 1);
	int sms;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	nb = sms * 8;
	CHECK(cudaMalloc(&out, 4));
	const size_t pieces = 1 << 16;
	std::string json = "{\"sparse_probe\": true, \"bytes\": " + std::to_string(bytes) + ", \"pieces\": " +
	                   std::to_string(pieces) + ", \"rates_Bps\": {";
	auto add = [&](const char *name, size_t piece, double r) {
		char b[128];
		snprintf(b, sizeof b, "%s\"%s/%zu\": %.4g", json.back() == '{' ? "" : ", ", name, piece, r);
		json += b;
		fprintf(stderr, "%-24s %6zu B pieces: %8.3f GB/s\n", name, piece, r / 1e9);
	};
	const size_t sizes[] = { 128, 1024, 4096, 65536 };
	unsigned *dev;
	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMemset(dev, 1, bytes));
	for (size_t piece : sizes) {
		rate(dev, bytes, piece, pieces / 16, 0); // warm
		add("device", piece, rate(dev, bytes, piece, pieces, 0));
	}
	CHECK(cudaFree(dev));
	unsigned *m = managed(bytes, filled);
	for (size_t piece : sizes) {
		rate(m, bytes, piece, pieces / 16, 0);
		add("mapped-read", piece, rate(m, bytes, piece, pieces, 0));
	}
	// what populating costs where the host already did: the price of asking when unsure
	double t0 = now_s();
	CHECK(cudaMemPrefetchAsync(m, bytes, cudaMemLocation{ cudaMemLocationTypeHost, 0 }, 0, 0));
	CHECK(cudaDeviceSynchronize());
	double repopulate_s = now_s() - t0;
	CHECK(cudaFree(m));
	const struct { const char *name; prep how; } firsts[] = {
		{ "mapped-first-write", untouched }, { "mapped-populated-write", populated }, { "managed-first-write", stock },
	};
	double populate_s = 0;
	for (auto &f : firsts)
		for (size_t piece : { (size_t)128, (size_t)1024, (size_t)65536 }) {
			if (piece == 128 && f.how != populated)
				continue; // the wavefront's writes: rows of a tile's cells into pages that exist
			double t0 = now_s();
			unsigned *p = managed(bytes, f.how);
			if (f.how == populated) // what populating the whole allocation on the host costs
				populate_s = now_s() - t0;
			add(f.name, piece, rate(p, bytes, piece, pieces, 1));
			CHECK(cudaFree(p));
		}
	{ // both directions at once: half the size each, so that the two fit where one did
		unsigned *src = managed(bytes / 2, filled), *dst = managed(bytes / 2, populated);
		for (size_t piece : { (size_t)128, (size_t)65536 })
			for (int copying = 0; copying < 2; copying++) {
				read_write_rate(src, dst, bytes / 2, piece, pieces / 16, copying);
				add(copying ? "mapped-copy" : "mapped-read-write", piece,
				    read_write_rate(src, dst, bytes / 2, piece, pieces, copying));
			}
		CHECK(cudaFree(src));
		CHECK(cudaFree(dst));
	}
	json += "}, \"populate_seconds\": " + std::to_string(populate_s) +
		", \"repopulate_seconds\": " + std::to_string(repopulate_s);
	json += "}";
	printf("%s\n", json.c_str());
	return 0;
}
