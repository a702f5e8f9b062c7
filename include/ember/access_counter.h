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
	uint64_t timestamp_ns;   /* when the notification was raised, on the GPU's clock */
};

#endif
