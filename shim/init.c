/* Library start-up: read the configuration, set up logging and the loader. */
#include "ember/ember.h"
#include "shim.h"

struct ember_config ember_cfg;
bool ember_active;

void ember_loader_init(void);

/*
 * Runs when the library is loaded. It only reads the environment: the real
 * driver is opened on the first CUDA call, so a program that never uses
 * CUDA never pays for it.
 */
__attribute__((constructor)) static void ember_init(void)
{
	char err[512];
	int rc = ember_config_load(&ember_cfg, err, sizeof err);
	ember_log_init(ember_cfg.log_level, ember_cfg.log_file);
	ember_loader_init();
	ember_active = ember_cfg.enabled && rc == 0;
	if (rc != 0)
		ember_error("%s; Ember is passing every call straight to the driver", err);
	else if (!ember_cfg.enabled)
		ember_info("EMBER=0: passing every call straight to the driver");
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
