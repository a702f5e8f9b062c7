/*
 * The publishing processes: every /dev/shm/ember-<pid>.live of this user,
 * and whether its writer still runs. A killed program cannot remove its
 * file, and its PID may since have gone to another process, so a file
 * counts as live only while the PID runs as the file's owner, is a user
 * process, and started no later than the file's last record.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "top.h"

static double seconds(struct timespec t)
{
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* When the system booted, in seconds since the epoch (/proc/stat's btime); 0 if unknown. */
static double boot_time(void)
{
	static double btime = -1;
	if (btime >= 0)
		return btime;
	btime = 0;
	FILE *f = fopen("/proc/stat", "r");
	char line[256];
	long long t;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "btime %lld", &t) == 1)
			btime = (double)t;
	if (f)
		fclose(f);
	return btime;
}

/* Its state letter and when it started, in seconds since the epoch, from /proc/PID/stat; false if unknown. */
static bool proc_stat(int pid, char *state, double *started)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	/* the name, field 2, is in parentheses and may hold spaces: count from the last ')' */
	char *p = strrchr(buf, ')');
	unsigned long long ticks;
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 state, &ticks) != 2)
		return false;
	*started = boot_time() ? boot_time() + (double)ticks / (double)sysconf(_SC_CLK_TCK) : 0;
	return true;
}

/* A kernel thread has an empty command line, and it publishes nothing. */
static bool user_process(int pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true; /* no /proc to ask: kill(2) said it runs */
	bool some = fgetc(f) != EOF;
	fclose(f);
	return some;
}

static void read_name(struct top_proc *p)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", p->pid);
	FILE *f = fopen(path, "r");
	if (f && fgets(p->name, sizeof p->name, f))
		p->name[strcspn(p->name, "\n")] = 0;
	if (f)
		fclose(f);
}

static void judge(struct top_proc *p, uid_t owner)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	p->age_s = seconds(now) - seconds(p->written);
	char state = 0;
	double started = 0;
	/* a zombie answers kill(2) too: a program that crashed and was not yet waited for */
	if (p->pid <= 0 || (kill(p->pid, 0) != 0 && errno == ESRCH) ||
	    (proc_stat(p->pid, &state, &started) && (state == 'Z' || state == 'X'))) {
		p->state = TOP_DEAD;
		return;
	}
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d", p->pid);
	bool other_owner = stat(path, &st) == 0 ? st.st_uid != owner : errno == EPERM;
	/* a start a little after the record is /proc's rounding (btime has whole seconds) */
	if (other_owner || !user_process(p->pid) || started > seconds(p->written) + 2) {
		p->state = TOP_STALE;
		return;
	}
	p->state = TOP_LIVE;
	read_name(p);
}

/* "ember-<digits>.live" exactly: not the shim's ".live.XXXXXX" replacements in progress. */
static int live_file_pid(const char *name)
{
	int pid, end = 0;
	if (sscanf(name, "ember-%d.live%n", &pid, &end) != 1 || name[end] || pid <= 0 || strncmp(name, "ember-", 6) ||
	    name[6] < '0' || name[6] > '9')
		return 0;
	return pid;
}

static int by_number(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void scan(struct top_list *list, const char *dir)
{
	top_list_clear(list);
	DIR *d = opendir(dir);
	if (!d)
		return;
	int *pids = NULL, n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		int pid = live_file_pid(e->d_name);
		if (!pid)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			int *more = realloc(pids, (size_t)cap * sizeof *pids);
			if (!more)
				break;
			pids = more;
		}
		pids[n++] = pid;
	}
	closedir(d);
	if (n)
		qsort(pids, (size_t)n, sizeof *pids, by_number);
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/ember-%d.live", dir, pids[i]);
		/* only this user's own files: another user's process is not ours to show */
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
		    top_record_read(list, path) != 0)
			continue;
		struct top_proc *p = &list->procs[list->nprocs - 1];
		p->pid = pids[i]; /* the shim names its file by getpid(): the name is what counts */
		judge(p, st.st_uid);
	}
	free(pids);
}

static int scan_file(struct top_list *list, const char *path)
{
	top_list_clear(list);
	struct stat st;
	if (stat(path, &st) != 0 || top_record_read(list, path) != 0)
		return -1;
	judge(&list->procs[0], st.st_uid);
	return 0;
}

int top_load(struct top_list *list, const char *dir, const char *file)
{
	if (file)
		return scan_file(list, file);
	scan(list, dir);
	return 0;
}

static const struct top_device *find_device(const struct top_proc *p, int id)
{
	for (int i = 0; i < p->ndevices; i++)
		if (p->devices[i].id == id)
			return &p->devices[i];
	return NULL;
}

void top_rates(struct top_list *now, const struct top_list *before)
{
	for (int i = 0; i < now->nprocs; i++) {
		struct top_proc *p = &now->procs[i];
		for (int j = 0; j < before->nprocs; j++) {
			const struct top_proc *q = &before->procs[j];
			if (q->pid != p->pid)
				continue;
			double dt = seconds(p->written) - seconds(q->written);
			for (int k = 0; k < p->ndevices; k++) {
				struct top_device *d = &p->devices[k];
				const struct top_device *e = find_device(q, d->id);
				if (!e || d->promotions < e->promotions || d->demotions < e->demotions)
					continue;
				if (dt > 0) {
					d->has_rates = true;
					d->promotions_per_s = (double)(d->promotions - e->promotions) / dt;
					d->demotions_per_s = (double)(d->demotions - e->demotions) / dt;
				} else if (e->has_rates) { /* the same record again: keep what it was */
					d->has_rates = true;
					d->promotions_per_s = e->promotions_per_s;
					d->demotions_per_s = e->demotions_per_s;
				}
			}
		}
	}
}

int top_count_live(const struct top_list *list)
{
	int n = 0;
	for (int i = 0; i < list->nprocs; i++)
		n += list->procs[i].state == TOP_LIVE;
	return n;
}

void top_list_clear(struct top_list *list)
{
	list->nprocs = 0;
	list->nallocs = 0;
}

void top_list_free(struct top_list *list)
{
	free(list->procs);
	free(list->allocs);
	*list = (struct top_list){ 0 };
}
