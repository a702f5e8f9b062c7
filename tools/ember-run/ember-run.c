/*
 * ember-run: run a program with Ember preloaded.
 *
 *   ember-run [options] -- program args...
 *
 * Every EMBER_* variable of shim/config/config.def is also an option: EMBER_LOG is
 * --log, EMBER_REAL_LIBCUDA is --real-libcuda, and so on. Values are checked
 * with the shim's own parsers before the program starts, so a typo is caught
 * here with the same message the shim would give.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "sim_check.h"
#include "config_file.h"
#include "framework_defaults.h"

#ifndef EMBER_VERSION_STRING
#define EMBER_VERSION_STRING "unknown"
#endif

enum driver_choice { DRIVER_AUTO, DRIVER_REAL, DRIVER_SIM };

/*
 * The variable an option sets, written into var: --log is EMBER_LOG, and a
 * per-GPU variable takes its ordinal, --budget-1 being EMBER_BUDGET_1.
 */
static const struct ember_var_doc *var_for_option(const char *opt, char *var, size_t len)
{
	char name[64];
	for (size_t i = 0; i < ember_var_count; i++) {
		const struct ember_var_doc *d = &ember_var_docs[i];
		ember_config_option_name(d->name, name, sizeof name); /* per-GPU rows end in '-' */
		size_t n = strlen(name);
		if (!*name || strncmp(name, opt, n) != 0)
			continue;
		const char *ordinal = opt + n;
		if (!d->per_gpu && *ordinal == 0) {
			snprintf(var, len, "%s", d->name);
			return d;
		}
		unsigned g;
		if (d->per_gpu && ember_parse_UINT(ordinal, &g) == 0 && g < EMBER_CONFIG_MAX_GPUS) {
			snprintf(var, len, "%s%u", d->name, g);
			return d;
		}
	}
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ember-run [options] -- program [args...]\n"
		"\n"
		"Runs program with Ember (a drop-in libcuda.so.1) preloaded, so that CUDA\n"
		"programs use it without any change.\n"
		"\n"
		"options:\n"
		"  --driver auto|real|sim  which driver Ember forwards to: the real one, or the\n"
		"                          simulated one (no GPU needed). auto picks real when\n"
		"                          /dev/nvidiactl exists. Default: auto\n"
		"  --off                   pass every call straight through (EMBER=0)\n"
		"  --shim PATH             the Ember library to preload (default: beside ember-run)\n"
		"  --set NAME=VALUE        set any EMBER_* variable\n"
		"  --dry-run               print the environment and command, do not run\n"
		"  --print-config          print every variable's effective value and where it\n"
		"                          came from (an option, the environment, a file's line\n"
		"                          (ember.conf(5)), the default), and stop\n"
		"  -h, --help              this text\n"
		"  --version               Ember's version\n"
		"\n"
		"Each variable below is also an option: EMBER_LOG=debug is --log debug,\n"
		"EMBER_BUDGET_1=8G is --budget-1 8G.\n"
		"\n"
		"Under EMBER_MANAGE_ALL=1, ember-run sets XLA_PYTHON_CLIENT_PREALLOCATE=false\n"
		"where the environment does not set it, as Ember preloaded without ember-run\n"
		"does: JAX's preallocation is one allocation larger than any budget, which\n"
		"stays on the GPU.\n"
		"\n");
	ember_config_describe(out, false);
	fprintf(out, "\nexamples:\n"
		     "  ember-run --log info -- python3 train.py\n"
		     "  ember-run --driver sim -- ./my_driver_api_program   (no GPU: not for cudart programs)\n");
}

/* The folder of this executable, to find libember.so and libember-sim.so. */
static int self_dir(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	if (n <= 0)
		return -1;
	out[n] = 0;
	char *slash = strrchr(out, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

static int find_library(const char *name, char *out, size_t len)
{
	char dir[PATH_MAX];
	if (self_dir(dir, sizeof dir) != 0)
		return -1;
	/* the build folder's layout, then an install's override directory (packaging/) */
	const char *rel[] = { "../lib", "../lib64", ".", "../lib/ember", "../lib64/ember" };
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char candidate[2 * PATH_MAX], real[PATH_MAX];
		snprintf(candidate, sizeof candidate, "%s/%s/%s", dir, rel[i], name);
		if (realpath(candidate, real)) {
			snprintf(out, len, "%s", real);
			return 0;
		}
	}
	return -1;
}

/* Which variables an option of this command line set, and with which option: --print-config says. */
static struct {
	char var[64], option[80];
} origins[128];
static size_t norigins;

static void note_origin(const char *var, const char *option)
{
	size_t i = 0;
	while (i < norigins && strcmp(origins[i].var, var))
		i++;
	if (i == sizeof origins / sizeof origins[0])
		return;
	snprintf(origins[i].var, sizeof origins[i].var, "%s", var);
	snprintf(origins[i].option, sizeof origins[i].option, "%s", option);
	if (i == norigins)
		norigins++;
}

/* Where var's effective value came from: the option that set it, the environment, a file's line, the default. */
static const char *origin_of(const char *var, char *buf, size_t len)
{
	for (size_t i = 0; i < norigins; i++)
		if (!strcmp(origins[i].var, var))
			return origins[i].option;
	const struct ember_setting *set = ember_config_file_setting(var);
	if (getenv(var) || !set)
		return getenv(var) ? "environment" : "default";
	snprintf(buf, len, "%s:%u", set->file, set->line);
	return buf;
}

static int set_var(const struct ember_var_doc *v, const char *var, const char *value)
{
	if (v->check(value) != 0) {
		fprintf(stderr, "ember-run: %s=%s is not valid: expected %s\n", var, value, v->accepted);
		return -1;
	}
	return setenv(var, value, 1);
}

/*
 * Every variable's effective value and where it came from: an option, the
 * environment, a configuration file's line, the default. Then the lines the
 * files ignored and the first bad value, on stderr; 2 when ember-run would
 * not start a program with this configuration.
 */
static int print_config(void)
{
	struct ember_config cfg;
	char err[512];
	int rc = ember_config_load(&cfg, err, sizeof err); /* reads the files */
	for (size_t i = 0; i < ember_var_count; i++) {
		const struct ember_var_doc *d = &ember_var_docs[i];
		for (unsigned g = 0; g < ember_var_names(d); g++) {
			char var[80], from[PATH_MAX + 16];
			ember_var_name(d, g, var, sizeof var);
			const char *v = ember_config_value(var);
			if (d->per_gpu && !v)
				continue; /* unset GPUs take EMBER_BUDGET */
			printf("%-26s %-22s %s\n", var, v ? v : *d->def ? d->def : "(unset)",
			       origin_of(var, from, sizeof from));
		}
	}
	size_t n;
	const char *const *notes = ember_config_file_notes(&n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "ember-run: %s\n", notes[i]);
	if (rc != 0)
		fprintf(stderr, "ember-run: %s\n", err);
	return rc != 0 ? 2 : 0;
}

static int set_assignment(const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq) {
		fprintf(stderr, "ember-run: --set takes NAME=VALUE, got '%s'\n", arg);
		return -1;
	}
	char var[64];
	size_t n = (size_t)(eq - arg);
	if (n < sizeof var) {
		memcpy(var, arg, n);
		var[n] = 0;
		for (size_t i = 0; i < ember_var_count; i++) {
			const struct ember_var_doc *d = &ember_var_docs[i];
			size_t len = strlen(d->name);
			unsigned g;
			if (!d->per_gpu ? !strcmp(d->name, var)
					: !strncmp(d->name, var, len) && ember_parse_UINT(var + len, &g) == 0 &&
						  g < EMBER_CONFIG_MAX_GPUS) {
				int rc = set_var(d, var, eq + 1);
				if (rc == 0)
					note_origin(var, "--set");
				return rc;
			}
		}
	}
	fprintf(stderr, "ember-run: unknown variable in --set %s (ember-run --help lists them)\n", arg);
	return -1;
}

static int prepend_preload(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old || !*old)
		return setenv("LD_PRELOAD", shim, 1);
	if (strstr(old, shim))
		return 0;
	size_t n = strlen(shim) + strlen(old) + 2;
	char *v = malloc(n);
	if (!v)
		return -1;
	snprintf(v, n, "%s:%s", shim, old);
	int rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc;
}

/* What ember_framework_defaults_apply set, for a dry run to show. */
static unsigned framework_defaults_set;

int main(int argc, char **argv)
{
	enum driver_choice driver = DRIVER_AUTO;
	const char *shim = NULL;
	int dry_run = 0, print_config_only = 0, i = 1;

	for (; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--version")) {
			printf("ember-run %s\n", EMBER_VERSION_STRING);
			return 0;
		}
		if (!strcmp(a, "--off")) {
			setenv("EMBER", "0", 1);
			note_origin("EMBER", "--off");
			continue;
		}
		if (!strcmp(a, "--print-config")) {
			print_config_only = 1;
			continue;
		}
		if (!strcmp(a, "--dry-run")) {
			dry_run = 1;
			continue;
		}
		if (strncmp(a, "--", 2) != 0) {
			fprintf(stderr, "ember-run: '%s' is not an option; put the program after --\n", a);
			return 2;
		}
		/* every remaining option takes a value, as --opt VALUE or --opt=VALUE */
		char opt[64];
		const char *eq = strchr(a, '=');
		size_t optlen = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (optlen >= sizeof opt) {
			fprintf(stderr, "ember-run: unknown option %s\n", a);
			return 2;
		}
		memcpy(opt, a + 2, optlen);
		opt[optlen] = 0;
		const char *value = eq ? eq + 1 : next;
		if (!value) {
			fprintf(stderr, "ember-run: %s needs a value\n", a);
			return 2;
		}
		if (!eq)
			i++;
		int rc = 0;
		if (!strcmp(opt, "driver")) {
			if (!strcmp(value, "auto"))
				driver = DRIVER_AUTO;
			else if (!strcmp(value, "real"))
				driver = DRIVER_REAL;
			else if (!strcmp(value, "sim"))
				driver = DRIVER_SIM;
			else {
				fprintf(stderr, "ember-run: --driver %s is not valid: expected auto, real or sim\n",
					value);
				return 2;
			}
		} else if (!strcmp(opt, "shim")) {
			shim = value;
		} else if (!strcmp(opt, "set")) {
			rc = set_assignment(value);
		} else {
			char var[64];
			const struct ember_var_doc *v = var_for_option(opt, var, sizeof var);
			if (!v) {
				fprintf(stderr, "ember-run: unknown option --%s (see ember-run --help)\n", opt);
				return 2;
			}
			rc = set_var(v, var, value);
			if (rc == 0) {
				char how[80];
				snprintf(how, sizeof how, "--%s", opt);
				note_origin(var, how);
			}
		}
		if (rc != 0)
			return 2;
	}
	if (print_config_only)
		return print_config();
	if (i >= argc - 1) {
		fprintf(stderr, "ember-run: no program given\n\n");
		usage(stderr);
		return 2;
	}
	char **cmd = argv + i + 1;

	char shim_path[PATH_MAX];
	if (shim) {
		snprintf(shim_path, sizeof shim_path, "%s", shim);
	} else if (find_library("libember.so", shim_path, sizeof shim_path) != 0) {
		fprintf(stderr, "ember-run: cannot find libember.so beside ember-run; use --shim PATH\n");
		return 2;
	}
	if (driver == DRIVER_AUTO)
		driver = access("/dev/nvidiactl", F_OK) == 0 ? DRIVER_REAL : DRIVER_SIM;
	if (driver == DRIVER_SIM) {
		char sim[PATH_MAX];
		if (find_library("libember-sim.so", sim, sizeof sim) != 0) {
			fprintf(stderr, "ember-run: cannot find libember-sim.so beside ember-run\n");
			return 2;
		}
		setenv("EMBER_REAL_LIBCUDA", sim, 1);
		char why[160];
		if (ember_run_sim_check(cmd[0], why, sizeof why) != 0) {
			fprintf(stderr,
				"ember-run: the simulated driver cannot serve %s: %s, and the CUDA runtime needs "
				"the real driver's private interfaces. It serves driver-API programs (ember-demo, "
				"the tests). Run it on a GPU (--driver real), or record it there with --trace and "
				"replay the trace with ember-sim.\n",
				cmd[0], why);
			return 2;
		}
	}
	if (prepend_preload(shim_path) != 0) {
		fprintf(stderr, "ember-run: cannot set LD_PRELOAD: %s\n", strerror(errno));
		return 2;
	}

	/* the whole environment as Ember will read it: a bad value stops here (after a dry run), not in the program */
	struct ember_config cfg;
	char err[512];
	bool loaded = ember_config_load(&cfg, err, sizeof err) == 0;
	if (loaded && cfg.manage_all)
		framework_defaults_set = ember_framework_defaults_apply();
	if (dry_run) {
		extern char **environ;
		for (char **e = environ; *e; e++)
			if (!strncmp(*e, "EMBER", 5) || !strncmp(*e, "LD_PRELOAD=", 11))
				printf("%s\n", *e);
		for (size_t k = 0; k < ember_framework_default_count; k++)
			if (framework_defaults_set >> k & 1)
				printf("%s=%s\n", ember_framework_defaults[k].var, ember_framework_defaults[k].value);
		for (char **c = cmd; *c; c++)
			printf("%s%s", *c, c[1] ? " " : "\n");
		return 0;
	}
	if (!loaded) {
		fprintf(stderr, "ember-run: %s; not starting %s\n", err, cmd[0]);
		return 2;
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "ember-run: cannot run %s: %s\n", cmd[0], strerror(errno));
	return 127;
}
