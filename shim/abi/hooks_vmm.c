/*
 * The virtual memory API: cuMemCreate's placement (physical.h) and the
 * calls that take its handles. A handle that Ember split at the budget
 * (split_physical.h) stands for two of the driver's, its GPU part and its
 * host part: each call on it is made on its parts, so the program sees one
 * allocation. Calls on a range pass straight through: the driver takes one
 * cuMemSetAccess or cuMemUnmap over the two parts' mappings side by side
 * (ember-vmm-host-probe's vmm-split case on the H200, ab-52's call 2);
 * an unmap only forgets the mappings Ember answers for (vmm_mappings.h).
 * While no split lives and nothing was made in host memory, every call
 * passes straight through.
 */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

#include "budget_source.h"
#include "census.h"
#include "memory_hooks.h"
#include "physical.h"
#include "shim.h"
#include "split_physical.h"
#include "vmm_mappings.h"

EMBER_PUBLIC CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
					  const CUmemAllocationProp *prop, unsigned long long flags)
{
	if (!ember_memory_placing())
		return EMBER_REAL(cuMemCreate)(handle, size, prop, flags);
	ember_memory_not_converted("cuMemCreate", "the program maps these physical allocations itself (cuMemMap), which "
				     "managed memory cannot back; past the budget they are made in host memory, never "
				     "promoted (PyTorch: expandable_segments:False converts its memory)");
	ember_budget_current_device(); /* the budget known before the allocation is charged to it */
	CUresult r = ember_physical_create(handle, size, prop, flags, ember_cfg.manage_all);
	if (r == CUDA_SUCCESS)
		ember_census_count(EMBER_ENTRY_CREATE, size, false);
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct ember_split s;
	switch (ember_split_any() ? ember_split_release(handle, &s) : EMBER_SPLIT_NOT) {
	case EMBER_SPLIT_STILL_HELD:
		return CUDA_SUCCESS;
	case EMBER_SPLIT_GONE: {
		CUresult gpu = EMBER_REAL(cuMemRelease)(s.gpu), host = EMBER_REAL(cuMemRelease)(s.host);
		if (!s.given_back)
			ember_physical_split_released(&s);
		return gpu != CUDA_SUCCESS ? gpu : host;
	}
	case EMBER_SPLIT_NOT:
		break;
	}
	CUresult r = EMBER_REAL(cuMemRelease)(handle);
	if (r == CUDA_SUCCESS && ember_memory_placing())
		ember_physical_released(handle);
	return r;
}

/* Both parts mapped side by side, as the one allocation would be (the driver wants offset 0). */
EMBER_PUBLIC CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
				       unsigned long long flags)
{
	struct ember_split s;
	if (!ember_split_any() || !ember_split_find(handle, &s)) {
		CUresult r = EMBER_REAL(cuMemMap)(ptr, size, offset, handle, flags);
		if (r == CUDA_SUCCESS && ember_physical_any_on_host())
			ember_physical_mapped(handle, ptr, size);
		return r;
	}
	if (offset || !size || size > s.size)
		return CUDA_ERROR_INVALID_VALUE;
	size_t on_gpu = size < s.gpu_bytes ? size : s.gpu_bytes;
	CUresult r = EMBER_REAL(cuMemMap)(ptr, on_gpu, 0, s.gpu, flags);
	if (r == CUDA_SUCCESS && size > on_gpu) {
		r = EMBER_REAL(cuMemMap)(ptr + on_gpu, size - on_gpu, 0, s.host, flags);
		if (r != CUDA_SUCCESS)
			EMBER_REAL(cuMemUnmap)(ptr, on_gpu);
	}
	if (r == CUDA_SUCCESS && size == s.size)
		ember_split_mapped(handle, ptr);
	return r;
}

/* A mapping Ember answers for, unmapped in any part, is one no more; a split released meanwhile goes with its last. */
EMBER_PUBLIC CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult r = EMBER_REAL(cuMemUnmap)(ptr, size);
	if (r == CUDA_SUCCESS && ember_vmm_mappings_any()) {
		ember_vmm_mappings_unmapped(ptr, size);
		if (ember_split_any())
			ember_split_forget_unmapped();
	}
	return r;
}

/*
 * An address in a split mapped whole gives the whole mapping, as one
 * allocation's would: the driver answers for the part it lies in (the host
 * part's answer begins elsewhere: ember-vmm-host-probe, ab-53's call 3), and
 * a program that unmaps and frees what it was given would leave the rest.
 * So does one in memory made whole in host memory, where the driver's
 * answer begins outside the mapping (vmm_mappings.h).
 */
EMBER_PUBLIC CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	CUresult r = EMBER_REAL(cuMemGetAddressRange_v2)(pbase, psize, dptr);
	CUdeviceptr base;
	uint64_t size;
	if (!ember_vmm_mappings_any() || !ember_vmm_mapping_around(dptr, &base, &size))
		return r;
	if (pbase)
		*pbase = base;
	if (psize)
		*psize = size;
	return CUDA_SUCCESS;
}

/*
 * A split released while mapped whole, asked for again from an address in
 * a part: held again by both parts' references, the other part's taken
 * from beside this one. Where the other cannot be had, the part alone.
 */
static bool hold_again(CUmemGenericAllocationHandle split, const struct ember_split *s,
		       CUmemGenericAllocationHandle part)
{
	bool gpu = part == s->gpu;
	CUdeviceptr at = ember_vmm_mapping_of(split);
	if (!at)
		return false;
	CUdeviceptr beside = at + (gpu ? s->gpu_bytes : 0);
	CUmemGenericAllocationHandle other = 0;
	if (EMBER_REAL(cuMemRetainAllocationHandle)(&other, (void *)beside) != CUDA_SUCCESS)
		return false;
	if (other != (gpu ? s->host : s->gpu)) {
		EMBER_REAL(cuMemRelease)(other);
		return false;
	}
	return true;
}

/*
 * The driver's reference to part of a split, in *handle: the split's
 * handle in its place where the split can be held (once more, or again).
 * False where the split changed between the look and the hold, the
 * references taken given back: the caller asks the driver again.
 */
static bool as_split(CUmemGenericAllocationHandle *handle, bool last_try)
{
	CUmemGenericAllocationHandle split;
	struct ember_split s;
	if (!ember_split_of_piece(*handle, &split, &s) || (s.released && !hold_again(split, &s, *handle)))
		return true;
	CUmemGenericAllocationHandle other = *handle == s.gpu ? s.host : s.gpu;
	switch (ember_split_retained(split, s.released)) {
	case EMBER_SPLIT_HELD_AGAIN: /* by the parts' references just taken */
		*handle = split;
		return true;
	case EMBER_SPLIT_HELD_ONCE_MORE: /* the part's reference back: its mapping holds it meanwhile */
		EMBER_REAL(cuMemRelease)(*handle);
		*handle = split;
		return true;
	case EMBER_SPLIT_CHANGED: /* released or held again by another thread meanwhile */
		if (!last_try) {
			EMBER_REAL(cuMemRelease)(*handle);
			if (s.released)
				EMBER_REAL(cuMemRelease)(other);
			return false;
		}
		break;
	case EMBER_SPLIT_GONE_MEANWHILE: /* unmapped meanwhile */
		break;
	}
	if (s.released) /* the part alone, as the driver gave it */
		EMBER_REAL(cuMemRelease)(other);
	return true;
}

/* An address in a split's part gives the split's handle, held once more, not the part's. */
EMBER_PUBLIC CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	for (int tries = 1;; tries++) {
		CUresult r = EMBER_REAL(cuMemRetainAllocationHandle)(handle, addr);
		if (r != CUDA_SUCCESS || !ember_split_any() || as_split(handle, tries == 8))
			return r;
	}
}

EMBER_PUBLIC CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
								     CUmemGenericAllocationHandle handle)
{
	struct ember_split s;
	if (!ember_split_any() || !ember_split_find(handle, &s))
		return EMBER_REAL(cuMemGetAllocationPropertiesFromHandle)(prop, handle);
	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	*prop = s.prop;
	return CUDA_SUCCESS;
}

/*
 * A split is two of the driver's allocations, which no one shareable handle
 * can stand for: its export is refused, with a warning, where the whole
 * made on the GPU or in host memory could have been exported. PyTorch's
 * expandable segments and JAX ask for shareable handles, and export them
 * only to share memory with another process.
 */
EMBER_PUBLIC CUresult CUDAAPI cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
							   CUmemAllocationHandleType handleType,
							   unsigned long long flags)
{
	static bool said;
	struct ember_split s;
	if (!ember_split_any() || !ember_split_find(handle, &s))
		return EMBER_REAL(cuMemExportToShareableHandle)(shareableHandle, handle, handleType, flags);
	if (ember_first_time(&said))
		ember_warn("cuMemExportToShareableHandle: this allocation was split at GPU %d's budget (part on the GPU, "
			   "part in host memory) and cannot be shared as one handle; it is refused "
			   "(CUDA_ERROR_NOT_SUPPORTED); EMBER_SPLIT_VMM=0 keeps such allocations whole",
			   s.device);
	return CUDA_ERROR_NOT_SUPPORTED;
}

/*
 * The part of a split that [offset, offset + size) of it falls in, and the
 * offset there; false where the range crosses from one part to the other
 * (size 0: unknown, the part that offset falls in).
 */
static bool part_of(const struct ember_split *s, uint64_t offset, uint64_t size, CUmemGenericAllocationHandle *part,
		    uint64_t *part_offset)
{
	bool on_gpu = offset < s->gpu_bytes;
	if (on_gpu && size && offset + size > s->gpu_bytes)
		return false;
	*part = on_gpu ? s->gpu : s->host;
	*part_offset = on_gpu ? offset : offset - s->gpu_bytes;
	return true;
}

/* Whether entry maps tiles from a split's memory, the split in s. */
static bool maps_split(const CUarrayMapInfo *entry, struct ember_split *s)
{
	return entry->memOperationType == CU_MEM_OPERATION_TYPE_MAP && entry->memHandleType == CU_MEM_HANDLE_TYPE_GENERIC &&
	       ember_split_find(entry->memHandle.memHandle, s);
}

/* A sparse array's tiles mapped from a split: from its part (the driver checks the extent against that part). */
static CUresult map_array(CUarrayMapInfo *list, unsigned count, CUstream stream, bool ptsz)
{
	struct ember_split s;
	unsigned first = 0;
	while (ember_split_any() && list && first < count && !maps_split(&list[first], &s))
		first++;
	CUarrayMapInfo *copy = NULL;
	if (ember_split_any() && list && first < count) {
		if (!(copy = malloc(count * sizeof *copy)))
			return CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(copy, list, count * sizeof *copy);
		for (unsigned i = first; i < count; i++) {
			uint64_t offset;
			if (maps_split(&copy[i], &s) && part_of(&s, copy[i].offset, 0, &copy[i].memHandle.memHandle, &offset))
				copy[i].offset = offset;
		}
	}
	CUarrayMapInfo *use = copy ? copy : list;
	CUresult r = ptsz ? EMBER_REAL(cuMemMapArrayAsync_ptsz)(use, count, stream)
			  : EMBER_REAL(cuMemMapArrayAsync)(use, count, stream);
	free(copy);
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream)
{
	return map_array(mapInfoList, count, hStream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemMapArrayAsync_ptsz(CUarrayMapInfo *mapInfoList, unsigned int count,
						      CUstream hStream)
{
	return map_array(mapInfoList, count, hStream, true);
}

/* A multicast object bound to a split's memory: to the part the range lies in, refused where it crosses both. */
EMBER_PUBLIC CUresult CUDAAPI cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
						 CUmemGenericAllocationHandle memHandle, size_t memOffset, size_t size,
						 unsigned long long flags)
{
	struct ember_split s;
	if (ember_split_any() && ember_split_find(memHandle, &s)) {
		uint64_t offset;
		if (!size || !part_of(&s, memOffset, size, &memHandle, &offset))
			return CUDA_ERROR_INVALID_VALUE;
		memOffset = offset;
	}
	return EMBER_REAL(cuMulticastBindMem)(mcHandle, mcOffset, memHandle, memOffset, size, flags);
}
