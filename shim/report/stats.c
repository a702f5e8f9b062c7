/* Statistics at exit. */
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "outfile.h"
#include "peer.h"
#include "read_dup.h"
#include "state.h"
#include "tracer.h"
#include "census.h"
#include "gpus.h"
#include "grow.h"
#include "kept.h"
#include "launch_scan.h"
#include "shim.h"
#include "live.h"
#include "settled.h"
#include "stats.h"
#include "uvm_events.h"

/* Freed allocations' figures, kept only when a report was asked for. */
struct retired {
	uint64_t id, size;
	int device, kind;
	struct ember_alloc_stats stats;
};
static struct retired *retired;
static size_t nretired, capretired;

static const char *kind_name(int kind)
{
	return kind == EMBER_ALLOC_CONVERTED ? "converted" : "managed";
}

void ember_stats_retire(const struct ember_alloc *a)
{
	if (!ember_cfg.stats_path || !*ember_cfg.stats_path || a->kind == EMBER_ALLOC_PLAIN)
		return;
	ember_table_lock(EMBER_TABLE);
	if (ember_grow(&retired, nretired, &capretired, sizeof *retired, 64))
		retired[nretired++] = (struct retired){ a->id, a->size, a->device, a->kind, a->stats };
	ember_table_unlock(EMBER_TABLE);
}

static void write_alloc_stats(FILE *f, const struct ember_alloc_stats *s)
{
	fprintf(f,
		"\"promotions\": %" PRIu64 ", \"demotions\": %" PRIu64 ", \"bytes_promoted\": %" PRIu64
		", \"bytes_demoted\": %" PRIu64 ", \"bytes_displaced\": %" PRIu64 ", \"refreshes\": %" PRIu64
		", \"bytes_refreshed\": %" PRIu64 ", \"bytes_populated\": %" PRIu64 ", \"migrate_seconds\": %.6f",
		s->promotions, s->demotions, s->bytes_promoted, s->bytes_demoted, s->bytes_displaced, s->refreshes,
		s->bytes_refreshed, s->bytes_populated, s->migrate_ns / 1e9);
}

/* s as a JSON string: quotes and backslashes escaped, control and non-ASCII bytes as \u00NN. */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c > 0x7e)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

/*
 * Every EMBER_* variable set for this process, by the environment or a
 * configuration file, with its value: which variant a record measured,
 * written with the figures it explains. Read at exit, as the environment
 * is then.
 */
static void write_settings(FILE *f)
{
	const char *sep = "";
	fputc('{', f);
	for (size_t i = 0; i < ember_var_count; i++) {
		const struct ember_var_doc *d = &ember_var_docs[i];
		for (unsigned g = 0; g < ember_var_names(d); g++) {
			char var[80];
			ember_var_name(d, g, var, sizeof var);
			const char *v = ember_config_value(var);
			if (!v)
				continue;
			fprintf(f, "%s\"%s\": ", sep, var);
			json_string(f, v);
			sep = ", ";
		}
	}
	fputc('}', f);
}

void ember_stats_write(FILE *f)
{
	/* the event queue's lock comes before the table's (locks.h): its counts first */
	struct ember_uvm_counts u;
	bool have_uvm = ember_uvm_events_counts(&u);
	uint64_t kept_reuses = ember_kept_reuses(), kept_bytes = ember_kept_bytes(),
		 kept_trimmed = ember_kept_trimmed_bytes();
	ember_table_lock(EMBER_TABLE);
	fprintf(f,
		"{\n  \"ember\": \"%s\",\n  \"mode\": \"%s\",\n  \"manage_all\": %s,\n  \"populate_host\": %s,"
		"\n  \"launches_settled\": %" PRIu64 ",\n  \"launches_past_scan\": %" PRIu64 ","
		"\n  \"launches_tensor_lists\": %" PRIu64 ",\n  \"launches_cat_inputs\": %" PRIu64 ",",
		EMBER_VERSION_STRING, ember_mode_name(ember_cfg.mode), ember_cfg.manage_all ? "true" : "false",
		ember_cfg.populate_host ? "true" : "false", ember_settled_launches(), ember_scan_overflows(),
		ember_scan_tensor_lists(), ember_scan_cat_inputs());
	fprintf(f, "\n  \"settings\": ");
	write_settings(f);
	if (ember_cfg.read_mostly) {
		struct ember_read_dup_counts rd;
		ember_read_dup_counts(&rd);
		fprintf(f,
			",\n  \"read_mostly\": {\"bytes_advised\": %" PRIu64 ", \"bytes_withdrawn\": %" PRIu64
			", \"allocations_written\": %" PRIu64 "}",
			rd.bytes_advised, rd.bytes_withdrawn, rd.written);
	}
	if (ember_keeping())
		fprintf(f,
			",\n  \"kept_freed\": {\"reuses\": %" PRIu64 ", \"bytes_kept\": %" PRIu64
			", \"bytes_trimmed\": %" PRIu64 "}",
			kept_reuses, kept_bytes, kept_trimmed);
	fprintf(f, ",\n  \"devices\": [");
	const char *sep = "\n";
	for (int d = 0; d < EMBER_MAX_DEVICES; d++) {
		const struct ember_device_account *acc = ember_table_account(EMBER_TABLE, d);
		if (!acc->budget)
			continue;
		const char *bus = "", *uuid = "";
		ember_gpu_identity(d, &bus, &uuid);
		fprintf(f,
			"%s    {\"device\": %d, \"pci_bus_id\": \"%s\", \"uuid\": \"%s\", \"budget_bytes\": %" PRIu64
			", \"high_bytes\": %" PRIu64
			", \"low_bytes\": %" PRIu64 ", \"resident_bytes\": %" PRIu64 ", \"other_bytes\": %" PRIu64
			", \"peak_bytes\": %" PRIu64 ", \"promotions\": %" PRIu64 ", \"demotions\": %" PRIu64
			", \"bytes_promoted\": %" PRIu64 ", \"bytes_demoted\": %" PRIu64
			", \"refreshes\": %" PRIu64 ", \"bytes_refreshed\": %" PRIu64 ", \"bytes_populated\": %" PRIu64
			", \"bytes_wanted\": %" PRIu64 ", \"bytes_margin\": %" PRIu64 ", \"bytes_phase_exchanged\": %" PRIu64
			", \"bytes_vmm_on_host\": %" PRIu64 ", \"migrate_seconds\": %.6f",
			sep, d, bus, uuid, acc->budget, acc->high, acc->low, acc->resident, acc->other, acc->peak,
			acc->promotions, acc->demotions, acc->bytes_promoted, acc->bytes_demoted, acc->refreshes,
			acc->bytes_refreshed, acc->bytes_populated, acc->bytes_wanted, acc->bytes_margin,
			acc->bytes_phase_exchanged, acc->bytes_vmm_on_host, acc->migrate_ns / 1e9);
		struct ember_peer_stats ps;
		if (ember_gpus_peer_stats(d, &ps)) /* the peer tier (gpus.h): only where it did something */
			fprintf(f,
				", \"peer_bytes_held\": %" PRIu64 ", \"peer_bytes_placed\": %" PRIu64
				", \"peer_bytes_pushed_out\": %" PRIu64 ", \"bytes_placed_on_peers\": %" PRIu64,
				ps.held, ps.placed, ps.pushed_out, ps.borrowed);
		fputc('}', f);
		sep = ",\n";
	}
	fprintf(f, "\n  ],\n  \"entry_points\": ");
	ember_census_write_json(f);
	fprintf(f, ",\n");
	if (have_uvm)
		fprintf(f,
			"  \"uvm_events\": {\"migrations_requested\": %" PRIu64 ", \"migrations_by_driver\": %" PRIu64
			", \"bytes_requested\": %" PRIu64 ", \"bytes_by_driver\": %" PRIu64 ", \"driver_evictions\": %" PRIu64
			", \"gpu_faults\": %" PRIu64 ", \"remote_maps\": %" PRIu64 ", \"access_counters\": %" PRIu64
			", \"malformed\": %" PRIu64 ", \"dropped\": %" PRIu64 "},\n",
			u.migrations_requested, u.migrations_by_driver, u.bytes_requested, u.bytes_by_driver, u.evictions,
			u.gpu_faults, u.remote_maps, u.access_counters, u.malformed, u.dropped);
	fprintf(f, "  \"allocations\": [");
	sep = "\n";
	for (unsigned i = 0; i < ember_table_count(EMBER_TABLE); i++) {
		const struct ember_alloc *a = ember_table_at(EMBER_TABLE, i);
		if (a->kind == EMBER_ALLOC_PLAIN)
			continue;
		uint64_t resident = 0;
		for (uint32_t r = 0; r < a->nregions; r++)
			if (a->regions[r].state == EMBER_REGION_RESIDENT)
				resident += ember_region_bytes(a, r);
		fprintf(f,
			"%s    {\"id\": %" PRIu64 ", \"size\": %" PRIu64 ", \"device\": %d, \"kind\": \"%s\", "
			"\"freed\": false, \"resident_bytes\": %" PRIu64 ", \"mapped_bytes\": %" PRIu64 ", ",
			sep, a->id, a->size, a->device, kind_name(a->kind), resident, a->size - resident);
		write_alloc_stats(f, &a->stats);
		fputc('}', f);
		sep = ",\n";
	}
	for (size_t i = 0; i < nretired; i++) {
		const struct retired *a = &retired[i];
		fprintf(f,
			"%s    {\"id\": %" PRIu64 ", \"size\": %" PRIu64 ", \"device\": %d, \"kind\": \"%s\", "
			"\"freed\": true, ",
			sep, a->id, a->size, a->device, kind_name(a->kind));
		write_alloc_stats(f, &a->stats);
		fputc('}', f);
		sep = ",\n";
	}
	fprintf(f, "\n  ]\n}\n");
	ember_table_unlock(EMBER_TABLE);
}

void ember_stats_at_exit(void)
{
	/*
	 * A process that never called the driver (a shell, or `timeout`, that
	 * ran the CUDA program as its child) has nothing to report, and must
	 * not overwrite its child's report.
	 */
	if (!ember_active || !ember_driver_used())
		return;
	ember_live_remove();
	ember_trace_end();
	ember_census_log();
	ember_uvm_events_finish();
	struct ember_uvm_counts u;
	if (ember_uvm_events_counts(&u))
		ember_info("UVM events: %" PRIu64 " migrations requested, %" PRIu64 " by the driver, %" PRIu64
			   " driver evictions, %" PRIu64 " GPU faults, %" PRIu64 " malformed records",
			   u.migrations_requested, u.migrations_by_driver, u.evictions, u.gpu_faults, u.malformed);
	if (ember_kept_reuses())
		ember_info("%" PRIu64 " stream-ordered allocations were given memory the program had freed, kept "
			   "(EMBER_KEEP_FREED); %.2f GiB kept at exit",
			   ember_kept_reuses(), ember_kept_bytes() / 1073741824.0);
	if (ember_settled_launches())
		ember_info("%" PRIu64 " launches found nothing left to decide, and skipped their scan", ember_settled_launches());
	if (ember_scan_overflows())
		ember_info("%" PRIu64 " launches pointed into more than %d allocations; the rest went uncredited",
			   ember_scan_overflows(), EMBER_SCAN_MAX_REFS);
	if (ember_scan_tensor_lists())
		ember_info("%" PRIu64 " launches passed PyTorch's tensor lists, read by the chunks their blocks name",
			   ember_scan_tensor_lists());
	if (ember_scan_cat_inputs())
		ember_info("%" PRIu64 " launches of torch.cat read by the inputs their rows copy", ember_scan_cat_inputs());
	struct ember_read_dup_counts rd;
	ember_read_dup_counts(&rd);
	if (rd.bytes_advised)
		ember_info("read-mostly advice (EMBER_READ_MOSTLY) on %.2f GiB of resident ranges that kernels only read, "
			   "withdrawn from %.2f GiB; %" PRIu64 " allocations written after it",
			   rd.bytes_advised / 1073741824.0, rd.bytes_withdrawn / 1073741824.0, rd.written);
	for (int d = 0; d < EMBER_MAX_DEVICES; d++) {
		const struct ember_device_account *acc = ember_table_account(EMBER_TABLE, d);
		if (!acc->budget)
			continue;
		ember_info("GPU %d at exit: peak %.2f GiB of a %.2f GiB budget; %" PRIu64 " promotions (%.2f GiB), %" PRIu64
			   " demotions (%.2f GiB), %.3f s migrating",
			   d, acc->peak / 1073741824.0, acc->budget / 1073741824.0, acc->promotions,
			   acc->bytes_promoted / 1073741824.0, acc->demotions, acc->bytes_demoted / 1073741824.0,
			   acc->migrate_ns / 1e9);
		if (acc->refreshes)
			ember_info("GPU %d at exit: %" PRIu64 " refreshes after host phases (%.2f GiB of resident ranges "
				   "prefetched again)",
				   d, acc->refreshes, acc->bytes_refreshed / 1073741824.0);
		if (acc->bytes_phase_exchanged)
			ember_info("GPU %d at exit: %.2f GiB promoted by exchanges at host phases, for regions read less "
				   "since the phase before (EMBER_PHASE_EXCHANGE)",
				   d, acc->bytes_phase_exchanged / 1073741824.0);
		if (acc->bytes_populated)
			ember_info("GPU %d at exit: %.2f GiB of converted memory past the budget made in host memory by "
				   "the host's touches (EMBER_POPULATE_HOST)",
				   d, acc->bytes_populated / 1073741824.0);
		if (acc->bytes_vmm_on_host)
			ember_info("GPU %d at exit: %.2f GiB of cuMemCreate memory past the budget made in host memory "
				   "(EMBER_MANAGE_ALL)",
				   d, acc->bytes_vmm_on_host / 1073741824.0);
		if (acc->bytes_wanted)
			ember_info("GPU %d at exit: %.1f MiB of small tables read densely were promoted by the worker, "
				   "no room having been found at their launch",
				   d, acc->bytes_wanted / 1048576.0);
		if (acc->bytes_margin)
			ember_info("GPU %d at exit: %.1f MiB of small tables read densely went past the high watermark, "
				   "up to the budget, no resident being able to give way at their launch",
				   d, acc->bytes_margin / 1048576.0);
		struct ember_peer_stats ps;
		if (ember_gpus_peer_stats(d, &ps))
			ember_info("GPU %d at exit, the peer tier: %.2f GiB of its allocations placed on peers; it held "
				   "%.2f GiB for other GPUs (%.2f GiB now), %.2f GiB of it pushed out by its own demand",
				   d, ps.borrowed / 1073741824.0, ps.placed / 1073741824.0, ps.held / 1073741824.0,
				   ps.pushed_out / 1073741824.0);
	}
	if (!ember_cfg.stats_path || !*ember_cfg.stats_path)
		return;
	char path[4096];
	int fd = ember_outfile_path(ember_cfg.stats_path, path, sizeof path) ? ember_outfile_create(path) : -1;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		ember_warn("cannot write EMBER_STATS file %s", ember_cfg.stats_path);
		return;
	}
	ember_stats_write(f);
	bool failed = fflush(f) != 0 || ferror(f);
	if (fclose(f) != 0 || failed)
		ember_warn("writing EMBER_STATS file %s failed: the report is incomplete", path);
}
