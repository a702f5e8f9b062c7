/*
 * Launches with nothing to decide. Once every allocation Ember places sits
 * on one GPU, nothing moving, each all resident or (static) past its first
 * launch, its split, and (adaptive) the GPU below its low watermark, no
 * launch's arguments can change a decision until the table changes: the
 * launch hook then skips its scan. In transformers token generation at 0.5x
 * of the budget on the H200 the scan and its placement took 1.2 to 1.8 us
 * of each launch (ab-24, call 3), where a launch costs about 4.5 us.
 *
 * The answer is kept for the table's generation (every unlock bumps it) and
 * the host phase it was found in; a host phase, a move, an allocation or a
 * free makes the next launch look again. Found unsettled, it is looked at
 * again only every EMBER_SETTLED_RECHECK launches, so that a table that
 * changes at every launch (moves at 1.5x) pays one survey per that many.
 * Off while a trace is kept, with the UVM event queue open (the driver's
 * own moves and the counters come through it) and with several GPUs in use.
 */
#ifndef EMBER_SETTLED_H
#define EMBER_SETTLED_H

#include <stdbool.h>
#include <stdint.h>

enum { EMBER_SETTLED_RECHECK = 256 };

/* At a launch, before its scan: whether the launch has nothing to decide (the hook then only launches). */
bool ember_settled_launch(void);

/* Launches so far that found nothing to decide (the statistics). */
uint64_t ember_settled_launches(void);

#endif
