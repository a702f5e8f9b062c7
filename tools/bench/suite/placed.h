// The program placing its own data with hints, as a careful CUDA programmer
// would, without Ember: ember-suite's `placed` runs (see placed.cu).
#pragma once
#include "suite.h"

#include <utility>
#include <vector>

// Gives the arrays of a run that `learned` counted the GPU as their home in
// order of their traffic per byte, busiest first (allocations it did not
// count before them all), or, with `reads_first`, of the bytes read per
// byte and then those written, until `cap` bytes are
// placed (the last one in part, whole 2 MiB pieces from its start); every
// other byte of `allocations` stays in host memory, mapped for the GPU.
// Returns the bytes placed on the GPU.
// `allocations` are (base, bytes) pairs, as ember-suite keeps them.
size_t suite_place_by_traffic(const std::vector<std::pair<void *, size_t>> &allocations,
                              const suite_result &learned, size_t cap, bool reads_first = false);
