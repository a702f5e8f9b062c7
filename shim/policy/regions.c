/* The region table: a sorted array of reference-counted allocations. */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "regions.h"

void ember_table_init(struct ember_table *t, struct ember_accounts *accs)
{
	*t = (struct ember_table){ .accounts = accs, .placed_lo = UINT64_MAX };
	pthread_mutex_init(&t->lock, NULL);
}

bool ember_table_any_placed(const struct ember_table *t)
{
	return __atomic_load_n(&t->placed_count, __ATOMIC_RELAXED) != 0;
}

void ember_table_bounds(const struct ember_table *t, uint64_t *lo, uint64_t *hi)
{
	*lo = __atomic_load_n(&t->placed_lo, __ATOMIC_RELAXED);
	*hi = __atomic_load_n(&t->placed_hi, __ATOMIC_RELAXED);
}

/* The shim's lock-order check (abi/locks.c, in EMBER_LOCK_CHECK builds), where it is linked in. */
extern void ember_lock_note(pthread_mutex_t *m, bool taking) __attribute__((weak));

void ember_table_lock(struct ember_table *t)
{
	if (ember_lock_note)
		ember_lock_note(&t->lock, true);
	pthread_mutex_lock(&t->lock);
}

void ember_table_unlock(struct ember_table *t)
{
	__atomic_store_n(&t->generation, t->generation + 1, __ATOMIC_RELEASE); /* only lock holders write it */
	pthread_mutex_unlock(&t->lock);
	if (ember_lock_note)
		ember_lock_note(&t->lock, false);
}

uint64_t ember_table_generation(const struct ember_table *t)
{
	return __atomic_load_n(&t->generation, __ATOMIC_ACQUIRE);
}

/* Index of the first allocation whose base is greater than addr. */
static unsigned upper_bound(const struct ember_table *t, uint64_t addr)
{
	unsigned lo = 0, hi = t->len;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (t->v[mid]->base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct ember_alloc *ember_table_find(struct ember_table *t, uint64_t addr)
{
	unsigned i = upper_bound(t, addr);
	if (i == 0)
		return NULL;
	struct ember_alloc *a = t->v[i - 1];
	/* a zero-byte allocation still owns its base address */
	return addr - a->base < (a->size ? a->size : 1) ? a : NULL;
}

struct ember_alloc *ember_table_next(struct ember_table *t, uint64_t addr)
{
	unsigned i = upper_bound(t, addr);
	return i < t->len ? t->v[i] : NULL;
}

struct ember_alloc *ember_table_insert(struct ember_table *t, uint64_t base, uint64_t size, int device,
				       enum ember_alloc_kind kind)
{
	uint64_t nregions = kind == EMBER_ALLOC_PLAIN ? 0 : (size + EMBER_REGION_BYTES - 1) >> EMBER_REGION_SHIFT;
	if (nregions > UINT32_MAX)
		return NULL;
	struct ember_alloc *a = calloc(1, sizeof *a + nregions * sizeof a->regions[0]);
	if (!a)
		return NULL;
	a->base = base;
	a->size = size;
	a->nregions = (uint32_t)nregions;
	a->device = device;
	a->kind = kind;
	a->refs = 1;

	ember_table_lock(t);
	unsigned i = upper_bound(t, base);
	bool overlaps = (i > 0 && ember_table_find(t, base)) || (i < t->len && t->v[i]->base < base + (size ? size : 1));
	if (overlaps || !ember_grow(&t->v, t->len, &t->cap, sizeof *t->v, 64)) {
		ember_table_unlock(t);
		free(a);
		return NULL;
	}
	memmove(&t->v[i + 1], &t->v[i], (t->len - i) * sizeof *t->v);
	t->v[i] = a;
	t->len++;
	a->id = t->next_id++;
	if (kind != EMBER_ALLOC_PLAIN) {
		/* the envelope only grows: a stale envelope costs a lookup, never a miss */
		__atomic_store_n(&t->placed_count, t->placed_count + 1, __ATOMIC_RELAXED);
		if (base < t->placed_lo)
			__atomic_store_n(&t->placed_lo, base, __ATOMIC_RELAXED);
		if (base + size > t->placed_hi)
			__atomic_store_n(&t->placed_hi, base + size, __ATOMIC_RELAXED);
	}
	ember_table_unlock(t);
	return a;
}

struct ember_alloc *ember_table_remove(struct ember_table *t, uint64_t base)
{
	ember_table_lock(t);
	unsigned i = upper_bound(t, base);
	struct ember_alloc *a = i > 0 && t->v[i - 1]->base == base ? t->v[i - 1] : NULL;
	if (a) {
		memmove(&t->v[i - 1], &t->v[i], (t->len - i) * sizeof *t->v);
		t->len--;
		__atomic_store_n(&a->freed, true, __ATOMIC_RELEASE); /* the worker reads it unlocked at issue */
		if (a->kind != EMBER_ALLOC_PLAIN)
			__atomic_store_n(&t->placed_count, t->placed_count - 1, __ATOMIC_RELAXED);
		/* Resident and promoting bytes leave the budget with the allocation. */
		struct ember_device_account *acc = ember_table_account(t, a->device);
		for (uint32_t r = 0; acc && r < a->nregions; r++) {
			if (a->regions[r].state == EMBER_REGION_MAPPED || a->regions[r].released)
				continue;
			ember_budget_release(acc, ember_region_bytes(a, r));
		}
	}
	ember_table_unlock(t);
	return a;
}

void ember_alloc_put(struct ember_table *t, struct ember_alloc *a)
{
	ember_allocs_put(t, &a, 1);
}

void ember_allocs_put(struct ember_table *t, struct ember_alloc *const *v, unsigned n)
{
	bool last[n ? n : 1];
	ember_table_lock(t);
	for (unsigned i = 0; i < n; i++)
		last[i] = --v[i]->refs == 0;
	ember_table_unlock(t);
	for (unsigned i = 0; i < n; i++)
		if (last[i])
			free(v[i]);
}

unsigned ember_table_count(const struct ember_table *t)
{
	return t->len;
}

struct ember_alloc *ember_table_at(const struct ember_table *t, unsigned i)
{
	return i < t->len ? t->v[i] : NULL;
}

void ember_table_reset(struct ember_table *t)
{
	for (unsigned i = 0; i < t->len; i++)
		if (--t->v[i]->refs == 0)
			free(t->v[i]);
	free(t->v);
	struct ember_accounts *accs = t->accounts;
	if (accs)
		memset(accs, 0, sizeof *accs);
	uint64_t generation = t->generation;
	ember_table_init(t, accs);
	t->generation = generation + 1; /* never back: what was found of the old table matches nothing */
}

void ember_table_for_each_overlap(struct ember_table *t, uint64_t ptr, uint64_t bytes,
				  void (*fn)(struct ember_alloc *a, uint32_t r0, uint32_t r1, void *arg), void *arg)
{
	for (uint64_t at = ptr, end = ptr + bytes; at < end;) {
		struct ember_alloc *a = ember_table_find(t, at);
		if (!a) {
			a = ember_table_next(t, at);
			if (!a || a->base >= end)
				return;
			at = a->base;
			continue;
		}
		uint64_t stop = end < a->base + a->size ? end : a->base + a->size;
		if (a->kind != EMBER_ALLOC_PLAIN && a->nregions > 0)
			fn(a, (uint32_t)((at - a->base) >> EMBER_REGION_SHIFT),
			   (uint32_t)(((stop - 1 - a->base) >> EMBER_REGION_SHIFT) + 1), arg);
		if (stop <= at)
			return; /* a zero-byte allocation: nothing further to cover */
		at = stop;
	}
}
