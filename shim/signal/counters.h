/*
 * The access-counter reader: GPU access-counter notifications in, demand
 * per region out. Records come from the patched nvidia-uvm driver (driver/,
 * docs/access-counters.md) through the UVM tools event queue, or from
 * ember-sim's counter model and the tests as struct ember_ac_record
 * (include/ember/access_counter.h). Every record is checked before any
 * field is trusted; a bad one is counted, by kind, and dropped.
 *
 * A notification names one 2 MiB region of the process's address space
 * and the 64 KiB pieces of it that were read. Each piece that lies in an
 * allocation Ember places credits its region one notification's worth of
 * demand (EMBER_LAUNCH_DEMAND); a record none of whose pieces does is
 * foreign, and dropped.
 *
 * Where the counters have spoken for an allocation lately (within cover_ns
 * of its last credited notification), they replace the launch scan's guess
 * for it: a launch then credits only the regions of its range that are
 * resident or on their way (the counters count reads of host memory, so
 * they cannot see those), and mapped regions get demand from the counters
 * alone. Where they have not, the launch scan stands, as on a stock driver.
 * Promotions happen at launches (adaptive.c), for what a launch references
 * and only when it brought fresh demand: a covered launch counts as fresh
 * when notifications have credited its allocation since its last launch,
 * so that the counters' demand is promoted at the next launch that reads it.
 *
 * Everything here but the last section is pure: no driver, no clock, no
 * lock of its own. The reader's state is guarded by the lock of the table
 * it credits, held by the caller.
 */
#ifndef EMBER_COUNTERS_H
#define EMBER_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/access_counter.h"
#include "policy.h"

/* What a record turned out to be. */
enum ember_ac_verdict {
	EMBER_AC_OK,           /* well-formed, and (after crediting) in a placed allocation */
	EMBER_AC_TRUNCATED,    /* fewer bytes than a record needs */
	EMBER_AC_MALFORMED,    /* wrong magic, version, size or type; reserved bytes set; a zero count; an unaligned address */
	EMBER_AC_OUT_OF_RANGE, /* an address outside user space, or a GPU past EMBER_AC_MAX_GPUS (the CPU, for the driver) */
	EMBER_AC_FOREIGN,      /* well-formed, but in no allocation Ember places: dropped */
};

struct ember_ac_counts {
	uint64_t records;  /* every record offered */
	uint64_t credited; /* records that became demand */
	uint64_t regions;  /* regions credited by them */
	uint64_t truncated, malformed, out_of_range, foreign;
};

/* Allocations the counters spoke for lately, by allocation id (a slot each; a collision forgets the older). */
enum { EMBER_AC_COVER_SLOTS = 256 };
#define EMBER_AC_COVER_NS (1000ull * 1000 * 1000) /* default: a notification covers its allocation for 1 s */

struct ember_ac_reader {
	struct ember_ac_counts counts;
	uint64_t cover_ns; /* 0: EMBER_AC_COVER_NS */
	struct {
		uint64_t id;    /* the allocation's id */
		uint64_t until; /* covered while now < until; 0: empty */
		bool pending;   /* credited since the allocation's last covered launch */
	} cover[EMBER_AC_COVER_SLOTS];
};

/*
 * Check one record of len bytes (an ember_ac_record, little-endian, any
 * alignment) and copy it to *out. Reads nothing past len. Everything but
 * EMBER_AC_OK leaves *out undefined.
 */
enum ember_ac_verdict ember_ac_check(const void *bytes, size_t len, struct ember_ac_record *out);

/*
 * Decode one entry of the tools event queue (entry_size bytes, type
 * EMBER_AC_UVM_EVENT) into a record, and check it as ember_ac_check does.
 * The driver zeroes every byte it does not set: padding, and the entry past
 * EMBER_AC_UVM_END, must be zero. Reads nothing past entry_size.
 */
enum ember_ac_verdict ember_ac_from_uvm(const void *entry, size_t entry_size, struct ember_ac_record *out);

/*
 * Credit a checked record to the regions its pieces lie in, in pc's table
 * (locked), at now. Returns EMBER_AC_OK when some region was credited,
 * EMBER_AC_FOREIGN when none was. Counts it in rd->counts.
 */
enum ember_ac_verdict ember_ac_credit(struct ember_ac_reader *rd, struct ember_policy_ctx *pc,
				      const struct ember_ac_record *r, uint64_t now);

/* Count a verdict other than OK and FOREIGN (those ember_ac_credit counts). */
void ember_ac_count_bad(struct ember_ac_reader *rd, enum ember_ac_verdict v);

/*
 * A stream of records (the simulator's, the tests'): check and credit each
 * whole record of buf, and count a short tail as truncated. Returns how many
 * records became demand.
 */
size_t ember_ac_feed(struct ember_ac_reader *rd, struct ember_policy_ctx *pc, const void *buf, size_t len,
		     uint64_t now);

/* Whether the counters cover allocation a at now (they spoke for it lately). */
bool ember_ac_covers(const struct ember_ac_reader *rd, const struct ember_alloc *a, uint64_t now);

/*
 * A launch's demand for [addr, addr + bytes) of a. Where the counters cover
 * a, only its resident and promoting regions in the range are credited, and
 * true is returned; *fresh is set when a credit was not a repeat, or when
 * notifications credited a since its last covered launch. Else nothing is
 * done and false is returned: the launch scan's guess stands.
 */
bool ember_ac_launch(struct ember_ac_reader *rd, struct ember_policy_ctx *pc, struct ember_alloc *a,
		     uint64_t addr, uint64_t bytes, uint32_t amount, uint64_t now, bool *fresh);

/* ---- the shim's reader (guarded by the shim's table lock) ---- */

extern struct ember_ac_reader ember_shim_counters;

/*
 * The launch scan's one way in (monitor.c): a launch's demand, replaced by
 * the counters where they cover the allocation, else ember_monitor_demand.
 */
bool ember_counters_launch_demand(struct ember_alloc *a, uint64_t addr, uint64_t bytes, uint32_t amount,
				  uint64_t now);

/* ---- the patched driver, through the tools event queue (counters_feed.c) ---- */

/*
 * The queue is open (uvm_events.c): ask for the driver's notifications if
 * it offers them (EMBER_AC_UVM_PARAM reads 1), and say in one line whether
 * they are read or why not.
 */
void ember_counters_start(int tools_fd);

/* One queue entry of type EMBER_AC_UVM_EVENT (queue lock held; takes the table lock). */
void ember_counters_take_uvm(const void *entry, size_t entry_size);

/* At exit: one line with the counts, when the driver's notifications were read. */
void ember_counters_finish(void);

/* Whether the driver's notifications are being read; a snapshot of the counts. */
bool ember_counters_reading(void);
void ember_counters_snapshot(struct ember_ac_counts *out);

#endif
