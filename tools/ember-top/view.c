/*
 * The frame: a title, each process (the one shown marked '>') with its
 * GPUs' budget gauges, then one row per allocation with its region map,
 * scaled to the width (CELL says how many regions a cell stands for) or,
 * with wrap, one cell per group over as many lines as it takes. Each map
 * cell carries its demand level (the hottest of its regions'), which the
 * interactive view shades it by, and which the demand view shows as digits.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

enum { GAUGE = 20 };

static struct top_line *add(struct top_frame *f, enum top_line_kind kind, const char *fmt, ...)
{
	if (f->n == f->cap) {
		int cap = f->cap ? f->cap * 2 : 64;
		struct top_line *more = realloc(f->lines, (size_t)cap * sizeof *more);
		if (!more) {
			perror("ember-top");
			exit(1);
		}
		f->lines = more;
		f->cap = cap;
	}
	struct top_line *l = &f->lines[f->n++];
	l->kind = kind;
	l->map_col = -1;
	l->shade[0] = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->text, sizeof l->text, fmt, ap);
	va_end(ap);
	return l;
}

/* head and tail on one line where they fit the width, else tail on a line of its own, indented. */
static void add_fitted(struct top_frame *f, enum top_line_kind kind, int width, const char *head, const char *tail)
{
	if ((int)(strlen(head) + strlen(tail)) <= width)
		add(f, kind, "%s%s", head, tail);
	else {
		add(f, kind, "%s", head);
		add(f, kind, "      %s", tail + strspn(tail, " "));
	}
}

void top_frame_free(struct top_frame *f)
{
	free(f->lines);
	*f = (struct top_frame){ 0 };
}

/* Bytes in the unit a reader wants: B, KiB, MiB, GiB or TiB (BFS's 4-byte frontier count read "0 KiB"). */
static void human_bytes(uint64_t b, char *out, size_t len)
{
	if (b > 0 && b < (1ull << 10))
		snprintf(out, len, "%llu B", (unsigned long long)b);
	else if (b >= (1ull << 40))
		snprintf(out, len, "%.2f TiB", (double)b / (1ull << 40));
	else if (b >= (1ull << 30))
		snprintf(out, len, "%.2f GiB", (double)b / (1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(out, len, "%.1f MiB", (double)b / (1ull << 20));
	else
		snprintf(out, len, "%.0f KiB", (double)b / (1ull << 10));
}

/* '#' Ember's resident regions, 'o' plain device memory (other), '.' free, '|' the high watermark. */
static void gauge(const struct top_device *d, char *out)
{
	double per = d->budget ? (double)GAUGE / (double)d->budget : 0;
	int resident = (int)(per * (double)d->resident + 0.5);
	int used = (int)(per * (double)(d->resident + d->other) + 0.5);
	int high = (int)(per * (double)d->high + 0.5);
	for (int k = 0; k < GAUGE; k++)
		out[k] = k < resident ? '#' : k < used ? 'o' : k == high ? '|' : '.';
	out[GAUGE] = 0;
}

static void add_gpu(struct top_frame *f, const struct top_view *v, const struct top_device *d)
{
	/* one unit for the line, the budget's: "8.00 of 16.00 GiB", "56.0 of 64.0 MiB" */
	bool gib = d->budget >= (1ull << 30);
	double unit = gib ? (double)(1ull << 30) : (double)(1ull << 20);
	int digits = gib ? 2 : 1;
	char bar[GAUGE + 1], head[256], other[48] = "", tail[192], rates[2][32] = { "", "" };
	char resident[32], mapped[48] = "";
	gauge(d, bar);
	if (d->other)
		snprintf(other, sizeof other, "  other %.*f", digits, (double)d->other / unit);
	snprintf(head, sizeof head, "    GPU %d [%s] %.*f of %.*f %s  high %.*f  peak %.*f%s", d->id, bar, digits,
		 (double)(d->resident + d->other) / unit, digits, (double)d->budget / unit, gib ? "GiB" : "MiB", digits,
		 (double)d->high / unit, digits, (double)d->peak / unit, other);
	if (d->has_rates) {
		snprintf(rates[0], sizeof rates[0], " (%.1f/s)", d->promotions_per_s);
		snprintf(rates[1], sizeof rates[1], " (%.1f/s)", d->demotions_per_s);
	}
	/* resident (in flight too) and mapped: host memory its allocations reach it through, up to terabytes */
	human_bytes(d->resident, resident, sizeof resident);
	if (d->has_mapped) {
		char b[32];
		human_bytes(d->mapped, b, sizeof b);
		snprintf(mapped, sizeof mapped, "  mapped %s", b);
	}
	snprintf(tail, sizeof tail, "  resident %s%s  promotions %" PRIu64 "%s  demotions %" PRIu64 "%s", resident,
		 mapped, d->promotions, rates[0], d->demotions, rates[1]);
	add_fitted(f, TOP_GPU, v->width, head, tail);
}

static void add_proc(struct top_frame *f, const struct top_list *list, const struct top_view *v,
		     const struct top_proc *p)
{
	bool selected = v->selected_pid == p->pid;
	char mark = selected ? '>' : ' ';
	if (p->state != TOP_LIVE)
		add(f, TOP_PROC_GONE, "%c pid %d  mode %s  %s, its record %.0f s old", mark, p->pid, p->mode,
		    p->state == TOP_DEAD ? "DEAD: the process is gone" : "STALE: the PID is another process now",
		    p->age_s);
	else {
		uint64_t placed = 0, resident = 0, mapped = 0;
		bool every_mapped = p->ndevices > 0;
		for (int i = 0; i < p->nallocs; i++)
			placed += list->allocs[p->first_alloc + i].size;
		for (int i = 0; i < p->ndevices; i++) {
			resident += p->devices[i].resident;
			mapped += p->devices[i].mapped;
			every_mapped &= p->devices[i].has_mapped;
		}
		if (!every_mapped) /* an older record: what is placed and not resident */
			mapped = placed > resident ? placed - resident : 0;
		char quiet[48] = "", placed_s[32], mapped_s[32];
		human_bytes(placed, placed_s, sizeof placed_s);
		human_bytes(mapped, mapped_s, sizeof mapped_s);
		if (p->age_s > 5) /* the shim rewrites the file ten times a second */
			snprintf(quiet, sizeof quiet, ", but no record for %.0f s", p->age_s);
		char head[160], tail[128];
		snprintf(head, sizeof head, "%c pid %d  mode %s  %s  live%s", mark, p->pid, p->mode, p->name, quiet);
		snprintf(tail, sizeof tail, "  %d allocations, %s placed, %s mapped", p->nallocs, placed_s, mapped_s);
		add_fitted(f, selected ? TOP_PROC_SELECTED : TOP_PROC, v->width, head, tail);
	}
	if (top_proc_shown(v, p))
		for (int i = 0; i < p->ndevices; i++)
			add_gpu(f, v, &p->devices[i]);
}

/* Files that outlived their programs pile up: past a few, one line names them, unless one is chosen. */
static void add_gone(struct top_frame *f, const struct top_list *list, const struct top_view *v)
{
	enum { FEW = 3 };
	int gone = 0;
	for (int i = 0; i < list->nprocs; i++)
		gone += list->procs[i].state != TOP_LIVE && top_proc_listed(v, &list->procs[i]) &&
			list->procs[i].pid != v->selected_pid;
	char names[TOP_LINE_MAX] = "";
	int n = 0;
	for (int i = 0; i < list->nprocs; i++) {
		const struct top_proc *p = &list->procs[i];
		if (p->state == TOP_LIVE || !top_proc_listed(v, p))
			continue;
		if (gone <= FEW || p->pid == v->selected_pid)
			add_proc(f, list, v, p);
		else if (n < (int)sizeof names - 32)
			n += snprintf(names + n, sizeof names - (size_t)n, " %d%s", p->pid,
				      p->state == TOP_DEAD ? "" : " (stale)");
	}
	if (gone > FEW)
		add(f, TOP_PROC_GONE, "  %d not running, DEAD or STALE (Tab shows each one's last record):%s", gone,
		    names);
}

static void add_title(struct top_frame *f, const struct top_list *list, const struct top_view *v)
{
	int live = top_count_live(list), stale = 0;
	for (int i = 0; i < list->nprocs; i++)
		stale += list->procs[i].state == TOP_STALE;
	char counts[64], shown[32] = "all running", filter[TOP_FILTER + 16] = "";
	int n = snprintf(counts, sizeof counts, "%d live", live);
	if (list->nprocs - live - stale)
		n += snprintf(counts + n, sizeof counts - (size_t)n, ", %d dead", list->nprocs - live - stale);
	if (stale)
		snprintf(counts + n, sizeof counts - (size_t)n, ", %d stale", stale);
	if (v->selected_pid)
		snprintf(shown, sizeof shown, "pid %d", v->selected_pid);
	if (*v->filter)
		snprintf(filter, sizeof filter, "  filter %s", v->filter);
	struct top_line *title =
		add(f, TOP_TITLE, "ember-top  %d process%s: %s  showing %s  sort %s%s%s%s", list->nprocs,
		    list->nprocs == 1 ? "" : "es", counts, shown, top_sort_name(v->sort), filter,
		    v->wrap ? "  wrapped" : "", v->demand ? "  demand" : "");
	const char hint[] = "  (h: help, q: quit)"; /* where it fits: the bottom line has the keys too */
	if (v->interactive && strlen(title->text) + strlen(hint) <= (size_t)v->width)
		strcat(title->text, hint);
	if (v->waiting_s >= 0 && !live)
		add(f, TOP_TEXT,
		    "waiting for a program publishing Ember's live file (%s/ember-PID.live), %.0f s so far: "
		    "run one with ember-run --live 1 -- PROGRAM",
		    v->dir, v->waiting_s);
}

/* The columns ahead of the map; returns where the map starts. */
static int row_prefix(char *out, size_t len, const struct top_view *v, const struct top_alloc *a,
		      const struct top_proc *p, const char *res, const char *cell)
{
	char size[32], pid[16] = "";
	human_bytes(a->size, size, sizeof size);
	if (!v->selected_pid)
		snprintf(pid, sizeof pid, "%7d ", p->pid);
	return snprintf(out, len, "%s%4" PRIu64 " %10s %5s %7s  %-9s  ", pid, a->id, size, res, cell, a->kind);
}

static void add_alloc(struct top_frame *f, const struct top_list *list, const struct top_view *v,
		      const struct top_alloc *a)
{
	const struct top_proc *p = &list->procs[a->proc];
	int len = (int)strlen(a->map), col = 0, room = 0, cells = 0;
	bool partly;
	char res[16], cell[48] = "", prefix[160], fitted[TOP_LINE_MAX];
	double share = top_map_resident(a->size, a->map, &partly);
	snprintf(res, sizeof res, "%s%.0f%%", partly ? "~" : "", 100 * share);
	/* the room decides CELL, whose text can widen its column and so take room: until they agree */
	for (int tries = 0; tries < 3; tries++) {
		col = row_prefix(prefix, sizeof prefix, v, a, p, res, cell);
		room = v->width - col > 8 ? v->width - col : 8;
		cells = v->wrap ? len : room;
		uint64_t least, most;
		top_map_cell_regions(a->size, len, cells, &least, &most);
		char was[sizeof cell];
		memcpy(was, cell, sizeof cell);
		if (least == most)
			snprintf(cell, sizeof cell, "%" PRIu64, least);
		else
			snprintf(cell, sizeof cell, "%" PRIu64 "-%" PRIu64, least, most);
		if (!strcmp(was, cell))
			break;
	}
	char demand[TOP_LINE_MAX];
	int n = top_map_fit(a->map, len, cells, fitted);
	top_demand_fit(a->demand, len, cells, demand);
	if (!n) {
		add(f, TOP_ALLOC, "%s-", prefix)->map_col = col;
		return;
	}
	/* wrapped: the rest of the map under its start, room cells a line */
	for (int at = 0; at < n; at += room) {
		struct top_line *l =
			add(f, TOP_ALLOC, "%*s%.*s", col, at ? "" : prefix, room, (v->demand ? demand : fitted) + at);
		l->map_col = col;
		if (*a->demand) /* an older record has no demand: nothing to shade by */
			snprintf(l->shade, sizeof l->shade, "%.*s", room, demand + at);
	}
}

void top_view_build(const struct top_list *list, const struct top_view *v, struct top_frame *f)
{
	f->n = 0;
	add_title(f, list, v);
	/* the running ones first, then what is left of the others */
	for (int i = 0; i < list->nprocs; i++)
		if (list->procs[i].state == TOP_LIVE && top_proc_listed(v, &list->procs[i]))
			add_proc(f, list, v, &list->procs[i]);
	add_gone(f, list, v);
	if (!list->nprocs && v->waiting_s < 0)
		add(f, TOP_TEXT, "no program is publishing Ember's live file");
	add(f, TOP_TEXT, "");
	if (v->demand)
		add(f, TOP_HEADER, "map of demand, CELL regions a cell: the level of its hottest region (%s)",
		    v->interactive ? "d: the states" : "without --demand: the states");
	else
		add_fitted(f, TOP_HEADER, v->width, "map, CELL regions a cell:", top_map_legend);
	/* the shading's legend: each level drawn in its own shade */
	const char *how = v->demand ? "" : v->interactive ? " (d: as digits)" : " (--demand: as digits)";
	/* (the interactive view shades the maps' cells by it; text shows it with --demand) */
	char head[64];
	int col = snprintf(head, sizeof head, "demand: ");
	if ((int)(strlen(head) + 10 + strlen(top_demand_legend) + strlen(how)) > v->width)
		how = "";
	struct top_line *legend = add(f, TOP_HEADER, "%s0123456789%s%s", head, top_demand_legend, how);
	legend->map_col = col;
	snprintf(legend->shade, sizeof legend->shade, "0123456789");
	add(f, TOP_HEADER, "%s%4s %10s %5s %7s  %-9s  %s", v->selected_pid ? "" : "    PID ", "ID", "SIZE", "RES",
	    "CELL", "KIND", v->demand ? "DEMAND" : "MAP");
	f->body = f->n;
	int *shown = malloc((size_t)(list->nallocs ? list->nallocs : 1) * sizeof *shown);
	int n = shown ? top_select_allocs(list, v, shown) : 0;
	for (int i = 0; i < n; i++)
		add_alloc(f, list, v, &list->allocs[shown[i]]);
	if (!n && *v->filter)
		add(f, TOP_TEXT, "(no allocation matches the filter)");
	else if (!n && list->nprocs > top_count_live(list) && !v->selected_pid)
		add(f, TOP_TEXT, "(a dead process's last record: choose it with Tab, or give its PID)");
	free(shown);
}
