/*
 * Managed memory: allocation, and the per-block state everything else
 * reads and moves.
 *
 * Each 2 MiB block (from the allocation's start) has one residency: never
 * populated, host, or one device. A read-mostly block on a device may also
 * keep a duplicate in host memory. Advice (preferred location, accessed-by,
 * read-mostly) and the last prefetch target are kept per block, so advice
 * over any byte range applies to every block it touches. Device-resident
 * blocks are charged to their device, next to cuMemAlloc memory.
 *
 * The data itself never moves: all of it is host memory. Only the books do.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim.h"

_Static_assert(SIM_BLOCK_BYTES == EMBER_SIM_BLOCK_BYTES, "one block size");

/* The most pages a block spans, for mincore(): 2 MiB of 4 KiB pages. */
#define MAX_PAGES_PER_BLOCK 512

size_t sim_block_len(const struct sim_alloc *a, size_t i)
{
	size_t start = i << SIM_BLOCK_SHIFT;
	return SIM_MIN(SIM_BLOCK_BYTES, a->size - start);
}

void sim_block_span(const struct sim_alloc *a, uintptr_t addr, size_t len, size_t *first, size_t *end)
{
	size_t off = addr - a->base;
	*first = off >> SIM_BLOCK_SHIFT;
	*end = ((off + len - 1) >> SIM_BLOCK_SHIFT) + 1;
}

struct sim_alloc *sim_managed_range(uintptr_t addr, size_t len, size_t *first, size_t *end)
{
	struct sim_alloc *a = sim_alloc_find_range(addr, len);
	if (!a || a->kind != SIM_MEM_MANAGED)
		return NULL;
	sim_block_span(a, addr, len, first, end);
	return a;
}

CUresult sim_managed_setup(struct sim_alloc *a)
{
	a->nblocks = (a->size + SIM_BLOCK_BYTES - 1) >> SIM_BLOCK_SHIFT;
	a->blocks = calloc(a->nblocks, sizeof *a->blocks);
	if (!a->blocks)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < a->nblocks; i++) {
		a->blocks[i].where = SIM_LOC_NONE;
		a->blocks[i].preferred = SIM_LOC_NONE;
		a->blocks[i].last_prefetch = SIM_LOC_NONE;
	}
	return CUDA_SUCCESS;
}

void sim_managed_teardown(struct sim_alloc *a)
{
	for (size_t i = 0; i < a->nblocks; i++)
		if (a->blocks[i].where >= 0)
			sim_mem.resident[a->blocks[i].where] -= sim_block_len(a, i);
}

/* GPUs that keep a mapping wherever the block goes: those it is advised accessed-by. */
static uint32_t advised_mappings(const struct sim_block *b)
{
	return b->accessed_by & ~SIM_HOST_BIT;
}

/* More managed bytes on dev; the high-water mark follows. */
static void sim_note_resident(int dev, size_t len)
{
	sim_mem.resident[dev] += len;
	if (sim_mem.resident[dev] > sim_mem.peak_resident[dev])
		sim_mem.peak_resident[dev] = sim_mem.resident[dev];
}

void sim_block_move(struct sim_alloc *a, size_t i, int to)
{
	struct sim_block *b = &a->blocks[i];
	size_t len = sim_block_len(a, i);
	if (b->where == to)
		return;
	if (b->where >= 0)
		sim_mem.resident[b->where] -= len;
	if (to >= 0)
		sim_note_resident(to, len);
	/* populating a never-touched block moves no data */
	if (b->where != SIM_LOC_NONE)
		sim_mem.migrated[to >= 0 ? EMBER_SIM_TO_DEVICE : EMBER_SIM_TO_HOST] += len;
	b->where = (int8_t)to;
	b->host_copy = false;
	b->mapped = advised_mappings(b);
}

void sim_block_duplicate(struct sim_alloc *a, size_t i, int dev)
{
	struct sim_block *b = &a->blocks[i];
	size_t len = sim_block_len(a, i);
	sim_note_resident(dev, len);
	sim_mem.migrated[EMBER_SIM_TO_DEVICE] += len;
	b->where = (int8_t)dev;
	b->host_copy = true;
	b->mapped = advised_mappings(b);
}

void sim_block_drop_device_copy(struct sim_alloc *a, size_t i)
{
	struct sim_block *b = &a->blocks[i];
	sim_mem.resident[b->where] -= sim_block_len(a, i);
	b->where = SIM_LOC_HOST;
	b->host_copy = false;
	b->mapped = advised_mappings(b);
}

/*
 * The CPU writes managed memory directly, without a call the sim could
 * see. Whether it has is in the page tables: a never-populated block whose
 * pages the kernel now reports resident was touched by the CPU, so it
 * lives in host memory, as the driver would have placed it.
 */
void sim_block_notice_cpu(struct sim_alloc *a, size_t i)
{
	if (a->blocks[i].where != SIM_LOC_NONE || !a->mapped)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = sim_block_len(a, i);
	size_t pages = SIM_MIN((len + page - 1) / page, (size_t)MAX_PAGES_PER_BLOCK);
	unsigned char resident[MAX_PAGES_PER_BLOCK];
	if (mincore((void *)(a->base + (i << SIM_BLOCK_SHIFT)), pages * page, resident) != 0)
		return;
	for (size_t p = 0; p < pages; p++) {
		if (resident[p] & 1) {
			sim_block_move(a, i, SIM_LOC_HOST);
			return;
		}
	}
}

bool sim_copy_on_device(struct sim_alloc *a, uintptr_t p, size_t n)
{
	if (!a || a->kind != SIM_MEM_MANAGED)
		return a && a->kind == SIM_MEM_DEVICE;
	size_t first, end;
	sim_block_span(a, p, n, &first, &end);
	for (size_t i = first; i < end; i++) {
		sim_block_notice_cpu(a, i);
		if (a->blocks[i].where == SIM_LOC_NONE)
			sim_block_move(a, i, SIM_LOC_HOST);
	}
	return a->blocks[first].where >= 0;
}

size_t sim_copy_into_read_mostly(struct sim_alloc *a, uintptr_t p, size_t n)
{
	if (!a || a->kind != SIM_MEM_MANAGED || n == 0)
		return 0;
	size_t first, end, bytes = 0;
	sim_block_span(a, p, n, &first, &end);
	for (size_t i = first; i < end; i++) {
		struct sim_block *b = &a->blocks[i];
		if (!b->read_mostly)
			continue;
		uintptr_t lo = a->base + i * SIM_BLOCK_BYTES, hi = lo + sim_block_len(a, i);
		bytes += (hi < p + n ? hi : p + n) - (lo > p ? lo : p);
		if (b->host_copy && b->where >= 0) /* the copy's writes leave one copy, where they land */
			b->host_copy = false;
	}
	return bytes;
}

int sim_copy_device(const struct sim_alloc *a, uintptr_t p, size_t n)
{
	if (!a)
		return -1;
	if (a->kind != SIM_MEM_MANAGED)
		return a->kind == SIM_MEM_DEVICE ? a->device : -1;
	size_t first, end;
	sim_block_span(a, p, n, &first, &end);
	return a->blocks[first].where >= 0 ? a->blocks[first].where : -1;
}

SIM_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	SIM_UNSAFE_DURING_CAPTURE();
	SIM_INJECT("cuMemAllocManaged");
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!dptr || bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_alloc *a = sim_alloc_new(SIM_MEM_MANAGED, bytesize, ctx, flags);
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = sim_managed_setup(a);
	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&sim_mem_lock);
		if (!sim_alloc_insert(a))
			r = CUDA_ERROR_OUT_OF_MEMORY;
		pthread_mutex_unlock(&sim_mem_lock);
	}
	if (r != CUDA_SUCCESS) {
		sim_alloc_destroy(a);
		return r;
	}
	*dptr = (CUdeviceptr)a->base;
	return CUDA_SUCCESS;
}

/* ---- the test API's view of one block ---- */

EMBER_SIM_API int ember_sim_block_info(const void *addr, struct ember_sim_block_info *out)
{
	if (!out)
		return -1;
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find((uintptr_t)addr);
	bool managed = a && a->kind == SIM_MEM_MANAGED;
	if (managed) {
		size_t i = ((uintptr_t)addr - a->base) >> SIM_BLOCK_SHIFT;
		sim_block_notice_cpu(a, i);
		const struct sim_block *b = &a->blocks[i];
		*out = (struct ember_sim_block_info){
			.location = b->where,
			.host_copy = b->host_copy,
			.preferred = b->preferred,
			.last_prefetch = b->last_prefetch,
			.read_mostly = b->read_mostly,
			.accessed_by = b->accessed_by,
			.mapped = b->mapped,
			.accesses = b->gpu_accesses,
			.bytes_accessed = b->gpu_bytes,
			.cpu_accesses = b->cpu_accesses,
		};
	}
	pthread_mutex_unlock(&sim_mem_lock);
	return managed ? 0 : -1;
}

EMBER_SIM_API int ember_sim_block_location(const void *addr)
{
	struct ember_sim_block_info info;
	return ember_sim_block_info(addr, &info) == 0 ? info.location : EMBER_SIM_NOWHERE;
}

EMBER_SIM_API uint64_t ember_sim_block_accesses(const void *addr)
{
	struct ember_sim_block_info info;
	return ember_sim_block_info(addr, &info) == 0 ? info.accesses : 0;
}
