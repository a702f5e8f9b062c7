/*
 * Stream capture: between cuStreamBeginCapture and cuStreamEndCapture, a
 * stream's kernel launches are appended to a new graph instead of running
 * (launch.c), and cuStreamIsCapturing says so (stream.c). Only launches
 * are captured: the simulated driver's other stream work still runs, where
 * the driver would record it too. The legacy stream cannot capture, as on
 * the driver; the capture mode is accepted and not modelled.
 */
#include "sim.h"

static CUresult begin(CUstream h, bool per_thread, CUgraph into)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (s->kind == SIM_STREAM_LEGACY)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	CUgraph graph = into;
	if (!graph && (r = sim_graph_create(&graph)) != CUDA_SUCCESS)
		return r;
	CUgraph none = NULL;
	if (!__atomic_compare_exchange_n(&s->capture, &none, graph, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (!into)
			cuGraphDestroy(graph);
		return CUDA_ERROR_ILLEGAL_STATE; /* already capturing */
	}
	return CUDA_SUCCESS;
}

static CUresult end(CUstream h, bool per_thread, CUgraph *out)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	CUgraph graph = __atomic_exchange_n(&s->capture, NULL, __ATOMIC_ACQ_REL);
	if (!graph)
		return CUDA_ERROR_ILLEGAL_STATE; /* not capturing */
	*out = graph;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
	return begin(hStream, false, NULL);
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
	return begin(hStream, true, NULL);
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	(void)mode;
	return begin(hStream, false, NULL);
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	(void)mode;
	return begin(hStream, true, NULL);
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
							const CUgraphNode *dependencies,
							const CUgraphEdgeData *dependencyData, size_t numDependencies,
							CUstreamCaptureMode mode)
{
	(void)dependencies, (void)dependencyData, (void)numDependencies, (void)mode;
	return hGraph ? begin(hStream, false, hGraph) : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	return end(hStream, false, phGraph);
}

SIM_EXPORT CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	return end(hStream, true, phGraph);
}
