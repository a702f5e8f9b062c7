/*
 * Stream capture. A launch into a stream being captured is recorded into
 * a graph, not run: Ember places nothing for it then, and places the
 * graph's kernels when the graph is launched (hooks_graph.c). llama.cpp
 * captures its graph again for every token, so each captured launch placed
 * as if it ran cost as much as the replay at cuGraphLaunch.
 *
 * Asking the driver whether a stream captures costs a call, so Ember
 * counts the captures it saw begin and not yet end, with the streams that
 * began them (destroying one ends its capture; a capture may fork into
 * other streams, which end nothing), and asks only while that count is
 * not zero.
 *
 * The same count says when a program's thread must take relaxed capture
 * mode around Ember's own calls in a hook (capture.h); the worker is in
 * relaxed mode from its start.
 */
#include <cuda.h>
#include <stdint.h>

#include "capture.h"
#include "kept.h"
#include "context_teardown.h"
#include "shim.h"

/* Not declared by cuda.h: their prototypes, for EMBER_REAL's types. */
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
						  const CUgraphEdgeData *dependencyData, size_t numDependencies,
						  CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);

/*
 * The streams that began a capture not yet ended, by handle (0: a free
 * slot), and how many captures that is. A capture begun past the room
 * here is counted but ends only through its end's result. Two threads'
 * per-thread default streams share a handle; either's end ends one.
 */
enum { ORIGINS = 64 };
static uintptr_t origins[ORIGINS];
static int captures; /* begun and not yet ended, as far as Ember saw */

static uintptr_t origin_key(CUstream stream, bool per_thread)
{
	return (uintptr_t)(stream == NULL && per_thread ? CU_STREAM_PER_THREAD : stream);
}

/* Swap the first slot holding was for now: a stream's capture begun (0 for it) or ended (it for 0). */
static bool swap_origin(uintptr_t was, uintptr_t now)
{
	for (int i = 0; i < ORIGINS; i++) {
		uintptr_t expected = was;
		if (__atomic_compare_exchange_n(&origins[i], &expected, now, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	}
	return false;
}

/* Whether stream began a capture not yet ended. The legacy stream (0, a free slot's mark) never captures. */
static bool is_origin(CUstream stream, bool per_thread)
{
	uintptr_t key = origin_key(stream, per_thread);
	for (int i = 0; key && i < ORIGINS; i++)
		if (__atomic_load_n(&origins[i], __ATOMIC_RELAXED) == key)
			return true;
	return false;
}

/* Whether stream began a capture not yet ended, which it no longer counts as having begun. */
static bool forget_origin(CUstream stream, bool per_thread)
{
	uintptr_t key = origin_key(stream, per_thread);
	return key && swap_origin(key, 0);
}

static CUresult begun(CUresult r, CUstream stream, bool per_thread)
{
	if (r == CUDA_SUCCESS) {
		__atomic_add_fetch(&captures, 1, __ATOMIC_RELAXED);
		swap_origin(0, origin_key(stream, per_thread)); /* no room: counted all the same */
	}
	return r;
}

static void count_ended(void)
{
	int n = __atomic_load_n(&captures, __ATOMIC_RELAXED);
	while (n > 0 &&
	       !__atomic_compare_exchange_n(&captures, &n, n - 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * An end that succeeds, or fails because the capture was invalidated,
 * ends it. Other errors may or may not: a fork not joined back
 * (CUDA_ERROR_STREAM_CAPTURE_UNJOINED) ends the capture, an end called on
 * a stream the capture forked into (CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)
 * does not. After those the driver is asked whether a stream that began a
 * capture still captures.
 */
static CUresult end_capture(CUstream stream, CUgraph *graph, bool per_thread)
{
	CUresult r = per_thread ? EMBER_REAL(cuStreamEndCapture_ptsz)(stream, graph)
				: EMBER_REAL(cuStreamEndCapture)(stream, graph);
	bool ended = r == CUDA_SUCCESS || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||
		     (is_origin(stream, per_thread) && !ember_stream_captured(stream, per_thread));
	if (ended) {
		forget_origin(stream, per_thread);
		count_ended();
	}
	return r;
}

void ember_capture_after_teardown(void)
{
	for (int i = 0; i < ORIGINS; i++) {
		uintptr_t key = __atomic_load_n(&origins[i], __ATOMIC_RELAXED);
		/* another thread's per-thread stream cannot be asked from here */
		if (!key || key == (uintptr_t)CU_STREAM_PER_THREAD || ember_stream_captured((CUstream)key, false))
			continue;
		if (__atomic_compare_exchange_n(&origins[i], &key, 0, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			count_ended();
	}
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
	return begun(EMBER_REAL(cuStreamBeginCapture)(hStream), hStream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
	return begun(EMBER_REAL(cuStreamBeginCapture_ptsz)(hStream), hStream, true);
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	return begun(EMBER_REAL(cuStreamBeginCapture_v2)(hStream, mode), hStream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	return begun(EMBER_REAL(cuStreamBeginCapture_v2_ptsz)(hStream, mode), hStream, true);
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
							  const CUgraphNode *dependencies,
							  const CUgraphEdgeData *dependencyData, size_t numDependencies,
							  CUstreamCaptureMode mode)
{
	return begun(EMBER_REAL(cuStreamBeginCaptureToGraph)(hStream, hGraph, dependencies, dependencyData,
							    numDependencies, mode),
		     hStream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
							       const CUgraphNode *dependencies,
							       const CUgraphEdgeData *dependencyData,
							       size_t numDependencies, CUstreamCaptureMode mode)
{
	return begun(EMBER_REAL(cuStreamBeginCaptureToGraph_ptsz)(hStream, hGraph, dependencies, dependencyData,
								 numDependencies, mode),
		     hStream, true);
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	return end_capture(hStream, phGraph, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	return end_capture(hStream, phGraph, true);
}

/*
 * A stream destroyed while the capture it began lasts takes the capture
 * with it, which then counts as ended: a count left high would keep
 * read_dup.c's advice withdrawals waiting for good, and make each launch
 * ask the driver. A stream the capture forked into ends nothing.
 */
EMBER_PUBLIC CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
	CUresult r = EMBER_REAL(cuStreamDestroy_v2)(hStream);
	if (r == CUDA_SUCCESS && forget_origin(hStream, false))
		count_ended();
	if (r == CUDA_SUCCESS && ember_keeping())
		ember_kept_stream_gone(hStream); /* a new stream may get its handle: no reuse on sight, only by event */
	return r;
}
