/*
 * CUDA's legacy IPC (cuIpcGetMemHandle) shares plain cuMemAlloc memory with
 * another process, and cannot share managed memory: the driver refuses it
 * with CUDA_ERROR_INVALID_VALUE. Under EMBER_MANAGE_ALL the program asked
 * for plain memory and got managed memory, so a refusal it could not
 * have had without Ember says, once, why and what to do; the driver's
 * answer itself is unchanged. PyTorch shares CUDA tensors between
 * processes this way (torch.multiprocessing).
 */
#include <cuda.h>
#include <stdbool.h>

#include "memory_hooks.h"
#include "regions.h"
#include "shim.h"
#include "state.h"

/* Whether dptr lies in an allocation EMBER_MANAGE_ALL converted; its size in *bytes. */
static bool converted_at(CUdeviceptr dptr, uint64_t *bytes)
{
	ember_table_lock(EMBER_TABLE);
	const struct ember_alloc *a = ember_table_find(EMBER_TABLE, dptr);
	bool converted = a && a->kind == EMBER_ALLOC_CONVERTED;
	*bytes = converted ? a->size : 0;
	ember_table_unlock(EMBER_TABLE);
	return converted;
}

EMBER_PUBLIC CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	static bool said;
	CUresult r = EMBER_REAL(cuIpcGetMemHandle)(pHandle, dptr);
	uint64_t bytes;
	if (r == CUDA_SUCCESS || !ember_memory_placing() || !converted_at(dptr, &bytes))
		return r;
	if (ember_first_time(&said))
		ember_warn("cuIpcGetMemHandle: %#llx lies in an allocation of %llu bytes that EMBER_MANAGE_ALL made "
			   "managed, which CUDA IPC cannot share (CUresult %d); run the processes that share "
			   "memory with EMBER_MANAGE_ALL=0",
			   (unsigned long long)dptr, (unsigned long long)bytes, (int)r);
	return r;
}
