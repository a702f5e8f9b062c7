/*
 * ember-docs: the EMBER_* table of shim/config/config.def as the build's
 * documents.
 *   ember-docs                      Markdown, on stdout (docs/environment.md)
 *   ember-docs --conf --out FILE    an example ember.conf
 *   ember-docs --man PAGE.in --version V --date D --out FILE
 *                                   a man page from its source (man.c)
 * FILE is written whole or not at all, so a failed build leaves no page.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "docs.h"

static void markdown(FILE *out)
{
	fputs("# Ember's environment variables\n\n"
	      "Generated from `shim/config/config.def` by `ember-docs`; `ember-run --help` prints the same "
	      "table. A bad value gets one error line naming the variable and the accepted form, "
	      "and Ember then passes every call straight to the driver.\n\n",
	      out);
	ember_config_describe(out, true);
}

int main(int argc, char **argv)
{
	const char *man = NULL, *version = "", *date = "", *path = NULL;
	int conf = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--conf")) {
			conf = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "usage: ember-docs [--conf | --man PAGE.in --version V --date D] [--out FILE]\n");
			return 2;
		}
		if (!strcmp(a, "--man"))
			man = v;
		else if (!strcmp(a, "--version"))
			version = v;
		else if (!strcmp(a, "--date"))
			date = v;
		else if (!strcmp(a, "--out"))
			path = v;
		else
			return fprintf(stderr, "ember-docs: unknown option %s\n", a), 2;
		i++;
	}
	char tmp[4096];
	FILE *out = stdout, *in = NULL;
	if (path) {
		snprintf(tmp, sizeof tmp, "%s.tmp", path);
		out = fopen(tmp, "w");
	}
	if (man && !(in = fopen(man, "r")))
		fprintf(stderr, "ember-docs: cannot read %s\n", man);
	if (!out || (man && !in)) {
		if (!out)
			fprintf(stderr, "ember-docs: cannot write %s\n", tmp);
		return 1;
	}
	int rc = 0;
	if (man)
		rc = ember_docs_man(in, out, man, version, date);
	else if (conf)
		ember_docs_conf(out);
	else
		markdown(out);
	if (in)
		fclose(in);
	rc |= ferror(out) ? -1 : 0;
	if (path) {
		rc |= fclose(out) != 0 ? -1 : 0;
		if (rc == 0 && rename(tmp, path) != 0)
			rc = -1;
		if (rc != 0)
			remove(tmp);
	}
	return rc != 0;
}
