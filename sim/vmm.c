/*
 * Physical allocations of the virtual memory API (cuMemCreate,
 * cuMemRelease) and stream-ordered allocations from a pool. The simulated
 * driver charges their bytes to the device and maps nothing: enough for a
 * program, or Ember, that counts device memory.
 */
#include "sim.h"

struct sim_physical {
	uint64_t size;
	int device;
};

SIM_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
					const CUmemAllocationProp *prop, unsigned long long flags)
{
	SIM_REQUIRE_INIT();
	if (!handle || !prop || size == 0 || flags || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !sim_device_valid(prop->location.id))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_physical *p = malloc(sizeof *p);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (struct sim_physical){ size, prop->location.id };
	pthread_mutex_lock(&sim_mem_lock);
	bool room = size <= sim_device_free(p->device);
	if (room)
		sim_mem.plain[p->device] += size;
	pthread_mutex_unlock(&sim_mem_lock);
	if (!room) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	SIM_REQUIRE_INIT();
	struct sim_physical *p = (struct sim_physical *)(uintptr_t)handle;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_mem_lock);
	sim_mem.plain[p->device] -= p->size;
	pthread_mutex_unlock(&sim_mem_lock);
	free(p);
	return CUDA_SUCCESS;
}

/* A pool's allocation: stream-ordered device memory; the pool's own attributes are not modelled. */
SIM_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
						    CUstream hStream)
{
	return pool ? cuMemAllocAsync(dptr, bytesize, hStream) : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
							 CUstream hStream)
{
	return pool ? cuMemAllocAsync_ptsz(dptr, bytesize, hStream) : CUDA_ERROR_INVALID_VALUE;
}
