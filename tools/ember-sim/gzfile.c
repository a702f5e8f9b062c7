/* A gzip stream behind a FILE, through zlib and fopencookie. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "gzfile.h"

static ssize_t gz_read(void *cookie, char *buf, size_t size)
{
	int n = gzread((gzFile)cookie, buf, size > (1u << 30) ? 1u << 30 : (unsigned)size);
	return n < 0 ? -1 : n;
}

static int gz_close(void *cookie)
{
	return gzclose((gzFile)cookie) == Z_OK ? 0 : EOF;
}

FILE *sim_open_maybe_gz(const char *path)
{
	/* gzopen reads plain files too, transparently: one path for both */
	gzFile gz = gzopen(path, "rb");
	if (!gz) {
		if (!errno)
			errno = ENOMEM;
		return NULL;
	}
	cookie_io_functions_t io = { .read = gz_read, .close = gz_close };
	FILE *f = fopencookie(gz, "r", io);
	if (!f)
		gzclose(gz);
	return f;
}
