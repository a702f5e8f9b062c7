/* The replay loop. Kernel time = launch floor + compute + the variant's cost
 * of every block each range covers. All launches share one timeline: the
 * stream key travels to the variant, but kernels are not overlapped, which
 * is exact for the single-stream programs this models. */
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static struct sim_event *push(struct sim_events *e)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 64;
		struct sim_event *ev = realloc(e->ev, cap * sizeof *ev);
		if (!ev)
			return NULL;
		e->ev = ev;
		e->cap = cap;
	}
	struct sim_event *ev = &e->ev[e->n++];
	memset(ev, 0, sizeof *ev);
	return ev;
}

int sim_events_alloc(struct sim_events *e, uint64_t id, uint64_t size)
{
	struct sim_event *ev = push(e);
	if (!ev)
		return -1;
	*ev = (struct sim_event){ .kind = SIM_EV_ALLOC, .id = id, .size = size };
	return 0;
}

int sim_events_free(struct sim_events *e, uint64_t id)
{
	struct sim_event *ev = push(e);
	if (!ev)
		return -1;
	*ev = (struct sim_event){ .kind = SIM_EV_FREE, .id = id };
	return 0;
}

int sim_events_plain(struct sim_events *e, int64_t bytes)
{
	struct sim_event *ev = push(e);
	if (!ev)
		return -1;
	*ev = (struct sim_event){ .kind = SIM_EV_PLAIN, .plain = bytes };
	return 0;
}

int sim_events_mark(struct sim_events *e)
{
	struct sim_event *ev = push(e);
	if (!ev)
		return -1;
	ev->kind = SIM_EV_MARK;
	return 0;
}

int sim_events_wait(struct sim_events *e, uint64_t t, uint64_t until)
{
	struct sim_event *ev = push(e);
	if (!ev)
		return -1;
	*ev = (struct sim_event){ .kind = SIM_EV_WAIT, .t = t, .until = until };
	e->waits_recorded = true;
	return 0;
}

int sim_events_host_phase(struct sim_events *e, uint64_t t, uint32_t phase, bool seen)
{
	struct sim_event *ev = push(e);
	if (!ev)
		return -1;
	*ev = (struct sim_event){ .kind = SIM_EV_HOST_PHASE, .t = t, .phase = phase, .seen = seen };
	return 0;
}

int sim_events_end(struct sim_events *e)
{
	struct sim_event *ev = push(e);
	if (!ev)
		return -1;
	ev->kind = SIM_EV_END;
	return 0;
}

int sim_events_launch(struct sim_events *e, uint64_t stream, unsigned n, const struct sim_range *r, double compute_ns)
{
	struct sim_range *copy = malloc((n ? n : 1) * sizeof *copy);
	if (!copy)
		return -1;
	memcpy(copy, r, n * sizeof *copy);
	struct sim_event *ev = push(e);
	if (!ev) {
		free(copy);
		return -1;
	}
	ev->kind = SIM_EV_LAUNCH;
	ev->launch = (struct sim_launch){ .stream = stream, .n = n, .ranges = copy, .compute_ns = compute_ns };
	return 0;
}

int sim_launch_reads_instead(struct sim_launch *l, unsigned guess, const uint64_t *offsets, unsigned n,
			     uint64_t bytes)
{
	struct sim_range *r = malloc((l->n + n) * sizeof *r);
	if (!r)
		return -1;
	memcpy(r, l->ranges, l->n * sizeof *r);
	r[guess].seen = SIM_SEEN_SCAN; /* credited, not read */
	for (unsigned k = 0; k < n; k++)
		r[l->n + k] = (struct sim_range){ .alloc_id = r[guess].alloc_id, .offset = offsets[k], .bytes = bytes,
						  .pattern = SIM_STREAM, .touched = bytes, .seen = SIM_SEEN_KERNEL };
	free((void *)l->ranges);
	l->ranges = r;
	l->n += n;
	return 0;
}

int sim_events_follow(struct sim_events *e, uint64_t kernel, unsigned n, const struct sim_follow *f)
{
	if (!e->n || e->ev[e->n - 1].kind != SIM_EV_LAUNCH || !n)
		return 0;
	struct sim_follow *copy = malloc(n * sizeof *copy);
	if (!copy)
		return -1;
	memcpy(copy, f, n * sizeof *copy);
	struct sim_launch *l = &e->ev[e->n - 1].launch;
	l->kernel = kernel;
	l->nfollow = n;
	l->follow = copy;
	return 0;
}

void sim_events_clear(struct sim_events *e)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->ev[i].kind == SIM_EV_LAUNCH) {
			free((void *)e->ev[i].launch.ranges);
			free((void *)e->ev[i].launch.follow);
		}
	free(e->ev);
	memset(e, 0, sizeof *e);
}

/* Offers each 2 MiB block of the range to the variant; touched bytes are
 * shared out in proportion, so that they add up exactly. */
static double range_cost(const struct sim_variant *v, void *st, const struct sim_range *r, uint64_t start, double ns)
{
	double cost = 0;
	uint64_t end = r->offset + r->bytes, done = 0;
	uint64_t given = 0;
	for (uint64_t blk = r->offset / SIM_BLOCK; blk * SIM_BLOCK < end; blk++) {
		uint64_t lo = blk * SIM_BLOCK > r->offset ? blk * SIM_BLOCK : r->offset;
		uint64_t hi = (blk + 1) * SIM_BLOCK < end ? (blk + 1) * SIM_BLOCK : end;
		done += hi - lo;
		uint64_t upto = (uint64_t)((unsigned __int128)r->touched * done / r->bytes);
		cost += v->access(st, r->alloc_id, blk, hi - lo, upto - given, r->pattern, r->write,
				  start + (uint64_t)(ns + cost));
		given = upto;
	}
	return cost;
}

/* A launch that touches mapped memory (or a peer's) in small pieces is latency-bound: one fixed cost per launch. */
static double small_mapped_cost(const struct sim_variant *v, void *st, const struct sim_profile *p,
				const struct sim_launch *l)
{
	if (!v->tier_of || p->mapped_small_launch_us <= 0)
		return 0;
	uint64_t small = (uint64_t)(p->mapped_small_mib * (1 << 20));
	for (unsigned r = 0; r < l->n; r++) {
		const struct sim_range *rg = &l->ranges[r];
		if (!rg->bytes || rg->bytes >= small || rg->seen == SIM_SEEN_SCAN)
			continue;
		enum sim_tier t = v->tier_of(st, rg->alloc_id, rg->offset / SIM_BLOCK);
		if (t == SIM_TIER_MAPPED || t == SIM_TIER_PEER) /* a peer's memory: latency as mapped (model.c) */
			return p->mapped_small_launch_us * 1e3;
	}
	return 0;
}

uint64_t sim_kernel_ns(const struct sim_variant *v, void *st, const struct sim_env *env, const struct sim_launch *l,
		       uint64_t start)
{
	double ns = env->profile->launch_us * 1e3 + l->compute_ns;
	for (unsigned r = 0; r < l->n; r++)
		if (l->ranges[r].bytes && l->ranges[r].seen != SIM_SEEN_SCAN) /* a guess only: nothing read */
			ns += range_cost(v, st, &l->ranges[r], start, ns);
	ns += small_mapped_cost(v, st, env->profile, l);
	return (uint64_t)ns;
}

int sim_run(const struct sim_variant *v, const struct sim_env *env, const struct sim_events *e, struct sim_result *out)
{
	if (env->launches == SIM_LAUNCHES_RECORDED)
		return sim_run_recorded(v, env, e, out);
	if (env->launches == SIM_LAUNCHES_ASYNC && e->waits_recorded)
		return sim_run_async(v, env, e, out);
	memset(out, 0, sizeof *out);
	void *st = v->start(env);
	if (!st)
		return -1;
	uint64_t now = 0, host = 0, last_t = 0;
	struct sim_window w = sim_window_start();
	uint64_t cap_ns = (uint64_t)(sim_param_double(env->params, "host_gap_cap_us", 200) * 1e3);
	for (size_t i = 0; i < e->n; i++) {
		const struct sim_event *ev = &e->ev[i];
		if (ev->t) { /* the host's pace, from the recorded run */
			uint64_t gap = ev->t > last_t ? ev->t - last_t : 0;
			if (e->waits_recorded)
				host += gap;
			else /* a long gap: at most cap_ns of the host's own work, then it waited for the GPU */
				host = gap <= cap_ns ? host + gap : (host + cap_ns > now ? host + cap_ns : now);
			/* after its work, the process lived on as long as it did when recorded: Ember's timers ran */
			if (ev->kind == SIM_EV_END)
				host = (host > now ? host : now) + gap;
			last_t = ev->t;
		}
		if (host > now && ev->kind == SIM_EV_LAUNCH)
			now = host; /* a launch is issued once the host has got there (allocations advise on the host) */
		switch (ev->kind) {
		case SIM_EV_END:
			break;
		case SIM_EV_WAIT: /* the host waits for its GPU, however long the recorded one took */
			host = host > now ? host : now;
			last_t = ev->until > last_t ? ev->until : last_t;
			break;
		case SIM_EV_MARK:
			sim_window_mark(&w, now);
			break;
		case SIM_EV_HOST_PHASE:
			if (v->host_phase)
				v->host_phase(st, ev->phase, ev->seen, host > now ? host : now);
			break;
		case SIM_EV_ALLOC:
			host = (host > now ? host : now) + v->alloc(st, ev->id, ev->size, ev->flags, host > now ? host : now);
			break;
		case SIM_EV_FREE:
			v->free(st, ev->id, now);
			break;
		case SIM_EV_PLAIN:
			if (v->plain)
				v->plain(st, ev->plain, now);
			break;
		case SIM_EV_LAUNCH: {
			const struct sim_launch *l = &ev->launch;
			uint64_t start = v->before_launch(st, l, now);
			if (start < now)
				start = now;
			sim_window_launch(&w, now);
			now = start + sim_kernel_ns(v, st, env, l, start);
			v->after_launch(st, l, now);
			out->launches++;
			break;
		}
		}
		v->advance(st, host > now ? host : now); /* timers run in wall time: also while the host works */
	}
	v->counts(st, &out->c);
	v->finish(st);
	out->seconds = (double)now * 1e-9;
	out->window_seconds = sim_window_seconds(&w, now);
	return 0;
}
