/* The migration worker thread. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adaptive.h"
#include "live.h"
#include "shim.h"
#include "uvm_events.h"
#include "worker.h"

enum { MAX_STREAMS = 16, POLL_NS = 200 * 1000 };

struct job {
	struct job *next;
	enum { JOB_MIGRATE, JOB_FREE } type;
	struct ember_migration m;
	CUdeviceptr ptr; /* JOB_FREE */
	CUevent start, end;
	bool issued;
	CUresult issue_error;
};

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_wake = PTHREAD_COND_INITIALIZER; /* work for the worker */
static pthread_cond_t q_done = PTHREAD_COND_INITIALIZER; /* something completed */
static struct job *queued_head, **queued_tail = &queued_head;
static unsigned pending; /* queued + in flight */
static bool started, stopping;
static pthread_t thread;

/* Owned by the worker thread alone. */
static struct job *in_flight;
static CUcontext worker_ctx;

/* One private stream per context, shared by the worker and launching threads. */
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	CUcontext ctx;
	CUstream stream;
} streams[MAX_STREAMS];

/* The private stream of ctx, which must be current on the calling thread. */
static CUstream private_stream(CUcontext ctx)
{
	pthread_mutex_lock(&streams_lock);
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i].ctx == ctx) {
			CUstream s = streams[i].stream;
			pthread_mutex_unlock(&streams_lock);
			return s;
		}
	pthread_mutex_unlock(&streams_lock);
	/* created outside the lock; a racing creator's stream wins and ours goes */
	CUstream s;
	if (EMBER_REAL(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		return NULL;
	pthread_mutex_lock(&streams_lock);
	CUstream winner = NULL;
	for (int i = 0; i < MAX_STREAMS && !winner; i++)
		if (streams[i].ctx == ctx)
			winner = streams[i].stream;
	for (int i = 0; i < MAX_STREAMS && !winner; i++)
		if (!streams[i].ctx) {
			streams[i].ctx = ctx;
			streams[i].stream = winner = s;
		}
	pthread_mutex_unlock(&streams_lock);
	if (winner != s)
		EMBER_REAL(cuStreamDestroy_v2)(s);
	return winner;
}

/* The worker thread moves between contexts; application threads are already in theirs. */
static bool enter_context(CUcontext ctx)
{
	if (ctx == worker_ctx)
		return true;
	if (EMBER_REAL(cuCtxSetCurrent)(ctx) != CUDA_SUCCESS)
		return false;
	worker_ctx = ctx;
	return true;
}

static uint64_t migration_bytes(const struct ember_migration *m)
{
	uint64_t bytes = 0;
	for (uint32_t r = m->first; r < m->first + m->count; r++)
		bytes += ember_region_bytes(m->alloc, r);
	return bytes;
}

/* Start one job on the driver, in the current context. Returns false when it could not be issued. */
static bool issue(struct job *j)
{
	if (j->type == JOB_FREE)
		return true; /* its event was recorded by the application's thread */
	if (j->m.alloc->freed)
		return false;
	CUstream s = private_stream(j->m.ctx);
	if (!s) {
		j->issue_error = CUDA_ERROR_OUT_OF_MEMORY;
		return false;
	}
	CUmemLocation loc = j->m.to_device >= 0
				    ? (CUmemLocation){ .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = j->m.to_device }
				    : (CUmemLocation){ .type = CU_MEM_LOCATION_TYPE_HOST, .id = 0 };
	CUdeviceptr start = j->m.alloc->base + ((uint64_t)j->m.first << EMBER_REGION_SHIFT);
	EMBER_REAL(cuEventCreate)(&j->start, CU_EVENT_DEFAULT);
	EMBER_REAL(cuEventCreate)(&j->end, CU_EVENT_DEFAULT);
	if (j->start)
		EMBER_REAL(cuEventRecord)(j->start, s);
	j->issue_error = EMBER_REAL(cuMemPrefetchAsync_v2)(start, migration_bytes(&j->m), loc, 0, s);
	if (j->issue_error != CUDA_SUCCESS)
		return false;
	if (!j->end || EMBER_REAL(cuEventRecord)(j->end, s) != CUDA_SUCCESS) {
		/* no event to watch: wait here, on the worker, never on the application */
		EMBER_REAL(cuStreamSynchronize)(s);
	}
	return true;
}

/* Apply a finished (or failed) migration to the table. */
static void complete_migration(struct job *j, bool ok, uint64_t ns)
{
	struct ember_migration *m = &j->m;
	struct ember_alloc *a = m->alloc;
	bool promote = m->to_device >= 0;
	uint64_t bytes = migration_bytes(m);
	ember_regions_lock();
	struct ember_device_account *acc = ember_account(a->device);
	/*
	 * A promotion that failed leaves its regions mapped (prefetch never
	 * changes bytes, only where they are) and returns its reservation. A
	 * demotion that failed leaves them resident and still accounted.
	 */
	enum ember_region_state after = promote == ok ? EMBER_REGION_RESIDENT : EMBER_REGION_MAPPED;
	/* a released demotion's bytes left the account when it was issued: a failure brings them back */
	uint64_t released = 0;
	for (uint32_t r = m->first; r < m->first + m->count; r++) {
		a->regions[r].state = after;
		if (a->regions[r].released)
			released += ember_region_bytes(a, r);
		a->regions[r].released = 0;
	}
	a->in_flight -= m->count;
	if (ember_cfg.mode == EMBER_MODE_ADAPTIVE)
		ember_policy_moved(ember_adaptive_params(), a, m->first, m->count, promote, ok, ember_adaptive_now());
	if (!a->freed && acc && after == EMBER_REGION_MAPPED)
		ember_account_leave(acc, bytes - released);
	else if (!a->freed && acc && released)
		acc->resident += released;
	if (ok) {
		uint64_t *count = promote ? &a->stats.promotions : &a->stats.demotions;
		uint64_t *moved = promote ? &a->stats.bytes_promoted : &a->stats.bytes_demoted;
		++*count;
		*moved += bytes;
		a->stats.migrate_ns += ns;
		if (acc) {
			++*(promote ? &acc->promotions : &acc->demotions);
			*(promote ? &acc->bytes_promoted : &acc->bytes_demoted) += bytes;
			acc->migrate_ns += ns;
		}
	}
	ember_regions_unlock();
	ember_alloc_put(a);
}

/* Apply a job's outcome and free it; the queue's count is the caller's business. */
static void retire(struct job *j, bool ok)
{
	uint64_t ns = 0;
	if (j->type == JOB_MIGRATE) {
		if (ok && j->start && j->end) {
			float ms = 0;
			if (EMBER_REAL(cuEventElapsedTime_v2)(&ms, j->start, j->end) == CUDA_SUCCESS)
				ns = (uint64_t)(ms * 1e6);
		}
		if (!ok && j->issue_error != CUDA_SUCCESS)
			ember_warn("a %s of %llu bytes failed (CUresult %d); the regions stay %s",
				   j->m.to_device >= 0 ? "promotion" : "demotion",
				   (unsigned long long)migration_bytes(&j->m), (int)j->issue_error,
				   j->m.to_device >= 0 ? "mapped" : "resident");
		complete_migration(j, ok, ns);
	} else if (ok) {
		CUresult r = EMBER_REAL(cuMemFree_v2)(j->ptr);
		if (r != CUDA_SUCCESS)
			ember_warn("deferred free of %#llx failed (CUresult %d)", (unsigned long long)j->ptr, (int)r);
	}
	if (j->start)
		EMBER_REAL(cuEventDestroy_v2)(j->start);
	if (j->end)
		EMBER_REAL(cuEventDestroy_v2)(j->end);
	free(j);
}

/* A queued job is done: retire it and count it out of the queue. */
static void finish(struct job *j, bool ok)
{
	retire(j, ok);
	pthread_mutex_lock(&q_lock);
	pending--;
	pthread_cond_broadcast(&q_done);
	pthread_mutex_unlock(&q_lock);
}

/* Complete every in-flight job whose end event has fired. Returns how many. */
static unsigned poll_in_flight(void)
{
	unsigned done = 0;
	for (struct job **p = &in_flight; *p;) {
		struct job *j = *p;
		CUresult r = CUDA_SUCCESS;
		if (j->end) {
			enter_context(j->m.ctx);
			r = EMBER_REAL(cuEventQuery)(j->end);
		}
		if (r == CUDA_ERROR_NOT_READY) {
			p = &j->next;
			continue;
		}
		*p = j->next;
		if (r != CUDA_SUCCESS)
			j->issue_error = r;
		finish(j, r == CUDA_SUCCESS);
		done++;
	}
	return done;
}

static bool adaptive_wanted; /* a launch asked for a policy pass */
static bool pass_running;    /* a policy pass is deciding: its moves are not counted in pending yet */

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

static void *worker_main(void *arg)
{
	(void)arg;
	bool adaptive = ember_cfg.mode == EMBER_MODE_ADAPTIVE;
	uint64_t interval = adaptive ? ember_adaptive_params()->interval_ns : 0;
	uint64_t last_pass = 0;
	ember_uvm_events_start(); /* the driver is initialised by now: migrations need it */
	pthread_mutex_lock(&q_lock);
	for (;;) {
		struct job *batch = queued_head;
		queued_head = NULL;
		queued_tail = &queued_head;
		if (!batch && !in_flight && stopping)
			break;
		bool pass_due = adaptive && !stopping &&
				(adaptive_wanted || ember_adaptive_now() - last_pass >= interval);
		adaptive_wanted = false;
		pass_running = pass_due;
		pthread_mutex_unlock(&q_lock);

		/* the policy runs here, on launches, each interval and after each completion */
		if (pass_due) {
			last_pass = ember_adaptive_now();
			ember_adaptive_pass();
			pthread_mutex_lock(&q_lock);
			struct job *more = queued_head;
			queued_head = NULL;
			queued_tail = &queued_head;
			pass_running = false; /* its moves are in pending now */
			pthread_cond_broadcast(&q_done);
			pthread_mutex_unlock(&q_lock);
			/* its moves go first in line with anything queued meanwhile */
			struct job **tail = &batch;
			while (*tail)
				tail = &(*tail)->next;
			*tail = more;
		}

		while (batch) {
			struct job *j = batch;
			batch = j->next;
			j->next = NULL;
			if (j->issued) { /* started by an application thread; only to be completed */
				j->next = in_flight;
				in_flight = j;
			} else if (!enter_context(j->m.ctx)) {
				j->issue_error = CUDA_ERROR_INVALID_CONTEXT;
				finish(j, false);
			} else if (issue(j)) {
				j->next = in_flight;
				in_flight = j;
			} else {
				finish(j, false);
			}
		}
		unsigned done = poll_in_flight();
		ember_uvm_events_drain();
		if (ember_cfg.live && (done || pass_due))
			ember_live_publish();

		pthread_mutex_lock(&q_lock);
		if (done && adaptive)
			adaptive_wanted = true; /* room freed, or a batch finished: decide again now */
		if (queued_head || adaptive_wanted)
			continue;
		if (in_flight) {
			struct timespec ts = deadline_in(POLL_NS);
			pthread_cond_timedwait(&q_wake, &q_lock, &ts);
		} else if ((adaptive || ember_cfg.live || ember_uvm_events_reading()) && !stopping) {
			/* the event queue holds 32768 records: read it often enough that none are dropped */
			struct timespec ts = deadline_in(adaptive ? interval : 100 * 1000 * 1000ull);
			pthread_cond_timedwait(&q_wake, &q_lock, &ts);
			if (ember_cfg.live && !adaptive)
				ember_live_publish(); /* static and mapped modes change only on launches: a slow refresh */
		} else if (!stopping) {
			pthread_cond_wait(&q_wake, &q_lock);
		}
	}
	pthread_mutex_unlock(&q_lock);
	return NULL;
}

/* Start the thread if it is not running (q_lock held). */
static void ensure_started(void)
{
	if (!started && !stopping && pthread_create(&thread, NULL, worker_main, NULL) == 0) {
		started = true;
		atexit(ember_worker_stop);
	}
}

void ember_worker_wake(void)
{
	pthread_mutex_lock(&q_lock);
	ensure_started();
	adaptive_wanted = true;
	pthread_cond_signal(&q_wake);
	pthread_mutex_unlock(&q_lock);
}

/* A deferred free with no worker to do it: wait for the stream point here, then free. */
static void free_now(CUdeviceptr ptr, CUevent event)
{
	EMBER_REAL(cuEventSynchronize)(event);
	EMBER_REAL(cuMemFree_v2)(ptr);
	EMBER_REAL(cuEventDestroy_v2)(event);
}

static void enqueue(struct job *j)
{
	pthread_mutex_lock(&q_lock);
	ensure_started();
	bool running = started && !stopping;
	if (running) {
		pending++;
		*queued_tail = j;
		queued_tail = &j->next;
		pthread_cond_signal(&q_wake);
	}
	pthread_mutex_unlock(&q_lock);
	if (running)
		return;
	/* no thread (creation failed, or exit is under way): undo it safely */
	if (j->type == JOB_MIGRATE) {
		complete_migration(j, false, 0);
	} else {
		free_now(j->ptr, j->end);
	}
	free(j);
}

void ember_worker_submit(const struct ember_migration *m)
{
	struct job *j = calloc(1, sizeof *j);
	if (!j) {
		struct job stack = { .type = JOB_MIGRATE, .m = *m };
		complete_migration(&stack, false, 0);
		return;
	}
	j->type = JOB_MIGRATE;
	j->m = *m;
	enqueue(j);
}

void ember_migrations_start(const struct ember_migration *ms, size_t n, enum ember_order order, CUstream stream,
			    bool per_thread)
{
	if (n == 0)
		return;
	CUstream priv = private_stream(ms[0].ctx);
	bool any = false, demotion_failed = false;
	for (size_t i = 0; i < n; i++) {
		struct job *j = calloc(1, sizeof *j);
		if (!j || !priv) {
			free(j);
			demotion_failed |= ms[i].to_device < 0;
			ember_worker_submit(&ms[i]); /* the worker will try */
			continue;
		}
		j->type = JOB_MIGRATE;
		j->m = ms[i];
		/* promotions queued behind a demotion use its room: without it, they wait for a later launch */
		bool needs_room_that_failed = demotion_failed && ms[i].to_device >= 0;
		if (needs_room_that_failed || !issue(j)) {
			demotion_failed |= ms[i].to_device < 0;
			retire(j, false); /* never queued */
			continue;
		}
		j->issued = true;
		any = true;
		enqueue(j); /* the worker completes it */
	}
	if (!any)
		return;
	if (order == EMBER_ORDER_SYNC) {
		EMBER_REAL(cuStreamSynchronize)(priv);
	} else if (order == EMBER_ORDER_STREAM) {
		/* a stream being captured into a graph may not wait on outside work */
		CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
		if (per_thread)
			EMBER_REAL(cuStreamIsCapturing_ptsz)(stream, &capture);
		else
			EMBER_REAL(cuStreamIsCapturing)(stream, &capture);
		if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
			return;
		/* an event of our own: the jobs' events belong to the worker, which may destroy them */
		CUevent done;
		CUresult r = EMBER_REAL(cuEventCreate)(&done, CU_EVENT_DISABLE_TIMING);
		if (r == CUDA_SUCCESS) {
			r = EMBER_REAL(cuEventRecord)(done, priv);
			if (r == CUDA_SUCCESS)
				r = per_thread ? EMBER_REAL(cuStreamWaitEvent_ptsz)(stream, done, 0)
					       : EMBER_REAL(cuStreamWaitEvent)(stream, done, 0);
			EMBER_REAL(cuEventDestroy_v2)(done);
		}
		if (r != CUDA_SUCCESS)
			ember_debug("the launch stream cannot wait for its promotion (CUresult %d); it runs mapped meanwhile",
				    (int)r);
	}
}

void ember_worker_free_after(CUdeviceptr ptr, CUevent event, CUcontext ctx)
{
	struct job *j = calloc(1, sizeof *j);
	if (!j) {
		free_now(ptr, event);
		return;
	}
	j->type = JOB_FREE;
	j->ptr = ptr;
	j->end = event;
	j->m.ctx = ctx;
	enqueue(j);
}

int ember_worker_flush(void)
{
	/* in adaptive mode a pass that was asked for, or is deciding, may still add moves */
	bool adaptive = ember_cfg.mode == EMBER_MODE_ADAPTIVE;
	pthread_mutex_lock(&q_lock);
	while (started && (pending > 0 || (adaptive && !stopping && (adaptive_wanted || pass_running))))
		pthread_cond_wait(&q_done, &q_lock);
	pthread_mutex_unlock(&q_lock);
	return 0;
}

void ember_worker_wait_alloc(struct ember_alloc *a)
{
	pthread_mutex_lock(&q_lock);
	for (;;) {
		ember_regions_lock();
		unsigned n = a->in_flight;
		ember_regions_unlock();
		if (n == 0 || !started)
			break;
		pthread_cond_wait(&q_done, &q_lock);
	}
	pthread_mutex_unlock(&q_lock);
}

void ember_worker_stop(void)
{
	pthread_mutex_lock(&q_lock);
	bool join = started && !stopping;
	stopping = true;
	pthread_cond_signal(&q_wake);
	pthread_mutex_unlock(&q_lock);
	if (join)
		pthread_join(thread, NULL);
}

void ember_worker_after_fork_child(void)
{
	pthread_mutex_init(&q_lock, NULL);
	pthread_cond_init(&q_wake, NULL);
	pthread_cond_init(&q_done, NULL);
	/* the parent's queued jobs belong to the parent; forget them */
	queued_head = NULL;
	queued_tail = &queued_head;
	in_flight = NULL;
	pending = 0;
	started = stopping = adaptive_wanted = pass_running = false;
	pthread_mutex_init(&streams_lock, NULL);
	memset(streams, 0, sizeof streams);
	worker_ctx = NULL;
}
