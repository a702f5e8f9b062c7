// pieces.cuh: the probes' one definition of sparse access, pieces of a
// given size at hashed places spread over an allocation, so that
// ember-sparse-probe and ember-backing-probe measure the same thing.
#pragma once

#include <cstddef>

#include "cuda_check.h"
#include "wall_clock.h"

__device__ static unsigned long long pieces_mix(unsigned long long x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

// One warp per piece: its lanes read (or write) the piece's words.
__global__ static void touch_pieces(unsigned *base, size_t words, size_t piece_words, size_t pieces, int write,
                                    unsigned *out)
{
	size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	size_t warps = (size_t)gridDim.x * blockDim.x / 32;
	unsigned acc = 0;
	for (size_t p = warp; p < pieces; p += warps) {
		size_t at = pieces_mix(p) % (words / piece_words) * piece_words;
		for (size_t w = lane; w < piece_words; w += 32) {
			if (write)
				base[at + w] = (unsigned)(at + w);
			else
				acc += base[at + w];
		}
	}
	if (acc == 0xdeadbeef)
		*out = acc;
}

// Bytes touched per second in one launch of `blocks` blocks of 256 threads (out: a word of device memory).
static inline double pieces_rate(unsigned *p, size_t bytes, size_t piece, size_t pieces, int write, int blocks,
                                 unsigned *out)
{
	CHECK(cudaDeviceSynchronize());
	double t0 = now_s();
	touch_pieces<<<blocks, 256>>>(p, bytes / 4, piece / 4, pieces, write, out);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	return piece * (double)pieces / (now_s() - t0);
}
