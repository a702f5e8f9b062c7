/*
 * Which allocation entry points the program used, how often, for how many
 * bytes, and how many of those Ember converted (EMBER_MANAGE_ALL): the
 * census that tells a user why a framework's memory is, or is not, placed.
 */
#ifndef EMBER_CENSUS_H
#define EMBER_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum ember_entry {
	EMBER_ENTRY_MANAGED,   /* cuMemAllocManaged */
	EMBER_ENTRY_ALLOC,     /* cuMemAlloc_v2 */
	EMBER_ENTRY_ASYNC,     /* cuMemAllocAsync[_ptsz] */
	EMBER_ENTRY_POOL,      /* cuMemAllocFromPoolAsync[_ptsz] */
	EMBER_ENTRY_PITCH,     /* cuMemAllocPitch_v2 */
	EMBER_ENTRY_CREATE,    /* cuMemCreate (VMM) */
	EMBER_ENTRY_COUNT
};

/* Count one successful allocation through entry (any thread). */
void ember_census_count(enum ember_entry entry, size_t bytes, bool converted);

/* The census as a JSON object, one member per entry point used. */
void ember_census_write_json(FILE *f);

/* One info line naming each entry point used. */
void ember_census_log(void);

#endif
