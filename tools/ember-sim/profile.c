/* The calibration profile: built-in H200 figures, a key = value file format,
 * and printing in that same format so a printed profile loads back. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct key {
	const char *name;
	size_t off;
	const char *unit;
	const char *what;
};

#define K(f, u, w) { #f, offsetof(struct sim_profile, f), u, w }
static const struct key keys[] = {
	K(device_read_gbps, "GB/s", "streaming read of device memory"),
	K(mapped_read_gbps, "GB/s", "streaming read of mapped host memory"),
	K(mapped_sparse_reads_per_s, "reads/s", "random 4 B reads of mapped memory"),
	K(resident_sparse_reads_per_s, "reads/s", "random 4 B reads of device memory"),
	K(mapped_sparse_block_us, "us", "latency per 2 MiB block a sparse launch touches, mapped"),
	K(mapped_piece_gbps, "GB/s", "128-byte pieces scattered over mapped memory"),
	K(resident_piece_gbps, "GB/s", "128-byte pieces scattered over device memory"),
	K(resident_sparse_block_us, "us", "latency per 2 MiB block a sparse launch touches, resident"),
	K(promote_gbps, "GB/s", "prefetch to GPU, bulk"),
	K(promote_call_us, "us", "fixed cost of one prefetch-to-GPU call"),
	K(demote_gbps, "GB/s", "prefetch to host and eviction write-back"),
	K(demote_call_us, "us", "fixed cost of one prefetch-to-host call"),
	K(advise_ms_per_gib, "ms/GiB", "advice pair (preferred CPU + accessed-by), per GiB"),
	K(advise_call_us, "us", "advice pair, fixed cost per call"),
	K(fault_batch_us, "us", "servicing one batch of GPU faults"),
	K(fault_batch_pages, "faults", "fault events (4 KiB pages) per batch"),
	K(fault_migrate_gbps, "GB/s", "migration on the fault path"),
	K(first_touch_gbps, "GB/s", "GPU first touch of never-touched pages, CPU preferred"),
	K(launch_us, "us", "kernel launch floor"),
	K(mapped_small_launch_us, "us", "once per launch that touches a small mapped range (latency-bound small kernels)"),
	K(mapped_small_mib, "MiB", "ranges below this size count as small for mapped_small_launch_us"),
	K(vram_gib, "GiB", "the card's memory (informational: --budget is the modelled VRAM)"),
	K(peer_read_gbps, "GB/s", "streaming read of a peer GPU's memory over the peer link (assumed: NVLink 4, one way)"),
};
#define NKEYS (sizeof keys / sizeof keys[0])

void sim_profile_default(struct sim_profile *p)
{
	/* H200, PCIe Gen5 x16 (shared/DESIGN.md). Fixed call costs are fitted so
	 * that the measured per-call-size rates come out: 2 MiB prefetches at
	 * 16 GB/s and 64 MiB ones at ~46 GB/s; an advice pair on 2 MiB at 0.17 ms;
	 * a streaming first touch (2 batches of 256 faults per 2 MiB) at 10.2 GB/s. */
	*p = (struct sim_profile){
		.device_read_gbps = 4300,
		.mapped_read_gbps = 51,
		.mapped_sparse_reads_per_s = 0.40e9,
		.resident_sparse_reads_per_s = 38e9,
		/* The wavefront figure (1 KiB in each of 8192 regions: >30 ms mapped,
		 * 0.35 ms resident) less its 4 B-read share. */
		.mapped_sparse_block_us = 3.2,
		/* 128-byte pieces over 4 GiB, measured on the H200 by the suite's
		 * sparse probe (tools/bench/results/suite/sparse-probe.json) */
		.mapped_piece_gbps = 44.42,
		.resident_piece_gbps = 297.6,
		.resident_sparse_block_us = 0.035,
		.promote_gbps = 48.7,
		.promote_call_us = 88,
		.demote_gbps = 10,
		.demote_call_us = 30,
		.advise_ms_per_gib = 127.0 / 4,
		.advise_call_us = 108,
		.fault_batch_us = 20,
		.fault_batch_pages = 256,
		.fault_migrate_gbps = 12.7,
		.first_touch_gbps = 4.2,
		.launch_us = 5,
		/*
		 * Fitted on the H200 to torch-decode under Ember-mapped (24 GiB, 8
		 * tokens: 16.87 s measured against 5.69 s of bandwidth, over 12,295
		 * launches that each touch small mapped activations), and checked
		 * on transformers generate() (tools/bench/results/sim-validation.jsonl).
		 */
		.mapped_small_launch_us = 900,
		.mapped_small_mib = 4,
		.vram_gib = 139,
		/* the peer tier's link (issue 13): assumed, as sim/cost.h SIM_PEER_BPS; never measured (no x2 machine) */
		.peer_read_gbps = 300,
	};
}

static const struct key *find(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

int sim_profile_set(struct sim_profile *p, const char *key, const char *val, char *err, size_t errlen)
{
	const struct key *k = find(key);
	if (!k) {
		snprintf(err, errlen, "unknown profile key '%s' (ember-sim --print-profile lists the keys)", key);
		return -1;
	}
	char *end;
	errno = 0;
	double d = strtod(val, &end);
	while (*end && isspace((unsigned char)*end))
		end++;
	/* Every cost is a rate or a duration: zero or negative would divide by
	 * zero or run time backwards. */
	if (end == val || *end || errno || !isfinite(d) || d <= 0) {
		snprintf(err, errlen, "profile key %s: bad value '%s' (expected a positive number, in %s)", key, val, k->unit);
		return -1;
	}
	*(double *)((char *)p + k->off) = d;
	return 0;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int sim_profile_load(struct sim_profile *p, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot open profile %s: %s", path, strerror(errno));
		return -1;
	}
	char line[512];
	unsigned lineno = 0;
	int rc = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *s = trim(line);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%u: expected 'key = value', got '%s'", path, lineno, s);
			rc = -1;
			break;
		}
		*eq = 0;
		char sub[400];
		if (sim_profile_set(p, trim(s), trim(eq + 1), sub, sizeof sub)) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, sub);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

void sim_profile_print(const struct sim_profile *p, FILE *out)
{
	fprintf(out, "# ember-sim calibration profile: key = value, '#' starts a comment\n");
	for (size_t i = 0; i < NKEYS; i++)
		fprintf(out, "%-28s = %-12.6g # %s: %s\n", keys[i].name,
			*(const double *)((const char *)p + keys[i].off), keys[i].unit, keys[i].what);
}
