/*
 * Memsets of 8, 16 and 32-bit values over driver memory. Like copies, they
 * happen at once and are timed on the stream: at device memory speed, or
 * through a mapping for host-resident memory, at the copies' slow rate
 * under read-mostly advice (copy.c). Into a capturing stream, one is a
 * memset node of the capture's graph, done when the graph is launched.
 */
#include <string.h>

#include "cost.h"
#include "sim.h"

static void fill(void *dst, unsigned value, size_t width, size_t count)
{
	if (width == 1) {
		memset(dst, (int)(value & 0xff), count);
	} else if (width == 2) {
		uint16_t *p = dst;
		for (size_t i = 0; i < count; i++)
			p[i] = (uint16_t)value;
	} else {
		uint32_t *p = dst;
		for (size_t i = 0; i < count; i++)
			p[i] = value;
	}
}

static CUresult set(CUdeviceptr dst, unsigned value, size_t width, size_t count, CUstream h,
		    bool per_thread, bool sync)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (dst % width != 0 || count > SIZE_MAX / width)
		return CUDA_ERROR_INVALID_VALUE;
	if (count == 0)
		return CUDA_SUCCESS;
	size_t bytes = count * width;
	/* recorded, not done, into a capturing stream: what it does to the blocks waits for the graph's launch */
	CUgraph capture = __atomic_load_n(&s->capture, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find_range(dst, bytes);
	bool dev = a && !capture && sim_copy_on_device(a, dst, bytes);
	size_t slow = capture ? 0 : sim_copy_into_read_mostly(a, dst, bytes);
	pthread_mutex_unlock(&sim_mem_lock);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (capture) {
		CUDA_MEMSET_NODE_PARAMS node = { .dst = dst, .value = value, .elementSize = (unsigned)width,
						 .width = count, .height = 1 };
		r = sim_capture_admit(s);
		return r != CUDA_SUCCESS ? r : sim_graph_add_memset(capture, &node);
	}
	fill((void *)dst, value, width, count);
	uint64_t cost = SIM_COPY_CALL_NS + sim_transfer_ns(bytes - slow, dev ? SIM_DEVICE_MEMORY_BPS : SIM_MAPPED_BPS) +
			sim_transfer_ns(slow, SIM_READ_MOSTLY_WRITE_BPS);
	uint64_t end = sync ? sim_stream_enqueue_sync(s, cost) : sim_stream_enqueue(s, cost);
	sim_hazard_note(dst, bytes, true, s, end - cost, end, "a memset");
	return CUDA_SUCCESS;
}

CUresult sim_memset_node(const CUDA_MEMSET_NODE_PARAMS *m, CUstream h, bool per_thread)
{
	for (size_t row = 0; row < m->height; row++) {
		CUresult r = set(m->dst + row * m->pitch, m->value, m->elementSize, m->width, h, per_thread, false);
		if (r != CUDA_SUCCESS)
			return r;
	}
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return set(dstDevice, uc, 1, N, NULL, false, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return set(dstDevice, uc, 1, N, NULL, true, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	return set(dstDevice, us, 2, N, NULL, false, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	return set(dstDevice, us, 2, N, NULL, true, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	return set(dstDevice, ui, 4, N, NULL, false, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	return set(dstDevice, ui, 4, N, NULL, true, true);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
	return set(dstDevice, uc, 1, N, hStream, false, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N,
						 CUstream hStream)
{
	return set(dstDevice, uc, 1, N, hStream, true, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
					     CUstream hStream)
{
	return set(dstDevice, us, 2, N, hStream, false, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N,
						  CUstream hStream)
{
	return set(dstDevice, us, 2, N, hStream, true, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
	return set(dstDevice, ui, 4, N, hStream, false, false);
}

SIM_EXPORT CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N,
						  CUstream hStream)
{
	return set(dstDevice, ui, 4, N, hStream, true, false);
}
