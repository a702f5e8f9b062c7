/* A grid read a row a launch, not whole (rows.h). */
#include "rows.h"

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
		uint64_t at = l->ranges[g].offset + (row % rows) * row_bytes;
		if (sim_launch_reads_instead(l, (unsigned)g, &at, 1, row_bytes)) /* the whole grid the scan's guess */
			return -1;
		row++;
		changed++;
	}
	return changed;
}
