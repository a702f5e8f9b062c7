/* The access-counter model. */
#include <stdlib.h>

#include "counters.h"
#include "grow.h"

enum { SECTOR = 32, DEFAULT_COUNTERS = 256, DEFAULT_THRESHOLD = 256 };

int sim_counters_init(struct sim_counters *c, unsigned n, uint32_t threshold)
{
	*c = (struct sim_counters){ .n = n ? n : DEFAULT_COUNTERS, .threshold = threshold ? threshold : DEFAULT_THRESHOLD };
	c->v = calloc(c->n, sizeof *c->v);
	if (!c->v)
		return -1;
	for (unsigned i = 0; i < c->n; i++)
		c->v[i].region = UINT64_MAX;
	return 0;
}

void sim_counters_free(struct sim_counters *c)
{
	free(c->v);
	free(c->out);
	*c = (struct sim_counters){ 0 };
}

/* The counter of region, taking the least recently used one if it has none. */
static struct sim_counter *counter_for(struct sim_counters *c, uint64_t region)
{
	struct sim_counter *victim = &c->v[0];
	for (unsigned i = 0; i < c->n; i++) {
		if (c->v[i].region == region)
			return &c->v[i];
		if (c->v[i].region == UINT64_MAX || (victim->region != UINT64_MAX && c->v[i].used < victim->used))
			victim = &c->v[i];
	}
	if (victim->region != UINT64_MAX)
		c->lost += victim->count;
	*victim = (struct sim_counter){ .region = region };
	return victim;
}

static void notify(struct sim_counters *c, struct sim_counter *k, uint64_t now)
{
	if (ember_grow(&c->out, c->nout, &c->capout, sizeof *c->out, 64))
		c->out[c->nout++] = (struct ember_ac_record){
			.magic = EMBER_AC_MAGIC, .version = EMBER_AC_VERSION, .size = sizeof(struct ember_ac_record),
			.va = k->region << EMBER_AC_REGION_SHIFT, .count = k->count, .subregion_mask = k->mask,
			.timestamp_ns = now,
		};
	k->count = 0;
	k->mask = 0;
}

void sim_counters_access(struct sim_counters *c, uint64_t va, uint64_t bytes, uint64_t now)
{
	uint64_t end = va + (bytes ? bytes : 1);
	for (uint64_t at = va; at < end;) {
		uint64_t region = at >> EMBER_AC_REGION_SHIFT;
		uint64_t region_end = (region + 1) << EMBER_AC_REGION_SHIFT;
		uint64_t stop = end < region_end ? end : region_end;
		struct sim_counter *k = counter_for(c, region);
		k->used = ++c->clock;
		uint64_t sectors = (stop - at + SECTOR - 1) / SECTOR;
		for (uint64_t s = at; s < stop; s = (s | ((1ull << EMBER_AC_SUBREGION_SHIFT) - 1)) + 1)
			k->mask |= 1u << ((s >> EMBER_AC_SUBREGION_SHIFT) & 31);
		uint64_t sum = (uint64_t)k->count + sectors;
		k->count = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
		if (k->count >= c->threshold)
			notify(c, k, now);
		at = stop;
	}
}
