/* What a recorded run's kernels read, taken from a built-in workload's model. */
#ifndef EMBER_SIM_OVERLAY_H
#define EMBER_SIM_OVERLAY_H

#include <stddef.h>

#include "replay.h"

/*
 * A trace names what the launch scan credited, which for a kernel passed
 * only base pointers is each pointer's whole allocation: a replay charges
 * that as read. Where a built-in workload models the same program, its
 * launches say what the kernels read; this gives the trace's launches,
 * in order, the model's ranges (the scan's guess among them, as the model
 * marks it), and keeps everything else the trace recorded: allocations,
 * issue times, streams, waits and marks. The model must have as many
 * launches as the trace, and each of its allocations must be in the trace
 * with the same id and size; else -1 and err says which.
 */
int sim_overlay_reads(struct sim_events *trace, const struct sim_events *model, char *err, size_t errlen);

#endif
