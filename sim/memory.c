/*
 * Plain device memory and page-locked host memory.
 *
 * Device memory is charged to its device, rounded up to 512 bytes as the
 * driver aligns it, against EMBER_SIM_MEMORY. When managed memory fills the
 * device, an allocation evicts it, as the driver's does.
 */
#include "sim.h"

#define DEVICE_ALIGN 512
#define PITCH_ALIGN 512
#define HOST_ALLOC_FLAGS_KNOWN                                                             \
	(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

/* Charge the device and enter the table; on failure the caller still owns a. */
static CUresult publish_device_memory(struct sim_alloc *a)
{
	uint64_t charge = round_up(a->size, DEVICE_ALIGN);
	bool room = false;
	uint64_t evict_ns = 0;
	pthread_mutex_lock(&sim_mem_lock);
	/* managed memory can always be evicted; evict only if that is enough */
	if (charge <= sim_globals.device_memory - sim_mem.plain[a->device])
		evict_ns = sim_make_room(a->device, charge, NULL, 0, 0, &room);
	if (room && sim_alloc_insert(a)) {
		a->charged = charge;
		sim_mem.plain[a->device] += charge;
	} else {
		room = false;
	}
	pthread_mutex_unlock(&sim_mem_lock);
	sim_clock_advance_by(evict_ns); /* the host waited for the evictions */
	return room ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult alloc_device(CUdeviceptr *dptr, size_t bytesize)
{
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!dptr || bytesize == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (bytesize > sim_globals.device_memory)
		return CUDA_ERROR_OUT_OF_MEMORY;
	struct sim_alloc *a = sim_alloc_new(SIM_MEM_DEVICE, bytesize, ctx, 0);
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = publish_device_memory(a);
	if (r != CUDA_SUCCESS) {
		sim_alloc_destroy(a);
		return r;
	}
	*dptr = (CUdeviceptr)a->base;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	SIM_UNSAFE_DURING_CAPTURE();
	return alloc_device(dptr, bytesize);
}

/*
 * Stream-ordered allocation: the memory comes from (and goes back to) the
 * device at once, and the stream gets an operation of no cost, so the
 * allocation is ordered with the stream's other work. Into a stream being
 * captured it is the graph's: only such memory may be freed into one, as
 * on the driver, which refuses any other with CUDA_ERROR_INVALID_VALUE and
 * leaves it allocated and the capture whole (ember-capture-probe, ab-42's
 * call 6). The graph's memory too is made and freed at once, not at the
 * graph's launches. Its pool (NULL: the device's current one) counts it
 * until its free.
 */
CUresult sim_alloc_async(CUdeviceptr *dptr, size_t bytesize, struct sim_pool *pool, CUstream hStream, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(hStream, per_thread, &s);
	if (r == CUDA_SUCCESS)
		r = alloc_device(dptr, bytesize);
	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&sim_mem_lock);
		struct sim_alloc *a = sim_alloc_find((uintptr_t)*dptr);
		a->graph = __atomic_load_n(&s->capture, __ATOMIC_ACQUIRE);
		a->pool = pool ? pool : sim_pool_current(a->device);
		sim_pool_charge(a->pool, (int64_t)a->size);
		pthread_mutex_unlock(&sim_mem_lock);
		sim_stream_enqueue(s, 0);
	}
	return r;
}

/* Whether p is a graph's allocation, which a free into a stream being captured must name. */
static bool graph_allocation(uintptr_t p)
{
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find(p);
	bool graph = a && a->base == p && a->graph;
	pthread_mutex_unlock(&sim_mem_lock);
	return graph;
}

SIM_EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return sim_alloc_async(dptr, bytesize, NULL, hStream, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return sim_alloc_async(dptr, bytesize, NULL, hStream, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
					       size_t Height, unsigned int ElementSizeBytes)
{
	SIM_REQUIRE_INIT();
	if (!dptr || !pPitch || WidthInBytes == 0 || Height == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t pitch = round_up(WidthInBytes, PITCH_ALIGN);
	if (Height > SIZE_MAX / pitch)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult r = alloc_device(dptr, (size_t)(pitch * Height));
	if (r == CUDA_SUCCESS)
		*pPitch = (size_t)pitch;
	return r;
}

/*
 * The allocation at exactly p, out of the table and freed: page-locked host
 * memory when host is set (cuMemFreeHost), else device or managed memory.
 */
static CUresult free_at(uintptr_t p, bool host)
{
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = p ? sim_alloc_find(p) : NULL;
	bool ok = a && a->base == p && (a->kind == SIM_MEM_HOST) == host;
	if (ok && a->pool)
		sim_pool_charge(a->pool, -(int64_t)a->size);
	if (ok)
		sim_alloc_retire(a);
	pthread_mutex_unlock(&sim_mem_lock);
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	sim_alloc_destroy(a);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	SIM_UNSAFE_DURING_CAPTURE();
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	return dptr ? free_at((uintptr_t)dptr, false) : CUDA_SUCCESS;
}

static CUresult free_async(CUdeviceptr dptr, CUstream hStream, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(hStream, per_thread, &s);
	if (r == CUDA_SUCCESS && __atomic_load_n(&s->capture, __ATOMIC_ACQUIRE) && !graph_allocation((uintptr_t)dptr))
		return CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		r = free_at((uintptr_t)dptr, false);
	if (r == CUDA_SUCCESS)
		sim_stream_enqueue(s, 0);
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return free_async(dptr, hStream, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return free_async(dptr, hStream, true);
}

/* An allocation's range, or a mapping's where the program mapped its own memory (cuMemMap), as the driver's. */
SIM_EXPORT CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	SIM_REQUIRE_INIT();
	uintptr_t base = 0;
	size_t size = 0;
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find((uintptr_t)dptr);
	if (a) {
		base = a->base;
		size = a->size;
	}
	pthread_mutex_unlock(&sim_mem_lock);
	if (!a && !sim_vmm_mapping_of((uintptr_t)dptr, &base, &size))
		return CUDA_ERROR_NOT_FOUND;
	if (pbase)
		*pbase = (CUdeviceptr)base;
	if (psize)
		*psize = size;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!free_bytes || !total_bytes)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_mem_lock);
	*free_bytes = sim_device_free(ctx->device);
	pthread_mutex_unlock(&sim_mem_lock);
	*total_bytes = sim_globals.device_memory;
	return CUDA_SUCCESS;
}

/* ---- page-locked host memory: ordinary host memory, mapped for every device ---- */

static CUresult alloc_host(void **pp, size_t bytesize, unsigned flags)
{
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!pp || bytesize == 0 || (flags & ~(unsigned)HOST_ALLOC_FLAGS_KNOWN))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_alloc *a = sim_alloc_new(SIM_MEM_HOST, bytesize, ctx, flags);
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&sim_mem_lock);
	bool ok = sim_alloc_insert(a);
	pthread_mutex_unlock(&sim_mem_lock);
	if (!ok) {
		sim_alloc_destroy(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pp = (void *)a->base;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	/* with unified addressing, cuMemAllocHost memory is portable and mapped */
	return alloc_host(pp, bytesize, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
}

SIM_EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	return alloc_host(pp, bytesize, Flags);
}

SIM_EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
	SIM_REQUIRE_INIT();
	return free_at((uintptr_t)p, true);
}

/* The page-locked allocation holding p, copied out: its flags are all callers need. */
static bool host_alloc_flags(const void *p, unsigned *flags)
{
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find((uintptr_t)p);
	bool ok = a && a->kind == SIM_MEM_HOST;
	if (ok)
		*flags = a->flags;
	pthread_mutex_unlock(&sim_mem_lock);
	return ok;
}

/* Unified addressing: the device sees host memory at the host's address. */
SIM_EXPORT CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
	SIM_REQUIRE_INIT();
	unsigned flags;
	if (!pdptr || !p || Flags != 0 || !host_alloc_flags(p, &flags))
		return CUDA_ERROR_INVALID_VALUE;
	*pdptr = (CUdeviceptr)p;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	SIM_REQUIRE_INIT();
	if (!pFlags || !p || !host_alloc_flags(p, pFlags))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}
