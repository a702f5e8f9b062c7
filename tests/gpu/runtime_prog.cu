/*
 * runtime_prog: a small but real CUDA runtime-API program, run by run_both.sh
 * once plainly and once with Ember preloaded; the two runs must print the
 * same bytes. It is built twice: with the static CUDA runtime (nvcc's
 * default) and with the shared one, since the two reach the driver
 * differently.
 *
 * It uses several kernels, two non-blocking streams ordered by events, event
 * timing (checked, never printed), pinned host memory with async copies,
 * __device__ symbols, managed memory touched on host and device and
 * prefetched both ways, a stream-captured graph, and two reductions: an
 * integer one and a float one with a fixed summation order. Everything
 * printed is an integer checksum or the exact bits of a float computed in a
 * fixed order, and every result is checked against a host reference.
 */
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t err_ = (call);                                                \
		if (err_ != cudaSuccess) {                                                \
			fprintf(stderr, "runtime_prog: %s:%d: %s failed: %s (%s)\n",      \
				__FILE__, __LINE__, #call, cudaGetErrorName(err_),        \
				cudaGetErrorString(err_));                                \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

/* After a launch: catch bad configurations at once. */
#define CK_LAUNCH() CK(cudaGetLastError())

static int failures = 0;

static void expect_u64(const char *what, uint64_t got, uint64_t want)
{
	printf("%s: %016" PRIx64 "%s\n", what, got, got == want ? "" : " MISMATCH");
	if (got != want) {
		fprintf(stderr, "runtime_prog: %s: got %016" PRIx64 ", want %016" PRIx64 "\n",
			what, got, want);
		failures++;
	}
}

static uint32_t float_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* ------------------------------------------------------------------------ */
/* Device and host share these pure functions so results can be checked.    */

__host__ __device__ static inline uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* A float in [-1, 1) with 2^-23 granularity, exact in binary. */
__host__ __device__ static inline float unit_float(uint32_t i)
{
	return (float)((int32_t)(mix32(i * 2654435761U + 12345U) >> 8) - (1 << 23)) *
	       (1.0f / (float)(1 << 23));
}

__constant__ uint32_t c_mul;
__device__ uint64_t d_launch_count;

/* ------------------------------------------------------------------------ */
/* Kernels                                                                   */

__global__ void k_fill(uint32_t *a, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		a[i] = mix32((uint32_t)i ^ seed);
}

/* b[i] = a[i] * c_mul + (b[i] rotated): reads the __constant__ symbol. */
__global__ void k_combine(const uint32_t *a, uint32_t *b, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint32_t x = b[i];
		b[i] = a[i] * c_mul + ((x << 7) | (x >> 25));
	}
	if (blockIdx.x == 0 && threadIdx.x == 0)
		atomicAdd((unsigned long long *)&d_launch_count, 1ULL);
}

/*
 * Integer sum of squares (mod 2^64), one partial per block. Integer addition
 * is associative, so this is exact whatever the order; atomics would do too,
 * but the tree keeps it symmetrical with the float one.
 */
template <int BLOCK>
__global__ void k_sum_u64(const uint32_t *a, size_t n, uint64_t *partials)
{
	__shared__ uint64_t s[BLOCK];
	uint64_t acc = 0;
	for (size_t i = blockIdx.x * (size_t)BLOCK + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * BLOCK)
		acc += (uint64_t)a[i] * a[i];
	s[threadIdx.x] = acc;
	__syncthreads();
	for (int w = BLOCK / 2; w > 0; w >>= 1) {
		if (threadIdx.x < w)
			s[threadIdx.x] += s[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		partials[blockIdx.x] = s[0];
}

/*
 * Float sum with a fixed order: thread t of block b adds elements
 * b*BLOCK + t + k*gridDim*BLOCK in increasing k, then a fixed tree. With the
 * same grid the result is bit-identical on every run; the host replays the
 * exact same order to check it.
 */
template <int BLOCK>
__global__ void k_sum_f32(const float *x, size_t n, float *partials)
{
	__shared__ float s[BLOCK];
	float acc = 0.0f;
	for (size_t i = blockIdx.x * (size_t)BLOCK + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * BLOCK)
		acc = __fadd_rn(acc, x[i]);
	s[threadIdx.x] = acc;
	__syncthreads();
	for (int w = BLOCK / 2; w > 0; w >>= 1) {
		if (threadIdx.x < w)
			s[threadIdx.x] = __fadd_rn(s[threadIdx.x], s[threadIdx.x + w]);
		__syncthreads();
	}
	if (threadIdx.x == 0)
		partials[blockIdx.x] = s[0];
}

__global__ void k_make_floats(float *x, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		x[i] = unit_float((uint32_t)i);
}

/* Managed memory: m[i] = m[i] * 3 + i, then the host checks it. */
__global__ void k_managed_update(int64_t *m, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		m[i] = m[i] * 3 + (int64_t)i;
}

/* One step of a 1-D integer stencil (for the captured graph). */
__global__ void k_stencil(const int32_t *in, int32_t *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		int32_t l = in[i > 0 ? i - 1 : n - 1];
		int32_t r = in[i < n - 1 ? i + 1 : 0];
		out[i] = (l + 2 * in[i] + r) & 0xFFFFF;
	}
}

/* ------------------------------------------------------------------------ */
/* Host references                                                           */

static void host_fill(std::vector<uint32_t> &a, uint32_t seed)
{
	for (size_t i = 0; i < a.size(); i++)
		a[i] = mix32((uint32_t)i ^ seed);
}

static uint64_t fnv1a(const void *p, size_t len)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Replays k_sum_f32's order exactly (IEEE single, round to nearest). */
static float host_sum_f32(const std::vector<float> &x, int grid, int block)
{
	std::vector<float> partials(grid);
	std::vector<float> s(block);
	for (int b = 0; b < grid; b++) {
		for (int t = 0; t < block; t++) {
			volatile float acc = 0.0f;
			for (size_t i = (size_t)b * block + t; i < x.size(); i += (size_t)grid * block)
				acc = acc + x[i];
			s[t] = acc;
		}
		for (int w = block / 2; w > 0; w >>= 1)
			for (int t = 0; t < w; t++) {
				volatile float v = s[t] + s[t + w];
				s[t] = v;
			}
		partials[b] = s[0];
	}
	/* Second pass: one block of `block` threads over `grid` partials. */
	for (int t = 0; t < block; t++) {
		volatile float acc = 0.0f;
		for (int i = t; i < grid; i += block)
			acc = acc + partials[i];
		s[t] = acc;
	}
	for (int w = block / 2; w > 0; w >>= 1)
		for (int t = 0; t < w; t++) {
			volatile float v = s[t] + s[t + w];
			s[t] = v;
		}
	return s[0];
}

/* ------------------------------------------------------------------------ */

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);

	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	if (ndev < 1) {
		printf("SKIP: no CUDA device\n");
		return 77;
	}
	CK(cudaSetDevice(0));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	int driver_version = 0, runtime_version = 0;
	CK(cudaDriverGetVersion(&driver_version));
	CK(cudaRuntimeGetVersion(&runtime_version));
	/* Printed: these are the same in both runs, and a shim that lied about
	 * them would be caught. */
	printf("devices>=1: yes\n");
	printf("compute capability: %d.%d\n", prop.major, prop.minor);
	printf("driver version >= runtime version: %s\n",
	       driver_version >= runtime_version ? "yes" : "no");

	const size_t N = (size_t)1 << 22; /* 4 Mi elements: 16 MiB per uint32 array */
	const size_t bytes = N * sizeof(uint32_t);
	const int threads = 256;
	const int blocks = 264; /* fixed, so results never depend on the SM count */

	cudaStream_t s1, s2;
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	cudaEvent_t t0, t1, a_ready, b_ready;
	CK(cudaEventCreate(&t0));
	CK(cudaEventCreate(&t1));
	CK(cudaEventCreateWithFlags(&a_ready, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&b_ready, cudaEventDisableTiming));

	/* ---- 1. two streams, ordered by events ---------------------------- */
	uint32_t *d_a = nullptr, *d_b = nullptr;
	CK(cudaMalloc(&d_a, bytes));
	CK(cudaMalloc(&d_b, bytes));
	uint32_t *h_out = nullptr;
	CK(cudaMallocHost(&h_out, bytes));

	const uint32_t mul = 2246822519U;
	CK(cudaMemcpyToSymbol(c_mul, &mul, sizeof mul));
	const uint64_t zero64 = 0;
	CK(cudaMemcpyToSymbol(d_launch_count, &zero64, sizeof zero64));

	CK(cudaEventRecord(t0, s1));
	k_fill<<<blocks, threads, 0, s1>>>(d_a, N, 0xA5A5A5A5U);
	CK_LAUNCH();
	CK(cudaEventRecord(a_ready, s1));
	k_fill<<<blocks, threads, 0, s2>>>(d_b, N, 0x5A5A5A5AU);
	CK_LAUNCH();
	CK(cudaStreamWaitEvent(s2, a_ready, 0));
	k_combine<<<blocks, threads, 0, s2>>>(d_a, d_b, N);
	CK_LAUNCH();
	k_combine<<<blocks, threads, 0, s2>>>(d_a, d_b, N);
	CK_LAUNCH();
	CK(cudaEventRecord(b_ready, s2));
	CK(cudaStreamWaitEvent(s1, b_ready, 0));
	CK(cudaMemcpyAsync(h_out, d_b, bytes, cudaMemcpyDeviceToHost, s1));
	CK(cudaEventRecord(t1, s1));
	CK(cudaEventSynchronize(t1));
	CK(cudaStreamSynchronize(s2));
	float ms = -1.0f;
	CK(cudaEventElapsedTime(&ms, t0, t1));
	if (!(ms >= 0.0f)) {
		fprintf(stderr, "runtime_prog: elapsed time is not >= 0\n");
		failures++;
	}
	CK(cudaEventQuery(t1)); /* must be cudaSuccess once synchronized */

	uint64_t launches = 0;
	CK(cudaMemcpyFromSymbol(&launches, d_launch_count, sizeof launches));
	expect_u64("combine launches", launches, 2);

	{
		std::vector<uint32_t> ra(N), rb(N);
		host_fill(ra, 0xA5A5A5A5U);
		host_fill(rb, 0x5A5A5A5AU);
		for (int rep = 0; rep < 2; rep++)
			for (size_t i = 0; i < N; i++) {
				uint32_t x = rb[i];
				rb[i] = ra[i] * mul + ((x << 7) | (x >> 25));
			}
		expect_u64("streams fnv1a", fnv1a(h_out, bytes), fnv1a(rb.data(), bytes));
	}

	/* ---- 2. integer reduction ----------------------------------------- */
	{
		uint64_t *d_part = nullptr;
		CK(cudaMalloc(&d_part, blocks * sizeof(uint64_t)));
		k_sum_u64<256><<<blocks, 256, 0, s1>>>(d_b, N, d_part);
		CK_LAUNCH();
		std::vector<uint64_t> part(blocks);
		CK(cudaMemcpyAsync(part.data(), d_part, blocks * sizeof(uint64_t),
				   cudaMemcpyDeviceToHost, s1));
		CK(cudaStreamSynchronize(s1));
		uint64_t got = 0, want = 0;
		for (int i = 0; i < blocks; i++)
			got += part[i];
		for (size_t i = 0; i < N; i++)
			want += (uint64_t)h_out[i] * h_out[i];
		expect_u64("sum of squares mod 2^64", got, want);
		CK(cudaFree(d_part));
	}

	/* ---- 3. float reduction, fixed order ------------------------------ */
	{
		const int fblocks = 240, fthreads = 256;
		float *d_x = nullptr, *d_part = nullptr, *d_total = nullptr;
		CK(cudaMalloc(&d_x, N * sizeof(float)));
		CK(cudaMalloc(&d_part, fblocks * sizeof(float)));
		CK(cudaMalloc(&d_total, sizeof(float)));
		k_make_floats<<<blocks, threads, 0, s2>>>(d_x, N);
		CK_LAUNCH();
		k_sum_f32<256><<<fblocks, fthreads, 0, s2>>>(d_x, N, d_part);
		CK_LAUNCH();
		k_sum_f32<256><<<1, fthreads, 0, s2>>>(d_part, fblocks, d_total);
		CK_LAUNCH();
		float total = 0.0f;
		CK(cudaMemcpyAsync(&total, d_total, sizeof total, cudaMemcpyDeviceToHost, s2));
		CK(cudaStreamSynchronize(s2));
		std::vector<float> hx(N);
		for (size_t i = 0; i < N; i++)
			hx[i] = unit_float((uint32_t)i);
		float want = host_sum_f32(hx, fblocks, fthreads);
		expect_u64("float sum bits", float_bits(total), float_bits(want));
		printf("float sum: %a\n", (double)total);
		CK(cudaFree(d_x));
		CK(cudaFree(d_part));
		CK(cudaFree(d_total));
	}

	/* ---- 4. managed memory, prefetched both ways ---------------------- */
	{
		const size_t M = (size_t)1 << 20; /* 8 MiB of int64 */
		int64_t *m = nullptr;
		CK(cudaMallocManaged(&m, M * sizeof(int64_t), cudaMemAttachGlobal));
		for (size_t i = 0; i < M; i++) /* touched on the host first */
			m[i] = (int64_t)(i * 7) - 1000;
		int concurrent = 0;
		CK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
		cudaMemLocation to_dev = {};
		to_dev.type = cudaMemLocationTypeDevice;
		to_dev.id = 0;
		cudaMemLocation to_host = {};
		to_host.type = cudaMemLocationTypeHost;
		to_host.id = 0;
		/* Prefetching needs concurrent managed access (true on H100/H200);
		 * without it the kernel still works through on-demand migration.
		 * Nothing printed depends on which path was taken. */
		if (concurrent)
			CK(cudaMemPrefetchAsync(m, M * sizeof(int64_t), to_dev, 0, s1));
		k_managed_update<<<(unsigned)((M + 255) / 256), 256, 0, s1>>>(m, M);
		CK_LAUNCH();
		k_managed_update<<<(unsigned)((M + 255) / 256), 256, 0, s1>>>(m, M);
		CK_LAUNCH();
		if (concurrent)
			CK(cudaMemPrefetchAsync(m, M * sizeof(int64_t), to_host, 0, s1));
		CK(cudaStreamSynchronize(s1));
		uint64_t bad = 0;
		for (size_t i = 0; i < M; i++) {
			int64_t v = (int64_t)(i * 7) - 1000;
			v = v * 3 + (int64_t)i;
			v = v * 3 + (int64_t)i;
			if (m[i] != v)
				bad++;
		}
		expect_u64("managed mismatches", bad, 0);
		printf("managed fnv1a: %016" PRIx64 "\n", fnv1a(m, M * sizeof(int64_t)));
		CK(cudaFree(m));
	}

	/* ---- 5. a graph captured from a stream, replayed ------------------ */
	{
		const int n = 1 << 16, steps = 10, replays = 3;
		int32_t *d_p = nullptr, *d_q = nullptr;
		CK(cudaMalloc(&d_p, n * sizeof(int32_t)));
		CK(cudaMalloc(&d_q, n * sizeof(int32_t)));
		std::vector<int32_t> h(n), ref(n), tmp(n);
		for (int i = 0; i < n; i++)
			h[i] = (int32_t)(mix32((uint32_t)i) & 0xFFFF);
		ref = h;
		CK(cudaMemcpy(d_p, h.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));

		cudaGraph_t graph;
		cudaGraphExec_t exec;
		CK(cudaStreamBeginCapture(s2, cudaStreamCaptureModeThreadLocal));
		for (int s = 0; s < steps; s++) { /* even count: ends in d_p */
			k_stencil<<<(n + 255) / 256, 256, 0, s2>>>(s % 2 ? d_q : d_p,
								    s % 2 ? d_p : d_q, n);
			CK_LAUNCH();
		}
		CK(cudaStreamEndCapture(s2, &graph));
		size_t nodes = 0;
		CK(cudaGraphGetNodes(graph, nullptr, &nodes));
		expect_u64("graph nodes", nodes, steps);
		CK(cudaGraphInstantiate(&exec, graph, 0));
		for (int r = 0; r < replays; r++)
			CK(cudaGraphLaunch(exec, s2));
		CK(cudaStreamSynchronize(s2));
		CK(cudaMemcpy(h.data(), d_p, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
		for (int r = 0; r < replays * steps; r++) {
			for (int i = 0; i < n; i++) {
				int32_t l = ref[i > 0 ? i - 1 : n - 1];
				int32_t rr = ref[i < n - 1 ? i + 1 : 0];
				tmp[i] = (l + 2 * ref[i] + rr) & 0xFFFFF;
			}
			ref.swap(tmp);
		}
		expect_u64("graph fnv1a", fnv1a(h.data(), n * sizeof(int32_t)),
			   fnv1a(ref.data(), n * sizeof(int32_t)));
		CK(cudaGraphExecDestroy(exec));
		CK(cudaGraphDestroy(graph));
		CK(cudaFree(d_p));
		CK(cudaFree(d_q));
	}

	/* ---- 6. plain synchronous copies round trip ----------------------- */
	{
		std::vector<uint32_t> back(N);
		CK(cudaMemcpy(d_a, h_out, bytes, cudaMemcpyHostToDevice));
		CK(cudaMemset(d_b, 0, bytes));
		CK(cudaMemcpy(d_b, d_a, bytes, cudaMemcpyDeviceToDevice));
		CK(cudaMemcpy(back.data(), d_b, bytes, cudaMemcpyDeviceToHost));
		expect_u64("round trip fnv1a", fnv1a(back.data(), bytes), fnv1a(h_out, bytes));
	}

	size_t free_b = 0, total_b = 0;
	CK(cudaMemGetInfo(&free_b, &total_b));
	if (free_b > total_b) {
		fprintf(stderr, "runtime_prog: cudaMemGetInfo: free > total\n");
		failures++;
	}

	CK(cudaFree(d_a));
	CK(cudaFree(d_b));
	CK(cudaFreeHost(h_out));
	CK(cudaEventDestroy(t0));
	CK(cudaEventDestroy(t1));
	CK(cudaEventDestroy(a_ready));
	CK(cudaEventDestroy(b_ready));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	CK(cudaDeviceSynchronize());
	CK(cudaGetLastError());

	/* ---- 7. a device reset frees what is left; memory made after it --- */
	{
		uint32_t *left = nullptr, *again = nullptr;
		CK(cudaMalloc(&left, bytes));
		k_fill<<<blocks, threads>>>(left, N, 0x0BADCAFEU);
		CK_LAUNCH();
		CK(cudaDeviceSynchronize());
		CK(cudaDeviceReset()); /* frees `left`: no cudaFree */
		CK(cudaSetDevice(0));
		CK(cudaMalloc(&again, bytes)); /* the driver may hand out the same address */
		k_fill<<<blocks, threads>>>(again, N, 0x13579BDFU);
		CK_LAUNCH();
		std::vector<uint32_t> back(N), want(N);
		CK(cudaMemcpy(back.data(), again, bytes, cudaMemcpyDeviceToHost));
		host_fill(want, 0x13579BDFU);
		expect_u64("after a reset fnv1a", fnv1a(back.data(), bytes), fnv1a(want.data(), bytes));
		CK(cudaFree(again));
	}

	if (failures) {
		printf("runtime_prog: FAILED (%d)\n", failures);
		return 1;
	}
	printf("runtime_prog: OK\n");
	return 0;
}
