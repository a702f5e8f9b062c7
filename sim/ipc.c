/*
 * cuIpcGetMemHandle: what the driver can share with another process. Only
 * plain cuMemAlloc memory can be shared this way; managed memory, host
 * memory and stream-ordered allocations are refused with
 * CUDA_ERROR_INVALID_VALUE, as the driver refuses them (CuPy's issue 9306
 * shows it for cudaMallocManaged). Nothing opens a handle here: the sim
 * is one process.
 */
#include <string.h>

#include "sim.h"

/* Whether the legacy IPC can share a: plain device memory of no pool and no graph. */
bool sim_ipc_capable(const struct sim_alloc *a)
{
	return a->kind == SIM_MEM_DEVICE && !a->pool && !a->graph;
}

SIM_EXPORT CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	SIM_REQUIRE_INIT();
	if (!pHandle)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find((uintptr_t)dptr);
	bool ok = a && sim_ipc_capable(a);
	uint64_t id = ok ? a->id : 0, base = ok ? a->base : 0;
	pthread_mutex_unlock(&sim_mem_lock);
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	/* opaque to the program: the allocation's id and base stand in for the driver's bytes */
	memset(pHandle, 0, sizeof *pHandle);
	memcpy(pHandle->reserved, &id, sizeof id);
	memcpy(pHandle->reserved + sizeof id, &base, sizeof base);
	return CUDA_SUCCESS;
}
