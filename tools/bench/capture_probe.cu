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
// Then the captured stream's own allocations and frees (stream_own_memory).
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
	return 0;
}
