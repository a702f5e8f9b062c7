/*
 * What the policy's victims were chosen for, kept for the debug log: how
 * many regions gave way for each reason since the note was last taken, and
 * the first of each with the region it made room for. A replay and the
 * shim run the same choices; on the GPU, this is how a pass that a replay
 * does not make (bfs at 1.5x) shows why it chose.
 */
#ifndef EMBER_PASS_NOTE_H
#define EMBER_PASS_NOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "regions.h"

enum ember_victim_reason {
	EMBER_VICTIM_WATERMARK, /* reclamation: above the high watermark, down to the low one */
	EMBER_VICTIM_DEPARTED,  /* a sliding range left it behind (the worker's pass) */
	EMBER_VICTIM_OLDER,     /* last referenced heat_ratio reuse gaps before a hotter region */
	EMBER_VICTIM_WANTED,    /* room for a small table read densely that found none (a pass's, or a launch's) */
	EMBER_VICTIM_EXCHANGE,  /* a region read heat_ratio times as much a cycle came in its place */
	EMBER_VICTIM_LAUNCH,    /* departed, given up at a launch of its own allocation */
	EMBER_VICTIM_EPISODE,   /* at a host phase: a region the episode read heat_ratio times as much came in its place */
	EMBER_VICTIM_REASONS
};

struct ember_region_note {
	uint64_t alloc_id;
	uint32_t r, demand, touch_demand, episode_demand;
	uint64_t gap, last_ref; /* gap UINT64_MAX: referenced once; last_ref 0: never */
};

struct ember_pass_note {
	uint64_t count[EMBER_VICTIM_REASONS];
	struct ember_region_note victim[EMBER_VICTIM_REASONS], hot[EMBER_VICTIM_REASONS]; /* the first of each */
	bool has_hot[EMBER_VICTIM_REASONS];
};

/* Region r of a gave way for why; hot (NULL: none) is the region it made room for. */
void ember_pass_note_victim(struct ember_pass_note *n, enum ember_victim_reason why, const struct ember_alloc *a,
			    uint32_t r, const struct ember_alloc *hot, uint32_t hot_r);

/* Whether anything gave way since the note was cleared. */
bool ember_pass_note_any(const struct ember_pass_note *n);

/* Moves the note *from into *to, clearing *from: whether anything gave way. */
bool ember_pass_note_take(struct ember_pass_note *from, struct ember_pass_note *to);

/* Room for the note's line where the shim logs it (its log lines end at 1 KiB) and ember-sim writes it. */
#define EMBER_PASS_NOTE_LINE 800

/* One line (no newline) of what gave way, times relative to now, into buf; returns buf. */
const char *ember_pass_note_format(const struct ember_pass_note *n, uint64_t now, char *buf, size_t len);

#endif
