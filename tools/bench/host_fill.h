// host_fill: write managed memory on the host with all cores, as a loader
// would, so that its pages start out in host memory. The benchmarks' one copy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

// Small positive floats as bits, a different one in each 4-byte word.
static inline void host_fill(void *p, size_t bytes)
{
	unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
	std::vector<std::thread> pool;
	size_t chunk = (bytes / threads + 4095) & ~(size_t)4095;
	for (unsigned t = 0; t < threads; t++)
		pool.emplace_back([=] {
			size_t lo = std::min(bytes, t * chunk), hi = std::min(bytes, lo + chunk);
			unsigned *w = (unsigned *)((char *)p + lo);
			for (size_t i = 0; i < (hi - lo) / 4; i++)
				w[i] = (unsigned)(lo / 4 + i) * 2654435761u | 1u;
		});
	for (auto &th : pool)
		th.join();
}
