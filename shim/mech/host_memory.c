/* How much memory the host can still give (host_memory.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_memory.h"

/* MemAvailable of a meminfo file, in bytes; UINT64_MAX when it does not say. */
static uint64_t mem_available(const char *meminfo)
{
	FILE *f = meminfo ? fopen(meminfo, "re") : NULL;
	if (!f)
		return UINT64_MAX;
	char line[256];
	uint64_t bytes = UINT64_MAX;
	while (fgets(line, sizeof line, f)) {
		unsigned long long kib;
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
			bytes = kib > UINT64_MAX / 1024 ? UINT64_MAX : (uint64_t)kib * 1024;
			break;
		}
	}
	fclose(f);
	return bytes;
}

/* A cgroup file holding one number; false for "max", a missing file or anything else. */
static bool read_number(const char *dir, const char *name, uint64_t *out)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return false;
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char text[64] = "";
	bool ok = fgets(text, sizeof text, f) != NULL;
	fclose(f);
	char *end;
	unsigned long long v = ok ? strtoull(text, &end, 10) : 0;
	if (!ok || end == text || (*end && *end != '\n'))
		return false;
	*out = (uint64_t)v;
	return true;
}

uint64_t ember_host_memory_available(const char *meminfo, const char *cgroup)
{
	uint64_t avail = mem_available(meminfo), max, current;
	if (cgroup && read_number(cgroup, "memory.max", &max) && read_number(cgroup, "memory.current", &current)) {
		uint64_t left = max > current ? max - current : 0;
		if (left < avail)
			avail = left;
	}
	return avail;
}

uint64_t ember_host_memory_available_now(void)
{
	/* cgroup v2: the line "0::/path" of /proc/self/cgroup, under /sys/fs/cgroup */
	char dir[4096] = "", line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", line + 3) >= (int)sizeof dir)
			dir[0] = 0;
		break;
	}
	if (f)
		fclose(f);
	return ember_host_memory_available("/proc/meminfo", dir[0] ? dir : NULL);
}

bool ember_host_allowance_take(struct ember_host_allowance *al, uint64_t bytes, uint64_t available_now)
{
	if (!al->measured) {
		al->left = available_now / 2;
		al->measured = true;
	}
	if (bytes > al->left || bytes > available_now / 2)
		return false;
	al->left -= bytes;
	return true;
}

void ember_host_allowance_give(struct ember_host_allowance *al, uint64_t bytes)
{
	if (al->measured)
		al->left = al->left > UINT64_MAX - bytes ? UINT64_MAX : al->left + bytes;
}
