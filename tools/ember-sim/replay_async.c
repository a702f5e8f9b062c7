/*
 * A trace replayed with the host ahead of its GPU (--launches async). Two
 * clocks: the host's, which follows the recorded pace, and the GPU's tail,
 * when it finishes what it has been given. A launch is issued at the
 * host's time (the variant's issue: Ember's policy decides there, as the
 * shim does inside cuLaunchKernel) and queued; the GPU starts it once the
 * kernel before it has ended and what it waits for has landed, and reads
 * whatever is resident by then. Kernels start in time order with the
 * host's events, so every variant sees its clock move forwards only.
 *
 * Not modelled: Ember's moves queued on a busy stream wait for the kernels
 * ahead of them on the GPU; here they start when issued.
 */
#include <stdlib.h>
#include <string.h>

#include "replay.h"

struct issued {
	const struct sim_launch *l;
	uint64_t ready; /* when what it waits for has landed: at or after its issue */
};

struct gpu {
	struct issued *v;
	size_t head, n, cap;
	uint64_t tail;  /* when the last kernel started ends */
	uint64_t given; /* the latest time a hook was given: a variant without a host part saw its kernels' ends */
};

static uint64_t later(uint64_t a, uint64_t b) { return a > b ? a : b; }

static int enqueue(struct gpu *g, const struct sim_launch *l, uint64_t ready)
{
	if (g->head == g->n)
		g->head = g->n = 0;
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		struct issued *v = realloc(g->v, cap * sizeof *v);
		if (!v)
			return -1;
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = (struct issued){ l, ready };
	return 0;
}

/* Runs the queued kernels that start by `until`, in order. */
static void run_until(const struct sim_variant *v, void *st, const struct sim_env *env, struct gpu *g,
		      uint64_t until)
{
	for (; g->head < g->n; g->head++) {
		const struct issued *k = &g->v[g->head];
		uint64_t start = later(k->ready, g->tail);
		if (start > until)
			return;
		if (v->issue) {
			v->advance(st, start); /* what landed by now is resident when it runs */
		} else {
			start = later(start, v->before_launch(st, k->l, start));
		}
		g->tail = start + sim_kernel_ns(v, st, env, k->l, start);
		if (!v->issue) {
			v->after_launch(st, k->l, g->tail);
			g->given = g->tail;
		}
	}
}

/* The host's time as the variant may see it: never before a time it was given. */
static uint64_t seen(const struct gpu *g, uint64_t host) { return later(host, g->given); }

/* The host waits until the GPU has run everything it was given. */
static uint64_t wait_for_gpu(const struct sim_variant *v, void *st, const struct sim_env *env, struct gpu *g,
			     uint64_t host)
{
	run_until(v, st, env, g, UINT64_MAX);
	return later(host, g->tail);
}

int sim_run_async(const struct sim_variant *v, const struct sim_env *env, const struct sim_events *e,
		  struct sim_result *out)
{
	memset(out, 0, sizeof *out);
	void *st = v->start(env);
	if (!st)
		return -1;
	struct gpu g = { 0 };
	uint64_t host = 0, last_t = 0;
	struct sim_window w = sim_window_start();
	int rc = 0;
	for (size_t i = 0; i < e->n && !rc; i++) {
		const struct sim_event *ev = &e->ev[i];
		uint64_t gap = ev->t > last_t ? ev->t - last_t : 0;
		if (ev->t) { /* every recorded gap that is not a wait is the host's own work */
			host += gap;
			last_t = ev->t;
		}
		run_until(v, st, env, &g, host);
		switch (ev->kind) {
		case SIM_EV_END: /* after its work, the process lived on as long as it did when recorded */
			host = wait_for_gpu(v, st, env, &g, host - gap) + gap;
			break;
		case SIM_EV_WAIT:
			host = wait_for_gpu(v, st, env, &g, host);
			last_t = later(last_t, ev->until); /* the recorded wait is the recorded GPU's, not the host's work */
			break;
		case SIM_EV_MARK: /* ember_flush(): the GPU and Ember's moves done */
			host = wait_for_gpu(v, st, env, &g, host);
			sim_window_mark(&w, host);
			break;
		case SIM_EV_HOST_PHASE:
			if (v->host_phase)
				v->host_phase(st, ev->phase, ev->seen, seen(&g, host));
			break;
		case SIM_EV_ALLOC:
			host += v->alloc(st, ev->id, ev->size, ev->flags, seen(&g, host));
			break;
		case SIM_EV_FREE:
			host = wait_for_gpu(v, st, env, &g, host);
			v->free(st, ev->id, host);
			break;
		case SIM_EV_PLAIN:
			if (v->plain)
				v->plain(st, ev->plain, seen(&g, host));
			break;
		case SIM_EV_LAUNCH: {
			uint64_t ready = v->issue ? later(v->issue(st, &ev->launch, host), host) : host;
			rc = enqueue(&g, &ev->launch, ready);
			sim_window_launch(&w, host);
			out->launches++;
			break;
		}
		}
		v->advance(st, seen(&g, host)); /* timers run in wall time: also while the host works */
	}
	uint64_t end = wait_for_gpu(v, st, env, &g, 0);
	free(g.v);
	v->counts(st, &out->c);
	v->finish(st);
	if (rc)
		return -1;
	out->seconds = (double)end * 1e-9;
	out->window_seconds = sim_window_seconds(&w, end);
	return 0;
}
