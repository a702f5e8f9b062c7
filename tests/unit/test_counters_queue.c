/*
 * The UVM tools queue end to end through the shim: the patched driver's
 * access-counter notifications, and the driver's own migrations to host
 * memory (regions placed again). Through
 * the shim on the simulated driver: this test program stands in for the
 * UVM tools device (its own open and readlink, uvm_standin.c's, and ioctl
 * are found before the C library's by every library in the process, the
 * shim included) and for the module parameter's file. The shim opens the queue, asks for event
 * type 61 when the parameter says 1, and the test writes entries into the
 * queue as the driver would: the same code path as on a GPU, from the
 * queue's bytes to the region table. Without the parameter, or when the
 * driver refuses the type, exactly one line says why, and the launch scan
 * places as before.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "ember/access_counter.h"
#include "ember/ember.h"
#include "ember/uvm_events.h"
#include "ember_sim.h"
#include "harness.h"
#include "uvm_standin.h"

#define MiB (1ull << 20)
#define REGION (2 * MiB)
#define ENTRY 72 /* the 580 driver's V2 entry */

/* The stand-in's state, beside uvm_standin.c's descriptors. */
static const char *param_value;   /* what the module parameter's file holds; NULL: no such file */
static bool refuse_notify;        /* the driver refuses event type 61 */
/* set by the shim's worker (its ioctls), read by the test's thread: atomics */
static unsigned char *queue;
static struct ember_uvm_queue_control *control;
static uint64_t queue_entries;
static uint64_t enabled_types;
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)

/* The module parameter's file, for the stand-in's open(). */
static int open_param(const char *path)
{
	if (strcmp(path, EMBER_AC_UVM_PARAM))
		return UVM_STANDIN_PASS;
	if (!param_value) {
		errno = ENOENT;
		return -1;
	}
	char tmp[] = "/tmp/ember-counters-param-XXXXXX";
	int fd = mkstemp(tmp);
	if (fd >= 0) {
		if (write(fd, param_value, strlen(param_value)) < 0)
			(void)0;
		lseek(fd, 0, SEEK_SET);
		unlink(tmp);
	}
	return fd;
}

/* The driver's tools ioctls, as far as the shim uses them (uvm_events.c, counters_feed.c). */
struct init_tracker_params {
	uint64_t queue_buffer, queue_buffer_entries, control_buffer;
	uint8_t processor_uuid[16];
	uint32_t all_processors, uvm_fd, status;
};
struct enable_events_params {
	uint64_t event_type_flags;
	uint32_t status;
};
enum { INIT_TRACKER_V2 = 76, ENABLE_EVENTS = 58, FLUSH_EVENTS = 67, NV_ERR_INVALID_ARGUMENT = 0x1f };
/* Requests for the driver's test type: a stock driver logs a kernel line for each one it refuses. */
static unsigned test_type_asked;
/* Every request to enable event types, granted or not: the shim makes them after it opens the queue. */
static unsigned enable_requests;

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == uvm_standin_tools_fd && request == INIT_TRACKER_V2) {
		struct init_tracker_params *p = arg;
		__atomic_store_n(&queue_entries, p->queue_buffer_entries, __ATOMIC_RELEASE);
		__atomic_store_n(&queue, (unsigned char *)(uintptr_t)p->queue_buffer, __ATOMIC_RELEASE);
		__atomic_store_n(&control, (struct ember_uvm_queue_control *)(uintptr_t)p->control_buffer,
				 __ATOMIC_RELEASE);
		p->status = 0;
		return 0;
	}
	if (fd >= 0 && fd == uvm_standin_tools_fd && request == ENABLE_EVENTS) {
		struct enable_events_params *p = arg;
		__atomic_fetch_add(&enable_requests, 1, __ATOMIC_RELEASE);
		bool test_type = p->event_type_flags >> EMBER_UVM_EVENT_ACCESS_COUNTER & 1; /* gated: a stock driver */
		if (test_type)
			__atomic_fetch_add(&test_type_asked, 1, __ATOMIC_RELAXED);
		bool notify = p->event_type_flags >> EMBER_AC_UVM_EVENT & 1;
		p->status = test_type || (notify && refuse_notify) ? NV_ERR_INVALID_ARGUMENT : 0;
		if (!p->status)
			__atomic_fetch_or(&enabled_types, p->event_type_flags, __ATOMIC_RELEASE);
		return 0;
	}
	if (fd >= 0 && fd == uvm_standin_fd && request == FLUSH_EVENTS) {
		*(uint32_t *)arg = 0;
		return 0;
	}
	static int (*next)(int, unsigned long, ...);
	if (!next)
		next = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return next(fd, request, arg);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* The driver's next entry, zeroed, at its put (returned in *put). */
static unsigned char *next_entry(uint32_t *put)
{
	*put = LOAD(LOAD(control)->put_behind);
	unsigned char *e = LOAD(queue) + (size_t)(*put % LOAD(queue_entries)) * ENTRY;
	memset(e, 0, ENTRY);
	return e;
}

/* The entry at put published, as the driver's enqueue does. */
static void publish(uint32_t put)
{
	__atomic_store_n(&LOAD(control)->put_ahead, put + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&LOAD(control)->put_behind, put + 1, __ATOMIC_RELEASE);
}

/* Write one notification at the driver's put and publish it. */
static void put_entry(uint64_t va, uint16_t gpu, uint32_t count, uint32_t mask, unsigned char tail)
{
	uint32_t put;
	unsigned char *e = next_entry(&put);
	e[0] = EMBER_AC_UVM_EVENT;
	memcpy(e + EMBER_AC_UVM_GPU, &gpu, 2);
	memcpy(e + EMBER_AC_UVM_COUNT, &count, 4);
	memcpy(e + EMBER_AC_UVM_VA, &va, 8);
	memcpy(e + EMBER_AC_UVM_MASK, &mask, 4);
	uint64_t ts = 1;
	memcpy(e + EMBER_AC_UVM_TIMESTAMP, &ts, 8);
	e[ENTRY - 1] = tail;
	publish(put);
}

/* A migration record as the driver writes it (uvm_events.h's offsets): cause, from src to dst (0: the CPU). */
static void put_migration(uint64_t va, uint64_t bytes, uint8_t cause, uint16_t src, uint16_t dst)
{
	uint32_t put;
	unsigned char *e = next_entry(&put);
	e[0] = EMBER_UVM_EVENT_MIGRATION;
	e[EMBER_UVM_MIGRATION_CAUSE] = cause;
	memcpy(e + EMBER_UVM_MIGRATION_SRC, &src, 2);
	memcpy(e + EMBER_UVM_MIGRATION_DST, &dst, 2);
	memcpy(e + EMBER_UVM_MIGRATION_ADDRESS, &va, 8);
	memcpy(e + EMBER_UVM_MIGRATION_BYTES, &bytes, 8);
	publish(put);
}

/* A case's shim, its kernel and its allocation: 32 MiB (16 regions), every byte 0x3c. */
struct run {
	char log[sizeof "/tmp/ember-counters-queue-XXXXXX"];
	void *shim;
	CUfunction reread;
	CUdeviceptr p;
};

/*
 * The shim on the simulated driver in mode, a 64 MiB budget and 2 MiB
 * spans, the queue read and the module parameter's file stood in for;
 * a context, and the allocation.
 */
static void start(struct run *r, const char *mode)
{
	strcpy(r->log, "/tmp/ember-counters-queue-XXXXXX");
	uvm_standin_open_hook = open_param;
	setenv("EMBER_SPAN", "2M", 1);
	r->shim = uvm_standin_load_shim(r->log, mode);
	CUmodule mod = start_context(r->shim);
	CU_OK(SYM(r->shim, cuModuleGetFunction)(&r->reread, mod, "ember_reread_sum"));
	CU_OK(SYM(r->shim, cuMemAllocManaged)(&r->p, 32 * MiB, CU_MEM_ATTACH_GLOBAL));
	memset((void *)r->p, 0x3c, 32 * MiB);
}

/* n launches over the whole allocation */
static void launch_all(const struct run *r, int n)
{
	for (int i = 0; i < n; i++)
		launch_reread(r->shim, r->reread, r->p, 32 * MiB);
}

static void flush(const struct run *r)
{
	cr_assert_eq(SYM(r->shim, ember_flush)(), 0);
}

static int state_of(const struct run *r, unsigned region)
{
	struct ember_region_info info;
	cr_assert_eq(SYM(r->shim, ember_region_info)((void *)(r->p + (uint64_t)region * REGION), &info), 0);
	return info.state;
}

/* Every byte of the allocation as it was written. */
static void bytes_intact(const struct run *r)
{
	for (size_t i = 0; i < 32 * MiB; i += 4099)
		cr_assert_eq(((unsigned char *)r->p)[i], 0x3c, "byte %zu", i);
}

/* The log read into buf and removed: exactly one line from the access-counter reader. */
static void one_counters_line(struct run *r, char *buf, size_t size)
{
	cr_assert_gt(read_file(r->log, buf, size), 0);
	unlink(r->log);
	cr_expect_eq(lines_with(buf, "access counters:"), 1, "one line: %s", buf);
}

/* Poll every 10 ms, for 3 s at the most, until cond holds: the shim's worker keeps its own time. */
#define WAIT_UNTIL(cond)                                          \
	for (int waited_ = 0; waited_ < 300 && !(cond); waited_++) \
		sleep_ms(10)

/* Wait for the worker to open the queue (it starts at the first launch). */
static void wait_for_queue(void)
{
	WAIT_UNTIL(LOAD(control));
	cr_assert_not_null(LOAD(control), "the shim never initialised the event tracker");
	WAIT_UNTIL(LOAD(enable_requests)); /* opened, then the types asked for: apart, under load */
}

/* Wait for the shim to have read the eight entries a case wrote. */
static void wait_for_eight_read(void)
{
	WAIT_UNTIL(LOAD(LOAD(control)->get_behind) == 8);
	cr_assert_eq(LOAD(LOAD(control)->get_behind), 8, "the shim read the eight entries");
}

Test(counters_queue, notifications_from_the_queue_promote_what_they_name_beyond_the_scan_and_only_that)
{
	param_value = "1\n";
	struct run r;
	start(&r, "adaptive");
	CUdeviceptr p = r.p;
	/* the first launch starts the worker, which opens the queue: one over another allocation */
	CUdeviceptr starter;
	CU_OK(SYM(r.shim, cuMemAllocManaged)(&starter, 2 * MiB, CU_MEM_ATTACH_GLOBAL));
	launch_reread(r.shim, r.reread, starter, 2 * MiB);
	wait_for_queue();
	WAIT_UNTIL(LOAD(enabled_types) >> EMBER_AC_UVM_EVENT & 1);
	cr_assert(LOAD(enabled_types) >> EMBER_AC_UVM_EVENT & 1, "the shim asked for the notifications");
	/* eight entries, enough for the shim to tell their size: regions 3 and 9, and what must be dropped */
	put_entry(p + 3 * REGION, 1, 300, 0xffffffff, 0);
	put_entry(p + 9 * REGION + 0x10000, 1, 300, 0x2, 0);
	put_entry(p + 3 * REGION, 1, 300, 0xffffffff, 0);
	put_entry(p + 9 * REGION, 1, 300, 0xffffffff, 0);
	put_entry(p + 64 * MiB, 1, 300, 0xffffffff, 0);      /* past the allocation: foreign */
	put_entry(0x10000, 1, 300, 0xffffffff, 0);           /* nobody's: foreign */
	put_entry(p + 5 * REGION, 1, 300, 0xffffffff, 0x55); /* its tail is not the driver's zeroes: malformed */
	put_entry(p + 7 * REGION, 0, 300, 0xffffffff, 0);    /* the CPU as the GPU: out of range */
	wait_for_eight_read();
	/*
	 * Launches whose scan credits region 0 only (a pointer and 1.5 MiB of
	 * floats; 2 MiB would read as 64-byte records over the allocation):
	 * promotions happen at launches, so what is promoted is what the scan
	 * credited and what the counters named beyond it, and nothing else
	 */
	for (int i = 0; i < 5; i++)
		launch_reread(r.shim, r.reread, p, 3 * MiB / 2);
	sleep_ms(200);
	flush(&r);
	for (unsigned i = 0; i < 16; i++)
		cr_expect_eq(state_of(&r, i), i == 0 || i == 3 || i == 9 ? 2 : 0, "region %u", i);
	bytes_intact(&r);
	char buf[16384];
	one_counters_line(&r, buf, sizeof buf);
	cr_expect_not_null(strstr(buf, "access counters: reading the driver's notifications (uvm_access_counter_notify=1); "
				       "they replace the launch scan's guess for mapped regions"), "%s", buf);
	cr_expect_not_null(strstr(buf, "the driver writes 72-byte entries"), "%s", buf);
}

static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * A launch that finds notifications in the queue has the worker drain it at
 * once (ember_uvm_events_at_launch), not at its next pass or 100 ms drain:
 * passes 1 s apart here, and three rounds back to back, each entry put and
 * launched for as soon as the last one was read, each read within 50 ms.
 * The worker's own drain comes 100 ms after its last, so without the wake
 * every round after the first would take about 100 ms.
 */
Test(counters_queue, a_launch_that_finds_notifications_in_the_queue_has_the_worker_drain_it)
{
	param_value = "1\n";
	setenv("EMBER_INTERVAL_MS", "1000", 1);
	struct run r;
	start(&r, "adaptive");
	unsetenv("EMBER_INTERVAL_MS");
	launch_reread(r.shim, r.reread, r.p, 3 * MiB / 2);
	wait_for_queue();
	for (int i = 0; i < 8; i++)
		put_entry(0x10000, 1, 300, 0xffffffff, 0); /* nobody's: drained, counted, credited to nothing */
	wait_for_eight_read();
	flush(&r);
	for (uint32_t round = 1; round <= 3; round++) {
		put_entry(0x10000, 1, 300, 0xffffffff, 0);
		uint64_t t0 = ms_now();
		launch_reread(r.shim, r.reread, r.p, 3 * MiB / 2);
		for (int k = 0; k < 200 && LOAD(LOAD(control)->get_behind) != 8 + round; k++)
			sleep_ms(1);
		uint64_t waited = ms_now() - t0;
		cr_expect_eq(LOAD(LOAD(control)->get_behind), 8 + round, "round %u: read", round);
		cr_expect_lt(waited, 50, "round %u: read %llu ms after the launch", round, (unsigned long long)waited);
	}
	flush(&r);
	unlink(r.log);
}

/* Without the driver's notifications: one line why, and the launch scan places as it always did. */
static void scan_alone(const char *why)
{
	struct run r;
	start(&r, "adaptive");
	launch_all(&r, 5);
	wait_for_queue();
	sleep_ms(200);
	flush(&r);
	for (unsigned i = 0; i < 16; i++)
		cr_expect_eq(state_of(&r, i), 2, "region %u: the scan credited the whole allocation", i);
	bytes_intact(&r);
	char buf[16384];
	one_counters_line(&r, buf, sizeof buf);
	cr_expect_not_null(strstr(buf, "access counters: none from this driver"), "%s", buf);
	cr_expect_not_null(strstr(buf, why), "%s", buf);
}

Test(counters_queue, an_unpatched_driver_costs_one_line)
{
	param_value = NULL;
	scan_alone("no uvm_access_counter_notify parameter");
	cr_expect_not(LOAD(enabled_types) >> EMBER_AC_UVM_EVENT & 1, "type 61 was never asked for");
	cr_expect_eq(LOAD(test_type_asked), 0, "nor the test type, without uvm_enable_builtin_tests");
}

Test(counters_queue, a_patched_driver_loaded_without_the_parameter_costs_one_line)
{
	param_value = "0\n";
	scan_alone("loaded with uvm_access_counter_notify=0");
	cr_expect_not(LOAD(enabled_types) >> EMBER_AC_UVM_EVENT & 1, "type 61 was never asked for");
}

Test(counters_queue, a_driver_that_refuses_the_type_costs_one_line)
{
	param_value = "1\n";
	refuse_notify = true;
	scan_alone("the driver refused event type 61");
}

/*
 * The driver's own migrations to host memory (a host read of results): the
 * regions they took are mapped again in the table, out of the account, and
 * the next launch promotes them before it runs, as the static split did;
 * Ember's own moves and moves toward the GPU change nothing.
 */
Test(counters_queue, regions_the_driver_moved_to_the_host_are_promoted_again_at_the_next_launch)
{
	param_value = NULL;
	struct run r;
	start(&r, "static");
	CUdeviceptr p = r.p;
	launch_all(&r, 1);
	wait_for_queue();
	flush(&r);
	for (unsigned i = 0; i < 16; i++)
		cr_assert_eq(state_of(&r, i), 2, "region %u: the static split", i);
	enum { COHERENCE = 2, USER = 1 };
	put_migration(p + 3 * REGION + 4096, 8192, COHERENCE, 1, 0); /* the host read two pages of region 3 */
	put_migration(p + 3 * REGION + 65536, 4096, COHERENCE, 1, 0);
	put_migration(p + 5 * REGION, REGION, USER, 1, 0);           /* a move Ember asked for */
	for (int i = 0; i < 5; i++)
		put_migration(p + 7 * REGION, 65536, COHERENCE, 0, 1); /* back to the GPU on a fault */
	wait_for_eight_read();
	for (unsigned i = 0; i < 16; i++)
		cr_expect_eq(state_of(&r, i), i == 3 ? 0 : 2, "region %u after the driver's moves", i);
	launch_all(&r, 1);
	flush(&r);
	for (unsigned i = 0; i < 16; i++)
		cr_expect_eq(state_of(&r, i), 2, "region %u after the next launch", i);
	bytes_intact(&r);
	unlink(r.log);
}
