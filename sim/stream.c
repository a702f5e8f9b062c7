/*
 * Streams. Work runs eagerly on the calling thread; what a stream keeps is
 * when its last operation would complete in virtual time. An operation
 * starts once the host has issued it and the stream is free, and, as in
 * CUDA's legacy default-stream semantics, the legacy stream waits for every
 * blocking stream of its context, and blocking streams wait for it.
 *
 * Each export taking a stream comes twice: the plain one treats a NULL
 * stream as the legacy stream, the _ptsz one as the calling thread's
 * per-thread stream.
 */
#include <stdlib.h>

#include "cost.h"
#include "sim.h"

/* CU_STREAM_PER_THREAD: one per thread, following the thread's current context. */
static __thread struct sim_stream per_thread = { .kind = SIM_STREAM_PER_THREAD };

CUresult sim_stream_resolve(CUstream h, bool per_thread_default, struct sim_stream **out)
{
	SIM_REQUIRE_INIT();
	if (!h)
		h = per_thread_default ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
	if (h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
		struct sim_ctx *ctx;
		CUresult r = sim_current_ctx(&ctx);
		if (r != CUDA_SUCCESS)
			return r;
		if (h == CU_STREAM_LEGACY) {
			*out = &ctx->legacy;
			return CUDA_SUCCESS;
		}
		if (per_thread.ctx != ctx) { /* work in the old context is still on its horizon */
			pthread_mutex_lock(&sim_time_lock);
			per_thread.ctx = ctx;
			per_thread.done_ns = 0;
			pthread_mutex_unlock(&sim_time_lock);
		}
		*out = &per_thread;
		return CUDA_SUCCESS;
	}
	if (!sim_handle_valid(SIM_H_STREAM, h))
		return CUDA_ERROR_INVALID_HANDLE;
	*out = (struct sim_stream *)h;
	return CUDA_SUCCESS;
}

static bool is_blocking(const struct sim_stream *s)
{
	return !(s->flags & CU_STREAM_NON_BLOCKING);
}

uint64_t sim_stream_enqueue(struct sim_stream *s, uint64_t cost_ns)
{
	struct sim_ctx *ctx = s->ctx;
	uint64_t issued = sim_clock_now();
	pthread_mutex_lock(&sim_time_lock);
	uint64_t start = SIM_MAX(issued, s->done_ns);
	if (s->kind == SIM_STREAM_LEGACY)
		start = SIM_MAX(start, ctx->blocking_ns);
	else if (is_blocking(s))
		start = SIM_MAX(start, ctx->legacy.done_ns);
	uint64_t end = start + cost_ns;
	s->done_ns = end;
	ctx->horizon_ns = SIM_MAX(ctx->horizon_ns, end);
	if (is_blocking(s))
		ctx->blocking_ns = SIM_MAX(ctx->blocking_ns, end);
	pthread_mutex_unlock(&sim_time_lock);
	sim_capture_note_work(s);
	return end;
}

uint64_t sim_stream_enqueue_sync(struct sim_stream *s, uint64_t cost_ns)
{
	uint64_t end = sim_stream_enqueue(s, cost_ns);
	sim_clock_advance_to(end);
	return end;
}

static uint64_t done_time(const struct sim_stream *s)
{
	pthread_mutex_lock(&sim_time_lock);
	uint64_t t = s->done_ns;
	pthread_mutex_unlock(&sim_time_lock);
	return t;
}

/*
 * A query that finds work pending lets time pass: half of what remains, at
 * least SIM_POLL_NS. A polling loop thus ends after a few dozen polls,
 * while one query does not jump the clock to the end of the work.
 */
CUresult sim_poll(uint64_t done_ns)
{
	uint64_t now = sim_clock_now();
	if (now >= done_ns)
		return CUDA_SUCCESS;
	uint64_t step = SIM_MAX((done_ns - now) / 2, (uint64_t)SIM_POLL_NS);
	sim_clock_advance_to(SIM_MIN(now + step, done_ns));
	return CUDA_ERROR_NOT_READY;
}

static CUresult create(CUstream *phStream, unsigned flags, int priority)
{
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_stream *s = calloc(1, sizeof *s);
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* out-of-range priorities are clamped, as the driver does */
	priority = SIM_MIN(priority, SIM_PRIORITY_LEAST);
	priority = SIM_MAX(priority, SIM_PRIORITY_GREATEST);
	*s = (struct sim_stream){ .ctx = ctx, .kind = SIM_STREAM_USER, .flags = flags,
				  .priority = priority, .done_ns = sim_clock_now() };
	sim_handle_add(SIM_H_STREAM, s, ctx);
	*phStream = (CUstream)s;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	SIM_INJECT("cuStreamCreate");
	return create(phStream, Flags, SIM_PRIORITY_LEAST);
}

SIM_EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
	return create(phStream, flags, priority);
}

/* A stream destroyed while it captures ends its capture with it. */
static void release(void *s)
{
	sim_capture_forget(s);
	free(s);
}

/* Work already queued still completes: its time stays on the context's horizon. */
SIM_EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
	SIM_REQUIRE_INIT();
	if (!sim_handle_remove(SIM_H_STREAM, hStream))
		return CUDA_ERROR_INVALID_HANDLE;
	release(hStream);
	return CUDA_SUCCESS;
}

void sim_streams_release_ctx(struct sim_ctx *ctx)
{
	sim_handles_drain(SIM_H_STREAM, ctx, release);
}

static CUresult synchronize(CUstream h, bool ptsz)
{
	SIM_UNSAFE_DURING_CAPTURE();
	CUresult injected = sim_injected("cuStreamSynchronize"); /* both forms: a wait that holds the thread */
	if (injected != CUDA_SUCCESS)
		return injected;
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(h, ptsz, &s);
	if (r == CUDA_SUCCESS)
		sim_clock_advance_to(done_time(s));
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	return synchronize(hStream, false);
}

SIM_EXPORT CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
	return synchronize(hStream, true);
}

static CUresult query(CUstream h, bool ptsz)
{
	SIM_UNSAFE_DURING_CAPTURE();
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(h, ptsz, &s);
	return r != CUDA_SUCCESS ? r : sim_poll(done_time(s));
}

SIM_EXPORT CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
	return query(hStream, false);
}

SIM_EXPORT CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream)
{
	return query(hStream, true);
}

/* The stream behind h, for a query that writes through out. */
static CUresult resolve_query(CUstream h, bool ptsz, const void *out, struct sim_stream **s)
{
	CUresult r = sim_stream_resolve(h, ptsz, s);
	if (r == CUDA_SUCCESS && !out)
		r = CUDA_ERROR_INVALID_VALUE;
	return r;
}

static CUresult get_priority(CUstream h, int *priority, bool ptsz)
{
	struct sim_stream *s;
	CUresult r = resolve_query(h, ptsz, priority, &s);
	if (r == CUDA_SUCCESS)
		*priority = s->priority;
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
	return get_priority(hStream, priority, false);
}

SIM_EXPORT CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
	return get_priority(hStream, priority, true);
}

static CUresult get_flags(CUstream h, unsigned *flags, bool ptsz)
{
	struct sim_stream *s;
	CUresult r = resolve_query(h, ptsz, flags, &s);
	if (r == CUDA_SUCCESS)
		*flags = s->flags;
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	return get_flags(hStream, flags, false);
}

SIM_EXPORT CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
	return get_flags(hStream, flags, true);
}

static CUresult get_ctx(CUstream h, CUcontext *pctx, bool ptsz)
{
	struct sim_stream *s;
	CUresult r = resolve_query(h, ptsz, pctx, &s);
	if (r == CUDA_SUCCESS)
		*pctx = (CUcontext)s->ctx;
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
	return get_ctx(hStream, pctx, false);
}

SIM_EXPORT CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
	return get_ctx(hStream, pctx, true);
}

static CUresult is_capturing(CUstream h, CUstreamCaptureStatus *status, bool ptsz)
{
	struct sim_stream *s;
	CUresult r = resolve_query(h, ptsz, status, &s);
	if (r == CUDA_SUCCESS)
		*status = !__atomic_load_n(&s->capture, __ATOMIC_ACQUIRE) ? CU_STREAM_CAPTURE_STATUS_NONE
			  : sim_capture_broken(s)			   ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
									   : CU_STREAM_CAPTURE_STATUS_ACTIVE;
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	return is_capturing(hStream, captureStatus, false);
}

SIM_EXPORT CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	return is_capturing(hStream, captureStatus, true);
}
