/*
 * EMBER_TRACE: the recorder of a run, for ember-sim to replay under any
 * variant and parameters. Format: include/ember/trace.h. Every call is a
 * single branch when no trace is being recorded.
 */
#ifndef EMBER_TRACER_H
#define EMBER_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "moves.h"
#include "ops_driver.h"

struct ember_scan;

extern bool ember_tracing; /* set once at start-up */

void ember_trace_start(void); /* library constructor */
void ember_trace_budget(int dev, const struct ember_device_account *acc);
void ember_trace_alloc(const struct ember_alloc *a);
void ember_trace_plain(int dev, int64_t bytes);
void ember_trace_free(const struct ember_alloc *a);
void ember_trace_launch(const struct ember_scan *s, const void *stream, bool per_thread);
void ember_trace_move(const struct ember_move *m, bool ok, uint64_t ns);
void ember_trace_hint(const struct ember_alloc *a, uint64_t offset, uint64_t bytes);
/* The host waited for the GPU from `from` to `to` (monotonic ns: a synchronisation, a full launch queue); kept when long. */
void ember_trace_wait(uint64_t from, uint64_t to);
/* A host phase was declared at t (host_phase.h): its number, and whether the worker saw it while it lasted. */
void ember_trace_host_phase(uint64_t t, uint32_t phase, bool seen);
void ember_trace_flush(void);

/* `return call;` for a hook that may block on the GPU: timed, as a wait, while a trace is recorded. */
#define EMBER_TRACE_TIMED(call)                                        \
	do {                                                           \
		if (!ember_tracing)                                    \
			return call;                                   \
		uint64_t ember_t0_ = ember_driver_now();               \
		CUresult ember_r_ = call;                              \
		ember_trace_wait(ember_t0_, ember_driver_now());       \
		return ember_r_;                                       \
	} while (0) /* the application called ember_flush() */
void ember_trace_end(void); /* at exit: the end line, and the rest of the buffer */

#endif
