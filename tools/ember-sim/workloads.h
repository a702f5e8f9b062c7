/* Built-in workloads: each turns its options into an event list. */
#ifndef EMBER_SIM_WORKLOADS_H
#define EMBER_SIM_WORKLOADS_H

#include "replay.h"

struct sim_wl_opts {
	uint64_t working_set;   /* bytes the workload's allocations add up to */
	uint64_t seed;
	unsigned passes;        /* launches / passes / queries / diagonals; 0: the workload's default */
	double drift_pct;       /* window: how far the window moves per launch, % of its size */
	unsigned tokens;        /* decode */
	unsigned layers;        /* decode */
	uint64_t stride;        /* strided: bytes between elements */
	unsigned reads;         /* random: 4-byte reads per 2 MiB block per launch */
};

void sim_wl_defaults(struct sim_wl_opts *o);
/* Fills e; -1 and one line in err for an unknown name or unusable options. */
int sim_workload_build(const char *name, const struct sim_wl_opts *o, struct sim_events *e, char *err, size_t errlen);
/* "reread, strided, ...": for --help and errors. */
const char *sim_workload_names(void);

#endif
