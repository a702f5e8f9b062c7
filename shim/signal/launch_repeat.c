/* Each thread's last launch, kept so that its repeats skip the scan (launch_repeat.h). */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "kernels.h"
#include "launch_repeat.h"
#include "state.h"

struct kept {
	bool valid;     /* scan holds a launch's result and references */
	bool busy;      /* between ember_repeat_scan and ember_repeat_done */
	CUfunction f;   /* the thread's last kernel, kept or not */
	CUstream stream;
	bool per_thread;
	uint64_t kernels_gen; /* ember_kernels_generation() before the scan */
	struct ember_scan_args args;
	struct ember_scan scan;
};

/*
 * The record is found through the thread's key, not a __thread variable:
 * in a shared library that is a __tls_get_addr call, and it cost each
 * launch 20 ns on the simulated driver (measured against a global).
 */
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static bool key_made;

/* A thread's exit drops its kept scan's references, so freed allocations' records go. */
static void forget(void *p)
{
	struct kept *k = p;
	if (k->valid)
		ember_scan_release(&k->scan);
	free(k);
}

static void make_key(void)
{
	__atomic_store_n(&key_made, pthread_key_create(&key, forget) == 0, __ATOMIC_RELEASE);
}

/* This thread's record, made on first use; NULL without memory or a key to free it by. */
static struct kept *kept_of_thread(void)
{
	struct kept *k = __atomic_load_n(&key_made, __ATOMIC_ACQUIRE) ? pthread_getspecific(key) : NULL;
	if (k)
		return k;
	pthread_once(&key_once, make_key);
	if (!__atomic_load_n(&key_made, __ATOMIC_ACQUIRE))
		return NULL;
	k = calloc(1, sizeof *k);
	if (k && pthread_setspecific(key, k) != 0) {
		free(k);
		k = NULL;
	}
	return k;
}

/* No allocation made since the scan, and none of those it references freed (the table's lock). */
static bool table_unchanged(const struct ember_scan *s)
{
	ember_table_lock(EMBER_TABLE);
	bool same = EMBER_TABLE->next_id == s->table_gen;
	for (unsigned i = 0; same && i < s->n; i++)
		same = !s->allocs[i]->freed;
	ember_table_unlock(EMBER_TABLE);
	return same;
}

static bool repeats(const struct kept *k, CUfunction f, void **kernel_params, void **extra, CUstream stream,
		    bool per_thread)
{
	return k->valid && k->f == f && k->stream == stream && k->per_thread == per_thread &&
	       k->kernels_gen == ember_kernels_generation() && ember_scan_args_same(&k->args, kernel_params, extra) &&
	       table_unchanged(&k->scan);
}

/*
 * A launch of another kernel than the thread's last is scanned the usual
 * way, and only its kernel is noted: a model's layers run different
 * kernels one after another, none repeating the launch before, and
 * keeping their scans and arguments cost each of them 30 to 40 ns on the
 * simulated driver (ember-callbench --launch, alternate).
 */
static bool another_kernel(struct kept *k, CUfunction f)
{
	if (k->f == f)
		return false;
	if (k->valid)
		ember_scan_release(&k->scan);
	k->valid = false;
	k->f = f;
	return true;
}

struct ember_scan *ember_repeat_scan(CUfunction f, struct ember_grid grid, void **kernel_params, void **extra,
				     CUstream stream, bool per_thread)
{
	if (!ember_table_any_placed(EMBER_TABLE))
		return NULL; /* nothing to find: the usual scan returns at once (PyTorch with nothing managed) */
	struct kept *k = kept_of_thread();
	if (!k || k->busy || another_kernel(k, f))
		return NULL; /* busy: a launch inside a launch's placement */
	k->busy = true;
	if (repeats(k, f, kernel_params, extra, stream, per_thread)) {
		k->scan.repeat = true;
		return &k->scan;
	}
	/* read first: a change during the scan makes the kept scan stale at once, never unnoticed */
	k->kernels_gen = ember_kernels_generation();
	ember_scan_launch_keeping(f, grid, kernel_params, extra, &k->scan, &k->args);
	k->stream = stream;
	k->per_thread = per_thread;
	k->valid = true;
	return &k->scan;
}

void ember_repeat_done(struct ember_scan *s)
{
	struct kept *k = (struct kept *)((char *)s - offsetof(struct kept, scan)); /* no second lookup of the key */
	s->repeat = false;
	k->busy = false;
}
