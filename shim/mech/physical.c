/* The live cuMemCreate handles and their sizes: a small table, newest last. */
#include <pthread.h>

#include "budget_source.h"
#include "grow.h"
#include "locks.h"
#include "physical.h"

struct handle_size {
	CUmemGenericAllocationHandle handle;
	size_t size;
	int device;
};

#define lock ember_lock_physical
static struct handle_size *live;
static size_t nlive, caplive;

void ember_physical_created(CUmemGenericAllocationHandle handle, size_t size, int dev)
{
	if (dev < 0)
		return;
	ember_lock(&lock);
	bool kept = ember_grow(&live, nlive, &caplive, sizeof *live, 64);
	if (kept)
		live[nlive++] = (struct handle_size){ handle, size, dev };
	ember_unlock(&lock);
	if (kept)
		ember_budget_plain(dev, (int64_t)size);
}

void ember_physical_released(CUmemGenericAllocationHandle handle)
{
	struct handle_size gone = { 0, 0, -1 };
	ember_lock(&lock);
	/* programs tend to release what they created last: search from the end */
	for (size_t i = nlive; i-- > 0;)
		if (live[i].handle == handle) {
			gone = live[i];
			live[i] = live[--nlive];
			break;
		}
	ember_unlock(&lock);
	if (gone.device >= 0)
		ember_budget_plain(gone.device, -(int64_t)gone.size);
}
