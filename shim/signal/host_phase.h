/*
 * Host phases: the program waited for the GPU, then ran on the host long
 * enough to take page faults before its next launch. A host that reads
 * its results back takes the pages it reads from GPU memory (each a fault
 * into the UVM driver), and with the UVM event queue closed Ember is told
 * nothing of it: on the H200, the warm runs of pathfinder and BFS at 0.5x
 * of the budget then faulted their data back to the GPU page by page
 * (pathfinder 0.45 s a run against 0.08 s resident). After such a phase,
 * each allocation's resident regions are prefetched to the GPU again at
 * the first launch that references it (placement.c; ordered before the
 * launch unless the allocation has read-mostly advice, read_dup.h): one
 * prefetch moves back what the host took, and costs little where it took
 * nothing.
 *
 * The signal is the process's page-fault count (getrusage), read at the
 * end of each synchronising call and at the first launch after it: at
 * least EMBER_REFRESH_FAULTS faults in between is a host phase. A launch
 * with no synchronisation before it pays one load.
 *
 * A refresh of what never left costs about a millisecond a GiB (4 GiB in
 * 3.4 ms on the H200: tools/bench/results/suite/promote-probe.json), and a
 * training loop takes faults between its steps (its data loading), so a
 * phase must also have lasted ten times what refreshing everything
 * resident would cost: a refresh never costs more than a tenth of the host
 * time before it.
 */
#ifndef EMBER_HOST_PHASE_H
#define EMBER_HOST_PHASE_H

#include <stdbool.h>
#include <stdint.h>

/* What refreshing a GiB that never left costs, rounded up (above). */
#define EMBER_REFRESH_NS_PER_GIB 1000000u

/*
 * Shorter than this, a phase is not looked at (the launch reads no fault
 * count): the host takes a UVM page fault in about 0.74 us (a page in each
 * 4 KiB of 4 GiB read back in 0.78 s on the H200), so the 256 that make a
 * phase take longer, and a loop that launches and waits pays one
 * getrusage per turn, not two.
 */
#define EMBER_HOST_PHASE_MIN_NS 100000u

/*
 * The worker, while no launch comes: whether a host phase is under way
 * with the GPU idle (the same test as at a launch, made while it lasts,
 * once every stream launched on has been waited for: gpu_busy.h; the first
 * poll that sees it declares it, or else the launch after it does). Then
 * the program's kernels are done, and the episode of launches before it
 * is over (policy.h): *ended is its number. It stays true at each poll
 * until a launch comes, so that the episode's exchange can be tried again
 * once residents still in their grace when the phase began are out of it;
 * *first says whether this poll declared it.
 */
bool ember_host_phase_poll(uint64_t (*resident)(void *arg), void *arg, uint32_t *ended, bool *first);

/* Host phases so far: the episode launches are credited to. */
uint32_t ember_host_phase_current(void);

/* A synchronising call returned (cuStreamSynchronize, cuCtxSynchronize, a blocking copy to the host, ...). */
void ember_host_phase_sync(void);

/*
 * At a launch: the current host phase, 0 while there has been none. It
 * changes when the launch ends a host phase (the first after a sync, with
 * enough faults and time since). resident(arg) gives the bytes a refresh
 * would cover, asked only when a sync came before the launch.
 */
uint32_t ember_host_phase_at_launch(uint64_t (*resident)(void *arg), void *arg);

#endif
