/* Records of the UVM tools event queue: checks and counts, no I/O. */
#include <stdbool.h>
#include <string.h>

#include "ember/access_counter.h"
#include "shim.h"
#include "uvm_events.h"

static uint64_t u64_at(const unsigned char *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

static unsigned u16_at(const unsigned char *p, size_t off)
{
	uint16_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

/* A user-space range: not empty, not wrapping, below the kernel's half. */
static bool plausible(uint64_t address, uint64_t bytes)
{
	return bytes > 0 && address + bytes > address && address + bytes <= (1ull << 57);
}

EMBER_PUBLIC int ember_uvm_parse(const void *record, size_t entry_size, struct ember_uvm_event *out)
{
	const unsigned char *p = record;
	if (!p || !out || entry_size < 8)
		return -1;
	struct ember_uvm_event e = { .type = p[0] };
	size_t need;
	switch (p[0]) {
	case EMBER_UVM_EVENT_MIGRATION:
		need = EMBER_UVM_MIGRATION_END;
		if (entry_size < need)
			return -1;
		e.cause = p[EMBER_UVM_MIGRATION_CAUSE];
		e.src = u16_at(p, EMBER_UVM_MIGRATION_SRC);
		e.dst = u16_at(p, EMBER_UVM_MIGRATION_DST);
		e.address = u64_at(p, EMBER_UVM_MIGRATION_ADDRESS);
		e.bytes = u64_at(p, EMBER_UVM_MIGRATION_BYTES);
		if (e.cause < EMBER_UVM_CAUSE_USER || e.cause > EMBER_UVM_CAUSE_ACCESS_COUNTERS)
			return -1;
		break;
	case EMBER_UVM_EVENT_GPU_FAULT:
		if (entry_size < EMBER_UVM_FAULT_END)
			return -1;
		e.src = u16_at(p, EMBER_UVM_FAULT_GPU);
		e.address = u64_at(p, EMBER_UVM_FAULT_ADDRESS);
		e.bytes = 1;
		break;
	case EMBER_UVM_EVENT_MAP_REMOTE:
		if (entry_size < EMBER_UVM_REMOTE_END)
			return -1;
		e.address = u64_at(p, EMBER_UVM_REMOTE_ADDRESS);
		e.bytes = u64_at(p, EMBER_UVM_REMOTE_SIZE);
		break;
	case EMBER_UVM_EVENT_EVICTION:
		if (entry_size < EMBER_UVM_EVICTION_END)
			return -1;
		e.src = u16_at(p, EMBER_UVM_EVICTION_SRC);
		e.address = u64_at(p, EMBER_UVM_EVICTION_ADDRESS);
		e.bytes = u64_at(p, EMBER_UVM_EVICTION_SIZE);
		break;
	case EMBER_UVM_EVENT_ACCESS_COUNTER:
		if (entry_size < EMBER_UVM_COUNTER_END)
			return -1;
		e.src = u16_at(p, EMBER_UVM_COUNTER_GPU);
		memcpy(&e.value, p + EMBER_UVM_COUNTER_VALUE, sizeof e.value);
		e.address = u64_at(p, EMBER_UVM_COUNTER_ADDRESS);
		e.bytes = 1;
		break;
	case EMBER_UVM_EVENT_COUNTER_NOTIFY: /* the patched driver's: counters.c checks the rest */
		if (entry_size < EMBER_AC_UVM_END)
			return -1;
		e.src = u16_at(p, EMBER_AC_UVM_GPU);
		memcpy(&e.value, p + EMBER_AC_UVM_COUNT, sizeof e.value);
		e.address = u64_at(p, EMBER_AC_UVM_VA);
		e.bytes = 1ull << EMBER_AC_REGION_SHIFT;
		break;
	default:
		return -1;
	}
	if (!plausible(e.address, e.bytes))
		return -1;
	*out = e;
	return 0;
}

static bool empty_slot(const unsigned char *p, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (p[i])
			return false;
	return true;
}

EMBER_PUBLIC size_t ember_uvm_entry_size(const void *buffer, size_t buffer_bytes, uint32_t count, size_t max_size,
					 uint32_t min_records)
{
	const unsigned char *q = buffer;
	if (!q || count == 0 || count < min_records)
		return 0;
	/*
	 * Up to one record in a hundred may fail to decode at the right size
	 * (on the H200, two runs in twenty left the queue unread: 788 and 819
	 * records decoded at no size); a wrong size garbles nearly all of them.
	 */
	uint32_t tolerated = count / 100;
	for (size_t size = EMBER_UVM_ENTRY_MIN; size <= max_size; size += 8) {
		if (((size_t)count + 1) * size > buffer_bytes)
			break; /* its records and the empty slot after them lie past the buffer */
		if (!empty_slot(q + (size_t)count * size, size))
			continue;
		uint32_t bad = 0;
		struct ember_uvm_event e;
		for (uint32_t i = 0; bad <= tolerated && i < count; i++)
			bad += ember_uvm_parse(q + (size_t)i * size, size, &e) != 0;
		if (bad <= tolerated)
			return size;
	}
	return 0;
}

void ember_uvm_count(const struct ember_uvm_event *e, struct ember_uvm_counts *c)
{
	switch (e->type) {
	case EMBER_UVM_EVENT_MIGRATION:
		if (e->cause == EMBER_UVM_CAUSE_USER) {
			c->migrations_requested++;
			c->bytes_requested += e->bytes;
		} else {
			c->migrations_by_driver++;
			c->bytes_by_driver += e->bytes;
		}
		break;
	case EMBER_UVM_EVENT_GPU_FAULT:
		c->gpu_faults++;
		break;
	case EMBER_UVM_EVENT_MAP_REMOTE:
		c->remote_maps++;
		break;
	case EMBER_UVM_EVENT_EVICTION:
		c->evictions++;
		break;
	case EMBER_UVM_EVENT_ACCESS_COUNTER:
	case EMBER_UVM_EVENT_COUNTER_NOTIFY:
		c->access_counters++;
		break;
	}
}

