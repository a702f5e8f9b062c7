/*
 * ember-callbench --graph SIM SHIM [LABEL]: microseconds of host time per
 * cuGraphLaunch of a graph shaped like llama.cpp's token, on the simulated
 * driver, directly and through Ember in the mode EMBER_MODE names.
 *
 * llama.cpp's token is one graph of some 600 kernels, launched once the
 * host has waited for the last one. Ember replays each kernel's scan
 * before it forwards the launch, so its time there is time the GPU waits.
 * The graph: 40 layers of seven weight kernels (four of one size, three of
 * 2.7 times that, as attention's and the MLP's matrices), each over its
 * slice of one weights buffer, and eight small kernels over a KV cache and
 * a compute buffer. CALLBENCH_GRAPH_WEIGHTS sets the weights' bytes
 * (default 6G, 1.5x a 4G EMBER_BUDGET). Each launch is timed alone and
 * followed by an untimed synchronisation; the variants alternate. One JSON
 * record per variant: the median, 10th and 90th percentiles, and the mean.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ember_sim.h"
#include "launch.h"

enum { LAYERS = 40, PER_LAYER = 15, WEIGHT_KERNELS = 7, NODES = LAYERS * PER_LAYER, WARM = 20, LAUNCHES = 60 };


/* A node's arguments: where it reads, two compute-buffer pointers, a count of floats and a row length. */
struct node_args {
	CUdeviceptr src, dst, aux;
	int count, row;
	void *params[5];
};

/* CALLBENCH_GRAPH_WEIGHTS, read as Ember reads its sizes (config.h); a bad one ends the program saying so. */
static size_t weights_bytes(void)
{
	const char *s = getenv("CALLBENCH_GRAPH_WEIGHTS");
	struct ember_size size = { .bytes = 6ull << 30 };
	if (s && *s && (ember_parse_SIZE(s, &size) != 0 || size.per_mille || size.bytes < (1u << 20))) {
		fprintf(stderr, "ember-callbench: CALLBENCH_GRAPH_WEIGHTS=%s is not a size of 1M or more (such as 6G)\n", s);
		exit(2);
	}
	return (size_t)size.bytes;
}

/* The graph, through the shim: every node's arguments in args[NODES]. */
static CUgraphExec build(void *sim, void *shim, size_t wbytes, struct node_args *args)
{
	static const size_t sizes[] = { 8, 8, 8, 4, 4 };
	if (SYM_CALL(sim, ember_sim_register_kernel)("ember_bench_graph_node", bench_idle_kernel, sizes, 5) != 0) {
		fprintf(stderr, "ember-callbench: cannot register the graph's kernel\n");
		exit(1);
	}
	CUfunction f;
	bench_check(SYM_CALL(shim, cuModuleGetFunction)(&f, bench_sim_module(shim), "ember_bench_graph_node"),
		    "cuModuleGetFunction");
	CUdeviceptr weights, kv, compute;
	__typeof__(&cuMemAllocManaged) alloc = SYM_CALL(shim, cuMemAllocManaged);
	bench_check(alloc(&weights, wbytes, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged (weights)");
	bench_check(alloc(&kv, 200u << 20, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged (KV cache)");
	bench_check(alloc(&compute, 4u << 20, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged (compute buffer)");
	size_t layer = wbytes / LAYERS, unit = layer * 10 / (4 * 10 + 3 * 27);
	CUgraph graph;
	CUgraphNode prev = NULL, node;
	bench_check(SYM_CALL(shim, cuGraphCreate)(&graph, 0), "cuGraphCreate");
	for (unsigned l = 0, n = 0; l < LAYERS; l++) {
		size_t at = l * layer;
		for (unsigned k = 0; k < PER_LAYER; k++, n++) {
			struct node_args *a = &args[n];
			size_t bytes = k < 4 ? unit : unit * 27 / 10;
			if (k < WEIGHT_KERNELS) {
				a->src = weights + at;
				a->count = (int)(bytes / sizeof(float));
				at += bytes;
			} else {
				a->src = kv + (size_t)l * (5u << 20);
				a->count = 5120;
			}
			a->dst = compute + (k % 4) * 65536;
			a->aux = compute + (1u << 20);
			a->row = 5120;
			void *p[] = { &a->src, &a->dst, &a->aux, &a->count, &a->row };
			memcpy(a->params, p, sizeof p);
			CUDA_KERNEL_NODE_PARAMS kp = { .func = f, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
						       .blockDimX = 1, .blockDimY = 1, .blockDimZ = 1, .kernelParams = a->params };
			bench_check(SYM_CALL(shim, cuGraphAddKernelNode_v2)(&node, graph, prev ? &prev : NULL, prev ? 1 : 0, &kp),
			      "cuGraphAddKernelNode");
			prev = node;
		}
	}
	CUgraphExec exec;
	bench_check(SYM_CALL(shim, cuGraphInstantiateWithFlags)(&exec, graph, 0), "cuGraphInstantiateWithFlags");
	return exec;
}

int graph_bench(const char *sim_path, const char *shim_path, const char *label)
{
	bench_real_driver(sim_path);
	const char *mode = getenv("EMBER_MODE") && *getenv("EMBER_MODE") ? getenv("EMBER_MODE") : "adaptive";
	void *sim = bench_open(sim_path), *shim = bench_open(shim_path);
	static struct node_args args[NODES];
	size_t wbytes = weights_bytes();
	CUgraphExec exec = build(sim, shim, wbytes, args);
	struct {
		const char *variant;
		__typeof__(&cuGraphLaunch) launch;
		__typeof__(&cuCtxSynchronize) sync;
	} v[2] = { { "direct", SYM_CALL(sim, cuGraphLaunch), SYM_CALL(sim, cuCtxSynchronize) },
		   { "ember", SYM_CALL(shim, cuGraphLaunch), SYM_CALL(shim, cuCtxSynchronize) } };
	for (unsigned i = 0; i < WARM; i++) { /* Ember's placement settles as it would over the first tokens */
		bench_check(v[1].launch(exec, NULL), "cuGraphLaunch");
		bench_check(v[1].sync(), "cuCtxSynchronize");
	}
	static double us[2][LAUNCHES];
	for (unsigned i = 0; i < LAUNCHES; i++)
		for (unsigned k = 0; k < 2; k++) {
			unsigned w = i % 2 ? 1 - k : k;
			double t0 = bench_now_ns();
			bench_check(v[w].launch(exec, NULL), "cuGraphLaunch");
			us[w][i] = (bench_now_ns() - t0) / 1e3;
			bench_check(v[w].sync(), "cuCtxSynchronize");
		}
	for (unsigned w = 0; w < 2; w++) {
		double sum = 0; /* the mean too: a token pays every launch's time, its outliers' included */
		for (unsigned i = 0; i < LAUNCHES; i++)
			sum += us[w][i];
		qsort(us[w], LAUNCHES, sizeof us[w][0], bench_cmp_double);
		printf("{\"bench\": \"graph-launch\", \"driver\": \"%s\", \"mode\": \"%s\", \"nodes\": %d, "
		       "\"weights_bytes\": %zu, \"variant\": \"%s\", \"median_us\": %.1f, \"p10_us\": %.1f, "
		       "\"p90_us\": %.1f, \"mean_us\": %.1f, \"launches\": %d}\n",
		       label, mode, NODES, wbytes, v[w].variant, us[w][LAUNCHES / 2], us[w][LAUNCHES / 10],
		       us[w][LAUNCHES * 9 / 10], sum / LAUNCHES, LAUNCHES);
	}
	return 0;
}
