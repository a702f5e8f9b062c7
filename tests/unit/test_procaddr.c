/*
 * cuGetProcAddress through the shim: for every versioned row of the
 * headers, at versions around it and with every stream flag, the result and
 * symbolStatus are the driver's; the pointer is Ember's for the names in
 * hooks.def and the driver's own for every other name.
 */
#include <string.h>

#include "api.h"
#include "harness.h"

static void *sim, *shim;

static const char *const hooked[] = {
#define EMBER_HOOK(name) #name,
#include "hooks.def"
#undef EMBER_HOOK
};

static int is_hooked(const char *export_name)
{
	for (size_t i = 0; i < sizeof hooked / sizeof hooked[0]; i++)
		if (!strcmp(hooked[i], export_name))
			return 1;
	return 0;
}

static void setup(void)
{
	sim = load_sim();
	shim = load_shim();
	CU_OK(SYM(shim, cuInit)(0));
}

TestSuite(procaddr, .init = setup);

static const cuuint64_t all_flags[] = { CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
					CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM };

/* What the shim must answer, given what the driver answered. */
static void *expected_pointer(const char *symbol, int version, cuuint64_t flags, void *driver_ptr)
{
	int slot;
	if (ember_api_lookup(symbol, version, flags, &slot) != EMBER_LOOKUP_FOUND)
		return driver_ptr;
	const char *name = ember_export_names[slot];
	return is_hooked(name) ? dlsym(shim, name) : driver_ptr;
}

static void check_one(const char *symbol, int version, cuuint64_t flags, size_t *rewritten)
{
	void *p_sim = (void *)1, *p_shim = (void *)2;
	CUdriverProcAddressQueryResult st_sim = 77, st_shim = 88;
	CUresult r_sim = SYM(sim, cuGetProcAddress_v2)(symbol, &p_sim, version, flags, &st_sim);
	CUresult r_shim = SYM(shim, cuGetProcAddress_v2)(symbol, &p_shim, version, flags, &st_shim);
	cr_assert_eq(r_shim, r_sim, "%s v%d flags %llu: result", symbol, version, (unsigned long long)flags);
	cr_assert_eq(st_shim, st_sim, "%s v%d flags %llu: symbolStatus", symbol, version,
		     (unsigned long long)flags);
	if (r_sim != CUDA_SUCCESS) {
		cr_assert_eq(p_shim, p_sim, "%s v%d: pointer on failure", symbol, version);
		return;
	}
	void *want = expected_pointer(symbol, version, flags, p_sim);
	cr_assert_eq(p_shim, want, "%s v%d flags %llu: got %p, want %p (driver %p)", symbol, version,
		     (unsigned long long)flags, p_shim, want, p_sim);
	*rewritten += want != p_sim;

	/* the 11030 form answers the same */
	void *p_v1 = NULL;
	cr_assert_eq(SYM(shim, cuGetProcAddress)(symbol, &p_v1, version, flags), CUDA_SUCCESS);
	cr_assert_eq(p_v1, want, "%s v%d: the 4-argument form differs", symbol, version);
}

Test(procaddr, every_row_at_every_version_and_flag)
{
	size_t checked = 0, rewritten = 0;
	for (unsigned i = 0; i < ember_api_row_count; i++) {
		const struct ember_api_row *r = &ember_api_rows[i];
		const int versions[] = { r->version - 1, r->version, CUDA_VERSION, 99999 };
		for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++)
			for (size_t f = 0; f < 3; f++, checked++)
				check_one(r->base, versions[v], all_flags[f], &rewritten);
	}
	cr_log_info("%zu queries, %zu answered with Ember's function", checked, rewritten);
	cr_expect_gt(rewritten, 0, "no query was ever answered with a hook");
}

Test(procaddr, cuGetProcAddress_itself_is_rewritten_at_11030_and_12000)
{
	for (size_t f = 0; f < 3; f++) {
		void *p = NULL;
		CUdriverProcAddressQueryResult st = 9;
		CU_OK(SYM(shim, cuGetProcAddress_v2)("cuGetProcAddress", &p, 11030, all_flags[f], &st));
		cr_expect_eq(p, dlsym(shim, "cuGetProcAddress"));
		cr_expect_eq(st, CU_GET_PROC_ADDRESS_SUCCESS);
		CU_OK(SYM(shim, cuGetProcAddress_v2)("cuGetProcAddress", &p, 12000, all_flags[f], &st));
		cr_expect_eq(p, dlsym(shim, "cuGetProcAddress_v2"));
	}
}

Test(procaddr, the_runtime_path_stays_inside_ember)
{
	/* libcudart's pattern: dlsym _v2, ask it for cuGetProcAddress, call through that */
	void *gpa12 = NULL, *gpa11 = NULL, *init = NULL;
	CUdriverProcAddressQueryResult st;
	CU_OK(SYM(shim, cuGetProcAddress_v2)("cuGetProcAddress", &gpa12, 12000, 0, &st));
	__typeof__(&cuGetProcAddress_v2) v2 = gpa12;
	CU_OK(v2("cuGetProcAddress", &gpa11, 11030, 0, &st));
	cr_expect_eq(gpa11, dlsym(shim, "cuGetProcAddress"));
	__typeof__(&cuGetProcAddress) v1 = gpa11;
	CU_OK(v1("cuInit", &init, 13000, 0));
	cr_expect_eq(init, dlsym(sim, "cuInit"), "names Ember does not rewrite get the driver's pointer");
}

Test(procaddr, bad_arguments_get_the_drivers_answer)
{
	void *p = NULL;
	CUdriverProcAddressQueryResult a = 5, b = 5;
	cr_expect_eq(SYM(shim, cuGetProcAddress_v2)(NULL, &p, 13000, 0, &a),
		     SYM(sim, cuGetProcAddress_v2)(NULL, &p, 13000, 0, &b));
	cr_expect_eq(SYM(shim, cuGetProcAddress_v2)("cuInit", NULL, 13000, 0, &a),
		     SYM(sim, cuGetProcAddress_v2)("cuInit", NULL, 13000, 0, &b));
	cr_expect_eq(SYM(shim, cuGetProcAddress_v2)("cuNoSuchThing", &p, 13000, 0, NULL),
		     CUDA_ERROR_NOT_FOUND);
	cr_expect_null(p);
}
