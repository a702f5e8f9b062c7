/* Reading an EMBER_TRACE file (include/ember/trace.h) into events. */
#ifndef EMBER_SIM_TRACE_H
#define EMBER_SIM_TRACE_H

#include <stdio.h>

#include "replay.h"

struct sim_trace_info {
	uint64_t budget;        /* from the first D line (device 0 preferred); 0 if none */
	unsigned high_pct, low_pct; /* that line's watermarks, in % of its budget (0: none) */
	uint64_t lines, events, skipped;
	uint64_t first_bad;     /* line number of the first skipped line, 0 if none */
	uint64_t working_set;   /* largest sum of live allocations */
	bool ended;             /* an E line was seen */
};

/* 0 on success (malformed lines are skipped and counted); -1 with one line
 * in err when the file cannot be read or its header is unknown. */
int sim_trace_read(FILE *f, const char *name, struct sim_events *e, struct sim_trace_info *info, char *err, size_t errlen);

#endif
