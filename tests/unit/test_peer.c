/*
 * The peer tier (shim/policy/peer.h), on the policy core alone. Its
 * decision: a region hot on a GPU whose budget is full goes to a GPU with
 * room below its low watermark only when the peer-read rate beats
 * host-mapped reads. Its table: what it lends is charged to the holder,
 * given back when the policy promotes it or the allocation is freed, and
 * pushed out by the holder's own demand; and carried out through the
 * virtual-time backend of the operations seam.
 */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "peer.h"

#define MiB (1ull << 20)

static struct ember_accounts accs;
static struct ember_link_rates rates;

/* GPU d with a budget and bytes already charged. */
static void gpu(int d, uint64_t budget, uint64_t used)
{
	ember_budget_set(&accs.dev[d], budget, 90, 85);
	accs.dev[d].resident = used;
}

static void setup(void)
{
	accs = (struct ember_accounts){ 0 };
	rates = (struct ember_link_rates){ .host_mapped_bps = 51e9 };
	rates.peer_bps[0][1] = rates.peer_bps[1][0] = 300e9;
	gpu(0, 64 * MiB, 56 * MiB); /* 57.6 MiB high watermark: 1.6 MiB of room */
	gpu(1, 64 * MiB, 0);
}

TestSuite(peer, .init = setup);

Test(peer, a_region_that_fits_at_home_stays_for_home)
{
	accs.dev[0].resident = 0;
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 3u), -1);
}

Test(peer, home_full_a_faster_peer_with_room_takes_it)
{
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 3u), 1);
	cr_expect_float_eq(ember_peer_predicted_gain(&rates, 0, 1), 300.0 / 51.0, 1e-9);
}

Test(peer, a_peer_link_no_faster_than_host_mapped_reads_is_not_used)
{
	rates.peer_bps[0][1] = 40e9; /* PCIe peer-to-peer through a switch, say */
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 3u), -1);
	rates.peer_bps[0][1] = 51e9; /* equal: no gain */
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 3u), -1);
	rates.peer_bps[0][1] = 0; /* not measured, or no link */
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 3u), -1);
	cr_expect_eq(ember_peer_predicted_gain(&rates, 0, 1), 0);
}

Test(peer, the_peer_keeps_the_gap_above_its_low_watermark_for_its_own)
{
	accs.dev[1].resident = 54 * MiB; /* 54.4 MiB low watermark: 0.4 MiB below it */
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 3u), -1);
	accs.dev[1].resident = 52 * MiB;
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 3u), 1);
}

Test(peer, only_gpus_in_use_with_a_known_budget)
{
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 1u), -1, "GPU 1 not in use");
	accs.dev[1].budget = 0;
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 3u), -1, "GPU 1's budget not known");
	accs.dev[0].budget = 0;
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 3u), -1, "the reader's budget not known");
	cr_expect_eq(ember_peer_pick(&accs, &rates, -1, 2 * MiB, 3u), -1);
	cr_expect_eq(ember_peer_pick(&accs, &rates, EMBER_MAX_DEVICES, 2 * MiB, 3u), -1);
}

Test(peer, the_fastest_peer_then_the_one_with_most_room)
{
	gpu(2, 64 * MiB, 0);
	gpu(3, 64 * MiB, 30 * MiB);
	rates.peer_bps[0][2] = 450e9;
	rates.peer_bps[0][3] = 450e9;
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 0xfu), 2, "the fastest, the most room among equals");
	accs.dev[2].resident = 40 * MiB;
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 0xfu), 3);
	cr_expect_eq(ember_peer_pick(&accs, &rates, 0, 2 * MiB, 0x3u), 1, "GPUs 2 and 3 not in use");
}

/* ---- the tier's table, on a region table of its own ---- */

static struct ember_accounts taccs;
static struct ember_table table;
static struct ember_peer_tier tier;
static struct ember_peer_moves moves;

/* GPU 0 full (16 MiB, 14 of it resident), GPU 1 idle with 64 MiB; a 32 MiB allocation placed for GPU 0, mapped. */
static struct ember_alloc *tier_setup(void)
{
	ember_table_init(&table, &taccs);
	ember_budget_set(&taccs.dev[0], 16 * MiB, 90, 85);
	ember_budget_set(&taccs.dev[1], 64 * MiB, 90, 85);
	taccs.dev[0].resident = 14 * MiB;
	ember_peer_set_link(&tier, 0, 1, 300e9, 51e9);
	return ember_table_insert(&table, 1ull << 32, 32 * MiB, 0, EMBER_ALLOC_MANAGED);
}

static uint64_t lend(struct ember_alloc *a, uint64_t now)
{
	ember_table_lock(&table);
	uint64_t n = ember_peer_lend(&tier, &taccs, 0, &a, 1, 3u, now, &moves);
	ember_table_unlock(&table);
	return n;
}

static void tier_teardown(void)
{
	ember_peer_moves_free(&moves);
	ember_peer_tier_reset(&tier);
	ember_table_reset(&table);
}

TestSuite(peer_tier, .fini = tier_teardown);

Test(peer_tier, what_the_reader_cannot_hold_is_lent_and_charged_to_the_peer)
{
	struct ember_alloc *a = tier_setup();
	cr_assert_eq(lend(a, 0), 32 * MiB);
	cr_expect_eq(taccs.dev[1].resident, 32 * MiB, "GPU 1's account holds it");
	cr_expect_eq(taccs.dev[0].resident, 14 * MiB, "GPU 0's does not");
	cr_assert_eq(moves.n, 1, "one move for the whole run of regions");
	cr_expect_eq(moves.v[0].to, 1);
	cr_expect_eq(moves.v[0].reader, 0);
	cr_expect_eq(moves.v[0].count, 16);
	cr_expect_eq(ember_peer_holder(&tier, a, 15), 1);
	cr_expect_eq(tier.stats[1].placed, 32 * MiB);
	cr_expect_eq(tier.stats[0].borrowed, 32 * MiB);
	moves.n = 0;
	cr_expect_eq(lend(a, 0), 0, "lent once");
	cr_expect_eq(moves.n, 0);
}

Test(peer_tier, nothing_is_lent_past_the_holders_low_watermark)
{
	struct ember_alloc *a = tier_setup();
	ember_budget_set(&taccs.dev[1], 16 * MiB, 90, 85); /* 13.6 MiB low watermark: 6 regions */
	cr_expect_eq(lend(a, 0), 12 * MiB);
	cr_expect_leq(taccs.dev[1].resident, taccs.dev[1].low);
}

Test(peer_tier, nothing_is_lent_while_the_reader_has_room_or_without_a_faster_link)
{
	struct ember_alloc *a = tier_setup();
	taccs.dev[0].resident = 0;
	cr_expect_eq(lend(a, 0), 0, "room at home");
	taccs.dev[0].resident = 14 * MiB;
	ember_peer_set_link(&tier, 0, 1, 40e9, 51e9);
	cr_expect_eq(lend(a, 0), 0, "a peer link slower than host reads");
	ember_peer_set_link(&tier, 0, 1, 0, 51e9);
	cr_expect_eq(lend(a, 0), 0, "no peer access");
	cr_expect_eq(taccs.dev[1].resident, 0);
}

Test(peer_tier, a_region_the_policy_promotes_or_the_free_leaves_the_holders_account)
{
	struct ember_alloc *a = tier_setup();
	lend(a, 0);
	a->regions[3].state = EMBER_REGION_PROMOTING; /* its own GPU found room for it */
	a->regions[4].hinted = 1;                     /* the application prefetched it */
	ember_table_lock(&table);
	ember_peer_sync(&tier, &table, &moves);
	ember_table_unlock(&table);
	cr_expect_eq(taccs.dev[1].resident, 28 * MiB);
	cr_expect_eq(ember_peer_holder(&tier, a, 3), -1);
	a->regions[3].state = EMBER_REGION_MAPPED;
	struct ember_alloc *gone = ember_table_remove(&table, a->base);
	ember_table_lock(&table);
	ember_peer_forget(&tier, &taccs, gone);
	ember_table_unlock(&table);
	cr_expect_eq(taccs.dev[1].resident, 0, "freed: its holder's account is empty");
	cr_expect_eq(tier.stats[1].held, 0);
	cr_expect_eq(tier.n, 0);
	ember_alloc_put(&table, gone);
}

Test(peer_tier, the_holders_own_demand_pushes_lent_regions_out_and_keeps_it_quiet)
{
	struct ember_alloc *a = tier_setup();
	ember_budget_set(&taccs.dev[1], 32 * MiB, 90, 85); /* 27.2 MiB low: 13 regions lent */
	cr_assert_eq(lend(a, 0), 26 * MiB);
	struct ember_alloc *own = ember_table_insert(&table, 1ull << 33, 16 * MiB, 1, EMBER_ALLOC_MANAGED);
	moves.n = 0;
	ember_table_lock(&table);
	uint64_t need = ember_peer_own_need(&tier, 1, &own, 1, false);
	uint64_t out = ember_peer_push_out(&tier, &taccs, 1, need, 1000, 5000, &moves);
	ember_table_unlock(&table);
	cr_expect_eq(need, 16 * MiB);
	/* 28.8 MiB high watermark: 26 held, 16 needed: 14 go (2.8 + 14 >= 16) */
	cr_expect_eq(out, 14 * MiB);
	cr_expect_geq(ember_budget_room(&taccs.dev[1], taccs.dev[1].high), 16 * MiB);
	cr_assert_eq(moves.n, 1);
	cr_expect_eq(moves.v[0].to, -1, "back to host memory");
	cr_expect_eq(moves.v[0].from, 1);
	cr_expect_eq(moves.v[0].first + moves.v[0].count, 13, "the last lent first");
	cr_expect_eq(tier.stats[1].pushed_out, 14 * MiB);
	moves.n = 0;
	cr_expect_eq(lend(a, 4999), 0, "quiet: nothing lent to it again yet");
	cr_expect_gt(lend(a, 6000), 0, "after the quiet period");
	ember_table_lock(&table);
	cr_expect_eq(ember_peer_own_need(&tier, 1, &own, 1, false), 16 * MiB);
	own->referenced = true;
	cr_expect_eq(ember_peer_own_need(&tier, 1, &own, 1, false), 0, "static: split already, it promotes nothing more");
	cr_expect_eq(ember_peer_own_need(&tier, 1, &own, 1, true), 16 * MiB, "adaptive: it may");
	ember_table_unlock(&table);
}

/* The driver moved lent regions to host memory on its own (the UVM event queue): they leave the holder's account. */
Test(peer_tier, regions_the_driver_displaced_leave_the_holders_account)
{
	struct ember_alloc *a = tier_setup();
	lend(a, 0);
	ember_table_lock(&table);
	cr_expect_eq(ember_peer_displaced(&tier, &taccs, a, 2, 5), 6 * MiB);
	cr_expect_eq(ember_peer_displaced(&tier, &taccs, a, 2, 5), 0, "once");
	ember_table_unlock(&table);
	cr_expect_eq(taccs.dev[1].resident, 26 * MiB);
	cr_expect_eq(ember_peer_holder(&tier, a, 4), -1);
	cr_expect_eq(ember_peer_holder(&tier, a, 5), 1);
}

Test(peer_tier, a_move_that_cannot_be_issued_is_undone)
{
	struct ember_alloc *a = tier_setup();
	lend(a, 0);
	ember_table_lock(&table);
	ember_peer_failed(&tier, &taccs, &moves.v[0]);
	ember_table_unlock(&table);
	cr_expect_eq(taccs.dev[1].resident, 0);
	cr_expect_eq(tier.stats[1].placed, 0);
	cr_expect_eq(ember_peer_holder(&tier, a, 0), -1);
}

/*
 * Through the seam on virtual time: the link asked for once, the moves
 * issued on the copy engine at the promotion rate, the launch ordered
 * after them.
 */
Test(peer_tier, through_the_virtual_seam)
{
	struct ember_alloc *a = tier_setup();
	ember_peer_tier_reset(&tier); /* no link known: the seam measures it */
	struct ember_virtual vt = { .promote_bytes_per_ns = 48.7, .demote_bytes_per_ns = 10,
				    .peer_read_bps = 300e9, .host_read_bps = 51e9 };
	struct ember_peer_seam s = { &tier, &table, &ember_virtual_ops, &vt, NULL, NULL, NULL };
	struct ember_at at = { .device = 0 };
	cr_expect_eq(ember_peer_after_launch(&s, &at, &a, 1, 1u), 0, "GPU 1 not in use");
	cr_expect_eq(ember_peer_after_launch(&s, &at, &a, 1, 3u), 32 * MiB);
	cr_expect(ember_peer_link_known(&tier, 0, 1));
	cr_expect_float_eq(ember_peer_predicted_gain(&tier.rates, 0, 1), 300.0 / 51.0, 1e-9);
	cr_expect_eq(vt.bytes_to_peers, 32 * MiB);
	cr_expect_eq(vt.launch_ready_at, (uint64_t)(32.0 * MiB / 48.7), "the launch waits for them");
	struct ember_alloc *own = ember_table_insert(&table, 1ull << 33, 40 * MiB, 1, EMBER_ALLOC_MANAGED);
	struct ember_at on1 = { .device = 1 };
	/* 57.6 MiB high watermark, 32 held, 40 needed: 16 go back (25.6 + 16 >= 40) */
	cr_expect_eq(ember_peer_before_launch(&s, &on1, &own, 1, false, 0), 16 * MiB);
	cr_expect_eq(vt.bytes_from_peers, 16 * MiB);
	cr_expect_eq(taccs.dev[1].resident, 16 * MiB);
}
