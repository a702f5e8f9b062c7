/* Freed stream-ordered conversions kept for reuse (kept.h): a small list, oldest first. */
#include <string.h>

#include "grow.h"
#include "kept.h"
#include "locks.h"
#include "pool_usage.h"
#include "shim.h"

#define lock ember_lock_physical
static struct ember_kept *list;
static size_t n, cap_n;
static uint64_t bytes;                  /* changed under the lock, read without it */
static uint64_t reuses, trimmed;        /* counted atomically, without the lock */
static uint64_t charged;                /* bytes counted against the cap: each entry at least its page */

/*
 * A tiny managed allocation still takes a page of the GPU's (64 KiB where
 * the driver maps big pages): counted so against the cap, the list stays
 * short (5,248 entries at 2% of a 16 GiB budget) and its memory bounded.
 */
static uint64_t charge(uint64_t size)
{
	return size < (64u << 10) ? 64u << 10 : size;
}

bool ember_keeping(void)
{
	return ember_size_is_set(ember_cfg.keep_freed);
}

/*
 * A number for the calling thread that no other thread is given: a thread
 * that starts after one exits often has its pthread_self(), but not its
 * per-thread default stream, whose work may still use what it freed.
 */
static uint64_t this_thread(void)
{
	static uint64_t last;
	static __thread uint64_t me;
	if (!me)
		me = __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
	return me;
}

void ember_kept_stream(CUstream stream, bool ptsz, CUstream *key, uint64_t *thread)
{
	if (!stream)
		stream = ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
	*key = stream;
	*thread = stream == CU_STREAM_PER_THREAD ? this_thread() : 0;
}

/* An entry leaves the list: its bytes and its charge with it, its pool's use back to the program's (lock held). */
static void uncount(const struct ember_kept *e)
{
	__atomic_store_n(&bytes, bytes - e->size, __ATOMIC_RELAXED);
	charged -= charge(e->size);
	ember_pool_usage_kept_locked(e->pool, e->size, false);
}

/* Take entry i out, keeping the order of the rest (lock held). */
static struct ember_kept take_at(size_t i)
{
	struct ember_kept e = list[i];
	memmove(&list[i], &list[i + 1], (n - i - 1) * sizeof *list);
	n--;
	uncount(&e);
	return e;
}

bool ember_kept_put(const struct ember_kept *e)
{
	ember_lock(&lock);
	bool kept = ember_grow(&list, n, &cap_n, sizeof *list, 16);
	if (kept) {
		list[n++] = *e;
		__atomic_store_n(&bytes, bytes + e->size, __ATOMIC_RELAXED);
		charged += charge(e->size);
		ember_pool_usage_kept_locked(e->pool, e->size, true);
	}
	ember_unlock(&lock);
	return kept;
}

bool ember_kept_trim(uint64_t cap, struct ember_kept *out)
{
	ember_lock(&lock);
	bool over = n && charged > cap;
	if (over)
		*out = take_at(0);
	ember_unlock(&lock);
	return over;
}

bool ember_kept_take(uint64_t size, CUcontext ctx, CUmemoryPool pool, CUstream stream, uint64_t thread,
		     struct ember_kept *out, bool *same)
{
	ember_lock(&lock);
	size_t pick = n;
	bool found = false;
	for (size_t i = n; i-- > 0 && !found;) {
		const struct ember_kept *e = &list[i];
		if (e->size != size || e->ctx != ctx || e->pool != pool)
			continue;
		found = e->stream && e->stream == stream && e->thread == thread;
		pick = i; /* the same stream's newest, else another's oldest: the likeliest passed its free */
	}
	*same = found;
	bool any = pick < n;
	if (any)
		*out = take_at(pick);
	ember_unlock(&lock);
	return any;
}

/* The oldest entry whose base (by_base) or context is key, taken out, in out. */
static bool take_first(bool by_base, uintptr_t key, struct ember_kept *out)
{
	ember_lock(&lock);
	bool found = false;
	for (size_t i = 0; i < n && !found; i++)
		if (by_base ? list[i].base == (CUdeviceptr)key : (uintptr_t)list[i].ctx == key) {
			*out = take_at(i);
			found = true;
		}
	ember_unlock(&lock);
	return found;
}

bool ember_kept_forget(CUdeviceptr base, struct ember_kept *out)
{
	return take_first(true, (uintptr_t)base, out);
}

bool ember_kept_of_context(CUcontext ctx, struct ember_kept *out)
{
	return take_first(false, (uintptr_t)ctx, out);
}

size_t ember_kept_of_pool(CUmemoryPool pool, uint64_t keep, struct ember_kept *out, size_t max)
{
	ember_lock(&lock);
	uint64_t pooled = 0;
	for (size_t i = 0; i < n; i++)
		if (list[i].pool == pool)
			pooled += list[i].size;
	/* One pass, oldest first: the taken go to out, the rest close up in order. */
	size_t taken = 0, kept = 0;
	for (size_t i = 0; i < n; i++) {
		struct ember_kept e = list[i];
		if (e.pool == pool && pooled > keep && taken < max) {
			out[taken++] = e;
			pooled -= e.size;
			uncount(&e);
		} else {
			list[kept++] = e;
		}
	}
	n = kept;
	ember_unlock(&lock);
	return taken;
}

void ember_kept_after_fork_child(void)
{
	n = 0; /* the list's array stays, for the child's own */
	charged = 0;
	__atomic_store_n(&bytes, 0, __ATOMIC_RELAXED);
}

void ember_kept_stream_gone(CUstream stream)
{
	ember_lock(&lock);
	for (size_t i = 0; i < n; i++)
		if (list[i].stream == stream)
			list[i].stream = NULL;
	ember_unlock(&lock);
}

void ember_kept_reused(void)
{
	__atomic_add_fetch(&reuses, 1, __ATOMIC_RELAXED);
}

uint64_t ember_kept_reuses(void)
{
	return __atomic_load_n(&reuses, __ATOMIC_RELAXED);
}

uint64_t ember_kept_bytes(void)
{
	return __atomic_load_n(&bytes, __ATOMIC_RELAXED);
}

bool ember_kept_next_pool(const CUmemoryPool *after, CUmemoryPool *next)
{
	uintptr_t past = after ? (uintptr_t)*after : 0, best = 0; /* read first: next may be *after */
	bool found = false;
	ember_lock(&lock);
	for (size_t i = 0; i < n; i++) {
		uintptr_t pool = (uintptr_t)list[i].pool;
		if ((!after || pool > past) && (!found || pool < best)) {
			best = pool;
			found = true;
		}
	}
	ember_unlock(&lock);
	if (found)
		*next = (CUmemoryPool)best;
	return found;
}

void ember_kept_trimmed(uint64_t size)
{
	__atomic_add_fetch(&trimmed, size, __ATOMIC_RELAXED);
}

uint64_t ember_kept_trimmed_bytes(void)
{
	return __atomic_load_n(&trimmed, __ATOMIC_RELAXED);
}
