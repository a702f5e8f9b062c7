/*
 * The EMBER_* table as roff, for the man pages: a page's source in docs/man/
 * is copied through, and its directive lines are replaced by the table's
 * entries, so a variable is described in one place only (config.def).
 *   @VARIABLES@        every variable
 *   @VARIABLE NAME@    one (a per-GPU one by its prefix, EMBER_BUDGET_)
 * @VERSION@ and @DATE@ anywhere in a line become the build's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "docs.h"

/*
 * Text as roff, from column on: backslashes escaped, a "--" option's dashes
 * as minus signs, a new line after each sentence and before a word would
 * pass column 72, and no line that starts with a control character.
 */
static void roff(FILE *out, const char *s, size_t column)
{
	for (const char *p = s; *p; p++) {
		bool sentence_end = p > s && p[-1] == '.' && p[1] >= 'A' && p[1] <= 'Z';
		if (*p == ' ' && (column + 1 + strcspn(p + 1, " ") > 72 || sentence_end)) {
			fputc('\n', out);
			column = 0;
			continue;
		}
		if (column == 0 && (*p == '.' || *p == '\''))
			fputs("\\&", out);
		if (*p == '\\')
			fputs("\\e", out);
		else if (*p == '-' && (p[1] == '-' || (p > s && p[-1] == '-')))
			fputs("\\-", out);
		else
			fputc(*p, out);
		column++;
	}
}

/* An option's name, every dash a minus sign (copied from the page, it must be the ASCII one). */
static void minus(FILE *out, const char *s)
{
	for (; *s; s++)
		if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
}

/* One variable: its name and ember-run option as the tag, then what it does, the accepted form and the default. */
static void entry(FILE *out, const struct ember_var_doc *d)
{
	char option[64];
	ember_config_option_name(d->name, option, sizeof option);
	fputs(".TP\n", out);
	fprintf(out, "\\fB%s\\fR%s", d->name, d->per_gpu ? "\\fIn\\fR" : "");
	if (*option) {
		fputs(" (\\fBember\\-run \\-\\-", out);
		minus(out, option);
		fprintf(out, "\\fR%s)", d->per_gpu ? "\\fIn\\fR" : "");
	}
	fputs("\n", out);
	roff(out, d->doc, 0);
	fputs("\n.br\nAccepted: ", out);
	roff(out, d->accepted, strlen("Accepted: "));
	fputs(".\nDefault: ", out);
	if (*d->def) {
		fputs("\\fB", out);
		roff(out, d->def, strlen("Default: "));
		fputs("\\fR.\n", out);
	} else {
		fputs("unset.\n", out);
	}
}

/* line without its newline, @VERSION@ and @DATE@ replaced. */
static void substitute(FILE *out, const char *line, const char *version, const char *date)
{
	const struct {
		const char *token, *value;
	} subst[] = { { "@VERSION@", version }, { "@DATE@", date } };
	for (const char *p = line; *p;) {
		size_t i = 0;
		while (i < 2 && strncmp(p, subst[i].token, strlen(subst[i].token)))
			i++;
		if (i < 2) {
			fputs(subst[i].value, out);
			p += strlen(subst[i].token);
		} else {
			fputc(*p++, out);
		}
	}
}

/* A directive line: 0 when it was one and is written, 1 when it is not one, -1 when it names nothing. */
static int directive(FILE *out, const char *line, const char *page, unsigned lineno)
{
	char name[64];
	if (!strcmp(line, "@VARIABLES@")) {
		for (size_t i = 0; i < ember_var_count; i++)
			entry(out, &ember_var_docs[i]);
		return 0;
	}
	if (sscanf(line, "@VARIABLE %63[A-Z0-9_]@", name) == 1) {
		for (size_t i = 0; i < ember_var_count; i++)
			if (!strcmp(ember_var_docs[i].name, name)) {
				entry(out, &ember_var_docs[i]);
				return 0;
			}
	} else if (line[0] != '@') {
		return 1;
	}
	fprintf(stderr, "ember-docs: %s:%u: '%s' names no variable of config.def\n", page, lineno, line);
	return -1;
}

int ember_docs_man(FILE *in, FILE *out, const char *page, const char *version, const char *date)
{
	char line[4096];
	unsigned lineno = 0;
	while (fgets(line, sizeof line, in)) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		int rc = directive(out, line, page, lineno);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			substitute(out, line, version, date);
			fputc('\n', out);
		}
	}
	return ferror(in) ? -1 : 0;
}
