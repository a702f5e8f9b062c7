/*
 * The records of the nvidia-uvm tools event queue (/dev/nvidia-uvm-tools,
 * V2 entries), as far as Ember reads them. Offsets follow the open nvidia-uvm
 * driver's V2 event layouts, which that driver pads by hand so that they do
 * not depend on compiler options. Every record starts with its type in byte
 * 0; Ember reads only the fields named here, at these offsets.
 *
 * The driver writes fixed-size entries whose size depends on its build (a
 * processor mask at the end of some events grows with its GPU limit), so a
 * reader must be told the entry size and must check every record: see
 * ember_uvm_parse().
 */
#ifndef EMBER_UVM_EVENTS_H
#define EMBER_UVM_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Event types (byte 0 of each record). */
enum ember_uvm_event_type {
	EMBER_UVM_EVENT_MIGRATION = 2,
	EMBER_UVM_EVENT_GPU_FAULT = 3,
	EMBER_UVM_EVENT_MAP_REMOTE = 13,
	EMBER_UVM_EVENT_EVICTION = 14,
	EMBER_UVM_EVENT_COUNTER_NOTIFY = 61, /* the patched driver's notification: access_counter.h (EMBER_AC_UVM_EVENT) */
	EMBER_UVM_EVENT_ACCESS_COUNTER = 63, /* the driver's test type: first of its test range (62) + 1 */
};

/* Why the driver migrated (migration records, byte 1). */
enum ember_uvm_migration_cause {
	EMBER_UVM_CAUSE_USER = 1,      /* an explicit prefetch: Ember's, or the application's */
	EMBER_UVM_CAUSE_COHERENCE = 2, /* a fault */
	EMBER_UVM_CAUSE_PREFETCH = 3,  /* the driver's own prefetcher */
	EMBER_UVM_CAUSE_EVICTION = 4,  /* the driver making room */
	EMBER_UVM_CAUSE_ACCESS_COUNTERS = 5,
};

/* Field offsets within a record, by type. */
#define EMBER_UVM_MIGRATION_CAUSE 1       /* u8 */
#define EMBER_UVM_MIGRATION_SRC 4         /* u16 processor index; 0 is the CPU */
#define EMBER_UVM_MIGRATION_DST 6         /* u16 */
#define EMBER_UVM_MIGRATION_ADDRESS 16    /* u64 */
#define EMBER_UVM_MIGRATION_BYTES 24      /* u64 */
#define EMBER_UVM_MIGRATION_END 72        /* record size it needs */
#define EMBER_UVM_FAULT_GPU 2             /* u16 */
#define EMBER_UVM_FAULT_ADDRESS 8         /* u64 */
#define EMBER_UVM_FAULT_END 40
#define EMBER_UVM_REMOTE_ADDRESS 8        /* u64 */
#define EMBER_UVM_REMOTE_SIZE 16          /* u64 */
#define EMBER_UVM_REMOTE_END 40
#define EMBER_UVM_EVICTION_SRC 4          /* u16 */
#define EMBER_UVM_EVICTION_ADDRESS 8      /* u64, the region evicted */
#define EMBER_UVM_EVICTION_SIZE 24        /* u64 */
#define EMBER_UVM_EVICTION_END 40
#define EMBER_UVM_COUNTER_GPU 6           /* u16 */
#define EMBER_UVM_COUNTER_VALUE 8         /* u32 */
#define EMBER_UVM_COUNTER_ADDRESS 32      /* u64 */
#define EMBER_UVM_COUNTER_END 48

/* The queue's control page: the driver's put and the reader's get, in entries. */
struct ember_uvm_queue_control {
	volatile uint32_t get_ahead, get_behind, put_ahead, put_behind;
	uint64_t dropped[64]; /* per event type: records the driver could not queue */
};

/* One record, checked and decoded. */
struct ember_uvm_event {
	enum ember_uvm_event_type type;
	uint64_t address, bytes;
	unsigned cause;          /* migrations */
	unsigned src, dst;       /* processor indices; 0 is the CPU */
	uint32_t value;          /* access counters */
};

/*
 * Decode one record of entry_size bytes. Returns 0, or -1 for a record that
 * is too short for its type, of a type Ember does not read, or carries
 * impossible values (a zero-sized or overflowing range, an address in the
 * kernel's half). Never reads past entry_size.
 */
int ember_uvm_parse(const void *record, size_t entry_size, struct ember_uvm_event *out);

/*
 * Find the driver's entry size from the first records it wrote: the
 * smallest multiple of 8 in [EMBER_UVM_ENTRY_MIN, max_size] at which the
 * count records from the start of a zeroed buffer decode, all but one in a
 * hundred (those are dropped as malformed later), and the slot after them
 * is still empty. Returns 0 while count is below min_records
 * (too few to tell: EMBER_UVM_ENTRY_PROOF while records keep coming) or
 * when no size fits. Nothing past buffer_bytes is read: a size whose
 * records and empty slot would not fit there does not fit.
 */
#define EMBER_UVM_ENTRY_MIN 40
#define EMBER_UVM_ENTRY_PROOF 8
size_t ember_uvm_entry_size(const void *buffer, size_t buffer_bytes, uint32_t count, size_t max_size,
			    uint32_t min_records);

#ifdef __cplusplus
}
#endif

#endif
