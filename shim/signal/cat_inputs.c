/* PyTorch's torch.cat structure, read row by row (cat_inputs.h). */
#include <string.h>

#include "cat_inputs.h"
#include "struct_layout.h"

/* The kernels' names as a mangled name spells them, each opening its template arguments. */
static const char *const kernel_names[] = {
	"19CatArrayBatchedCopyI",
	"26CatArrayBatchedCopy_contigI",
	"35CatArrayBatchedCopy_alignedK_contigI",
	"36CatArrayBatchedCopy_aligned16_contigI", /* an earlier PyTorch's name for the one before */
	"30CatArrayBatchedCopy_vectorizedI",
};
enum { VECTORIZED = 4, MOST_INTS = 8 };

/* A decimal number at *p, up to limit; false where there is none or it is past limit. */
static bool number(const char **p, uint32_t limit, uint32_t *v)
{
	if (**p < '0' || **p > '9')
		return false;
	uint64_t n = 0;
	while (**p >= '0' && **p <= '9') {
		n = n * 10 + (uint64_t)(**p - '0');
		if (n > limit)
			return false;
		(*p)++;
	}
	*v = (uint32_t)n;
	return true;
}

/*
 * The first template argument, "NS1_10OpaqueTypeILj2EEE" (or its name in
 * full): the bytes of an element, or 0 where it is some other type.
 */
static unsigned opaque_type(const char **p)
{
	enum { NEAR = 64 }; /* the namespace's name before it, when spelt out */
	const char *at = strstr(*p, "10OpaqueTypeILj");
	uint32_t bytes;
	if (!at || at - *p > NEAR || memchr(*p, 'I', (size_t)(at - *p)))
		return 0;
	bool nested = **p == 'N';
	const char *q = at + strlen("10OpaqueTypeILj");
	if (!number(&q, 16, &bytes) || strncmp(q, "EE", 2))
		return 0;
	q += 2;
	if (nested && *q++ != 'E')
		return 0;
	*p = q;
	return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16 ? bytes : 0;
}

void ember_cat_layout(const char *mangled, unsigned n, const uint32_t *size, struct ember_cat_inputs *out)
{
	memset(out, 0, sizeof *out);
	if (!mangled || n <= EMBER_CAT_SHAPE || size[EMBER_CAT_OUTPUT] != 8)
		return;
	const char *p = NULL;
	unsigned kind = 0;
	for (unsigned k = 0; k < sizeof kernel_names / sizeof kernel_names[0] && !p; k++)
		if ((p = strstr(mangled, kernel_names[k])))
			p += strlen(kernel_names[k]), kind = k;
	if (!p)
		return;
	unsigned elem = opaque_type(&p), index = *p == 'j' ? 4 : *p == 'm' ? 8 : 0;
	if (!elem || !index)
		return;
	p++;
	/* Dims, the slots, the strided records; _vectorized's alignment and elements per vector after them */
	uint32_t ints[MOST_INTS];
	unsigned nints = 0;
	while (nints < MOST_INTS && !strncmp(p, "Li", 2)) {
		p += 2;
		if (!number(&p, 1u << 16, &ints[nints++]) || *p++ != 'E')
			return;
	}
	if (*p != 'E' || nints < (kind == VECTORIZED ? 5u : 3u))
		return;
	uint32_t dims = ints[0], slots = ints[1], strided = ints[2], record = 2 * index;
	uint32_t max_dims = size[EMBER_CAT_SHAPE] / record, unit = kind == VECTORIZED ? ints[3] : elem;
	if (size[EMBER_CAT_SHAPE] % record || max_dims == 0 || max_dims > 8 || dims == 0 || dims > max_dims ||
	    slots == 0 || slots > 1024 || (strided != 1 && strided != slots) || unit == 0 || unit > 64)
		return;
	uint32_t numel_at = 8 * slots + 2 * index * slots;
	uint32_t strides_at = ember_align_up(numel_at + index * slots + slots, index);
	uint32_t bytes = ember_align_up(strides_at + strided * record * max_dims, 8);
	if (bytes != size[EMBER_CAT_INPUTS])
		return; /* another PyTorch's structure, or its address (8 bytes) */
	*out = (struct ember_cat_inputs){ .known = true, .elem_bytes = (uint8_t)elem, .index_bytes = (uint8_t)index,
					  .dims = (uint8_t)dims, .max_dims = (uint8_t)max_dims, .out_unit = (uint8_t)unit,
					  .slots = (uint16_t)slots, .strided = (uint16_t)strided, .numel_at = numel_at,
					  .strides_at = strides_at, .size = bytes };
}

static uint64_t index_at(const struct ember_cat_inputs *c, const unsigned char *p)
{
	uint64_t v = 0;
	memcpy(&v, p, c->index_bytes); /* little-endian */
	return v;
}

/*
 * One past the last element that sizes and strides (a record of max_dims
 * of each) reach from the first, over the kernel's dims: 0 for none (a
 * size of 0), or where the reach does not fit in 64 bits.
 */
static uint64_t reach(const struct ember_cat_inputs *c, const unsigned char *record)
{
	uint64_t last = 0;
	for (unsigned d = 0; d < c->dims; d++) {
		uint64_t n = index_at(c, record + (size_t)d * c->index_bytes);
		uint64_t stride = index_at(c, record + (size_t)(c->max_dims + d) * c->index_bytes), step;
		if (n == 0 || __builtin_mul_overflow(n - 1, stride, &step) || __builtin_add_overflow(last, step, &last))
			return 0;
	}
	return last == UINT64_MAX ? 0 : last + 1;
}

int ember_cat_read_inputs(const struct ember_cat_inputs *c, const unsigned char *meta, unsigned grid_y,
			  struct ember_span *out, unsigned max)
{
	if (!c->known || grid_y == 0 || grid_y > c->slots)
		return -1;
	unsigned count = 0;
	for (unsigned y = 0; y < grid_y; y++) {
		uint64_t addr, numel = index_at(c, meta + c->numel_at + (size_t)y * c->index_bytes);
		memcpy(&addr, meta + 8u * y, sizeof addr);
		if (numel == 0)
			continue; /* an empty input: its row copies nothing */
		if (!addr || count == max)
			return -1;
		if (c->strided > 1) { /* a strided input reaches as far as its sizes and strides say */
			uint64_t r = reach(c, meta + c->strides_at + (size_t)y * 2 * c->max_dims * c->index_bytes);
			numel = r > numel ? r : numel;
		}
		if (numel > UINT64_MAX / c->elem_bytes)
			return -1;
		out[count++] = (struct ember_span){ addr, numel * c->elem_bytes };
	}
	return (int)count;
}

uint64_t ember_cat_output_bytes(const struct ember_cat_inputs *c, const unsigned char *shape)
{
	if (!c->known)
		return 0; /* no unit to divide by */
	uint64_t r = reach(c, shape);
	return r <= UINT64_MAX / c->out_unit ? r * c->out_unit : 0;
}
