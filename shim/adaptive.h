/*
 * The adaptive engine in the shim: the policy's parameters from the
 * EMBER_* table, its clock, and the pass the worker runs on every launch
 * wake-up, every interval and every completed move.
 */
#ifndef EMBER_ADAPTIVE_H
#define EMBER_ADAPTIVE_H

#include <cuda.h>
#include <stdint.h>

#include "launch_scan.h"
#include "placement.h"
#include "policy.h"

const struct ember_policy_params *ember_adaptive_params(void);

/* Monotonic nanoseconds: the policy's time. */
uint64_t ember_adaptive_now(void);

/* The context moves for dev are issued in: the last one a launch on dev used. */
void ember_adaptive_note_context(int dev, CUcontext ctx);

/*
 * A launch in adaptive mode: its references become demand; regions of its
 * allocations that crossed the threshold are promoted now, on the private
 * stream, and the launch's stream waits for them on the GPU (migrating data
 * that kernels are reading over the interconnect at the same time ran at
 * 1.5 GB/s on the H200). Reclamation is left to the worker, woken here.
 */
void ember_adaptive_launch(struct ember_scan *scan, const struct ember_launch_ctx *at);

/* Reclamation and replacement over every device; demotions go to the worker. Worker thread only. */
void ember_adaptive_pass(void);

#endif
