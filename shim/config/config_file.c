/*
 * Reading ember.conf files (config_file.h). The reading is strict but
 * never fatal: a line that is not EMBER_NAME=value, or names no Ember
 * variable, costs that line and one note; the other lines still count.
 * The values themselves are checked by ember_config_load, with the
 * environment's parsers, once it knows which one is in effect.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_file.h"

static struct {
	char **texts; /* each file's path and contents; settings point into them */
	size_t ntexts;
	struct ember_setting *settings;
	size_t nsettings;
	char **notes;
	size_t nnotes;
} files;

/* Append one item of size bytes to *array (of *count items); false when memory ran out. */
static bool append(void *array, size_t *count, size_t size, const void *item)
{
	void **a = array;
	char *bigger = realloc(*a, (*count + 1) * size);
	if (!bigger)
		return false;
	memcpy(bigger + *count * size, item, size);
	*a = bigger;
	++*count;
	return true;
}

/* One note: "file:line: what" (no line: the whole file). The file is escaped, so a path cannot forge a log line. */
static void note(const char *file, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(const char *file, unsigned line, const char *fmt, ...)
{
	char path[512], msg[1024];
	ember_config_escape(file, 256, path, sizeof path);
	int n = line ? snprintf(msg, sizeof msg, "%s:%u: ", path, line) : snprintf(msg, sizeof msg, "%s: ", path);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	va_end(ap);
	char *copy = strdup(msg);
	if (copy && !append(&files.notes, &files.nnotes, sizeof copy, &copy))
		free(copy);
}

static char *trim(char *s)
{
	static const char blanks[] = " \t\r";
	s += strspn(s, blanks);
	size_t n = strlen(s);
	while (n && strchr(blanks, s[n - 1]))
		s[--n] = 0;
	return s;
}

/* One line, NUL-terminated in place: a setting, or nothing and perhaps a note. */
static void parse_line(char *s, const char *file, unsigned line)
{
	char shown[128];
	s = trim(s);
	if (!*s || *s == '#')
		return;
	char *eq = strchr(s, '=');
	size_t len = eq ? (size_t)(eq - s) : 0;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!len || len > 63 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") < len) {
		note(file, line, "'%s' is not EMBER_NAME=value; the line is ignored",
		     ember_config_escape(s, 80, shown, sizeof shown));
		return;
	}
	char *name = s;
	name[len] = 0;
	if (!ember_config_known_name(name, len)) {
		char spelt[80];
		const char *meant = ember_config_near_miss(name, spelt, sizeof spelt);
		note(file, line, "%s is not an Ember variable%s%s%s; the line is ignored", name,
		     meant ? " (did you mean " : "", meant ? meant : "", meant ? "?)" : "");
		return;
	}
	if (!strcmp(name, "EMBER_CONFIG_FILE")) {
		note(file, line, "EMBER_CONFIG_FILE chooses the files, so a file cannot set it; the line is ignored");
		return;
	}
	struct ember_setting set = { name, trim(eq + 1), file, line };
	append(&files.settings, &files.nsettings, sizeof set, &set);
}

/* Why a file opened as fd may not be read (a note's text), or NULL. */
static const char *refusal(int fd, enum ember_conf_trust trust, char *why, size_t len)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		snprintf(why, len, "cannot be examined (%s)", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(why, len, "not a regular file");
	else if (trust == EMBER_CONF_SYSTEM && st.st_uid != 0)
		snprintf(why, len, "owned by uid %u, not by root", (unsigned)st.st_uid);
	else if (trust == EMBER_CONF_USER && st.st_uid != 0 && st.st_uid != geteuid())
		snprintf(why, len, "owned by uid %u, neither root nor this user (uid %u)", (unsigned)st.st_uid,
			 (unsigned)geteuid());
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, len, "writable by others than its owner (chmod go-w fixes it)");
	else if (st.st_size > (off_t)EMBER_CONFIG_FILE_MAX_BYTES)
		snprintf(why, len, "larger than %u KiB", EMBER_CONFIG_FILE_MAX_BYTES >> 10);
	else
		return NULL;
	return why;
}

/* The whole file at fd into buf (room for max bytes and a NUL): its length, or -1 when it does not fit. */
static ssize_t read_all(int fd, char *buf, size_t max)
{
	size_t got = 0;
	for (;;) {
		ssize_t n = read(fd, buf + got, max + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > max)
			return -1; /* it grew since fstat */
	}
	buf[got] = 0;
	return (ssize_t)got;
}

int ember_config_file_read(const char *path, enum ember_conf_trust trust)
{
	/* O_NOFOLLOW: a link planted at the path is refused; O_NONBLOCK: a FIFO there cannot hang start-up */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return -1;
		if (errno == ELOOP)
			note(path, 0, "a symbolic link, not followed; the file is ignored");
		else
			note(path, 0, "cannot be opened (%s); the file is ignored", strerror(errno));
		return -1;
	}
	char why[160];
	const char *refused = refusal(fd, trust, why, sizeof why);
	size_t plen = strlen(path) + 1;
	char *block = refused ? NULL : malloc(plen + EMBER_CONFIG_FILE_MAX_BYTES + 1);
	ssize_t size = block ? read_all(fd, block + plen, EMBER_CONFIG_FILE_MAX_BYTES) : -1;
	close(fd);
	if (!refused && size < 0)
		refused = block ? "could not be read whole" : "could not be read (out of memory)";
	if (refused) {
		note(path, 0, "%s; the file is ignored", refused);
		free(block);
		return -1;
	}
	char *fitted = realloc(block, plen + (size_t)size + 1); /* kept while the settings are */
	block = fitted ? fitted : block;
	if (!append(&files.texts, &files.ntexts, sizeof block, &block)) {
		free(block);
		return -1;
	}
	memcpy(block, path, plen);
	char *text = block + plen, *end = text + size;
	unsigned line = 1;
	for (char *p = text; p < end; line++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *stop = nl ? nl : end;
		*stop = 0;
		if (memchr(p, 0, (size_t)(stop - p)))
			note(block, line, "holds a NUL byte; the line is ignored");
		else
			parse_line(p, block, line);
		p = stop + 1;
	}
	return 0;
}

/* $XDG_CONFIG_HOME/ember/ember.conf, else ~/.config/ember/ember.conf; false when neither is known. */
static bool user_file(char *out, size_t len)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;
	if (xdg && *xdg == '/') /* the XDG spec: a relative value is invalid, and ignored */
		n = snprintf(out, len, "%s/ember/ember.conf", xdg);
	else if (home && *home == '/')
		n = snprintf(out, len, "%s/.config/ember/ember.conf", home);
	else
		return false;
	return n > 0 && (size_t)n < len;
}

void ember_config_files_read(bool secure)
{
	ember_config_files_clear();
	char path[PATH_MAX];
	const char *list = secure ? NULL : getenv("EMBER_CONFIG_FILE"), *checked;
	if (list) {
		if (ember_parse_PATH_LIST(list, &checked) != 0)
			return; /* ember_config_load names the bad value */
		for (size_t n; (n = ember_path_list_next(&list)) != 0; list += n)
			if (n < sizeof path) {
				memcpy(path, list, n);
				path[n] = 0;
				ember_config_file_read(path, EMBER_CONF_USER);
			}
		return;
	}
	ember_config_file_read(EMBER_CONFIG_SYSTEM_FILE, EMBER_CONF_SYSTEM);
	if (!secure && user_file(path, sizeof path))
		ember_config_file_read(path, EMBER_CONF_USER);
}

void ember_config_files_clear(void)
{
	for (size_t i = 0; i < files.ntexts; i++)
		free(files.texts[i]);
	for (size_t i = 0; i < files.nnotes; i++)
		free(files.notes[i]);
	free(files.texts);
	free(files.settings);
	free(files.notes);
	memset(&files, 0, sizeof files);
}

const struct ember_setting *ember_config_file_setting(const char *name)
{
	for (size_t i = files.nsettings; i-- > 0;)
		if (!strcmp(files.settings[i].name, name))
			return &files.settings[i];
	return NULL;
}

const struct ember_setting *ember_config_file_settings(size_t *count)
{
	*count = files.nsettings;
	return files.settings;
}

const char *const *ember_config_file_notes(size_t *count)
{
	*count = files.nnotes;
	return (const char *const *)files.notes;
}
