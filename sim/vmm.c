/*
 * Physical allocations of the virtual memory API (cuMemCreate,
 * cuMemRelease) and stream-ordered allocations from a pool. The simulated
 * driver charges a device allocation's bytes to its device, and one in
 * host memory (HOST, or HOST_NUMA node 0, the simulated host's one node)
 * to nothing; vmm_map.c maps them. A handle lives while the program holds
 * a reference (its creation, each cuMemRetainAllocationHandle) or a
 * mapping does, as the driver's memory does; a handle that names no live
 * allocation is refused, as the driver refuses it.
 */
#include "sim.h"

struct sim_physical *sim_physical_of(CUmemGenericAllocationHandle handle)
{
	struct sim_physical *p = (struct sim_physical *)(uintptr_t)handle;
	return sim_handle_valid(SIM_H_PHYSICAL, p) ? p : NULL;
}

/* Where prop puts the memory: a device, EMBER_SIM_HOST, or EMBER_SIM_NOWHERE for a location the driver refuses. */
static int placed_at(const CUmemAllocationProp *prop)
{
	switch (prop->location.type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		return sim_device_valid(prop->location.id) ? prop->location.id : EMBER_SIM_NOWHERE;
	case CU_MEM_LOCATION_TYPE_HOST: /* not shareable, as the driver's */
		return prop->requestedHandleTypes ? EMBER_SIM_NOWHERE : EMBER_SIM_HOST;
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
		return prop->location.id == 0 ? EMBER_SIM_HOST : EMBER_SIM_NOWHERE;
	default:
		return EMBER_SIM_NOWHERE;
	}
}

SIM_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
					const CUmemAllocationProp *prop, unsigned long long flags)
{
	SIM_REQUIRE_INIT();
	CUresult injected = sim_injected("cuMemCreate");
	if (injected != CUDA_SUCCESS)
		return injected;
	int at = prop ? placed_at(prop) : EMBER_SIM_NOWHERE;
	if (!handle || size == 0 || flags || at == EMBER_SIM_NOWHERE || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_physical *p = malloc(sizeof *p);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (struct sim_physical){ .size = size, .device = at, .refs = 1, .prop = *prop };
	bool on_host = at == EMBER_SIM_HOST;
	pthread_mutex_lock(&sim_mem_lock);
	bool room = on_host || size <= sim_device_free(at);
	if (room && !on_host)
		sim_mem.plain[at] += size;
	pthread_mutex_unlock(&sim_mem_lock);
	if (!room) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	sim_handle_add(SIM_H_PHYSICAL, p, NULL);
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	SIM_REQUIRE_INIT();
	struct sim_physical *p = sim_physical_of(handle);
	if (!p || !p->refs)
		return CUDA_ERROR_INVALID_VALUE;
	sim_physical_put(p);
	return CUDA_SUCCESS;
}

void sim_physical_put(struct sim_physical *p)
{
	if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL))
		return;
	sim_handle_remove(SIM_H_PHYSICAL, p);
	if (p->device != EMBER_SIM_HOST) {
		pthread_mutex_lock(&sim_mem_lock);
		sim_mem.plain[p->device] -= p->size;
		pthread_mutex_unlock(&sim_mem_lock);
	}
	free(p);
}

EMBER_SIM_API int ember_sim_physical_location(CUmemGenericAllocationHandle handle)
{
	const struct sim_physical *p = sim_physical_of(handle);
	return p ? p->device : EMBER_SIM_NOWHERE;
}

/*
 * Pools: a created pool keeps its properties, and each device has a default
 * one and a current one (the default until cuDeviceSetMemPool); an
 * allocation from any is stream-ordered device memory. A pool counts its
 * live allocations (CU_MEMPOOL_ATTR_USED_MEM_*) and keeps no freed memory,
 * so what it reserves is what is in use; the driver's pool reserves more.
 */
struct sim_pool {
	CUmemPoolProps props;
	cuuint64_t release_threshold; /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: 0 until set, as the driver's */
	uint64_t used;                /* bytes of its live allocations (sim_mem_lock) */
	uint64_t used_high, reserved_high; /* the most used since made or since the program reset each */
	bool destroyed;               /* destroyed with allocations alive: freed with the last (the driver's way) */
};

static struct sim_pool default_pools[SIM_MAX_DEVICES];
static struct sim_pool *current_pools[SIM_MAX_DEVICES]; /* NULL: the default */

SIM_EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (!pool_out || !sim_device_valid(dev))
		return CUDA_ERROR_INVALID_VALUE;
	*pool_out = (CUmemoryPool)&default_pools[dev];
	return CUDA_SUCCESS;
}

struct sim_pool *sim_pool_current(int dev)
{
	return current_pools[dev] ? current_pools[dev] : &default_pools[dev];
}

SIM_EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (!pool_out || !sim_device_valid(dev))
		return CUDA_ERROR_INVALID_VALUE;
	*pool_out = (CUmemoryPool)sim_pool_current(dev);
	return CUDA_SUCCESS;
}

static bool is_default_pool(const struct sim_pool *p)
{
	return p >= default_pools && p < default_pools + SIM_MAX_DEVICES;
}

void sim_pool_charge(struct sim_pool *p, int64_t bytes)
{
	p->used += (uint64_t)bytes;
	if (p->used > p->used_high)
		p->used_high = p->used;
	if (p->used > p->reserved_high)
		p->reserved_high = p->used;
	if (!p->used && p->destroyed)
		free(p);
}

/* As the driver: the pool must be one of dev's. */
SIM_EXPORT CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	SIM_REQUIRE_INIT();
	struct sim_pool *p = (struct sim_pool *)pool;
	if (!p || !sim_device_valid(dev))
		return CUDA_ERROR_INVALID_VALUE;
	if (is_default_pool(p) ? p != &default_pools[dev] : p->props.location.id != dev)
		return CUDA_ERROR_INVALID_DEVICE;
	current_pools[dev] = is_default_pool(p) ? NULL : p;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	SIM_REQUIRE_INIT();
	if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !sim_device_valid(props->location.id))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_pool *p = malloc(sizeof *p);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (struct sim_pool){ .props = *props };
	*pool = (CUmemoryPool)p;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
	SIM_REQUIRE_INIT();
	struct sim_pool *p = (struct sim_pool *)pool;
	if (!p || is_default_pool(p))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_mem_lock);
	for (int dev = 0; dev < SIM_MAX_DEVICES; dev++)
		if (current_pools[dev] == p)
			current_pools[dev] = NULL; /* the driver makes the default current again */
	p->destroyed = true;
	if (!p->used)
		free(p);
	pthread_mutex_unlock(&sim_mem_lock);
	return CUDA_SUCCESS;
}

/*
 * Of a pool's attributes the simulated driver keeps its release threshold
 * and what its allocations use; as on the driver, a high mark is reset by
 * setting it to 0, and no other value.
 */
SIM_EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	SIM_REQUIRE_INIT();
	struct sim_pool *p = (struct sim_pool *)pool;
	if (!p || !value)
		return CUDA_ERROR_INVALID_VALUE;
	cuuint64_t v = *(cuuint64_t *)value;
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&sim_mem_lock);
	switch (attr) {
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		p->release_threshold = v;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		if (v)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			*(attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH ? &p->used_high : &p->reserved_high) = p->used;
		break;
	default:
		r = CUDA_ERROR_NOT_SUPPORTED;
	}
	pthread_mutex_unlock(&sim_mem_lock);
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	SIM_REQUIRE_INIT();
	SIM_INJECT("cuMemPoolGetAttribute");
	struct sim_pool *p = (struct sim_pool *)pool;
	if (!p || !value)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = CUDA_SUCCESS;
	cuuint64_t *out = value;
	pthread_mutex_lock(&sim_mem_lock);
	switch (attr) {
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		*out = p->release_threshold;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
		*out = p->used;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		*out = p->used_high;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		*out = p->reserved_high;
		break;
	default:
		r = CUDA_ERROR_NOT_SUPPORTED;
	}
	pthread_mutex_unlock(&sim_mem_lock);
	return r;
}

/* The simulated pools keep no freed memory, so there is none to give back. */
SIM_EXPORT CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	SIM_REQUIRE_INIT();
	(void)minBytesToKeep;
	return pool ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* A pool's allocation: stream-ordered device memory. */
SIM_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
						    CUstream hStream)
{
	return pool ? sim_alloc_async(dptr, bytesize, (struct sim_pool *)pool, hStream, false) : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
							 CUstream hStream)
{
	return pool ? sim_alloc_async(dptr, bytesize, (struct sim_pool *)pool, hStream, true) : CUDA_ERROR_INVALID_VALUE;
}
