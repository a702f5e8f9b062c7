/* A star-schema join's lookups, in place of the streaming reads a trace names (lookups.h). */
#include "lookups.h"

enum { ROW_BYTES = 4, TABLE_FRACTION = 64 };

size_t sim_lookup_reads(struct sim_events *trace, uint64_t table_max)
{
	size_t changed = 0;
	for (size_t i = 0; i < trace->n; i++) {
		if (trace->ev[i].kind != SIM_EV_LAUNCH)
			continue;
		struct sim_launch *l = &trace->ev[i].launch;
		struct sim_range *r = (struct sim_range *)l->ranges; /* the event list owns them */
		uint64_t largest = 0;
		for (unsigned k = 0; k < l->n; k++)
			largest = r[k].bytes > largest ? r[k].bytes : largest;
		for (unsigned k = 0; k < l->n; k++) {
			if (!r[k].bytes || r[k].bytes > table_max || r[k].bytes > largest / TABLE_FRACTION)
				continue;
			r[k].pattern = SIM_RANDOM;
			r[k].touched = largest / ROW_BYTES * ROW_BYTES; /* a 4-byte read a row */
			changed++;
		}
	}
	return changed;
}
