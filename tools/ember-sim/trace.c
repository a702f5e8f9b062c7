/* The trace reader. Each line is parsed whole before anything is added, so a
 * bad or cut-off line is skipped and counted, never half-applied. Ranges in
 * L lines are streaming reads of their whole bytes: the launch scan sees
 * pointers, not densities. Times are kept: the replay follows the host's
 * pace between launches (engine.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ember/trace.h"
#include "trace.h"

#define MAX_ID (1ull << 24)     /* ids count allocations: a bigger one is a bad line */
#define MAX_RANGES 4096u

static bool num(char **s, uint64_t *out)
{
	char *p = *s, *end;
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno)
		return false;
	*out = v;
	*s = end;
	return true;
}

static bool snum(char **s, int64_t *out)
{
	bool neg = **s == '-';
	if (neg)
		(*s)++;
	uint64_t v;
	if (!num(s, &v) || v > INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

static bool sp(char **s)
{
	if (**s != ' ')
		return false;
	(*s)++;
	return true;
}

static bool field(char **s, uint64_t *out) { return sp(s) && num(s, out); }
static bool at_end(const char *s) { return *s == 0; }

/* An L line's kernel number, or '-' for a kernel the shim could not name (UINT64_MAX). */
static bool kernel_field(char **s, uint64_t *out)
{
	if ((*s)[0] == ' ' && (*s)[1] == '-') {
		*s += 2;
		*out = UINT64_MAX;
		return true;
	}
	return field(s, out);
}

struct live { uint64_t *size; uint64_t n, sum, peak; };

static void live_set(struct live *lv, uint64_t id, uint64_t size)
{
	if (!sim_grow_to(&lv->size, &lv->n, id, sizeof *lv->size))
		return;
	lv->sum = lv->sum - lv->size[id] + size;
	lv->size[id] = size;
	if (lv->sum > lv->peak)
		lv->peak = lv->sum;
}

static int by_alloc_then_offset(const void *x, const void *y)
{
	const struct sim_range *a = x, *b = y;
	if (a->alloc_id != b->alloc_id)
		return a->alloc_id < b->alloc_id ? -1 : 1;
	return (a->offset > b->offset) - (a->offset < b->offset);
}

/*
 * What a launch reads is the union of its ranges: a kernel may pass one
 * pointer in several arguments (cuBLAS passes a matrix in five), and the
 * scan lists each. Returns how many ranges remain.
 */
static unsigned union_of_ranges(struct sim_range *rs, unsigned n)
{
	if (n < 2)
		return n;
	qsort(rs, n, sizeof *rs, by_alloc_then_offset);
	unsigned w = 0;
	for (unsigned i = 1; i < n; i++) {
		struct sim_range *last = &rs[w];
		if (rs[i].alloc_id == last->alloc_id && rs[i].offset <= last->offset + last->bytes) {
			uint64_t end = rs[i].offset + rs[i].bytes;
			if (end > last->offset + last->bytes)
				last->bytes = last->touched = end - last->offset;
			continue;
		}
		rs[++w] = rs[i];
	}
	return w + 1;
}

/*
 * Keep each range inside the live allocation it names: a range past its
 * allocation (a bad trace: the fuzzer made one of 2^64 bytes) would have
 * the replay walk blocks that do not exist. Ranges of allocations not live
 * are dropped. Returns how many remain.
 */
static unsigned within_allocations(struct sim_range *rs, unsigned n, const struct live *lv)
{
	unsigned w = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t size = rs[i].alloc_id < lv->n ? lv->size[rs[i].alloc_id] : 0;
		if (rs[i].offset >= size)
			continue;
		if (rs[i].bytes > size - rs[i].offset)
			rs[i].bytes = rs[i].touched = size - rs[i].offset;
		rs[w++] = rs[i];
	}
	return w;
}

/* 1: applied, 0: malformed, -1: out of memory. */
static int parse_line(char *s, int version, struct sim_events *e, struct sim_trace_info *info, struct live *lv,
		      struct sim_range *rs, struct sim_follow *follow)
{
	char kind = *s++;
	uint64_t t, id, dev, size, a, b, c;
	switch (kind) {
	case 'D':
		if (!field(&s, &dev) || !field(&s, &a) || !field(&s, &b) || !field(&s, &c) || !at_end(s))
			return 0;
		if (!info->budget || dev == 0) {
			info->budget = a;
			/* the shim's accounts hold budget / 100 * percent */
			info->high_pct = a >= 100 ? (unsigned)(b / (a / 100)) : 0;
			info->low_pct = a >= 100 ? (unsigned)(c / (a / 100)) : 0;
			if (info->high_pct > 100 || info->low_pct > info->high_pct)
				info->high_pct = info->low_pct = 0; /* not the shim's: the defaults */
		}
		return 1;
	case 'A':
		if (!field(&s, &t) || !field(&s, &id) || !field(&s, &dev) || !field(&s, &size) || !sp(&s) ||
		    (*s != 'm' && *s != 'c') || !at_end(s + 1) || id >= MAX_ID)
			return 0;
		live_set(lv, id, size);
		if (sim_events_alloc(e, id, size))
			return -1;
		e->ev[e->n - 1].t = t;
		e->ev[e->n - 1].flags = *s == 'c' ? SIM_ALLOC_CONVERTED : 0;
		return 1;
	case 'P': {
		int64_t bytes;
		if (!field(&s, &t) || !field(&s, &dev) || !sp(&s) || !snum(&s, &bytes) || !at_end(s))
			return 0;
		if (sim_events_plain(e, bytes))
			return -1;
		e->ev[e->n - 1].t = t;
		return 1;
	}
	case 'F':
		if (!field(&s, &t) || !field(&s, &id) || !at_end(s) || id >= MAX_ID)
			return 0;
		live_set(lv, id, 0);
		if (sim_events_free(e, id))
			return -1;
		e->ev[e->n - 1].t = t;
		return 1;
	case 'L': {
		uint64_t stream, n, kernel = UINT64_MAX, arg;
		unsigned nfollow = 0;
		if (!field(&s, &t) || !field(&s, &stream))
			return 0;
		if (version >= 2 && !kernel_field(&s, &kernel))
			return 0;
		if (!field(&s, &n) || n > MAX_RANGES)
			return 0;
		for (uint64_t i = 0; i < n; i++) {
			if (!field(&s, &id) || *s++ != ':' || !num(&s, &a) || *s++ != ':' || !num(&s, &b) || id >= MAX_ID)
				return 0;
			if (version >= 2 && *s == ':') {
				s++;
				if (!num(&s, &arg) || arg >= 64)
					return 0;
				if (kernel != UINT64_MAX)
					follow[nfollow++] = (struct sim_follow){ (unsigned)arg, id, a, b };
			}
			rs[i] = (struct sim_range){ .alloc_id = id, .offset = a, .bytes = b, .pattern = SIM_STREAM, .touched = b };
		}
		if (!at_end(s))
			return 0;
		n = within_allocations(rs, (unsigned)n, lv);
		n = union_of_ranges(rs, (unsigned)n);
		if (sim_events_launch(e, stream, (unsigned)n, rs, 0) || sim_events_follow(e, kernel, nfollow, follow))
			return -1;
		e->ev[e->n - 1].t = t;
		return 1;
	}
	case 'M': /* the shim's own moves: a variant makes its own, so only checked */
		if (!field(&s, &t) || !field(&s, &id) || !field(&s, &a) || !field(&s, &b) || !sp(&s) ||
		    (*s != 'P' && *s != 'D') || !(s++, field(&s, &c)) || c > 1 || !field(&s, &t) || !at_end(s))
			return 0;
		return 1;
	case 'H': /* the application's own hints: not replayed */
		if (!field(&s, &t) || !field(&s, &id) || !field(&s, &a) || !field(&s, &b) || !at_end(s))
			return 0;
		return 1;
	case 'W': /* the host waited for the GPU */
		if (!field(&s, &t) || !field(&s, &a) || !at_end(s) || a < t)
			return 0;
		return sim_events_wait(e, t, a) ? -1 : 1;
	case 'Q': /* a host phase */
		if (!field(&s, &t) || !field(&s, &a) || a == 0 || a > UINT32_MAX || !field(&s, &b) || b > 1 || !at_end(s))
			return 0;
		return sim_events_host_phase(e, t, (uint32_t)a, b == 1) ? -1 : 1;
	case 'X': /* the program flushed: it times what follows */
		if (!field(&s, &t) || !at_end(s))
			return 0;
		if (sim_events_mark(e))
			return -1;
		e->ev[e->n - 1].t = t;
		return 1;
	case 'E':
		if (!field(&s, &t) || !at_end(s))
			return 0;
		info->ended = true;
		if (sim_events_end(e))
			return -1;
		e->ev[e->n - 1].t = t;
		return 1;
	}
	return 0;
}

int sim_trace_read(FILE *f, const char *name, struct sim_events *e, struct sim_trace_info *info, char *err, size_t errlen)
{
	memset(info, 0, sizeof *info);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	struct live lv = { 0 };
	struct sim_range *rs = malloc(MAX_RANGES * sizeof *rs);
	struct sim_follow *follow = malloc(MAX_RANGES * sizeof *follow);
	int rc = 0, version = 0;
	if (!rs || !follow) {
		free(rs);
		free(follow);
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		info->lines++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (len && line[len - 1] == '\r')
			line[--len] = 0;
		if (info->lines == 1) {
			char magic[32];
			int ver, used = 0;
			if (sscanf(line, "%31s %d%n", magic, &ver, &used) != 2 || strcmp(magic, EMBER_TRACE_MAGIC) ||
			    line[used] || ver < 1 || ver > EMBER_TRACE_VERSION) {
				snprintf(err, errlen, "%s: unknown trace header '%.60s' (expected '%s 1' to '%s %d')", name,
					 line, EMBER_TRACE_MAGIC, EMBER_TRACE_MAGIC, EMBER_TRACE_VERSION);
				rc = -1;
				break;
			}
			version = ver;
			continue;
		}
		if (!len || line[0] == '#')
			continue;
		int r = parse_line(line, version, e, info, &lv, rs, follow);
		if (r < 0) {
			snprintf(err, errlen, "%s: out of memory at line %llu", name, (unsigned long long)info->lines);
			rc = -1;
			break;
		}
		if (r)
			info->events++;
		else if (!info->skipped++)
			info->first_bad = info->lines;
	}
	if (!rc && info->lines == 0) {
		snprintf(err, errlen, "%s: empty file (expected the header '%s %d')", name, EMBER_TRACE_MAGIC, EMBER_TRACE_VERSION);
		rc = -1;
	}
	info->working_set = lv.peak;
	free(lv.size);
	free(rs);
	free(follow);
	free(line);
	return rc;
}
