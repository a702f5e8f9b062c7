/* The region table: a sorted array of reference-counted allocations. */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "regions.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ember_alloc **table;
static size_t table_cap;
static unsigned table_len;
static uint64_t next_id;
static struct ember_device_account accounts[EMBER_MAX_DEVICES];
/* Placed (non-plain) allocations: their count and an address envelope, read without the lock. */
static unsigned placed_count;
static uint64_t placed_lo = UINT64_MAX, placed_hi;

bool ember_regions_any_placed(void)
{
	return __atomic_load_n(&placed_count, __ATOMIC_RELAXED) != 0;
}

void ember_regions_bounds(uint64_t *lo, uint64_t *hi)
{
	*lo = __atomic_load_n(&placed_lo, __ATOMIC_RELAXED);
	*hi = __atomic_load_n(&placed_hi, __ATOMIC_RELAXED);
}

void ember_regions_lock(void)
{
	pthread_mutex_lock(&table_lock);
}

void ember_regions_unlock(void)
{
	pthread_mutex_unlock(&table_lock);
}

/* Index of the first allocation whose base is greater than addr. */
static unsigned upper_bound(uint64_t addr)
{
	unsigned lo = 0, hi = table_len;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (table[mid]->base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct ember_alloc *ember_regions_find_locked(uint64_t addr)
{
	unsigned i = upper_bound(addr);
	if (i == 0)
		return NULL;
	struct ember_alloc *a = table[i - 1];
	/* a zero-byte allocation still owns its base address */
	return addr - a->base < (a->size ? a->size : 1) ? a : NULL;
}

struct ember_alloc *ember_regions_next_locked(uint64_t addr)
{
	unsigned i = upper_bound(addr);
	return i < table_len ? table[i] : NULL;
}

struct ember_alloc *ember_regions_find(uint64_t addr)
{
	ember_regions_lock();
	struct ember_alloc *a = ember_regions_find_locked(addr);
	if (a)
		a->refs++;
	ember_regions_unlock();
	return a;
}

struct ember_alloc *ember_regions_insert(uint64_t base, uint64_t size, int device,
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

	ember_regions_lock();
	unsigned i = upper_bound(base);
	bool overlaps = (i > 0 && ember_regions_find_locked(base)) ||
			(i < table_len && table[i]->base < base + (size ? size : 1));
	if (overlaps || !ember_grow(&table, table_len, &table_cap, sizeof *table, 64)) {
		ember_regions_unlock();
		free(a);
		return NULL;
	}
	memmove(&table[i + 1], &table[i], (table_len - i) * sizeof *table);
	table[i] = a;
	table_len++;
	a->id = next_id++;
	if (kind != EMBER_ALLOC_PLAIN) {
		/* the envelope only grows: a stale envelope costs a lookup, never a miss */
		__atomic_store_n(&placed_count, placed_count + 1, __ATOMIC_RELAXED);
		if (base < placed_lo)
			__atomic_store_n(&placed_lo, base, __ATOMIC_RELAXED);
		if (base + size > placed_hi)
			__atomic_store_n(&placed_hi, base + size, __ATOMIC_RELAXED);
	}
	ember_regions_unlock();
	return a;
}

struct ember_alloc *ember_regions_remove(uint64_t base)
{
	ember_regions_lock();
	unsigned i = upper_bound(base);
	struct ember_alloc *a = i > 0 && table[i - 1]->base == base ? table[i - 1] : NULL;
	if (a) {
		memmove(&table[i - 1], &table[i], (table_len - i) * sizeof *table);
		table_len--;
		a->freed = true;
		if (a->kind != EMBER_ALLOC_PLAIN)
			__atomic_store_n(&placed_count, placed_count - 1, __ATOMIC_RELAXED);
		/* Resident and promoting bytes leave the budget with the allocation. */
		if (a->device >= 0 && a->device < EMBER_MAX_DEVICES) {
			struct ember_device_account *acc = &accounts[a->device];
			for (uint32_t r = 0; r < a->nregions; r++) {
				uint8_t s = a->regions[r].state;
				if (s == EMBER_REGION_MAPPED || a->regions[r].released)
					continue;
				uint64_t bytes = ember_region_bytes(a, r);
				ember_account_leave(acc, bytes);
			}
		}
	}
	ember_regions_unlock();
	return a;
}

void ember_alloc_get(struct ember_alloc *a)
{
	ember_regions_lock();
	a->refs++;
	ember_regions_unlock();
}

void ember_alloc_put(struct ember_alloc *a)
{
	ember_regions_lock();
	bool last = --a->refs == 0;
	ember_regions_unlock();
	if (last)
		free(a);
}

struct ember_device_account *ember_account(int dev)
{
	return dev >= 0 && dev < EMBER_MAX_DEVICES ? &accounts[dev] : NULL;
}

uint64_t ember_account_room_locked(int dev)
{
	struct ember_device_account *acc = ember_account(dev);
	if (!acc)
		return 0;
	uint64_t used = acc->resident + acc->other;
	return used < acc->high ? acc->high - used : 0;
}

void ember_account_note_peak_locked(int dev)
{
	struct ember_device_account *acc = ember_account(dev);
	if (acc && acc->resident + acc->other > acc->peak)
		acc->peak = acc->resident + acc->other;
}

unsigned ember_regions_count_locked(void)
{
	return table_len;
}

struct ember_alloc *ember_regions_at_locked(unsigned i)
{
	return i < table_len ? table[i] : NULL;
}

void ember_regions_reset(void)
{
	pthread_mutex_init(&table_lock, NULL);
	for (unsigned i = 0; i < table_len; i++)
		if (--table[i]->refs == 0)
			free(table[i]);
	free(table);
	table = NULL;
	table_len = table_cap = 0;
	memset(accounts, 0, sizeof accounts);
	placed_count = 0;
	placed_lo = UINT64_MAX;
	placed_hi = 0;
}
