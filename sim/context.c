/*
 * Contexts: created ones, and each thread's stack of current contexts.
 * Primary contexts live in primary.c.
 */
#include <stdlib.h>

#include "sim.h"

/* Deep enough for any real program; a push past it fails cleanly. */
#define CTX_STACK_MAX 64
/* cuCtxCreate's flags: scheduling (0, 1, 2 or 4) and the single-bit options. */
#define CTX_FLAGS_KNOWN 0xffu
#define CTX_SCHED_MASK 0x07u
/* What cuCtxGetApiVersion reports for contexts of the current API. */
#define CTX_API_VERSION 3020

static __thread struct sim_ctx *stack[CTX_STACK_MAX];
static __thread unsigned depth;

void sim_ctx_init(struct sim_ctx *ctx, int device, unsigned flags, bool primary)
{
	uint64_t now = sim_clock_now();
	pthread_mutex_lock(&sim_time_lock);
	ctx->device = device;
	ctx->flags = flags;
	ctx->primary = primary;
	ctx->legacy = (struct sim_stream){ .ctx = ctx, .kind = SIM_STREAM_LEGACY, .done_ns = now };
	ctx->horizon_ns = ctx->blocking_ns = now;
	pthread_mutex_unlock(&sim_time_lock);
}

bool sim_ctx_flags_valid(unsigned flags)
{
	unsigned sched = flags & CTX_SCHED_MASK;
	return !(flags & ~CTX_FLAGS_KNOWN) && sched != 3 && sched <= 4;
}

CUresult sim_ctx_check(struct sim_ctx *ctx)
{
	if (!ctx || !sim_handle_valid(SIM_H_CTX, ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx->primary && !__atomic_load_n(&ctx->active, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	return CUDA_SUCCESS;
}

CUresult sim_current_ctx(struct sim_ctx **out)
{
	SIM_REQUIRE_INIT();
	struct sim_ctx *top = depth ? stack[depth - 1] : NULL;
	if (!top)
		return CUDA_ERROR_INVALID_CONTEXT;
	CUresult r = sim_ctx_check(top);
	if (r != CUDA_SUCCESS)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED; /* it was alive when it was made current */
	*out = top;
	return CUDA_SUCCESS;
}

/* An explicit context argument where NULL means the current one. */
static CUresult ctx_or_current(CUcontext given, struct sim_ctx **out)
{
	SIM_REQUIRE_INIT();
	if (!given)
		return sim_current_ctx(out);
	CUresult r = sim_ctx_check((struct sim_ctx *)given);
	if (r == CUDA_SUCCESS)
		*out = (struct sim_ctx *)given;
	return r;
}

void sim_ctx_release_resources(struct sim_ctx *ctx)
{
	sim_events_release_ctx(ctx);
	sim_streams_release_ctx(ctx);
	sim_modules_release_ctx(ctx);
	sim_graphs_release_ctx(ctx);
	sim_memory_release_ctx(ctx);
}

static CUresult push(struct sim_ctx *ctx)
{
	if (depth == CTX_STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	stack[depth++] = ctx;
	return CUDA_SUCCESS;
}

static CUresult create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (!pctx || !sim_ctx_flags_valid(flags))
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (depth == CTX_STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	struct sim_ctx *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_ctx_init(ctx, dev, flags, false);
	sim_handle_add(SIM_H_CTX, ctx, NULL);
	push(ctx);
	*pctx = (CUcontext)ctx;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return create(pctx, flags, dev);
}

/* Execution affinity (SM limits) does not change what the sim computes. */
SIM_EXPORT CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
					   int numParams, unsigned int flags, CUdevice dev)
{
	if (numParams < 0 || (numParams > 0 && !paramsArray))
		return CUDA_ERROR_INVALID_VALUE;
	return create(pctx, flags, dev);
}

SIM_EXPORT CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
					   unsigned int flags, CUdevice dev)
{
	return create(pctx, flags, dev);
}

SIM_EXPORT CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
	SIM_REQUIRE_INIT();
	struct sim_ctx *c = (struct sim_ctx *)ctx;
	/* primary contexts go with cuDevicePrimaryCtxRelease, not here */
	if (!c || c->primary || !sim_handle_remove(SIM_H_CTX, c))
		return CUDA_ERROR_INVALID_CONTEXT;
	unsigned kept = 0;
	for (unsigned i = 0; i < depth; i++)
		if (stack[i] != c)
			stack[kept++] = stack[i];
	depth = kept;
	sim_ctx_release_resources(c);
	free(c);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	SIM_REQUIRE_INIT();
	if (ctx) {
		CUresult r = sim_ctx_check((struct sim_ctx *)ctx);
		if (r != CUDA_SUCCESS)
			return r;
	}
	/* replaces the top of the stack; NULL leaves the thread without a context */
	if (depth == 0)
		return ctx ? push((struct sim_ctx *)ctx) : CUDA_SUCCESS;
	stack[depth - 1] = (struct sim_ctx *)ctx;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	SIM_REQUIRE_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = depth ? (CUcontext)stack[depth - 1] : NULL;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
	SIM_REQUIRE_INIT();
	CUresult r = sim_ctx_check((struct sim_ctx *)ctx);
	return r != CUDA_SUCCESS ? r : push((struct sim_ctx *)ctx);
}

SIM_EXPORT CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
	SIM_REQUIRE_INIT();
	if (depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	struct sim_ctx *top = stack[--depth];
	if (pctx)
		*pctx = (CUcontext)top;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = ctx->device;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	struct sim_ctx *c;
	CUresult r = ctx_or_current(ctx, &c);
	if (r != CUDA_SUCCESS)
		return r;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = c->device;
	return CUDA_SUCCESS;
}

/* The host waits for everything queued in the context. */
static void synchronize(struct sim_ctx *ctx)
{
	pthread_mutex_lock(&sim_time_lock);
	uint64_t done = ctx->horizon_ns;
	pthread_mutex_unlock(&sim_time_lock);
	sim_clock_advance_to(done);
}

SIM_EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r == CUDA_SUCCESS)
		synchronize(ctx);
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	struct sim_ctx *c;
	CUresult r = ctx_or_current(ctx, &c);
	if (r == CUDA_SUCCESS)
		synchronize(c);
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	struct sim_ctx *c;
	CUresult r = ctx_or_current(ctx, &c);
	if (r != CUDA_SUCCESS)
		return r;
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = CTX_API_VERSION;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = ctx->flags;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	struct sim_ctx *ctx;
	CUresult r = sim_current_ctx(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (leastPriority)
		*leastPriority = SIM_PRIORITY_LEAST;
	if (greatestPriority)
		*greatestPriority = SIM_PRIORITY_GREATEST;
	return CUDA_SUCCESS;
}
