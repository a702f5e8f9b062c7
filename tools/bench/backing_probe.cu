// ember-backing-probe BYTES: whether the mapped tier's sparse reads depend on
// how its host pages were made and on how the GPU maps them (issue 9: the
// host backing's page size, which the driver's uvm_cpu_chunk_allocation_sizes
// bounds, and the GPU's mappings). Each case is a fresh managed allocation of
// BYTES preferring host memory; one launch reads `pieces` pieces of PIECE
// bytes at hashed places over it, one warp a piece, and the rate is the bytes
// read per second:
//   touched            accessed by the GPU; the host writes it in order from
//                      all cores (a loader; Ember's EMBER_POPULATE_HOST)
//   touched-scattered  the same, but the host first writes one 4 KiB page at
//                      a hashed place in each 2 MiB block, then the rest: the
//                      driver makes each block's pages fault by fault
//   prefetched         accessed by the GPU; one prefetch to the host makes
//                      the pages (the driver's own chunks), then the host
//                      writes them
//   unmapped-first     no accessed-by: the host writes it in order, and the
//                      GPU's first reads fault to map host pages
//   unmapped-again     the same allocation read again, now mapped
// It also reports the driver's CPU chunk sizes and the kernel's transparent
// huge page setting, where this machine lets them be read, and the smaps of
// each allocation's mapping on the host (its page sizes and huge pages).
// Prints one JSON record.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "cuda_check.h"
#include "host_fill.h"
#include "pieces.cuh"
#include "smaps.h"

static unsigned *out;
static int nb;

// Bytes read per second in one launch.
static double rate(unsigned *p, size_t bytes, size_t piece, size_t pieces)
{
	return pieces_rate(p, bytes, piece, pieces, 0, nb, out);
}

// A file's first line, JSON-quoted; "null" where it cannot be read.
static std::string first_line(const char *path)
{
	std::ifstream f(path);
	std::string line;
	if (!f || !std::getline(f, line))
		return "null";
	std::string q = "\"";
	for (char c : line)
		if (c == '"' || c == '\\')
			q += '\\', q += c;
		else if ((unsigned char)c >= 0x20)
			q += c;
	return q + "\"";
}

// The smaps fields of the host mapping that holds p, as a JSON object of kB (those it has).
static std::string smaps_of(const void *p)
{
	std::string fields;
	for (const char *w : { "KernelPageSize", "MMUPageSize", "Rss", "AnonHugePages" }) { // as smaps orders them
		long kb = smaps_kb(p, w);
		if (kb >= 0)
			fields += (fields.empty() ? "" : ", ") + std::string("\"") + w + "\": " + std::to_string(kb);
	}
	return "{" + fields + "}";
}

enum backing { touched, scattered, prefetched, unmapped };

static unsigned *make(size_t bytes, backing how)
{
	unsigned *p;
	CHECK(cudaMallocManaged(&p, bytes));
	cudaMemLocation cpu = { cudaMemLocationTypeHost, 0 }, gpu = { cudaMemLocationTypeDevice, 0 };
	CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, cpu));
	if (how != unmapped)
		CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu));
	if (how == prefetched) {
		CHECK(cudaMemPrefetchAsync(p, bytes, cpu, 0, 0));
		CHECK(cudaDeviceSynchronize());
	}
	if (how == scattered)
		for (size_t block = 0; block < bytes >> 21; block++) // one page a block, at a place of its own
			p[((block << 21) + (block * 2654435761u % 512) * 4096) / 4] = 1;
	host_fill(p, bytes);
	CHECK(cudaDeviceSynchronize());
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ember-backing-probe BYTES\n");
		return 2;
	}
	size_t bytes = strtoull(argv[1], nullptr, 10) & ~(size_t)((1 << 21) - 1);
	if (!bytes) {
		fprintf(stderr, "ember-backing-probe: BYTES below 2 MiB\n");
		return 2;
	}
	int sms;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	nb = sms * 8;
	CHECK(cudaMalloc(&out, 4));
	const size_t pieces = 1 << 16, sizes[] = { 128, 4096, 65536 };
	std::string rates, smaps;
	auto add = [&](const char *name, size_t piece, double r) {
		char b[128];
		snprintf(b, sizeof b, "%s\"%s/%zu\": %.4g", rates.empty() ? "" : ", ", name, piece, r);
		rates += b;
		fprintf(stderr, "%-18s %6zu B pieces: %8.3f GB/s\n", name, piece, r / 1e9);
	};
	const struct { const char *name; backing how; } cases[] = {
		{ "touched", touched }, { "touched-scattered", scattered }, { "prefetched", prefetched },
	};
	for (auto &c : cases) {
		unsigned *p = make(bytes, c.how);
		smaps += std::string(smaps.empty() ? "" : ", ") + "\"" + c.name + "\": " + smaps_of(p);
		for (size_t piece : sizes) {
			rate(p, bytes, piece, pieces / 16); // warm
			add(c.name, piece, rate(p, bytes, piece, pieces));
		}
		CHECK(cudaFree(p));
	}
	for (size_t piece : sizes) { // a fresh allocation each: its first reads are the faulting ones
		unsigned *p = make(bytes, unmapped);
		add("unmapped-first", piece, rate(p, bytes, piece, pieces));
		add("unmapped-again", piece, rate(p, bytes, piece, pieces));
		if (piece == sizes[0])
			smaps += ", \"unmapped\": " + smaps_of(p);
		CHECK(cudaFree(p));
	}
	printf("{\"backing_probe\": true, \"bytes\": %zu, \"pieces\": %zu, \"rates_Bps\": {%s}, "
	       "\"uvm_cpu_chunk_allocation_sizes\": %s, \"transparent_hugepage\": %s, \"smaps_kB\": {%s}}\n",
	       bytes, pieces, rates.c_str(), first_line("/sys/module/nvidia_uvm/parameters/uvm_cpu_chunk_allocation_sizes").c_str(),
	       first_line("/sys/kernel/mm/transparent_hugepage/enabled").c_str(), smaps.c_str());
	return 0;
}
