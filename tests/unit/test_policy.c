/*
 * The adaptive policy in virtual time, with no driver at all: the table, a
 * budget, demand as launches would report it, and moves that complete a
 * fixed time after they are issued.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "launch_order.h"
#include "policy.h"
#include "regions.h"

#define MS 1000000ull
#define MiB (1ull << 20)
#define REGION EMBER_REGION_BYTES

static struct ember_accounts accounts;
static struct ember_table table;
static struct ember_policy_ctx ctx = { .table = &table, .accounts = &accounts, .adaptive = true };
#define params (ctx.params)
static uint64_t now;
static uint64_t moves_promoted, moves_demoted;

/* Table 1's defaults, a 64 MiB budget (28 regions under the high watermark). */
static void setup(void)
{
	ember_table_init(&table, &accounts);
	ember_table_reset(&table);
	params = (struct ember_policy_params){
		.span_regions = 4, .threshold = 256, .interval_ns = 25 * MS, .batch_regions = 16,
		.exchange_regions = 64, .heat_ratio = 2.0, .stale_intervals = 5, .protection = true, .base_grace_ns = 100 * MS,
		.return_window_ns = 500 * MS, .score_grace_ns = 250 * MS, .max_grace_ns = 2000 * MS,
		.score_decay_ns = 1000 * MS,
	};
	struct ember_device_account *acc = ember_table_account(&table, 0);
	acc->budget = 64 * MiB;
	acc->high = acc->budget / 100 * 90;
	acc->low = acc->budget / 100 * 85;
	now = 1000 * MS;
	moves_promoted = moves_demoted = 0;
}

TestSuite(policy, .init = setup);

static struct ember_alloc *alloc_regions(uint64_t base, uint32_t nregions)
{
	struct ember_alloc *a = ember_table_insert(&table, base, (uint64_t)nregions * REGION, 0, EMBER_ALLOC_MANAGED);
	cr_assert_not_null(a);
	return a;
}

/* Carry out every move at once, finished into the table as the worker finishes them (moves.c). */
static void complete(struct ember_moves *m)
{
	for (size_t i = 0; i < m->n; i++) {
		*(m->v[i].promote ? &moves_promoted : &moves_demoted) += m->v[i].count;
		ember_move_finish(&ctx, &m->v[i], true, 0, now);
	}
	ember_moves_free(m);
}

/* One policy pass at the current time, its moves completed. */
static void step(void)
{
	struct ember_moves m = { 0 };
	ember_policy_run(&ctx, 0, now, &m);
	complete(&m);
	cr_assert_leq(ember_table_account(&table, 0)->resident, ember_table_account(&table, 0)->high, "accounted residency passed the high watermark");
}

static void demand(struct ember_alloc *a, uint32_t r0, uint32_t r1)
{
	ember_policy_demand(&ctx, a, r0, r1, 256, now);
}

static uint32_t count_state(struct ember_alloc *a, uint32_t r0, uint32_t r1, enum ember_region_state s)
{
	uint32_t n = 0;
	for (uint32_t r = r0; r < r1; r++)
		n += a->regions[r].state == s;
	return n;
}

Test(policy, region_lifecycle)
{
	/* Figure 9: mapped -> (threshold) promoted with its span -> resident, protected ->
	 * demand decays -> reclaimed under pressure -> returns soon -> scored, protected longer */
	struct ember_alloc *a = alloc_regions(1ull << 40, 8);
	struct ember_alloc *b = alloc_regions(2ull << 40, 40);
	ember_policy_demand(&ctx, a, 2, 3, 255, now);
	step();
	cr_expect_eq(count_state(a, 0, 8, EMBER_REGION_RESIDENT), 0, "below the threshold nothing moves");
	demand(a, 2, 3);
	step();
	cr_expect_eq(count_state(a, 0, 4, EMBER_REGION_RESIDENT), 4, "the span around the region is promoted");
	cr_expect_eq(a->regions[2].protect_until, now + params.base_grace_ns, "base grace on arrival");
	cr_expect_float_eq(a->regions[2].score, 0.0f, 1e-6);

	/* b gets hot and fills the budget; a's regions, silent, go cold and are reclaimed */
	for (int i = 0; i < 20 && count_state(a, 0, 4, EMBER_REGION_MAPPED) < 4; i++) {
		now += params.interval_ns;
		demand(b, 0, 40);
		step();
	}
	cr_expect_eq(count_state(a, 0, 4, EMBER_REGION_MAPPED), 4, "cold regions went back to the host");
	uint64_t evicted = a->regions[2].evicted_at;
	cr_expect_gt(evicted, 0);

	/* a comes back within the return window, read every 10 ms while b falls silent:
	 * promoted again, one score point, grace 100 + 250 ms */
	for (int i = 0; i < 10 && a->regions[2].state != EMBER_REGION_RESIDENT; i++) {
		now += 10 * MS;
		demand(a, 2, 3);
		step();
	}
	cr_assert_eq(a->regions[2].state, EMBER_REGION_RESIDENT, "the returning region is promoted again");
	cr_assert_leq(now - evicted, params.return_window_ns, "it came back within the return window");
	cr_expect_float_eq(a->regions[2].score, 1.0f, 0.01f);
	cr_expect_eq(ember_policy_grace_left(&a->regions[2], now), 350 * MS);
}

Test(policy, reclamation_runs_between_the_watermarks_in_batches)
{
	struct ember_device_account *acc = ember_table_account(&table, 0);
	struct ember_alloc *a = alloc_regions(1ull << 40, 64);
	/* fill to the watermark, then let something outside Ember take memory */
	demand(a, 0, 64);
	step();
	cr_expect_leq(acc->resident, acc->high);
	cr_expect_gt(acc->resident, acc->high - params.span_regions * REGION);
	acc->other = 8 * MiB; /* a plain allocation pushes usage over the high watermark */
	now += 10 * params.interval_ns; /* everything is stale and unprotected now */
	step();
	cr_expect_leq(acc->resident + acc->other, acc->low, "reclaimed down to the low watermark");
	cr_expect_leq(moves_demoted, params.batch_regions, "one pass evicts one batch at most");
}

Test(policy, a_slow_cycle_of_uniform_hotness_causes_no_churn)
{
	/* one token every 400 ms, its layers read in order across it: far slower than the interval */
	struct ember_alloc *w = alloc_regions(1ull << 40, 48);
	for (int token = 0; token < 20; token++)
		for (uint32_t layer = 0; layer < 48; layer++) {
			now += 400 * MS / 48;
			demand(w, layer, layer + 1);
			step();
		}
	cr_expect_eq(moves_demoted, 0, "no region was swapped for one read as often");
	cr_expect_gt(count_state(w, 0, 48, EMBER_REGION_RESIDENT), 24);
}

Test(policy, uniform_hotness_causes_no_churn)
{
	/* token generation: every weight read once per token, more than fits */
	struct ember_alloc *w = alloc_regions(1ull << 40, 48);
	for (int token = 0; token < 200; token++) {
		now += 5 * MS;
		demand(w, 0, 48);
		step();
	}
	cr_expect_eq(moves_demoted, 0, "no region was evicted");
	cr_expect_eq(moves_promoted, count_state(w, 0, 48, EMBER_REGION_RESIDENT), "each promoted once");
	cr_expect_gt(moves_promoted, 24);
}

/*
 * Weights read at every step while the budget had room (launches with
 * nothing to decide credit nothing), then the first pressure: a step's
 * optimizer state, read in cycles of 100 ms, must not take them as older
 * than itself (from then on the weights' own launches are credited).
 * Named idle long before, they would.
 */
static uint32_t weights_left_after_pressure(uint64_t idle_before)
{
	struct ember_alloc *w = alloc_regions(1ull << 40, 16), *m = alloc_regions(1ull << 41, 20);
	demand(w, 0, 16); /* the first touch credits it: it was mapped */
	step();
	cr_assert_eq(count_state(w, 0, 16, EMBER_REGION_RESIDENT), 16);
	now += 2000 * MS;
	uint64_t hot_at = now;
	now -= idle_before;
	ember_policy_named_idle(&w, 1, now);
	now = hot_at;
	for (int cycle = 0; cycle < 2; cycle++) { /* the second knows its reuse gap */
		demand(m, 0, 20);
		step();
		now += 100 * MS;
	}
	return count_state(w, 0, 16, EMBER_REGION_RESIDENT);
}

Test(policy, what_launches_named_while_there_was_room_is_not_older_than_the_first_pressure)
{
	cr_expect_eq(weights_left_after_pressure(50 * MS), 16, "weights named 50 ms before gave way");
}

Test(policy, what_launches_named_long_before_the_first_pressure_gives_way)
{
	cr_expect_lt(weights_left_after_pressure(1500 * MS), 16, "weights named 1.5 s before all stayed");
}

Test(policy, nothing_is_swapped_once_the_program_stops_launching)
{
	/* tokens of layers read in order, then silence: every region's silence grows alike */
	struct ember_alloc *w = alloc_regions(1ull << 40, 48);
	for (int token = 0; token < 10; token++)
		for (uint32_t layer = 0; layer < 48; layer++) {
			now += 100 * MS / 48;
			demand(w, layer, layer + 1);
			step();
		}
	uint64_t demoted = moves_demoted;
	for (int i = 0; i < 200; i++) {
		now += params.interval_ns;
		step();
	}
	cr_expect_eq(moves_demoted, demoted, "regions were swapped after the last launch");
}

Test(policy, a_layer_read_in_a_burst_of_launches_keeps_its_token_cycle)
{
	/* each layer is read by 8 launches in a row, 1 ms apart; a token every 400 ms */
	struct ember_alloc *w = alloc_regions(1ull << 40, 48);
	for (int token = 0; token < 10; token++)
		for (uint32_t layer = 0; layer < 48; layer++)
			for (int launch = 0; launch < 8; launch++) {
				now += 1 * MS;
				demand(w, layer, layer + 1);
				if (launch == 7)
					step();
			}
	cr_expect_eq(moves_demoted, 0, "a layer read in a burst was swapped for one read as often");
	cr_expect_gt(count_state(w, 0, 48, EMBER_REGION_RESIDENT), 24);
}

Test(policy, recovery_from_a_phase_shift)
{
	/* array A (40 regions, more than fits) is re-read, then only B (16 regions) */
	struct ember_alloc *A = alloc_regions(1ull << 40, 40);
	struct ember_alloc *B = alloc_regions(2ull << 40, 16);
	for (int i = 0; i < 40; i++) {
		now += 10 * MS;
		demand(A, 0, 40);
		step();
	}
	cr_expect_eq(count_state(B, 0, 16, EMBER_REGION_RESIDENT), 0);
	uint64_t shift = now;
	while (count_state(B, 0, 16, EMBER_REGION_RESIDENT) < 16 && now - shift < 5000 * MS) {
		now += 10 * MS;
		demand(B, 0, 16);
		step();
	}
	cr_expect_eq(count_state(B, 0, 16, EMBER_REGION_RESIDENT), 16, "B became resident");
	cr_log_info("B resident %llu ms after the shift", (unsigned long long)((now - shift) / MS));
	cr_expect_lt(now - shift, 2000 * MS, "within two seconds of virtual time");
}

Test(policy, a_moving_hot_set_is_followed)
{
	/* a window of 16 regions slides over 64, a quarter per phase */
	struct ember_alloc *a = alloc_regions(1ull << 40, 64);
	for (uint32_t phase = 0; phase < 8; phase++) {
		uint32_t start = (phase * 4) % 48;
		for (int pass = 0; pass < 30; pass++) {
			now += 10 * MS;
			demand(a, start, start + 16);
			step();
		}
		cr_expect_eq(count_state(a, start, start + 16, EMBER_REGION_RESIDENT), 16, "phase %u: window resident",
			     phase);
	}
}

/* Two sets that do not fit together take turns; count the regions moved. */
static uint64_t thrash(bool protection)
{
	setup();
	params.protection = protection;
	params.heat_ratio = 1.0; /* an aggressive replacement setting, the worst case for ping-pong */
	struct ember_alloc *x = alloc_regions(1ull << 40, 20);
	struct ember_alloc *y = alloc_regions(2ull << 40, 20);
	for (int i = 0; i < 200; i++) {
		now += 10 * MS;
		demand(i / 6 % 2 ? y : x, 0, 20); /* switch every 60 ms, long enough to show steady use */
		step();
	}
	return moves_promoted + moves_demoted;
}

Test(policy, protection_stops_ping_pong)
{
	uint64_t without = thrash(false);
	uint64_t with = thrash(true);
	cr_log_info("regions moved: %llu without protection, %llu with", (unsigned long long)without,
		    (unsigned long long)with);
	cr_expect_lt(with * 2, without, "protection at least halves the traffic");
}

Test(policy, protected_regions_go_last_and_the_first_to_expire_first)
{
	struct ember_alloc *a = alloc_regions(1ull << 40, 28);
	demand(a, 0, 28);
	step(); /* all resident, all protected for 100 ms */
	cr_expect_eq(count_state(a, 0, 28, EMBER_REGION_RESIDENT), 28);
	a->regions[5].protect_until = now + 1 * MS; /* expires first */
	ember_table_account(&table, 0)->other = 4 * MiB;          /* pressure while everything is protected */
	step();
	cr_expect_eq(a->regions[5].state, EMBER_REGION_MAPPED, "the first to expire is evicted first");
}

Test(policy, passes_before_completions_never_evict_more_than_needed)
{
	/* the worker may run several passes while demotions are still in flight */
	struct ember_alloc *a = alloc_regions(1ull << 40, 28);
	demand(a, 0, 28);
	step();
	now += 10 * params.interval_ns; /* all cold and unprotected */
	ember_table_account(&table, 0)->other = 8 * MiB; /* 4 regions' worth over the high watermark */
	struct ember_moves m = { 0 };
	for (int pass = 0; pass < 10; pass++)
		ember_policy_reclaim(&ctx, 0, now, &m);
	uint32_t demoting = count_state(a, 0, 28, EMBER_REGION_DEMOTING);
	struct ember_device_account *acc = ember_table_account(&table, 0);
	uint64_t after = acc->resident + acc->other - (uint64_t)demoting * REGION;
	cr_expect_leq(after, acc->low, "down to the low watermark");
	cr_expect_gt(after + REGION, acc->low, "and not a region further");
	complete(&m);
}

Test(policy, a_region_a_sliding_range_left_behind_gives_way_at_once)
{
	struct ember_alloc *a = alloc_regions(1ull << 40, 40);
	demand(a, 0, 28);
	step(); /* the budget full to its high watermark */
	cr_assert_eq(count_state(a, 0, 28, EMBER_REGION_RESIDENT), 28);
	now += 200 * MS; /* past the arrivals' grace */
	demand(a, 0, 28);
	demand(a, 28, 32); /* four new regions, seen once: their reuse gap is unknown */
	step();
	cr_expect_eq(count_state(a, 28, 32, EMBER_REGION_RESIDENT), 0, "no victim is colder in time yet");
	ember_policy_depart(a, 0, 4); /* the range moved past the first four */
	demand(a, 4, 32);
	step();
	step();
	cr_expect_eq(count_state(a, 0, 4, EMBER_REGION_MAPPED), 4, "what the range left behind went back");
	cr_expect_eq(count_state(a, 28, 32, EMBER_REGION_RESIDENT), 4, "and the new regions took its place");
	demand(a, 0, 1);
	cr_expect_eq(a->regions[0].departed, 0, "a new reference ends the departure");
}

Test(policy, at_a_launch_departed_regions_make_room_for_its_hot_ones_on_the_same_stream)
{
	struct ember_alloc *a = alloc_regions(1ull << 40, 40);
	demand(a, 0, 28);
	step();
	now += 200 * MS;
	ember_policy_depart(a, 0, 4);
	demand(a, 4, 32); /* the launch: the window moved four regions on */
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, &a, 1, &m);
	cr_assert_geq(m.n, 2);
	cr_expect(!m.v[0].promote && m.v[0].first == 0 && m.v[0].count == 4, "the departed go first");
	cr_expect_eq(ctx.note.count[EMBER_VICTIM_LAUNCH], 4, "the note names them departed at a launch");
	for (uint32_t r = 0; r < 4; r++)
		cr_expect(a->regions[r].released, "their bytes left the account at once");
	cr_expect_eq(count_state(a, 28, 32, EMBER_REGION_PROMOTING), 4, "the new regions follow them");
	cr_expect_leq(ember_table_account(&table, 0)->resident, ember_table_account(&table, 0)->high, "never both in the account");
	complete(&m);
	cr_expect_eq(count_state(a, 4, 32, EMBER_REGION_RESIDENT), 28);
	cr_expect_eq(count_state(a, 0, 4, EMBER_REGION_MAPPED), 4);
	cr_expect_eq(ember_table_account(&table, 0)->resident, 28 * REGION, "released bytes are not taken twice");
}

/*
 * A launch's promotion surveys what was credited since the last one, not
 * its allocations' every region; the worker's pass still sees them all.
 */
Test(policy, a_launch_promotion_looks_only_at_what_was_credited_since_the_last)
{
	struct ember_alloc *a = alloc_regions(1ull << 40, 400);
	demand(a, 300, 302);
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, &a, 1, &m);
	cr_assert_eq(m.n, 1, "the launch's own hot regions are promoted");
	cr_expect(m.v[0].first <= 300 && m.v[0].first + m.v[0].count >= 302, "a span around them");
	complete(&m);
	demand(a, 10, 12); /* credited, but hot regions found no room: back to mapped, still hot */
	m = (struct ember_moves){ 0 };
	ember_policy_promote(&ctx, 0, now, &a, 1, &m);
	complete(&m);
	cr_assert_eq(count_state(a, 10, 12, EMBER_REGION_RESIDENT), 2);
	for (uint32_t r = 0; r < 400; r++)
		if (a->regions[r].state == EMBER_REGION_RESIDENT)
			a->regions[r].state = EMBER_REGION_MAPPED; /* as if moved out behind the policy's back */
	m = (struct ember_moves){ 0 };
	ember_policy_promote(&ctx, 0, now, &a, 1, &m);
	cr_expect_eq(m.n, 0, "nothing credited since the last launch promotion: nothing to look at");
	ember_policy_promote(&ctx, 0, now, NULL, 0, &m);
	cr_expect_geq(m.n, 1, "the worker's pass sees every hot region");
	ember_moves_free(&m);
}

Test(policy, neighbouring_spans_are_promoted_as_one_move)
{
	struct ember_alloc *a = alloc_regions(1ull << 40, 40);
	demand(a, 0, 40); /* all equally hot: spans of 4 regions, in address order */
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, NULL, 0, &m);
	cr_expect_eq(m.n, 1, "one prefetch, not %zu", m.n);
	cr_expect(m.n && m.v[0].first == 0 && m.v[0].count == 28, "the first 28 regions, up to the high watermark");
	cr_expect_eq(a->refs, 2, "one reference for the table, one for the move");
	complete(&m);
}

/*
 * A launch loop over one array: repeats of the range credited last, within
 * a quarter interval, cost one step each and are credited in full when the
 * regions are read; another range, or the quarter's end, credits afresh.
 */
Test(policy, repeats_of_a_range_are_counted_then_credited_in_full)
{
	struct ember_alloc *a = alloc_regions(1ull << 40, 64);
	cr_expect(ember_policy_demand(&ctx, a, 0, 64, 10, now), "the first reference is credited");
	for (int i = 1; i < 20; i++) {
		now += 100 * 1000; /* 0.1 ms apart */
		cr_expect_not(ember_policy_demand(&ctx, a, 0, 64, 10, now), "repeat %d is counted", i);
	}
	cr_expect_eq(a->regions[63].demand, 10, "counted, not yet credited");
	ember_policy_settle(&ctx, a);
	cr_expect_eq(a->regions[0].demand, 200, "twenty references in all");
	cr_expect_eq(a->regions[63].last_ref, now, "as of the latest");
	ember_policy_settle(&ctx, a);
	cr_expect_eq(a->regions[0].demand, 200, "settled once");
	cr_expect(ember_policy_demand(&ctx, a, 0, 32, 10, now), "another range is credited at once");
	now += params.interval_ns / 4;
	cr_expect(ember_policy_demand(&ctx, a, 0, 32, 10, now), "and so is a repeat after the quarter");
	ember_policy_depart(a, 0, 8);
	cr_expect(ember_policy_demand(&ctx, a, 0, 32, 10, now), "after a departure, afresh");
}

/*
 * With every region resident and the GPU under its high watermark, a pass
 * can choose no victim: it moves nothing, but still credits the repeats
 * counted since and brings demand's decay up to date, as a full survey does.
 */
Test(policy, a_pass_with_nothing_mapped_moves_nothing_and_keeps_the_books)
{
	struct ember_alloc *a = alloc_regions(1ull << 40, 8);
	demand(a, 0, 8);
	step();
	cr_assert_eq(count_state(a, 0, 8, EMBER_REGION_RESIDENT), 8, "all resident");
	now += params.interval_ns;
	cr_expect(ember_policy_demand(&ctx, a, 0, 8, 10, now), "credited");
	now += 100 * 1000;
	cr_expect_not(ember_policy_demand(&ctx, a, 0, 8, 10, now), "a repeat, counted");
	uint32_t before = a->regions[0].demand;
	now += 2 * params.interval_ns;
	struct ember_moves m = { 0 };
	ember_policy_reclaim(&ctx, 0, now, &m);
	cr_expect_eq(m.n, 0, "nothing to move");
	ember_moves_free(&m);
	cr_expect_eq(a->repeat.count, 1, "the repeat was credited");
	cr_expect_eq(a->regions[0].demand_epoch, now / params.interval_ns, "decay brought up to date");
	cr_expect_eq(a->regions[0].demand, (before + 10) >> 2, "two intervals halve it twice");
}

Test(policy, of_arrays_a_launch_references_whole_the_smaller_goes_first)
{
	/* BFS's shape: the edge list at the lower address, the vertex offsets after it, both credited whole */
	struct ember_alloc *edges = alloc_regions(1ull << 40, 40), *offsets = alloc_regions(2ull << 40, 8);
	demand(edges, 0, 40);
	demand(offsets, 0, 8);
	struct ember_alloc *both[] = { edges, offsets };
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, both, 2, &m);
	complete(&m);
	cr_expect_eq(count_state(offsets, 0, 8, EMBER_REGION_RESIDENT), 8, "the small array is resident whole");
	cr_expect_eq(count_state(edges, 0, 40, EMBER_REGION_RESIDENT), 28 - 8, "the large one has the rest of the room");
}

Test(policy, a_smaller_extent_of_a_launch_earns_more_per_region_up_to_a_cap)
{
	cr_expect_eq(ember_policy_launch_amount(8, 8), EMBER_LAUNCH_DEMAND, "the largest itself");
	cr_expect_eq(ember_policy_launch_amount(1, 1), EMBER_LAUNCH_DEMAND);
	cr_expect_eq(ember_policy_launch_amount(2, 17), 8 * EMBER_LAUNCH_DEMAND, "rounded down");
	cr_expect_eq(ember_policy_launch_amount(1, 1000), EMBER_DENSITY_MAX * EMBER_LAUNCH_DEMAND, "capped");
	cr_expect_eq(ember_policy_launch_amount(0, 1000), EMBER_LAUNCH_DEMAND, "no regions: one reference");
}

/*
 * Star's shape on the H200: the queries of a run are issued in one burst,
 * the fact columns' first, and the GPU works through them for seconds.
 */
Test(policy, a_cycle_issued_in_one_burst_swaps_nothing)
{
	struct ember_alloc *columns = alloc_regions(1ull << 40, 40), *table_ = alloc_regions(2ull << 40, 2);
	for (int run = 0; run < 5; run++) {
		demand(columns, 0, 40);
		step();
		now += 1 * MS;
		demand(table_, 0, 2);
		for (int pass = 0; pass < 200; pass++) { /* five seconds of the worker's passes */
			now += params.interval_ns;
			step();
		}
	}
	cr_expect_eq(moves_demoted, 0, "nothing was swapped for a region read as often");
}

Test(policy, room_short_of_a_span_goes_to_the_hot_region_first)
{
	/* 27 of the 28 regions under the high watermark taken: room for one */
	struct ember_alloc *filler = alloc_regions(1ull << 40, 27), *a = alloc_regions(2ull << 40, 40);
	demand(filler, 0, 27);
	step();
	cr_assert_eq(count_state(filler, 0, 27, EMBER_REGION_RESIDENT), 27);
	demand(a, 30, 31); /* its span (4 regions) is 28..31 */
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, &a, 1, &m);
	complete(&m);
	cr_expect_eq(a->regions[30].state, EMBER_REGION_RESIDENT, "the hot region took the room");
	cr_expect_eq(count_state(a, 0, 40, EMBER_REGION_RESIDENT), 1, "and only it");
}

/*
 * Room short of a whole region still holds an allocation's shorter last
 * region, and a launch that references it promotes it there: the launch
 * sorts and walks its hot regions whenever the room holds one of them.
 */
Test(policy, room_short_of_a_region_takes_a_short_last_region)
{
	/* 28 regions under the high watermark (57.6 MiB) taken: 1.6 MiB of room */
	struct ember_alloc *filler = alloc_regions(1ull << 40, 28);
	demand(filler, 0, 28);
	step();
	cr_assert_eq(count_state(filler, 0, 28, EMBER_REGION_RESIDENT), 28);
	struct ember_alloc *b = ember_table_insert(&table, 2ull << 40, 5 * MiB, 0, EMBER_ALLOC_MANAGED);
	cr_assert_not_null(b);
	cr_assert_eq(b->nregions, 3);
	demand(b, 0, 3);
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, &b, 1, &m);
	complete(&m);
	cr_expect_eq(b->regions[2].state, EMBER_REGION_RESIDENT, "the 1 MiB last region took the room");
	cr_expect_eq(count_state(b, 0, 2, EMBER_REGION_RESIDENT), 0, "no whole region fitted");
}

/*
 * Star's per-group sums on the H200: the first allocation its queries
 * reference, so the oldest resident, and written by every query's atomic
 * adds. A reclamation that took it first made the first run 11 s.
 */
Test(policy, reclamation_takes_a_small_table_read_densely_last)
{
	struct ember_alloc *sums = alloc_regions(2ull << 40, 1), *columns = alloc_regions(1ull << 40, 40);
	ember_policy_demand(&ctx, sums, 0, 1, EMBER_DENSITY_MAX * EMBER_LAUNCH_DEMAND, now);
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, &sums, 1, &m);
	complete(&m);
	now += 1 * MS;
	demand(columns, 0, 10);
	ember_policy_promote(&ctx, 0, now, &columns, 1, &m);
	complete(&m);
	now += 200 * MS; /* the sums and the first ten column regions past their grace */
	demand(columns, 10, 40);
	ember_policy_promote(&ctx, 0, now, &columns, 1, &m);
	complete(&m);
	cr_assert_eq(count_state(columns, 0, 40, EMBER_REGION_RESIDENT), 27, "the columns filled the budget");
	struct ember_device_account *acc = ember_table_account(&table, 0);
	acc->high = 20 * REGION; /* residency past the high watermark (as after a table took the margin) */
	acc->low = 18 * REGION;
	ember_policy_reclaim(&ctx, 0, now, &m);
	bool sums_moved = false;
	for (size_t i = 0; i < m.n; i++)
		sums_moved |= m.v[i].alloc == sums;
	complete(&m);
	cr_expect(!sums_moved, "the sums stay, though the oldest resident and out of their grace");
	cr_expect_eq(sums->regions[0].state, EMBER_REGION_RESIDENT);
	cr_expect_eq(count_state(columns, 0, 10, EMBER_REGION_RESIDENT), 0, "the columns out of their grace went");
}

/* A launch over the columns that fill the budget and a lookup table read AMOUNT per region. */
static struct ember_moves launch_with_table(struct ember_alloc *columns, struct ember_alloc *table_, uint32_t amount)
{
	demand(columns, 0, 40);
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, &columns, 1, &m);
	complete(&m);
	cr_assert_eq(count_state(columns, 0, 40, EMBER_REGION_RESIDENT), 28, "the columns filled the budget");
	now += 200 * MS; /* past their grace */
	demand(columns, 0, 40);
	ember_policy_demand(&ctx, table_, 0, table_->nregions, amount, now);
	struct ember_alloc *both[] = { columns, table_ };
	ember_policy_promote(&ctx, 0, now, both, 2, &m);
	return m;
}

Test(policy, a_small_table_read_densely_takes_room_at_its_launch)
{
	struct ember_alloc *columns = alloc_regions(1ull << 40, 40), *table_ = alloc_regions(2ull << 40, 2);
	struct ember_moves m = launch_with_table(columns, table_, EMBER_DENSITY_MAX * EMBER_LAUNCH_DEMAND);
	cr_assert_geq(m.n, 2);
	cr_expect(!m.v[0].promote && m.v[0].alloc == columns, "the columns' coldest make room first, on the stream");
	cr_expect(m.v[m.n - 1].promote && m.v[m.n - 1].alloc == table_, "then the table arrives");
	complete(&m);
	cr_expect_eq(count_state(table_, 0, 2, EMBER_REGION_RESIDENT), 2, "the table is resident");
	cr_expect_eq(count_state(columns, 0, 40, EMBER_REGION_RESIDENT), 26, "two column regions gave way");
	cr_expect_leq(ember_table_account(&table, 0)->resident, ember_table_account(&table, 0)->high);
}

/* The worker's pass as the shim's runs it (ember_engine_reclaim): reclamation, then the wanted tables. */
static void worker_pass(void)
{
	struct ember_moves m = { 0 };
	ember_policy_reclaim(&ctx, 0, now, &m);
	complete(&m);
	ember_policy_promote_wanted(&ctx, 0, &m);
	complete(&m);
}

/* Column regions the high watermark holds: the first fill's. */
static uint32_t filled(void)
{
	return (uint32_t)(ember_table_account(&table, 0)->high / REGION);
}

/*
 * Star's first run on the H200 at 97/93: its eight queries are issued in
 * 11 ms, before the columns that the first promoted have landed, so the
 * tables that later queries look rows up in find nothing that can give
 * way at their launch, and no launch names them again in that run. The
 * launch's moves are returned: what the margin above the high watermark
 * took, if anything.
 */
static struct ember_alloc *burst_with_table(struct ember_alloc *columns, struct ember_moves *at_launch)
{
	struct ember_alloc *table_ = alloc_regions(2ull << 40, 2);
	demand(columns, 0, 40);
	struct ember_moves fill = { 0 };
	ember_policy_promote(&ctx, 0, now, &columns, 1, &fill); /* in flight until the burst is issued */
	now += 1 * MS;
	demand(columns, 0, 40);
	ember_policy_demand(&ctx, table_, 0, 2, EMBER_DENSITY_MAX * EMBER_LAUNCH_DEMAND, now);
	struct ember_alloc *both[] = { columns, table_ };
	*at_launch = (struct ember_moves){ 0 };
	ember_policy_promote(&ctx, 0, now, both, 2, at_launch);
	complete(&fill);
	cr_assert_eq(count_state(columns, 0, 40, EMBER_REGION_RESIDENT), filled(), "the columns filled the budget");
	return table_;
}

/* The same burst with no margin above the high watermark (EMBER_HIGH_WATERMARK=100): the table waits. */
static struct ember_alloc *burst_with_table_no_margin(struct ember_alloc *columns)
{
	ember_table_account(&table, 0)->high = ember_table_account(&table, 0)->budget;
	struct ember_moves m;
	struct ember_alloc *table_ = burst_with_table(columns, &m);
	cr_expect_eq(m.n, 0, "nothing could give way: every column region is in flight");
	ember_moves_free(&m);
	return table_;
}

Test(policy, a_table_read_densely_in_a_burst_takes_the_margin_at_its_launch)
{
	struct ember_alloc *columns = alloc_regions(1ull << 40, 40);
	struct ember_moves m;
	struct ember_alloc *table_ = burst_with_table(columns, &m);
	cr_assert_eq(m.n, 1, "the table's promotion, though every column region is in flight");
	cr_expect(m.v[0].promote && m.v[0].alloc == table_ && m.v[0].count == 2);
	complete(&m);
	const struct ember_device_account *acc = ember_table_account(&table, 0);
	cr_expect_gt(acc->resident, acc->high, "past the high watermark");
	cr_expect_leq(acc->resident, acc->budget, "never past the budget");
	cr_expect_gt(acc->bytes_margin, 0, "counted for the exit summary");
	cr_expect_eq(ctx.wanted, 0, "nothing left wanted");
	now += 150 * MS; /* past the columns' grace: reclamation brings residency under the high watermark */
	worker_pass();
	cr_expect_leq(acc->resident, acc->high);
	cr_expect_eq(count_state(table_, 0, 2, EMBER_REGION_RESIDENT), 2, "the table stays: it is read densely");
}

Test(policy, a_table_read_densely_in_a_burst_arrives_once_a_column_can_give_way)
{
	struct ember_alloc *columns = alloc_regions(1ull << 40, 40);
	struct ember_alloc *table_ = burst_with_table_no_margin(columns);
	cr_expect_eq(ctx.wanted, 2, "its two regions are wanted");
	now += 50 * MS; /* the columns in their grace */
	worker_pass();
	cr_expect_eq(count_state(table_, 0, 2, EMBER_REGION_RESIDENT), 0, "no column gave way in its grace");
	now += 100 * MS; /* past it, and long past the table's own heat */
	worker_pass();
	cr_expect_eq(count_state(table_, 0, 2, EMBER_REGION_RESIDENT), 2, "the table arrived without a launch");
	cr_expect_eq(count_state(columns, 0, 40, EMBER_REGION_RESIDENT), filled() - 2, "two column regions gave way");
	cr_expect_eq(ctx.wanted, 0);
	for (int pass = 0; pass < 40; pass++) { /* a second of passes: it stays, and nothing else moves */
		now += params.interval_ns;
		worker_pass();
	}
	cr_expect_eq(count_state(table_, 0, 2, EMBER_REGION_RESIDENT), 2);
	cr_expect_eq(moves_demoted, 2);
}

Test(policy, a_wanted_table_whose_promotion_fails_is_left_to_its_next_launch)
{
	struct ember_alloc *columns = alloc_regions(1ull << 40, 40);
	struct ember_alloc *table_ = burst_with_table_no_margin(columns);
	now += 200 * MS;
	struct ember_moves m = { 0 };
	ember_policy_reclaim(&ctx, 0, now, &m);
	complete(&m);
	ember_policy_promote_wanted(&ctx, 0, &m);
	cr_assert_eq(m.n, 1, "the table's promotion");
	ember_move_finish(&ctx, &m.v[0], false, 0, now); /* the driver refused it */
	ember_moves_free(&m);
	cr_expect_eq(count_state(table_, 0, 2, EMBER_REGION_MAPPED), 2, "the table is where it was");
	cr_expect_eq(ctx.wanted, 0, "and no longer wanted: the worker does not retry it every pass");
	ember_policy_promote_wanted(&ctx, 0, &m);
	cr_expect_eq(m.n, 0);
}

Test(policy, a_wanted_table_freed_leaves_nothing_wanted)
{
	struct ember_alloc *columns = alloc_regions(1ull << 40, 40);
	struct ember_alloc *table_ = burst_with_table_no_margin(columns);
	cr_assert_eq(ctx.wanted, 2);
	ember_alloc_put(&table, ember_table_remove(&table, table_->base));
	now += 200 * MS;
	worker_pass();
	cr_expect_eq(ctx.wanted, 0, "the count forgot the freed table's marks");
	cr_expect_eq(moves_demoted, 0, "nothing gave way for it");
}

Test(policy, a_table_read_no_more_densely_than_the_columns_waits)
{
	struct ember_alloc *columns = alloc_regions(1ull << 40, 40), *table_ = alloc_regions(2ull << 40, 2);
	struct ember_moves m = launch_with_table(columns, table_, EMBER_LAUNCH_DEMAND);
	complete(&m);
	cr_expect_eq(count_state(table_, 0, 2, EMBER_REGION_RESIDENT), 0);
	cr_expect_eq(moves_demoted, 0, "nothing gave way for it");
}

Test(policy, an_allocation_larger_than_the_span_never_takes_room_so)
{
	struct ember_alloc *columns = alloc_regions(1ull << 40, 40), *big = alloc_regions(2ull << 40, 8);
	struct ember_moves m = launch_with_table(columns, big, EMBER_DENSITY_MAX * EMBER_LAUNCH_DEMAND);
	complete(&m);
	cr_expect_eq(count_state(big, 0, 8, EMBER_REGION_RESIDENT), 0);
	cr_expect_eq(moves_demoted, 0);
}

/* A launch at now reading regions [r0, r1) of a whole at amount a region, what it can promoted. */
static void launch_crediting(struct ember_alloc *a, uint32_t r0, uint32_t r1, uint32_t amount)
{
	struct ember_alloc *one[1] = { a };
	ember_policy_demand(&ctx, a, r0, r1, amount, now);
	ember_policy_extent_edges(a, (uint64_t)r0 * REGION, (uint64_t)(r1 - r0) * REGION);
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, one, 1, &m);
	complete(&m);
}

/* The same at the scan's plain demand, 256 a region. */
static void launch_reading(struct ember_alloc *a, uint32_t r0, uint32_t r1)
{
	launch_crediting(a, r0, r1, 256);
}

/* launches launches 1 ms apart, each reading a's first n regions whole and promoting what it can */
static void queries(struct ember_alloc *a, uint32_t n, int launches)
{
	for (int launch = 0; launch < launches; launch++) {
		launch_reading(a, 0, n);
		now += 1 * MS;
	}
}

/*
 * A flight of queries issued in one burst, as star's: `seldom` is read by
 * two launches, `often` by four, at the same reuse gap. At the launches only
 * the first to come finds room; the worker's passes then exchange it.
 */
static void flight(struct ember_alloc *seldom, struct ember_alloc *often, uint32_t n)
{
	queries(seldom, n, 2);
	queries(often, n, 4);
}

Test(policy, what_a_cycle_reads_more_of_is_exchanged_for_what_it_reads_less)
{
	struct ember_alloc *seldom = alloc_regions(1ull << 40, 20), *often = alloc_regions(2ull << 40, 20);
	flight(seldom, often, 20);
	cr_assert_eq(count_state(seldom, 0, 20, EMBER_REGION_RESIDENT), 20, "the first referenced filled first");
	cr_assert_eq(count_state(often, 0, 20, EMBER_REGION_RESIDENT), 8);
	for (int pass = 0; pass < 20; pass++) { /* half a second of passes: one flight alone ranks nothing */
		now += params.interval_ns;
		worker_pass();
	}
	cr_expect_eq(moves_demoted, 0, "nothing was exchanged before the reuse gaps were known");
	cr_expect_not(ember_pass_note_any(&ctx.note), "nothing gave way: the note is empty");
	flight(seldom, often, 20);
	now += params.interval_ns; /* the flight's touches have ended */
	struct ember_moves m = { 0 };
	ember_policy_reclaim(&ctx, 0, now, &m);
	cr_assert_gt(m.n, 1);
	/* the debug log's note: why they went, and for what */
	cr_expect_eq(ctx.note.count[EMBER_VICTIM_EXCHANGE], 12, "the note counts the twelve exchanged");
	cr_expect_eq(ctx.note.victim[EMBER_VICTIM_EXCHANGE].alloc_id, seldom->id);
	cr_expect(ctx.note.has_hot[EMBER_VICTIM_EXCHANGE]);
	cr_expect_eq(ctx.note.hot[EMBER_VICTIM_EXCHANGE].alloc_id, often->id, "for a region of what is read more");
	cr_expect_eq(ctx.note.count[EMBER_VICTIM_WATERMARK] + ctx.note.count[EMBER_VICTIM_OLDER], 0);
	char line[800];
	cr_expect(strstr(ember_pass_note_format(&ctx.note, now, line, sizeof line), "12 exchanged, the first allocation"),
		  "%s", line);
	char small[24]; /* a short buffer: cut and terminated (the sanitizer passes see any write past it) */
	cr_expect_eq(strlen(ember_pass_note_format(&ctx.note, now, small, sizeof small)), sizeof small - 1);
	cr_expect_eq(ember_pass_note_format(&ctx.note, now, small, 0), small, "no room at all: nothing written");
	size_t k = 0;
	for (; k < m.n && !m.v[k].promote; k++) {
		cr_expect_eq(m.v[k].alloc, seldom, "the region read less a cycle goes");
		cr_expect(seldom->regions[m.v[k].first].released, "its room is released at once");
	}
	cr_expect_lt(k, m.n, "the region read more comes in the same pass");
	for (; k < m.n; k++) {
		cr_expect(m.v[k].promote, "behind the demotions, on the same stream");
		cr_expect_eq(m.v[k].alloc, often);
	}
	complete(&m);
	for (int cycle = 0; cycle < 5; cycle++) {
		for (int pass = 0; pass < 20; pass++) {
			now += params.interval_ns;
			worker_pass();
		}
		flight(seldom, often, 20);
	}
	cr_expect_eq(count_state(often, 0, 20, EMBER_REGION_RESIDENT), 20, "what is read most a cycle stays");
	cr_expect_eq(moves_demoted, 12, "and nothing went back: the split settled");
}

/*
 * cnn's pooled activations: `wide` and `narrow` are each referenced by two
 * launches a run (the pool that writes them, the layer that reads them),
 * but the scan's density credit gives `narrow`, a quarter of its writer's
 * input, twice `wide`'s demand a region. Read no more often, it takes
 * nothing from `wide` (under EMBER_PIECES on an H100 it did, and cnn ran
 * 5% slower).
 */
Test(policy, density_credit_alone_exchanges_nothing)
{
	struct ember_alloc *wide = alloc_regions(1ull << 40, 20), *narrow = alloc_regions(2ull << 40, 20);
	for (int run = 0; run < 6; run++) {
		for (int k = 0; k < 2; k++, now += 1 * MS)
			launch_reading(wide, 0, 20);
		for (int k = 0; k < 2; k++, now += 1 * MS)
			launch_crediting(narrow, 0, 20, 2 * 256);
		for (int pass = 0; pass < 20; pass++) {
			now += params.interval_ns;
			worker_pass();
		}
	}
	cr_expect_eq(count_state(wide, 0, 20, EMBER_REGION_RESIDENT), 20, "what filled the room first keeps it");
	cr_expect_eq(moves_demoted, 0, "nothing was exchanged");
	cr_expect_eq(ctx.note.count[EMBER_VICTIM_EXCHANGE], 0);
}

/* One BFS level's launch: edges [0, e1) at ea a region, the vertex array whole at va; what it can, promoted. */
static void level(struct ember_alloc *edges, uint32_t e1, uint32_t ea, struct ember_alloc *vertices, uint32_t va)
{
	struct ember_alloc *both[2] = { edges, vertices };
	ember_policy_demand(&ctx, edges, 0, e1, ea, now);
	ember_policy_demand(&ctx, vertices, 0, vertices->nregions, va, now);
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, both, 2, &m);
	complete(&m);
}

/*
 * BFS at 1.5x of the budget, as ab-33's call 1 logged it on the H200: a run
 * of level launches, each referencing the edge list and a vertex array
 * whole, bar the long middle levels, whose scan bounded the edges by the
 * frontier's count (their first regions, credited more). The short levels
 * come in bursts, one touch of six launches; a long level is a touch of one.
 * The last touches of a mapped edge region (six launches, some 320 ms
 * before the pass, a 600 ms gap) and a resident vertex region (one launch,
 * 40 ms before, a 245 ms gap) are of different cycles: the vertex array
 * was read again since. Ranked per cycle anyway, the edge region won and
 * 128 MiB of each went back and forth between runs.
 */
Test(policy, touches_of_different_cycles_are_not_ranked_per_cycle)
{
	struct ember_alloc *vertices = alloc_regions(1ull << 40, 8), *edges = alloc_regions(2ull << 40, 40);
	uint64_t t0 = now;
	for (int run = 0; run < 2; run++, t0 += 600 * MS) {
		for (int k = 0; k < 6; k++) { /* the short first levels: a burst */
			now = t0 + (uint64_t)k * 2 * MS;
			level(edges, 40, 256, vertices, 5 * 256);
		}
		now = t0 + 40 * MS; /* the long middle levels: the edges bounded by the frontier's count */
		level(edges, 2, 4 * 256, vertices, 256);
		now = t0 + 285 * MS;
		level(edges, 2, 4 * 256, vertices, 256);
	}
	cr_assert_eq(count_state(vertices, 0, 8, EMBER_REGION_RESIDENT), 8, "the vertex array, hotter, filled first");
	cr_assert_gt(count_state(edges, 0, 40, EMBER_REGION_MAPPED), 0, "the edge list's tail stays mapped");
	now = t0 - 600 * MS + 326 * MS; /* the host's check after the second run: 41 ms after its last level */
	for (int pass = 0; pass < 8; pass++, now += params.interval_ns)
		worker_pass();
	cr_expect_eq(count_state(vertices, 0, 8, EMBER_REGION_RESIDENT), 8, "no vertex region was exchanged");
	cr_expect_eq(moves_demoted, 0);
	cr_expect_eq(ctx.note.count[EMBER_VICTIM_EXCHANGE], 0);
}

Test(policy, regions_a_launch_covers_in_part_are_not_ranked_per_cycle)
{
	/* llama.cpp's weights in one buffer: a tensor's last region holds the next one's start, read twice a token */
	struct ember_alloc *w = alloc_regions(1ull << 40, 48);
	for (int token = 0; token < 10; token++) {
		for (uint32_t t = 0; t < 16; t++) { /* 16 tensors of 3 regions less a quarter, back to back */
			uint64_t at = t * (3 * REGION - REGION / 4), bytes = 3 * REGION - REGION / 4;
			uint32_t r0 = (uint32_t)(at / REGION), r1 = (uint32_t)((at + bytes - 1) / REGION + 1);
			ember_policy_demand(&ctx, w, r0, r1, 256, now);
			ember_policy_extent_edges(w, at, bytes);
			now += 100 * 1000; /* a token's launches within 2 ms */
		}
		step();
		for (int pass = 0; pass < 8; pass++) { /* 200 ms a token */
			now += params.interval_ns;
			step();
		}
	}
	cr_expect_eq(moves_demoted, 0, "a region shared by two tensors was swapped for one read whole");
}

/* A launch at now reading bytes [at, at + bytes) of a, what it can promoted. */
static void launch_reading_bytes(struct ember_alloc *a, uint64_t at, uint64_t bytes)
{
	struct ember_alloc *one[1] = { a };
	ember_policy_demand_shared(&ctx, a, (uint32_t)(at / REGION), (uint32_t)((at + bytes - 1) / REGION + 1),
				   ember_policy_share(&params, a, at, bytes, 256), now);
	ember_policy_extent_edges(a, at, bytes);
	struct ember_moves m = { 0 };
	ember_policy_promote(&ctx, 0, now, one, 1, &m);
	complete(&m);
}

/*
 * Radix sort's flight, as ab-37's trace on the H200 shows it: `seldom`
 * read whole twice, then four passes over `keys`, each a launch a chunk.
 * Two passes cut it in chunks of 2.5 regions, so the region at each
 * chunk's edge is covered in part by two launches: six references a
 * flight against four for the others, read no more.
 */
static void sort_flight(struct ember_alloc *seldom, struct ember_alloc *keys)
{
	queries(seldom, 20, 2);
	for (int pass = 0; pass < 4; pass++) {
		uint64_t chunk = pass % 2 ? 5 * REGION : 5 * REGION / 2;
		for (uint64_t at = 0; at < 20 * REGION; at += chunk)
			launch_reading_bytes(keys, at, chunk);
		now += 1 * MS;
	}
}

/* What a sort's flights exchange in 5 cycles, partial_rank as given: regions of keys made resident. */
static uint32_t sort_exchanges(bool partial_rank)
{
	params.partial_rank = partial_rank;
	params.pieces = false;
	struct ember_alloc *seldom = alloc_regions(1ull << 40, 20), *keys = alloc_regions(2ull << 40, 20);
	for (int cycle = 0; cycle < 5; cycle++) {
		sort_flight(seldom, keys);
		for (int pass = 0; pass < 20; pass++) {
			now += params.interval_ns;
			worker_pass();
		}
	}
	/* the edges past the first fill (regions 2 and 7 came with it) */
	cr_expect_eq(keys->regions[12].state, EMBER_REGION_MAPPED, "a chunk's edge is never exchanged");
	cr_expect_eq(keys->regions[17].state, EMBER_REGION_MAPPED, "a chunk's edge is never exchanged");
	return count_state(keys, 0, 20, EMBER_REGION_RESIDENT);
}

/*
 * The chunk edges look hottest, cannot be ranked per cycle, and so end
 * every pass before the regions read whole behind them (radix at 1.5x:
 * 1.05 s against the program's own hints' 0.51). EMBER_PARTIAL_RANK
 * ranks them at half their demand, behind those.
 */
Test(policy, chunk_edges_end_the_pass_unless_ranked_at_half)
{
	uint32_t before = sort_exchanges(false);
	cr_expect_eq(moves_demoted, 0, "the edges, first, beat no resident");
	setup();
	uint32_t after = sort_exchanges(true);
	cr_expect_gt(moves_demoted, 0, "regions of seldom gave way");
	cr_expect_eq(before, 8, "keys kept the first fill's 8 regions");
	cr_expect_eq(after, 18, "and gained its 10 whole regions past it in their place");
}

/*
 * EMBER_PIECES: the chunk edges are credited the parts the two
 * launches cover (half a region each), as much a flight as the regions
 * read whole, and are ranked per cycle like them, so every region of keys
 * is exchanged in.
 */
Test(policy, chunk_edges_credited_their_parts_are_exchanged_with_the_rest)
{
	struct ember_alloc *seldom = alloc_regions(1ull << 40, 20), *keys = alloc_regions(2ull << 40, 20);
	params.pieces = true;
	for (int cycle = 0; cycle < 5; cycle++) {
		sort_flight(seldom, keys);
		for (int pass = 0; pass < 20; pass++) {
			now += params.interval_ns;
			worker_pass();
		}
	}
	cr_expect_gt(moves_demoted, 0, "regions of seldom gave way");
	cr_expect_eq(count_state(keys, 0, 20, EMBER_REGION_RESIDENT), 20, "keys resident whole, edges and all");
	cr_expect_eq(keys->regions[12].touch_demand, keys->regions[13].touch_demand,
		     "an edge is credited a flight what a region read whole is");
}

/*
 * The share a launch's extent credits: the parts of its edge regions it
 * covers, at least 1; the whole amount without EMBER_PIECES, and
 * for a last region that the allocation's end cuts short, what it holds.
 */
Test(policy, a_launch_credits_its_edges_the_parts_it_covers)
{
	struct ember_alloc *a = alloc_regions(1ull << 40, 4);
	struct ember_share s = ember_policy_share(&params, a, REGION / 2, 2 * REGION, 256);
	cr_expect(s.amount == 256 && s.first == 256 && s.last == 256, "off: whole amounts");
	params.pieces = true;
	s = ember_policy_share(&params, a, REGION / 2, 2 * REGION, 256);
	cr_expect(s.amount == 256 && s.first == 128 && s.last == 128, "half of the first and of the last: %u %u",
		  s.first, s.last);
	s = ember_policy_share(&params, a, REGION / 4, REGION / 4, 256);
	cr_expect(s.first == 64 && s.last == 64, "a quarter of one region: %u %u", s.first, s.last);
	s = ember_policy_share(&params, a, 0, 4 * REGION, 256);
	cr_expect(s.first == 256 && s.last == 256, "aligned: whole");
	s = ember_policy_share(&params, a, 3 * REGION, 1, 256);
	cr_expect(s.first == 1, "a byte counts: at least 1");
	s = ember_policy_share(&params, a, 3 * REGION + REGION / 2, 0, 256);
	cr_expect(s.first == 128, "no bytes: to the end of the allocation");
	a->size = 3 * REGION + REGION / 2; /* the last region holds half a region */
	s = ember_policy_share(&params, a, 2 * REGION, REGION + REGION / 4, 256);
	cr_expect(s.first == 256 && s.last == 128, "a quarter of a region of the last region's half: %u", s.last);
	/* repeats of the extent credit their shares at settling */
	ember_policy_demand_shared(&ctx, a, 0, 2, ember_policy_share(&params, a, REGION / 2, REGION, 256), now);
	cr_expect_not(ember_policy_demand_shared(&ctx, a, 0, 2, ember_policy_share(&params, a, REGION / 2, REGION, 256),
						 now + 1), "a repeat");
	ember_policy_settle(&ctx, a);
	cr_expect(a->regions[0].touch_demand == 256 && a->regions[1].touch_demand == 256,
		  "two references of half of each: one launch's amount: %u %u", a->regions[0].touch_demand,
		  a->regions[1].touch_demand);
}

Test(policy, no_exchange_when_none_is_allowed)
{
	params.exchange_regions = 0; /* EMBER_EXCHANGE=0 */
	struct ember_alloc *seldom = alloc_regions(1ull << 40, 20), *often = alloc_regions(2ull << 40, 20);
	for (int cycle = 0; cycle < 4; cycle++) {
		flight(seldom, often, 20);
		for (int pass = 0; pass < 20; pass++) {
			now += params.interval_ns;
			worker_pass();
		}
	}
	cr_expect_eq(moves_demoted, 0, "a region was exchanged with EMBER_EXCHANGE=0");
	cr_expect_eq(count_state(seldom, 0, 20, EMBER_REGION_RESIDENT), 20);
}

/*
 * Launch order (launch_order.c) on llama.cpp's KV cache: one kernel's
 * argument views layer l's slab, 2 regions long, at layer l's offset, a
 * slab a region apart, so each layer's view slides by half its length. In
 * the first token each slide departs the region behind it; the next token
 * jumps back to layer 0, and from then on the argument cycles: its slides
 * depart nothing, since what they leave behind comes back a token later
 * (on the H200 at 1.5x the departures cost 3.3 GiB of demotions a run and
 * 9% of the token rate: ab-32's call 2).
 */
static unsigned departed_regions(const struct ember_alloc *a)
{
	unsigned n = 0;
	for (uint32_t r = 0; r < a->nregions; r++)
		n += a->regions[r].departed;
	return n;
}

Test(policy, an_argument_that_jumps_back_cycles_and_departs_nothing)
{
	const uint64_t R = REGION;
	struct ember_alloc *kv = alloc_regions(1ull << 40, 12);
	struct ember_launch_history h = { 0 };
	uint64_t clock = 0, stream = 7;
	for (int token = 0; token < 3; token++) {
		for (uint64_t layer = 0; layer < 10; layer++) {
			struct ember_range now_r = { .alloc_id = kv->id, .start = layer * R, .end = layer * R + 2 * R }, was;
			if (ember_launch_history_find(&h, stream, &was))
				ember_launch_order_slide(kv, &was, &now_r);
			ember_launch_history_keep(&h, stream, &now_r, ++clock);
		}
		unsigned departed = departed_regions(kv);
		cr_log_info("token %d: %u regions departed", token, departed);
		if (token == 0)
			cr_expect_eq(departed, 9, "the first token's slides depart the layer behind each");
		else
			cr_expect_eq(departed, 0, "token %d: the argument cycles, and departs nothing", token);
		for (uint32_t r = 0; r < kv->nregions; r++)
			kv->regions[r].departed = 0; /* as the next reference clears it */
	}
	/* a window that only slides forward still departs what it leaves */
	struct ember_alloc *w = alloc_regions(2ull << 40, 12);
	struct ember_launch_history hw = { 0 };
	for (uint64_t phase = 0; phase < 4; phase++) {
		struct ember_range now_r = { .alloc_id = w->id, .start = phase * R, .end = phase * R + 4 * R }, was;
		if (ember_launch_history_find(&hw, stream, &was))
			ember_launch_order_slide(w, &was, &now_r);
		ember_launch_history_keep(&hw, stream, &now_r, ++clock);
	}
	cr_expect_eq(departed_regions(w), 3, "the sliding window departs the three regions behind it");
}

/*
 * Token generation as hf-llama 13b's recorded trace shows it (ab-34): a
 * token of 470 ms reads every layer's weights once, 10 ms apart, and the
 * last layers' weights again 102 ms after their first read (a second
 * launch of the same token). A gap shrinks by half a touch at most
 * (demand.c's next_gap), so such a weight's gap stays half the token's
 * gap from its second read (368 ms), not the 102 ms between its reads,
 * and the older rule takes none of the first layers' weights for it.
 */
Test(policy, a_reuse_gap_shrinks_at_most_by_half_a_touch)
{
	struct ember_alloc *w = alloc_regions(1ull << 40, 40);
	uint64_t demoted_after_two = 0;
	for (int token = 0; token < 12; token++) {
		uint64_t t0 = now;
		for (uint64_t ms = 0; ms < 470; ms++) {
			now = t0 + ms * MS;
			uint32_t layer = (uint32_t)(ms / 10), again = (uint32_t)((ms - 102) / 10);
			if (ms % 10 == 0 && layer < 40)
				launch_reading(w, layer, layer + 1);
			if (ms % 10 == 2 && ms >= 102 && again >= 34) /* layers 34-36 within the token */
				launch_reading(w, again, again + 1);
			if (ms % 25 == 0)
				worker_pass();
		}
		now = t0 + 470 * MS;
		if (token == 0)
			cr_expect_eq(w->regions[35].gap, 102 * MS, "the first gap seen is taken as it is");
		else
			cr_expect_eq(w->regions[35].gap, 368 * MS / 2, "token %d: half the token's gap, not 102 ms", token);
		cr_expect_eq(w->regions[5].gap, token ? 470 * MS : UINT64_MAX, "a weight read once a token: the token");
		if (token == 1)
			demoted_after_two = moves_demoted;
	}
	cr_expect_eq(moves_demoted, demoted_after_two, "the split settled within two tokens");
}

/*
 * The flight of the test above, then a host phase (policy.h's episodes):
 * the episode that the flight made is whole, and its exchange brings in
 * what it read more at once, where the passes wait a second flight for the
 * reuse gaps. The next flight finds the split made and moves nothing.
 */
Test(policy, a_host_phase_exchanges_what_its_episode_read_less_for_what_it_read_more)
{
	struct ember_alloc *seldom = alloc_regions(1ull << 40, 20), *often = alloc_regions(2ull << 40, 20);
	flight(seldom, often, 20);
	now += params.base_grace_ns; /* the host's check: the arrivals' grace is over */
	struct ember_moves m = { 0 };
	ember_policy_episode_end(&ctx, 0, ctx.episode, now, true, &m);
	cr_assert_gt(m.n, 1);
	cr_expect_eq(ctx.note.count[EMBER_VICTIM_EPISODE], 12, "as many as the regions of often left mapped");
	cr_expect_eq(ctx.note.victim[EMBER_VICTIM_EPISODE].alloc_id, seldom->id);
	cr_expect_eq(ctx.note.hot[EMBER_VICTIM_EPISODE].alloc_id, often->id);
	size_t k = 0;
	for (; k < m.n && !m.v[k].promote; k++)
		cr_expect_eq(m.v[k].alloc, seldom, "the region read less goes");
	for (; k < m.n; k++)
		cr_expect(m.v[k].promote && m.v[k].alloc == often, "and the region read more comes behind it");
	cr_expect_eq(ember_table_account(&table, 0)->bytes_phase_exchanged, 12 * REGION, "counted for the exit summary");
	complete(&m);
	cr_expect_eq(count_state(often, 0, 20, EMBER_REGION_RESIDENT), 20);
	ctx.episode++;
	for (int cycle = 0; cycle < 3; cycle++) {
		flight(seldom, often, 20);
		now += params.base_grace_ns;
		worker_pass();
		ember_policy_episode_end(&ctx, 0, ctx.episode++, now, true, &m);
		cr_expect_eq(m.n, 0, "flight %d: the split is made, nothing moves", cycle);
		complete(&m);
	}
	cr_expect_eq(moves_demoted, 12, "nothing went back");
}

/* Read alike in the episode (a token's weights, each once): nothing is exchanged. */
Test(policy, a_host_phase_exchanges_nothing_for_regions_read_alike)
{
	struct ember_alloc *first = alloc_regions(1ull << 40, 20), *second = alloc_regions(2ull << 40, 20);
	queries(first, 20, 3);
	queries(second, 20, 3);
	now += params.base_grace_ns;
	struct ember_moves m = { 0 };
	ember_policy_episode_end(&ctx, 0, ctx.episode, now, true, &m);
	cr_expect_eq(m.n, 0);
	cr_expect_not(ember_pass_note_any(&ctx.note));
}

/* Only the episode that ended counts: what an earlier one read more ranks nothing. */
Test(policy, a_host_phase_ranks_only_its_own_episode)
{
	struct ember_alloc *seldom = alloc_regions(1ull << 40, 20), *often = alloc_regions(2ull << 40, 20);
	flight(seldom, often, 20);
	ctx.episode++; /* a phase the worker did not see: a short one, noticed at the next launch */
	queries(seldom, 20, 2);
	now += params.base_grace_ns;
	struct ember_moves m = { 0 };
	ember_policy_episode_end(&ctx, 0, ctx.episode, now, true, &m);
	cr_expect_eq(m.n, 0, "the latest episode read only what is resident");
}

/*
 * Regions covered in part by a launch (two packed tensors in one region,
 * or a chunk's edge) are credited for each launch, yet read once: the
 * exchange leaves them out, and a region read less gives way only to
 * whole regions.
 */
Test(policy, a_host_phase_leaves_regions_covered_in_part)
{
	struct ember_alloc *seldom = alloc_regions(1ull << 40, 20), *packed = alloc_regions(2ull << 40, 20);
	queries(seldom, 20, 2);
	for (int launch = 0; launch < 4; launch++) { /* two tensors a region, each half of it */
		for (uint32_t r = 0; r < 20; r++) {
			ember_policy_demand(&ctx, packed, r, r + 1, 256, now);
			ember_policy_extent_edges(packed, (uint64_t)r * REGION, REGION / 2);
			ember_policy_demand(&ctx, packed, r, r + 1, 256, now);
			ember_policy_extent_edges(packed, (uint64_t)r * REGION + REGION / 2, REGION / 2);
		}
		now += 1 * MS;
	}
	now += params.base_grace_ns;
	struct ember_moves m = { 0 };
	ember_policy_episode_end(&ctx, 0, ctx.episode, now, true, &m);
	cr_expect_eq(m.n, 0);
}

/* Protected residents (their grace not over) and the application's own regions stay. */
Test(policy, a_host_phase_keeps_protected_and_hinted_regions)
{
	struct ember_alloc *seldom = alloc_regions(1ull << 40, 20), *often = alloc_regions(2ull << 40, 20);
	flight(seldom, often, 20);
	struct ember_moves m = { 0 };
	ember_policy_episode_end(&ctx, 0, ctx.episode, now, true, &m); /* within the arrivals' grace */
	cr_expect_eq(m.n, 0, "every resident is in its grace");
	now += params.base_grace_ns;
	for (uint32_t r = 0; r < 20; r++)
		seldom->regions[r].hinted = 1;
	ember_policy_episode_end(&ctx, 0, ctx.episode, now, true, &m);
	cr_expect_eq(m.n, 0, "the application placed them");
	params.exchange_regions = 0;
	for (uint32_t r = 0; r < 20; r++)
		seldom->regions[r].hinted = 0;
	ember_policy_episode_end(&ctx, 0, ctx.episode, now, true, &m);
	cr_expect_eq(m.n, 0, "EMBER_EXCHANGE=0 turns it off");
}

/*
 * The phase's first try fills the room under the high watermark with what
 * the episode read; later tries only exchange. A program's frees at its
 * exit make room while its last phase lasts (star's replay promoted 8.5 GiB
 * of columns about to be freed, its frees then waiting for them).
 */
Test(policy, only_a_host_phases_first_try_fills_the_room)
{
	struct ember_alloc *small = alloc_regions(1ull << 40, 8), *often = alloc_regions(2ull << 40, 40);
	queries(small, 8, 1);
	queries(often, 40, 4);
	cr_assert_eq(count_state(often, 0, 40, EMBER_REGION_MAPPED), 20);
	now += params.base_grace_ns;
	struct ember_alloc *gone = ember_table_remove(&table, small->base); /* the program frees it */
	cr_assert_not_null(gone);
	ember_alloc_put(&table, gone);
	struct ember_moves m = { 0 };
	ember_policy_episode_end(&ctx, 0, ctx.episode, now, false, &m);
	cr_expect_eq(m.n, 0, "a later try: the room made by the free stays for the launches");
	ember_policy_episode_end(&ctx, 0, ctx.episode, now, true, &m);
	cr_assert_eq(m.n, 1, "the first try fills it");
	cr_expect(m.v[0].promote && m.v[0].alloc == often && m.v[0].count == 8);
	complete(&m);
}
