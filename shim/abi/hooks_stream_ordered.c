/*
 * Stream-ordered allocation entry points (cuMemAllocAsync, pools, and
 * cuMemFreeAsync). Under EMBER_MANAGE_ALL their memory is converted as
 * cuMemAlloc's is (hooks_memory.c), and under EMBER_KEEP_FREED what the
 * program frees in stream order is kept for its next allocation of the
 * same size, within what its pool would keep (kept.h).
 */
#include <cuda.h>

#include "state.h"
#include "budget_source.h"
#include "capture.h"
#include "census.h"
#include "kept.h"
#include "memory_hooks.h"
#include "memory_sync.h"
#include "pool_usage.h"
#include "pools.h"
#include "shim.h"
#include "worker.h"

/* Really free a kept allocation let go: out of the table, and freed once its stream passed its free. */
static void let_go(const struct ember_kept *e)
{
	struct ember_alloc *a = ember_memory_untrack(e->base);
	if (a)
		ember_alloc_put(EMBER_TABLE, a);
	ember_worker_free_after(e->base, e->freed, e->ctx);
}

/* Whether base is still a converted allocation of Ember's table, of size bytes. */
static bool still_converted(CUdeviceptr base, uint64_t size)
{
	ember_table_lock(EMBER_TABLE);
	struct ember_alloc *a = ember_table_find(EMBER_TABLE, base);
	bool ok = a && a->base == base && a->size == size && a->kind == EMBER_ALLOC_CONVERTED;
	ember_table_unlock(EMBER_TABLE);
	return ok;
}

/* The kept entries from other streams tried for one allocation, oldest first, before a new one is made. */
#define OTHER_STREAMS_TRIED 4

/*
 * Under EMBER_KEEP_FREED, memory of bytes that the program freed in stream
 * order and Ember kept (kept.h): at once where stream freed it, else once
 * the stream that did has passed the free; an entry whose stream has not
 * goes back as the newest, and the next oldest is tried. Whether *dptr is
 * such memory.
 */
static bool reused(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream, bool ptsz)
{
	if (!ember_keeping() || !dptr)
		return false;
	CUcontext ctx = NULL;
	EMBER_REAL(cuCtxGetCurrent)(&ctx);
	CUstream key;
	uint64_t thread;
	ember_kept_stream(stream, ptsz, &key, &thread);
	struct ember_kept e;
	bool same;
	CUdeviceptr first_tried = 0;
	for (int tries = 0;; tries++) {
		if (!ember_kept_take(bytesize, ctx, pool, key, thread, &e, &same))
			return false;
		if (same || EMBER_REAL(cuEventQuery)(e.freed) == CUDA_SUCCESS)
			break;
		if (!ember_kept_put(&e)) /* still in use on its stream: kept for later, or freed after it */
			let_go(&e);
		if (!first_tried)
			first_tried = e.base;
		else if (e.base == first_tried) /* round to the first again: every candidate is in use */
			return false;
		if (tries + 1 == OTHER_STREAMS_TRIED)
			return false;
	}
	EMBER_REAL(cuEventDestroy_v2)(e.freed);
	if (!still_converted(e.base, e.size)) /* freed meanwhile by other means (its context's teardown) */
		return false;
	ember_kept_reused();
	*dptr = e.base;
	return true;
}

/*
 * A stream-ordered allocation: from pool (cuMemAllocFromPoolAsync), or from
 * the current device's current pool where pool is NULL (cuMemAllocAsync).
 * Under EMBER_MANAGE_ALL it becomes managed memory, which is usable at once
 * (a superset of stream-ordered availability), where the pool has nothing
 * managed memory lacks (pools.h) and the stream is not being captured.
 * Into a stream being captured, the allocation is a node of the program's
 * graph (PyTorch's cudaMallocAsync backend under CUDA graphs), the driver's
 * to make at each launch: managed memory in its place would be allocated
 * once, outside the graph, by a call that breaks the capture; and it is not
 * counted, since it lives while the graph says. Otherwise the driver's
 * memory is counted against the budget until its free, as plain memory is.
 */
static CUresult alloc_stream_ordered(enum ember_entry entry, CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				     CUstream stream, bool ptsz)
{
	const char *name = pool ? "cuMemAllocFromPoolAsync" : "cuMemAllocAsync";
	bool captured = ember_memory_placing() && ember_stream_captured(stream, ptsz);
	struct stream_order made = { .at = { .stream = stream, .per_thread = ptsz }, .pool = pool };
	if (captured)
		ember_memory_not_converted(name, "an allocation into a stream being captured belongs to its graph");
	else if (ember_memory_placing() && ember_cfg.manage_all && !ember_pool_convertible(&made.pool))
		ember_memory_not_converted(name, "a pool made with shareable handles, a size cap or a usage, or one "
						 "of another GPU, keeps what managed memory has not");
	else if (reused(dptr, bytesize, made.pool, stream, ptsz) || ember_memory_converted(dptr, bytesize, &made)) {
		ember_census_count(entry, bytesize, true);
		return CUDA_SUCCESS;
	}
	CUresult r;
	if (pool)
		r = ptsz ? EMBER_REAL(cuMemAllocFromPoolAsync_ptsz)(dptr, bytesize, pool, stream)
			 : EMBER_REAL(cuMemAllocFromPoolAsync)(dptr, bytesize, pool, stream);
	else
		r = ptsz ? EMBER_REAL(cuMemAllocAsync_ptsz)(dptr, bytesize, stream)
			 : EMBER_REAL(cuMemAllocAsync)(dptr, bytesize, stream);
	if (r == CUDA_SUCCESS && ember_memory_placing()) {
		ember_census_count(entry, bytesize, false);
		if (!captured)
			ember_memory_track_plain(*dptr, bytesize);
	}
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc_stream_ordered(EMBER_ENTRY_ASYNC, dptr, bytesize, NULL, hStream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc_stream_ordered(EMBER_ENTRY_ASYNC, dptr, bytesize, NULL, hStream, true);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
						      CUstream hStream)
{
	return pool ? alloc_stream_ordered(EMBER_ENTRY_POOL, dptr, bytesize, pool, hStream, false)
		    : EMBER_REAL(cuMemAllocFromPoolAsync)(dptr, bytesize, pool, hStream);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
							   CUstream hStream)
{
	return pool ? alloc_stream_ordered(EMBER_ENTRY_POOL, dptr, bytesize, pool, hStream, true)
		    : EMBER_REAL(cuMemAllocFromPoolAsync_ptsz)(dptr, bytesize, pool, hStream);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	CUresult r = EMBER_REAL(cuMemPoolCreate)(pool, poolProps);
	if (r == CUDA_SUCCESS && ember_memory_placing())
		ember_pools_created(*pool, poolProps);
	return r;
}

/* The pool's kept memory past keep bytes, let go oldest first; how many bytes. */
static uint64_t let_go_of_pool(CUmemoryPool pool, uint64_t keep)
{
	uint64_t bytes = 0;
	struct ember_kept batch[64];
	size_t got;
	while (ember_memory_placing() && ember_keeping() &&
	       (got = ember_kept_of_pool(pool, keep, batch, sizeof batch / sizeof *batch)) > 0)
		for (size_t i = 0; i < got; i++) {
			bytes += batch[i].size;
			let_go(&batch[i]);
		}
	return bytes;
}

/* The program trims or destroys the pool: it asks for its memory back. */
static void trim_pool(CUmemoryPool pool, uint64_t keep)
{
	uint64_t bytes = let_go_of_pool(pool, keep);
	if (bytes)
		ember_kept_trimmed(bytes);
}

/*
 * At a synchronisation, as the driver's pool does, each pool gives back
 * what it keeps past its release threshold (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
 * 0 unless the program set one: PyTorch sets no limit, JAX its reservation),
 * asked of the driver once a pool (pool_usage.h).
 */
void ember_memory_synchronized(void)
{
	if (!ember_memory_placing() || !ember_keeping() || !ember_kept_bytes())
		return;
	CUmemoryPool pool, *after = NULL;
	for (; ember_kept_next_pool(after, &pool); after = &pool) {
		cuuint64_t threshold = 0;
		if (!ember_pool_usage_threshold(pool, &threshold)) { /* neither set by the program nor asked before */
			if (EMBER_REAL(cuMemPoolGetAttribute)(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold) ==
			    CUDA_SUCCESS)
				ember_pool_usage_threshold_is(pool, threshold);
			else
				threshold = 0; /* a pool the driver no longer knows keeps nothing */
		}
		let_go_of_pool(pool, threshold);
	}
}

EMBER_PUBLIC CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
	trim_pool(pool, 0);
	if (ember_memory_placing()) { /* before the driver may hand the handle out again */
		ember_pools_destroyed(pool);
		ember_pool_usage_forget(pool);
	}
	return EMBER_REAL(cuMemPoolDestroy)(pool);
}

/* A pool's usage counts the memory of its that Ember converted too (pool_usage.h). */
EMBER_PUBLIC CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	CUresult r = EMBER_REAL(cuMemPoolGetAttribute)(pool, attr, value);
	if (r == CUDA_SUCCESS && ember_memory_placing())
		ember_pool_usage_answer(pool, attr, value);
	return r;
}

/*
 * Resetting a usage high mark (to 0, the one value the driver takes) resets
 * Ember's share of it too; a release threshold set is kept for the
 * synchronisations that read it.
 */
EMBER_PUBLIC CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	CUresult r = EMBER_REAL(cuMemPoolSetAttribute)(pool, attr, value);
	if (r != CUDA_SUCCESS || !ember_memory_placing())
		return r;
	if (attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
		ember_pool_usage_threshold_is(pool, *(const cuuint64_t *)value);
	else
		ember_pool_usage_reset(pool, attr);
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	trim_pool(pool, minBytesToKeep);
	return EMBER_REAL(cuMemPoolTrimTo)(pool, minBytesToKeep);
}

/* Free converted memory once stream has passed this point (the worker frees it after ev, recorded there). */
static CUresult free_after_event(CUdeviceptr dptr, CUstream stream, bool ptsz)
{
	CUevent ev = NULL;
	CUcontext ctx = NULL;
	EMBER_REAL(cuCtxGetCurrent)(&ctx);
	CUresult r = EMBER_REAL(cuEventCreate)(&ev, CU_EVENT_DISABLE_TIMING);
	if (r == CUDA_SUCCESS)
		r = ptsz ? EMBER_REAL(cuEventRecord_ptsz)(ev, stream) : EMBER_REAL(cuEventRecord)(ev, stream);
	if (r != CUDA_SUCCESS) {
		/* no event: order it the slow way, on this thread */
		if (ev)
			EMBER_REAL(cuEventDestroy_v2)(ev);
		r = ptsz ? EMBER_REAL(cuStreamSynchronize_ptsz)(stream) : EMBER_REAL(cuStreamSynchronize)(stream);
		return r == CUDA_SUCCESS ? EMBER_REAL(cuMemFree_v2)(dptr) : r;
	}
	ember_worker_free_after(dptr, ev, ctx);
	return CUDA_SUCCESS;
}

/*
 * Under EMBER_KEEP_FREED, keep converted stream-ordered memory that the
 * program frees in stream order for its next allocation of the same size
 * (kept.h), letting the oldest go past the amount. Whether dptr was such
 * memory, with the result in *r: a second free of kept memory is refused
 * as the driver refuses a pointer it does not know.
 */
static bool keep(CUdeviceptr dptr, CUstream stream, bool ptsz, CUresult *r)
{
	if (!ember_keeping())
		return false;
	struct ember_kept e = { .base = dptr };
	if (ember_kept_forget(dptr, &e)) {
		if (!ember_kept_put(&e))
			let_go(&e);
		*r = CUDA_ERROR_INVALID_VALUE;
		return true;
	}
	ember_table_lock(EMBER_TABLE);
	struct ember_alloc *a = ember_table_find(EMBER_TABLE, dptr);
	bool ours = a && a->base == dptr && a->kind == EMBER_ALLOC_CONVERTED && a->pool;
	int dev = ours ? a->device : -1;
	e.size = ours ? a->size : 0;
	e.pool = ours ? a->pool : NULL;
	ember_table_unlock(EMBER_TABLE);
	uint64_t cap = dev >= 0 ? ember_size_resolve(ember_cfg.keep_freed, ember_budget_bytes(dev)) : 0;
	if (!ours || e.size > cap)
		return false;
	EMBER_REAL(cuCtxGetCurrent)(&e.ctx);
	ember_kept_stream(stream, ptsz, &e.stream, &e.thread);
	if (EMBER_REAL(cuEventCreate)(&e.freed, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		return false;
	if ((ptsz ? EMBER_REAL(cuEventRecord_ptsz)(e.freed, stream) : EMBER_REAL(cuEventRecord)(e.freed, stream)) !=
	    CUDA_SUCCESS) {
		EMBER_REAL(cuEventDestroy_v2)(e.freed);
		return false;
	}
	if (!ember_kept_put(&e)) {
		EMBER_REAL(cuEventDestroy_v2)(e.freed);
		return false;
	}
	struct ember_kept old;
	while (ember_kept_trim(cap, &old))
		let_go(&old);
	*r = CUDA_SUCCESS;
	return true;
}

static CUresult free_async(CUdeviceptr dptr, CUstream stream, bool ptsz)
{
	/*
	 * Into a stream being captured, a free is a node of the graph and must
	 * name the graph's own allocation, which Ember never tracks: the driver
	 * refuses any other with CUDA_ERROR_INVALID_VALUE and leaves it
	 * allocated, the capture whole (ember-capture-probe, ab-42's call 6).
	 * So the driver answers, and converted memory stays Ember's.
	 */
	bool captured = ember_memory_placing() && ember_stream_captured(stream, ptsz);
	if (ember_memory_placing() && !captured) {
		CUresult kept;
		if (keep(dptr, stream, ptsz, &kept))
			return kept;
	}
	struct ember_alloc *a = ember_memory_placing() && !captured ? ember_memory_untrack(dptr) : NULL;
	if (!a)
		return ptsz ? EMBER_REAL(cuMemFreeAsync_ptsz)(dptr, stream) : EMBER_REAL(cuMemFreeAsync)(dptr, stream);
	/* converted memory: free it once the stream has passed this point */
	ember_alloc_put(EMBER_TABLE, a);
	return free_after_event(dptr, stream, ptsz);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return free_async(dptr, hStream, false);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return free_async(dptr, hStream, true);
}
