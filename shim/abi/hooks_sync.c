/*
 * Synchronisation points, for the trace only: while EMBER_TRACE records a
 * run, each call that made the host wait for the GPU for longer than
 * 50 us is written as a W line, so that a replay can tell the
 * host's own work from its waiting (include/ember/trace.h). Without a trace
 * each of these is one branch and the driver's call.
 */
#include <cuda.h>

#include "shim.h"
#include "tracer.h"

EMBER_PUBLIC CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	EMBER_TRACE_TIMED(EMBER_REAL(cuStreamSynchronize)(hStream));
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
	EMBER_TRACE_TIMED(EMBER_REAL(cuStreamSynchronize_ptsz)(hStream));
}

EMBER_PUBLIC CUresult CUDAAPI cuCtxSynchronize(void)
{
	EMBER_TRACE_TIMED(EMBER_REAL(cuCtxSynchronize)());
}

EMBER_PUBLIC CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	EMBER_TRACE_TIMED(EMBER_REAL(cuCtxSynchronize_v2)(ctx));
}

EMBER_PUBLIC CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	EMBER_TRACE_TIMED(EMBER_REAL(cuEventSynchronize)(hEvent));
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	EMBER_TRACE_TIMED(EMBER_REAL(cuMemcpyDtoH_v2)(dstHost, srcDevice, ByteCount));
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	EMBER_TRACE_TIMED(EMBER_REAL(cuMemcpyDtoH_v2_ptds)(dstHost, srcDevice, ByteCount));
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	EMBER_TRACE_TIMED(EMBER_REAL(cuMemcpy)(dst, src, ByteCount));
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	EMBER_TRACE_TIMED(EMBER_REAL(cuMemcpy_ptds)(dst, src, ByteCount));
}
