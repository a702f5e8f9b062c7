/* The debug log's note of why victims gave way (pass_note.h). */
#include <inttypes.h>
#include <stdio.h>

#include "pass_note.h"

/* Its last reference as the victim order took it (ember_region_last_named). */
static struct ember_region_note region_note(const struct ember_alloc *a, uint32_t r)
{
	const struct ember_region *reg = &a->regions[r];
	return (struct ember_region_note){ .alloc_id = a->id, .r = r, .demand = reg->demand,
					   .touch_demand = reg->touch_demand, .episode_demand = reg->episode_demand, .gap = reg->gap,
					   .last_ref = ember_region_last_named(a, reg) };
}

void ember_pass_note_victim(struct ember_pass_note *n, enum ember_victim_reason why, const struct ember_alloc *a,
			    uint32_t r, const struct ember_alloc *hot, uint32_t hot_r)
{
	if (why >= EMBER_VICTIM_REASONS || r >= a->nregions)
		return;
	if (n->count[why]++)
		return;
	n->victim[why] = region_note(a, r);
	n->has_hot[why] = hot && hot_r < hot->nregions;
	if (n->has_hot[why])
		n->hot[why] = region_note(hot, hot_r);
}

bool ember_pass_note_any(const struct ember_pass_note *n)
{
	for (int i = 0; i < EMBER_VICTIM_REASONS; i++)
		if (n->count[i])
			return true;
	return false;
}

bool ember_pass_note_take(struct ember_pass_note *from, struct ember_pass_note *to)
{
	*to = *from;
	*from = (struct ember_pass_note){ 0 };
	return ember_pass_note_any(to);
}

static const char *const reason_names[EMBER_VICTIM_REASONS] = {
	[EMBER_VICTIM_WATERMARK] = "over the watermark", [EMBER_VICTIM_DEPARTED] = "departed",
	[EMBER_VICTIM_OLDER] = "older",			  [EMBER_VICTIM_WANTED] = "for a wanted table",
	[EMBER_VICTIM_EXCHANGE] = "exchanged",		  [EMBER_VICTIM_LAUNCH] = "departed at a launch",
	[EMBER_VICTIM_EPISODE] = "exchanged at a host phase",
};

/* "allocation 4 region 93 (demand 3840, a touch 3840, an episode 7680, gap 40 ms, 5 ms ago)" */
static int describe(char *buf, size_t len, const struct ember_region_note *r, uint64_t now)
{
	char gap[32] = "none", ago[32] = "never";
	if (r->gap != UINT64_MAX)
		snprintf(gap, sizeof gap, "%.1f ms", (double)r->gap / 1e6);
	if (r->last_ref)
		snprintf(ago, sizeof ago, "%.1f ms ago", now >= r->last_ref ? (double)(now - r->last_ref) / 1e6 : 0.0);
	return snprintf(buf, len, "allocation %" PRIu64 " region %u (demand %u, a touch %u, an episode %u, gap %s, %s)",
			r->alloc_id, r->r, r->demand, r->touch_demand, r->episode_demand, gap, ago);
}

const char *ember_pass_note_format(const struct ember_pass_note *n, uint64_t now, char *buf, size_t len)
{
	size_t at = 0;
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < EMBER_VICTIM_REASONS && at < len; i++) {
		if (!n->count[i])
			continue;
		int w = snprintf(buf + at, len - at, "%s%" PRIu64 " %s, the first ", at ? "; " : "", n->count[i],
				 reason_names[i]);
		at += w > 0 ? (size_t)w : 0;
		if (at < len)
			at += (size_t)describe(buf + at, len - at, &n->victim[i], now);
		if (n->has_hot[i] && at < len) {
			w = snprintf(buf + at, len - at, " for ");
			at += w > 0 ? (size_t)w : 0;
			if (at < len)
				at += (size_t)describe(buf + at, len - at, &n->hot[i], now);
		}
	}
	return buf;
}
