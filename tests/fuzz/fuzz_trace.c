/* libFuzzer: ember-sim's trace reader, then a replay of whatever it accepted under Ember-adaptive. */
#include <stdint.h>
#include <stdio.h>

#include "trace.h"
#include "variant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	struct sim_events ev = { 0 };
	struct sim_trace_info info;
	char err[256];
	int rc = sim_trace_read(f, "fuzz", &ev, &info, err, sizeof err);
	fclose(f);
	/* replayed when small enough to keep the fuzzer fast: a replay visits every 2 MiB region */
	if (rc == 0 && ev.n < 512 && info.working_set < (1ull << 30)) {
		struct sim_profile p;
		sim_profile_default(&p);
		struct sim_env env = { .profile = &p, .budget = 64ull << 20, .seed = 1 };
		struct sim_result r;
		sim_run(&sim_variant_adaptive, &env, &ev, &r);
	}
	sim_events_clear(&ev);
	return 0;
}
