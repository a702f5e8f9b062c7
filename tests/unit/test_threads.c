/* 16 threads call through the shim at once, first calls included. */
#include <pthread.h>
#include <stdatomic.h>

#include "harness.h"

enum { THREADS = 16, ROUNDS = 2000 };

static void *shim;
static pthread_barrier_t start;
static atomic_int failures;

static void *worker(void *arg)
{
	(void)arg;
	/* every thread's first call races on the same unresolved slots */
	pthread_barrier_wait(&start);
	if (SYM(shim, cuInit)(0) != CUDA_SUCCESS)
		atomic_fetch_add(&failures, 1);
	CUdevice d;
	CUcontext ctx;
	if (SYM(shim, cuDeviceGet)(&d, 0) || SYM(shim, cuDevicePrimaryCtxRetain)(&ctx, d) ||
	    SYM(shim, cuCtxSetCurrent)(ctx)) {
		atomic_fetch_add(&failures, 1);
		return NULL;
	}
	for (int i = 0; i < ROUNDS; i++) {
		int count = 0;
		CUdeviceptr p = 0;
		void *fn = NULL;
		unsigned v = (unsigned)i, back = ~0u;
		if (SYM(shim, cuDeviceGetCount)(&count) || count < 1 ||
		    SYM(shim, cuMemAlloc_v2)(&p, 64) || SYM(shim, cuMemcpyHtoD_v2)(p, &v, 4) ||
		    SYM(shim, cuMemcpyDtoH_v2)(&back, p, 4) || back != v || SYM(shim, cuMemFree_v2)(p) ||
		    SYM(shim, cuGetProcAddress_v2)("cuMemAlloc", &fn, 13000, 0, NULL) || !fn)
			atomic_fetch_add(&failures, 1);
	}
	SYM(shim, cuDevicePrimaryCtxRelease_v2)(d);
	return NULL;
}

Test(threads, sixteen_threads_at_once)
{
	shim = load_shim();
	pthread_barrier_init(&start, NULL, THREADS);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, worker, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	cr_expect_eq(atomic_load(&failures), 0, "%d calls failed", atomic_load(&failures));
}
