/* Reading /dev/nvidia-uvm-tools: the queue, drained by the worker. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "counters.h"
#include "locks.h"
#include "monitor.h"
#include "ops_driver.h"
#include "placement.h"
#include "shim.h"
#include "state.h"
#include "uvm_events.h"
#include "worker.h"

/* ---- the queue ---- */

/* The driver's ioctl numbers and argument blocks (Linux: the number is the command). */
enum { UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS = 58, UVM_TOOLS_INIT_EVENT_TRACKER_V2 = 76 };
/* On /dev/nvidia-uvm itself: deliver the events of completed work (migrations are reported late). */
enum { UVM_TOOLS_FLUSH_EVENTS = 67 };

struct init_tracker_params {
	uint64_t queue_buffer, queue_buffer_entries, control_buffer;
	uint8_t processor_uuid[16];
	uint32_t all_processors, uvm_fd, status;
};
_Static_assert(offsetof(struct init_tracker_params, uvm_fd) == 44, "tracker params layout");

struct enable_events_params {
	uint64_t event_type_flags;
	uint32_t status;
};

enum {
	QUEUE_ENTRIES = 1 << 15,
	/*
	 * The driver writes entries of its own build's size (72 bytes for the
	 * V2 entry of 580-series drivers, with a 5-word processor mask), so the
	 * size is found from the first records (ember_uvm_entry_size); the
	 * buffer has room for entries of up to 256 bytes.
	 */
	MAX_ENTRY = 256,
};

#define queue_lock ember_lock_uvm
static int tools_fd = -1, uvm_fd = -1;
static unsigned char *queue;
static struct ember_uvm_queue_control *control;
static struct ember_uvm_counts counts;
static bool opened, tried;
static size_t entry_size; /* 0 until the first records show it */
/* Read at launches without the lock: set once the counters are read (release), and by each drain. */
static bool at_launches;   /* the driver's notifications are read: launches look at the queue */
static uint32_t drained_to; /* the get index the last drain left (masked) */
static bool drain_asked;    /* a launch has asked the worker for a drain it has not begun */

/* The process's own /dev/nvidia-uvm descriptor, which the driver opened at cuInit. */
static int find_uvm_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int fd = -1;
	struct dirent *e;
	while (fd < 0 && (e = readdir(d))) {
		char link[300], target[PATH_MAX];
		snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n > 0) {
			target[n] = 0;
			if (!strcmp(target, "/dev/nvidia-uvm"))
				fd = atoi(e->d_name);
		}
	}
	closedir(d);
	return fd;
}

/*
 * Whether the driver runs its built-in tests, the only case in which it
 * takes the test event types. A stock driver refuses them with a kernel log
 * line for each process that asks ("Event index not found. Did you mean to
 * insmod with uvm_enable_builtin_tests=1?": one per run on the H200).
 */
static bool builtin_tests_on(void)
{
	int fd = open("/sys/module/nvidia_uvm/parameters/uvm_enable_builtin_tests", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char c = 0;
	bool on = read(fd, &c, 1) == 1 && (c == '1' || c == 'Y');
	close(fd);
	return on;
}

static void give_up(const char *why)
{
	ember_info("UVM tools event queue not used: %s", why);
	if (tools_fd >= 0)
		close(tools_fd);
	tools_fd = -1;
	free(queue);
	free(control);
	queue = NULL;
	control = NULL;
}

void ember_uvm_events_start(void)
{
	if (!ember_cfg.uvm_events || __atomic_load_n(&tried, __ATOMIC_ACQUIRE))
		return;
	ember_lock(&queue_lock);
	if (tried) {
		ember_unlock(&queue_lock);
		return;
	}
	__atomic_store_n(&tried, true, __ATOMIC_RELEASE);
	uvm_fd = find_uvm_fd();
	tools_fd = uvm_fd >= 0 ? open("/dev/nvidia-uvm-tools", O_RDWR | O_CLOEXEC) : -1;
	queue = aligned_alloc(4096, (size_t)QUEUE_ENTRIES * MAX_ENTRY);
	control = aligned_alloc(4096, 4096);
	if (uvm_fd < 0 || tools_fd < 0 || !queue || !control) {
		give_up(uvm_fd < 0 ? "the process has no /dev/nvidia-uvm open" : "cannot open /dev/nvidia-uvm-tools");
		ember_unlock(&queue_lock);
		return;
	}
	memset(control, 0, 4096);
	memset(queue, 0, (size_t)QUEUE_ENTRIES * MAX_ENTRY); /* entry-size detection reads empty slots */
	struct init_tracker_params init = { .queue_buffer = (uintptr_t)queue,
					    .queue_buffer_entries = QUEUE_ENTRIES,
					    .control_buffer = (uintptr_t)control,
					    .all_processors = 1,
					    .uvm_fd = (uint32_t)uvm_fd };
	struct enable_events_params enable = {
		.event_type_flags = (1ull << EMBER_UVM_EVENT_MIGRATION) | (1ull << EMBER_UVM_EVENT_GPU_FAULT) |
				    (1ull << EMBER_UVM_EVENT_MAP_REMOTE) | (1ull << EMBER_UVM_EVENT_EVICTION)
	};
	/* Access-counter notifications are a test event: only a driver loaded with
	 * uvm_enable_builtin_tests=1 accepts them, so ask separately, and only there. */
	struct enable_events_params counters = { .event_type_flags = 1ull << EMBER_UVM_EVENT_ACCESS_COUNTER };
	if (ioctl(tools_fd, UVM_TOOLS_INIT_EVENT_TRACKER_V2, &init) != 0 || init.status != 0)
		give_up("the driver refused the event tracker");
	else if (ioctl(tools_fd, UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS, &enable) != 0 || enable.status != 0)
		give_up("the driver refused to enable the events");
	else {
		__atomic_store_n(&opened, true, __ATOMIC_RELEASE);
		bool with_counters = builtin_tests_on() &&
				     ioctl(tools_fd, UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS, &counters) == 0 &&
				     counters.status == 0;
		ember_info("UVM tools event queue: reading migrations, faults, remote maps and evictions%s",
			   with_counters ? ", and access-counter notifications"
					 : "; this driver gives no access-counter notifications");
		ember_counters_start(tools_fd); /* the patched driver's notifications, or one line why not (counters.c) */
		if (ember_counters_reading())
			__atomic_store_n(&at_launches, true, __ATOMIC_RELEASE);
	}
	ember_unlock(&queue_lock);
}

/* A counter notification names one block: demand for its region, as the paper's monitor does. */
static void notify(const struct ember_uvm_event *e)
{
	ember_table_lock(EMBER_TABLE);
	struct ember_alloc *a = ember_table_find(EMBER_TABLE, e->address);
	if (a)
		ember_monitor_demand(a, e->address, 1, e->value ? e->value : EMBER_LAUNCH_DEMAND, ember_driver_now());
	ember_table_unlock(EMBER_TABLE);
}

static void log_first_record(void)
{
	char hex[3 * MAX_ENTRY + 1];
	size_t n = 0;
	for (size_t i = 0; i < entry_size; i++)
		n += (size_t)snprintf(hex + n, sizeof hex - n, "%02x%s", queue[i], i % 8 == 7 ? " " : "");
	ember_debug("UVM tools event queue: first record %s", hex);
}

/* Before the first read: the entry size, from the records that have arrived. */
static bool know_entry_size(uint32_t put, uint32_t min_records)
{
	if (entry_size)
		return true;
	entry_size = ember_uvm_entry_size(queue, (size_t)QUEUE_ENTRIES * MAX_ENTRY, put, MAX_ENTRY, min_records);
	if (entry_size) {
		ember_info("UVM tools event queue: the driver writes %zu-byte entries (from its first %u records)",
			   entry_size, put);
		log_first_record();
	}
	return entry_size != 0;
}

static void drain(uint32_t min_records)
{
	if (!__atomic_load_n(&opened, __ATOMIC_ACQUIRE))
		return;
	ember_lock(&queue_lock);
	__atomic_store_n(&drain_asked, false, __ATOMIC_RELEASE); /* entries put from here on ask again */
	uint32_t mask = QUEUE_ENTRIES - 1;
	uint32_t get = __atomic_load_n(&control->get_ahead, __ATOMIC_ACQUIRE) & mask;
	uint32_t put = __atomic_load_n(&control->put_behind, __ATOMIC_ACQUIRE) & mask;
	if (!know_entry_size(put, min_records)) {
		bool hopeless = put >= min_records;
		ember_unlock(&queue_lock);
		if (hopeless) {
			__atomic_store_n(&at_launches, false, __ATOMIC_RELAXED);
			__atomic_store_n(&opened, false, __ATOMIC_RELEASE);
			ember_warn("UVM tools event queue: its first %u records decode at no entry size from %d to %d "
				   "bytes; not reading it", put, EMBER_UVM_ENTRY_MIN, MAX_ENTRY);
		}
		return;
	}
	struct ember_uvm_counts c = counts;
	for (; get != put; get = (get + 1) & mask) {
		struct ember_uvm_event e;
		if (queue[(size_t)get * entry_size] == EMBER_UVM_EVENT_COUNTER_NOTIFY) {
			/* the patched driver's notification: checked, counted and credited by counters.c */
			ember_counters_take_uvm(queue + (size_t)get * entry_size, entry_size);
			c.access_counters++;
			continue;
		}
		if (ember_uvm_parse(queue + (size_t)get * entry_size, entry_size, &e) != 0) {
			c.malformed++;
			continue;
		}
		ember_uvm_count(&e, &c);
		if (e.type == EMBER_UVM_EVENT_ACCESS_COUNTER && ember_strategy->demand)
			notify(&e);
		/* the driver's own move to host memory (Ember's are the user's): those regions are not resident */
		if (e.type == EMBER_UVM_EVENT_MIGRATION && e.dst == 0 && e.cause != EMBER_UVM_CAUSE_USER)
			ember_placement_displaced(e.address, e.bytes);
	}
	__atomic_store_n(&control->get_behind, get, __ATOMIC_RELEASE);
	__atomic_store_n(&control->get_ahead, get, __ATOMIC_RELEASE);
	__atomic_store_n(&drained_to, get, __ATOMIC_RELAXED);
	uint64_t dropped = 0;
	for (size_t i = 0; i < sizeof control->dropped / sizeof control->dropped[0]; i++)
		dropped += control->dropped[i];
	c.dropped = dropped;
	counts = c;
	/* mostly garbage means the entries are not what they seemed: stop reading */
	bool broken = c.malformed > 64 && c.malformed * 2 > c.migrations_requested + c.migrations_by_driver +
							  c.gpu_faults + c.remote_maps + c.evictions + c.access_counters;
	ember_unlock(&queue_lock);
	if (broken) {
		__atomic_store_n(&at_launches, false, __ATOMIC_RELAXED);
		__atomic_store_n(&opened, false, __ATOMIC_RELEASE);
		ember_warn("UVM tools event queue: %llu of its records are malformed; no longer reading it",
			   (unsigned long long)c.malformed);
	}
}

void ember_uvm_events_drain(void)
{
	drain(EMBER_UVM_ENTRY_PROOF);
}

static const struct ember_periodic reader;

void ember_uvm_events_at_launch(void)
{
	if (!__atomic_load_n(&at_launches, __ATOMIC_ACQUIRE))
		return;
	uint32_t put = __atomic_load_n(&control->put_behind, __ATOMIC_RELAXED) & (QUEUE_ENTRIES - 1);
	if (put == __atomic_load_n(&drained_to, __ATOMIC_RELAXED) || __atomic_load_n(&drain_asked, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&drain_asked, true, __ATOMIC_ACQ_REL))
		return;
	ember_worker_nudge(&reader);
}

void ember_uvm_events_finish(void)
{
	if (!__atomic_load_n(&opened, __ATOMIC_ACQUIRE))
		return;
	struct {
		uint32_t status;
	} flush = { 0 };
	if (ioctl(uvm_fd, UVM_TOOLS_FLUSH_EVENTS, &flush) != 0 || flush.status != 0)
		ember_debug("UVM tools event queue: the driver did not flush its events (status %u)", flush.status);
	drain(1); /* a short run may leave fewer records than a running one needs to tell the entry size */
	ember_counters_finish(); /* one line of the access counters' counts, if they were read */
}

bool ember_uvm_events_reading(void)
{
	return __atomic_load_n(&opened, __ATOMIC_ACQUIRE);
}

bool ember_uvm_events_counts(struct ember_uvm_counts *out)
{
	ember_lock(&queue_lock);
	*out = counts;
	bool any = tried && (opened || counts.malformed);
	ember_unlock(&queue_lock);
	return any;
}

static void drain_periodically(bool changed)
{
	ember_uvm_events_drain();
}

/* The queue holds 32768 records: the worker reads it at least every 100 ms, so that none are dropped. */
static const struct ember_periodic reader = {
	.active = ember_uvm_events_reading,
	.start = ember_uvm_events_start,
	.run = drain_periodically,
	.period_ns = 100 * 1000 * 1000ull,
};

void ember_uvm_events_subscribe(void)
{
	ember_worker_subscribe(&reader);
}
