/* Stream capture, as far as launches need it (hooks_capture.c). */
#ifndef EMBER_CAPTURE_H
#define EMBER_CAPTURE_H

#include <cuda.h>
#include <stdbool.h>

/* Whether a launch on stream is being captured into a graph rather than run. */
bool ember_launch_captured(CUstream stream, bool per_thread);

#endif
