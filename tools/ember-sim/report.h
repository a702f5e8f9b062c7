/* Printing results: an aligned table or one JSON object per line. */
#ifndef EMBER_SIM_REPORT_H
#define EMBER_SIM_REPORT_H

#include <stdio.h>

#include "replay.h"

struct sim_row {
	const char *workload, *variant;
	uint64_t working_set, budget;
	const struct sim_result *r;
	long long trace_skipped;      /* < 0: not a trace */
};

void sim_report_header(FILE *out, bool sweep);
void sim_report_row(FILE *out, const struct sim_row *row, bool json, bool sweep);

#endif
