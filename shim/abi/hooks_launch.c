/*
 * Kernel launches: scan the arguments for placed allocations, let placement
 * react (the static split happens at an allocation's first launch), then
 * launch. Nothing here waits for a migration: promotions run on the worker.
 */
#include <cuda.h>

#include "capture.h"
#include "gpu_busy.h"
#include "launch_repeat.h"
#include "launch_scan.h"
#include "placement.h"
#include "settled.h"
#include "shim.h"
#include "tracer.h"

/*
 * Scan, unless nothing is left to decide (settled.h) or this thread's last
 * launch is repeated (launch_repeat.h); a trace records every launch's own scan.
 */
static void observe(CUfunction f, struct ember_grid grid, void **params, void **extra, CUstream stream, bool per_thread)
{
	if (!ember_active || ember_stream_captured(stream, per_thread))
		return; /* recorded into a graph, not run: placed when the graph is launched */
	ember_gpu_busy_launch(stream, per_thread);
	if (!ember_strategy->scans && !ember_tracing) {
		ember_placement_launch(NULL, stream, per_thread);
		return;
	}
	if (!ember_tracing && ember_settled_launch())
		return; /* nothing any launch could change: settled.h */
	struct ember_scan local, *scan = ember_tracing ? NULL : ember_repeat_scan(f, grid, params, extra, stream, per_thread);
	if (!scan)
		ember_scan_launch(f, grid, params, extra, scan = &local);
	ember_trace_launch(scan, stream, per_thread);
	ember_placement_launch(scan, stream, per_thread);
	if (scan == &local)
		ember_scan_release(&local);
	else
		ember_repeat_done(scan);
}

/* cuLaunchKernelEx's blocks (none without a configuration, which the driver refuses) */
static struct ember_grid grid_of(const CUlaunchConfig *config)
{
	return config ? (struct ember_grid){ config->gridDimX, config->gridDimY } : (struct ember_grid){ 0, 0 };
}

#define LAUNCH_ARGS                                                                        \
	(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,  \
	 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,             \
	 unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
#define LAUNCH_CALL                                                                        \
	(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, \
	 kernelParams, extra)

/* While a trace is recorded, a launch that blocked (a full launch queue) is timed as a wait for the GPU. */
EMBER_PUBLIC CUresult CUDAAPI cuLaunchKernel LAUNCH_ARGS
{
	observe(f, (struct ember_grid){ gridDimX, gridDimY }, kernelParams, extra, hStream, false);
	EMBER_TRACE_TIMED(EMBER_REAL(cuLaunchKernel) LAUNCH_CALL);
}

EMBER_PUBLIC CUresult CUDAAPI cuLaunchKernel_ptsz LAUNCH_ARGS
{
	observe(f, (struct ember_grid){ gridDimX, gridDimY }, kernelParams, extra, hStream, true);
	EMBER_TRACE_TIMED(EMBER_REAL(cuLaunchKernel_ptsz) LAUNCH_CALL);
}

EMBER_PUBLIC CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
					       void **extra)
{
	observe(f, grid_of(config), kernelParams, extra, config ? config->hStream : NULL, false);
	EMBER_TRACE_TIMED(EMBER_REAL(cuLaunchKernelEx)(config, f, kernelParams, extra));
}

EMBER_PUBLIC CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
						    void **kernelParams, void **extra)
{
	observe(f, grid_of(config), kernelParams, extra, config ? config->hStream : NULL, true);
	EMBER_TRACE_TIMED(EMBER_REAL(cuLaunchKernelEx_ptsz)(config, f, kernelParams, extra));
}

#define COOP_ARGS                                                                          \
	(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,  \
	 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,             \
	 unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
#define COOP_CALL                                                                          \
	(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, \
	 kernelParams)

EMBER_PUBLIC CUresult CUDAAPI cuLaunchCooperativeKernel COOP_ARGS
{
	observe(f, (struct ember_grid){ gridDimX, gridDimY }, kernelParams, NULL, hStream, false);
	return EMBER_REAL(cuLaunchCooperativeKernel) COOP_CALL;
}

EMBER_PUBLIC CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz COOP_ARGS
{
	observe(f, (struct ember_grid){ gridDimX, gridDimY }, kernelParams, NULL, hStream, true);
	return EMBER_REAL(cuLaunchCooperativeKernel_ptsz) COOP_CALL;
}
