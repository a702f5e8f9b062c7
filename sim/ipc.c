/*
 * cuIpcGetMemHandle: what the driver can share with another process. Only
 * plain cuMemAlloc memory can be shared this way; managed memory, host
 * memory and stream-ordered allocations are refused with
 * CUDA_ERROR_INVALID_VALUE, as the driver refuses them (CuPy's issue 9306
 * shows it for cudaMallocManaged). Nothing opens a handle here: the sim
 * is one process.
 *
 * cuMemGetHandleForAddressRange: a range exported as a dma-buf (NCCL's
 * network path, a NIC's RDMA), page-aligned, in plain cuMemAlloc memory;
 * the driver refused managed memory with CUDA_ERROR_INVALID_VALUE
 * (ipc_probe.py, ab-57's call 1). The descriptor is /dev/null's, the
 * caller's to close. Ranges the program mapped itself (cuMemMap), which
 * the driver exports too, are not modelled: refused.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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

SIM_EXPORT CUresult CUDAAPI cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
							  CUmemRangeHandleType handleType, unsigned long long flags)
{
	SIM_REQUIRE_INIT();
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	if (!handle || handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || !size || dptr % page || size % page)
		return CUDA_ERROR_INVALID_VALUE;
	if (flags) /* a mapping through the PCIe BAR: not modelled */
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find((uintptr_t)dptr);
	bool ok = a && a->kind == SIM_MEM_DEVICE && !a->graph && dptr + size <= a->base + a->size;
	pthread_mutex_unlock(&sim_mem_lock);
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}
