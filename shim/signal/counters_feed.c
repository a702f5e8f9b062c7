/*
 * The patched driver's access-counter notifications, read through the UVM
 * tools event queue that uvm_events.c keeps: asked for when the driver
 * offers them, each entry checked and credited by counters.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "counters.h"
#include "ops_driver.h"
#include "placement.h"
#include "shim.h"
#include "state.h"

/* The tools device's ioctl that enables event types on a tracker (uvm_events.c has the same). */
enum { UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS = 58 };
struct enable_events_params {
	uint64_t event_type_flags;
	uint32_t status;
};

static bool reading;

/* Whether the driver delivers notifications: its parameter reads above 0. Else why not, in why. */
static bool offered(char *why, size_t n)
{
	int fd = open(EMBER_AC_UVM_PARAM, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, n, "nvidia_uvm has no uvm_access_counter_notify parameter: a driver without Ember's patch");
		return false;
	}
	char buf[24];
	ssize_t k = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (k <= 0) {
		snprintf(why, n, "%s cannot be read", EMBER_AC_UVM_PARAM);
		return false;
	}
	buf[k] = 0;
	char *end;
	errno = 0;
	long v = strtol(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n')) {
		snprintf(why, n, "%s does not hold a number", EMBER_AC_UVM_PARAM);
		return false;
	}
	if (v <= 0) {
		snprintf(why, n, "the driver was loaded with uvm_access_counter_notify=%ld", v);
		return false;
	}
	return true;
}

void ember_counters_start(int tools_fd)
{
	char why[160];
	if (offered(why, sizeof why)) {
		struct enable_events_params p = { .event_type_flags = 1ull << EMBER_AC_UVM_EVENT };
		if (ioctl(tools_fd, UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS, &p) == 0 && p.status == 0) {
			ember_table_lock(EMBER_TABLE);
			ember_shim_counters.reading = true; /* launches go through the reader from now on */
			ember_table_unlock(EMBER_TABLE);
			__atomic_store_n(&reading, true, __ATOMIC_RELEASE);
			ember_info("access counters: reading the driver's notifications (uvm_access_counter_notify=1); "
				   "they replace the launch scan's guess for mapped regions");
			return;
		}
		snprintf(why, sizeof why, "the driver refused event type %d (status %u)", EMBER_AC_UVM_EVENT, p.status);
	}
	ember_info("access counters: none from this driver (%s); demand comes from the launch scan alone", why);
}

void ember_counters_take_uvm(const void *entry, size_t entry_size)
{
	struct ember_ac_record r;
	enum ember_ac_verdict v = ember_ac_from_uvm(entry, entry_size, &r);
	ember_table_lock(EMBER_TABLE);
	if (v != EMBER_AC_OK)
		ember_ac_count_bad(&ember_shim_counters, v);
	else if (ember_strategy->demand)
		ember_ac_credit(&ember_shim_counters, &ember_shim_ctx, &r, ember_driver_now());
	else
		ember_shim_counters.counts.records++; /* checked, but this mode moves nothing by demand */
	ember_table_unlock(EMBER_TABLE);
}

bool ember_counters_reading(void)
{
	return __atomic_load_n(&reading, __ATOMIC_ACQUIRE);
}

void ember_counters_snapshot(struct ember_ac_counts *out)
{
	ember_table_lock(EMBER_TABLE);
	*out = ember_shim_counters.counts;
	ember_table_unlock(EMBER_TABLE);
}

void ember_counters_finish(void)
{
	if (!ember_counters_reading())
		return;
	struct ember_ac_counts c;
	ember_counters_snapshot(&c);
	ember_info("access counters: %llu notifications, %llu credited to %llu regions, %llu repeats; dropped %llu "
		   "foreign, %llu malformed, %llu truncated, %llu out of range; the launch scan's credit withheld %llu "
		   "times from mapped regions no notification named",
		   (unsigned long long)c.records, (unsigned long long)c.credited, (unsigned long long)c.regions,
		   (unsigned long long)c.repeats, (unsigned long long)c.foreign, (unsigned long long)c.malformed,
		   (unsigned long long)c.truncated, (unsigned long long)c.out_of_range, (unsigned long long)c.withheld);
}
