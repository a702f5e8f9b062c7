/*
 * EMBER_SIM_HAZARDS: work on two streams that touches one allocation while
 * both may still run. The simulated driver does each piece of work at once,
 * in the order the host issues it, so what a GPU would overlap never shows
 * in the data; virtual time still says when each piece would run
 * (stream.c). A piece that writes an allocation before another stream's
 * work on it has ended, or reads one before another stream's write has,
 * would race on a GPU: a program, or Ember, that hands memory to a stream
 * before another is done with it (ember-torture's stream-ordered threads
 * against EMBER_KEEP_FREED). Each allocation keeps the latest uses of
 * its bytes, by range, stream and whether they wrote, the SIM_USES that end
 * last: two streams on disjoint parts of one allocation (tensors of one
 * segment of PyTorch's cache) do not clash. An older use pushed out by
 * newer ones is no longer checked, so a clash with it may go unreported.
 * Off unless asked for. The first reports are printed; the count is
 * ember_sim_hazard_count()'s, and printed at exit.
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

/* Whether use, another stream's, may still run at start over the same bytes, one of the two writing. */
static bool clashes(const struct sim_use *use, const struct sim_use *now, uint64_t start)
{
	return use->stream && use->stream != now->stream && start < use->end_ns && use->lo < now->hi &&
	       now->lo < use->hi && (use->write || now->write);
}

static void say(const struct sim_use *use, const struct sim_use *now, uint64_t start, const char *what)
{
	if (__atomic_add_fetch(&hazards, 1, __ATOMIC_RELAXED) <= SAID_AT_MOST)
		fprintf(stderr,
			"ember-sim: hazard: %s on stream %p %s [%#lx, %#lx) from %.3f us, while stream %p's %s of "
			"[%#lx, %#lx) runs until %.3f us\n",
			what, (const void *)now->stream, now->write ? "writes" : "reads", (unsigned long)now->lo,
			(unsigned long)now->hi, start / 1e3, (const void *)use->stream, use->write ? "write" : "read",
			(unsigned long)use->lo, (unsigned long)use->hi, use->end_ns / 1e3);
}

/* Where now is kept: a use of the same stream and kind that covers it, else the one that ends first. */
static struct sim_use *slot_for(struct sim_alloc *a, const struct sim_use *now)
{
	struct sim_use *first = &a->uses[0];
	for (struct sim_use *u = a->uses; u < a->uses + SIM_USES; u++) {
		if (u->stream == now->stream && u->write == now->write && u->lo <= now->lo && now->hi <= u->hi)
			return u;
		if (u->end_ns < first->end_ns)
			first = u;
	}
	return first;
}

void sim_hazard_note(uintptr_t p, size_t bytes, bool write, const struct sim_stream *s, uint64_t start,
		     uint64_t end, const char *what)
{
	if (!sim_globals.hazards || !bytes)
		return;
	struct sim_use now = { s, p, p + bytes, end, write };
	pthread_mutex_lock(&sim_mem_lock);
	struct sim_alloc *a = sim_alloc_find(p);
	if (a) {
		for (const struct sim_use *u = a->uses; u < a->uses + SIM_USES; u++)
			if (clashes(u, &now, start)) {
				say(u, &now, start, what);
				break;
			}
		struct sim_use *kept = slot_for(a, &now);
		if (kept->stream == s && kept->write == write && kept->lo <= now.lo && now.hi <= kept->hi)
			now = (struct sim_use){ s, kept->lo, kept->hi, end > kept->end_ns ? end : kept->end_ns, write };
		*kept = now;
	}
	pthread_mutex_unlock(&sim_mem_lock);
}
