/*
 * The peer tier (issue 13, part 2). First the decision, pure: a region hot
 * on GPU `reader` whose budget has no room for it may live on another GPU
 * that has room, mapped to `reader` over the peer link, when the
 * peer-read rate measured between them beats reading it from host memory
 * through the mapping (ember_peer_pick). Then the tier in placement, below.
 * The simulated driver models the reads and the link (sim/cost.h
 * SIM_PEER_BPS, sim/peers.c); the rates on real GPUs are the x2 machine's
 * to measure, and have not been.
 */
#ifndef EMBER_PEER_H
#define EMBER_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "ops.h"
#include "regions.h"

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

/*
 * The peer tier in placement: regions of an allocation
 * placed for GPU A (its `device`) that A's budget has no room for are lent
 * to another GPU B whose budget has room (ember_peer_pick, peer.h), and A
 * reads them there over the peer link instead of from host memory.
 *
 * The region table keeps such regions MAPPED: A's account does not hold
 * them, and A's own policy may still promote them (the prefetch then takes
 * them from B to A). This table says where they are, and charges them to
 * B's account, below B's low watermark. B's own use comes first: a launch
 * on B whose own allocations have mapped regions that B's room cannot take
 * sends lent regions back to host memory, before B's own promotions, and
 * nothing is lent to B again until B's launches have been quiet for a
 * while (the policy's stale period).
 *
 * Pure, like the policy: each call below runs with the region table
 * locked, nothing calls the driver, and decisions come back as peer moves
 * to issue through the operations seam (ops.h peer_place): the last part
 * of this file does that.
 * The shim's glue is shim/mech/gpus.c; ember-sim's is
 * tools/ember-sim/variant_ember.c. The region table keeps no GPU per
 * region, and moves.c's accounts are left as they were: this table is
 * the peer tier's own.
 */
/* One allocation with regions lent (or once lent): where each is. */
struct ember_peer_entry {
	struct ember_alloc *a; /* a reference held, until ember_peer_forget */
	int reader;            /* the GPU the regions were lent for (a->device then) */
	int8_t *holder;        /* per region: the GPU holding it for the reader; -1: none */
	uint32_t lent;         /* regions lent now */
};

/* The peer tier's figures for one GPU, for the statistics. */
struct ember_peer_stats {
	uint64_t held;       /* bytes it holds for other GPUs now */
	uint64_t placed;     /* bytes placed on it for other GPUs, in all */
	uint64_t pushed_out; /* bytes its own demand sent back to host memory */
	uint64_t borrowed;   /* bytes of its own allocations placed on peers, in all */
};

struct ember_peer_tier {
	struct ember_link_rates rates;
	uint32_t known[EMBER_MAX_DEVICES];       /* bit h of known[r]: the link r reads h over was asked for */
	uint64_t quiet_until[EMBER_MAX_DEVICES]; /* nothing is lent to d before (its own demand pushed some out) */
	struct ember_peer_stats stats[EMBER_MAX_DEVICES];
	struct ember_peer_entry *v;
	size_t n, cap;
};

/* Regions [first, first + count) of a: onto GPU `to` for `reader` (to >= 0), or back to host memory from `from`. */
struct ember_peer_move {
	struct ember_alloc *a;
	uint32_t first, count;
	int to, from, reader;
};

struct ember_peer_moves {
	struct ember_peer_move *v;
	size_t n, cap;
};

void ember_peer_moves_free(struct ember_peer_moves *m);
uint64_t ember_peer_move_bytes(const struct ember_peer_move *m);

/* Forget everything, accounts left as they are; the references held are dropped (table locked, or no other thread). */
void ember_peer_tier_reset(struct ember_peer_tier *t);

/* What the link from reader to holder's memory measured (bytes/s; peer 0: no peer access). */
void ember_peer_set_link(struct ember_peer_tier *t, int reader, int holder, double peer_bps, double host_bps);
bool ember_peer_link_known(const struct ember_peer_tier *t, int reader, int holder);

/*
 * Whether the peer tier could take something of reader's now: another GPU
 * of `usable` is known, and reader's budget is full (less than a region of
 * room under its high watermark). A cheap test before measuring links.
 */
bool ember_peer_wanted(const struct ember_peer_tier *t, const struct ember_accounts *accs, int reader,
		       uint32_t usable);

/*
 * Bring the table up to date with the region table: regions no longer
 * mapped (promoted by the policy, or hinted by the application) leave their
 * holder's account; regions of an allocation now placed for another GPU
 * than they were lent for go back to host memory (moves appended).
 */
void ember_peer_sync(struct ember_peer_tier *t, struct ember_table *table, struct ember_peer_moves *out);

/*
 * After a launch on reader referencing allocs[n], its own placement done:
 * the mapped, unhinted regions of those placed for reader that reader's
 * budget cannot take are lent to the GPUs ember_peer_pick chooses among
 * `usable` (less those quiet after a push-out, before now), and charged
 * to them. Returns the bytes lent.
 */
uint64_t ember_peer_lend(struct ember_peer_tier *t, struct ember_accounts *accs, int reader,
			 struct ember_alloc *const *allocs, size_t n, uint32_t usable, uint64_t now,
			 struct ember_peer_moves *out);

/*
 * Bytes of holder's own demand at a launch on holder referencing allocs[n]:
 * mapped, unhinted regions of those placed for it that its placement may
 * promote now (adaptive: any; static: those not yet split).
 */
uint64_t ember_peer_own_need(const struct ember_peer_tier *t, int holder, struct ember_alloc *const *allocs,
			     size_t n, bool adaptive);

/*
 * Holder's own demand of `need` bytes comes first: while its room under
 * the high watermark is short of it, regions it holds for others go back
 * to host memory (moves appended, charges returned now), and nothing is
 * lent to it again before now + quiet_ns. Returns the bytes pushed out.
 */
uint64_t ember_peer_push_out(struct ember_peer_tier *t, struct ember_accounts *accs, int holder, uint64_t need,
			     uint64_t now, uint64_t quiet_ns, struct ember_peer_moves *out);

/* A peer move could not be issued: a loan is undone, a push-out leaves the regions lent and charged. */
void ember_peer_failed(struct ember_peer_tier *t, struct ember_accounts *accs, const struct ember_peer_move *m);

/*
 * a was freed (removed from the region table): its lent regions leave their
 * holders' accounts and the table's reference is dropped (the last one
 * frees it, as ember_alloc_put does).
 */
void ember_peer_forget(struct ember_peer_tier *t, struct ember_accounts *accs, struct ember_alloc *a);

/*
 * The driver moved regions [r0, r1) of a to host memory on its own (the
 * UVM event queue: the holder evicted them, or the host touched them):
 * those lent leave their holder's account. Returns the bytes.
 */
uint64_t ember_peer_displaced(struct ember_peer_tier *t, struct ember_accounts *accs, struct ember_alloc *a,
			      uint32_t r0, uint32_t r1);

/* Where region r of a is lent (its holder), or -1. */
int ember_peer_holder(const struct ember_peer_tier *t, const struct ember_alloc *a, uint32_t r);

/*
 * Carried out through the operations seam (ops.h peer_link, peer_place),
 * the same for the shim (shim/mech/gpus.c, on the driver) and ember-sim
 * (on virtual time). These take the table lock themselves, and call the
 * backend without it.
 */
struct ember_peer_seam {
	struct ember_peer_tier *tier;
	struct ember_table *table; /* its lock guards the tier too */
	const struct ember_ops *ops;
	void *ops_self;
	/* each peer move issued (result 0) or not (the backend's error); may be NULL */
	void (*note)(void *arg, const struct ember_peer_move *m, int result);
	/* a link measured for the first time (result: the backend's); may be NULL */
	void (*measured)(void *arg, int reader, int holder, int result, double peer_bps, double host_bps);
	void *arg;
};

/* Whether the backend has the peer tier's two operations. */
bool ember_peer_seam_on(const struct ember_peer_seam *s);

/*
 * After the placement of a launch on at->device referencing allocs[n]:
 * the tier brought up to date (ember_peer_sync), and when the GPU's budget
 * is full, the links to the GPUs of `usable` measured (once each) and what
 * its budget cannot take lent (ember_peer_lend); the moves issued from at,
 * the launch ordered after them (stream_wait, EMBER_ORDER_STREAM).
 * Returns the bytes lent.
 */
uint64_t ember_peer_after_launch(const struct ember_peer_seam *s, const struct ember_at *at,
				 struct ember_alloc *const *allocs, size_t n, uint32_t usable);

/*
 * Before the placement of a launch on at->device referencing allocs[n]:
 * what that GPU holds for others gives way to its own demand
 * (ember_peer_own_need, ember_peer_push_out), issued from at ahead of its
 * own promotions. Returns the bytes pushed out.
 */
uint64_t ember_peer_before_launch(const struct ember_peer_seam *s, const struct ember_at *at,
				  struct ember_alloc *const *allocs, size_t n, bool adaptive, uint64_t quiet_ns);

#endif
