/*
 * Secure execution: a setgid (or setuid) program that loads Ember must not
 * take its configuration from the caller's environment. Before the fix,
 * EMBER_REAL_LIBCUDA made such a program load any library, with its
 * privileges. The probe is made setgid here, which needs root and a file
 * system without nosuid; elsewhere the test skips.
 */
#include <criterion/criterion.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Run the probe as it is, or made setgid; its one line of output in line. */
static void probe(bool setgid_bit, char *line, size_t len)
{
	char copy[PATH_MAX];
	/* one copy per case: Criterion runs the cases side by side */
	snprintf(copy, sizeof copy, "%s.%s.%d", EMBER_PROBE_PATH, setgid_bit ? "setgid" : "plain", (int)getpid());
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", EMBER_PROBE_PATH, copy);
	cr_assert_eq(system(cmd), 0);
	if (setgid_bit) {
		cr_assert_eq(chown(copy, 0, 65534), 0); /* the group nogroup: not the caller's */
		cr_assert_eq(chmod(copy, 02755), 0);
	}
	setenv("EMBER_LOG", "debug", 1);
	snprintf(cmd, sizeof cmd, "'%s' '%s' 2>/dev/null", copy, EMBER_SHIM_PATH);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	line[0] = 0;
	char *got = fgets(line, (int)len, f);
	int status = pclose(f);
	unlink(copy);
	cr_assert(got && status == 0, "the probe failed (status %d)", status);
}

Test(secure, the_environment_is_ignored_under_secure_execution)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to make a setgid program");
	char plain[512], secure[512];
	setenv("EMBER_REAL_LIBCUDA", EMBER_SIM_PATH, 1); /* "load this library": the simulated driver stands in */
	probe(false, plain, sizeof plain);
	cr_expect_not_null(strstr(plain, "secure 0 cuInit 0 "), "without secure execution the variable is honoured: %s",
			   plain);
	probe(true, secure, sizeof secure);
	if (strncmp(secure, "secure 0", 8) == 0)
		cr_skip_test("the build folder is mounted nosuid: the setgid bit has no effect");
	cr_expect_not_null(strstr(secure, "secure 1 "), "%s", secure);
	/* the system's driver may load (and cuInit succeed, on a GPU machine); the caller's never */
	cr_expect_null(strstr(secure, EMBER_SIM_PATH), "EMBER_REAL_LIBCUDA was followed under secure execution: %s",
		       secure);
	cr_expect_null(strstr(secure, "libember-sim"), "a driver named by the caller was loaded: %s", secure);
}

/* The same request made in the caller's files: $HOME/.config/ember/ember.conf, then EMBER_CONFIG_FILE. */
Test(secure, the_users_config_file_is_ignored_under_secure_execution)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to make a setgid program");
	char home[] = "/tmp/ember-secure-XXXXXX", conf[PATH_MAX], cmd[2 * PATH_MAX];
	cr_assert_not_null(mkdtemp(home));
	snprintf(conf, sizeof conf, "%s/.config/ember/ember.conf", home);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s/.config/ember' && echo 'EMBER_REAL_LIBCUDA=%s' >'%s'", home, EMBER_SIM_PATH,
		 conf);
	cr_assert_eq(system(cmd), 0);
	unsetenv("EMBER_REAL_LIBCUDA");
	unsetenv("EMBER_CONFIG_FILE");
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", home, 1);
	for (int via_variable = 0; via_variable < 2; via_variable++) {
		if (via_variable)
			setenv("EMBER_CONFIG_FILE", conf, 1), setenv("HOME", "/nonexistent", 1);
		char plain[512], secure[512];
		probe(false, plain, sizeof plain);
		cr_expect_not_null(strstr(plain, EMBER_SIM_PATH), "without secure execution the file is honoured: %s",
				   plain);
		probe(true, secure, sizeof secure);
		if (strncmp(secure, "secure 0", 8) == 0)
			break; /* nosuid: the other case skips */
		cr_expect_not_null(strstr(secure, "secure 1 "), "%s", secure);
		cr_expect_null(strstr(secure, "libember-sim"), "the caller's %s was read under secure execution: %s",
			       via_variable ? "EMBER_CONFIG_FILE" : "ember.conf", secure);
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
	cr_expect_eq(system(cmd), 0);
}
