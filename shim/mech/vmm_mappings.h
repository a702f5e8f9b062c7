/*
 * The program's mappings of cuMemCreate memory that Ember answers for
 * itself, because the driver would answer otherwise than for the memory
 * the program asked for:
 *   - a split's whole mappings (split_physical.h): the driver answers for
 *     the part an address lies in;
 *   - mappings of an allocation Ember made whole in host memory past the
 *     budget (physical.h): the driver's cuMemGetAddressRange gives a base
 *     outside anything the program mapped (0 on an H100 in ember-torture,
 *     ab-57's call 1; 12-13 GB below the reservation in
 *     ember-vmm-host-probe, ab-53's call 3).
 * Each is kept from its cuMemMap to the first cuMemUnmap that touches it,
 * under a name for what it maps (its owner: the split's handle, or the
 * driver's handle of the allocation in host memory).
 */
#ifndef EMBER_VMM_MAPPINGS_H
#define EMBER_VMM_MAPPINGS_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

/* Whether any mapping is kept: while none is, the hooks pass their calls straight through. */
bool ember_vmm_mappings_any(void);

/* Keep [va, va + size) as a mapping of owner; false, and nothing kept, when memory is short. */
bool ember_vmm_mapping_add(CUdeviceptr va, uint64_t size, CUmemGenericAllocationHandle owner);

/* The program unmapped [ptr, ptr + size): every kept mapping it touches is forgotten. */
void ember_vmm_mappings_unmapped(CUdeviceptr ptr, size_t size);

/* The kept mapping addr lies in, its start and size; false where none is kept there. */
bool ember_vmm_mapping_around(CUdeviceptr addr, CUdeviceptr *va, uint64_t *size);

/* Where one of owner's kept mappings begins; 0 where none is kept. */
CUdeviceptr ember_vmm_mapping_of(CUmemGenericAllocationHandle owner);

#endif
