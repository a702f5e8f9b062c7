/*
 * The shim's one instance of each core object: its region table, the
 * accounts, the policy context and the engine on the driver backend. The
 * core (shim/policy) never names these; it is handed them.
 */
#ifndef EMBER_STATE_H
#define EMBER_STATE_H

#include "engine.h"

extern struct ember_table ember_shim_table;
extern struct ember_accounts ember_shim_accounts;
extern struct ember_policy_ctx ember_shim_ctx;
extern struct ember_engine ember_shim_engine;

#define EMBER_TABLE (&ember_shim_table)

/* Fill them from the configuration (library constructor). */
void ember_state_init(void);

#endif
