/* The UVM tools device's stand-in (uvm_standin.h): open, open64 and readlink. */
#include "uvm_standin.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

int uvm_standin_fd = -1, uvm_standin_tools_fd = -1;
int (*uvm_standin_open_hook)(const char *path);

int uvm_standin_real_open(const char *path, int flags, mode_t mode)
{
	static int (*next)(const char *, int, ...);
	if (!next)
		next = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	return next(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!strcmp(path, "/dev/nvidia-uvm-tools"))
		return uvm_standin_tools_fd = uvm_standin_real_open("/dev/null", O_RDWR | O_CLOEXEC, 0);
	if (uvm_standin_open_hook) {
		int fd = uvm_standin_open_hook(path);
		if (fd != UVM_STANDIN_PASS)
			return fd;
	}
	return uvm_standin_real_open(path, flags, mode);
}

/* the same function under the large-file name some callers link to */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

ssize_t readlink(const char *path, char *buf, size_t size)
{
	static ssize_t (*next)(const char *, char *, size_t);
	if (!next)
		next = (ssize_t(*)(const char *, char *, size_t))dlsym(RTLD_NEXT, "readlink");
	char mine[64];
	snprintf(mine, sizeof mine, "/proc/self/fd/%d", uvm_standin_fd);
	if (uvm_standin_fd >= 0 && !strcmp(path, mine)) {
		const char *dev = "/dev/nvidia-uvm";
		size_t n = strlen(dev) < size ? strlen(dev) : size;
		memcpy(buf, dev, n);
		return (ssize_t)n;
	}
	return next(path, buf, size);
}

void *uvm_standin_load_shim(char *log_template, const char *mode)
{
	uvm_standin_fd = uvm_standin_real_open("/dev/null", O_RDONLY, 0);
	cr_assert_geq(uvm_standin_fd, 0);
	temp_file_env("EMBER_LOG_FILE", log_template);
	setenv("EMBER_LOG", "info", 1);
	setenv("EMBER_UVM_EVENTS", "1", 1);
	setenv("EMBER_MODE", mode, 1);
	setenv("EMBER_BUDGET", "64M", 1);
	void *sim = load_sim();
	(void)sim;
	return load_shim();
}
