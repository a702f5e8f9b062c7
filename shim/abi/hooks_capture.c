/*
 * Stream capture. A launch into a stream being captured is recorded into
 * a graph, not run: Ember places nothing for it then, and places the
 * graph's kernels when the graph is launched (hooks_graph.c). llama.cpp
 * captures its graph again for every token, so each captured launch placed
 * as if it ran cost as much as the replay at cuGraphLaunch.
 *
 * Asking the driver whether a stream captures costs a call, so Ember
 * counts the captures it saw begin and not yet end (a stream destroyed
 * while it captures ends its capture), and asks only while that count is
 * not zero.
 *
 * The same count says when a program's thread must take relaxed capture
 * mode around Ember's own calls in a hook (capture.h); the worker is in
 * relaxed mode from its start.
 */
#include <cuda.h>

#include "capture.h"
#include "shim.h"

/* Not declared by cuda.h: their prototypes, for EMBER_REAL's types. */
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
						  const CUgraphEdgeData *dependencyData, size_t numDependencies,
						  CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);

static int captures; /* begun and not yet ended, as far as Ember saw */

static CUresult begun(CUresult r)
{
	if (r == CUDA_SUCCESS)
		__atomic_add_fetch(&captures, 1, __ATOMIC_RELAXED);
	return r;
}

static CUresult ended(CUresult r)
{
	/* an invalidated capture ends too, with its error */
	if (r == CUDA_SUCCESS || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) {
		int n = __atomic_load_n(&captures, __ATOMIC_RELAXED);
		while (n > 0 && !__atomic_compare_exchange_n(&captures, &n, n - 1, false, __ATOMIC_RELAXED,
							     __ATOMIC_RELAXED))
			;
	}
	return r;
}

bool ember_capture_under_way(void)
{
	return __atomic_load_n(&captures, __ATOMIC_RELAXED) != 0;
}

void ember_capture_relax_worker(void)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUresult r = EMBER_REAL(cuThreadExchangeStreamCaptureMode)(&mode);
	if (r != CUDA_SUCCESS)
		ember_debug("the worker keeps the default capture mode (CUresult %d): its calls may break a "
			    "program's global capture",
			    (int)r);
}

struct ember_capture_relaxed ember_capture_relax(void)
{
	struct ember_capture_relaxed r = { .was = CU_STREAM_CAPTURE_MODE_RELAXED };
	if (ember_capture_under_way())
		r.changed = EMBER_REAL(cuThreadExchangeStreamCaptureMode)(&r.was) == CUDA_SUCCESS;
	return r;
}

void ember_capture_restore(struct ember_capture_relaxed r)
{
	if (r.changed)
		EMBER_REAL(cuThreadExchangeStreamCaptureMode)(&r.was);
}

bool ember_stream_captured(CUstream stream, bool per_thread)
{
	if (!__atomic_load_n(&captures, __ATOMIC_RELAXED))
		return false;
	CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
	CUresult r = per_thread ? EMBER_REAL(cuStreamIsCapturing_ptsz)(stream, &status)
				: EMBER_REAL(cuStreamIsCapturing)(stream, &status);
	/* an invalidated capture runs nothing either */
	return r == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
	return begun(EMBER_REAL(cuStreamBeginCapture)(hStream));
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
	return begun(EMBER_REAL(cuStreamBeginCapture_ptsz)(hStream));
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	return begun(EMBER_REAL(cuStreamBeginCapture_v2)(hStream, mode));
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	return begun(EMBER_REAL(cuStreamBeginCapture_v2_ptsz)(hStream, mode));
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
							  const CUgraphNode *dependencies,
							  const CUgraphEdgeData *dependencyData, size_t numDependencies,
							  CUstreamCaptureMode mode)
{
	return begun(EMBER_REAL(cuStreamBeginCaptureToGraph)(hStream, hGraph, dependencies, dependencyData,
							    numDependencies, mode));
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
							       const CUgraphNode *dependencies,
							       const CUgraphEdgeData *dependencyData,
							       size_t numDependencies, CUstreamCaptureMode mode)
{
	return begun(EMBER_REAL(cuStreamBeginCaptureToGraph_ptsz)(hStream, hGraph, dependencies, dependencyData,
								 numDependencies, mode));
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	return ended(EMBER_REAL(cuStreamEndCapture)(hStream, phGraph));
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	return ended(EMBER_REAL(cuStreamEndCapture_ptsz)(hStream, phGraph));
}

/*
 * A stream destroyed while it captures takes its capture with it, which
 * then counts as ended: a count left high would keep read_dup.c's advice
 * withdrawals waiting for good, and make each launch ask the driver.
 */
EMBER_PUBLIC CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
	bool capturing = ember_stream_captured(hStream, false);
	CUresult r = EMBER_REAL(cuStreamDestroy_v2)(hStream);
	if (r == CUDA_SUCCESS && capturing)
		ended(CUDA_SUCCESS);
	return r;
}
