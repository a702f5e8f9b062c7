/* Stock Unified Memory: fault-driven migration in batches, the tree-based
 * neighbourhood (TBN) prefetcher, and age-based eviction of whole 2 MiB
 * chunks once device memory (the budget) is full. Also `prefetch`: the same
 * driver under an application that bulk-prefetches each range before each
 * launch. State is one 32-bit residency bitmap per 2 MiB block. */
#include <stdlib.h>
#include <string.h>

#include "variant.h"

struct blk {
	uint32_t res;              /* resident 64 KiB pages */
	struct blk *prev, *next;   /* age list: oldest migrated-in first */
};

struct alloc {
	uint64_t size, nblocks;
	struct blk *b;
};

struct uvm {
	const struct sim_profile *p;
	uint64_t vram, used;
	int64_t plain;             /* plain device memory: takes room from managed data */
	bool tbn, bulk;
	struct alloc *a;
	uint64_t na;
	struct blk age;            /* sentinel: age.next is the oldest chunk */
	uint64_t rng;
	uint64_t batch_fill;       /* fault events in the launch's open batch */
	struct blk *call_first;    /* oldest block the running prefetch call brought in, if protected */
	bool protect_own;
	struct sim_counts c;
};

static uint64_t rnd(struct uvm *u)
{
	/* splitmix64: fast, and the same stream for the same --seed */
	uint64_t z = (u->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void unlink_blk(struct blk *b)
{
	if (b->next) {
		b->prev->next = b->next;
		b->next->prev = b->prev;
		b->prev = b->next = NULL;
	}
}

static void to_young_end(struct uvm *u, struct blk *b)
{
	unlink_blk(b);
	b->prev = u->age.prev;
	b->next = &u->age;
	u->age.prev->next = b;
	u->age.prev = b;
}

static void *start(const struct sim_env *env, bool tbn, bool bulk)
{
	struct uvm *u = calloc(1, sizeof *u);
	if (!u)
		return NULL;
	u->p = env->profile;
	u->vram = env->budget;
	u->tbn = tbn;
	u->bulk = bulk;
	u->rng = env->seed * 0x2545f4914f6cdd1dull + 1;
	u->age.prev = u->age.next = &u->age;
	u->protect_own = sim_param_double(env->params, "prefetch_protect_own", 0) != 0;
	return u;
}

static void *start_uvm(const struct sim_env *e) { return start(e, true, false); }
static void *start_nopf(const struct sim_env *e) { return start(e, false, false); }
static void *start_prefetch(const struct sim_env *e) { return start(e, true, true); }

static struct alloc *get(struct uvm *u, uint64_t id)
{
	return id < u->na && u->a[id].b ? &u->a[id] : NULL;
}

static uint64_t uvm_alloc(void *v, uint64_t id, uint64_t size, unsigned flags, uint64_t now)
{
	struct uvm *u = v;
	if (!sim_grow_to(&u->a, &u->na, id, sizeof *u->a))
		return 0;
	struct alloc *a = &u->a[id];
	if (a->b)
		return 0; /* id reused without a free: keep the first */
	a->size = size;
	a->nblocks = (size + SIM_BLOCK - 1) / SIM_BLOCK;
	a->b = calloc(a->nblocks ? a->nblocks : 1, sizeof *a->b);
	return 0;
}

static void uvm_free(void *v, uint64_t id, uint64_t now)
{
	struct uvm *u = v;
	struct alloc *a = get(u, id);
	if (!a)
		return;
	for (uint64_t i = 0; i < a->nblocks; i++) {
		u->used -= (uint64_t)__builtin_popcount(a->b[i].res) * SIM_PAGE;
		unlink_blk(&a->b[i]);
	}
	free(a->b);
	memset(a, 0, sizeof *a);
}

static void uvm_plain(void *v, int64_t bytes, uint64_t now)
{
	((struct uvm *)v)->plain += bytes;
}

static uint64_t capacity(const struct uvm *u)
{
	int64_t c = (int64_t)u->vram - (u->plain > 0 ? u->plain : 0);
	return c > (int64_t)SIM_BLOCK ? (uint64_t)c : SIM_BLOCK;
}

/* Frees room for `bytes` by evicting the oldest chunks other than `keep`;
 * returns the write-back time. Evicted pages fault again on their next use. */
static double make_room(struct uvm *u, uint64_t bytes, const struct blk *keep)
{
	double ns = 0;
	uint64_t cap = capacity(u);
	struct blk *b = u->age.next;
	while (u->used + bytes > cap && b != &u->age) {
		struct blk *next = b->next;
		if (b == u->call_first)
			break; /* the rest came in with this prefetch call */
		if (b != keep) {
			uint64_t out = (uint64_t)__builtin_popcount(b->res) * SIM_PAGE;
			b->res = 0;
			unlink_blk(b);
			u->used -= out;
			u->c.evictions++;
			u->c.bytes_evicted += out;
			u->c.bytes_demoted += out;
			ns += (double)out / u->p->demote_gbps;
		}
		b = next;
	}
	return ns;
}

static uint32_t page_mask(uint64_t npages)
{
	return npages >= 32 ? 0xffffffffu : (1u << npages) - 1;
}

/* Figure 2: a node whose subtree is more than half resident (or faulted)
 * pulls in the rest of that subtree, bottom up, up to the whole block. */
static uint32_t tbn_expand(uint32_t r)
{
	for (unsigned s = 2; s <= 32; s *= 2) {
		uint32_t m = s == 32 ? 0xffffffffu : (1u << s) - 1;
		for (unsigned at = 0; at < 32; at += s) {
			uint32_t sub = m << at;
			if ((unsigned)__builtin_popcount(r & sub) * 2 > s)
				r |= sub;
		}
	}
	return r;
}

/* Which 64 KiB pages of the block the access reads, and how many 4 KiB fault
 * events each would raise if it is not resident. */
static uint32_t pages_needed(struct uvm *u, uint64_t bytes, uint64_t touched, enum sim_pattern pat,
			     uint8_t events[SIM_PAGES_PER_BLOCK])
{
	uint64_t np = (bytes + SIM_PAGE - 1) / SIM_PAGE;
	if (np > 32)
		np = 32;
	uint32_t all = page_mask(np);
	memset(events, 0, SIM_PAGES_PER_BLOCK);
	if (!np || !touched)
		return 0;
	uint64_t n;
	switch (pat) {
	case SIM_STREAM:
		memset(events, 16, np);
		return all;
	case SIM_PIECES: /* spread like strided elements, a piece each */
	case SIM_STRIDED: {
		unsigned elem = pat == SIM_PIECES ? SIM_PIECE_ELEM : SIM_STRIDED_ELEM;
		n = touched / elem ? touched / elem : 1;
		uint64_t spacing = bytes / n ? bytes / n : 1;
		if (spacing <= SIM_PAGE) {
			uint64_t per = SIM_PAGE / spacing;
			memset(events, per >= 16 ? 16 : (int)per, np);
			return all;
		}
		uint32_t m = 0;
		for (uint64_t k = 0; k < n; k++) {
			uint64_t pg = k * spacing / SIM_PAGE;
			if (pg < np) {
				m |= 1u << pg;
				events[pg] = 1;
			}
		}
		return m;
	}
	case SIM_SPARSE: {
		uint64_t pg = rnd(u) % np;
		uint64_t ev = (touched + SIM_SMALL_PAGE - 1) / SIM_SMALL_PAGE;
		events[pg] = ev > 16 ? 16 : (uint8_t)ev;
		return 1u << pg;
	}
	case SIM_RANDOM:
		break;
	}
	n = touched / SIM_RANDOM_ELEM ? touched / SIM_RANDOM_ELEM : 1;
	if (n >= 4 * 16 * np) { /* dense enough to hit every 4 KiB page */
		memset(events, 16, np);
		return all;
	}
	uint64_t small[8] = { 0 }; /* 512 bits: the block's 4 KiB pages */
	uint32_t m = 0;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t pos = rnd(u) % bytes;
		uint64_t s = pos / SIM_SMALL_PAGE;
		if (!(small[s / 64] >> (s % 64) & 1)) {
			small[s / 64] |= 1ull << (s % 64);
			events[s / 16]++;
		}
		m |= 1u << (s / 16);
	}
	return m;
}

/* Brings `want` pages of block b in, evicting as needed; returns the time. */
static double migrate_in(struct uvm *u, struct blk *b, uint32_t want, double gbps)
{
	uint64_t bytes = (uint64_t)__builtin_popcount(want) * SIM_PAGE;
	if (!bytes)
		return 0;
	double ns = make_room(u, bytes, b);
	b->res |= want;
	u->used += bytes;
	to_young_end(u, b);
	u->c.bytes_promoted += bytes;
	u->c.migrations++;
	return ns + (double)bytes / gbps;
}

static double uvm_access(void *v, uint64_t id, uint64_t block, uint64_t bytes, uint64_t touched,
			 enum sim_pattern pat, bool write, uint64_t now)
{
	struct uvm *u = v;
	struct alloc *a = get(u, id);
	if (!a || block >= a->nblocks) /* unknown memory: read it as if mapped */
		return sim_read_cost(u->p, SIM_TIER_MAPPED, bytes, touched, pat);
	struct blk *b = &a->b[block];
	uint8_t events[SIM_PAGES_PER_BLOCK];
	uint32_t need = pages_needed(u, bytes, touched, pat, events);
	uint32_t miss = need & ~b->res;
	double ns = sim_read_cost(u->p, SIM_TIER_DEVICE, bytes, touched, pat);
	if (!miss)
		return ns;
	uint64_t ev = 0;
	for (unsigned i = 0; i < 32; i++)
		if (miss >> i & 1)
			ev += events[i];
	u->c.faults += ev;
	/* Batches open as faults arrive; each costs its service time. */
	uint64_t per = (uint64_t)u->p->fault_batch_pages ? (uint64_t)u->p->fault_batch_pages : 1;
	uint64_t opened = (u->batch_fill + ev + per - 1) / per - (u->batch_fill + per - 1) / per;
	u->batch_fill += ev;
	ns += (double)opened * u->p->fault_batch_us * 1e3;
	uint64_t valid_pages = (a->size - block * SIM_BLOCK + SIM_PAGE - 1) / SIM_PAGE;
	uint32_t want = miss;
	if (u->tbn)
		want = tbn_expand(b->res | miss) & ~b->res & page_mask(valid_pages);
	return ns + migrate_in(u, b, want, u->p->fault_migrate_gbps);
}

/* `prefetch`: cudaMemPrefetchAsync of every range, on the launch's stream. */
static uint64_t uvm_before(void *v, const struct sim_launch *l, uint64_t now)
{
	struct uvm *u = v;
	if (!u->bulk)
		return now;
	double ns = 0;
	uint64_t moved = 0;
	for (unsigned i = 0; i < l->n; i++) {
		const struct sim_range *r = &l->ranges[i];
		struct alloc *a = get(u, r->alloc_id);
		if (!a || !r->bytes)
			continue;
		uint64_t end = r->offset + r->bytes;
		if (end > a->size)
			end = a->size;
		for (uint64_t blk = r->offset / SIM_BLOCK; blk * SIM_BLOCK < end; blk++) {
			uint64_t lo = blk * SIM_BLOCK > r->offset ? blk * SIM_BLOCK : r->offset;
			uint64_t hi = (blk + 1) * SIM_BLOCK < end ? (blk + 1) * SIM_BLOCK : end;
			uint32_t pages = page_mask((hi - blk * SIM_BLOCK + SIM_PAGE - 1) / SIM_PAGE) &
					 ~page_mask((lo - blk * SIM_BLOCK) / SIM_PAGE);
			struct blk *b = &a->b[blk];
			uint32_t want = pages & ~b->res;
			uint64_t bytes = (uint64_t)__builtin_popcount(want) * SIM_PAGE;
			if (!bytes)
				continue;
			if (u->protect_own) {
				ns += make_room(u, bytes, b);
				if (u->used + bytes > capacity(u))
					continue; /* no room left but its own: stays host-side, faults later */
			}
			moved += bytes;
			ns += migrate_in(u, b, want, 1e300); /* transfer time is charged per call below */
			if (u->protect_own && !u->call_first)
				u->call_first = b;
		}
		u->call_first = NULL;
		ns += sim_promote_cost(u->p, 0, 1);
	}
	ns += sim_promote_cost(u->p, moved, 0);
	return now + (uint64_t)ns;
}

static void uvm_after(void *v, const struct sim_launch *l, uint64_t end)
{
	((struct uvm *)v)->batch_fill = 0; /* batches do not span launches */
}

static void uvm_advance(void *v, uint64_t now) {}

static void uvm_counts(void *v, struct sim_counts *out) { *out = ((struct uvm *)v)->c; }

static void uvm_finish(void *v)
{
	struct uvm *u = v;
	for (uint64_t i = 0; i < u->na; i++)
		free(u->a[i].b);
	free(u->a);
	free(u);
}

#define UVM_VARIANT(var, nm, st)                                                                           \
	const struct sim_variant var = {                                                                   \
		.name = nm, .start = st, .alloc = uvm_alloc, .free = uvm_free, .before_launch = uvm_before, \
		.access = uvm_access, .after_launch = uvm_after, .advance = uvm_advance,                    \
		.counts = uvm_counts, .finish = uvm_finish, .plain = uvm_plain,                              \
	}

UVM_VARIANT(sim_variant_uvm, "uvm", start_uvm);
UVM_VARIANT(sim_variant_uvm_noprefetch, "uvm-noprefetch", start_nopf);
UVM_VARIANT(sim_variant_prefetch, "prefetch", start_prefetch);
