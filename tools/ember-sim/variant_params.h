/*
 * The parameters Ember's variants replay with: each --param key, else the
 * shim's own default from its one options table (config.def), so that a
 * replay places as the shim would with nothing set.
 */
#ifndef EMBER_SIM_VARIANT_PARAMS_H
#define EMBER_SIM_VARIANT_PARAMS_H

#include "policy.h"
#include "variant.h"

/* --param key, else the shim's default of EMBER_<KEY> (key in lower case). */
double sim_shim_param(const struct sim_env *env, const char *key);

/* A watermark: --param key, else what the trace recorded (non-zero), else the shim's default. */
unsigned sim_watermark(const struct sim_env *env, const char *key, unsigned recorded);

/* Table 1's parameters and the shim's other policy defaults, each overridable with --param. */
struct ember_policy_params sim_policy_params(const struct sim_env *env);

#endif
