/*
 * ember-top: a live view of what Ember is doing in every program of yours
 * that runs with EMBER_LIVE=1 (ember-run --live 1): each GPU's budget and
 * residency, and each allocation's region map, shaded by demand. --once
 * prints one frame as plain text, for scripts and tests; otherwise tui.c
 * draws it until q.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "tui.h"

static const char usage_text[] = "usage: ember-top [options] [PID]\n"
				 "Shows every program of yours that runs with Ember's live file (EMBER_LIVE=1:\n"
				 "ember-run --live 1 -- PROGRAM): each process, each GPU's budget gauge and its\n"
				 "resident and mapped bytes, and each allocation's region map, shaded by demand.\n"
				 "A process killed before it could remove its file is marked dead; one whose PID\n"
				 "went to another process, stale. With PID, that process is the one shown.\n"
				 "\n"
				 "  --once          print one frame as plain text and exit, without curses\n"
				 "  --wait SECONDS  wait this long at most for a program to publish, at the start\n"
				 "                  and after the last one ends (default: until q; --once: 0)\n"
				 "  --file PATH     show this live file only\n"
				 "  --dir DIR       where the live files are (default /dev/shm)\n"
				 "  --sort KEY      residency, size, address, name or demand (default residency)\n"
				 "  --filter TEXT   allocations at least this big (100M, >=1G), or the programs\n"
				 "                  whose name contains TEXT\n"
				 "  --width COLS    --once's width (default: the terminal's, else $COLUMNS, else 120)\n"
				 "  --wrap          wrap long maps, one cell per group of the record, instead of\n"
				 "                  scaling them to the width\n"
				 "  --demand        the maps' cells as their demand levels (0-9), not their\n"
				 "                  states: --once's text has no shading to show them by\n"
				 "  -h, --help      this help\n"
				 "\n";

static const char status_text[] = "\nExit status: 0 shown, 1 nothing to show (no such file, or no program within\n"
				  "--wait), 2 bad arguments.\n";

double top_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

bool top_ready(const struct top_list *list, const struct top_view *v)
{
	for (int i = 0; i < list->nprocs; i++)
		if (list->procs[i].state == TOP_LIVE && (!v->selected_pid || list->procs[i].pid == v->selected_pid))
			return true;
	return false;
}

static bool has_pid(const struct top_list *list, int pid)
{
	for (int i = 0; i < list->nprocs; i++)
		if (list->procs[i].pid == pid)
			return true;
	return false;
}

static int terminal_width(void)
{
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *c = getenv("COLUMNS");
	return c && atoi(c) > 0 ? atoi(c) : 120;
}

static int bad(const char *what, const char *value)
{
	fprintf(stderr, "ember-top: %s: %s (ember-top --help lists the options)\n", what, value);
	return 2;
}

/* Load until what the view waits for is live, or wait_s has passed; 0 if there is something to show. */
static int wait_for(struct top_list *list, const struct top_view *v, const char *file, double wait_s)
{
	bool read = false, said = false;
	for (double start = top_now();; usleep(100 * 1000)) {
		read = top_load(list, v->dir, file) == 0;
		if ((read && top_ready(list, v)) || top_now() - start >= wait_s)
			break;
		if (!said)
			fprintf(stderr,
				"ember-top: waiting up to %g s for a program publishing Ember's live file (%s)\n",
				wait_s, file ? file : v->dir);
		said = true;
	}
	if (file && !read) {
		fprintf(stderr, "ember-top: %s is not a readable Ember live file\n", file);
		return 1;
	}
	if (!list->nprocs || (v->selected_pid && !has_pid(list, v->selected_pid))) {
		fprintf(stderr,
			"ember-top: no program is publishing%s: run it with EMBER_LIVE=1 (ember-run --live 1 -- ...)\n",
			v->selected_pid ? " as that PID" : "");
		return 1;
	}
	return 0;
}

static int once(struct top_view *v, const char *file, double wait_s)
{
	struct top_list list = { 0 };
	int status = wait_for(&list, v, file, wait_s);
	if (!status) {
		if (file) /* the one file asked for is shown, whatever became of its writer */
			v->selected_pid = list.procs[0].pid;
		struct top_frame f = { 0 };
		top_view_build(&list, v, &f);
		for (int i = 0; i < f.n; i++)
			puts(f.lines[i].text);
		top_frame_free(&f);
	}
	top_list_free(&list);
	return status;
}

struct options {
	struct top_view view;
	bool once;
	const char *file;
	double wait_s; /* < 0: not given */
};

/* An option's value, checked; 0, else the exit status for a bad one. */
static int take(struct options *o, const char *a, const char *value)
{
	char *end;
	if (!strcmp(a, "--wait")) {
		errno = 0;
		o->wait_s = strtod(value, &end);
		if (errno || *end || end == value || !isfinite(o->wait_s) || o->wait_s < 0)
			return bad("--wait takes seconds, 0 or more", value);
	} else if (!strcmp(a, "--width")) {
		long w = strtol(value, &end, 10);
		if (*end || end == value || w < 20 || w > TOP_WIDTH_MAX)
			return bad("--width takes columns, 20 to 1000", value);
		o->view.width = (int)w;
	} else if (!strcmp(a, "--sort")) {
		o->view.sort = TOP_SORTS;
		for (int s = 0; s < TOP_SORTS; s++)
			if (!strcmp(value, top_sort_name(s)))
				o->view.sort = s;
		if (o->view.sort == TOP_SORTS)
			return bad("--sort takes residency, size, address, name or demand", value);
	} else if (!strcmp(a, "--filter")) {
		snprintf(o->view.filter, sizeof o->view.filter, "%s", value);
	} else if (!strcmp(a, "--file")) {
		o->file = value;
	} else if (!strcmp(a, "--dir")) {
		o->view.dir = value;
	}
	return 0;
}

/* -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct options *o)
{
	static const char *valued[] = { "--wait", "--width", "--sort", "--filter", "--file", "--dir" };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool takes = false;
		for (size_t k = 0; k < sizeof valued / sizeof *valued; k++)
			takes |= !strcmp(a, valued[k]);
		char *end;
		long pid = strtol(a, &end, 10);
		if (takes) {
			if (i + 1 == argc)
				return bad("a value is needed after", a);
			int status = take(o, a, argv[++i]);
			if (status)
				return status;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("%s%s%s", usage_text, top_keys_help, status_text);
			return 0;
		} else if (!strcmp(a, "--once")) {
			o->once = true;
		} else if (!strcmp(a, "--wrap")) {
			o->view.wrap = true;
		} else if (!strcmp(a, "--demand")) {
			o->view.demand = true;
		} else if (end != a && !*end && pid > 0 && pid < (1L << 30)) {
			o->view.selected_pid = (int)pid;
		} else {
			return bad("unknown argument", a);
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct options o = { .view = { .dir = "/dev/shm", .waiting_s = -1 }, .wait_s = -1 };
	int status = parse(argc, argv, &o);
	if (status >= 0)
		return status;
	if (o.once) {
		if (!o.view.width)
			o.view.width = terminal_width();
		return once(&o.view, o.file, o.wait_s < 0 ? 0 : o.wait_s);
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fputs("ember-top: not a terminal: ember-top --once prints one frame as text\n", stderr);
		return 2;
	}
	o.view.interactive = true;
	return top_tui(&o.view, o.file, o.wait_s);
}
