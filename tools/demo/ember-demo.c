/*
 * ember-demo: the program that README's main command runs through ember-run.
 *
 * It uses only the driver API, with no hints: managed memory, a kernel
 * loaded from PTX, repeated passes over the data, then a check of every
 * element. On a machine without a GPU, ember-run points Ember at the
 * simulated driver, whose ember_saxpy kernel is a host function.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wall_clock.h"

extern const char ember_demo_ptx[];

#define CHECK(call)                                                                        \
	do {                                                                               \
		CUresult rc_ = (call);                                                     \
		if (rc_ != CUDA_SUCCESS) {                                                 \
			const char *msg_ = NULL;                                           \
			cuGetErrorString(rc_, &msg_);                                      \
			fprintf(stderr, "ember-demo: %s failed: %s (%d)\n", #call,          \
				msg_ ? msg_ : "unknown error", (int)rc_);                  \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

/* Say which Ember, if any, this process runs under. */
static void report_ember(void)
{
	const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "ember_version");
	const char *(*driver)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "ember_real_driver");
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "ember_is_active");
	if (!version || !driver || !active) {
		printf("ember-demo: Ember is not loaded; using the driver directly\n");
		return;
	}
	printf("ember-demo: Ember %s (%s), forwarding to %s\n", version(),
	       active() ? "active" : "pass-through", driver());
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	unsigned passes = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 10;
	/* the kernel counts elements in 32 bits: at most 16383 MiB of floats an array */
	if (mib == 0 || passes == 0 || mib > 16383) {
		fprintf(stderr, "usage: ember-demo [MiB per array, 1 to 16383, default 256] [passes, default 10]\n");
		return 2;
	}
	unsigned n = (unsigned)((mib << 20) / sizeof(float));

	CHECK(cuInit(0));
	report_ember();
	CUdevice dev;
	char name[256];
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDeviceGetName(name, sizeof name, dev));
	CUcontext ctx;
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));

	CUmodule mod;
	CUfunction saxpy;
	CHECK(cuModuleLoadData(&mod, ember_demo_ptx));
	CHECK(cuModuleGetFunction(&saxpy, mod, "ember_saxpy"));

	CUdeviceptr x, y;
	CHECK(cuMemAllocManaged(&x, (size_t)n * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	CHECK(cuMemAllocManaged(&y, (size_t)n * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	float *hx = (float *)x, *hy = (float *)y;
	for (unsigned i = 0; i < n; i++) {
		hx[i] = (float)(i % 1000);
		hy[i] = 1.0f;
	}

	float a = 0.5f;
	void *params[] = { &a, &x, &y, &n };
	unsigned block = 256, grid = (n + block - 1) / block;
	double t0 = now_s();
	for (unsigned p = 0; p < passes; p++)
		CHECK(cuLaunchKernel(saxpy, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL));
	CHECK(cuCtxSynchronize());
	double seconds = now_s() - t0;

	size_t bad = 0;
	for (unsigned i = 0; i < n; i++) {
		float want = 1.0f;
		for (unsigned p = 0; p < passes; p++)
			want = a * (float)(i % 1000) + want;
		if (hy[i] != want && bad++ < 3)
			fprintf(stderr, "ember-demo: y[%u] = %g, expected %g\n", i, hy[i], want);
	}
	double gb = 3.0 * passes * (double)n * sizeof(float) / 1e9;
	printf("ember-demo: %u saxpy passes over 2 x %zu MiB of managed memory on %s: %.3f s (%.1f GB/s), %s\n",
	       passes, mib, name, seconds, gb / seconds, bad ? "WRONG RESULTS" : "verified");

	CHECK(cuMemFree(x));
	CHECK(cuMemFree(y));
	CHECK(cuModuleUnload(mod));
	CHECK(cuDevicePrimaryCtxRelease(dev));
	return bad ? 1 : 0;
}
