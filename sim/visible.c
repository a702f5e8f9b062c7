/*
 * CUDA_VISIBLE_DEVICES, as the driver reads it: which of the
 * EMBER_SIM_DEVICES simulated GPUs the process sees, and in what order.
 * Ordinal n is the n-th entry; an entry is a physical index ("2") or a
 * unique prefix of a GPU's UUID as nvidia-smi prints it
 * ("GPU-456d6265-..."). The list ends at the first entry that is not a
 * GPU, or names one already listed; the GPUs before it stay visible.
 *
 * Unlike the driver, a list that names no simulated GPU at all (empty, or
 * a real GPU's UUID on a GPU host running the sim's tests) leaves every
 * simulated GPU visible, with one line on stderr when it was not empty: a
 * sim with no device would only fail every test that loads it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

void sim_device_uuid_text(char *out, size_t len, int physical)
{
	CUuuid u;
	sim_physical_uuid(&u, physical);
	const unsigned char *b = (const unsigned char *)u.bytes;
	snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The physical GPU an entry names, or -1. */
static int entry_gpu(const char *s, size_t n, unsigned physical)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0)
		return -1;
	if (isdigit((unsigned char)s[0])) {
		unsigned v = 0;
		for (size_t i = 0; i < n; i++) {
			if (!isdigit((unsigned char)s[i]) || v > 1000)
				return -1;
			v = v * 10 + (unsigned)(s[i] - '0');
		}
		return v < physical ? (int)v : -1;
	}
	if (n <= 4 || strncasecmp(s, "GPU-", 4) != 0)
		return -1;
	int found = -1;
	for (unsigned g = 0; g < physical; g++) {
		char text[48];
		sim_device_uuid_text(text, sizeof text, (int)g);
		if (n <= strlen(text) && strncasecmp(text, s, n) == 0) {
			if (found >= 0)
				return -1; /* not unique */
			found = (int)g;
		}
	}
	return found;
}

unsigned sim_visible_setup(unsigned physical, int *map)
{
	const char *list = getenv("CUDA_VISIBLE_DEVICES");
	unsigned n = 0;
	for (const char *s = list; s && n < physical;) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		int g = entry_gpu(s, len, physical);
		for (unsigned k = 0; g >= 0 && k < n; k++)
			if (map[k] == g)
				g = -1;
		if (g < 0)
			break;
		map[n++] = g;
		if (!end)
			break;
		s = end + 1;
	}
	if (list && n > 0)
		return n;
	if (list && *list)
		fprintf(stderr, "ember-sim: CUDA_VISIBLE_DEVICES=%.80s names none of the %u simulated GPUs; all are visible\n",
			list, physical);
	for (unsigned g = 0; g < physical; g++)
		map[g] = (int)g;
	return physical;
}
