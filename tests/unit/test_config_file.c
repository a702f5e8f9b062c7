/*
 * ember.conf: the files' precedence under the environment, strict lines
 * that cost only themselves, and files refused rather than trusted (a
 * link, a FIFO, a stranger's or a group-writable file, a huge one).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_file.h"

static char dir[64]; /* a mkdtemp name under /tmp */

/* A fresh folder per case, and no file or variable of the machine's in the way. */
static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/ember-conf-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	extern char **environ;
	for (char **e = environ; *e;) {
		if (!strncmp(*e, "EMBER", 5)) {
			char name[128];
			snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
			unsetenv(name);
		} else {
			e++;
		}
	}
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", dir, 1);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(config_file, .init = setup, .fini = teardown);

/* dir/name with text, made with mode; its path in a static slot (four, round-robin). */
static const char *file(const char *name, const char *text, mode_t mode)
{
	static char paths[4][PATH_MAX];
	static unsigned next;
	char *path = paths[next++ % 4];
	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	char *slash = strrchr(path, '/');
	*slash = 0;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
	cr_assert_eq(system(cmd), 0);
	*slash = '/';
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
	return path;
}

static int load(struct ember_config *cfg, char *err, size_t len)
{
	err[0] = 0;
	return ember_config_load(cfg, err, len);
}

/* Whether one of the notes contains needle. */
static bool noted(const char *needle)
{
	size_t n;
	const char *const *notes = ember_config_file_notes(&n);
	for (size_t i = 0; i < n; i++)
		if (strstr(notes[i], needle))
			return true;
	return false;
}

static size_t notes(void)
{
	size_t n;
	ember_config_file_notes(&n);
	return n;
}

Test(config_file, each_file_overrides_the_one_before_and_the_environment_overrides_them_all)
{
	char list[3 * PATH_MAX];
	snprintf(list, sizeof list, "%s:%s", file("first.conf", "EMBER_MODE=adaptive\nEMBER_BUDGET=8G\nEMBER_LOG=info\n", 0644),
		 file("second.conf", "EMBER_BUDGET=4G\n", 0644));
	setenv("EMBER_CONFIG_FILE", list, 1);
	setenv("EMBER_LOG", "debug", 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_ADAPTIVE, "the first file's, set nowhere else");
	cr_expect_eq(cfg.budget.bytes, 4ull << 30, "the second file overrides the first");
	cr_expect_eq(cfg.log_level, EMBER_LOG_DEBUG, "the environment overrides both");
	cr_expect_eq(cfg.span.bytes, 64ull << 20, "set nowhere: the default");
	const struct ember_setting *s = ember_config_file_setting("EMBER_BUDGET");
	cr_assert_not_null(s);
	cr_expect_str_eq(s->value, "4G");
	cr_expect_eq(s->line, 1);
	cr_expect_not_null(strstr(s->file, "/second.conf"), "%s", s->file);
	cr_expect_eq(notes(), 0);
	/* what the exit statistics name as the settings: the value in effect, from wherever it came */
	cr_expect_str_eq(ember_config_value("EMBER_BUDGET"), "4G");
	cr_expect_str_eq(ember_config_value("EMBER_LOG"), "debug");
	cr_expect_null(ember_config_value("EMBER_SPAN"), "unset: its default is no setting");
}

Test(config_file, the_user_file_is_under_xdg_config_home_else_home)
{
	file(".config/ember/ember.conf", "EMBER_BUDGET=3G\n", 0644);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.budget.bytes, 3ull << 30, "$HOME/.config/ember/ember.conf");
	char xdg[PATH_MAX + 8];
	snprintf(xdg, sizeof xdg, "%s/xdg", dir);
	file("xdg/ember/ember.conf", "EMBER_BUDGET=5G\n", 0644);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.budget.bytes, 5ull << 30, "$XDG_CONFIG_HOME/ember/ember.conf");
	setenv("XDG_CONFIG_HOME", "relative", 1);
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.budget.bytes, 3ull << 30, "a relative XDG_CONFIG_HOME is invalid: the home's");
}

Test(config_file, an_empty_list_reads_no_file)
{
	file(".config/ember/ember.conf", "EMBER_BUDGET=3G\n", 0644);
	setenv("EMBER_CONFIG_FILE", "", 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect(!ember_size_is_set(cfg.budget));
	setenv("EMBER_CONFIG_FILE", "relative.conf", 1);
	cr_expect_eq(load(&cfg, err, sizeof err), -1);
	cr_expect_str_eq(err, "EMBER_CONFIG_FILE=relative.conf is not valid: expected absolute paths separated by ':', or empty for none");
}

Test(config_file, comments_blanks_spaces_and_crlf)
{
	setenv("EMBER_CONFIG_FILE", file("a.conf", "# a comment\n\n   \t\n  EMBER_MODE = mapped  \r\n#EMBER_MODE=off\nEMBER_LOG_FILE=/tmp/x y\nEMBER_BUDGET=", 0644), 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_MAPPED);
	cr_expect_str_eq(cfg.log_file, "/tmp/x y", "the value is the rest of the line, blanks around it trimmed");
	cr_expect(!ember_size_is_set(cfg.budget), "an empty value, last line without a newline: unset");
	cr_expect_eq(notes(), 0);
}

Test(config_file, a_malformed_line_costs_that_line_alone)
{
	setenv("EMBER_CONFIG_FILE", file("a.conf", "EMBER_MODE=mapped\nbudget 16G\nexport EMBER_LOG=info\n=5\nEMBER_BUDGET=2G\n", 0644), 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_MAPPED);
	cr_expect_eq(cfg.budget.bytes, 2ull << 30, "the line after the bad ones still counts");
	cr_expect_eq(cfg.log_level, EMBER_LOG_WARN);
	cr_expect_eq(notes(), 3);
	cr_expect(noted("/a.conf:2: 'budget 16G' is not EMBER_NAME=value; the line is ignored"));
	cr_expect(noted("/a.conf:3: 'export EMBER_LOG=info' is not EMBER_NAME=value"));
	cr_expect(noted("/a.conf:4: '=5' is not EMBER_NAME=value"));
}

Test(config_file, an_unknown_name_is_named_with_the_one_meant)
{
	setenv("EMBER_CONFIG_FILE", file("a.conf", "EMBER_BUDGTE=16G\nEMBER_FROBNICATE=1\nEMBER_CONFIG_FILE=/x\nEMBER_MODE=off\n", 0644), 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_OFF);
	cr_expect(!ember_size_is_set(cfg.budget));
	cr_expect_eq(notes(), 3);
	cr_expect(noted("/a.conf:1: EMBER_BUDGTE is not an Ember variable (did you mean EMBER_BUDGET?); the line is ignored"));
	cr_expect(noted("/a.conf:2: EMBER_FROBNICATE is not an Ember variable; the line is ignored"),
		  "in Ember's own file, every unknown name is named, near or not");
	cr_expect(noted("/a.conf:3: EMBER_CONFIG_FILE chooses the files, so a file cannot set it"));
}

Test(config_file, a_bad_value_is_an_error_naming_the_file_and_line)
{
	setenv("EMBER_CONFIG_FILE", file("a.conf", "EMBER_LOG=info\nEMBER_MODE=adaptve\n", 0644), 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), -1);
	cr_expect(strstr(err, "/a.conf:2: EMBER_MODE=adaptve is not valid: expected off, mapped, static or adaptive"), "%s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_ADAPTIVE, "the default stands in");
	setenv("EMBER_MODE", "mapped", 1);
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "the environment's value is the one in effect, and it is good: %s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_MAPPED);
}

Test(config_file, relations_and_gpu_ordinals_name_the_file_too)
{
	setenv("EMBER_CONFIG_FILE", file("a.conf", "EMBER_BUDGET_16=8G\n", 0644), 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), -1);
	cr_expect(strstr(err, "/a.conf:1: EMBER_BUDGET_16 is not valid: expected a GPU ordinal from 0 to 15"), "%s", err);
	setenv("EMBER_CONFIG_FILE", file("b.conf", "EMBER_LOW_WATERMARK=98\nEMBER_SPAN=1M\n", 0644), 1);
	cr_assert_eq(load(&cfg, err, sizeof err), -1);
	cr_expect(strstr(err, "/b.conf:1: EMBER_LOW_WATERMARK=98 is not valid"), "%s", err);
	setenv("EMBER_LOW_WATERMARK", "80", 1);
	cr_assert_eq(load(&cfg, err, sizeof err), -1);
	cr_expect(strstr(err, "/b.conf:2: EMBER_SPAN=1M is not valid: expected a size from 2M up"), "%s", err);
	setenv("EMBER_CONFIG_FILE", file("c.conf", "EMBER_BUDGET_1=2G\n", 0644), 1);
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.budget_of[1].bytes, 2ull << 30);
}

Test(config_file, a_symbolic_link_is_not_followed)
{
	const char *target = file("target.conf", "EMBER_MODE=off\n", 0644);
	char link[PATH_MAX + 16];
	snprintf(link, sizeof link, "%s/link.conf", dir);
	cr_assert_eq(symlink(target, link), 0);
	setenv("EMBER_CONFIG_FILE", link, 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_ADAPTIVE, "the link's target was read");
	cr_expect(noted("/link.conf: a symbolic link, not followed; the file is ignored"));
}

Test(config_file, a_file_others_can_write_is_refused)
{
	setenv("EMBER_CONFIG_FILE", file("a.conf", "EMBER_MODE=off\n", 0664), 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_ADAPTIVE);
	cr_expect(noted("/a.conf: writable by others than its owner (chmod go-w fixes it); the file is ignored"));
	setenv("EMBER_CONFIG_FILE", file("b.conf", "EMBER_MODE=off\n", 0646), 1);
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_ADAPTIVE, "world-writable");
}

Test(config_file, a_strangers_file_is_refused_and_the_system_file_must_be_roots)
{
	const char *path = file("a.conf", "EMBER_MODE=off\n", 0644);
	if (geteuid() != 0) {
		/* the caller's own file is no root's file */
		cr_expect_eq(ember_config_file_read(path, EMBER_CONF_SYSTEM), -1);
		cr_expect(noted("not by root; the file is ignored"));
		cr_skip_test("needs root to give a file to another user");
	}
	cr_expect_eq(ember_config_file_read(path, EMBER_CONF_SYSTEM), 0, "root's file, not writable by others");
	cr_assert_eq(chown(path, 65534, 65534), 0);
	ember_config_files_clear();
	cr_expect_eq(ember_config_file_read(path, EMBER_CONF_USER), -1);
	cr_expect(noted("/a.conf: owned by uid 65534, neither root nor this user (uid 0); the file is ignored"));
	cr_expect_eq(ember_config_file_read(path, EMBER_CONF_SYSTEM), -1);
	cr_expect(noted("/a.conf: owned by uid 65534, not by root; the file is ignored"));
	cr_expect_null(ember_config_file_setting("EMBER_MODE"));
}

Test(config_file, a_fifo_a_folder_and_a_huge_file_are_refused, .timeout = 10)
{
	char fifo[PATH_MAX + 16];
	snprintf(fifo, sizeof fifo, "%s/fifo.conf", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_expect_eq(ember_config_file_read(fifo, EMBER_CONF_USER), -1, "and it did not wait for a writer");
	cr_expect(noted("/fifo.conf: not a regular file; the file is ignored"));
	cr_expect_eq(ember_config_file_read(dir, EMBER_CONF_USER), -1);
	char *big = malloc(EMBER_CONFIG_FILE_MAX_BYTES + 2);
	memset(big, '#', EMBER_CONFIG_FILE_MAX_BYTES + 1);
	big[EMBER_CONFIG_FILE_MAX_BYTES + 1] = 0;
	cr_expect_eq(ember_config_file_read(file("big.conf", big, 0644), EMBER_CONF_USER), -1);
	cr_expect(noted("/big.conf: larger than 64 KiB; the file is ignored"));
	big[EMBER_CONFIG_FILE_MAX_BYTES] = 0;
	cr_expect_eq(ember_config_file_read(file("full.conf", big, 0644), EMBER_CONF_USER), 0, "64 KiB exactly");
	free(big);
	char missing[PATH_MAX + 16];
	snprintf(missing, sizeof missing, "%s/none.conf", dir);
	size_t before = notes();
	cr_expect_eq(ember_config_file_read(missing, EMBER_CONF_USER), -1);
	cr_expect_eq(notes(), before, "an absent file is not worth a word");
}

Test(config_file, odd_bytes_are_escaped_and_a_nul_costs_its_line)
{
	static const char text[] = "EMBER_MODE=mapped\nbad\033[2Jline\nEMBER_\0LOG=debug\nEMBER_BUDGET=2G\n";
	const char *path = file("a.conf", "", 0644);
	FILE *f = fopen(path, "w");
	fwrite(text, 1, sizeof text - 1, f);
	fclose(f);
	setenv("EMBER_CONFIG_FILE", path, 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), 0, "%s", err);
	cr_expect_eq(cfg.mode, EMBER_MODE_MAPPED);
	cr_expect_eq(cfg.budget.bytes, 2ull << 30);
	cr_expect_eq(cfg.log_level, EMBER_LOG_WARN);
	cr_expect(noted("/a.conf:2: 'bad\\x1b[2Jline' is not EMBER_NAME=value"));
	cr_expect(noted("/a.conf:3: holds a NUL byte; the line is ignored"));
}

Test(config_file, a_value_that_is_bad_and_odd_is_escaped_in_the_error)
{
	setenv("EMBER_CONFIG_FILE", file("a.conf", "EMBER_LOG=loud\033]0;x\n", 0644), 1);
	struct ember_config cfg;
	char err[512];
	cr_assert_eq(load(&cfg, err, sizeof err), -1);
	cr_expect(strstr(err, ":1: EMBER_LOG=loud\\x1b]0;x is not valid"), "%s", err);
}
