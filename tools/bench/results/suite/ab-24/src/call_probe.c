/* Session 24 diagnostic: what the calls Ember's launch hook makes cost on this machine (median ns of
 * 20000, after 1000 untimed): the clocks it reads, getrusage (host phases) and the real driver's
 * context queries. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

enum { N = 20000 };
static double t[N];
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double now_ns(void) { struct timespec s; clock_gettime(CLOCK_MONOTONIC, &s); return s.tv_sec * 1e9 + s.tv_nsec; }
#define TIME(name, stmt) do { for (int i_ = 0; i_ < 1000; i_++) { stmt; } \
	for (int i_ = 0; i_ < N; i_++) { double t0_ = now_ns(); for (int k_ = 0; k_ < 16; k_++) { stmt; } t[i_] = (now_ns() - t0_) / 16; } \
	qsort(t, N, sizeof *t, cmp); printf("{\"call\": \"%s\", \"ns\": %.1f, \"p90_ns\": %.1f}\n", name, t[N / 2], t[N * 9 / 10]); } while (0)

int main(void)
{
	struct timespec ts; struct rusage ru; CUdevice dev; CUcontext ctx, cur;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
		return fprintf(stderr, "no driver\n"), 1;
	TIME("clock_gettime(MONOTONIC)", clock_gettime(CLOCK_MONOTONIC, &ts));
	TIME("clock_gettime(MONOTONIC_COARSE)", clock_gettime(CLOCK_MONOTONIC_COARSE, &ts));
	TIME("getrusage(SELF)", getrusage(RUSAGE_SELF, &ru));
	TIME("getrusage(THREAD)", getrusage(RUSAGE_THREAD, &ru));
	TIME("cuCtxGetCurrent", cuCtxGetCurrent(&cur));
	TIME("cuCtxGetDevice", cuCtxGetDevice(&dev));
	return 0;
}
