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
 * The counters complement the launch scan; they do not replace it. A
 * launch's scan credits what it credits, as on a stock driver, and the
 * reader keeps, per allocation, the run of regions the scan credited it
 * lately (within cover_ns of its last launch). A notification credits only
 * the regions outside that run: what the scan could not bound, or bounded
 * too tight (a kernel passed base pointers and a count that is not the
 * band it reads). Regions the scan credited are dropped from it, counted
 * as scanned: counted reads of mapped memory are a measure of volume, not
 * of references, and a streaming pass over mapped data raises hundreds of
 * notifications per region, where a resident region's launches credit it
 * once each; crediting both made mapped data the scan already saw look
 * far hotter than the resident data it would displace (ember-sim: the
 * star scan and the recorded llama.cpp and transformers traces ran slower
 * with counters than without). Where the scan credits everything a kernel
 * reads, the counters change nothing.
 *
 * Promotions happen at launches (adaptive.c), for what a launch references
 * and only when it brought fresh demand: a launch counts as fresh when
 * notifications have credited its allocation since its last launch (within
 * cover_ns of them), so that the counters' demand is promoted at the next
 * launch that reads it.
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
	EMBER_AC_SCANNED,      /* placed, but the launch scan credited each region it names lately: nothing added */
};

struct ember_ac_counts {
	uint64_t records;  /* every record offered */
	uint64_t credited; /* records that became demand */
	uint64_t regions;  /* regions credited by them */
	uint64_t scanned;  /* well-formed, but every region they name the launch scan had credited lately: nothing added */
	uint64_t truncated, malformed, out_of_range, foreign;
};

/*
 * Allocations the counters spoke for lately, and those the launch scan
 * did, by allocation id (a slot each; a collision forgets the older: for
 * the scan's, the counters may then credit what the scan credited too).
 */
enum { EMBER_AC_COVER_SLOTS = 256, EMBER_AC_SCAN_SLOTS = 1024 };
#define EMBER_AC_COVER_NS (1000ull * 1000 * 1000) /* default: 1 s, for the counters' cover and the scan's run */

struct ember_ac_reader {
	struct ember_ac_counts counts;
	uint64_t cover_ns; /* 0: EMBER_AC_COVER_NS */
	bool reading;      /* the shim's: the driver's notifications are read, so its launches note the scan's runs */
	struct {
		uint64_t id;    /* the allocation's id */
		uint64_t until; /* covered while now < until; 0: empty */
		bool pending;   /* credited since the allocation's last covered launch */
	} cover[EMBER_AC_COVER_SLOTS];
	struct {
		uint64_t id;    /* the allocation's id */
		uint64_t until; /* the run stands while now < until (the scan's last credit + cover_ns); 0: empty */
		uint32_t r0, r1; /* the regions the scan credited since the run began: their hull */
	} scan[EMBER_AC_SCAN_SLOTS];
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
 * (locked), at now, except those the launch scan credited lately
 * (ember_ac_launch). Returns EMBER_AC_OK when some region was credited,
 * EMBER_AC_SCANNED when the scan had credited every region its placed
 * pieces lie in, EMBER_AC_FOREIGN when none lay in a placed allocation.
 * Counts it in rd->counts.
 */
enum ember_ac_verdict ember_ac_credit(struct ember_ac_reader *rd, struct ember_policy_ctx *pc,
				      const struct ember_ac_record *r, uint64_t now);

/* Count a verdict other than OK, SCANNED and FOREIGN (those ember_ac_credit counts). */
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
 * A launch over [addr, addr + bytes) of a, before its demand: when scanned
 * (the launch scan credits that range), its regions join the run the scan
 * credited a lately, which notifications then leave alone. Returns true
 * when notifications credited a since its last launch (within cover_ns of
 * them), once: the launch's promotion must then look at a, even if the
 * scan's own credit is a repeat.
 */
bool ember_ac_launch(struct ember_ac_reader *rd, struct ember_alloc *a, uint64_t addr, uint64_t bytes, bool scanned,
		     uint64_t now);

/* Whether the launch scan credited region r of a lately (the run ember_ac_launch keeps). */
bool ember_ac_scanned(const struct ember_ac_reader *rd, const struct ember_alloc *a, uint32_t r, uint64_t now);

/* ---- the shim's reader (guarded by the shim's table lock) ---- */

extern struct ember_ac_reader ember_shim_counters;

/*
 * The launch scan's one way in (monitor.c): a launch's demand
 * (ember_monitor_demand), its range noted for the reader when the driver's
 * notifications are read, and fresh also when they credited the allocation
 * since its last launch.
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
