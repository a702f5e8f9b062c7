/*
 * The live view's source: with EMBER_LIVE=1 the shim keeps a small text
 * file, /dev/shm/ember-<pid>.live, up to date (replaced whole, so a reader
 * never sees half of it); ember-top draws it. Format, one record a line:
 *
 *   ember-live 1
 *   pid <pid>
 *   mode <off|mapped|static|adaptive>
 *   device <n> budget <bytes> high <bytes> low <bytes> resident <bytes> other <bytes> peak <bytes>
 *          promotions <n> demotions <n> mapped <bytes>      (one line)
 *   alloc <id> <base, hex> <bytes> <managed|converted> <map>
 *   demand <id> <levels>                                   (after its alloc line)
 *
 * <map> has one character per region, or per group of regions when an
 * allocation has more than EMBER_LIVE_MAP_MAX: '.' mapped, '#' resident,
 * '+' partly resident, '>' promoting, '<' demoting, 'h' the application's.
 *
 * <levels> has one digit per character of <map>, for the same regions: the
 * demand of the group's hottest region, as the policy reads it now (decayed,
 * halving every interval, with the repeats it has counted but not yet
 * credited): '0' none, else '5' + log2(demand / threshold) held to '1'..'9',
 * so that '5' and up are at or past the promotion threshold and each step
 * doubles.
 *
 * A device's mapped bytes are its allocations' (those whose residency its
 * budget pays for) in host memory, mapped for it: neither resident nor in
 * flight. resident (the account) counts those in flight.
 *
 * The format grows only by additions, a key at the end of a line or a line
 * of a new kind, which readers skip (ember-top and ember-stat do): "mapped"
 * and the demand lines came so, and the first line stays "ember-live 1".
 * A change that old readers would misread gets a new number there.
 */
#ifndef EMBER_LIVE_H
#define EMBER_LIVE_H

#include <stddef.h>

#include "regions.h"

enum { EMBER_LIVE_MAP_MAX = 256 };

/* Write the map of a's regions into out (at least EMBER_LIVE_MAP_MAX + 1 bytes); table locked. */
void ember_live_map(const struct ember_alloc *a, char *out);
/* The map, and into demand (the same size; NULL: not) the demand levels at now, demand halving every
 * interval_ns; one pass over the regions, table locked. */
void ember_live_maps(const struct ember_alloc *a, uint64_t interval_ns, uint64_t now, char *map, char *demand);

/* Replace the live file with the current state, if EMBER_LIVE is on. */
void ember_live_publish(void);

/* Have the worker keep the live file fresh (library constructor). */
void ember_live_subscribe(void);

/* Remove the live file at exit. */
void ember_live_remove(void);

#endif
