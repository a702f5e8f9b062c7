/* cuMemCreate's allocations, on the device within the budget and in host memory past it (physical.h). */
#include <stdio.h>

#include "budget.h"
#include "budget_source.h"
#include "grow.h"
#include "host_touch.h"
#include "locks.h"
#include "physical.h"
#include "shim.h"
#include "split_physical.h"
#include "vmm_mappings.h"

/* The live handles and their sizes, newest last: a small table. */
struct handle_size {
	CUmemGenericAllocationHandle handle;
	size_t size;
	int device;
	bool on_host; /* made in host memory: nothing charged to the device */
};

#define lock ember_lock_physical
static struct handle_size *live;
static size_t nlive, caplive;
static size_t live_on_host; /* those of live made in host memory, read without the lock */

static void record(CUmemGenericAllocationHandle handle, size_t size, int dev, bool on_host)
{
	ember_lock(&lock);
	bool kept = ember_grow(&live, nlive, &caplive, sizeof *live, 64);
	if (kept)
		live[nlive++] = (struct handle_size){ handle, size, dev, on_host };
	if (kept && on_host)
		__atomic_add_fetch(&live_on_host, 1, __ATOMIC_RELEASE);
	ember_unlock(&lock);
	if (!kept && !on_host) /* untracked: its release gives nothing back, so it charges nothing */
		ember_budget_plain(dev, -(int64_t)size);
}

/* Why an allocation the budget has no room for must stay on the device; NULL when it may go to the host. */
static const char *stays_on_device(size_t size, const CUmemAllocationProp *prop, unsigned long long flags, int dev)
{
	if (flags || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return "it asks for flags or a type that host memory has not";
	if (prop->allocFlags.compressionType)
		return "it asks for compression";
	if (prop->allocFlags.usage)
		return "it asks for a usage (a tile pool)";
	uint64_t budget = ember_budget_bytes(dev);
	if (budget && size > budget)
		return "it is larger than the budget: a framework's pool (JAX's preallocation: "
		       "XLA_PYTHON_CLIENT_PREALLOCATE=false, which ember-run sets, grows the pool instead, split "
		       "at the budget; XLA_PYTHON_CLIENT_ALLOCATOR=platform makes an allocation per array)";
	return NULL;
}

/*
 * The same allocation's properties in host memory: not tied to a NUMA node,
 * unless the program asks for a shareable handle. False where host memory
 * cannot have them.
 */
static bool host_properties(const CUmemAllocationProp *prop, int dev, CUmemAllocationProp *host)
{
	*host = *prop;
	host->location.type = CU_MEM_LOCATION_TYPE_HOST;
	host->location.id = 0;
	/* PyTorch and XLA ask for device memory that a NIC may reach; host memory is reachable as it is */
	host->allocFlags.gpuDirectRDMACapable = 0;
	if (prop->requestedHandleTypes) { /* HOST memory is not shareable; its GPU's NUMA node's may be */
		int numa = -1;
		if (EMBER_REAL(cuDeviceGetAttribute)(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev) != CUDA_SUCCESS || numa < 0)
			return false;
		host->location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
		host->location.id = numa;
	}
	return true;
}

static CUresult create_on_host(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop, int dev)
{
	CUmemAllocationProp host;
	if (!host_properties(prop, dev, &host))
		return CUDA_ERROR_NOT_SUPPORTED;
	return EMBER_REAL(cuMemCreate)(handle, size, &host, 0);
}

/*
 * The unit a split falls on: the larger of the minimum granularities of
 * prop (its GPU part) and host (its host part); 0 if either is unknown.
 */
static uint64_t split_unit(const CUmemAllocationProp *prop, const CUmemAllocationProp *host)
{
	size_t gpu_unit = 0, host_unit = 0;
	if (EMBER_REAL(cuMemGetAllocationGranularity)(&gpu_unit, prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS ||
	    EMBER_REAL(cuMemGetAllocationGranularity)(&host_unit, host, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS)
		return 0;
	return gpu_unit > host_unit ? gpu_unit : host_unit;
}

/*
 * A shareable allocation smaller than this share of the budget is not split:
 * whole, it stays exportable (NCCL's buffers, PyTorch's segments shared with
 * another process), and the room it leaves unused is less than the share.
 */
#define SHAREABLE_SPLIT_SHARE 64

/*
 * An allocation the budget has room for only in part, split: that part on
 * the GPU, the rest in host memory, behind one handle of Ember's
 * (split_physical.h). Whether it was; on false nothing is charged or made.
 */
static bool split_at_the_budget(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
				int dev)
{
	static bool said;
	CUmemAllocationProp host;
	if ((prop->requestedHandleTypes && size < ember_budget_bytes(dev) / SHAREABLE_SPLIT_SHARE) ||
	    !host_properties(prop, dev, &host))
		return false;
	uint64_t unit = split_unit(prop, &host);
	if (!unit || size % unit || size <= unit)
		return false;
	uint64_t on_gpu = ember_budget_plain_up_to(dev, size - unit, unit);
	if (!on_gpu)
		return false;
	uint64_t on_host = size - on_gpu;
	struct ember_split s = { .size = size, .gpu_bytes = on_gpu, .device = dev, .prop = *prop };
	bool claimed = ember_host_claim(on_host);
	bool gpu_made = claimed && EMBER_REAL(cuMemCreate)(&s.gpu, on_gpu, prop, 0) == CUDA_SUCCESS;
	bool host_made = gpu_made && EMBER_REAL(cuMemCreate)(&s.host, on_host, &host, 0) == CUDA_SUCCESS;
	*handle = host_made ? ember_split_add(&s) : 0;
	if (!*handle) {
		if (host_made)
			EMBER_REAL(cuMemRelease)(s.host);
		if (gpu_made)
			EMBER_REAL(cuMemRelease)(s.gpu);
		if (claimed)
			ember_host_unclaim(on_host);
		ember_budget_plain(dev, -(int64_t)on_gpu);
		return false;
	}
	ember_budget_vmm_on_host(dev, on_host);
	if (ember_first_time(&said))
		ember_info("EMBER_MANAGE_ALL: a cuMemCreate allocation that GPU %d's budget has room for only in part is "
			   "split: that part on the GPU, the rest in host memory, behind one handle",
			   dev);
	ember_debug("cuMemCreate of %zu MiB for GPU %d split: %llu MiB on the GPU, %llu MiB in host memory", size >> 20,
		    dev, (unsigned long long)(on_gpu >> 20), (unsigned long long)(on_host >> 20));
	return true;
}

void ember_physical_split_released(const struct ember_split *s)
{
	ember_budget_plain(s->device, -(int64_t)s->gpu_bytes);
	ember_host_unclaim(s->size - s->gpu_bytes);
}

CUresult ember_physical_create(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
			       unsigned long long flags, bool past_budget_to_host)
{
	static bool said_host, said_stays;
	int dev = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : -1;
	if (!handle || dev < 0 || dev >= EMBER_MAX_DEVICES)
		return EMBER_REAL(cuMemCreate)(handle, size, prop, flags);
	bool charged = ember_budget_plain_if_room(dev, size);
	if (!charged && past_budget_to_host) {
		const char *why = stays_on_device(size, prop, flags, dev);
		if (!why && ember_cfg.split_vmm && split_at_the_budget(handle, size, prop, dev))
			return CUDA_SUCCESS;
		/* page-locked host memory, which the system cannot reclaim: within Ember's share of the host */
		bool claimed = !why && ember_host_claim(size);
		if (!why && !claimed)
			why = "Ember's host memory would pass half of what the host could give";
		CUresult r = why ? CUDA_ERROR_NOT_SUPPORTED : create_on_host(handle, size, prop, dev);
		if (r != CUDA_SUCCESS && claimed)
			ember_host_unclaim(size);
		if (r == CUDA_SUCCESS) {
			record(*handle, size, dev, true);
			ember_budget_vmm_on_host(dev, size);
			if (ember_first_time(&said_host))
				ember_info("EMBER_MANAGE_ALL: cuMemCreate memory past GPU %d's budget is made in host "
					   "memory, which the GPU reads over the link and Ember never promotes; scattered "
					   "reads of it are slower than of converted memory (PyTorch: "
					   "expandable_segments:False has its memory converted)",
					   dev);
			ember_debug("cuMemCreate of %zu MiB for GPU %d made in host memory: the budget has no room",
				    size >> 20, dev);
			return r;
		}
		char refused[64];
		snprintf(refused, sizeof refused, "the driver will not make it in host memory, CUresult %d", (int)r);
		if (ember_first_time(&said_stays)) /* the budget is passed: a warning */
			ember_warn("EMBER_MANAGE_ALL: cuMemCreate memory past GPU %d's budget stays on the device "
				   "where %s (the first: %zu MiB)",
				   dev, why ? why : refused, size >> 20);
	}
	if (!charged)
		ember_budget_plain(dev, (int64_t)size); /* past the budget all the same: counted, as plain memory is */
	CUresult r = EMBER_REAL(cuMemCreate)(handle, size, prop, flags);
	if (r == CUDA_SUCCESS) {
		record(*handle, size, dev, false);
		ember_debug("cuMemCreate of %zu MiB for GPU %d made on the GPU%s", size >> 20, dev,
			    charged ? ": within the budget" : ", past its budget");
	} else {
		ember_budget_plain(dev, -(int64_t)size);
	}
	return r;
}

void ember_physical_released(CUmemGenericAllocationHandle handle)
{
	struct handle_size gone = { 0, 0, -1, false };
	ember_lock(&lock);
	/* programs tend to release what they created last: search from the end */
	for (size_t i = nlive; i-- > 0;)
		if (live[i].handle == handle) {
			gone = live[i];
			live[i] = live[--nlive];
			break;
		}
	if (gone.on_host)
		__atomic_sub_fetch(&live_on_host, 1, __ATOMIC_RELEASE);
	ember_unlock(&lock);
	if (gone.device < 0)
		return;
	if (gone.on_host)
		ember_host_unclaim(gone.size);
	else
		ember_budget_plain(gone.device, -(int64_t)gone.size);
}

bool ember_physical_any_on_host(void)
{
	return __atomic_load_n(&live_on_host, __ATOMIC_ACQUIRE) != 0 || ember_vmm_mappings_any();
}

void ember_physical_mapped(CUmemGenericAllocationHandle handle, CUdeviceptr ptr, size_t size)
{
	ember_lock(&lock);
	bool on_host = false;
	for (size_t i = nlive; i-- > 0 && !on_host;)
		on_host = live[i].handle == handle && live[i].on_host;
	/* released while mapped, then retained from an address and mapped again: its first mapping names it */
	if (on_host || ember_vmm_mapping_of(handle))
		ember_vmm_mapping_add(ptr, size, handle); /* when memory is short, the driver's answer stands */
	ember_unlock(&lock);
}
