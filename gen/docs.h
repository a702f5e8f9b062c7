/* The build's documents made from the EMBER_* table, besides environment.md. */
#ifndef EMBER_GEN_DOCS_H
#define EMBER_GEN_DOCS_H

#include <stdio.h>

/* A man page: the source in copied to out, its directives expanded (man.c); 0, or -1 with a line on stderr. */
int ember_docs_man(FILE *in, FILE *out, const char *page, const char *version, const char *date);

/* An example ember.conf: every variable commented out at its default, with what it does (conf.c). */
void ember_docs_conf(FILE *out);

#endif
