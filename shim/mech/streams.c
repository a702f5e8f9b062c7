/* One private stream per context. */
#include <pthread.h>
#include <string.h>

#include "locks.h"
#include "shim.h"
#include "streams.h"

enum { MAX_STREAMS = 16 };

#define streams_lock ember_lock_streams
static struct {
	CUcontext ctx;
	CUstream stream;
} streams[MAX_STREAMS];

static CUstream known(CUcontext ctx)
{
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i].ctx == ctx)
			return streams[i].stream;
	return NULL;
}

CUstream ember_private_stream(CUcontext ctx)
{
	ember_lock(&streams_lock);
	CUstream s = known(ctx);
	ember_unlock(&streams_lock);
	if (s)
		return s;
	/* created outside the lock (never call the driver holding one); a racing creator's stream wins */
	if (EMBER_REAL(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		return NULL;
	ember_lock(&streams_lock);
	CUstream winner = known(ctx);
	for (int i = 0; i < MAX_STREAMS && !winner; i++)
		if (!streams[i].ctx) {
			streams[i].ctx = ctx;
			streams[i].stream = winner = s;
		}
	ember_unlock(&streams_lock);
	if (winner != s)
		EMBER_REAL(cuStreamDestroy_v2)(s);
	return winner;
}

void ember_streams_forget(CUcontext ctx)
{
	ember_lock(&streams_lock);
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i].ctx == ctx)
			streams[i].ctx = NULL, streams[i].stream = NULL;
	ember_unlock(&streams_lock);
}

void ember_streams_after_fork_child(void)
{
	memset(streams, 0, sizeof streams);
}
