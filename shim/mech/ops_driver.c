/*
 * The driver backend: advice for mapped placement, cuMemPrefetchAsync on
 * the context's private stream bracketed by events, and stream waits. The
 * calls are exactly those Ember made before the seam existed.
 */
#include <pthread.h>
#include <time.h>

#include "capture.h"
#include "ops_driver.h"
#include "read_dup.h"
#include "shim.h"
#include "streams.h"
#include "touch_pool.h"

/* The GPUs that may map managed memory, found once. */
static int gpus[EMBER_MAX_DEVICES];
static int ngpus;
static pthread_once_t gpus_once = PTHREAD_ONCE_INIT;

static void find_gpus(void)
{
	int count = 0;
	if (EMBER_REAL(cuDeviceGetCount)(&count) != CUDA_SUCCESS)
		count = 0;
	for (int d = 0; d < count && ngpus < EMBER_MAX_DEVICES; d++) {
		int concurrent = 0;
		if (EMBER_REAL(cuDeviceGetAttribute)(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, d) ==
			    CUDA_SUCCESS &&
		    concurrent)
			gpus[ngpus++] = d;
	}
}

/*
 * Host-preferred, and accessed by the GPUs in use (a->accessed_by, which
 * gpus.c fills; every GPU that can map managed memory when it is empty).
 * A GPU that comes into use later gets its accessed-by at its first
 * launch that references the allocation (advise_access): advising every
 * GPU a process can see costs an advice per GPU and allocation, and maps
 * the allocation into GPUs that never read it (a torchrun worker sees
 * all eight and uses one).
 */
static int advise_mapped(void *self, const struct ember_alloc *a)
{
	pthread_once(&gpus_once, find_gpus);
	if (a->size == 0)
		return CUDA_SUCCESS;
	CUmemLocation host = { .type = CU_MEM_LOCATION_TYPE_HOST, .id = 0 };
	CUresult r = EMBER_REAL(cuMemAdvise_v2)(a->base, a->size, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host);
	uint32_t want = __atomic_load_n(&a->accessed_by, __ATOMIC_RELAXED);
	for (int i = 0; r == CUDA_SUCCESS && i < ngpus; i++) {
		if (want && !(want & (1u << gpus[i])))
			continue;
		CUmemLocation gpu = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = gpus[i] };
		r = EMBER_REAL(cuMemAdvise_v2)(a->base, a->size, CU_MEM_ADVISE_SET_ACCESSED_BY, gpu);
	}
	return r;
}

static int advise_access(void *self, const struct ember_alloc *a, int dev)
{
	if (a->size == 0)
		return CUDA_SUCCESS;
	CUmemLocation gpu = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev };
	return EMBER_REAL(cuMemAdvise_v2)(a->base, a->size, CU_MEM_ADVISE_SET_ACCESSED_BY, gpu);
}

/* Where op's regions begin. */
static CUdeviceptr move_start(const struct ember_op *op)
{
	return op->move.alloc->base + ((uint64_t)op->move.first << EMBER_REGION_SHIFT);
}

/*
 * A driver call that held the thread issuing op's move for 20 ms or more,
 * named where the log asks for detail. Advice is not stream-ordered, and a
 * prefetch may wait in the driver before it is queued; either holds the
 * worker. On the H200, star's worker at 97/93 made its tables' room only
 * 2.4 s after the columns had landed, where a replay of the same trace
 * makes it in 0.22 s.
 */
enum { SLOW_CALL_NS = 20 * 1000 * 1000 };

static void note_if_slow(const char *what, CUmemLocation loc, const struct ember_op *op, uint64_t since)
{
	uint64_t took = ember_driver_now() - since;
	if (took >= SLOW_CALL_NS)
		ember_debug("%s %s for %llu MiB took %.0f ms", what,
			    loc.type == CU_MEM_LOCATION_TYPE_HOST ? "the host" : "the GPU",
			    (unsigned long long)(ember_move_bytes(&op->move) >> 20), (double)took / 1e6);
}

/* Prefetch op's regions toward loc on the private stream, between two events. */
static int prefetch(struct ember_op *op, CUmemLocation loc)
{
	CUstream s = ember_private_stream(op->at.ctx);
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUdeviceptr start = move_start(op);
	CUevent begin = NULL, end = NULL;
	EMBER_REAL(cuEventCreate)(&begin, CU_EVENT_DEFAULT);
	EMBER_REAL(cuEventCreate)(&end, CU_EVENT_DEFAULT);
	op->start = begin;
	op->end = end;
	if (begin)
		EMBER_REAL(cuEventRecord)(begin, s);
	uint64_t t0 = ember_driver_now();
	CUresult r = EMBER_REAL(cuMemPrefetchAsync_v2)(start, ember_move_bytes(&op->move), loc, 0, s);
	note_if_slow("a prefetch to", loc, op, t0);
	if (r != CUDA_SUCCESS)
		return r;
	if (!end || EMBER_REAL(cuEventRecord)(end, s) != CUDA_SUCCESS) {
		/* no event to watch: wait here (the worker, or a launch that would wait anyway) */
		static bool said;
		if (ember_first_time(&said))
			ember_warn("cannot create or record events: each migration is waited for where it is issued, "
				   "and its time is not measured");
		EMBER_REAL(cuStreamSynchronize)(s);
		if (end)
			EMBER_REAL(cuEventDestroy_v2)(end);
		op->end = NULL;
	}
	return CUDA_SUCCESS;
}

/*
 * A moved range prefers where it now lives. Under the host preference a
 * host touch after the promotion (a program checking its answer, a flag it
 * polls each step) leaves the page in host memory, where the GPU reads it
 * remotely while the budget counts it resident; so does a kernel's first
 * write to a page no prefetch populated (a prefetch does populate: 4 GiB
 * never touched landed on the H200 under the host preference,
 * tools/bench/promote_probe.cu). Without this advice, BFS at 0.5x of the
 * budget took 25.8 s a run against 0.08 to 0.32 s with it, its atomics going to
 * host memory, and star's warm runs 4.4 s against 0.02 s. Preferring the
 * GPU, a page the host took comes back at its next GPU access. Advice is
 * not stream-ordered; a failed advice leaves the old preference, and the
 * move goes ahead.
 */
static void prefer(const struct ember_op *op, CUmemLocation loc)
{
	CUdeviceptr start = move_start(op);
	uint64_t t0 = ember_driver_now();
	CUresult r = EMBER_REAL(cuMemAdvise_v2)(start, ember_move_bytes(&op->move), CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
						loc);
	note_if_slow("advice to prefer", loc, op, t0);
	static bool said;
	if (r != CUDA_SUCCESS && ember_first_time(&said))
		ember_debug("cannot set a moved range's preferred location (CUresult %d): it keeps the old one", (int)r);
}

/*
 * When a promotion's advice is given. On host pages the advice costs the
 * issuing thread about 18 ms a GiB, and the prefetch behind it waits: each
 * cold run at 0.5x of the budget took 1.1 to 1.55x as long as resident's.
 * On pages already on the GPU it costs about 1 ms a GiB
 * (tools/bench/results/suite/promote-probe.json). So the program's own
 * managed range larger than a span is advised once its prefetch has
 * completed (settle). The rest is advised at once:
 *  - a smaller range (a dimension table, a flag the host polls) costs at
 *    most about a millisecond, and no kernel touches it in between under
 *    the host preference;
 *  - converted memory has no host pages to pay for, and its first writes
 *    are the kernels': on the H200 a 14.4 GiB split of it, prefetched under
 *    the host preference, took 838,700 GPU faults that put those writes in
 *    host memory.
 */
enum { ADVISE_FIRST_BYTES = 64 << 20 };

static bool advised_first(const struct ember_op *op)
{
	return op->move.alloc->kind != EMBER_ALLOC_MANAGED || ember_move_bytes(&op->move) <= ADVISE_FIRST_BYTES;
}

/* The GPU whose budget op's allocation is placed against. */
static CUmemLocation home_gpu(const struct ember_op *op)
{
	return (CUmemLocation){ .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = op->move.alloc->device };
}

static int promote(void *self, struct ember_op *op)
{
	ember_touch_pool_settle(op->move.alloc); /* a touch of these regions would take pages back to the host */
	if (!op->move.refresh && advised_first(op)) /* a refresh's range has preferred the GPU since its promotion */
		prefer(op, home_gpu(op));
	return prefetch(op, home_gpu(op));
}

static void settle(void *self, struct ember_op *op)
{
	if (!op->move.refresh && !advised_first(op))
		prefer(op, home_gpu(op));
	ember_read_dup_arrived(op->move.alloc, move_start(op), ember_move_bytes(&op->move));
}

/*
 * Any read-mostly advice withdrawn first, then the host preferred: on an
 * H100 (ember-readmostly-probe, ab-40's call 6), 4 GiB given back in this
 * order were read mapped afterwards at 50.9 GB/s, and in the other order
 * at 12.7 GB/s, faulting (read_dup.h).
 */
static int demote(void *self, struct ember_op *op)
{
	CUmemLocation host = { .type = CU_MEM_LOCATION_TYPE_HOST, .id = 0 };
	ember_read_dup_leaving(op->move.alloc, move_start(op), ember_move_bytes(&op->move));
	prefer(op, host);
	return prefetch(op, host);
}

/*
 * The peer tier: onto GPU `to` for `reader`, or back to host memory. No
 * events: its caller charges the holder when it is issued, and a launch
 * that needs it waits for the private stream (stream_wait) as for any move.
 */
static int peer_place(void *self, struct ember_op *op, int to, int reader)
{
	CUstream s = ember_private_stream(op->at.ctx);
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUmemLocation loc = to >= 0 ? (CUmemLocation){ .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = to }
				    : (CUmemLocation){ .type = CU_MEM_LOCATION_TYPE_HOST, .id = 0 };
	prefer(op, loc);
	CUdeviceptr start = move_start(op);
	size_t bytes = ember_move_bytes(&op->move);
	if (to >= 0 && reader >= 0) {
		/* mapped for the reader wherever it is: its reads go over the peer link, with no fault */
		CUmemLocation r = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = reader };
		CUresult a = EMBER_REAL(cuMemAdvise_v2)(start, bytes, CU_MEM_ADVISE_SET_ACCESSED_BY, r);
		if (a != CUDA_SUCCESS)
			return a;
	}
	return EMBER_REAL(cuMemPrefetchAsync_v2)(start, bytes, loc, 0, s);
}

/*
 * The link from reader to holder's memory, measured once per pair: a
 * timed copy of 32 MiB from a buffer on holder to one on reader (the peer
 * link), and one from pinned host memory (the host link, standing in for
 * host-mapped reads: on the H200 they ran at 55 and 51 GB/s). Where the
 * driver stages peer copies through the host (no peer access between
 * them, or a link it does not use for copies), the peer figure comes out
 * no better than the host's and the tier stays off for that pair: the
 * cautious side. The buffers are the driver's, not the program's, and
 * are gone when this returns. Never measured on two real GPUs (issue 13).
 */
enum { LINK_PROBE_BYTES = 32 << 20 };

static int peer_link(void *self, const struct ember_at *at, int reader, int holder, double *peer_bps,
		     double *host_bps)
{
	*peer_bps = *host_bps = 0;
	int can = 0;
	if (reader == holder || EMBER_REAL(cuDeviceCanAccessPeer)(&can, reader, holder) != CUDA_SUCCESS || !can)
		return CUDA_SUCCESS; /* no peer access: no peer tier between them */
	CUstream s = ember_private_stream(at->ctx);
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUcontext hctx = NULL, popped;
	CUdeviceptr on_reader = 0, on_holder = 0;
	void *host = NULL;
	CUevent ev[3] = { NULL, NULL, NULL };
	CUresult r = EMBER_REAL(cuDevicePrimaryCtxRetain)(&hctx, holder);
	if (r == CUDA_SUCCESS && (r = EMBER_REAL(cuCtxPushCurrent_v2)(hctx)) == CUDA_SUCCESS) {
		r = EMBER_REAL(cuMemAlloc_v2)(&on_holder, LINK_PROBE_BYTES);
		EMBER_REAL(cuCtxPopCurrent_v2)(&popped);
	}
	if (r == CUDA_SUCCESS)
		r = EMBER_REAL(cuMemAlloc_v2)(&on_reader, LINK_PROBE_BYTES);
	if (r == CUDA_SUCCESS)
		r = EMBER_REAL(cuMemAllocHost_v2)(&host, LINK_PROBE_BYTES);
	for (int i = 0; i < 3 && r == CUDA_SUCCESS; i++)
		r = EMBER_REAL(cuEventCreate)(&ev[i], CU_EVENT_DEFAULT);
	if (r == CUDA_SUCCESS) {
		/* once untimed (first-use costs), then timed */
		EMBER_REAL(cuMemcpyDtoDAsync_v2)(on_reader, on_holder, LINK_PROBE_BYTES, s);
		EMBER_REAL(cuEventRecord)(ev[0], s);
		EMBER_REAL(cuMemcpyDtoDAsync_v2)(on_reader, on_holder, LINK_PROBE_BYTES, s);
		EMBER_REAL(cuEventRecord)(ev[1], s);
		EMBER_REAL(cuMemcpyHtoDAsync_v2)(on_reader, host, LINK_PROBE_BYTES, s);
		EMBER_REAL(cuEventRecord)(ev[2], s);
		r = EMBER_REAL(cuEventSynchronize)(ev[2]);
	}
	float peer_ms = 0, host_ms = 0;
	if (r == CUDA_SUCCESS && EMBER_REAL(cuEventElapsedTime_v2)(&peer_ms, ev[0], ev[1]) == CUDA_SUCCESS &&
	    EMBER_REAL(cuEventElapsedTime_v2)(&host_ms, ev[1], ev[2]) == CUDA_SUCCESS && peer_ms > 0 && host_ms > 0) {
		*peer_bps = LINK_PROBE_BYTES / (peer_ms * 1e-3);
		*host_bps = LINK_PROBE_BYTES / (host_ms * 1e-3);
	}
	for (int i = 0; i < 3; i++)
		if (ev[i])
			EMBER_REAL(cuEventDestroy_v2)(ev[i]);
	if (host)
		EMBER_REAL(cuMemFreeHost)(host);
	if (on_reader)
		EMBER_REAL(cuMemFree_v2)(on_reader);
	if (on_holder)
		EMBER_REAL(cuMemFree_v2)(on_holder);
	if (hctx)
		EMBER_REAL(cuDevicePrimaryCtxRelease_v2)(holder);
	return r;
}

/* The worker's current context: it moves between contexts; application threads are already in theirs. */
static CUcontext worker_ctx;

bool ember_driver_enter(void *ctx)
{
	if (ctx == __atomic_load_n(&worker_ctx, __ATOMIC_RELAXED))
		return true;
	CUresult r = EMBER_REAL(cuCtxSetCurrent)((CUcontext)ctx);
	if (r != CUDA_SUCCESS) {
		ember_debug("the worker could not enter context %p (CUresult %d)", ctx, (int)r);
		return false;
	}
	__atomic_store_n(&worker_ctx, (CUcontext)ctx, __ATOMIC_RELAXED);
	return true;
}

void ember_driver_forget_context(void *ctx)
{
	CUcontext was = (CUcontext)ctx;
	__atomic_compare_exchange_n(&worker_ctx, &was, NULL, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void ember_driver_after_fork_child(void)
{
	worker_ctx = NULL;
}

static enum ember_op_status completion(void *self, struct ember_op *op)
{
	if (!op->end)
		return EMBER_OP_DONE; /* it was waited for at issue */
	CUresult r = EMBER_REAL(cuEventQuery)((CUevent)op->end);
	if (r == CUDA_ERROR_NOT_READY)
		return EMBER_OP_PENDING;
	if (r != CUDA_SUCCESS) {
		op->error = r;
		return EMBER_OP_FAILED;
	}
	return EMBER_OP_DONE;
}

static uint64_t elapsed(void *self, struct ember_op *op)
{
	float ms = 0;
	if (!op->start || !op->end || EMBER_REAL(cuEventElapsedTime_v2)(&ms, (CUevent)op->start, (CUevent)op->end) !=
						      CUDA_SUCCESS)
		return 0;
	return (uint64_t)(ms * 1e6);
}

static void release(void *self, struct ember_op *op)
{
	if (op->start)
		EMBER_REAL(cuEventDestroy_v2)((CUevent)op->start);
	if (op->end)
		EMBER_REAL(cuEventDestroy_v2)((CUevent)op->end);
	op->start = op->end = NULL;
}

static int stream_wait(void *self, const struct ember_at *at, enum ember_order order)
{
	CUstream priv = ember_private_stream(at->ctx);
	if (!priv)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (order == EMBER_ORDER_SYNC)
		return EMBER_REAL(cuStreamSynchronize)(priv);
	CUstream stream = at->stream;
	if (ember_stream_captured(stream, at->per_thread))
		return CUDA_SUCCESS; /* a stream being captured into a graph may not wait on outside work */
	/* an event of our own: the ops' events belong to the worker, which may destroy them */
	CUevent done;
	CUresult r = EMBER_REAL(cuEventCreate)(&done, CU_EVENT_DISABLE_TIMING);
	if (r == CUDA_SUCCESS) {
		r = EMBER_REAL(cuEventRecord)(done, priv);
		if (r == CUDA_SUCCESS)
			r = at->per_thread ? EMBER_REAL(cuStreamWaitEvent_ptsz)(stream, done, 0)
					   : EMBER_REAL(cuStreamWaitEvent)(stream, done, 0);
		EMBER_REAL(cuEventDestroy_v2)(done);
	}
	if (r != CUDA_SUCCESS)
		ember_debug("the launch stream cannot wait for its promotion (CUresult %d); it runs mapped meanwhile",
			    (int)r);
	return r;
}

uint64_t ember_driver_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now(void *self)
{
	return ember_driver_now();
}

const struct ember_ops ember_driver_ops = {
	.advise_mapped = advise_mapped,
	.advise_access = advise_access,
	.promote = promote,
	.demote = demote,
	.settle = settle,
	.completion = completion,
	.elapsed = elapsed,
	.release = release,
	.stream_wait = stream_wait,
	.now = now,
	.peer_link = peer_link,
	.peer_place = peer_place,
};
