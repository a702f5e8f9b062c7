/* One live file, read as tools/ember-stat/ember-stat.py reads it: the format of shim/report/live.h. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "top.h"

static void *grow(void *p, int *cap, int need, size_t each)
{
	if (need <= *cap)
		return p;
	int cap2 = *cap ? *cap * 2 : 16;
	while (cap2 < need)
		cap2 *= 2;
	void *q = realloc(p, (size_t)cap2 * each);
	if (!q) {
		perror("ember-top");
		exit(1);
	}
	*cap = cap2;
	return q;
}

static void parse_device(struct top_proc *p, const char *line)
{
	struct top_device d = { 0 };
	if (p->ndevices == TOP_MAX_DEVICES ||
	    sscanf(line,
		   "device %d budget %" SCNu64 " high %" SCNu64 " low %" SCNu64 " resident %" SCNu64 " other %" SCNu64
		   " peak %" SCNu64 " promotions %" SCNu64 " demotions %" SCNu64,
		   &d.id, &d.budget, &d.high, &d.low, &d.resident, &d.other, &d.peak, &d.promotions, &d.demotions) != 9)
		return;
	/* a key added later (shim/report/live.h): absent from older records */
	const char *mapped = strstr(line, " mapped ");
	d.has_mapped = mapped && sscanf(mapped, " mapped %" SCNu64, &d.mapped) == 1;
	p->devices[p->ndevices++] = d;
}

/* A map longer than the shim writes is cut at its length; a glyph it does not write is shown as '?'. */
static void parse_alloc(struct top_list *list, int proc, const char *line)
{
	struct top_alloc a = { .proc = proc };
	int map = -1;
	if (sscanf(line, "alloc %" SCNu64 " %" SCNx64 " %" SCNu64 " %15s %n", &a.id, &a.base, &a.size, a.kind, &map) !=
		    4 ||
	    map < 0)
		return;
	snprintf(a.map, sizeof a.map, "%.*s", (int)strcspn(line + map, " "), line + map);
	for (char *c = a.map; *c; c++)
		if (!strchr(".#+<>h", *c))
			*c = '?';
	list->allocs = grow(list->allocs, &list->allocs_cap, list->nallocs + 1, sizeof a);
	list->allocs[list->nallocs++] = a;
}

/* The demand levels of the allocation just read with that id; dropped unless they are one a map glyph. */
static void parse_demand(struct top_list *list, const struct top_proc *p, const char *line)
{
	uint64_t id;
	int at = -1;
	if (sscanf(line, "demand %" SCNu64 " %n", &id, &at) != 1 || at < 0)
		return;
	const char *levels = line + at;
	size_t n = strcspn(levels, " ");
	for (int i = list->nallocs - 1; i >= p->first_alloc; i--) {
		struct top_alloc *a = &list->allocs[i];
		if (a->id != id)
			continue;
		if (n != strlen(a->map))
			return;
		for (size_t k = 0; k < n; k++)
			a->demand[k] = levels[k] >= '0' && levels[k] <= '9' ? levels[k] : '?';
		a->demand[n] = 0;
		return;
	}
}

int top_record_read(struct top_list *list, const char *path)
{
	/* our own regular file only: a link planted at the name is not followed */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	FILE *in = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
	if (!in) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, in);
	if (n <= 0 || strcmp(line, "ember-live 1\n") != 0) {
		free(line);
		fclose(in);
		return -1;
	}
	list->procs = grow(list->procs, &list->procs_cap, list->nprocs + 1, sizeof *list->procs);
	int proc = list->nprocs++; /* (version 1 grows only by additions, skipped here when unknown) */
	struct top_proc *p = &list->procs[proc];
	*p = (struct top_proc){ .written = st.st_mtim, .first_alloc = list->nallocs };
	snprintf(p->mode, sizeof p->mode, "?");
	snprintf(p->name, sizeof p->name, "?");
	while (getline(&line, &cap, in) > 0) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "pid ", 4))
			p->pid = atoi(line + 4);
		else if (!strncmp(line, "mode ", 5))
			snprintf(p->mode, sizeof p->mode, "%s", line + 5);
		else if (!strncmp(line, "device ", 7))
			parse_device(p, line);
		else if (!strncmp(line, "alloc ", 6))
			parse_alloc(list, proc, line);
		else if (!strncmp(line, "demand ", 7))
			parse_demand(list, p, line);
	}
	p->nallocs = list->nallocs - p->first_alloc;
	free(line);
	fclose(in);
	return 0;
}
