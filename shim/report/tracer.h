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
void ember_trace_flush(void); /* the application called ember_flush() */
void ember_trace_end(void); /* at exit: the end line, and the rest of the buffer */

#endif
