/*
 * Synchronisation points. Each one's return may begin a host phase
 * (host_phase.h: the host reading results back). While EMBER_TRACE records
 * a run, each call that made the host wait for the GPU for longer than
 * 50 us is also written as a W line, so that a replay can tell the host's
 * own work from its waiting (include/ember/trace.h).
 */
#include <cuda.h>

#include "host_phase.h"
#include "shim.h"
#include "tracer.h"

/* The driver's call returned: a host phase may begin (host_phase.h). */
static CUresult waited(CUresult r)
{
	ember_host_phase_sync();
	return r;
}

/* Timed for the trace (the host phase's getrusage, about a microsecond, with it). */
#define SYNC_CALL(call) EMBER_TRACE_TIMED(waited(call))

EMBER_PUBLIC CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	SYNC_CALL(EMBER_REAL(cuStreamSynchronize)(hStream));
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
	SYNC_CALL(EMBER_REAL(cuStreamSynchronize_ptsz)(hStream));
}

EMBER_PUBLIC CUresult CUDAAPI cuCtxSynchronize(void)
{
	SYNC_CALL(EMBER_REAL(cuCtxSynchronize)());
}

EMBER_PUBLIC CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	SYNC_CALL(EMBER_REAL(cuCtxSynchronize_v2)(ctx));
}

EMBER_PUBLIC CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	SYNC_CALL(EMBER_REAL(cuEventSynchronize)(hEvent));
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	SYNC_CALL(EMBER_REAL(cuMemcpyDtoH_v2)(dstHost, srcDevice, ByteCount));
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	SYNC_CALL(EMBER_REAL(cuMemcpyDtoH_v2_ptds)(dstHost, srcDevice, ByteCount));
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	SYNC_CALL(EMBER_REAL(cuMemcpy)(dst, src, ByteCount));
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	SYNC_CALL(EMBER_REAL(cuMemcpy_ptds)(dst, src, ByteCount));
}
