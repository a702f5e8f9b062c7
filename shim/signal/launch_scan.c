/* Finding the allocations a launch references. */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "state.h"
#include "launch_scan.h"
#include "shim.h"

uint64_t ember_scan_stream_key(CUstream stream, bool per_thread)
{
	/* the special handles name the default streams, as NULL does through a plain or a _ptsz entry point */
	if (stream == CU_STREAM_LEGACY)
		stream = NULL, per_thread = false;
	else if (stream == CU_STREAM_PER_THREAD)
		stream = NULL, per_thread = true;
	/*
	 * The legacy default stream is one stream; a per-thread default stream
	 * is one per thread. pthread_self() may name a later thread too, which
	 * only merges two threads' launch order here; a never-reused number
	 * (kept.c's) would cost every such launch a __thread read.
	 */
	return stream || !per_thread ? (uint64_t)(uintptr_t)stream : (uint64_t)pthread_self() | 1;
}

static uint64_t overflows, lists_read, cats_read;

uint64_t ember_scan_overflows(void)
{
	return __atomic_load_n(&overflows, __ATOMIC_RELAXED);
}

uint64_t ember_scan_tensor_lists(void)
{
	return __atomic_load_n(&lists_read, __ATOMIC_RELAXED);
}

uint64_t ember_scan_cat_inputs(void)
{
	return __atomic_load_n(&cats_read, __ATOMIC_RELAXED);
}

/*
 * A scan past its allocations is counted, and said once with the kernel's
 * name: PyTorch's foreach and fused optimizers pass hundreds of tensors to
 * one launch, and those past the first allocations go uncredited.
 */
static void count_overflow(const struct ember_scan *s)
{
	static bool said;
	if (!s->overflowed)
		return;
	__atomic_add_fetch(&overflows, 1, __ATOMIC_RELAXED);
	if (!ember_first_time(&said))
		return;
	const char *name = ember_kernel_name(s->f);
	ember_info("a launch of %s points into more than %d allocations: the launch scan credits the first %d",
		   name ? name : "a kernel", EMBER_SCAN_MAX_REFS, EMBER_SCAN_MAX_REFS);
}

/* Record word, from argument param, if it points into a placed allocation. Returns whether it did. */
static bool note(struct ember_scan *s, uint64_t word, unsigned param, uint64_t lo, uint64_t hi)
{
	if (word < lo || word >= hi)
		return false;
	struct ember_alloc *a = ember_table_find(EMBER_TABLE, word);
	if (!a || a->kind == EMBER_ALLOC_PLAIN)
		return false;
	unsigned i = 0;
	while (i < s->n && s->allocs[i] != a)
		i++;
	if (i == s->n) {
		if (s->n == EMBER_SCAN_MAX_REFS) {
			s->overflowed = true;
			return true;
		}
		a->refs++;
		s->allocs[s->n++] = a;
	}
	if (s->nptrs < EMBER_SCAN_MAX_PTRS) {
		s->ptrs[s->nptrs].alloc = a;
		s->ptrs[s->nptrs].addr = word;
		s->ptrs[s->nptrs].bytes = 0;
		s->ptrs[s->nptrs].param = param;
		s->nptrs++;
	}
	return true;
}

/*
 * Record bytes at addr, from argument param, that a tensor list says the
 * launch covers: joined to the pointer before it when that is the same
 * argument's in the same allocation and this begins by the end of the
 * 2 MiB region after its end (a list's small tensors lie side by side in
 * a caching allocator's segment, and a region is credited whole anyway).
 */
static void note_range(struct ember_scan *s, uint64_t addr, uint64_t bytes, unsigned param, uint64_t lo, uint64_t hi)
{
	if (s->nptrs) {
		struct ember_alloc *a = s->ptrs[s->nptrs - 1].alloc;
		uint64_t at = s->ptrs[s->nptrs - 1].addr, end = at + s->ptrs[s->nptrs - 1].bytes;
		if (s->ptrs[s->nptrs - 1].param == param && s->ptrs[s->nptrs - 1].bytes && addr >= at &&
		    addr < a->base + a->size && addr <= end + EMBER_REGION_BYTES) {
			if (addr + bytes > end)
				s->ptrs[s->nptrs - 1].bytes = addr + bytes - at;
			return;
		}
	}
	unsigned before = s->nptrs;
	if (note(s, addr, param, lo, hi) && s->nptrs > before)
		s->ptrs[before].bytes = bytes; /* a chunk at least: never 0 */
}

static int by_address(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/*
 * The bytes of each element of a listed tensor, which the structure does
 * not say: the largest of 8, 4, 2 and 1 at which numel elements fit in
 * room, the bytes from its address to its allocation's end or to the next
 * listed address above it, whichever is nearer (listed tensors do not
 * overlap).
 */
static unsigned element_bytes(uint64_t numel, uint64_t room)
{
	for (unsigned e = 8; e > 1; e /= 2)
		if (numel <= room / e)
			return e;
	return 1;
}

enum { MOST_LISTED = 256 };

/*
 * A tensor-list argument (tensor_lists.h), table locked: each listed
 * tensor's chunks that the launch's blocks work on. Returns false where
 * the bytes do not read as the layout says, and nothing was recorded.
 */
static bool read_lists(struct ember_scan *s, void *const *kernel_params, unsigned grid_x, uint64_t lo, uint64_t hi)
{
	const struct ember_tensor_lists *l = &s->declared.lists;
	struct ember_listed listed[MOST_LISTED];
	int n = ember_tensor_lists_read(l, kernel_params[l->param], grid_x, ember_tensor_lists_chunk(l, kernel_params),
					listed, MOST_LISTED);
	if (n < 0)
		return false;
	__atomic_add_fetch(&lists_read, 1, __ATOMIC_RELAXED);
	uint64_t sorted[MOST_LISTED];
	for (int i = 0; i < n; i++)
		sorted[i] = listed[i].addr;
	qsort(sorted, (size_t)n, sizeof *sorted, by_address);
	for (int i = 0; i < n; i++) {
		const struct ember_listed *t = &listed[i];
		const struct ember_alloc *a = t->addr >= lo && t->addr < hi ? ember_table_find(EMBER_TABLE, t->addr) : NULL;
		if (!a || a->kind == EMBER_ALLOC_PLAIN)
			continue;
		uint64_t end = a->base + a->size;
		size_t k = 0; /* the first listed address above t's */
		for (size_t step = (size_t)n; step; step /= 2)
			while (k + step <= (size_t)n && sorted[k + step - 1] <= t->addr)
				k += step;
		if (k < (size_t)n && sorted[k] < end)
			end = sorted[k];
		unsigned e = element_bytes(t->numel, end - t->addr);
		note_range(s, t->addr + t->from * e, (t->to - t->from) * e, l->param, lo, hi);
	}
	return true;
}

/*
 * torch.cat's arguments (cat_inputs.h), table locked: the output as far as
 * its sizes and strides reach, and each input the launch's rows copy.
 * Returns false where they do not read as the layout says, and nothing
 * was recorded.
 */
static bool read_cat(struct ember_scan *s, void *const *kernel_params, unsigned grid_y, uint64_t lo, uint64_t hi)
{
	const struct ember_cat_inputs *c = &s->declared.cat;
	struct ember_span inputs[MOST_LISTED];
	if (!kernel_params[EMBER_CAT_OUTPUT] || !kernel_params[EMBER_CAT_INPUTS] || !kernel_params[EMBER_CAT_SHAPE])
		return false;
	int n = ember_cat_read_inputs(c, kernel_params[EMBER_CAT_INPUTS], grid_y, inputs, MOST_LISTED);
	uint64_t out, out_bytes = ember_cat_output_bytes(c, kernel_params[EMBER_CAT_SHAPE]);
	if (n < 0 || !out_bytes)
		return false;
	__atomic_add_fetch(&cats_read, 1, __ATOMIC_RELAXED);
	memcpy(&out, kernel_params[EMBER_CAT_OUTPUT], sizeof out);
	note_range(s, out, out_bytes, EMBER_CAT_OUTPUT, lo, hi);
	for (int i = 0; i < n; i++)
		note_range(s, inputs[i].addr, inputs[i].bytes, EMBER_CAT_INPUTS, lo, hi);
	return true;
}

static void scan_bytes(struct ember_scan *s, const unsigned char *p, size_t bytes, unsigned param, uint64_t lo,
		       uint64_t hi)
{
	for (size_t off = 0; off + 8 <= bytes; off += 8) {
		uint64_t word;
		memcpy(&word, p + off, sizeof word);
		note(s, word, param, lo, hi);
	}
}

/*
 * Whether a 4-byte argument can be an element count. A negative int is not,
 * and neither is the bit pattern of a float between 5e-10 and 2e9 (a scale
 * of 1.0f reads as 1065353216): llama.cpp passes such scales beside its
 * weights, and taken as counts they credited 4 GB to every launch. What
 * this costs: an int count of 805M to 1.3G elements is not trusted either.
 */
static bool plausible_count32(uint32_t v)
{
	return v < 0x80000000u && (v < 0x30000000u || v >= 0x4f000000u);
}

/* A 4- or 8-byte argument: a pointer, or else a count that may tell how far a pointer reaches. */
static void scan_scalar(struct ember_scan *s, const unsigned char *p, size_t bytes, unsigned param, uint64_t lo,
			uint64_t hi)
{
	uint64_t v = 0;
	memcpy(&v, p, bytes); /* little-endian: a 4-byte value fills the low half */
	if (bytes == 8 && note(s, v, param, lo, hi))
		return;
	if (bytes == 4 && !plausible_count32((uint32_t)v))
		return;
	if (v > 0 && v < (1ull << 44) && s->nscalars < EMBER_SCAN_MAX_SCALARS)
		s->scalars[s->nscalars++] = v; /* doubles are past 2^44 */
}

/* The packed buffer of CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE, or NULL. */
static const unsigned char *packed_buffer(void **extra, size_t *bytes)
{
	const unsigned char *buf = NULL;
	*bytes = 0;
	for (void **e = extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
		if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = e[1];
		else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1])
			*bytes = *(size_t *)e[1];
	}
	return buf;
}

/*
 * Most arguments are pointers and counts: copied and compared as words,
 * not through memcpy and memcmp calls (a repeat compares every argument
 * of every launch).
 */
static void copy_arg(unsigned char *to, const void *p, size_t bytes)
{
	if (bytes == 8)
		memcpy(to, p, 8);
	else if (bytes == 4)
		memcpy(to, p, 4);
	else
		memcpy(to, p, bytes);
}

static bool same_arg(const void *p, const unsigned char *kept, size_t bytes)
{
	if (bytes == 8) {
		uint64_t x, y;
		memcpy(&x, p, 8);
		memcpy(&y, kept, 8);
		return x == y;
	}
	if (bytes == 4) {
		uint32_t x, y;
		memcpy(&x, p, 4);
		memcpy(&y, kept, 4);
		return x == y;
	}
	return !memcmp(p, kept, bytes);
}

/* Keep each argument's bytes, if they all fit; a launch with a missing one is never kept. */
static void keep_params(struct ember_scan_args *args, void **kernel_params, const uint32_t *size, unsigned n)
{
	args->packed = false;
	args->kept = false;
	args->len = 0;
	if (n > EMBER_SCAN_KEPT_PARAMS)
		return;
	for (unsigned i = 0; i < n; i++) {
		if (!kernel_params[i] || size[i] > EMBER_SCAN_KEPT_BYTES - args->len)
			return;
		copy_arg(args->bytes + args->len, kernel_params[i], size[i]);
		args->size[i] = (uint16_t)size[i];
		args->len += size[i];
	}
	args->n = n;
	args->kept = true;
}

static void keep_packed(struct ember_scan_args *args, const unsigned char *buf, size_t bytes)
{
	args->packed = true;
	args->kept = bytes <= EMBER_SCAN_KEPT_BYTES;
	args->n = 0;
	args->len = args->kept ? (uint32_t)bytes : 0;
	if (args->kept)
		memcpy(args->bytes, buf, bytes);
}

/*
 * Drop references an earlier scan held, table locked, in the same hold as
 * the new scan's: all but a last one (a freed allocation's), which is put
 * the usual way once unlocked, as it frees the record. Returns how many
 * of those are left at the front of v.
 */
static unsigned drop_held(struct ember_alloc **v, unsigned n)
{
	unsigned last = 0;
	for (unsigned i = 0; i < n; i++)
		if (v[i]->refs > 1)
			v[i]->refs--;
		else
			v[last++] = v[i];
	return last;
}

/* Read the arguments for pointers into [lo, hi), table locked. */
static void read_params(struct ember_scan *out, struct ember_grid grid, void **kernel_params, const uint32_t *size,
			unsigned n, uint64_t lo, uint64_t hi)
{
	const struct ember_tensor_lists *lists = &out->declared.lists;
	/* the structures' sizes were matched when the kernel was described (kernels.c) */
	bool cat = out->declared.cat.known && n > EMBER_CAT_SHAPE && read_cat(out, kernel_params, grid.y, lo, hi);
	for (unsigned i = 0; i < n; i++) {
		if (!kernel_params[i] || (cat && i <= EMBER_CAT_SHAPE))
			continue;
		if (lists->known && i == lists->param && read_lists(out, kernel_params, grid.x, lo, hi))
			continue;
		if (size[i] == 4 || size[i] == 8)
			scan_scalar(out, kernel_params[i], size[i], i, lo, hi);
		else if (size[i] > 8)
			scan_bytes(out, kernel_params[i], size[i], i, lo, hi);
	}
}

static void reset(struct ember_scan *out, CUfunction f)
{
	out->n = out->nptrs = out->nscalars = 0;
	out->f = f;
	out->kernel_number = UINT32_MAX;
	out->newly_learned = out->newly_ranged = out->inside = out->newly_inside = 0;
	memset(out->elem_size, 0, sizeof out->elem_size);
	memset(&out->declared, 0, sizeof out->declared);
	out->stream_key = 0;
	out->repeat = false;
	out->overflowed = false;
}

void ember_scan_launch_keeping(CUfunction f, struct ember_grid grid, void **kernel_params, void **extra,
			       struct ember_scan *out, struct ember_scan_args *args)
{
	struct ember_alloc *held[EMBER_SCAN_MAX_REFS];
	unsigned nheld = out->n;
	memcpy(held, out->allocs, nheld * sizeof *held);
	reset(out, f);
	if (args)
		args->kept = false; /* until the arguments are read below */
	uint64_t lo, hi;
	ember_table_bounds(EMBER_TABLE, &lo, &hi);
	enum { MAX = 256 };
	uint32_t offset[MAX], size[MAX];
	unsigned n = 0;
	size_t bytes = 0;
	const unsigned char *buf = NULL;
	bool placed = ember_table_any_placed(EMBER_TABLE);
	if (placed && kernel_params) {
		n = ember_kernel_layout(f, offset, size, MAX, out->elem_size, &out->declared, &out->inside,
					       &out->kernel_number);
		if (args && !out->declared.lists.known && !out->declared.cat.known) /* their scans depend on the grid too */
			keep_params(args, kernel_params, size, n);
	} else if (placed && (buf = packed_buffer(extra, &bytes)) && args)
		keep_packed(args, buf, bytes);
	if (placed && (kernel_params || buf)) {
		ember_table_lock(EMBER_TABLE);
		out->table_gen = EMBER_TABLE->next_id;
		if (kernel_params)
			read_params(out, grid, kernel_params, size, n, lo, hi);
		else
			scan_bytes(out, buf, bytes, EMBER_SCAN_LEARNED, lo, hi); /* one packed buffer: no per-argument learning */
		nheld = drop_held(held, nheld);
		ember_table_unlock(EMBER_TABLE);
	}
	if (nheld)
		ember_allocs_put(EMBER_TABLE, held, nheld);
	count_overflow(out);
}

void ember_scan_launch(CUfunction f, struct ember_grid grid, void **kernel_params, void **extra,
		       struct ember_scan *out)
{
	reset(out, f);
	if (!ember_table_any_placed(EMBER_TABLE))
		return;
	uint64_t lo, hi;
	ember_table_bounds(EMBER_TABLE, &lo, &hi);
	size_t bytes;
	const unsigned char *buf;
	if (kernel_params) {
		enum { MAX = 256 };
		uint32_t offset[MAX], size[MAX];
		unsigned n = ember_kernel_layout(f, offset, size, MAX, out->elem_size, &out->declared, &out->inside,
					       &out->kernel_number);
		ember_table_lock(EMBER_TABLE);
		read_params(out, grid, kernel_params, size, n, lo, hi);
		ember_table_unlock(EMBER_TABLE);
	} else if ((buf = packed_buffer(extra, &bytes))) {
		ember_table_lock(EMBER_TABLE);
		scan_bytes(out, buf, bytes, EMBER_SCAN_LEARNED, lo, hi); /* one packed buffer: no per-argument learning */
		ember_table_unlock(EMBER_TABLE);
	}
	count_overflow(out);
}

bool ember_scan_args_same(const struct ember_scan_args *args, void **kernel_params, void **extra)
{
	if (!args->kept || args->packed != !kernel_params)
		return false;
	if (args->packed) {
		size_t bytes;
		const unsigned char *buf = packed_buffer(extra, &bytes);
		return buf && bytes == args->len && !memcmp(buf, args->bytes, bytes);
	}
	const unsigned char *at = args->bytes;
	for (unsigned i = 0; i < args->n; at += args->size[i++])
		if (!kernel_params[i] || !same_arg(kernel_params[i], at, args->size[i]))
			return false;
	return true;
}

void ember_scan_release(struct ember_scan *s)
{
	if (s->n) /* most launches of a program with nothing managed hold nothing: no lock for them */
		ember_allocs_put(EMBER_TABLE, s->allocs, s->n);
	s->n = s->nptrs = 0;
}

void ember_scan_unbind(struct ember_scan *s)
{
	ember_allocs_put(EMBER_TABLE, s->allocs, s->n);
	s->n = 0;
	for (unsigned i = 0; i < s->nptrs; i++)
		s->ptrs[i].alloc = NULL; /* the addresses stay */
}

void ember_scan_rebind(struct ember_scan *s)
{
	s->n = 0;
	ember_table_lock(EMBER_TABLE);
	unsigned kept = 0;
	for (unsigned i = 0; i < s->nptrs; i++) {
		struct ember_alloc *a = ember_table_find(EMBER_TABLE, s->ptrs[i].addr);
		if (!a || a->kind == EMBER_ALLOC_PLAIN)
			continue; /* freed since: nothing to place */
		unsigned k = 0;
		while (k < s->n && s->allocs[k] != a)
			k++;
		if (k == s->n) {
			if (s->n == EMBER_SCAN_MAX_REFS)
				continue;
			a->refs++;
			s->allocs[s->n++] = a;
		}
		s->ptrs[kept] = s->ptrs[i];
		s->ptrs[kept++].alloc = a;
	}
	s->nptrs = kept;
	ember_table_unlock(EMBER_TABLE);
}
