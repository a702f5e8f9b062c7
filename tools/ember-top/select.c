/* Which processes and allocations are shown, and in which order: the filter and the sort keys. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "view.h"

const char *top_sort_name(enum top_sort s)
{
	static const char *names[TOP_SORTS] = { "residency", "size", "address", "name", "demand" };
	return s < TOP_SORTS ? names[s] : "?";
}

/* Sizes have Ember's one grammar (ember_parse_SIZE): a unit is needed, so "100" is a name, "100M" a size. */
bool top_filter_size(const char *filter, uint64_t *bytes)
{
	const char *s = filter;
	if (*s == '>')
		s += s[1] == '=' ? 2 : 1;
	struct ember_size size;
	if (!*s || ember_parse_SIZE(s, &size) != 0 || size.per_mille)
		return false;
	*bytes = size.bytes;
	return true;
}

bool top_proc_listed(const struct top_view *v, const struct top_proc *p)
{
	uint64_t bytes;
	return !*v->filter || top_filter_size(v->filter, &bytes) || strcasestr(p->name, v->filter);
}

/* All of them means every one that runs: a dead process's last record is shown when it is chosen. */
bool top_proc_shown(const struct top_view *v, const struct top_proc *p)
{
	return top_proc_listed(v, p) && (v->selected_pid ? v->selected_pid == p->pid : p->state == TOP_LIVE);
}

/* qsort has no context argument: the list and view being sorted, for one call at a time */
static const struct top_list *sorting;
static enum top_sort sort_key;

static int compare_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int by_key(const void *x, const void *y)
{
	const struct top_alloc *a = &sorting->allocs[*(const int *)x], *b = &sorting->allocs[*(const int *)y];
	const struct top_proc *p = &sorting->procs[a->proc], *q = &sorting->procs[b->proc];
	int c = 0;
	bool partly;
	switch (sort_key) {
	case TOP_SORT_RESIDENCY: { /* the most resident first */
		double ra = top_map_resident(a->size, a->map, &partly), rb = top_map_resident(b->size, b->map, &partly);
		c = (ra < rb) - (ra > rb);
		break;
	}
	case TOP_SORT_DEMAND: { /* the hottest first: the mean level of its regions */
		double da = top_demand_mean(a->size, a->demand), db = top_demand_mean(b->size, b->demand);
		c = (da < db) - (da > db);
		break;
	}
	case TOP_SORT_SIZE:
		c = compare_u64(b->size, a->size);
		break;
	case TOP_SORT_NAME:
		c = strcmp(p->name, q->name);
		if (!c)
			c = (p->pid > q->pid) - (p->pid < q->pid);
		break;
	default:
		break;
	}
	return c ? c : compare_u64(a->base, b->base);
}

int top_select_allocs(const struct top_list *list, const struct top_view *v, int *out)
{
	uint64_t least = 0;
	bool by_size = top_filter_size(v->filter, &least);
	int n = 0;
	for (int i = 0; i < list->nallocs; i++) {
		const struct top_alloc *a = &list->allocs[i];
		if (top_proc_shown(v, &list->procs[a->proc]) && (!by_size || a->size >= least))
			out[n++] = i;
	}
	sorting = list;
	sort_key = v->sort;
	qsort(out, (size_t)n, sizeof *out, by_key);
	return n;
}
