/* Events and their replay in virtual time against one variant. */
#ifndef EMBER_SIM_REPLAY_H
#define EMBER_SIM_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "variant.h"

enum sim_ev_kind {
	SIM_EV_ALLOC,
	SIM_EV_FREE,
	SIM_EV_LAUNCH,
	SIM_EV_PLAIN,
	SIM_EV_MARK,
	SIM_EV_END,
	SIM_EV_WAIT,
	SIM_EV_HOST_PHASE,
};

struct sim_event {
	enum sim_ev_kind kind;
	uint64_t t;                 /* when the recorded run issued it (ns), 0 for built-in workloads */
	uint64_t until;             /* wait: when the recorded host stopped waiting */
	uint64_t id, size;          /* alloc, free */
	unsigned flags;             /* alloc: SIM_ALLOC_* */
	int64_t plain;              /* plain device memory: + allocated, - freed */
	uint32_t phase;             /* host phase: its number */
	bool seen;                  /* host phase: the worker saw it while it lasted */
	struct sim_launch launch;   /* launch: ranges owned by the event list */
};

struct sim_events {
	struct sim_event *ev;
	size_t n, cap;
	bool waits_recorded; /* the trace says where its host waited for the GPU (W lines) */
};

int sim_events_alloc(struct sim_events *e, uint64_t id, uint64_t size);
int sim_events_free(struct sim_events *e, uint64_t id);
int sim_events_plain(struct sim_events *e, int64_t bytes);
/* A mark: the program flushed (ember_flush) before a phase it times; the replay times from the last one a launch follows. */
int sim_events_mark(struct sim_events *e);
/* The end of the recorded run: timers run until then (a trace's E line). */
int sim_events_end(struct sim_events *e);
/* The recorded host waited for the GPU from t to until. */
int sim_events_wait(struct sim_events *e, uint64_t t, uint64_t until);
/* A host phase was declared (a trace's Q line). */
int sim_events_host_phase(struct sim_events *e, uint64_t t, uint32_t phase, bool seen);
/* Copies the ranges. */
int sim_events_launch(struct sim_events *e, uint64_t stream, unsigned n, const struct sim_range *r, double compute_ns);
/*
 * Launch l's range guess becomes the launch scan's guess alone
 * (SIM_SEEN_SCAN), and what the kernel reads instead is n streaming reads
 * of its allocation, of `bytes` each at offsets[k]: an in-place model of a
 * known program's kernels (lookups.c's kin: gathers.c, rows.c). 0, or -1
 * out of memory (l as it was).
 */
int sim_launch_reads_instead(struct sim_launch *l, unsigned guess, const uint64_t *offsets, unsigned n,
			     uint64_t bytes);
/* To the launch just added: kernel's n arguments that launch order follows (copied). */
int sim_events_follow(struct sim_events *e, uint64_t kernel, unsigned n, const struct sim_follow *f);
void sim_events_clear(struct sim_events *e);

/*
 * The timed window every replay reports: from the last mark (ember_flush)
 * that a launch follows, else from the first launch, to the end. A
 * program may flush once more on its way out; that mark starts nothing.
 */
struct sim_window {
	uint64_t first_launch, mark, pending_mark;
	bool marked, pending;
};

static inline struct sim_window sim_window_start(void)
{
	return (struct sim_window){ .first_launch = UINT64_MAX };
}

static inline void sim_window_mark(struct sim_window *w, uint64_t now)
{
	w->pending_mark = now;
	w->pending = true;
}

static inline void sim_window_launch(struct sim_window *w, uint64_t now)
{
	if (w->first_launch == UINT64_MAX)
		w->first_launch = now;
	if (w->pending) {
		w->mark = w->pending_mark;
		w->marked = true;
		w->pending = false;
	}
}

/* The window's length in seconds, for a replay that ended at end. */
static inline double sim_window_seconds(const struct sim_window *w, uint64_t end)
{
	uint64_t from = w->marked ? w->mark : w->first_launch == UINT64_MAX ? 0 : w->first_launch;
	return (double)(end > from ? end - from : 0) * 1e-9;
}

struct sim_result {
	double seconds;
	double window_seconds;  /* the phase the program timed: from the last mark a launch follows to the end, else from the first launch */
	uint64_t launches;
	struct sim_counts c;
};

/*
 * Replays every event against the variant; -1 if it cannot start. Events
 * with recorded times (a trace) keep the host's own pace. Where the trace
 * records the host's waits for the GPU (W lines), every other gap is host
 * work and is replayed, and at a wait the replay waits for its own GPU
 * instead. In a trace without them, a gap up to host_gap_cap_us (a --param,
 * default 200) is host work, and a longer one is taken for a wait after at
 * most that much host work.
 */
int sim_run(const struct sim_variant *v, const struct sim_env *env, const struct sim_events *e, struct sim_result *out);

/*
 * sim_run for a trace that records its host's waits, with
 * env->launches SIM_LAUNCHES_ASYNC (replay_async.c): the host issues launches at its
 * recorded pace and the GPU runs them in order, later, as a real one does
 * (star's eight queries are issued within 11 ms and run for 5 s), so the
 * policy decides at the host's time and the kernels read what has landed
 * by their start. The host waits for the GPU at a recorded wait, a flush
 * and a free (cuMemFree synchronises).
 */
int sim_run_async(const struct sim_variant *v, const struct sim_env *env, const struct sim_events *e,
		  struct sim_result *out);

/*
 * sim_run with env->launches SIM_LAUNCHES_RECORDED (replay_recorded.c): every event at
 * the time the recorded run issued it, waits ending when they ended, the
 * kernels costing nothing of their own. -1 for a variant without a host
 * part (issue): only Ember's decide at the launch.
 */
int sim_run_recorded(const struct sim_variant *v, const struct sim_env *env, const struct sim_events *e,
		     struct sim_result *out);

/* What launch l costs on the GPU from start (ns): the launch floor, its compute, and every range's reads. */
uint64_t sim_kernel_ns(const struct sim_variant *v, void *st, const struct sim_env *env, const struct sim_launch *l,
		       uint64_t start);

#endif
