/* Carrying out moves through the operations seam. */
#include <stdlib.h>

#include "engine.h"
#include "split.h"

struct ember_op *ember_engine_op(const struct ember_move *m, const struct ember_at *at)
{
	struct ember_op *op = calloc(1, sizeof *op);
	if (op) {
		op->move = *m;
		op->at = *at;
	}
	return op;
}

bool ember_engine_issue(struct ember_engine *e, struct ember_op *op)
{
	if (__atomic_load_n(&op->move.alloc->freed, __ATOMIC_ACQUIRE)) /* unlocked: cuMemFree sets it under the table lock */
		return false;
	op->error = op->move.promote ? e->ops->promote(e->ops_self, op) : e->ops->demote(e->ops_self, op);
	op->issued = op->error == 0;
	return op->issued;
}

void ember_engine_finish(struct ember_engine *e, struct ember_op *op, bool ok)
{
	uint64_t ns = ok ? e->ops->elapsed(e->ops_self, op) : 0;
	if (!ok && op->error && e->failed)
		e->failed(e->sink, op);
	if (e->finished)
		e->finished(e->sink, op, ok, ns);
	/* before the move finishes: a free waits for that, so the range is still the allocation's */
	if (ok && op->move.promote && e->ops->settle)
		e->ops->settle(e->ops_self, op);
	ember_move_finish(e->pc, &op->move, ok, ns, e->ops->now(e->ops_self));
	e->ops->release(e->ops_self, op);
	free(op);
}

bool ember_engine_poll(struct ember_engine *e, struct ember_op *op)
{
	enum ember_op_status s = e->ops->completion(e->ops_self, op);
	if (s == EMBER_OP_PENDING)
		return false;
	ember_engine_finish(e, op, s == EMBER_OP_DONE);
	return true;
}

/* A move that never became an op (no memory): finish it as failed. */
static void drop_move(struct ember_engine *e, const struct ember_move *m)
{
	ember_move_finish(e->pc, m, false, 0, e->ops->now(e->ops_self));
}

void ember_engine_start(struct ember_engine *e, struct ember_moves *moves, const struct ember_at *at,
			enum ember_order order)
{
	bool any = false, demotion_failed = false;
	for (size_t i = 0; i < moves->n; i++) {
		const struct ember_move *m = &moves->v[i];
		struct ember_op *op = ember_engine_op(m, at);
		if (!op) {
			demotion_failed |= !m->promote;
			drop_move(e, m);
			continue;
		}
		/* promotions queued behind a demotion use its room: without it, they wait for a later launch */
		if ((demotion_failed && m->promote) || !ember_engine_issue(e, op)) {
			demotion_failed |= !m->promote;
			ember_engine_finish(e, op, false);
			continue;
		}
		any = true;
		e->track(e->sink, op);
	}
	ember_moves_free(moves);
	if (any && order != EMBER_ORDER_NONE)
		e->ops->stream_wait(e->ops_self, at, order);
}

void ember_engine_defer(struct ember_engine *e, struct ember_moves *moves, const struct ember_at *at)
{
	for (size_t i = 0; i < moves->n; i++) {
		struct ember_op *op = ember_engine_op(&moves->v[i], at);
		if (op)
			e->defer(e->sink, op);
		else
			drop_move(e, &moves->v[i]);
	}
	ember_moves_free(moves);
}

size_t ember_engine_launch_promote(struct ember_engine *e, int dev, uint64_t now, struct ember_alloc *const *allocs,
				   size_t n, const struct ember_at *at)
{
	struct ember_moves moves = { 0 };
	ember_table_lock(e->pc->table);
	size_t waiting = ember_policy_promote(e->pc, dev, now, allocs, n, &moves);
	ember_table_unlock(e->pc->table);
	ember_engine_start(e, &moves, at, EMBER_ORDER_STREAM);
	return waiting;
}

/*
 * Up to this many batches of demotions are queued at once: one batch at a
 * time leaves the copy engine idle between completion and the next pass
 * (measured on the H200: phase-shift recovery at 2.31 s, of which 8 GiB of
 * demotion at 9.1 GB/s is under one). The policy counts regions already
 * leaving, so passes in a row never evict more than needed.
 */
enum { BATCHES_IN_FLIGHT = 4 };

void ember_engine_reclaim(struct ember_engine *e, int dev, const struct ember_at *at)
{
	uint64_t now = e->ops->now(e->ops_self);
	for (int round = 0; round < BATCHES_IN_FLIGHT; round++) {
		struct ember_moves moves = { 0 };
		ember_table_lock(e->pc->table);
		ember_policy_reclaim(e->pc, dev, now, &moves);
		ember_table_unlock(e->pc->table);
		uint64_t regions = 0;
		for (size_t i = 0; i < moves.n; i++)
			regions += moves.v[i].count;
		ember_engine_defer(e, &moves, at);
		if (regions < e->pc->params.batch_regions)
			break; /* less than a full batch: nothing more is needed now */
	}
	struct ember_moves wanted = { 0 }; /* nothing unless a launch left a table wanted: a check under the lock */
	ember_table_lock(e->pc->table);
	ember_policy_promote_wanted(e->pc, dev, &wanted);
	ember_table_unlock(e->pc->table);
	ember_engine_defer(e, &wanted, at);
}

void ember_engine_episode_end(struct ember_engine *e, int dev, uint32_t episode, bool fill_room,
			      const struct ember_at *at)
{
	struct ember_moves moves = { 0 };
	ember_table_lock(e->pc->table);
	ember_policy_episode_end(e->pc, dev, episode, e->ops->now(e->ops_self), fill_room, &moves);
	ember_table_unlock(e->pc->table);
	ember_engine_defer(e, &moves, at);
}

void ember_engine_split(struct ember_engine *e, struct ember_alloc *a, const struct ember_at *at,
			enum ember_order order)
{
	if (a->device < 0)
		return;
	struct ember_moves moves = { 0 };
	ember_table_lock(e->pc->table);
	ember_split_promote(e->pc, a, 0, a->nregions, true, &moves);
	ember_table_unlock(e->pc->table);
	ember_engine_start(e, &moves, at, order);
}
