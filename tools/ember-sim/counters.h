/*
 * The access-counter model: what a GPU's hardware counters would report
 * about reads of mapped memory, as records of include/ember/access_counter.h.
 * A fixed number of counters, each tracking one 2 MiB region; an access to
 * an untracked region takes a free counter, or the least recently used
 * one, whose count is lost; a counter that reaches the threshold raises a
 * notification and restarts from zero. Accesses are counted in 32-byte
 * sectors, the unit the GPU's memory requests come in.
 */
#ifndef EMBER_SIM_COUNTERS_H
#define EMBER_SIM_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "ember/access_counter.h"

struct sim_counter {
	uint64_t region;  /* va >> EMBER_AC_REGION_SHIFT, or UINT64_MAX when free */
	uint32_t count, mask;
	uint64_t used;    /* for least-recently-used replacement */
	unsigned older, newer; /* the recency list, by index (n: none) */
	unsigned chain;        /* the next counter in the same hash bucket (n: none) */
};

struct sim_counters {
	struct sim_counter *v;
	unsigned n;          /* how many counters the GPU has */
	uint32_t threshold;  /* sectors that raise a notification */
	uint64_t clock;
	unsigned *bucket;    /* region hash -> first counter of its chain (n: none); nbucket a power of two */
	unsigned nbucket;
	unsigned oldest, newest; /* the recency list's ends; free counters are the oldest */
	uint64_t lost;       /* counts dropped when a counter was taken for another region */
	struct ember_ac_record *out; /* notifications raised and not yet taken */
	size_t nout, capout;
};

/* n counters (0 gives 256) and a threshold in sectors (0 gives 256). -1 when memory is short. */
int sim_counters_init(struct sim_counters *c, unsigned n, uint32_t threshold);
void sim_counters_free(struct sim_counters *c);

/* A read of `bytes` at va, at time now; notifications it raises are appended to c->out. */
void sim_counters_access(struct sim_counters *c, uint64_t va, uint64_t bytes, uint64_t now);

#endif
