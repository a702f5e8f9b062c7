/*
 * libFuzzer target: the reader of a kernel's demangled signature
 * (kernel_types.c), on any text. It must stay inside the text, write no
 * more than max sizes, and never report a parameter it did not write.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1); /* exactly the text and its NUL: reading past it is an ASan report */
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	enum { MAX = 8 };
	uint8_t sizes[MAX + 1];
	sizes[MAX] = 0xa5;
	uint32_t read_only;
	unsigned n = ember_signature_pointee_sizes(text, sizes, &read_only, MAX);
	if (sizes[MAX] != 0xa5)
		abort(); /* wrote past max */
	if (read_only >> (n < MAX ? n : MAX))
		abort(); /* a bit for a parameter past max, or that the signature does not have */
	for (unsigned i = n; i < MAX; i++)
		if (sizes[i])
			abort(); /* a size for a parameter the signature does not have */
	free(text);
	return 0;
}
