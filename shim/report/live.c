/* The live file that ember-top draws. */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "state.h"
#include "live.h"
#include "worker.h"
#include "shim.h"

void ember_live_map(const struct ember_alloc *a, char *out)
{
	uint32_t groups = a->nregions < EMBER_LIVE_MAP_MAX ? a->nregions : EMBER_LIVE_MAP_MAX;
	for (uint32_t g = 0; g < groups; g++) {
		uint32_t r0 = (uint32_t)((uint64_t)g * a->nregions / groups);
		uint32_t r1 = (uint32_t)((uint64_t)(g + 1) * a->nregions / groups);
		uint32_t resident = 0, promoting = 0, demoting = 0, hinted = 0;
		for (uint32_t r = r0; r < r1; r++) {
			resident += a->regions[r].state == EMBER_REGION_RESIDENT;
			promoting += a->regions[r].state == EMBER_REGION_PROMOTING;
			demoting += a->regions[r].state == EMBER_REGION_DEMOTING;
			hinted += a->regions[r].hinted;
		}
		uint32_t n = r1 - r0;
		out[g] = promoting ? '>' : demoting ? '<' : hinted == n ? 'h' : resident == n ? '#' : resident ? '+' : '.';
	}
	out[groups] = 0;
}

/* The live file's path, or the template of its replacement: mkstemp makes that name unpredictable. */
static void live_path(char *out, size_t len, bool temporary)
{
	snprintf(out, len, "/dev/shm/ember-%d.live%s", (int)getpid(), temporary ? ".XXXXXX" : "");
}

void ember_live_publish(void)
{
	if (!ember_cfg.live)
		return;
	char path[64], tmp[64];
	live_path(path, sizeof path, false);
	live_path(tmp, sizeof tmp, true);
	/* a new file of our own (O_EXCL, 0600) under a name no one can plant a link at in advance */
	int fd = mkstemp(tmp);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return;
	}
	fprintf(f, "ember-live 1\npid %d\nmode %s\n", (int)getpid(), ember_mode_name(ember_cfg.mode));
	ember_table_lock(EMBER_TABLE);
	for (int d = 0; d < EMBER_MAX_DEVICES; d++) {
		const struct ember_device_account *acc = ember_table_account(EMBER_TABLE, d);
		if (acc->budget)
			fprintf(f,
				"device %d budget %" PRIu64 " high %" PRIu64 " low %" PRIu64 " resident %" PRIu64
				" other %" PRIu64 " peak %" PRIu64 " promotions %" PRIu64 " demotions %" PRIu64 "\n",
				d, acc->budget, acc->high, acc->low, acc->resident, acc->other, acc->peak, acc->promotions,
				acc->demotions);
	}
	char map[EMBER_LIVE_MAP_MAX + 1];
	for (unsigned i = 0; i < ember_table_count(EMBER_TABLE); i++) {
		const struct ember_alloc *a = ember_table_at(EMBER_TABLE, i);
		if (a->kind == EMBER_ALLOC_PLAIN || !a->nregions)
			continue;
		ember_live_map(a, map);
		fprintf(f, "alloc %" PRIu64 " %#" PRIx64 " %" PRIu64 " %s %s\n", a->id, a->base, a->size,
			a->kind == EMBER_ALLOC_CONVERTED ? "converted" : "managed", map);
	}
	ember_table_unlock(EMBER_TABLE);
	bool failed = fflush(f) != 0 || ferror(f);
	if (fclose(f) == 0 && !failed && rename(tmp, path) == 0)
		return;
	unlink(tmp);
	static bool said;
	if (ember_first_time(&said))
		ember_warn("EMBER_LIVE: cannot write %s; ember-top will not see this process", path);
}

void ember_live_remove(void)
{
	if (!ember_cfg.live)
		return;
	char path[64];
	live_path(path, sizeof path, false);
	unlink(path);
}

static bool live_on(void)
{
	return ember_cfg.live;
}

static void publish_periodically(bool changed)
{
	ember_live_publish();
}

/* Static and mapped modes change only on launches: a slow refresh, and one after every change. */
static const struct ember_periodic view = {
	.active = live_on,
	.run = publish_periodically,
	.period_ns = 100 * 1000 * 1000ull,
};

void ember_live_subscribe(void)
{
	ember_worker_subscribe(&view);
}
