/* ember-torture's managed threads: managed data written on the host, copied by the GPU, checked. */
#include <stdint.h>
#include <stdlib.h>

#include "torture.h"

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
	unsigned n = reuse ? k->n : 1024 + (unsigned)(rand_r(seed) % (torture_max_bytes / sizeof(float) - 1024));
	tag = reuse ? k->tag : tag;
	CUdeviceptr x = k->p, y;
	if (!reuse)
		CHECK(cuMemAllocManaged(&x, n * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	CHECK(cuMemAllocManaged(&y, n * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	float *hx = (float *)x, *hy = (float *)y;
	for (unsigned i = 0; i < n; i++) {
		if (!reuse)
			hx[i] = torture_value(i, tag);
		hy[i] = 0;
	}
	float a = 1;
	void *params[] = { &a, &x, &y, &n };
	CHECK(cuLaunchKernel(torture_saxpy, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
	bool early = !reuse && rand_r(seed) % 2;
	if (early)
		CHECK(cuMemFree(x)); /* while Ember may be moving it */
	CHECK(cuStreamSynchronize(s));
	for (unsigned i = 0; i < n; i++)
		if (hy[i] != torture_value(i, tag)) {
			EXPECT(false, "element %u of %u is %g, expected %g\n", i, n, hy[i], torture_value(i, tag));
			break;
		}
	if (!early && !reuse)
		CHECK(cuMemFree(x));
	CHECK(cuMemFree(y));
	__atomic_add_fetch(&torture_verified, (uint64_t)n * sizeof(float), __ATOMIC_RELAXED);
	__atomic_add_fetch(&torture_allocations, reuse ? 1 : 2, __ATOMIC_RELAXED);
}

void *torture_managed_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u;
	CHECK(cuCtxSetCurrent(torture_ctx));
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	struct kept k = { .n = (unsigned)(torture_max_bytes / sizeof(float)), .tag = (unsigned)(uintptr_t)arg * 31 };
	CHECK(cuMemAllocManaged(&k.p, k.n * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	for (unsigned i = 0; i < k.n; i++)
		((float *)k.p)[i] = torture_value(i, k.tag);
	for (unsigned tag = (unsigned)(uintptr_t)arg; torture_going_on(); tag += 7)
		round_trip(s, &seed, tag, &k);
	CHECK(cuMemFree(k.p));
	CHECK(cuStreamDestroy(s));
	return NULL;
}
