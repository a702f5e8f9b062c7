/* The worker thread and its timers. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "locks.h"
#include "ops_driver.h"
#include "shim.h"
#include "state.h"
#include "capture.h"
#include "worker.h"

enum { POLL_NS = 200 * 1000, MAX_PERIODIC = 4 };
#define IDLE_NS (100 * 1000 * 1000ull)

/* A deferred free: converted memory freed once its stream reaches an event. */
struct deferred_free {
	struct deferred_free *next;
	CUdeviceptr ptr;
	CUevent event;
	CUcontext ctx;
};

#define q_lock ember_lock_worker
static pthread_cond_t q_wake = PTHREAD_COND_INITIALIZER; /* work for the worker */
static pthread_cond_t q_done = PTHREAD_COND_INITIALIZER; /* something completed */
static struct ember_op *queued_head, **queued_tail = &queued_head; /* ops to issue or, if issued, to poll */
static struct deferred_free *frees_queued;
static unsigned pending; /* ops and frees queued + in flight */
static unsigned frees_pending; /* of which frees */
static bool started, stopping, pass_wanted, pass_running;
static unsigned nudged; /* bit i: run periodic[i] soon (ember_worker_nudge) */
static pthread_t thread;
static __thread bool on_worker; /* this thread is the worker: for the failure's debug line */

/* Set before any thread exists. */
static const struct ember_periodic *periodic[MAX_PERIODIC];
static unsigned nperiodic;
static void (*strategy_pass)(void);
static uint64_t pass_period_ns;

/* Owned by the worker thread alone. */
static struct ember_op *in_flight;
static struct deferred_free *frees_in_flight;

void ember_worker_subscribe(const struct ember_periodic *p)
{
	if (nperiodic < MAX_PERIODIC)
		periodic[nperiodic++] = p;
}

void ember_worker_set_pass(void (*pass)(void), uint64_t period_ns)
{
	strategy_pass = pass;
	pass_period_ns = period_ns;
}

void ember_worker_failed(void *sink, const struct ember_op *op)
{
	ember_warn("a %s of %llu bytes failed (CUresult %d); the regions stay %s",
		   op->move.promote ? "promotion" : "demotion", (unsigned long long)ember_move_bytes(&op->move),
		   op->error, op->move.promote ? "mapped" : "resident");
	/* where it failed: ab-37's unexplained CUresult 201 took a debug log like this one to place */
	CUcontext current = NULL;
	EMBER_REAL(cuCtxGetCurrent)(&current);
	ember_debug("that %s was %s on %s, in context %p; the move's context %p, its stream %p%s",
		    op->move.promote ? "promotion" : "demotion", op->issued ? "issued and failed" : "refused at issue",
		    on_worker ? "the worker" : "an application thread",
		    (void *)current, op->at.ctx, op->at.stream, op->at.per_thread ? " (per-thread)" : "");
}

/* One queued item is done: count it out. */
static void count_done(void)
{
	ember_lock(&q_lock);
	pending--;
	pthread_cond_broadcast(&q_done);
	ember_unlock(&q_lock);
}

/* A deferred free is done: counted out of both counts at once. */
static void count_free_done(void)
{
	ember_lock(&q_lock);
	frees_pending--;
	pending--;
	pthread_cond_broadcast(&q_done);
	ember_unlock(&q_lock);
}

/* Complete every in-flight op and free whose end has come. Returns how many. */
static unsigned poll_in_flight(void)
{
	unsigned done = 0;
	for (struct ember_op **p = &in_flight; *p;) {
		struct ember_op *op = *p;
		struct ember_op *next = op->next;
		ember_driver_enter(op->at.ctx);
		if (!ember_engine_poll(&ember_shim_engine, op)) {
			p = &op->next;
			continue;
		}
		*p = next;
		count_done();
		done++;
	}
	for (struct deferred_free **p = &frees_in_flight; *p;) {
		struct deferred_free *f = *p;
		ember_driver_enter(f->ctx);
		CUresult r = EMBER_REAL(cuEventQuery)(f->event);
		if (r == CUDA_ERROR_NOT_READY) {
			p = &f->next;
			continue;
		}
		*p = f->next;
		if (r == CUDA_SUCCESS && (r = EMBER_REAL(cuMemFree_v2)(f->ptr)) != CUDA_SUCCESS)
			ember_warn("deferred free of %#llx failed (CUresult %d)", (unsigned long long)f->ptr, (int)r);
		EMBER_REAL(cuEventDestroy_v2)(f->event);
		free(f);
		count_free_done();
		done++;
	}
	return done;
}

/* Issue (or, if an application thread issued it, only track) each op of a batch. */
static void take(struct ember_op *batch)
{
	while (batch) {
		struct ember_op *op = batch;
		batch = op->next;
		op->next = NULL;
		bool entered = op->issued || ember_driver_enter(op->at.ctx);
		if (!entered && !op->error)
			op->error = CUDA_ERROR_INVALID_CONTEXT;
		/* refused with no error: its allocation was freed, nothing to report */
		if (!op->issued && (!entered || !ember_engine_issue(&ember_shim_engine, op))) {
			if (!op->error)
				ember_debug("a %s of allocation %llu regions %u+%u refused at issue: %s",
					    op->move.promote ? "promotion" : "demotion", (unsigned long long)op->move.alloc->id, op->move.first,
					    op->move.count,
					    __atomic_load_n(&op->move.alloc->freed, __ATOMIC_ACQUIRE) ? "its allocation was freed"
												   : "no error given");
			ember_engine_finish(&ember_shim_engine, op, false);
			count_done();
			continue;
		}
		op->next = in_flight;
		in_flight = op;
	}
}

/* Add ns to an absolute CLOCK_REALTIME deadline. */
static struct timespec deadline_in(uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000ull);
	ts.tv_nsec += (long)(ns % 1000000000ull);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* How long the worker may sleep with nothing in flight: the shortest active period, or forever (0). */
static uint64_t idle_period(void)
{
	uint64_t p = strategy_pass ? pass_period_ns : 0;
	for (unsigned i = 0; i < nperiodic; i++)
		if (periodic[i]->active())
			p = p && p < periodic[i]->period_ns ? p : periodic[i]->period_ns;
	return p;
}

static void run_periodic(bool changed, unsigned nudge, uint64_t now, uint64_t *last)
{
	for (unsigned i = 0; i < nperiodic; i++)
		if (periodic[i]->active() && (changed || (nudge >> i & 1) || now - last[i] >= periodic[i]->period_ns)) {
			periodic[i]->run(changed);
			last[i] = now;
		}
}

static void *worker_main(void *arg)
{
	uint64_t last_pass = 0, last_run[MAX_PERIODIC] = { 0 };
	on_worker = true;
	ember_capture_relax_worker(); /* its calls must not break a program's capture */
	for (unsigned i = 0; i < nperiodic; i++)
		if (periodic[i]->start)
			periodic[i]->start(); /* the driver is initialised by now: migrations need it */
	ember_lock(&q_lock);
	for (;;) {
		struct ember_op *batch = queued_head;
		queued_head = NULL;
		queued_tail = &queued_head;
		struct deferred_free *frees = frees_queued;
		frees_queued = NULL;
		if (!batch && !frees && !in_flight && !frees_in_flight && stopping)
			break;
		uint64_t now = ember_driver_now();
		bool pass_due = strategy_pass && !stopping && (pass_wanted || now - last_pass >= pass_period_ns);
		pass_wanted = false;
		pass_running = pass_due;
		unsigned nudge = nudged;
		nudged = 0;
		ember_unlock(&q_lock);

		while (frees) {
			struct deferred_free *f = frees;
			frees = f->next;
			f->next = frees_in_flight;
			frees_in_flight = f;
		}
		take(batch);
		if (pass_due) {
			last_pass = now;
			strategy_pass(); /* its moves are deferred to the queue, and counted there */
			ember_lock(&q_lock);
			pass_running = false;
			batch = queued_head;
			queued_head = NULL;
			queued_tail = &queued_head;
			pthread_cond_broadcast(&q_done);
			ember_unlock(&q_lock);
			take(batch);
		}
		unsigned done = poll_in_flight();
		run_periodic(done || pass_due, nudge, ember_driver_now(), last_run);

		ember_lock(&q_lock);
		if (done && strategy_pass)
			pass_wanted = true; /* room freed, or a batch finished: decide again now */
		if (queued_head || frees_queued || pass_wanted || nudged)
			continue;
		uint64_t idle = idle_period();
		if (in_flight || frees_in_flight) {
			struct timespec ts = deadline_in(POLL_NS);
			pthread_cond_timedwait(&q_wake, &q_lock, &ts);
		} else if (idle && !stopping) {
			struct timespec ts = deadline_in(idle);
			pthread_cond_timedwait(&q_wake, &q_lock, &ts);
		} else if (!stopping) {
			pthread_cond_wait(&q_wake, &q_lock);
		}
	}
	ember_unlock(&q_lock);
	return NULL;
}

/* Start the thread if it is not running (q_lock held). Returns whether it runs. */
static bool ensure_started(void)
{
	if (!started && !stopping && pthread_create(&thread, NULL, worker_main, NULL) == 0) {
		started = true;
		atexit(ember_worker_stop);
	}
	return started && !stopping;
}

void ember_worker_wake(void)
{
	ember_lock(&q_lock);
	ensure_started();
	pass_wanted = true;
	pthread_cond_signal(&q_wake);
	ember_unlock(&q_lock);
}

void ember_worker_nudge(const struct ember_periodic *p)
{
	ember_lock(&q_lock);
	for (unsigned i = 0; i < nperiodic; i++)
		if (periodic[i] == p && ensure_started()) {
			nudged |= 1u << i;
			pthread_cond_signal(&q_wake);
		}
	ember_unlock(&q_lock);
}

/* Queue an op for the worker; false when no worker can run (creation failed, or exit is under way). */
static bool enqueue(struct ember_op *op)
{
	ember_lock(&q_lock);
	bool running = ensure_started();
	if (running) {
		pending++;
		*queued_tail = op;
		queued_tail = &op->next;
		pthread_cond_signal(&q_wake);
	}
	ember_unlock(&q_lock);
	return running;
}

void ember_worker_track(void *sink, struct ember_op *op)
{
	if (enqueue(op))
		return;
	/* no worker to complete it: wait for it here */
	while (!ember_engine_poll(&ember_shim_engine, op)) {
		struct timespec ts = { 0, POLL_NS };
		nanosleep(&ts, NULL);
	}
}

void ember_worker_defer(void *sink, struct ember_op *op)
{
	if (!enqueue(op))
		ember_engine_finish(&ember_shim_engine, op, false);
}

/* A deferred free with no worker to do it: wait for the stream point here, then free. */
static void free_now(CUdeviceptr ptr, CUevent event)
{
	EMBER_REAL(cuEventSynchronize)(event);
	EMBER_REAL(cuMemFree_v2)(ptr);
	EMBER_REAL(cuEventDestroy_v2)(event);
}

void ember_worker_free_after(CUdeviceptr ptr, CUevent event, CUcontext ctx)
{
	struct deferred_free *f = calloc(1, sizeof *f);
	if (!f) {
		free_now(ptr, event);
		return;
	}
	*f = (struct deferred_free){ .ptr = ptr, .event = event, .ctx = ctx };
	ember_lock(&q_lock);
	bool running = ensure_started();
	if (running) {
		pending++;
		frees_pending++;
		f->next = frees_queued;
		frees_queued = f;
		pthread_cond_signal(&q_wake);
	}
	ember_unlock(&q_lock);
	if (!running) {
		free_now(ptr, event);
		free(f);
	}
}

int ember_worker_flush(void)
{
	/* a pass that was asked for, or is deciding, may still add moves */
	ember_lock(&q_lock);
	while (started && (pending > 0 || (strategy_pass && !stopping && (pass_wanted || pass_running))))
		pthread_cond_wait(&q_done, &q_lock);
	ember_unlock(&q_lock);
	return 0;
}

void ember_worker_wait_alloc(struct ember_alloc *a)
{
	ember_lock(&q_lock);
	for (;;) {
		ember_table_lock(EMBER_TABLE);
		unsigned n = a->in_flight;
		ember_table_unlock(EMBER_TABLE);
		if (n == 0 || !started)
			break;
		pthread_cond_wait(&q_done, &q_lock);
	}
	ember_unlock(&q_lock);
}

void ember_worker_wait_frees(void)
{
	ember_lock(&q_lock);
	while (started && frees_pending > 0)
		pthread_cond_wait(&q_done, &q_lock);
	ember_unlock(&q_lock);
}

void ember_worker_stop(void)
{
	ember_lock(&q_lock);
	bool join = started && !stopping;
	stopping = true;
	pthread_cond_signal(&q_wake);
	ember_unlock(&q_lock);
	if (join)
		pthread_join(thread, NULL);
}

void ember_worker_after_fork_child(void)
{
	pthread_cond_init(&q_wake, NULL);
	pthread_cond_init(&q_done, NULL);
	/* the parent's queued moves belong to the parent; forget them */
	queued_head = NULL;
	queued_tail = &queued_head;
	frees_queued = NULL;
	in_flight = NULL;
	frees_in_flight = NULL;
	pending = frees_pending = 0;
	started = stopping = pass_wanted = pass_running = false;
	nudged = 0;
	ember_driver_after_fork_child();
}
