/* A grid read a row a launch, not whole (rows.h). */
#include "rows.h"

#include <stdlib.h>
#include <string.h>

/* Which of the launch's ranges is the grid, or -1: two ranges of one size beside a multiple of it. */
static int grid_of(const struct sim_launch *l)
{
	if (l->n != 3)
		return -1;
	for (unsigned g = 0; g < 3; g++) {
		const struct sim_range *a = &l->ranges[(g + 1) % 3], *b = &l->ranges[(g + 2) % 3];
		uint64_t row = a->bytes, grid = l->ranges[g].bytes;
		if (row && b->bytes == row && grid > row && grid % row == 0)
			return (int)g;
	}
	return -1;
}

long sim_row_reads(struct sim_events *trace)
{
	long changed = 0;
	uint64_t row = 1; /* the first launch after a flush computes row 1 from row 0 */
	for (size_t i = 0; i < trace->n; i++) {
		if (trace->ev[i].kind == SIM_EV_MARK) {
			row = 1;
			continue;
		}
		if (trace->ev[i].kind != SIM_EV_LAUNCH)
			continue;
		struct sim_launch *l = &trace->ev[i].launch;
		int g = grid_of(l);
		if (g < 0)
			continue;
		uint64_t row_bytes = l->ranges[(g + 1) % 3].bytes, rows = l->ranges[g].bytes / row_bytes;
		struct sim_range *r = malloc((l->n + 1) * sizeof *r);
		if (!r)
			return -1;
		memcpy(r, l->ranges, l->n * sizeof *r);
		r[l->n] = (struct sim_range){ .alloc_id = r[g].alloc_id, .offset = r[g].offset + (row % rows) * row_bytes,
					      .bytes = row_bytes, .pattern = SIM_STREAM, .touched = row_bytes,
					      .seen = SIM_SEEN_KERNEL };
		r[g].seen = SIM_SEEN_SCAN; /* the scan's guess: the whole grid, not read */
		free((void *)l->ranges);
		l->ranges = r;
		l->n++;
		row++;
		changed++;
	}
	return changed;
}
