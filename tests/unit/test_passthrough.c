/* EMBER=0, or any bad EMBER_* value, makes the shim a pure pass-through. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/ember.h"
#include "harness.h"

static void expect_pass_through(void *shim, void *sim)
{
	CU_OK(SYM(shim, cuInit)(0));
	cr_expect_eq(SYM(shim, ember_is_active)(), 0);
	void *p = NULL;
	CUdriverProcAddressQueryResult st;
	CU_OK(SYM(shim, cuGetProcAddress_v2)("cuGetProcAddress", &p, 12000, 0, &st));
	void *q = NULL;
	CU_OK(SYM(sim, cuGetProcAddress_v2)("cuGetProcAddress", &q, 12000, 0, &st));
	cr_expect_eq(p, q, "cuGetProcAddress answers with the driver's own function");
	CU_OK(SYM(shim, cuGetProcAddress)("cuGetProcAddress", &p, 11030, 0));
	cr_expect_eq(p, dlsym(sim, "cuGetProcAddress"));
}

Test(passthrough, ember_0)
{
	setenv("EMBER", "0", 1);
	void *sim = load_sim();
	expect_pass_through(load_shim(), sim);
}

Test(passthrough, ember_1_rewrites)
{
	setenv("EMBER", "1", 1);
	void *sim = load_sim();
	void *shim = load_shim();
	CU_OK(SYM(shim, cuInit)(0));
	cr_expect_eq(SYM(shim, ember_is_active)(), 1);
	void *p = NULL;
	CU_OK(SYM(shim, cuGetProcAddress)("cuGetProcAddress", &p, 12000, 0));
	cr_expect_eq(p, dlsym(shim, "cuGetProcAddress_v2"));
	cr_expect_neq(p, dlsym(sim, "cuGetProcAddress_v2"));
}

/* One error line with message, then pass-through. */
static void expect_error_line(const char *name, const char *value, const char *message)
{
	char log[] = "/tmp/ember-test-log-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv(name, value, 1);
	void *sim = load_sim();
	expect_pass_through(load_shim(), sim);
	FILE *f = fopen(log, "r");
	char line[1024] = "";
	cr_assert_not_null(fgets(line, sizeof line, f), "no log line");
	fclose(f);
	unlink(log);
	cr_expect_not_null(strstr(line, message), "log line was: %s", line);
	cr_expect_not_null(strstr(line, "error:"), "log line was: %s", line);
}

/* Each bad value: the line names the variable, the value and the accepted form. */
static void bad_value(const char *name, const char *value, const char *form)
{
	char want[512];
	snprintf(want, sizeof want, "%s=%s is not valid: expected %s", name, value, form);
	expect_error_line(name, value, want);
}

Test(passthrough, bad_ember) { bad_value("EMBER", "maybe", "0 or 1"); }
Test(passthrough, bad_log) { bad_value("EMBER_LOG", "loud", "off, error, warn, info or debug"); }
Test(passthrough, bad_sim_memory) { bad_value("EMBER_SIM_MEMORY", "lots", "a size such as 80G or 512M"); }
Test(passthrough, bad_driver_search) { bad_value("EMBER_DRIVER_SEARCH", "relative", "absolute folders separated by ':'"); }
Test(passthrough, bad_mode) { bad_value("EMBER_MODE", "fast", "off, mapped, static or adaptive"); }
Test(passthrough, bad_budget) { bad_value("EMBER_BUDGET", "lots", "a size with its unit such as 16G, or a share of GPU memory such as 50%"); }
Test(passthrough, bad_budget_of_gpu) { bad_value("EMBER_BUDGET_0", "120%", "a size with its unit such as 16G, or a share such as 50%"); }
Test(passthrough, bad_high_watermark) { bad_value("EMBER_HIGH_WATERMARK", "120", "a percentage from 1 to 100"); }
Test(passthrough, bad_manage_all) { bad_value("EMBER_MANAGE_ALL", "sure", "0 or 1"); }
Test(passthrough, bad_stats_path) { bad_value("EMBER_STATS", "stats.json", "an absolute path"); }

/* Relations between variables are checked too. */
Test(passthrough, low_watermark_above_high)
{
	expect_error_line("EMBER_LOW_WATERMARK", "98", "EMBER_LOW_WATERMARK=98 is not valid: expected at most EMBER_HIGH_WATERMARK (97)");
}

Test(passthrough, span_below_a_region)
{
	expect_error_line("EMBER_SPAN", "1M", "EMBER_SPAN=1M is not valid: expected a size from 2M up, such as 64M");
}
