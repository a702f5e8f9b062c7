/*
 * Host phases: the program waited for the GPU, then ran on the host long
 * enough to take page faults before its next launch. A host that reads
 * its results back takes the pages it reads from GPU memory (each a fault
 * into the UVM driver), and with the UVM event queue closed Ember is told
 * nothing of it: on the H200, the warm runs of pathfinder and BFS at 0.5x
 * of the budget then faulted their data back to the GPU page by page
 * (pathfinder 0.45 s a run against 0.08 s resident). After such a phase,
 * each allocation's resident regions are prefetched to the GPU again at
 * the first launch that references it (placement.c): one prefetch moves
 * back what the host took, and costs little where it took nothing.
 *
 * The signal is the process's page-fault count (getrusage), read at the
 * end of each synchronising call and at the first launch after it: at
 * least EMBER_REFRESH_FAULTS faults in between is a host phase. A launch
 * with no synchronisation before it pays one load.
 */
#ifndef EMBER_HOST_PHASE_H
#define EMBER_HOST_PHASE_H

#include <stdbool.h>
#include <stdint.h>

/* A synchronising call returned (cuStreamSynchronize, cuCtxSynchronize, a blocking copy to the host, ...). */
void ember_host_phase_sync(void);

/*
 * At a launch: the current host phase, 0 while there has been none. It
 * changes when the launch ends a host phase (the first after a sync, with
 * enough faults since).
 */
uint32_t ember_host_phase_at_launch(void);

#endif
