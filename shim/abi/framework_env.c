/* The frameworks' settings under EMBER_MANAGE_ALL, given at start-up by a preloaded Ember (framework_env.h). */
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>

#include "config.h"
#include "framework_defaults.h"
#include "framework_env.h"
#include "shim.h"

struct load_order {
	const char *self;
	int self_at, libc_at, n;
};

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct load_order *o = data;
	if (info->dlpi_name && o->self_at < 0 && !strcmp(info->dlpi_name, o->self))
		o->self_at = o->n;
	if (info->dlpi_name && o->libc_at < 0 && strstr(info->dlpi_name, "/libc.so."))
		o->libc_at = o->n;
	o->n++;
	return 0;
}

/* Whether this library was preloaded (LD_PRELOAD, /etc/ld.so.preload): the loader lists it before the C library. */
static bool preloaded(void)
{
	Dl_info self;
	if (!dladdr((void *)ember_framework_env_at_start, &self) || !self.dli_fname)
		return false;
	struct load_order o = { self.dli_fname, -1, -1, 0 };
	dl_iterate_phdr(visit, &o);
	return o.self_at >= 0 && o.libc_at >= 0 && o.self_at < o.libc_at;
}

/*
 * Under EMBER_MANAGE_ALL, the frameworks' settings ember-run gives, for a
 * process Ember was preloaded into: its constructor runs before the
 * program's main, so the program reads them as its own (Python copies its
 * environment at start). Loaded later (dlopen by a framework, through the
 * loader's path), it leaves the environment alone: the program has read it.
 */
void ember_framework_env_at_start(void)
{
	if (!ember_cfg.manage_all || ember_config_secure_execution() || !preloaded())
		return;
	unsigned set = ember_framework_defaults_apply();
	for (size_t i = 0; i < ember_framework_default_count; i++)
		if (set >> i & 1)
			ember_info("EMBER_MANAGE_ALL: %s=%s, as ember-run sets it: %s", ember_framework_defaults[i].var,
				   ember_framework_defaults[i].value, ember_framework_defaults[i].why);
}
