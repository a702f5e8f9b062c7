/*
 * cuMemRangeGetAttribute(s): what the blocks of a managed range agree on.
 * Locations use the legacy encoding, which is also the sim's: a device
 * ordinal, CU_DEVICE_CPU (-1) for the host, CU_DEVICE_INVALID (-2) when the
 * blocks differ or nothing is set. The _ID attributes report the same
 * values; the driver leaves them undefined unless the type is a device.
 */
#include "sim.h"

_Static_assert(SIM_LOC_HOST == CU_DEVICE_CPU && SIM_LOC_NONE == CU_DEVICE_INVALID,
	       "the sim's locations are the legacy device encoding");

enum which { PREFERRED, LAST_PREFETCH };

static int location_of(const struct sim_block *b, enum which w)
{
	return w == PREFERRED ? b->preferred : b->last_prefetch;
}

/* The location every block of [first, end) has, or SIM_LOC_NONE. */
static int common_location(const struct sim_alloc *a, size_t first, size_t end, enum which w)
{
	int v = location_of(&a->blocks[first], w);
	for (size_t i = first + 1; i < end; i++)
		if (location_of(&a->blocks[i], w) != v)
			return SIM_LOC_NONE;
	return v;
}

static CUmemLocationType location_type(int loc)
{
	if (loc == SIM_LOC_NONE)
		return CU_MEM_LOCATION_TYPE_INVALID;
	return loc == SIM_LOC_HOST ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
}

/* Devices advised accessed-by on every block: as many as fit, the rest CU_DEVICE_INVALID. */
static void accessed_by(const struct sim_alloc *a, size_t first, size_t end, int *out, size_t n)
{
	uint32_t all = ~0u;
	for (size_t i = first; i < end; i++)
		all &= a->blocks[i].accessed_by;
	size_t k = 0;
	for (int d = 0; d < SIM_MAX_DEVICES && k < n; d++)
		if (all & (1u << d))
			out[k++] = d;
	if ((all & SIM_HOST_BIT) && k < n)
		out[k++] = CU_DEVICE_CPU;
	while (k < n)
		out[k++] = CU_DEVICE_INVALID;
}

static CUresult answer(void *data, size_t size, CUmem_range_attribute attr, const struct sim_alloc *a,
		       size_t first, size_t end)
{
	int *out = data;
	if (attr == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
		if (size == 0 || size % sizeof(int))
			return CUDA_ERROR_INVALID_VALUE;
		accessed_by(a, first, end, out, size / sizeof(int));
		return CUDA_SUCCESS;
	}
	if (size != sizeof(int)) /* every other attribute is one 32-bit value */
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
		*out = 1;
		for (size_t i = first; i < end; i++)
			*out &= a->blocks[i].read_mostly;
		return CUDA_SUCCESS;
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
		*out = common_location(a, first, end, PREFERRED);
		return CUDA_SUCCESS;
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
		*out = common_location(a, first, end, LAST_PREFETCH);
		return CUDA_SUCCESS;
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
		*out = (int)location_type(common_location(a, first, end, PREFERRED));
		return CUDA_SUCCESS;
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
		*out = (int)location_type(common_location(a, first, end, LAST_PREFETCH));
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* Answers each attribute in turn, under one look at the range. */
static CUresult query(void **data, const size_t *sizes, const CUmem_range_attribute *attrs, size_t n,
		      CUdeviceptr devPtr, size_t count)
{
	SIM_REQUIRE_INIT();
	if (count == 0)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t k = 0; k < n; k++)
		if (!data[k])
			return CUDA_ERROR_INVALID_VALUE;
	size_t first, end;
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_managed_range((uintptr_t)devPtr, count, &first, &end);
	CUresult r = a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		for (size_t k = 0; k < n && r == CUDA_SUCCESS; k++)
			r = answer(data[k], sizes[k], attrs[k], a, first, end);
	}
	pthread_mutex_unlock(&sim_mem_lock);
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuMemRangeGetAttribute(void *data, size_t dataSize, CUmem_range_attribute attribute,
						   CUdeviceptr devPtr, size_t count)
{
	return query(&data, &dataSize, &attribute, 1, devPtr, count);
}

SIM_EXPORT CUresult CUDAAPI cuMemRangeGetAttributes(void **data, size_t *dataSizes,
						    CUmem_range_attribute *attributes, size_t numAttributes,
						    CUdeviceptr devPtr, size_t count)
{
	if (!data || !dataSizes || !attributes || numAttributes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	return query(data, dataSizes, attributes, numAttributes, devPtr, count);
}
