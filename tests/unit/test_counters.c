/*
 * The access-counter reader (shim/signal/counters.c) against synthetic
 * records, with the policy's own table behind it and no driver: records as
 * the simulator writes them and entries as the patched driver writes them
 * into the tools event queue; well-formed, malformed, truncated, out of
 * range and foreign; and the regions the launch scan credited lately left
 * to it, the rest credited.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "counters.h"
#include "ember/uvm_events.h"
#include "monitor.h"
#include "policy.h"
#include "state.h"

#define MS 1000000ull
#define MiB (1ull << 20)
#define REGION EMBER_REGION_BYTES
#define PIECE (64 * 1024ull)
#define BASE 0x7f0000000000ull

/* What the shim provides around the reader, made small. */
static struct ember_accounts accounts;
struct ember_table ember_shim_table;
struct ember_policy_ctx ember_shim_ctx;
#define ctx ember_shim_ctx
static unsigned scan_calls; /* launches the launch scan itself credited */

bool ember_monitor_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now)
{
	(void)a, (void)addr, (void)bytes, (void)amount, (void)now;
	scan_calls++;
	return true;
}

static uint64_t now;
#define rd ember_shim_counters

static void setup(void)
{
	ember_table_init(&ember_shim_table, &accounts);
	ember_table_reset(&ember_shim_table);
	ctx = (struct ember_policy_ctx){
		.params = { .span_regions = 4, .threshold = 256, .interval_ns = 25 * MS, .batch_regions = 16,
			    .heat_ratio = 2.0, .stale_intervals = 5 },
		.table = &ember_shim_table,
		.accounts = &accounts,
		.adaptive = true,
	};
	memset(&rd, 0, sizeof rd);
	rd.reading = true; /* as ember_counters_start sets it when the driver delivers notifications */
	scan_calls = 0;
	now = 1000 * MS;
}

TestSuite(counters, .init = setup);

static struct ember_alloc *alloc_at(uint64_t base, uint64_t size, enum ember_alloc_kind kind)
{
	struct ember_alloc *a = ember_table_insert(&ember_shim_table, base, size, 0, kind);
	cr_assert_not_null(a);
	return a;
}

static struct ember_ac_record record(uint64_t va, uint32_t mask)
{
	return (struct ember_ac_record){ .magic = EMBER_AC_MAGIC, .version = EMBER_AC_VERSION,
					 .size = sizeof(struct ember_ac_record), .va = va, .count = 256,
					 .subregion_mask = mask, .timestamp_ns = now };
}

/* An entry as the patched driver writes it: 72 bytes, zeroed, then the fields. */
static void uvm_entry(uint8_t e[72], uint64_t va, uint16_t gpu, uint32_t count, uint32_t mask, uint64_t ts)
{
	memset(e, 0, 72);
	e[0] = EMBER_AC_UVM_EVENT;
	memcpy(e + EMBER_AC_UVM_GPU, &gpu, 2);
	memcpy(e + EMBER_AC_UVM_COUNT, &count, 4);
	memcpy(e + EMBER_AC_UVM_VA, &va, 8);
	memcpy(e + EMBER_AC_UVM_MASK, &mask, 4);
	memcpy(e + EMBER_AC_UVM_TIMESTAMP, &ts, 8);
}

/* Region r's demand, with counted repeats settled, as every reader of demand sees it. */
static uint32_t demand(struct ember_alloc *a, uint32_t r)
{
	ember_policy_settle(&ctx, a);
	return a->regions[r].demand;
}

/* Check and credit one record, as the reader's callers do. */
static enum ember_ac_verdict take(const struct ember_ac_record *r)
{
	struct ember_ac_record ok;
	enum ember_ac_verdict v = ember_ac_check(r, sizeof *r, &ok);
	if (v != EMBER_AC_OK) {
		ember_ac_count_bad(&rd, v);
		return v;
	}
	return ember_ac_credit(&rd, &ctx, &ok, now);
}

static void counts_add_up(void)
{
	const struct ember_ac_counts *c = &rd.counts;
	cr_assert_eq(c->records,
		     c->credited + c->scanned + c->truncated + c->malformed + c->out_of_range + c->foreign,
		     "every record is credited or dropped for one reason");
}

Test(counters, a_well_formed_record_is_checked_and_copied)
{
	struct ember_ac_record r = record(BASE + 3 * REGION, 0x0000ff00), out;
	r.gpu = 2;
	cr_assert_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_OK);
	cr_expect_eq(out.va, r.va);
	cr_expect_eq(out.count, 256);
	cr_expect_eq(out.subregion_mask, 0x0000ff00);
	cr_expect_eq(out.gpu, 2);
	/* an unaligned copy of it reads the same */
	unsigned char buf[sizeof r + 1];
	memcpy(buf + 1, &r, sizeof r);
	cr_expect_eq(ember_ac_check(buf + 1, sizeof r, &out), EMBER_AC_OK);
	/* and a record that is only 64 KiB aligned is well-formed: its region is the 2 MiB around it */
	r.va = BASE + 5 * PIECE;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_OK);
}

Test(counters, truncated_records_are_refused_without_reading_past_them)
{
	struct ember_ac_record r = record(BASE, 1), out;
	cr_expect_eq(ember_ac_check(NULL, sizeof r, &out), EMBER_AC_TRUNCATED);
	cr_expect_eq(ember_ac_check(&r, 0, &out), EMBER_AC_TRUNCATED);
	cr_expect_eq(ember_ac_check(&r, sizeof r - 1, &out), EMBER_AC_TRUNCATED);
	uint8_t e[72];
	uvm_entry(e, BASE, 1, 256, 1, 5);
	cr_expect_eq(ember_ac_from_uvm(e, EMBER_AC_UVM_END - 1, &out), EMBER_AC_TRUNCATED);
	cr_expect_eq(ember_ac_from_uvm(NULL, 72, &out), EMBER_AC_TRUNCATED);
	cr_expect_eq(ember_ac_from_uvm(e, EMBER_AC_UVM_END, &out), EMBER_AC_OK, "32 bytes are a whole entry");
}

Test(counters, malformed_records_are_refused)
{
	struct ember_ac_record good = record(BASE, 1), r, out;
	r = good, r.magic ^= 1;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_MALFORMED, "magic");
	r = good, r.version = 2;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_MALFORMED, "version");
	r = good, r.size = 48;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_MALFORMED, "size");
	r = good, r.reserved = 1;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_MALFORMED, "reserved");
	r = good, r.count = 0;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_MALFORMED, "a notification of no accesses");
	r = good, r.va += 4096;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_MALFORMED, "an address not 64 KiB aligned");
}

Test(counters, out_of_range_records_are_refused)
{
	struct ember_ac_record good = record(BASE, 1), r, out;
	r = good, r.va = 0;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_OUT_OF_RANGE, "page zero");
	r = good, r.va = 1ull << 57;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_OUT_OF_RANGE, "above user space");
	r = good, r.va = UINT64_MAX & ~(PIECE - 1);
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_OUT_OF_RANGE, "a region that would wrap");
	r = good, r.va = 0xffff800000000000ull;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_OUT_OF_RANGE, "the kernel's half");
	r = good, r.gpu = EMBER_AC_MAX_GPUS;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_OUT_OF_RANGE, "a GPU past the limit");
	r = good, r.va = (1ull << 57) - REGION;
	cr_expect_eq(ember_ac_check(&r, sizeof r, &out), EMBER_AC_OK, "the last region of user space");
}

Test(counters, the_drivers_entries_decode_to_the_same_records)
{
	uint8_t e[72];
	uvm_entry(e, BASE + 2 * REGION, 1, 300, 0x00f0000f, 12345);
	struct ember_ac_record out;
	cr_assert_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_OK);
	cr_expect_eq(out.magic, EMBER_AC_MAGIC);
	cr_expect_eq(out.va, BASE + 2 * REGION);
	cr_expect_eq(out.count, 300);
	cr_expect_eq(out.subregion_mask, 0x00f0000f);
	cr_expect_eq(out.gpu, 0, "the driver's first GPU (index 1) is ordinal 0");
	cr_expect_eq(out.timestamp_ns, 12345);
	/* the entry's own size may be larger; its tail must be the driver's zeroes */
	uint8_t big[128] = { 0 };
	memcpy(big, e, sizeof e);
	cr_expect_eq(ember_ac_from_uvm(big, sizeof big, &out), EMBER_AC_OK);
}

Test(counters, malformed_and_out_of_range_entries_are_refused)
{
	uint8_t e[72];
	struct ember_ac_record out;
	uvm_entry(e, BASE, 1, 300, 1, 5);
	e[0] = EMBER_UVM_EVENT_ACCESS_COUNTER; /* the driver's gated test type */
	cr_expect_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_MALFORMED, "another type");
	uvm_entry(e, BASE, 1, 300, 1, 5);
	e[1] = 1;
	cr_expect_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_MALFORMED, "padding byte 1");
	uvm_entry(e, BASE, 1, 300, 1, 5);
	e[21] = 1;
	cr_expect_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_MALFORMED, "padding bytes 20-23");
	uvm_entry(e, BASE, 1, 300, 1, 5);
	e[71] = 1;
	cr_expect_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_MALFORMED, "the entry's tail");
	uvm_entry(e, BASE, 1, 0, 1, 5);
	cr_expect_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_MALFORMED, "a zero count");
	uvm_entry(e, BASE + 8, 1, 300, 1, 5);
	cr_expect_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_MALFORMED, "an unaligned address");
	uvm_entry(e, BASE, 0, 300, 1, 5);
	cr_expect_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_OUT_OF_RANGE, "the CPU has no counters");
	uvm_entry(e, BASE, EMBER_AC_MAX_GPUS + 1, 300, 1, 5);
	cr_expect_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_OUT_OF_RANGE, "a GPU past the limit");
	uvm_entry(e, 0xffffffffffe00000ull, 1, 300, 1, 5);
	cr_expect_eq(ember_ac_from_uvm(e, sizeof e, &out), EMBER_AC_OUT_OF_RANGE, "a kernel address");
}

Test(counters, a_notification_credits_the_region_it_names_and_no_other)
{
	struct ember_alloc *a = alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	struct ember_ac_record r = record(BASE + 3 * REGION, 0xffffffff);
	cr_assert_eq(take(&r), EMBER_AC_OK);
	for (uint32_t i = 0; i < a->nregions; i++)
		cr_expect_eq(demand(a, i), i == 3 ? EMBER_LAUNCH_DEMAND : 0, "region %u", i);
	cr_expect_eq(rd.counts.credited, 1);
	cr_expect_eq(rd.counts.regions, 1);
	/* an address inside the region, 64 KiB aligned, names the same region */
	now += 50 * MS;
	r = record(BASE + 3 * REGION + 7 * PIECE, 1u << 7);
	cr_assert_eq(take(&r), EMBER_AC_OK);
	cr_expect_gt(demand(a, 3), EMBER_LAUNCH_DEMAND / 4, "credited again after decay");
	cr_expect_eq(demand(a, 2) + demand(a, 4), 0);
	counts_add_up();
}

Test(counters, the_mask_says_which_of_ember_s_regions_were_read)
{
	/* an allocation 1 MiB past a 2 MiB boundary: each counted region spans two of its regions */
	struct ember_alloc *a = alloc_at(BASE + 1 * MiB, 8 * MiB, EMBER_ALLOC_MANAGED);
	/* the counted region [BASE + 2 MiB, BASE + 4 MiB) holds the end of region 0 and the start of region 1 */
	struct ember_ac_record r = record(BASE + REGION, 0xffff0000); /* its upper half only: region 1 */
	cr_assert_eq(take(&r), EMBER_AC_OK);
	cr_expect_eq(demand(a, 0), 0);
	cr_expect_eq(demand(a, 1), EMBER_LAUNCH_DEMAND);
	now += 10 * MS;
	r = record(BASE + REGION, 0x0000ffff); /* its lower half: region 0 */
	cr_assert_eq(take(&r), EMBER_AC_OK);
	cr_expect_eq(demand(a, 0), EMBER_LAUNCH_DEMAND);
	/* the first counted region holds 1 MiB before the allocation and its first 1 MiB */
	now += 10 * MS;
	r = record(BASE, 0x0000ffff); /* before it: nothing of Ember's */
	cr_expect_eq(take(&r), EMBER_AC_FOREIGN);
	cr_expect_eq(rd.counts.foreign, 1);
	/* no mask at all means the whole counted region */
	r = record(BASE, 0);
	cr_expect_eq(take(&r), EMBER_AC_OK);
	counts_add_up();
}

Test(counters, foreign_records_are_dropped_and_counted)
{
	struct ember_alloc *a = alloc_at(BASE, 4 * MiB, EMBER_ALLOC_MANAGED);
	alloc_at(BASE + 64 * MiB, 4 * MiB, EMBER_ALLOC_PLAIN);
	struct ember_ac_record r = record(BASE + 32 * MiB, 0xffffffff);
	cr_expect_eq(take(&r), EMBER_AC_FOREIGN, "between allocations");
	r = record(BASE + 64 * MiB, 0xffffffff);
	cr_expect_eq(take(&r), EMBER_AC_FOREIGN, "plain memory Ember does not place");
	r = record(0x10000, 1);
	cr_expect_eq(take(&r), EMBER_AC_FOREIGN, "far below");
	cr_expect_eq(demand(a, 0) + demand(a, 1), 0);
	cr_expect_eq(rd.counts.foreign, 3);
	cr_expect_eq(rd.counts.credited, 0);
	counts_add_up();
}

Test(counters, a_freed_allocation_s_records_are_foreign)
{
	struct ember_alloc *a = alloc_at(BASE, 4 * MiB, EMBER_ALLOC_MANAGED);
	struct ember_ac_record r = record(BASE, 1);
	cr_assert_eq(take(&r), EMBER_AC_OK);
	cr_expect(ember_ac_covers(&rd, a, now));
	struct ember_alloc *gone = ember_table_remove(&ember_shim_table, BASE);
	cr_assert_eq(gone, a);
	ember_alloc_put(&ember_shim_table, gone);
	/* a notification raised before the free, read after it */
	cr_expect_eq(take(&r), EMBER_AC_FOREIGN);
	/* a new allocation at the same address is not covered by the old one's notifications */
	struct ember_alloc *b = alloc_at(BASE, 4 * MiB, EMBER_ALLOC_MANAGED);
	cr_expect_not(ember_ac_covers(&rd, b, now));
	counts_add_up();
}

Test(counters, two_allocations_in_one_counted_region_are_each_credited)
{
	struct ember_alloc *a = alloc_at(BASE, 256 * 1024, EMBER_ALLOC_MANAGED);
	struct ember_alloc *b = alloc_at(BASE + 1 * MiB, 256 * 1024, EMBER_ALLOC_MANAGED);
	struct ember_ac_record r = record(BASE, 1u | 1u << 16);
	cr_assert_eq(take(&r), EMBER_AC_OK);
	cr_expect_eq(demand(a, 0), EMBER_LAUNCH_DEMAND);
	cr_expect_eq(demand(b, 0), EMBER_LAUNCH_DEMAND);
	cr_expect_eq(rd.counts.regions, 2);
	/* a piece that begins before an allocation and reaches into it counts for it */
	struct ember_alloc *c = alloc_at(BASE + 8 * MiB + 4096, 64 * 1024, EMBER_ALLOC_MANAGED);
	r = record(BASE + 8 * MiB, 1);
	cr_expect_eq(take(&r), EMBER_AC_OK);
	cr_expect_eq(demand(c, 0), EMBER_LAUNCH_DEMAND);
}

Test(counters, a_stream_of_records_with_a_short_tail)
{
	alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	struct ember_ac_record v[4] = { record(BASE, 1), record(BASE + REGION, 1), record(BASE, 1),
					record(BASE + 2 * REGION, 1) };
	v[2].magic = 0;
	unsigned char buf[sizeof v];
	memcpy(buf, v, sizeof v);
	/* three whole records and 10 bytes of the fourth */
	size_t credited = ember_ac_feed(&rd, &ctx, buf, 3 * sizeof v[0] + 10, now);
	cr_expect_eq(credited, 2);
	cr_expect_eq(rd.counts.records, 4);
	cr_expect_eq(rd.counts.malformed, 1);
	cr_expect_eq(rd.counts.truncated, 1);
	cr_expect_eq(ember_ac_feed(&rd, &ctx, NULL, 40, now), 0, "no buffer, nothing read");
	counts_add_up();
}

Test(counters, notifications_credit_what_the_launch_scan_did_not_and_leave_the_rest_to_it)
{
	struct ember_alloc *a = alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	/* the scan credits regions 0 and 1: a kernel passed a base pointer and a count too small for its reads */
	cr_expect(ember_counters_launch_demand(a, BASE, 2 * REGION, EMBER_LAUNCH_DEMAND, now));
	cr_expect_eq(scan_calls, 1, "the scan's demand stands, counters or not");
	cr_expect(ember_ac_scanned(&rd, a, 0, now) && ember_ac_scanned(&rd, a, 1, now));
	cr_expect_not(ember_ac_scanned(&rd, a, 2, now));
	/* a notification for a region the scan credited adds nothing: it is the scan's */
	struct ember_ac_record r = record(BASE + 1 * REGION, 0xffffffff);
	cr_expect_eq(take(&r), EMBER_AC_SCANNED);
	cr_expect_eq(demand(a, 1), 0, "the stand-in scan credits nothing itself");
	cr_expect_eq(rd.counts.scanned, 1);
	/* one for a region it missed is credited */
	r = record(BASE + 5 * REGION, 0xffffffff);
	cr_assert_eq(take(&r), EMBER_AC_OK);
	cr_expect_eq(demand(a, 5), EMBER_LAUNCH_DEMAND);
	cr_expect(ember_ac_covers(&rd, a, now));
	/* the next launch is fresh, whatever the scan says, so that its promotion sees region 5; once */
	now += 1 * MS;
	cr_expect(ember_ac_launch(&rd, a, BASE, 2 * REGION, true, now));
	cr_expect_not(ember_ac_launch(&rd, a, BASE, 2 * REGION, true, now), "and once only");
	/* the scan's run grows with its launches: regions 0 to 6 now */
	cr_expect_not(ember_ac_launch(&rd, a, BASE + 6 * REGION, 1, true, now));
	r = record(BASE + 3 * REGION, 0xffffffff);
	cr_expect_eq(take(&r), EMBER_AC_SCANNED, "inside the run the scan credited");
	r = record(BASE + 7 * REGION, 0xffffffff);
	cr_expect_eq(take(&r), EMBER_AC_OK, "past it");
	/* a launch the scan does not credit (ember-sim's scan=0) adds nothing to the run */
	struct ember_alloc *b = alloc_at(BASE + 64 * MiB, 8 * MiB, EMBER_ALLOC_MANAGED);
	cr_expect_not(ember_ac_launch(&rd, b, b->base, b->size, false, now));
	cr_expect_not(ember_ac_scanned(&rd, b, 0, now));
	/* once the scan has been silent on a for longer than the cover, its run is forgotten */
	now += EMBER_AC_COVER_NS;
	cr_expect_not(ember_ac_scanned(&rd, a, 0, now));
	r = record(BASE + 1 * REGION, 0xffffffff);
	r.timestamp_ns = now;
	cr_expect_eq(take(&r), EMBER_AC_OK);
	/* and the next scan's run starts afresh */
	ember_counters_launch_demand(a, BASE + 4 * REGION, REGION, EMBER_LAUNCH_DEMAND, now);
	cr_expect(ember_ac_scanned(&rd, a, 4, now));
	cr_expect_not(ember_ac_scanned(&rd, a, 1, now));
	cr_expect_eq(scan_calls, 2);
	counts_add_up();
}

Test(counters, a_record_across_a_scanned_and_an_unscanned_region_credits_the_unscanned_one)
{
	/* an allocation 1 MiB past a 2 MiB boundary: the counted region [BASE + 2 MiB, + 4 MiB) holds its regions 0 and 1 */
	struct ember_alloc *a = alloc_at(BASE + 1 * MiB, 8 * MiB, EMBER_ALLOC_MANAGED);
	ember_counters_launch_demand(a, a->base, 1, EMBER_LAUNCH_DEMAND, now); /* region 0 */
	struct ember_ac_record r = record(BASE + REGION, 0xffffffff);
	cr_assert_eq(take(&r), EMBER_AC_OK);
	cr_expect_eq(demand(a, 0), 0, "the scan's");
	cr_expect_eq(demand(a, 1), EMBER_LAUNCH_DEMAND);
	cr_expect_eq(rd.counts.regions, 1);
	counts_add_up();
}

Test(counters, the_scan_s_runs_are_per_allocation)
{
	struct ember_alloc *a = alloc_at(BASE, 8 * MiB, EMBER_ALLOC_MANAGED);
	struct ember_alloc *b = alloc_at(BASE + 64 * MiB, 8 * MiB, EMBER_ALLOC_MANAGED);
	ember_counters_launch_demand(b, b->base, b->size, EMBER_LAUNCH_DEMAND, now);
	struct ember_ac_record r = record(BASE, 1);
	cr_expect_eq(take(&r), EMBER_AC_OK, "b's launch says nothing of a");
	cr_expect(ember_ac_covers(&rd, a, now));
	cr_expect_not(ember_ac_covers(&rd, b, now));
	r = record(BASE + 64 * MiB, 1);
	cr_expect_eq(take(&r), EMBER_AC_SCANNED);
	/* a launch outside the allocation is nobody's */
	cr_expect_not(ember_ac_launch(&rd, a, BASE + 9 * MiB, MiB, true, now));
	cr_expect_not(ember_ac_scanned(&rd, a, 3, now));
	counts_add_up();
}
