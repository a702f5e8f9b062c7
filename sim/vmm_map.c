/*
 * Address reservations and the mappings of physical allocations (vmm.c)
 * into them: what a program that maps its own memory (cuMemCreate, then
 * cuMemMap and cuMemSetAccess) needs of the simulated driver, with the
 * driver's rules that Ember's splitting of an allocation leans on. Nothing
 * is read or written through these mappings; a kernel's access to them is
 * not modelled.
 *   cuMemMap        offset 0, within the handle, onto no other mapping
 *   cuMemUnmap      whole mappings, one or several side by side
 *   cuMemSetAccess  a range mapped throughout
 *   cuMemRetainAllocationHandle  the handle mapped at an address
 *   cuMemGetAddressRange         the mapping an address lies in (memory.c asks); for
 *                                memory in host memory, a base outside it (below)
 * A mapping holds a reference to its handle until it is unmapped.
 */
#include <sys/mman.h>

#include "grow.h"
#include "sim.h"

#define GRANULARITY (2ull << 20)

struct mapping {
	uintptr_t va;
	size_t size;
	struct sim_physical *p;
};

static struct mapping *maps;
static size_t nmaps, cap;

/*
 * Reservations are the process's own address space, inaccessible, so that
 * no allocation of the sim's (mmap'd or malloc'd) can land in one, however
 * many a program makes and frees; each is followed by a granule no one gets,
 * so that neighbours never touch.
 */
struct reservation {
	uintptr_t va;
	size_t size;
};
static struct reservation *reserved;
static size_t nreserved, cap_reserved;

SIM_EXPORT CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
							   CUmemAllocationGranularity_flags option)
{
	SIM_REQUIRE_INIT();
	(void)option;
	if (!granularity || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	*granularity = GRANULARITY;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
						unsigned long long flags)
{
	SIM_REQUIRE_INIT();
	(void)alignment, (void)addr;
	if (!ptr || !size || size % GRANULARITY || flags)
		return CUDA_ERROR_INVALID_VALUE;
	size_t span = size + 2 * GRANULARITY; /* room to align, and the guard granule */
	char *got = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (got == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	uintptr_t va = ((uintptr_t)got + GRANULARITY - 1) & ~(uintptr_t)(GRANULARITY - 1);
	uintptr_t kept_end = va + size + GRANULARITY;
	if (va > (uintptr_t)got)
		munmap(got, va - (uintptr_t)got);
	if ((uintptr_t)got + span > kept_end)
		munmap((void *)kept_end, (uintptr_t)got + span - kept_end);
	pthread_mutex_lock(&sim_mem_lock);
	bool room = ember_grow(&reserved, nreserved, &cap_reserved, sizeof *reserved, 16);
	if (room)
		reserved[nreserved++] = (struct reservation){ va, size };
	pthread_mutex_unlock(&sim_mem_lock);
	if (!room) {
		munmap((void *)va, size + GRANULARITY);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*ptr = va;
	return CUDA_SUCCESS;
}

/* Only a whole reservation is freed, as the driver requires: anything else would unmap the process's memory. */
SIM_EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	SIM_REQUIRE_INIT();
	pthread_mutex_lock(&sim_mem_lock);
	size_t i = 0;
	while (i < nreserved && !(reserved[i].va == ptr && reserved[i].size == size))
		i++;
	bool found = i < nreserved;
	if (found)
		reserved[i] = reserved[--nreserved];
	pthread_mutex_unlock(&sim_mem_lock);
	if (!found)
		return CUDA_ERROR_INVALID_VALUE;
	munmap((void *)ptr, size + GRANULARITY);
	return CUDA_SUCCESS;
}

/* The mapping holding va, or nmaps (sim_mem_lock held). */
static size_t holding(uintptr_t va)
{
	size_t i = 0;
	while (i < nmaps && !(maps[i].va <= va && va < maps[i].va + maps[i].size))
		i++;
	return i;
}

SIM_EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
				     unsigned long long flags)
{
	SIM_REQUIRE_INIT();
	struct sim_physical *p = sim_physical_of(handle);
	if (!ptr || !size || offset || flags || !p || size > p->size || size % GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&sim_mem_lock);
	for (size_t i = 0; i < nmaps && r == CUDA_SUCCESS; i++)
		if (maps[i].va < ptr + size && ptr < maps[i].va + maps[i].size)
			r = CUDA_ERROR_INVALID_VALUE; /* onto another mapping */
	if (r == CUDA_SUCCESS && !ember_grow(&maps, nmaps, &cap, sizeof *maps, 16))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS) {
		maps[nmaps++] = (struct mapping){ ptr, size, p };
		__atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
	}
	pthread_mutex_unlock(&sim_mem_lock);
	return r;
}

/* Whether [ptr, ptr + size) is mapped throughout, ending with a mapping where whole is set (sim_mem_lock held). */
static bool mapped_throughout(uintptr_t ptr, size_t size, bool whole)
{
	uintptr_t at = ptr, end = ptr + size;
	size_t first = holding(ptr);
	if (whole && (first == nmaps || maps[first].va != ptr))
		return false;
	while (at < end) {
		size_t i = holding(at);
		if (i == nmaps)
			return false;
		at = maps[i].va + maps[i].size;
	}
	return !whole || at == end;
}

SIM_EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	SIM_REQUIRE_INIT();
	if (!ptr || !size)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_mem_lock);
	bool ok = mapped_throughout(ptr, size, true);
	pthread_mutex_unlock(&sim_mem_lock);
	for (bool more = ok; more;) { /* one mapping at a time, its reference dropped outside the lock */
		struct sim_physical *gone = NULL;
		pthread_mutex_lock(&sim_mem_lock);
		for (size_t i = 0; i < nmaps && !gone; i++)
			if (maps[i].va >= ptr && maps[i].va < ptr + size) {
				gone = maps[i].p;
				maps[i] = maps[--nmaps];
			}
		pthread_mutex_unlock(&sim_mem_lock);
		more = gone != NULL;
		if (gone)
			sim_physical_put(gone);
	}
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	SIM_REQUIRE_INIT();
	if (!ptr || !size || !desc || !count)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_mem_lock);
	bool ok = mapped_throughout(ptr, size, false);
	pthread_mutex_unlock(&sim_mem_lock);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/*
 * For memory made in host memory the driver answers a base outside anything
 * the program mapped: 0 on an H100 (ember-torture, ab-57's call 1), 12-13 GB
 * below the reservation on the H200 and the H100 (ember-vmm-host-probe,
 * ab-53's call 3, ab-55's call 1). The simulated driver answers 0.
 */
bool sim_vmm_mapping_of(uintptr_t addr, uintptr_t *va, size_t *size)
{
	pthread_mutex_lock(&sim_mem_lock);
	size_t i = holding(addr);
	bool found = i < nmaps;
	if (found) {
		*va = maps[i].p->device == EMBER_SIM_HOST ? 0 : maps[i].va;
		*size = maps[i].size;
	}
	pthread_mutex_unlock(&sim_mem_lock);
	return found;
}

SIM_EXPORT CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	SIM_REQUIRE_INIT();
	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_mem_lock);
	size_t i = holding((uintptr_t)addr);
	bool found = i < nmaps;
	if (found) {
		__atomic_add_fetch(&maps[i].p->refs, 1, __ATOMIC_ACQ_REL);
		*handle = (CUmemGenericAllocationHandle)(uintptr_t)maps[i].p;
	}
	pthread_mutex_unlock(&sim_mem_lock);
	return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
								   CUmemGenericAllocationHandle handle)
{
	SIM_REQUIRE_INIT();
	const struct sim_physical *p = sim_physical_of(handle);
	if (!prop || !p)
		return CUDA_ERROR_INVALID_VALUE;
	*prop = p->prop;
	return CUDA_SUCCESS;
}
