/*
 * ember-torture's stream-ordered threads, as PyTorch's cudaMallocAsync
 * backend and JAX's cuda_async allocate: under EMBER_MANAGE_ALL each
 * cuMemAllocAsync becomes managed memory, and EMBER_KEEP_FREED keeps what
 * cuMemFreeAsync frees for the next allocation of its size: at once on the
 * stream that freed it, on another only once that stream has passed the
 * free. A round frees its input behind the launches that read it and at once
 * makes allocations of that size on a second stream and on the same one,
 * and writes over them: given the input's memory too early, the first
 * would change what the launches read, and their output would be wrong.
 * Half the rounds allocate from the thread's own pool (cuMemAllocFromPoolAsync,
 * which Ember keeps apart from the default pool's), which every sixteenth
 * round trims (cuMemPoolTrimTo, as PyTorch's empty_cache does).
 */
#include <stdint.h>
#include <stdlib.h>

#include "torture.h"

/* The launches that read a round's input, each adding it to the output: values stay exact floats. */
#define LAUNCHES 8

/* The sizes a round picks from: few, so that frees are given again often. */
static size_t round_bytes(unsigned *seed)
{
	static const size_t small[] = { 64 << 10, 256 << 10, 1 << 20 };
	return rand_r(seed) % 4 == 0 ? torture_max_bytes : small[rand_r(seed) % 3];
}

/* What a stream-ordered thread works with. */
struct async_thread {
	CUstream s, other;
	CUmemoryPool own; /* the thread's own pool */
	float *hx, *hy;   /* the host's input and output, torture_max_bytes each */
	unsigned seed;
};

/* bytes on stream, from pool (NULL: the current device's, cuMemAllocAsync). */
static void alloc_async(CUdeviceptr *p, size_t bytes, CUstream stream, CUmemoryPool pool)
{
	if (pool)
		CHECK(cuMemAllocFromPoolAsync(p, bytes, pool, stream));
	else
		CHECK(cuMemAllocAsync(p, bytes, stream));
}

static void async_round(struct async_thread *t, unsigned tag)
{
	unsigned *seed = &t->seed;
	CUstream s = t->s, other = t->other;
	float *hx = t->hx, *hy = t->hy;
	CUmemoryPool pool = rand_r(seed) % 2 ? t->own : NULL;
	size_t bytes = round_bytes(seed);
	unsigned n = (unsigned)(bytes / sizeof(float));
	for (unsigned i = 0; i < n; i++)
		hx[i] = torture_value(i, tag);
	CUdeviceptr x, y, here, there;
	/* the pool keeps nothing past its release threshold (0) at a synchronisation: x's memory is
	   then the only kept memory of its size but what other threads free */
	CHECK(cuStreamSynchronize(s));
	if (rand_r(seed) % 16 == 0)
		CHECK(cuMemPoolTrimTo(t->own, 0));
	alloc_async(&x, bytes, s, pool);
	alloc_async(&y, bytes, s, pool);
	CHECK(cuMemcpyHtoDAsync(x, hx, bytes, s));
	CHECK(cuMemsetD32Async(y, 0, n, s)); /* the kernel adds to y; given again, y holds what it held */
	float a = 1;
	void *params[] = { &a, &x, &y, &n };
	for (int k = 0; k < LAUNCHES; k++) /* y = LAUNCHES * x: x is read for longer */
		CHECK(cuLaunchKernel(torture_saxpy, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
	CHECK(cuMemFreeAsync(x, s)); /* while the launches may still read it */
	alloc_async(&there, bytes, other, pool); /* x's only once s has passed its free */
	CHECK(cuMemsetD32Async(there, 0xffffffffu, n, other));
	alloc_async(&here, bytes, s, pool); /* x's at once, if still kept: after the launches on s */
	CHECK(cuMemsetD32Async(here, 0xffffffffu, n, s));
	CHECK(cuMemcpyDtoHAsync(hy, y, bytes, s));
	CHECK(cuStreamSynchronize(s));
	CHECK(cuStreamSynchronize(other));
	for (unsigned i = 0; i < n; i++)
		if (hy[i] != LAUNCHES * torture_value(i, tag)) {
			EXPECT(false,
			       "stream-ordered: element %u of %u is %g, expected %g (x %#llx, y %#llx, then %#llx "
			       "on x's stream, %#llx on another)\n",
			       i, n, hy[i], LAUNCHES * torture_value(i, tag), (unsigned long long)x, (unsigned long long)y,
			       (unsigned long long)here, (unsigned long long)there);
			break;
		}
	CHECK(cuMemFreeAsync(there, other));
	CHECK(cuMemFreeAsync(here, s));
	CHECK(cuMemFreeAsync(y, s));
	__atomic_add_fetch(&torture_verified, bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&torture_async_rounds, 1, __ATOMIC_RELAXED);
}

void *torture_async_thread(void *arg)
{
	struct async_thread t = { .seed = (unsigned)(uintptr_t)arg * 3266489917u };
	CUdevice dev;
	CHECK(cuCtxSetCurrent(torture_ctx));
	CHECK(cuCtxGetDevice(&dev));
	CHECK(cuStreamCreate(&t.s, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&t.other, CU_STREAM_NON_BLOCKING));
	const CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				       .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev } };
	CHECK(cuMemPoolCreate(&t.own, &props));
	t.hx = malloc(torture_max_bytes);
	t.hy = malloc(torture_max_bytes);
	if (!t.hx || !t.hy) {
		fprintf(stderr, "ember-torture: out of host memory\n");
		exit(1);
	}
	for (unsigned tag = (unsigned)(uintptr_t)arg; torture_going_on(); tag += 11)
		async_round(&t, tag);
	CHECK(cuStreamSynchronize(t.s));
	CHECK(cuStreamSynchronize(t.other));
	CHECK(cuMemPoolDestroy(t.own));
	CHECK(cuStreamDestroy(t.s));
	CHECK(cuStreamDestroy(t.other));
	free(t.hx);
	free(t.hy);
	return NULL;
}
