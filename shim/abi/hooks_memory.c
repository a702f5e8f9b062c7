/*
 * Allocation, free, advice and memory-information entry points (the
 * stream-ordered ones: hooks_stream_ordered.c; the virtual memory API's:
 * hooks_vmm.c).
 *
 * Managed allocations are registered and advised mapped; with
 * EMBER_MANAGE_ALL plain allocations become managed ones ("converted").
 * Other device memory is only accounted against the budget. Whatever goes
 * wrong inside Ember, the application gets the driver's own result, and the
 * allocation concerned is left to the driver.
 */
#include <cuda.h>
#include <stdlib.h>

#include "locks.h"
#include "state.h"
#include "budget_source.h"
#include "census.h"
#include "context_teardown.h"
#include "gpus.h"
#include "host_touch.h"
#include "kept.h"
#include "memory_hooks.h"
#include "ops_driver.h"
#include "placement.h"
#include "pool_usage.h"
#include "shim.h"
#include "stats.h"
#include "touch_pool.h"
#include "tracer.h"
#include "worker.h"

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
		if (a->pool)
			ember_pool_usage_made(a->pool, a->size);
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

void ember_memory_track_plain(CUdeviceptr p, size_t bytes)
{
	int dev = ember_budget_current_device();
	struct ember_alloc *a = dev >= 0 ? ember_table_insert(EMBER_TABLE, p, bytes, dev, EMBER_ALLOC_PLAIN) : NULL;
	if (a) {
		note_context(a);
		ember_budget_plain(dev, (int64_t)bytes);
		ember_trace_plain(dev, (int64_t)bytes);
	}
}

struct ember_alloc *ember_memory_untrack(CUdeviceptr p)
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
		if (a->pool)
			ember_pool_usage_freed(a->pool, a->size);
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
		struct ember_alloc *a = ember_memory_untrack(bases[i]);
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
	if (r != CUDA_SUCCESS || !ember_memory_placing())
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

bool ember_memory_converted(CUdeviceptr *dptr, size_t bytesize, const struct stream_order *ordered)
{
	if (!ember_memory_placing() || !ember_cfg.manage_all || bytesize == 0 || !dptr)
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
	if (!ember_memory_placing())
		return real(dptr, bytesize);
	if (ember_memory_converted(dptr, bytesize, NULL)) {
		ember_census_count(EMBER_ENTRY_ALLOC, bytesize, true);
		return CUDA_SUCCESS;
	}
	CUresult r = real(dptr, bytesize);
	if (r == CUDA_SUCCESS) {
		ember_census_count(EMBER_ENTRY_ALLOC, bytesize, false);
		ember_memory_track_plain(*dptr, bytesize);
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

void ember_memory_not_converted(const char *entry, const char *why)
{
	static const char *said[8];
	if (!ember_memory_placing() || !ember_cfg.manage_all)
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

EMBER_PUBLIC CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
						 size_t Height, unsigned int ElementSizeBytes)
{
	ember_memory_not_converted("cuMemAllocPitch", "the driver's pitch and alignment rules have no managed equivalent");
	CUresult r = EMBER_REAL(cuMemAllocPitch_v2)(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
	if (r == CUDA_SUCCESS && ember_memory_placing()) {
		ember_census_count(EMBER_ENTRY_PITCH, *pPitch * Height, false);
		ember_memory_track_plain(*dptr, *pPitch * Height);
	}
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	struct ember_kept e;
	/* memory kept after a stream-ordered free, freed again: freed now, after its stream */
	if (ember_memory_placing() && ember_keeping() && ember_kept_forget(dptr, &e)) {
		EMBER_REAL(cuEventSynchronize)(e.freed);
		EMBER_REAL(cuEventDestroy_v2)(e.freed);
	}
	struct ember_alloc *a = ember_memory_placing() ? ember_memory_untrack(dptr) : NULL;
	CUresult r = EMBER_REAL(cuMemFree_v2)(dptr);
	if (a)
		ember_alloc_put(EMBER_TABLE, a);
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	CUresult r = EMBER_REAL(cuMemGetInfo_v2)(free_bytes, total_bytes);
	if (r != CUDA_SUCCESS || !ember_memory_placing() || !free_bytes || !total_bytes)
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
	if (r == CUDA_SUCCESS && ember_memory_placing())
		ember_placement_app_hint(devPtr, count);
	return r;
}

EMBER_PUBLIC CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
					     CUmemLocation location)
{
	CUresult r = EMBER_REAL(cuMemAdvise_v2)(devPtr, count, advice, location);
	if (r == CUDA_SUCCESS && ember_memory_placing())
		ember_placement_app_hint(devPtr, count);
	return r;
}

#define PREFETCH_HOOK(name, params, args)                                                  \
	EMBER_PUBLIC CUresult CUDAAPI name params                                          \
	{                                                                                  \
		CUresult r = EMBER_REAL(name) args;                                        \
		if (r == CUDA_SUCCESS && ember_memory_placing())                           \
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
