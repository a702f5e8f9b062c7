/*
 * A 3D copy, and a graph's copy and memset nodes (hooks_graph.c), whose
 * destinations are written at every launch of the graph, so that at its
 * instantiation each one is a copy into them (hooks_copy.c, read_dup.h).
 * Call only while ember_read_dup_watching is set.
 */
#ifndef EMBER_COPIES_H
#define EMBER_COPIES_H

#include <cuda.h>

void ember_copy_into_3d(const CUDA_MEMCPY3D *c);
void ember_memset_node_into(const CUDA_MEMSET_NODE_PARAMS *m);

#endif
