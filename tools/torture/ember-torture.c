/*
 * ember-torture: many threads, each on its own stream, allocate managed
 * data, write it on the host, have the GPU copy it (saxpy with a = 1), free
 * the source while the launch may still be in flight, and check every
 * byte of the result. Run it under Ember with the policy forced to churn
 * (a tiny budget, 1 ms intervals, a heat ratio of 1): no byte may change.
 *
 * VMM_THREADS more threads use the virtual memory API meanwhile (vmm_round).
 *
 *   ember-torture [THREADS 8] [SECONDS 10] [MAX_MIB 8] [VMM_THREADS 0]
 *
 * Prints the bytes verified and exits 1 on the first mismatch, or, with
 * VMM threads alone (THREADS 0), where the GPU's free memory does not come
 * back once every thread is done. Beside managed threads the difference is
 * printed, not checked: the driver keeps some of managed memory's GPU
 * chunks after their free (65 MB of an H100's after 20 s of 4 + 4 threads
 * without Ember, ab-57's call 2).
 */
#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wall_clock.h"

extern const char ember_demo_ptx[];

#define CHECK(call)                                                                              \
	do {                                                                                     \
		CUresult rc_ = (call);                                                           \
		if (rc_ != CUDA_SUCCESS) {                                                       \
			fprintf(stderr, "ember-torture: %s failed (%d)\n", #call, (int)rc_);     \
			exit(1);                                                                 \
		}                                                                                \
	} while (0)

static CUcontext ctx;
static CUfunction saxpy;
static double deadline;
static size_t max_bytes;
static uint64_t verified, allocations, mismatches, vmm_rounds;

/* One wrong answer: said, and counted as a mismatch. */
#define EXPECT(cond, ...)                                                            \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "ember-torture: " __VA_ARGS__);              \
			__atomic_add_fetch(&mismatches, 1, __ATOMIC_RELAXED);        \
		}                                                                    \
	} while (0)

/* A thread's long-lived data: read again and again, so the policy keeps moving it in and out. */
struct kept {
	CUdeviceptr p;
	unsigned n, tag;
};

/*
 * One round: x written on the host (a new allocation, or the thread's kept
 * one), y = 1 * x + 0 on the GPU, a new x sometimes freed while the launch
 * may still run, y checked.
 */
static void round_trip(CUstream s, unsigned *seed, unsigned tag, const struct kept *k)
{
	bool reuse = rand_r(seed) % 2;
	unsigned n = reuse ? k->n : 1024 + (unsigned)(rand_r(seed) % (max_bytes / sizeof(float) - 1024));
	tag = reuse ? k->tag : tag;
	CUdeviceptr x = k->p, y;
	if (!reuse)
		CHECK(cuMemAllocManaged(&x, n * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	CHECK(cuMemAllocManaged(&y, n * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	float *hx = (float *)x, *hy = (float *)y;
	for (unsigned i = 0; i < n; i++) {
		if (!reuse)
			hx[i] = (float)((i + tag) & 0xffff);
		hy[i] = 0;
	}
	float a = 1;
	void *params[] = { &a, &x, &y, &n };
	CHECK(cuLaunchKernel(saxpy, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
	bool early = !reuse && rand_r(seed) % 2;
	if (early)
		CHECK(cuMemFree(x)); /* while Ember may be moving it */
	CHECK(cuStreamSynchronize(s));
	for (unsigned i = 0; i < n; i++)
		if (hy[i] != (float)((i + tag) & 0xffff)) {
			fprintf(stderr, "ember-torture: element %u of %u is %g, expected %u\n", i, n, hy[i],
				(i + tag) & 0xffff);
			__atomic_add_fetch(&mismatches, 1, __ATOMIC_RELAXED);
			break;
		}
	if (!early && !reuse)
		CHECK(cuMemFree(x));
	CHECK(cuMemFree(y));
	__atomic_add_fetch(&verified, (uint64_t)n * sizeof(float), __ATOMIC_RELAXED);
	__atomic_add_fetch(&allocations, reuse ? 1 : 2, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u;
	CHECK(cuCtxSetCurrent(ctx));
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	struct kept k = { .n = (unsigned)(max_bytes / sizeof(float)), .tag = (unsigned)(uintptr_t)arg * 31 };
	CHECK(cuMemAllocManaged(&k.p, k.n * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	for (unsigned i = 0; i < k.n; i++)
		((float *)k.p)[i] = (float)((i + k.tag) & 0xffff);
	for (unsigned tag = (unsigned)(uintptr_t)arg; now_s() < deadline && !mismatches; tag += 7)
		round_trip(s, &seed, tag, &k);
	CHECK(cuMemFree(k.p));
	CHECK(cuStreamDestroy(s));
	return NULL;
}

/*
 * One round of the virtual memory API, as PyTorch's expandable segments and
 * JAX's pool use it: make an allocation of 1 to 8 granules, map it (a
 * quarter of the time twice, side by side, as a ring buffer does), release
 * it while mapped half of the time (the mapping holds it), ask for it back
 * from an address and for the range around that address, then unmap.
 * Under EMBER_MANAGE_ALL and a small budget Ember splits many of these
 * between the GPU and host memory behind one handle while other threads
 * do the same: every answer must still be the one allocation's.
 */
static void vmm_round(unsigned *seed, const CUmemAllocationProp *prop, size_t granule)
{
	const CUmemAccessDesc access = { .location = prop->location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	size_t size = (1 + (size_t)(rand_r(seed) % 8)) * granule;
	bool twice = rand_r(seed) % 4 == 0, released = rand_r(seed) % 2;
	unsigned maps = twice ? 2 : 1;
	CUmemGenericAllocationHandle h, again;
	CUdeviceptr va, base;
	size_t got;
	CHECK(cuMemCreate(&h, size, prop, 0));
	CHECK(cuMemAddressReserve(&va, maps * size, 0, 0, 0));
	for (unsigned m = 0; m < maps; m++)
		CHECK(cuMemMap(va + m * size, size, 0, h, 0));
	CHECK(cuMemSetAccess(va, maps * size, &access, 1));
	if (released)
		CHECK(cuMemRelease(h));
	CUdeviceptr mapping = va + (rand_r(seed) % maps) * size, at = mapping + (size_t)rand_r(seed) % size;
	CHECK(cuMemRetainAllocationHandle(&again, (void *)at));
	EXPECT(again == h, "a retain at %#llx gave handle %#llx, not %#llx\n", (unsigned long long)at,
	       (unsigned long long)again, (unsigned long long)h);
	CHECK(cuMemGetAddressRange(&base, &got, at));
	EXPECT(base == mapping && got == size, "the range around %#llx is %zu bytes at %#llx, not %zu at %#llx\n",
	       (unsigned long long)at, got, (unsigned long long)base, size, (unsigned long long)mapping);
	CHECK(cuMemRelease(again));
	if (twice) { /* either mapping unmapped first: the other still answers for the whole allocation */
		CUdeviceptr gone = va + (rand_r(seed) % 2) * size, left = gone == va ? va + size : va;
		CHECK(cuMemUnmap(gone, size));
		CHECK(cuMemRetainAllocationHandle(&again, (void *)(left + size - 1)));
		EXPECT(again == h, "with one mapping left, a retain gave handle %#llx, not %#llx\n",
		       (unsigned long long)again, (unsigned long long)h);
		CHECK(cuMemRelease(again));
		CHECK(cuMemGetAddressRange(&base, &got, left + size - 1));
		EXPECT(base == left && got == size, "with one mapping left, the range is %zu bytes at %#llx\n", got,
		       (unsigned long long)base);
		CHECK(cuMemUnmap(left, size));
	} else {
		CHECK(cuMemUnmap(va, size));
	}
	if (!released)
		CHECK(cuMemRelease(h));
	CHECK(cuMemAddressFree(va, maps * size));
	__atomic_add_fetch(&vmm_rounds, 1, __ATOMIC_RELAXED);
}

static void *vmm_worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2246822519u;
	CUdevice dev;
	size_t granule;
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuCtxGetDevice(&dev));
	const CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
					   .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev } };
	CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	while (now_s() < deadline && !mismatches)
		vmm_round(&seed, &prop, granule);
	return NULL;
}

/* The GPU's free memory, once it is back at before or after a few seconds: freeing may finish behind the program. */
static size_t free_memory_settled(size_t before)
{
	size_t free_bytes = 0, total;
	for (int i = 0; i < 50; i++) {
		CHECK(cuCtxSynchronize());
		CHECK(cuMemGetInfo(&free_bytes, &total));
		if (free_bytes == before)
			break;
		struct timespec tick = { 0, 100 * 1000 * 1000 };
		nanosleep(&tick, NULL);
	}
	return free_bytes;
}

int main(int argc, char **argv)
{
	unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 8;
	double seconds = argc > 2 ? atof(argv[2]) : 10;
	max_bytes = (argc > 3 ? (size_t)atoi(argv[3]) : 8) << 20;
	int vmm_threads = argc > 4 ? atoi(argv[4]) : 0;
	if (threads > 256 || seconds <= 0 || max_bytes < (1u << 20) || vmm_threads < 0 || vmm_threads > 256 ||
	    threads + (unsigned)vmm_threads == 0) {
		fprintf(stderr, "usage: ember-torture [THREADS 0-256] [SECONDS] [MAX_MIB, from 1] [VMM_THREADS 0-256], "
				"not both 0\n");
		return 2;
	}
	CUdevice dev;
	CUmodule mod;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoadData(&mod, ember_demo_ptx));
	CHECK(cuModuleGetFunction(&saxpy, mod, "ember_saxpy"));
	size_t free_before, total;
	CHECK(cuMemGetInfo(&free_before, &total));
	double t0 = now_s();
	deadline = t0 + seconds;
	unsigned all = threads + (unsigned)vmm_threads;
	pthread_t *tid = calloc(all, sizeof *tid);
	for (unsigned i = 0; i < all; i++)
		pthread_create(&tid[i], NULL, i < threads ? worker : vmm_worker, (void *)(uintptr_t)(i + 1));
	for (unsigned i = 0; i < all; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	printf("ember-torture: %u threads, %.1f s, %llu allocations, %llu bytes verified, %llu mismatches\n", threads,
	       now_s() - t0, (unsigned long long)allocations, (unsigned long long)verified,
	       (unsigned long long)mismatches);
	if (vmm_threads) { /* a split's two parts, each freed by the last of several holds */
		printf("ember-torture: %d threads of the virtual memory API, %llu rounds\n", vmm_threads,
		       (unsigned long long)vmm_rounds);
		size_t free_after = free_memory_settled(free_before);
		long long kept = (long long)free_before - (long long)free_after;
		if (threads)
			printf("ember-torture: %lld bytes of the GPU's free memory not given back (not checked beside "
			       "managed threads)\n", kept);
		else
			EXPECT(free_after == free_before,
			       "the GPU's free memory is %zu bytes, %zu before: %lld bytes not given back\n",
			       free_after, free_before, kept);
	}
	CHECK(cuModuleUnload(mod));
	return mismatches ? 1 : 0;
}
