/*
 * A trace replayed on its own clock (--launches recorded): every event at
 * the time the recorded run issued it, and each wait for the GPU ending
 * when the recorded one did, so that Ember's policy sees the launches, the
 * bursts they came in and the gaps between them as the shim saw them on
 * the GPU. A modelled replay times the kernels by the simulator's costs,
 * and a policy whose rules compare touches in time (the exchange's reuse
 * gaps) can decide otherwise there: bfs's traces from the H200 exchanged
 * vertex regions for edge regions, and replayed sync or async they moved
 * nothing. The kernels here cost nothing of their own (their time is in
 * the recorded timeline), so this answers which moves the policy makes on
 * that timeline (--moves, beside the trace's M lines), not how long a run
 * takes: seconds is the recorded run's length.
 */
#include <string.h>

#include "replay.h"

int sim_run_recorded(const struct sim_variant *v, const struct sim_env *env, const struct sim_events *e,
		     struct sim_result *out)
{
	memset(out, 0, sizeof *out);
	if (!v->issue)
		return -1;
	void *st = v->start(env);
	if (!st)
		return -1;
	uint64_t now = 0;
	struct sim_window w = sim_window_start();
	for (size_t i = 0; i < e->n; i++) {
		const struct sim_event *ev = &e->ev[i];
		if (ev->t > now)
			now = ev->t;
		v->advance(st, now); /* the worker's passes and the moves that landed by now */
		switch (ev->kind) {
		case SIM_EV_ALLOC:
			v->alloc(st, ev->id, ev->size, ev->flags, now);
			break;
		case SIM_EV_FREE:
			v->free(st, ev->id, now);
			break;
		case SIM_EV_PLAIN:
			if (v->plain)
				v->plain(st, ev->plain, now);
			break;
		case SIM_EV_LAUNCH:
			v->issue(st, &ev->launch, now);
			sim_window_launch(&w, now);
			out->launches++;
			break;
		case SIM_EV_WAIT:
			if (ev->until > now)
				now = ev->until;
			v->advance(st, now);
			break;
		case SIM_EV_MARK:
			sim_window_mark(&w, now);
			break;
		case SIM_EV_HOST_PHASE:
			if (v->host_phase)
				v->host_phase(st, ev->phase, ev->seen, now);
			break;
		case SIM_EV_END:
			break;
		}
	}
	v->counts(st, &out->c);
	v->finish(st);
	out->seconds = (double)now * 1e-9;
	out->window_seconds = sim_window_seconds(&w, now);
	return 0;
}
