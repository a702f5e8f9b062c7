/*
 * The kernels the sim can run: host functions registered by name, with the
 * size of each parameter. Parameter offsets follow natural alignment, each
 * aligned to the largest power of two not above min(size, 8), which is
 * what cuFuncGetParamInfo reports and how packed `extra` buffers are read.
 * Kernels are never unregistered, so a CUfunction can point at one.
 */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "sim.h"

static struct sim_kernel **kernels; /* under sim_code_lock */
static unsigned nkernels;
static size_t capacity;

static size_t alignment(size_t size)
{
	size_t a = 1;
	while (a * 2 <= SIM_MIN(size, (size_t)8))
		a *= 2;
	return a;
}

/* Lays out the parameters; false when they do not fit the driver's parameter space. */
static bool lay_out(struct sim_kernel *k, const size_t *sizes, unsigned n)
{
	size_t off = 0;
	for (unsigned i = 0; i < n; i++) {
		if (sizes[i] == 0 || sizes[i] > SIM_MAX_PARAM_BYTES)
			return false;
		size_t align = alignment(sizes[i]);
		off = (off + align - 1) / align * align;
		k->sizes[i] = sizes[i];
		k->offsets[i] = off;
		off += sizes[i];
	}
	k->nparams = n;
	k->args_bytes = off;
	return off <= SIM_MAX_PARAM_BYTES;
}

static struct sim_kernel *find_locked(const char *name)
{
	for (unsigned i = 0; i < nkernels; i++)
		if (!strcmp(kernels[i]->name, name))
			return kernels[i];
	return NULL;
}

static bool same(const struct sim_kernel *a, const struct sim_kernel *b)
{
	return a->fn == b->fn && a->nparams == b->nparams &&
	       !memcmp(a->sizes, b->sizes, a->nparams * sizeof a->sizes[0]);
}

EMBER_SIM_API int ember_sim_register_kernel(const char *name, ember_sim_kernel_fn fn, const size_t *param_sizes,
					    unsigned nparams)
{
	if (!name || !*name || !fn || nparams > SIM_MAX_PARAMS || (nparams && !param_sizes))
		return -1;
	struct sim_kernel *k = calloc(1, sizeof *k);
	if (!k || !lay_out(k, param_sizes, nparams) || !(k->name = strdup(name))) {
		free(k);
		return -1;
	}
	k->fn = fn;
	int rc = 0;
	pthread_mutex_lock(&sim_code_lock);
	struct sim_kernel *old = find_locked(name);
	if (old) { /* registering the same thing twice is fine; redefining it is not */
		rc = same(old, k) ? 0 : -1;
	} else if (!ember_grow(&kernels, nkernels, &capacity, sizeof *kernels, 16)) {
		rc = -1;
	}
	if (!old && rc == 0) {
		kernels[nkernels++] = k;
		k = NULL;
	}
	pthread_mutex_unlock(&sim_code_lock);
	if (k) {
		free(k->name);
		free(k);
	}
	return rc;
}

const struct sim_kernel *sim_kernel_find(const char *name)
{
	pthread_mutex_lock(&sim_code_lock);
	const struct sim_kernel *k = find_locked(name);
	pthread_mutex_unlock(&sim_code_lock);
	return k;
}

unsigned sim_kernel_count(void)
{
	pthread_mutex_lock(&sim_code_lock);
	unsigned n = nkernels;
	pthread_mutex_unlock(&sim_code_lock);
	return n;
}
