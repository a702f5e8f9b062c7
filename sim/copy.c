/*
 * Copies. The bytes move at once (memmove: all memory is host memory);
 * the stream records how long they would take: over the host link when one
 * side is on the device, at device memory speed (read plus write) when
 * both are on one, over the peer link between two GPUs that have one
 * (peers.c; twice over the host link between two that have not), at host
 * speed when neither is. A managed range counts as on
 * the device when its first block is resident there; never-populated
 * managed blocks a copy touches become host-populated. What a copy writes
 * under read-mostly advice goes at the rate measured for it, 250 times
 * slower than the link.
 *
 * The synchronous forms wait for the copy; the Async ones only queue it.
 * Into a capturing stream, an Async copy is a memcpy node of the capture's
 * graph, done when the graph is launched (graph.c).
 */
#include <string.h>

#include "cost.h"
#include "sim.h"

enum { NEED_DST = 1, NEED_SRC = 2 }; /* which sides must be driver memory */

static uint64_t copy_time(size_t n, bool dst_dev, bool src_dev, int dst_gpu, int src_gpu)
{
	if (dst_dev && src_dev && dst_gpu != src_gpu) /* between two GPUs: over their peer link, or twice over the host's */
		return sim_peer_link(dst_gpu, src_gpu) ? sim_transfer_ns(n, SIM_PEER_BPS)
						       : sim_transfer_ns(2 * (uint64_t)n, SIM_HOST_LINK_BPS);
	if (dst_dev && src_dev)
		return sim_transfer_ns(2 * (uint64_t)n, SIM_DEVICE_MEMORY_BPS);
	if (dst_dev || src_dev)
		return sim_transfer_ns(n, SIM_HOST_LINK_BPS);
	return sim_transfer_ns(n, SIM_HOST_MEMCPY_BPS);
}

/* A side's memory type as the copy's form names it: driver memory, the host's, or either (unified addressing). */
static CUmemorytype side_type(unsigned need, unsigned side)
{
	return need & side ? CU_MEMORYTYPE_DEVICE : need ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
}

static CUresult record(struct sim_stream *s, CUgraph capture, uintptr_t dst, uintptr_t src, size_t n, unsigned need)
{
	CUresult r = sim_capture_admit(s);
	if (r != CUDA_SUCCESS)
		return r;
	CUDA_MEMCPY3D c = { .srcMemoryType = side_type(need, NEED_SRC), .dstMemoryType = side_type(need, NEED_DST),
			    .WidthInBytes = n, .Height = 1, .Depth = 1 };
	if (c.srcMemoryType == CU_MEMORYTYPE_HOST)
		c.srcHost = (const void *)src;
	else
		c.srcDevice = src;
	if (c.dstMemoryType == CU_MEMORYTYPE_HOST)
		c.dstHost = (void *)dst;
	else
		c.dstDevice = dst;
	return sim_graph_add_memcpy(capture, &c);
}

static CUresult copy(uintptr_t dst, uintptr_t src, size_t n, unsigned need, CUstream h, bool per_thread,
		     bool sync)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (n == 0)
		return CUDA_SUCCESS;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	/* recorded, not done, into a capturing stream: what it does to the blocks waits for the graph's launch */
	CUgraph capture = sync ? NULL : __atomic_load_n(&s->capture, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *d = sim_alloc_find_range(dst, n), *sa = sim_alloc_find_range(src, n);
	bool ok = (d || !(need & NEED_DST)) && (sa || !(need & NEED_SRC));
	bool done = ok && !capture;
	bool dst_dev = done && sim_copy_on_device(d, dst, n), src_dev = done && sim_copy_on_device(sa, src, n);
	int dst_gpu = dst_dev ? sim_copy_device(d, dst, n) : -1, src_gpu = src_dev ? sim_copy_device(sa, src, n) : -1;
	size_t slow = done ? sim_copy_into_read_mostly(d, dst, n) : 0;
	pthread_mutex_unlock(&sim_mem_lock);
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	if (capture)
		return record(s, capture, dst, src, n, need);
	memmove((void *)dst, (const void *)src, n);
	uint64_t cost = SIM_COPY_CALL_NS + copy_time(n - slow, dst_dev, src_dev, dst_gpu, src_gpu) +
			sim_transfer_ns(slow, SIM_READ_MOSTLY_WRITE_BPS);
	uint64_t end = sync ? sim_stream_enqueue_sync(s, cost) : sim_stream_enqueue(s, cost);
	sim_hazard_note(src, n, false, s, end - cost, end, "a copy");
	sim_hazard_note(dst, n, true, s, end - cost, end, "a copy");
	return CUDA_SUCCESS;
}

/* ---- unified addressing: either side may be anything ---- */

SIM_EXPORT CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return copy(dst, src, ByteCount, 0, NULL, false, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return copy(dst, src, ByteCount, 0, NULL, true, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
	return copy(dst, src, ByteCount, 0, hStream, false, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
					       CUstream hStream)
{
	return copy(dst, src, ByteCount, 0, hStream, true, false);
}

/* ---- host to device ---- */

SIM_EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return copy(dstDevice, (uintptr_t)srcHost, ByteCount, NEED_DST, NULL, false, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return copy(dstDevice, (uintptr_t)srcHost, ByteCount, NEED_DST, NULL, true, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
						 CUstream hStream)
{
	return copy(dstDevice, (uintptr_t)srcHost, ByteCount, NEED_DST, hStream, false, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
						      size_t ByteCount, CUstream hStream)
{
	return copy(dstDevice, (uintptr_t)srcHost, ByteCount, NEED_DST, hStream, true, false);
}

/* ---- device to host ---- */

SIM_EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy((uintptr_t)dstHost, srcDevice, ByteCount, NEED_SRC, NULL, false, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy((uintptr_t)dstHost, srcDevice, ByteCount, NEED_SRC, NULL, true, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
						 CUstream hStream)
{
	return copy((uintptr_t)dstHost, srcDevice, ByteCount, NEED_SRC, hStream, false, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
						      CUstream hStream)
{
	return copy((uintptr_t)dstHost, srcDevice, ByteCount, NEED_SRC, hStream, true, false);
}

/* ---- device to device ---- */

SIM_EXPORT CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy(dstDevice, srcDevice, ByteCount, NEED_DST | NEED_SRC, NULL, false, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy(dstDevice, srcDevice, ByteCount, NEED_DST | NEED_SRC, NULL, true, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
						 CUstream hStream)
{
	return copy(dstDevice, srcDevice, ByteCount, NEED_DST | NEED_SRC, hStream, false, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
						      size_t ByteCount, CUstream hStream)
{
	return copy(dstDevice, srcDevice, ByteCount, NEED_DST | NEED_SRC, hStream, true, false);
}

/* ---- a graph's memcpy node ---- */

CUresult sim_copy_node(const CUDA_MEMCPY3D *c, CUstream h, bool per_thread)
{
	bool src_host = c->srcMemoryType == CU_MEMORYTYPE_HOST, dst_host = c->dstMemoryType == CU_MEMORYTYPE_HOST;
	uintptr_t src = src_host ? (uintptr_t)c->srcHost : c->srcDevice;
	uintptr_t dst = dst_host ? (uintptr_t)c->dstHost : c->dstDevice;
	unsigned need = (c->srcMemoryType == CU_MEMORYTYPE_DEVICE ? NEED_SRC : 0) |
			(c->dstMemoryType == CU_MEMORYTYPE_DEVICE ? NEED_DST : 0);
	return copy(dst, src, c->WidthInBytes, need, h, per_thread, false);
}
