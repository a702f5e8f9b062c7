/* Mapped by default, plus the static split. */
#include <stdlib.h>

#include "adaptive.h"
#include "grow.h"
#include "ember/ember.h"

#include "placement.h"
#include "shim.h"

/* The GPUs that may map managed memory, found once. */
static int gpus[EMBER_MAX_DEVICES];
static int ngpus = -1;
static pthread_once_t gpus_once = PTHREAD_ONCE_INIT;

static void find_gpus(void)
{
	int count = 0, n = 0;
	if (EMBER_REAL(cuDeviceGetCount)(&count) != CUDA_SUCCESS)
		count = 0;
	for (int d = 0; d < count && n < EMBER_MAX_DEVICES; d++) {
		int concurrent = 0;
		if (EMBER_REAL(cuDeviceGetAttribute)(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
						     d) == CUDA_SUCCESS &&
		    concurrent)
			gpus[n++] = d;
	}
	ngpus = n;
}

CUresult ember_placement_advise(struct ember_alloc *a)
{
	pthread_once(&gpus_once, find_gpus);
	if (a->size == 0)
		return CUDA_SUCCESS;
	CUmemLocation host = { .type = CU_MEM_LOCATION_TYPE_HOST, .id = 0 };
	CUresult r = EMBER_REAL(cuMemAdvise_v2)(a->base, a->size, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host);
	for (int i = 0; r == CUDA_SUCCESS && i < ngpus; i++) {
		CUmemLocation gpu = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = gpus[i] };
		r = EMBER_REAL(cuMemAdvise_v2)(a->base, a->size, CU_MEM_ADVISE_SET_ACCESSED_BY, gpu);
	}
	return r;
}

/* Room for a list of prepared migrations. */
struct todo {
	struct ember_migration *m;
	size_t n, cap;
};

static bool todo_push(struct todo *t, struct ember_migration m)
{
	if (!ember_grow(&t->m, t->n, &t->cap, sizeof *t->m, 16))
		return false;
	t->m[t->n++] = m;
	return true;
}

/* How far a batch of promotions may go, and how much one driver call moves. */
struct promotion_limits {
	uint64_t ceiling;    /* accounted bytes it may fill up to */
	uint32_t per_call;   /* regions per cuMemPrefetchAsync */
};

/*
 * A bulk split (the static prefix) moves large runs per call: one 2 GiB
 * prefetch runs at 48.7 GB/s against 44-47 for 64 MiB calls (DESIGN.md).
 * It fills to the high watermark, except for converted allocations, made
 * before the program's later small ones (activations, workspaces): those
 * stop at the low watermark and leave the gap for small allocations.
 */
static struct promotion_limits limits_for(const struct ember_alloc *a, bool bulk)
{
	const struct ember_device_account *acc = ember_account(a->device);
	uint32_t span = (uint32_t)(ember_cfg.span.bytes >> EMBER_REGION_SHIFT);
	uint32_t big = (uint32_t)((2ull << 30) >> EMBER_REGION_SHIFT);
	struct promotion_limits l = { acc->high, bulk && big > span ? big : span };
	if (a->kind == EMBER_ALLOC_CONVERTED && a->size > ember_cfg.span.bytes)
		l.ceiling = acc->low;
	return l;
}

/*
 * Prepare promotions of a's regions [r0, r1): runs of mapped, unhinted
 * regions, at most lim.per_call each, while the account stays under
 * lim.ceiling. Lock held. Returns the bytes reserved.
 */
static uint64_t prepare_limited(struct ember_alloc *a, uint32_t r0, uint32_t r1, CUcontext ctx, struct todo *t,
				struct promotion_limits lim)
{
	uint32_t span = lim.per_call;
	struct ember_device_account *acc = ember_account(a->device);
	uint64_t used = acc->resident + acc->other;
	uint64_t room = used < lim.ceiling ? lim.ceiling - used : 0, reserved = 0;
	for (uint32_t r = r0; r < r1 && !a->freed;) {
		if (a->regions[r].state != EMBER_REGION_MAPPED || a->regions[r].hinted) {
			r++;
			continue;
		}
		uint32_t first = r, count = 0;
		uint64_t bytes = 0;
		while (r < r1 && count < span && a->regions[r].state == EMBER_REGION_MAPPED && !a->regions[r].hinted &&
		       bytes + ember_region_bytes(a, r) <= room) {
			bytes += ember_region_bytes(a, r);
			count++;
			r++;
		}
		if (count == 0 || !todo_push(t, (struct ember_migration){ a, first, count, a->device, ctx }))
			break; /* the budget is full (or memory is short): stop here */
		for (uint32_t i = first; i < first + count; i++)
			a->regions[i].state = EMBER_REGION_PROMOTING;
		a->in_flight += count;
		a->refs++;
		acc->resident += bytes;
		room -= bytes;
		reserved += bytes;
	}
	ember_account_note_peak_locked(a->device);
	return reserved;
}

/* Promotions for a hint: one span per call, up to the high watermark. */
static uint64_t prepare_promotions(struct ember_alloc *a, uint32_t r0, uint32_t r1, CUcontext ctx, struct todo *t)
{
	return prepare_limited(a, r0, r1, ctx, t, limits_for(a, false));
}

/* Prepare demotions of a's resident regions in [r0, r1), in spans. Lock held. */
static uint64_t prepare_demotions(struct ember_alloc *a, uint32_t r0, uint32_t r1, CUcontext ctx, struct todo *t)
{
	uint32_t span = (uint32_t)(ember_cfg.span.bytes >> EMBER_REGION_SHIFT);
	uint64_t bytes = 0;
	for (uint32_t r = r0; r < r1 && !a->freed;) {
		if (a->regions[r].state != EMBER_REGION_RESIDENT || a->regions[r].hinted) {
			r++;
			continue;
		}
		uint32_t first = r, count = 0;
		while (r < r1 && count < span && a->regions[r].state == EMBER_REGION_RESIDENT && !a->regions[r].hinted) {
			bytes += ember_region_bytes(a, r);
			count++;
			r++;
		}
		if (!todo_push(t, (struct ember_migration){ a, first, count, -1, ctx }))
			break;
		for (uint32_t i = first; i < first + count; i++)
			a->regions[i].state = EMBER_REGION_DEMOTING;
		a->in_flight += count;
		a->refs++;
	}
	return bytes;
}

void ember_placement_promote_prefix(struct ember_alloc *a, const struct ember_launch_ctx *at, enum ember_order order)
{
	if (ember_cfg.mode < EMBER_MODE_STATIC || a->device < 0)
		return;
	struct todo t = { 0 };
	ember_regions_lock();
	prepare_limited(a, 0, a->nregions, at->ctx, &t, limits_for(a, true));
	ember_regions_unlock();
	ember_migrations_start(t.m, t.n, order, at->stream, at->per_thread);
	free(t.m);
}

/*
 * Call fn for each placed allocation overlapping [ptr, ptr + bytes), with
 * the regions [r0, r1) the range covers. Table locked by the caller; plain
 * allocations, which have no regions, are skipped.
 */
static void for_each_overlap(uint64_t ptr, uint64_t bytes,
			     void (*fn)(struct ember_alloc *a, uint32_t r0, uint32_t r1, void *arg), void *arg)
{
	for (uint64_t at = ptr, end = ptr + bytes; at < end;) {
		struct ember_alloc *a = ember_regions_find_locked(at);
		if (!a) {
			a = ember_regions_next_locked(at);
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

/* A hint's work: prepare moves over each covered range. */
struct hint {
	uint64_t (*prepare)(struct ember_alloc *, uint32_t, uint32_t, CUcontext, struct todo *);
	CUcontext ctx;
	struct todo todo;
	uint64_t total;
};

static void hint_range(struct ember_alloc *a, uint32_t r0, uint32_t r1, void *arg)
{
	struct hint *h = arg;
	if (a->device >= 0)
		h->total += h->prepare(a, r0, r1, h->ctx, &h->todo);
}

static int64_t over_range(CUdeviceptr ptr, size_t bytes,
			  uint64_t (*prepare)(struct ember_alloc *, uint32_t, uint32_t, CUcontext, struct todo *))
{
	if (!ember_active || ember_cfg.mode < EMBER_MODE_STATIC)
		return -1;
	struct hint h = { .prepare = prepare };
	EMBER_REAL(cuCtxGetCurrent)(&h.ctx);
	ember_regions_lock();
	for_each_overlap(ptr, bytes, hint_range, &h);
	ember_regions_unlock();
	ember_migrations_start(h.todo.m, h.todo.n, EMBER_ORDER_NONE, NULL, false);
	free(h.todo.m);
	return (int64_t)h.total;
}

EMBER_PUBLIC long long ember_promote(const void *ptr, size_t bytes)
{
	return over_range((CUdeviceptr)ptr, bytes, prepare_promotions);
}

EMBER_PUBLIC long long ember_evict(const void *ptr, size_t bytes)
{
	return over_range((CUdeviceptr)ptr, bytes, prepare_demotions);
}

void ember_placement_referenced(struct ember_alloc *a, const struct ember_launch_ctx *at)
{
	if (ember_cfg.mode != EMBER_MODE_STATIC)
		return;
	ember_regions_lock();
	bool first = !a->referenced;
	a->referenced = true;
	ember_regions_unlock();
	if (first)
		ember_placement_promote_prefix(a, at, EMBER_ORDER_STREAM);
}

static void mark_hinted(struct ember_alloc *a, uint32_t r0, uint32_t r1, void *arg)
{
	for (uint32_t r = r0; r < r1; r++)
		a->regions[r].hinted = 1;
}

void ember_placement_launch(struct ember_scan *scan, CUstream stream, bool per_thread)
{
	if (scan->n == 0)
		return;
	struct ember_launch_ctx at = { .stream = stream, .per_thread = per_thread };
	EMBER_REAL(cuCtxGetCurrent)(&at.ctx);
	if (ember_cfg.mode == EMBER_MODE_ADAPTIVE) {
		ember_adaptive_launch(scan, &at);
		return;
	}
	for (unsigned i = 0; i < scan->n; i++)
		ember_placement_referenced(scan->allocs[i], &at);
}

void ember_placement_app_hint(CUdeviceptr ptr, size_t bytes)
{
	ember_regions_lock();
	for_each_overlap(ptr, bytes, mark_hinted, NULL);
	ember_regions_unlock();
}

EMBER_PUBLIC int ember_region_info(const void *ptr, struct ember_region_info *out)
{
	if (!out)
		return -1;
	uint64_t addr = (uint64_t)(uintptr_t)ptr;
	ember_regions_lock();
	struct ember_alloc *a = ember_regions_find_locked(addr);
	int rc = -1;
	if (a && a->kind != EMBER_ALLOC_PLAIN && a->nregions) {
		const struct ember_region *r = &a->regions[(addr - a->base) >> EMBER_REGION_SHIFT];
		*out = (struct ember_region_info){ r->state, a->device, r->hinted, r->demand, r->score,
						   ember_policy_grace_left(r, ember_adaptive_now()) };
		rc = 0;
	}
	ember_regions_unlock();
	return rc;
}
