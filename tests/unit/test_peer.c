/*
 * The peer tier's decision (shim/policy/peer.h), alone: a region hot on a
 * GPU whose budget is full goes to a GPU with room below its low
 * watermark only when the peer-read rate beats host-mapped reads.
 */
#include <criterion/criterion.h>

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
