/*
 * Physical allocations of the virtual memory API (cuMemCreate), counted
 * against their GPU's budget from creation to cuMemRelease: PyTorch's
 * expandable segments allocate this way, and Ember cannot convert them.
 */
#ifndef EMBER_PHYSICAL_H
#define EMBER_PHYSICAL_H

#include <cuda.h>
#include <stddef.h>

/* A handle was created for size bytes on device dev: charge the budget. */
void ember_physical_created(CUmemGenericAllocationHandle handle, size_t size, int dev);

/* The handle is about to be released: give its bytes back. */
void ember_physical_released(CUmemGenericAllocationHandle handle);

#endif
