/* Finding the allocations a launch references. */
#include <stdlib.h>
#include <string.h>

#include "launch_scan.h"
#include "shim.h"

/* A kernel's parameter layout, as cuFuncGetParamInfo reports it. */
struct layout {
	CUfunction f;
	unsigned n;         /* parameters; 0 also when the driver could not say */
	uint32_t *offset, *size;
};

enum { LAYOUT_BUCKETS = 4096, MAX_PARAMS = 4096 };

static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;
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
static unsigned layout_of(CUfunction f, uint32_t *offset, uint32_t *size, unsigned max)
{
	pthread_mutex_lock(&layout_lock);
	unsigned b = bucket_of(f);
	struct layout *l = NULL;
	for (unsigned probe = 0; probe < LAYOUT_BUCKETS; probe++) {
		struct layout *c = &layouts[(b + probe) % LAYOUT_BUCKETS];
		if (c->f == f || !c->f) {
			l = c;
			break;
		}
	}
	unsigned n = 0;
	if (l) {
		if (!l->f)
			describe(l, f);
		n = l->n < max ? l->n : max;
		memcpy(offset, l->offset, n * sizeof *offset);
		memcpy(size, l->size, n * sizeof *size);
	}
	pthread_mutex_unlock(&layout_lock);
	return n;
}

/* Record word if it points into a placed allocation. Returns whether it did. */
static bool note(struct ember_scan *s, uint64_t word, uint64_t lo, uint64_t hi)
{
	if (word < lo || word >= hi)
		return false;
	struct ember_alloc *a = ember_regions_find_locked(word);
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
		s->nptrs++;
	}
	return true;
}

static void scan_bytes(struct ember_scan *s, const unsigned char *p, size_t bytes, uint64_t lo, uint64_t hi)
{
	for (size_t off = 0; off + 8 <= bytes; off += 8) {
		uint64_t word;
		memcpy(&word, p + off, sizeof word);
		note(s, word, lo, hi);
	}
}

/* A 4- or 8-byte argument: a pointer, or else a count that may tell how far a pointer reaches. */
static void scan_scalar(struct ember_scan *s, const unsigned char *p, size_t bytes, uint64_t lo, uint64_t hi)
{
	uint64_t v = 0;
	memcpy(&v, p, bytes); /* little-endian: a 4-byte value fills the low half */
	if (bytes == 8 && note(s, v, lo, hi))
		return;
	if (v > 0 && v < (1ull << 44) && s->nscalars < EMBER_SCAN_MAX_SCALARS)
		s->scalars[s->nscalars++] = v;
}

void ember_scan_launch(CUfunction f, void **kernel_params, void **extra, struct ember_scan *out)
{
	out->n = out->nptrs = out->nscalars = 0;
	if (!ember_regions_any_placed())
		return;
	uint64_t lo, hi;
	ember_regions_bounds(&lo, &hi);

	if (kernel_params) {
		enum { MAX = 256 };
		uint32_t offset[MAX], size[MAX];
		unsigned n = layout_of(f, offset, size, MAX);
		ember_regions_lock();
		for (unsigned i = 0; i < n; i++) {
			if (!kernel_params[i])
				continue;
			if (size[i] == 4 || size[i] == 8)
				scan_scalar(out, kernel_params[i], size[i], lo, hi);
			else if (size[i] > 8)
				scan_bytes(out, kernel_params[i], size[i], lo, hi);
		}
		ember_regions_unlock();
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
		ember_regions_lock();
		scan_bytes(out, buf, bytes, lo, hi);
		ember_regions_unlock();
	}
}

void ember_scan_release(struct ember_scan *s)
{
	for (unsigned i = 0; i < s->n; i++)
		ember_alloc_put(s->allocs[i]);
	s->n = s->nptrs = 0;
}

void ember_scan_forget_layouts(void)
{
	pthread_mutex_lock(&layout_lock);
	for (unsigned i = 0; i < LAYOUT_BUCKETS; i++) {
		free(layouts[i].offset);
		free(layouts[i].size);
		layouts[i] = (struct layout){ 0 };
	}
	pthread_mutex_unlock(&layout_lock);
}
