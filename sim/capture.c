/*
 * Stream capture: between cuStreamBeginCapture and cuStreamEndCapture, a
 * stream's kernel launches, memsets and asynchronous copies are appended
 * to a new graph instead of running (launch.c, memset.c, copy.c), and
 * cuStreamIsCapturing says so (stream.c). Its other work (prefetches,
 * events) still runs, where the driver would record it too. The legacy
 * stream cannot capture, as on the driver.
 *
 * Capture modes are modelled as the driver documents them. A thread's own
 * mode (cuThreadExchangeStreamCaptureMode, global by default) decides
 * whether it may make a potentially unsafe call (sim_capture_unsafe_call):
 * in global mode not while it captures itself, in a mode other than
 * relaxed, nor while another thread captures in global mode; in
 * thread-local mode only the first; in relaxed mode always. A call refused
 * invalidates the captures it offends, which then end with
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED. Which calls are unsafe the driver
 * does not document; the simulated driver's are those that
 * ember-capture-probe saw invalidate a capture on an H100 (driver 580,
 * ab-42's calls 1 and 6): cuMemAdvise, cuEventQuery, cuEventSynchronize,
 * cuStreamQuery, cuStreamSynchronize, cuMemAlloc, cuMemAllocManaged and
 * cuMemFree, even on streams and events that have nothing to do with the
 * capture. A prefetch or an event recorded on another stream is safe.
 *
 * A capture forks as the driver documents: a stream that waits for an
 * event recorded during a capture is drawn into it (cuStreamIsCapturing
 * says so, and its work is the graph's), and its work must be joined back
 * (a stream of the capture waits for an event recorded on it after that
 * work) before the capture ends, else the end fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNJOINED and the capture is gone. A fork
 * with no work of its own needs no join. Only the stream that began a
 * capture may end it: an end on a stream it forked into fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNMATCHED and invalidates the capture.
 * Destroying a forked stream ends nothing. (ember-capture-probe on an
 * H100, ab-43's calls 1 and 2.)
 */
#include "sim.h"

enum { MAX_CAPTURES = 64 };

static pthread_mutex_t captures_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_stream *capturing[MAX_CAPTURES]; /* the streams that began a capture */
static unsigned ncapturing; /* read without the lock: most calls come while nothing captures */
static struct sim_stream *members[MAX_CAPTURES];   /* the streams drawn into one by an event */
static __thread CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static __thread unsigned thread_number;
static unsigned threads_numbered;

static unsigned this_thread(void)
{
	if (!thread_number)
		thread_number = __atomic_add_fetch(&threads_numbered, 1, __ATOMIC_RELAXED);
	return thread_number;
}

/* Whether a call from this thread, in its mode, offends s's capture. */
static bool offends(const struct sim_stream *s)
{
	if (thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED || s->capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return false;
	if (s->capture_thread == this_thread())
		return true;
	return thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && s->capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
}

CUresult sim_capture_unsafe_call(void)
{
	CUresult r = CUDA_SUCCESS;
	if (!__atomic_load_n(&ncapturing, __ATOMIC_ACQUIRE))
		return r;
	pthread_mutex_lock(&captures_lock);
	for (int i = 0; i < MAX_CAPTURES; i++)
		if (capturing[i] && offends(capturing[i])) {
			capturing[i]->capture_broken = true;
			r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
	pthread_mutex_unlock(&captures_lock);
	return r;
}

static bool track(struct sim_stream *s, CUstreamCaptureMode mode)
{
	bool room = false;
	pthread_mutex_lock(&captures_lock);
	for (int i = 0; i < MAX_CAPTURES && !room; i++)
		if (!capturing[i]) {
			capturing[i] = s;
			__atomic_add_fetch(&ncapturing, 1, __ATOMIC_RELEASE);
			s->capture_mode = mode;
			s->capture_thread = this_thread();
			s->capture_broken = false;
			room = true;
		}
	pthread_mutex_unlock(&captures_lock);
	return room;
}

/* Whether s's capture was invalidated; it is no longer tracked. */
static bool untrack(struct sim_stream *s)
{
	pthread_mutex_lock(&captures_lock);
	for (int i = 0; i < MAX_CAPTURES; i++)
		if (capturing[i] == s) {
			capturing[i] = NULL;
			__atomic_sub_fetch(&ncapturing, 1, __ATOMIC_RELEASE);
		}
	bool broken = s->capture_broken;
	s->capture_broken = false;
	pthread_mutex_unlock(&captures_lock);
	return broken;
}

bool sim_capture_broken(struct sim_stream *s)
{
	pthread_mutex_lock(&captures_lock);
	bool broken = (s->capture_origin ? s->capture_origin : s)->capture_broken;
	pthread_mutex_unlock(&captures_lock);
	return broken;
}

/* Under captures_lock: the streams drawn into origin's capture leave it; whether any had work not joined back. */
static bool release_members(struct sim_stream *origin)
{
	bool unjoined = false;
	for (int i = 0; i < MAX_CAPTURES; i++)
		if (members[i] && members[i]->capture_origin == origin) {
			unjoined |= members[i]->capture_unjoined;
			__atomic_store_n(&members[i]->capture, NULL, __ATOMIC_RELEASE);
			members[i]->capture_origin = NULL;
			members[i] = NULL;
		}
	return unjoined;
}

/* Under captures_lock: whether s is in the capture whose graph is g. */
static bool in_capture(const struct sim_stream *s, CUgraph g)
{
	for (int i = 0; i < MAX_CAPTURES; i++)
		if ((capturing[i] == s || members[i] == s) && s->capture == g)
			return true;
	return false;
}

void sim_capture_forget(struct sim_stream *s)
{
	pthread_mutex_lock(&captures_lock);
	release_members(s);
	for (int i = 0; i < MAX_CAPTURES; i++)
		if (members[i] == s)
			members[i] = NULL;
	pthread_mutex_unlock(&captures_lock);
	untrack(s);
}

CUresult sim_capture_admit(struct sim_stream *s)
{
	if (sim_capture_broken(s))
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	sim_capture_note_work(s);
	return CUDA_SUCCESS;
}

void sim_capture_note_work(struct sim_stream *s)
{
	if (!__atomic_load_n(&ncapturing, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&captures_lock);
	if (s->capture_origin) {
		s->capture_work++;
		s->capture_unjoined = true;
	}
	pthread_mutex_unlock(&captures_lock);
}

struct sim_capture_mark sim_capture_mark_of(struct sim_stream *s)
{
	struct sim_capture_mark m = { 0 };
	if (!__atomic_load_n(&ncapturing, __ATOMIC_ACQUIRE))
		return m;
	pthread_mutex_lock(&captures_lock);
	if (s->capture)
		m = (struct sim_capture_mark){ .graph = s->capture, .from = s, .work = s->capture_work };
	pthread_mutex_unlock(&captures_lock);
	return m;
}

CUresult sim_capture_wait(struct sim_stream *s, const struct sim_capture_mark *m)
{
	if (!m->graph)
		return CUDA_SUCCESS; /* recorded outside any capture */
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&captures_lock);
	struct sim_stream *from = m->from;
	if (!in_capture(from, m->graph)) {
		/* that capture has ended: nothing to fork into or join */
	} else if (!s->capture) {
		struct sim_stream *origin = from->capture_origin ? from->capture_origin : from;
		int slot = -1;
		for (int i = 0; i < MAX_CAPTURES && slot < 0; i++)
			if (!members[i])
				slot = i;
		if (slot < 0 || s->kind == SIM_STREAM_LEGACY) {
			r = slot < 0 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
		} else {
			members[slot] = s;
			s->capture_origin = origin;
			s->capture_mode = origin->capture_mode;
			s->capture_thread = origin->capture_thread;
			s->capture_work = 0;
			s->capture_unjoined = false; /* nothing of its own yet: a fork with no work needs no join */
			__atomic_store_n(&s->capture, m->graph, __ATOMIC_RELEASE);
		}
	} else if (s->capture != m->graph) {
		r = CUDA_ERROR_STREAM_CAPTURE_ISOLATION; /* two captures may not depend on each other */
	} else if (from != s && from->capture_origin && from->capture_work == m->work) {
		from->capture_unjoined = false; /* everything queued on it is waited for */
	}
	pthread_mutex_unlock(&captures_lock);
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	CUstreamCaptureMode was = thread_mode;
	thread_mode = *mode;
	*mode = was;
	return CUDA_SUCCESS;
}

static CUresult begin(CUstream h, bool per_thread, CUgraph into, CUstreamCaptureMode mode)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (s->kind == SIM_STREAM_LEGACY)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	CUgraph graph = into;
	if (!graph && (r = sim_graph_create(&graph)) != CUDA_SUCCESS)
		return r;
	CUgraph none = NULL;
	if (!__atomic_compare_exchange_n(&s->capture, &none, graph, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (!into)
			cuGraphDestroy(graph);
		return CUDA_ERROR_ILLEGAL_STATE; /* already capturing */
	}
	if (!track(s, mode)) {
		__atomic_store_n(&s->capture, NULL, __ATOMIC_RELEASE);
		if (!into)
			cuGraphDestroy(graph);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

static CUresult end(CUstream h, bool per_thread, CUgraph *out)
{
	struct sim_stream *s;
	CUresult r = sim_stream_resolve(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&captures_lock);
	bool member = s->capture_origin != NULL;
	if (member)
		s->capture_origin->capture_broken = true;
	pthread_mutex_unlock(&captures_lock);
	if (member)
		return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED; /* only the stream that began it ends it */
	CUgraph graph = __atomic_exchange_n(&s->capture, NULL, __ATOMIC_ACQ_REL);
	if (!graph)
		return CUDA_ERROR_ILLEGAL_STATE; /* not capturing */
	pthread_mutex_lock(&captures_lock);
	bool unjoined = release_members(s);
	pthread_mutex_unlock(&captures_lock);
	bool broken = untrack(s);
	if (broken || unjoined) {
		cuGraphDestroy(graph);
		*out = NULL;
		return broken ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
	}
	*out = graph;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
	return begin(hStream, false, NULL, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
	return begin(hStream, true, NULL, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	return begin(hStream, false, NULL, mode);
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	return begin(hStream, true, NULL, mode);
}

SIM_EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
							const CUgraphNode *dependencies,
							const CUgraphEdgeData *dependencyData, size_t numDependencies,
							CUstreamCaptureMode mode)
{
	(void)dependencies, (void)dependencyData, (void)numDependencies;
	return hGraph ? begin(hStream, false, hGraph, mode) : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	return end(hStream, false, phGraph);
}

SIM_EXPORT CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	return end(hStream, true, phGraph);
}
