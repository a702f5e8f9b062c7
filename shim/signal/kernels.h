/*
 * The kernel table (kernels.c): per kernel handle, the parameter layout
 * the driver reports, and what launches have taught about the kernel.
 * The launch scan reads layouts; the access monitor reads and writes what
 * was learned (launch order).
 */
#ifndef EMBER_KERNELS_H
#define EMBER_KERNELS_H

#include <cuda.h>
#include <stdint.h>

#include "launch_scan.h"

/*
 * f's parameters, described by the driver on first sight: up to max
 * offsets and sizes copied out, with the element size learned for each
 * pointer argument (EMBER_SCAN_LEARNED of them), the one f's name declares
 * for it (kernel_types.h; 0: none), the arguments learned to point inside
 * allocations (a bit each) and f's number, in order of first sight
 * (UINT32_MAX when the table is full). Returns how many.
 */
unsigned ember_kernel_layout(CUfunction f, uint32_t *offset, uint32_t *size, unsigned max, uint8_t *elem_size,
			     struct ember_declared *declared, uint32_t *inside, uint32_t *number);

/* f's mangled name as the driver gives it (a module's function or a library's kernel), or NULL. */
const char *ember_kernel_name(CUfunction f);

/*
 * Launch order: remember that argument param of f points at elements of
 * elem_size bytes (a launch of f covered a whole allocation exactly), so
 * later launches of f with interior pointers are credited the right range.
 */
void ember_kernel_learn(CUfunction f, unsigned param, unsigned elem_size);

/*
 * Remember that the arguments of f in params (a bit each) have pointed
 * inside an allocation, not at its base: f takes pieces of pools (tensors
 * of a weights buffer), so a later launch whose piece lies at a pool's
 * base is not taken for the whole pool (monitor.h).
 */
void ember_kernel_learn_inside(CUfunction f, uint32_t params);

/*
 * What launches have taught about f since a scan of it was kept (a graph's
 * kernel, scanned at instantiation): each pointer argument's element size
 * (and the one f's name declares) and the arguments seen inside allocations. Both zero for a kernel not in
 * the table.
 */
void ember_kernel_learned(CUfunction f, uint8_t *elem_size, struct ember_declared *declared, uint32_t *inside);

/*
 * Launch order, per stream: the ranges the arguments of f (bit per argument
 * in which) covered at this launch on the stream with this key, for the
 * next launch there to compare. ember_kernel_previous_ranges fills out[] and
 * returns a bit per argument it knew. Each argument keeps the last range
 * of its last few streams (struct ember_launch_history, launch_order.h).
 */
void ember_kernel_remember_ranges(CUfunction f, uint64_t stream_key, const struct ember_range *ranges,
				  uint32_t which);
uint32_t ember_kernel_previous_ranges(CUfunction f, uint64_t stream_key, struct ember_range *out);

/*
 * A count that changes whenever a kernel's layout or what was learned of
 * it changes (ember_kernel_learn, ember_kernels_forget): a scan made
 * before is no guide to a launch after (launch_repeat.h).
 */
uint64_t ember_kernels_generation(void);

/* Forget every kernel (a library was unloaded, or a context torn down: their handles may come back for others). */
void ember_kernels_forget(void);

/*
 * Forget module's kernels, and those whose module the driver would not
 * name, once module is unloaded; what was learned of other modules'
 * kernels stays. Returns how many were forgotten.
 */
unsigned ember_kernels_forget_module(CUmodule module);

#endif
