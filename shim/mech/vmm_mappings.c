/* The program's mappings of cuMemCreate memory that Ember answers for itself (vmm_mappings.h). */
#include "grow.h"
#include "locks.h"
#include "vmm_mappings.h"

struct mapping {
	CUdeviceptr va;
	uint64_t size;
	CUmemGenericAllocationHandle owner;
};

#define lock ember_lock_mappings
static struct mapping *maps;
static size_t nmaps, cap;
static size_t live; /* nmaps, read without the lock */

static void count(void)
{
	__atomic_store_n(&live, nmaps, __ATOMIC_RELEASE);
}

bool ember_vmm_mappings_any(void)
{
	return __atomic_load_n(&live, __ATOMIC_ACQUIRE) != 0;
}

bool ember_vmm_mapping_add(CUdeviceptr va, uint64_t size, CUmemGenericAllocationHandle owner)
{
	ember_lock(&lock);
	bool room = ember_grow(&maps, nmaps, &cap, sizeof *maps, 16);
	if (room) {
		maps[nmaps++] = (struct mapping){ va, size, owner };
		count();
	}
	ember_unlock(&lock);
	return room;
}

void ember_vmm_mappings_unmapped(CUdeviceptr ptr, size_t size)
{
	ember_lock(&lock);
	for (size_t i = nmaps; i-- > 0;)
		if (maps[i].va < ptr + size && ptr < maps[i].va + maps[i].size)
			maps[i] = maps[--nmaps];
	count();
	ember_unlock(&lock);
}

bool ember_vmm_mapping_around(CUdeviceptr addr, CUdeviceptr *va, uint64_t *size)
{
	bool found = false;
	ember_lock(&lock);
	for (size_t i = 0; i < nmaps && !found; i++)
		if (maps[i].va <= addr && addr < maps[i].va + maps[i].size) {
			*va = maps[i].va;
			*size = maps[i].size;
			found = true;
		}
	ember_unlock(&lock);
	return found;
}

CUdeviceptr ember_vmm_mapping_of(CUmemGenericAllocationHandle owner)
{
	CUdeviceptr va = 0;
	ember_lock(&lock);
	for (size_t i = 0; i < nmaps && !va; i++)
		if (maps[i].owner == owner)
			va = maps[i].va;
	ember_unlock(&lock);
	return va;
}
