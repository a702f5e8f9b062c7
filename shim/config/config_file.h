/*
 * The configuration files (ember.conf(5)): /etc/ember.conf, then the
 * user's $XDG_CONFIG_HOME/ember/ember.conf, or the list EMBER_CONFIG_FILE
 * names instead. Each file overrides the one before it, and the
 * environment overrides them all (config.c).
 */
#ifndef EMBER_CONFIG_FILE_H
#define EMBER_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>

#define EMBER_CONFIG_SYSTEM_FILE "/etc/ember.conf"
/* A file larger than this is not a configuration file: refused, not read in part. */
#define EMBER_CONFIG_FILE_MAX_BYTES (64u << 10)

/* One NAME=value line of a file. */
struct ember_setting {
	const char *name, *value;
	const char *file;
	unsigned line;
};

/* Who may own a file Ember reads its settings from. */
enum ember_conf_trust {
	EMBER_CONF_SYSTEM, /* root only */
	EMBER_CONF_USER,   /* root or the user the process runs as */
};

/*
 * Forget the files read before, and read the ones that apply: under
 * secure execution /etc/ember.conf alone (the caller's environment and home
 * are not the program's), else EMBER_CONFIG_FILE's list when it is set,
 * else /etc/ember.conf and the user's file. A file that is absent is
 * skipped without a word.
 */
void ember_config_files_read(bool secure);

/*
 * Read one more file: each line EMBER_NAME=value, '#' comments, blank
 * lines. The file must be a regular file (a symbolic link is not followed),
 * at most EMBER_CONFIG_FILE_MAX_BYTES, owned as trust says and writable by
 * its owner only. Returns 0 when it was read, -1 when it is absent or
 * refused (a note says why, unless it is absent).
 */
int ember_config_file_read(const char *path, enum ember_conf_trust trust);

/* Forget every file read, their settings and notes. */
void ember_config_files_clear(void);

/* The setting the files give name, the last one read winning, or NULL. Valid until the files are read again. */
const struct ember_setting *ember_config_file_setting(const char *name);

/* Every setting read, in the order read. */
const struct ember_setting *ember_config_file_settings(size_t *count);

/* The lines and files ignored, one log line each ("/etc/ember.conf:3: ..."), in the order met. */
const char *const *ember_config_file_notes(size_t *count);

#endif
