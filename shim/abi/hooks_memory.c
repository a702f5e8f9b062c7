/*
 * Allocation, free, advice and memory-information entry points.
 *
 * Managed allocations are registered and advised mapped; with
 * EMBER_MANAGE_ALL plain allocations become managed ones ("converted").
 * Other device memory is only accounted against the budget. Whatever goes
 * wrong inside Ember, the application gets the driver's own result, and the
 * allocation concerned is left to the driver.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>

#include "locks.h"
#include "state.h"
#include "budget_source.h"
#include "capture.h"
#include "census.h"
#include "context_teardown.h"
#include "gpus.h"
#include "host_touch.h"
#include "kept.h"
#include "memory_sync.h"
#include "ops_driver.h"
#include "physical.h"
#include "pools.h"
#include "placement.h"
#include "shim.h"
#include "stats.h"
#include "touch_pool.h"
#include "tracer.h"
#include "worker.h"

static bool placing(void)
{
	return ember_active && ember_cfg.mode != EMBER_MODE_OFF;
}

/*
 * A conversion that held the program's thread for 5 ms or more, step by
 * step, where the log asks for detail: building a model past the budget
 * waits in its allocations (docs/findings.md).
 */
enum { SLOW_CONVERSION_NS = 5 * 1000 * 1000 };

static void note_if_slow(CUdeviceptr p, size_t bytes, const uint64_t t[5])
{
	if (t[4] - t[0] >= SLOW_CONVERSION_NS)
		ember_debug("converting %#llx (%zu MiB) took %.1f ms: %.1f allocating, %.1f advising, %.1f placing, "
			    "%.1f touching", (unsigned long long)p, bytes >> 20, (t[4] - t[0]) / 1e6, (t[1] - t[0]) / 1e6,
			    (t[2] - t[1]) / 1e6, (t[3] - t[2]) / 1e6, (t[4] - t[3]) / 1e6);
}

/* The context the calling thread allocates in, which the allocation dies with (hooks_context.c). */
static void note_context(struct ember_alloc *a)
{
	CUcontext ctx = NULL;
	EMBER_REAL(cuCtxGetCurrent)(&ctx);
	__atomic_store_n(&a->ctx, (void *)ctx, __ATOMIC_RELAXED);
}

/* Where a stream-ordered allocation was made: its stream, which alone may use it at once, and its pool. */
struct stream_order {
	struct ember_at at;
	CUmemoryPool pool;
};

/*
 * Register and advise a managed allocation; on any failure leave it to the
 * driver. t[0] and t[1]: when a conversion's allocation began and ended.
 * A conversion of a stream-ordered allocation says where it was made (NULL:
 * not stream-ordered).
 */
static void adopt(CUdeviceptr p, size_t bytes, enum ember_alloc_kind kind, uint64_t t[5],
		  const struct stream_order *ordered)
{
	int dev = ember_budget_current_device();
	struct ember_alloc *a = ember_table_insert(EMBER_TABLE, p, bytes, dev, kind);
	if (!a) {
		ember_warn("cannot track the allocation at %#llx (%zu bytes); the driver places it",
			   (unsigned long long)p, bytes);
		return;
	}
	note_context(a);
	/* accessed by the GPUs in use; one that starts using it later is added at its launch (gpus.h) */
	if (ember_strategy->scans)
		__atomic_store_n(&a->accessed_by, ember_gpus_new_alloc_mask(dev), __ATOMIC_RELAXED); /* in the table already */
	CUresult r = ember_placement_advise(a);
	t[2] = ember_driver_now();
	if (r != CUDA_SUCCESS) {
		ember_warn("advising %#llx (%zu bytes) failed (CUresult %d); the driver places it",
			   (unsigned long long)p, bytes, (int)r);
		ember_alloc_put(EMBER_TABLE, ember_table_remove(EMBER_TABLE, p));
		return;
	}
	ember_trace_alloc(a);
	if (ember_cfg.live)
		ember_worker_wake(); /* the worker keeps the live file fresh */
	ember_debug("%s %#llx: %zu bytes on GPU %d, %u regions", kind == EMBER_ALLOC_CONVERTED ? "converted" : "managed",
		    (unsigned long long)p, bytes, dev, a->nregions);
	if (kind == EMBER_ALLOC_CONVERTED) {
		a->pool = ordered ? ordered->pool : NULL; /* before the program has the address: no one else reads it */
		/*
		 * Made for the GPU: populate it there while it fits, before the
		 * program can touch it, or its first touch would create the pages
		 * on the host. Unpopulated pages move nothing, so this is quick,
		 * but the thread's wait for it is a wait for every move queued
		 * before it on Ember's stream: a stream-ordered allocation's own
		 * stream waits instead, on the GPU, as the program's use of it must.
		 */
		struct ember_at at = ordered ? ordered->at : (struct ember_at){ 0 };
		EMBER_REAL(cuCtxGetCurrent)((CUcontext *)&at.ctx);
		ember_placement_populate(a, &at, ordered ? EMBER_ORDER_STREAM : EMBER_ORDER_SYNC);
		t[3] = ember_driver_now();
		if (ember_cfg.populate_host) /* before the program has the address: nothing else touches it */
			ember_host_touch_mapped(a);
		t[4] = ember_driver_now();
		note_if_slow(p, bytes, t);
	}
}

static void track_plain(CUdeviceptr p, size_t bytes)
{
	int dev = ember_budget_current_device();
	struct ember_alloc *a = dev >= 0 ? ember_table_insert(EMBER_TABLE, p, bytes, dev, EMBER_ALLOC_PLAIN) : NULL;
	if (a) {
		note_context(a);
		ember_budget_plain(dev, (int64_t)bytes);
		ember_trace_plain(dev, (int64_t)bytes);
	}
}

/*
 * Take p out of the table. A placed allocation is returned after its
 * migrations have drained; a plain one leaves the budget and NULL is
 * returned, as for memory Ember never knew.
 */
static struct ember_alloc *untrack(CUdeviceptr p)
{
	struct ember_alloc *a = ember_table_remove(EMBER_TABLE, p);
	if (!a)
		return NULL;
	if (a->kind == EMBER_ALLOC_PLAIN) {
		ember_budget_plain(a->device, -(int64_t)a->size);
		ember_trace_plain(a->device, -(int64_t)a->size);
		ember_alloc_put(EMBER_TABLE, a);
		return NULL;
	}
	ember_worker_wait_alloc(a);
	ember_gpus_freed(a); /* its regions on peer GPUs: gpus.h */
	if (a->kind == EMBER_ALLOC_CONVERTED) {
		ember_touch_pool_settle(a); /* marked freed: no touch starts on it now */
		ember_host_touch_freed(a);
	}
	ember_trace_free(a);
	ember_stats_retire(a);
	return a;
}

void ember_memory_forget_context(CUcontext ctx)
{
	struct ember_kept e;
	while (ember_kept_of_context(ctx, &e)) /* the teardown frees their memory, and their events */
		(void)e;
	uint64_t *bases = NULL;
	size_t n = 0;
	ember_table_lock(EMBER_TABLE);
	unsigned count = ember_table_count(EMBER_TABLE);
	bases = count ? malloc(count * sizeof *bases) : NULL;
	for (unsigned i = 0; bases && i < count; i++) {
		struct ember_alloc *a = ember_table_at(EMBER_TABLE, i);
		if (__atomic_load_n(&a->ctx, __ATOMIC_RELAXED) == (void *)ctx)
			bases[n++] = a->base;
	}
	ember_table_unlock(EMBER_TABLE);
	if (count && !bases)
		ember_warn("out of memory: the allocations of context %p stay in Ember's table", (void *)ctx);
	for (size_t i = 0; i < n; i++) {
		struct ember_alloc *a = untrack(bases[i]);
		if (a)
			ember_alloc_put(EMBER_TABLE, a);
	}
	if (n)
		ember_info("context %p is torn down: Ember forgets its %zu allocation%s", (void *)ctx, n, n == 1 ? "" : "s");
	free(bases);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	CUresult r = EMBER_REAL(cuMemAllocManaged)(dptr, bytesize, flags);
	if (r != CUDA_SUCCESS || !placing())
		return r;
	ember_census_count(EMBER_ENTRY_MANAGED, bytesize, false);
	if (flags & CU_MEM_ATTACH_HOST) {
		/* host-attached memory is not the GPU's until the program attaches it to a stream */
		ember_debug("%#llx is CU_MEM_ATTACH_HOST: left to the driver", (unsigned long long)*dptr);
		return r;
	}
	uint64_t t[5] = { 0 };
	adopt(*dptr, bytesize, EMBER_ALLOC_MANAGED, t, NULL);
	return r;
}

/*
 * Under EMBER_MANAGE_ALL, allocate managed memory in place of plain and
 * place it (ordered: a stream-ordered allocation's stream, else NULL).
 * Returns false when the plain allocation should go ahead.
 */
static bool converted(CUdeviceptr *dptr, size_t bytesize, const struct stream_order *ordered)
{
	if (!placing() || !ember_cfg.manage_all || bytesize == 0 || !dptr)
		return false;
	uint64_t t[5] = { ember_driver_now() };
	CUresult r = EMBER_REAL(cuMemAllocManaged)(dptr, bytesize, CU_MEM_ATTACH_GLOBAL);
	t[1] = ember_driver_now();
	if (r != CUDA_SUCCESS) {
		ember_info("EMBER_MANAGE_ALL: a managed allocation of %zu bytes failed (CUresult %d); "
			   "allocating plain memory", bytesize, (int)r);
		return false;
	}
	adopt(*dptr, bytesize, EMBER_ALLOC_CONVERTED, t, ordered);
	return true;
}

/* The plain allocation entry points, converted under EMBER_MANAGE_ALL. */
static CUresult alloc_plain(CUdeviceptr *dptr, size_t bytesize, CUresult (*real)(CUdeviceptr *, size_t))
{
	if (!placing())
		return real(dptr, bytesize);
	if (converted(dptr, bytesize, NULL)) {
		ember_census_count(EMBER_ENTRY_ALLOC, bytesize, true);
		return CUDA_SUCCESS;
	}
	CUresult r = real(dptr, bytesize);
	if (r == CUDA_SUCCESS) {
		ember_census_count(EMBER_ENTRY_ALLOC, bytesize, false);
		track_plain(*dptr, bytesize);
	}
	return r;
}

static CUresult real_alloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return EMBER_REAL(cuMemAlloc_v2)(dptr, bytesize);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return alloc_plain(dptr, bytesize, real_alloc_v2);
}

/* Under EMBER_MANAGE_ALL, say once per entry point why its memory stays plain. */
static void not_converted(const char *entry, const char *why)
{
	static const char *said[8];
	if (!placing() || !ember_cfg.manage_all)
		return;
	ember_lock(&ember_lock_said);
	bool first = true;
	for (size_t i = 0; i < 8 && said[i] && first; i++)
		first = said[i] != entry;
	for (size_t i = 0; i < 8 && first; i++)
		if (!said[i]) {
			said[i] = entry;
			break;
		}
	ember_unlock(&ember_lock_said);
	if (first)
		ember_info("EMBER_MANAGE_ALL: %s memory stays plain device memory: %s", entry, why);
}

/* Really free a kept allocation let go: out of the table, and freed once its stream passed its free. */
static void let_go(const struct ember_kept *e)
{
	struct ember_alloc *a = untrack(e->base);
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

/*
 * Under EMBER_KEEP_FREED, memory of bytes that the program freed in stream
 * order and Ember kept (kept.h): at once where stream freed it, else once
 * the stream that did has passed the free. Whether *dptr is such memory.
 */
static bool reused(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream, bool ptsz)
{
	if (!ember_keeping())
		return false;
	CUcontext ctx = NULL;
	EMBER_REAL(cuCtxGetCurrent)(&ctx);
	CUstream key;
	uint64_t thread;
	ember_kept_stream(stream, ptsz, &key, &thread);
	struct ember_kept e;
	bool same;
	if (!dptr || !ember_kept_take(bytesize, ctx, pool, key, thread, &e, &same))
		return false;
	if (!same && EMBER_REAL(cuEventQuery)(e.freed) != CUDA_SUCCESS) {
		if (!ember_kept_put(&e)) /* still in use on its stream: kept for later, or freed after it */
			let_go(&e);
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
	bool captured = placing() && ember_stream_captured(stream, ptsz);
	struct stream_order made = { .at = { .stream = stream, .per_thread = ptsz }, .pool = pool };
	if (captured)
		not_converted(name, "an allocation into a stream being captured belongs to its graph");
	else if (placing() && ember_cfg.manage_all && !ember_pool_convertible(&made.pool))
		not_converted(name, "a pool made with shareable handles, a size cap or a usage, or one of another "
				    "GPU, keeps what managed memory has not");
	else if (reused(dptr, bytesize, made.pool, stream, ptsz) || converted(dptr, bytesize, &made)) {
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
	if (r == CUDA_SUCCESS && placing()) {
		ember_census_count(entry, bytesize, false);
		if (!captured)
			track_plain(*dptr, bytesize);
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

EMBER_PUBLIC CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
					  const CUmemAllocationProp *prop, unsigned long long flags)
{
	if (!placing())
		return EMBER_REAL(cuMemCreate)(handle, size, prop, flags);
	not_converted("cuMemCreate", "the program maps these physical allocations itself (cuMemMap), which "
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
	CUresult r = EMBER_REAL(cuMemRelease)(handle);
	if (r == CUDA_SUCCESS && placing())
		ember_physical_released(handle);
	return r;
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
	if (r == CUDA_SUCCESS && placing())
		ember_pools_created(*pool, poolProps);
	return r;
}

/* The pool's kept memory past keep bytes, let go oldest first; how many bytes. */
static uint64_t let_go_of_pool(CUmemoryPool pool, uint64_t keep)
{
	uint64_t bytes = 0;
	struct ember_kept e;
	while (placing() && ember_keeping() && ember_kept_of_pool(pool, keep, &e)) {
		bytes += e.size;
		let_go(&e);
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
 * 0 unless the program set one: PyTorch sets no limit, JAX its reservation).
 */
void ember_memory_synchronized(void)
{
	if (!placing() || !ember_keeping() || !ember_kept_bytes())
		return;
	CUmemoryPool pool, *after = NULL;
	for (; ember_kept_next_pool(after, &pool); after = &pool) {
		cuuint64_t threshold = 0;
		if (EMBER_REAL(cuMemPoolGetAttribute)(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold) !=
		    CUDA_SUCCESS)
			threshold = 0; /* a pool the driver no longer knows keeps nothing */
		let_go_of_pool(pool, threshold);
	}
}

EMBER_PUBLIC CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
	trim_pool(pool, 0);
	if (placing()) /* before the driver may hand the handle out again */
		ember_pools_destroyed(pool);
	return EMBER_REAL(cuMemPoolDestroy)(pool);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	trim_pool(pool, minBytesToKeep);
	return EMBER_REAL(cuMemPoolTrimTo)(pool, minBytesToKeep);
}

EMBER_PUBLIC CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
						 size_t Height, unsigned int ElementSizeBytes)
{
	not_converted("cuMemAllocPitch", "the driver's pitch and alignment rules have no managed equivalent");
	CUresult r = EMBER_REAL(cuMemAllocPitch_v2)(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
	if (r == CUDA_SUCCESS && placing()) {
		ember_census_count(EMBER_ENTRY_PITCH, *pPitch * Height, false);
		track_plain(*dptr, *pPitch * Height);
	}
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	struct ember_kept e;
	if (placing() && ember_keeping() && ember_kept_forget(dptr, &e)) { /* freed twice: freed now, after its stream */
		EMBER_REAL(cuEventSynchronize)(e.freed);
		EMBER_REAL(cuEventDestroy_v2)(e.freed);
	}
	struct ember_alloc *a = placing() ? untrack(dptr) : NULL;
	CUresult r = EMBER_REAL(cuMemFree_v2)(dptr);
	if (a)
		ember_alloc_put(EMBER_TABLE, a);
	return r;
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
	bool captured = placing() && ember_stream_captured(stream, ptsz);
	if (placing() && !captured) {
		CUresult kept;
		if (keep(dptr, stream, ptsz, &kept))
			return kept;
	}
	struct ember_alloc *a = placing() && !captured ? untrack(dptr) : NULL;
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

EMBER_PUBLIC CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	CUresult r = EMBER_REAL(cuMemGetInfo_v2)(free_bytes, total_bytes);
	if (r != CUDA_SUCCESS || !placing() || !free_bytes || !total_bytes)
		return r;
	int dev = ember_budget_current_device();
	if (dev < 0 || !ember_budget_is_explicit(dev))
		return r;
	if (ember_cfg.manage_all) {
		/*
		 * Under manage-all the budget caps residency, not capacity: memory
		 * past it stays mapped from host memory. Frameworks size their pools
		 * from these figures (JAX preallocates 75% of the total), so a
		 * budget here would cap them at the budget and defeat the mode.
		 */
		static bool said;
		if (ember_first_time(&said))
			ember_info("EMBER_MANAGE_ALL: cuMemGetInfo reports the GPU's own figures, not the budget: "
				   "allocations past the budget stay mapped from host memory");
		return r;
	}
	ember_table_lock(EMBER_TABLE);
	const struct ember_device_account *acc = ember_table_account(EMBER_TABLE, dev);
	uint64_t used = acc->resident + acc->other, budget = acc->budget;
	ember_table_unlock(EMBER_TABLE);
	uint64_t left = budget > used ? budget - used : 0;
	*total_bytes = budget;
	*free_bytes = left < *free_bytes ? left : *free_bytes;
	return r;
}

/* ---- the application's own hints: Ember keeps off those ranges ---- */

EMBER_PUBLIC CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{
	CUresult r = EMBER_REAL(cuMemAdvise)(devPtr, count, advice, device);
	if (r == CUDA_SUCCESS && placing())
		ember_placement_app_hint(devPtr, count);
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
					     CUmemLocation location)
{
	CUresult r = EMBER_REAL(cuMemAdvise_v2)(devPtr, count, advice, location);
	if (r == CUDA_SUCCESS && placing())
		ember_placement_app_hint(devPtr, count);
	return r;
}

#define PREFETCH_HOOK(name, params, args)                                                  \
	EMBER_PUBLIC CUresult CUDAAPI name params                                          \
	{                                                                                  \
		CUresult r = EMBER_REAL(name) args;                                        \
		if (r == CUDA_SUCCESS && placing())                                        \
			ember_placement_app_hint(devPtr, count);                           \
		return r;                                                                  \
	}

PREFETCH_HOOK(cuMemPrefetchAsync, (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream),
	      (devPtr, count, dstDevice, hStream))
PREFETCH_HOOK(cuMemPrefetchAsync_ptsz,
	      (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream),
	      (devPtr, count, dstDevice, hStream))
PREFETCH_HOOK(cuMemPrefetchAsync_v2,
	      (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream),
	      (devPtr, count, location, flags, hStream))
PREFETCH_HOOK(cuMemPrefetchAsync_v2_ptsz,
	      (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream),
	      (devPtr, count, location, flags, hStream))
