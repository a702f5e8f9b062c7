/*
 * A context's teardown frees its memory, streams and events without a call
 * for each (hooks_context.c). Ember forgets what it kept of them.
 */
#ifndef EMBER_CONTEXT_TEARDOWN_H
#define EMBER_CONTEXT_TEARDOWN_H

#include <cuda.h>

/*
 * Take every allocation made in ctx out of Ember's table and its budget,
 * as cuMemFree would, without freeing it (hooks_memory.c): the driver may
 * hand its addresses out again.
 */
void ember_memory_forget_context(CUcontext ctx);

/* Drop what was kept of the graph executables instantiated in ctx (hooks_graph.c). */
void ember_graphs_forget_context(CUcontext ctx);

/*
 * After a teardown: a capture whose stream the driver no longer knows, or
 * no longer captures, has ended (hooks_capture.c).
 */
void ember_capture_after_teardown(void);

#endif
