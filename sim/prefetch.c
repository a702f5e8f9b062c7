/*
 * cuMemPrefetchAsync: move the blocks of a managed range to a device or to
 * the host, as an operation on a stream. Blocks already there stay; never
 * populated ones are populated at the target, moving nothing, except that a
 * prefetch to a device leaves a never-touched block that prefers the host
 * unpopulated, as the H200's driver did (a 14.4 GiB split of fresh
 * caching-allocator memory "moved" in 0.08 s, then 838,700 GPU faults put
 * its first writes in host memory: tools/bench/results/suite); read-mostly
 * ones get a copy on the device and keep their host copy. What has to come
 * onto a full device evicts others first; what still does not fit stays.
 *
 * Cost: a fixed cost per call plus the bytes moved at the measured rate,
 * so 2 MiB calls run at about a third of the speed of large ones, plus
 * the blocks already there, walked at the measured rate of a refresh.
 */
#include "cost.h"
#include "sim.h"

/* Moves blocks [first, end) of a to dev; returns the call's virtual time. */
static uint64_t to_device(struct sim_alloc *a, size_t first, size_t end, int dev)
{
	uint64_t incoming = 0, moved = 0, duplicated = 0, walked = 0, cost = 0;
	for (size_t i = first; i < end; i++)
		if (a->blocks[i].where != dev &&
		    !(a->blocks[i].where == SIM_LOC_NONE && a->blocks[i].preferred == SIM_LOC_HOST))
			incoming += sim_block_len(a, i);
	if (incoming) {
		bool room; /* checked again block by block */
		cost += sim_make_room(dev, incoming, a, first, end, &room);
	}
	for (size_t i = first; i < end; i++) {
		struct sim_block *b = &a->blocks[i];
		size_t len = sim_block_len(a, i);
		if (b->where == dev) {
			walked += len;
			continue;
		}
		if (sim_device_free(dev) < len)
			continue;
		if (b->where == SIM_LOC_NONE) {
			if (b->preferred == SIM_LOC_HOST)
				continue;
			sim_block_move(a, i, dev);
		} else if (b->read_mostly && b->where == SIM_LOC_HOST) {
			sim_block_duplicate(a, i, dev);
			duplicated += len;
		} else {
			sim_block_move(a, i, dev);
			moved += len;
		}
	}
	return cost + SIM_PROMOTE_CALL_NS + sim_transfer_ns(moved, SIM_PROMOTE_BPS) +
	       sim_transfer_ns(duplicated, SIM_DUPLICATE_BPS) + sim_transfer_ns(walked, SIM_PREFETCH_RESIDENT_BPS);
}

static uint64_t to_host(struct sim_alloc *a, size_t first, size_t end)
{
	uint64_t moved = 0;
	for (size_t i = first; i < end; i++) {
		struct sim_block *b = &a->blocks[i];
		if (b->where == SIM_LOC_HOST || b->host_copy)
			continue; /* a read-mostly block keeps its device copy, as measured */
		if (b->where >= 0)
			moved += sim_block_len(a, i);
		sim_block_move(a, i, SIM_LOC_HOST);
	}
	return SIM_DEMOTE_CALL_NS + sim_transfer_ns(moved, SIM_DEMOTE_BPS);
}

static CUresult prefetch(CUdeviceptr devPtr, size_t count, int to, unsigned flags, CUstream hStream,
			 bool ptsz)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(hStream, ptsz, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (count == 0 || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	size_t first, end;
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_managed_range((uintptr_t)devPtr, count, &first, &end);
	if (!a) {
		pthread_mutex_unlock(&sim_mem_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	uint64_t use = ++sim_mem.uses;
	for (size_t i = first; i < end; i++) {
		sim_block_notice_cpu(a, i);
		a->blocks[i].last_prefetch = (int8_t)to;
		a->blocks[i].last_use = use;
	}
	uint64_t cost = to >= 0 ? to_device(a, first, end, to) : to_host(a, first, end);
	pthread_mutex_unlock(&sim_mem_lock);
	sim_stream_enqueue(s, cost);
	return CUDA_SUCCESS;
}

/* A CUmemLocation as a prefetch target: a device, or the host (any host form). */
static CUresult target(CUmemLocation loc, int *to)
{
	switch (loc.type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		if (!sim_device_valid(loc.id))
			return CUDA_ERROR_INVALID_DEVICE;
		*to = loc.id;
		return CUDA_SUCCESS;
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
		*to = SIM_LOC_HOST;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static unsigned failing[2];
static CUresult failing_with[2];

EMBER_SIM_API void ember_sim_fail_prefetches(int to, unsigned count, CUresult result)
{
	if (to != EMBER_SIM_TO_DEVICE && to != EMBER_SIM_TO_HOST)
		return;
	__atomic_store_n(&failing_with[to], result, __ATOMIC_RELAXED);
	__atomic_store_n(&failing[to], count, __ATOMIC_RELEASE);
}

/* Whether this prefetch toward `to` is one the test asked to fail. */
static bool injected_failure(int to, CUresult *r)
{
	int dir = to == SIM_LOC_HOST ? EMBER_SIM_TO_HOST : EMBER_SIM_TO_DEVICE;
	unsigned left = __atomic_load_n(&failing[dir], __ATOMIC_ACQUIRE);
	while (left && !__atomic_compare_exchange_n(&failing[dir], &left, left - 1, false, __ATOMIC_ACQ_REL,
						     __ATOMIC_ACQUIRE))
		;
	if (!left)
		return false;
	*r = __atomic_load_n(&failing_with[dir], __ATOMIC_RELAXED);
	return true;
}

static CUresult prefetch_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned flags,
			    CUstream hStream, bool ptsz)
{
	SIM_REQUIRE_INIT();
	int to;
	CUresult r = target(location, &to);
	if (r == CUDA_SUCCESS && injected_failure(to, &r))
		return r;
	return r != CUDA_SUCCESS ? r : prefetch(devPtr, count, to, flags, hStream, ptsz);
}

/* The legacy form names a device, or CU_DEVICE_CPU. */
static CUresult prefetch_v1(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream,
			    bool ptsz)
{
	SIM_REQUIRE_INIT();
	if (dstDevice != CU_DEVICE_CPU && !sim_device_valid(dstDevice))
		return CUDA_ERROR_INVALID_DEVICE;
	CUresult r;
	if (injected_failure(dstDevice == CU_DEVICE_CPU ? SIM_LOC_HOST : dstDevice, &r))
		return r;
	return prefetch(devPtr, count, dstDevice == CU_DEVICE_CPU ? SIM_LOC_HOST : dstDevice, 0, hStream, ptsz);
}

SIM_EXPORT CUresult CUDAAPI cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
						  unsigned int flags, CUstream hStream)
{
	SIM_INJECT("cuMemPrefetchAsync_v2");
	return prefetch_v2(devPtr, count, location, flags, hStream, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count,
						       CUmemLocation location, unsigned int flags,
						       CUstream hStream)
{
	return prefetch_v2(devPtr, count, location, flags, hStream, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
					       CUstream hStream)
{
	return prefetch_v1(devPtr, count, dstDevice, hStream, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
						    CUstream hStream)
{
	return prefetch_v1(devPtr, count, dstDevice, hStream, true);
}
