/* The live file that ember-top draws. */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "state.h"
#include "live.h"
#include "ops_driver.h"
#include "worker.h"
#include "shim.h"

void ember_live_map(const struct ember_alloc *a, char *out)
{
	ember_live_maps(a, 0, 0, out, NULL);
}

/* A region's demand as the policy would read it at epoch: decayed, halving once an interval. */
static uint32_t decayed(uint32_t demand, uint32_t since, uint32_t epoch)
{
	uint32_t halvings = epoch > since ? epoch - since : 0;
	return halvings >= 32 ? 0 : demand >> halvings;
}

/* '0' none; else '5' + log2(demand / threshold), held to '1'..'9': '5' and up are at or past it. */
static char demand_level(uint64_t demand, uint32_t threshold)
{
	if (!demand)
		return '0';
	int level = 5;
	uint64_t t = threshold ? threshold : EMBER_LAUNCH_DEMAND;
	for (uint64_t at = t; level < 9 && demand >= at * 2; at *= 2)
		level++;
	for (uint64_t at = t; level > 1 && demand < at; at /= 2)
		level--;
	return (char)('0' + level);
}

void ember_live_maps(const struct ember_alloc *a, uint64_t interval_ns, uint64_t now, char *map, char *demand)
{
	uint32_t groups = a->nregions < EMBER_LIVE_MAP_MAX ? a->nregions : EMBER_LIVE_MAP_MAX;
	uint32_t epoch = interval_ns ? (uint32_t)(now / interval_ns) : 0;
	/* repeats the policy has counted but not yet credited (policy.c: ember_policy_settle), read, not settled */
	const struct ember_repeat *rep = &a->repeat;
	uint64_t pending = rep->count > 1 ? (uint64_t)rep->share.amount * (rep->count - 1) : 0;
	uint32_t pending_epoch = interval_ns ? (uint32_t)(rep->last / interval_ns) : 0;
	uint32_t threshold = ember_shim_ctx.params.threshold;
	for (uint32_t g = 0; g < groups; g++) {
		uint32_t r0 = (uint32_t)((uint64_t)g * a->nregions / groups);
		uint32_t r1 = (uint32_t)((uint64_t)(g + 1) * a->nregions / groups);
		uint32_t resident = 0, promoting = 0, demoting = 0, hinted = 0;
		uint64_t hottest = 0;
		for (uint32_t r = r0; r < r1; r++) {
			const struct ember_region *reg = &a->regions[r];
			resident += reg->state == EMBER_REGION_RESIDENT;
			promoting += reg->state == EMBER_REGION_PROMOTING;
			demoting += reg->state == EMBER_REGION_DEMOTING;
			hinted += reg->hinted;
			if (demand) {
				uint64_t d = decayed(reg->demand, reg->demand_epoch, epoch);
				uint32_t since = epoch > pending_epoch ? epoch - pending_epoch : 0;
				if (pending && r >= rep->r0 && r < rep->r1 && since < 64)
					d += pending >> since;
				hottest = d > hottest ? d : hottest;
			}
		}
		uint32_t n = r1 - r0;
		map[g] = promoting ? '>' : demoting ? '<' : hinted == n ? 'h' : resident == n ? '#' : resident ? '+' : '.';
		if (demand)
			demand[g] = demand_level(hottest, threshold);
	}
	map[groups] = 0;
	if (demand)
		demand[groups] = 0;
}

/* Bytes of a's regions that are mapped (not resident, nor in flight), from its count of the others. */
static uint64_t mapped_bytes(const struct ember_alloc *a)
{
	if (!a->nregions || a->charged >= a->nregions)
		return 0;
	uint64_t charged = (uint64_t)a->charged * EMBER_REGION_BYTES;
	/* the last region may be short: when it is one of the charged ones, they hold that much less */
	uint64_t last = ember_region_bytes(a, a->nregions - 1);
	if (a->regions[a->nregions - 1].state != EMBER_REGION_MAPPED && a->charged)
		charged -= EMBER_REGION_BYTES - last;
	return a->size > charged ? a->size - charged : 0;
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
	/* each GPU's mapped bytes: one step an allocation, from its count of charged regions */
	uint64_t mapped[EMBER_MAX_DEVICES] = { 0 };
	for (unsigned i = 0; i < ember_table_count(EMBER_TABLE); i++) {
		const struct ember_alloc *a = ember_table_at(EMBER_TABLE, i);
		if (a->kind != EMBER_ALLOC_PLAIN && a->device >= 0 && a->device < EMBER_MAX_DEVICES)
			mapped[a->device] += mapped_bytes(a);
	}
	for (int d = 0; d < EMBER_MAX_DEVICES; d++) {
		const struct ember_device_account *acc = ember_table_account(EMBER_TABLE, d);
		if (acc->budget)
			fprintf(f,
				"device %d budget %" PRIu64 " high %" PRIu64 " low %" PRIu64 " resident %" PRIu64
				" other %" PRIu64 " peak %" PRIu64 " promotions %" PRIu64 " demotions %" PRIu64
				" mapped %" PRIu64 "\n",
				d, acc->budget, acc->high, acc->low, acc->resident, acc->other, acc->peak, acc->promotions,
				acc->demotions, mapped[d]);
	}
	char map[EMBER_LIVE_MAP_MAX + 1], demand[EMBER_LIVE_MAP_MAX + 1];
	uint64_t interval = ember_shim_ctx.params.interval_ns, now = ember_driver_now();
	for (unsigned i = 0; i < ember_table_count(EMBER_TABLE); i++) {
		const struct ember_alloc *a = ember_table_at(EMBER_TABLE, i);
		if (a->kind == EMBER_ALLOC_PLAIN || !a->nregions)
			continue;
		ember_live_maps(a, interval, now, map, demand);
		fprintf(f, "alloc %" PRIu64 " %#" PRIx64 " %" PRIu64 " %s %s\ndemand %" PRIu64 " %s\n", a->id, a->base,
			a->size, a->kind == EMBER_ALLOC_CONVERTED ? "converted" : "managed", map, a->id, demand);
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
