/* What a Mixtral-style model's expert gathers read of the expert tensors they index (gathers.c). */
#ifndef EMBER_SIM_GATHERS_H
#define EMBER_SIM_GATHERS_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"

/*
 * transformers' Mixtral layers (tools/bench/hf_generate.py) gather each
 * token's routed experts from a layer's stacked expert tensor with
 * PyTorch's index kernel: the launch names the whole tensor (the source),
 * a destination a quarter of its size (top 2 of 8 experts) and a small
 * index. A trace credits the source whole, which a replay charges as read;
 * this keeps that as the launch scan's guess and gives the kernel two
 * whole experts of the source instead, picked at random (seed), as random
 * weights route. A gather is a launch of three ranges: one, the index, of
 * at most 4 KiB, and two of which one is experts/top_k times the other.
 * Returns how many launches it changed, or -1 out of memory (the trace as
 * it was).
 */
long sim_gather_reads(struct sim_events *trace, unsigned experts, unsigned top_k, uint64_t seed);

#endif
