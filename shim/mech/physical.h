/*
 * Physical allocations of the virtual memory API (cuMemCreate): PyTorch's
 * expandable segments and JAX's allocators make their memory this way and
 * map it themselves (cuMemMap), which managed memory cannot back, so Ember
 * cannot convert them. A device allocation the budget has room for is
 * made on the device and charged to the budget until cuMemRelease. Under
 * EMBER_MANAGE_ALL, one it has no room for is made in host memory instead,
 * which the GPU reads over the link through the program's own mapping:
 * the program runs past the budget, as with converted memory, though this
 * memory is never promoted (its request that a NIC may reach it, which
 * PyTorch and XLA make, is dropped: host memory is reachable as it is).
 * With EMBER_SPLIT_VMM, one the budget has room for in part is split:
 * that part on the GPU, the rest in host memory, behind one handle of
 * Ember's (split_physical.h).
 * Left on the device (and charged past the budget, as before) is one
 * larger than the budget (a framework's pool), one with flags, compression
 * or a usage, one that would take Ember's host memory (this and the host's
 * touches, host_touch.h) past half of what the host could give, and one
 * the driver will not make in host memory.
 */
#ifndef EMBER_PHYSICAL_H
#define EMBER_PHYSICAL_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * cuMemCreate, placed: with past_budget_to_host, in host memory where the
 * budget has no room. Returns the driver's result.
 */
CUresult ember_physical_create(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
			       unsigned long long flags, bool past_budget_to_host);

/* The handle is about to be released: give its bytes back. */
void ember_physical_released(CUmemGenericAllocationHandle handle);

/* Whether any allocation made whole in host memory lives, or is mapped: else cuMemMap need not tell. */
bool ember_physical_any_on_host(void);

/*
 * The program mapped handle at [ptr, ptr + size): where the allocation was
 * made whole in host memory, the mapping is kept for cuMemGetAddressRange
 * (vmm_mappings.h), whose driver's answer lies outside it.
 */
void ember_physical_mapped(CUmemGenericAllocationHandle handle, CUdeviceptr ptr, size_t size);

/* A split allocation's two parts were released: give their bytes back (split_physical.h). */
struct ember_split;
void ember_physical_split_released(const struct ember_split *s);

#endif
