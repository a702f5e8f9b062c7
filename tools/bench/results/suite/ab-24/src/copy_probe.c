/* Session 24 diagnostic: what small copies, memsets and pointer queries cost on managed memory
 * resident on the GPU, against plain device memory, through the driver API. Each case: the median
 * of 2000 timed calls (copies to the host include their stream synchronisation). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_) { fprintf(stderr, "%s: %d\n", #x, r_); exit(1); } } while (0)
enum { N = 2000, SZ = 4 << 20 };

static double now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v) { qsort(v, N, sizeof *v, cmp); return v[N / 2]; }

int main(void)
{
	CUdevice dev; CUcontext ctx; CUstream s;
	CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr a[2], b[2];
	CK(cuMemAlloc(&a[0], SZ)); CK(cuMemAlloc(&a[1], SZ));
	CK(cuMemAllocManaged(&b[0], SZ, CU_MEM_ATTACH_GLOBAL)); CK(cuMemAllocManaged(&b[1], SZ, CU_MEM_ATTACH_GLOBAL));
	CUmemLocation loc = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
	for (int i = 0; i < 2; i++) {
		CK(cuMemsetD8(a[i], 1, SZ));
		CK(cuMemPrefetchAsync(b[i], SZ, loc, 0, s));
	}
	CK(cuStreamSynchronize(s));
	for (int i = 0; i < 2; i++)
		CK(cuMemsetD8Async(b[i], 1, SZ, s)); /* written on the GPU where they live */
	CK(cuStreamSynchronize(s));
	void *host; CK(cuMemHostAlloc(&host, 1 << 16, 0));
	const char *kind[2] = { "device", "managed" };
	CUdeviceptr *p[2] = { a, b };
	double t[N];
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < N; i++) { double t0 = now_ns(); CK(cuMemcpyDtoHAsync(host, p[k][0], 4, s)); CK(cuStreamSynchronize(s)); t[i] = now_ns() - t0; }
		printf("{\"case\": \"d2h-4B+sync\", \"memory\": \"%s\", \"ns\": %.0f}\n", kind[k], median(t));
		for (int i = 0; i < N; i++) { double t0 = now_ns(); CK(cuMemcpyHtoDAsync(p[k][0], host, 4, s)); CK(cuStreamSynchronize(s)); t[i] = now_ns() - t0; }
		printf("{\"case\": \"h2d-4B+sync\", \"memory\": \"%s\", \"ns\": %.0f}\n", kind[k], median(t));
		for (int i = 0; i < N; i++) { double t0 = now_ns(); CK(cuMemcpyDtoDAsync(p[k][1], p[k][0], 16384, s)); t[i] = now_ns() - t0; if (i % 64 == 63) CK(cuStreamSynchronize(s)); }
		CK(cuStreamSynchronize(s));
		printf("{\"case\": \"d2d-16KiB-call\", \"memory\": \"%s\", \"ns\": %.0f}\n", kind[k], median(t));
		for (int i = 0; i < N; i++) { double t0 = now_ns(); CK(cuMemcpyDtoDAsync(p[k][1], p[k][0], 16384, s)); CK(cuStreamSynchronize(s)); t[i] = now_ns() - t0; }
		printf("{\"case\": \"d2d-16KiB+sync\", \"memory\": \"%s\", \"ns\": %.0f}\n", kind[k], median(t));
		for (int i = 0; i < N; i++) { double t0 = now_ns(); CK(cuMemsetD32Async(p[k][1], 0, 4096, s)); t[i] = now_ns() - t0; if (i % 64 == 63) CK(cuStreamSynchronize(s)); }
		CK(cuStreamSynchronize(s));
		printf("{\"case\": \"memset-16KiB-call\", \"memory\": \"%s\", \"ns\": %.0f}\n", kind[k], median(t));
		for (int i = 0; i < N; i++) { unsigned mt; double t0 = now_ns(); CK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p[k][0] + 4096)); t[i] = now_ns() - t0; }
		printf("{\"case\": \"pointer-attribute\", \"memory\": \"%s\", \"ns\": %.0f}\n", kind[k], median(t));
	}
	return 0;
}
