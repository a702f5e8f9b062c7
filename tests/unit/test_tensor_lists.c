/*
 * PyTorch's tensor-list argument (shim/signal/tensor_lists.c, linked in
 * alone): its layout from the kernel's mangled name and the argument's
 * size, and which tensors and chunks a launch's blocks name.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tensor_lists.h"

/* Names as PyTorch 2.11's libtorch_cuda.so (CUDA 13) registers them, and as 2.2 to 2.8 wrote them with their flag. */
static const char fused_adam[] = "_ZN2at6native51_GLOBAL__N__f7f2fd5f_18_fused_adam_impl_cu_454205f325multi_tensor_"
				 "apply_kernelINS1_32FusedOptimizerTensorListMetadataILi4EEENS1_20FusedAdamMathFunctorIf"
				 "Li4ELNS0_9ADAM_MODEE0ELb0EEEJPKfdddddbS9_S9_EEEvT_T0_DpT1_";
static const char fused_adam_flagged[] = "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_32FusedOptimizer"
					 "TensorListMetadataILi4ELb1EEENS1_20FusedAdamMathFunctorIfLi4EEEJEEEvT_T0_DpT1_";
static const char unary[] = "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi1EEENS1_"
			    "14UnaryOpFunctorIfLi1ELi1ELi0EEEJEEEvT_T0_DpT1_";
static const char scalar_list[] = "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_28TensorListScalarList"
				  "MetadataIfLi1EEENS1_28PointwiseOpScalarListFunctorIfLi1EEEJEEEvT_T0_DpT1_";
static const char complex_double_list[] = "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_28TensorList"
					  "ScalarListMetadataIN3c107complexIdEELi1EEENS1_7FunctorEJEEEvT_T0_DpT1_";

static struct ember_tensor_lists layout(const char *name, uint32_t size)
{
	uint32_t sizes[3] = { size, 1, 8 };
	struct ember_tensor_lists l;
	ember_tensor_lists_layout(name, 3, sizes, &l);
	return l;
}

Test(tensor_lists, the_fused_optimizer_s_two_forms_by_their_size)
{
	struct ember_tensor_lists wide = layout(fused_adam, 25544), narrow = layout(fused_adam, 3336);
	cr_expect(wide.known, "the 32 KB form: 4 lists of 252, 252 steps, 2,240 blocks of two-byte slots");
	cr_expect_eq(wide.depth, 4);
	cr_expect_eq(wide.slots, 252);
	cr_expect_eq(wide.steps, 252);
	cr_expect_eq(wide.index_bytes, 2);
	cr_expect_eq(wide.blocks, 2240);
	cr_expect(narrow.known, "the 4 KB form: 4 lists of 36, 320 blocks of one-byte slots");
	cr_expect_eq(narrow.slots, 36);
	cr_expect_eq(narrow.index_bytes, 1);
	cr_expect_not(layout(fused_adam, 25552).known, "a size no form has: scanned word by word");
}

Test(tensor_lists, the_flag_of_pytorch_2_2_to_2_8_decides_the_form)
{
	cr_expect(layout(fused_adam_flagged, 25544).known);
	cr_expect_not(layout(fused_adam_flagged, 3336).known, "flagged wide, the 4 KB size is another structure");
}

Test(tensor_lists, plain_and_scalar_lists)
{
	cr_expect(layout(unary, 3368).known, "one list of 110, 320 blocks");
	cr_expect(layout(unary, 25768).known, "one list of 770, 2,240 blocks");
	struct ember_tensor_lists s = layout(scalar_list, 3520);
	cr_expect(s.known, "96 slots with a float each, and no start_tensor_this_launch");
	cr_expect_eq(s.slots, 96);
	struct ember_tensor_lists c = layout(complex_double_list, 3904);
	cr_expect(c.known, "complex<double> scalars: 72 slots, the structure aligned to 16 bytes");
	cr_expect_eq(c.slots, 72);
}

Test(tensor_lists, other_kernels_take_none)
{
	cr_expect_not(layout("_Z1kPfPdPcm", 3368).known);
	cr_expect_not(layout("t_plain", 3368).known);
	cr_expect_not(layout(NULL, 3368).known);
	cr_expect_not(layout("_ZN2at6native25multi_tensor_apply_kernelINS_11SomeOtherMetadataILi1EEEEEvT_", 3368).known);
}

/* A 4 KB two-list structure: slot 0 of 100,000 elements (two chunks), slot 1 of 65,536, slot 2 stale. */
struct two_lists {
	unsigned char bytes[4096];
	struct ember_tensor_lists l;
};

static void put(struct two_lists *t, uint32_t at, const void *v, size_t n)
{
	memcpy(t->bytes + at, v, n);
}

static void block(struct two_lists *t, unsigned b, uint8_t slot, int32_t chunk)
{
	put(t, t->l.block_slot_at + b, &slot, 1);
	put(t, t->l.block_chunk_at + 4 * b, &chunk, 4);
}

static struct two_lists make_two_lists(void)
{
	static const char name[] = "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi2EEE"
				   "NS1_15BinaryOpFunctorIfLi2ELi2ELi0EEEJEEEvT_T0_DpT1_";
	struct two_lists t;
	memset(&t, 0, sizeof t);
	/* 2 x 64 addresses, 64 counts, 320 slot numbers, 320 chunks, the start: 3,144 bytes */
	t.l = layout(name, 3144);
	cr_assert(t.l.known);
	for (uint64_t d = 0; d < 2; d++)
		for (uint64_t slot = 0; slot < 3; slot++) {
			uint64_t addr = 0x10000000 * (d + 1) + 0x100000 * slot;
			put(&t, 8 * (uint32_t)(d * 64 + slot), &addr, 8);
		}
	const int64_t numel[3] = { 100000, 65536, 4096 };
	put(&t, t.l.numel_at, numel, sizeof numel);
	block(&t, 0, 0, 0);
	block(&t, 1, 0, 1);
	block(&t, 2, 1, 0);
	block(&t, 3, 2, 0); /* past the launch's three blocks: an earlier launch's */
	return t;
}

Test(tensor_lists, the_blocks_name_the_tensors_and_chunks)
{
	struct two_lists t = make_two_lists();
	struct ember_listed out[8];
	int n = ember_tensor_lists_read(&t.l, t.bytes, 3, EMBER_TENSOR_CHUNK, out, 8);
	cr_assert_eq(n, 4, "two slots in each of two lists, the stale third slot left out");
	cr_expect_eq(out[0].addr, 0x10000000);
	cr_expect_eq(out[0].numel, 100000);
	cr_expect_eq(out[0].from, 0);
	cr_expect_eq(out[0].to, 100000, "two chunks, the second cut at the tensor's end");
	cr_expect_eq(out[1].addr, 0x10100000);
	cr_expect_eq(out[1].to - out[1].from, 65536, "one chunk");
	cr_expect_eq(out[2].addr, 0x20000000, "the second list's slot 0");
	cr_expect_eq(out[3].addr, 0x20100000);
}

Test(tensor_lists, a_launch_over_part_of_a_tensor)
{
	struct two_lists t = make_two_lists();
	block(&t, 0, 0, 1); /* a launch that carries on with slot 0's second chunk alone */
	struct ember_listed out[8];
	cr_assert_eq(ember_tensor_lists_read(&t.l, t.bytes, 1, EMBER_TENSOR_CHUNK, out, 8), 2);
	cr_expect_eq(out[0].from, 65536);
	cr_expect_eq(out[0].to, 100000);
}

/* t's launch of its own blocks read: -1 where the bytes do not read as the layout says */
static int read_two(struct two_lists *t, unsigned grid_x, unsigned max)
{
	struct ember_listed out[8];
	return ember_tensor_lists_read(&t->l, t->bytes, grid_x, EMBER_TENSOR_CHUNK, out, max);
}

Test(tensor_lists, bytes_that_do_not_read_as_the_layout_says)
{
	struct two_lists t = make_two_lists();
	cr_expect_eq(read_two(&t, 0, 8), -1, "no blocks");
	cr_expect_eq(read_two(&t, 321, 8), -1, "more blocks than the structure has");
	cr_expect_eq(read_two(&t, 3, 3), -1, "more tensors than asked for");
	block(&t, 2, 64, 0);
	cr_expect_eq(read_two(&t, 3, 8), -1, "a slot past the slots");
	block(&t, 2, 1, 1);
	cr_expect_eq(read_two(&t, 3, 8), -1, "a chunk past its tensor's elements");
	block(&t, 2, 1, -1);
	cr_expect_eq(read_two(&t, 3, 8), -1, "a negative chunk");
	block(&t, 2, 1, 0);
	uint64_t none = 0;
	put(&t, 8 * 64 + 8, &none, 8);
	cr_expect_eq(read_two(&t, 3, 8), -1, "a used slot without an address");
}

/*
 * apex's form, as nvcc 13.0 lays out a structure of its fields (addresses,
 * int sizes, 320 one-byte slots and int chunks, start_tensor_this_launch)
 * for a kernel taking (long long chunk_size, volatile int *noop_flag,
 * TensorListMetadata<n>, functor, float): the sizes its PTX gives.
 */
static const char apex_adam[] = "_Z25multi_tensor_apply_kernelI18TensorListMetadataILi4EE11AdamFunctorJfEE"
				"vxPViT_T0_DpT1_";

static struct ember_tensor_lists apex(const char *name, uint32_t chunk_bytes, uint32_t size)
{
	uint32_t sizes[5] = { chunk_bytes, 8, size, 1, 4 };
	struct ember_tensor_lists l;
	ember_tensor_lists_layout(name, 5, sizes, &l);
	return l;
}

static const char *apex_name(char *buf, size_t n, unsigned depth)
{
	snprintf(buf, n, "_Z25multi_tensor_apply_kernelI18TensorListMetadataILi%uEE12ScaleFunctorJfEEvxPViT_T0_DpT1_",
		 depth);
	return buf;
}

Test(tensor_lists, apex_s_form_third_after_the_chunk_and_the_flag)
{
	static const uint32_t ptx_size[6] = { 2928, 2888, 2952, 2904, 2928, 2856 };
	char name[128];
	for (unsigned d = 1; d <= 6; d++) {
		struct ember_tensor_lists l = apex(apex_name(name, sizeof name, d), 8, ptx_size[d - 1]);
		cr_expect(l.known, "depth %u: %u bytes", d, ptx_size[d - 1]);
		cr_expect_eq(l.param, 2);
		cr_expect_eq(l.numel_bytes, 4);
		cr_expect_eq(l.chunk_bytes, 8);
		cr_expect_eq(l.blocks, 320);
		cr_expect_not(apex(name, 8, ptx_size[d - 1] + 8).known, "depth %u, another size", d);
	}
	struct ember_tensor_lists adam = apex(apex_adam, 4, 2904);
	cr_expect(adam.known, "apex before its chunk size took 8 bytes");
	cr_expect_eq(adam.slots, 36);
	cr_expect_eq(adam.chunk_bytes, 4);
	cr_expect_not(apex(apex_adam, 2, 2904).known, "a first argument that is no chunk size");
	uint32_t no_flag[3] = { 8, 4, 2904 };
	struct ember_tensor_lists l;
	ember_tensor_lists_layout(apex_adam, 3, no_flag, &l);
	cr_expect_not(l.known, "a second argument that is no address");
	ember_tensor_lists_layout(apex_adam, 2, no_flag, &l);
	cr_expect_not(l.known, "no third argument");
}

/*
 * Transformer Engine's copy names a second template argument, whether the
 * structure also has three lists of each slot's FP8 scale, maximum and
 * inverse scale: without them it is apex's (2,904 bytes at depth 4, as
 * nvcc lays it out), with them 3,768 bytes, the three lists last.
 */
static const char te[] = "_Z25multi_tensor_apply_kernelI18TensorListMetadataILi4ELb0EE2FnJfEEvlPViT_T0_DpT1_";
static const char te_fp8[] = "_Z25multi_tensor_apply_kernelI18TensorListMetadataILi4ELb1EE2FnJfEEvlPViT_T0_DpT1_";

Test(tensor_lists, transformer_engine_s_form_with_and_without_fp8_lists)
{
	struct ember_tensor_lists l = apex(te, 8, 2904);
	cr_expect(l.known);
	cr_expect_eq(l.slots, 36);
	cr_expect_eq(l.step_lists, 0);
	cr_expect_not(apex(te, 8, 3768).known, "no FP8 lists named: not the FP8 form's size");
	struct ember_tensor_lists f = apex(te_fp8, 8, 3768);
	cr_expect(f.known, "the FP8 form");
	cr_expect_eq(f.step_lists, 3);
	cr_expect_eq(f.steps, 36);
	cr_expect_eq(f.steps_at, 2904, "the three lists after apex's structure");
	cr_expect_not(apex(te_fp8, 8, 2904).known, "FP8 lists named: apex's size is another structure");
}

Test(tensor_lists, the_fp8_lists_give_each_slot_s_scales_one_element)
{
	struct ember_tensor_lists l = apex(te_fp8, 8, 3768);
	cr_assert(l.known);
	static unsigned char bytes[3768];
	for (uint64_t d = 0; d < 4; d++) {
		uint64_t addr = 0x10000000 * (d + 1);
		memcpy(bytes + 8 * d * 36, &addr, 8);
	}
	for (uint64_t k = 0; k < 3; k++) {
		uint64_t scale = 0x50000000 + 0x1000 * k;
		memcpy(bytes + l.steps_at + 8 * k * 36, &scale, 8);
	}
	int32_t size = 1000;
	memcpy(bytes + l.numel_at, &size, 4); /* block 0: slot 0, chunk 0, as the zeroed bytes say */
	struct ember_listed out[8];
	cr_assert_eq(ember_tensor_lists_read(&l, bytes, 1, 65536, out, 8), 7, "four lists' tensor and three scales");
	cr_expect_eq(out[3].addr, 0x40000000);
	cr_expect_eq(out[3].to, 1000);
	for (int k = 0; k < 3; k++) {
		cr_expect_eq(out[4 + k].addr, 0x50000000 + 0x1000 * (uint64_t)k);
		cr_expect_eq(out[4 + k].to, 1, "one element");
	}
}

Test(tensor_lists, the_chunk_is_the_launch_s_first_argument_in_apex_s_form)
{
	struct ember_tensor_lists l64 = apex(apex_adam, 8, 2904), l32 = apex(apex_adam, 4, 2904);
	int64_t c64 = 2048;
	int32_t c32 = 4096;
	void *params[1] = { &c64 };
	cr_expect_eq(ember_tensor_lists_chunk(&l64, params), 2048);
	params[0] = &c32;
	cr_expect_eq(ember_tensor_lists_chunk(&l32, params), 4096);
	c32 = -1;
	cr_expect_eq(ember_tensor_lists_chunk(&l32, params), 0, "a negative chunk");
	c64 = (int64_t)1 << 31;
	params[0] = &c64;
	cr_expect_eq(ember_tensor_lists_chunk(&l64, params), 0, "more than 2^30 elements a block");
	params[0] = NULL;
	cr_expect_eq(ember_tensor_lists_chunk(&l64, params), 0, "no argument");
	struct ember_tensor_lists pytorch = layout(unary, 3368);
	cr_expect_eq(ember_tensor_lists_chunk(&pytorch, params), EMBER_TENSOR_CHUNK, "PyTorch's, fixed");
}

Test(tensor_lists, apex_s_blocks_name_their_slots_with_int_counts)
{
	char name[128];
	struct ember_tensor_lists l = apex(apex_name(name, sizeof name, 2), 8, 2888);
	cr_assert(l.known);
	static unsigned char bytes[2888];
	uint64_t a = 0x10000000, b = 0x20000000, stale = 0x30000000;
	memcpy(bytes + 8 * 0, &a, 8);          /* addresses[0][0] */
	memcpy(bytes + 8 * 1, &stale, 8);      /* addresses[0][1], an earlier launch's */
	memcpy(bytes + 8 * 64, &b, 8);         /* addresses[1][0] */
	int32_t sizes[2] = { 5000, 1000 };
	memcpy(bytes + l.numel_at, sizes, sizeof sizes);
	for (int32_t blk = 0; blk < 2; blk++) {
		uint8_t slot = 0;
		int32_t chunk = blk + 1; /* the chunks of 2,048 elements from 2,048 */
		memcpy(bytes + l.block_slot_at + blk, &slot, 1);
		memcpy(bytes + l.block_chunk_at + 4 * blk, &chunk, 4);
	}
	struct ember_listed out[4];
	cr_assert_eq(ember_tensor_lists_read(&l, bytes, 2, 2048, out, 4), 2, "slot 0 of each list, the stale slot left");
	cr_expect_eq(out[0].addr, a);
	cr_expect_eq(out[0].numel, 5000);
	cr_expect_eq(out[0].from, 2048);
	cr_expect_eq(out[0].to, 5000, "the third chunk cut at the tensor's end");
	cr_expect_eq(out[1].addr, b);
	cr_expect_eq(ember_tensor_lists_read(&l, bytes, 2, 1024, out, 4), 2, "chunks of 1,024: within 5,000");
	cr_expect_eq(out[0].to, 3072);
	cr_expect_eq(ember_tensor_lists_read(&l, bytes, 2, 0, out, 4), -1, "no chunk size");
	int32_t bad = -5;
	memcpy(bytes + l.numel_at, &bad, 4);
	cr_expect_eq(ember_tensor_lists_read(&l, bytes, 2, 2048, out, 4), -1, "a negative count");
}
