/*
 * What the allocation hooks share: hooks_memory.c converts and tracks
 * allocations, and hooks_stream_ordered.c does the same for the
 * stream-ordered entry points through it.
 */
#ifndef EMBER_MEMORY_HOOKS_H
#define EMBER_MEMORY_HOOKS_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>

#include "ops.h"
#include "shim.h"

/* Where a stream-ordered allocation was made: its stream, which alone may use it at once, and its pool. */
struct stream_order {
	struct ember_at at;
	CUmemoryPool pool;
};

struct ember_alloc;

/* Whether Ember places memory: active, which mode off never is (init.c sets both once). */
static inline bool ember_memory_placing(void)
{
	return ember_active;
}

/*
 * Under EMBER_MANAGE_ALL, allocate managed memory in place of plain and
 * place it (ordered: a stream-ordered allocation's stream, else NULL).
 * Returns false when the plain allocation should go ahead.
 */
bool ember_memory_converted(CUdeviceptr *dptr, size_t bytesize, const struct stream_order *ordered);

/* Plain device memory: counted against the budget until its free. */
void ember_memory_track_plain(CUdeviceptr p, size_t bytes);

/*
 * Take p out of the table. A placed allocation is returned after its
 * migrations have drained; a plain one leaves the budget and NULL is
 * returned, as for memory Ember never knew.
 */
struct ember_alloc *ember_memory_untrack(CUdeviceptr p);

/* Under EMBER_MANAGE_ALL, say once per entry point why its memory stays plain. */
void ember_memory_not_converted(const char *entry, const char *why);

#endif
