/*
 * The kernel table: one record per kernel handle, keyed by CUfunction. It
 * holds the parameter layout the driver reports (what the launch scan
 * reads arguments with) and what launches have taught about the kernel
 * (launch order, read by the access monitor): the element size of each
 * pointer argument and the range each argument covered on its latest
 * streams. One lock guards it, never held while the driver is asked.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_types.h"
#include "kernels.h"
#include "locks.h"
#include "shim.h"

/* A kernel's parameter layout, as cuFuncGetParamInfo reports it. */
struct layout {
	CUfunction f;
	CUmodule module;    /* cuFuncGetModule's; NULL where it has none (a CUkernel handle): gone at any unload */
	uint32_t number;    /* in order of first sight: a kernel's name in a trace */
	unsigned n;         /* parameters; 0 also when the driver could not say */
	uint32_t *offset, *size;
	uint8_t elem_size[EMBER_SCAN_LEARNED]; /* learned per pointer argument */
	struct ember_declared declared;        /* from the kernel's mangled name (kernel_types.h) */
	uint32_t inside;                       /* bit per argument: it has pointed inside an allocation */
	struct ember_launch_history *history;  /* per pointer argument, made on first use */
	uint32_t kept;                         /* bit per argument: its history holds a range */
};

enum { LAYOUT_BUCKETS = 4096, MAX_PARAMS = 4096 };

#define layout_lock ember_lock_layouts
static struct layout layouts[LAYOUT_BUCKETS];

/* Bumped whenever what a launch's scan reads from here may change: a kept scan of an older one is stale. */
static uint64_t generation;

uint64_t ember_kernels_generation(void)
{
	return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

static void changed(void)
{
	__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
}

static unsigned bucket_of(CUfunction f)
{
	uintptr_t h = (uintptr_t)f;
	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 52) % LAYOUT_BUCKETS;
}

/*
 * Ask the driver for every parameter's offset and size, until it says there
 * are no more, into a new record (no lock held: the driver's own locks must
 * never wait behind ours, fork()'s handlers take them in the other order).
 */
static struct layout describe(CUfunction f)
{
	size_t cap = 16;
	struct layout l = { .f = f };
	l.offset = malloc(cap * sizeof *l.offset);
	l.size = malloc(cap * sizeof *l.size);
	for (unsigned i = 0; l.offset && l.size && i < MAX_PARAMS; i++) {
		size_t off, sz;
		CUresult r = EMBER_REAL(cuFuncGetParamInfo)(f, i, &off, &sz);
		if (r != CUDA_SUCCESS) /* a CUkernel handle answers through its own call */
			r = EMBER_REAL(cuKernelGetParamInfo)((CUkernel)f, i, &off, &sz);
		if (r != CUDA_SUCCESS)
			break;
		if (i == cap) {
			cap *= 2;
			uint32_t *o = realloc(l.offset, cap * sizeof *o), *sz2 = o ? realloc(l.size, cap * sizeof *sz2) : NULL;
			if (o)
				l.offset = o;
			if (!o || !sz2)
				break;
			l.size = sz2;
		}
		l.offset[i] = (uint32_t)off;
		l.size[i] = (uint32_t)sz;
		l.n = i + 1;
	}
	if (EMBER_REAL(cuFuncGetModule)(&l.module, f) != CUDA_SUCCESS)
		l.module = NULL;
	const char *name = ember_kernel_name(f);
	ember_kernel_declared(name, &l.declared);
	if (l.size) {
		ember_tensor_lists_layout(name, l.n, l.size, &l.declared.lists);
		ember_cat_layout(name, l.n, l.size, &l.declared.cat);
	}
	return l;
}

const char *ember_kernel_name(CUfunction f)
{
	const char *name = NULL;
	if (EMBER_REAL(cuFuncGetName)(&name, f) != CUDA_SUCCESS &&
	    EMBER_REAL(cuKernelGetName)(&name, (CUkernel)f) != CUDA_SUCCESS)
		name = NULL;
	return name;
}

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

/* What launches taught about l's kernel and what its name declares (nothing for no kernel): lock held. */
static void copy_learned(const struct layout *l, uint8_t *elem_size, struct ember_declared *declared, uint32_t *inside)
{
	if (l) {
		memcpy(elem_size, l->elem_size, sizeof l->elem_size);
		*declared = l->declared;
	} else {
		memset(elem_size, 0, EMBER_SCAN_LEARNED);
		memset(declared, 0, sizeof *declared);
	}
	*inside = l ? l->inside : 0;
}

/* The cached layout of f, described on first sight, copied out with what was learned of it. */
unsigned ember_kernel_layout(CUfunction f, uint32_t *offset, uint32_t *size, unsigned max, uint8_t *elem_size,
			     struct ember_declared *declared, uint32_t *inside, uint32_t *number)
{
	static uint32_t next_number;
	ember_lock(&layout_lock);
	struct layout *l = slot_of(f);
	if (l && !l->f) {
		/* first sight: describe it unlocked, then keep it unless another thread was quicker */
		ember_unlock(&layout_lock);
		struct layout fresh = describe(f);
		ember_lock(&layout_lock);
		l = slot_of(f);
		if (l && !l->f) {
			*l = fresh;
			l->number = next_number++;
		} else {
			free(fresh.offset);
			free(fresh.size);
		}
	}
	unsigned n = 0;
	*number = l ? l->number : UINT32_MAX;
	copy_learned(l, elem_size, declared, inside);
	if (l) {
		n = l->n < max ? l->n : max;
		memcpy(offset, l->offset, n * sizeof *offset);
		memcpy(size, l->size, n * sizeof *size);
	}
	ember_unlock(&layout_lock);
	return n;
}

void ember_kernel_learn(CUfunction f, unsigned param, unsigned elem_size)
{
	if (param >= EMBER_SCAN_LEARNED || elem_size == 0 || elem_size > 255)
		return;
	ember_lock(&layout_lock);
	struct layout *l = slot_of(f);
	if (l && l->f == f && l->elem_size[param] != elem_size) {
		l->elem_size[param] = (uint8_t)elem_size;
		changed(); /* later launches of f are credited other extents */
	}
	ember_unlock(&layout_lock);
}

void ember_kernel_learned(CUfunction f, uint8_t *elem_size, struct ember_declared *declared, uint32_t *inside)
{
	ember_lock(&layout_lock);
	struct layout *l = slot_of(f);
	copy_learned(l && l->f == f ? l : NULL, elem_size, declared, inside);
	ember_unlock(&layout_lock);
}

void ember_kernel_learn_inside(CUfunction f, uint32_t params)
{
	ember_lock(&layout_lock);
	struct layout *l = slot_of(f);
	if (l && l->f == f && (l->inside | params) != l->inside) {
		l->inside |= params;
		changed(); /* a later launch of f at a pool's base is credited another extent */
	}
	ember_unlock(&layout_lock);
}

void ember_kernel_remember_ranges(CUfunction f, uint64_t stream_key, const struct ember_range *ranges,
				uint32_t which)
{
	static uint64_t clock;
	ember_lock(&layout_lock);
	struct layout *l = slot_of(f);
	if (l && l->f == f && !l->history)
		l->history = calloc(EMBER_SCAN_LEARNED, sizeof *l->history);
	if (l && l->f == f && l->history)
		for (unsigned param = 0; param < EMBER_SCAN_LEARNED && which >> param; param++)
			if (which & (1u << param)) {
				ember_launch_history_keep(&l->history[param], stream_key, &ranges[param], ++clock);
				l->kept |= 1u << param;
			}
	ember_unlock(&layout_lock);
}

/* Every launch asks, so one lookup of f and only the arguments that kept a range. */
uint32_t ember_kernel_previous_ranges(CUfunction f, uint64_t stream_key, struct ember_range *out)
{
	uint32_t found = 0;
	ember_lock(&layout_lock);
	struct layout *l = slot_of(f);
	if (l && l->f == f && l->history)
		for (uint32_t left = l->kept; left; left &= left - 1) {
			unsigned param = (unsigned)__builtin_ctz(left);
			if (ember_launch_history_find(&l->history[param], stream_key, &out[param]))
				found |= 1u << param;
		}
	ember_unlock(&layout_lock);
	return found;
}

/* l's record freed and its slot emptied (lock held). */
static void clear(struct layout *l)
{
	free(l->offset);
	free(l->size);
	free(l->history);
	*l = (struct layout){ 0 };
}

/*
 * Slot i emptied, and the records after it in its probe run moved back into
 * the hole, each that may (its home slot not cyclically in (hole, its
 * slot]), so that every record is still found from its home (lock held).
 */
static void remove_at(unsigned i)
{
	clear(&layouts[i]);
	for (unsigned j = (i + 1) % LAYOUT_BUCKETS; layouts[j].f; j = (j + 1) % LAYOUT_BUCKETS) {
		unsigned home = bucket_of(layouts[j].f);
		bool reached_from_home = i < j ? home > i && home <= j : home > i || home <= j;
		if (reached_from_home)
			continue;
		layouts[i] = layouts[j];
		layouts[j] = (struct layout){ 0 };
		i = j;
	}
}

void ember_kernels_forget(void)
{
	ember_lock(&layout_lock);
	for (unsigned i = 0; i < LAYOUT_BUCKETS; i++)
		clear(&layouts[i]);
	changed(); /* a handle may come back for another kernel */
	ember_unlock(&layout_lock);
}

unsigned ember_kernels_forget_module(CUmodule module)
{
	unsigned forgot = 0;
	ember_lock(&layout_lock);
	/* a removal may move a record not yet looked at behind the scan (a run that wraps): scan until none is left */
	for (bool again = true; again;) {
		again = false;
		for (unsigned i = 0; i < LAYOUT_BUCKETS; i++) {
			const struct layout *l = &layouts[i];
			if (l->f && (l->module == module || !l->module)) {
				remove_at(i);
				forgot++;
				again = true;
			}
		}
	}
	if (forgot)
		changed(); /* its kernels' handles may come back for others */
	ember_unlock(&layout_lock);
	return forgot;
}
