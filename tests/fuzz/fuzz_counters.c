/*
 * libFuzzer: the access-counter reader (shim/signal/counters.c) and the
 * policy behind it. Records arrive as the simulator and the patched driver
 * deliver them, against a region table the input makes up, with
 * allocations freed and made again, regions in every state, and launches
 * whose scanned ranges the counters confirm, withhold or complete.
 *
 * The input is a few allocations, then operations:
 *   'R' 40 bytes        one raw record (struct ember_ac_record)
 *   'r' i off mask n    a well-formed record into allocation i (so that
 *                       the fuzzer reaches crediting without finding the
 *                       magic first), perhaps with one byte then flipped
 *   'U' n bytes...      one tools-queue entry of 32 + n % 48 bytes
 *   'u' i off mask      a well-formed tools-queue entry into allocation i
 *   'S' n bytes...      a stream of n bytes of records, a short tail too
 *   'L' i off len       a launch over allocation i, its range the scan's when off is odd
 *   'P' i r state       region r of allocation i is put in a state
 *   'F' i               allocation i is freed and made anew elsewhere
 *   'T' n               time passes
 * After each, the counts must add up: every record is credited or dropped
 * for one reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "fuzz_common.h"
#include "monitor.h"

enum { ALLOCS = 4 };

/* What the shim's other parts provide, made small. */
static struct ember_accounts accounts;
struct ember_table ember_shim_table;
struct ember_policy_ctx ember_shim_ctx;
static uint64_t scan_demands;

/* The launch scan's own crediting (monitor.c), which counters.c calls when no notifications are read. */
bool ember_monitor_launch_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now)
{
	(void)a, (void)addr, (void)bytes, (void)amount, (void)now;
	scan_demands++;
	return true;
}

/* libFuzzer's one-time setup, before the first input */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_policy_init(&accounts);
	return 0;
}

static void check_counts(const struct ember_ac_reader *rd)
{
	const struct ember_ac_counts *c = &rd->counts;
	if (c->records != c->credited + c->repeats + c->truncated + c->malformed + c->out_of_range + c->foreign)
		abort();
	if (c->regions < c->credited)
		abort();
}

/* A made-up allocation: 64 KiB to 64 MiB, at a 64 KiB boundary, managed or (now and then) plain. */
static struct ember_alloc *make(struct input *in, unsigned i, uint64_t *cursor)
{
	uint64_t size = (take16(in) % 1024 + 1) << 16;
	unsigned b = take(in);
	*cursor += (uint64_t)(b & 63) << 16; /* a gap, perhaps none: two allocations in one 2 MiB region */
	uint64_t base = *cursor;
	*cursor += size;
	(void)i;
	return ember_table_insert(&ember_shim_table, base, size, 0,
				  b >= 240 ? EMBER_ALLOC_PLAIN : EMBER_ALLOC_MANAGED);
}

static void record_into(struct ember_ac_record *r, const struct ember_alloc *a, uint64_t off, uint32_t mask,
			uint32_t count, uint64_t now)
{
	*r = (struct ember_ac_record){ .magic = EMBER_AC_MAGIC, .version = EMBER_AC_VERSION,
				       .size = sizeof *r,
				       .va = a ? ((a->base + off % (a->size + (4ull << 20))) & ~0xffffull) : off << 16,
				       .count = count,
				       .subregion_mask = mask,
				       .timestamp_ns = now };
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	ember_table_reset(&ember_shim_table);
	static struct ember_ac_reader rd;
	memset(&rd, 0, sizeof rd);
	rd.cover_ns = 1 + take(&in) * 10000000ull;
	struct ember_alloc *allocs[ALLOCS] = { 0 };
	uint64_t cursor = 0x7f0000000000ull;
	unsigned nallocs = 1 + take(&in) % ALLOCS;
	for (unsigned i = 0; i < nallocs; i++)
		allocs[i] = make(&in, i, &cursor);
	uint64_t now = 1000000000;
	while (in.left) {
		ember_table_lock(&ember_shim_table);
		switch (take(&in)) {
		case 'R': {
			uint8_t raw[sizeof(struct ember_ac_record)] = { 0 };
			for (size_t k = 0; k < sizeof raw; k++)
				raw[k] = (uint8_t)take(&in);
			ember_ac_feed(&rd, &ember_shim_ctx, raw, sizeof raw, now);
			break;
		}
		case 'r': {
			struct ember_alloc *a = allocs[take(&in) % nallocs];
			uint64_t off = take32(&in);
			uint32_t mask = take32(&in);
			struct ember_ac_record r;
			record_into(&r, a, off, mask, 1 + take(&in), now);
			unsigned flip = take(&in);
			if (flip < sizeof r)
				((uint8_t *)&r)[flip] ^= (uint8_t)take(&in);
			ember_ac_feed(&rd, &ember_shim_ctx, &r, sizeof r, now);
			break;
		}
		case 'U': {
			uint8_t entry[32 + 48];
			size_t n = 32 + take(&in) % 48;
			for (size_t k = 0; k < n; k++)
				entry[k] = (uint8_t)take(&in);
			struct ember_ac_record r;
			enum ember_ac_verdict v = ember_ac_from_uvm(entry, n, &r);
			if (v == EMBER_AC_OK)
				ember_ac_credit(&rd, &ember_shim_ctx, &r, now);
			else
				ember_ac_count_bad(&rd, v);
			break;
		}
		case 'u': {
			struct ember_alloc *a = allocs[take(&in) % nallocs];
			struct ember_ac_record want;
			record_into(&want, a, take32(&in), take32(&in), 300, now);
			uint8_t entry[72] = { EMBER_AC_UVM_EVENT };
			uint16_t gpu = 1;
			memcpy(entry + EMBER_AC_UVM_GPU, &gpu, 2);
			memcpy(entry + EMBER_AC_UVM_COUNT, &want.count, 4);
			memcpy(entry + EMBER_AC_UVM_VA, &want.va, 8);
			memcpy(entry + EMBER_AC_UVM_MASK, &want.subregion_mask, 4);
			memcpy(entry + EMBER_AC_UVM_TIMESTAMP, &now, 8);
			struct ember_ac_record r;
			enum ember_ac_verdict v = ember_ac_from_uvm(entry, sizeof entry, &r);
			if (v == EMBER_AC_OK) {
				if (r.va != want.va || r.count != want.count || r.gpu != 0)
					abort(); /* decoded as encoded */
				ember_ac_credit(&rd, &ember_shim_ctx, &r, now);
			} else {
				ember_ac_count_bad(&rd, v);
			}
			break;
		}
		case 'S': {
			size_t n = take(&in);
			uint8_t *buf = malloc(n ? n : 1); /* exactly n: reading past it is an ASan report */
			if (!buf)
				break;
			for (size_t k = 0; k < n; k++)
				buf[k] = (uint8_t)take(&in);
			ember_ac_feed(&rd, &ember_shim_ctx, buf, n, now);
			free(buf);
			break;
		}
		case 'L': {
			struct ember_alloc *a = allocs[take(&in) % nallocs];
			uint64_t off = take32(&in), len = take32(&in);
			if (!a)
				break;
			/* as ember_counters_launch_demand: the scan's range credited through the reader (or, as ember-sim's scan=0, not),
			 * its edges credited whole or, under EMBER_PIECES, their parts */
			ember_shim_ctx.params.pieces = off & 2;
			ember_ac_launch(&rd, &ember_shim_ctx, a, a->base + off % (a->size + 1), len, EMBER_LAUNCH_DEMAND,
					off & 1, now);
			break;
		}
		case 'P': {
			struct ember_alloc *a = allocs[take(&in) % nallocs];
			unsigned r = take(&in), state = take(&in) % 4;
			if (a && a->nregions)
				a->regions[r % a->nregions].state = (uint8_t)state;
			break;
		}
		case 'F': {
			unsigned i = take(&in) % nallocs;
			ember_table_unlock(&ember_shim_table);
			if (allocs[i]) {
				struct ember_alloc *gone = ember_table_remove(&ember_shim_table, allocs[i]->base);
				if (gone)
					ember_alloc_put(&ember_shim_table, gone);
			}
			allocs[i] = make(&in, i, &cursor);
			ember_table_lock(&ember_shim_table);
			break;
		}
		case 'T':
			now += take(&in) * 5000000ull;
			break;
		default:
			break;
		}
		check_counts(&rd);
		ember_table_unlock(&ember_shim_table);
	}
	return 0;
}
