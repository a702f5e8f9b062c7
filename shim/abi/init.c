/* Library start-up: read the configuration, set up logging and the loader. */
#include <errno.h> /* program_invocation_short_name */
#include <pthread.h>
#include <stdlib.h>

#include "config_file.h"
#include "ember/ember.h"
#include "framework_env.h"
#include "gpu_busy.h"
#include "kept.h"
#include "live.h"
#include "locks.h"
#include "placement.h"
#include "pool_usage.h"
#include "shim.h"
#include "state.h"
#include "stats.h"
#include "streams.h"
#include "touch_pool.h"
#include "tracer.h"
#include "uvm_events.h"
#include "worker.h"

struct ember_config ember_cfg;
bool ember_active;

static const char *const mode_names[] = { "off", "mapped", "static", "adaptive" };

/* fork(): the child has no worker thread and no private stream, and starts them anew on demand. */
static void after_fork_child(void)
{
	ember_worker_after_fork_child();
	ember_streams_after_fork_child();
	ember_gpu_busy_after_fork_child();
	ember_touch_pool_after_fork_child();
	ember_kept_after_fork_child();
	ember_pool_usage_after_fork_child();
}

/*
 * Runs when the library is loaded. It only reads the environment: the real
 * driver is opened on the first CUDA call, so a program that never uses
 * CUDA never pays for it.
 */
/* EMBER_BUDGTE=16G would be ignored without a word: one warning each, naming the variable meant. */
static void warn_near_misses(void)
{
	extern char **environ;
	for (char **e = environ; e && *e; e++) {
		char name[80];
		const char *nearest = ember_config_near_miss(*e, name, sizeof name);
		if (nearest)
			ember_warn("%s is not an Ember variable and is ignored: did you mean %s?", name, nearest);
	}
}

/* The configuration files' lines that were ignored, and files refused: one warning each, with file and line. */
static void warn_config_notes(void)
{
	size_t n;
	const char *const *notes = ember_config_file_notes(&n);
	for (size_t i = 0; i < n; i++)
		ember_warn("%s", notes[i]);
}

/* Per-process enablement: the program's name (argv[0]'s file name, as ps shows it) against the patterns. */
static bool selected_program(void)
{
	const char *name = program_invocation_short_name;
	if (*ember_cfg.enable_for && !ember_patterns_match(ember_cfg.enable_for, name))
		return false;
	return !ember_patterns_match(ember_cfg.disable_for, name);
}

__attribute__((constructor)) static void ember_init(void)
{
	char err[512];
	int rc = ember_config_load(&ember_cfg, err, sizeof err);
	ember_log_init(ember_cfg.log_level, ember_cfg.log_file, ember_cfg.log_time);
	ember_locks_at_fork(after_fork_child);
	bool selected = selected_program();
	ember_active = ember_cfg.enabled && rc == 0 && ember_cfg.mode != EMBER_MODE_OFF && selected;
	warn_config_notes();
	if (ember_config_secure_execution())
		ember_info("secure execution: every EMBER_* variable, the user's ember.conf and LD_LIBRARY_PATH are "
			   "ignored; running with the defaults and " EMBER_CONFIG_SYSTEM_FILE);
	else
		warn_near_misses();
	if (rc != 0) {
		ember_error("%s; Ember is passing every call straight to the driver", err);
		return;
	}
	if (!selected) {
		ember_info("%s is not selected by EMBER_ENABLE_FOR and EMBER_DISABLE_FOR: passing every call straight "
			   "to the driver", program_invocation_short_name);
		return;
	}
	if (!ember_cfg.enabled || ember_cfg.mode == EMBER_MODE_OFF) {
		ember_info("%s: passing every call straight to the driver",
			   ember_cfg.enabled ? "EMBER_MODE=off" : "EMBER=0");
		return;
	}
	ember_state_init();
	ember_strategy_choose(ember_cfg.mode);
	ember_uvm_events_subscribe();
	ember_live_subscribe();
	ember_trace_start();
	ember_info("mode %s%s", mode_names[ember_cfg.mode], ember_cfg.manage_all ? ", managing all allocations" : "");
	ember_framework_env_at_start();
	atexit(ember_stats_at_exit);
}

const char *ember_mode_name(enum ember_mode m)
{
	return m <= EMBER_MODE_ADAPTIVE ? mode_names[m] : "unknown";
}

EMBER_PUBLIC const char *ember_version(void)
{
	return EMBER_VERSION_STRING;
}

EMBER_PUBLIC const char *ember_real_driver(void)
{
	return ember_driver_path();
}

EMBER_PUBLIC int ember_is_active(void)
{
	return ember_active;
}

EMBER_PUBLIC int ember_flush(void)
{
	int rc = ember_active ? ember_worker_flush() : 0;
	if (ember_active) {
		ember_live_publish();
		ember_trace_flush();
	}
	return rc;
}
