/* Converted memory in a pool's usage attributes, and its release threshold (pool_usage.h): a short table of pools. */
#include "grow.h"
#include "locks.h"
#include "pool_usage.h"

struct usage {
	CUmemoryPool pool;
	uint64_t in_use, kept;
	uint64_t in_use_high, reserved_high;
	cuuint64_t threshold; /* the release threshold, where known */
	bool threshold_known;
};

#define lock ember_lock_physical
static struct usage *table;
static size_t n, cap_n;

/* pool's entry, made if make; NULL if none (or out of memory). Lock held. */
static struct usage *entry(CUmemoryPool pool, bool make)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].pool == pool)
			return &table[i];
	if (!make || !pool || !ember_grow(&table, n, &cap_n, sizeof *table, 8))
		return NULL;
	table[n] = (struct usage){ .pool = pool };
	return &table[n++];
}

/* Subtract, never below 0: a pool destroyed and its handle given to a new one may see an old free. */
static void take(uint64_t *from, uint64_t size)
{
	*from = *from > size ? *from - size : 0;
}

/* What the pool holds of Ember's: in the program's hands or kept. */
static uint64_t reserved(const struct usage *u)
{
	return u->in_use + u->kept;
}

static void marks(struct usage *u)
{
	if (u->in_use > u->in_use_high)
		u->in_use_high = u->in_use;
	if (reserved(u) > u->reserved_high)
		u->reserved_high = reserved(u);
}

void ember_pool_usage_made(CUmemoryPool pool, uint64_t size)
{
	ember_lock(&lock);
	struct usage *u = entry(pool, true);
	if (u) {
		u->in_use += size;
		marks(u);
	}
	ember_unlock(&lock);
}

void ember_pool_usage_freed(CUmemoryPool pool, uint64_t size)
{
	ember_lock(&lock);
	struct usage *u = entry(pool, false);
	if (u)
		take(&u->in_use, size);
	ember_unlock(&lock);
}

void ember_pool_usage_kept_locked(CUmemoryPool pool, uint64_t size, bool to_kept)
{
	struct usage *u = entry(pool, false);
	if (!u)
		return;
	if (to_kept) {
		take(&u->in_use, size);
		u->kept += size;
	} else {
		take(&u->kept, size);
		u->in_use += size;
	}
	marks(u);
}

/* Whether attr is one of the four usage attributes, each a cuuint64_t (others may be an int). */
static bool usage_attribute(CUmemPool_attribute attr)
{
	return attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT || attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT ||
	       attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH || attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH;
}

void ember_pool_usage_answer(CUmemoryPool pool, CUmemPool_attribute attr, cuuint64_t *value)
{
	if (!usage_attribute(attr))
		return;
	ember_lock(&lock);
	const struct usage *u = entry(pool, false);
	uint64_t add = 0;
	if (u)
		switch (attr) {
		case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
			add = u->in_use;
			break;
		case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
			add = reserved(u);
			break;
		case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
			add = u->in_use_high;
			break;
		case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
			add = u->reserved_high;
			break;
		default:
			break;
		}
	ember_unlock(&lock);
	*value += add;
}

void ember_pool_usage_reset(CUmemoryPool pool, CUmemPool_attribute attr)
{
	ember_lock(&lock);
	struct usage *u = entry(pool, false);
	if (u && attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH)
		u->in_use_high = u->in_use;
	else if (u && attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)
		u->reserved_high = reserved(u);
	ember_unlock(&lock);
}

void ember_pool_usage_threshold_is(CUmemoryPool pool, cuuint64_t threshold)
{
	ember_lock(&lock);
	struct usage *u = entry(pool, true);
	if (u) {
		u->threshold = threshold;
		u->threshold_known = true;
	}
	ember_unlock(&lock);
}

bool ember_pool_usage_threshold(CUmemoryPool pool, cuuint64_t *out)
{
	ember_lock(&lock);
	const struct usage *u = entry(pool, false);
	bool known = u && u->threshold_known;
	if (known)
		*out = u->threshold;
	ember_unlock(&lock);
	return known;
}

void ember_pool_usage_forget(CUmemoryPool pool)
{
	ember_lock(&lock);
	struct usage *u = entry(pool, false);
	if (u)
		*u = table[--n];
	ember_unlock(&lock);
}

void ember_pool_usage_after_fork_child(void)
{
	n = 0; /* the table's array stays, for the child's own */
}
