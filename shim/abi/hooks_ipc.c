/*
 * Sharing memory beyond the process, which managed memory cannot be:
 *   - CUDA's legacy IPC (cuIpcGetMemHandle) shares plain cuMemAlloc memory
 *     with another process (PyTorch's torch.multiprocessing);
 *   - cuMemGetHandleForAddressRange exports a range as a dma-buf for a NIC
 *     or another device (NCCL's network path).
 * The driver refuses managed memory to both with CUDA_ERROR_INVALID_VALUE
 * (ipc_probe.py on an H100, ab-56's and ab-57's first calls). Under
 * EMBER_MANAGE_ALL the program asked for plain memory and got managed
 * memory, so a refusal it could not have had without Ember says, once for
 * each call, why and what to do; the driver's answer itself is unchanged.
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

/* The driver's refusal r of call at dptr: where Ember converted the memory there, said once (*said). */
static CUresult refused(CUresult r, const char *call, CUdeviceptr dptr, const char *cannot, bool *said)
{
	uint64_t bytes;
	if (r == CUDA_SUCCESS || !ember_memory_placing() || !converted_at(dptr, &bytes) || !ember_first_time(said))
		return r;
	ember_warn("%s: %#llx lies in an allocation of %llu bytes that EMBER_MANAGE_ALL made managed, which %s "
		   "(CUresult %d); run the processes that share memory with EMBER_MANAGE_ALL=0",
		   call, (unsigned long long)dptr, (unsigned long long)bytes, cannot, (int)r);
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	static bool said;
	return refused(EMBER_REAL(cuIpcGetMemHandle)(pHandle, dptr), "cuIpcGetMemHandle", dptr,
		       "CUDA IPC cannot share", &said);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
							    CUmemRangeHandleType handleType, unsigned long long flags)
{
	static bool said;
	return refused(EMBER_REAL(cuMemGetHandleForAddressRange)(handle, dptr, size, handleType, flags),
		       "cuMemGetHandleForAddressRange", dptr, "the driver cannot export as a dma-buf", &said);
}
