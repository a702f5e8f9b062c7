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

/* The whole mappings of one split that are kept; past these, an address there answers for its part. */
#define EMBER_SPLIT_MAPPINGS 4

struct ember_split {
	CUmemGenericAllocationHandle gpu, host; /* the driver's: gpu_bytes on the GPU, the rest in host memory */
	uint64_t size, gpu_bytes;
	int device;
	CUmemAllocationProp prop; /* as the program asked */
	unsigned retained;        /* references cuMemRetainAllocationHandle gave, each released once */
	/* where the program mapped it whole (a ring buffer maps one allocation twice, side by side); 0: none */
	CUdeviceptr mapped_at[EMBER_SPLIT_MAPPINGS];
	bool released;            /* its last reference let go while mapped: kept only to answer a retain */
	bool given_back;          /* its budget and host claim were given back at a last release before */
};

/* One of s's whole mappings; 0 if it is mapped whole nowhere. */
CUdeviceptr ember_split_a_mapping(const struct ember_split *s);

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

/* The program mapped handle whole at ptr (kept while fewer than EMBER_SPLIT_MAPPINGS are). */
void ember_split_mapped(CUmemGenericAllocationHandle handle, CUdeviceptr ptr);

/* Where the split mapped whole around ptr begins, and its size; false where no split is mapped there. */
bool ember_split_mapped_around(CUdeviceptr ptr, CUdeviceptr *base, uint64_t *size);

/* The program unmapped [ptr, ptr + size): splits mapped there are no longer, and those released are forgotten. */
void ember_split_unmapped(CUdeviceptr ptr, size_t size);

enum ember_split_release { EMBER_SPLIT_NOT, EMBER_SPLIT_STILL_HELD, EMBER_SPLIT_GONE };

/*
 * The program releases handle: a reference that cuMemRetainAllocationHandle
 * gave (the split stays), or the last (the split, in out, is forgotten, or
 * kept as released while it is mapped, where its parts' mappings hold them;
 * its parts are the caller's to release either way).
 */
enum ember_split_release ember_split_release(CUmemGenericAllocationHandle handle, struct ember_split *out);

#endif
