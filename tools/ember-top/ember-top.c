/*
 * ember-top: a live view of what Ember is doing in a running program:
 * each GPU's budget and residency, and each allocation's region map.
 *
 *   ember-top [--once] [PID | --file PATH]
 *
 * The program must run with EMBER_LIVE=1 (ember-run --live 1), which keeps
 * /dev/shm/ember-<pid>.live up to date (format: shim/report/live.h). Without a PID
 * ember-top shows the most recently updated one. --once prints one frame as
 * plain text and exits, for scripts; otherwise it redraws every half second
 * with ncurses until q.
 */
#include <curses.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_LINES = 4096, LINE = 512 };

struct frame {
	char lines[MAX_LINES][LINE];
	int n;
};

static int newest_live_file(char *out, size_t len)
{
	DIR *d = opendir("/dev/shm");
	if (!d)
		return -1;
	time_t best = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (strncmp(e->d_name, "ember-", 6) != 0 || n < 5 || strcmp(e->d_name + n - 5, ".live") != 0)
			continue;
		char path[512];
		struct stat st;
		snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
		if (stat(path, &st) == 0 && st.st_mtime >= best) {
			best = st.st_mtime;
			snprintf(out, len, "%s", path);
		}
	}
	closedir(d);
	return best ? 0 : -1;
}

static int read_frame(const char *path, struct frame *f)
{
	FILE *in = fopen(path, "r");
	if (!in)
		return -1;
	f->n = 0;
	while (f->n < MAX_LINES && fgets(f->lines[f->n], LINE, in)) {
		f->lines[f->n][strcspn(f->lines[f->n], "\n")] = 0;
		f->n++;
	}
	fclose(in);
	return f->n > 0 && !strcmp(f->lines[0], "ember-live 1") ? 0 : -1;
}

static double gib(uint64_t b)
{
	return (double)b / (1u << 30);
}

/* Render one frame into text lines, width columns wide; emit(line) for each. */
static void render(const struct frame *f, int width, void (*emit)(const char *line, void *arg), void *arg)
{
	char out[LINE * 2];
	char pid[32] = "?", mode[32] = "?";
	for (int i = 1; i < f->n; i++) {
		sscanf(f->lines[i], "pid %31s", pid);
		sscanf(f->lines[i], "mode %31s", mode);
	}
	snprintf(out, sizeof out, "ember-top  pid %s  mode %s", pid, mode);
	emit(out, arg);
	for (int i = 1; i < f->n; i++) {
		int dev;
		uint64_t budget, high, low, resident, other, peak, promotions, demotions;
		if (sscanf(f->lines[i],
			   "device %d budget %" SCNu64 " high %" SCNu64 " low %" SCNu64 " resident %" SCNu64
			   " other %" SCNu64 " peak %" SCNu64 " promotions %" SCNu64 " demotions %" SCNu64,
			   &dev, &budget, &high, &low, &resident, &other, &peak, &promotions, &demotions) != 9)
			continue;
		char bar[41];
		int fill = budget ? (int)(40.0 * (double)(resident + other) / (double)budget + 0.5) : 0;
		for (int k = 0; k < 40; k++)
			bar[k] = k < fill ? '#' : (k == (int)(40.0 * high / (budget ? budget : 1)) ? '|' : '.');
		bar[40] = 0;
		snprintf(out, sizeof out,
			 "GPU %d [%s] %.2f of %.2f GiB (high %.2f)  peak %.2f  other %.2f  promotions %" PRIu64
			 "  demotions %" PRIu64,
			 dev, bar, gib(resident + other), gib(budget), gib(high), gib(peak), gib(other), promotions,
			 demotions);
		emit(out, arg);
	}
	emit("", arg);
	emit("  id        size  kind       regions: # resident  . mapped  + partly  > promoting  < demoting  h app's", arg);
	for (int i = 1; i < f->n; i++) {
		uint64_t id, size;
		char base[32], kind[16], map[LINE];
		if (sscanf(f->lines[i], "alloc %" SCNu64 " %31s %" SCNu64 " %15s %511s", &id, base, &size, kind, map) != 5)
			continue;
		int room = width - 34;
		snprintf(out, sizeof out, "%4" PRIu64 " %9.2f G  %-9s  %.*s", id, gib(size), kind, room > 8 ? room : 8,
			 map);
		emit(out, arg);
	}
}

static void print_line(const char *line, void *arg)
{
	(void)arg;
	puts(line);
}

static void draw_line(const char *line, void *arg)
{
	int *row = arg;
	if (*row < LINES) {
		mvaddnstr(*row, 0, line, COLS);
		(*row)++;
	}
}

static void usage(void)
{
	fputs("usage: ember-top [--once] [PID | --file PATH]\n"
	      "Shows a program running with EMBER_LIVE=1 (ember-run --live 1 -- program).\n",
	      stderr);
}

int main(int argc, char **argv)
{
	bool once = false;
	char path[512] = "";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--once"))
			once = true;
		else if (!strcmp(argv[i], "--file") && i + 1 < argc)
			snprintf(path, sizeof path, "%s", argv[++i]);
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage();
			return 0;
		} else if (atoi(argv[i]) > 0)
			snprintf(path, sizeof path, "/dev/shm/ember-%d.live", atoi(argv[i]));
		else {
			usage();
			return 2;
		}
	}
	if (!*path && newest_live_file(path, sizeof path) != 0) {
		fputs("ember-top: no program is publishing: run it with EMBER_LIVE=1 (ember-run --live 1 -- ...)\n",
		      stderr);
		return 1;
	}
	static struct frame f;
	if (once) {
		if (read_frame(path, &f) != 0) {
			fprintf(stderr, "ember-top: %s is not an Ember live file\n", path);
			return 1;
		}
		render(&f, 120, print_line, NULL);
		return 0;
	}
	initscr();
	cbreak();
	noecho();
	curs_set(0);
	timeout(500);
	for (;;) {
		erase();
		int row = 0;
		if (read_frame(path, &f) == 0)
			render(&f, COLS, draw_line, &row);
		else
			mvaddstr(0, 0, "ember-top: the program has ended, or is not publishing (q quits)");
		refresh();
		if (getch() == 'q')
			break;
	}
	endwin();
	return 0;
}
