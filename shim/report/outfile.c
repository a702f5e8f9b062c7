/* Output files: paths with %p, and a safe creation. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "outfile.h"

bool ember_outfile_path(const char *pattern, char *out, size_t size)
{
	size_t n = 0;
	for (const char *p = pattern; *p; p++) {
		bool pid = p[0] == '%' && p[1] == 'p';
		int w = pid ? snprintf(out + n, size - n, "%d", (int)getpid()) : snprintf(out + n, size - n, "%c", *p);
		if (w < 0 || (size_t)w >= size - n)
			return false;
		n += (size_t)w;
		p += pid;
	}
	return n > 0;
}

int ember_outfile_create(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
}
