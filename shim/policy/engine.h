/*
 * The engine: carries the decisions of the policy and the static split out
 * through the operations seam, and finishes them into the table. It owns
 * no thread: an issued move is handed to `track` to be polled until done
 * (the shim's worker; ember-sim's event loop), and a move to be issued off
 * the caller's thread is handed to `defer`.
 */
#ifndef EMBER_ENGINE_H
#define EMBER_ENGINE_H

#include "ops.h"
#include "policy.h"

struct ember_engine {
	struct ember_policy_ctx *pc;
	const struct ember_ops *ops;
	void *ops_self;
	void (*track)(void *sink, struct ember_op *op); /* issued: poll it with ember_engine_poll */
	void (*defer)(void *sink, struct ember_op *op); /* not issued: issue it later with ember_engine_issue */
	void (*failed)(void *sink, const struct ember_op *op); /* a move failed (may be NULL) */
	/* a move is about to be finished into the table, after ns of device time (may be NULL) */
	void (*finished)(void *sink, const struct ember_op *op, bool ok, uint64_t ns);
	void *sink;
};

/* A new op for move m from at, or NULL when memory is short. */
struct ember_op *ember_engine_op(const struct ember_move *m, const struct ember_at *at);

/* Issue one op now. False when it could not be (freed meanwhile, or the backend refused). */
bool ember_engine_issue(struct ember_engine *e, struct ember_op *op);

/* Finish op into the table (ok or failed) and free it. */
void ember_engine_finish(struct ember_engine *e, struct ember_op *op, bool ok);

/* Poll an issued op: true when it finished (and is freed). */
bool ember_engine_poll(struct ember_engine *e, struct ember_op *op);

/*
 * Issue prepared moves now, in order, then order them before the launch or
 * the thread. Promotions queued behind a failed demotion would need its
 * room: they are dropped (their regions stay mapped for a later launch).
 * Takes ownership of the moves' references; frees moves->v.
 */
void ember_engine_start(struct ember_engine *e, struct ember_moves *moves, const struct ember_at *at,
			enum ember_order order);

/* Hand prepared moves to `defer`, to be issued off this thread. Frees moves->v. */
void ember_engine_defer(struct ember_engine *e, struct ember_moves *moves, const struct ember_at *at);

/*
 * Adaptive, at a launch on dev that references allocs[n] (their demand
 * already recorded at now): promote their hot regions, the launch waiting
 * for them on the GPU. Returns how many hot regions found no room. The
 * launch's demand and its promotion share one instant: a thread preempted
 * between them must not find its own demand gone cold.
 */
size_t ember_engine_launch_promote(struct ember_engine *e, int dev, uint64_t now, struct ember_alloc *const *allocs,
				   size_t n, const struct ember_at *at);

/* Adaptive, periodically: reclamation and replacement for dev, deferred. */
void ember_engine_reclaim(struct ember_engine *e, int dev, const struct ember_at *at);

/* Adaptive, at a host phase: the exchange that ends episode (ember_policy_episode_end), deferred. */
void ember_engine_episode_end(struct ember_engine *e, int dev, uint32_t episode, bool fill_room,
			      const struct ember_at *at);

/* Static: the split of a at its first reference, up to the watermark, ordered as asked. */
void ember_engine_split(struct ember_engine *e, struct ember_alloc *a, const struct ember_at *at,
			enum ember_order order);

#endif
