/*
 * CUDA graphs. A graph's kernels are launched by the driver, not through
 * cuLaunchKernel, so Ember scans their arguments when the graph is
 * instantiated (kernel nodes, and the kernel nodes of child graphs) and
 * replays that scan at every cuGraphLaunch: the static split and adaptive
 * demand see graph kernels as they see any other. Launches captured into
 * a graph are placed here, when it runs, not as they are captured
 * (hooks_capture.c). Its copy and memset nodes are copies into their
 * destinations, each time it runs (copies.h).
 *
 * A graph launch whose allocations leave the strategy nothing to decide
 * kernel by kernel (all split under static; all resident below the low
 * watermark under adaptive) is placed once, for every allocation its
 * kernels reference, not once per kernel: llama.cpp's token is one graph
 * of hundreds of kernels, captured anew each token, and placing each
 * captured launch and then each kernel's replayed scan cost it about
 * 0.6 ms a token on the H200 with everything resident.
 */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

#include "context_teardown.h"
#include "copies.h"
#include "locks.h"
#include "state.h"
#include "gpu_busy.h"
#include "grow.h"
#include "kernels.h"
#include "launch_scan.h"
#include "placement.h"
#include "read_dup.h"
#include "shim.h"
#include "tracer.h"

enum { MAX_DEPTH = 8 };

/* What one executable graph's kernels reference. */
struct graph_record {
	CUgraphExec exec;
	struct ember_scan *scans;
	size_t n, cap;
	/* every allocation they reference, by its base (unbound); whole_ok: all fitted in one scan */
	struct ember_scan whole;
	bool whole_ok;
	uint64_t kernels_gen; /* what the kernel table had learned when the scans last took it */
	CUcontext ctx;        /* instantiated in: its teardown destroys the executable */
	struct graph_record *next;
};

/* Add a kernel's allocations (s bound) to the graph's whole. */
static void add_to_whole(struct graph_record *g, const struct ember_scan *s)
{
	for (unsigned i = 0; i < s->n && g->whole_ok; i++) {
		uint64_t base = s->allocs[i]->base;
		unsigned k = 0;
		while (k < g->whole.nptrs && g->whole.ptrs[k].addr != base)
			k++;
		if (k < g->whole.nptrs)
			continue;
		if (k == EMBER_SCAN_MAX_REFS) {
			g->whole_ok = false; /* more than a scan holds: kernel by kernel */
			break;
		}
		g->whole.ptrs[k].addr = base;
		g->whole.nptrs = k + 1;
	}
}

#define records_lock ember_lock_graphs
static struct graph_record *records;

static void keep_scan(struct graph_record *g, struct ember_scan *s)
{
	if (s->nptrs == 0) {
		ember_scan_release(s);
		return;
	}
	add_to_whole(g, s);
	ember_scan_unbind(s);
	if (ember_grow(&g->scans, g->n, &g->cap, sizeof *g->scans, 8))
		g->scans[g->n++] = *s;
}

static void scan_graph(struct graph_record *g, CUgraph graph, int depth)
{
	size_t n = 0;
	if (depth > MAX_DEPTH || EMBER_REAL(cuGraphGetNodes)(graph, NULL, &n) != CUDA_SUCCESS || n == 0)
		return;
	CUgraphNode *nodes = malloc(n * sizeof *nodes);
	if (!nodes || EMBER_REAL(cuGraphGetNodes)(graph, nodes, &n) != CUDA_SUCCESS) {
		free(nodes);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		CUgraphNodeType type;
		if (EMBER_REAL(cuGraphNodeGetType)(nodes[i], &type) != CUDA_SUCCESS)
			continue;
		if (type == CU_GRAPH_NODE_TYPE_KERNEL) {
			CUDA_KERNEL_NODE_PARAMS p;
			if (EMBER_REAL(cuGraphKernelNodeGetParams_v2)(nodes[i], &p) != CUDA_SUCCESS)
				continue;
			struct ember_scan s;
			ember_scan_launch(p.func ? p.func : (CUfunction)p.kern, (struct ember_grid){ p.gridDimX, p.gridDimY },
					  p.kernelParams, p.extra, &s);
			keep_scan(g, &s);
		} else if (type == CU_GRAPH_NODE_TYPE_MEMCPY || type == CU_GRAPH_NODE_TYPE_MEMSET) {
			if (!__atomic_load_n(&ember_read_dup_watching, __ATOMIC_RELAXED))
				continue;
			CUDA_MEMCPY3D c;
			CUDA_MEMSET_NODE_PARAMS m;
			if (type == CU_GRAPH_NODE_TYPE_MEMCPY && EMBER_REAL(cuGraphMemcpyNodeGetParams)(nodes[i], &c) == CUDA_SUCCESS)
				ember_copy_into_3d(&c);
			else if (type == CU_GRAPH_NODE_TYPE_MEMSET &&
				 EMBER_REAL(cuGraphMemsetNodeGetParams)(nodes[i], &m) == CUDA_SUCCESS)
				ember_memset_node_into(&m);
		} else if (type == CU_GRAPH_NODE_TYPE_GRAPH) {
			CUgraph child;
			if (EMBER_REAL(cuGraphChildGraphNodeGetGraph)(nodes[i], &child) == CUDA_SUCCESS)
				scan_graph(g, child, depth + 1);
		}
	}
	free(nodes);
}

static void free_record(struct graph_record *g)
{
	free(g->scans);
	free(g);
}

static void forget(CUgraphExec exec)
{
	ember_lock(&records_lock);
	for (struct graph_record **p = &records; *p; p = &(*p)->next)
		if ((*p)->exec == exec) {
			struct graph_record *g = *p;
			*p = g->next;
			free_record(g);
			break;
		}
	ember_unlock(&records_lock);
}

static void instantiated(CUgraphExec exec, CUgraph graph)
{
	if (!ember_active)
		return;
	forget(exec); /* a handle the driver hands out again: what was kept of the one before is stale */
	if (!(ember_strategy->scans || ember_tracing) || !ember_table_any_placed(EMBER_TABLE))
		return;
	struct graph_record *g = calloc(1, sizeof *g);
	if (!g)
		return;
	g->exec = exec;
	EMBER_REAL(cuCtxGetCurrent)(&g->ctx);
	g->whole_ok = true;
	g->kernels_gen = ember_kernels_generation();
	scan_graph(g, graph, 0);
	if (g->n == 0) {
		free_record(g);
		return;
	}
	ember_lock(&records_lock);
	g->next = records;
	records = g;
	ember_unlock(&records_lock);
}

static struct graph_record *find(CUgraphExec exec) /* records_lock held */
{
	struct graph_record *g = records;
	while (g && g->exec != exec)
		g = g->next;
	return g;
}

/*
 * Place the graph's launch once for all its allocations, if they leave
 * nothing to decide kernel by kernel. A trace records every kernel.
 */
static bool launched_whole(CUgraphExec exec, CUstream stream, bool per_thread)
{
	if (ember_tracing)
		return false;
	struct ember_scan whole;
	ember_lock(&records_lock);
	struct graph_record *g = find(exec);
	bool ok = g && g->whole_ok;
	if (ok)
		whole = g->whole;
	ember_unlock(&records_lock);
	if (!ok)
		return false;
	ember_scan_rebind(&whole);
	ok = ember_placement_settled(&whole);
	if (ok)
		ember_placement_launch(&whole, stream, per_thread);
	ember_scan_release(&whole);
	return ok;
}

/*
 * The copied scans of exec's record take what launches have taught since
 * they were made, and so does the record, unless it changed meanwhile: a
 * graph instantiated before its kernels ran eagerly (llama-bench without
 * a prompt captures the first token) would otherwise replay the first
 * guesses for good. The kernel table's lock comes before the graphs' (locks.h):
 * none is held here.
 */
static void relearn(CUgraphExec exec, struct ember_scan *copy, size_t n, uint64_t gen)
{
	for (size_t i = 0; i < n; i++)
		ember_kernel_learned(copy[i].f, copy[i].elem_size, &copy[i].declared, &copy[i].inside);
	ember_lock(&records_lock);
	struct graph_record *g = find(exec);
	if (g && g->n == n) {
		for (size_t i = 0; i < n; i++) {
			memcpy(g->scans[i].elem_size, copy[i].elem_size, sizeof copy[i].elem_size);
			g->scans[i].inside = copy[i].inside;
		}
		g->kernels_gen = gen;
	}
	ember_unlock(&records_lock);
}

static void launched(CUgraphExec exec, CUstream stream, bool per_thread)
{
	if (!ember_active)
		return;
	ember_gpu_busy_launch(stream, per_thread);
	if (!(ember_strategy->scans || ember_tracing))
		return;
	if (launched_whole(exec, stream, per_thread))
		return;
	uint64_t gen = ember_kernels_generation();
	ember_lock(&records_lock);
	struct graph_record *g = find(exec);
	size_t n = g ? g->n : 0;
	struct ember_scan *copy = n ? malloc(n * sizeof *copy) : NULL;
	if (copy)
		memcpy(copy, g->scans, n * sizeof *copy);
	bool stale = g && g->kernels_gen != gen;
	ember_unlock(&records_lock);
	if (copy && stale)
		relearn(exec, copy, n, gen);
	for (size_t i = 0; copy && i < n; i++) {
		ember_scan_rebind(&copy[i]);
		ember_trace_launch(&copy[i], stream, per_thread);
		ember_placement_launch(&copy[i], stream, per_thread);
		ember_scan_release(&copy[i]);
	}
	free(copy);
}

void ember_graphs_forget_context(CUcontext ctx)
{
	ember_lock(&records_lock);
	for (struct graph_record **p = &records; *p;) {
		struct graph_record *g = *p;
		if (g->ctx != ctx) {
			p = &g->next;
			continue;
		}
		*p = g->next;
		free_record(g);
	}
	ember_unlock(&records_lock);
}


/* r: the driver's result of instantiating hGraph as *exec. */
static CUresult after_instantiating(CUresult r, const CUgraphExec *exec, CUgraph hGraph)
{
	if (r == CUDA_SUCCESS)
		instantiated(*exec, hGraph);
	return r;
}

/* r: the driver's result of updating exec from hGraph: instantiated() forgets the old graph's scans first. */
static CUresult after_updating(CUresult r, CUgraphExec exec, CUgraph hGraph)
{
	if (r == CUDA_SUCCESS)
		instantiated(exec, hGraph);
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
							  unsigned long long flags)
{
	CUresult r = EMBER_REAL(cuGraphInstantiateWithFlags)(phGraphExec, hGraph, flags);
	return after_instantiating(r, phGraphExec, hGraph);
}

EMBER_PUBLIC CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
							   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	CUresult r = EMBER_REAL(cuGraphInstantiateWithParams)(phGraphExec, hGraph, instantiateParams);
	return after_instantiating(r, phGraphExec, hGraph);
}

EMBER_PUBLIC CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
								CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	CUresult r = EMBER_REAL(cuGraphInstantiateWithParams_ptsz)(phGraphExec, hGraph, instantiateParams);
	return after_instantiating(r, phGraphExec, hGraph);
}

/* The first form, which cuGetProcAddress answers at CUDA 10's versions. */
EMBER_PUBLIC CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
						 char *logBuffer, size_t bufferSize)
{
	CUresult r = EMBER_REAL(cuGraphInstantiate)(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
	return after_instantiating(r, phGraphExec, hGraph);
}

EMBER_PUBLIC CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
						    char *logBuffer, size_t bufferSize)
{
	CUresult r = EMBER_REAL(cuGraphInstantiate_v2)(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
	return after_instantiating(r, phGraphExec, hGraph);
}

EMBER_PUBLIC CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	launched(hGraphExec, hStream, false);
	EMBER_TRACE_TIMED(EMBER_REAL(cuGraphLaunch)(hGraphExec, hStream));
}

EMBER_PUBLIC CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	launched(hGraphExec, hStream, true);
	EMBER_TRACE_TIMED(EMBER_REAL(cuGraphLaunch_ptsz)(hGraphExec, hStream));
}

/*
 * An executable updated from a new graph (llama.cpp's instance takes each
 * token's capture this way) runs the new graph's arguments: scan it again.
 */
EMBER_PUBLIC CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
						   CUgraphExecUpdateResultInfo *resultInfo)
{
	CUresult r = EMBER_REAL(cuGraphExecUpdate_v2)(hGraphExec, hGraph, resultInfo);
	return after_updating(r, hGraphExec, hGraph);
}

/* The first form, which cuGetProcAddress answers at CUDA 10.2 to 11's versions. */
EMBER_PUBLIC CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
						CUgraphExecUpdateResult *updateResult_out)
{
	CUresult r = EMBER_REAL(cuGraphExecUpdate)(hGraphExec, hGraph, hErrorNode_out, updateResult_out);
	return after_updating(r, hGraphExec, hGraph);
}

EMBER_PUBLIC CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	forget(hGraphExec);
	return EMBER_REAL(cuGraphExecDestroy)(hGraphExec);
}
