/*
 * A region map fitted to the screen. The shim writes one glyph per region,
 * or per group of regions past EMBER_LIVE_MAP_MAX (shim/report/live.c:
 * group g of len holds regions [g*n/len, (g+1)*n/len)). Wider than the
 * room, groups are merged the same way, and a merged cell claims no more
 * than every one of its groups does: '#' only when all are resident, '.'
 * only when all are mapped, '+' for a mix of the two. The demand map beside
 * it (one level a glyph) merges to the hottest of a cell's groups.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "top.h"

const char top_map_legend[] = " # resident . mapped + partly > promoting < demoting h app's : part app's";

/* The glyph for groups [g0, g1) of a map. */
static char merge(const char *map, int g0, int g1)
{
	bool same = true, promoting = false, demoting = false, unknown = false, hinted = false;
	for (int g = g0; g < g1; g++) {
		same &= map[g] == map[g0];
		promoting |= map[g] == '>';
		demoting |= map[g] == '<';
		unknown |= map[g] == '?';
		hinted |= map[g] == 'h';
	}
	/* the shim's own precedence within a group: a move in flight shows first */
	if (same)
		return map[g0];
	if (unknown)
		return '?';
	if (promoting)
		return '>';
	if (demoting)
		return '<';
	/* the application's regions may be resident or not: no claim either way */
	return hinted ? ':' : '+';
}

/* len glyphs into at most cells (at least 1), each cell its groups joined by join; the cells written. */
static int fit(const char *glyphs, int len, int cells, char *out, char (*join)(const char *, int, int))
{
	if (cells < 1)
		cells = 1;
	if (len <= cells) {
		memcpy(out, glyphs, (size_t)len);
		out[len] = 0;
		return len;
	}
	for (int c = 0; c < cells; c++)
		out[c] = join(glyphs, (int)((int64_t)c * len / cells), (int)((int64_t)(c + 1) * len / cells));
	out[cells] = 0;
	return cells;
}

int top_map_fit(const char *map, int len, int cells, char *out)
{
	return fit(map, len, cells, out, merge);
}

static uint64_t regions_of(uint64_t size)
{
	return (size + ((uint64_t)1 << EMBER_REGION_SHIFT) - 1) >> EMBER_REGION_SHIFT;
}

/* The first region of group g of len, for an allocation of n regions (the shim's partition). */
static uint64_t group_start(uint64_t n, int len, int64_t g)
{
	return (uint64_t)g * n / (uint64_t)len;
}

void top_map_cell_regions(uint64_t size, int len, int cells, uint64_t *least, uint64_t *most)
{
	uint64_t n = regions_of(size);
	*least = *most = 0;
	if (len <= 0)
		return;
	if (cells > len)
		cells = len;
	*least = UINT64_MAX;
	for (int c = 0; c < cells; c++) {
		int64_t g0 = (int64_t)c * len / cells, g1 = (int64_t)(c + 1) * len / cells;
		uint64_t r = group_start(n, len, g1) - group_start(n, len, g0);
		*least = r < *least ? r : *least;
		*most = r > *most ? r : *most;
	}
}

double top_map_resident(uint64_t size, const char *map, bool *partly)
{
	uint64_t n = regions_of(size), resident = 0;
	int len = (int)strlen(map);
	*partly = false;
	for (int g = 0; g < len; g++) {
		uint64_t r = group_start(n, len, g + 1) - group_start(n, len, g);
		if (map[g] == '#')
			resident += 2 * r;
		else if (map[g] == '+') { /* somewhere inside: count it half */
			resident += r;
			*partly = true;
		}
	}
	return n ? (double)resident / (double)(2 * n) : 0;
}

const char top_demand_legend[] = " 0 none, 5+ at or past the promotion threshold, x2 a step";

/* The level of groups [g0, g1): the hottest one's; '?' where the record had none. */
static char hottest(const char *demand, int g0, int g1)
{
	char top = '0';
	for (int g = g0; g < g1; g++) {
		if (demand[g] == '?')
			return '?';
		top = demand[g] > top ? demand[g] : top;
	}
	return top;
}

int top_demand_fit(const char *demand, int len, int cells, char *out)
{
	if (cells < 1)
		cells = 1;
	if ((int)strlen(demand) != len) { /* none in the record: every cell unknown */
		int n = len < cells ? len : cells;
		memset(out, '?', (size_t)n);
		out[n] = 0;
		return n;
	}
	return fit(demand, len, cells, out, hottest);
}

double top_demand_mean(uint64_t size, const char *demand)
{
	uint64_t n = regions_of(size), sum = 0;
	int len = (int)strlen(demand);
	for (int g = 0; g < len; g++)
		if (demand[g] >= '0' && demand[g] <= '9')
			sum += (uint64_t)(demand[g] - '0') * (group_start(n, len, g + 1) - group_start(n, len, g));
	return n && len ? (double)sum / (double)n : 0;
}
