// What the mapped tier allows a program that knows its own traffic: the
// arrays it reads and writes most per byte resident, up to the same share of
// the budget Ember may fill, and the rest in host memory, mapped for the GPU
// (preferred location host, accessed by the GPU), the tier Ember's mapped
// pages live in. No Ember and no faults: a static placement the program asks
// for itself, against which Ember's placement is compared.
#include "placed.h"

#include <algorithm>

namespace {

const size_t piece = 2u << 20; // the partly placed array: whole 2 MiB pieces

void advise(const void *at, size_t bytes, cudaMemoryAdvise advice, cudaMemLocation where)
{
	CHECK(cudaMemAdvise(at, bytes, advice, where));
}

cudaMemLocation location(cudaMemLocationType type, int id)
{
	cudaMemLocation l = {};
	l.type = type;
	l.id = id;
	return l;
}

} // namespace

size_t suite_place_by_traffic(const std::vector<std::pair<void *, size_t>> &allocations,
                              const suite_result &learned, size_t cap, bool reads_first)
{
	const cudaMemLocation gpu = location(cudaMemLocationTypeDevice, 0), host = location(cudaMemLocationTypeHost, 0);
	for (const auto &[at, bytes] : allocations) {
		advise(at, bytes, cudaMemAdviseSetPreferredLocation, host);
		advise(at, bytes, cudaMemAdviseSetAccessedBy, gpu);
		CHECK(cudaMemPrefetchAsync(at, bytes, host, 0, 0));
	}
	// Allocations the run's accounting leaves out are its few KiB of counters and centroids: hot, so
	// on the GPU first, as a careful programmer would keep them.
	std::vector<suite_result::array_traffic> busiest;
	for (const auto &a : allocations) {
		const char *lo = (const char *)a.first, *hi = lo + a.second;
		bool counted = std::any_of(learned.arrays.begin(), learned.arrays.end(), [&](const auto &t) {
			return (const char *)t.at >= lo && (const char *)t.at < hi;
		});
		if (!counted)
			busiest.push_back({ a.first, (double)a.second, 1e300, 0 });
	}
	busiest.insert(busiest.end(), learned.arrays.begin(), learned.arrays.end());
	// reads first: a kernel waits for each mapped read, and only posts its mapped writes
	std::stable_sort(busiest.begin(), busiest.end(), [reads_first](const auto &x, const auto &y) {
		if (reads_first && x.read / x.bytes != y.read / y.bytes)
			return x.read / x.bytes > y.read / y.bytes;
		return (x.read + x.written) / x.bytes > (y.read + y.written) / y.bytes;
	});
	size_t placed = 0;
	for (const auto &a : busiest) {
		size_t bytes = (size_t)a.bytes;
		if (!a.at || !bytes || placed >= cap)
			continue;
		if (placed + bytes > cap)
			bytes = (cap - placed) / piece * piece;
		if (!bytes)
			break;
		advise(a.at, bytes, cudaMemAdviseSetPreferredLocation, gpu);
		CHECK(cudaMemPrefetchAsync(a.at, bytes, gpu, 0, 0));
		placed += bytes;
	}
	CHECK(cudaDeviceSynchronize());
	return placed;
}
