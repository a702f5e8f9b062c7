/*
 * Eviction: when a device has no room for managed memory coming in (or for
 * a cuMemAlloc), the least recently used managed blocks on it go back to
 * the host, as the driver's oversubscription path does. Read-mostly blocks
 * just drop their device copy. cuMemAlloc memory is never evicted. When
 * more is asked for than the device can hold, it is emptied of other
 * managed memory and the caller takes what fits.
 */
#include <stdlib.h>

#include "cost.h"
#include "grow.h"
#include "sim.h"

struct victim {
	struct sim_alloc *a;
	size_t i;
};

struct hunt {
	int dev;
	const struct sim_alloc *keep;
	size_t keep_first, keep_end;
	struct victim *v;
	size_t n, cap;
	bool failed;
};

static void collect(struct sim_alloc *a, void *arg)
{
	struct hunt *h = arg;
	if (a->kind != SIM_MEM_MANAGED)
		return;
	for (size_t i = 0; i < a->nblocks; i++) {
		if (a->blocks[i].where != h->dev || (a == h->keep && i >= h->keep_first && i < h->keep_end))
			continue;
		if (!ember_grow(&h->v, h->n, &h->cap, sizeof *h->v, 64)) {
			h->failed = true;
			return;
		}
		h->v[h->n++] = (struct victim){ a, i };
	}
}

/* Oldest use first; ties by allocation and block, so the order is deterministic. */
static int by_last_use(const void *x, const void *y)
{
	const struct victim *p = x, *q = y;
	uint64_t tp = p->a->blocks[p->i].last_use, tq = q->a->blocks[q->i].last_use;
	if (tp != tq)
		return tp < tq ? -1 : 1;
	if (p->a->id != q->a->id)
		return p->a->id < q->a->id ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

uint64_t sim_make_room(int dev, uint64_t need, const struct sim_alloc *keep, size_t keep_first,
		       size_t keep_end, bool *ok)
{
	*ok = sim_device_free(dev) >= need;
	if (*ok)
		return 0;
	/* more than can ever fit: make as much room as managed memory can give */
	uint64_t target = SIM_MIN(need, sim_globals.device_memory - sim_mem.plain[dev]);
	struct hunt h = { .dev = dev, .keep = keep, .keep_first = keep_first, .keep_end = keep_end };
	sim_alloc_for_each(collect, &h);
	if (!h.failed)
		qsort(h.v, h.n, sizeof *h.v, by_last_use);
	uint64_t moved = 0;
	for (size_t k = 0; !h.failed && k < h.n && sim_device_free(dev) < target; k++) {
		struct sim_alloc *a = h.v[k].a;
		size_t i = h.v[k].i;
		if (a->blocks[i].host_copy) {
			sim_block_drop_device_copy(a, i);
		} else {
			moved += sim_block_len(a, i);
			sim_block_move(a, i, SIM_LOC_HOST);
		}
	}
	free(h.v);
	*ok = sim_device_free(dev) >= need;
	return moved ? SIM_DEMOTE_CALL_NS + sim_transfer_ns(moved, SIM_DEMOTE_BPS) : 0;
}
