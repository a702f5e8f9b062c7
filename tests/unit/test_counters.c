/*
 * The access-counter reader (shim/signal/counters.c) against synthetic
 * records, with the policy's own table behind it and no driver: records as
 * the simulator writes them and entries as the patched driver writes them
 * into the tools event queue; well-formed, malformed, truncated, out of
 * range and foreign; and the launch scan's credit, which the counters
 * confirm, withhold from mapped regions no kernel reads, and complete with
 * regions it never names, one launch's worth per region per launch.
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
static unsigned scan_calls; /* launches the launch scan credited itself, on a driver without notifications */

bool ember_monitor_launch_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now)
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
			    .exchange_regions = 64, .heat_ratio = 2.0, .stale_intervals = 5 },
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
		     c->credited + c->repeats + c->truncated + c->malformed + c->out_of_range + c->foreign,
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
	/* an address inside the region, 64 KiB aligned, names the same region: once a launch of a was made */
	now += 50 * MS;
	r = record(BASE + 3 * REGION + 7 * PIECE, 1u << 7);
	cr_expect_eq(take(&r), EMBER_AC_REPEAT, "no launch since: it has its launch's worth");
	cr_expect_eq(demand(a, 3), EMBER_LAUNCH_DEMAND, "nothing added (decay is caught up at the next credit)");
	ember_ac_launch(&rd, &ctx, a, BASE, REGION, EMBER_LAUNCH_DEMAND, false, now); /* a launch the scan does not credit */
	cr_assert_eq(take(&r), EMBER_AC_OK);
	cr_expect_eq(demand(a, 3), EMBER_LAUNCH_DEMAND / 4 + EMBER_LAUNCH_DEMAND, "credited again at the next launch, after two intervals of decay");
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
	/* no mask at all means the whole counted region: region 0's first half, credited at this launch already */
	r = record(BASE, 0);
	cr_expect_eq(take(&r), EMBER_AC_REPEAT);
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

/* A launch over n regions of a from region r0, through the shim's hook as monitor.c calls it. */
static bool launch(struct ember_alloc *a, uint32_t r0, uint32_t n)
{
	return ember_counters_launch_demand(a, a->base + r0 * REGION, n * REGION, EMBER_LAUNCH_DEMAND, now);
}

/* The next launch, 30 ms on (past a quarter interval: not a repeat), over regions 0 to n - 1 of a. */
static void launch_later(struct ember_alloc *a, uint32_t n)
{
	now += 30 * MS;
	launch(a, 0, n);
}

/* A notification for region r of a, its whole mask. */
static enum ember_ac_verdict named(const struct ember_alloc *a, uint32_t r)
{
	struct ember_ac_record rec = record(a->base + r * REGION, 0xffffffff);
	rec.timestamp_ns = now;
	return take(&rec);
}

/* Whether region r of a was credited at now (demand arrived then). */
static bool credited_now(struct ember_alloc *a, uint32_t r)
{
	ember_policy_settle(&ctx, a);
	return a->regions[r].last_ref == now;
}

Test(counters, notifications_for_regions_the_scan_credited_confirm_its_credit_and_add_nothing)
{
	struct ember_alloc *a = alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	cr_expect(launch(a, 0, 4), "the scan's demand, counters or not");
	cr_expect_eq(scan_calls, 0, "through the reader when the driver's notifications are read");
	/* a streaming kernel raises hundreds of notifications for each region it reads */
	for (int i = 0; i < 300; i++)
		cr_expect_eq(named(a, 1), EMBER_AC_REPEAT);
	cr_expect_eq(demand(a, 1), EMBER_LAUNCH_DEMAND, "one launch's worth: the scan's");
	cr_expect_eq(rd.counts.repeats, 300);
	cr_expect_eq(rd.counts.credited, 0);
	cr_expect(ember_ac_covers(&rd, a, now), "a placed notification covers its allocation, credit or not");
	/* and with the next launch, the next kernel's notifications are that launch's credit's */
	launch_later(a, 4);
	for (int i = 0; i < 300; i++)
		cr_expect_eq(named(a, 1), EMBER_AC_REPEAT);
	cr_expect_eq(demand(a, 1), EMBER_LAUNCH_DEMAND / 2 + EMBER_LAUNCH_DEMAND);
	cr_expect_eq(rd.counts.withheld, 0);
	counts_add_up();
}

Test(counters, a_mapped_region_the_scan_credits_and_no_notification_names_loses_its_credit_once_covered)
{
	struct ember_alloc *a = alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	cr_assert_eq(named(a, 6), EMBER_AC_OK, "the counters cover a from now on");
	/*
	 * Launches every 30 ms whose scan credits regions 0 to 3; the kernel
	 * reads 0 to 2, never 3. The scan's credit stands for
	 * EMBER_AC_UNCONFIRMED launches and EMBER_AC_UNCONFIRMED_NS: a kernel's
	 * notifications arrive after later launches, and a light reader is
	 * named only every few. Then region 3 loses it.
	 */
	for (unsigned i = 0; i < 10; i++) {
		launch_later(a, 4);
		for (uint32_t r = 0; r < 3; r++)
			cr_expect_eq(named(a, r), EMBER_AC_REPEAT, "launch %u, region %u: the scan's read", i, r);
		for (uint32_t r = 0; r < 3; r++)
			cr_expect(credited_now(a, r), "launch %u, region %u: confirmed", i, r);
		bool standing = i < EMBER_AC_UNCONFIRMED || i * 30 * MS < EMBER_AC_UNCONFIRMED_NS;
		cr_expect_eq(credited_now(a, 3), standing, "launch %u, region 3: %s", i, standing ? "credited" : "withheld");
	}
	cr_expect_eq(rd.counts.withheld, 10 - EMBER_AC_UNCONFIRMED);
	uint64_t withheld_since = a->regions[3].last_ref;
	launch_later(a, 4);
	cr_expect_eq(a->regions[3].last_ref, withheld_since, "still withheld");
	/* a notification for it is a read: it earns the credit back, then the scan's credit stands again */
	cr_expect_eq(named(a, 3), EMBER_AC_OK);
	cr_expect(credited_now(a, 3));
	launch_later(a, 4);
	cr_expect(credited_now(a, 3), "the scan's again");
	counts_add_up();
}

/*
 * Under EMBER_PIECES a launch's edge regions get the parts of its credit it
 * covers, and where a withheld region splits the launch's credit in two
 * runs, each run keeps the part of the launch's edge it holds: here the
 * launch covers half of region 0, regions 1 whole and half of region 2, and
 * region 1 is withheld, so region 2 is a run of one, the launch's last.
 */
Test(counters, a_run_around_a_withheld_region_keeps_the_launch_s_edge_parts)
{
	struct ember_alloc *a = alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	cr_assert_eq(named(a, 6), EMBER_AC_OK, "the counters cover a from now on");
	for (unsigned i = 0; i < 10; i++) { /* the kernel reads regions 0 and 2, never 1 */
		launch_later(a, 3);
		named(a, 0);
		named(a, 2);
	}
	cr_assert_not(credited_now(a, 1), "region 1 withheld");
	ctx.params.pieces = true;
	now += 30 * MS;
	ember_ac_launch(&rd, &ctx, a, a->base + REGION / 2, 2 * REGION, EMBER_LAUNCH_DEMAND, true, now);
	ember_policy_settle(&ctx, a);
	cr_expect_eq(a->regions[0].touch_demand, EMBER_LAUNCH_DEMAND / 2, "half of region 0");
	cr_expect_eq(a->regions[2].touch_demand, EMBER_LAUNCH_DEMAND / 2, "half of region 2, a run of one at the end");
	cr_expect_not(credited_now(a, 1), "region 1 still withheld");
	ctx.params.pieces = false;
	counts_add_up();
}

Test(counters, a_region_notifications_name_and_the_scan_does_not_gets_one_launch_s_worth_per_launch)
{
	struct ember_alloc *a = alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	/* two pointers: the scan credits regions 0 and 6, not 4 between them, which the kernel reads */
	launch(a, 0, 1);
	launch(a, 6, 1);
	cr_assert_eq(named(a, 4), EMBER_AC_OK);
	for (int i = 0; i < 299; i++)
		cr_expect_eq(named(a, 4), EMBER_AC_REPEAT, "however many notifications arrive");
	cr_expect_eq(demand(a, 4), EMBER_LAUNCH_DEMAND, "one launch's worth");
	cr_expect_eq(rd.counts.credited, 1);
	cr_expect_eq(rd.counts.regions, 1);
	/* the next launch of a is fresh, so that its promotion sees region 4; once */
	now += 30 * MS;
	cr_expect(ember_ac_launch(&rd, &ctx, a, BASE, REGION, EMBER_LAUNCH_DEMAND, false, now));
	cr_expect_not(ember_ac_launch(&rd, &ctx, a, BASE, REGION, EMBER_LAUNCH_DEMAND, false, now), "and once only");
	/* at the next launch, another launch's worth */
	for (int i = 0; i < 300; i++)
		named(a, 4);
	cr_expect_eq(demand(a, 4), EMBER_LAUNCH_DEMAND / 2 + EMBER_LAUNCH_DEMAND);
	cr_expect_eq(rd.counts.credited, 2);
	cr_expect_eq(demand(a, 3) + demand(a, 5), 0, "nothing around it");
	counts_add_up();
}

Test(counters, regions_not_mapped_keep_the_scan_s_credit)
{
	struct ember_alloc *a = alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	a->regions[0].state = EMBER_REGION_RESIDENT;
	a->regions[1].state = EMBER_REGION_PROMOTING;
	a->regions[2].state = EMBER_REGION_DEMOTING;
	cr_assert_eq(named(a, 7), EMBER_AC_OK, "covered");
	/* no notification names regions 0 to 3: the counters cannot see the first three */
	for (unsigned i = 0; i < 10; i++) {
		launch_later(a, 4);
		named(a, 7);
		for (uint32_t r = 0; r < 3; r++)
			cr_expect(credited_now(a, r), "launch %u, region %u", i, r);
	}
	cr_expect_not(credited_now(a, 3), "mapped and never named: withheld");
	/* a notification for a resident region was raised before it moved: the scan credits it where it is */
	uint32_t before = demand(a, 0);
	cr_expect_eq(named(a, 0), EMBER_AC_REPEAT);
	cr_expect_eq(demand(a, 0), before);
	/* a region demoting when the scan credited it, and read once back on the host, was read for that credit */
	a->regions[2].state = EMBER_REGION_MAPPED;
	cr_expect_eq(named(a, 2), EMBER_AC_REPEAT);
	/* a region withheld while mapped is the scan's again once it is resident, and when it comes back */
	a->regions[3].state = EMBER_REGION_RESIDENT;
	launch_later(a, 4);
	cr_expect(credited_now(a, 3));
	a->regions[3].state = EMBER_REGION_MAPPED;
	launch_later(a, 4);
	cr_expect(credited_now(a, 3), "unconfirmed afresh");
	counts_add_up();
}

Test(counters, an_allocation_the_counters_do_not_cover_takes_the_scan_s_credit_alone)
{
	/* a through the reader, b as the policy takes the scan's demand: the same launches, repeats among them */
	struct ember_alloc *a = alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	struct ember_alloc *b = alloc_at(BASE + 64 * MiB, 16 * MiB, EMBER_ALLOC_MANAGED);
	static const struct { uint32_t r0, n; uint64_t gap; } launches[] = {
		{ 0, 8, 0 }, { 0, 8, 1 }, { 0, 8, 1 }, { 2, 3, 2 }, { 0, 8, 30 }, { 5, 1, 7 }, { 5, 1, 40 }, { 0, 8, 200 },
	};
	for (size_t i = 0; i < sizeof launches / sizeof launches[0]; i++) {
		now += launches[i].gap * MS;
		bool fa = launch(a, launches[i].r0, launches[i].n);
		bool fb = ember_policy_demand(&ctx, b, launches[i].r0, launches[i].r0 + launches[i].n, EMBER_LAUNCH_DEMAND, now);
		cr_expect_eq(fa, fb, "launch %zu: as fresh", i);
	}
	ember_policy_settle(&ctx, a);
	ember_policy_settle(&ctx, b);
	for (uint32_t r = 0; r < a->nregions; r++) {
		cr_expect_eq(a->regions[r].demand, b->regions[r].demand, "region %u", r);
		cr_expect_eq(a->regions[r].last_ref, b->regions[r].last_ref, "region %u", r);
		cr_expect_eq(a->regions[r].gap, b->regions[r].gap, "region %u", r);
	}
	cr_expect_not(ember_ac_covers(&rd, a, now));
	cr_expect_eq(rd.counts.withheld, 0);
	/* covered, then silent for longer than the cover: the scan's credit alone again, for every region */
	for (unsigned i = 0; i < 10; i++) {
		launch_later(a, 8);
		named(a, 0);
	}
	cr_expect_not(credited_now(a, 7), "covered, and never named: withheld");
	now += EMBER_AC_COVER_NS;
	cr_expect_not(ember_ac_covers(&rd, a, now));
	launch(a, 0, 8);
	cr_expect(credited_now(a, 7), "no longer covered");
	/* on a driver without notifications, the launch scan's own crediting, and nothing of the reader's */
	rd.reading = false;
	struct ember_alloc *c = alloc_at(BASE + 128 * MiB, 4 * MiB, EMBER_ALLOC_MANAGED);
	cr_expect(launch(c, 0, 2));
	cr_expect_eq(scan_calls, 1);
	cr_expect_eq(c->ac_launch, 0);
	cr_expect_eq(c->regions[0].ac_scan_at, 0);
	counts_add_up();
}

Test(counters, the_scan_speaks_for_a_region_for_the_cover_after_its_credit)
{
	struct ember_alloc *a = alloc_at(BASE, 16 * MiB, EMBER_ALLOC_MANAGED);
	launch(a, 0, 2);
	cr_expect_eq(named(a, 1), EMBER_AC_REPEAT);
	/* later launches that do not name the region: its reads within the cover are still the scan's */
	now += EMBER_AC_COVER_NS - 1;
	launch(a, 4, 1);
	cr_expect_eq(named(a, 1), EMBER_AC_REPEAT);
	/* past it, the scan no longer speaks for it: the counters credit it */
	now += 1;
	cr_expect_eq(named(a, 1), EMBER_AC_OK);
	counts_add_up();
}

Test(counters, a_record_across_a_credited_and_an_uncredited_region_credits_the_uncredited_one)
{
	/* an allocation 1 MiB past a 2 MiB boundary: the counted region [BASE + 2 MiB, + 4 MiB) holds its regions 0 and 1 */
	struct ember_alloc *a = alloc_at(BASE + 1 * MiB, 8 * MiB, EMBER_ALLOC_MANAGED);
	ember_counters_launch_demand(a, a->base, 1, EMBER_LAUNCH_DEMAND, now); /* region 0 */
	struct ember_ac_record r = record(BASE + REGION, 0xffffffff);
	cr_assert_eq(take(&r), EMBER_AC_OK);
	cr_expect_eq(demand(a, 0), EMBER_LAUNCH_DEMAND, "the scan's, once");
	cr_expect_eq(demand(a, 1), EMBER_LAUNCH_DEMAND);
	cr_expect_eq(rd.counts.regions, 1);
	counts_add_up();
}

Test(counters, the_scan_s_credit_is_per_allocation)
{
	struct ember_alloc *a = alloc_at(BASE, 8 * MiB, EMBER_ALLOC_MANAGED);
	struct ember_alloc *b = alloc_at(BASE + 64 * MiB, 8 * MiB, EMBER_ALLOC_MANAGED);
	launch(b, 0, 4);
	cr_expect_eq(named(a, 0), EMBER_AC_OK, "b's launch says nothing of a");
	cr_expect(ember_ac_covers(&rd, a, now));
	cr_expect_eq(named(b, 0), EMBER_AC_REPEAT);
	cr_expect(ember_ac_covers(&rd, b, now));
	/* a launch outside the allocation is nobody's */
	cr_expect_not(ember_ac_launch(&rd, &ctx, a, BASE + 9 * MiB, MiB, EMBER_LAUNCH_DEMAND, true, now));
	cr_expect_eq(a->ac_launch, 0);
	counts_add_up();
}
