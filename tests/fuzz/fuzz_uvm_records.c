/* libFuzzer: the UVM tools event records, at every entry size, and the entry-size detection. */
#include <stddef.h>
#include <stdint.h>

#include "ember/uvm_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ember_uvm_event e;
	for (size_t entry = EMBER_UVM_ENTRY_MIN; entry <= 256 && entry <= size; entry += 8)
		for (size_t off = 0; off + entry <= size; off += entry)
			ember_uvm_parse(data + off, entry, &e);
	/* found by this target: the detection read the empty slot past a buffer that ended with its records */
	for (size_t max = EMBER_UVM_ENTRY_MIN; max <= 256; max += 72)
		if (size / max)
			ember_uvm_entry_size(data, size, (uint32_t)(size / max), max, 1);
	return 0;
}
