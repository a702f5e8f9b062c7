/* Parsing the EMBER_* variables of config.def. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"

const struct ember_var_doc ember_var_docs[] = {
#define EMBER_VAR(field, name, kind, def, accepted, doc) { #name, def, accepted, doc },
#include "config.def"
#undef EMBER_VAR
};
const size_t ember_var_count = sizeof ember_var_docs / sizeof ember_var_docs[0];

int ember_parse_BOOL(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "on", "yes", "true" };
	static const char *const no[] = { "0", "off", "no", "false" };
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i]))
			return *out = true, 0;
		if (!strcasecmp(s, no[i]))
			return *out = false, 0;
	}
	return -1;
}

int ember_parse_UINT(const char *s, unsigned *out)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v > 0xffffffffUL)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* "16G", "512M", "1.5T", "4096", "50%": binary units, case-insensitive, optional "iB"/"B". */
int ember_parse_SIZE(const char *s, struct ember_size *out)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	if (*end == '%') {
		if (end[1] || v <= 0 || v > 100)
			return -1;
		*out = (struct ember_size){ .per_mille = (unsigned)(v * 10 + 0.5) };
		return out->per_mille ? 0 : -1;
	}
	static const char units[] = "KMGTP";
	double scale = 1;
	if (*end) {
		const char *u = strchr(units, toupper((unsigned char)*end));
		if (!u)
			return -1;
		for (const char *p = units; p <= u; p++)
			scale *= 1024;
		end++;
		if (!strcasecmp(end, "ib") || !strcasecmp(end, "b"))
			end += strlen(end);
		if (*end)
			return -1;
	}
	double bytes = v * scale;
	if (bytes >= 18446744073709551615.0)
		return -1;
	*out = (struct ember_size){ .bytes = (uint64_t)bytes };
	return 0;
}

int ember_parse_PATH(const char *s, const char **out)
{
	if (*s && *s != '/')
		return -1;
	*out = s;
	return 0;
}

int ember_parse_LOG_LEVEL(const char *s, enum ember_log_level *out)
{
	static const char *const names[] = { "off", "error", "warn", "info", "debug" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(s, names[i]))
			return *out = (enum ember_log_level)i, 0;
	return -1;
}

uint64_t ember_size_resolve(struct ember_size s, uint64_t total)
{
	if (s.per_mille)
		return (uint64_t)((long double)total * s.per_mille / 1000);
	return s.bytes;
}

int ember_config_load(struct ember_config *cfg, char *err, size_t errlen)
{
	int rc = 0;
	/*
	 * Defaults come from the same strings the documentation shows; a unit
	 * test checks that each of them parses.
	 */
#define EMBER_VAR(field, name, kind, def, accepted, doc)                                   \
	ember_parse_##kind(def, &cfg->field);                                              \
	{                                                                                  \
		const char *v = getenv(#name);                                             \
		if (v && ember_parse_##kind(v, &cfg->field) != 0) {                        \
			if (rc == 0 && err)                                                \
				snprintf(err, errlen, "%s=%s is not valid: expected %s", #name, v, \
					 accepted);                                         \
			rc = -1;                                                           \
			ember_parse_##kind(def, &cfg->field);                              \
		}                                                                          \
	}
#include "config.def"
#undef EMBER_VAR
	return rc;
}

void ember_config_describe(FILE *out, bool markdown)
{
	if (markdown) {
		fputs("| Variable | Default | Accepted | Meaning |\n| --- | --- | --- | --- |\n", out);
		for (size_t i = 0; i < ember_var_count; i++) {
			const struct ember_var_doc *d = &ember_var_docs[i];
			fprintf(out, "| `%s` | %s%s%s | %s | %s |\n", d->name, *d->def ? "`" : "",
				*d->def ? d->def : "(unset)", *d->def ? "`" : "", d->accepted, d->doc);
		}
		return;
	}
	for (size_t i = 0; i < ember_var_count; i++) {
		const struct ember_var_doc *d = &ember_var_docs[i];
		fprintf(out, "  %-22s %s\n  %-22s accepted: %s; default: %s\n", d->name, d->doc, "",
			d->accepted, *d->def ? d->def : "(unset)");
	}
}
