/* The driver backend of the operations seam (policy/ops.h). */
#ifndef EMBER_OPS_DRIVER_H
#define EMBER_OPS_DRIVER_H

#include "ops.h"

extern const struct ember_ops ember_driver_ops;

/* Worker thread only: make ctx current before issuing or polling its moves. */
bool ember_driver_enter(void *ctx);
/* ctx is torn down: the worker makes a context of the same handle current again before using it. */
void ember_driver_forget_context(void *ctx);
void ember_driver_after_fork_child(void);

/* Monotonic nanoseconds: the policy's time in the shim. */
uint64_t ember_driver_now(void);

#endif
