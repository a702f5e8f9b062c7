/*
 * Synchronisation points. Each one's return may begin a host phase
 * (host_phase.h: the host reading results back), and lets the pools give
 * back freed memory past their release thresholds (memory_sync.h). While
 * EMBER_TRACE records a run, each call that made the host wait for the GPU
 * for longer than 50 us is also written as a W line, so that a replay can
 * tell the host's own work from its waiting (include/ember/trace.h).
 */
#include <cuda.h>
#include <stdint.h>

#include "gpu_busy.h"
#include "host_phase.h"
#include "memory_sync.h"
#include "read_dup.h"
#include "shim.h"
#include "tracer.h"

/*
 * The driver's call returned: what it waited for has finished (gpu_busy.h),
 * a host phase may begin (host_phase.h), and the pools give back what they
 * keep past their release thresholds (memory_sync.h).
 */
static CUresult waited(CUresult r, enum ember_wait_scope scope, CUstream stream, bool per_thread)
{
	if (r == CUDA_SUCCESS && ember_active) {
		ember_gpu_busy_waited(scope, stream, per_thread);
		ember_memory_synchronized();
	}
	ember_host_phase_sync();
	return r;
}

/* Timed for the trace (the host phase's getrusage, about a microsecond, with it). */
#define SYNC_CALL(call, ...) EMBER_TRACE_TIMED(waited(call, __VA_ARGS__))

EMBER_PUBLIC CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	SYNC_CALL(EMBER_REAL(cuStreamSynchronize)(hStream), EMBER_WAIT_STREAM, hStream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
	SYNC_CALL(EMBER_REAL(cuStreamSynchronize_ptsz)(hStream), EMBER_WAIT_STREAM, hStream, true);
}

EMBER_PUBLIC CUresult CUDAAPI cuCtxSynchronize(void)
{
	SYNC_CALL(EMBER_REAL(cuCtxSynchronize)(), EMBER_WAIT_CONTEXT, NULL, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	SYNC_CALL(EMBER_REAL(cuCtxSynchronize_v2)(ctx), EMBER_WAIT_CONTEXT, NULL, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	SYNC_CALL(EMBER_REAL(cuEventSynchronize)(hEvent), EMBER_WAIT_EVENT, NULL, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	ember_read_dup_before_copy((CUdeviceptr)(uintptr_t)dstHost, ByteCount); /* copies.def */
	SYNC_CALL(EMBER_REAL(cuMemcpyDtoH_v2)(dstHost, srcDevice, ByteCount), EMBER_WAIT_STREAM, NULL, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	ember_read_dup_before_copy((CUdeviceptr)(uintptr_t)dstHost, ByteCount); /* copies.def */
	SYNC_CALL(EMBER_REAL(cuMemcpyDtoH_v2_ptds)(dstHost, srcDevice, ByteCount), EMBER_WAIT_STREAM, NULL, true);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	ember_read_dup_before_copy(dst, ByteCount); /* copies.def */
	SYNC_CALL(EMBER_REAL(cuMemcpy)(dst, src, ByteCount), EMBER_WAIT_STREAM, NULL, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	ember_read_dup_before_copy(dst, ByteCount); /* copies.def */
	SYNC_CALL(EMBER_REAL(cuMemcpy_ptds)(dst, src, ByteCount), EMBER_WAIT_STREAM, NULL, true);
}
