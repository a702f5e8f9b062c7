/*
 * Context teardown. The driver frees every allocation, stream and event of
 * a context it destroys without a call for each (cudaDeviceReset between a
 * program's phases). Ember lets go of them first:
 * - the host's touches in the background (touch_pool.h) stop, or a touch of
 *   a page no longer mapped would fault in the pool's thread and end the
 *   program;
 * - deferred frees are made while their addresses are still the program's,
 *   and the moves under way finish (before_teardown);
 * - the context's allocations leave the table and the budget, where they
 *   would hold residency no one has and refuse addresses handed out again;
 * - its private stream and the worker's and adaptive's note of it go: a
 *   primary context keeps its handle across a reset, and a dead stream
 *   fails every move after it;
 * - what was learnt of its kernels and graph executables goes, as at a
 *   module's unload: the driver may hand their handles to others;
 * - after it, a capture on a stream it destroyed has ended, and its
 *   streams' work is done: as after cuCtxSynchronize, nothing launched
 *   keeps the GPU busy (gpu_busy.h), and a host phase may begin.
 */
#include <cuda.h>

#include "context_teardown.h"
#include "gpu_busy.h"
#include "host_phase.h"
#include "kernels.h"
#include "ops_driver.h"
#include "placement.h"
#include "shim.h"
#include "streams.h"
#include "touch_pool.h"
#include "worker.h"

/* Called only while Ember is active. */
static void forget(CUcontext ctx)
{
	if (!ctx)
		return;
	ember_memory_forget_context(ctx);
	ember_graphs_forget_context(ctx);
	ember_kernels_forget();
	ember_streams_forget(ctx);
	ember_adaptive_forget_context(ctx);
	ember_driver_forget_context(ctx);
}

/*
 * Before a teardown that forgets ctx (forget first, so that no pass issues
 * more in it), or one that may end it (NULL): the pool's touches stop, the
 * deferred frees are made, and the moves under way finish. The teardown
 * would wait for the moves on the GPU but destroy their events, and a move
 * the worker polled after it would count as failed with its bytes moved.
 */
static void before_teardown(CUcontext forgotten)
{
	ember_touch_pool_drain();
	if (!ember_active)
		return;
	ember_worker_wait_frees();
	forget(forgotten);
	ember_worker_flush();
}

/* dev's primary context if it is active, without changing its count; NULL otherwise. */
static CUcontext active_primary(CUdevice dev)
{
	unsigned flags;
	int active = 0;
	CUcontext ctx = NULL;
	if (EMBER_REAL(cuDevicePrimaryCtxGetState)(dev, &flags, &active) != CUDA_SUCCESS || !active)
		return NULL;
	if (EMBER_REAL(cuDevicePrimaryCtxRetain)(&ctx, dev) != CUDA_SUCCESS)
		return NULL;
	EMBER_REAL(cuDevicePrimaryCtxRelease_v2)(dev); /* still held by whoever made it active */
	return ctx;
}

/* After a teardown: r is whether the context ended. */
static CUresult after_teardown(CUresult r)
{
	ember_capture_after_teardown();
	if (r == CUDA_SUCCESS && ember_active) {
		ember_gpu_busy_waited(EMBER_WAIT_CONTEXT, NULL, false);
		ember_host_phase_sync();
	}
	return r;
}

static CUresult destroy(CUcontext ctx, CUresult (*real)(CUcontext))
{
	before_teardown(ctx);
	return after_teardown(real(ctx));
}

static CUresult reset(CUdevice dev, CUresult (*real)(CUdevice))
{
	CUcontext primary = ember_active ? active_primary(dev) : NULL;
	ember_debug("GPU %d's primary context (%p) is reset", (int)dev, (void *)primary);
	before_teardown(primary);
	return after_teardown(real(dev));
}

/* The last release destroys the primary context: only then is it forgotten. */
static CUresult release(CUdevice dev, CUresult (*real)(CUdevice))
{
	before_teardown(NULL);
	CUcontext primary = ember_active ? active_primary(dev) : NULL;
	CUresult r = real(dev);
	unsigned flags;
	int active = 1;
	if (r == CUDA_SUCCESS && primary && EMBER_REAL(cuDevicePrimaryCtxGetState)(dev, &flags, &active) == CUDA_SUCCESS &&
	    !active) {
		forget(primary);
		after_teardown(r);
	}
	return r;
}

/*
 * A program that asks cuGetProcAddress at a version before the _v2 forms
 * (CUDA 11.0 for the primary context's, 4.0 for cuCtxDestroy) gets the
 * first ones: each form is hooked.
 */
EMBER_PUBLIC CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
	return destroy(ctx, EMBER_REAL(cuCtxDestroy));
}

EMBER_PUBLIC CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
	return destroy(ctx, EMBER_REAL(cuCtxDestroy_v2));
}

EMBER_PUBLIC CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
	return reset(dev, EMBER_REAL(cuDevicePrimaryCtxReset));
}

EMBER_PUBLIC CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	return reset(dev, EMBER_REAL(cuDevicePrimaryCtxReset_v2));
}

EMBER_PUBLIC CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return release(dev, EMBER_REAL(cuDevicePrimaryCtxRelease));
}

EMBER_PUBLIC CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return release(dev, EMBER_REAL(cuDevicePrimaryCtxRelease_v2));
}
