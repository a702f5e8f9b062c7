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
 *
 * apex's fused optimizers, and the copies of them in DeepSpeed and
 * Transformer Engine, keep an older form of the same structure: 4-byte
 * element counts, 320 blocks, up to six lists, passed third, after the
 * chunk's elements (4 or 8 bytes, 65,536 unless the program says) and the
 * no-op flag's address. It is known the same way, by its size there;
 * Transformer Engine's, where its name's flag says so, has three more
 * lists after it, of each slot's FP8 scale, maximum and inverse scale.
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
	uint8_t step_lists; /* such lists of one-element addresses: 1, or 3 for Transformer Engine's FP8 scales */
	uint16_t blocks;   /* most blocks a launch may have */
	uint8_t numel_bytes; /* of each slot's element count: 8, or 4 in apex's form */
	uint8_t chunk_bytes; /* 0: chunks of EMBER_TENSOR_CHUNK elements; 4 or 8: the first argument's, of that size */
	uint32_t numel_at, steps_at, block_slot_at, block_chunk_at, size;
};

/*
 * From a kernel's mangled name and its parameters' sizes: whether it is a
 * multi_tensor_apply_kernel taking one of the known structures (PyTorch's
 * as its first argument, apex's as its third), and where it keeps what.
 */
void ember_tensor_lists_layout(const char *mangled, unsigned n, const uint32_t *size, struct ember_tensor_lists *out);

/*
 * The elements of a chunk, one block's share, for a launch with these
 * arguments: 0 where the first argument is missing or names no
 * plausible share (none, or more than 2^30 elements).
 */
uint64_t ember_tensor_lists_chunk(const struct ember_tensor_lists *l, void *const *kernel_params);

/* A tensor a launch works on: its address, its elements, and those [from, to) that the launch's blocks take. */
struct ember_listed {
	uint64_t addr, numel, from, to;
};

/*
 * The tensors the launch of grid_x blocks of chunk elements each works on,
 * read from the argument's bytes: each list's address of each slot a block
 * names, and each such slot's step counter or FP8 scales (one element each). Returns how many
 * were put in out (at most max), or -1 where the bytes are not what the
 * layout says (a block past the blocks, a slot past the slots, a chunk
 * past its tensor's elements, more tensors than max): the caller scans the
 * words instead.
 */
int ember_tensor_lists_read(const struct ember_tensor_lists *l, const unsigned char *arg, unsigned grid_x,
			    uint64_t chunk, struct ember_listed *out, unsigned max);

#endif
