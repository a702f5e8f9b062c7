/* Finding the allocations a launch references. */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "state.h"
#include "launch_scan.h"
#include "shim.h"

uint64_t ember_scan_stream_key(CUstream stream, bool per_thread)
{
	/* the legacy default stream is one stream; a per-thread default stream is one per thread */
	return stream || !per_thread ? (uint64_t)(uintptr_t)stream : (uint64_t)pthread_self() | 1;
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
		if (s->n == EMBER_SCAN_MAX_REFS)
			return true;
		a->refs++;
		s->allocs[s->n++] = a;
	}
	if (s->nptrs < EMBER_SCAN_MAX_PTRS) {
		s->ptrs[s->nptrs].alloc = a;
		s->ptrs[s->nptrs].addr = word;
		s->ptrs[s->nptrs].param = param;
		s->nptrs++;
	}
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

void ember_scan_launch(CUfunction f, void **kernel_params, void **extra, struct ember_scan *out)
{
	out->n = out->nptrs = out->nscalars = 0;
	out->f = f;
	out->kernel_number = UINT32_MAX;
	out->newly_learned = out->newly_ranged = 0;
	memset(out->elem_size, 0, sizeof out->elem_size);
	out->stream_key = 0;
	if (!ember_table_any_placed(EMBER_TABLE))
		return;
	uint64_t lo, hi;
	ember_table_bounds(EMBER_TABLE, &lo, &hi);

	if (kernel_params) {
		enum { MAX = 256 };
		uint32_t offset[MAX], size[MAX];
		unsigned n = ember_kernel_layout(f, offset, size, MAX, out->elem_size, &out->kernel_number);
		ember_table_lock(EMBER_TABLE);
		for (unsigned i = 0; i < n; i++) {
			if (!kernel_params[i])
				continue;
			if (size[i] == 4 || size[i] == 8)
				scan_scalar(out, kernel_params[i], size[i], i, lo, hi);
			else if (size[i] > 8)
				scan_bytes(out, kernel_params[i], size[i], i, lo, hi);
		}
		ember_table_unlock(EMBER_TABLE);
		return;
	}
	/* CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE: one packed buffer */
	const unsigned char *buf = NULL;
	size_t bytes = 0;
	for (void **e = extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
		if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = e[1];
		else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1])
			bytes = *(size_t *)e[1];
	}
	if (buf) {
		ember_table_lock(EMBER_TABLE);
		scan_bytes(out, buf, bytes, EMBER_SCAN_LEARNED, lo, hi); /* one packed buffer: no per-argument learning */
		ember_table_unlock(EMBER_TABLE);
	}
}

void ember_scan_release(struct ember_scan *s)
{
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
