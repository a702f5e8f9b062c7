/* Files Ember writes for its user: private, created anew, never through a planted link. */
#ifndef EMBER_OUTFILE_H
#define EMBER_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

/* pattern with each "%p" replaced by the process ID; false when it does not fit. */
bool ember_outfile_path(const char *pattern, char *out, size_t size);

/* Create (or truncate) the file for writing, mode 0600, refusing a symbolic link. -1 on failure. */
int ember_outfile_create(const char *path);

#endif
