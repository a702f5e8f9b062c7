/*
 * What ember-top shows, as lines of text: the same frame is printed by
 * --once and drawn by the interactive view, which only adds colour (the
 * maps shaded by demand among it), a scroll position over the allocation
 * rows, and the help overlay.
 */
#ifndef EMBER_TOP_VIEW_H
#define EMBER_TOP_VIEW_H

#include "top.h"

enum top_sort { TOP_SORT_RESIDENCY, TOP_SORT_SIZE, TOP_SORT_ADDRESS, TOP_SORT_NAME, TOP_SORT_DEMAND, TOP_SORTS };

enum { TOP_FILTER = 64, TOP_WIDTH_MAX = 1000, TOP_LINE_MAX = TOP_WIDTH_MAX + 64 };

struct top_view {
	enum top_sort sort;
	char filter[TOP_FILTER]; /* a size (at least that big: 100M), else part of a program name */
	int selected_pid;	 /* the process shown; 0: every one */
	bool wrap;		 /* maps wrapped onto more lines, one cell a group, instead of scaled */
	bool demand;		 /* the maps' cells show their demand levels instead of their states */
	int width;
	const char *dir;  /* where the live files are, for the waiting line */
	double waiting_s; /* how long no program has been live; < 0: say nothing of it */
	bool interactive; /* mention the keys */
};

enum top_line_kind {
	TOP_TEXT,
	TOP_TITLE,
	TOP_PROC,	   /* a process, not selected */
	TOP_PROC_SELECTED, /* the process shown */
	TOP_PROC_GONE,	   /* dead or stale */
	TOP_GPU,
	TOP_HEADER,
	TOP_ALLOC, /* map_col: where its map starts */
};

struct top_line {
	enum top_line_kind kind;
	int map_col;
	/* from map_col on, a demand level '0'-'9' a cell (or '?'), to shade it by; "": no shading */
	char shade[TOP_LINE_MAX];
	char text[TOP_LINE_MAX];
};

struct top_frame {
	struct top_line *lines;
	int n, cap;
	int body; /* the first allocation row: what scrolls */
};

/* select.c: which processes and allocations the view shows, in its order. */
const char *top_sort_name(enum top_sort s);
/* The filter as a size threshold: true, with *bytes, when it is one ("100M", ">=1G"). */
bool top_filter_size(const char *filter, uint64_t *bytes);
/* Listed: a line in the frame (the name filter). Shown: its GPUs and allocations too. */
bool top_proc_listed(const struct top_view *v, const struct top_proc *p);
bool top_proc_shown(const struct top_view *v, const struct top_proc *p);
/* The shown allocations' indices into list->allocs, sorted; returns how many (out holds nallocs). */
int top_select_allocs(const struct top_list *list, const struct top_view *v, int *out);

/* view.c */
void top_view_build(const struct top_list *list, const struct top_view *v, struct top_frame *f);
void top_frame_free(struct top_frame *f);

#endif
