/* What a row-by-row dynamic programme's kernels read of the grid they are given whole (rows.c). */
#ifndef EMBER_SIM_ROWS_H
#define EMBER_SIM_ROWS_H

#include <stddef.h>

#include "replay.h"

/*
 * The suite's pathfinder.cu passes its kernel the grid's base pointer and
 * the row as a scalar, with two row buffers (src, dst): one launch a row,
 * rows 1 to rows-1 in order after each ember_flush (X). The launch scan
 * credits the whole grid, which a replay charges as read; this keeps that
 * as the scan's guess and gives the kernel the launch's row instead. A row
 * launch has three ranges: two of one size (the row buffers) and one a
 * whole multiple of it (the grid). Returns how many launches it changed,
 * or -1 out of memory (those changed so far stay changed).
 */
long sim_row_reads(struct sim_events *trace);

#endif
