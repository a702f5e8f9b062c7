/*
 * PyTorch's tensor lists: the one structure argument in which its foreach
 * ops and fused optimizers (multi_tensor_apply_kernel) pass up to 770
 * tensors of each of up to five lists. The structure keeps, besides each
 * slot's addresses and element count, which slot and which chunk of 65,536
 * elements each block of the launch works on. The word scan took every
 * address in it for its whole tensor, and the slots a launch leaves unused
 * keep the tensors of earlier launches: fused AdamW over 256 MiB weights
 * credited each weight, gradient and moment two or three times a step, for
 * a launch that reads a fifth of one of them (the ab-59 training trace).
 * Reading the blocks instead credits each tensor the chunks the launch
 * works on, and no stale slot at all.
 *
 * The layout is known from the structure's name in the kernel's mangled
 * name (its kind and depth) and from the argument's size (the 4 KB form,
 * or the 32 KB one of PyTorch's builds for CUDA 13, which PyTorch 2.2 to
 * 2.8 also named with a flag): a structure of another size, or blocks
 * that name a slot or chunk it does not have, are read the old way.
 */
#ifndef EMBER_TENSOR_LISTS_H
#define EMBER_TENSOR_LISTS_H

#include <stdbool.h>
#include <stdint.h>

enum { EMBER_TENSOR_CHUNK = 65536 }; /* elements per chunk, one block's share */

/* Where a kernel's tensor-list argument keeps what (bytes from its start). */
struct ember_tensor_lists {
	bool known;        /* the kernel takes such an argument, of the size its name implies */
	uint8_t param;     /* which argument it is */
	uint8_t depth;     /* lists, each of `slots` addresses */
	uint8_t index_bytes; /* of each block's slot number: 1, or 2 in the 32 KB form */
	uint16_t slots;    /* tensors per list */
	uint16_t steps;    /* fused optimizers: a step counter's address per slot (0: none) */
	uint16_t blocks;   /* most blocks a launch may have */
	uint32_t numel_at, steps_at, block_slot_at, block_chunk_at, size;
};

/*
 * From a kernel's mangled name and its parameters' sizes: whether it is
 * PyTorch's multi_tensor_apply_kernel taking one of the known structures
 * as its first argument, and where that structure keeps what.
 */
void ember_tensor_lists_layout(const char *mangled, unsigned n, const uint32_t *size, struct ember_tensor_lists *out);

/* A tensor a launch works on: its address, its elements, and the chunks of them the launch's blocks take. */
struct ember_listed {
	uint64_t addr, numel;
	uint32_t first_chunk, chunks;
};

/*
 * The tensors the launch of grid_x blocks works on, read from the argument's
 * bytes: each list's address of each slot a block names, and each such
 * slot's step counter (one element). Returns how many were put in out
 * (at most max), or -1 where the bytes are not what the layout says (a
 * block past the blocks, a slot past the slots, a chunk past its tensor's
 * elements, more tensors than max): the caller scans the words instead.
 */
int ember_tensor_lists_read(const struct ember_tensor_lists *l, const unsigned char *arg, unsigned grid_x,
			    struct ember_listed *out, unsigned max);

#endif
