/*
 * The access-counter model. Lookups go through a hash of the region and the
 * least recently used counter is the tail of a recency list, so a sweep over
 * thousands of regions per launch costs a few steps per region, whatever the
 * number of counters; the behaviour is the plain fixed set with LRU.
 */
#include <stdlib.h>

#include "counters.h"
#include "grow.h"

enum { SECTOR = 32, DEFAULT_COUNTERS = 256, DEFAULT_THRESHOLD = 256 };

static unsigned hash(const struct sim_counters *c, uint64_t region)
{
	return (unsigned)((region * 0x9e3779b97f4a7c15ull) >> 32) & (c->nbucket - 1);
}

int sim_counters_init(struct sim_counters *c, unsigned n, uint32_t threshold)
{
	*c = (struct sim_counters){ .n = n ? n : DEFAULT_COUNTERS, .threshold = threshold ? threshold : DEFAULT_THRESHOLD };
	c->nbucket = 1;
	while (c->nbucket < 2 * c->n)
		c->nbucket *= 2;
	c->v = calloc(c->n, sizeof *c->v);
	c->bucket = malloc(c->nbucket * sizeof *c->bucket);
	if (!c->v || !c->bucket) {
		sim_counters_free(c);
		return -1;
	}
	for (unsigned b = 0; b < c->nbucket; b++)
		c->bucket[b] = c->n;
	/* every counter free, in one list: index 0 the oldest */
	for (unsigned i = 0; i < c->n; i++)
		c->v[i] = (struct sim_counter){ .region = UINT64_MAX, .older = i ? i - 1 : c->n,
						.newer = i + 1 < c->n ? i + 1 : c->n, .chain = c->n };
	c->oldest = 0;
	c->newest = c->n - 1;
	return 0;
}

void sim_counters_free(struct sim_counters *c)
{
	free(c->v);
	free(c->bucket);
	free(c->out);
	*c = (struct sim_counters){ 0 };
}

static void unlink_recency(struct sim_counters *c, unsigned i)
{
	struct sim_counter *k = &c->v[i];
	if (k->older < c->n)
		c->v[k->older].newer = k->newer;
	else
		c->oldest = k->newer;
	if (k->newer < c->n)
		c->v[k->newer].older = k->older;
	else
		c->newest = k->older;
}

static void make_newest(struct sim_counters *c, unsigned i)
{
	if (c->newest == i)
		return;
	unlink_recency(c, i);
	c->v[i].older = c->newest;
	c->v[i].newer = c->n;
	if (c->newest < c->n)
		c->v[c->newest].newer = i;
	c->newest = i;
	if (c->oldest >= c->n)
		c->oldest = i;
}

static void unhash(struct sim_counters *c, unsigned i)
{
	unsigned *at = &c->bucket[hash(c, c->v[i].region)];
	while (*at != i)
		at = &c->v[*at].chain;
	*at = c->v[i].chain;
}

/* The counter of region, taking the least recently used one if it has none. */
static struct sim_counter *counter_for(struct sim_counters *c, uint64_t region)
{
	unsigned b = hash(c, region);
	for (unsigned i = c->bucket[b]; i < c->n; i = c->v[i].chain)
		if (c->v[i].region == region) {
			make_newest(c, i);
			return &c->v[i];
		}
	unsigned victim = c->oldest;
	struct sim_counter *k = &c->v[victim];
	if (k->region != UINT64_MAX) {
		c->lost += k->count;
		unhash(c, victim);
	}
	k->region = region;
	k->count = 0;
	k->mask = 0;
	k->chain = c->bucket[b];
	c->bucket[b] = victim;
	make_newest(c, victim);
	return k;
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
