/* The versioned table cuGetProcAddress answers from, against cuda.h's own names. */
#include <criterion/criterion.h>
#include <cuda.h>
#include <string.h>

#include "api.h"

static const char *lookup(const char *sym, int version, unsigned flags)
{
	int slot = -1;
	if (ember_api_lookup(sym, version, flags, &slot) != EMBER_LOOKUP_FOUND)
		return NULL;
	return ember_export_names[slot];
}

Test(api_lookup, versions_pick_the_newest_at_or_below)
{
	cr_expect_str_eq(lookup("cuMemAlloc", 2000, 0), "cuMemAlloc");
	cr_expect_str_eq(lookup("cuMemAlloc", 3019, 0), "cuMemAlloc");
	cr_expect_str_eq(lookup("cuMemAlloc", 3020, 0), "cuMemAlloc_v2");
	cr_expect_str_eq(lookup("cuMemAlloc", 13000, 0), "cuMemAlloc_v2");
	cr_expect_str_eq(lookup("cuGetProcAddress", 11030, 0), "cuGetProcAddress");
	cr_expect_str_eq(lookup("cuGetProcAddress", 12000, 0), "cuGetProcAddress_v2");
	cr_expect_str_eq(lookup("cuCtxCreate", 13000, 0), "cuCtxCreate_v4");
}

Test(api_lookup, per_thread_flag_picks_the_ptds_and_ptsz_forms)
{
	unsigned pt = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	cr_expect_str_eq(lookup("cuMemcpyHtoD", 13000, pt), "cuMemcpyHtoD_v2_ptds");
	cr_expect_str_eq(lookup("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM), "cuMemcpyHtoD_v2");
	cr_expect_str_eq(lookup("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_DEFAULT), "cuMemcpyHtoD_v2");
	cr_expect_str_eq(lookup("cuLaunchKernel", 13000, pt), "cuLaunchKernel_ptsz");
	/* before per-thread streams existed, the legacy form answers */
	cr_expect_str_eq(lookup("cuLaunchKernel", 4000, pt), "cuLaunchKernel");
	/* a name with no per-thread form ignores the flag */
	cr_expect_str_eq(lookup("cuInit", 13000, pt), "cuInit");
}

Test(api_lookup, unknown_names_and_old_versions)
{
	int slot = 42;
	cr_expect_eq(ember_api_lookup("cuNoSuchThing", 13000, 0, &slot), EMBER_LOOKUP_NOT_FOUND);
	cr_expect_eq(ember_api_lookup(NULL, 13000, 0, &slot), EMBER_LOOKUP_NOT_FOUND);
	cr_expect_eq(ember_api_lookup("cuMemAlloc_v2", 13000, 0, &slot), EMBER_LOOKUP_NOT_FOUND,
		     "the driver takes base names, not export names");
	cr_expect_eq(ember_api_lookup("cuGetProcAddress", 11020, 0, &slot),
		     EMBER_LOOKUP_VERSION_NOT_SUFFICIENT);
	cr_expect_eq(slot, 42, "slot is untouched on failure");
}

Test(api_lookup, every_row_maps_to_an_export)
{
	for (unsigned i = 0; i < ember_api_row_count; i++) {
		const struct ember_api_row *r = &ember_api_rows[i];
		cr_assert(r->slot >= 0 && r->slot < EMBER_SLOT_COUNT);
		cr_expect(strncmp(ember_export_names[r->slot], r->base, strlen(r->base)) == 0,
			  "%s v%d maps to %s", r->base, r->version, ember_export_names[r->slot]);
	}
}

Test(api_lookup, export_slots_round_trip)
{
	for (int s = 0; s < EMBER_SLOT_COUNT; s++)
		cr_expect_eq(ember_export_slot(ember_export_names[s]), s);
	cr_expect_eq(ember_export_slot("cuNoSuchThing"), -1);
}
