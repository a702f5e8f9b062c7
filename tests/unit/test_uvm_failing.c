/*
 * A UVM tools device that is there but fails: this test program stands in
 * for the device. The process gets a descriptor that /proc/self/fd names
 * /dev/nvidia-uvm (as the driver's own, opened at cuInit), and opening
 * /dev/nvidia-uvm-tools gives /dev/null, whose ioctls all fail, so the
 * driver seems to refuse the event tracker. Ember must say so in exactly
 * one line and go on placing, the program's bytes intact. The program's own
 * open() and readlink() are found before the C library's by every library
 * in the process, the shim included.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"

#define MiB (1ull << 20)

static int fake_uvm_fd = -1;

static int real_open(const char *path, int flags, mode_t mode)
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
		return real_open("/dev/null", O_RDWR | O_CLOEXEC, 0);
	return real_open(path, flags, mode);
}

/* the same function under the large-file name some callers link to */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

ssize_t readlink(const char *path, char *buf, size_t size)
{
	static ssize_t (*next)(const char *, char *, size_t);
	if (!next)
		next = (ssize_t(*)(const char *, char *, size_t))dlsym(RTLD_NEXT, "readlink");
	char mine[64];
	snprintf(mine, sizeof mine, "/proc/self/fd/%d", fake_uvm_fd);
	if (fake_uvm_fd >= 0 && !strcmp(path, mine)) {
		const char *dev = "/dev/nvidia-uvm";
		size_t n = strlen(dev) < size ? strlen(dev) : size;
		memcpy(buf, dev, n);
		return (ssize_t)n;
	}
	return next(path, buf, size);
}

Test(uvm_failing, a_refused_event_tracker_costs_one_line_and_nothing_else)
{
	fake_uvm_fd = real_open("/dev/null", O_RDONLY, 0);
	cr_assert_geq(fake_uvm_fd, 0);
	char log[] = "/tmp/ember-uvm-failing-XXXXXX";
	temp_file_env("EMBER_LOG_FILE", log);
	setenv("EMBER_LOG", "info", 1);
	setenv("EMBER_UVM_EVENTS", "1", 1);
	setenv("EMBER_MODE", "static", 1);
	setenv("EMBER_BUDGET", "64M", 1);
	void *sim = load_sim();
	void *shim = load_shim();
	(void)sim;
	CUmodule mod = start_context(shim);
	CUfunction reread;
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread, mod, "ember_reread_sum"));
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, 40 * MiB, CU_MEM_ATTACH_GLOBAL));
	memset((void *)p, 0x5e, 40 * MiB);
	for (int i = 0; i < 5; i++)
		launch_reread(shim, reread, p, 40 * MiB);
	cr_assert_eq(SYM(shim, ember_flush)(), 0);
	struct ember_region_info info;
	cr_assert_eq(SYM(shim, ember_region_info)((void *)p, &info), 0);
	cr_expect_eq(info.state, 2, "the split went ahead: resident");
	for (size_t i = 0; i < 40 * MiB; i += 4099)
		cr_assert_eq(((unsigned char *)p)[i], 0x5e, "byte %zu", i);
	char buf[8192];
	cr_assert_gt(read_file(log, buf, sizeof buf), 0);
	unlink(log);
	cr_expect_eq(lines_with(buf, "UVM tools event queue not used"), 1, "one line: %s", buf);
	cr_expect_not_null(strstr(buf, "the driver refused the event tracker"), "%s", buf);
}
