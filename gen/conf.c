/*
 * The example ember.conf installed beside the documentation: every
 * variable of config.def, commented out at its default, so that a copy in
 * /etc or ~/.config/ember changes nothing until a line is uncommented.
 */
#include <string.h>

#include "config.h"
#include "docs.h"

enum { WIDTH = 78 };

/* lead and text as '#' comment lines of at most WIDTH columns, broken at spaces. */
static void comment(FILE *out, const char *lead, const char *text)
{
	int used = fprintf(out, "# %s", lead);
	while (*text) {
		size_t room = WIDTH - (size_t)used, n = strlen(text);
		if (n > room) {
			n = room;
			while (n > 0 && text[n] != ' ')
				n--;
			if (n == 0) /* one word longer than the line */
				n = strcspn(text, " ");
		}
		fprintf(out, "%.*s\n", (int)n, text);
		text += n;
		text += strspn(text, " ");
		if (*text)
			used = fprintf(out, "# ");
	}
}

void ember_docs_conf(FILE *out)
{
	fputs("# ember.conf: Ember's settings for every program that loads it; see ember.conf(5).\n"
	      "# Read from /etc/ember.conf (the machine), then ~/.config/ember/ember.conf\n"
	      "# ($XDG_CONFIG_HOME/ember/ember.conf, the user), each over the one before;\n"
	      "# the environment and ember-run's options override both.\n"
	      "# One EMBER_NAME=value a line. Every variable is here at its default,\n"
	      "# commented out: uncomment a line to change it.\n",
	      out);
	for (size_t i = 0; i < ember_var_count; i++) {
		const struct ember_var_doc *d = &ember_var_docs[i];
		if (!strcmp(d->name, "EMBER_CONFIG_FILE"))
			continue; /* it chooses the files: a file cannot set it */
		fputs("\n", out);
		comment(out, "", d->doc);
		comment(out, "Accepted: ", d->accepted);
		fprintf(out, "#%s%s=%s\n", d->name, d->per_gpu ? "0" : "", d->def);
	}
}
