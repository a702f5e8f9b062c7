/* cuMemCreate allocations split at the budget (split_physical.h). */
#include <stdlib.h>

#include "grow.h"
#include "locks.h"
#include "split_physical.h"
#include "vmm_mappings.h"

#define lock ember_lock_physical
/* Each split lives at its own address, which is its handle: never a driver's, which are live too. */
static struct ember_split **splits;
static size_t nsplits, cap_splits;
static size_t live; /* nsplits, read without the lock */

static void count(void)
{
	__atomic_store_n(&live, nsplits, __ATOMIC_RELEASE);
}

/* A split's handle for the program, which also names its kept mappings: its address. */
static CUmemGenericAllocationHandle handle_of(const struct ember_split *s)
{
	return (CUmemGenericAllocationHandle)(uintptr_t)s;
}

bool ember_split_any(void)
{
	return __atomic_load_n(&live, __ATOMIC_ACQUIRE) != 0;
}

/* Where handle's split is in splits, released or not (lock held); nsplits if it is none. */
static size_t index_any(CUmemGenericAllocationHandle handle)
{
	size_t i = 0;
	while (i < nsplits && handle_of(splits[i]) != handle)
		i++;
	return i;
}

/* Where handle's split is in splits, held by the program (lock held); nsplits if it is none. */
static size_t index_of(CUmemGenericAllocationHandle handle)
{
	size_t i = index_any(handle);
	return i < nsplits && !splits[i]->released ? i : nsplits;
}

/* splits[i] forgotten (lock held): its record, the caller's to free. */
static struct ember_split *forget(size_t i)
{
	struct ember_split *gone = splits[i];
	splits[i] = splits[--nsplits];
	count();
	return gone;
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
	return handle_of(kept);
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

bool ember_split_of_piece(CUmemGenericAllocationHandle piece, CUmemGenericAllocationHandle *handle,
			  struct ember_split *out)
{
	ember_lock(&lock);
	size_t i = 0;
	while (i < nsplits && splits[i]->gpu != piece && splits[i]->host != piece)
		i++;
	bool found = i < nsplits;
	if (found) {
		*handle = handle_of(splits[i]);
		*out = *splits[i];
	}
	ember_unlock(&lock);
	return found;
}

enum ember_split_retain ember_split_retained(CUmemGenericAllocationHandle handle, bool released)
{
	enum ember_split_retain what = EMBER_SPLIT_GONE_MEANWHILE;
	ember_lock(&lock);
	size_t i = index_any(handle);
	struct ember_split *s = i < nsplits ? splits[i] : NULL;
	if (s && s->released != released) {
		what = EMBER_SPLIT_CHANGED;
	} else if (s && released) {
		s->released = false;
		what = EMBER_SPLIT_HELD_AGAIN;
	} else if (s) {
		s->retained++;
		what = EMBER_SPLIT_HELD_ONCE_MORE;
	}
	ember_unlock(&lock);
	return what;
}

void ember_split_mapped(CUmemGenericAllocationHandle handle, CUdeviceptr ptr)
{
	ember_lock(&lock);
	size_t i = index_of(handle);
	if (i < nsplits) /* when memory is short, untracked: an address there answers for its part */
		ember_vmm_mapping_add(ptr, splits[i]->size, handle);
	ember_unlock(&lock);
}

void ember_split_forget_unmapped(void)
{
	ember_lock(&lock);
	/* released, its parts went with their last mappings: their handles may be the driver's next */
	for (size_t i = nsplits; i-- > 0;)
		if (splits[i]->released && !ember_vmm_mapping_of(handle_of(splits[i])))
			free(forget(i));
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
		*out = *splits[i];
		splits[i]->given_back = true; /* held again by a retain, its next last release gives nothing back */
		if (ember_vmm_mapping_of(handle))
			splits[i]->released = true; /* its parts' mappings hold them: a retain may ask for it again */
		else
			gone = forget(i);
		what = EMBER_SPLIT_GONE;
	}
	ember_unlock(&lock);
	free(gone);
	return what;
}
