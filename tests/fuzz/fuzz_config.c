/* libFuzzer: every EMBER_* parser, and the whole load, on arbitrary values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	for (size_t i = 0; i < ember_var_count; i++)
		ember_var_docs[i].check(s);
	const char *p = s;
	for (size_t n; (n = ember_path_list_next(&p)) != 0;)
		p += n;
	/* the first byte picks a variable, the rest is its value, through the real loader */
	if (size > 1 && ember_var_count) {
		const struct ember_var_doc *d = &ember_var_docs[data[0] % ember_var_count];
		char name[64];
		snprintf(name, sizeof name, "%s%s", d->name, d->per_gpu ? "0" : "");
		setenv(name, s + 1, 1);
		struct ember_config cfg;
		char err[256];
		ember_config_load(&cfg, err, sizeof err);
		unsetenv(name);
	}
	free(s);
	return 0;
}
