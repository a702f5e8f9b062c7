/* Finding the allocations a launch references. */
#include <stdlib.h>
#include <string.h>

#include "locks.h"
#include "state.h"
#include "launch_scan.h"
#include "shim.h"

/* A kernel's parameter layout, as cuFuncGetParamInfo reports it. */
struct layout {
	CUfunction f;
	unsigned n;         /* parameters; 0 also when the driver could not say */
	uint32_t *offset, *size;
	uint8_t elem_size[EMBER_SCAN_LEARNED]; /* learned per pointer argument */
	struct arg_history *history;           /* per pointer argument, made on first use */
};

/* What one argument covered at its latest launch on each of its latest streams. */
struct arg_history {
	struct {
		uint64_t key, used; /* used: a counter, to replace the stalest */
		struct ember_scan_range range;
	} on[EMBER_SCAN_STREAMS];
};

enum { LAYOUT_BUCKETS = 4096, MAX_PARAMS = 4096 };

#define layout_lock ember_lock_layouts
static struct layout layouts[LAYOUT_BUCKETS];

static unsigned bucket_of(CUfunction f)
{
	uintptr_t h = (uintptr_t)f;
	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 52) % LAYOUT_BUCKETS;
}

/* Ask the driver for every parameter's offset and size, until it says there are no more. */
static void describe(struct layout *l, CUfunction f)
{
	size_t cap = 16;
	l->f = f;
	l->n = 0;
	l->offset = malloc(cap * sizeof *l->offset);
	l->size = malloc(cap * sizeof *l->size);
	for (unsigned i = 0; l->offset && l->size && i < MAX_PARAMS; i++) {
		size_t off, sz;
		CUresult r = EMBER_REAL(cuFuncGetParamInfo)(f, i, &off, &sz);
		if (r != CUDA_SUCCESS) /* a CUkernel handle answers through its own call */
			r = EMBER_REAL(cuKernelGetParamInfo)((CUkernel)f, i, &off, &sz);
		if (r != CUDA_SUCCESS)
			break;
		if (i == cap) {
			cap *= 2;
			uint32_t *o = realloc(l->offset, cap * sizeof *o), *s = o ? realloc(l->size, cap * sizeof *s) : NULL;
			if (o)
				l->offset = o;
			if (!o || !s)
				break;
			l->size = s;
		}
		l->offset[i] = (uint32_t)off;
		l->size[i] = (uint32_t)sz;
		l->n = i + 1;
	}
}

/* The cached layout of f, described on first sight. Copies it out under the lock. */
/* The slot of f, or the empty slot it would take; NULL when the table is full (lock held). */
static struct layout *slot_of(CUfunction f)
{
	unsigned b = bucket_of(f);
	for (unsigned probe = 0; probe < LAYOUT_BUCKETS; probe++) {
		struct layout *c = &layouts[(b + probe) % LAYOUT_BUCKETS];
		if (c->f == f || !c->f)
			return c;
	}
	return NULL;
}

/* The cached layout of f, described on first sight, copied out with what was learned of it. */
static unsigned layout_of(CUfunction f, uint32_t *offset, uint32_t *size, unsigned max, struct ember_scan *out)
{
	pthread_mutex_lock(&layout_lock);
	struct layout *l = slot_of(f);
	unsigned n = 0;
	if (l) {
		if (!l->f)
			describe(l, f);
		n = l->n < max ? l->n : max;
		memcpy(offset, l->offset, n * sizeof *offset);
		memcpy(size, l->size, n * sizeof *size);
		memcpy(out->elem_size, l->elem_size, sizeof l->elem_size);
	}
	pthread_mutex_unlock(&layout_lock);
	return n;
}

void ember_scan_learn(CUfunction f, unsigned param, unsigned elem_size)
{
	if (param >= EMBER_SCAN_LEARNED || elem_size == 0 || elem_size > 255)
		return;
	pthread_mutex_lock(&layout_lock);
	struct layout *l = slot_of(f);
	if (l && l->f == f)
		l->elem_size[param] = (uint8_t)elem_size;
	pthread_mutex_unlock(&layout_lock);
}

uint64_t ember_scan_stream_key(CUstream stream, bool per_thread)
{
	/* the legacy default stream is one stream; a per-thread default stream is one per thread */
	return stream || !per_thread ? (uint64_t)(uintptr_t)stream : (uint64_t)pthread_self() | 1;
}

/* The slot of f's history of argument param for the stream with this key (layout lock held). */
static struct arg_history *history_of(CUfunction f, unsigned param, bool make)
{
	struct layout *l = slot_of(f);
	if (!l || l->f != f)
		return NULL;
	if (!l->history && make)
		l->history = calloc(EMBER_SCAN_LEARNED, sizeof *l->history);
	return l->history ? &l->history[param] : NULL;
}

void ember_scan_remember_ranges(CUfunction f, uint64_t stream_key, const struct ember_scan_range *ranges,
				uint32_t which)
{
	static uint64_t clock;
	pthread_mutex_lock(&layout_lock);
	for (unsigned param = 0; param < EMBER_SCAN_LEARNED && which >> param; param++) {
		struct arg_history *h = which & (1u << param) ? history_of(f, param, true) : NULL;
		if (!h)
			continue;
		unsigned pick = 0;
		for (unsigned i = 0; i < EMBER_SCAN_STREAMS; i++) {
			if (h->on[i].used && h->on[i].key == stream_key) {
				pick = i;
				break;
			}
			if (h->on[i].used < h->on[pick].used)
				pick = i; /* the stalest, or an empty one */
		}
		h->on[pick].key = stream_key;
		h->on[pick].used = ++clock;
		h->on[pick].range = ranges[param];
	}
	pthread_mutex_unlock(&layout_lock);
}

uint32_t ember_scan_previous_ranges(CUfunction f, uint64_t stream_key, struct ember_scan_range *out)
{
	uint32_t found = 0;
	pthread_mutex_lock(&layout_lock);
	for (unsigned param = 0; param < EMBER_SCAN_LEARNED; param++) {
		struct arg_history *h = history_of(f, param, false);
		for (unsigned i = 0; h && i < EMBER_SCAN_STREAMS; i++)
			if (h->on[i].used && h->on[i].key == stream_key) {
				out[param] = h->on[i].range;
				found |= 1u << param;
				break;
			}
		if (!h)
			break; /* f has no history at all */
	}
	pthread_mutex_unlock(&layout_lock);
	return found;
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

/* A 4- or 8-byte argument: a pointer, or else a count that may tell how far a pointer reaches. */
static void scan_scalar(struct ember_scan *s, const unsigned char *p, size_t bytes, unsigned param, uint64_t lo,
			uint64_t hi)
{
	uint64_t v = 0;
	memcpy(&v, p, bytes); /* little-endian: a 4-byte value fills the low half */
	if (bytes == 8 && note(s, v, param, lo, hi))
		return;
	if (v > 0 && v < (1ull << 44) && s->nscalars < EMBER_SCAN_MAX_SCALARS)
		s->scalars[s->nscalars++] = v;
}

void ember_scan_launch(CUfunction f, void **kernel_params, void **extra, struct ember_scan *out)
{
	out->n = out->nptrs = out->nscalars = 0;
	out->f = f;
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
		unsigned n = layout_of(f, offset, size, MAX, out);
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
	for (unsigned i = 0; i < s->n; i++)
		ember_alloc_put(EMBER_TABLE, s->allocs[i]);
	s->n = s->nptrs = 0;
}

void ember_scan_unbind(struct ember_scan *s)
{
	for (unsigned i = 0; i < s->n; i++)
		ember_alloc_put(EMBER_TABLE, s->allocs[i]);
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
