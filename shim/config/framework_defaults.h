/*
 * The frameworks' own settings that EMBER_MANAGE_ALL needs, given where the
 * environment has none: ember-run sets them for the program it starts, and
 * the shim for a process it was preloaded into (framework_env.c), before
 * the program has read its environment.
 */
#ifndef EMBER_FRAMEWORK_DEFAULTS_H
#define EMBER_FRAMEWORK_DEFAULTS_H

#include <stddef.h>

struct ember_framework_default {
	const char *var, *value;
	const char *why; /* one clause, for the log line that says it was set */
};

extern const struct ember_framework_default ember_framework_defaults[];
extern const size_t ember_framework_default_count;

/* Sets each one the environment lacks (not thread-safe: call before threads). A bit per entry set. */
unsigned ember_framework_defaults_apply(void);

#endif
