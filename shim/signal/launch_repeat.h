/*
 * Repeated launches. A loop that launches one kernel with the same
 * arguments again and again (a solver's step, a benchmark, a decode step
 * over the same buffers) is scanned to the same result every time, and
 * the scan, the kernel table and the monitor's extents cost it locks and
 * work at every launch: 0.6 us on a launch of 0.1 us, adaptive on the
 * simulated driver (ember-callbench --launch).
 *
 * So each thread keeps the scan of its last launch, with the references
 * it took. A launch of the same kernel on the same stream with the same
 * argument bytes gets that scan back, marked as a repeat, when nothing it
 * was made from has changed: the kernel table's generation is the same,
 * no allocation was made since (the table's next_id), and none of the
 * allocations it references was freed. Then the scan is exactly what a
 * new one would find, and placement treats it as one (the monitor reuses
 * its extents: monitor.h). The references kept hold the records (never
 * the memory) of allocations freed since, until the thread's next
 * scanned launch or its exit.
 */
#ifndef EMBER_LAUNCH_REPEAT_H
#define EMBER_LAUNCH_REPEAT_H

#include <cuda.h>
#include <stdbool.h>

#include "launch_scan.h"

/*
 * This launch's scan, from this thread's kept one: the same scan with
 * repeat set if this launch repeats it, else a new scan, kept in its
 * place. NULL when the thread has no room to keep one (scan it the usual
 * way). Hand it back with ember_repeat_done, never ember_scan_release.
 */
struct ember_scan *ember_repeat_scan(CUfunction f, struct ember_grid grid, void **kernel_params, void **extra,
				     CUstream stream, bool per_thread);

/* The launch is placed: keep its scan for the next launch to compare with. */
void ember_repeat_done(struct ember_scan *s);

#endif
