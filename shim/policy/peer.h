/*
 * The peer tier (issue 13, part 2): the decision, pure, as the policy will
 * take it. A region hot on GPU `reader` whose budget has no room for it
 * may live on another GPU that has room, mapped to `reader` over the peer
 * link, when the peer-read rate measured between them beats reading it
 * from host memory through the mapping.
 *
 * Not yet wired into placement: an allocation is charged to one GPU
 * (ember_alloc.device), and a region on a peer needs its own (a GPU per
 * region in regions.h, its account in moves.c, a promote toward it through
 * the ops seam). The simulated driver models the reads (sim/cost.h,
 * SIM_PEER_BPS); the rates themselves are the x2 machine's to measure.
 */
#ifndef EMBER_PEER_H
#define EMBER_PEER_H

#include <stdint.h>

#include "budget.h"

/* Measured read rates, bytes per second; 0: unknown, or no link. */
struct ember_link_rates {
	double host_mapped_bps;                                 /* a GPU reading mapped host memory */
	double peer_bps[EMBER_MAX_DEVICES][EMBER_MAX_DEVICES]; /* [reader][holder]: reader reading holder's memory */
};

/*
 * Where a region of `bytes` hot on `reader` should live when the reader's
 * budget is full: the GPU of `usable` (bit d: GPU d, in use and with its
 * budget known) that reads fastest to `reader`, of those whose peer-read
 * rate beats host-mapped reads and that have room for it below their low
 * watermark (the gap above it stays theirs, for their own promotions); the
 * one with the most room among equal rates. -1: none, or the reader still
 * has room under its high watermark (then it is promoted there, as ever).
 */
int ember_peer_pick(const struct ember_accounts *accs, const struct ember_link_rates *rates, int reader,
		    uint64_t bytes, uint32_t usable);

/* How much faster `reader` reads a region held by `holder` than from host memory: the gain the rates predict (0: unknown). */
double ember_peer_predicted_gain(const struct ember_link_rates *rates, int reader, int holder);

#endif
