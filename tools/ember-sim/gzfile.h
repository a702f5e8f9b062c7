/* Opening a trace that may be gzip-compressed, as an ordinary FILE. */
#ifndef EMBER_SIM_GZFILE_H
#define EMBER_SIM_GZFILE_H

#include <stdio.h>

/* path for reading; a .gz file (by its magic bytes) is decompressed as it is read. NULL with errno set. */
FILE *sim_open_maybe_gz(const char *path);

#endif
