/* Ember's configuration: one struct, filled from the table in config.def. */
#ifndef EMBER_CONFIG_H
#define EMBER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ember_log_level {
	EMBER_LOG_OFF,
	EMBER_LOG_ERROR,
	EMBER_LOG_WARN,
	EMBER_LOG_INFO,
	EMBER_LOG_DEBUG,
};

enum ember_mode {
	EMBER_MODE_OFF,
	EMBER_MODE_MAPPED,
	EMBER_MODE_STATIC,
	EMBER_MODE_ADAPTIVE,
};

#define EMBER_CONFIG_MAX_GPUS 16

/* A size, or a share of something the reader knows (50% of the GPU). */
struct ember_size {
	uint64_t bytes;
	unsigned per_mille; /* > 0 when given as a share; bytes is then 0 */
};

/* An unset size: both fields zero. */
static inline bool ember_size_is_set(struct ember_size s)
{
	return s.bytes || s.per_mille;
}

#define EMBER_CTYPE_BOOL bool
#define EMBER_CTYPE_PERCENT unsigned
#define EMBER_CTYPE_RATIO double
#define EMBER_CTYPE_MODE enum ember_mode
#define EMBER_CTYPE_UINT unsigned
#define EMBER_CTYPE_SIZE struct ember_size
#define EMBER_CTYPE_BUDGET struct ember_size
#define EMBER_CTYPE_PATH const char *
#define EMBER_CTYPE_PATH_LIST const char *
#define EMBER_CTYPE_PATTERNS const char *
#define EMBER_CTYPE_LOG_LEVEL enum ember_log_level

struct ember_config {
#define EMBER_VAR(field, name, kind, def, accepted, doc) EMBER_CTYPE_##kind field;
#define EMBER_VAR_PER_GPU(field, name, kind, def, accepted, doc)                             \
	EMBER_CTYPE_##kind field[EMBER_CONFIG_MAX_GPUS];
#include "config.def"
#undef EMBER_VAR
#undef EMBER_VAR_PER_GPU
};

/* One row of the table, for documentation and --help. */
struct ember_var_doc {
	const char *name, *def, *accepted, *doc;
	int (*check)(const char *value); /* 0 when value is acceptable */
	bool per_gpu;                    /* read as name0, name1, ...; shown as name<n> */
};
extern const struct ember_var_doc ember_var_docs[];
extern const size_t ember_var_count;

/*
 * Fill cfg: the defaults, then the configuration files (config_file.h),
 * each overriding the one before, then the environment over them all.
 * Returns 0, or -1 with a one-line message in err naming the first bad
 * variable, the file and line it came from, and the accepted form; cfg then
 * holds defaults for every variable that could not be read. The files'
 * values, and the notes on lines they ignored, stay until the next load.
 */
int ember_config_load(struct ember_config *cfg, char *err, size_t errlen);

/*
 * The value of var in effect for this process, as ember_config_load reads
 * it (the environment unless under secure execution, then the files), or
 * NULL when it is unset.
 */
const char *ember_config_value(const char *var);

/* How many variables d stands for: one, or one per GPU ordinal (EMBER_BUDGET_0, ...). */
static inline unsigned ember_var_names(const struct ember_var_doc *d)
{
	return d->per_gpu ? EMBER_CONFIG_MAX_GPUS : 1;
}

/* The name of the gth of them (g < ember_var_names(d)). */
void ember_var_name(const struct ember_var_doc *d, unsigned g, char *out, size_t len);

/* Whether name (len bytes, not NUL-terminated) is the table's, a per-GPU one with its ordinal. */
bool ember_config_known_name(const char *name, size_t len);

/*
 * v as a log line may show it: printable ASCII kept, other bytes as \xNN (a
 * newline cannot forge a second line), cut with "..." after max characters.
 */
const char *ember_config_escape(const char *v, size_t max, char *buf, size_t size);

/*
 * entry is one environment string: when it is NAME=value with an EMBER_*
 * NAME the table does not define but nearly matches (at most two edits),
 * copies NAME into name and returns the table's nearest name; else NULL.
 */
const char *ember_config_near_miss(const char *entry, char *name, size_t namelen);

/* The parsers, exposed for tools (ember-run validates its options). */
int ember_parse_BOOL(const char *s, bool *out);
int ember_parse_UINT(const char *s, unsigned *out);
int ember_parse_SIZE(const char *s, struct ember_size *out);
/* A size that, when given, is at least one byte: "0" or "0.5" would mean no budget, and so the whole GPU. */
int ember_parse_BUDGET(const char *s, struct ember_size *out);
int ember_parse_PATH(const char *s, const char **out);
/* Program-name patterns, ':'-separated: each non-empty and a name, not a path (no '/'). */
int ember_parse_PATTERNS(const char *s, const char **out);
/* Whether name matches one of patterns (fnmatch); an empty list matches nothing. */
bool ember_patterns_match(const char *patterns, const char *name);
int ember_parse_PATH_LIST(const char *s, const char **out);

/* A path list splits at ':' and ';', as ld.so splits LD_LIBRARY_PATH: the one syntax of every list. */
#define EMBER_PATH_LIST_SEPARATORS ":;"
/* Skip separators at *p, and return the length of the element there (0: the list is done). */
size_t ember_path_list_next(const char **p);

/* Whether this process runs under secure execution (AT_SECURE): then no EMBER_* variable and no user's file is read. */
bool ember_config_secure_execution(void);
int ember_parse_LOG_LEVEL(const char *s, enum ember_log_level *out);
int ember_parse_PERCENT(const char *s, unsigned *out);
int ember_parse_RATIO(const char *s, double *out);
int ember_parse_MODE(const char *s, enum ember_mode *out);

/* Resolve a size against a total (for shares); a plain size is returned as is. */
uint64_t ember_size_resolve(struct ember_size s, uint64_t total);

/*
 * The ember-run option that sets var, without its "--": EMBER_REAL_LIBCUDA
 * is real-libcuda, a per-GPU EMBER_BUDGET_ is budget- (the ordinal follows),
 * and plain EMBER has none (empty).
 */
void ember_config_option_name(const char *var, char *out, size_t len);

/* Write the table as Markdown (docs) or as plain text (--help). */
void ember_config_describe(FILE *out, bool markdown);

#endif
