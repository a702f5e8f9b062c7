/*
 * How many threads the host's touches (host_touch.c) take, and how much at
 * a time: a pure rule, apart so that a test can hold it to its numbers.
 *
 * A thread takes one 2 MiB region at a time, the driver's unit of host
 * population, so no two threads fault in the same block. Threads start from
 * four regions: building hf-llama 13b past a 16 GiB budget (ab-34's call 3
 * on an H200), each 50 MiB weight, then below a 64 MiB threshold, took
 * 24 ms on the calling thread alone (2 GB/s), and each 136 MiB weight 29 ms
 * in 32 MiB chunks, five threads at most. Half the processors, at most
 * eight: ember-touch-probe made 4 GiB at 1.7 GB/s from one thread, 10.7
 * from eight and 13.7 from sixteen (ab-34's call 6), and sixteen threads
 * did not build either model faster in the same call.
 */
#ifndef EMBER_TOUCH_THREADS_H
#define EMBER_TOUCH_THREADS_H

#include <stdint.h>

enum {
	EMBER_TOUCH_MAX_THREADS = 8,
	EMBER_TOUCH_CHUNK_BYTES = 2 << 20, /* a region: what a thread takes at a time */
	EMBER_TOUCH_THREADED_BYTES = 4 * EMBER_TOUCH_CHUNK_BYTES, /* below this, the calling thread alone */
};

/*
 * The threads, the calling one among them, that touch `bytes` on a machine
 * of `cpus` processors: one below four regions, else half the processors
 * (the program runs beside), at most eight, and no more than there are
 * regions to take.
 */
static inline unsigned ember_touch_threads(uint64_t bytes, long cpus)
{
	if (bytes < EMBER_TOUCH_THREADED_BYTES)
		return 1;
	uint64_t chunks = bytes / EMBER_TOUCH_CHUNK_BYTES + (bytes % EMBER_TOUCH_CHUNK_BYTES != 0);
	unsigned n = cpus > 1 ? (unsigned)(cpus / 2) : 1;
	if (n > EMBER_TOUCH_MAX_THREADS)
		n = EMBER_TOUCH_MAX_THREADS;
	return chunks < n ? (unsigned)chunks : n;
}

/* The background pool's threads (touch_pool.h): as for touches of any size, none of them the program's. */
static inline unsigned ember_touch_pool_threads(long cpus)
{
	return ember_touch_threads(UINT64_MAX, cpus);
}

#endif
