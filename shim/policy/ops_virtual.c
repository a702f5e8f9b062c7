/* The virtual-time backend of the operations seam. */
#include "ops.h"

static int advise_mapped(void *self, const struct ember_alloc *a)
{
	return 0;
}

static int start(struct ember_virtual *v, struct ember_op *op, double bytes_per_ns, unsigned *fail)
{
	if (*fail) {
		--*fail;
		return op->error = 1;
	}
	uint64_t bytes = ember_move_bytes(&op->move);
	op->t_start = v->now > v->busy_until ? v->now : v->busy_until;
	op->t_end = op->t_start + v->call_ns + (bytes_per_ns > 0 ? (uint64_t)((double)bytes / bytes_per_ns) : 0);
	v->busy_until = op->t_end;
	return 0;
}

static int promote(void *self, struct ember_op *op)
{
	struct ember_virtual *v = self;
	return start(v, op, v->promote_bytes_per_ns, &v->fail_promotions);
}

static int demote(void *self, struct ember_op *op)
{
	struct ember_virtual *v = self;
	return start(v, op, v->demote_bytes_per_ns, &v->fail_demotions);
}

static enum ember_op_status completion(void *self, struct ember_op *op)
{
	struct ember_virtual *v = self;
	return v->now >= op->t_end ? EMBER_OP_DONE : EMBER_OP_PENDING;
}

static uint64_t elapsed(void *self, struct ember_op *op)
{
	return op->t_end - op->t_start;
}

static void release(void *self, struct ember_op *op)
{
}

static int stream_wait(void *self, const struct ember_at *at, enum ember_order order)
{
	struct ember_virtual *v = self;
	if (order == EMBER_ORDER_STREAM && v->busy_until > v->launch_ready_at)
		v->launch_ready_at = v->busy_until;
	else if (order == EMBER_ORDER_SYNC && v->busy_until > v->now)
		v->now = v->busy_until; /* the thread itself waits */
	return 0;
}

static uint64_t now(void *self)
{
	return ((struct ember_virtual *)self)->now;
}

static int peer_link(void *self, const struct ember_at *at, int reader, int holder, double *peer_bps,
		     double *host_bps)
{
	struct ember_virtual *v = self;
	*peer_bps = reader != holder ? v->peer_read_bps : 0;
	*host_bps = v->host_read_bps;
	return 0;
}

/*
 * Onto a peer: its regions are mapped (host memory), so they cross the
 * holder's host link at the promotion rate; back: the demotion rate. The
 * one copy engine runs them in turn with the others (a second GPU has its
 * own: this is the cautious side).
 */
static int peer_place(void *self, struct ember_op *op, int to, int reader)
{
	struct ember_virtual *v = self;
	uint64_t bytes = ember_move_bytes(&op->move);
	*(to >= 0 ? &v->bytes_to_peers : &v->bytes_from_peers) += bytes;
	return start(v, op, to >= 0 ? v->promote_bytes_per_ns : v->demote_bytes_per_ns, &(unsigned){ 0 });
}

const struct ember_ops ember_virtual_ops = {
	.advise_mapped = advise_mapped,
	.promote = promote,
	.demote = demote,
	.completion = completion,
	.elapsed = elapsed,
	.release = release,
	.stream_wait = stream_wait,
	.now = now,
	.peer_link = peer_link,
	.peer_place = peer_place,
};
