/*
 * PyTorch's torch.cat: its kernels (CatArrayBatchedCopy and its _contig,
 * _alignedK_contig and _vectorized forms, ATen's Shape.cu) take the output's
 * address first, then one structure of up to 128 inputs (64 where the
 * inputs are strided), then the output's sizes and strides. The structure
 * keeps each input's address and element count; block row y of the launch
 * copies input y whole. Its slots past the launch's rows keep whatever the
 * host's stack held: the previous batch's inputs, or an earlier cat's. The
 * word scan took every address in it for a tensor reaching to the next
 * address or its allocation's end, stale ones too, and the output for as
 * many elements as its stride at the joined dimension.
 *
 * The layout is known from the kernel's template arguments (the element's
 * size, OpaqueType<N>; the index type; the dimensions; the slots; the
 * strided slots) and from the structure's size, which must match: another
 * PyTorch's structure (older ones kept it in device memory and passed its
 * address) is scanned word by word.
 */
#ifndef EMBER_CAT_INPUTS_H
#define EMBER_CAT_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

enum { EMBER_CAT_OUTPUT = 0, EMBER_CAT_INPUTS = 1, EMBER_CAT_SHAPE = 2 }; /* the arguments, in order */

struct ember_cat_inputs {
	bool known;          /* a cat kernel whose structure has the size its name implies */
	uint8_t elem_bytes;  /* of each element: OpaqueType<N> */
	uint8_t index_bytes; /* of each offset, size and count: 4 (unsigned int), or 8 */
	uint8_t dims;        /* of the sizes and strides the kernel uses (at most max_dims) */
	uint8_t max_dims;    /* each sizes-and-strides record keeps (4 in PyTorch) */
	uint8_t out_unit;    /* bytes of one step of the output's strides: elem_bytes, or _vectorized's alignment */
	uint16_t slots;      /* inputs the structure holds */
	uint16_t strided;    /* sizes-and-strides records in it: 1, or one per slot for strided inputs */
	uint32_t numel_at, strides_at, size;
};

/*
 * From a kernel's mangled name and its parameters' sizes: whether it is
 * one of PyTorch's cat kernels taking the structure as its second argument,
 * and where it keeps what.
 */
void ember_cat_layout(const char *mangled, unsigned n, const uint32_t *size, struct ember_cat_inputs *out);

/* Bytes at an address that a launch reads or writes. */
struct ember_span {
	uint64_t addr, bytes;
};

/*
 * The inputs a launch with grid_y block rows reads, from the structure's
 * bytes: each row's input, its elements (or, strided, the reach of its
 * sizes and strides) at elem_bytes each; an empty input is left out.
 * Returns how many were put in out (at most max), or -1 where the bytes
 * are not what the layout says (no rows, more rows than slots, a count
 * with no address): the caller scans the words instead.
 */
int ember_cat_read_inputs(const struct ember_cat_inputs *c, const unsigned char *meta, unsigned grid_y,
			  struct ember_span *out, unsigned max);

/*
 * The bytes from the output's address that its sizes and strides (the
 * third argument's bytes) reach, at out_unit bytes a step: every batch's
 * rows write into all of it where the join is not on the first dimension.
 * 0 where they reach nothing (an empty output).
 */
uint64_t ember_cat_output_bytes(const struct ember_cat_inputs *c, const unsigned char *shape);

#endif
