/* Statistics: per device and per allocation, written at exit (EMBER_STATS) and logged. */
#ifndef EMBER_STATS_H
#define EMBER_STATS_H

#include <stdio.h>

#include "regions.h"

/* Keep the figures of an allocation being freed, for the exit report. */
void ember_stats_retire(const struct ember_alloc *a);

/* Write the JSON report to f. */
void ember_stats_write(FILE *f);

/* At exit: the EMBER_STATS file and one info line per device. */
void ember_stats_at_exit(void);

#endif
