/*
 * ember-callbench --launch SIM SHIM [LABEL]: nanoseconds per kernel launch
 * on the simulated driver, directly and through Ember, in the mode
 * EMBER_MODE names. It is launch_overhead.cu's loop without a GPU: a kernel
 * of managed pointers and a count, launched in batches of 64, each batch
 * timed whole and followed by an untimed synchronisation. The kernel does
 * nothing, so what differs between the two variants is Ember's hook.
 *
 * Four argument patterns:
 *   repeat     the same arguments at every launch (launch_overhead.cu's);
 *   rotate     the same kernel over eight tensors of one buffer in turn, so
 *              that no launch repeats the one before it;
 *   alternate  two kernels in turn with the same arguments, as a model's
 *              layers run different kernels one after another;
 *   torch      PyTorch's shape under manage-all: a count and one 512-byte
 *              struct by value (an elementwise kernel's offset calculator:
 *              three tensor pointers, then sizes and strides), over 256
 *              allocations of 2 MiB, the next three at each launch.
 * The variants alternate in rounds, in turn forwards and backwards, so
 * both see the same machine. One JSON record per (pattern, variant): the
 * median, 10th and 90th percentiles over batches, in ns per launch.
 * CALLBENCH_ARGS=repeat (rotate, alternate) runs one pattern alone, for a profile;
 * CALLBENCH_MEMORY=plain allocates the buffers with cuMemAlloc, so that
 * Ember places nothing (PyTorch's case without manage-all).
 * CALLBENCH_COLD=BYTES writes over that many bytes between launches, in
 * both variants: a real program's own work between two launches (Python's,
 * in PyTorch: some 20 us) leaves the hook's data out of the caches, which
 * a loop of launches alone never does.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember_sim.h"
#include "launch.h"

enum { BATCH = 64, BATCHES = 200, ROUNDS = 10, TENSORS = 8 };
enum pattern { REPEAT, ROTATE, ALTERNATE, TORCH, PATTERNS };
static const char *const pattern_names[PATTERNS] = { "repeat", "rotate", "alternate", "torch" };
enum { TORCH_ALLOCS = 256, TORCH_STRUCT = 512 };

/* The entry points a launch loop needs, from one library. */
struct api {
	const char *variant;
	__typeof__(&cuLaunchKernel) launch;
	__typeof__(&cuCtxSynchronize) sync;
};

/* What every launch passes: three managed pointers and a count, as launch_overhead.cu's axpy_head. */
struct args {
	CUfunction f, other; /* the same kernel under two names */
	CUfunction torch;    /* a count and a struct by value */
	CUdeviceptr x, y, scale;
	size_t n;
	CUdeviceptr tensors[TORCH_ALLOCS];
};

void bench_real_driver(const char *path)
{
	char *absolute = realpath(path, NULL);
	if (!absolute) {
		fprintf(stderr, "ember-callbench: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	setenv("EMBER_REAL_LIBCUDA", absolute, 1);
	free(absolute);
}

void *bench_open(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "ember-callbench: %s\n", dlerror());
		exit(1);
	}
	return h;
}

void bench_check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "ember-callbench: %s failed (CUresult %d)\n", what, r);
		exit(1);
	}
}

/* The kernel reads nothing: the simulated GPU's time is not what is measured. */
void bench_idle_kernel(const struct ember_sim_launch *launch, void **params)
{
	(void)launch;
	(void)params;
}

CUmodule bench_sim_module(void *shim)
{
	CUdevice d;
	CUcontext ctx;
	CUmodule mod;
	bench_check(SYM_CALL(shim, cuInit)(0), "cuInit");
	bench_check(SYM_CALL(shim, cuDeviceGet)(&d, 0), "cuDeviceGet");
	bench_check(SYM_CALL(shim, cuDevicePrimaryCtxRetain)(&ctx, d), "cuDevicePrimaryCtxRetain");
	bench_check(SYM_CALL(shim, cuCtxSetCurrent)(ctx), "cuCtxSetCurrent");
	bench_check(SYM_CALL(shim, cuModuleLoadData)(&mod, "ember-sim:"), "cuModuleLoadData");
	return mod;
}

/* CALLBENCH_MEMORY=plain: the buffers are device memory (cuMemAlloc), not managed. */
static bool plain_memory(void)
{
	const char *m = getenv("CALLBENCH_MEMORY");
	return m && !strcmp(m, "plain");
}

/* Through the shim: a context, the kernel, and managed buffers Ember places. */
static struct args set_up(void *sim, void *shim)
{
	static const size_t sizes[] = { 8, 8, 8, 8 }, torch_sizes[] = { 4, TORCH_STRUCT };
	if (SYM_CALL(sim, ember_sim_register_kernel)("ember_bench_head", bench_idle_kernel, sizes, 4) != 0 ||
	    SYM_CALL(sim, ember_sim_register_kernel)("ember_bench_other", bench_idle_kernel, sizes, 4) != 0 ||
	    SYM_CALL(sim, ember_sim_register_kernel)("ember_bench_torch", bench_idle_kernel, torch_sizes, 2) != 0) {
		fprintf(stderr, "ember-callbench: cannot register the benchmark kernel\n");
		exit(1);
	}
	struct args a = { .n = 64u << 20 }; /* 256 MiB of floats: several regions each */
	CUmodule mod = bench_sim_module(shim);
	bench_check(SYM_CALL(shim, cuModuleGetFunction)(&a.f, mod, "ember_bench_head"), "cuModuleGetFunction");
	bench_check(SYM_CALL(shim, cuModuleGetFunction)(&a.other, mod, "ember_bench_other"), "cuModuleGetFunction");
	bench_check(SYM_CALL(shim, cuModuleGetFunction)(&a.torch, mod, "ember_bench_torch"), "cuModuleGetFunction");
	if (plain_memory()) { /* nothing managed: Ember places nothing, as for PyTorch without manage-all */
		__typeof__(&cuMemAlloc_v2) alloc = SYM_CALL(shim, cuMemAlloc_v2);
		bench_check(alloc(&a.x, a.n * sizeof(float)), "cuMemAlloc");
		bench_check(alloc(&a.y, a.n * sizeof(float)), "cuMemAlloc");
		bench_check(alloc(&a.scale, sizeof(float)), "cuMemAlloc");
		for (unsigned i = 0; i < TORCH_ALLOCS; i++)
			bench_check(alloc(&a.tensors[i], 2u << 20), "cuMemAlloc");
		return a;
	}
	__typeof__(&cuMemAllocManaged) alloc = SYM_CALL(shim, cuMemAllocManaged);
	bench_check(alloc(&a.x, a.n * sizeof(float), CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
	bench_check(alloc(&a.y, a.n * sizeof(float), CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
	bench_check(alloc(&a.scale, sizeof(float), CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
	for (unsigned i = 0; i < TORCH_ALLOCS; i++)
		bench_check(alloc(&a.tensors[i], 2u << 20, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
	return a;
}

/* The torch pattern's launch k: three tensors in a struct, with the sizes and strides an offset calculator holds. */
static void launch_torch(const struct api *api, const struct args *a, unsigned k)
{
	union {
		unsigned char bytes[TORCH_STRUCT];
		struct {
			CUdeviceptr data[3];
			int64_t sizes[25], strides[3][8];
		} f;
	} s;
	memset(&s, 0, sizeof s);
	for (unsigned t = 0; t < 3; t++)
		s.f.data[t] = a->tensors[(3 * k + t) % TORCH_ALLOCS];
	s.f.sizes[0] = 1 << 19;
	for (unsigned t = 0; t < 3; t++)
		s.f.strides[t][0] = 4;
	int n = 1 << 19;
	void *params[] = { &n, s.bytes };
	bench_check(api->launch(a->torch, 1, 1, 1, 256, 1, 1, 0, NULL, params, NULL), "cuLaunchKernel");
}

/* Launch k of a batch: the same arguments, the k-th of eight tensors of x and y, or every other one the other kernel. */
static void launch_one(const struct api *api, const struct args *a, enum pattern p, unsigned k)
{
	if (p == TORCH) {
		static unsigned next; /* over batches too: every allocation is referenced, in turn */
		launch_torch(api, a, next++);
		return;
	}
	bool rotate = p == ROTATE;
	size_t tensor = rotate ? (k % TENSORS) * (a->n / TENSORS) * sizeof(float) : 0;
	CUdeviceptr x = a->x + tensor, y = a->y + tensor, scale = a->scale;
	size_t n = rotate ? a->n / TENSORS : a->n;
	void *params[] = { &x, &y, &scale, &n };
	CUfunction f = p == ALTERNATE && k % 2 ? a->other : a->f;
	bench_check(api->launch(f, 1, 1, 1, 256, 1, 1, 0, NULL, params, NULL), "cuLaunchKernel");
}

/* CALLBENCH_COLD: the bytes written over between launches, and where. */
static size_t cold_bytes;
static unsigned char *cold;

static void cool_caches(void)
{
	for (size_t i = 0; i < cold_bytes; i += 64)
		cold[i]++;
}

/* BATCHES batches, ns per launch of each into out[]. */
static void run_batches(const struct api *api, const struct args *a, enum pattern p, double *out)
{
	for (unsigned b = 0; b < BATCHES; b++) {
		double t0 = bench_now_ns();
		for (unsigned k = 0; k < BATCH; k++) {
			cool_caches();
			launch_one(api, a, p, k);
		}
		out[b] = (bench_now_ns() - t0) / BATCH;
		bench_check(api->sync(), "cuCtxSynchronize");
	}
}

static void report(const char *label, const char *mode, const char *pattern, const char *variant, double *ns,
		   size_t count)
{
	qsort(ns, count, sizeof *ns, bench_cmp_double);
	printf("{\"bench\": \"launch-hook\", \"driver\": \"%s\", \"mode\": \"%s\", \"memory\": \"%s\", "
	       "\"args\": \"%s\", \"variant\": \"%s\", \"median_ns\": %.1f, \"p10_ns\": %.1f, \"p90_ns\": %.1f, "
	       "\"launches\": %zu, \"cold_bytes\": %zu}\n",
	       label, mode, plain_memory() ? "plain" : "managed", pattern, variant, ns[count / 2], ns[count / 10],
	       ns[count * 9 / 10], count * BATCH, cold_bytes);
}

int launch_bench(const char *sim_path, const char *shim_path, const char *label)
{
	bench_real_driver(sim_path);
	const char *mode = getenv("EMBER_MODE") && *getenv("EMBER_MODE") ? getenv("EMBER_MODE") : "adaptive";
	void *sim = bench_open(sim_path), *shim = bench_open(shim_path);
	struct args a = set_up(sim, shim);
	struct api apis[2] = {
		{ "direct", SYM_CALL(sim, cuLaunchKernel), SYM_CALL(sim, cuCtxSynchronize) },
		{ "ember", SYM_CALL(shim, cuLaunchKernel), SYM_CALL(shim, cuCtxSynchronize) },
	};
	static double ns[2][ROUNDS * BATCHES];
	if (getenv("CALLBENCH_COLD")) {
		cold_bytes = strtoull(getenv("CALLBENCH_COLD"), NULL, 10);
		cold = cold_bytes ? calloc(1, cold_bytes) : NULL;
		cold_bytes = cold ? cold_bytes : 0;
	}
	const char *only = getenv("CALLBENCH_ARGS"); /* one pattern alone, for a profile */
	for (enum pattern p = 0; p < PATTERNS; p++) {
		if (only && *only && strcmp(only, pattern_names[p]))
			continue;
		for (int v = 0; v < 2; v++)
			run_batches(&apis[v], &a, p, ns[v]); /* warm: first placement, caches */
		for (unsigned r = 0; r < ROUNDS; r++)
			for (int i = 0; i < 2; i++) {
				int v = r % 2 ? 1 - i : i;
				run_batches(&apis[v], &a, p, ns[v] + r * BATCHES);
			}
		for (int v = 0; v < 2; v++)
			report(label, mode, pattern_names[p], apis[v].variant, ns[v], ROUNDS * BATCHES);
	}
	return 0;
}
