/*
 * Access-counter notifications: the record a GPU's access counters give
 * Ember for host-resident (mapped) memory that a GPU keeps reading. The
 * driver patch delivers these to the process that owns the memory, and
 * ember-sim's counter model produces the same records, so the consumer is
 * one piece of code tested against both.
 *
 * The hardware keeps a limited set of counters (about 256), each tracking
 * one 2 MiB region; an access to an untracked region takes a counter, the
 * least recently used one if none is free, and that counter's count is
 * lost. When a counter reaches the threshold it raises a notification and
 * starts again from zero.
 *
 * Every field is little-endian, the record is 40 bytes, and a reader checks
 * magic, version, size and alignment before it trusts anything else.
 *
 * On a GPU the records come from the nvidia-uvm patch in driver/ (see
 * docs/access-counters.md): loaded with uvm_access_counter_notify=1, the
 * driver puts each notification in the tools event queue of the process
 * whose channel raised it, as an entry of type EMBER_AC_UVM_EVENT laid out
 * as below, and Ember's reader (shim/signal/counters.c) turns that entry
 * into an ember_ac_record before it checks it, so that the driver's records
 * and the simulator's take one path from there on.
 */
#ifndef EMBER_ACCESS_COUNTER_H
#define EMBER_ACCESS_COUNTER_H

#include <stdint.h>

#define EMBER_AC_MAGIC 0x43414d45u /* "EMAC" */
#define EMBER_AC_VERSION 1u
#define EMBER_AC_REGION_SHIFT 21     /* a counter covers one 2 MiB region */
#define EMBER_AC_SUBREGION_SHIFT 16  /* its mask has one bit per 64 KiB: 32 bits */

struct ember_ac_record {
	uint32_t magic;          /* EMBER_AC_MAGIC */
	uint16_t version;        /* EMBER_AC_VERSION */
	uint16_t size;           /* sizeof(struct ember_ac_record): 40 */
	uint64_t va;             /* the region's base address, 2 MiB aligned */
	uint32_t count;          /* accesses counted since the region's last notification */
	uint32_t subregion_mask; /* bit i: the 64 KiB at va + i * 64 KiB was accessed */
	uint32_t gpu;            /* the ordinal of the GPU whose counters counted */
	uint32_t reserved;       /* 0 */
	uint64_t timestamp_ns;   /* when the notification was raised: the driver's CLOCK_MONOTONIC_RAW, or the simulator's */
};

/* The largest GPU ordinal a record may name, plus one. */
#define EMBER_AC_MAX_GPUS 32u

/*
 * The patched driver's entry in the tools event queue (a V2 entry of the
 * driver's own size, 72 bytes for 580-series builds; only these 32 bytes
 * are read). The type sits apart from the driver's public types, which grow
 * upstream, and from its test types (62 and 63), which stay gated.
 */
#define EMBER_AC_UVM_EVENT 61          /* u8 at offset 0: UvmEventTypeAccessCounterNotify */
#define EMBER_AC_UVM_GPU 2             /* u16: the driver's GPU index, 1 for its first GPU (0 is the CPU) */
#define EMBER_AC_UVM_COUNT 4           /* u32: accesses counted since the counter was last cleared */
#define EMBER_AC_UVM_VA 8              /* u64: the tracked region's virtual address */
#define EMBER_AC_UVM_MASK 16           /* u32: bit i, the i-th 64 KiB of the region was accessed */
#define EMBER_AC_UVM_TIMESTAMP 24      /* u64: CLOCK_MONOTONIC_RAW, ns, when the driver serviced it */
#define EMBER_AC_UVM_END 32            /* bytes an entry must have */

/* The patched driver's module parameter: "1" while it delivers these. */
#define EMBER_AC_UVM_PARAM "/sys/module/nvidia_uvm/parameters/uvm_access_counter_notify"

#endif
