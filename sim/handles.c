/*
 * Live handles. A CUstream, CUevent, CUmodule... is a pointer to the sim's
 * own struct; checking it against this table first means a stale or made-up
 * handle gets CUDA_ERROR_INVALID_HANDLE instead of a read of freed memory.
 * A sorted array: lookups are binary searches, and handle counts are small.
 */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "sim.h"

struct entry {
	uintptr_t key;
	enum sim_handle_kind kind;
	struct sim_ctx *owner;
};

static struct entry *table;
static size_t count, capacity;

/* Index of the first entry whose key is >= key. */
static size_t lower_bound(uintptr_t key)
{
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (table[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct entry *find(enum sim_handle_kind kind, const void *h)
{
	size_t i = lower_bound((uintptr_t)h);
	if (i < count && table[i].key == (uintptr_t)h && table[i].kind == kind)
		return &table[i];
	return NULL;
}

void sim_handle_add(enum sim_handle_kind kind, const void *h, struct sim_ctx *owner)
{
	pthread_mutex_lock(&sim_handles_lock);
	if (!ember_grow(&table, count, &capacity, sizeof *table, 64))
		abort(); /* a handle we cannot track would be a handle we cannot free */
	size_t i = lower_bound((uintptr_t)h);
	memmove(&table[i + 1], &table[i], (count - i) * sizeof *table);
	table[i] = (struct entry){ (uintptr_t)h, kind, owner };
	count++;
	pthread_mutex_unlock(&sim_handles_lock);
}

bool sim_handle_valid(enum sim_handle_kind kind, const void *h)
{
	if (!h)
		return false;
	pthread_mutex_lock(&sim_handles_lock);
	bool ok = find(kind, h) != NULL;
	pthread_mutex_unlock(&sim_handles_lock);
	return ok;
}

bool sim_handle_remove(enum sim_handle_kind kind, const void *h)
{
	pthread_mutex_lock(&sim_handles_lock);
	struct entry *e = h ? find(kind, h) : NULL;
	if (e) {
		size_t i = (size_t)(e - table);
		memmove(&table[i], &table[i + 1], (count - i - 1) * sizeof *table);
		count--;
	}
	pthread_mutex_unlock(&sim_handles_lock);
	return e != NULL;
}

static bool owned(const struct entry *e, enum sim_handle_kind kind, const struct sim_ctx *owner)
{
	return e->kind == kind && e->owner == owner;
}

void sim_handles_drain(enum sim_handle_kind kind, struct sim_ctx *owner, void (*destroy)(void *))
{
	pthread_mutex_lock(&sim_handles_lock);
	size_t n = 0;
	for (size_t i = 0; i < count; i++)
		n += owned(&table[i], kind, owner);
	void **doomed = n ? malloc(n * sizeof *doomed) : NULL;
	if (!doomed) { /* nothing to do, or no memory: then they stay alive */
		pthread_mutex_unlock(&sim_handles_lock);
		return;
	}
	size_t kept = 0, taken = 0;
	for (size_t i = 0; i < count; i++) {
		if (owned(&table[i], kind, owner))
			doomed[taken++] = (void *)table[i].key;
		else
			table[kept++] = table[i];
	}
	count = kept;
	pthread_mutex_unlock(&sim_handles_lock);
	/* outside the lock: destroying a module unregisters its functions */
	for (size_t i = 0; i < n; i++)
		destroy(doomed[i]);
	free(doomed);
}
