/* cuMemCreate allocations split at the budget (split_physical.h). */
#include <stdlib.h>

#include "grow.h"
#include "locks.h"
#include "split_physical.h"

#define lock ember_lock_physical
/* Each split lives at its own address, which is its handle: never a driver's, which are live too. */
static struct ember_split **splits;
static size_t nsplits, cap_splits;
static size_t live; /* nsplits, read without the lock */

static void count(void)
{
	__atomic_store_n(&live, nsplits, __ATOMIC_RELEASE);
}

bool ember_split_any(void)
{
	return __atomic_load_n(&live, __ATOMIC_ACQUIRE) != 0;
}

/* Where handle's split is in splits (lock held); nsplits if it is none. */
static size_t index_of(CUmemGenericAllocationHandle handle)
{
	size_t i = 0;
	while (i < nsplits && (CUmemGenericAllocationHandle)(uintptr_t)splits[i] != handle)
		i++;
	return i;
}

CUmemGenericAllocationHandle ember_split_add(const struct ember_split *s)
{
	struct ember_split *kept = malloc(sizeof *kept);
	if (!kept)
		return 0;
	*kept = *s;
	ember_lock(&lock);
	bool room = ember_grow(&splits, nsplits, &cap_splits, sizeof *splits, 16);
	if (room) {
		splits[nsplits++] = kept;
		count();
	}
	ember_unlock(&lock);
	if (!room) {
		free(kept);
		return 0;
	}
	return (CUmemGenericAllocationHandle)(uintptr_t)kept;
}

bool ember_split_find(CUmemGenericAllocationHandle handle, struct ember_split *out)
{
	ember_lock(&lock);
	size_t i = index_of(handle);
	bool found = i < nsplits;
	if (found)
		*out = *splits[i];
	ember_unlock(&lock);
	return found;
}

bool ember_split_of_piece(CUmemGenericAllocationHandle piece, CUmemGenericAllocationHandle *handle)
{
	ember_lock(&lock);
	size_t i = 0;
	while (i < nsplits && splits[i]->gpu != piece && splits[i]->host != piece)
		i++;
	bool found = i < nsplits;
	if (found)
		*handle = (CUmemGenericAllocationHandle)(uintptr_t)splits[i];
	ember_unlock(&lock);
	return found;
}

void ember_split_retained(CUmemGenericAllocationHandle handle)
{
	ember_lock(&lock);
	size_t i = index_of(handle);
	if (i < nsplits)
		splits[i]->retained++;
	ember_unlock(&lock);
}

enum ember_split_release ember_split_release(CUmemGenericAllocationHandle handle, struct ember_split *out)
{
	enum ember_split_release what = EMBER_SPLIT_NOT;
	struct ember_split *gone = NULL;
	ember_lock(&lock);
	size_t i = index_of(handle);
	if (i < nsplits && splits[i]->retained) {
		splits[i]->retained--;
		what = EMBER_SPLIT_STILL_HELD;
	} else if (i < nsplits) {
		gone = splits[i];
		splits[i] = splits[--nsplits];
		count();
		what = EMBER_SPLIT_GONE;
	}
	ember_unlock(&lock);
	if (gone) {
		*out = *gone;
		free(gone);
	}
	return what;
}
