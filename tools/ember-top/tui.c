/*
 * The interactive view: view.c's frame, redrawn twice a second, with the
 * lines above the allocations held in place while the allocations scroll,
 * the region maps in colour and shaded by demand, a help overlay and a
 * filter prompt.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "tui.h"

const char top_keys_help[] = "Keys:\n"
			     "  q               quit\n"
			     "  h, ?            help (any key closes it)\n"
			     "  s               sort the allocations: residency, size, address, name,\n"
			     "                  demand\n"
			     "  /               filter: a size (100M: allocations at least that big) or\n"
			     "                  part of a program's name; empty clears, Esc keeps\n"
			     "  Tab, p          the next process, then all of them (Shift-Tab, P: back)\n"
			     "  w               wrap the maps instead of scaling them\n"
			     "  d               show the maps' demand levels instead of their states\n"
			     "  Up, Down, j, k  scroll the allocations a line\n"
			     "  PgUp, PgDn      a page; Home, End (g, G): the first, the last\n"
			     "  r               refresh now (else every half second)\n"
			     "Map: one cell per region of 2 MiB, or per CELL regions when scaled to fit:\n"
			     "  # resident, . mapped, + partly resident, > promoting, < demoting,\n"
			     "  h the application's (Ember leaves it be), : partly the application's\n"
			     "Shading: a cell's demand, its hottest region's as the policy reads it now\n"
			     "(halving every interval): 0 none, 5 and up at or past the promotion\n"
			     "threshold, each level twice the one below; none, blue, cyan, yellow, red.\n";

enum { PAIR_RESIDENT = 1, PAIR_PARTLY, PAIR_PROMOTING, PAIR_DEMOTING, PAIR_APP, PAIR_GONE, PAIR_SHADE };

/* The demand shades: levels 1-2, 3-4, 5-6 (at or past the promotion threshold), 7-9; 0 is not shaded. */
enum { SHADES = 4 };
static const short shade_colour[SHADES] = { COLOR_BLUE, COLOR_CYAN, COLOR_YELLOW, COLOR_RED };

static void colours(void)
{
	if (!has_colors())
		return;
	start_color();
	use_default_colors();
	init_pair(PAIR_RESIDENT, COLOR_GREEN, -1);
	init_pair(PAIR_PARTLY, COLOR_YELLOW, -1);
	init_pair(PAIR_PROMOTING, COLOR_CYAN, -1);
	init_pair(PAIR_DEMOTING, COLOR_MAGENTA, -1);
	init_pair(PAIR_APP, COLOR_BLUE, -1);
	init_pair(PAIR_GONE, COLOR_RED, -1);
	for (int k = 0; k < SHADES; k++) /* dark glyphs on the shade: readable on each */
		init_pair((short)(PAIR_SHADE + k), COLOR_BLACK, shade_colour[k]);
}

/* A cell's attribute for its demand level, or 0 when it is not shaded (level 0, none known, no colour). */
static attr_t shade_attr(char level)
{
	if (!has_colors() || level < '1' || level > '9')
		return 0;
	return COLOR_PAIR(PAIR_SHADE + (level - '1') / 2 - (level == '9')) | A_BOLD;
}

static attr_t glyph_attr(char c)
{
	short pair = 0;
	switch (c) {
	case '#':
		pair = PAIR_RESIDENT;
		break;
	case '+':
	case ':':
		pair = PAIR_PARTLY;
		break;
	case '>':
		pair = PAIR_PROMOTING;
		break;
	case '<':
		pair = PAIR_DEMOTING;
		break;
	case 'h':
		pair = PAIR_APP;
		break;
	}
	return has_colors() && pair ? COLOR_PAIR(pair) | A_BOLD : A_NORMAL;
}

static attr_t line_attr(enum top_line_kind kind)
{
	switch (kind) {
	case TOP_TITLE:
	case TOP_HEADER:
		return A_BOLD;
	case TOP_PROC_SELECTED:
		return A_REVERSE;
	case TOP_PROC_GONE:
		return has_colors() ? COLOR_PAIR(PAIR_GONE) : A_DIM;
	default:
		return A_NORMAL;
	}
}

/* The line's own text up to its map, the map's cells (each shaded by its demand), then the rest as text. */
static void draw_line(int row, const struct top_line *l)
{
	int len = (int)strlen(l->text), plain = l->map_col >= 0 && l->map_col < len ? l->map_col : len;
	int shaded = (int)strlen(l->shade), cells = l->kind == TOP_ALLOC ? len - plain : shaded;
	attron(line_attr(l->kind));
	mvaddnstr(row, 0, l->text, plain < COLS ? plain : COLS);
	if (l->kind == TOP_PROC_SELECTED)
		for (int c = plain; c < COLS; c++) /* the bar across the whole width */
			addch(' ');
	attroff(line_attr(l->kind));
	for (int c = plain; c < plain + cells && c < len && c < COLS; c++) {
		char glyph = l->text[c];
		attr_t shade = c - plain < shaded ? shade_attr(l->shade[c - plain]) : 0;
		/* the state's colour where no demand shades it; a digit (the demand view) is coloured by its shade only */
		attr_t a = shade ? shade : glyph >= '0' && glyph <= '9' ? A_NORMAL : glyph_attr(glyph);
		mvaddch(row, c, (chtype)(unsigned char)glyph | a);
	}
	if (plain + cells < len && plain + cells < COLS) {
		attron(line_attr(l->kind));
		mvaddnstr(row, plain + cells, l->text + plain + cells, COLS - plain - cells);
		attroff(line_attr(l->kind));
	}
}

static void help_overlay(void)
{
	int lines = 2, width = 0;
	for (const char *p = top_keys_help; *p; p++) {
		const char *nl = strchr(p, '\n');
		width = (int)(nl - p) > width ? (int)(nl - p) : width;
		lines++;
		p = nl;
	}
	WINDOW *w = newwin(lines, width + 4, (LINES - lines) / 2 > 0 ? (LINES - lines) / 2 : 0,
			   (COLS - width - 4) / 2 > 0 ? (COLS - width - 4) / 2 : 0);
	if (!w)
		return;
	box(w, '|', '-'); /* plain characters: a text capture of the screen reads as drawn */
	int row = 1;
	for (const char *p = top_keys_help; *p; row++) {
		const char *nl = strchr(p, '\n');
		mvwaddnstr(w, row, 2, p, (int)(nl - p));
		p = nl + 1;
	}
	wrefresh(w);
	wtimeout(w, -1);
	wgetch(w);
	delwin(w);
	touchwin(stdscr);
}

/* A line of text at the bottom: Enter takes it, Esc leaves the filter as it was. */
static void prompt_filter(struct top_view *v)
{
	char text[TOP_FILTER];
	snprintf(text, sizeof text, "%s", v->filter);
	timeout(-1);
	curs_set(1);
	for (;;) {
		move(LINES - 1, 0);
		clrtoeol();
		mvprintw(LINES - 1, 0, "filter (100M: at least that big; else part of a program's name): %s", text);
		refresh();
		int c = getch();
		size_t n = strlen(text);
		if (c == '\n' || c == KEY_ENTER || c == '\r') {
			snprintf(v->filter, sizeof v->filter, "%s", text);
			break;
		} else if (c == 27) {
			break;
		} else if ((c == KEY_BACKSPACE || c == 127 || c == 8) && n) {
			text[n - 1] = 0;
		} else if (c >= ' ' && c < 127 && n + 1 < sizeof text) {
			text[n] = (char)c;
			text[n + 1] = 0;
		}
	}
	curs_set(0);
	timeout(500);
}

/* Tab's order is the frame's: the running processes, then the others; after the last, all of them. */
static int next_pid(const struct top_list *list, const struct top_view *v, int step)
{
	int order[list->nprocs + 1], n = 0;
	order[n++] = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < list->nprocs; i++)
			if ((list->procs[i].state == TOP_LIVE) == !pass && top_proc_listed(v, &list->procs[i]))
				order[n++] = list->procs[i].pid;
	int at = 0;
	for (int i = 0; i < n; i++)
		if (order[i] == v->selected_pid)
			at = i;
	return order[(at + step + n) % n];
}

struct scroller {
	int top;  /* the first allocation row shown */
	int page; /* how many fit */
};

/* The scroll keys; draw() clamps the result to the rows there are. */
static void scroll_by(struct scroller *s, int key)
{
	switch (key) {
	case KEY_DOWN:
	case 'j':
		s->top++;
		break;
	case KEY_UP:
	case 'k':
		s->top--;
		break;
	case KEY_NPAGE:
		s->top += s->page;
		break;
	case KEY_PPAGE:
		s->top -= s->page;
		break;
	case KEY_HOME:
	case 'g':
		s->top = 0;
		break;
	case KEY_END:
	case 'G':
		s->top = 1 << 30;
		break;
	}
}

static void draw(const struct top_frame *f, struct scroller *s)
{
	erase();
	/* many processes: everything below the title scrolls, so none is out of reach */
	int fixed = f->body <= LINES / 2 ? f->body : 1;
	s->page = LINES - fixed - 1 > 1 ? LINES - fixed - 1 : 1;
	int rows = f->n - fixed;
	if (s->top > rows - s->page)
		s->top = rows - s->page;
	if (s->top < 0)
		s->top = 0;
	for (int i = 0; i < fixed && i < LINES; i++)
		draw_line(i, &f->lines[i]);
	for (int i = 0; i < s->page && fixed + s->top + i < f->n; i++)
		draw_line(fixed + i, &f->lines[fixed + s->top + i]);
	attron(A_REVERSE);
	move(LINES - 1, 0);
	if (rows > s->page)
		printw(" lines %d-%d of %d |", s->top + 1, s->top + s->page < rows ? s->top + s->page : rows, rows);
	printw(" q quit  h help  s sort  / filter  Tab process  w wrap  d demand  arrows PgUp PgDn");
	clrtoeol();
	attroff(A_REVERSE);
	refresh();
}

struct session {
	struct top_list lists[2], *now, *before; /* this scan, and the last one for the rates */
	struct top_frame frame;
	struct scroller scroll;
	bool seen_selected; /* the chosen process has been seen: when its file goes, it has ended */
	double quiet_since; /* since when no program has run */
};

static void reload(struct session *s, struct top_view *v, const char *file)
{
	struct top_list *t = s->before;
	s->before = s->now;
	s->now = t;
	if (top_load(s->now, v->dir, file) != 0)
		top_list_clear(s->now); /* --file not there (yet): wait for it */
	top_rates(s->now, s->before);
	if (file && s->now->nprocs && !s->seen_selected) /* as --once: the file asked for is the one shown */
		v->selected_pid = s->now->procs[0].pid;
	bool present = false;
	for (int i = 0; i < s->now->nprocs; i++)
		present |= s->now->procs[i].pid == v->selected_pid;
	if (v->selected_pid && present)
		s->seen_selected = true;
	else if (v->selected_pid && s->seen_selected) /* it ended: back to all of them */
		v->selected_pid = 0;
	if (top_count_live(s->now))
		s->quiet_since = top_now();
	v->waiting_s = top_now() - s->quiet_since;
	v->width = COLS < TOP_WIDTH_MAX ? COLS : TOP_WIDTH_MAX;
}

/* One key; false for q. 'r', a resize and the half-second tick only redraw. */
static bool on_key(struct session *s, struct top_view *v, int key)
{
	switch (key) {
	case 'q':
	case 'Q':
		return false;
	case 'h':
	case '?':
		help_overlay();
		break;
	case 's':
		v->sort = (v->sort + 1) % TOP_SORTS;
		s->scroll.top = 0;
		break;
	case '/':
		prompt_filter(v);
		s->scroll.top = 0;
		break;
	case '\t':
	case 'p':
		v->selected_pid = next_pid(s->now, v, 1);
		s->scroll.top = 0;
		break;
	case KEY_BTAB:
	case 'P':
		v->selected_pid = next_pid(s->now, v, -1);
		s->scroll.top = 0;
		break;
	case 'w':
		v->wrap = !v->wrap;
		break;
	case 'd':
		v->demand = !v->demand;
		break;
	default:
		scroll_by(&s->scroll, key);
	}
	return true;
}

int top_tui(struct top_view *v, const char *file, double wait_s)
{
	struct session s = { .quiet_since = top_now() };
	s.now = &s.lists[0];
	s.before = &s.lists[1];
	int status = 0;
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	colours();
	timeout(500);
	for (;;) {
		reload(&s, v, file);
		if (wait_s >= 0 && v->waiting_s > wait_s) {
			status = 1;
			break;
		}
		top_view_build(s.now, v, &s.frame);
		draw(&s.frame, &s.scroll);
		if (!on_key(&s, v, getch()))
			break;
	}
	endwin();
	if (status)
		fprintf(stderr, "ember-top: no program published Ember's live file for %g s (--wait)\n", wait_s);
	top_frame_free(&s.frame);
	top_list_free(&s.lists[0]);
	top_list_free(&s.lists[1]);
	return status;
}
