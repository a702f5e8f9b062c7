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
	bool released;            /* its last reference let go while mapped: kept only to answer a retain */
	bool given_back;          /* its budget and host claim were given back at a last release before */
};

/* Whether any split lives: while none does, every hook passes its call straight through. */
bool ember_split_any(void);

/* Keep s (copied); its handle for the program, or 0 when memory is short. */
CUmemGenericAllocationHandle ember_split_add(const struct ember_split *s);

/* The split behind handle, copied into out; false if handle is not one the program holds. */
bool ember_split_find(CUmemGenericAllocationHandle handle, struct ember_split *out);

/* The handle of the split one of whose parts is piece, copied into out, released or not; false if none. */
bool ember_split_of_piece(CUmemGenericAllocationHandle piece, CUmemGenericAllocationHandle *handle,
			  struct ember_split *out);

enum ember_split_retain {
	EMBER_SPLIT_HELD_ONCE_MORE, /* held still: one more release before it goes */
	EMBER_SPLIT_HELD_AGAIN,     /* released while mapped: held again, by the parts' references the caller took */
	EMBER_SPLIT_CHANGED,        /* released, or held again, since the caller looked: nothing done */
	EMBER_SPLIT_GONE_MEANWHILE, /* forgotten since the caller looked */
};

/* cuMemRetainAllocationHandle gave handle once more, released (as the caller saw it) or not. */
enum ember_split_retain ember_split_retained(CUmemGenericAllocationHandle handle, bool released);

/*
 * The program mapped handle whole at ptr: kept among the mappings Ember
 * answers for (vmm_mappings.h), as many as the program makes (a ring
 * buffer maps one allocation twice, side by side).
 */
void ember_split_mapped(CUmemGenericAllocationHandle handle, CUdeviceptr ptr);

/* After an unmap: splits released while mapped whose last whole mapping went are forgotten. */
void ember_split_forget_unmapped(void);

enum ember_split_release { EMBER_SPLIT_NOT, EMBER_SPLIT_STILL_HELD, EMBER_SPLIT_GONE };

/*
 * The program releases handle: a reference that cuMemRetainAllocationHandle
 * gave (the split stays), or the last (the split, in out, is forgotten, or
 * kept as released while it is mapped whole, where its parts' mappings hold them;
 * its parts are the caller's to release either way).
 */
enum ember_split_release ember_split_release(CUmemGenericAllocationHandle handle, struct ember_split *out);

#endif
