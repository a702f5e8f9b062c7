/*
 * cuMemCreate allocations split at the budget under EMBER_SPLIT_VMM
 * (physical.h): the part the budget has room for on the GPU, the rest in
 * host memory, two of the driver's handles behind one handle of Ember's,
 * which the program maps, releases and asks about as its own. A pool that
 * grows by doubling its regions (JAX's) otherwise finds a region larger
 * than the room left made whole in host memory, and the room stays unused.
 *
 * This file keeps the splits; the hooks (abi/hooks_vmm.c) turn each call
 * on Ember's handle into calls on its two parts.
 */
#ifndef EMBER_SPLIT_PHYSICAL_H
#define EMBER_SPLIT_PHYSICAL_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

struct ember_split {
	CUmemGenericAllocationHandle gpu, host; /* the driver's: gpu_bytes on the GPU, the rest in host memory */
	uint64_t size, gpu_bytes;
	int device;
	CUmemAllocationProp prop; /* as the program asked */
	unsigned retained;        /* references cuMemRetainAllocationHandle gave, each released once */
};

/* Whether any split lives: while none does, every hook passes its call straight through. */
bool ember_split_any(void);

/* Keep s (copied); its handle for the program, or 0 when memory is short. */
CUmemGenericAllocationHandle ember_split_add(const struct ember_split *s);

/* The split behind handle, copied into out; false if handle is not one. */
bool ember_split_find(CUmemGenericAllocationHandle handle, struct ember_split *out);

/* The handle of the split one of whose parts is piece; false if none. */
bool ember_split_of_piece(CUmemGenericAllocationHandle piece, CUmemGenericAllocationHandle *handle);

/* cuMemRetainAllocationHandle gave handle once more: one more release before it goes. */
void ember_split_retained(CUmemGenericAllocationHandle handle);

enum ember_split_release { EMBER_SPLIT_NOT, EMBER_SPLIT_STILL_HELD, EMBER_SPLIT_GONE };

/*
 * The program releases handle: a reference that cuMemRetainAllocationHandle
 * gave (the split stays), or the last (the split is forgotten, in out, and
 * its parts are the caller's to release).
 */
enum ember_split_release ember_split_release(CUmemGenericAllocationHandle handle, struct ember_split *out);

#endif
