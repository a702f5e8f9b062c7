/*
 * cuMemAdvise: advice is recorded on every block the range touches (the
 * range need not be aligned). It moves no data. Accessed-by maps the block
 * for that GPU at once; unsetting it leaves existing mappings in place, as
 * measured on an H200. Advising is synchronous and costs host time per call
 * and per block.
 */
#include "cost.h"
#include "sim.h"

static uint32_t location_bit(int loc)
{
	return loc == SIM_LOC_HOST ? SIM_HOST_BIT : 1u << loc;
}

static void advise_block(struct sim_alloc *a, size_t i, CUmem_advise advice, int loc)
{
	struct sim_block *b = &a->blocks[i];
	switch (advice) {
	case CU_MEM_ADVISE_SET_READ_MOSTLY:
		b->read_mostly = true;
		break;
	case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
		/*
		 * Duplicates collapse to one copy: the preferred one if it is
		 * among them. Dropping the GPU's copy for the host's drops the
		 * GPU's mapping too, accessed-by or not: on an H100 4 GiB so
		 * given back were read at 12.7 GB/s, faulting, where mapped reads
		 * take 51 (ember-readmostly-probe, ab-40's call 6).
		 */
		b->read_mostly = false;
		if (b->host_copy && b->preferred == SIM_LOC_HOST) {
			sim_block_drop_device_copy(a, i);
			b->mapped &= SIM_HOST_BIT;
		}
		b->host_copy = false;
		break;
	case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
		b->preferred = (int8_t)loc;
		break;
	case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
		b->preferred = SIM_LOC_NONE;
		break;
	case CU_MEM_ADVISE_SET_ACCESSED_BY:
		b->accessed_by |= location_bit(loc);
		if (loc >= 0 && b->where != SIM_LOC_NONE)
			b->mapped |= location_bit(loc);
		break;
	case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
		b->accessed_by &= ~location_bit(loc);
		break;
	}
}

static CUresult advise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, int loc)
{
	if (count == 0)
		return CUDA_ERROR_INVALID_VALUE;
	size_t first, end;
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_managed_range((uintptr_t)devPtr, count, &first, &end);
	if (!a) {
		pthread_mutex_unlock(&sim_mem_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (size_t i = first; i < end; i++) {
		sim_block_notice_cpu(a, i);
		advise_block(a, i, advice, loc);
	}
	pthread_mutex_unlock(&sim_mem_lock);
	sim_clock_advance_by(SIM_ADVISE_CALL_NS + (end - first) * SIM_ADVISE_BLOCK_NS);
	return CUDA_SUCCESS;
}

static bool advice_known(CUmem_advise advice)
{
	return advice >= CU_MEM_ADVISE_SET_READ_MOSTLY && advice <= CU_MEM_ADVISE_UNSET_ACCESSED_BY;
}

/* Whether the advice names a location at all; read-mostly and unset-preferred ignore it. */
static bool uses_location(CUmem_advise advice)
{
	return advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION || advice == CU_MEM_ADVISE_SET_ACCESSED_BY ||
	       advice == CU_MEM_ADVISE_UNSET_ACCESSED_BY;
}

/* The location an advice names: a device, or the host (any host form for a preference). */
static CUresult advice_location(CUmem_advise advice, CUmemLocation loc, int *out)
{
	switch (loc.type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		if (!sim_device_valid(loc.id))
			return CUDA_ERROR_INVALID_DEVICE;
		*out = loc.id;
		return CUDA_SUCCESS;
	case CU_MEM_LOCATION_TYPE_HOST:
		*out = SIM_LOC_HOST;
		return CUDA_SUCCESS;
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
		if (advice != CU_MEM_ADVISE_SET_PREFERRED_LOCATION)
			return CUDA_ERROR_INVALID_VALUE;
		*out = SIM_LOC_HOST;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

SIM_EXPORT CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
					   CUmemLocation location)
{
	SIM_INJECT("cuMemAdvise_v2");
	SIM_REQUIRE_INIT();
	SIM_UNSAFE_DURING_CAPTURE();
	if (!advice_known(advice))
		return CUDA_ERROR_INVALID_VALUE;
	int loc = SIM_LOC_NONE;
	if (uses_location(advice)) {
		CUresult r = advice_location(advice, location, &loc);
		if (r != CUDA_SUCCESS)
			return r;
	}
	return advise(devPtr, count, advice, loc);
}

/* The legacy form names a device, or CU_DEVICE_CPU. */
SIM_EXPORT CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{
	SIM_REQUIRE_INIT();
	SIM_UNSAFE_DURING_CAPTURE();
	if (!advice_known(advice))
		return CUDA_ERROR_INVALID_VALUE;
	int loc = SIM_LOC_NONE;
	if (uses_location(advice)) {
		if (device != CU_DEVICE_CPU && !sim_device_valid(device))
			return CUDA_ERROR_INVALID_DEVICE;
		loc = device == CU_DEVICE_CPU ? SIM_LOC_HOST : device;
	}
	return advise(devPtr, count, advice, loc);
}
