/*
 * ember-top's model: the processes that publish Ember's live file (format:
 * shim/report/live.h), what each last published, and whether it still runs.
 * record.c reads one file, procs.c finds them all, map.c fits a region map
 * into a number of cells, view.c turns it all into lines of text, which
 * main.c prints (--once) and tui.c draws (ncurses).
 */
#ifndef EMBER_TOP_H
#define EMBER_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "live.h" /* EMBER_LIVE_MAP_MAX, and through regions.h EMBER_REGION_SHIFT */

enum { TOP_MAX_DEVICES = 16, TOP_NAME = 64 };

struct top_device {
	int id;
	uint64_t budget, high, low, resident, other, peak, promotions, demotions;
	uint64_t mapped;  /* its allocations' bytes in host memory, mapped for it */
	bool has_mapped;  /* the record says (older shims did not) */
	bool has_rates; /* set from two records of the same process (tui.c), never from one */
	double promotions_per_s, demotions_per_s;
};

struct top_alloc {
	uint64_t id, base, size;
	char kind[16];
	char map[EMBER_LIVE_MAP_MAX + 1];
	char demand[EMBER_LIVE_MAP_MAX + 1]; /* a level '0'-'9' per glyph of map; "": not in the record */
	int proc; /* index into the list it was read into */
};

enum top_state {
	TOP_LIVE,  /* the publisher still runs */
	TOP_DEAD,  /* gone (or a zombie): killed, or it crashed before removing its file */
	TOP_STALE, /* the PID is another process now (started after the last record, or not ours) */
};

struct top_proc {
	int pid;
	char name[TOP_NAME]; /* /proc/PID/comm while it runs, else "?" */
	char mode[16];
	enum top_state state;
	struct timespec written; /* the record's mtime */
	double age_s;		 /* how old the record was when read */
	int ndevices;
	struct top_device devices[TOP_MAX_DEVICES];
	int first_alloc, nallocs; /* a slice of the list's allocations */
};

struct top_list {
	struct top_proc *procs;
	int nprocs, procs_cap;
	struct top_alloc *allocs;
	int nallocs, allocs_cap;
};

/* record.c: append the record at path (a live file) to list; -1 if it is not one. */
int top_record_read(struct top_list *list, const char *path);

/* procs.c */
/* Every live file of ours in dir, or only file when there is one, each judged live, dead or stale; the list is
 * emptied first. -1 if file cannot be read or is not a live file. */
int top_load(struct top_list *list, const char *dir, const char *file);
/* Promotion and demotion rates from an older scan of the same processes. */
void top_rates(struct top_list *now, const struct top_list *before);
void top_list_clear(struct top_list *list);
void top_list_free(struct top_list *list);
int top_count_live(const struct top_list *list);

/* map.c */
/* Draw len groups of a live map into at most cells cells; returns the cells used (len when it fits). */
int top_map_fit(const char *map, int len, int cells, char *out);
/* The regions one cell stands for, least and most, for an allocation of size bytes drawn so. */
void top_map_cell_regions(uint64_t size, int len, int cells, uint64_t *least, uint64_t *most);
/* The share of its regions in resident groups, 0 to 1; *partly when some group is only partly resident. */
double top_map_resident(uint64_t size, const char *map, bool *partly);
/* What each glyph means, in one short line (the help has it at length). */
extern const char top_map_legend[];
/* A demand map drawn as top_map_fit draws the map: a merged cell has the level of its hottest group. */
int top_demand_fit(const char *demand, int len, int cells, char *out);
/* The mean demand level of an allocation's regions, 0 to 9 (0 when the record has none). */
double top_demand_mean(uint64_t size, const char *demand);
/* The demand levels, in one short line. */
extern const char top_demand_legend[];

#endif
