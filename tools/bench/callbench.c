/*
 * ember-callbench: nanoseconds per driver call, through Ember and directly.
 *
 *   ember-callbench DRIVER SHIM [LABEL]
 *   ember-callbench --launch SIM SHIM [LABEL]
 *   ember-callbench --graph SIM SHIM [LABEL]
 *
 * DRIVER is the library that answers (the simulated driver, or the real
 * libcuda.so.1); SHIM is Ember, told to forward to DRIVER. Both are loaded
 * into this one process and timed back to back, so the two columns share
 * the machine's state. Each figure is the median of 9 runs of N calls.
 * Prints one JSON record per (call, variant) on stdout.
 *
 * --launch times kernel launches on the simulated driver (launch.c here):
 * the launch hook's cost in EMBER_MODE, on this CPU, without a GPU.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launch.h"

enum { RUNS = 9 };

double bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct lib {
	const char *variant;
	__typeof__(&cuDriverGetVersion) get_version;
	__typeof__(&cuCtxGetCurrent) ctx_current;
	__typeof__(&cuGetProcAddress_v2) proc_address;
};

/* name in h, or the program ends with one line saying which is missing. */
void *bench_symbol(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "ember-callbench: %s not found\n", name);
		exit(1);
	}
	return p;
}

static struct lib open_lib(const char *path, const char *variant)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "ember-callbench: %s\n", dlerror());
		exit(1);
	}
	return (struct lib){ variant, bench_symbol(h, "cuDriverGetVersion"), bench_symbol(h, "cuCtxGetCurrent"),
			     bench_symbol(h, "cuGetProcAddress_v2") };
}

/* The benchmarked calls; each returns nonzero on a driver error. */
static int call_version(const struct lib *l)
{
	int v;
	return l->get_version(&v);
}

static int call_ctx(const struct lib *l)
{
	CUcontext c;
	return l->ctx_current(&c);
}

static int call_procaddr_forwarded(const struct lib *l)
{
	void *p;
	return l->proc_address("cuMemAlloc", &p, 13000, 0, NULL);
}

static int call_procaddr_rewritten(const struct lib *l)
{
	void *p;
	return l->proc_address("cuGetProcAddress", &p, 12000, 0, NULL);
}

static int usage(void)
{
	fprintf(stderr, "usage: ember-callbench DRIVER SHIM [LABEL]\n"
			"       ember-callbench --launch SIM SHIM [LABEL]\n"
			"       ember-callbench --graph SIM SHIM [LABEL]\n");
	return 2;
}

static double median_ns_per_call(const struct lib *l, int (*call)(const struct lib *), long n)
{
	double t[RUNS];
	for (int r = 0; r < RUNS; r++) {
		double t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			if (call(l)) {
				fprintf(stderr, "ember-callbench: a call failed under %s\n", l->variant);
				exit(1);
			}
		t[r] = (bench_now_ns() - t0) / (double)n;
	}
	qsort(t, RUNS, sizeof t[0], bench_cmp_double);
	return t[RUNS / 2];
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--launch"))
		return argc < 4 ? usage() : launch_bench(argv[2], argv[3], argc > 4 ? argv[4] : "simulated");
	if (argc > 1 && !strcmp(argv[1], "--graph"))
		return argc < 4 ? usage() : graph_bench(argv[2], argv[3], argc > 4 ? argv[4] : "simulated");
	if (argc < 3)
		return usage();
	const char *label = argc > 3 ? argv[3] : "unlabelled";
	bench_real_driver(argv[1]);
	struct lib libs[2] = { open_lib(argv[1], "direct"), open_lib(argv[2], "ember") };
	for (int i = 0; i < 2; i++) {
		int v;
		if (libs[i].get_version(&v) != CUDA_SUCCESS) {
			fprintf(stderr, "ember-callbench: cuDriverGetVersion failed under %s\n", libs[i].variant);
			return 1;
		}
	}
	__typeof__(&cuInit) init = (__typeof__(&cuInit))bench_symbol(dlopen(argv[1], RTLD_NOW), "cuInit");
	if (init(0) != CUDA_SUCCESS) {
		fprintf(stderr, "ember-callbench: cuInit failed\n");
		return 1;
	}
	const struct {
		const char *name;
		int (*call)(const struct lib *);
		long n;
	} calls[] = {
		{ "cuDriverGetVersion", call_version, 2000000 },
		{ "cuCtxGetCurrent", call_ctx, 2000000 },
		{ "cuGetProcAddress_v2(cuMemAlloc)", call_procaddr_forwarded, 200000 },
		{ "cuGetProcAddress_v2(cuGetProcAddress)", call_procaddr_rewritten, 200000 },
	};
	for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++)
		for (int i = 0; i < 2; i++) {
			median_ns_per_call(&libs[i], calls[c].call, calls[c].n / 10); /* warm */
			double ns = median_ns_per_call(&libs[i], calls[c].call, calls[c].n);
			printf("{\"bench\": \"call-overhead\", \"driver\": \"%s\", \"call\": \"%s\", "
			       "\"variant\": \"%s\", \"ns_per_call\": %.2f, \"calls\": %ld, \"runs\": %d}\n",
			       label, calls[c].name, libs[i].variant, ns, calls[c].n, RUNS);
		}
	return 0;
}
