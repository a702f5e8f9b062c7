/*
 * ember-torture: many threads, each on its own stream, allocate managed
 * data, write it on the host, have the GPU copy it (saxpy with a = 1), free
 * the source while the launch may still be in flight, and check every
 * byte of the result. Run it under Ember with the policy forced to churn
 * (a tiny budget, 1 ms intervals, a heat ratio of 1): no byte may change.
 *
 *   ember-torture [THREADS 8] [SECONDS 10] [MAX_MIB 8]
 *
 * Prints the bytes verified and exits 1 on the first mismatch.
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
static uint64_t verified, allocations, mismatches;

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

int main(int argc, char **argv)
{
	unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 8;
	double seconds = argc > 2 ? atof(argv[2]) : 10;
	max_bytes = (argc > 3 ? (size_t)atoi(argv[3]) : 8) << 20;
	if (threads < 1 || threads > 256 || seconds <= 0 || max_bytes < (1u << 20)) {
		fprintf(stderr, "usage: ember-torture [THREADS 1-256] [SECONDS] [MAX_MIB, from 1]\n");
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
	double t0 = now_s();
	deadline = t0 + seconds;
	pthread_t *tid = calloc(threads, sizeof *tid);
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (unsigned i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	printf("ember-torture: %u threads, %.1f s, %llu allocations, %llu bytes verified, %llu mismatches\n", threads,
	       now_s() - t0, (unsigned long long)allocations, (unsigned long long)verified,
	       (unsigned long long)mismatches);
	CHECK(cuModuleUnload(mod));
	return mismatches ? 1 : 0;
}
