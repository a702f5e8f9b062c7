/*
 * torch.cat's structure (shim/signal/cat_inputs.c, linked in alone): its
 * layout from the kernel's mangled name and the arguments' sizes, which
 * inputs a launch's block rows copy, and how far the output reaches.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "cat_inputs.h"

/*
 * Names as nvcc 13.0 mangles kernels declared as ATen's Shape.cu declares
 * them (its anonymous namespace, OpaqueType<N>, unsigned int indices); the
 * structure's sizes are those of that PTX's parameters (2,720 and 3,392
 * bytes).
 */
#define NS "_ZN2at6native38_GLOBAL__N__4fc23816_6_cat_cu_686e64cf"
#define TAIL "NS1_25CatArrInputTensorMetadataIS5_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_"
static const char contig[] = NS "26CatArrayBatchedCopy_contigINS1_10OpaqueTypeILj2EEEjLi2ELi128ELi1EEEvPT_" TAIL;
static const char strided[] = NS "19CatArrayBatchedCopyINS1_10OpaqueTypeILj4EEEjLi3ELi64ELi64EEEvPT_" TAIL;
static const char vectorized[] = NS "30CatArrayBatchedCopy_vectorizedINS1_10OpaqueTypeILj2EEEjLi4ELi128ELi1ELi16ELi8E"
				    "EEvPcNS1_25CatArrInputTensorMetadataIT_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_";
static const char aligned[] = NS "35CatArrayBatchedCopy_alignedK_contigINS1_10OpaqueTypeILj8EEEjLi1ELi128ELi1ELi16EEEvPT_" TAIL;
/* the same kernel with its namespace spelt out, and by the name an earlier PyTorch gave it */
static const char spelt_out[] = "_ZN2at6native12_GLOBAL__N_136CatArrayBatchedCopy_aligned16_contigIN2at6native12_GLOBAL"
				"__N_110OpaqueTypeILj4EEEjLi1ELi128ELi1EEEvPT_" TAIL;

static struct ember_cat_inputs layout(const char *name, uint32_t meta_bytes)
{
	uint32_t sizes[5] = { 8, meta_bytes, 32, 4, 4 };
	struct ember_cat_inputs c;
	ember_cat_layout(name, 5, sizes, &c);
	return c;
}

Test(cat_inputs, the_layouts_by_name_and_size)
{
	struct ember_cat_inputs c = layout(contig, 2720);
	cr_assert(c.known, "128 contiguous inputs of 2-byte elements");
	cr_expect_eq(c.elem_bytes, 2);
	cr_expect_eq(c.index_bytes, 4);
	cr_expect_eq(c.dims, 2);
	cr_expect_eq(c.max_dims, 4);
	cr_expect_eq(c.slots, 128);
	cr_expect_eq(c.strided, 1);
	cr_expect_eq(c.numel_at, 2048, "as the PTX loads nElements[0]");
	cr_expect_eq(c.strides_at, 2688);
	cr_expect_eq(c.out_unit, 2);
	struct ember_cat_inputs s = layout(strided, 3392);
	cr_assert(s.known, "64 strided inputs, a sizes-and-strides record each");
	cr_expect_eq(s.slots, 64);
	cr_expect_eq(s.strided, 64);
	cr_expect_eq(s.numel_at, 1024, "as the PTX loads nElements[0]");
	cr_expect_eq(s.strides_at, 1344);
	cr_expect_eq(s.elem_bytes, 4);
	struct ember_cat_inputs v = layout(vectorized, 2720);
	cr_assert(v.known);
	cr_expect_eq(v.out_unit, 16, "its output's steps are its 16-byte alignment");
	cr_expect_eq(v.dims, 4);
	cr_expect_eq(layout(aligned, 2720).elem_bytes, 8);
	cr_expect(layout(spelt_out, 2720).known);
}

Test(cat_inputs, other_structures_and_kernels_are_scanned_word_by_word)
{
	cr_expect_not(layout(contig, 8).known, "an older PyTorch's address of the structure in device memory");
	cr_expect_not(layout(contig, 2728).known, "a size no structure of these arguments has");
	cr_expect_not(layout(strided, 2720).known);
	static const char typed[] = "_ZN2at6native12_GLOBAL__N_119CatArrayBatchedCopyIfjLi1ELi128ELi1EEEvPT_" TAIL;
	cr_expect_not(layout(typed, 2720).known, "an element type, not OpaqueType<N>");
	static const char signed_index[] = NS "26CatArrayBatchedCopy_contigINS1_10OpaqueTypeILj2EEEiLi2ELi128ELi1EEEvPT_" TAIL;
	cr_expect_not(layout(signed_index, 2720).known);
	static const char odd[] = NS "26CatArrayBatchedCopy_contigINS1_10OpaqueTypeILj3EEEjLi2ELi128ELi1EEEvPT_" TAIL;
	cr_expect_not(layout(odd, 2720).known, "three-byte elements");
	static const char too_deep[] = NS "26CatArrayBatchedCopy_contigINS1_10OpaqueTypeILj2EEEjLi5ELi128ELi1EEEvPT_" TAIL;
	cr_expect_not(layout(too_deep, 2720).known, "five dimensions in records of four");
	cr_expect_not(layout("_Z26CatArrayBatchedCopy_contigv", 2720).known);
	cr_expect_not(layout(NULL, 2720).known);
	uint32_t two[2] = { 8, 2720 };
	struct ember_cat_inputs c;
	ember_cat_layout(contig, 2, two, &c);
	cr_expect_not(c.known, "no sizes and strides argument");
}

/* A structure of the contiguous layout: input i at addr[i] with numel[i] elements, the rest stale. */
static void fill(const struct ember_cat_inputs *c, unsigned char *meta, const uint64_t *addr, const uint32_t *numel,
		 unsigned n)
{
	memset(meta, 0, c->size);
	for (unsigned i = 0; i < c->slots; i++) {
		uint64_t a = i < n ? addr[i] : 0x7f0000000000ull + (uint64_t)i * 4096; /* an earlier cat's */
		uint32_t e = i < n ? numel[i] : 1000;
		memcpy(meta + 8u * i, &a, 8);
		memcpy(meta + c->numel_at + 4u * i, &e, 4);
	}
}

Test(cat_inputs, the_rows_name_the_inputs_and_the_stale_slots_none)
{
	struct ember_cat_inputs c = layout(contig, 2720);
	unsigned char meta[2720];
	const uint64_t addr[3] = { 0x10000, 0x90000, 0x50000 };
	const uint32_t numel[3] = { 4096, 0, 100 };
	fill(&c, meta, addr, numel, 3);
	struct ember_span out[8];
	int n = ember_cat_read_inputs(&c, meta, 3, out, 8);
	cr_assert_eq(n, 2, "the empty input copies nothing, the stale slots are past the rows");
	cr_expect_eq(out[0].addr, 0x10000);
	cr_expect_eq(out[0].bytes, 8192);
	cr_expect_eq(out[1].addr, 0x50000);
	cr_expect_eq(out[1].bytes, 200);
	cr_expect_eq(ember_cat_read_inputs(&c, meta, 1, out, 8), 1);
}

Test(cat_inputs, bytes_that_do_not_read_as_the_layout_says)
{
	struct ember_cat_inputs c = layout(contig, 2720), none = { 0 };
	unsigned char meta[2720];
	const uint64_t addr[2] = { 0x10000, 0 };
	const uint32_t numel[2] = { 16, 16 };
	fill(&c, meta, addr, numel, 2);
	struct ember_span out[8];
	cr_expect_eq(ember_cat_read_inputs(&c, meta, 2, out, 8), -1, "a count with no address");
	cr_expect_eq(ember_cat_read_inputs(&c, meta, 1, out, 8), 1);
	cr_expect_eq(ember_cat_read_inputs(&c, meta, 0, out, 8), -1, "no rows");
	cr_expect_eq(ember_cat_read_inputs(&c, meta, 129, out, 8), -1, "more rows than slots");
	cr_expect_eq(ember_cat_read_inputs(&none, meta, 1, out, 8), -1, "no layout");
	fill(&c, meta, addr, numel, 1);
	cr_expect_eq(ember_cat_read_inputs(&c, meta, 20, out, 8), -1, "more inputs than room");
}

/* Sizes and strides of `dims` dimensions into a record of four of each (4-byte indices). */
static void record(unsigned char *at, const uint32_t *sizes, const uint32_t *strides, unsigned dims)
{
	memset(at, 0, 32);
	memcpy(at, sizes, 4u * dims);
	memcpy(at + 16, strides, 4u * dims);
}

Test(cat_inputs, a_strided_input_reaches_as_far_as_its_strides)
{
	struct ember_cat_inputs c = layout(strided, 3392);
	unsigned char meta[3392] = { 0 };
	uint64_t addr = 0x20000;
	uint32_t numel = 6;
	memcpy(meta, &addr, 8);
	memcpy(meta + c.numel_at, &numel, 4);
	/* a 2 x 3 slice of a 2 x 6 array: rows 6 apart (its third dimension of one element) */
	record(meta + c.strides_at, (const uint32_t[]){ 2, 3, 1 }, (const uint32_t[]){ 6, 1, 1 }, 3);
	struct ember_span out[2];
	cr_assert_eq(ember_cat_read_inputs(&c, meta, 1, out, 2), 1);
	cr_expect_eq(out[0].bytes, 9 * 4, "from the first element to the last, nine floats");
}

Test(cat_inputs, the_output_reaches_as_far_as_its_sizes_and_strides)
{
	unsigned char shape[32];
	struct ember_cat_inputs c = layout(contig, 2720), v = layout(vectorized, 2720);
	record(shape, (const uint32_t[]){ 4, 10 }, (const uint32_t[]){ 10, 1 }, 2);
	cr_expect_eq(ember_cat_output_bytes(&c, shape), 80, "40 elements of 2 bytes");
	record(shape, (const uint32_t[]){ 3, 2, 5, 1 }, (const uint32_t[]){ 10, 5, 1, 1 }, 4);
	cr_expect_eq(ember_cat_output_bytes(&v, shape), 30 * 16, "30 steps of 16 bytes");
	record(shape, (const uint32_t[]){ 4, 0 }, (const uint32_t[]){ 10, 1 }, 2);
	cr_expect_eq(ember_cat_output_bytes(&c, shape), 0, "an empty output");
	struct ember_cat_inputs none = { 0 };
	cr_expect_eq(ember_cat_output_bytes(&none, shape), 0);
}
