/*
 * Events: a point in a stream's virtual timeline. Recording one is an
 * operation of no cost; its time is when the stream reaches it.
 */
#include <stdlib.h>

#include "sim.h"

#define EVENT_FLAGS_KNOWN                                                                  \
	(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)

struct sim_event {
	struct sim_ctx *ctx;
	unsigned flags;
	bool recorded;    /* recorded and time_ns: under sim_time_lock */
	uint64_t time_ns;
	struct sim_capture_mark mark; /* recorded during a capture: where (capture.c) */
};

static CUresult check(CUevent h, struct sim_event **out)
{
	SIM_REQUIRE_INIT();
	if (!sim_handle_valid(SIM_H_EVENT, h))
		return CUDA_ERROR_INVALID_HANDLE;
	*out = (struct sim_event *)h;
	return CUDA_SUCCESS;
}

/* Whether it was recorded, and when it completes. */
static bool recorded_at(const struct sim_event *e, uint64_t *t)
{
	pthread_mutex_lock(&sim_time_lock);
	bool recorded = e->recorded;
	*t = e->time_ns;
	pthread_mutex_unlock(&sim_time_lock);
	return recorded;
}

SIM_EXPORT CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	SIM_INJECT("cuEventCreate");
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!phEvent || (Flags & ~(unsigned)EVENT_FLAGS_KNOWN))
		return CUDA_ERROR_INVALID_VALUE;
	/* an interprocess event must not time: the driver's rule */
	if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_event *e = calloc(1, sizeof *e);
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*e = (struct sim_event){ .ctx = ctx, .flags = Flags };
	sim_handle_add(SIM_H_EVENT, e, ctx);
	*phEvent = (CUevent)e;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
	SIM_REQUIRE_INIT();
	if (!sim_handle_remove(SIM_H_EVENT, hEvent))
		return CUDA_ERROR_INVALID_HANDLE;
	free(hEvent);
	return CUDA_SUCCESS;
}

void sim_events_release_ctx(struct sim_ctx *ctx)
{
	sim_handles_drain(SIM_H_EVENT, ctx, free);
}

static CUresult record(CUevent hEvent, CUstream hStream, unsigned flags, bool ptsz)
{
	struct sim_event *e;
	struct sim_stream *s;
	CUresult r = check(hEvent, &e);
	if (r == CUDA_SUCCESS)
		r = sim_stream_resolve(hStream, ptsz, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	if (__atomic_load_n(&s->capture, __ATOMIC_ACQUIRE) && sim_capture_broken(s))
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED; /* its capture takes nothing more, as a launch */
	uint64_t t = sim_stream_enqueue(s, 0);
	struct sim_capture_mark mark = sim_capture_mark_of(s);
	pthread_mutex_lock(&sim_time_lock);
	e->recorded = true;
	e->time_ns = t;
	e->mark = mark;
	pthread_mutex_unlock(&sim_time_lock);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
	return record(hEvent, hStream, 0, false);
}

SIM_EXPORT CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	return record(hEvent, hStream, 0, true);
}

SIM_EXPORT CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	return record(hEvent, hStream, flags, false);
}

SIM_EXPORT CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
							unsigned int flags)
{
	return record(hEvent, hStream, flags, true);
}

/* An event never recorded counts as complete, as in the driver. */
SIM_EXPORT CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
	SIM_UNSAFE_DURING_CAPTURE();
	struct sim_event *e;
	CUresult r = check(hEvent, &e);
	uint64_t t;
	if (r != CUDA_SUCCESS || !recorded_at(e, &t))
		return r;
	return sim_poll(t);
}

SIM_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	SIM_UNSAFE_DURING_CAPTURE();
	struct sim_event *e;
	CUresult r = check(hEvent, &e);
	uint64_t t;
	if (r == CUDA_SUCCESS && recorded_at(e, &t))
		sim_clock_advance_to(t);
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	struct sim_event *a, *b;
	CUresult r = check(hStart, &a);
	if (r == CUDA_SUCCESS)
		r = check(hEnd, &b);
	if (r != CUDA_SUCCESS)
		return r;
	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t ta, tb;
	if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING || !recorded_at(a, &ta) || !recorded_at(b, &tb))
		return CUDA_ERROR_INVALID_HANDLE;
	uint64_t now = sim_clock_now();
	if (now < ta || now < tb)
		return CUDA_ERROR_NOT_READY;
	*pMilliseconds = (float)(((double)tb - (double)ta) / 1e6);
	return CUDA_SUCCESS;
}

/* The older entry point answers the same. */
SIM_EXPORT CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

/* The stream's later work starts no earlier than the event. */
static CUresult wait_event(CUstream hStream, CUevent hEvent, unsigned flags, bool ptsz)
{
	struct sim_stream *s;
	struct sim_event *e;
	CUresult r = sim_stream_resolve(hStream, ptsz, &s);
	if (r == CUDA_SUCCESS)
		r = check(hEvent, &e);
	if (r != CUDA_SUCCESS)
		return r;
	if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_time_lock);
	struct sim_capture_mark mark = e->mark;
	pthread_mutex_unlock(&sim_time_lock);
	if ((r = sim_capture_wait(s, &mark)) != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&sim_time_lock);
	if (e->recorded)
		s->done_ns = SIM_MAX(s->done_ns, e->time_ns);
	pthread_mutex_unlock(&sim_time_lock);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	return wait_event(hStream, hEvent, Flags, false);
}

SIM_EXPORT CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	return wait_event(hStream, hEvent, Flags, true);
}
