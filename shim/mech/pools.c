/* The pools whose allocations Ember may convert (pools.h). */
#include "grow.h"
#include "locks.h"
#include "pools.h"
#include "shim.h"

/* The pools the program created that Ember may convert from, newest last. */
#define lock ember_lock_physical
static CUmemoryPool *plain_pools;
static size_t npools, cappools;

void ember_pools_created(CUmemoryPool pool, const CUmemPoolProps *props)
{
	if (!props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->handleTypes != CU_MEM_HANDLE_TYPE_NONE ||
	    props->maxSize || props->usage)
		return;
	ember_lock(&lock);
	if (ember_grow(&plain_pools, npools, &cappools, sizeof *plain_pools, 16))
		plain_pools[npools++] = pool;
	ember_unlock(&lock);
}

void ember_pools_destroyed(CUmemoryPool pool)
{
	ember_lock(&lock);
	for (size_t i = npools; i-- > 0;)
		if (plain_pools[i] == pool) {
			plain_pools[i] = plain_pools[--npools];
			break;
		}
	ember_unlock(&lock);
}

bool ember_pool_convertible(CUmemoryPool pool)
{
	bool plain = false;
	ember_lock(&lock);
	for (size_t i = 0; i < npools && !plain; i++)
		plain = plain_pools[i] == pool;
	ember_unlock(&lock);
	if (plain)
		return true;
	CUdevice dev;
	CUmemoryPool fallback = NULL;
	return pool && EMBER_REAL(cuCtxGetDevice)(&dev) == CUDA_SUCCESS &&
	       EMBER_REAL(cuDeviceGetDefaultMemPool)(&fallback, dev) == CUDA_SUCCESS && fallback == pool;
}
