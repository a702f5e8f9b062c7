/*
 * CUDA graphs, the part programs use to replay kernels: a graph is a list
 * of kernel nodes, each holding its own copy of the arguments (as the
 * driver does), memset nodes and one-dimensional memcpy nodes,
 * instantiated into an executable copy and launched on a stream, node
 * after node. Dependencies are recorded order: the simulated
 * GPU runs one kernel at a time anyway.
 */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "sim.h"

struct sim_node {
	CUgraphNodeType type;           /* a kernel, a memset or a memcpy */
	CUDA_MEMSET_NODE_PARAMS memset; /* a memset's */
	CUDA_MEMCPY3D memcpy;           /* a memcpy's: one row (sim_copy_node) */
	CUDA_KERNEL_NODE_PARAMS params; /* a kernel's; kernelParams points into args */
	void *arg_ptrs[SIM_MAX_PARAMS];
	_Alignas(16) unsigned char args[SIM_MAX_PARAM_BYTES];
	struct sim_graph *owner;
};

struct sim_graph {
	struct sim_node **nodes;
	size_t n, cap;
	bool executable;
};

static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;

CUresult sim_graph_create(CUgraph *out)
{
	struct sim_graph *g = calloc(1, sizeof *g);
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = (CUgraph)g;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	return sim_graph_create(phGraph);
}

/* Copy each argument by the kernel's own sizes: the node keeps values, not the caller's pointers. */
static CUresult copy_node(struct sim_node *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct sim_func *f;
	CUresult r = sim_func_check(p->func, &f);
	if (r != CUDA_SUCCESS)
		return r;
	if (!p->kernelParams && f->kernel->nparams)
		return CUDA_ERROR_INVALID_VALUE; /* packed `extra` buffers are not supported in graphs here */
	n->params = *p;
	for (unsigned i = 0; i < f->kernel->nparams; i++) {
		memcpy(n->args + f->kernel->offsets[i], p->kernelParams[i], f->kernel->sizes[i]);
		n->arg_ptrs[i] = n->args + f->kernel->offsets[i];
	}
	n->params.kernelParams = n->arg_ptrs;
	n->params.extra = NULL;
	return CUDA_SUCCESS;
}

/* Append n to g, which takes it; freed on failure. */
static CUresult add_node(struct sim_graph *g, struct sim_node *n, CUgraphNode *out)
{
	pthread_mutex_lock(&graph_lock);
	if (!ember_grow(&g->nodes, g->n, &g->cap, sizeof *g->nodes, 8)) {
		pthread_mutex_unlock(&graph_lock);
		free(n);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	n->owner = g;
	g->nodes[g->n++] = n;
	pthread_mutex_unlock(&graph_lock);
	*out = (CUgraphNode)n;
	return CUDA_SUCCESS;
}

static CUresult add_kernel(struct sim_graph *g, const CUDA_KERNEL_NODE_PARAMS *nodeParams, CUgraphNode *out)
{
	struct sim_node *n = calloc(1, sizeof *n);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult r = copy_node(n, nodeParams);
	if (r != CUDA_SUCCESS) {
		free(n);
		return r;
	}
	return add_node(g, n, out);
}

CUresult sim_graph_add_kernel(CUgraph graph, const CUDA_KERNEL_NODE_PARAMS *p)
{
	CUgraphNode node;
	return add_kernel((struct sim_graph *)graph, p, &node);
}

CUresult sim_graph_add_memset(CUgraph graph, const CUDA_MEMSET_NODE_PARAMS *p)
{
	CUgraphNode node;
	return cuGraphAddMemsetNode(&node, graph, NULL, 0, p, NULL);
}

SIM_EXPORT CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
						    const CUgraphNode *dependencies, size_t numDependencies,
						    const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct sim_graph *g = (struct sim_graph *)hGraph;
	if (!phGraphNode || !g || !nodeParams || (numDependencies && !dependencies))
		return CUDA_ERROR_INVALID_VALUE;
	return add_kernel(g, nodeParams, phGraphNode);
}

SIM_EXPORT CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
						 const CUgraphNode *dependencies, size_t numDependencies,
						 const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
	struct sim_graph *g = (struct sim_graph *)hGraph;
	if (!phGraphNode || !g || !memsetParams || (numDependencies && !dependencies))
		return CUDA_ERROR_INVALID_VALUE;
	unsigned size = memsetParams->elementSize;
	if ((size != 1 && size != 2 && size != 4) || !memsetParams->width || !memsetParams->height)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_node *n = calloc(1, sizeof *n);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->type = CU_GRAPH_NODE_TYPE_MEMSET;
	n->memset = *memsetParams;
	return add_node(g, n, phGraphNode);
}

CUresult sim_graph_add_memcpy(CUgraph graph, const CUDA_MEMCPY3D *p)
{
	CUgraphNode node;
	return cuGraphAddMemcpyNode(&node, graph, NULL, 0, p, NULL);
}

/* Only what a one-dimensional copy asks for: the simulated driver's copies have no pitch, offsets or arrays. */
static bool one_row(const CUDA_MEMCPY3D *c)
{
	return c->Height <= 1 && c->Depth <= 1 && !c->srcXInBytes && !c->srcY && !c->srcZ && !c->srcLOD &&
	       !c->dstXInBytes && !c->dstY && !c->dstZ && !c->dstLOD && c->srcMemoryType != CU_MEMORYTYPE_ARRAY &&
	       c->dstMemoryType != CU_MEMORYTYPE_ARRAY;
}

SIM_EXPORT CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
						 const CUgraphNode *dependencies, size_t numDependencies,
						 const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
	(void)ctx;
	struct sim_graph *g = (struct sim_graph *)hGraph;
	if (!phGraphNode || !g || !copyParams || (numDependencies && !dependencies))
		return CUDA_ERROR_INVALID_VALUE;
	if (!one_row(copyParams))
		return CUDA_ERROR_NOT_SUPPORTED;
	struct sim_node *n = calloc(1, sizeof *n);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->type = CU_GRAPH_NODE_TYPE_MEMCPY;
	n->memcpy = *copyParams;
	return add_node(g, n, phGraphNode);
}

SIM_EXPORT CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams)
{
	struct sim_node *n = (struct sim_node *)hNode;
	if (!n || !nodeParams || n->type != CU_GRAPH_NODE_TYPE_MEMCPY)
		return CUDA_ERROR_INVALID_VALUE;
	*nodeParams = n->memcpy;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
	struct sim_node *n = (struct sim_node *)hNode;
	if (!n || !nodeParams || n->type != CU_GRAPH_NODE_TYPE_MEMSET)
		return CUDA_ERROR_INVALID_VALUE;
	*nodeParams = n->memset;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	struct sim_graph *g = (struct sim_graph *)hGraph;
	if (!g || !numNodes)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&graph_lock);
	if (nodes)
		for (size_t i = 0; i < g->n && i < *numNodes; i++)
			nodes[i] = (CUgraphNode)g->nodes[i];
	*numNodes = g->n;
	pthread_mutex_unlock(&graph_lock);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
	if (!hNode || !type)
		return CUDA_ERROR_INVALID_VALUE;
	*type = ((struct sim_node *)hNode)->type;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct sim_node *n = (struct sim_node *)hNode;
	if (!n || !nodeParams || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	*nodeParams = n->params;
	return CUDA_SUCCESS;
}

/* A node's copy, pointing at its own arguments. */
static void copy_into(struct sim_node *to, const struct sim_node *from)
{
	*to = *from;
	for (unsigned k = 0; k < SIM_MAX_PARAMS; k++)
		if (from->arg_ptrs[k])
			to->arg_ptrs[k] = to->args + ((const unsigned char *)from->arg_ptrs[k] - from->args);
	to->params.kernelParams = to->arg_ptrs;
}

static void free_graph(struct sim_graph *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->nodes[i]);
	free(g->nodes);
	free(g);
}

/* An executable graph is a copy: later changes to the graph do not reach it. */
static CUresult instantiate(CUgraphExec *exec, CUgraph hGraph)
{
	struct sim_graph *g = (struct sim_graph *)hGraph;
	if (!exec || !g)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_graph *e = calloc(1, sizeof *e);
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&graph_lock);
	e->nodes = calloc(g->n ? g->n : 1, sizeof *e->nodes);
	for (size_t i = 0; e->nodes && i < g->n; i++) {
		e->nodes[i] = malloc(sizeof *e->nodes[i]);
		if (!e->nodes[i])
			break;
		copy_into(e->nodes[i], g->nodes[i]);
		e->n++;
	}
	bool ok = e->nodes && e->n == g->n;
	pthread_mutex_unlock(&graph_lock);
	e->executable = true;
	if (!ok) {
		free_graph(e);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	struct sim_ctx *ctx = NULL;
	sim_current_ctx(&ctx);
	sim_handle_add(SIM_H_GRAPH_EXEC, e, ctx); /* a context's teardown destroys its executables */
	*exec = (CUgraphExec)e;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
							unsigned long long flags)
{
	return instantiate(phGraphExec, hGraph);
}

/* The first form, which cuGetProcAddress answers at CUDA 10's versions. */
SIM_EXPORT CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
					       char *logBuffer, size_t bufferSize)
{
	if (phErrorNode)
		*phErrorNode = NULL;
	if (logBuffer && bufferSize)
		logBuffer[0] = 0;
	return instantiate(phGraphExec, hGraph);
}

/*
 * The executable takes the graph's node parameters where the two have the
 * same nodes running the same kernels (llama.cpp updates its instance with
 * each token's capture); any other change fails, leaving it as it was.
 */
SIM_EXPORT CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
						 CUgraphExecUpdateResultInfo *resultInfo)
{
	struct sim_graph *e = (struct sim_graph *)hGraphExec, *g = (struct sim_graph *)hGraph;
	if (!e || !sim_handle_valid(SIM_H_GRAPH_EXEC, e) || !g || !resultInfo)
		return CUDA_ERROR_INVALID_VALUE;
	memset(resultInfo, 0, sizeof *resultInfo);
	pthread_mutex_lock(&graph_lock);
	bool same = e->n == g->n;
	for (size_t i = 0; same && i < g->n; i++)
		same = e->nodes[i]->type == g->nodes[i]->type && e->nodes[i]->params.func == g->nodes[i]->params.func;
	if (same)
		for (size_t i = 0; i < g->n; i++)
			copy_into(e->nodes[i], g->nodes[i]);
	pthread_mutex_unlock(&graph_lock);
	resultInfo->result = same ? CU_GRAPH_EXEC_UPDATE_SUCCESS : CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
	return same ? CUDA_SUCCESS : CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
}

/* The first form, which cuGetProcAddress answers at CUDA 10.2 to 11's versions. */
SIM_EXPORT CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
					      CUgraphExecUpdateResult *updateResult_out)
{
	if (!hErrorNode_out || !updateResult_out)
		return CUDA_ERROR_INVALID_VALUE;
	CUgraphExecUpdateResultInfo info;
	CUresult r = cuGraphExecUpdate_v2(hGraphExec, hGraph, &info);
	*hErrorNode_out = info.errorNode;
	*updateResult_out = info.result;
	return r;
}

static CUresult graph_launch(CUgraphExec hGraphExec, CUstream hStream, bool per_thread)
{
	struct sim_graph *e = (struct sim_graph *)hGraphExec;
	if (!e || !sim_handle_valid(SIM_H_GRAPH_EXEC, e))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < e->n; i++) {
		const struct sim_node *n = e->nodes[i];
		CUresult r = n->type == CU_GRAPH_NODE_TYPE_MEMSET   ? sim_memset_node(&n->memset, hStream, per_thread)
			     : n->type == CU_GRAPH_NODE_TYPE_MEMCPY ? sim_copy_node(&n->memcpy, hStream, per_thread)
								    : sim_launch_node(&n->params, hStream, per_thread);
		if (r != CUDA_SUCCESS)
			return r;
	}
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream, false);
}

SIM_EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream, true);
}

SIM_EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	if (!hGraphExec || !sim_handle_remove(SIM_H_GRAPH_EXEC, hGraphExec))
		return CUDA_ERROR_INVALID_VALUE;
	free_graph((struct sim_graph *)hGraphExec);
	return CUDA_SUCCESS;
}

static void free_graph_void(void *g)
{
	free_graph(g);
}

void sim_graphs_release_ctx(struct sim_ctx *ctx)
{
	sim_handles_drain(SIM_H_GRAPH_EXEC, ctx, free_graph_void);
}

SIM_EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
	if (!hGraph)
		return CUDA_ERROR_INVALID_VALUE;
	free_graph((struct sim_graph *)hGraph);
	return CUDA_SUCCESS;
}
