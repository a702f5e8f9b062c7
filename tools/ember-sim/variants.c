/* The one table of placement variants, and the "key=value,..." parameter
 * string every variant may read its overrides from. */
#include <stdlib.h>
#include <string.h>

#include "variant.h"

const struct sim_variant *const sim_variants_known[] = {
	&sim_variant_uvm, &sim_variant_uvm_noprefetch, &sim_variant_prefetch,
	&sim_variant_mapped, &sim_variant_static, &sim_variant_adaptive, &sim_variant_resident,
	&sim_variant_static_peer, &sim_variant_adaptive_peer, NULL,
};

const struct sim_variant *const sim_variants_all[] = {
	&sim_variant_uvm, &sim_variant_prefetch, &sim_variant_mapped,
	&sim_variant_static, &sim_variant_adaptive, NULL,
};

const struct sim_variant *sim_variant_find(const char *name)
{
	for (unsigned i = 0; sim_variants_known[i]; i++)
		if (!strcmp(sim_variants_known[i]->name, name))
			return sim_variants_known[i];
	return NULL;
}

int sim_param_get(const char *params, const char *key, char *buf, unsigned len)
{
	size_t kl = strlen(key);
	for (const char *s = params; s && *s;) {
		const char *end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		if ((size_t)(end - s) > kl && !strncmp(s, key, kl) && s[kl] == '=') {
			size_t vl = (size_t)(end - s) - kl - 1;
			if (vl >= len)
				vl = len - 1;
			memcpy(buf, s + kl + 1, vl);
			buf[vl] = 0;
			return 1;
		}
		s = *end ? end + 1 : end;
	}
	return 0;
}

double sim_param_double(const char *params, const char *key, double dflt)
{
	char buf[64], *end;
	if (!sim_param_get(params, key, buf, sizeof buf))
		return dflt;
	double d = strtod(buf, &end);
	return end != buf && !*end ? d : dflt;
}
