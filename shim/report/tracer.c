/* The trace recorder: lines into a buffer, written out as it fills. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ember/trace.h"
#include "launch_scan.h"
#include "locks.h"
#include "monitor.h"
#include "ops_driver.h"
#include "outfile.h"
#include "shim.h"
#include "tracer.h"

bool ember_tracing;

enum { BUFFER = 1 << 16, LINE_MAX_BYTES = 4096 };

static int fd = -1;
static char buffer[BUFFER];
static size_t used;
static uint64_t t0;
static bool failed, ended;

/* Buffer lock held. */
static void flush_buffer(void)
{
	for (size_t off = 0; off < used && !failed;) {
		ssize_t w = write(fd, buffer + off, used - off);
		if (w <= 0) {
			failed = true;
			ember_warn("EMBER_TRACE: writing %s failed; the trace stops here", ember_cfg.trace_path);
			break;
		}
		off += (size_t)w;
	}
	used = 0;
}

/* Append one line (without its newline) to the trace. */
__attribute__((format(printf, 1, 2))) static void line(const char *fmt, ...)
{
	char text[LINE_MAX_BYTES];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof text - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof text - 2)
		n = sizeof text - 2;
	text[n++] = '\n';
	ember_lock(&ember_lock_trace);
	if (!failed && !ended) {
		if (used + (size_t)n > sizeof buffer)
			flush_buffer();
		memcpy(buffer + used, text, (size_t)n);
		used += (size_t)n;
	}
	ember_unlock(&ember_lock_trace);
}

static uint64_t since_start(void)
{
	uint64_t now = ember_driver_now();
	return now > t0 ? now - t0 : 0;
}

void ember_trace_start(void)
{
	if (!ember_cfg.trace_path || !*ember_cfg.trace_path)
		return;
	char path[4096];
	fd = ember_outfile_path(ember_cfg.trace_path, path, sizeof path) ? ember_outfile_create(path) : -1;
	if (fd < 0) {
		ember_warn("EMBER_TRACE: cannot create %s (an existing link is never followed); no trace is recorded",
			   ember_cfg.trace_path);
		return;
	}
	t0 = ember_driver_now();
	ember_tracing = true;
	line("%s %d", EMBER_TRACE_MAGIC, EMBER_TRACE_VERSION);
	ember_info("EMBER_TRACE: recording this run to %s", path);
}

void ember_trace_budget(int dev, const struct ember_device_account *acc)
{
	if (ember_tracing)
		line("D %d %" PRIu64 " %" PRIu64 " %" PRIu64, dev, acc->budget, acc->high, acc->low);
}

void ember_trace_alloc(const struct ember_alloc *a)
{
	if (ember_tracing)
		line("A %" PRIu64 " %" PRIu64 " %d %" PRIu64 " %c", since_start(), a->id, a->device, a->size,
		     a->kind == EMBER_ALLOC_CONVERTED ? 'c' : 'm');
}

void ember_trace_plain(int dev, int64_t bytes)
{
	if (ember_tracing)
		line("P %" PRIu64 " %d %" PRId64, since_start(), dev, bytes);
}

void ember_trace_free(const struct ember_alloc *a)
{
	if (ember_tracing)
		line("F %" PRIu64 " %" PRIu64, since_start(), a->id);
}

void ember_trace_launch(const struct ember_scan *s, const void *stream, bool per_thread)
{
	if (!ember_tracing)
		return;
	char text[LINE_MAX_BYTES - 64] = ""; /* a launch that names no placed memory writes no ranges */
	size_t n = 0;
	unsigned written = 0;
	for (unsigned i = 0; i < s->nptrs && n < sizeof text - 64; i++) {
		unsigned learned;
		const struct ember_alloc *a = s->ptrs[i].alloc;
		uint64_t extent = ember_monitor_extent(s, i, &learned);
		n += (size_t)snprintf(text + n, sizeof text - n, " %" PRIu64 ":%" PRIu64 ":%" PRIu64, a->id,
				      s->ptrs[i].addr - a->base, extent);
		if (ember_monitor_follows(s, i) && n < sizeof text)
			n += (size_t)snprintf(text + n, sizeof text - n, ":%u", s->ptrs[i].param);
		written++;
	}
	char kernel[16] = "-";
	if (s->kernel_number != UINT32_MAX)
		snprintf(kernel, sizeof kernel, "%" PRIu32, s->kernel_number);
	line("L %" PRIu64 " %" PRIu64 " %s %u%s", since_start(), ember_scan_stream_key((CUstream)stream, per_thread),
	     kernel, written, text);
}

void ember_trace_move(const struct ember_move *m, bool ok, uint64_t ns)
{
	if (ember_tracing)
		line("M %" PRIu64 " %" PRIu64 " %u %u %c %d %" PRIu64, since_start(), m->alloc->id, m->first, m->count,
		     m->promote ? 'P' : 'D', ok, ns);
}

void ember_trace_hint(const struct ember_alloc *a, uint64_t offset, uint64_t bytes)
{
	if (ember_tracing)
		line("H %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, since_start(), a->id, offset, bytes);
}

/* Waits shorter than this are the driver's own overhead, not the GPU's work. */
#define WAIT_WORTH_NOTING_NS (50 * 1000)

void ember_trace_wait(uint64_t from, uint64_t to)
{
	if (ember_tracing && to > from + WAIT_WORTH_NOTING_NS && from >= t0)
		line("W %" PRIu64 " %" PRIu64, from - t0, to - t0);
}

void ember_trace_host_phase(uint64_t t, uint32_t phase, bool seen)
{
	if (ember_tracing && t >= t0)
		line("Q %" PRIu64 " %" PRIu32 " %d", t - t0, phase, seen ? 1 : 0);
}

void ember_trace_flush(void)
{
	if (ember_tracing)
		line("X %" PRIu64, since_start());
}

void ember_trace_end(void)
{
	if (!ember_tracing)
		return;
	line("E %" PRIu64, since_start());
	ember_lock(&ember_lock_trace);
	ended = true;
	flush_buffer();
	if (fd >= 0 && close(fd) != 0 && !failed)
		ember_warn("EMBER_TRACE: closing %s failed; the trace may be incomplete", ember_cfg.trace_path);
	fd = -1;
	ember_unlock(&ember_lock_trace);
}
