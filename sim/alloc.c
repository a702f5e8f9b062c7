/*
 * The table of allocations and the memory behind them.
 *
 * Every kind of simulated memory is host memory, so host functions standing
 * in for kernels can dereference device pointers. Large allocations and all
 * managed ones are mmap'd on a 2 MiB boundary: pages cost nothing until
 * touched (a simulated 80 GB card fits on a small machine), and managed
 * blocks line up with the pages the kernel reports as resident (managed.c).
 */
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grow.h"
#include "sim.h"

/* Small allocations: the alignment cuMemAlloc guarantees. */
#define SMALL_ALIGN 512

struct sim_memory sim_mem;

static struct sim_alloc **table; /* sorted by base */
static size_t count, capacity;
static uint64_t next_id = 1;

static uintptr_t round_up(uintptr_t v, uintptr_t align)
{
	return (v + align - 1) / align * align;
}

/* Fresh zeroed memory; mmap'd (2 MiB aligned) when big or when `paged`. */
static void *pages_alloc(size_t size, bool paged, size_t *mapped)
{
	*mapped = 0;
	if (!paged && size < SIM_BLOCK_BYTES) {
		void *p = NULL;
		if (posix_memalign(&p, SMALL_ALIGN, size) != 0)
			return NULL;
		return memset(p, 0, size);
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (size > SIZE_MAX - SIM_BLOCK_BYTES - page)
		return NULL;
	size_t len = round_up(size, page), span = len + SIM_BLOCK_BYTES;
	char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	/* keep the 2 MiB-aligned part, give back the rest */
	char *start = (char *)round_up((uintptr_t)raw, SIM_BLOCK_BYTES);
	if (start > raw)
		munmap(raw, (size_t)(start - raw));
	if (raw + span > start + len)
		munmap(start + len, (size_t)(raw + span - (start + len)));
	*mapped = len;
	return start;
}

static void pages_free(void *p, size_t mapped)
{
	if (mapped)
		munmap(p, mapped);
	else
		free(p);
}

/* Index of the first allocation whose base is > addr. */
static size_t upper_bound(uintptr_t addr)
{
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (table[mid]->base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool sim_alloc_insert(struct sim_alloc *a)
{
	if (!ember_grow(&table, count, &capacity, sizeof *table, 256))
		return false;
	size_t i = upper_bound(a->base);
	memmove(&table[i + 1], &table[i], (count - i) * sizeof *table);
	table[i] = a;
	count++;
	a->id = next_id++;
	return true;
}

static void remove_entry(struct sim_alloc *a)
{
	size_t i = upper_bound(a->base);
	if (i == 0 || table[i - 1] != a)
		return;
	memmove(&table[i - 1], &table[i], (count - i) * sizeof *table);
	count--;
}

struct sim_alloc *sim_alloc_find(uintptr_t addr)
{
	size_t i = upper_bound(addr);
	if (i == 0)
		return NULL;
	struct sim_alloc *a = table[i - 1];
	return addr - a->base < a->size ? a : NULL;
}

struct sim_alloc *sim_alloc_find_range(uintptr_t addr, size_t len)
{
	struct sim_alloc *a = sim_alloc_find(addr);
	return a && len <= a->size - (addr - a->base) ? a : NULL;
}

void sim_alloc_for_each(void (*fn)(struct sim_alloc *, void *), void *arg)
{
	for (size_t i = 0; i < count; i++)
		fn(table[i], arg);
}

struct sim_alloc *sim_alloc_new(enum sim_mem_kind kind, size_t size, struct sim_ctx *ctx,
				unsigned flags)
{
	struct sim_alloc *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	void *p = pages_alloc(size, kind == SIM_MEM_MANAGED, &a->mapped);
	if (!p) {
		free(a);
		return NULL;
	}
	a->base = (uintptr_t)p;
	a->size = size;
	a->kind = kind;
	a->device = ctx->device;
	a->ctx = ctx;
	a->flags = flags;
	return a;
}

void sim_alloc_retire(struct sim_alloc *a)
{
	remove_entry(a);
	if (a->kind == SIM_MEM_DEVICE)
		sim_mem.plain[a->device] -= a->charged;
	else if (a->kind == SIM_MEM_MANAGED)
		sim_managed_teardown(a);
}

void sim_alloc_destroy(struct sim_alloc *a)
{
	pages_free((void *)a->base, a->mapped);
	free(a->blocks);
	free(a);
}

void sim_memory_release_ctx(struct sim_ctx *ctx)
{
	pthread_mutex_lock(&sim_mem_lock);
	size_t n = 0;
	for (size_t i = 0; i < count; i++)
		n += table[i]->ctx == ctx;
	struct sim_alloc **doomed = n ? malloc(n * sizeof *doomed) : NULL;
	if (!doomed) { /* nothing to free, or no memory to list it: then it stays */
		pthread_mutex_unlock(&sim_mem_lock);
		return;
	}
	for (size_t i = 0, k = 0; i < count; i++)
		if (table[i]->ctx == ctx)
			doomed[k++] = table[i];
	for (size_t i = 0; i < n; i++)
		sim_alloc_retire(doomed[i]);
	pthread_mutex_unlock(&sim_mem_lock);
	for (size_t i = 0; i < n; i++)
		sim_alloc_destroy(doomed[i]);
	free(doomed);
}

uint64_t sim_device_used(int dev)
{
	return sim_mem.plain[dev] + sim_mem.resident[dev];
}

uint64_t sim_device_free(int dev)
{
	uint64_t used = sim_device_used(dev);
	return used < sim_globals.device_memory ? sim_globals.device_memory - used : 0;
}

/* One per-device counter, read under the memory lock. */
static uint64_t read_counter(const uint64_t *counters, int dev)
{
	if (dev < 0 || dev >= SIM_MAX_DEVICES)
		return 0;
	pthread_mutex_lock(&sim_mem_lock);
	uint64_t v = counters[dev];
	pthread_mutex_unlock(&sim_mem_lock);
	return v;
}

EMBER_SIM_API uint64_t ember_sim_device_resident_bytes(int dev)
{
	return read_counter(sim_mem.resident, dev);
}

EMBER_SIM_API uint64_t ember_sim_device_peak_resident_bytes(int dev)
{
	return read_counter(sim_mem.peak_resident, dev);
}

EMBER_SIM_API uint64_t ember_sim_device_used_bytes(int dev)
{
	if (dev < 0 || dev >= SIM_MAX_DEVICES)
		return 0;
	pthread_mutex_lock(&sim_mem_lock);
	uint64_t v = sim_device_used(dev);
	pthread_mutex_unlock(&sim_mem_lock);
	return v;
}

EMBER_SIM_API uint64_t ember_sim_bytes_migrated(int dir)
{
	if (dir != EMBER_SIM_TO_DEVICE && dir != EMBER_SIM_TO_HOST)
		return 0;
	pthread_mutex_lock(&sim_mem_lock);
	uint64_t v = sim_mem.migrated[dir];
	pthread_mutex_unlock(&sim_mem_lock);
	return v;
}
