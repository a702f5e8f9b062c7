/*
 * EMBER_SIM_HAZARDS: work on two streams that touches one allocation while
 * both may still run. The simulated driver does each piece of work at once,
 * in the order the host issues it, so what a GPU would overlap never shows
 * in the data; virtual time still says when each piece would run
 * (stream.c). A piece that writes an allocation before another stream's
 * work on it has ended, or reads one before another stream's write has,
 * would race on a GPU: a program, or Ember, that hands memory to a stream
 * before another is done with it (ember-torture's stream-ordered threads
 * against EMBER_KEEP_FREED). Each allocation keeps the latest end of the
 * work that wrote it and of the work that read it, and their streams.
 * Coarse by design (two streams on disjoint halves of one allocation are
 * reported), so it is off unless asked for. The first reports are printed;
 * the count is ember_sim_hazard_count()'s, and printed at exit.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"

#define SAID_AT_MOST 3

static unsigned long long hazards;

EMBER_SIM_API unsigned long long ember_sim_hazard_count(void)
{
	return __atomic_load_n(&hazards, __ATOMIC_RELAXED);
}

static void at_exit(void)
{
	unsigned long long n = ember_sim_hazard_count();
	if (n)
		fprintf(stderr, "ember-sim: %llu hazards in all (EMBER_SIM_HAZARDS)\n", n);
}

void sim_hazards_setup(void)
{
	if (sim_globals.hazards)
		atexit(at_exit);
}

/* Whether use, another stream's, may still run at start; said if so. */
static bool clash(const struct sim_use *use, const struct sim_stream *s, uint64_t start, bool write,
		  const char *what, uintptr_t base, const char *earlier)
{
	if (!use->stream || use->stream == s || start >= use->end_ns)
		return false;
	if (__atomic_add_fetch(&hazards, 1, __ATOMIC_RELAXED) <= SAID_AT_MOST)
		fprintf(stderr,
			"ember-sim: hazard: %s on stream %p %s the allocation at %#lx from %.3f us, while stream "
			"%p's %s of it runs until %.3f us\n",
			what, (const void *)s, write ? "writes" : "reads", (unsigned long)base, start / 1e3,
			(const void *)use->stream, earlier, use->end_ns / 1e3);
	return true;
}

void sim_hazard_note(uintptr_t p, size_t bytes, bool write, const struct sim_stream *s, uint64_t start,
		     uint64_t end, const char *what)
{
	if (!sim_globals.hazards || !bytes)
		return;
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find(p);
	if (a) {
		bool said = clash(&a->last_write, s, start, write, what, a->base, "write");
		if (write && !said)
			clash(&a->last_read, s, start, write, what, a->base, "read");
		struct sim_use *use = write ? &a->last_write : &a->last_read;
		if (use->stream == s || end >= use->end_ns) /* the one that ends last is the one to clash with */
			*use = (struct sim_use){ s, end };
	}
	pthread_mutex_unlock(&sim_mem_lock);
}
