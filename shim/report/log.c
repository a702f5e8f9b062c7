/*
 * Each log line is formatted into one buffer and written with one write(),
 * so lines from many threads never interleave and logging allocates nothing.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static enum ember_log_level log_level = EMBER_LOG_WARN;
static int log_fd = STDERR_FILENO;
static bool log_time; /* EMBER_LOG_TIME */

static const char *const level_names[] = { "off", "error", "warn", "info", "debug" };

void ember_log_init(enum ember_log_level level, const char *path, bool timestamps)
{
	log_level = level;
	log_time = timestamps;
	if (path && *path) {
		/* private, and never through a link someone planted at the path */
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0)
			log_fd = fd;
		else
			ember_warn("cannot open EMBER_LOG_FILE %s; logging to stderr", path);
	}
}

bool ember_log_enabled(enum ember_log_level level)
{
	return level != EMBER_LOG_OFF && level <= log_level;
}

void ember_log(enum ember_log_level level, const char *fmt, ...)
{
	if (!ember_log_enabled(level))
		return;
	char line[1024];
	int n = 0;
	if (log_time) {
		struct timespec ts;
		struct tm tm;
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
		n += snprintf(line + n, sizeof line - (size_t)n, ".%03ldZ ", ts.tv_nsec / 1000000);
	}
	n += snprintf(line + n, sizeof line - (size_t)n, "ember[%d] %s: ", (int)getpid(), level_names[level]);
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	if (write(log_fd, line, (size_t)n) == n || log_fd == STDERR_FILENO)
		return;
	/* the log file failed (a full disk, /dev/full): say so once on stderr, and log there from now on */
	int failed = log_fd;
	log_fd = STDERR_FILENO;
	close(failed);
	static const char said[] = "ember: writing EMBER_LOG_FILE failed; logging to stderr from now on\n";
	ssize_t unused = write(STDERR_FILENO, said, sizeof said - 1);
	unused = write(STDERR_FILENO, line, (size_t)n);
	(void)unused;
}
