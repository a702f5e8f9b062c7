/*
 * The live view's source: with EMBER_LIVE=1 the shim keeps a small text
 * file, /dev/shm/ember-<pid>.live, up to date (replaced whole, so a reader
 * never sees half of it); ember-top draws it. Format, one record a line:
 *
 *   ember-live 1
 *   pid <pid>
 *   mode <off|mapped|static|adaptive>
 *   device <n> budget <bytes> high <bytes> low <bytes> resident <bytes> other <bytes> peak <bytes>
 *          promotions <n> demotions <n>                     (one line)
 *   alloc <id> <base, hex> <bytes> <managed|converted> <map>
 *
 * <map> has one character per region, or per group of regions when an
 * allocation has more than EMBER_LIVE_MAP_MAX: '.' mapped, '#' resident,
 * '+' partly resident, '>' promoting, '<' demoting, 'h' the application's.
 */
#ifndef EMBER_LIVE_H
#define EMBER_LIVE_H

#include <stddef.h>

#include "regions.h"

enum { EMBER_LIVE_MAP_MAX = 256 };

/* Write the map of a's regions into out (at least EMBER_LIVE_MAP_MAX + 1 bytes); table locked. */
void ember_live_map(const struct ember_alloc *a, char *out);

/* Replace the live file with the current state, if EMBER_LIVE is on. */
void ember_live_publish(void);

/* Have the worker keep the live file fresh (library constructor). */
void ember_live_subscribe(void);

/* Remove the live file at exit. */
void ember_live_remove(void);

#endif
