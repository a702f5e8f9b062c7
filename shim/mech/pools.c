/* The pools whose allocations Ember may convert (pools.h). */
#include "grow.h"
#include "locks.h"
#include "pools.h"
#include "shim.h"

/* The pools the program created that Ember may convert from, and their devices, newest last. */
struct plain_pool {
	CUmemoryPool pool;
	int device;
};

#define lock ember_lock_physical
static struct plain_pool *plain_pools;
static size_t npools, cappools;

void ember_pools_created(CUmemoryPool pool, const CUmemPoolProps *props)
{
	if (!props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->handleTypes != CU_MEM_HANDLE_TYPE_NONE ||
	    props->maxSize || props->usage)
		return;
	ember_lock(&lock);
	if (ember_grow(&plain_pools, npools, &cappools, sizeof *plain_pools, 16))
		plain_pools[npools++] = (struct plain_pool){ pool, props->location.id };
	ember_unlock(&lock);
}

void ember_pools_destroyed(CUmemoryPool pool)
{
	ember_lock(&lock);
	for (size_t i = npools; i-- > 0;)
		if (plain_pools[i].pool == pool) {
			plain_pools[i] = plain_pools[--npools];
			break;
		}
	ember_unlock(&lock);
}

/*
 * Converted memory is placed on the current device: a pool of another
 * device keeps its own. pool NULL is the current device's current pool,
 * cuMemAllocAsync's: the program may have made one it shares current
 * (cuDeviceSetMemPool).
 */
bool ember_pool_convertible(CUmemoryPool *resolved)
{
	CUdevice dev;
	if (EMBER_REAL(cuCtxGetDevice)(&dev) != CUDA_SUCCESS)
		return false;
	if (!*resolved && EMBER_REAL(cuDeviceGetMemPool)(resolved, dev) != CUDA_SUCCESS)
		return false;
	CUmemoryPool pool = *resolved;
	bool plain = false;
	ember_lock(&lock);
	for (size_t i = 0; i < npools && !plain; i++)
		plain = plain_pools[i].pool == pool && plain_pools[i].device == dev;
	ember_unlock(&lock);
	CUmemoryPool fallback = NULL;
	return plain ||
	       (EMBER_REAL(cuDeviceGetDefaultMemPool)(&fallback, dev) == CUDA_SUCCESS && fallback == pool);
}
