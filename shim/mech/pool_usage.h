/*
 * What a pool's converted memory adds to the pool's usage attributes
 * (CU_MEMPOOL_ATTR_USED_MEM_CURRENT and _HIGH, RESERVED_MEM_CURRENT and
 * _HIGH). Ember makes a convertible pool's allocations managed memory that
 * the driver's pool never sees, so the driver answers for the rest alone:
 * PyTorch's cudaMallocAsync backend, whose torch.cuda.memory_allocated()
 * and max_memory_reserved() read these, would report next to nothing.
 * In use is a converted allocation the program holds; reserved adds what
 * Ember keeps of the pool's freed memory (kept.h). A high mark answered is
 * the driver's plus Ember's, each the most since made or reset: at least the
 * true peak of the sum, and the peak itself where Ember converts all.
 * The same table keeps each pool's release threshold, which Ember reads at
 * every synchronisation that finds kept memory.
 */
#ifndef EMBER_POOL_USAGE_H
#define EMBER_POOL_USAGE_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

/* A converted allocation of size bytes from pool, now in the program's hands (grows in use). */
void ember_pool_usage_made(CUmemoryPool pool, uint64_t size);

/* A converted allocation of pool freed for good (in use shrinks). */
void ember_pool_usage_freed(CUmemoryPool pool, uint64_t size);

/* Freed memory of pool moves into Ember's keeping (to_kept) or back out of it; ember_lock_physical held. */
void ember_pool_usage_kept_locked(CUmemoryPool pool, uint64_t size, bool to_kept);

/* The driver answered *value for attr of pool: add Ember's share where attr is a usage attribute. */
void ember_pool_usage_answer(CUmemoryPool pool, CUmemPool_attribute attr, cuuint64_t *value);

/* The program reset attr's high mark (a usage high mark set to 0): Ember's restarts at what it holds now. */
void ember_pool_usage_reset(CUmemoryPool pool, CUmemPool_attribute attr);

/*
 * The pool's release threshold as the program last set it
 * (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD through cuMemPoolSetAttribute, which
 * Ember sees), or as the driver answered once: a synchronisation reads it
 * for each pool with kept memory, without asking the driver each time.
 */
void ember_pool_usage_threshold_is(CUmemoryPool pool, cuuint64_t threshold);

/* That threshold, in *out; false if Ember has not learned it. */
bool ember_pool_usage_threshold(CUmemoryPool pool, cuuint64_t *out);

/* The pool is destroyed: its counts go (what it still has freed later counts nowhere). */
void ember_pool_usage_forget(CUmemoryPool pool);

/* fork(): the child keeps none of its parent's memory (kept.h), and counts none. */
void ember_pool_usage_after_fork_child(void);

#endif
