/*
 * cuPointerGetAttribute(s): what the driver knows about an address. With
 * unified addressing every pointer is both a host and a device address.
 */
#include <string.h>

#include "sim.h"

/* A copy of what the attributes are computed from, taken under the lock. */
struct facts {
	bool known;
	struct sim_alloc a;
};

static struct facts facts_of(CUdeviceptr ptr)
{
	struct facts f = { .known = false };
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find((uintptr_t)ptr);
	if (a) {
		f.known = true;
		f.a = *a;
		f.a.blocks = NULL; /* not ours to read after the unlock */
	}
	pthread_mutex_unlock(&sim_mem_lock);
	return f;
}

/* Size of each attribute's value, and whether the sim answers it. */
static size_t value_size(CUpointer_attribute attr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		return sizeof(CUcontext);
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		return sizeof(CUmemorytype);
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		return sizeof(CUdeviceptr);
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		return sizeof(void *);
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		return sizeof(unsigned long long);
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		return sizeof(size_t);
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		return sizeof(uint64_t);
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_MAPPED:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
	case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
		return sizeof(int);
	default:
		return 0;
	}
}

/*
 * One attribute of a known allocation into out (value_size(attr) bytes).
 * Returns CUDA_ERROR_INVALID_VALUE where the driver has no answer, such as
 * a host pointer for plain device memory.
 */
static CUresult answer(CUpointer_attribute attr, const struct sim_alloc *a, CUdeviceptr ptr, void *out)
{
	union {
		CUcontext ctx;
		CUmemorytype type;
		CUdeviceptr dptr;
		void *p;
		unsigned long long id;
		size_t size;
		uint64_t u64;
		int i;
	} v = { 0 };
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		v.ctx = (CUcontext)a->ctx;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		v.type = a->kind == SIM_MEM_HOST ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		v.dptr = ptr;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (a->kind == SIM_MEM_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		v.p = (void *)ptr;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		v.id = a->id;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		v.i = a->kind == SIM_MEM_MANAGED;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		v.i = a->device;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		v.dptr = (CUdeviceptr)a->base;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		v.size = a->size;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		v.i = 1;
		break;
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		v.i = sim_ipc_capable(a);
		break;
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		v.i = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
		break;
	default: /* the remaining ones are all "no": no RDMA, no pools, no sync memops */
		break;
	}
	memcpy(out, &v, value_size(attr));
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	SIM_REQUIRE_INIT();
	if (!data || value_size(attribute) == 0)
		return CUDA_ERROR_INVALID_VALUE;
	struct facts f = facts_of(ptr);
	if (!f.known)
		return CUDA_ERROR_INVALID_VALUE;
	return answer(attribute, &f.a, ptr, data);
}

/*
 * The plural form never fails for an unknown address: it reports memory
 * type 0 and empty answers, which is how programs tell host memory apart.
 */
SIM_EXPORT CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
						   void **data, CUdeviceptr ptr)
{
	SIM_REQUIRE_INIT();
	if (numAttributes == 0 || !attributes || !data)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned k = 0; k < numAttributes; k++)
		if (!data[k] || value_size(attributes[k]) == 0)
			return CUDA_ERROR_INVALID_VALUE;
	struct facts f = facts_of(ptr);
	for (unsigned k = 0; k < numAttributes; k++) {
		size_t size = value_size(attributes[k]);
		if (!f.known || answer(attributes[k], &f.a, ptr, data[k]) != CUDA_SUCCESS)
			memset(data[k], 0, size);
		if (!f.known && attributes[k] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
			*(int *)data[k] = CU_DEVICE_INVALID;
	}
	return CUDA_SUCCESS;
}
