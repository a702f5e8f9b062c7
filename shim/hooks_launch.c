/*
 * Kernel launches: scan the arguments for placed allocations, let placement
 * react (the static split happens at an allocation's first launch), then
 * launch, and in adaptive mode mark the GPU's progress after it. Nothing
 * here waits for a migration.
 */
#include <cuda.h>

#include "adaptive.h"
#include "launch_scan.h"
#include "placement.h"
#include "shim.h"

/* Before a launch; returns whether to mark the GPU's progress after it (adaptive mode). */
static bool observe(CUfunction f, void **params, void **extra, CUstream stream, bool per_thread)
{
	if (!ember_active || ember_cfg.mode < EMBER_MODE_STATIC)
		return false;
	struct ember_scan scan;
	ember_scan_launch(f, params, extra, &scan);
	bool mark = ember_placement_launch(&scan, stream, per_thread);
	ember_scan_release(&scan);
	return mark;
}

static CUresult launched(CUresult r, bool mark, CUstream stream, bool per_thread)
{
	if (mark && r == CUDA_SUCCESS)
		ember_adaptive_launched(stream, per_thread);
	return r;
}

#define LAUNCH_ARGS                                                                        \
	(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,  \
	 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,             \
	 unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
#define LAUNCH_CALL                                                                        \
	(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, \
	 kernelParams, extra)

EMBER_PUBLIC CUresult CUDAAPI cuLaunchKernel LAUNCH_ARGS
{
	bool mark = observe(f, kernelParams, extra, hStream, false);
	return launched(EMBER_REAL(cuLaunchKernel) LAUNCH_CALL, mark, hStream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuLaunchKernel_ptsz LAUNCH_ARGS
{
	bool mark = observe(f, kernelParams, extra, hStream, true);
	return launched(EMBER_REAL(cuLaunchKernel_ptsz) LAUNCH_CALL, mark, hStream, true);
}

EMBER_PUBLIC CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
					       void **extra)
{
	CUstream stream = config ? config->hStream : NULL;
	bool mark = observe(f, kernelParams, extra, stream, false);
	return launched(EMBER_REAL(cuLaunchKernelEx)(config, f, kernelParams, extra), mark, stream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
						    void **kernelParams, void **extra)
{
	CUstream stream = config ? config->hStream : NULL;
	bool mark = observe(f, kernelParams, extra, stream, true);
	return launched(EMBER_REAL(cuLaunchKernelEx_ptsz)(config, f, kernelParams, extra), mark, stream, true);
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
	bool mark = observe(f, kernelParams, NULL, hStream, false);
	return launched(EMBER_REAL(cuLaunchCooperativeKernel) COOP_CALL, mark, hStream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz COOP_ARGS
{
	bool mark = observe(f, kernelParams, NULL, hStream, true);
	return launched(EMBER_REAL(cuLaunchCooperativeKernel_ptsz) COOP_CALL, mark, hStream, true);
}
