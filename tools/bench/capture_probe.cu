// ember-capture-probe: which of the driver calls Ember makes for itself
// invalidate a stream capture under way. One JSON line a case, without Ember.
//
// A program capturing a stream in global mode (torch.cuda.graph's default)
// forbids "potentially unsafe" calls from every thread whose own mode is
// global; in thread-local mode only from the capturing thread. Which calls
// count is not documented. Ember's worker advises, prefetches, waits for
// events and frees from its own thread, and a launch hook may advise and
// prefetch on the program's. For each call Ember makes, each capture mode,
// each caller (the capturing thread or another) and each caller's own mode
// (its default, global, or relaxed through cuThreadExchangeStreamCaptureMode),
// this begins a capture of one memset on a stream of its own, makes the call,
// ends the capture and reports both results:
//   {"call": ..., "capture": "global", "caller": "other", "caller_mode":
//    "relaxed", "call_result": 0, "end_result": 0}
// end_result 901 (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) is a broken capture.
// Then the captured stream's own allocations and frees (stream_own_memory),
// and captures that fork into a second stream through an event, joined back
// or not (forks): how each ends, and whether either stream captures after.
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                   \
	do {                                                                       \
		CUresult r_ = (x);                                                 \
		if (r_ != CUDA_SUCCESS) {                                          \
			fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #x, r_); \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

enum { MANAGED_BYTES = 64 << 20 };

static CUcontext ctx;
static CUdeviceptr managed, scratch;
static CUstream own; /* the caller's stream, never captured */
static CUevent done; /* recorded on own, before the capture */
static CUdeviceptr free_ptr; /* MEM_FREE's buffer, allocated before each capture */

enum call { ADVISE_PREFERRED, ADVISE_ACCESSED_BY, PREFETCH, EVENT_QUERY, EVENT_SYNCHRONIZE, STREAM_SYNCHRONIZE,
	    STREAM_QUERY, MEM_ALLOC, MEM_FREE, EVENT_CREATE_RECORD, MEM_ALLOC_MANAGED, NCALLS };
static const char *call_name[NCALLS] = { "cuMemAdvise(preferred location)", "cuMemAdvise(accessed by)",
					 "cuMemPrefetchAsync(own stream)", "cuEventQuery(own stream's)",
					 "cuEventSynchronize(own stream's)", "cuStreamSynchronize(own stream)",
					 "cuStreamQuery(own stream)", "cuMemAlloc", "cuMemFree",
					 "cuEventCreate+cuEventRecord(own stream)", "cuMemAllocManaged" };

static CUresult make_call(enum call c)
{
	CUmemLocation gpu = { CU_MEM_LOCATION_TYPE_DEVICE, 0 }, host = { CU_MEM_LOCATION_TYPE_HOST, 0 };
	switch (c) {
	case ADVISE_PREFERRED:
		return cuMemAdvise_v2(managed, MANAGED_BYTES, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host);
	case ADVISE_ACCESSED_BY:
		return cuMemAdvise_v2(managed, MANAGED_BYTES, CU_MEM_ADVISE_SET_ACCESSED_BY, gpu);
	case PREFETCH:
		return cuMemPrefetchAsync_v2(managed, MANAGED_BYTES, gpu, 0, own);
	case EVENT_QUERY:
		return cuEventQuery(done);
	case EVENT_SYNCHRONIZE:
		return cuEventSynchronize(done);
	case STREAM_SYNCHRONIZE:
		return cuStreamSynchronize(own);
	case STREAM_QUERY:
		return cuStreamQuery(own);
	case MEM_ALLOC: {
		CUdeviceptr p = 0;
		CUresult r = cuMemAlloc_v2(&p, 1 << 20);
		if (p)
			cuMemFree_v2(p);
		return r;
	}
	case MEM_FREE: /* allocated before the capture began: the free alone is the call */
		return cuMemFree_v2(free_ptr);
	case MEM_ALLOC_MANAGED: {
		CUdeviceptr p = 0;
		CUresult r = cuMemAllocManaged(&p, 1 << 20, CU_MEM_ATTACH_GLOBAL);
		if (p)
			cuMemFree_v2(p);
		return r;
	}
	case EVENT_CREATE_RECORD: {
		CUevent e;
		CUresult r = cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
		if (r == CUDA_SUCCESS) {
			r = cuEventRecord(e, own);
			cuEventDestroy_v2(e);
		}
		return r;
	}
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

struct job {
	enum call call;
	bool relaxed;
	CUresult result;
};

static void run_job(struct job *j)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (j->relaxed)
		CHECK(cuThreadExchangeStreamCaptureMode(&mode));
	j->result = make_call(j->call);
	if (j->relaxed)
		CHECK(cuThreadExchangeStreamCaptureMode(&mode));
}

static void *other_thread(void *arg)
{
	CHECK(cuCtxSetCurrent(ctx));
	run_job((struct job *)arg);
	return NULL;
}

/*
 * The captured stream's own allocations and frees: cuMemFreeAsync into it
 * of memory allocated before the capture began (device, managed, or
 * stream-ordered), which the driver's documentation says must be a graph's
 * allocation, and whether the memory was still allocated after; then an
 * allocation and its free both inside the capture (a graph's own nodes).
 */
static void stream_own_memory(CUstream captured)
{
	const char *kinds[] = { "cuMemAlloc", "cuMemAllocManaged", "cuMemAllocAsync" };
	for (int k = 0; k < 3; k++) {
		CUdeviceptr p = 0;
		if (k == 0)
			CHECK(cuMemAlloc_v2(&p, 1 << 20));
		else if (k == 1)
			CHECK(cuMemAllocManaged(&p, 1 << 20, CU_MEM_ATTACH_GLOBAL));
		else
			CHECK(cuMemAllocAsync(&p, 1 << 20, own));
		CHECK(cuStreamSynchronize(own));
		CHECK(cuStreamBeginCapture_v2(captured, CU_STREAM_CAPTURE_MODE_GLOBAL));
		CUresult call = cuMemFreeAsync(p, captured);
		CUgraph graph = NULL;
		CUresult end = cuStreamEndCapture(captured, &graph);
		if (graph)
			cuGraphDestroy(graph);
		CUresult after = cuMemFree_v2(p); /* CUDA_SUCCESS: it was still allocated */
		printf("{\"bench\": \"capture-probe\", \"case\": \"free into the captured stream\", \"memory\": \"%s\", "
		       "\"call_result\": %d, \"end_result\": %d, \"free_after_result\": %d}\n",
		       kinds[k], (int)call, (int)end, (int)after);
		fflush(stdout);
		CHECK(cuCtxSynchronize());
	}
	CUdeviceptr p = 0;
	CHECK(cuStreamBeginCapture_v2(captured, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CUresult alloc = cuMemAllocAsync(&p, 1 << 20, captured);
	CUresult call = alloc == CUDA_SUCCESS ? cuMemFreeAsync(p, captured) : alloc;
	CUgraph graph = NULL;
	CUresult end = cuStreamEndCapture(captured, &graph);
	if (graph)
		cuGraphDestroy(graph);
	printf("{\"bench\": \"capture-probe\", \"case\": \"alloc and free in the captured stream\", "
	       "\"alloc_result\": %d, \"call_result\": %d, \"end_result\": %d}\n",
	       (int)alloc, (int)call, (int)end);
	fflush(stdout);
	CHECK(cuCtxSynchronize());
}

static int status_of(CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUresult r = cuStreamIsCapturing(s, &st);
	return r == CUDA_SUCCESS ? (int)st : -(int)r;
}

/*
 * A capture that forks: the captured stream records an event and a second
 * stream waits for it, which draws that stream into the capture; its work
 * is joined back when the captured stream waits for an event recorded
 * after it. Each case ends the capture on the stream it names and reports
 * the end's result and each stream's capture status after it (0 none,
 * 1 active, 2 invalidated; a negative CUresult where the query failed),
 * then whether the captured stream could begin a capture again.
 */
static void forks(CUstream captured)
{
	enum { UNJOINED, JOINED, NO_WORK, WORK_AFTER_JOIN, END_ON_SIDE, DESTROY_SIDE, NCASES };
	const char *names[NCASES] = { "fork with work, not joined", "fork joined back", "fork with no work, not joined",
				      "fork joined, then more work on it", "end on the forked stream, then joined",
				      "fork joined, then the forked stream destroyed" };
	for (int c = 0; c < NCASES; c++) {
		CUstream side;
		CUevent forked, joined;
		CHECK(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
		CHECK(cuEventCreate(&forked, CU_EVENT_DISABLE_TIMING));
		CHECK(cuEventCreate(&joined, CU_EVENT_DISABLE_TIMING));
		CHECK(cuStreamBeginCapture_v2(captured, CU_STREAM_CAPTURE_MODE_GLOBAL));
		CHECK(cuMemsetD32Async(scratch, 1, 1024, captured));
		CHECK(cuEventRecord(forked, captured));
		CUresult wait = cuStreamWaitEvent(side, forked, 0);
		int side_during = status_of(side);
		/* what the stream work after the fork gave: the first failure, if any (a broken capture) */
		CUresult work = CUDA_SUCCESS;
		if (c != NO_WORK)
			work = cuMemsetD32Async(scratch + 4096, 2, 1024, side);
		CUresult side_end = CUDA_SUCCESS;
		if (c == END_ON_SIDE) {
			CUgraph g = NULL;
			side_end = cuStreamEndCapture(side, &g);
			if (g)
				cuGraphDestroy(g);
		}
		if (c == JOINED || c == WORK_AFTER_JOIN || c == END_ON_SIDE || c == DESTROY_SIDE) {
			CUresult r = cuEventRecord(joined, side);
			if (r == CUDA_SUCCESS)
				r = cuStreamWaitEvent(captured, joined, 0);
			if (work == CUDA_SUCCESS)
				work = r;
		}
		if (c == WORK_AFTER_JOIN) {
			CUresult r = cuMemsetD32Async(scratch + 8192, 3, 1024, side);
			if (work == CUDA_SUCCESS)
				work = r;
		}
		CUresult destroy = CUDA_SUCCESS;
		if (c == DESTROY_SIDE)
			destroy = cuStreamDestroy_v2(side);
		CUgraph graph = NULL;
		CUresult end = cuStreamEndCapture(captured, &graph);
		if (graph)
			cuGraphDestroy(graph);
		int captured_after = status_of(captured), side_after = c == DESTROY_SIDE ? 0 : status_of(side);
		CUresult again = cuStreamBeginCapture_v2(captured, CU_STREAM_CAPTURE_MODE_GLOBAL);
		if (again == CUDA_SUCCESS) {
			graph = NULL;
			cuStreamEndCapture(captured, &graph);
			if (graph)
				cuGraphDestroy(graph);
		}
		printf("{\"bench\": \"capture-probe\", \"case\": \"%s\", \"wait_result\": %d, "
		       "\"side_status_during_result\": %d, \"side_end_result\": %d, \"end_result\": %d, "
		       "\"captured_status_after_result\": %d, \"side_status_after_result\": %d, "
		       "\"begin_again_result\": %d, \"work_result\": %d, \"side_destroy_result\": %d}\n",
		       names[c], (int)wait, side_during, (int)side_end, (int)end, captured_after, side_after, (int)again,
		       (int)work, (int)destroy);
		fflush(stdout);
		cuCtxSynchronize(); /* an error a failed end leaves behind, cleared */
		if (c != DESTROY_SIDE)
			cuStreamDestroy_v2(side);
		cuEventDestroy_v2(forked);
		cuEventDestroy_v2(joined);
	}
}

int main(void)
{
	CUdevice dev;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuMemAllocManaged(&managed, MANAGED_BYTES, CU_MEM_ATTACH_GLOBAL));
	CHECK(cuMemAlloc_v2(&scratch, 1 << 20));
	CHECK(cuStreamCreate(&own, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&done, CU_EVENT_DEFAULT));
	CUstream captured;
	CHECK(cuStreamCreate(&captured, CU_STREAM_NON_BLOCKING));
	const CUstreamCaptureMode modes[] = { CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL };
	const char *mode_name[] = { "global", "thread_local" };
	for (int c = 0; c < NCALLS; c++)
		for (int m = 0; m < 2; m++)
			for (int other = 0; other < 2; other++)
				for (int relaxed = 0; relaxed < 2; relaxed++) {
					CHECK(cuMemAlloc_v2(&free_ptr, 1 << 20));
					CHECK(cuEventRecord(done, own));
					CHECK(cuStreamSynchronize(own));
					CHECK(cuStreamBeginCapture_v2(captured, modes[m]));
					CHECK(cuMemsetD32Async(scratch, 1, 1024, captured));
					struct job j = { (enum call)c, relaxed != 0, CUDA_SUCCESS };
					if (other) {
						pthread_t t;
						pthread_create(&t, NULL, other_thread, &j);
						pthread_join(t, NULL);
					} else {
						run_job(&j);
					}
					CUgraph graph = NULL;
					CUresult end = cuStreamEndCapture(captured, &graph);
					if (graph)
						cuGraphDestroy(graph);
					if (j.call != MEM_FREE || j.result != CUDA_SUCCESS)
						cuMemFree_v2(free_ptr);
					printf("{\"bench\": \"capture-probe\", \"call\": \"%s\", \"capture\": \"%s\", "
					       "\"caller\": \"%s\", \"caller_mode\": \"%s\", \"call_result\": %d, "
					       "\"end_result\": %d}\n",
					       call_name[c], mode_name[m], other ? "other" : "capturing",
					       relaxed ? "relaxed" : "global", (int)j.result, (int)end);
					fflush(stdout);
					/* a failed call may leave an error behind: clear it before the next case */
					CHECK(cuCtxSynchronize());
				}
	stream_own_memory(captured);
	forks(captured);
	return 0;
}
