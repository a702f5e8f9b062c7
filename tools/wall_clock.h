/*
 * now_s(): the monotonic clock in seconds, for timing on the host (what
 * std::chrono::steady_clock reads on Linux). The one copy for the tools'
 * programs, C and CUDA alike (tools/bench, tools/ember-sim, the demo and
 * the torture test).
 */
#pragma once

#include <time.h>

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
