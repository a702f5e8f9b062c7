/*
 * The UVM tools event queue as an access-monitor source and as a witness:
 * it counts the migrations Ember asks for and those the driver makes on its
 * own, the driver's evictions (which must stay zero under Ember), GPU
 * faults and remote mappings, and turns access-counter notifications into
 * demand. Off unless EMBER_UVM_EVENTS=1; any failure turns it off with one
 * log line.
 */
#ifndef EMBER_SHIM_UVM_EVENTS_H
#define EMBER_SHIM_UVM_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "ember/uvm_events.h"

struct ember_uvm_counts {
	uint64_t migrations_requested; /* cause "user": Ember's prefetches, or the application's */
	uint64_t migrations_by_driver; /* every other cause */
	uint64_t bytes_requested, bytes_by_driver;
	uint64_t evictions;            /* the driver making room: zero while Ember keeps the budget */
	uint64_t gpu_faults, remote_maps, access_counters;
	uint64_t malformed, dropped;
};

/* Have the worker open and read the queue (library constructor). */
void ember_uvm_events_subscribe(void);

/* Open the queue if asked to and possible (worker thread, driver initialised). */
void ember_uvm_events_start(void);

/* Read what has arrived (worker thread). */
void ember_uvm_events_drain(void);

/*
 * At a launch, while the driver's access-counter notifications are read:
 * when the queue holds entries the last drain did not read (its put index
 * against that drain's get: two atomic loads), have the worker drain it
 * soon, so that notifications become demand by the next launch and not at
 * the next 100 ms drain. The worker is asked once per drain.
 */
void ember_uvm_events_at_launch(void);

/* At exit: have the driver deliver the events of completed work, and read them. */
void ember_uvm_events_finish(void);

/* Fold one decoded record into the counts (uvm_records.c: pure). */
void ember_uvm_count(const struct ember_uvm_event *e, struct ember_uvm_counts *c);

/* Whether the queue is open and being read. */
bool ember_uvm_events_reading(void);

/* A snapshot; returns false when the queue was never opened. */
bool ember_uvm_events_counts(struct ember_uvm_counts *out);

#endif
