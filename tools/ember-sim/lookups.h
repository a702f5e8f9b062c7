/* What a star-schema join's kernels read of the tables they look rows up in (lookups.c). */
#ifndef EMBER_SIM_LOOKUPS_H
#define EMBER_SIM_LOOKUPS_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"

/*
 * The suite's star.cu joins by array lookup: a kernel streams fact
 * columns and, for each row, reads each dimension table it was given at a
 * place the row's key picks. The trace credits such a table whole, which
 * a replay charges as one streaming read of it; this charges what the
 * kernel does instead: one 4-byte read at random per row, a row being 4
 * bytes of the launch's largest range. A table is a range of at most
 * table_max bytes and at most 1/64 of that largest range. Returns how many
 * ranges it changed.
 */
size_t sim_lookup_reads(struct sim_events *trace, uint64_t table_max);

#endif
