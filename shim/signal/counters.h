/*
 * The access-counter reader: GPU access-counter notifications in, demand
 * per region out. Records come from the patched nvidia-uvm driver (driver/,
 * docs/access-counters.md) through the UVM tools event queue, or from
 * ember-sim's counter model and the tests as struct ember_ac_record
 * (include/ember/access_counter.h). Every record is checked before any
 * field is trusted; a bad one is counted, by kind, and dropped.
 *
 * A notification names one 2 MiB region of the process's address space
 * and the 64 KiB pieces of it that were read. A record none of whose
 * pieces lies in an allocation Ember places is foreign, and dropped.
 *
 * The counters see only remote reads: reads of mapped (host-resident)
 * regions. Where they cover an allocation (they named some region of it
 * within cover_ns), their evidence replaces the launch scan's guess for
 * its mapped regions, in the scan's units: one launch's worth of demand
 * (EMBER_LAUNCH_DEMAND) per region per launch, never one per notification.
 * A streaming pass over a mapped region raises about 256 of them; credited
 * each, mapped data looked far hotter than the resident data it would
 * displace (ember-sim: the star scan and the recorded llama.cpp and
 * transformers traces ran slower).
 *
 *  - The scan credits what it credits at each launch, and each region so
 *    credited is the scan's for cover_ns: a notification for it is the read
 *    that credit stood for, and adds nothing.
 *  - Resident and moving regions keep the scan's credit: the counters
 *    cannot see them.
 *  - A mapped region of a covered allocation that the scan has credited
 *    EMBER_AC_UNCONFIRMED times, over EMBER_AC_UNCONFIRMED_NS, with no
 *    notification naming it, is one no kernel reads: its credit is
 *    withheld until a notification names it.
 *  - A notification for a mapped region the scan has not credited lately
 *    (one it withheld, or one it never names: a kernel passed base
 *    pointers and a count that is not the band it reads) credits it one
 *    launch's worth, once per launch of its allocation.
 *  - An allocation the counters do not cover takes the scan's credit alone.
 *
 * So a region that kernels read keeps the scan's credit at the launch, as
 * without counters, and the launch's promotion sees it. Crediting the
 * notifications instead came a launch late: a kernel's notifications reach
 * the reader after later launches are made (ember-sim: the llama.cpp
 * traces 0.96x and 0.98x as fast as with the scan alone).
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
	EMBER_AC_REPEAT,       /* placed, but each region it names is the scan's lately, had its launch's worth, or is not mapped */
};

struct ember_ac_counts {
	uint64_t records;  /* every record offered */
	uint64_t credited; /* records that became demand */
	uint64_t regions;  /* regions credited by them */
	uint64_t repeats;  /* placed, but each region they name is the scan's lately, had its launch's worth, or is not mapped */
	uint64_t truncated, malformed, out_of_range, foreign;
	uint64_t withheld; /* the launch scan's credits withheld from mapped regions no notification named (not records) */
};

/*
 * Allocations the counters spoke for lately, by allocation id (a slot
 * each; a collision forgets the older, which then takes the scan's credit
 * alone until the counters name it again).
 */
enum { EMBER_AC_COVER_SLOTS = 256 };
#define EMBER_AC_COVER_NS (1000ull * 1000 * 1000) /* default: 1 s */
/*
 * The launch scan's credits to a mapped region of a covered allocation
 * that may go unconfirmed before its credit is withheld, and for how long
 * at least: a kernel's notifications are read after later launches are
 * made (the worker a launch wakes drains the queue, and does at least
 * every 100 ms), and a region read lightly is named only every few
 * launches (once per 256 sectors), so a short silence is no evidence.
 */
#define EMBER_AC_UNCONFIRMED 4
#define EMBER_AC_UNCONFIRMED_NS (100ull * 1000 * 1000)

struct ember_ac_reader {
	struct ember_ac_counts counts;
	uint64_t cover_ns; /* 0: EMBER_AC_COVER_NS */
	bool reading;      /* the shim's: the driver's notifications are read, so its launches go through the reader */
	struct {
		uint64_t id;    /* the allocation's id */
		uint64_t until; /* covered while now < until; 0: empty */
		bool pending;   /* credited since the allocation's last launch */
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
 * Credit a checked record to the mapped regions its pieces lie in, in pc's
 * table (locked), at now: each one launch's worth, unless the launch scan
 * credited it lately or it had that at its allocation's current launch
 * already. Every allocation it names is covered from now on, and its
 * regions named are confirmed. Returns EMBER_AC_OK when some region was
 * credited, EMBER_AC_REPEAT when none was, EMBER_AC_FOREIGN when no piece
 * lay in a placed allocation. Counts it in rd->counts.
 */
enum ember_ac_verdict ember_ac_credit(struct ember_ac_reader *rd, struct ember_policy_ctx *pc,
				      const struct ember_ac_record *r, uint64_t now);

/* Count a verdict other than OK, REPEAT and FOREIGN (those ember_ac_credit counts). */
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
 * A launch over [addr, addr + bytes) of a, in pc's table (locked), at now:
 * when scanned, the launch scan's credit of amount to the regions it
 * covers, as ember_policy_demand gives it where the counters do not cover
 * a; where they do, withheld from the mapped regions they did not confirm
 * (above). Returns true when the launch brings fresh demand for a: the
 * scan's credit is new, or notifications credited a since its last launch
 * (within cover_ns of them; once), so that the launch's promotion looks at a.
 */
bool ember_ac_launch(struct ember_ac_reader *rd, struct ember_policy_ctx *pc, struct ember_alloc *a, uint64_t addr,
		     uint64_t bytes, uint32_t amount, bool scanned, uint64_t now);

/* ---- the shim's reader (guarded by the shim's table lock) ---- */

extern struct ember_ac_reader ember_shim_counters;

/*
 * The launch scan's one way in (monitor.c): a launch's demand, as
 * ember_monitor_demand credits it on a driver without notifications, and
 * through ember_ac_launch when the driver's notifications are read.
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
