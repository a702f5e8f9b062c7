// passes.cuh: one kernel's streaming pass over memory, every word read or
// written once, timed on the host: the probes' one definition
// (ember-touch-probe, ember-pageable-probe), as pieces.cuh is for sparse
// access.
#pragma once

#include <cstddef>

#include "cuda_check.h"
#include "wall_clock.h"

__global__ static void pass_words(unsigned *p, size_t n, int write, unsigned *out)
{
	unsigned acc = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		if (write)
			p[i] = (unsigned)i;
		else
			acc += p[i];
	}
	if (acc == 0xdeadbeef)
		*out = acc;
}

// Seconds for one pass over [p, p + bytes) in `blocks` blocks of 256 threads (out: a word of device
// memory for a read pass's sum; a write pass never touches it).
static inline double pass_seconds(void *p, size_t bytes, int write, int blocks, unsigned *out)
{
	CHECK(cudaDeviceSynchronize());
	double t0 = now_s();
	pass_words<<<blocks, 256>>>((unsigned *)p, bytes / 4, write, out);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	return now_s() - t0;
}
