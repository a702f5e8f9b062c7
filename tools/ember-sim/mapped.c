/* `mapped`: every allocation host-resident and mapped into the GPU
 * (preferred location CPU, accessed-by GPU). Nothing faults, migrates or is
 * evicted, so it needs no state: the cost is the mapped tier's read cost. */
#include <stdlib.h>

#include "variant.h"

struct mapped {
	const struct sim_profile *p;
};

static void *mapped_start(const struct sim_env *env)
{
	struct mapped *m = calloc(1, sizeof *m);
	if (m)
		m->p = env->profile;
	return m;
}

/* Ember-mapped advises each allocation once, whole, on the allocating thread. */
static uint64_t mapped_alloc(void *v, uint64_t id, uint64_t size, unsigned flags, uint64_t now)
{
	return (uint64_t)sim_advise_cost(((struct mapped *)v)->p, size, 1);
}
static void mapped_free(void *v, uint64_t id, uint64_t now) {}
static uint64_t mapped_before(void *v, const struct sim_launch *l, uint64_t now) { return now; }

static double mapped_access(void *v, uint64_t id, uint64_t block, uint64_t bytes, uint64_t touched,
			    enum sim_pattern pat, bool write, uint64_t now)
{
	return sim_read_cost(((struct mapped *)v)->p, SIM_TIER_MAPPED, bytes, touched, pat);
}

static void mapped_after(void *v, const struct sim_launch *l, uint64_t end) {}
static enum sim_tier mapped_tier(void *v, uint64_t id, uint64_t block) { return SIM_TIER_MAPPED; }
static void mapped_advance(void *v, uint64_t now) {}
static void mapped_counts(void *v, struct sim_counts *out) { *out = (struct sim_counts){ 0 }; }
static void mapped_finish(void *v) { free(v); }

const struct sim_variant sim_variant_mapped = {
	.name = "mapped",
	.start = mapped_start,
	.alloc = mapped_alloc,
	.free = mapped_free,
	.before_launch = mapped_before,
	.access = mapped_access,
	.after_launch = mapped_after,
	.advance = mapped_advance,
	.counts = mapped_counts,
	.finish = mapped_finish,
	.tier_of = mapped_tier,
};

/* `resident`: everything in device memory from the start and nothing moved,
 * as if the GPU were large enough: the reference "everything resident". */
static uint64_t resident_alloc(void *v, uint64_t id, uint64_t size, unsigned flags, uint64_t now) { return 0; }

static double resident_access(void *v, uint64_t id, uint64_t block, uint64_t bytes, uint64_t touched,
			      enum sim_pattern pat, bool write, uint64_t now)
{
	return sim_read_cost(((struct mapped *)v)->p, SIM_TIER_DEVICE, bytes, touched, pat);
}

static enum sim_tier resident_tier(void *v, uint64_t id, uint64_t block) { return SIM_TIER_DEVICE; }

const struct sim_variant sim_variant_resident = {
	.name = "resident",
	.start = mapped_start,
	.alloc = resident_alloc,
	.free = mapped_free,
	.before_launch = mapped_before,
	.access = resident_access,
	.after_launch = mapped_after,
	.advance = mapped_advance,
	.counts = mapped_counts,
	.finish = mapped_finish,
	.tier_of = resident_tier,
};
