/*
 * The adaptive engine in the shim: the policy's parameters from the
 * EMBER_* table, its clock, and the pass the worker runs on every launch
 * wake-up, every interval and every completed move.
 */
#ifndef EMBER_ADAPTIVE_H
#define EMBER_ADAPTIVE_H

#include <cuda.h>
#include <stdint.h>

#include "policy.h"

const struct ember_policy_params *ember_adaptive_params(void);

/* Monotonic nanoseconds: the policy's time. */
uint64_t ember_adaptive_now(void);

/* The context moves for dev are issued in: the last one a launch on dev used. */
void ember_adaptive_note_context(int dev, CUcontext ctx);

/* One policy pass over every device; moves are handed to the worker. Worker thread only. */
void ember_adaptive_pass(void);

#endif
