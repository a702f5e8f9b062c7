/*
 * Ember-static and Ember-adaptive in the simulator: the shim's own core
 * (shim/policy: region table, accounts, policy, static split, engine) on
 * the virtual-time backend of the operations seam. Nothing of the policy is
 * re-implemented here; this file only plays the parts the shim's mechanism
 * plays on a driver: it gives allocations addresses, turns a launch's
 * ranges into demand as the launch scan does, runs the worker's periodic
 * pass, and completes moves when their virtual time comes.
 *
 * Demand comes from the launch scan (the ranges each launch references,
 * as the scan sees them: a workload may say that the kernel reads other
 * ranges than the scan guesses, enum sim_seen), or with --param counters=1
 * from the access-counter model too: notifications for mapped regions
 * actually read past the threshold, as the driver patch would deliver
 * them, taken by the shim's own reader (shim/signal/counters.c). A
 * launch's ranges go through the reader too, as the shim's launch path
 * hands them to it (ember_counters_launch_demand): where the counters
 * cover an allocation, the scan's credit to a mapped region stands while
 * notifications confirm it, and notifications credit the mapped regions
 * the scan did not credit lately. --param scan=0 leaves the counters alone.
 *
 * static-peer and adaptive-peer add a second GPU, idle, with a budget of
 * its own (--param peer_budget_gib, default --budget) and the peer link
 * (the profile's peer_read_gbps against mapped_read_gbps): after each
 * launch's placement, the shim's peer tier (shim/policy/peer.h, through
 * the virtual backend of the seam) lends it what GPU 0's budget has no
 * room for, and GPU 0 reads those regions at the peer rate. The second
 * GPU runs nothing of its own here (a trace is of one GPU), so nothing is
 * pushed out: test_multi_gpu checks that on the simulated driver.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"   /* the shim's options table */
#include "counters.h"
#include "engine.h"
#include "signal/counters.h" /* the shim's access-counter reader */
#include "launch_order.h"
#include "split.h"
#include "peer.h"
#include "variant.h"
#include "variant_params.h"

struct ember_variant {
	const struct sim_profile *p;
	bool adaptive;
	struct ember_accounts accounts;
	struct ember_table table;
	struct ember_policy_ctx pc;
	struct ember_virtual vt;
	struct ember_engine eng;
	struct ember_op *in_flight;
	struct ember_alloc **by_id; /* the allocation behind each id, or NULL */
	uint64_t nid, next_base;
	uint64_t last_pass;
	uint64_t host_busy_until; /* a free waits for its allocation's moves, on the freeing thread */
	uint64_t migrations;
	bool scan;                    /* launches' ranges are demand */
	bool counting;                /* the access-counter model runs */
	struct sim_counters counters;
	struct ember_ac_reader reader; /* the shim's reader: its cover of allocations, the scan's runs */
	bool drain_on_grid;            /* counter_drain_ms given: the queue drained every drain_ns (0: after each launch) */
	uint64_t drain_ns, next_drain; /* else it is drained after each of the worker's passes, as worker.c does, */
	bool nudge;                    /* and when a launch finds it not empty (ember_uvm_events_at_launch), */
	uint64_t wake_ns, drain_at;    /* wake_ns later, by the worker it wakes; drain_at 0: none asked */
	uint64_t notifications;
	struct followed *followed; /* launch order: each kernel argument's latest ranges */
	uint64_t nfollowed, followed_cap, follow_clock;
	bool phase_exchange;         /* EMBER_PHASE_EXCHANGE: a host phase seen while it lasted ends its episode */
	uint32_t phase_open;         /* such a phase, until the next launch (0: none): each pass tries its exchange */
	bool peer;                   /* a second, idle GPU: the peer tier */
	struct ember_peer_tier tier; /* the shim's, as gpus.c keeps it */
	struct ember_peer_seam seam;
	FILE *moves; /* --moves */
};

/* What the shim's kernel table keeps for launch order (kernels.c), keyed as a trace names it. */
struct followed {
	uint64_t kernel;
	unsigned arg;
	struct ember_launch_history history;
};

static struct ember_device_account *acc0(struct ember_variant *ev)
{
	return ember_budget_account(&ev->accounts, 0);
}

/* --moves: a move as the trace's M line names it (its allocation by the trace's id), from when it runs. */
static void write_move(struct ember_variant *ev, const struct ember_op *op)
{
	uint64_t id = 0;
	while (id < ev->nid && ev->by_id[id] != op->move.alloc)
		id++;
	if (id < ev->nid)
		fprintf(ev->moves, "M %" PRIu64 " %" PRIu64 " %" PRIu32 " %" PRIu32 " %c\n", op->t_start, id,
			op->move.first, op->move.count, op->move.promote ? 'P' : 'D');
}

/*
 * --moves: why victims gave way since the last such line, as the shim's
 * worker logs it under EMBER_LOG=debug (pass_note.h): an R line, after the
 * moves it explains.
 */
static void write_reasons(struct ember_variant *ev, uint64_t now)
{
	struct ember_pass_note note;
	if (!ev->moves || !ember_pass_note_take(&ev->pc.note, &note))
		return;
	char line[EMBER_PASS_NOTE_LINE];
	fprintf(ev->moves, "R %" PRIu64 " %s\n", now, ember_pass_note_format(&note, now, line, sizeof line));
}

/* The engine's sinks: the simulator is its own worker. */
static void track(void *sink, struct ember_op *op)
{
	struct ember_variant *ev = sink;
	op->next = ev->in_flight;
	ev->in_flight = op;
	ev->migrations++;
	if (ev->moves)
		write_move(ev, op);
}

static void defer(void *sink, struct ember_op *op)
{
	struct ember_variant *ev = sink;
	if (ember_engine_issue(&ev->eng, op))
		track(sink, op);
	else
		ember_engine_finish(&ev->eng, op, false);
}

/* Complete every move whose virtual time has come. Returns how many. */
static unsigned poll(struct ember_variant *ev, uint64_t now)
{
	if (now > ev->vt.now)
		ev->vt.now = now; /* virtual time never runs backwards */
	unsigned done = 0;
	for (struct ember_op **p = &ev->in_flight; *p;) {
		struct ember_op *op = *p, *next = op->next;
		if (ember_engine_poll(&ev->eng, op)) {
			*p = next;
			done++;
		} else {
			p = &op->next;
		}
	}
	return done;
}

static double param(const struct sim_env *env, const char *key, double dflt)
{
	return sim_param_double(env->params, key, dflt);
}

static void *start(const struct sim_env *env, bool adaptive, bool peer)
{
	struct ember_variant *ev = calloc(1, sizeof *ev);
	if (!ev)
		return NULL;
	ev->p = env->profile;
	ev->adaptive = adaptive;
	ev->phase_exchange = sim_shim_param(env, "phase_exchange") != 0;
	ev->moves = env->moves;
	if (ev->moves)
		fprintf(ev->moves, "# %s%s\n", adaptive ? "adaptive" : "static", peer ? "-peer" : "");
	ember_table_init(&ev->table, &ev->accounts);
	ev->pc = (struct ember_policy_ctx){ .params = sim_policy_params(env), .table = &ev->table, .accounts = &ev->accounts,
					    .adaptive = adaptive };
	unsigned high = sim_watermark(env, "high_watermark", env->high_pct);
	unsigned low = sim_watermark(env, "low_watermark", env->low_pct);
	ember_budget_set(acc0(ev), env->budget, high, low);
	/* the copy engine at the profile's rates; a call's fixed cost is the 64 MiB call's */
	ev->vt = (struct ember_virtual){
		.promote_bytes_per_ns = env->profile->promote_gbps,
		.demote_bytes_per_ns = env->profile->demote_gbps,
		.call_ns = (uint64_t)(env->profile->promote_call_us * 1e3),
	};
	ev->eng = (struct ember_engine){ .pc = &ev->pc, .ops = &ember_virtual_ops, .ops_self = &ev->vt,
					 .track = track, .defer = defer, .sink = ev };
	ev->next_base = 1ull << 40;
	ev->scan = param(env, "scan", 1) != 0;
	ev->counting = adaptive && param(env, "counters", 0) != 0 && /* static takes no demand */
		       sim_counters_init(&ev->counters, (unsigned)param(env, "counter_count", 256),
					 (uint32_t)param(env, "counter_threshold", 256)) == 0;
	ev->reader.cover_ns = (uint64_t)(param(env, "counter_cover_ms", 1000) * EMBER_NS_PER_MS);
	/*
	 * When notifications reach the reader: the shim's worker drains the
	 * tools queue after each of its passes (every interval_ms in adaptive
	 * mode) and each completion of a move, and at least every 100 ms
	 * (worker.c's run_periodic, uvm_events.c). --param counter_drain_ms=N
	 * drains every N ms instead, 0 after every launch.
	 */
	ev->drain_on_grid = param(env, "counter_drain_ms", -1) >= 0;
	ev->drain_ns = (uint64_t)(param(env, "counter_drain_ms", 0) * EMBER_NS_PER_MS);
	/*
	 * And, as the shim does at each launch (adaptive.c), when the queue
	 * holds notifications the last drain did not read, the worker is woken
	 * to drain it: counter_wake_us later (a futex wake and a drain),
	 * before the next launch's demand if that comes later. --param
	 * counter_nudge=0: the worker's own drains only.
	 */
	ev->nudge = param(env, "counter_nudge", 1) != 0;
	ev->wake_ns = (uint64_t)(param(env, "counter_wake_us", 50) * 1000);
	ev->peer = peer;
	if (peer) {
		double gib = param(env, "peer_budget_gib", (double)env->budget / (1ull << 30));
		ember_budget_set(ember_budget_account(&ev->accounts, 1), (uint64_t)(gib * (1ull << 30)), high, low);
		/* what the shim's driver backend measures (ops_driver.c peer_link), here the profile's rates */
		ev->vt.peer_read_bps = env->profile->peer_read_gbps * 1e9;
		ev->vt.host_read_bps = env->profile->mapped_read_gbps * 1e9;
		ev->seam = (struct ember_peer_seam){ .tier = &ev->tier, .table = &ev->table, .ops = &ember_virtual_ops, .ops_self = &ev->vt };
	}
	return ev;
}

static void *start_static(const struct sim_env *env)
{
	return start(env, false, false);
}

static void *start_adaptive(const struct sim_env *env)
{
	return start(env, true, false);
}

static void *start_static_peer(const struct sim_env *env)
{
	return start(env, false, true);
}

static void *start_adaptive_peer(const struct sim_env *env)
{
	return start(env, true, true);
}

static struct ember_alloc *alloc_of(struct ember_variant *ev, uint64_t id)
{
	return id < ev->nid ? ev->by_id[id] : NULL;
}

static uint64_t v_alloc(void *v, uint64_t id, uint64_t size, unsigned flags, uint64_t now)
{
	struct ember_variant *ev = v;
	if (!sim_grow_to(&ev->by_id, &ev->nid, id, sizeof *ev->by_id))
		return 0;
	uint64_t base = ev->next_base;
	ev->next_base += ((size + (2ull << 20) - 1) & ~((2ull << 20) - 1)) + (2ull << 20);
	bool converted = flags & SIM_ALLOC_CONVERTED;
	struct ember_alloc *a = ember_table_insert(&ev->table, base, size, 0,
						   converted ? EMBER_ALLOC_CONVERTED : EMBER_ALLOC_MANAGED);
	ev->by_id[id] = a;
	if (!a)
		return 0;
	/* the advice of the whole allocation, on the allocating thread (DESIGN.md: 127 ms per 4 GiB) */
	uint64_t advise = (uint64_t)sim_advise_cost(ev->p, size, 1);
	uint64_t free_at = now + advise;
	if (converted) {
		/* populated on the GPU at once while it fits: never-touched pages move no bytes, only calls */
		poll(ev, free_at);
		double rate = ev->vt.promote_bytes_per_ns;
		ev->vt.promote_bytes_per_ns = 1e9;
		ember_engine_split(&ev->eng, a, &(struct ember_at){ 0 }, EMBER_ORDER_SYNC);
		ev->vt.promote_bytes_per_ns = rate;
		free_at = ev->vt.now > free_at ? ev->vt.now : free_at;
	}
	return free_at - now;
}

static void v_free(void *v, uint64_t id, uint64_t now)
{
	struct ember_variant *ev = v;
	struct ember_alloc *a = alloc_of(ev, id);
	if (!a)
		return;
	ev->by_id[id] = NULL;
	/* cuMemFree waits for the allocation's moves in flight */
	uint64_t t = now;
	for (struct ember_op *op = ev->in_flight; op; op = op->next)
		if (op->move.alloc == a && op->t_end > t)
			t = op->t_end;
	poll(ev, t);
	struct ember_alloc *gone = ember_table_remove(&ev->table, a->base);
	if (ev->peer) { /* as the shim's free (gpus.c): its regions on the peer leave its account */
		ember_table_lock(&ev->table);
		ember_peer_forget(&ev->tier, &ev->accounts, gone);
		ember_table_unlock(&ev->table);
	}
	ember_alloc_put(&ev->table, gone);
	if (t > ev->host_busy_until)
		ev->host_busy_until = t;
}

static void v_plain(void *v, int64_t bytes, uint64_t now)
{
	struct ember_variant *ev = v;
	ember_table_lock(&ev->table);
	ember_budget_other(acc0(ev), bytes);
	ember_table_unlock(&ev->table);
}

/* The regions [r0, r1) of a that range r covers. */
static bool regions_of(const struct ember_alloc *a, const struct sim_range *r, uint32_t *r0, uint32_t *r1)
{
	if (!a || !a->nregions || r->offset >= a->size)
		return false;
	uint64_t end = r->offset + (r->bytes ? r->bytes : 1);
	end = end > a->size ? a->size : end;
	*r0 = (uint32_t)(r->offset >> EMBER_REGION_SHIFT);
	*r1 = (uint32_t)(((end - 1) >> EMBER_REGION_SHIFT) + 1);
	return true;
}

enum { MAX_REFS = 64 };

/* The distinct allocations a launch references, as the scan lists them. */
static unsigned referenced(struct ember_variant *ev, const struct sim_launch *l, struct ember_alloc **out)
{
	unsigned n = 0;
	for (unsigned i = 0; i < l->n; i++) {
		struct ember_alloc *a = alloc_of(ev, l->ranges[i].alloc_id);
		bool seen = !a;
		for (unsigned k = 0; k < n && !seen; k++)
			seen = out[k] == a;
		if (!seen && n < MAX_REFS)
			out[n++] = a;
	}
	return n;
}

static void take_notifications(struct ember_variant *ev, uint64_t now);

static void pass_at(struct ember_variant *ev, uint64_t t)
{
	poll(ev, t);
	ev->last_pass = t;
	if (ev->phase_open) /* as the shim's pass while a host phase lasts (adaptive.c) */
		ember_engine_episode_end(&ev->eng, 0, ev->phase_open - 1, false, &(struct ember_at){ 0 });
	ember_engine_reclaim(&ev->eng, 0, &(struct ember_at){ 0 });
	write_reasons(ev, t);
	if (!ev->drain_on_grid)
		take_notifications(ev, t); /* the worker drains the event queue after its pass */
}

/*
 * The worker's passes up to now: one each interval, as its timer would run
 * them while the program computes or the host works, and one at once when
 * asked (a launch found no room, or a move completed).
 */
/*
 * A stretch with no event (one long kernel, the host at work) gets at most
 * this many of the timer's passes, spread over it: a pass over a 1 TiB table
 * visits half a million regions, and with no new demand the passes of a
 * long stretch repeat each other.
 */
enum { PASSES_PER_STRETCH = 64 };

static void passes_until(struct ember_variant *ev, uint64_t now)
{
	uint64_t interval = ev->pc.params.interval_ns ? ev->pc.params.interval_ns : 1;
	/* differences, not sums: a trace's clock near 2^64 wrapped last_pass + step below now, and passed forever */
	if (!ev->adaptive || ev->last_pass > now || now - ev->last_pass < interval)
		return;
	uint64_t step = (now - ev->last_pass) / PASSES_PER_STRETCH;
	step = step > interval ? step : interval;
	while (ev->last_pass <= now && now - ev->last_pass >= step) {
		uint64_t t = ev->last_pass + step;
		pass_at(ev, t > ev->vt.now ? t : ev->vt.now); /* virtual time is never rewound */
	}
}

/* Catch up on the timer's passes, complete what has landed by now, and pass again if asked. */
static void pass_if_due(struct ember_variant *ev, uint64_t now, bool wanted)
{
	passes_until(ev, now);
	wanted |= poll(ev, now) > 0;
	if (ev->adaptive && wanted)
		pass_at(ev, ev->vt.now);
}

/* The history of a kernel's argument, made empty on first sight; NULL if out of memory. */
static struct followed *followed_of(struct ember_variant *ev, uint64_t kernel, unsigned arg)
{
	for (uint64_t i = 0; i < ev->nfollowed; i++)
		if (ev->followed[i].kernel == kernel && ev->followed[i].arg == arg)
			return &ev->followed[i];
	if (!sim_grow_to(&ev->followed, &ev->followed_cap, ev->nfollowed, sizeof *ev->followed))
		return NULL;
	struct followed *f = &ev->followed[ev->nfollowed++];
	*f = (struct followed){ .kernel = kernel, .arg = arg };
	return f;
}

/*
 * Launch order, as the shim's access monitor runs it at a launch (table
 * locked, before the launch's demand): each followed argument's range is
 * compared with the one it covered at the kernel's previous launch on the
 * stream, and what it slid past departs.
 */
static void slide(struct ember_variant *ev, const struct sim_launch *l)
{
	for (unsigned i = 0; i < l->nfollow; i++) {
		const struct sim_follow *fo = &l->follow[i];
		struct ember_alloc *a = alloc_of(ev, fo->alloc_id);
		struct followed *f = followed_of(ev, l->kernel, fo->arg);
		if (!a || !f || !fo->bytes)
			continue;
		struct ember_range was, now_r = { .alloc_id = a->id, .start = fo->offset, .end = fo->offset + fo->bytes };
		if (ember_launch_history_find(&f->history, l->stream, &was))
			ember_launch_order_slide(a, &was, &now_r);
		ember_launch_history_keep(&f->history, l->stream, &now_r, ++ev->follow_clock);
	}
}

static void drain_if_asked(struct ember_variant *ev, uint64_t now);

/*
 * A launch under adaptive, as the shim's adaptive_launch runs it: with
 * nothing to decide, no demand counted and nothing promoted.
 */
static void adaptive_launch(struct ember_variant *ev, const struct sim_launch *l, struct ember_alloc **refs,
			    unsigned n, uint64_t now)
{
	ember_table_lock(&ev->table);
	if (ember_policy_nothing_to_decide(&ev->pc, 0, refs, n)) {
		ember_policy_named_idle(refs, n, now);
		ember_table_unlock(&ev->table);
		return;
	}
	if (ev->scan)
		slide(ev, l);
	bool fresh = false;
	/* as the shim's monitor (credit_extents): each range by how much smaller than the largest */
	uint64_t largest = 0;
	for (unsigned i = 0; i < l->n; i++) {
		uint32_t r0, r1;
		const struct sim_range *r = &l->ranges[i];
		if (r->seen != SIM_SEEN_KERNEL && regions_of(alloc_of(ev, r->alloc_id), r, &r0, &r1) &&
		    r1 - r0 > largest)
			largest = r1 - r0;
	}
	for (unsigned i = 0; i < l->n; i++) {
		const struct sim_range *r = &l->ranges[i];
		uint32_t r0, r1;
		struct ember_alloc *a = alloc_of(ev, r->alloc_id);
		if (r->seen == SIM_SEEN_KERNEL || !regions_of(a, r, &r0, &r1))
			continue; /* the scan does not see what the kernel alone knows */
		uint32_t amount = ember_policy_launch_amount(r1 - r0, largest);
		/* as ember_counters_launch_demand: through the reader when the counters run */
		if (ev->counting)
			fresh |= ember_ac_launch(&ev->reader, &ev->pc, a, a->base + r->offset, r->bytes, amount, ev->scan,
						 now);
		else if (ev->scan)
			fresh |= ember_policy_demand_shared(&ev->pc, a, r0, r1,
							    ember_policy_share(&ev->pc.params, a, r->offset, r->bytes, amount),
							    now);
		if (ev->scan)
			ember_policy_extent_edges(a, r->offset, r->bytes);
	}
	ember_table_unlock(&ev->table);
	/* as the shim (adaptive.c): a launch of repeats only promotes nothing */
	size_t waiting = fresh ? ember_engine_launch_promote(&ev->eng, 0, ev->vt.now, refs, n, &(struct ember_at){ 0 }) : 0;
	write_reasons(ev, ev->vt.now); /* departed regions given up at the launch */
	if (waiting)
		pass_at(ev, ev->vt.now); /* hot regions found no room: the worker is woken */
}

/* The shim's part of a launch, on the host's thread at now: returns when what it waits for is ready. */
static uint64_t v_issue(void *v, const struct sim_launch *l, uint64_t now)
{
	struct ember_variant *ev = v;
	if (ev->host_busy_until > now)
		now = ev->host_busy_until;
	drain_if_asked(ev, now);
	pass_if_due(ev, now, false);
	ev->phase_open = 0; /* a launch ends the host phase */
	struct ember_alloc *refs[MAX_REFS];
	unsigned n = referenced(ev, l, refs);
	ev->vt.launch_ready_at = 0;
	if (ev->adaptive) {
		adaptive_launch(ev, l, refs, n, now);
	} else {
		struct ember_alloc *firsts[MAX_REFS];
		unsigned nfirst = 0;
		for (unsigned i = 0; i < n; i++)
			if (!refs[i]->referenced) {
				refs[i]->referenced = true;
				firsts[nfirst++] = refs[i];
			}
		ember_split_order(firsts, nfirst); /* as the shim's static_launch */
		for (unsigned i = 0; i < nfirst; i++)
			ember_engine_split(&ev->eng, firsts[i], &(struct ember_at){ 0 }, EMBER_ORDER_STREAM);
	}
	/* as ember_uvm_events_at_launch: notifications in the queue, undrained, wake the worker to drain it */
	if (ev->counting && ev->adaptive && ev->nudge && !ev->drain_on_grid && !ev->drain_at && ev->counters.nout &&
	    ev->counters.out[0].timestamp_ns <= now)
		ev->drain_at = (ev->vt.now > now ? ev->vt.now : now) + ev->wake_ns;
	/* the peer tier after the launch's placement, as the shim's ember_gpus_after_launch: GPU 1 in use */
	if (ev->peer)
		ember_peer_after_launch(&ev->seam, &(struct ember_at){ .device = 0 }, refs, n, 3u);
	return ev->vt.launch_ready_at > now ? ev->vt.launch_ready_at : now;
}

/* A launch issued when the GPU is idle (the replay's default): it starts once what it waits for is ready. */
static uint64_t v_before(void *v, const struct sim_launch *l, uint64_t now)
{
	uint64_t start = v_issue(v, l, now);
	poll(v, start); /* what it waited for is resident when it runs */
	return start;
}

static enum sim_tier v_tier(void *v, uint64_t id, uint64_t block)
{
	struct ember_alloc *a = alloc_of(v, id);
	if (!a || block >= a->nregions)
		return SIM_TIER_MAPPED;
	uint8_t s = a->regions[block].state;
	if (s == EMBER_REGION_RESIDENT || s == EMBER_REGION_DEMOTING)
		return SIM_TIER_DEVICE;
	struct ember_variant *ev = v;
	return ev->peer && ember_peer_holder(&ev->tier, a, (uint32_t)block) >= 0 ? SIM_TIER_PEER : SIM_TIER_MAPPED;
}

static double v_access(void *v, uint64_t id, uint64_t block, uint64_t bytes, uint64_t touched, enum sim_pattern pat,
		       bool write, uint64_t now)
{
	struct ember_variant *ev = v;
	enum sim_tier tier = v_tier(v, id, block);
	struct ember_alloc *a = alloc_of(ev, id);
	if (ev->counting && tier == SIM_TIER_MAPPED && a && touched)
		sim_counters_access(&ev->counters, a->base + (block << EMBER_REGION_SHIFT), touched, now);
	return sim_read_cost(ev->p, tier, bytes, touched, pat);
}

/*
 * The notifications raised by now reach the shim's reader when the event
 * queue is drained, and go through its checks and crediting (ember_ac_feed),
 * as the driver's records do once decoded. Records are raised in time order.
 */
static void take_notifications(struct ember_variant *ev, uint64_t now)
{
	ev->drain_at = 0; /* a drain serves the launch that asked for one */
	if (!ev->counting || !ev->counters.nout)
		return;
	size_t n = 0;
	while (n < ev->counters.nout && ev->counters.out[n].timestamp_ns <= now)
		n++;
	if (!n)
		return;
	ember_table_lock(&ev->table);
	ember_ac_feed(&ev->reader, &ev->pc, ev->counters.out, n * sizeof *ev->counters.out, now);
	ember_table_unlock(&ev->table);
	ev->notifications += n;
	ev->counters.nout -= n;
	memmove(ev->counters.out, ev->counters.out + n, ev->counters.nout * sizeof *ev->counters.out);
}

/* On a grid of drain_ns (0: at every call, after each launch). */
static void drain_on_grid(struct ember_variant *ev, uint64_t now)
{
	if (!ev->drain_on_grid || now < ev->next_drain)
		return;
	if (ev->drain_ns)
		ev->next_drain = (now / ev->drain_ns + 1) * ev->drain_ns;
	take_notifications(ev, now);
}

/* The drain a launch asked for, once the worker it woke has had the time. */
static void drain_if_asked(struct ember_variant *ev, uint64_t now)
{
	if (ev->drain_at && now >= ev->drain_at)
		take_notifications(ev, ev->drain_at > ev->vt.now ? ev->drain_at : ev->vt.now);
}

static void v_after(void *v, const struct sim_launch *l, uint64_t end)
{
	drain_if_asked(v, end);
	drain_on_grid(v, end);
	pass_if_due(v, end, false);
}

static void v_advance(void *v, uint64_t now)
{
	drain_if_asked(v, now);
	drain_on_grid(v, now);
	pass_if_due(v, now, false);
}

/*
 * A host phase (a trace's Q line): later launches are credited to the next
 * episode, and a phase the worker saw while it lasted ends the one before
 * with its exchange, tried again at each pass until the next launch, as the
 * shim's adaptive pass does (shim/mech/adaptive.c). A trace recorded before
 * Q lines replays without either.
 */
static void v_host_phase(void *v, uint32_t phase, bool seen, uint64_t now)
{
	struct ember_variant *ev = v;
	if (!ev->adaptive)
		return;
	pass_if_due(ev, now, false);
	if (seen && ev->phase_exchange) { /* before the next episode begins: repeats still counted are this one's */
		ember_engine_episode_end(&ev->eng, 0, phase - 1, true, &(struct ember_at){ 0 });
		write_reasons(ev, ev->vt.now);
		ev->phase_open = phase;
	}
	ember_table_lock(&ev->table);
	ev->pc.episode = phase;
	ember_table_unlock(&ev->table);
}

static void v_counts(void *v, struct sim_counts *out)
{
	struct ember_variant *ev = v;
	const struct ember_device_account *acc = acc0(ev);
	*out = (struct sim_counts){ .bytes_promoted = acc->bytes_promoted,
				    .bytes_demoted = acc->bytes_demoted,
				    .migrations = ev->migrations,
				    .notifications = ev->notifications,
				    .credited = ev->reader.counts.credited,
				    .repeats = ev->reader.counts.repeats,
				    .withheld = ev->reader.counts.withheld };
	if (ev->peer) {
		out->gpus = 2;
		out->bytes_on_peers = ev->tier.stats[1].placed;
		out->peer_pushed_out = ev->tier.stats[1].pushed_out;
	}
}

static void v_finish(void *v)
{
	struct ember_variant *ev = v;
	poll(ev, UINT64_MAX / 2); /* let everything land, then forget it */
	/* a move due past that (a trace's clock near 2^64) never lands: finished as failed, after the counts */
	while (ev->in_flight) {
		struct ember_op *op = ev->in_flight;
		ev->in_flight = op->next;
		ember_engine_finish(&ev->eng, op, false);
	}
	for (uint64_t i = 0; i < ev->nid; i++)
		if (ev->by_id[i]) {
			struct ember_alloc *gone = ember_table_remove(&ev->table, ev->by_id[i]->base);
			ember_peer_forget(&ev->tier, &ev->accounts, gone);
			ember_alloc_put(&ev->table, gone);
		}
	ember_peer_tier_reset(&ev->tier);
	ember_table_reset(&ev->table);
	if (ev->counting)
		sim_counters_free(&ev->counters);
	free(ev->by_id);
	free(ev->followed);
	free(ev);
}

#define EMBER_VARIANT(var, nm, starter)                                                                \
	const struct sim_variant var = {                                                               \
		.name = nm, .start = starter, .alloc = v_alloc, .free = v_free, .before_launch = v_before, \
		.issue = v_issue, .access = v_access, .after_launch = v_after, .advance = v_advance,      \
		.counts = v_counts, .finish = v_finish, .plain = v_plain, .tier_of = v_tier,              \
		.host_phase = v_host_phase,                                                                \
	}

EMBER_VARIANT(sim_variant_static, "static", start_static);
EMBER_VARIANT(sim_variant_adaptive, "adaptive", start_adaptive);
EMBER_VARIANT(sim_variant_static_peer, "static-peer", start_static_peer);
EMBER_VARIANT(sim_variant_adaptive_peer, "adaptive-peer", start_adaptive_peer);
