/* ember-torture's threads of the virtual memory API: every answer about an allocation its own. */
#include <stdint.h>
#include <stdlib.h>

#include "torture.h"

/*
 * One round of the virtual memory API, as PyTorch's expandable segments and
 * JAX's pool use it: make an allocation of 1 to 8 granules, map it (a
 * quarter of the time twice, side by side, as a ring buffer does), release
 * it while mapped half of the time (the mapping holds it), ask for it back
 * from an address and for the range around that address, then unmap.
 * Under EMBER_MANAGE_ALL and a small budget Ember splits many of these
 * between the GPU and host memory behind one handle while other threads
 * do the same: every answer must still be the one allocation's.
 */
static void vmm_round(unsigned *seed, const CUmemAllocationProp *prop, size_t granule)
{
	const CUmemAccessDesc access = { .location = prop->location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	size_t size = (1 + (size_t)(rand_r(seed) % 8)) * granule;
	bool twice = rand_r(seed) % 4 == 0, released = rand_r(seed) % 2;
	unsigned maps = twice ? 2 : 1;
	CUmemGenericAllocationHandle h, again;
	CUdeviceptr va, base;
	size_t got;
	CHECK(cuMemCreate(&h, size, prop, 0));
	CHECK(cuMemAddressReserve(&va, maps * size, 0, 0, 0));
	for (unsigned m = 0; m < maps; m++)
		CHECK(cuMemMap(va + m * size, size, 0, h, 0));
	CHECK(cuMemSetAccess(va, maps * size, &access, 1));
	if (released)
		CHECK(cuMemRelease(h));
	CUdeviceptr mapping = va + (rand_r(seed) % maps) * size, at = mapping + (size_t)rand_r(seed) % size;
	CHECK(cuMemRetainAllocationHandle(&again, (void *)at));
	EXPECT(again == h, "a retain at %#llx gave handle %#llx, not %#llx\n", (unsigned long long)at,
	       (unsigned long long)again, (unsigned long long)h);
	CHECK(cuMemGetAddressRange(&base, &got, at));
	EXPECT(base == mapping && got == size, "the range around %#llx is %zu bytes at %#llx, not %zu at %#llx\n",
	       (unsigned long long)at, got, (unsigned long long)base, size, (unsigned long long)mapping);
	CHECK(cuMemRelease(again));
	if (twice) { /* either mapping unmapped first: the other still answers for the whole allocation */
		CUdeviceptr gone = va + (rand_r(seed) % 2) * size, left = gone == va ? va + size : va;
		CHECK(cuMemUnmap(gone, size));
		CHECK(cuMemRetainAllocationHandle(&again, (void *)(left + size - 1)));
		EXPECT(again == h, "with one mapping left, a retain gave handle %#llx, not %#llx\n",
		       (unsigned long long)again, (unsigned long long)h);
		CHECK(cuMemRelease(again));
		CHECK(cuMemGetAddressRange(&base, &got, left + size - 1));
		EXPECT(base == left && got == size, "with one mapping left, the range is %zu bytes at %#llx\n", got,
		       (unsigned long long)base);
		CHECK(cuMemUnmap(left, size));
	} else {
		CHECK(cuMemUnmap(va, size));
	}
	if (!released)
		CHECK(cuMemRelease(h));
	CHECK(cuMemAddressFree(va, maps * size));
	__atomic_add_fetch(&torture_vmm_rounds, 1, __ATOMIC_RELAXED);
}

void *torture_vmm_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2246822519u;
	CUdevice dev;
	size_t granule;
	CHECK(cuCtxSetCurrent(torture_ctx));
	CHECK(cuCtxGetDevice(&dev));
	const CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
					   .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev } };
	CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	while (torture_going_on())
		vmm_round(&seed, &prop, granule);
	return NULL;
}
