/*
 * Stream-ordered memory pools (cuMemAllocFromPoolAsync: JAX's cuda_async
 * allocator, RAPIDS' async resource; cuMemAllocAsync takes the device's
 * current pool). Under EMBER_MANAGE_ALL a pool's allocations are converted
 * to managed memory where the pool has nothing managed memory lacks: the
 * current device's default pool, or one the program created for it with no
 * shareable handles, no size cap and no usage. Others (IPC export, a cap
 * the program relies on) keep the driver's memory, counted against the
 * budget.
 */
#ifndef EMBER_POOLS_H
#define EMBER_POOLS_H

#include <cuda.h>
#include <stdbool.h>

/* The program created pool with props. */
void ember_pools_created(CUmemoryPool pool, const CUmemPoolProps *props);

/* The pool is about to be destroyed. */
void ember_pools_destroyed(CUmemoryPool pool);

/*
 * Whether *pool's allocations may become managed memory; a NULL *pool is
 * the current device's current pool, and is set to it.
 */
bool ember_pool_convertible(CUmemoryPool *pool);

#endif
