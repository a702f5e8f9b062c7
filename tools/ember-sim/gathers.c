/* Expert gathers: two experts of a stacked tensor, not all of it (gathers.h). */
#include "gathers.h"

enum { INDEX_MAX = 4096 };

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13; /* xorshift64: the same experts for the same seed */
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Which of the launch's ranges is the source (-1: not a gather). */
static int source_of(const struct sim_launch *l, unsigned ratio)
{
	if (l->n != 3)
		return -1;
	int index = -1;
	for (unsigned k = 0; k < 3; k++)
		if (l->ranges[k].bytes <= INDEX_MAX)
			index = index < 0 ? (int)k : -2;
	if (index < 0)
		return -1;
	unsigned a = index == 0 ? 1 : 0, b = index == 2 ? 1 : 2;
	const struct sim_range *x = &l->ranges[a], *y = &l->ranges[b];
	if (x->bytes == (uint64_t)ratio * y->bytes && x->bytes % ratio == 0)
		return (int)a;
	if (y->bytes == (uint64_t)ratio * x->bytes && y->bytes % ratio == 0)
		return (int)b;
	return -1;
}

long sim_gather_reads(struct sim_events *trace, unsigned experts, unsigned top_k, uint64_t seed)
{
	if (!top_k || top_k >= experts || experts > 64 || experts % top_k)
		return 0;
	unsigned ratio = experts / top_k;
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	long changed = 0;
	for (size_t i = 0; i < trace->n; i++) {
		if (trace->ev[i].kind != SIM_EV_LAUNCH)
			continue;
		struct sim_launch *l = &trace->ev[i].launch;
		int src = source_of(l, ratio);
		if (src < 0)
			continue;
		const struct sim_range *whole = &l->ranges[src];
		uint64_t expert = whole->bytes / experts, picked = 0 /* a bit an expert */, offsets[64];
		for (unsigned k = 0; k < top_k; k++) {
			unsigned e = (unsigned)(next(&s) % experts);
			while (picked >> e & 1)
				e = (e + 1) % experts;
			picked |= 1ull << e;
			offsets[k] = whole->offset + e * expert;
		}
		/* the whole tensor the scan's guess, two experts read */
		if (sim_launch_reads_instead(l, (unsigned)src, offsets, top_k, expert))
			return -1; /* launches changed so far stay changed: each is whole */
		changed++;
	}
	return changed;
}
