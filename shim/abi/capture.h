/* Stream capture, as far as launches need it (hooks_capture.c). */
#ifndef EMBER_CAPTURE_H
#define EMBER_CAPTURE_H

#include <cuda.h>
#include <stdbool.h>

/*
 * Whether any stream is being captured, as far as Ember saw: while one is,
 * calls that may synchronise are not made for the program (in global mode
 * such a call from any thread invalidates the capture).
 */
bool ember_capture_under_way(void);

/*
 * Ember's own driver calls (advice, prefetches, event waits, frees) must
 * not break a program's capture. In global mode a "potentially unsafe"
 * call from any thread whose own mode is global invalidates every global
 * capture under way, and the driver does not say which calls are unsafe
 * (ember-capture-probe measures them). A thread in relaxed mode may make
 * them: the worker takes relaxed mode for good when it starts, and a
 * program's thread takes it around Ember's work in a hook while a capture
 * is under way, and gives its own mode back after.
 */
void ember_capture_relax_worker(void);
struct ember_capture_relaxed {
	bool changed;
	CUstreamCaptureMode was;
};
struct ember_capture_relaxed ember_capture_relax(void);
void ember_capture_restore(struct ember_capture_relaxed r);

/*
 * Whether stream is being captured into a graph (its launches, allocations
 * and frees recorded, not run), an invalidated capture included.
 */
bool ember_stream_captured(CUstream stream, bool per_thread);

#endif
