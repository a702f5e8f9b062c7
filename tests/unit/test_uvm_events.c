/*
 * Records of the UVM tools event queue: well-formed ones decode, malformed
 * ones are refused without reading past the entry, and random bytes never
 * crash the reader.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ember/uvm_events.h"
#include "uvm_events.h"

enum { ENTRY = 72 };

static void put64(unsigned char *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, sizeof v);
}

static void put16(unsigned char *p, size_t off, uint16_t v)
{
	memcpy(p + off, &v, sizeof v);
}

static void migration(unsigned char *r, unsigned cause, uint64_t addr, uint64_t bytes)
{
	memset(r, 0, ENTRY);
	r[0] = EMBER_UVM_EVENT_MIGRATION;
	r[EMBER_UVM_MIGRATION_CAUSE] = (unsigned char)cause;
	put16(r, EMBER_UVM_MIGRATION_SRC, 0);
	put16(r, EMBER_UVM_MIGRATION_DST, 1);
	put64(r, EMBER_UVM_MIGRATION_ADDRESS, addr);
	put64(r, EMBER_UVM_MIGRATION_BYTES, bytes);
}

Test(uvm_events, each_type_decodes)
{
	unsigned char r[ENTRY];
	struct ember_uvm_event e;
	migration(r, EMBER_UVM_CAUSE_USER, 0x7f0000200000ull, 2 << 20);
	cr_assert_eq(ember_uvm_parse(r, ENTRY, &e), 0);
	cr_expect_eq(e.type, EMBER_UVM_EVENT_MIGRATION);
	cr_expect_eq(e.cause, EMBER_UVM_CAUSE_USER);
	cr_expect_eq(e.dst, 1);
	cr_expect_eq(e.address, 0x7f0000200000ull);
	cr_expect_eq(e.bytes, 2u << 20);

	memset(r, 0, ENTRY);
	r[0] = EMBER_UVM_EVENT_EVICTION;
	put16(r, EMBER_UVM_EVICTION_SRC, 1);
	put64(r, EMBER_UVM_EVICTION_ADDRESS, 0x7f0000400000ull);
	put64(r, EMBER_UVM_EVICTION_SIZE, 2 << 20);
	cr_assert_eq(ember_uvm_parse(r, ENTRY, &e), 0);
	cr_expect_eq(e.address, 0x7f0000400000ull);
	cr_expect_eq(e.src, 1);

	memset(r, 0, ENTRY);
	r[0] = EMBER_UVM_EVENT_GPU_FAULT;
	put64(r, EMBER_UVM_FAULT_ADDRESS, 0x7f0000401000ull);
	cr_assert_eq(ember_uvm_parse(r, ENTRY, &e), 0);
	cr_expect_eq(e.type, EMBER_UVM_EVENT_GPU_FAULT);

	memset(r, 0, ENTRY);
	r[0] = EMBER_UVM_EVENT_ACCESS_COUNTER;
	uint32_t value = 256;
	memcpy(r + EMBER_UVM_COUNTER_VALUE, &value, sizeof value);
	put64(r, EMBER_UVM_COUNTER_ADDRESS, 0x7f0000600000ull);
	cr_assert_eq(ember_uvm_parse(r, ENTRY, &e), 0);
	cr_expect_eq(e.value, 256);
}

Test(uvm_events, malformed_records_are_refused)
{
	unsigned char r[ENTRY];
	struct ember_uvm_event e = { .type = 99 };
	migration(r, EMBER_UVM_CAUSE_USER, 0x7f0000200000ull, 2 << 20);
	cr_expect_eq(ember_uvm_parse(r, 40, &e), -1, "shorter than a migration record");
	cr_expect_eq(ember_uvm_parse(NULL, ENTRY, &e), -1);
	cr_expect_eq(ember_uvm_parse(r, ENTRY, NULL), -1);
	migration(r, 0, 0x7f0000200000ull, 2 << 20);
	cr_expect_eq(ember_uvm_parse(r, ENTRY, &e), -1, "no such cause");
	migration(r, 9, 0x7f0000200000ull, 2 << 20);
	cr_expect_eq(ember_uvm_parse(r, ENTRY, &e), -1, "no such cause");
	migration(r, EMBER_UVM_CAUSE_USER, 0x7f0000200000ull, 0);
	cr_expect_eq(ember_uvm_parse(r, ENTRY, &e), -1, "zero bytes");
	migration(r, EMBER_UVM_CAUSE_USER, UINT64_MAX - 10, 2 << 20);
	cr_expect_eq(ember_uvm_parse(r, ENTRY, &e), -1, "wraps around");
	migration(r, EMBER_UVM_CAUSE_USER, 0xffff800000000000ull, 4096);
	cr_expect_eq(ember_uvm_parse(r, ENTRY, &e), -1, "a kernel address");
	memset(r, 0, ENTRY);
	r[0] = 200;
	cr_expect_eq(ember_uvm_parse(r, ENTRY, &e), -1, "unknown type");
	cr_expect_eq(e.type, 99, "the output is untouched on refusal");
}

Test(uvm_events, counts_separate_requested_and_driver_migrations)
{
	unsigned char r[ENTRY];
	struct ember_uvm_event e;
	struct ember_uvm_counts c = { 0 };
	migration(r, EMBER_UVM_CAUSE_USER, 0x7f0000200000ull, 2 << 20);
	ember_uvm_parse(r, ENTRY, &e);
	ember_uvm_count(&e, &c);
	migration(r, EMBER_UVM_CAUSE_EVICTION, 0x7f0000200000ull, 2 << 20);
	ember_uvm_parse(r, ENTRY, &e);
	ember_uvm_count(&e, &c);
	cr_expect_eq(c.migrations_requested, 1);
	cr_expect_eq(c.migrations_by_driver, 1);
	cr_expect_eq(c.bytes_requested, 2u << 20);
}

Test(uvm_events, random_bytes_never_crash_the_reader)
{
	unsigned char r[ENTRY];
	struct ember_uvm_event e;
	unsigned accepted = 0;
	srand(12345);
	for (int i = 0; i < 200000; i++) {
		for (size_t k = 0; k < ENTRY; k++)
			r[k] = (unsigned char)rand();
		r[0] = (unsigned char)(rand() % 70);
		size_t size = (size_t)(rand() % (ENTRY + 1));
		if (ember_uvm_parse(r, size, &e) == 0) {
			accepted++;
			cr_assert(e.bytes > 0 && e.address + e.bytes > e.address && e.address + e.bytes <= (1ull << 57));
		}
	}
	cr_log_info("%u of 200000 random records passed the checks", accepted);
}

/*
 * A queue as the driver leaves it: count entries of the given size from the
 * start of a zeroed buffer, migrations and faults in turn, with timestamps
 * and a processor mask in the fields Ember does not read, so that a wrong
 * size lands on bytes that look like data.
 */
/* The bytes of a queue made for count records. */
#define QUEUE_BYTES(count) ((size_t)((count) + 1) * 256 + 256)

static unsigned char *driver_queue(size_t size, uint32_t count)
{
	unsigned char *q = calloc(QUEUE_BYTES(count), 1);
	for (uint32_t i = 0; i < count; i++) {
		unsigned char *r = q + (size_t)i * size;
		if (i % 2) {
			r[0] = EMBER_UVM_EVENT_GPU_FAULT;
			put16(r, EMBER_UVM_FAULT_GPU, 1);
			put64(r, EMBER_UVM_FAULT_ADDRESS, 0x7f0000000000ull + i * 4096ull);
			put64(r, 16, 1795000000000000000ull + i); /* timestamps */
		} else {
			migration(r, EMBER_UVM_CAUSE_USER, 0x7f0000200000ull * (i + 1), 2 << 20);
			for (size_t off = 32; off + 8 <= ENTRY; off += 8)
				put64(r, off, 1795000000000000000ull + i * 1000 + off);
		}
		for (size_t off = ENTRY; off + 8 <= size; off += 8)
			put64(r, off, 0x1f); /* a processor mask grown with the driver's GPU limit */
	}
	return q;
}

Test(uvm_events, the_entry_size_is_found_from_the_first_records)
{
	for (size_t size = 72; size <= 128; size += 8) {
		unsigned char *q = driver_queue(size, 20);
		cr_expect_eq(ember_uvm_entry_size(q, QUEUE_BYTES(20), 20, 256, EMBER_UVM_ENTRY_PROOF), size, "entries of %zu bytes", size);
		cr_expect_eq(ember_uvm_entry_size(q, QUEUE_BYTES(20), EMBER_UVM_ENTRY_PROOF - 1, 256, EMBER_UVM_ENTRY_PROOF), 0, "too few records to tell");
		/* at exit, the few records a short run left: the smallest size that fits them */
		for (uint32_t few = 1; few < EMBER_UVM_ENTRY_PROOF; few++) {
			unsigned char *short_run = driver_queue(size, few);
			cr_expect_eq(ember_uvm_entry_size(short_run, QUEUE_BYTES(few), few, 256, 1), size, "%u records of %zu bytes", few, size);
			free(short_run);
		}
		free(q);
	}
	unsigned char *q = driver_queue(72, 20);
	cr_expect_eq(ember_uvm_entry_size(q, QUEUE_BYTES(20), 20, 64, EMBER_UVM_ENTRY_PROOF), 0, "no size up to the limit fits");
	memset(q + 5 * 72, 0xab, 72); /* one record the driver never wrote */
	cr_expect_eq(ember_uvm_entry_size(q, QUEUE_BYTES(20), 20, 256, EMBER_UVM_ENTRY_PROOF), 0, "a garbled record decodes at no size");
	cr_expect_eq(ember_uvm_entry_size(NULL, 0, 20, 256, EMBER_UVM_ENTRY_PROOF), 0);
	free(q);
	q = driver_queue(72, 300);
	memset(q + 5 * 72, 0xab, 72);
	memset(q + 250 * 72, 0xab, 72);
	cr_expect_eq(ember_uvm_entry_size(q, QUEUE_BYTES(300), 300, 256, EMBER_UVM_ENTRY_PROOF), 72,
		     "two strange records in 300 leave the queue readable");
	memset(q + 100 * 72, 0xab, 72 * 2);
	cr_expect_eq(ember_uvm_entry_size(q, QUEUE_BYTES(300), 300, 256, EMBER_UVM_ENTRY_PROOF), 0,
		     "four are more than one in a hundred");
	free(q);
}

Test(uvm_events, the_entry_size_detection_reads_nothing_past_the_buffer)
{
	/* found by fuzz_uvm_records: a buffer that ends with its records left no room for the empty slot read after them */
	unsigned char *q = driver_queue(72, 2);
	unsigned char *exact = malloc(2 * 72);
	memcpy(exact, q, 2 * 72);
	cr_expect_eq(ember_uvm_entry_size(exact, 2 * 72, 2, 256, 1), 0, "the slot after the records is not there to check");
	cr_expect_eq(ember_uvm_entry_size(q, 3 * 72, 2, 256, 1), 72);
	free(exact);
	free(q);
}
