// page_touch: make every page of host-visible memory from several threads,
// 2 MiB at a time, by writing a zero to each 4 KiB page or with
// madvise(MADV_POPULATE_WRITE), as Ember's host touches do
// (shim/mech/host_touch.c). The probes' one copy (ember-touch-probe,
// ember-pageable-probe).
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <thread>
#include <vector>

#include "wall_clock.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

// Seconds to make [p, p + bytes) from `threads` threads; with populate, by madvise, *err its first errno.
static inline double page_touch(char *p, size_t bytes, unsigned threads, bool populate = false, int *err = nullptr)
{
	const size_t chunk = 2u << 20;
	std::atomic<size_t> next{ 0 };
	double t0 = now_s();
	std::vector<std::thread> pool;
	for (unsigned t = 0; t < threads; t++)
		pool.emplace_back([&] {
			for (size_t off; (off = next.fetch_add(chunk)) < bytes;) {
				size_t n = bytes - off < chunk ? bytes - off : chunk;
				if (populate) {
					if (madvise(p + off, n, MADV_POPULATE_WRITE) != 0 && err && !*err)
						*err = errno; // a race between threads over the first errno is harmless here
					continue;
				}
				volatile char *q = p + off;
				for (size_t b = 0; b < n; b += 4096)
					q[b] = 0;
			}
		});
	for (auto &th : pool)
		th.join();
	return now_s() - t0;
}
