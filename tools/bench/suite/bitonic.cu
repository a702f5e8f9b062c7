// bitonic: Batcher's bitonic sort of uint32 keys, n of them where n need
// not be a power of two (the network is the next power of two's, the keys
// past n standing in as the largest value, which never move). Each
// compare-exchange step pairs the keys whose indices differ in one bit; a
// launch does a run of consecutive steps of one stage on 2^14 keys that
// hold every combination of those steps' bits (in runs of at least 8
// consecutive keys, a full 32-byte sector), staged in shared memory, each
// thread taking 32 of them into registers for five steps at a time. The
// first launch sorts each 2^14 keys; each later stage takes one or two
// launches for its high bits and one for its low 14. Every launch is one
// pass over the whole array, read and written back: streaming, 41 passes
// at 2^31 keys where one launch a step would make 496.
#include "suite.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace {

const int chunk_bits = 14; // keys a block holds: 2^14, 64 KiB of shared memory
const int min_run_bits = 3; // the high steps move runs of at least 2^3 keys
const int per_thread = 32;  // keys a thread holds in registers: the steps on five bits of the index
const int threads = (1 << chunk_bits) / per_thread;
const size_t shared_bytes = sizeof(uint32_t) * ((1 << chunk_bits) + (1 << chunk_bits) / 32); // with pad()

struct state {
	uint32_t *keys;
	size_t n;
	int log_n;                  // the network sorts 2^log_n >= n
	unsigned long long sum, xr; // of the input, for the check
};

// Where a block's local key e (chunk_bits bits) lies in the array: the
// bits `fixed`, e >> run at bits [bottom, ...) and e's low run bits.
struct layout {
	size_t fixed;
	int run, bottom;
	__host__ __device__ size_t global(unsigned e) const
	{
		return fixed | ((size_t)(e >> run) << bottom) | (e & ((1u << run) - 1));
	}
};

// A word of padding every 32 keys: a warp's 32 keys at any power-of-two
// stride fall in different banks.
__host__ __device__ inline unsigned pad(unsigned e)
{
	return e + (e >> 5);
}

template <int P> __host__ __device__ inline void exchange(uint32_t (&v)[per_thread])
{
	for (int r = 0; r < per_thread; r++)
		if (!(r & (1 << P))) {
			uint32_t a = v[r], b = v[r | (1 << P)];
			v[r] = a < b ? a : b;
			v[r | (1 << P)] = a < b ? b : a;
		}
}

// Stage s sorts runs of 2^s keys, down where bit s of the index is not bit
// s of n-1: the run holding key n-1 goes up, so the stand-ins past n
// never move.
__host__ __device__ inline bool downwards(size_t i, size_t n, int s)
{
	return ((i >> s) ^ ((n - 1) >> s)) & 1;
}

// Step on bit B of stage S <= 4 over a thread's 32 consecutive keys, whose
// first has index i0: a run's direction is that of the thread's first
// run, flipped by bit S of the key's place among the 32.
template <int S, int B> __host__ __device__ inline void first_step(uint32_t (&v)[per_thread], size_t i0, size_t n)
{
	bool first_down = downwards(i0, n, S);
	for (int r = 0; r < per_thread; r++)
		if (!(r & (1 << B))) {
			uint32_t x = v[r], y = v[r | (1 << B)], lo = x < y ? x : y, hi = x < y ? y : x;
			bool down = (r >> S) & 1 ? !first_down : first_down;
			v[r] = down ? hi : lo;
			v[r | (1 << B)] = down ? lo : hi;
		}
}

// Stages 1 to 4 of the first launch, each thread on 32 consecutive keys
// (the block's keys are consecutive there): every run of 16 sorted.
__host__ __device__ inline void first_stages(unsigned tid, uint32_t *sk, const layout &map, size_t n)
{
	uint32_t *base = sk + pad(tid * per_thread), v[per_thread];
	for (int r = 0; r < per_thread; r++)
		v[r] = base[r];
	size_t i0 = map.global(tid * per_thread);
	first_step<1, 0>(v, i0, n);
	first_step<2, 1>(v, i0, n);
	first_step<2, 0>(v, i0, n);
	first_step<3, 2>(v, i0, n);
	first_step<3, 1>(v, i0, n);
	first_step<3, 0>(v, i0, n);
	first_step<4, 3>(v, i0, n);
	first_step<4, 2>(v, i0, n);
	first_step<4, 1>(v, i0, n);
	first_step<4, 0>(v, i0, n);
	for (int r = 0; r < per_thread; r++)
		base[r] = v[r];
}

// Thread tid's share of the steps on local bits hi down to lo of stage s,
// all within [G, G+5): it takes the 32 keys whose local index is its id
// with bits [G, G+5) free, in registers (G fixed at compile time, so their
// shared-memory offsets are constants). Those bits never include the one
// that sets the direction, so a thread's keys all go one way; going down,
// it holds them complemented, so every exchange is a plain min and max.
template <int G>
__host__ __device__ inline void group(unsigned tid, uint32_t *sk, const layout &map, size_t n, int s, int hi, int lo)
{
	unsigned e0 = ((tid >> G) << (G + 5)) | (tid & ((1u << G) - 1));
	uint32_t flip = downwards(map.global(e0), n, s) ? ~0u : 0u;
	uint32_t *base = sk + pad(e0), v[per_thread];
	// pad(e0 | r << G) = pad(e0) + (r << G) + ((r << G) >> 5): e0 has no bits in [G, G+5)
	for (int r = 0; r < per_thread; r++)
		v[r] = base[(r << G) + ((r << G) >> 5)] ^ flip;
	for (int b = hi; b >= lo; b--)
		switch (b - G) {
		case 0: exchange<0>(v); break;
		case 1: exchange<1>(v); break;
		case 2: exchange<2>(v); break;
		case 3: exchange<3>(v); break;
		default: exchange<4>(v); break;
		}
	for (int r = 0; r < per_thread; r++)
		base[(r << G) + ((r << G) >> 5)] = v[r] ^ flip;
}

__host__ __device__ inline void group(unsigned tid, uint32_t *sk, const layout &map, size_t n, int s, int g, int hi,
                                      int lo)
{
	static_assert(chunk_bits == 14, "one case for each g in [0, chunk_bits - 5]");
	switch (g) {
	case 0: group<0>(tid, sk, map, n, s, hi, lo); break;
	case 1: group<1>(tid, sk, map, n, s, hi, lo); break;
	case 2: group<2>(tid, sk, map, n, s, hi, lo); break;
	case 3: group<3>(tid, sk, map, n, s, hi, lo); break;
	case 4: group<4>(tid, sk, map, n, s, hi, lo); break;
	case 5: group<5>(tid, sk, map, n, s, hi, lo); break;
	case 6: group<6>(tid, sk, map, n, s, hi, lo); break;
	case 7: group<7>(tid, sk, map, n, s, hi, lo); break;
	case 8: group<8>(tid, sk, map, n, s, hi, lo); break;
	default: group<9>(tid, sk, map, n, s, hi, lo); break;
	}
}

__host__ __device__ inline void load(unsigned tid, const uint32_t *keys, size_t n, uint32_t *sk, const layout &map)
{
	for (unsigned e = tid; e < (1u << chunk_bits); e += threads) {
		size_t i = map.global(e);
		sk[pad(e)] = i < n ? keys[i] : 0xffffffffu; // stand-ins past n: the largest key
	}
}

__host__ __device__ inline void store(unsigned tid, uint32_t *keys, size_t n, const uint32_t *sk, const layout &map)
{
	for (unsigned e = tid; e < (1u << chunk_bits); e += threads) {
		size_t i = map.global(e);
		if (i < n)
			keys[i] = sk[pad(e)];
	}
}

__host__ __device__ inline layout block_layout(size_t q, int top, int bottom)
{
	int run = chunk_bits - (top - bottom + 1);
	size_t lo_bits = q & (((size_t)1 << (bottom - run)) - 1);
	return { ((q >> (bottom - run)) << (top + 1)) | (lo_bits << run), run, bottom };
}

// One pass. A block's keys are those whose index has every combination of
// bits [bottom, top] and of the low bits [0, run), run = chunk_bits -
// (top - bottom + 1), its number giving the other bits. For each stage s
// in [s_first, s_last] it does the steps on bits min(s-1, top) down to
// bottom (a step pairs the keys whose indices differ in that bit), five
// bits at a time in registers, through shared memory between. The first
// launch (stages 1 to chunk_bits, the keys consecutive) starts with
// first_stages().
__global__ void __launch_bounds__(threads, 2) steps(uint32_t *keys, size_t n, int log_n, int s_first, int s_last,
                                                    int top, int bottom)
{
	extern __shared__ uint32_t sk[];
	const size_t items = ((size_t)1 << log_n) >> chunk_bits;
	for (size_t q = blockIdx.x; q < items; q += gridDim.x) {
		layout map = block_layout(q, top, bottom);
		if (map.fixed >= n)
			continue; // only stand-ins: nothing to do, the same for the whole block
		__syncthreads(); // the last item's keys are all stored
		load(threadIdx.x, keys, n, sk, map);
		__syncthreads();
		int s = s_first;
		if (s == 1) {
			first_stages(threadIdx.x, sk, map, n);
			__syncthreads();
			s = 5;
		}
		for (; s <= s_last; s++)
			for (int hi = min(s - 1, top) - bottom + map.run; hi >= map.run; hi -= 5) {
				group(threadIdx.x, sk, map, n, s, max(hi - 4, 0), hi, max(hi - 4, map.run));
				__syncthreads();
			}
		store(threadIdx.x, keys, n, sk, map);
	}
}

// Descents between neighbours, and the keys' sum and xor.
__global__ void verify(const uint32_t *keys, size_t n, unsigned long long *out)
{
	unsigned long long descents = 0, sum = 0, xr = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		uint32_t v = keys[i];
		sum += v;
		xr ^= v;
		if (i + 1 < n && v > keys[i + 1])
			descents++;
	}
	for (int d = 16; d > 0; d /= 2) {
		descents += __shfl_down_sync(0xffffffffu, descents, d);
		sum += __shfl_down_sync(0xffffffffu, sum, d);
		xr ^= __shfl_down_sync(0xffffffffu, xr, d);
	}
	if (threadIdx.x % 32 == 0) {
		atomicAdd(&out[0], descents);
		atomicAdd(&out[1], sum);
		atomicXor(&out[2], xr);
	}
}

uint32_t key(size_t i, uint64_t seed)
{
	return (uint32_t)(suite_mix(i ^ (seed << 56)) >> 32);
}

// The launches of one sort, as (s_first, s_last, top, bottom).
struct launch {
	int s_first, s_last, top, bottom;
};

std::vector<launch> plan(int log_n)
{
	const int sb = chunk_bits;
	std::vector<launch> l;
	l.push_back({ 1, sb, sb - 1, 0 });
	const int most = sb - min_run_bits;
	for (int s = sb + 1; s <= log_n; s++) {
		// the bits [sb, s-1] in as few launches as hold them, split evenly
		int top = s - 1, parts = (s - sb + most - 1) / most;
		for (int p = parts; p > 0; p--) {
			int m = (top - sb + 1 + p - 1) / p;
			l.push_back({ s, s, top, top - m + 1 });
			top -= m;
		}
		l.push_back({ s, s, sb - 1, 0 });
	}
	return l;
}

void *make(size_t bytes)
{
	state *s = new state;
	s->n = std::max<size_t>((size_t)1 << chunk_bits, bytes / sizeof(uint32_t));
	s->log_n = 0;
	while (((size_t)1 << s->log_n) < s->n)
		s->log_n++;
	s->keys = (uint32_t *)suite_managed(s->n * sizeof(uint32_t));
	const uint64_t seed = 3;
	suite_fill_u32(s->keys, s->n, key, seed);
	// the input's checksums from the generator, not from the memory
	const unsigned nt = suite_workers();
	std::vector<unsigned long long> sums(nt), xrs(nt);
	suite_for_shares(s->n, [&](unsigned w, size_t lo, size_t hi) {
		unsigned long long sum = 0, xr = 0;
		for (size_t i = lo; i < hi; i++) {
			uint32_t v = key(i, seed);
			sum += v;
			xr ^= v;
		}
		sums[w] = sum, xrs[w] = xr;
	});
	s->sum = s->xr = 0;
	for (unsigned t = 0; t < nt; t++)
		s->sum += sums[t], s->xr ^= xrs[t];
	CHECK(cudaFuncSetAttribute(steps, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));
	return s;
}

void run(void *p, suite_result *r)
{
	state *s = (state *)p;
	std::vector<launch> l = plan(s->log_n);
	size_t items = ((size_t)1 << s->log_n) >> chunk_bits;
	int grid = (int)std::min<size_t>(items, 1u << 30); // a block an item: they balance themselves
	for (const launch &x : l)
		steps<<<grid, threads, shared_bytes>>>(s->keys, s->n, s->log_n, x.s_first, x.s_last, x.top, x.bottom);
	CHECK(cudaGetLastError());
	// each launch reads and writes every key once
	const double keys = (double)s->n * sizeof(uint32_t);
	suite_traffic(r, s->keys, keys, l.size() * keys, l.size() * keys);
}

// Every neighbouring pair in order, and the sum and xor of the keys those
// of the input, by a kernel over the whole array.
void check(void *p, suite_result *r)
{
	state *s = (state *)p;
	unsigned long long *out, h[3];
	CHECK(cudaMalloc(&out, sizeof(h)));
	CHECK(cudaMemset(out, 0, sizeof(h)));
	verify<<<suite_blocks(), 256>>>(s->keys, s->n, out);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK(cudaFree(out));
	if (h[0]) {
		r->note = std::to_string(h[0]) + " neighbouring pairs out of order";
		return;
	}
	if (h[1] != s->sum || h[2] != s->xr) {
		r->note = "the keys' sum or xor changed: not the input's keys";
		return;
	}
	r->verified = true;
	r->note = "all " + std::to_string(s->n) + " keys in order, sum and xor those of the input";
}

void destroy(void *p)
{
	state *s = (state *)p;
	suite_free(s->keys);
	delete s;
}

} // namespace

const suite_workload suite_bitonic = { "bitonic", "bitonic sort of uint32 keys, a pass over the array a launch",
	                               make, run, check, destroy };
