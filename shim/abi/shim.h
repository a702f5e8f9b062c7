/* What the shim's parts share. */
#ifndef EMBER_SHIM_H
#define EMBER_SHIM_H

#include <stdbool.h>

#include "api.h"
#include "config.h"
#include "log.h"

#define EMBER_PUBLIC __attribute__((visibility("default")))

/* Filled once by the library constructor; read-only afterwards. */
extern struct ember_config ember_cfg;
/* False when EMBER=0 or a variable was bad: every hook then passes through. */
extern bool ember_active;

/*
 * True for exactly one caller, the first to get here; a plain load after
 * that, so a flag checked on every launch is not written on every launch.
 */
static inline bool ember_first_time(bool *done)
{
	return !__atomic_load_n(done, __ATOMIC_RELAXED) && !__atomic_exchange_n(done, true, __ATOMIC_RELAXED);
}

/* "off", "mapped", "static", "adaptive" */
const char *ember_mode_name(enum ember_mode m);

/* One pointer per export: the lazy stub until first use, then the driver's. */
extern void *volatile ember_slot_table[EMBER_SLOT_COUNT];

/*
 * The driver's own function for an export, with its exact prototype, for
 * hooks that forward. One load, no lock; before the first call the slot
 * holds the lazy stub, which resolves itself when called. The load is atomic:
 * ember_resolve_slot stores the slot while other threads read it, and a
 * plain read of it is a data race (TSan found one, cuGetProcAddress_v2
 * against a resolving thread, in test_threads); on x86_64 it is the same mov.
 */
#define EMBER_REAL(name) \
	((__typeof__(&name))__atomic_load_n(&ember_slot_table[EMBER_SLOT_##name], __ATOMIC_ACQUIRE))

/* Used by the lazy stubs: find, store and return the real function. */
void *ember_resolve_slot(unsigned slot);

/* The real driver's dlopen handle (opening it on first use), or NULL. */
void *ember_driver_handle(void);
/* Its absolute path, or "" when none was found. */
const char *ember_driver_path(void);

/* Whether this process has called into the driver at all (without loading it). */
bool ember_driver_used(void);


#endif
