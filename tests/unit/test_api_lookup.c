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

/* Whether hooks.def rewrites the export of each slot. */
static const bool hooked[EMBER_SLOT_COUNT] = {
#define EMBER_HOOK(name) [EMBER_SLOT_##name] = true,
#include "hooks.def"
#undef EMBER_HOOK
};

/*
 * A program may ask cuGetProcAddress for an older version than the newest
 * (the CUDA runtime asks for cuDevicePrimaryCtxReset at one that answers
 * the first form): wherever Ember follows an entry point, it follows every
 * form a version since CUDA 3.2 answers. The CUDA 2.0 forms take 32-bit
 * sizes and pointers; nothing built since asks for them.
 */
Test(api_lookup, every_form_of_a_hooked_entry_point_is_hooked)
{
	for (unsigned i = 0; i < ember_api_row_count; i++) {
		const struct ember_api_row *r = &ember_api_rows[i];
		if (!hooked[r->slot])
			continue;
		for (unsigned j = 0; j < ember_api_row_count; j++) {
			const struct ember_api_row *q = &ember_api_rows[j];
			if (strcmp(q->base, r->base) == 0 && q->version >= 3020)
				cr_expect(hooked[q->slot], "%s is hooked, but not %s (%s at version %d)",
					  ember_export_names[r->slot], ember_export_names[q->slot], q->base, q->version);
		}
	}
}
