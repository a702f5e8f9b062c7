/* What ember-torture's kinds of thread share (ember-torture.c says what it does). */
#ifndef EMBER_TORTURE_H
#define EMBER_TORTURE_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "wall_clock.h"

#define CHECK(call)                                                                              \
	do {                                                                                     \
		CUresult rc_ = (call);                                                           \
		if (rc_ != CUDA_SUCCESS) {                                                       \
			fprintf(stderr, "ember-torture: %s failed (%d)\n", #call, (int)rc_);     \
			exit(1);                                                                 \
		}                                                                                \
	} while (0)

/* One wrong answer: said, and counted as a mismatch. */
#define EXPECT(cond, ...)                                                                    \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "ember-torture: " __VA_ARGS__);                      \
			__atomic_add_fetch(&torture_mismatches, 1, __ATOMIC_RELAXED);        \
		}                                                                            \
	} while (0)

extern CUcontext torture_ctx;
extern CUfunction torture_saxpy; /* y = a * x + y: (float a, float *x, float *y, unsigned n) */
extern double torture_deadline;
extern size_t torture_max_bytes;
extern uint64_t torture_verified, torture_allocations, torture_mismatches, torture_vmm_rounds, torture_async_rounds;

/* Whether a thread goes on: before the deadline, and no wrong answer yet. */
static inline bool torture_going_on(void)
{
	return now_s() < torture_deadline && !__atomic_load_n(&torture_mismatches, __ATOMIC_RELAXED);
}

/* The element i of a round's data tagged tag: small whole numbers, exact as floats. */
static inline float torture_value(unsigned i, unsigned tag)
{
	return (float)((i + tag) & 0xffff);
}

/* The threads, each given a number from 1: managed.c, vmm.c and async.c. */
void *torture_managed_thread(void *number);
void *torture_vmm_thread(void *number);
void *torture_async_thread(void *number);

#endif
