/* Parsing the EMBER_* variables of config.def. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fnmatch.h>
#include <sys/auxv.h>

#include "config.h"
#include "config_file.h"

#define EMBER_KIND(kind)                                                                   \
	static int check_##kind(const char *s)                                             \
	{                                                                                  \
		EMBER_CTYPE_##kind v;                                                      \
		return ember_parse_##kind(s, &v);                                          \
	}
EMBER_KIND(BOOL)
EMBER_KIND(UINT)
EMBER_KIND(SIZE)
EMBER_KIND(BUDGET)
EMBER_KIND(PATH)
EMBER_KIND(PATH_LIST)
EMBER_KIND(PATTERNS)
EMBER_KIND(LOG_LEVEL)
EMBER_KIND(PERCENT)
EMBER_KIND(RATIO)
EMBER_KIND(MODE)
#undef EMBER_KIND

const struct ember_var_doc ember_var_docs[] = {
#define EMBER_VAR(field, name, kind, def, accepted, doc) { #name, def, accepted, doc, check_##kind, false },
#define EMBER_VAR_PER_GPU(field, name, kind, def, accepted, doc)                             \
	{ #name, def, accepted, doc, check_##kind, true },
#include "config.def"
#undef EMBER_VAR
#undef EMBER_VAR_PER_GPU
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

/*
 * The one number grammar of every EMBER_* value: digits, optionally a point
 * and more digits. No sign, exponent, hexadecimal, infinity or spaces, all
 * of which strtod would take ("0x10" is 16 to it, "1e3" is 1000).
 */
static bool decimal(const char *s, double *out, const char **end)
{
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			return false;
		for (p++; isdigit((unsigned char)*p);)
			p++;
	}
	char buf[64];
	if ((size_t)(p - s) >= sizeof buf)
		return false;
	memcpy(buf, s, (size_t)(p - s));
	buf[p - s] = 0;
	errno = 0;
	*out = strtod(buf, NULL);
	*end = p;
	return errno == 0;
}

/*
 * "16G", "512M", "1.5T", "4096", "50%": binary units, case-insensitive,
 * optional "iB"/"B". The empty string is a size left unset.
 */
int ember_parse_SIZE(const char *s, struct ember_size *out)
{
	if (!*s)
		return *out = (struct ember_size){ 0 }, 0;
	double v;
	const char *end;
	if (!decimal(s, &v, &end))
		return -1;
	if (*end == '%') {
		if (end[1] || v <= 0 || v > 100)
			return -1;
		*out = (struct ember_size){ .per_mille = (unsigned)(v * 10 + 0.5) };
		return out->per_mille ? 0 : -1;
	}
	static const char units[] = "KMGTP";
	double scale = 1;
	/* a number alone would be bytes: --budget 16 meant 16 bytes, without a word; only 0 needs no unit */
	if (!*end && v != 0)
		return -1;
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

int ember_parse_BUDGET(const char *s, struct ember_size *out)
{
	return ember_parse_SIZE(s, out) != 0 || (*s && !ember_size_is_set(*out)) ? -1 : 0;
}

int ember_parse_PATH(const char *s, const char **out)
{
	if (*s && *s != '/')
		return -1;
	*out = s;
	return 0;
}

int ember_parse_PATTERNS(const char *s, const char **out)
{
	if (*s && (strchr(s, '/') || strlen(s) > 1024 || *s == ':' || s[strlen(s) - 1] == ':' || strstr(s, "::")))
		return -1;
	*out = s;
	return 0;
}

bool ember_patterns_match(const char *patterns, const char *name)
{
	for (const char *p = patterns; p && *p;) {
		size_t n = strcspn(p, ":");
		char one[1025];
		if (n < sizeof one) {
			memcpy(one, p, n);
			one[n] = 0;
			if (fnmatch(one, name, 0) == 0)
				return true;
		}
		p += n + (p[n] == ':');
	}
	return false;
}

size_t ember_path_list_next(const char **p)
{
	while (**p && strchr(EMBER_PATH_LIST_SEPARATORS, **p))
		++*p;
	return strcspn(*p, EMBER_PATH_LIST_SEPARATORS);
}

/*
 * Empty, or absolute folders: every element the loader will split out
 * (ember_path_list_next). An empty element is the current folder to ld.so,
 * so it is refused like a relative one.
 */
int ember_parse_PATH_LIST(const char *s, const char **out)
{
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, EMBER_PATH_LIST_SEPARATORS);
		if (n == 0 || *p != '/')
			return -1;
		p += n;
		if (*p && !*++p)
			return -1; /* a separator last: an empty element after it */
	}
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

/* "90" or "90%": a whole percentage from 1 to 100. */
int ember_parse_PERCENT(const char *s, unsigned *out)
{
	char buf[8];
	size_t n = strlen(s);
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == '%')
		buf[n - 1] = 0;
	unsigned v;
	if (ember_parse_UINT(buf, &v) != 0 || v < 1 || v > 100)
		return -1;
	*out = v;
	return 0;
}

/* A number of at least 1: "2", "1.5". */
int ember_parse_RATIO(const char *s, double *out)
{
	double v;
	const char *end;
	if (!decimal(s, &v, &end) || *end || !(v >= 1.0) || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

int ember_parse_MODE(const char *s, enum ember_mode *out)
{
	static const char *const names[] = { "off", "mapped", "static", "adaptive" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(s, names[i]))
			return *out = (enum ember_mode)i, 0;
	return -1;
}

uint64_t ember_size_resolve(struct ember_size s, uint64_t total)
{
	if (s.per_mille)
		return (uint64_t)((long double)total * s.per_mille / 1000);
	return s.bytes;
}

const char *ember_config_escape(const char *v, size_t max, char *buf, size_t size)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)v; *p && n + 8 < size; p++) {
		if ((size_t)((const char *)p - v) >= max) {
			n += (size_t)snprintf(buf + n, size - n, "...");
			break;
		}
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			buf[n++] = (char)*p;
		else
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", *p);
	}
	buf[n] = 0;
	return buf;
}

/* A value as an error shows it: escaped, and cut short so that the accepted form after it always fits. */
static const char *shown(const char *v, char *buf, size_t size)
{
	return ember_config_escape(v, 80, buf, size);
}

bool ember_config_secure_execution(void)
{
	return getauxval(AT_SECURE) != 0;
}

/* Keep the first error only: one line, naming the first bad variable. */
static void reject(int *rc, char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void reject(int *rc, char *err, size_t errlen, const char *fmt, ...)
{
	if (*rc == 0 && err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	*rc = -1;
}

/* The value of var in effect, and the file line it came from (NULL: the environment, or nowhere). */
static const char *lookup(const char *var, bool secure, const struct ember_setting **from)
{
	const char *v = secure ? NULL : getenv(var);
	*from = v ? NULL : ember_config_file_setting(var);
	return v ? v : *from ? (*from)->value : NULL;
}

void ember_var_name(const struct ember_var_doc *d, unsigned g, char *out, size_t len)
{
	if (d->per_gpu)
		snprintf(out, len, "%s%u", d->name, g);
	else
		snprintf(out, len, "%s", d->name);
}

const char *ember_config_value(const char *var)
{
	const struct ember_setting *from;
	return lookup(var, ember_config_secure_execution(), &from);
}

/* How an error line names a file's line: "/etc/ember.conf:3: ", and "" for the environment. */
static const char *where(const struct ember_setting *from, char *buf, size_t size)
{
	char path[300];
	if (!from)
		return "";
	snprintf(buf, size, "%s:%u: ", ember_config_escape(from->file, 256, path, sizeof path), from->line);
	return buf;
}

/* Where var's value in effect came from, as where() writes it. */
static const char *origin(const char *var, bool secure, char *buf, size_t size)
{
	const struct ember_setting *from;
	lookup(var, secure, &from);
	return where(from, buf, size);
}

/* EMBER_BUDGET_<n> (an environment string or a setting's name) for a GPU the table has no room for. */
static bool beyond_the_table(const char *entry, unsigned *g)
{
	int used = 0;
	return sscanf(entry, "EMBER_BUDGET_%u%n", g, &used) == 1 && used && (entry[used] == '=' || !entry[used]) &&
	       *g >= EMBER_CONFIG_MAX_GPUS;
}

int ember_config_load(struct ember_config *cfg, char *err, size_t errlen)
{
	int rc = 0;
	char seen[128], at[320];
	/*
	 * Under secure execution (setuid, setgid, file capabilities) the
	 * environment and the home folder are the caller's, not the program's
	 * owner's: Ember reads none of them, as ld.so ignores LD_LIBRARY_PATH
	 * there, and runs with its defaults and the administrator's
	 * /etc/ember.conf.
	 */
	bool secure = ember_config_secure_execution();
	ember_config_files_read(secure);
	/*
	 * Defaults come from the same strings the documentation shows (a unit
	 * test checks that each parses); a bad value keeps the default.
	 */
#define LOAD_ONE(kind, var, dst, def, accepted)                                             \
	do {                                                                               \
		ember_parse_##kind(def, dst);                                              \
		const struct ember_setting *from_;                                         \
		const char *v_ = lookup(var, secure, &from_);                              \
		if (v_ && ember_parse_##kind(v_, dst) != 0) {                              \
			reject(&rc, err, errlen, "%s%s=%s is not valid: expected %s",      \
			       where(from_, at, sizeof at), var, shown(v_, seen, sizeof seen), \
			       accepted);                                                  \
			ember_parse_##kind(def, dst);                                      \
		}                                                                          \
	} while (0);
#define EMBER_VAR(field, name, kind, def, accepted, doc) LOAD_ONE(kind, #name, &cfg->field, def, accepted)
#define EMBER_VAR_PER_GPU(field, name, kind, def, accepted, doc)                             \
	for (unsigned g = 0; g < EMBER_CONFIG_MAX_GPUS; g++) {                               \
		char var[64];                                                              \
		snprintf(var, sizeof var, "%s%u", #name, g);                               \
		LOAD_ONE(kind, var, &cfg->field[g], def, accepted)                         \
	}
#include "config.def"
#undef EMBER_VAR
#undef EMBER_VAR_PER_GPU
#undef LOAD_ONE
	/* Relations between variables, and ranges the parsers do not know. */
	unsigned g;
	extern char **environ;
	for (char **e = secure ? NULL : environ; e && *e; e++)
		if (beyond_the_table(*e, &g)) /* it would be silently ignored */
			reject(&rc, err, errlen, "EMBER_BUDGET_%u is not valid: expected a GPU ordinal from 0 to %d",
			       g, EMBER_CONFIG_MAX_GPUS - 1);
	size_t nset;
	const struct ember_setting *set = ember_config_file_settings(&nset);
	for (size_t i = 0; i < nset; i++)
		if (beyond_the_table(set[i].name, &g))
			reject(&rc, err, errlen, "%sEMBER_BUDGET_%u is not valid: expected a GPU ordinal from 0 to %d",
			       where(&set[i], at, sizeof at), g, EMBER_CONFIG_MAX_GPUS - 1);
	if (cfg->low_watermark > cfg->high_watermark)
		reject(&rc, err, errlen, "%sEMBER_LOW_WATERMARK=%u is not valid: expected at most EMBER_HIGH_WATERMARK (%u)",
		       origin("EMBER_LOW_WATERMARK", secure, at, sizeof at), cfg->low_watermark, cfg->high_watermark);
	const struct {
		const char *name;
		unsigned value;
	} at_least_one[] = { { "EMBER_THRESHOLD", cfg->threshold },     { "EMBER_INTERVAL_MS", cfg->interval_ms },
			     { "EMBER_BATCH", cfg->batch_regions },     { "EMBER_STALE_INTERVALS", cfg->stale_intervals },
			     { "EMBER_SCORE_DECAY_MS", cfg->score_decay_ms } };
	for (size_t i = 0; i < sizeof at_least_one / sizeof at_least_one[0]; i++)
		if (at_least_one[i].value == 0)
			reject(&rc, err, errlen, "%s%s=0 is not valid: expected a whole number from 1 up",
			       origin(at_least_one[i].name, secure, at, sizeof at), at_least_one[i].name);
	if (cfg->span.per_mille || cfg->span.bytes < (2u << 20)) {
		const struct ember_setting *from;
		const char *span = lookup("EMBER_SPAN", secure, &from);
		reject(&rc, err, errlen, "%sEMBER_SPAN=%s is not valid: expected a size from 2M up, such as 64M",
		       where(from, at, sizeof at), shown(span ? span : "", seen, sizeof seen));
	}
	return rc;
}

void ember_config_option_name(const char *var, char *out, size_t len)
{
	const char *s = strncmp(var, "EMBER_", 6) == 0 ? var + 6 : "";
	size_t i = 0;
	for (; s[i] && i + 1 < len; i++)
		out[i] = s[i] == '_' ? '-' : (char)tolower((unsigned char)s[i]);
	out[i] = 0;
}

void ember_config_describe(FILE *out, bool markdown)
{
	if (markdown) {
		fputs("| Variable | Default | Accepted | Meaning |\n| --- | --- | --- | --- |\n", out);
		for (size_t i = 0; i < ember_var_count; i++) {
			const struct ember_var_doc *d = &ember_var_docs[i];
			fprintf(out, "| `%s%s` | %s%s%s | %s | %s |\n", d->name, d->per_gpu ? "<n>" : "",
				*d->def ? "`" : "",
				*d->def ? d->def : "(unset)", *d->def ? "`" : "", d->accepted, d->doc);
		}
		return;
	}
	for (size_t i = 0; i < ember_var_count; i++) {
		const struct ember_var_doc *d = &ember_var_docs[i];
		char name[64];
		snprintf(name, sizeof name, "%s%s", d->name, d->per_gpu ? "<n>" : "");
		fprintf(out, "  %-22s %s\n  %-22s accepted: %s; default: %s\n", name, d->doc, "",
			d->accepted, *d->def ? d->def : "(unset)");
	}
}
