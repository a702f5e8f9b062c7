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

/* Whether a launch on stream is being captured into a graph rather than run. */
bool ember_launch_captured(CUstream stream, bool per_thread);

#endif
