/* PyTorch's tensor-list argument, read block by block (tensor_lists.h). */
#include <string.h>

#include "tensor_lists.h"
#include "struct_layout.h"

/*
 * PyTorch's sizes of the structure (ATen's MultiTensorApply.cuh), by
 * depth: [0] the 4 KB argument form, [1] the 32 KB one, whose slot
 * numbers take two bytes.
 */
static const uint16_t slots_of[2][5] = { { 110, 64, 48, 36, 30 }, { 770, 448, 336, 252, 210 } };
static const uint16_t scalar_slots_of[2][5] = { { 96, 64, 48, 36, 30 }, { 672, 448, 336, 252, 210 } };
static const uint16_t complex_double_slots_of[2][2] = { { 72, 60 }, { 504, 420 } };
static const uint16_t blocks_of[2] = { 320, 2240 };

/* apex's, by depth (Transformer Engine's copy adds a sixth), and its blocks */
static const uint16_t apex_slots_of[6] = { 110, 64, 48, 36, 30, 24 };
enum { APEX_BLOCKS = 320, APEX_PARAM = 2 };

enum kind { PLAIN, FUSED, SCALARS };

/* The structures' names as a mangled name spells them, each up to its template arguments. */
static const char *const kind_names[] = {
	[PLAIN] = "18TensorListMetadataI",
	[FUSED] = "32FusedOptimizerTensorListMetadataI",
	[SCALARS] = "28TensorListScalarListMetadataI",
};

/*
 * A scalar list's element type, mangled (opmath_t: float for the half
 * types, the type itself for the others): its size, which is its
 * alignment too, or 0 for one not known.
 */
static unsigned scalar_type(const char **p)
{
	static const struct {
		const char *mangled;
		unsigned bytes;
	} types[] = { { "f", 4 }, { "d", 8 }, { "a", 1 }, { "h", 1 }, { "b", 1 }, { "s", 2 }, { "t", 2 },
		      { "i", 4 }, { "j", 4 }, { "l", 8 }, { "m", 8 }, { "N3c107complexIfEE", 8 },
		      { "N3c107complexIdEE", 16 } };
	for (unsigned i = 0; i < sizeof types / sizeof types[0]; i++) {
		size_t len = strlen(types[i].mangled);
		if (!strncmp(*p, types[i].mangled, len)) {
			*p += len;
			return types[i].bytes;
		}
	}
	return 0;
}

/*
 * "Li4E", the depth (1 to 6: PyTorch's go to 5), then "Lb1E" where the
 * structure names a flag (*flag: 0 or 1; -1 where it names none): PyTorch
 * 2.2 to 2.8's of the 32 KB form (without it the argument's size tells:
 * later PyTorch builds for CUDA 13 take the 32 KB form, earlier ones and
 * other builds the 4 KB one), Transformer Engine's of its FP8 lists.
 */
static bool depth_and_flag(const char *p, unsigned *depth, int *flag)
{
	if (strncmp(p, "Li", 2) || p[2] < '1' || p[2] > '6' || p[3] != 'E')
		return false;
	*depth = (unsigned)(p[2] - '0');
	p += 4;
	*flag = -1;
	if (!strncmp(p, "Lb", 2) && (p[2] == '0' || p[2] == '1') && p[3] == 'E') {
		*flag = p[2] - '0';
		p += 4;
	}
	return *p == 'E';
}

/*
 * The layout of one form: wide, and for a fused optimizer's structure the
 * step addresses it has (as many as its slots since PyTorch 2.9, as a
 * scalar list's before: the two differ at depth 1 only).
 */
static struct ember_tensor_lists layout_of(enum kind kind, unsigned depth, unsigned wide, unsigned scalar,
					   bool steps_as_slots)
{
	unsigned slots = kind == SCALARS ? scalar_slots_of[wide][depth - 1] : slots_of[wide][depth - 1];
	if (kind == SCALARS && scalar == 16 && depth <= 2)
		slots = complex_double_slots_of[wide][depth - 1];
	unsigned blocks = blocks_of[wide], index_bytes = wide ? 2 : 1;
	uint32_t at = 8u * depth * slots, numel_at = at;
	at += 8u * slots;
	uint32_t steps_at = at, steps = 0;
	if (kind == FUSED)
		steps = steps_as_slots ? slots : scalar_slots_of[wide][depth - 1];
	at += 8u * steps;
	if (kind == SCALARS)
		at = ember_align_up(at, scalar) + scalar * slots;
	uint32_t block_slot_at = at;
	at = ember_align_up(at + blocks * index_bytes, 4);
	uint32_t block_chunk_at = at;
	at += 4u * blocks;
	if (kind != SCALARS)
		at += 4; /* start_tensor_this_launch */
	at = ember_align_up(at, scalar > 8 ? scalar : 8);
	return (struct ember_tensor_lists){ .known = true, .param = 0, .depth = (uint8_t)depth,
					    .index_bytes = (uint8_t)index_bytes, .slots = (uint16_t)slots,
					    .steps = (uint16_t)steps, .step_lists = steps ? 1 : 0, .blocks = (uint16_t)blocks,
					    .numel_bytes = 8, .numel_at = numel_at, .steps_at = steps_at,
					    .block_slot_at = block_slot_at, .block_chunk_at = block_chunk_at, .size = at };
}

/*
 * apex's form: the addresses, a 4-byte element count per slot, a one-byte
 * slot and a 4-byte chunk per block, start_tensor_this_launch, and with
 * fp8 three lists of each slot's scale, maximum and inverse scale; the
 * chunk's elements in the first argument, of chunk_bytes.
 */
static struct ember_tensor_lists apex_layout(unsigned depth, unsigned chunk_bytes, bool fp8)
{
	unsigned slots = apex_slots_of[depth - 1], step_lists = fp8 ? 3 : 0;
	uint32_t numel_at = 8u * depth * slots, block_slot_at = numel_at + 4u * slots;
	uint32_t block_chunk_at = ember_align_up(block_slot_at + APEX_BLOCKS, 4);
	uint32_t steps_at = ember_align_up(block_chunk_at + 4u * APEX_BLOCKS + 4, 8);
	return (struct ember_tensor_lists){ .known = true, .param = APEX_PARAM, .depth = (uint8_t)depth,
					    .index_bytes = 1, .slots = (uint16_t)slots,
					    .steps = (uint16_t)(fp8 ? slots : 0), .step_lists = (uint8_t)step_lists,
					    .blocks = APEX_BLOCKS, .numel_bytes = 4, .chunk_bytes = (uint8_t)chunk_bytes,
					    .numel_at = numel_at, .steps_at = steps_at, .block_slot_at = block_slot_at,
					    .block_chunk_at = block_chunk_at, .size = steps_at + 8u * step_lists * slots };
}

void ember_tensor_lists_layout(const char *mangled, unsigned n, const uint32_t *size, struct ember_tensor_lists *out)
{
	memset(out, 0, sizeof *out);
	if (!mangled || n == 0 || !strstr(mangled, "25multi_tensor_apply_kernel"))
		return;
	/* the kernel's first template argument: the structure named first (length-prefixed, none matches inside another) */
	enum kind kind = PLAIN;
	const char *p = NULL;
	for (int k = PLAIN; k <= SCALARS; k++) {
		const char *at = strstr(mangled, kind_names[k]);
		if (at && (!p || at < p))
			p = at, kind = (enum kind)k;
	}
	if (!p)
		return;
	p += strlen(kind_names[kind]);
	unsigned scalar = kind == SCALARS ? scalar_type(&p) : 0, depth;
	int flag;
	if ((kind == SCALARS && !scalar) || !depth_and_flag(p, &depth, &flag))
		return;
	/* the form whose size is the argument's: another PyTorch's structure is scanned word by word */
	for (unsigned w = 0; w < 2 && depth <= 5; w++)
		for (unsigned steps_as_slots = 0; steps_as_slots < (kind == FUSED ? 2u : 1u); steps_as_slots++) {
			struct ember_tensor_lists l = layout_of(kind, depth, w, scalar, steps_as_slots);
			if ((flag < 0 || (unsigned)flag == w) && l.size == size[0]) {
				*out = l;
				return;
			}
		}
	/* apex's, after the chunk's elements and the no-op flag's address; Transformer Engine's flag: FP8 lists */
	if (kind == PLAIN && n > APEX_PARAM && (size[0] == 4 || size[0] == 8) && size[1] == 8) {
		struct ember_tensor_lists l = apex_layout(depth, size[0], flag == 1);
		if (l.size == size[APEX_PARAM])
			*out = l;
	}
}

uint64_t ember_tensor_lists_chunk(const struct ember_tensor_lists *l, void *const *kernel_params)
{
	if (!l->chunk_bytes)
		return EMBER_TENSOR_CHUNK;
	if (!kernel_params || !kernel_params[0])
		return 0;
	int64_t chunk;
	if (l->chunk_bytes == 8) {
		memcpy(&chunk, kernel_params[0], 8);
	} else {
		int32_t c32;
		memcpy(&c32, kernel_params[0], 4);
		chunk = c32;
	}
	return chunk > 0 && chunk <= (int64_t)1 << 30 ? (uint64_t)chunk : 0;
}

static uint64_t word_at(const unsigned char *arg, uint32_t at)
{
	uint64_t v;
	memcpy(&v, arg + at, sizeof v);
	return v;
}

enum { MOST_SLOTS = 770 };

/* A slot's element count, as many bytes as the form keeps (an apex count is a signed int). */
static int64_t slot_numel(const struct ember_tensor_lists *l, const unsigned char *arg, unsigned slot)
{
	if (l->numel_bytes == 4) {
		int32_t n;
		memcpy(&n, arg + l->numel_at + 4u * slot, sizeof n);
		return n;
	}
	return (int64_t)word_at(arg, l->numel_at + 8u * slot);
}

int ember_tensor_lists_read(const struct ember_tensor_lists *l, const unsigned char *arg, unsigned grid_x,
			    uint64_t chunk, struct ember_listed *out, unsigned max)
{
	if (!l->known || grid_x == 0 || grid_x > l->blocks || l->slots > MOST_SLOTS || chunk == 0)
		return -1;
	uint32_t first[MOST_SLOTS], last[MOST_SLOTS];
	uint16_t used[MOST_SLOTS]; /* the slots the blocks name, in order of first sight */
	bool seen[MOST_SLOTS];
	unsigned nused = 0;
	memset(seen, 0, l->slots);
	for (unsigned b = 0; b < grid_x; b++) {
		uint16_t slot = 0;
		memcpy(&slot, arg + l->block_slot_at + b * l->index_bytes, l->index_bytes); /* little-endian */
		int32_t block_chunk;
		memcpy(&block_chunk, arg + l->block_chunk_at + 4u * b, sizeof block_chunk);
		if (slot >= l->slots || block_chunk < 0)
			return -1;
		int64_t numel = slot_numel(l, arg, slot);
		if (numel <= 0 || (uint64_t)block_chunk >= ((uint64_t)numel + chunk - 1) / chunk)
			return -1;
		if (!seen[slot]) {
			seen[slot] = true;
			used[nused++] = slot;
			first[slot] = last[slot] = (uint32_t)block_chunk;
		} else if ((uint32_t)block_chunk < first[slot]) {
			first[slot] = (uint32_t)block_chunk;
		} else if ((uint32_t)block_chunk > last[slot]) {
			last[slot] = (uint32_t)block_chunk;
		}
	}
	unsigned count = 0;
	for (unsigned d = 0; d < l->depth; d++)
		for (unsigned i = 0; i < nused; i++) {
			unsigned slot = used[i];
			uint64_t addr = word_at(arg, 8u * (d * l->slots + slot));
			if (!addr || count == max)
				return -1;
			uint64_t numel = (uint64_t)slot_numel(l, arg, slot), to = (last[slot] + 1) * chunk;
			out[count++] = (struct ember_listed){ addr, numel, first[slot] * chunk, to < numel ? to : numel };
		}
	for (unsigned k = 0; k < l->step_lists; k++)
		for (unsigned i = 0; i < nused; i++) {
			unsigned slot = used[i];
			uint64_t addr = slot < l->steps ? word_at(arg, l->steps_at + 8u * (k * l->steps + slot)) : 0;
			if (!addr)
				continue; /* none for this slot: an optimizer whose steps are on the host */
			if (count == max)
				return -1;
			out[count++] = (struct ember_listed){ addr, 1, 0, 1 };
		}
	return (int)count;
}
