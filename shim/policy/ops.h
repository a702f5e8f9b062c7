/*
 * The operations seam: everything placement needs from a GPU, as a table
 * of functions, the way DAMON puts its core behind struct damon_operations.
 * Two backends implement it: the driver (shim/mech/ops_driver.c: advice,
 * cuMemPrefetchAsync on a private stream, events) and virtual time
 * (ops_virtual.c: a copy engine that moves bytes at calibrated rates), on
 * which ember-sim and the policy tests run the same code as the shim.
 */
#ifndef EMBER_OPS_H
#define EMBER_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "moves.h"

/* Where moves are issued from: the launch they serve, if any. Opaque handles here. */
struct ember_at {
	void *ctx;       /* the driver context (CUcontext) */
	void *stream;    /* the launch's stream (CUstream) */
	bool per_thread; /* a _ptsz launch: stream 0 is the per-thread default stream */
	int device;      /* a launch's GPU (set by the shim's ember_placement_launch; 0 elsewhere) */
};

/* How the issuer waits for the moves it issued. */
enum ember_order {
	EMBER_ORDER_NONE,   /* not at all: they complete in the background */
	EMBER_ORDER_STREAM, /* the launch's stream waits for them on the GPU; the thread does not */
	EMBER_ORDER_SYNC,   /* the issuing thread waits until they complete */
};

/* A move on its way: the backend's handle for it. */
struct ember_op {
	struct ember_op *next;   /* for whoever tracks it */
	struct ember_move move;
	struct ember_at at;
	void *start, *end;       /* driver: its events */
	uint64_t t_start, t_end; /* virtual: when it runs */
	int error;               /* the backend's result (0: none) */
	bool issued;
};

enum ember_op_status { EMBER_OP_DONE, EMBER_OP_PENDING, EMBER_OP_FAILED };

struct ember_ops {
	/*
	 * Make a whole allocation mapped: host-preferred, accessed by the GPUs
	 * of a->accessed_by (every GPU when it is 0). 0 or the driver's error.
	 */
	int (*advise_mapped)(void *self, const struct ember_alloc *a);
	/* Add GPU dev to a whole allocation's accessed-by set (a GPU that starts using it). May be NULL. */
	int (*advise_access)(void *self, const struct ember_alloc *a, int dev);
	/* Start a move, ordered after everything issued before it in at's context. 0 or the error. */
	int (*promote)(void *self, struct ember_op *op);
	int (*demote)(void *self, struct ember_op *op);
	/*
	 * A promotion has completed, before its regions count as resident:
	 * what the backend put off until the bytes had landed (the driver's
	 * preferred-location advice for a large range). May be NULL.
	 */
	void (*settle)(void *self, struct ember_op *op);
	/* Whether an issued move has finished (op->error says why it failed). */
	enum ember_op_status (*completion)(void *self, struct ember_op *op);
	/* The device time a finished move took, in ns (0 when unknown). */
	uint64_t (*elapsed)(void *self, struct ember_op *op);
	/* Free what the backend keeps for op. */
	void (*release)(void *self, struct ember_op *op);
	/* Order what was issued so far in at's context before the launch (STREAM) or the thread (SYNC). */
	int (*stream_wait)(void *self, const struct ember_at *at, enum ember_order order);
	/* The policy's clock, in ns. */
	uint64_t (*now)(void *self);
	/*
	 * The peer tier (peer_tier.h); both may be NULL: no peer tier.
	 *
	 * peer_link: how fast GPU `reader` reads GPU `holder`'s memory and
	 * host memory, in bytes per second, measured once per pair from at's
	 * context; *peer_bps 0: no peer access between them (or not measured).
	 *
	 * peer_place: move op's regions onto GPU `to`, advised accessed-by
	 * `reader` (who reads them there over the peer link) and preferring
	 * `to`; or, for `to` < 0, back to host memory, preferring it. Issued
	 * like promote, ordered after what at's context issued before it, but
	 * with nothing to poll: stream_wait orders it like the others, and its
	 * caller counts it done once issued. 0 or the error.
	 */
	int (*peer_link)(void *self, const struct ember_at *at, int reader, int holder, double *peer_bps,
			 double *host_bps);
	int (*peer_place)(void *self, struct ember_op *op, int to, int reader);
};

/*
 * The virtual-time backend: one copy engine, calibrated rates, a clock its
 * owner advances. Advice costs the allocating thread, not the copy engine,
 * and by size: its owner charges it (ember-sim's profile), so advising here
 * is free.
 */
struct ember_virtual {
	uint64_t now;
	double promote_bytes_per_ns, demote_bytes_per_ns;
	uint64_t call_ns;           /* the cost of one prefetch call */
	uint64_t busy_until;        /* the copy engine runs moves one after another */
	uint64_t launch_ready_at;   /* a launch that waited (STREAM) starts no earlier */
	unsigned fail_promotions, fail_demotions; /* the next n of each fail (tests) */
	/* the peer tier: every pair of GPUs linked at peer_read_bps (0: no peer access), host reads at host_read_bps */
	double peer_read_bps, host_read_bps;
	uint64_t bytes_to_peers, bytes_from_peers; /* peer_place's moves, for the statistics */
};

extern const struct ember_ops ember_virtual_ops;

#endif
