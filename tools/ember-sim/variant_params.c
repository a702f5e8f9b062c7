/* The parameters Ember's variants replay with (variant_params.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* the shim's options table */
#include "variant_params.h"

/* The default of an EMBER_* variable in the shim's one options table. */
static const char *shim_default(const char *name)
{
	for (size_t i = 0; i < ember_var_count; i++)
		if (!strcmp(ember_var_docs[i].name, name))
			return ember_var_docs[i].def;
	abort(); /* a name the table lost: a build that must not pass its tests */
}

double sim_shim_param(const struct sim_env *env, const char *key)
{
	char name[64] = "EMBER_";
	for (size_t i = 0; key[i] && 6 + i + 1 < sizeof name; i++)
		name[6 + i] = (char)toupper((unsigned char)key[i]);
	return sim_param_double(env->params, key, strtod(shim_default(name), NULL));
}

unsigned sim_watermark(const struct sim_env *env, const char *key, unsigned recorded)
{
	return recorded ? (unsigned)sim_param_double(env->params, key, recorded) : (unsigned)sim_shim_param(env, key);
}

struct ember_policy_params sim_policy_params(const struct sim_env *env)
{
	struct ember_size span = { 0 };
	ember_parse_SIZE(shim_default("EMBER_SPAN"), &span);
	return (struct ember_policy_params){
		.span_regions = (uint32_t)(sim_param_double(env->params, "span_mib", (double)(span.bytes >> 20)) / 2),
		.threshold = (uint32_t)sim_shim_param(env, "threshold"),
		.interval_ns = (uint64_t)(sim_shim_param(env, "interval_ms") * EMBER_NS_PER_MS),
		.batch_regions = (uint32_t)sim_shim_param(env, "batch"),
		.exchange_regions = (uint32_t)sim_shim_param(env, "exchange"),
		.heat_ratio = sim_shim_param(env, "heat_ratio"),
		.partial_rank = sim_shim_param(env, "partial_rank") != 0,
		.pieces = sim_shim_param(env, "pieces") != 0,
		.stale_intervals = (uint32_t)sim_shim_param(env, "stale_intervals"),
		.protection = sim_shim_param(env, "protection") != 0,
		.base_grace_ns = (uint64_t)(sim_shim_param(env, "base_grace_ms") * EMBER_NS_PER_MS),
		.return_window_ns = (uint64_t)(sim_shim_param(env, "return_window_ms") * EMBER_NS_PER_MS),
		.score_grace_ns = (uint64_t)(sim_shim_param(env, "score_grace_ms") * EMBER_NS_PER_MS),
		.max_grace_ns = (uint64_t)(sim_shim_param(env, "max_grace_ms") * EMBER_NS_PER_MS),
		.score_decay_ns = (uint64_t)(sim_shim_param(env, "score_decay_ms") * EMBER_NS_PER_MS),
	};
}
