/* The tier model against the H200 figures it was calibrated to. */
#include <criterion/criterion.h>
#include <math.h>

#include "variant.h"

static struct sim_profile p;
static void setup(void) { sim_profile_default(&p); }

/* GB/s that moving `bytes` in `calls` calls comes out at */
static double rate(double ns, uint64_t bytes) { return (double)bytes / ns; }

Test(model, prefetch_call_sizes, .init = setup)
{
	uint64_t mib = 1 << 20;
	cr_expect(fabs(rate(sim_promote_cost(&p, 2 * mib, 1), 2 * mib) - 16) < 0.5);
	double r64 = rate(sim_promote_cost(&p, 64 * mib, 1), 64 * mib);
	cr_expect(r64 >= 44 && r64 <= 47, "64 MiB calls: %g GB/s", r64);
	double r2g = rate(sim_promote_cost(&p, 2048 * mib, 1), 2048 * mib);
	cr_expect(r2g > 48 && r2g <= 48.7, "one 2 GiB call: %g GB/s", r2g);
	double d = rate(sim_demote_cost(&p, 2 * mib, 1), 2 * mib);
	cr_expect(d >= 8 && d <= 9.6, "demotion in 2 MiB calls: %g GB/s", d);
}

Test(model, advice, .init = setup)
{
	cr_expect(fabs(sim_advise_cost(&p, 4 * SIM_GIB, 1) / 1e6 - 127) < 1, "4 GiB range: 127 ms");
	cr_expect(fabs(sim_advise_cost(&p, SIM_BLOCK, 1) / 1e6 - 0.17) < 0.005, "2 MiB: 0.17 ms");
}

Test(model, tiers, .init = setup)
{
	uint64_t g = SIM_GIB;
	double dev = sim_read_cost(&p, SIM_TIER_DEVICE, g, g, SIM_STREAM);
	double map = sim_read_cost(&p, SIM_TIER_MAPPED, g, g, SIM_STREAM);
	cr_expect(fabs(map / dev - 4300.0 / 51) < 0.01, "mapped streaming ~84x below device");
	/* 1e6 random 4 B reads */
	double rd = sim_read_cost(&p, SIM_TIER_DEVICE, g, 4000000, SIM_RANDOM);
	double rm = sim_read_cost(&p, SIM_TIER_MAPPED, g, 4000000, SIM_RANDOM);
	cr_expect(fabs(rm / rd - 95) < 1, "random reads ~96x: %g", rm / rd);
}

Test(model, wavefront_figure, .init = setup)
{
	/* 1 KiB in each of 8192 2 MiB regions per launch: >30 ms mapped, ~0.35 ms resident */
	double m = p.launch_us * 1e3, d = m;
	for (int i = 0; i < 8192; i++) {
		m += sim_read_cost(&p, SIM_TIER_MAPPED, SIM_BLOCK, 1024, SIM_SPARSE);
		d += sim_read_cost(&p, SIM_TIER_DEVICE, SIM_BLOCK, 1024, SIM_SPARSE);
	}
	cr_expect(m > 30e6 && m < 35e6, "mapped: %g ms", m / 1e6);
	cr_expect(d > 0.3e6 && d < 0.4e6, "resident: %g ms", d / 1e6);
}

Test(model, sizes)
{
	uint64_t b;
	cr_expect(!sim_parse_size("24G", &b) && b == 24ull << 30);
	cr_expect(!sim_parse_size("1T", &b) && b == 1ull << 40);
	cr_expect(!sim_parse_size("1.5g", &b) && b == 3ull << 29);
	cr_expect(!sim_parse_size("64KiB", &b) && b == 65536);
	cr_expect(!sim_parse_size("4096", &b) && b == 4096);
	cr_expect(sim_parse_size("12Q", &b));
	cr_expect(sim_parse_size("-1G", &b));
	cr_expect(sim_parse_size("", &b));
	cr_expect(sim_parse_size("G", &b));
	cr_expect(sim_parse_size("1GG", &b));
}

Test(model, profile_keys, .init = setup)
{
	char err[256];
	cr_expect_eq(sim_profile_set(&p, "launch_us", "7.5", err, sizeof err), 0);
	cr_expect_eq(p.launch_us, 7.5);
	cr_expect_eq(sim_profile_set(&p, "warp", "1", err, sizeof err), -1);
	cr_expect(strstr(err, "warp"), "%s", err);
	cr_expect_eq(sim_profile_set(&p, "launch_us", "0", err, sizeof err), -1);
	cr_expect(strstr(err, "launch_us") && strstr(err, "positive number"), "%s", err);
}

#include "counters.h"

Test(counters, a_region_read_past_the_threshold_notifies_once_with_its_subregions)
{
	struct sim_counters c;
	cr_assert_eq(sim_counters_init(&c, 4, 256), 0);
	uint64_t va = 7ull << 21;
	sim_counters_access(&c, va, 255 * 32, 100); /* 255 sectors: one short */
	cr_expect_eq(c.nout, 0);
	sim_counters_access(&c, va + (3 << 16), 32, 200); /* the 256th, in the fourth 64 KiB */
	cr_assert_eq(c.nout, 1);
	const struct ember_ac_record *r = &c.out[0];
	cr_expect_eq(r->magic, EMBER_AC_MAGIC);
	cr_expect_eq(r->size, sizeof *r);
	cr_expect_eq(r->va, va);
	cr_expect_eq(r->count, 256);
	cr_expect_eq(r->subregion_mask, 0x1u | 0x8u, "255 sectors lie in the first 64 KiB, the last in the fourth");
	cr_expect_eq(r->timestamp_ns, 200);
	sim_counters_access(&c, va, 32, 300);
	cr_expect_eq(c.nout, 1, "the counter started again from zero");
	sim_counters_free(&c);
}

Test(counters, more_regions_than_counters_lose_counts)
{
	struct sim_counters c;
	cr_assert_eq(sim_counters_init(&c, 4, 256), 0);
	/* a sparse sweep: 32 sectors in each of 8 regions, eight times over: never 256 in one counter */
	for (int pass = 0; pass < 8; pass++)
		for (uint64_t reg = 0; reg < 8; reg++)
			sim_counters_access(&c, reg << 21, 1024, (uint64_t)pass);
	cr_expect_eq(c.nout, 0, "least-recently-used counters are taken before any reaches the threshold");
	cr_expect_gt(c.lost, 0);
	sim_counters_free(&c);
	/* with a counter for each region the same sweep notifies for every region */
	cr_assert_eq(sim_counters_init(&c, 8, 256), 0);
	for (int pass = 0; pass < 8; pass++)
		for (uint64_t reg = 0; reg < 8; reg++)
			sim_counters_access(&c, reg << 21, 1024, (uint64_t)pass);
	cr_expect_eq(c.nout, 8);
	sim_counters_free(&c);
}

Test(counters, a_read_across_regions_is_counted_in_each)
{
	struct sim_counters c;
	cr_assert_eq(sim_counters_init(&c, 0, 0), 0, "0 gives the defaults");
	cr_expect_eq(c.n, 256);
	sim_counters_access(&c, 1ull << 21, 4ull << 21, 5); /* four whole regions */
	cr_expect_eq(c.nout, 4);
	cr_expect_eq(c.out[3].va, 4ull << 21);
	cr_expect_eq(c.out[3].subregion_mask, 0xffffffffu);
	sim_counters_free(&c);
}
